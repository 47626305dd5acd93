"""Partial correlation of metric and human scores controlling for the system, as FRANK reports it.

FRANK (Pagnoni, Balachandran & Tsvetkov, NAACL 2021) correlates factuality metrics with human judgments
*controlling for the system*: otherwise a metric that only recognises which system wrote a summary (systems differ
in their average factuality) would score well without judging any summary. The authors' script
(GitHub ``artidoro/frank``, ``evaluation/evaluate.py``, ``human_metric_correlation``, e.g. at commit 65605159)
does, for the rows with both a metric and a human score:

1. one-hot encode the system (``sklearn`` ``OneHotEncoder``, one column per system);
2. regress the metric scores, and separately the human scores, on those columns with an intercept
   (``LinearRegression``) and keep the residuals;
3. report ``scipy.stats.pearsonr`` and ``scipy.stats.spearmanr`` of the two residual vectors, with their p-values.

Least squares on a full set of system indicators fits each system's mean, so step 2 is *within-system centering*:
each score minus the mean of its system's scores. That is what :func:`within_system_residuals` does (no regression
needed, no pingouin or scikit-learn at run time).

What is ranked for Spearman (two conventions, both here):

- ``rank="residuals"`` (default, FRANK's): the residuals of step 2 are ranked (average ranks for ties, over all n
  rows), and the coefficient is Pearson's r of those ranks: Spearman's rho *of the residuals*.
- ``rank="scores"`` (the textbook partial Spearman, and ``pingouin.partial_corr(method="spearman")``): the metric
  scores and the human scores are each ranked over all n rows first (average ranks), the ranks are centred within
  each system, and the coefficient is Pearson's r of the centred ranks. (pingouin ranks the covariate columns too;
  ranking a 0/1 indicator is an affine map of it, so it spans the same space: same result.)

Degrees of freedom of the p-value. A partial correlation controlling for the system removes one parameter per
system besides the one an ordinary correlation removes: with n rows and S systems the t statistic
t = r sqrt(df / (1 - r^2)) has df = n - 2 - (S - 1) = n - S - 1 (the S - 1 indicator covariates; Fisher 1924; what
pingouin uses: n - k - 2 with k covariates). ``df="partial"`` (default) uses it. FRANK's script calls scipy on the
residuals as if they were raw data, i.e. df = n - 2, which overstates the evidence slightly; ``df="frank"``
reproduces its printed p-values. The coefficient is the same either way.

References
----------
A. Pagnoni, V. Balachandran and Y. Tsvetkov (2021). Understanding Factuality in Abstractive Summarization with
FRANK: A Benchmark for Factuality Metrics. NAACL 2021 (arXiv:2104.13346). Reference code: github.com/artidoro/frank.
R. A. Fisher (1924). The distribution of the partial correlation coefficient. Metron 3:329-332.
R. Vallat (2018). Pingouin: statistics in Python. JOSS 3(31):1026 (``partial_corr``; used only in the tests).

Examples
--------
The systems' means differ (b is higher on the metric, lower with the humans); within the systems the metric
orders the summaries as the humans do except for one swap in system a:

>>> metric = [1., 2, 3, 10, 11, 12]; human = [5., 7, 6, 1, 2, 3]; systems = ["a"] * 3 + ["b"] * 3
>>> round(partial_correlation(metric, human, systems, "pearson").r, 6)  # centred: (-1,0,1) vs (-1,1,0), (-1,0,1)
0.75
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np
from scipy import stats

from meta_eval.stats.correlation import CONSTANT_NOTE, Correlation

__all__ = ["KINDS", "RANKS", "DFS", "within_system_residuals", "partial_correlation", "partial_t_pvalue"]

KINDS = ("pearson", "spearman")
RANKS = ("residuals", "scores")
DFS = ("partial", "frank")


def _groups(systems, n: int) -> tuple[np.ndarray, int]:
    from meta_eval.matrix import _labels

    if isinstance(systems, (str, bytes)):
        raise ValueError("systems must be a sequence of labels, one per row, not a single string")
    labels = _labels("systems", systems, n)
    _, inverse = np.unique(labels.astype(str), return_inverse=True)
    return inverse.ravel(), int(inverse.max()) + 1 if n else 0


def within_system_residuals(values, systems: Sequence) -> np.ndarray:
    """Each value minus the mean of its system's values: the least-squares residuals of a regression on system
    indicators (FRANK's step 2).

    Raises
    ------
    ValueError
        For non-1-D or non-finite values, or a label count that differs from the number of values.

    Examples
    --------
    >>> within_system_residuals([1., 3, 10, 14], ["a", "a", "b", "b"])
    array([-1.,  1., -2.,  2.])
    """
    v = np.asarray(values, dtype=float)
    if v.ndim != 1:
        raise ValueError(f"values must be 1-D, got shape {v.shape}")
    if not np.isfinite(v).all():
        bad = int(np.flatnonzero(~np.isfinite(v))[0])
        raise ValueError(f"values must be finite: the first bad value is at index {bad}")
    g, n_groups = _groups(systems, len(v))
    if not len(v):
        return v.copy()
    # each system's sum exactly rounded (math.fsum), not accumulated in row order: the same rows in another order
    # give the same bits, so residuals that are equal in exact arithmetic tie whatever the file's order (with
    # np.bincount's running sums they differed in the last bit by order, and ranking them moved a partial Spearman
    # by 1e-3 on SummEval; audit, session 38)
    order = np.argsort(g, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(g[order]) != 0])
    sums = np.zeros(n_groups)
    for k, segment in zip(g[order][starts], np.split(v[order], starts[1:])):
        sums[k] = math.fsum(segment)
    means = sums / np.maximum(np.bincount(g, minlength=n_groups), 1)
    return v - means[g]


def partial_t_pvalue(r: float, df: int) -> float:
    """Two-sided p-value of a (partial) correlation r with ``df`` degrees of freedom: t = r sqrt(df / (1 - r^2)).

    Examples
    --------
    >>> round(partial_t_pvalue(0.5, 3), 6)  # t = 1; with 3 df, P(|T| > 1) = 2/3 - sqrt(3) / (2 pi)
    0.391002
    """
    if not (isinstance(df, (int, np.integer)) and not isinstance(df, bool) and df >= 1):
        raise ValueError(f"df must be a positive integer, got {df!r}")
    r = float(r)
    if not -1.0 <= r <= 1.0:
        raise ValueError(f"r must be in [-1, 1], got {r!r}")
    if abs(r) == 1.0:
        return 0.0
    t = abs(r) * np.sqrt(df / (1.0 - r * r))
    return float(min(1.0, 2.0 * stats.t.sf(t, df)))


def partial_correlation(metric, human, systems: Sequence, kind: str = "pearson", *, rank: str = "residuals",
                        df: str = "partial", drop_missing: bool = False) -> Correlation:
    """Correlation of metric and human scores controlling for the system (FRANK, Pagnoni et al. 2021).

    Parameters
    ----------
    metric, human : array_like
        1-D scores, one per row.
    systems : sequence
        The system of each row (labels compared as strings).
    kind : {"pearson", "spearman"}
        FRANK reports both; a partial Kendall's tau is not offered.
    rank : {"residuals", "scores"}
        Spearman only: rank the within-system residuals (FRANK's script) or rank the scores and centre the ranks
        within systems (pingouin, textbook partial Spearman); see the module docstring.
    df : {"partial", "frank"}
        Degrees of freedom of the t test: n - S - 1 (correct for S systems) or n - 2 (FRANK's scipy call).
    drop_missing : bool
        Drop rows where the metric or the human score is NaN (FRANK's script does) instead of raising.

    Returns
    -------
    Correlation
        ``r``, the two-sided ``p``, ``n`` the rows used; ``r=None`` with a note when the residuals of either side
        are constant (e.g. the metric is constant within every system).

    Raises
    ------
    ValueError
        For an unknown kind, rank or df; inputs of different lengths or not 1-D; infinite values, or NaN without
        ``drop_missing``; fewer than 3 rows; ``df="partial"`` with n - S - 1 < 1 (too few rows for the systems).

    Examples
    --------
    >>> m = [1., 2, 3, 10, 11, 12]; h = [10., 11, 12, 1, 2, 3]; s = ["a"] * 3 + ["b"] * 3
    >>> c = partial_correlation(m, h, s)  # raw r < 0: system b scores higher on the metric, lower with humans
    >>> c.r, c.p, c.n
    (1.0, 0.0, 6)
    """
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r} for a partial correlation; use one of {KINDS}")
    if rank not in RANKS:
        raise ValueError(f"unknown rank {rank!r}; use one of {RANKS}")
    if df not in DFS:
        raise ValueError(f"unknown df {df!r}; use one of {DFS}")
    try:
        m, h = np.asarray(metric, dtype=float), np.asarray(human, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"metric and human must be numeric sequences: {exc}") from None
    if m.ndim != 1 or h.shape != m.shape:
        raise ValueError(f"metric and human must be 1-D of one length, got shapes {m.shape} and {h.shape}")
    g, _ = _groups(systems, len(m))
    if np.isinf(m).any() or np.isinf(h).any():
        raise ValueError("metric and human must not contain infinite values")
    missing = np.isnan(m) | np.isnan(h)
    if missing.any():
        if not drop_missing:
            raise ValueError(f"{int(missing.sum())} rows have a missing (NaN) metric or human score, the first at "
                             f"index {int(np.flatnonzero(missing)[0])}; pass drop_missing=True to leave them out")
        m, h, g = m[~missing], h[~missing], g[~missing]
    n = len(m)
    if n < 3:
        raise ValueError(f"need at least 3 rows with both scores, got {n}")
    # each side scaled by a power of 2 (exact, so r is unchanged): scores near 1e308 would overflow the system
    # means and the sums of squares (r = 0 or NaN, silently)
    m, h = (np.ldexp(a, -int(np.frexp(np.abs(a).max())[1])) for a in (m, h))
    labels = g.astype(str)
    n_systems = len(np.unique(g))
    dof = n - n_systems - 1 if df == "partial" else n - 2
    if dof < 1:
        raise ValueError(f"{n} rows and {n_systems} systems leave n - S - 1 = {dof} degrees of freedom; a partial "
                         "correlation controlling for the system needs at least S + 2 rows")
    if kind == "spearman" and rank == "scores":
        m, h = stats.rankdata(m), stats.rankdata(h)
    x, y = within_system_residuals(m, labels), within_system_residuals(h, labels)
    for side, res, raw in (("metric", x, m), ("human", y, h)):
        # values constant within every system leave residuals of rounding size only (|v - mean| ~ 1e-16 |v|)
        if np.abs(res).max() <= 1e-12 * max(float(np.abs(raw).max()), 1.0):
            return Correlation(None, None, n, f"{CONSTANT_NOTE}: the {side} scores are constant within every "
                                              "system, so nothing is left after removing the system means")
    if kind == "spearman" and rank == "residuals":
        x, y = stats.rankdata(x), stats.rankdata(y)
    x, y = x - x.mean(), y - y.mean()
    r = float(np.clip((x @ y) / np.sqrt(float(x @ x) * float(y @ y)), -1.0, 1.0))
    return Correlation(r, partial_t_pvalue(r, dof), n)
