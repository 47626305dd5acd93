"""Williams test for a difference between two dependent correlations.

Metrics A and B, scored on the same n items, are compared by their
correlations with the human scores H. Both correlations involve H and A, B
are correlated with each other, so an independent-samples test is wrong;
Williams (1959) gives a t statistic with n - 3 degrees of freedom. Numbering:
1 = human, 2 = metric A, 3 = metric B; r23 = corr(A, B). One-sided, H1:
rho12 > rho13.

References
----------
E. J. Williams (1959). Regression Analysis. Wiley, New York.
J. H. Steiger (1980). Tests for comparing elements of a correlation matrix.
Psychological Bulletin 87(2):245-251.
Y. Graham and T. Baldwin (2014). Testing for Significance of Increased
Correlation with Human Judgment. EMNLP (ACL Anthology D14-1020).
E. Clark, A. Celikyilmaz and N. A. Smith (2019). Sentence Mover's Similarity:
Automatic Evaluation for Multi-Sentence Texts. ACL (ACL Anthology P19-1264).

Examples
--------
>>> round(williams_test(0.6, 0.4, 0.5, 20), 4)
0.1595
"""

from __future__ import annotations

import math
import numbers

from scipy import stats

from meta_eval.stats.correlation import correlate

_K_TOL = 1e-12  # |K| below this is rounding noise around a singular matrix


def _check_r(name: str, value) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    if not (math.isfinite(v) and -1.0 <= v <= 1.0):
        raise ValueError(f"{name} must be a finite correlation in [-1, 1], got {value!r}")
    return v


def williams_t(r12: float, r13: float, r23: float, n: int) -> float:
    """Williams' t statistic (df = n - 3) for H1: rho12 > rho13.

    With K = 1 - r12**2 - r13**2 - r23**2 + 2*r12*r13*r23 (the determinant of
    the 3x3 correlation matrix)::

        t = (r12 - r13) * sqrt((n-1) * (1+r23))
            / sqrt(2*K*(n-1)/(n-3) + ((r12+r13)**2 / 4) * (1-r23)**3)

    Parameters
    ----------
    r12, r13 : float
        Correlation of the human scores with metric A, resp. metric B.
    r23 : float
        Correlation between metric A and metric B.
    n : int
        Number of items (> 3).

    Returns
    -------
    float
        t; exactly 0.0 when r12 == r13.

    Raises
    ------
    ValueError
        If n is not an integer > 3; an r is not finite or not in [-1, 1]; the
        r's are inconsistent (K < 0); the denominator is 0 (e.g. r23 == 1).

    Examples
    --------
    >>> round(williams_t(0.6, 0.4, 0.5, 20), 6)
    1.026529
    """
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise ValueError(f"n must be an integer, got {n!r}")
    n = int(n)
    if n <= 3:
        raise ValueError(f"n must be greater than 3 (df = n - 3), got {n}")
    r12, r13, r23 = (_check_r(name, v) for name, v in (("r12", r12), ("r13", r13), ("r23", r23)))
    k = 1.0 - r12**2 - r13**2 - r23**2 + 2.0 * r12 * r13 * r23
    if k < -_K_TOL:
        raise ValueError(f"inconsistent correlations r12={r12}, r13={r13}, r23={r23}: "
                         f"no valid correlation matrix has them (K={k:.3g} < 0)")
    if abs(k) <= _K_TOL:
        k = 0.0
    denom2 = 2.0 * k * (n - 1) / (n - 3) + ((r12 + r13) ** 2 / 4.0) * (1.0 - r23) ** 3
    if denom2 <= 0.0:
        raise ValueError(f"Williams t undefined for r12={r12}, r13={r13}, r23={r23}: zero "
                         "denominator (degenerate matrix; r23 == 1: metrics perfectly correlated)")
    if r12 == r13:
        return 0.0
    return (r12 - r13) * math.sqrt((n - 1) * (1.0 + r23)) / math.sqrt(denom2)


def williams_test(r12: float, r13: float, r23: float, n: int) -> float:
    """One-sided Williams p-value for H1: rho12 > rho13 (metric A beats B).

    p = P(T >= t) for T ~ Student t with n - 3 degrees of freedom, t from
    :func:`williams_t` (computed with :func:`scipy.stats.t.sf`). Parameters
    and errors as in :func:`williams_t`; r12 == r13 gives p = 0.5.

    Examples
    --------
    >>> williams_test(0.5, 0.5, 0.3, 50)
    0.5
    >>> williams_test(0.258, 0.117, 0.5, 2085) < 0.01
    True
    """
    t = williams_t(r12, r13, r23, n)
    return float(stats.t.sf(t, n - 3))


def williams_from_scores(human, a, b, kind: str = "spearman") -> float:
    """Williams p-value that metric ``a`` correlates more with ``human`` than ``b``.

    r12 = corr(human, a), r13 = corr(human, b) and r23 = corr(a, b) all use the
    same coefficient ``kind`` from :mod:`meta_eval.stats.correlation`.

    Parameters
    ----------
    human, a, b : array_like
        1-D, equal length n > 3, finite scores on the same items.
    kind : {"spearman", "pearson", "kendall"}
        Correlation coefficient (Graham & Baldwin 2014 use Pearson).

    Returns
    -------
    float
        One-sided p-value for H1: rho(human, a) > rho(human, b).

    Raises
    ------
    ValueError
        On invalid input, unknown kind, an undefined correlation (constant
        input), or any condition of :func:`williams_t`.

    Examples
    --------
    >>> h = [1, 2, 3, 4, 5, 6]
    >>> williams_from_scores(h, h, [2, 1, 4, 3, 6, 5]) < 0.5
    True
    """
    rs = []
    for label, x, y in (("human, a", human, a), ("human, b", human, b), ("a, b", a, b)):
        c = correlate(x, y, kind)
        if c.r is None:
            raise ValueError(f"{kind} correlation of ({label}) is undefined: {c.note}")
        rs.append(c.r)
    return williams_test(rs[0], rs[1], rs[2], c.n)


def williams_pair(human, a, b, kind: str = "spearman") -> float:
    """One-sided Williams p-value that ``a`` correlates more with ``human`` than ``b`` (:func:`williams_test` with
    r12 = corr(human, a), r13 = corr(human, b), r23 = corr(a, b), all of ``kind``); NaN where it is undefined (a
    correlation undefined, or |r23| = 1: the two metrics rank the items identically).

    The one function behind every Williams p-value of a run: the table's p against the baseline
    (:func:`meta_eval.evaluate.evaluate`) and the all-pairs matrix (:func:`williams_pvalues`), so the two agree
    exactly.

    Examples
    --------
    >>> h = [1, 2, 3, 4, 5, 6]
    >>> round(williams_pair(h, h, [2, 1, 4, 3, 6, 5]), 4) == round(williams_from_scores(h, h, [2, 1, 4, 3, 6, 5]), 4)
    True
    >>> import math; math.isnan(williams_pair(h, h, h))
    True
    """
    r12, r13 = correlate(human, a, kind).r, correlate(human, b, kind).r
    return _williams_or_nan(r12, r13, _between(a, b, kind), len(human))


def _between(a, b, kind: str):
    """corr(a, b) computed in one canonical order of the two vectors (their bytes), so that (a, b) and (b, a) give
    the same bits: a rank correlation with ties is symmetric only up to rounding."""
    from meta_eval.stats.resampling import _reversed

    return correlate(b, a, kind).r if _reversed(a, b) else correlate(a, b, kind).r


def _williams_or_nan(r12, r13, r23, n: int) -> float:
    if r12 is None or r13 is None or r23 is None or abs(r23) >= 1.0:
        return float("nan")
    try:
        return williams_test(r12, r13, r23, n)
    except ValueError:
        return float("nan")


def williams_pvalues(human, scores, kind: str = "spearman"):
    """P[i, j]: :func:`williams_pair` p-value that ``scores[i]`` correlates more with ``human`` than ``scores[j]``
    (NaN on the diagonal and where undefined): the global-level p-value matrix of the correlations, for
    :func:`meta_eval.stats.clusters.significance_clusters`. Deterministic (no resamples); equal bit for bit to
    :func:`williams_pair` for every pair.

    Examples
    --------
    >>> h = [1, 2, 3, 4, 5, 6, 7, 8]
    >>> P = williams_pvalues(h, [h, [2, 1, 4, 3, 6, 5, 8, 7], [8, 1, 2, 7, 3, 6, 4, 5]])
    >>> bool(P[0, 2] < 0.05 and P[2, 0] > 0.95), bool(P[1, 0] == williams_pair(h, [2, 1, 4, 3, 6, 5, 8, 7], h))
    (True, True)
    """
    import numpy as np

    n = len(scores)
    r_h = [correlate(human, s, kind).r for s in scores]
    P = np.full((n, n), np.nan)
    for i in range(n):
        for j in range(i + 1, n):
            r23 = _between(scores[i], scores[j], kind)  # once per unordered pair, as williams_pair computes it
            P[i, j] = _williams_or_nan(r_h[i], r_h[j], r23, len(human))
            P[j, i] = _williams_or_nan(r_h[j], r_h[i], r23, len(human))
    return P
