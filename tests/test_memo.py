"""The per-process memo of the neural metrics (metrics/memo.py): a bytes-bounded LRU, and handing freed heap
memory back to the system between batches."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest

from meta_eval.metrics.memo import BytesLRU, return_free_memory


def test_lru_evicts_least_recently_used_first_within_its_byte_limit():
    memo = BytesLRU(100, lambda a: a.nbytes)
    memo.put("a", np.zeros(5))  # 40 bytes
    memo.put("b", np.zeros(5))  # 80
    assert memo.get("a") is not None  # "a" is now the most recently used
    memo.put("c", np.zeros(5))  # 120 > 100: "b" goes, not "a"
    assert memo.get("b") is None and memo.get("a") is not None and memo.get("c") is not None
    assert memo.size == 80 and len(memo) == 2
    memo.put("huge", np.zeros(20))  # larger than the whole limit: not kept, nothing evicted
    assert memo.get("huge") is None and len(memo) == 2
    memo.put("a", np.zeros(1))  # a key already held keeps its first value
    assert memo.get("a").shape == (5,)
    memo.clear()
    assert len(memo) == 0 and memo.size == 0
    with pytest.raises(ValueError):
        BytesLRU(-1, len)


def _rss_mb() -> float:
    with open(f"/proc/{os.getpid()}/status") as fh:
        for line in fh:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


@pytest.mark.skipif(not sys.platform.startswith("linux") or os.confstr("CS_GNU_LIBC_VERSION") is None,
                    reason="malloc_trim is glibc's")
def test_freed_heap_memory_goes_back_to_the_system():
    # 200,000 blocks of 2 kB (above pymalloc's 512 bytes: glibc's heap), then free all but every 1,000th, which pins
    # the heap so that glibc's own trimming of the heap top cannot return the freed memory in between
    blocks = [bytes(2048) for _ in range(200_000)]
    kept = blocks[::1000]
    del blocks
    before = _rss_mb()
    return_free_memory()
    after = _rss_mb()
    assert before - after > 150, (before, after)  # about 400 MB were freed
    assert len(kept) == 200


# -- releasing what a run is done with (metrics.memo.release, meta_eval.scoring.runner.run_order / release_done)
# ----------

def test_release_calls_what_was_registered_and_ignores_unknown_names():
    from meta_eval.metrics.memo import on_release, release

    calls = []
    on_release("test-memo-a", lambda: calls.append("a1"))
    on_release("test-memo-a", lambda: calls.append("a2"))
    on_release("test-memo-b", lambda: calls.append("b"))
    assert release(["test-memo-a", "not-registered-anywhere"]) == ["test-memo-a"]
    assert calls == ["a1", "a2"]  # both forgetters of a, in order; b untouched
    assert release([]) == []


def test_released_word_vectors_are_forgotten_and_reload_with_the_same_values():
    from meta_eval.metrics.memo import release
    from meta_eval.metrics.vectors import load_vectors

    before = load_vectors().lookup(["cat", "dog"])[0]
    assert load_vectors.cache_info().currsize > 0
    assert release(["vectors"]) == ["vectors"]
    assert load_vectors.cache_info().currsize == 0
    assert np.array_equal(load_vectors().lookup(["cat", "dog"])[0], before)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_glove_loaded_and_released_leaves_little_behind():
    # in a fresh interpreter (this one's heap is the other tests'): GloVe's 80 MB matrix and 400,000 words go with
    # their release; pyarrow's allocator, which read the word index, used to keep 26 MB of it (37 MB left in all,
    # measured), and now hands it back right after the read (about 10 MB are left)
    import subprocess
    import textwrap

    code = textwrap.dedent("""
        import gc
        from meta_eval.metrics.memo import release
        from meta_eval.metrics.mover import import_ot
        from meta_eval.metrics.vectors import load_vectors
        import pyarrow.parquet
        import_ot()
        def rss():
            with open("/proc/self/status") as fh:
                return next(int(line.split()[1]) for line in fh if line.startswith("VmRSS")) / 1024
        before = rss()
        loaded = load_vectors()
        assert len(loaded.index) == 400000
        during = rss()
        del loaded
        release(["vectors"])
        print(during - before, rss() - before)
    """)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    grew, left = map(float, out.stdout.split())
    assert grew > 60, (grew, left)  # the vectors were really loaded
    assert left < 25, (grew, left)

def test_run_order_groups_metrics_by_resource_and_release_done_waits_for_the_last_holder():
    from meta_eval.metrics import create
    from meta_eval.scoring.runner import release_done, run_order
    from meta_eval.metrics.vectors import load_vectors

    wms, rouge, sms = (create(n) for n in ("wms", "rouge", "sms"))  # core metrics only: no extra needed
    assert wms.holds == ("vectors",) and rouge.holds == ()
    assert [m.name for m in run_order([wms, rouge, sms])] == ["rouge", "wms", "sms"]
    ctx = create("wms-ctx")  # parallel="single": its group goes after the CPU metrics' groups
    assert [m.name for m in run_order([ctx, wms, rouge])] == ["rouge", "wms", "wms-ctx"]
    assert run_order([]) == []
    example = [__import__("meta_eval.metrics").metrics.Example("The cat sat.", ("A cat sat.",))]
    wms.score(example)
    assert release_done(wms, [sms]) == []  # sms, still to run, needs GloVe: kept
    assert load_vectors.cache_info().currsize > 0
    assert release_done(sms, []) == ["vectors"]
    assert load_vectors.cache_info().currsize == 0
    rouge.score(example)
    assert rouge._texts is not None
    assert release_done(rouge, []) == [] and rouge._texts is None  # its own memo goes, nothing shared
    assert rouge.score(example)["rouge1-f"][0] == create("rouge").score(example)["rouge1-f"][0]


def test_a_command_releases_every_resource_and_reports_in_the_chosen_order(tmp_path):
    import json

    from typer.testing import CliRunner

    from meta_eval.cli import app
    from meta_eval.metrics.vectors import load_vectors

    inp = tmp_path / "in.jsonl"
    inp.write_text("\n".join(json.dumps({"id": str(i), "candidate": c, "references": [r]}) for i, (c, r) in
                             enumerate([("The cat sat on the mat.", "A cat sat on a mat."),
                                        ("Dogs bark.", "The dog barked loudly.")])) + "\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    res = CliRunner().invoke(app, ["score", "-m", "wms,rouge,sms", "-i", str(inp), "--no-cache", "--output",
                                   str(out)])
    assert res.exit_code == 0, res.output
    assert load_vectors.cache_info().currsize == 0  # wms and sms done: GloVe released
    header, row = (json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()[:2])
    assert [s.split("|")[0] for s in header["signatures"]] == ["wms", "rouge", "sms"]  # scored rouge, wms, sms
    assert [k for k in row if k in ("wms", "rouge1-f", "sms")] == ["wms", "rouge1-f", "sms"]  # reported as asked


def test_paused_gc_restores_the_collector_state_even_on_error():
    import gc

    from meta_eval.metrics.memo import paused_gc

    assert gc.isenabled()
    with pytest.raises(RuntimeError):
        with paused_gc():
            assert not gc.isenabled()
            raise RuntimeError("inside")
    assert gc.isenabled()
    gc.disable()
    try:  # a caller that had paused it keeps it paused
        with paused_gc():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
    with paused_gc():
        with paused_gc():  # nested: only the outer block restarts it
            pass
        assert not gc.isenabled()
    assert gc.isenabled()


def test_rouge_scores_with_the_collector_paused_and_restarts_it(monkeypatch):
    import gc

    import meta_eval.metrics.rouge as rouge_module
    from meta_eval.metrics import Example, create

    seen = []
    pair_scores = rouge_module._pair_scores

    def watched(*args):
        seen.append(gc.isenabled())
        return pair_scores(*args)

    monkeypatch.setattr(rouge_module, "_pair_scores", watched)
    rows = [Example("the cat sat", ("the cat sat down",)), Example("a dog", ("the dog ran",))]
    out = create("rouge", split="newline").score(rows)
    assert seen == [False, False] and gc.isenabled()
    assert out["rouge1-r"][0] == 0.75  # 3 of the reference's 4 unigrams

    def broken(*args):
        raise RuntimeError("inside the loop")

    monkeypatch.setattr(rouge_module, "_pair_scores", broken)
    with pytest.raises(RuntimeError):
        create("rouge", split="newline").score(rows)
    assert gc.isenabled()


class _Cycle:
    """A resource with a reference cycle, as a model's modules have: only a collection frees it."""

    def __init__(self) -> None:
        self.me = self


def _holding(name: str, holds: tuple[str, ...], seen: list):
    from meta_eval.metrics import Metric

    class Holding(Metric):
        variants = ("n",)
        needs_references = False
        parallel = "single"

        def _score(self, examples):
            import gc

            seen.append((self.name, gc.get_freeze_count()))
            return {"n": [1.0] * len(examples)}

    Holding.name, Holding.holds = name, holds
    return Holding()


def test_the_long_lived_heap_is_frozen_between_metrics_only_when_no_loaded_resource_is_still_held():
    import gc
    import weakref

    from meta_eval.metrics import Example
    from meta_eval.metrics.memo import on_release
    from meta_eval.scoring.runner import score_all

    loaded: dict[str, object] = {}
    for resource in ("ll-a", "ll-b", "ll-shared"):
        on_release(resource, lambda r=resource: loaded.pop(r, None))
    rows = [Example("a b c", ())] * 3
    gc.unfreeze()  # from no frozen object (Python 3.12 starts with some; a run unfreezes them anyway)
    seen: list = []
    a, b = _holding("ll-first", ("ll-a",), seen), _holding("ll-second", ("ll-b",), seen)
    loaded["ll-a"] = _Cycle()  # loaded before the run: frozen with everything else on entering
    first = weakref.ref(loaded["ll-a"])
    score_all([a, b], rows, None, degenerate=False, progress=False)
    # the first metric ran with what was alive before the run frozen, the second with what was alive after the
    # first's release; the first's resource, cyclic and frozen on entering, was unfrozen and collected at its release
    assert seen[0][1] > 0 and seen[1][1] > 0 and first() is None
    assert gc.get_freeze_count() == 0  # unfrozen after the driver's metrics

    seen.clear()  # a resource still held by a metric to come: nothing frozen after the first release, and it is
    a, b = (_holding("ll-first", ("ll-a", "ll-shared"), seen), _holding("ll-second", ("ll-b", "ll-shared"), seen))
    loaded["ll-shared"] = _Cycle()  # collected at its release
    shared = weakref.ref(loaded["ll-shared"])
    score_all([a, b], rows, None, degenerate=False, progress=False)
    assert seen[0][1] > 0 and seen[1][1] == 0 and shared() is None and gc.get_freeze_count() == 0

    seen.clear()  # objects frozen before the run (Python 3.12 starts with some): the run still freezes, and
    gc.freeze()  # unfreezes at the end (CPython cannot unfreeze only its own)
    try:
        before = gc.get_freeze_count()
        loaded["ll-a"] = _Cycle()
        first = weakref.ref(loaded["ll-a"])
        score_all([_holding("ll-first", ("ll-a",), seen), _holding("ll-second", ("ll-b",), seen)], rows, None,
                  degenerate=False, progress=False)
        assert seen[0][1] > before and seen[1][1] > 0 and first() is None
        assert gc.get_freeze_count() == 0
        seen.clear()  # a run whose metrics hold no resource freezes nothing: an earlier freeze is left as it was
        gc.freeze()
        before = gc.get_freeze_count()
        score_all([_holding("ll-first", (), seen), _holding("ll-second", (), seen)], rows, None, degenerate=False,
                  progress=False)
        # a frozen object freed meanwhile (a context variable's old mapping) only lowers the count
        assert all(before - 10 < n <= before for _, n in seen) and before - 10 < gc.get_freeze_count() <= before
    finally:
        gc.unfreeze()


def test_while_the_heap_is_frozen_the_collector_runs_less_often_but_still_runs():
    """The first-generation threshold is raised while the driver's metrics run (:data:`runner.YOUNG_THRESHOLD`),
    restored after; a threshold of 0 (collection off) stays 0, and cyclic garbage is still collected meanwhile."""
    import gc
    import weakref

    from meta_eval.metrics import Example, Metric
    from meta_eval.scoring.runner import YOUNG_THRESHOLD, score_all

    rows = [Example("a b c", ())] * 3
    before = gc.get_threshold()
    seen: list = []

    class Churning(Metric):
        """Makes a cycle, drops it, then allocates 3 thresholds' worth of containers: the collector must run."""

        name, variants, needs_references, parallel = "ll-churn", ("n",), False, "single"
        holds = ("ll-churn-model",)

        def _score(self, examples):
            seen.append(gc.get_threshold())
            cycle = _Cycle()
            dead = weakref.ref(cycle)
            del cycle
            for _ in range(3):
                keep = [[] for _ in range(YOUNG_THRESHOLD)]
                del keep
            seen.append(dead() is None)
            return {"n": [1.0] * len(examples)}

    churning = Churning()
    try:
        score_all([churning], rows, None, degenerate=False, progress=False)
        assert seen[0][0] == max(before[0], YOUNG_THRESHOLD) and seen[0][1:] == before[1:]
        assert seen[1] is True  # collected inside the metric, without any explicit collection
        assert gc.get_threshold() == before
        seen.clear()
        gc.set_threshold(0, *before[1:])  # collection switched off by the caller: the run leaves it off
        score_all([churning], rows, None, degenerate=False, progress=False)
        assert seen[0][0] == 0 and seen[1] is False and gc.get_threshold() == (0, *before[1:])
        seen.clear()
        gc.set_threshold(10 * YOUNG_THRESHOLD, *before[1:])  # a caller's higher threshold is kept
        score_all([churning], rows, None, degenerate=False, progress=False)
        assert seen[0][0] == 10 * YOUNG_THRESHOLD and gc.get_threshold()[0] == 10 * YOUNG_THRESHOLD
    finally:
        gc.set_threshold(*before)
        gc.collect()
