"""Scoring engines (meta_eval/scoring/engines.py) with real worker processes and a real local Ray instance, no mocks.

Checked: bit-identical scores (ROUGE, WMS, chrF on 200 chaganty rows) in this process, over two local worker
processes and over two Ray workers; the driver commits every finished batch before it reports progress, and a
resumed run computes only the missing rows; a MetricError raised in a worker reaches the driver with its type and
message; a killed driver leaves no worker behind and its run resumes; ``--engine ray`` on the command line; a clear
error when Ray is not installed. One local pool and one Ray instance serve the whole module (Ray takes ~10 s to
start).
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from meta_eval.cli import app
from conftest import require_metrics, require_module
from meta_eval.scoring.cache import ScoreCache, example_key
from meta_eval.scoring.engines import RAY_HINT, EngineError, InProcess, LocalEngine, make_engine
from meta_eval.scoring.runner import score_examples
from meta_eval.metrics import Example, Metric, MetricError, create

# one pytest-xdist worker runs every test that starts Ray: a second local instance, or `ray stop --force`,
# on the same machine would meet the first
pytestmark = pytest.mark.xdist_group("ray")

REPO = Path(__file__).resolve().parents[1]
ROWS = 200
BATCH = 16


class ScoringProcess(Metric):
    """Scores every example with the id of the process that scored it, 0.4 s per batch (module level: workers
    import it)."""

    name = "engine-test-pid"
    variants = ("pid",)
    needs_references = False
    pause = 0.4

    def _score(self, examples):
        time.sleep(self.pause)
        return {"pid": [float(os.getpid())] * len(examples)}


class OneProcess(ScoringProcess):
    """The same, declared as a neural metric would be: one process for all its batches."""

    name = "engine-test-single"
    parallel = "single"


class ModeSeen(ScoringProcess):
    """Scores 1 where the process that scores runs in the driver's numeric mode with its variables (metrics/numeric.py),
    else 0."""

    name = "engine-test-mode"
    variants = ("mode",)
    pause = 0.0

    def __init__(self, mode: str = "portable", env: dict | None = None, **options) -> None:
        super().__init__(**options)
        self.mode, self.env = mode, dict(env or {})

    def _score(self, examples):
        from meta_eval.metrics import numeric

        same = numeric.current_mode() == self.mode and all(os.environ.get(k) == v for k, v in self.env.items())
        return {"mode": [float(same)] * len(examples)}


class FailsOnMarker(Metric):
    """Raises a MetricError for a batch holding a candidate that contains ``MARK``."""

    name = "engine-test-fail"
    variants = ("len",)
    needs_references = False
    MARK = "<<fail here>>"

    def _score(self, examples):
        for ex in examples:
            if self.MARK in ex.candidate:
                raise MetricError(f"{self.name}: cannot score {ex.candidate[:20]!r} (a test's deliberate error)")
        return {"len": [float(len(ex.candidate)) for ex in examples]}


@pytest.fixture(scope="module")
def examples(shared_data):
    from meta_eval import judgments

    return list(judgments.load("chaganty", shared_data).examples())[:ROWS]


@pytest.fixture(scope="module")
def local():
    with LocalEngine(2, start_after=0) as engine:  # the pool at once, however small the job
        yield engine


@pytest.fixture(scope="module")
def ray_engine():
    require_module("ray", RAY_HINT)
    with make_engine("ray", workers=2) as engine:
        engine._connect()  # start the local instance once for the module
        yield engine


def _bits(scores: dict[str, np.ndarray]) -> dict[str, list[int]]:
    return {v: s.view(np.int64).tolist() for v, s in scores.items()}


_IN_PROCESS: dict[str, dict[str, list[int]]] = {}


def _scored_bits(name: str, examples, engine) -> dict[str, list[int]]:
    """The bits of ``name``'s scores of ``examples`` with ``engine``, checking the counts and the progress calls."""
    distinct = len({example_key(ex) for ex in examples})
    progress = []
    result = score_examples(create(name), examples, None, BATCH, lambda d, t: progress.append((d, t)), engine=engine)
    assert result.computed == distinct and result.cached == 0
    assert progress[0] == (0, distinct) and progress[-1] == (distinct, distinct)
    assert len(progress) == 1 + -(-distinct // BATCH)  # one call per batch, as it finished
    return _bits(result.scores)


@pytest.mark.parametrize("name", ["rouge", "wms", "chrf"])
@pytest.mark.parametrize("engine", ["local-2", "ray-2"])
def test_scores_are_bit_identical_across_engines_and_workers(name, engine, examples, request):
    require_metrics(name)
    scoring = request.getfixturevalue("local" if engine == "local-2" else "ray_engine")
    if name not in _IN_PROCESS:
        _IN_PROCESS[name] = _scored_bits(name, examples, None)
    assert _scored_bits(name, examples, scoring) == _IN_PROCESS[name]


@pytest.mark.parametrize("engine", ["local-2", "ray-2"])
def test_workers_compute_in_the_drivers_numeric_mode(engine, examples, request):
    """Pool workers and Ray workers run in the driver's numeric mode with its variables set before they load torch
    (meta_eval/scoring/engines.py passes them: the pool's initializer, Ray's runtime_env and each task)."""
    from meta_eval.metrics import numeric

    scoring = request.getfixturevalue("local" if engine == "local-2" else "ray_engine")
    metric = ModeSeen(numeric.current_mode(), {k: os.environ.get(k) for k in numeric.PORTABLE_ENV})
    result = score_examples(metric, examples, None, BATCH, engine=scoring)
    assert set(result.scores["mode"]) == {1.0}


def test_workers_score_and_only_the_driver_commits_each_batch_then_resumes(examples, local, tmp_path):
    # two processes score the batches: this one (the driver) and the pool's one
    pids = set(score_examples(ScoringProcess(), examples, None, BATCH, engine=local).scores["pid"])
    assert os.getpid() in pids and len(pids) == 2

    keys = [example_key(ex) for ex in examples]
    first = len(set(keys[:100]))
    with ScoreCache(tmp_path / "scores.sqlite") as cache:
        score_examples(create("rouge"), examples[:100], cache, BATCH)  # a run that stopped half way
        signature = create("rouge").signature()
        assert cache.count(signature) == first
        seen = []
        # every progress call comes after the driver committed that batch: the cache holds exactly `done` rows
        resumed = score_examples(create("rouge"), examples, cache, BATCH,
                                 lambda done, total: seen.append((done, cache.count(signature))), engine=local)
    assert resumed.cached == first and resumed.computed == len(set(keys)) - first
    assert all(done == rows for done, rows in seen) and seen[-1][0] == len(set(keys))
    fresh = score_examples(create("rouge"), examples, None, BATCH)
    assert _bits(resumed.scores) == _bits(fresh.scores)


@pytest.mark.parametrize("engine", ["local-2", "ray-2"])
def test_a_single_process_metric_runs_in_one_process(engine, examples, request):
    scoring = request.getfixturevalue("local" if engine == "local-2" else "ray_engine")
    pids = set(score_examples(OneProcess(), examples[:64], None, BATCH, engine=scoring).scores["pid"])
    assert len(pids) == 1  # local: the driver itself; ray: one actor
    assert (os.getpid() in pids) == (engine == "local-2")


class GrantedThreads(OneProcess):
    """Scores every example with the torch thread count granted to the process while it scores."""

    name = "engine-test-threads"
    pause = 0.0

    def _score(self, examples):
        from meta_eval.metrics.encoder import torch_threads

        return {"pid": [float(torch_threads())] * len(examples)}


def test_a_neural_metric_in_the_driver_is_granted_every_worker_as_a_thread(local, examples, monkeypatch):
    monkeypatch.delenv("META_EVAL_TORCH_THREADS", raising=False)
    from meta_eval.metrics.encoder import torch_threads

    assert set(score_examples(GrantedThreads(), examples[:32], None, BATCH, engine=local).scores["pid"]) == {2.0}
    assert set(score_examples(GrantedThreads(), examples[:32], None, BATCH).scores["pid"]) == {1.0}
    assert torch_threads() == 1  # the grant ends with the metric


@pytest.mark.parametrize("name", ["wms-ctx", "bertscore"])
def test_a_neural_metric_is_bit_identical_with_one_and_two_workers(local, examples, name):
    require_module("torch", "pip install torch==2.13.0 && pip install 'meta-eval[neural]'")
    if name == "bertscore":
        require_module("bert_score", "pip install 'meta-eval[bertscore]' (after the CPU torch)")
    __import__("conftest").require_minilm()
    from meta_eval.metrics import bertscore, contextual_mover

    rows = examples[:48]
    bertscore._states.clear()
    contextual_mover._cache.clear()
    one = _bits(score_examples(create(name, model="minilm"), rows, None, BATCH).scores)
    bertscore._states.clear()
    contextual_mover._cache.clear()
    # two torch threads
    two = _bits(score_examples(create(name, model="minilm"), rows, None, BATCH, engine=local).scores)
    assert one == two


def test_several_ray_actors_share_a_neural_metric_with_the_same_bits(ray_engine, examples):
    """A GPU cluster runs one actor per GPU; here two CPU actors stand in (RayEngine(actors=2)): both get batches,
    and BERTScore's scores are those of one process, bit for bit (a text's score does not depend on its batch)."""
    from meta_eval.scoring.engines import RayEngine

    engine = RayEngine(workers=2, actors=2)  # Ray is already initialised by ray_engine: that instance is used
    pids = set(score_examples(OneProcess(), examples[:96], None, BATCH, engine=engine).scores["pid"])
    assert len(pids) == 2 and os.getpid() not in pids
    require_module("bert_score", "pip install 'meta-eval[bertscore]' (after the CPU torch)")
    __import__("conftest").require_minilm()
    rows = examples[:40]
    here = _bits(score_examples(create("bertscore", model="minilm"), rows, None, 8).scores)
    assert _bits(score_examples(create("bertscore", model="minilm"), rows, None, 8, engine=engine).scores) == here
    with pytest.raises(EngineError, match="actors"):
        RayEngine(workers=2, actors=0)


def test_the_default_pool_starts_only_for_enough_work(examples):
    with LocalEngine(2) as engine:  # start_after=5 s of projected work
        score_examples(create("rouge"), examples, None, BATCH, engine=engine)  # 13 quick batches
        assert engine._pool is None
        slow = ScoringProcess()
        slow.pause = 0.5  # after two batches in the driver: 11 x 0.5 s > 5 s left
        score_examples(slow, examples, None, BATCH, engine=engine)
        assert engine._pool is not None


def test_the_pool_stops_when_only_neural_metrics_are_left_and_starts_again(examples):
    with LocalEngine(2) as engine:
        slow = ScoringProcess()
        slow.pause = 0.5
        score_examples(slow, examples, None, BATCH, engine=engine)
        assert engine._pool is not None
        engine.idle([create("wms"), create("wms-ctx")])  # a CPU metric still to run: the pool stays
        assert engine._pool is not None
        engine.idle([create("wms-ctx")])  # only a metric that runs in the driver: the workers go
        assert engine._pool is None
        before = _bits(score_examples(create("rouge"), examples[:40], None, 8).scores)
        slow.pause = 0.5
        again = score_examples(slow, examples, None, BATCH, engine=engine)  # a fresh pool
        assert engine._pool is not None and again.computed > 0
        assert _bits(score_examples(create("rouge"), examples[:40], None, 8, engine=engine).scores) == before


def _failing_input(examples):
    marked = [Example(ex.candidate, ex.references, ex.source) for ex in examples[:100]]
    marked[70] = Example(FailsOnMarker.MARK + " " + marked[70].candidate, marked[70].references)
    return marked


@pytest.mark.parametrize("engine", ["local-2", "ray-2"])
def test_a_metric_error_in_a_worker_reaches_the_driver_unchanged(engine, examples, request):
    scoring = request.getfixturevalue("local" if engine == "local-2" else "ray_engine")
    with pytest.raises(MetricError) as here:
        score_examples(FailsOnMarker(), _failing_input(examples), None, BATCH)
    assert str(here.value).startswith("engine-test-fail: cannot score '<<fail here>>")
    with pytest.raises(MetricError) as there:
        score_examples(FailsOnMarker(), _failing_input(examples), None, BATCH, engine=scoring)
    assert type(there.value) is MetricError and str(there.value) == str(here.value)
    # the engine still works after the error (a local pool is restarted)
    assert score_examples(FailsOnMarker(), examples[:40], None, BATCH, engine=scoring).computed == 40


def _descendants(pid: int) -> set[int]:
    """Processes whose parent chain reaches ``pid`` (from /proc)."""
    parents = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                pass
    found, frontier = set(), {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def _rows(path: Path) -> int:
    """Rows in the cache, read from outside the running command (0 before the table exists)."""
    import sqlite3

    if not path.exists():
        return 0
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=10)
        try:
            return int(conn.execute("SELECT COUNT(*) FROM scores").fetchone()[0])
        finally:
            conn.close()
    except sqlite3.OperationalError:
        return 0


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


_SCRIPT = """
import sys
from meta_eval import judgments
from meta_eval.scoring.cache import ScoreCache
from meta_eval.scoring.engines import LocalEngine
from meta_eval.scoring.runner import score_examples
from meta_eval.metrics import create

if __name__ == "__main__":
    examples = judgments.load("chaganty", sys.argv[1]).examples()
    with ScoreCache(sys.argv[2]) as cache, LocalEngine(2, start_after=0) as engine:
        result = score_examples(create("chrf"), examples, cache, 2, engine=engine)
    print(result.computed, result.cached)
"""


@pytest.mark.skipif(not Path("/proc/self/stat").exists() or not hasattr(signal, "SIGKILL"), reason="Linux /proc")
def test_a_killed_driver_leaves_no_worker_and_its_run_resumes(shared_data, tmp_path):
    require_metrics("chrf")
    script, cache = tmp_path / "score.py", tmp_path / "scores.sqlite"
    script.write_text(_SCRIPT, encoding="utf-8")
    command = [sys.executable, str(script), str(shared_data), str(cache)]
    proc = subprocess.Popen(command, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while _rows(cache) < 40:  # a few batches back
            assert proc.poll() is None, proc.stderr.read()[-2000:]
            assert time.monotonic() < deadline, "no scores reached the cache in 120 s"
            time.sleep(0.05)
        workers = _descendants(proc.pid)
        assert len(workers) >= 2  # the pool's worker and multiprocessing's resource tracker
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stderr.close()
    deadline = time.monotonic() + 30  # a worker notices within a second once it runs Python code again
    while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [pid for pid in workers if _alive(pid)], "worker processes outlived the killed driver"
    saved = _rows(cache)
    assert 0 < saved < 2084 and saved % 2 == 0  # whole batches only
    rerun = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300, check=False)
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    assert rerun.stdout.split() == [str(2084 - saved), str(saved)]  # computed, cached


def _jsonl(path: Path, examples) -> Path:
    path.write_text("".join(json.dumps({"candidate": ex.candidate, "references": list(ex.references)}) + "\n"
                            for ex in examples), encoding="utf-8")
    return path


def test_cli_engine_ray_scores_a_jsonl_file_like_one_process(examples, ray_engine, tmp_path):
    require_metrics("chrf")
    source = _jsonl(tmp_path / "in.jsonl", examples[:12])
    outputs = {}
    for label, flags in (("ray", ["--engine", "ray", "--workers", "2"]), ("one", ["--workers", "1"])):
        out = tmp_path / f"{label}.jsonl"
        result = CliRunner().invoke(app, ["score", "-i", str(source), "-m", "rouge,chrf", "--no-cache",
                                          "--batch-size", "4", "--output", str(out), *flags])
        assert result.exit_code == 0, result.output
        outputs[label] = out.read_text(encoding="utf-8")
    heads = {label: json.loads(text.splitlines()[0]) for label, text in outputs.items()}
    for label, head in heads.items():  # each header records its own command line (the flags differ), the rest agrees
        assert head["provenance"].pop("command").endswith(f"{label}.jsonl" + {"ray": " --engine ray --workers 2",
                                                                              "one": " --workers 1"}[label])
    assert heads["ray"] == heads["one"]
    assert outputs["ray"].splitlines()[1:] == outputs["one"].splitlines()[1:] and len(outputs["one"].splitlines()) >= 12


def test_a_dead_cluster_address_fails_fast_with_exit_2(tmp_path):
    require_module("ray", RAY_HINT)
    require_metrics("chrf")
    source = _jsonl(tmp_path / "in.jsonl", [Example("a cat", ("a cat",)), Example("a dog", ("the dog",))])
    env = dict(os.environ, RAY_ADDRESS="127.0.0.1:1")  # a port nothing listens on: Ray would retry for minutes
    done = subprocess.run([sys.executable, "-m", "cli", "score", "-i", str(source), "-m", "chrf", "--no-cache",
                           "--batch-size", "1", "--engine", "ray"], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 2, done.stderr[-2000:]
    assert "could not connect to the Ray cluster at 127.0.0.1:1" in " ".join(done.stderr.split())


def test_without_ray_the_error_names_the_extra(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "ray", None)  # what an installation without Ray gives: import ray fails
    with pytest.raises(EngineError, match=r'pip install "meta-eval\[ray\]"'):
        make_engine("ray")
    source = _jsonl(tmp_path / "in.jsonl", [Example("a cat", ("a cat",))])
    result = CliRunner().invoke(app, ["score", "-i", str(source), "-m", "chrf", "--no-cache", "--engine", "ray"])
    assert result.exit_code == 2 and 'pip install "meta-eval[ray]"' in result.output


def test_engine_choices_are_checked():
    assert isinstance(make_engine("local", 1), InProcess)
    with pytest.raises(EngineError, match="unknown engine 'spark'"):
        make_engine("spark")
    with pytest.raises(EngineError, match="positive integer"):
        make_engine("local", 0)
    with pytest.raises(EngineError, match="needs --engine ray"):
        make_engine("local", 2, address="ray://head:10001")


#: a metric class defined in __main__ (a notebook, python -c, a script read from standard input), scored by a pool
MAIN_METRIC = """
import sys
import time
from meta_eval.metrics import Example, Metric, register
from meta_eval.scoring.engines import LocalEngine


@register("in-main")
class InMain(Metric):
    variants = ("in-main",)
    needs_references = False

    def _score(self, examples):
        time.sleep(0.4)  # slow enough that the workers, once started, take batches before the driver is done
        return {"in-main": [float(len(e.candidate)) for e in examples]}


batches = [[Example("a" * (i + 1), ())] for i in range(10)]
with LocalEngine(2, start_after=0) as engine:
    done = dict(engine.score_batches(InMain(), batches))
print([float(done[i]["in-main"][0]) for i in range(10)])
"""


@pytest.mark.parametrize("how", ["-c", "stdin"])
def test_a_metric_defined_in_main_is_scored_in_the_driver_not_lost_in_every_worker(how):
    """A class of ``__main__`` pickles by reference, and a spawned worker of ``python -c`` (or of a notebook) has
    no such class: every batch failed there with "Can't get attribute"; from standard input every worker died
    trying to run ``<stdin>`` as a file. Both are now scored in this process, with the reason."""
    args, given = ([sys.executable, "-c", MAIN_METRIC], None) if how == "-c" else ([sys.executable, "-"], MAIN_METRIC)
    done = subprocess.run(args, input=given, cwd=REPO, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == str([float(i) for i in range(1, 11)])
    said = " ".join(done.stderr.split())
    why = "is defined in __main__" if how == "-c" else "main script <stdin> is not a file"
    assert "in-main cannot be sent to worker processes (" in said and why in said, said
    assert "Traceback" not in done.stderr
