"""Where the chunks of a resampling run: in this process (the default), or over an engine's workers, with progress.

The resampling functions (:mod:`meta_eval.stats.resampling`, :mod:`meta_eval.stats.pairwise`,
:mod:`meta_eval.stats.spa`) draw every
random index in the calling process first, then cut the resamples into chunks that bound memory; the chunk
boundaries depend only on the data's shape, never on the engine. Each chunk is a pure function of the shared
arrays and its own slice of the draws, so a chunk computed in a worker is bit-identical to the same chunk computed
here: the same seed gives the same numbers whatever the engine and the number of workers
(``tests/test_resampling_engines.py``).

By default the chunks run here, one after the other. Inside ``with spread(engine, progress)`` (the command line
uses the engine of ``--engine/--workers``) they go to :meth:`meta_eval.scoring.engines.Engine.map_chunks`, and
``progress(label, done, total)`` is called after every chunk, wherever it ran.

Examples
--------
>>> from meta_eval.scoring.chunks import run_chunks
>>> run_chunks("demo", pow, (2,), [(3,), (4,)])
[8, 16]
"""
from __future__ import annotations

import contextlib
import contextvars
from typing import Callable, Iterator, Sequence

__all__ = ["Progress", "run_chunks", "spread"]

Progress = Callable[[str, int, int], None]

_current: contextvars.ContextVar[tuple[object | None, Progress | None]] = contextvars.ContextVar(
    "meta_eval_chunks", default=(None, None))


@contextlib.contextmanager
def spread(engine=None, progress: Progress | None = None) -> Iterator[None]:
    """Run the resampling chunks of the enclosed calls on ``engine`` (None: here) and report ``progress``.

    Parameters
    ----------
    engine : meta_eval.scoring.engines.Engine, optional
        Its :meth:`~meta_eval.scoring.engines.Engine.map_chunks` computes the chunks; the engine stays open (its owner
        closes it).
    progress : callable, optional
        ``progress(label, done, total)`` after each chunk of a resampling called ``label``.
    """
    token = _current.set((engine, progress))
    try:
        yield
    finally:
        _current.reset(token)


def run_chunks(label: str, fn: Callable, shared: tuple, tasks: Sequence[tuple]) -> list:
    """``[fn(*shared, *task) for task in tasks]``, computed where :func:`spread` says, results in task order.

    ``fn`` must be a module-level function (workers import it by name); ``shared`` holds the large read-only
    arguments (sent once per worker), each task the small ones of one chunk.
    """
    engine, progress = _current.get()
    tasks = list(tasks)
    results: list = [None] * len(tasks)
    if engine is None:
        pairs = ((i, fn(*shared, *task)) for i, task in enumerate(tasks))
    else:
        pairs = engine.map_chunks(fn, tuple(shared), tasks)
    for done, (i, result) in enumerate(pairs, start=1):
        results[i] = result
        if progress is not None:
            progress(label, done, len(tasks))
    return results
