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

import warnings
from concurrent.futures import ThreadPoolExecutor, wait
from typing import Iterable, Iterator, Tuple

import numpy as np

from meta_eval.metrics.mover import import_ot, mover_distance, unguarded_mover_distance

__all__ = ["CHUNK_PER_THREAD", "INLINE_CELLS", "Problem", "mover_distances"]

#: One transport problem of :func:`mover_distances`: weights ``a`` of points ``x_a``, weights ``b`` of points ``x_b``.
Problem = Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]

#: Problems read and solved together, per thread: the caller builds a chunk's point sets, then waits while the threads
#: solve it (see :func:`mover_distances` for why it does not build the next chunk meanwhile).
CHUNK_PER_THREAD = 16
#: A problem of fewer cost-matrix cells (points of one side times the other's) is solved on the calling thread: a
#: hand-over to a thread costs more than it saves. Measured on 500 chaganty rows with MiniLM, 2 threads against 1:
#: sms-ctx (about 4 sentences a side, ~15 cells) 0.035 s -> 0.07-0.11 s on threads; wms-ctx (~1,000 cells) 0.14-0.17
#: s -> 0.11 s; moverscore (~3,000 cells) 0.34 s -> 0.20 s.
INLINE_CELLS = 256


def mover_distances(problems: Iterable[Problem | None], threads: int = 1) -> Iterator[float | None]:
    """:func:`metrics.mover.mover_distance` of every problem ``(a, x_a, b, x_b)``, in order, on ``threads`` threads.

    ``None`` (a pair with nothing to transport on one side) gives ``None``. The problems are read a chunk at a time
    (``threads * CHUNK_PER_THREAD``), so a caller can build each pair's point sets in a generator without holding a
    whole batch's. Each problem is solved alone by the same code on one thread (the network simplex of POT and
    SciPy's ``cdist`` release the GIL), so the distances are bit-identical to those solved one after the other,
    whatever ``threads``; the first failing problem in order raises its error here. A problem under
    ``INLINE_CELLS`` cost cells is solved on the calling thread while the threads solve the others.

    Warnings: ``mover_distance`` silences POT's warning of a first try stopped at its iteration cap with
    ``warnings.catch_warnings``, which is not thread-safe (the filters are one list for the process; threads
    entering and leaving it at once left ``ignore`` filters behind, silencing every later warning). The threads
    therefore solve with :func:`metrics.mover.unguarded_mover_distance` while the caller holds one
    ``catch_warnings`` for them and meanwhile solves the chunk's small problems the same way (the bits of
    ``mover_distance``, whose own guard only silences that warning); it builds the next chunk after leaving the
    guard, so no warning of its own building falls under it.

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
    import_ot()  # once here: the threads would only wait for each other's import
    pool = ThreadPoolExecutor(threads, thread_name_prefix="meta-eval-emd")
    try:
        for chunk in _chunks(problems, threads * CHUNK_PER_THREAD):
            with warnings.catch_warnings():  # the threads' one guard, held while they run and this thread solves
                warnings.simplefilter("ignore")
                solving = {k: pool.submit(unguarded_mover_distance, *p) for k, p in enumerate(chunk)
                           if p is not None and len(p[0]) * len(p[2]) >= INLINE_CELLS}
                here = {k: _attempt(p) for k, p in enumerate(chunk) if k not in solving}  # the small ones, meanwhile
                wait(solving.values())
            for k in range(len(chunk)):
                if k in solving:
                    yield solving[k].result()
                elif isinstance(here[k], BaseException):
                    raise here[k]
                else:
                    yield here[k]
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _attempt(problem: Problem | None) -> float | BaseException | None:
    """:func:`metrics.mover.unguarded_mover_distance` of ``problem`` on the calling thread, inside the guard
    :func:`mover_distances` holds; its error is returned, to be raised in the problems' order."""
    if problem is None:
        return None
    try:
        return unguarded_mover_distance(*problem)
    except Exception as exc:  # noqa: BLE001 - raised by the caller in order
        return exc


def _chunks(items: Iterable, size: int) -> Iterator[list]:
    """``items`` in lists of ``size`` (the last may be shorter), read as they are needed."""
    chunk: list = []
    for item in items:
        chunk.append(item)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk
