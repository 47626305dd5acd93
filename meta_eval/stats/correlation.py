"""Correlation coefficients between metric scores and human judgments.

Validated wrappers around :mod:`scipy.stats` (pearsonr, spearmanr, kendalltau
with ``variant='b'``). Each returns a :class:`Correlation`; invalid input
raises ``ValueError``; constant input gives ``r=None`` plus a ``note``, never
NaN or a warning.

References
----------
K. Pearson (1895). Proc. Royal Society of London 58:240-242 (r).
C. Spearman (1904). American Journal of Psychology 15(1):72-101 (rho).
M. G. Kendall (1945). The treatment of ties in ranking problems. Biometrika
33(3):239-251 (tau-b).

Examples
--------
>>> from meta_eval.stats.correlation import correlate
>>> c = correlate([1, 2, 3, 4], [1, 3, 2, 4], "spearman")
>>> round(c.r, 6), c.n
(0.8, 4)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
from scipy import stats

CONSTANT_NOTE = "constant input: correlation undefined"


@dataclass(frozen=True)
class Correlation:
    """Result of a correlation: coefficient ``r``, two-sided p-value ``p``,
    sample size ``n`` and, when ``r`` is None, a ``note`` saying why."""

    r: float | None
    p: float | None
    n: int
    note: str | None = None


def _validate(x, y) -> tuple[np.ndarray, np.ndarray]:
    try:
        xa = np.asarray(x, dtype=float)
        ya = np.asarray(y, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"x and y must be numeric sequences: {exc}") from None
    if xa.ndim != 1 or ya.ndim != 1:
        raise ValueError(f"x and y must be 1-D, got shapes {xa.shape} and {ya.shape}")
    if len(xa) != len(ya):
        raise ValueError(f"x and y must have equal length, got {len(xa)} and {len(ya)}")
    if len(xa) < 3:
        raise ValueError(f"need at least 3 paired observations, got {len(xa)}")
    for name, a in (("x", xa), ("y", ya)):
        if not np.isfinite(a).all():
            raise ValueError(f"{name} must be finite: {int(np.isnan(a).sum())} NaN and "
                             f"{int(np.isinf(a).sum())} inf, first at index "
                             f"{int(np.flatnonzero(~np.isfinite(a))[0])}")
    return xa, ya


def _run(test: Callable, x, y) -> Correlation:
    xa, ya = _validate(x, y)
    n = len(xa)
    if np.all(xa == xa[0]) or np.all(ya == ya[0]):
        return Correlation(r=None, p=None, n=n, note=CONSTANT_NOTE)
    res = test(xa, ya)
    r, p = float(res.statistic), float(res.pvalue)
    if np.isnan(r):  # defensive: never hand NaN to callers
        return Correlation(r=None, p=None, n=n, note="correlation undefined (scipy returned NaN)")
    # clip guards against rounding just past +-1
    return Correlation(r=min(1.0, max(-1.0, r)), p=None if np.isnan(p) else p, n=n)


def _scaled_pearsonr(x: np.ndarray, y: np.ndarray):
    """:func:`scipy.stats.pearsonr` of x and y each scaled by a power of 2 that brings its largest |value| into
    [0.5, 1): exact, so r and p are those of the data, while scipy's own sums of squares overflow for scores near
    1e308 (r = 0.0, p = 1.0, silently) and underflow near 1e-200."""
    x, y = (np.ldexp(a, -int(np.frexp(np.abs(a).max())[1])) for a in (x, y))
    return stats.pearsonr(x, y)


def pearson(x, y) -> Correlation:
    """Pearson product-moment correlation r = cov(x, y) / (sd(x) sd(y)).

    Parameters
    ----------
    x, y : array_like
        1-D, equal length, at least 3 finite values each.

    Returns
    -------
    Correlation
        ``r`` and the two-sided p-value of :func:`scipy.stats.pearsonr`, on
        x and y scaled by a power of 2 each (exact; scores near 1e308 would
        overflow scipy's sums of squares); ``r=None`` with a note if x or y
        is constant.

    Raises
    ------
    ValueError
        On non-1-D, unequal-length, too short (n < 3) or non-finite input.

    Examples
    --------
    >>> round(pearson([1, 2, 3, 4], [1, 3, 2, 4]).r, 6)
    0.8
    >>> round(pearson([1, 2, 3, 4], [1e308, 3e307, 2e307, 1.7e308]).r, 6)  # as of [1, .3, .2, 1.7]
    0.370117
    """
    return _run(_scaled_pearsonr, x, y)


def spearman(x, y) -> Correlation:
    """Spearman's rho: Pearson's r of the ranks (ties get average ranks).

    Without ties, rho = 1 - 6 * sum(d_i**2) / (n * (n**2 - 1)), d_i the rank
    differences (Spearman, 1904). Parameters, return value and errors as in
    :func:`pearson`; p comes from :func:`scipy.stats.spearmanr`.

    Examples
    --------
    >>> round(spearman([1, 2, 3, 4], [1, 3, 2, 4]).r, 6)  # 1 - 6*2/(4*15)
    0.8
    """
    return _run(stats.spearmanr, x, y)


def kendall(x, y) -> Correlation:
    """Kendall's tau-b = (C - D) / sqrt((n0 - n1) * (n0 - n2)).

    C/D count concordant/discordant pairs, n0 = n(n-1)/2, and n1, n2 the
    pairs tied in x and in y (Kendall, 1945). Parameters, return value and
    errors as in :func:`pearson`; p comes from
    :func:`scipy.stats.kendalltau` with ``variant='b'``.

    Examples
    --------
    >>> round(kendall([1, 2, 3, 4], [1, 3, 2, 4]).r, 6)  # (5 - 1) / 6
    0.666667
    """
    return _run(lambda a, b: stats.kendalltau(a, b, variant="b"), x, y)


CORRELATIONS: dict[str, Callable[..., Correlation]] = {
    "spearman": spearman, "pearson": pearson, "kendall": kendall,
}


def correlate(x, y, kind: str) -> Correlation:
    """Correlate x and y with the coefficient named ``kind``.

    Parameters
    ----------
    x, y : array_like
        See :func:`pearson`.
    kind : {"spearman", "pearson", "kendall"}
        A key of :data:`CORRELATIONS`.

    Returns
    -------
    Correlation

    Raises
    ------
    ValueError
        For an unknown ``kind`` (the message lists the known ones) or bad input.

    Examples
    --------
    >>> correlate([1, 2, 3], [3, 2, 1], "kendall").r
    -1.0
    """
    try:
        func = CORRELATIONS[kind]
    except (KeyError, TypeError):
        known = ", ".join(sorted(CORRELATIONS))
        raise ValueError(f"unknown correlation kind {kind!r}; known kinds: {known}") from None
    return func(x, y)
