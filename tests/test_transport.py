"""Many exact transports on threads (metrics/transport.py): the bits of one after the other, lazy reading, errors
in order. The neural movers' use of it (the granted threads, the same scores): tests/test_moverscore.py."""
from __future__ import annotations

import numpy as np
import pytest

from meta_eval.metrics.mover import mover_distance
from meta_eval.metrics.transport import CHUNK_PER_THREAD, INLINE_CELLS, mover_distances


def _problems(count: int, seed: int = 0) -> list:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        n, m = rng.integers(2, 60, 2)  # mostly over INLINE_CELLS: solved on the threads
        a, b = rng.random(n) + 0.1, rng.random(m) + 0.1
        out.append((a / a.sum(), rng.standard_normal((n, 16)), b / b.sum(), rng.standard_normal((m, 16))))
    return out


@pytest.mark.parametrize("threads", [1, 2, 5])
def test_mover_distances_on_threads_are_the_bits_of_one_after_the_other(threads):
    problems = _problems(60)
    problems[7] = problems[31] = None  # a pair with nothing to transport
    alone = [None if p is None else mover_distance(*p) for p in problems]
    assert list(mover_distances(problems, threads)) == alone  # == on floats: bit for bit
    assert alone[7] is None and all(isinstance(d, float) for d in alone[8:31])


def test_mover_distances_reads_the_problems_a_chunk_at_a_time():
    problems, read = _problems(3 * CHUNK_PER_THREAD * 2 + 5), []

    def lazily():
        for k, p in enumerate(problems):
            read.append(k)
            yield p

    distances = mover_distances(lazily(), threads=3)
    first = next(distances)
    assert first == mover_distance(*problems[0])
    assert len(read) == 3 * CHUNK_PER_THREAD  # only a chunk's point sets are alive at once
    assert list(distances) == [mover_distance(*p) for p in problems[1:]] and len(read) == len(problems)


def test_mover_distances_leave_the_warnings_filters_as_they_found_them():
    # catch_warnings is not thread-safe: per-pair guards entered and left on several threads at once left 'ignore'
    # filters behind (3 more after each call with 4 threads), silencing every later warning of the process
    import warnings

    before = list(warnings.filters)
    for _ in range(3):
        assert len(list(mover_distances(_problems(400, seed=5), threads=4))) == 400
        assert warnings.filters == before
    with pytest.warns(UserWarning, match="still heard"):
        warnings.warn("still heard", UserWarning)


def test_mover_distances_raises_the_first_failing_problem_in_order():
    problems = _problems(12)
    a, x_a, b, _ = problems[5]
    problems[5] = (a, x_a, b, np.zeros((len(b), 3)))  # 16-d against 3-d points: cdist refuses
    problems[9] = (a, x_a, b, np.zeros((len(b), 2)))
    got = []
    with pytest.raises(ValueError, match="dimension"):
        for d in mover_distances(problems, threads=4):
            got.append(d)
    assert got == [mover_distance(*p) for p in problems[:5]]
    with pytest.raises(ValueError, match="threads must be >= 1"):
        next(mover_distances(problems, threads=0))



def test_small_problems_are_solved_on_the_calling_thread(monkeypatch):
    import threading

    import meta_eval.metrics.transport as transport

    where = []

    def solve(*problem):
        where.append((len(problem[0]) * len(problem[2]) >= INLINE_CELLS, threading.current_thread().name))
        return mover_distance(*problem)

    monkeypatch.setattr(transport, "mover_distance", solve)  # the calling thread's (guarded) solver
    monkeypatch.setattr(transport, "unguarded_mover_distance", solve)  # the threads'
    big, small = _problems(1, seed=3)[0], _problems(1, seed=4)[0]
    small = (small[0][:1] / small[0][:1].sum(), small[1][:1], small[2], small[3])
    assert len(big[0]) * len(big[2]) >= INLINE_CELLS > len(small[0]) * len(small[2])
    assert list(mover_distances([big, small, [*big]], threads=2)) == [mover_distance(*big), mover_distance(*small),
                                                                    mover_distance(*big)]
    here = threading.current_thread().name
    # in any order (the threads' may finish before or after the small one is solved at its collection)
    assert sorted((is_big, name == here) for is_big, name in where) == [(False, True), (True, False), (True, False)]


def test_an_error_of_a_small_problem_solved_meanwhile_is_raised_in_its_order(monkeypatch):
    """The calling thread solves the small problems while the threads solve the big ones; an error is still raised
    in the problems' order, after the distances before it."""
    import meta_eval.metrics.transport as transport

    def solve(*problem):
        if problem[0][0] < 0:  # a marked problem fails, naming its size
            raise RuntimeError("small" if len(problem[0]) * len(problem[2]) < INLINE_CELLS else "big")
        return mover_distance(*problem)

    monkeypatch.setattr(transport, "unguarded_mover_distance", solve)
    big = _problems(1, seed=3)[0]
    small = _problems(1, seed=4)[0]
    small = (small[0][:1] / small[0][:1].sum(), small[1][:1], small[2], small[3])
    bad_big, bad_small = (-big[0], *big[1:]), (-small[0], *small[1:])
    for problems, first in (([big, bad_big, bad_small, big], "big"), ([big, bad_small, bad_big, big], "small")):
        got = []
        with pytest.raises(RuntimeError, match=first):
            for d in mover_distances(problems, threads=2):
                got.append(d)
        assert got == [mover_distance(*big)]
