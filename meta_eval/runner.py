"""Scoring a judgment set with metrics, batch by batch, through the score cache.

:func:`score_examples` is the one place where metrics meet the cache: it hashes every example, looks the keys up
under the metric's signature, scores only the missing distinct examples in batches (each batch committed at once, so
a killed run resumes), and returns one array per variant aligned with the input. Metric code itself stays
side-effect free and batch-oriented, so that a batch can equally run in a worker process.

Before anything else the metric is fitted on the whole set (:meth:`metrics.base.Metric.fit`: all the input
examples, in input order, duplicates included; a no-op for most metrics), so a metric whose scores depend on the set
(MoverScore's IDF) computes its statistics once, the same for every ``batch_size`` and whatever is cached, and names
them in its signature: the same example never gets two different scores under one cache key.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from meta_eval.cache import ScoreCache, example_key
from metrics.base import Example, Metric

__all__ = ["MetricScores", "score_examples"]

ProgressCallback = Callable[[int, int], None]


@dataclass
class MetricScores:
    """A metric's scores on a list of examples."""

    metric: str
    signature: str
    higher_is_better: bool
    scores: dict[str, np.ndarray]
    computed: int
    cached: int
    seconds: float


def score_examples(metric: Metric, examples: Sequence[Example], cache: ScoreCache | None = None,
                   batch_size: int = 256, on_progress: ProgressCallback | None = None) -> MetricScores:
    """Score ``examples`` with ``metric``, reusing and filling ``cache``.

    Parameters
    ----------
    metric : Metric
    examples : sequence of Example
        The whole set: ``metric.fit`` sees all of it, whatever is cached.
    cache : ScoreCache, optional
        Without one, everything is computed.
    batch_size : int
        Distinct examples per call to ``metric.score`` (and per cache commit).
    on_progress : callable(done, total), optional
        Called after the cache lookup and after every batch, counting distinct examples.
    """
    if batch_size < 1:
        raise ValueError("batch_size must be >= 1")
    start = time.perf_counter()
    examples = list(examples)
    metric.fit(examples)  # set-wide statistics (e.g. MoverScore's IDF) first: the signature names what was fitted
    signature = metric.signature()
    keys = [example_key(ex) for ex in examples]
    distinct: dict[str, Example] = dict(zip(keys, examples))
    found = cache.get_many(signature, distinct) if cache is not None else {}
    found = {k: v for k, v in found.items() if set(v) == set(metric.variants)}
    todo = [k for k in distinct if k not in found]
    total = len(distinct)
    if on_progress:
        on_progress(total - len(todo), total)
    for i in range(0, len(todo), batch_size):
        batch = todo[i:i + batch_size]
        out = metric.score([distinct[k] for k in batch])
        fresh = {k: {v: float(out[v][j]) for v in metric.variants} for j, k in enumerate(batch)}
        if cache is not None:
            cache.put_many(signature, fresh)
        found.update(fresh)
        if on_progress:
            on_progress(total - len(todo) + i + len(batch), total)
    scores = {v: np.array([found[k][v] for k in keys], dtype=np.float64) for v in metric.variants}
    return MetricScores(metric.name, signature, metric.higher_is_better, scores, computed=len(todo),
                        cached=total - len(todo), seconds=time.perf_counter() - start)
