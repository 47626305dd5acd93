"""Significance clusters: rank metrics by correlation, tied where the differences are not significant.

The rule of mt-metrics-eval (Google's WMT metrics-task toolkit, ``data.AssignRanks``, used for the WMT21-24
metrics-task rankings): sort the metrics by correlation, descending, and walk down the list; a metric opens a new
cluster (rank + 1) when some metric of the current cluster is significantly better than it, else it joins the
current cluster. A metric of rank r is thus not significantly worse than any metric of its own cluster, and is
significantly worse than at least one metric of every better cluster (the one whose win opened the next cluster).

mt-metrics-eval compares the raw p-values with the threshold. Here the family of the n(n-1)/2 tested hypotheses
(each better-correlated metric against each worse-correlated one) can first be corrected for multiple comparisons:
Holm-Bonferroni (family-wise error rate, :func:`holm`) or Benjamini-Hochberg (false discovery rate,
:func:`scipy.stats.false_discovery_control`).

A permutation p-value of 0 (no resample as extreme; the tests report count / n without a +1, as the paper's code
and mt-metrics-eval) means p < 1/n, not p = 0, and a correction that multiplies it keeps 0: Holm would claim
"< 0.001 after Holm" over 13 comparisons, which 1,000 resamples cannot show. :func:`adjust_pvalues` with
``n_resamples`` therefore enters each 0 as its bound 1/n (at least Phipson & Smyth's (0 + 1) / (n + 1), the exact
p-value of a permutation test that found no resample as extreme), so the adjusted value is a valid upper bound
(Holm: 13/1000 over 13 comparisons). Every rule does so: the comparisons with a baseline (``run``'s stars and
reading line) and the clusters (:func:`significance_clusters` with ``n_resamples``; the heatmap's stars, the
leaderboards). A family too large for its resamples can then separate nothing (Holm over 171 pairs with 1,000
resamples: a 0 becomes at least 0.171); :func:`resolution_note` says so, and how many resamples would do.

References
----------
M. Freitag et al. (2021). Results of the WMT21 Metrics Shared Task. WMT (significance clusters from PERM-BOTH).
google-research/mt-metrics-eval, ``mt_metrics_eval/data.py``: ``CompareMetrics``, ``AssignRanks``.
S. Holm (1979). A simple sequentially rejective multiple test procedure. Scandinavian Journal of Statistics
6(2):65-70.
Y. Benjamini and Y. Hochberg (1995). Controlling the false discovery rate. JRSS B 57(1):289-300.
B. Phipson and G. K. Smyth (2010). Permutation p-values should never be zero: calculating exact p-values when
permutations are randomly drawn. Statistical Applications in Genetics and Molecular Biology 9(1), article 39.

Examples
--------
>>> import numpy as np
>>> P = np.array([[np.nan, 0.30, 0.01], [0.70, np.nan, 0.04], [0.99, 0.96, np.nan]])
>>> ranks, adjusted = significance_clusters(["A", "B", "C"], [0.5, 0.4, 0.2], P, correction="none")
>>> ranks
[('A', 1), ('B', 1), ('C', 2)]
"""
from __future__ import annotations

import math

import numpy as np
from scipy import stats

__all__ = ["CORRECTIONS", "CORRECTION_NAMES", "best_first", "holm", "adjust_pvalues", "zero_bound", "family_label",
           "resolution_note", "significance_clusters"]

CORRECTIONS = ("holm", "bh", "none")
CORRECTION_NAMES = {"holm": "Holm", "bh": "Benjamini-Hochberg", "none": "no correction"}


def best_first(value, name) -> tuple:
    """The sort key of every ranking (tables, JSON, clusters, boards): the best value first, exact ties in the order
    of their names, no value (None or NaN) last. So the order of ``-m`` changes neither the table's order nor which
    direction of a tied pair enters the adjusted family (audit, session 38: both followed it).

    >>> sorted([("b", 0.4), ("c", None), ("a", 0.4), ("d", 0.9)], key=lambda t: best_first(t[1], t[0]))
    [('d', 0.9), ('a', 0.4), ('b', 0.4), ('c', None)]
    """
    missing = value is None or not np.isfinite(float(value))
    return (missing, 0.0 if missing else -float(value), str(name))


def family_label(correction: str, m: int, family: str, every: bool = False) -> str:
    """The multiple-comparison rule and its family in words, as every star, cluster and "significantly" names it.

    Examples
    --------
    >>> family_label("holm", 11, "comparisons with the baseline")
    'Holm over the 11 comparisons with the baseline'
    >>> family_label("holm", 66, "pairs", every=True), family_label("none", 3, "pairs", every=True)
    ('Holm over all 66 pairs', 'unadjusted (no correction over all 3 pairs)')
    >>> family_label("holm", 1, "comparisons with the baseline")
    'Holm over the 1 comparison with the baseline'
    """
    if correction not in CORRECTIONS:
        raise ValueError(f"unknown correction {correction!r}; use one of {CORRECTIONS}")
    if m == 1:  # the family's noun (its first word) in the singular
        noun, _, rest = family.partition(" ")
        family = noun.removesuffix("s") + (f" {rest}" if rest else "")
    over = f"{'all' if every else 'the'} {m} {family}"
    return f"unadjusted (no correction over {over})" if correction == "none" else \
        f"{CORRECTION_NAMES[correction]} over {over}"


def _pvalues(p) -> np.ndarray:
    try:
        arr = np.array(p, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"p-values must be numbers, got {p!r}") from None
    finite = arr[~np.isnan(arr)]
    if ((finite < 0) | (finite > 1)).any():
        raise ValueError(f"p-values must be in [0, 1] (or NaN), got {finite[(finite < 0) | (finite > 1)][:3]}")
    return arr


def holm(pvalues) -> np.ndarray:
    """Holm-Bonferroni adjusted p-values (step-down; Holm, 1979), any shape, NaN entries ignored and kept NaN.

    With the m p-values sorted ascending, p_(1) <= ... <= p_(m), the adjusted value of p_(k) is
    max over j <= k of min(1, (m - j + 1) * p_(j)). Rejecting where the adjusted p-value is <= alpha controls the
    family-wise error rate at alpha.

    Examples
    --------
    >>> holm([0.01, 0.04, 0.03, 0.005]).tolist()  # 4*0.005, 3*0.01, 2*0.03, max(1*0.04, 0.06)
    [0.03, 0.06, 0.06, 0.02]
    """
    p = _pvalues(pvalues)
    flat = p.ravel()
    idx = np.flatnonzero(~np.isnan(flat))
    m = len(idx)
    if m:
        order = idx[np.argsort(flat[idx], kind="stable")]
        scaled = np.minimum(1.0, (m - np.arange(m)) * flat[order])
        flat = flat.copy()
        flat[order] = np.maximum.accumulate(scaled)
    return flat.reshape(p.shape)


def zero_bound(pvalues, n_resamples: int | None) -> np.ndarray:
    """Permutation p-values with each 0 replaced by 1/``n_resamples``, the bound it stands for.

    A permutation test that counts the resamples at least as extreme as the data and divides by their number
    (no +1) reports 0 when none was: then p < 1/n only (Phipson & Smyth 2010: (0 + 1) / (n + 1) is the exact
    p-value, at most 1/n). Every other value is returned as it is; ``n_resamples`` None (a test without resamples,
    Williams's) returns a copy.

    Examples
    --------
    >>> zero_bound([0.0, 0.2, float("nan")], 1000).tolist(), zero_bound([0.0], None).tolist()
    ([0.001, 0.2, nan], [0.0])
    """
    p = _pvalues(pvalues)
    if n_resamples is None:
        return p.copy()
    if int(n_resamples) < 1:
        raise ValueError(f"n_resamples must be a positive integer, got {n_resamples!r}")
    return np.where(p == 0.0, 1.0 / int(n_resamples), p)


def adjust_pvalues(pvalues, correction: str = "holm", n_resamples: int | None = None) -> np.ndarray:
    """p-values adjusted for multiple comparisons over all non-NaN entries (one family); NaN stays NaN.

    Parameters
    ----------
    pvalues : array_like
        Any shape, values in [0, 1] or NaN.
    correction : {"holm", "bh", "none"}
        Holm-Bonferroni (:func:`holm`), Benjamini-Hochberg (:func:`scipy.stats.false_discovery_control`), or a
        copy of the input.
    n_resamples : int or None
        The resamples of the permutation test behind the p-values: a 0 then enters every rule (``none``
        included) as its bound 1/n (:func:`zero_bound`), so its adjusted value is an upper bound, never 0
        (Holm over m comparisons: at most m/n). None: the p-values are taken as they are (Williams's exact
        p-values; mt-metrics-eval's clusters).

    Examples
    --------
    >>> adjust_pvalues([0.01, 0.04, 0.03, 0.005], "bh").round(6).tolist()  # 4/2*.01, 4/4*.04, 4/3*.03, 4/1*.005
    [0.02, 0.04, 0.04, 0.02]
    >>> adjust_pvalues([0.0, 0.0, 0.5], "holm").tolist(), adjust_pvalues([0.0, 0.0, 0.5], "holm", 1000).tolist()
    ([0.0, 0.0, 0.5], [0.003, 0.003, 0.5])
    """
    if correction not in CORRECTIONS:
        raise ValueError(f"unknown correction {correction!r}; use one of {CORRECTIONS}")
    p = zero_bound(pvalues, n_resamples)
    if correction == "holm":
        return holm(p)
    out = p.copy()
    ok = ~np.isnan(p)
    if correction == "bh" and ok.any():
        out[ok] = stats.false_discovery_control(p[ok], method="bh")
    return out


def resolution_note(correction: str, m: int, resolution: int | None, alpha: float,
                    more_resamples_help: bool = True) -> str | None:
    """Why ``m`` tests whose p-values of 0 stand for 1/``resolution`` can never pass ``alpha`` after
    ``correction``; None when they can (or the p-values are exact, ``resolution`` None).

    A 0 enters the rule as 1/resolution (:func:`adjust_pvalues`), the smallest p-value the test can show. Holm
    multiplies the smallest of m p-values by m, so it needs resolution >= m/alpha; Benjamini-Hochberg and no
    correction need resolution >= 1/alpha. ``more_resamples_help`` False (SPA, whose test stops after its first
    100 resamples when p < 0.02): the advice names only the rules.

    Examples
    --------
    >>> import re
    >>> for part in re.split(", and |: ", resolution_note("holm", 171, 1000, 0.05)): print(part)
    a p-value of 0 from 1,000 resamples stands for p < 0.001
    Holm over all 171 pairs makes it at least 0.171 > alpha 0.05
    no pair can be found significant (use --resamples 3420 or more, or --correction bh or none)
    >>> resolution_note("holm", 45, 10000, 0.05) is None, resolution_note("bh", 171, 1000, 0.05) is None
    (True, True)
    """
    if resolution is None or m < 1:
        return None
    smallest = min(1.0, (m if correction == "holm" else 1) / resolution)
    if smallest <= alpha:
        return None
    need = math.ceil(m / alpha) if correction == "holm" else math.ceil(1 / alpha)
    rules = "--correction bh or none" if correction == "holm" and 1 / resolution <= alpha else ""
    advice = ", or ".join(a for a in (f"--resamples {need} or more" if more_resamples_help else "", rules) if a)
    return (f"a p-value of 0 from {resolution:,} resamples stands for p < {1 / resolution:g}, and "
            f"{family_label(correction, m, 'pairs', every=True)} makes it at least {smallest:g} > alpha {alpha:g}: "
            f"no pair can be found significant" + (f" (use {advice})" if advice else ""))


def significance_clusters(names, corrs, pvalues_matrix, alpha: float = 0.05, correction: str = "holm",
                          n_resamples: int | None = None) -> tuple[list[tuple[str, int]], np.ndarray]:
    """Rank metrics into significance clusters, as mt-metrics-eval ranks WMT metrics.

    Parameters
    ----------
    names : sequence of str
        Metric names, unique.
    corrs : sequence of float
        Each metric's correlation (finite), in the order of ``names``.
    pvalues_matrix : array_like
        (n, n), in the order of ``names``: entry [i, j] is the one-sided p-value for H1 "metric i correlates more
        than metric j", e.g. from :func:`meta_eval.stats.resampling.pairwise_permutation_pvalues`. Only the entries
        with i ranked above j (higher correlation; ties keep the order of ``names``) are used; the others may be
        NaN.
    alpha : float
        Significance level in (0, 1); a difference is significant when its (adjusted) p-value is <= alpha, as in
        mt-metrics-eval.
    correction : {"holm", "bh", "none"}
        Multiple-comparison correction over the family of the n(n-1)/2 used p-values (NaN ones are left out of
        the family and count as not significant).
    n_resamples : int or None
        The resamples behind a p-value of 0 (:func:`meta_eval.stats.zero_resolution`): each 0 enters the rule as
        its bound 1/n (:func:`adjust_pvalues`), so no cluster rests on a p-value the test cannot resolve. None:
        exact p-values (Williams's test), taken as they are.

    Returns
    -------
    ranks : list of (str, int)
        (name, cluster rank) by decreasing correlation; rank 1 is the best cluster.
    adjusted : numpy.ndarray
        (n, n) adjusted p-values in the order of ``names``, NaN on the diagonal and where the row metric is
        ranked below the column metric.

    Raises
    ------
    ValueError
        On repeated names, lengths that do not match, a non-finite correlation, p-values outside [0, 1], alpha
        outside (0, 1) or an unknown correction.

    Examples
    --------
    >>> P = np.array([[np.nan, 0.03, 0.01], [0.97, np.nan, 0.04], [0.99, 0.96, np.nan]])
    >>> significance_clusters(["A", "B", "C"], [0.5, 0.4, 0.2], P, correction="none")[0]
    [('A', 1), ('B', 2), ('C', 3)]
    >>> ranks, adj = significance_clusters(["A", "B", "C"], [0.5, 0.4, 0.2], P, correction="holm")
    >>> ranks  # Holm: A>C 3*0.01 = 0.03, A>B 2*0.03 = 0.06, B>C max(0.04, 0.06) = 0.06
    [('A', 1), ('B', 1), ('C', 2)]
    >>> adj.round(2).tolist()
    [[nan, 0.06, 0.03], [nan, nan, 0.06], [nan, nan, nan]]
    """
    names = [str(n) for n in names]
    if len(set(names)) != len(names):
        raise ValueError(f"metric names must be unique, got {names}")
    try:
        c = np.asarray(corrs, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"corrs must be numbers, got {corrs!r}") from None
    n = len(names)
    if c.shape != (n,):
        raise ValueError(f"need one correlation per metric: {n} names, corrs of shape {c.shape}")
    if not np.isfinite(c).all():
        undefined = [m for m, v in zip(names, c) if not np.isfinite(v)]
        raise ValueError(f"correlations must be finite; undefined for {undefined}")
    P = _pvalues(pvalues_matrix)
    if P.shape != (n, n):
        raise ValueError(f"pvalues_matrix must be ({n}, {n}), got {P.shape}")
    try:
        a = float(alpha)
    except (TypeError, ValueError):
        raise ValueError(f"alpha must be a number in (0, 1), got {alpha!r}") from None
    if not 0.0 < a < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    if correction not in CORRECTIONS:
        raise ValueError(f"unknown correction {correction!r}; use one of {CORRECTIONS}")

    order = sorted(range(n), key=lambda i: best_first(c[i], names[i]))  # sorted position -> index in names
    above = np.zeros((n, n), dtype=bool)  # [i, j]: metric i is ranked above metric j
    for pos, i in enumerate(order):
        above[i, order[pos + 1:]] = True
    used = np.where(above, P, np.nan)
    adjusted = adjust_pvalues(used, correction, n_resamples)

    sig = np.nan_to_num(adjusted, nan=1.0) <= a  # NaN: not significant
    ranks, rank, start = [], 1, 0
    for pos, j in enumerate(order):
        if any(sig[order[k], j] for k in range(start, pos)):
            rank, start = rank + 1, pos
        ranks.append((names[j], rank))
    return ranks, adjusted
