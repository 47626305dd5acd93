"""CPU metrics scored in the workers *beside* the driver's neural metrics (``score_all(beside=...)``, issue #37).

On a GPU run the driver mostly waits for the GPU while the machine's other cores are idle, so the CPU metrics'
batches go to the local engine's worker processes at once and are committed by the driver as they finish. Checked
here with real worker processes (no mocks): the scores, the failures and the cache are those of the run without
``beside``; the workers' batches are committed while the driver's metric is still running (so Ctrl-C in it loses
none of them); a CPU-only run (``beside`` left to its default) keeps the old order and starts no pool for small work.
"""
from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
import pytest

from meta_eval.metrics import Metric, create
from meta_eval.scoring.cache import ScoreCache, example_key
from meta_eval.scoring.engines import LocalEngine
from meta_eval.scoring.runner import on_gpu_device, score_all

ROWS = 120
BATCH = 16
_DRIVER = os.getpid()


class WorkerSide(Metric):
    """A CPU metric: each example's candidate length and the id of the process that scored it; it leaves a file in
    ``marks`` per batch scored (module level: workers import it)."""

    name = "beside-cpu"
    variants = ("len", "pid")
    needs_references = False

    def __init__(self, marks: str = "", nan_at: str = "", **options) -> None:
        super().__init__(**options)
        self.marks, self.nan_at = marks, nan_at

    def _score(self, examples):
        lengths = [float("nan") if self.nan_at and self.nan_at == ex.candidate else float(len(ex.candidate))
                   for ex in examples]
        if self.marks:
            Path(self.marks, f"{os.getpid()}-{time.perf_counter_ns()}").touch()
        return {"len": lengths, "pid": [float(os.getpid())] * len(examples)}


class DriverSide(Metric):
    """Declared as a neural metric (``parallel="single"``: scored in the driver). Its first batch waits until
    ``expect`` batches of :class:`WorkerSide` have left their files in ``marks`` (at most 120 s) and 1 s more; with
    ``interrupt`` its second batch raises KeyboardInterrupt (Ctrl-C)."""

    name = "beside-gpu"
    variants = ("words",)
    needs_references = False
    parallel = "single"
    holds = ("beside-test-model",)  # as a neural metric's model: its group runs after the CPU metrics

    def __init__(self, marks: str = "", expect: int = 0, interrupt: bool = False, **options) -> None:
        super().__init__(**options)
        self.marks, self.expect, self.interrupt, self.calls = marks, expect, interrupt, 0

    def _score(self, examples):
        self.calls += 1
        if self.calls == 1 and self.expect:
            deadline = time.monotonic() + 120
            while len(os.listdir(self.marks)) < self.expect and time.monotonic() < deadline:
                time.sleep(0.05)
            time.sleep(1.0)
        if self.calls == 2 and self.interrupt:
            raise KeyboardInterrupt
        return {"words": [float(len(ex.candidate.split())) for ex in examples]}


@pytest.fixture(scope="module")
def examples(shared_data):
    from meta_eval import judgments

    rows = judgments.load("chaganty", shared_data).examples()
    return type(rows)(list(rows)[:ROWS], labels=list(rows.labels)[:ROWS])


def _batches(examples) -> int:
    return -(-len({example_key(ex) for ex in examples}) // BATCH)


def _bits(scoring) -> dict[str, dict[str, list[int]]]:
    return {ms.metric: {v: s.view(np.int64).tolist() for v, s in ms.scores.items() if v != "pid"}
            for ms in scoring.scored}


def test_beside_gives_the_scores_cache_and_order_of_the_run_without_it(examples, tmp_path):
    marks = tmp_path / "marks"
    marks.mkdir()
    chosen = lambda: [DriverSide(marks=str(marks), expect=_batches(examples)), create("rouge"),  # noqa: E731
                      WorkerSide(marks=str(marks)), create("chrf")]
    with LocalEngine(2) as engine:
        alone = score_all(chosen(), examples, ScoreCache(tmp_path / "a.sqlite"), BATCH, engine=engine,
                          progress=False, beside=False)
    for mark in marks.iterdir():
        mark.unlink()
    with LocalEngine(2) as engine:
        both = score_all(chosen(), examples, ScoreCache(tmp_path / "b.sqlite"), BATCH, engine=engine,
                         progress=False, beside=True)
    assert not alone.failed and not both.failed
    assert [ms.metric for ms in both.scored] == ["beside-gpu", "rouge", "beside-cpu", "chrf"]  # as chosen
    assert _bits(both) == _bits(alone)
    assert [ms.signature for ms in both.scored] == [ms.signature for ms in alone.scored]
    pids = {ms.metric: set(ms.scores["pid"].tolist()) for ms in both.scored if "pid" in ms.scores}
    assert pids["beside-cpu"] and _DRIVER not in pids["beside-cpu"]  # every batch in the worker
    assert set({ms.metric: set(ms.scores["pid"].tolist()) for ms in alone.scored
                if "pid" in ms.scores}["beside-cpu"]) == {_DRIVER}  # the default pool never started for this
    cpu = next(ms for ms in both.scored if ms.metric == "beside-cpu")
    assert cpu.computed == len({example_key(ex) for ex in examples}) and cpu.cached == 0
    assert cpu.seconds > 0 and cpu.shared == {} and cpu.beside
    assert [ms.beside for ms in both.scored] == [False, True, True, True]
    assert not any(ms.beside for ms in alone.scored)
    with LocalEngine(2) as engine:  # again on the filled cache: nothing computed, so nothing said to run beside
        again = score_all(chosen(), examples, ScoreCache(tmp_path / "b.sqlite"), BATCH, engine=engine,
                          progress=False, beside=True)
    assert _bits(again) == _bits(alone) and not any(ms.beside or ms.computed for ms in again.scored)
    a, b = ScoreCache(tmp_path / "a.sqlite"), ScoreCache(tmp_path / "b.sqlite")
    distinct = {example_key(ex): ex for ex in examples}
    for ms in alone.scored:
        got_a, got_b = a.get_many(ms.signature, distinct), b.get_many(ms.signature, distinct)
        assert len(got_a) == len(distinct)
        if ms.metric == "beside-cpu":
            got_a = {k: {"len": v["len"]} for k, v in got_a.items()}
            got_b = {k: {"len": v["len"]} for k, v in got_b.items()}
        assert got_b == got_a
    a.close()
    b.close()


def test_the_workers_batches_are_committed_while_the_drivers_metric_runs(examples, tmp_path):
    """Ctrl-C in the driver's metric after the workers finished: their batches are in the cache already."""
    marks = tmp_path / "marks"
    marks.mkdir()
    cpu = WorkerSide(marks=str(marks))
    gpu = DriverSide(marks=str(marks), expect=_batches(examples), interrupt=True)
    cache = ScoreCache(tmp_path / "c.sqlite")
    signature = cpu.signature()
    with LocalEngine(2) as engine, pytest.raises(KeyboardInterrupt):
        score_all([cpu, gpu], examples, cache, BATCH, engine=engine, progress=False, beside=True)
    reopened = ScoreCache(tmp_path / "c.sqlite")
    distinct = {example_key(ex): ex for ex in examples}
    kept = reopened.get_many(signature, distinct)
    assert len(kept) == len(distinct)
    assert all(v["len"] == len(distinct[k].candidate) for k, v in kept.items())
    reopened.close()


def test_batches_no_worker_started_are_scored_by_the_driver_at_the_end(examples, tmp_path):
    """The driver's metric done before the fresh pool's worker has even started (a spawned interpreter takes a
    second): the driver takes back every batch still queued (a cancelled future) and scores it itself; the scores
    are the same, every row is committed once."""
    cache = ScoreCache(tmp_path / "d.sqlite")
    with LocalEngine(2) as engine:
        both = score_all([DriverSide(), WorkerSide()], examples, cache, BATCH, engine=engine, progress=False,
                         beside=True)
    cpu = next(ms for ms in both.scored if ms.metric == "beside-cpu")
    assert _DRIVER in set(cpu.scores["pid"].tolist())  # taken back
    assert cpu.scores["len"].tolist() == [float(len(ex.candidate)) for ex in examples]
    distinct = {example_key(ex): ex for ex in examples}
    assert len(ScoreCache(tmp_path / "d.sqlite").get_many(cpu.signature, distinct)) == len(distinct)


class CountsProcesses(DriverSide):
    """:class:`DriverSide` noting, at each batch, how many child processes the driver has (the pool's)."""

    name = "beside-gpu-counting"
    seen: list[int] = []

    def _score(self, examples):
        import multiprocessing

        CountsProcesses.seen.append(len(multiprocessing.active_children()))
        return super()._score(examples)


def test_the_pool_beside_has_a_process_per_eight_batches_of_all_the_metrics_handed_over(examples):
    """Two CPU metrics of 15 batches each (120 distinct rows, batches of 8): 30 batches handed over, so 4 pool
    processes (30 / 8, rounded up) of the 7 that ``LocalEngine(8)`` may start, not one per core, each paying its
    imports for two batches (:func:`meta_eval.scoring.engines.beside_processes`); the scores are those of the run
    without beside."""
    from meta_eval.scoring.engines import beside_processes

    assert len({example_key(ex) for ex in examples}) == 120
    assert (beside_processes(8, 30), beside_processes(8, 15), beside_processes(8, 200)) == (4, 2, 7)
    runs = []
    for beside in (False, True):
        CountsProcesses.seen.clear()
        with LocalEngine(8) as engine:
            runs.append(score_all([CountsProcesses(), WorkerSide(), create("chrf")], examples, None, 8,
                                  engine=engine, progress=False, beside=beside))
        assert not runs[-1].failed
    assert CountsProcesses.seen[0] == 4  # the pool started for both metrics' batches at once
    assert _bits(runs[1]) == _bits(runs[0])


class HoldingWorkerSide(WorkerSide):
    """:class:`WorkerSide` holding a resource, as the GloVe metrics hold their vectors."""

    name = "beside-cpu-holding"
    holds = ("beside-test-vectors",)


def test_the_metrics_beside_are_released_while_the_long_lived_heap_is_frozen(examples):
    """Their releases come after the driver's metrics, still inside the runner's frozen block
    (:func:`meta_eval.scoring.runner.long_lived`): each collection walks only what was made since the last freeze,
    not the whole heap (0.26 s on the CPU proxy); the heap is unfrozen after the run."""
    import gc

    from meta_eval.metrics.memo import on_release

    frozen: list[int] = []
    on_release("beside-test-model", lambda: None)  # released (so the heap is frozen again after it)
    on_release("beside-test-vectors", lambda: frozen.append(gc.get_freeze_count()))
    with LocalEngine(2) as engine:
        both = score_all([DriverSide(), HoldingWorkerSide()], examples, None, BATCH, engine=engine, progress=False,
                         beside=True)
    assert [ms.metric for ms in both.scored] == ["beside-gpu", "beside-cpu-holding"] and not both.failed
    assert len(frozen) == 1 and frozen[0] > 0 and gc.get_freeze_count() == 0


def test_a_failure_beside_is_reported_as_without_it(examples, tmp_path):
    bad = examples[7].candidate
    results = []
    for beside in (False, True):
        with LocalEngine(2) as engine:
            results.append(score_all([DriverSide(), WorkerSide(nan_at=bad), create("chrf")], examples, None, BATCH,
                                     engine=engine, progress=False, beside=beside))
    alone, both = results
    assert both.failed == alone.failed
    assert len(both.failed) == 1 and both.failed[0][0] == "beside-cpu"
    assert "non-finite score (nan) for chaganty row" in both.failed[0][1]
    assert [ms.metric for ms in both.scored] == ["beside-gpu", "chrf"]
    assert _bits(both) == _bits(alone)


def test_a_metric_refused_before_scoring_beside_is_reported_as_without_it(examples):
    from meta_eval.metrics import Example

    bare = [Example(ex.candidate, ()) for ex in examples[:20]]  # no reference: chrF refuses every row up front
    results = []
    for beside in (False, True):
        with LocalEngine(2) as engine:
            results.append(score_all([create("chrf"), DriverSide(), WorkerSide()], bare, None, BATCH, engine=engine,
                                     progress=False, beside=beside))
    assert results[1].failed == results[0].failed and [name for name, _ in results[1].failed] == ["chrf"]
    assert "chrf needs a reference for every row" in results[1].failed[0][1]
    assert [ms.metric for ms in results[1].scored] == ["beside-gpu", "beside-cpu"]


def test_beside_is_chosen_only_for_a_neural_metric_on_a_gpu():
    assert not on_gpu_device(create("rouge"))
    assert not on_gpu_device(DriverSide())  # takes no device option
    assert not on_gpu_device(create("wms-ctx", device="cpu"))
    try:
        import torch
        cuda = torch.cuda.is_available()
    except ImportError:
        cuda = False
    assert on_gpu_device(create("wms-ctx", device="auto")) is cuda


@pytest.mark.cuda
def test_on_a_gpu_beside_is_the_default_and_changes_no_bit(examples, tmp_path):
    """The GPU check (bench/gpu_check.sh runs it): a contextual mover and BERTScore on the GPU (a tiny random BERT),
    ROUGE and chrF beside them by default; the same bits as the CPU metrics before them (the neural metrics' memos
    emptied before each run, so both runs encode)."""
    from conftest import make_tiny_bert
    from meta_eval.metrics import bertscore, contextual_mover
    from meta_eval.scoring.runner import beside_choice

    base = str(make_tiny_bert(tmp_path / "tiny-base", seed=1))
    assert on_gpu_device(create("wms-ctx", device="auto")) and on_gpu_device(create("moverscore", device="cuda"))
    assert not on_gpu_device(create("bertscore", model=base, device="cpu"))
    chosen = lambda: [create("rouge"), create("wms-ctx", model=base, device="cuda"), create("chrf"),  # noqa: E731
                      create("bertscore", model=base, device="cuda")]
    assert beside_choice(chosen())
    runs = []
    for beside in (None, False):
        bertscore._states.clear()
        contextual_mover._cache.clear()
        with LocalEngine(2) as engine:
            runs.append(score_all(chosen(), examples, None, BATCH, engine=engine, progress=False, beside=beside))
    assert not runs[0].failed and not runs[1].failed
    assert _bits(runs[0]) == _bits(runs[1])


def test_the_variable_turns_beside_on_or_off_and_a_bad_value_is_named(monkeypatch):
    from meta_eval.errors import MetaEvalError
    from meta_eval.scoring.runner import BESIDE_ENV, beside_choice

    cpu_only = [create("rouge"), create("wms-ctx", device="cpu")]
    assert beside_choice(cpu_only) is False
    monkeypatch.setenv(BESIDE_ENV, "on")
    assert beside_choice(cpu_only) is True
    monkeypatch.setenv(BESIDE_ENV, " OFF ")
    assert beside_choice(cpu_only) is False
    monkeypatch.setenv(BESIDE_ENV, "sometimes")
    with pytest.raises(MetaEvalError, match="META_EVAL_BESIDE must be auto, on or off, got 'sometimes'"):
        beside_choice(cpu_only)


def test_the_command_line_runs_beside_with_the_same_numbers(tmp_path, monkeypatch):
    """``META_EVAL_BESIDE=on`` then ``off``, ``meta-eval run`` with a CPU and a neural metric (MiniLM on the CPU) on
    a small set: the same JSON but for the timings and the command; the timing says which metric ran beside."""
    import json

    from typer.testing import CliRunner

    from conftest import require_metrics, small_set
    from meta_eval.cli import app
    from meta_eval.report.tables import BESIDE_NOTE

    require_metrics("wms-ctx")
    data = small_set(tmp_path / "s.jsonl", 24)
    docs = {}
    for mode in ("on", "off"):
        monkeypatch.setenv("META_EVAL_BESIDE", mode)
        out = tmp_path / f"{mode}.json"
        result = CliRunner().invoke(app, ["run", "-j", str(data), "-m", "chrf,wms-ctx", "-o", "model=minilm",
                                          "--no-cache", "--batch-size", "4", "--workers", "2", "--resamples", "50",
                                          "--output", str(out)])
        assert result.exit_code == 0, result.output
        said = " ".join(result.output.split())
        assert "chrf: 24 computed, 0 from cache" in said and (BESIDE_NOTE.strip() in said) == (mode == "on")
        docs[mode] = json.loads(out.read_text(encoding="utf-8"))
    assert {m: t["beside"] for m, t in docs["on"]["timing"].items()} == {"chrf": True, "wms-ctx": False}
    assert not any(t["beside"] for t in docs["off"]["timing"].values())
    clocks = ("timing", "shared_timing", "wall_seconds", "provenance")  # times, and the command in the provenance
    assert {k: v for k, v in docs["on"].items() if k not in clocks} == \
        {k: v for k, v in docs["off"].items() if k not in clocks}
