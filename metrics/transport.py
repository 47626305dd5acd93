"""Many exact earth mover's distances at once, on threads: the transports of a neural mover's call (issue #37).

MoverScore and the contextual movers (:mod:`metrics.moverscore`, :mod:`metrics.contextual_mover`) solve one exact
transport (:func:`metrics.mover.mover_distance`, POT's network simplex) per (row, reference) pair once their
encoder has given the states. The encoder's torch threads are idle by then; :func:`mover_distances` hands the pairs
to that many threads. Each pair is solved alone by the same code, so the distances are bit-identical to solving them
one after the other: no score, signature or cache entry depends on the thread count. On a GPU run these transports
were among the largest CPU work left in the driver (issue #37: POT's EMD and its distance matrices took 5.2 s of
``-m all`` on chaganty on an H200 machine's CPU, the GloVe movers' included).

The GloVe movers of :mod:`metrics.mover` do not use it: they run in a local engine's worker processes, one thread
each.
"""
from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from typing import Iterable, Iterator, Tuple

import numpy as np

from meta_eval.metrics.mover import import_ot, mover_distance

__all__ = ["AHEAD_PER_THREAD", "INLINE_CELLS", "Problem", "mover_distances"]

#: One transport problem of :func:`mover_distances`: weights ``a`` of points ``x_a``, weights ``b`` of points ``x_b``.
Problem = Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]

#: Transport problems handed to the threads ahead of the one being collected, per thread: enough to keep every
#: thread busy while the caller builds the next problems, few enough that only a handful of a batch's (float64)
#: point sets are alive at once.
AHEAD_PER_THREAD = 2
#: A problem of fewer cost-matrix cells (points of one side times the other's) is solved on the calling thread: a
#: hand-over to a thread costs more than it saves. Measured on 500 chaganty rows with MiniLM, 2 threads against 1:
#: sms-ctx (about 4 sentences a side, ~15 cells) 0.035 s -> 0.07-0.11 s on threads; wms-ctx (~1,000 cells) 0.14-0.17
#: s -> 0.11 s; moverscore (~3,000 cells) 0.34 s -> 0.20 s.
INLINE_CELLS = 256


def mover_distances(problems: Iterable[Problem | None], threads: int = 1) -> Iterator[float | None]:
    """:func:`metrics.mover.mover_distance` of every problem ``(a, x_a, b, x_b)``, in order, solved on ``threads`` threads.

    ``None`` (a pair with nothing to transport on one side) gives ``None``. The problems are read lazily, as the
    threads need them (at most ``threads * AHEAD_PER_THREAD`` solved or in flight beyond the one collected), so a
    caller can build each pair's point sets in a generator without holding a whole batch's. Each problem is solved
    alone by the same code on one thread (the network simplex of POT and SciPy's ``cdist`` release the GIL), so the
    distances are bit-identical to those solved one after the other, whatever ``threads``; the first
    failing problem in order raises its error here. A problem under ``INLINE_CELLS`` cost cells is solved on the
    calling thread when it is collected. Measured (2-core machine, 600 random problems of 40-120 points in 384
    dimensions): 0.84 s on one thread, 0.48 s on two.

    >>> import numpy as np
    >>> one = (np.array([1.0]), np.zeros((1, 2)), np.array([1.0]), np.array([[3.0, 4.0]]))
    >>> list(mover_distances([one, None, one], threads=2))
    [5.0, None, 5.0]
    """
    if threads < 1:
        raise ValueError(f"threads must be >= 1, got {threads}")
    if threads == 1:
        for problem in problems:
            yield None if problem is None else mover_distance(*problem)
        return
    from collections import deque

    import_ot()  # once here: the threads would only wait for each other's import
    pool = ThreadPoolExecutor(threads, thread_name_prefix="meta-eval-emd")
    try:
        pending: deque = deque()  # in order: a thread's Future, or a problem left to this thread (None or small)
        for problem in problems:
            small = problem is None or len(problem[0]) * len(problem[2]) < INLINE_CELLS
            pending.append(problem if small else pool.submit(mover_distance, *problem))
            if len(pending) > threads * AHEAD_PER_THREAD:
                yield _collect(pending.popleft())
        while pending:
            yield _collect(pending.popleft())
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _collect(item) -> float | None:
    """A :func:`mover_distances` result: a thread's (a Future), or None, or solved here (a small problem)."""
    if isinstance(item, Future):
        return item.result()
    return None if item is None else mover_distance(*item)

