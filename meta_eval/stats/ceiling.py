"""The human ceiling: how well one annotator agrees with the other annotators, at the metrics' level and statistic.

A metric's correlation with the human score means little without the agreement among the humans themselves. The
ceiling here is the leave-one-annotator-out estimate: each annotator is treated as if it were one more metric and
correlated with the mean of the *other* annotators of the same row, with the same statistic (coefficient and
level) as the metrics, and the ceiling is the mean over annotators. This is the convention behind the "human" rows
of metric evaluations, where one human rating is scored against the others as if it were a metric (the WMT metrics
tasks; Freitag et al., TACL 2021, likewise correlate other human ratings with their MQM ratings as if they were
metrics).

It is a *conservative* (low) estimate of how well a metric can do: a metric is compared with the mean of *all* k
annotators, which is less noisy than the mean of k - 1, and a single annotator is noisier than anything averaged. With
2 annotators it is simply the correlation of annotator 1 with annotator 2.

Who is "annotator k"
--------------------
The loaders keep, per row, the tuple of annotator values :attr:`judgments.Judgment.judges` (``judges[dimension]``)
in file order, not the annotators' identities. Annotator *k* here is **slot k**: the k-th value of every row. For
the essays (ASAP set 3) slot 0 is rater 1 and slot 1 is rater 2 on every row, so slots are real raters. For crowd
data (chaganty: 60 Mechanical Turk workers, 2 or 5 per summary; the raw file has ``worker_ids`` but the loader
does not keep them) slot k is a different worker on different rows: a "pseudo-annotator". Slots are used anyway,
because per-worker matrices are not well defined for such data: a worker judged between 1 and 640 of the 2,085
summaries, so most workers have too few cells for a summary-level (3+ systems of one document) or system-level (a
mean per system) correlation, and the mean over workers would weigh a worker of 5 rows like one of 600. Slot k
covers every row that has a k-th value, so each slot's matrices have (nearly) the cells the metrics have.

``slots="common"`` (default) uses the slots every usable row has (k < the smallest number of annotators among
rows with at least 2): every slot then covers the same cells, and for a row with more annotators the "others" are
all of them but slot k. ``slots="all"`` uses every slot up to the largest number; slot k is then NaN on rows with
k or fewer values (chaganty: slots 2-4 exist only on its five-judge rows, 101 in the default subset ``sms``). Rows
with fewer than 2 annotator values (or without a human score) are left out and counted.

The human score the metrics are compared with may not be the annotators' mean (ASAP's ``domain1_score`` is the
resolved score: it differs from the raters' mean on the 343 of 1,086 essays where they disagree); the ceiling always
compares annotators with each other.

Missing cells, duplicates and multi-system rows follow :func:`meta_eval.matrix.judgment_matrices` (the set's
duplicates policy: chaganty averages its repeated pair, slot by slot), so the matrices have the shape of the
metrics' and the same bootstrap draws apply to both.

References
----------
M. Freitag, G. Foster, D. Grangier, V. Ratnakar, Q. Tan and W. Macherey (2021). Experts, Errors, and Context:
A Large-Scale Study of Human Evaluation for Machine Translation. TACL 9:1460-1474.
D. Deutsch, R. Dror and D. Roth (2021). A Statistical Analysis of Summarization Evaluation Metrics using
Resampling Methods. TACL 9:1132-1146 (levels and BOOT-BOTH; :mod:`meta_eval.stats.resampling`).

Examples
--------
>>> from meta_eval.judgments.base import Judgment, JudgmentSet
>>> rows = [Judgment(f"d{d}:{s}", f"d{d}", s, "text", ("ref",), scores={"q": sum(v) / 2}, judges={"q": v})
...         for d, s, v in [(1, "a", (1., 2.)), (1, "b", (2., 1.)), (1, "c", (3., 3.)), (2, "a", (1., 1.)),
...                         (2, "b", (2., 3.)), (2, "c", (3., 2.))]]
>>> jset = JudgmentSet("toy", rows, ("q",), "q")
>>> pairs = annotator_matrices(jset, "q")
>>> len(pairs), pairs.rows_used, pairs.rows_excluded
(2, 6, 0)
>>> c = human_ceiling(pairs, "global", "pearson", n_resamples=None)
>>> c.value  # 2 annotators: annotator 1 vs annotator 2, r = 2 / sqrt(4 * 4)
0.5
"""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from meta_eval.stats.resampling import (KINDS, LEVELS, RESAMPLE_METHODS, _choice, _confidence, _float_array,
                                  _positive_int, _rng, bootstrap_samples, level_correlation)

__all__ = ["SLOT_MODES", "AnnotatorPairs", "Ceiling", "has_annotators", "no_annotator_reason",
           "annotator_matrices", "human_ceiling", "set_ceiling"]

SLOT_MODES = ("common", "all")

Statistic = Callable[[np.ndarray, np.ndarray], float]
Samples = Callable[[np.ndarray, np.ndarray, int], np.ndarray]


def _annotator_counts(jset, dimension: str) -> tuple[np.ndarray, np.ndarray]:
    """(number of annotator values per row, usable mask: >= 2 values and a human score)."""
    human = jset.human(dimension)  # raises JudgmentError naming the dimensions for an unknown one
    counts = np.array([len(r.judges.get(dimension, ()) or ()) for r in jset.rows], dtype=np.int64)
    return counts, (counts >= 2) & ~np.isnan(human)


def no_annotator_reason(jset, dimension: str | None = None) -> str | None:
    """Why ``jset`` has no annotator data for ``dimension`` (default: the set's default), or None if it has some.

    Examples
    --------
    >>> from meta_eval.judgments.base import Judgment, JudgmentSet
    >>> jset = JudgmentSet("agg", [Judgment("1", "d", "a", "t", ("r",), scores={"q": 1.0})], ("q",), "q")
    >>> no_annotator_reason(jset, "q").split(" (")[0]
    "agg has no per-annotator values for dimension 'q'"
    """
    dim = dimension or jset.default_dimension
    counts, usable = _annotator_counts(jset, dim)
    if usable.any():
        return None
    if not counts.any():
        return (f"{jset.name} has no per-annotator values for dimension '{dim}' (every row's judges['{dim}'] is "
                "empty: the data or its loader keeps only the aggregated score), so there is no human ceiling")
    return (f"{jset.name}: no row has both a human score and at least 2 annotator values for dimension '{dim}' "
            f"(most annotators on a row: {int(counts.max())}), so there is no human ceiling")


def has_annotators(jset, dimension: str | None = None) -> bool:
    """True if some row of ``jset`` has a human score and at least 2 annotator values for ``dimension``."""
    return no_annotator_reason(jset, dimension) is None


@dataclass(frozen=True)
class AnnotatorPairs:
    """The (annotator k, mean of the other annotators) matrix pairs of a set, documents x systems.

    Iterating (or ``len``, indexing) gives the ``(A_k, O_k)`` pairs; the other fields describe what was used.
    ``pairs`` is empty, and ``reason`` says why, when the set has no annotator data.
    """

    dimension: str
    pairs: tuple[tuple[np.ndarray, np.ndarray], ...]
    slots: str
    rows_used: int
    rows_excluded: int
    judges_per_row: dict[int, int] = field(default_factory=dict)
    reason: str | None = None
    row_pairs: tuple[tuple[np.ndarray, np.ndarray], ...] = ()
    """The same pairs per row of the set (NaN where a row is not usable or has no k-th value), before they fill the
    matrices: the global level's ceiling reads them (:func:`meta_eval.evaluate.ceiling`), as the metrics' value."""

    def __len__(self) -> int:
        return len(self.pairs)

    def __iter__(self):
        return iter(self.pairs)

    def __getitem__(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        return self.pairs[k]


def _mean(values: np.ndarray) -> float:
    """The mean of finite values, also near 1e308 (where their sum overflows): taken on the values scaled by a power
    of 2 and scaled back, which is exact, so any other mean is the one of ``values.mean()``."""
    e = int(np.frexp(np.abs(values).max())[1]) if len(values) else 0
    return float(np.ldexp(np.ldexp(values, -e).mean(), e))


def annotator_matrices(jset, dimension: str | None = None, slots: str = "common") -> AnnotatorPairs:
    """Per annotator slot k, the matrix of slot k's values and the matrix of the mean of the row's other values.

    Parameters
    ----------
    jset : judgments.JudgmentSet
    dimension : str, optional
        The human dimension (default: the set's default).
    slots : {"common", "all"}
        Which slots (see the module docstring): those every usable row has (default), or all of them.

    Returns
    -------
    AnnotatorPairs
        ``(A_k, O_k)`` for each slot, matrices of the shape :func:`meta_eval.matrix.judgment_matrices` gives the
        metrics, NaN where a row has no k-th value or is not usable (fewer than 2 values, or no human score);
        ``rows_used`` / ``rows_excluded`` count the rows with a human score that have / lack 2 or more values.
        For a set without annotator data the pairs are empty and ``reason`` says why (no exception).

    Raises
    ------
    ValueError
        For an unknown ``slots``; an unknown dimension (:class:`judgments.JudgmentError`); a non-finite annotator
        value (the row is named); rows without a system or repeated pairs under the ``"error"`` policy (as for
        the metrics).
    """
    from meta_eval.matrix import align_missing, judgment_matrices

    slots = _choice("slots", slots, SLOT_MODES)
    dim = dimension or jset.default_dimension
    counts, usable = _annotator_counts(jset, dim)
    scored = ~np.isnan(jset.human(dim))
    per_row = dict(sorted(Counter(int(c) for c in counts[scored]).items()))
    excluded = int((scored & ~usable).sum())
    if not usable.any():
        return AnnotatorPairs(dim, (), slots, 0, excluded, per_row, no_annotator_reason(jset, dim))
    values = {}
    for i in np.flatnonzero(usable):
        v = np.asarray(jset.rows[i].judges[dim], dtype=float)
        if not np.isfinite(v).all():
            raise ValueError(f"{jset.describe_rows([i])}: annotator values for '{dim}' must be finite numbers, got "
                             f"{tuple(jset.rows[i].judges[dim])}")
        values[i] = v
    n_slots = int(counts[usable].min() if slots == "common" else counts[usable].max())
    arrays = []
    for k in range(n_slots):
        a = np.full(len(jset.rows), np.nan)
        o = np.full(len(jset.rows), np.nan)
        for i, v in values.items():
            if len(v) > k:
                a[i] = v[k]
                o[i] = _mean(np.delete(v, k))
        arrays += [a, o]
    _, mats = judgment_matrices(jset, dim, arrays)
    pairs = tuple(tuple(align_missing(mats[2 * k], mats[2 * k + 1])) for k in range(n_slots))
    row_pairs = tuple((arrays[2 * k], arrays[2 * k + 1]) for k in range(n_slots))
    return AnnotatorPairs(dim, pairs, slots, int(usable.sum()), excluded, per_row, row_pairs=row_pairs)


@dataclass(frozen=True)
class Ceiling:
    """A human ceiling: ``value`` (mean over annotator slots) and its bootstrap percentile interval.

    ``value``/``lower``/``upper`` are None, with ``note`` saying why, when undefined (no annotator data, no slot
    with a defined statistic, no interval asked for or no usable resample); never NaN.
    """

    value: float | None
    lower: float | None
    upper: float | None
    confidence: float
    statistic: str
    level: str | None
    slots: int
    slot_values: tuple[float | None, ...]
    rows_used: int
    rows_excluded: int
    resample: str | None
    n_resamples: int
    resamples_used: int
    note: str | None = None

    def as_dict(self) -> dict:
        return {"value": self.value, "ci_low": self.lower, "ci_high": self.upper, "confidence": self.confidence,
                "statistic": self.statistic, "level": self.level, "slots": self.slots,
                "slot_values": list(self.slot_values), "rows_used": self.rows_used,
                "rows_excluded": self.rows_excluded, "resample": self.resample, "n_resamples": self.n_resamples,
                "resamples_used": self.resamples_used, "note": self.note}


def _seed_int(seed) -> int:
    """One int seed for every slot (so that all slots get the same draws); a Generator gives one draw."""
    if isinstance(seed, np.random.Generator):
        return int(seed.integers(0, 2**63 - 1))
    _rng(seed)  # validates
    return int(seed)


def _float_or_none(v) -> float | None:
    v = float(v)
    return None if math.isnan(v) else v


def human_ceiling(pairs: AnnotatorPairs | Sequence[tuple[np.ndarray, np.ndarray]], level: str | None = "system",
                  kind: str | None = "spearman", *, statistic: Statistic | None = None,
                  samples: Samples | None = None, resample: str = "both", n_resamples: int | None = 1000,
                  confidence: float = 0.95, seed: int | np.random.Generator = 0) -> Ceiling:
    """Mean over annotator slots of statistic(A_k, O_k), with a percentile bootstrap interval.

    Parameters
    ----------
    pairs : AnnotatorPairs or sequence of (A_k, O_k)
        From :func:`annotator_matrices`, or any (n_docs, n_systems) matrix pairs with one NaN pattern per pair.
    level, kind : str
        The default statistic: :func:`meta_eval.stats.resampling.level_correlation` at ``level`` ("summary", "system",
        "global") with coefficient ``kind`` ("pearson", "spearman", "kendall"), the metrics' statistic.
    statistic : callable, optional
        ``statistic(X, Z) -> float`` replacing the default (NaN where undefined); ``level``/``kind`` are then only
        labels (pass None for either).
    samples : callable, optional
        ``samples(X, Z, seed) -> 1-D array`` of bootstrap values of the statistic. Default (only with the default
        statistic): :func:`meta_eval.stats.resampling.bootstrap_samples` with ``resample`` and ``n_resamples``. It is
        called with one int seed for every slot, so every slot is resampled with the same documents/systems; pass
        the seed the metrics' bootstrap uses (an int) and the draws are the metrics' too. A Generator is advanced
        once to draw that int.
    resample : {"both", "systems", "documents"}
    n_resamples : int or None
        None: no interval.
    confidence : float
    seed : int or numpy.random.Generator

    Returns
    -------
    Ceiling
        ``value`` the mean over the slots whose statistic is defined on the full data (a slot without one is left
        out and named in ``note``); the interval the percentiles of the per-resample mean over those slots,
        leaving out resamples where any of them is undefined (``resamples_used`` counts the others).

    Raises
    ------
    ValueError
        On an unknown level, kind or resample; a custom ``statistic`` without ``samples`` while an interval is
        asked for; matrices that are not 2-D or differ in shape or NaN pattern; sample arrays of unequal length.

    Examples
    --------
    >>> A = np.array([[1., 2, 3, 4], [2, 1, 4, 3]]); O = np.array([[1., 3, 2, 4], [2, 1, 3, 4]])
    >>> c = human_ceiling([(A, O), (O, A)], "global", "spearman", n_resamples=200, seed=0)
    >>> round(c.value, 4), bool(c.lower <= c.value <= c.upper)
    (0.8, True)
    """
    confidence = _confidence(confidence)
    resample = _choice("resample", resample, RESAMPLE_METHODS)
    if n_resamples is not None:
        n_resamples = _positive_int("n_resamples", n_resamples)
    if statistic is None:
        level, kind = _choice("level", level, LEVELS), _choice("kind", kind, KINDS)
        lv, kd = level, kind

        def statistic(X, Z):
            return level_correlation(X, Z, lv, kd)

        if samples is None and n_resamples is not None:
            b, rs = n_resamples, resample

            def samples(X, Z, s):
                return bootstrap_samples(X, Z, lv, kd, rs, b, s)
        name = kind
    else:
        if not callable(statistic):
            raise ValueError(f"statistic must be a callable (X, Z) -> float, got {type(statistic).__name__}")
        if samples is None and n_resamples is not None:
            raise ValueError("a custom statistic needs samples=(X, Z, seed) -> array of bootstrap values, or "
                             "n_resamples=None for no interval")
        name = getattr(statistic, "__name__", "custom")
    if samples is not None and not callable(samples):
        raise ValueError(f"samples must be a callable (X, Z, seed) -> array, got {type(samples).__name__}")
    if isinstance(pairs, AnnotatorPairs):
        info = (pairs.rows_used, pairs.rows_excluded, pairs.reason)
        pair_list = list(pairs.pairs)
    else:
        info = (0, 0, None)
        pair_list = list(pairs)
    rows_used, rows_excluded, reason = info
    base = dict(confidence=confidence, statistic=name, level=level, rows_used=rows_used,
                rows_excluded=rows_excluded, resample=resample if n_resamples else None,
                n_resamples=n_resamples or 0)
    if not pair_list:
        return Ceiling(None, None, None, slots=0, slot_values=(), resamples_used=0,
                       note=reason or "no annotator pairs given", **base)
    mats = []
    for k, pair in enumerate(pair_list):
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise ValueError(f"pair {k} must be (A_k, O_k), got {type(pair).__name__}")
        a, o = _float_array(f"A_{k}", pair[0], 2), _float_array(f"O_{k}", pair[1], 2)
        if a.ndim != 2 or a.shape != o.shape:
            raise ValueError(f"A_{k} and O_{k} must be (n_docs, n_systems) matrices of one shape, got {a.shape} "
                             f"and {o.shape}")
        if (np.isnan(a) != np.isnan(o)).any():
            raise ValueError(f"A_{k} and O_{k} must be NaN in the same cells (see meta_eval.matrix.align_missing)")
        mats.append((a, o))
    values = np.array([float(statistic(a, o)) for a, o in mats])
    kept = np.flatnonzero(~np.isnan(values))
    slot_values = tuple(_float_or_none(v) for v in values)
    notes = []
    if len(kept) < len(values):
        notes.append(f"slot(s) {np.flatnonzero(np.isnan(values)).tolist()} have no defined {name} (too few cells "
                     "or constant values) and are left out")
    if not len(kept):
        return Ceiling(None, None, None, slots=0, slot_values=slot_values, resamples_used=0,
                       note="; ".join(notes) or "undefined", **base)
    value = float(values[kept].mean())
    lower = upper = None
    used = 0
    if n_resamples is None:
        notes.append("no interval (n_resamples=None)")
    else:
        s = _seed_int(seed)
        draws = [np.asarray(samples(*mats[k], s), dtype=float) for k in kept]
        if any(d.ndim != 1 for d in draws) or len({len(d) for d in draws}) != 1:
            raise ValueError(f"samples must return 1-D arrays of one length, got shapes {[d.shape for d in draws]}")
        per_resample = np.stack(draws).mean(axis=0)  # NaN wherever a slot is undefined in that resample
        ok = per_resample[~np.isnan(per_resample)]
        used = len(ok)
        if used:
            tail = (1.0 - confidence) / 2.0 * 100.0
            lower, upper = (float(v) for v in np.percentile(ok, [tail, 100.0 - tail]))
        else:
            notes.append("no resample has a defined value for every slot: no interval")
    return Ceiling(value, lower, upper, slots=len(kept), slot_values=slot_values, resamples_used=used,
                   note="; ".join(notes) or None, **base)


def set_ceiling(jset, dimension: str | None = None, level: str = "system", kind: str = "spearman",
                slots: str = "common", **options) -> Ceiling:
    """:func:`human_ceiling` of :func:`annotator_matrices` of ``jset``; a set without annotator data gives a
    :class:`Ceiling` with ``value=None`` and the reason in ``note``.

    ``options`` go to :func:`human_ceiling` (``resample``, ``n_resamples``, ``confidence``, ``seed``).

    Examples
    --------
    >>> from meta_eval.judgments.base import Judgment, JudgmentSet
    >>> jset = JudgmentSet("agg", [Judgment("1", "d", "a", "t", ("r",), scores={"q": 1.0})], ("q",), "q")
    >>> c = set_ceiling(jset, "q")
    >>> c.value is None, c.note.startswith("agg has no per-annotator values")
    (True, True)
    """
    if isinstance(slots, bool) or not isinstance(slots, str):
        raise ValueError(f"slots must be one of {SLOT_MODES}, got {slots!r}")
    return human_ceiling(annotator_matrices(jset, dimension, slots), level, kind, **options)
