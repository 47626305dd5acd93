"""Tests for the SQLite score cache and the cache-aware runner (resume after an interrupted or killed run)."""

import os
import signal
import subprocess
import sys
import textwrap
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from meta_eval.scoring.cache import CacheError, ScoreCache, example_key  # noqa: E402
from meta_eval.scoring.runner import score_examples  # noqa: E402
from meta_eval.metrics.base import Example, Metric  # noqa: E402


def _examples(n, start=0):
    return [Example(f"candidate number {i}", (f"reference {i}", "shared reference"), None)
            for i in range(start, start + n)]


# -- test metrics (never registered: name set by hand) ---------------------------------------------------------------

class CountingMetric(Metric):
    """Scores ``len(candidate) * scale`` (and its negation), counting the examples it was asked to score."""

    name = "test-counting"
    variants = ("len", "neg")

    def __init__(self, scale=1.0, fail_on_batch=None):
        self.scale = scale
        self.fail_on_batch = fail_on_batch
        self.batches = 0
        self.scored = 0
        self.seen = []

    def config(self):
        return {"scale": self.scale}

    def _score(self, examples):
        self.batches += 1
        if self.fail_on_batch is not None and self.batches == self.fail_on_batch:
            raise KeyboardInterrupt
        self.scored += len(examples)
        self.seen.extend(ex.candidate for ex in examples)
        lens = [len(ex.candidate) * self.scale for ex in examples]
        return {"len": lens, "neg": [-x for x in lens]}


def _expected(examples, scale=1.0):
    return np.array([len(ex.candidate) * scale for ex in examples])


# -- ScoreCache ------------------------------------------------------------------------------------------------------

def test_put_get_round_trip(tmp_path):
    with ScoreCache(tmp_path / "c.sqlite") as cache:
        entries = {f"k{i}": {"a": i / 3, "b": -i} for i in range(1200)}  # more than one SQL chunk of 500
        cache.put_many("sig-1", entries)
        got = cache.get_many("sig-1", list(entries) + ["absent"])
        assert got == {k: {"a": v["a"], "b": float(v["b"])} for k, v in entries.items()}
        assert cache.count("sig-1") == 1200
        assert cache.count() == 1200
        assert cache.get_many("sig-1", ["k3", "k3"]) == {"k3": {"a": 1.0, "b": -3.0}}
        cache.put_many("sig-1", {"k3": {"a": 9.0, "b": 9.0}})  # overwrite, no duplicate row
        assert cache.get_many("sig-1", ["k3"]) == {"k3": {"a": 9.0, "b": 9.0}}
        assert cache.count("sig-1") == 1200


def test_signatures_are_separate():
    with ScoreCache() as cache:  # in memory
        cache.put_many("metric|a:1", {"k": {"x": 1.0}})
        cache.put_many("metric|a:2", {"k": {"x": 2.0}, "j": {"x": 3.0}})
        assert cache.get_many("metric|a:1", ["k", "j"]) == {"k": {"x": 1.0}}
        assert cache.get_many("metric|a:2", ["k", "j"]) == {"k": {"x": 2.0}, "j": {"x": 3.0}}
        assert cache.get_many("metric|a:3", ["k", "j"]) == {}
        assert cache.count("metric|a:1") == 1
        assert cache.count("metric|a:2") == 2
        assert cache.count("metric|a:3") == 0
        assert cache.count() == 3


def test_example_key():
    base = Example("the cat sat", ("a cat sat", "cats sit"), "a source")
    same = Example("the cat sat", ["a cat sat", "cats sit"], "a source")
    assert example_key(base) == example_key(same)
    assert len(example_key(base)) == 64
    variants = [
        Example("the cat sat!", ("a cat sat", "cats sit"), "a source"),
        Example("the cat sat", ("a cat sat", "cats sat"), "a source"),
        Example("the cat sat", ("cats sit", "a cat sat"), "a source"),
        Example("the cat sat", ("a cat sat",), "a source"),
        Example("the cat sat", ("a cat sat", "cats sit"), "another source"),
        Example("the cat sat", ("a cat sat", "cats sit"), None),
        Example("the cat sat", ("a cat sat", "cats sit"), ""),
        Example("the cat sata", ("cat sat", "cats sit"), "a source"),  # same characters, moved across fields
    ]
    keys = {example_key(ex) for ex in variants}
    assert len(keys) == len(variants)
    assert example_key(base) not in keys


def test_remembered_keys_are_the_keys_and_each_distinct_example_is_hashed_once(monkeypatch):
    import hashlib

    import meta_eval.scoring.cache as cache_module
    from meta_eval.metrics.instance import Instance
    from meta_eval.scoring.cache import keys_remembered
    from meta_eval.scoring.runner import score_all

    class Text(str):  # a str subclass may hash and compare as it likes: keyed, never remembered
        pass

    examples = [Example("the cat sat", ("a cat sat", "cats sit"), "a source"),
                Example("the cat sat", ("a cat sat", "cats sit"), None),
                Example("the cat sat", ("a cat sat", "cats sit"), ""),
                Example("the cat sata", ("cat sat", "cats sit"), "a source"),
                Example(Text("the cat sat"), ("a cat sat", "cats sit"), "a source"),
                Instance("the cat sat", ("a cat sat", "cats sit"), "a source", fields={"b": "x"}),
                Instance("the cat sat", ("a cat sat", "cats sit"), "a source", fields={"b": "y"}),
                Instance("the cat sat", ("a cat sat", "cats sit"), "a source")]
    plain = [example_key(ex) for ex in examples]
    assert len(set(plain)) == len(plain) - 2  # the str subclass and the field-less Instance key as the first
    hashed = []
    monkeypatch.setattr(cache_module, "hashlib", type("H", (), {"sha256": lambda data: hashed.append(data)
                                                                or hashlib.sha256(data)}))
    with keys_remembered():
        twice = [example_key(ex) for ex in examples + examples[::-1]]
        with keys_remembered():  # a nested block shares the outer memo
            assert [example_key(ex) for ex in examples] == plain
    assert twice == plain + plain[::-1]
    # once per distinct text set (6), and the str subclass at each of its 3 keyings
    assert len(hashed) == len(set(plain)) + 3
    assert cache_module._KEYS.get() is None  # the memo is dropped with the block
    hashed.clear()
    assert [example_key(ex) for ex in examples] == plain and len(hashed) == len(examples)  # outside: hashed again

    class Length(Metric):
        name, variants, needs_references = "len", ("len",), False

        def _score(self, batch):
            return {"len": [float(len(ex.candidate)) for ex in batch]}

    class Words(Length):
        name, variants = "words", ("words",)

        def _score(self, batch):
            return {"words": [float(len(ex.candidate.split())) for ex in batch]}

    monkeypatch.setattr(cache_module, "KEYS_REMEMBERED", 2)  # a full memo remembers no more: the rest is hashed
    hashed.clear()
    with keys_remembered():
        assert [example_key(ex) for ex in examples[:4] * 2] == plain[:4] * 2
    assert len(hashed) == 2 + 2 * 2
    monkeypatch.undo()
    monkeypatch.setattr(cache_module, "hashlib", type("H", (), {"sha256": lambda data: hashed.append(data)
                                                                or hashlib.sha256(data)}))
    hashed.clear()
    rows = examples[:4] * 3
    score_all([Length(), Words()], rows, None, degenerate=False, progress=False)
    assert len(hashed) == 4  # two metrics, twelve rows, four distinct examples: four hashes


def test_persistence(tmp_path):
    path = tmp_path / "sub" / "dir" / "scores.sqlite"
    cache = ScoreCache(path)
    cache.put_many("sig", {"k1": {"v": 0.25}, "k2": {"v": -1.5}})
    cache.close()
    assert path.exists()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with ScoreCache(path) as again:
            assert again.get_many("sig", ["k1", "k2"]) == {"k1": {"v": 0.25}, "k2": {"v": -1.5}}
            assert again.count() == 2


def test_file_that_is_not_a_database_is_left_alone(tmp_path):
    """Only a proven corrupt meta-eval cache is ever moved (tests/test_cache_faults.py has the other cases)."""
    path = tmp_path / "scores.sqlite"
    garbage = b"this is not a database\x00\xff" * 300
    path.write_bytes(garbage)
    with pytest.raises(CacheError, match="not an SQLite database") as info:
        ScoreCache(path)
    assert str(path) in str(info.value)
    assert path.read_bytes() == garbage
    assert sorted(p.name for p in tmp_path.iterdir()) == ["scores.sqlite"]


# -- the runner ------------------------------------------------------------------------------------------------------

def test_runner_caches_and_dedups(tmp_path):
    examples = _examples(7)
    examples = examples + examples[2:5] + [examples[0]]  # 11 inputs, 7 distinct
    metric = CountingMetric()
    with ScoreCache(tmp_path / "c.sqlite") as cache:
        first = score_examples(metric, examples, cache, batch_size=3)
        assert metric.scored == 7
        assert sorted(metric.seen) == sorted({ex.candidate for ex in examples})
        assert (first.computed, first.cached) == (7, 0)
        assert first.signature == metric.signature()
        assert set(first.scores) == {"len", "neg"}
        np.testing.assert_array_equal(first.scores["len"], _expected(examples))
        np.testing.assert_array_equal(first.scores["neg"], -_expected(examples))
        assert cache.count(metric.signature()) == 7

        again = CountingMetric()
        second = score_examples(again, examples, cache, batch_size=3)
        assert again.scored == 0 and again.batches == 0
        assert (second.computed, second.cached) == (0, 7)
        for v in ("len", "neg"):
            np.testing.assert_array_equal(second.scores[v], first.scores[v])
            assert second.scores[v].dtype == np.float64


def test_runner_without_cache_computes_distinct_once():
    examples = _examples(4) * 3
    metric = CountingMetric()
    out = score_examples(metric, examples, None, batch_size=2)
    assert metric.scored == 4 and out.computed == 4
    np.testing.assert_array_equal(out.scores["len"], _expected(examples))


def test_runner_signature_change_recomputes(tmp_path):
    examples = _examples(5)
    with ScoreCache(tmp_path / "c.sqlite") as cache:
        score_examples(CountingMetric(scale=1.0), examples, cache)
        other = CountingMetric(scale=2.0)
        assert other.signature() != CountingMetric(scale=1.0).signature()
        out = score_examples(other, examples, cache)
        assert other.scored == 5 and out.computed == 5
        np.testing.assert_array_equal(out.scores["len"], _expected(examples, 2.0))
        back = CountingMetric(scale=1.0)
        out = score_examples(back, examples, cache)
        assert back.scored == 0
        np.testing.assert_array_equal(out.scores["len"], _expected(examples, 1.0))
        assert cache.count() == 10


def test_runner_recomputes_entries_missing_a_variant(tmp_path):
    examples = _examples(3)
    metric = CountingMetric()
    with ScoreCache(tmp_path / "c.sqlite") as cache:
        cache.put_many(metric.signature(), {example_key(examples[0]): {"len": 99.0}})  # no "neg"
        out = score_examples(metric, examples, cache)
        assert metric.scored == 3
        np.testing.assert_array_equal(out.scores["len"], _expected(examples))


def test_runner_progress_and_new_examples(tmp_path):
    calls = []
    with ScoreCache(tmp_path / "c.sqlite") as cache:
        score_examples(CountingMetric(), _examples(4), cache)
        metric = CountingMetric()
        out = score_examples(metric, _examples(10), cache, batch_size=4,
                             on_progress=lambda done, total: calls.append((done, total)))
    assert metric.scored == 6 and (out.computed, out.cached) == (6, 4)
    assert calls == [(4, 10), (8, 10), (10, 10)]


def test_interrupted_run_resumes(tmp_path):
    path = tmp_path / "c.sqlite"
    examples = _examples(10)
    failing = CountingMetric(fail_on_batch=3)
    cache = ScoreCache(path)
    try:
        with pytest.raises(KeyboardInterrupt):
            score_examples(failing, examples, cache, batch_size=2)
    finally:
        cache.close()
    assert failing.batches == 3 and failing.scored == 4

    with ScoreCache(path) as cache:
        sig = failing.signature()
        assert cache.count(sig) == 4
        saved = cache.get_many(sig, [example_key(ex) for ex in examples])
        assert set(saved) == {example_key(ex) for ex in examples[:4]}

        resumed = CountingMetric()
        assert resumed.signature() == sig
        out = score_examples(resumed, examples, cache, batch_size=2)
        assert resumed.scored == 6 and (out.computed, out.cached) == (6, 4)
        assert sorted(resumed.seen) == sorted(ex.candidate for ex in examples[4:])
        np.testing.assert_array_equal(out.scores["len"], _expected(examples))
        assert cache.count(sig) == 10


# -- a real SIGKILL in the middle of a run ---------------------------------------------------------------------------

N_KILL = 2000

# the metric lives in one module file that the killed run and this test both import: the same code, hence the same
# signature (a signature covers the metric's code, metrics/code_digest.py)
_MODULE = textwrap.dedent("""
    import time

    from meta_eval.metrics.base import Metric


    class SlowMetric(Metric):
        name = "test-slow"
        variants = ("len",)

        def __init__(self):
            self.scored = 0
            self.seen = []

        def config(self):
            return {"pause": 0.01}

        def _score(self, examples):
            time.sleep(0.01)
            self.scored += len(examples)
            self.seen.extend(ex.candidate for ex in examples)
            return {"len": [float(len(ex.candidate)) for ex in examples]}
""")

_SCRIPT = textwrap.dedent("""
    import sys
    sys.path.insert(0, sys.argv[1])
    sys.path.insert(0, sys.argv[4])
    from meta_eval.scoring.cache import ScoreCache
    from meta_eval.scoring.runner import score_examples
    from meta_eval.metrics.base import Example
    from slowmetric import SlowMetric

    examples = [Example(f"slow candidate {i}", (f"slow reference {i}",)) for i in range(int(sys.argv[3]))]
    metric = SlowMetric()
    cache = ScoreCache(sys.argv[2])
    print("SIGNATURE", metric.signature(), flush=True)
    score_examples(metric, examples, cache, batch_size=10)
    print("DONE", flush=True)
""")


def _slow_metric(folder: Path):
    """The module's SlowMetric, imported in this process from ``folder``."""
    import importlib

    sys.path.insert(0, str(folder))
    try:
        sys.modules.pop("slowmetric", None)
        return importlib.import_module("slowmetric").SlowMetric
    finally:
        sys.path.remove(str(folder))
        sys.modules.pop("slowmetric", None)


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL (POSIX)")
def test_killed_subprocess_resumes(tmp_path):
    script = tmp_path / "slow_run.py"
    script.write_text(_SCRIPT, encoding="utf-8")
    (tmp_path / "slowmetric.py").write_text(_MODULE, encoding="utf-8")
    path = tmp_path / "killed.sqlite"
    proc = subprocess.Popen([sys.executable, str(script), str(REPO), str(path), str(N_KILL), str(tmp_path)], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()  # blocks until imports are done and the run starts
        assert line.startswith("SIGNATURE "), (line, proc.stderr.read() if proc.poll() is not None else "")
        signature = line.split(" ", 1)[1].strip()
        time.sleep(1.0)
        assert proc.poll() is None, "the run finished before it was killed; make the metric slower"
        os.kill(proc.pid, signal.SIGKILL)
        assert proc.wait(timeout=10) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()

    examples = [Example(f"slow candidate {i}", (f"slow reference {i}",)) for i in range(N_KILL)]
    metric = _slow_metric(tmp_path)()
    assert metric.signature() == signature
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a corrupt-cache warning would fail the test
        cache = ScoreCache(path)
    with cache:
        saved = cache.count(signature)
        assert 0 < saved < N_KILL
        assert saved % 10 == 0  # whole batches only
        out = score_examples(metric, examples, cache, batch_size=200)
        assert out.computed == N_KILL - saved == metric.scored
        assert out.cached == saved
        assert len(metric.seen) == len(set(metric.seen))  # each remaining example scored exactly once
        assert set(metric.seen).isdisjoint(ex.candidate for ex in examples[:saved])
        np.testing.assert_array_equal(out.scores["len"], [float(len(ex.candidate)) for ex in examples])
        assert cache.count(signature) == N_KILL
