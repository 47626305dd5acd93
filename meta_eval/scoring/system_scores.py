"""How a metric's system-level score is formed: the mean of its row scores, or one score per system.

meta-eval's system level (Deutsch, Dror & Roth 2021) scores a system by the mean of its rows' scores. Some metrics
define their own system score instead, and WMT reports it (Freitag et al., WMT22/23 metrics findings): BLEU, chrF and
TER at the system level are sacrebleu's *corpus* scores, which pool each system's n-gram or edit statistics before
computing one score (corpus BLEU is not the mean of sentence BLEUs). A metric declares this with

- ``system_score = "corpus"`` (an attribute or property; absent means ``"mean"``), and
- ``corpus_score(examples) -> {variant: float}``, one score over any list of examples;

imported scores (:mod:`meta_eval.scoring.imported`) may carry system scores read from a file (``"file"``).

:func:`add_system_scores` computes, in the driver after the row scores, every such metric's score per system over
the system's rows in the set (the rows with a human score, after duplicates are resolved; a row written by several
systems counts for each), and stores them in :attr:`MetricScores.system`. The statistics then use them wherever
they need system scores (:func:`meta_eval.matrix.judgment_matrices` with ``system_values``): each system's column
holds its system score in every cell the system has, so the column mean is that score. Under the bootstrap and the
permutation tests, which resample documents, these scores are held fixed (the human side is resampled as usual):
a corpus score has no per-document part to resample, and mt-metrics-eval likewise tests system-level correlations
on fixed system scores. SPA (Thompson et al., WMT24) is defined on sums of segment scores, so it always uses the row
scores. The signature of a system-level result ends with ``sys:corpus``, ``sys:file`` or ``sys:mean``.
"""
from __future__ import annotations

import logging
from contextlib import contextmanager
from typing import Sequence

from meta_eval.errors import MetaEvalError

__all__ = ["MODES", "add_system_scores", "corpus_key", "declared_mode", "uses_system_scores"]

#: ``--system-score``: ``auto`` (each metric's own way), ``mean`` (the mean of row scores for every metric),
#: ``corpus`` (every chosen metric must define a corpus score).
MODES = ("auto", "mean", "corpus")


def declared_mode(metric) -> str:
    """``"corpus"`` when ``metric`` declares and defines a corpus score, else ``"mean"``."""
    return "corpus" if getattr(metric, "system_score", "mean") == "corpus" and hasattr(metric, "corpus_score") \
        else "mean"


def uses_system_scores(level: str, statistic: str) -> bool:
    """Whether a statistic at ``level`` reads system scores (every system-level statistic but SPA)."""
    return level == "system" and statistic != "spa"


@contextmanager
def _quiet_libraries(metric):
    """The loggers of the metric's libraries at ERROR while it computes corpus scores: sacrebleu warns, once per
    corpus, that 100 lines end in a tokenized period (summarization sets are tokenized), which is noise here."""
    loggers = [logging.getLogger(name) for name in getattr(metric, "libraries", ())]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.ERROR)
    try:
        yield
    finally:
        for lg, level in zip(loggers, levels):
            lg.setLevel(level)


def _groups(jset) -> dict[str, list[int]]:
    """Row indices per system, in row order (a multi-system row under each of its systems)."""
    groups: dict[str, list[int]] = {}
    for i, _, system in jset.cells():
        groups.setdefault(system, []).append(i)
    return groups


def corpus_key(examples) -> str:
    """The score cache's key of one corpus score: SHA-256 over the example keys of its rows, in order
    (:func:`meta_eval.scoring.cache.example_key`), so another system's rows, or one row more, is another key."""
    import hashlib

    from meta_eval.scoring.cache import example_key

    digest = hashlib.sha256()
    for ex in examples:
        digest.update(example_key(ex).encode("ascii") + b"\n")
    return "corpus:" + digest.hexdigest()


def add_system_scores(scored: Sequence, chosen: Sequence, jset, mode: str = "auto", cache=None,
                      no_cache: bool = False) -> None:
    """Set ``system`` and ``system_mode`` of every entry of ``scored`` (the :class:`MetricScores` of ``chosen``).

    A corpus score is looked up in the score cache first (``cache``, ``no_cache``: as every command's options,
    :func:`~meta_eval.scoring.cache.open_cache`, opened only when some metric has a corpus score) and stored there
    when computed: under the metric's signature plus ``|system-score:corpus``, keyed by
    :func:`corpus_key` of the system's rows (sacrebleu's corpus TER over wmt23's 13 systems took minutes, on every
    run, before it was cached).

    Parameters
    ----------
    scored : sequence of MetricScores
        Changed in place; an entry whose ``system_mode`` is already ``"file"`` keeps its file's scores unless
        ``mode`` is ``"mean"``.
    chosen : sequence of Metric
        The metric objects, matched by name.
    jset : judgments.JudgmentSet
        The rows the scores belong to (its systems group them).
    mode : {"auto", "mean", "corpus"}

    Raises
    ------
    MetaEvalError
        For an unknown mode, or ``mode="corpus"`` with a metric that defines no corpus score (naming them).
    """
    if mode not in MODES:
        raise MetaEvalError(f"--system-score must be one of {', '.join(MODES)}, not {mode!r}")
    metrics = {m.name: m for m in chosen}
    if mode == "corpus":
        lacking = [ms.metric for ms in scored
                   if ms.system_mode != "file" and declared_mode(metrics.get(ms.metric)) != "corpus"]
        if lacking:
            raise MetaEvalError(f"--system-score corpus: {', '.join(lacking)} define no corpus score (BLEU, chrF and "
                                "TER do); use --system-score auto to take each metric's own system score")
    from meta_eval.metrics.base import MetricError

    if mode == "mean":
        for ms in scored:
            ms.system, ms.system_mode = None, "mean"
        return
    corpus = [(ms, metrics.get(ms.metric)) for ms in scored
              if ms.system_mode != "file" and declared_mode(metrics.get(ms.metric)) == "corpus"]
    if not corpus:
        return
    from meta_eval.scoring.cache import open_cache

    groups, examples = _groups(jset), jset.examples()
    keys = {system: corpus_key([examples[i] for i in rows]) for system, rows in groups.items()}
    store = open_cache(cache, no_cache)
    try:
        for ms, metric in corpus:
            signature = f"{metric.signature()}|system-score:corpus"
            known = store.get_many(signature, keys.values()) if store is not None else {}
            try:
                with _quiet_libraries(metric):
                    per_system = {system: known.get(keys[system]) or metric.corpus_score([examples[i] for i in rows])
                                  for system, rows in groups.items()}
            except MetricError as exc:
                raise MetaEvalError(f"{ms.metric}: corpus score: {exc}") from None
            if store is not None:
                store.put_many(signature, {keys[system]: values for system, values in per_system.items()
                                           if keys[system] not in known})
            ms.system = {v: {system: float(values[v]) for system, values in per_system.items()} for v in ms.scores}
            ms.system_mode = "corpus"
    finally:
        if store is not None:
            store.close()
