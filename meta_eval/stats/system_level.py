"""System-level correlations re-examined (Deutsch, Dror & Roth, NAACL 2022).

Two changes to the usual system-level correlation (:func:`meta_eval.stats.levels.system_level`: per-system means over
the
judged summaries, then one correlation over the systems):

1. **System scores over the full test set** (the paper's first change): in practice a system's metric score is its
   mean over the whole test set, not over the few documents people judged. :func:`unpaired_system_level` takes the
   metric matrix over *all* documents and the human matrix over the *judged* documents: each system's metric score
   is the mean over every document it has a metric score for (judged or not), its human score the mean over its
   judged documents. The two matrices need not have the same documents, only the same systems (columns); this is the
   "unpaired" input of the authors' code (``nlpstats.correlations.system_level``: ``np.nanmean`` of each
   matrix per system, any numbers of inputs). With every document judged it equals the paired system-level
   correlation.

2. **Delta correlations** (the second change): metrics are used to compare systems whose scores are close, so the
   correlation is computed only on the system pairs whose *metric* score difference is small.
   :func:`delta_correlation` follows the authors' code (GitHub ``CogComp/re-examining-correlations``,
   ``syslevel/delta_correlations/plot_heatmaps.py``): for every pair of systems i < j, delta = x_i - x_j on the
   metric's system scores and the human difference z_i - z_j; the pairs kept are those with
   ``lower <= |delta| <= upper`` (both ends closed, as in the code's ``min_delta <= abs(delta) <= max_delta``;
   ``include_upper=False`` gives the half-open band [lower, upper)); over them Kendall's tau is

       tau = (P - Q) / sqrt((P + Q + T) * (P + Q + U)),

   P/Q the concordant/discordant pairs, T the pairs tied on the metric only, U tied on the human scores only (a
   pair tied on both counts nowhere). Over all pairs this is exactly tau-b (``scipy.stats.kendalltau``,
   variant "b"): n0 - n1 = P + Q + U and n0 - n2 = P + Q + T. The deltas are in the metric's own units (the paper
   writes ROUGE in points, 0-100; meta-eval's ROUGE is 0-1). The authors' code returns 0 when P + Q + T = 0 and
   leaves cells with fewer than 5 pairs blank in its heatmaps; here an undefined tau is None with a note, and
   ``min_pairs`` (default 1) sets the fewest pairs for which a tau is reported. :func:`pair_fraction_cutoffs`
   gives the paper's upper bounds u that keep 10%, 20%, ... of the pairs (``get_percentile_deltas``).

System scores are vectors (one per system, the same order in ``x`` and ``z``); :func:`system_scores` gives them from
a (n_docs x n_systems) matrix with NaN for missing cells (:mod:`meta_eval.matrix`).

References
----------
D. Deutsch, R. Dror and D. Roth (2022). Re-Examining System-Level Correlations of Automatic Summarization Evaluation
Metrics. NAACL 2022 (arXiv:2204.10216). Reference code: github.com/CogComp/re-examining-correlations
and nlpstats (github.com/danieldeutsch/nlpstats).
M. G. Kendall (1945). The treatment of ties in ranking problems. Biometrika 33(3):239-251.

Examples
--------
>>> X_all = np.array([[1., 2, 3], [2, 3, 4], [3, 1, 2]])  # 3 documents x 3 systems, all scored by the metric
>>> Z_judged = np.array([[1., 2, 3]])                      # only the first document judged
>>> unpaired_system_level(X_all, Z_judged, "spearman").r    # metric means 2, 2, 3 vs human 1, 2, 3
0.8660254037844387
>>> d = delta_correlation([1., 2, 4, 8], [1., 3, 2, 4], lower=0, upper=2)  # pairs with |delta| 1 and 2
>>> d.tau, d.n_pairs
(0.0, 2)
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from meta_eval.stats.correlation import correlate
from meta_eval.stats.levels import LevelCorrelation

__all__ = ["system_scores", "unpaired_system_level", "unpaired_system_level_rows", "DeltaCorrelation",
           "delta_correlation", "pair_fraction_cutoffs"]


def _matrix(name: str, value) -> np.ndarray:
    try:
        M = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a numeric matrix: {exc}") from None
    if M.ndim != 2:
        raise ValueError(f"{name} must be a (n_docs, n_systems) matrix, got shape {M.shape}")
    if np.isinf(M).any():
        raise ValueError(f"{name} has infinite values; use NaN for missing scores")
    return M


def system_scores(M, name: str = "M") -> np.ndarray:
    """Each system's (column's) mean over the documents (rows) it has a score for (NaN cells left out).

    Raises
    ------
    ValueError
        If ``M`` is not a 2-D matrix, has infinite values, or a system has no score at all (the column is named).

    Examples
    --------
    >>> system_scores([[1., np.nan], [3., 4.]])
    array([2., 4.])
    """
    M = _matrix(name, M)
    valid = ~np.isnan(M)
    empty = np.flatnonzero(valid.sum(axis=0) == 0)
    if len(empty):
        raise ValueError(f"{name}: system column(s) {empty.tolist()} have no score on any document")
    return np.where(valid, M, 0.0).sum(axis=0) / valid.sum(axis=0)


def unpaired_system_level(X_all, Z_judged, kind: str = "spearman") -> LevelCorrelation:
    """System-level correlation with the metric's system scores over the full test set (Deutsch et al. 2022).

    Parameters
    ----------
    X_all : array_like
        (n_docs_all, n_systems) metric scores on every test document (NaN where a system has no score).
    Z_judged : array_like
        (n_docs_judged, n_systems) human scores on the judged documents (NaN where missing); the same systems
        (columns, in the same order) as ``X_all``. Its documents need not be rows of ``X_all`` in any order.
    kind : {"spearman", "pearson", "kendall"}
        Kendall is tau-b (:func:`meta_eval.stats.correlation.kendall`).

    Returns
    -------
    LevelCorrelation
        ``level="system"``, ``n`` the number of systems; ``r=None`` with a note when a side is constant.

    Raises
    ------
    ValueError
        If a matrix is not 2-D or has infinite values, the column counts differ, a system has no score in either
        matrix, fewer than 3 systems, or the kind is unknown.

    Examples
    --------
    >>> X_all = [[1., 2, 3], [1, 2, 3], [9, 2, 3]]  # a document nobody judged makes system 0 the best
    >>> round(unpaired_system_level(X_all, [[1., 2, 3]], "kendall").r, 6)  # (1 - 2) / 3
    -0.333333
    """
    X, Z = _matrix("X_all", X_all), _matrix("Z_judged", Z_judged)
    if X.shape[1] != Z.shape[1]:
        raise ValueError(f"X_all has {X.shape[1]} systems (columns) but Z_judged has {Z.shape[1]}")
    c = correlate(system_scores(X, "X_all"), system_scores(Z, "Z_judged"), kind)
    return LevelCorrelation("system", kind, c.r, c.n, note=c.note)


def unpaired_system_level_rows(metric, human, systems: Sequence[str], kind: str = "spearman") -> LevelCorrelation:
    """:func:`unpaired_system_level` on rows: ``metric`` NaN where a row has no metric score, ``human`` NaN where
    the row was not judged; a system's metric score averages all its rows with a metric score, its human score
    its judged rows.

    Raises
    ------
    ValueError
        For sequences of different lengths, infinite values, a system without any metric or any human score,
        fewer than 3 systems, or an unknown kind.

    Examples
    --------
    >>> m = [1., 2, 3, 9, 2, 3]; h = [1., 2, 3, np.nan, np.nan, np.nan]; s = ["a", "b", "c"] * 2
    >>> round(unpaired_system_level_rows(m, h, s, "pearson").r, 6)  # means 5, 2, 3 vs 1, 2, 3: -2 / sqrt(28/3)
    -0.654654
    """
    m, h = np.asarray(metric, dtype=float), np.asarray(human, dtype=float)
    if m.ndim != 1 or h.shape != m.shape:
        raise ValueError(f"metric and human must be 1-D of one length, got shapes {m.shape} and {h.shape}")
    if isinstance(systems, (str, bytes)) or len(systems) != len(m):
        raise ValueError(f"systems must be a sequence of {len(m)} labels, one per row")
    if np.isinf(m).any() or np.isinf(h).any():
        raise ValueError("metric and human must not contain infinite values (NaN marks a missing score)")
    keys, col = np.unique(np.asarray([str(s) for s in systems]), return_inverse=True)
    X = np.full((len(m), len(keys)), np.nan)
    Z = np.full((len(m), len(keys)), np.nan)
    X[np.arange(len(m)), col] = m
    Z[np.arange(len(m)), col] = h
    for name, M in (("metric", X), ("human", Z)):
        empty = np.flatnonzero(np.isnan(M).all(axis=0))
        if len(empty):
            raise ValueError(f"system {str(keys[empty[0]])!r} has no {name} score ({len(empty)} system(s) in "
                             "all)")
    return unpaired_system_level(X, Z, kind)


@dataclass(frozen=True)
class DeltaCorrelation:
    """Kendall's tau over the system pairs whose metric difference |delta| lies in the band (Deutsch et al. 2022).

    ``tau`` is None, with ``note`` saying why, when no pair (or fewer than ``min_pairs``) falls in the band or the
    pairs in it give no defined tau (all tied on one side); never NaN.
    """

    tau: float | None
    n_pairs: int
    lower: float
    upper: float
    include_upper: bool
    concordant: int
    discordant: int
    tied_metric: int
    tied_human: int
    tied_both: int
    note: str | None = None

    def as_dict(self) -> dict:
        return {"tau": self.tau, "n_pairs": self.n_pairs, "lower": self.lower,
                "upper": None if math.isinf(self.upper) else self.upper, "include_upper": self.include_upper,
                "concordant": self.concordant, "discordant": self.discordant, "tied_metric": self.tied_metric,
                "tied_human": self.tied_human, "tied_both": self.tied_both, "note": self.note}


def _system_vectors(x, z) -> tuple[np.ndarray, np.ndarray]:
    try:
        xa, za = np.asarray(x, dtype=float), np.asarray(z, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"x and z must be numeric vectors of system scores: {exc}") from None
    if xa.ndim != 1 or za.shape != xa.shape:
        raise ValueError(f"x and z must be 1-D system scores of one length, got shapes {xa.shape} and {za.shape}")
    if len(xa) < 2:
        raise ValueError(f"need at least 2 systems, got {len(xa)}")
    for name, a in (("x", xa), ("z", za)):
        if not np.isfinite(a).all():
            raise ValueError(f"{name} must be finite system scores; index {int(np.flatnonzero(~np.isfinite(a))[0])} "
                             "is not (use system_scores on a matrix with NaN for missing cells)")
    return xa, za


def _number(name: str, value, allow_inf: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a number, got {value!r}")
    v = float(value)
    if math.isnan(v) or (math.isinf(v) and not allow_inf):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    return v


def delta_correlation(x, z, lower: float = 0.0, upper: float = math.inf, *, include_upper: bool = True,
                      min_pairs: int = 1) -> DeltaCorrelation:
    """Kendall's tau over the system pairs with ``lower <= |x_i - x_j| <= upper`` (Deutsch et al. 2022).

    Parameters
    ----------
    x : array_like
        Metric system scores, one per system (e.g. :func:`system_scores` of the full-test-set matrix).
    z : array_like
        Human system scores, same systems in the same order.
    lower, upper : float
        The band of absolute metric differences, 0 <= lower <= upper (``upper`` may be ``math.inf``).
    include_upper : bool
        True (default, the authors' code): |delta| <= upper; False: |delta| < upper.
    min_pairs : int
        Fewest pairs in the band for a tau to be reported (the authors' heatmaps blank cells with fewer than 5).

    Returns
    -------
    DeltaCorrelation

    Raises
    ------
    ValueError
        For non-1-D, unequal-length or non-finite scores, fewer than 2 systems, a negative or NaN bound, lower >
        upper, or min_pairs < 1.

    Examples
    --------
    >>> d = delta_correlation([1., 2, 4, 8], [1., 3, 2, 4], lower=2.5, upper=2.9)
    >>> d.tau, d.n_pairs, d.note
    (None, 0, 'no system pair has a metric difference |delta| in [2.5, 2.9]')
    """
    xa, za = _system_vectors(x, z)
    lo, hi = _number("lower", lower), _number("upper", upper, allow_inf=True)
    if lo < 0 or hi < lo:
        raise ValueError(f"need 0 <= lower <= upper, got lower={lower!r}, upper={upper!r}")
    if isinstance(min_pairs, bool) or not isinstance(min_pairs, numbers.Integral) or min_pairs < 1:
        raise ValueError(f"min_pairs must be a positive integer, got {min_pairs!r}")
    i, j = np.triu_indices(len(xa), 1)
    dx, dz = xa[i] - xa[j], za[i] - za[j]
    size = np.abs(dx)
    keep = (size >= lo) & ((size <= hi) if include_upper else (size < hi))
    sx, sz = np.sign(dx[keep]), np.sign(dz[keep])
    P, Q = int(((sx * sz) > 0).sum()), int(((sx * sz) < 0).sum())
    T, U = int(((sx == 0) & (sz != 0)).sum()), int(((sx != 0) & (sz == 0)).sum())
    both = int(((sx == 0) & (sz == 0)).sum())
    n = int(keep.sum())
    band = f"[{lo:g}, {hi:g}{']' if include_upper else ')'}"
    counts = dict(n_pairs=n, lower=lo, upper=hi, include_upper=bool(include_upper), concordant=P, discordant=Q,
                  tied_metric=T, tied_human=U, tied_both=both)
    if n == 0:
        return DeltaCorrelation(None, note=f"no system pair has a metric difference |delta| in {band}", **counts)
    if n < min_pairs:
        return DeltaCorrelation(None, note=f"only {n} system pair(s) in {band}, fewer than min_pairs={min_pairs}",
                                **counts)
    if P + Q + T == 0 or P + Q + U == 0:
        return DeltaCorrelation(None, note=f"tau undefined in {band}: every pair is tied on the metric or on the "
                                           "human scores", **counts)
    return DeltaCorrelation((P - Q) / math.sqrt((P + Q + T) * (P + Q + U)), **counts)


def pair_fraction_cutoffs(x, step: float = 0.1) -> list[float]:
    """Upper bounds u such that the band [0, u] holds about ``step``, 2 * ``step``, ... of all system pairs.

    As the authors' ``get_percentile_deltas``: sort the pairs by |delta| (metric), buckets of ceil(step * pairs)
    pairs, u_k the |delta| of the last pair of the first k buckets (the last bound covers every pair).

    Examples
    --------
    >>> pair_fraction_cutoffs([1., 2, 4, 8], step=0.5)  # |deltas| 1, 2, 3, 4, 6, 7: buckets of 3 pairs
    [3.0, 7.0]
    """
    xa, _ = _system_vectors(x, x)
    s = _number("step", step)
    if not 0 < s <= 1:
        raise ValueError(f"step must be in (0, 1], got {step!r}")
    i, j = np.triu_indices(len(xa), 1)
    deltas = np.sort(np.abs(xa[i] - xa[j]))
    per_bucket = math.ceil(len(deltas) * s)
    buckets = math.ceil(len(deltas) / per_bucket)
    return [float(deltas[min((k + 1) * per_bucket - 1, len(deltas) - 1)]) for k in range(buckets)]
