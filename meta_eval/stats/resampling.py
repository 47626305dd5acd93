"""Resampling statistics for metric correlations (Deutsch, Dror & Roth, TACL 2021), vectorised.

Scores are (n_docs x n_systems) matrices from :func:`meta_eval.matrix.to_matrix`: ``X`` a metric, ``Z`` the human
scores, NaN where a (document, system) pair is missing, the same cells missing in both. Several metrics are passed
as one array of shape (n_metrics, n_docs, n_systems). Callers pass metric scores already oriented so that higher
means better (negate error rates and distances first): every test here is one-sided for "A correlates more".

- :func:`level_correlation`: the correlation at the summary (per document, averaged), system (per-system means) or
  global (all cells) level (the paper's section 2), NaN-aware and agreeing with :mod:`meta_eval.stats.levels`;
- :func:`batch_correlation`: Pearson, Spearman (average ranks) and Kendall tau-b over the last axis of arrays of
  any leading shape, so that B resamples x M metrics are one numpy call; ties are treated as in scipy;
- :func:`bootstrap_ci`: the percentile intervals BOOT-SYSTEMS, BOOT-INPUTS and BOOT-BOTH (section 4);
  :func:`fisher_ci` the parametric interval (Fisher z with the variances of Bonett & Wright, 2000);
- :func:`permutation_test`: PERM-SYSTEMS, PERM-INPUTS and PERM-BOTH (section 5); :func:`paired_bootstrap_test`
  the paired bootstrap test; :func:`pairwise_permutation_pvalues` and :func:`pairwise_bootstrap_pvalues` the
  matrices of one-sided p-values that :func:`meta_eval.stats.clusters.significance_clusters` turns into ranks.

Every random function takes ``seed``, an int or a :class:`numpy.random.Generator` (never the global RNG): the same
int gives the same numbers; a Generator is advanced (the tests restart every pair from a copy of it instead: common
random numbers, so that a pair's p-value does not depend on the other metrics). All indices are drawn before any
work, so the numbers do not depend on the chunk size used to bound memory. Undefined correlations (fewer than 3 units, constant scores) are NaN.

Finite scores of any magnitude: a sum of values or of squares of scores near 1e308 overflows (inf, then NaN or a
ratio of 0), and of scores near 1e-200 underflows. Pearson's r, the system means and the z-scores of the tests
therefore bring a vector (matrix, column) whose largest |value| lies beyond 2**500 or below 2**-500 into [0.5, 1)
by a power of 2 first (:func:`_exponents`): exact in floating point, so every correlation is the one of the
rescaled data and scores of ordinary magnitude are not touched (their numbers stay bit for bit).

References
----------
D. Deutsch, R. Dror and D. Roth (2021). A Statistical Analysis of Summarization Evaluation Metrics using
Resampling Methods. TACL 9:1132-1146 (arXiv:2104.00054). Reference code: CogComp/stat-analysis-experiments with
sacrerouge.stats (D. Deutsch, 2021).
D. G. Bonett and T. A. Wright (2000). Sample size requirements for estimating Pearson, Kendall and Spearman
correlations. Psychometrika 65(1):23-28.
B. Efron and R. J. Tibshirani (1993). An Introduction to the Bootstrap. Chapman & Hall (percentile interval).
T. Berg-Kirkpatrick, D. Burkett and D. Klein (2012). An Empirical Investigation of Statistical Significance in
NLP. EMNLP-CoNLL (paired bootstrap).

Examples
--------
>>> import numpy as np
>>> Z = np.array([[1., 2, 3, 4], [2, 1, 4, 3], [1, 3, 2, 4]])
>>> X = Z + np.array([[0., 0, 0, 0], [0, 0, 0, 0], [0, 1, 0, 0]])  # one summary scored too high
>>> level_correlation(X, Z, "system", "spearman")  # system means keep the human order
1.0
>>> round(level_correlation(X, Z, "summary", "spearman"), 4)  # (1 + 1 + 0.9487) / 3: a tie in document 3
0.9829
>>> lo, hi, r = bootstrap_ci(X, Z, "global", "pearson", n_resamples=200, seed=0)
>>> bool(lo <= r <= hi)
True
"""
from __future__ import annotations

import numbers
from typing import NamedTuple

import numpy as np
from scipy import stats

from meta_eval.scoring.chunks import run_chunks

__all__ = ["LEVELS", "KINDS", "LEVEL_KINDS", "RESAMPLE_METHODS", "Interval", "snap", "average_ranks", "batch_pearson",
           "batch_spearman", "batch_kendall", "batch_correlation", "level_correlation", "level_n", "bootstrap_samples",
           "bootstrap_ci", "percentile_interval", "row_bootstrap_samples", "row_cells", "fisher_ci",
           "permutation_test", "paired_bootstrap_test",
           "pairwise_permutation_pvalues", "pairwise_bootstrap_pvalues", "available_memory", "check_resample_memory",
           "resample_bytes"]

LEVELS = ("summary", "system", "global")
KINDS = ("pearson", "spearman", "kendall")
LEVEL_KINDS = KINDS + ("pdp",)  # also at the levels: pairwise difference Pearson (meta_eval.stats.pdp)
RESAMPLE_METHODS = ("both", "systems", "documents")

_TIE_TOL = 1e-12  # correlation differences closer than this are equal (rounding of equal sums in another order)
_CHUNK_CELLS = 1 << 22  # resampled cells materialised at once (about 32 MB per float64 temporary)
_KENDALL_PAIRWISE_MAX = 128  # up to this length tau-b is vectorised over all pairs
_KENDALL_LEVELS_MAX = 64  # longer vectors: vectorised if one side has at most this many distinct values, else scipy


class Interval(NamedTuple):
    """A confidence interval with its point estimate; floats for one metric, arrays of shape (n_metrics,) for
    several."""

    lower: float | np.ndarray
    upper: float | np.ndarray
    point: float | np.ndarray


# ----------------------------------------------------------------------------------------------- validation


def _choice(name: str, value, allowed: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in allowed:
        raise ValueError(f"unknown {name} {value!r}; use one of {allowed}")
    return value


def _positive_int(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def _confidence(value) -> float:
    try:
        c = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"confidence must be a number in (0, 1), got {value!r}") from None
    if not 0.0 < c < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {value!r}")
    return c


def _rng(seed) -> np.random.Generator:
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ValueError(f"seed must be a non-negative int or a numpy.random.Generator, got {seed!r}")
    return np.random.default_rng(int(seed))


def _fresh(seed) -> np.random.Generator:
    """A new generator at the start of a test's draws (common random numbers: every pair restarts from it):
    ``default_rng(seed)`` for an int (validated as :func:`_rng` does), a copy of a Generator (which is not
    advanced, so it gives the draws its int seed would)."""
    if isinstance(seed, np.random.Generator):
        import copy

        return copy.deepcopy(seed)
    return _rng(seed)


def _reversed(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether a pair test runs as (b, a): a canonical order of the two matrices (their bytes), so that the test of
    (a, b) and the test of (b, a) are one computation read from its two tails, bit for bit."""
    return np.ascontiguousarray(a, dtype=float).tobytes() > np.ascontiguousarray(b, dtype=float).tobytes()


def _float_array(name: str, value, min_ndim: int) -> np.ndarray:
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a numeric array: {exc}") from None
    if arr.ndim < min_ndim:
        raise ValueError(f"{name} must have at least {min_ndim} dimensions (n_docs, n_systems), got shape "
                         f"{arr.shape}")
    if np.isinf(arr).any():
        raise ValueError(f"{name} has {int(np.isinf(arr).sum())} infinite values; use NaN for missing scores")
    return arr


def _same_missing(x_name: str, x: np.ndarray, z: np.ndarray) -> None:
    """Raise unless x (any leading axes) and z are NaN in the same (document, system) cells."""
    differ = np.isnan(x) != np.isnan(z)
    if differ.any():
        where = np.argwhere(differ)[0]
        raise ValueError(f"{x_name} and Z must be missing (NaN) in the same cells: {int(differ.sum())} cells differ, "
                         f"the first at index {tuple(int(i) for i in where)}; see meta_eval.matrix.align_missing")


def _metric_stack(X, Z, x_name: str = "X") -> tuple[np.ndarray, np.ndarray, bool]:
    """Validate X (n_docs, n_systems) or (n_metrics, n_docs, n_systems) against a 2-D Z; return X as 3-D."""
    Z = _float_array("Z", Z, 2)
    if Z.ndim != 2:
        raise ValueError(f"Z must be one (n_docs, n_systems) matrix, got shape {Z.shape}")
    X = _float_array(x_name, X, 2)
    if X.ndim > 3:
        raise ValueError(f"{x_name} must be (n_docs, n_systems) or (n_metrics, n_docs, n_systems), got {X.shape}")
    single = X.ndim == 2
    X3 = X[None] if single else X
    if X3.shape[1:] != Z.shape:
        raise ValueError(f"{x_name} matrices have shape {X3.shape[1:]} but Z has shape {Z.shape}")
    if X3.shape[0] == 0 or Z.size == 0:
        raise ValueError(f"empty input: {x_name} shape {X.shape}, Z shape {Z.shape}")
    _same_missing(x_name, X3, Z[None])
    return X3, Z, single


def _scalar(a: np.ndarray):
    return float(a) if np.ndim(a) == 0 else a


# ------------------------------------------------------------------------------ batched coefficients (last axis)


def average_ranks(a, axis: int = -1) -> np.ndarray:
    """Ranks 1..n along ``axis``, ties sharing their average rank (as :func:`scipy.stats.rankdata`), NaN kept NaN.

    NaN entries are left out of the ranking: the other values get ranks 1..(number of non-NaN values). Vectorised
    over all other axes (one sort for the whole array).

    Examples
    --------
    >>> average_ranks([[10., 20, 20, 5], [1, np.nan, 3, 2]])
    array([[2. , 3.5, 3.5, 1. ],
           [1. , nan, 3. , 2. ]])
    """
    a = np.moveaxis(np.asarray(a, dtype=float), axis, -1)
    shape, n = a.shape, a.shape[-1]
    if n == 0 or a.size == 0:
        return np.moveaxis(a.copy(), -1, axis)
    rows = a.reshape(-1, n)
    # work on flat 1-D arrays: per-row numpy calls on short rows (16 systems) cost more than the arithmetic
    order = (np.argsort(rows, axis=-1) + (np.arange(rows.shape[0]) * n)[:, None]).ravel()  # NaN sort last
    s = rows.ravel()[order]  # each row sorted
    starts = np.empty(s.size, dtype=bool)
    starts[0] = True
    np.not_equal(s[1:], s[:-1], out=starts[1:])  # NaN != NaN: a NaN never joins a tie group
    starts[::n] = True
    first = np.flatnonzero(starts)  # flat start of each tie group
    size = np.diff(np.append(first, s.size))
    group = np.cumsum(starts) - 1
    ranks_sorted = (first % n)[group] + (size[group] + 1) / 2.0  # group at 0-based f..f+k-1: mean rank f + (k+1)/2
    ranks_sorted[np.isnan(s)] = np.nan
    out = np.empty(s.size)
    out[order] = ranks_sorted
    return np.moveaxis(out.reshape(shape), -1, axis)


_TAME = 2.0 ** 500  # beyond this largest |value| (or below its inverse), sums of squares can overflow (underflow)


def _exponents(largest) -> np.ndarray | None:
    """Per slice, the exponent e for which 2**-e brings its largest |value| ``largest`` into [0.5, 1), where that
    lies beyond 2**500 or below 2**-500 (0 elsewhere); None when no slice needs it, the common case. Scaling by a
    power of 2 is exact, so a scale-free statistic (Pearson's r, z-scores, ranks) of the scaled data is that of the
    data, computed without overflow.

    >>> _exponents(np.array([3.0, 1e308])).tolist(), _exponents(np.array([3.0, 1e-5])) is None
    ([0, 1024], True)
    """
    largest = np.asarray(largest, dtype=float)
    need = np.isfinite(largest) & ((largest > _TAME) | ((largest > 0) & (largest < 1 / _TAME)))
    if not need.any():
        return None
    return np.where(need, np.frexp(np.where(need, largest, 1.0))[1], 0)


def _tamed(x: np.ndarray, hi: np.ndarray, lo: np.ndarray) -> np.ndarray:
    """``x`` with each vector (last axis) scaled as :func:`_exponents` says, from its largest and smallest values
    ``hi`` and ``lo`` (shape ``x.shape[:-1]``); ``x`` itself when none needs it."""
    e = _exponents(np.maximum(np.abs(hi), np.abs(lo)))
    return x if e is None else np.ldexp(x, -e[..., None])


def _extremes(x: np.ndarray, valid: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The largest and smallest valid value of each vector (-inf and inf where it has none); ``valid`` None: every
    value is."""
    if valid is None:
        return x.max(axis=-1), x.min(axis=-1)
    return np.where(valid, x, -np.inf).max(axis=-1), np.where(valid, x, np.inf).min(axis=-1)


def _undefined(x: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """True where a vector has no two distinct valid values (constant or empty)."""
    hi, lo = _extremes(x, valid)
    return ~(hi > lo)


def _pearson(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    nan_x, nan_y = np.isnan(x), np.isnan(y)
    with np.errstate(invalid="ignore", divide="ignore"):
        if not (nan_x.any() or nan_y.any()):  # complete data: no masking needed
            n = x.shape[-1]
            (hx, lx), (hy, ly) = _extremes(x), _extremes(y)
            x, y = _tamed(x, hx, lx), _tamed(y, hy, ly)  # scores near 1e308: no overflow in the sums
            dx = x - x.mean(axis=-1, keepdims=True)
            dy = y - y.mean(axis=-1, keepdims=True)
            bad = (n < 3) | ~(hx > lx) | ~(hy > ly)
        else:
            valid = ~(nan_x | nan_y)
            n = valid.sum(axis=-1)
            (hx, lx), (hy, ly) = _extremes(x, valid), _extremes(y, valid)
            xz = np.where(valid, _tamed(x, hx, lx), 0.0)
            yz = np.where(valid, _tamed(y, hy, ly), 0.0)
            dx = np.where(valid, xz - (xz.sum(axis=-1) / n)[..., None], 0.0)
            dy = np.where(valid, yz - (yz.sum(axis=-1) / n)[..., None], 0.0)
            bad = (n < 3) | ~(hx > lx) | ~(hy > ly)
        sxy = np.einsum("...i,...i->...", dx, dy)
        sxx = np.einsum("...i,...i->...", dx, dx)
        syy = np.einsum("...i,...i->...", dy, dy)
        r = np.clip(sxy / np.sqrt(sxx * syy), -1.0, 1.0)
    return np.where(bad, np.nan, r)


def _aligned(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """x and y with NaN wherever either is NaN (pairwise deletion); untouched if the patterns already agree."""
    nx, ny = np.isnan(x), np.isnan(y)
    if (nx == ny).all():
        return x, y
    missing = nx | ny
    return np.where(missing, np.nan, x), np.where(missing, np.nan, y)


def _spearman(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    x, y = _aligned(x, y)
    return _pearson(average_ranks(x), average_ranks(y))  # y is ranked at its own (broadcast) shape


def _signs(x: np.ndarray, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):  # 1e308 - -1e308 is inf: its sign is still the difference's
        d = x[..., i] - x[..., j]  # NaN compares False both ways: a pair with a missing value gets sign 0
    return (d > 0).astype(np.float32) - (d < 0).astype(np.float32)


def _kendall_pairwise(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    n = x.shape[-1]
    i, j = np.triu_indices(n, 1)
    sx, sy = _signs(x, i, j), _signs(y, i, j)
    s = np.einsum("...i,...i->...", sx, sy, dtype=np.float64)  # concordant - discordant
    untied_x = np.count_nonzero(sx, axis=-1)  # n0 - n1: valid pairs not tied in x
    untied_y = np.count_nonzero(sy, axis=-1)
    n_valid = (~(np.isnan(x) | np.isnan(y))).sum(axis=-1)  # not isnan(x + y): 1e308 + 1e308 overflows
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.clip(s / np.sqrt(untied_x * untied_y.astype(np.float64)), -1.0, 1.0)
    return np.where((n_valid < 3) | (untied_x == 0) | (untied_y == 0), np.nan, r)


def _kendall_loop(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    x, y = np.broadcast_arrays(x, y)
    shape = x.shape[:-1]
    xs, ys = x.reshape(-1, x.shape[-1]), y.reshape(-1, y.shape[-1])
    out = np.full(xs.shape[0], np.nan)
    for k in range(xs.shape[0]):
        v = ~(np.isnan(xs[k]) | np.isnan(ys[k]))
        a, b = xs[k][v], ys[k][v]
        if len(a) >= 3 and a.max() > a.min() and b.max() > b.min():
            out[k] = stats.kendalltau(a, b, variant="b", method="asymptotic").statistic
    return np.clip(out, -1.0, 1.0).reshape(shape)


def _dense_levels(y: np.ndarray) -> np.ndarray:
    """Per row of a 2-D array: 0-based dense ranks of the values (NaN entries get arbitrary levels)."""
    rows, n = y.shape
    order = (np.argsort(y, axis=1) + (np.arange(rows) * n)[:, None]).ravel()
    s = y.ravel()[order]
    new = np.empty(s.size, dtype=bool)
    new[0] = True
    np.not_equal(s[1:], s[:-1], out=new[1:])
    new[::n] = True
    level = np.cumsum(new) - 1
    level -= np.repeat(level[::n], n)  # restart at 0 in each row
    out = np.empty(s.size, dtype=np.intp)
    out[order] = level
    return out.reshape(rows, n)


def _kendall_levels(x: np.ndarray, levels: np.ndarray, n_levels: int) -> np.ndarray:
    """tau-b of the 2-D rows of x and y (same NaN pattern) in O(n * n_levels) per row, ``levels`` the dense ranks
    of y (:func:`_dense_levels`), ``n_levels`` more than the largest valid one.

    Walking along x in ascending order, a running count of the elements seen so far per y level gives, for each
    element k, how many elements with a smaller x have a smaller y (concordant pairs) or a larger y (discordant
    pairs): S = C - D counts each pair not tied in x once, from its larger-x element. Ties follow tau-b.
    """
    rows, n = x.shape
    order = (np.argsort(x, axis=1) + (np.arange(rows) * n)[:, None]).ravel()  # NaN last: all before a valid
    xs = x.ravel()[order].reshape(rows, n)  # element are valid
    lv = levels.ravel()[order].reshape(rows, n)
    ok = ~np.isnan(xs)
    lv = np.where(ok, lv, 0)
    pos = np.arange(n)
    starts = np.ones((rows, n), dtype=bool)
    starts[:, 1:] = xs[:, 1:] != xs[:, :-1]
    first = np.maximum.accumulate(np.where(starts, pos, 0), axis=1)  # start of k's x-tie group: # smaller x
    # seen[r, c, k]: elements before position k with level c, then (after the sums over c) with level <= c
    seen = np.zeros((rows, n_levels, n + 1), dtype=np.int32)
    flat = seen.reshape(-1)
    row_base = (np.arange(rows) * n_levels)[:, None]
    flat[((row_base + lv) * (n + 1) + pos + 1)[ok]] = 1
    np.cumsum(seen, axis=2, out=seen)
    for c in range(1, n_levels):
        seen[:, c] += seen[:, c - 1]
    at_or_below = flat[(row_base + lv) * (n + 1) + first]
    below = np.where(lv > 0, flat[(row_base + np.maximum(lv - 1, 0)) * (n + 1) + first], 0)
    # concordant: smaller x and smaller y; discordant: smaller x and larger y = first - at_or_below
    s = np.where(ok, below - (first - at_or_below), 0).sum(axis=1, dtype=np.float64)
    n_valid = ok.sum(axis=1)
    n0 = n_valid * (n_valid - 1) / 2.0
    tied_x = np.where(ok, pos - first, 0).sum(axis=1)  # each element: earlier elements with the same x
    per_level = seen[:, :, n].astype(np.float64)
    per_level[:, 1:] -= seen[:, :-1, n]
    tied_y = (per_level * (per_level - 1) / 2.0).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.clip(s / np.sqrt((n0 - tied_x) * (n0 - tied_y)), -1.0, 1.0)
    return np.where((n_valid < 3) | (n0 - tied_x <= 0) | (n0 - tied_y <= 0), np.nan, r)


def _kendall_long(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """tau-b of long vectors: by levels when either side has few distinct values, else scipy per vector."""
    shape = np.broadcast_shapes(x.shape, y.shape)
    n = shape[-1]
    for a, b in ((x, y), (y, x)):  # tau-b is symmetric: count by the side with fewer levels
        levels = _dense_levels(b.reshape(-1, n)).reshape(b.shape)  # at b's own (un-broadcast) shape
        n_levels = int(np.where(np.isnan(b), 0, levels).max(initial=0)) + 1
        if n_levels <= _KENDALL_LEVELS_MAX:
            a2 = np.broadcast_to(a, shape).reshape(-1, n)
            l2 = np.broadcast_to(levels, shape).reshape(-1, n)
            step = max(1, _CHUNK_CELLS // ((n + 1) * n_levels))
            out = np.concatenate([_kendall_levels(a2[i:i + step], l2[i:i + step], n_levels)
                                  for i in range(0, len(a2), step)])
            return out.reshape(shape[:-1])
    return _kendall_loop(x, y)


def _kendall(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    x, y = _aligned(x, y)
    if x.shape[-1] <= _KENDALL_PAIRWISE_MAX:
        return _kendall_pairwise(x, y)
    return _kendall_long(x, y)


_CORE = {"pearson": _pearson, "spearman": _spearman, "kendall": _kendall}


def _batch_inputs(x, y) -> tuple[np.ndarray, np.ndarray]:
    xa, ya = _float_array("x", x, 1), _float_array("y", y, 1)
    if xa.shape[-1] != ya.shape[-1]:
        raise ValueError(f"x and y must have one length along the last axis, got {xa.shape} and {ya.shape}")
    try:
        np.broadcast_shapes(xa.shape[:-1], ya.shape[:-1])
    except ValueError:
        raise ValueError(f"leading axes of x {xa.shape} and y {ya.shape} do not broadcast") from None
    return xa, ya


def batch_pearson(x, y) -> np.ndarray:
    """Pearson's r along the last axis, for every index of the (broadcast) leading axes at once.

    Pairs where x or y is NaN are left out; r is NaN where fewer than 3 pairs remain or x or y is constant (where
    :func:`meta_eval.stats.correlation.pearson` has no r). Equals :func:`scipy.stats.pearsonr` up to rounding.

    Examples
    --------
    >>> batch_pearson([[1., 2, 3, 4], [1, 2, 3, 5]], [1., 3, 2, 4]).round(6)
    array([0.8     , 0.831522])
    """
    return _scalar(_pearson(*_batch_inputs(x, y)))


def batch_spearman(x, y) -> np.ndarray:
    """Spearman's rho along the last axis: Pearson's r of average ranks (ties as in :func:`scipy.stats.spearmanr`).

    NaN handling as in :func:`batch_pearson` (ranks are taken over the pairs where both are present).

    Examples
    --------
    >>> float(batch_spearman([1., 2, 3, 4], [1., 3, 2, 4]))
    0.8
    """
    return _scalar(_spearman(*_batch_inputs(x, y)))


def batch_kendall(x, y) -> np.ndarray:
    """Kendall's tau-b along the last axis (as :func:`scipy.stats.kendalltau` with ``variant='b'``).

    tau-b = (C - D) / sqrt((n0 - n1) (n0 - n2)), C/D the concordant/discordant pairs, n0 all pairs, n1/n2 those
    tied in x/y (Kendall, 1945). Vectors of up to 128 values (summary and system level) use the signs of all
    pairwise differences, vectorised. Longer ones (global level) walk along x in sorted order keeping running
    counts per distinct y value (a Fenwick tree unrolled over the levels), vectorised over rows, when x or y has
    at most 64 distinct values (human scores on a rating scale); otherwise they loop over
    :func:`scipy.stats.kendalltau`. NaN handling as in :func:`batch_pearson`.

    Examples
    --------
    >>> round(float(batch_kendall([1., 2, 3, 4], [1., 3, 2, 4])), 6)
    0.666667
    """
    return _scalar(_kendall(*_batch_inputs(x, y)))


def batch_correlation(x, y, kind: str) -> np.ndarray:
    """The coefficient ``kind`` ("pearson", "spearman" or "kendall") along the last axis; see the batch_*."""
    return _scalar(_CORE[_choice("kind", kind, KINDS)](*_batch_inputs(x, y)))


# ------------------------------------------------------------------------------------------------------ levels


def snap(a, digits: int = 12) -> np.ndarray:
    """Round to ``digits`` significant digits, so that means that are equal in exact arithmetic compare equal.

    Two systems whose score sums are equal (SummEval's means of three experts, sums of thirds) can get means that
    differ in the last bit, depending on the order of the additions (5.5e-17 on one BOOT-DOCUMENTS resample of
    SummEval). Rank coefficients and pairwise accuracies would then order them instead of tying them; rounding to
    12 significant digits (far above float64's rounding error, far below any real difference) restores the tie.
    NaN, infinities and 0 are kept. Used before ranking or comparing system means (Spearman, Kendall, pairwise
    accuracy), not for Pearson, which does not depend on ties and is kept unrounded.

    >>> (0.1 + 0.2) + 0.3 == 0.1 + (0.2 + 0.3), bool(snap((0.1 + 0.2) + 0.3) == snap(0.1 + (0.2 + 0.3)))
    (False, True)
    """
    a = np.asarray(a, dtype=float)
    finite = np.isfinite(a) & (a != 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        magnitude = np.where(finite, np.floor(np.log10(np.abs(np.where(finite, a, 1.0)))), 0.0)
    with np.errstate(over="ignore", invalid="ignore"):
        scale = 10.0 ** (digits - 1 - magnitude)
        rounded = np.round(a * scale) / scale
    return np.where(finite & np.isfinite(rounded), rounded, a)  # subnormal magnitudes are kept as they are


def _system_means(X: np.ndarray) -> np.ndarray:
    """(..., n_docs, n_systems) -> (..., n_systems): each system's mean over the documents it has. A sum that
    overflows (scores near 1e308) is summed again scaled by a power of 2 (:func:`_exponents`), then scaled back."""
    valid = ~np.isnan(X)
    count = valid.sum(axis=-2)
    with np.errstate(over="ignore"):
        total = np.where(valid, X, 0.0).sum(axis=-2)
    if not np.isfinite(total).all():
        e = _exponents(np.where(valid, np.abs(X), 0.0).max(axis=-2))
        if e is not None:
            with np.errstate(invalid="ignore", divide="ignore"):
                scaled = np.where(valid, np.ldexp(X, -e[..., None, :]), 0.0).sum(axis=-2) / count
            return np.where(count > 0, np.ldexp(scaled, e), np.nan)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / count, np.nan)


def _level(X: np.ndarray, Z: np.ndarray, level: str, kind: str) -> np.ndarray:
    """Unvalidated level correlation of X (..., D, S) with Z (..., D, S), broadcast over leading axes."""
    if kind == "pdp":
        from meta_eval.stats.pdp import level_pdp

        return level_pdp(X, Z, level)
    corr = _CORE[kind]
    if level == "system":
        if kind == "pearson":
            return corr(_system_means(X), _system_means(Z))
        return corr(snap(_system_means(X)), snap(_system_means(Z)))  # rank coefficients: equal means must tie
    if level == "global":
        return corr(X.reshape(*X.shape[:-2], -1), Z.reshape(*Z.shape[:-2], -1))
    per_doc = corr(X, Z)  # (..., D): documents with < 3 systems or constant scores are NaN
    ok = ~np.isnan(per_doc)
    count = ok.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, np.where(ok, per_doc, 0.0).sum(axis=-1) / count, np.nan)


def level_correlation(X, Z, level: str, kind: str = "spearman"):
    """Correlation of metric matrix X with human matrix Z at one level (Deutsch et al. 2021, section 2).

    - ``"summary"``: for each document the correlation across its systems, averaged over the documents that have
      one (documents with fewer than 3 scored systems or constant scores are skipped);
    - ``"system"``: the correlation of the systems' mean scores, each mean over the documents the system has;
    - ``"global"``: one correlation over all non-NaN cells.

    These are the definitions of :mod:`meta_eval.stats.levels` (which works on rows) applied to matrices.

    Parameters
    ----------
    X, Z : array_like
        Shape (..., n_docs, n_systems); leading axes (metrics, resamples) broadcast against each other. X and Z must
        be NaN in the same cells.
    level : {"summary", "system", "global"}
    kind : {"spearman", "pearson", "kendall", "pdp"}
        ``"pdp"``: pairwise difference Pearson (:mod:`meta_eval.stats.pdp`), the pairs of systems within each
        document pooled at the summary level.

    Returns
    -------
    float or numpy.ndarray
        A float for two matrices, else an array of the broadcast leading shape; NaN where undefined (where
        :mod:`meta_eval.stats.levels` gives ``r=None``; also for fewer than 3 systems, documents or cells).

    Raises
    ------
    ValueError
        On an unknown level or kind, arrays of fewer than 2 dimensions, shapes that do not broadcast, infinite
        values, or NaN patterns that differ.

    Examples
    --------
    >>> X = np.array([[1., 2, 3], [2, 3, 4]]); Z = np.array([[1., 3, 2], [2, 4, 3]])
    >>> level_correlation(X, Z, "summary", "spearman")
    0.5
    """
    level, kind = _choice("level", level, LEVELS), _choice("kind", kind, LEVEL_KINDS)
    X, Z = _float_array("X", X, 2), _float_array("Z", Z, 2)
    try:
        shape = np.broadcast_shapes(X.shape, Z.shape)
    except ValueError:
        raise ValueError(f"X {X.shape} and Z {Z.shape} do not broadcast") from None
    if X.shape[-2:] != Z.shape[-2:]:
        raise ValueError(f"X and Z must share (n_docs, n_systems), got {X.shape[-2:]} and {Z.shape[-2:]}")
    _same_missing("X", np.broadcast_to(X, shape), np.broadcast_to(Z, shape))
    return _scalar(_level(X, Z, level, kind))


def level_n(X, level: str) -> int:
    """The number of units behind a level correlation, the ``n`` of :func:`fisher_ci` as Deutsch et al. use it.

    System level: systems with at least one score; summary level: the most systems any document has (the size of
    one per-document correlation, following the paper's code); global level: non-NaN cells.

    Examples
    --------
    >>> level_n([[1., 2, np.nan], [3, 4, 5]], "summary"), level_n([[1., 2, np.nan], [3, 4, 5]], "global")
    (3, 5)
    """
    level = _choice("level", level, LEVELS)
    X = _float_array("X", X, 2)
    if X.ndim != 2:
        raise ValueError(f"X must be one (n_docs, n_systems) matrix, got shape {X.shape}")
    valid = ~np.isnan(X)
    if level == "system":
        return int((valid.sum(axis=0) > 0).sum())
    if level == "summary":
        return int(valid.sum(axis=1).max(initial=0))
    return int(valid.sum())


# --------------------------------------------------------------------------------------- bootstrap intervals


def _chunk(n_metrics: int, n_docs: int, n_systems: int, level: str, kind: str) -> int:
    cells = n_metrics * n_docs * n_systems
    if kind == "kendall" and level != "global":
        cells *= max(1, (n_systems - 1) // 2)  # the pairwise sign arrays
    return max(1, _CHUNK_CELLS // max(1, cells))


def available_memory() -> int | None:
    """Bytes this process may still allocate: the smaller of the machine's available memory (``MemAvailable`` of
    ``/proc/meminfo``, else the free pages) and what the address-space limit (``ulimit -v``, ``RLIMIT_AS``) leaves
    beside the process's current size; None when neither can be read."""
    import os

    found: list[int] = []
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            found += [int(line.split()[1]) * 1024 for line in fh if line.startswith("MemAvailable:")]
    except (OSError, ValueError, IndexError):
        pass
    if not found:
        try:
            found.append(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
        except (ValueError, OSError, AttributeError):
            pass
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_AS)[0]
        if soft != resource.RLIM_INFINITY:
            size = 0
            with open("/proc/self/status", encoding="ascii") as fh:
                size = next((int(line.split()[1]) * 1024 for line in fh if line.startswith("VmSize:")), 0)
            found.append(max(0, soft - size))
    except (ImportError, OSError, ValueError, IndexError):
        pass
    return min(found) if found else None


def resample_bytes(n_docs: int, n_systems: int, n_metrics: int = 1) -> int:
    """Bytes one resample holds from the draws to the end of a test (an upper bound): its document and system draws
    (int64), a permutation test's swap mask (float64 drawn, kept as bool: 9 bytes a cell) and its correlations."""
    return 8 * (n_docs + n_systems) + 9 * n_docs * n_systems + 16 * max(1, n_metrics)


def _gib(n: float) -> str:
    return f"{n / (1 << 30):.1f} GiB" if n >= 1 << 28 else f"{n / (1 << 20):.0f} MiB"


def check_resample_memory(n_resamples: int, n_docs: int, n_systems: int, n_metrics: int = 1, *,
                          option: str = "--resamples", share: float = 0.8) -> None:
    """Refuse, before anything is allocated, ``n_resamples`` resamples whose draws would not fit in memory.

    Every index is drawn before any work (the numbers do not depend on the chunk size), so the draws grow with
    ``n_resamples``: ``--resamples 100000000`` once asked numpy for 14.9 GiB and died in a MemoryError. Here the
    estimate (:func:`resample_bytes` per resample) is compared with ``share`` of :func:`available_memory`.

    Raises
    ------
    MetaEvalError
        Giving the estimate, the memory available and the largest ``option`` value that fits.
    """
    from meta_eval.errors import MetaEvalError

    per = resample_bytes(n_docs, n_systems, n_metrics)
    need = n_resamples * per
    free = available_memory()
    if free is None or need <= share * free:
        return
    fits = int(share * free // per)
    raise MetaEvalError(f"{option} {n_resamples:,} needs about {_gib(need)} of memory for its draws ({per:,} bytes "
                        f"per resample over {n_docs:,} documents and {n_systems:,} systems), more than this process "
                        f"can use ({_gib(free)} available); the largest {option} that fits is {fits:,}")


def _draw_indices(rng: np.random.Generator, resample: str, n: int, n_docs: int, n_systems: int):
    check_resample_memory(n, n_docs, n_systems)  # a sentence, not a MemoryError
    docs = rng.integers(0, n_docs, size=(n, n_docs)) if resample in ("both", "documents") else None
    systems = rng.integers(0, n_systems, size=(n, n_systems)) if resample in ("both", "systems") else None
    return docs, systems


def bootstrap_samples(X, Z, level: str, kind: str = "spearman", resample: str = "both", n_resamples: int = 1000,
                      seed: int | np.random.Generator = 0) -> np.ndarray:
    """Level correlations of bootstrap resamples of the (document x system) matrix (Deutsch et al. 2021, sec. 4).

    Each resample draws documents (``"documents"``, the paper's BOOT-INPUTS), systems (``"systems"``,
    BOOT-SYSTEMS) or both (``"both"``, BOOT-BOTH: the sub-matrix of the drawn systems on the drawn documents)
    with replacement, the same draw for every metric and for Z, and recomputes the level correlation. A system
    drawn twice counts twice (tied scores); so does a document.

    Parameters
    ----------
    X : array_like
        (n_docs, n_systems) or (n_metrics, n_docs, n_systems), oriented so that higher is better.
    Z : array_like
        (n_docs, n_systems) human scores, NaN in the same cells as every metric.
    level, kind
        See :func:`level_correlation`.
    resample : {"both", "systems", "documents"}
    n_resamples : int
    seed : int or numpy.random.Generator

    Returns
    -------
    numpy.ndarray
        Shape (n_resamples,) or (n_resamples, n_metrics); NaN where a resample has no defined correlation.

    Examples
    --------
    >>> Z = np.arange(12.0).reshape(3, 4); samples = bootstrap_samples(Z, Z, "global", "pearson", n_resamples=5)
    >>> samples.shape, bool(np.allclose(samples, 1.0))
    ((5,), True)
    """
    level, kind = _choice("level", level, LEVELS), _choice("kind", kind, LEVEL_KINDS)
    resample = _choice("resample", resample, RESAMPLE_METHODS)
    n_resamples = _positive_int("n_resamples", n_resamples)
    X3, Z, single = _metric_stack(X, Z)
    rng = _rng(seed)
    n_metrics, n_docs, n_systems = X3.shape
    doc_draws, sys_draws = _draw_indices(rng, resample, n_resamples, n_docs, n_systems)
    step = _chunk(n_metrics, n_docs, n_systems, level, kind)
    tasks = [(None if doc_draws is None else doc_draws[start:start + step],
              None if sys_draws is None else sys_draws[start:start + step], min(step, n_resamples - start))
             for start in range(0, n_resamples, step)]
    out = np.concatenate(run_chunks(f"bootstrap ({level} {kind})", _bootstrap_chunk, (X3, Z, level, kind), tasks))
    return out[:, 0] if single else out


def _bootstrap_chunk(X3: np.ndarray, Z: np.ndarray, level: str, kind: str, d: np.ndarray | None,
                     s: np.ndarray | None, count: int) -> np.ndarray:
    """Level correlations (count, n_metrics) of ``count`` resamples: drawn documents ``d`` and systems ``s``
    (None: all, in order)."""
    n_docs, n_systems = Z.shape
    d = np.broadcast_to(np.arange(n_docs), (count, n_docs)) if d is None else d
    s = np.broadcast_to(np.arange(n_systems), (count, n_systems)) if s is None else s
    rows, cols = d[:, :, None], s[:, None, :]
    return _level(X3[:, rows, cols], Z[rows, cols][None], level, kind).T


def _row_int_array(name: str, value, n: int, bound: int | None) -> tuple[np.ndarray, int]:
    try:
        a = np.asarray(value)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be an integer array: {exc}") from None
    if a.ndim != 1 or len(a) != n or (a.size and not np.issubdtype(a.dtype, np.integer)):
        raise ValueError(f"{name} must be {n} integer indices (one per row), got shape {a.shape} of {a.dtype}")
    a = a.astype(np.int64)
    if a.size and a.min() < 0:
        raise ValueError(f"{name} indices must be >= 0, got {int(a.min())}")
    top = int(a.max()) + 1 if a.size else 0
    if bound is None:
        return a, top
    bound = _positive_int(f"the number of {name}s", bound)
    if top > bound:
        raise ValueError(f"{name} index {top - 1} is out of range for {bound} units")
    return a, bound


def row_cells(doc, system, n_docs: int, n_systems: int) -> np.ndarray:
    """``slot[d, s, k]``: the index of the k-th row (in row order) of document ``d`` and system ``s``, -1 where the
    cell has fewer rows; shape (n_docs, n_systems, K), K the most rows any cell has (1 when every (document, system)
    pair is one row).

    >>> row_cells(np.array([0, 0, 1, 0]), np.array([1, 0, 0, 1]), 2, 2)[..., 1].tolist()  # rows 0 and 3 share (0, 1)
    [[-1, 3], [-1, -1]]
    """
    cell = doc * n_systems + system
    order = np.argsort(cell, kind="stable")
    counts = np.bincount(cell, minlength=n_docs * n_systems)
    first = np.concatenate([[0], np.cumsum(counts)[:-1]])
    k = np.arange(len(cell)) - first[cell[order]]  # position of each row among its cell's rows, in row order
    depth = int(counts.max(initial=0)) or 1
    slot = np.full((n_docs * n_systems, depth), -1, dtype=np.int64)
    slot[cell[order], k] = order
    return slot.reshape(n_docs, n_systems, depth)


def row_bootstrap_samples(X, z, doc, system, kind: str = "spearman", n_resamples: int = 1000,
                          seed: int | np.random.Generator = 0, *, n_docs: int | None = None,
                          n_systems: int | None = None) -> np.ndarray:
    """BOOT-BOTH resamples of a correlation over *rows* (the global level's units): each resample draws documents
    and systems with replacement exactly as :func:`bootstrap_samples` draws them (the same generator calls in the
    same order: ``n_docs`` document indices, then ``n_systems`` system indices per resample), and each row enters
    the resample once per (draw of its document, draw of its system): with multiplicity (#draws of its document) x
    (#draws of its system). A (document, system) pair held by several rows contributes every row (each with that
    multiplicity), where the matrix of :func:`bootstrap_samples` would hold their mean in one cell; a row that
    several systems wrote (chaganty's ``ml;ml+rl``) is passed with one system index, the first of them.

    Where every (document, system) pair is at most one row, the values equal :func:`bootstrap_samples` of the
    (document x system) matrices at the global level bit for bit: the resampled rows are laid out in the matrix's
    cell order (drawn document, drawn system), with NaN for the empty cells.

    Parameters
    ----------
    X : array_like
        (n_rows,) or (n_metrics, n_rows) metric scores, oriented so that higher is better (NaN: left out of that
        metric's correlation, pairwise).
    z : array_like
        (n_rows,) human scores.
    doc, system : array_like of int
        Each row's document index in [0, n_docs) and system index in [0, n_systems).
    kind : {"spearman", "pearson", "kendall"}
    n_resamples : int
    seed : int or numpy.random.Generator
    n_docs, n_systems : int, optional
        The number of documents and systems drawn from (default: the largest index + 1); pass the matrix's to draw
        as :func:`bootstrap_samples` does on it.

    Returns
    -------
    numpy.ndarray
        (n_resamples,) or (n_resamples, n_metrics); NaN where a resample has no defined correlation.

    Examples
    --------
    A metric equal to the humans correlates 1 with them in every resample (4 documents x 3 systems; with fewer, a
    resample can draw one cell only, whose correlation is NaN):

    >>> z = np.arange(12.); doc = np.repeat(np.arange(4), 3); system = np.tile(np.arange(3), 4)
    >>> row_bootstrap_samples(z, z, doc, system, "pearson", n_resamples=3).round(6).tolist()
    [1.0, 1.0, 1.0]
    """
    kind = _choice("kind", kind, KINDS)
    n_resamples = _positive_int("n_resamples", n_resamples)
    z = _float_array("z", z, 1)
    X = _float_array("X", X, 1)
    if z.ndim != 1:
        raise ValueError(f"z must be one vector of human scores (n_rows,), got shape {z.shape}")
    single = X.ndim == 1
    X2 = X[None] if single else X
    if X2.ndim != 2 or X2.shape[1] != len(z):
        raise ValueError(f"X must be (n_rows,) or (n_metrics, n_rows) with n_rows = {len(z)}, got {X.shape}")
    if len(z) == 0 or X2.shape[0] == 0:
        raise ValueError(f"empty input: X shape {X.shape}, z shape {z.shape}")
    doc, n_docs = _row_int_array("doc", doc, len(z), n_docs)
    system, n_systems = _row_int_array("system", system, len(z), n_systems)
    slot = row_cells(doc, system, n_docs, n_systems)
    rng = _rng(seed)
    doc_draws, sys_draws = _draw_indices(rng, "both", n_resamples, n_docs, n_systems)
    Xe = np.concatenate([X2, np.full((X2.shape[0], 1), np.nan)], axis=1)  # index -1: an empty slot, NaN
    ze = np.append(z, np.nan)
    step = _chunk(X2.shape[0], n_docs, n_systems * slot.shape[2], "global", kind)
    tasks = [(doc_draws[start:start + step], sys_draws[start:start + step]) for start in range(0, n_resamples, step)]
    out = np.concatenate(run_chunks(f"bootstrap (global rows {kind})", _row_bootstrap_chunk,
                                    (Xe, ze, slot, kind), tasks))
    return out[:, 0] if single else out


def _row_bootstrap_chunk(Xe: np.ndarray, ze: np.ndarray, slot: np.ndarray, kind: str, d: np.ndarray,
                         s: np.ndarray) -> np.ndarray:
    """Correlations (count, n_metrics) of the resamples with drawn documents ``d`` and systems ``s``: the rows of
    each drawn (document, system) cell, in the cell order of :func:`_bootstrap_chunk` (NaN for empty slots)."""
    idx = slot[d[:, :, None], s[:, None, :]]  # (count, n_docs, n_systems, K) row indices, -1 for none
    count = len(d)
    if slot.shape[2] == 1:
        idx = idx[..., 0]  # the matrix's layout exactly
    values = Xe[:, idx].reshape(Xe.shape[0], count, -1)
    human = ze[idx].reshape(1, count, -1)
    return _CORE[kind](values, human).T


def percentile_interval(samples, confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Percentile bootstrap bounds per column of ``samples`` (n_resamples, n_metrics), NaN resamples left out.

    The (1 - confidence)/2 and (1 + confidence)/2 percentiles (numpy's linear interpolation; Efron & Tibshirani
    1993); NaN bounds for a column without any finite value.

    >>> percentile_interval(np.array([[1.0, np.nan], [2.0, np.nan], [3.0, np.nan]]), 0.5)
    (array([1.5, nan]), array([2.5, nan]))
    """
    samples = np.asarray(samples, dtype=float).reshape(len(samples), -1)
    tail = (1.0 - _confidence(confidence)) / 2.0 * 100.0
    lower, upper = np.full(samples.shape[1], np.nan), np.full(samples.shape[1], np.nan)
    for m in range(samples.shape[1]):
        ok = samples[:, m][np.isfinite(samples[:, m])]
        if len(ok):
            lower[m], upper[m] = np.percentile(ok, [tail, 100.0 - tail])
    return lower, upper


def bootstrap_ci(X, Z, level: str, kind: str = "spearman", resample: str = "both", n_resamples: int = 1000,
                 confidence: float = 0.95, seed: int | np.random.Generator = 0) -> Interval:
    """Percentile bootstrap confidence interval of a level correlation (Deutsch et al. 2021, section 4).

    The bounds are the (1 - confidence)/2 and (1 + confidence)/2 percentiles (linear interpolation, as
    :func:`numpy.percentile`) of the resampled correlations of :func:`bootstrap_samples`; resamples without a
    defined correlation are left out, as in the paper's code. The paper recommends BOOT-BOTH (``"both"``): it
    covers the uncertainty from sampling both the systems and the documents.

    Parameters
    ----------
    X, Z, level, kind, resample, n_resamples, seed
        As in :func:`bootstrap_samples`; metric scores oriented so that higher is better. Several metrics at once
        share one set of resampled indices.
    confidence : float
        In (0, 1).

    Returns
    -------
    Interval
        ``(lower, upper, point)``, ``point`` the correlation on the full data; floats for one metric, arrays of
        shape (n_metrics,) for several (NaN bounds for a metric with no defined resample).

    Raises
    ------
    ValueError
        On invalid input, or when the correlation on the full data is undefined.

    Examples
    --------
    >>> rng = np.random.default_rng(0); Z = rng.normal(size=(20, 8)); X = Z + rng.normal(size=(20, 8))
    >>> lo, hi, r = bootstrap_ci(X, Z, "summary", "pearson", n_resamples=300, seed=1)
    >>> bool(lo < r < hi)
    True
    """
    confidence = _confidence(confidence)
    level, kind = _choice("level", level, LEVELS), _choice("kind", kind, LEVEL_KINDS)
    X3, Z2, single = _metric_stack(X, Z)
    point = _level(X3, Z2[None], level, kind)
    if np.isnan(point).any():
        raise ValueError(f"the {level}-level {kind} correlation is undefined on the full data for metric(s) "
                         f"{np.flatnonzero(np.isnan(point)).tolist()} (constant scores or too few units)")
    samples = bootstrap_samples(X3, Z2, level, kind, resample, n_resamples, seed)
    lower, upper = percentile_interval(samples, confidence)
    if single:
        return Interval(float(lower[0]), float(upper[0]), float(point[0]))
    return Interval(lower, upper, point)


_FISHER = {"pearson": (3, lambda r: 1.0), "spearman": (3, lambda r: 1.0 + r * r / 2.0),
           "kendall": (4, lambda r: 0.437)}


def fisher_ci(r: float, n: int, confidence: float = 0.95, kind: str = "pearson") -> tuple[float, float]:
    """Confidence interval of a correlation by the Fisher z transformation.

    z = atanh(r) is roughly normal with standard error sqrt(c / (n - b)); the interval is
    tanh(z -+ q * sqrt(c / (n - b))), q the (1 + confidence)/2 normal quantile. Pearson: b = 3, c = 1 (Fisher,
    1921); Spearman: b = 3, c = 1 + r**2 / 2; Kendall: b = 4, c = 0.437 (Bonett & Wright, 2000), the constants
    Deutsch et al. (2021, section 4) use. For a level correlation, :func:`level_n` gives the n they use.

    Parameters
    ----------
    r : float
        Correlation in [-1, 1].
    n : int
        Number of units (> b).
    confidence : float
        In (0, 1).
    kind : {"pearson", "spearman", "kendall"}

    Returns
    -------
    (float, float)
        Lower and upper bound; (r, r) when |r| == 1.

    Raises
    ------
    ValueError
        If r is not a finite number in [-1, 1], n is not an integer > b, confidence is not in (0, 1), or kind is
        unknown.

    Examples
    --------
    >>> lo, hi = fisher_ci(0.5, 28)  # tanh(atanh(0.5) -+ 1.959964 / sqrt(25))
    >>> round(lo, 4), round(hi, 4)
    (0.156, 0.7358)
    """
    kind = _choice("kind", kind, KINDS)
    confidence = _confidence(confidence)
    try:
        rv = float(r)
    except (TypeError, ValueError):
        raise ValueError(f"r must be a number in [-1, 1], got {r!r}") from None
    if not (np.isfinite(rv) and -1.0 <= rv <= 1.0):
        raise ValueError(f"r must be a finite correlation in [-1, 1], got {r!r}")
    b, c = _FISHER[kind]
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n <= b:
        raise ValueError(f"n must be an integer greater than {b} for the {kind} Fisher interval, got {n!r}")
    if abs(rv) == 1.0:
        return rv, rv
    half = stats.norm.ppf(0.5 + confidence / 2.0) * np.sqrt(c(rv) / (int(n) - b))
    z = np.arctanh(rv)
    return float(np.tanh(z - half)), float(np.tanh(z + half))


# ------------------------------------------------------------------------------------------------- hypothesis tests


def _standardize(X: np.ndarray) -> np.ndarray:
    """z-scores over all non-NaN cells (one mean and SD per matrix); a constant matrix is only centred. Scores near
    1e308 (or 1e-200) are first scaled by a power of 2 (:func:`_exponents`; exact), so the SD does not overflow."""
    e = _exponents(np.nanmax(np.abs(X))) if (~np.isnan(X)).any() else None
    X = X if e is None else np.ldexp(X, -int(e))
    sd = np.nanstd(X)
    centred = X - np.nanmean(X)
    return centred / sd if sd > 0 else centred


def _pair(X_a, X_b, Z) -> tuple[np.ndarray, np.ndarray]:
    Z = _float_array("Z", Z, 2)
    if Z.ndim != 2:
        raise ValueError(f"Z must be one (n_docs, n_systems) matrix, got shape {Z.shape}")
    mats = []
    for name, X in (("X_a", X_a), ("X_b", X_b)):
        X = _float_array(name, X, 2)
        if X.shape != Z.shape:
            raise ValueError(f"{name} has shape {X.shape} but Z has shape {Z.shape}")
        _same_missing(name, X, Z)
        mats.append(X)
    return np.stack(mats), Z


def _swap_masks(seed, n_resamples: int, Z: np.ndarray, resample: str) -> np.ndarray:
    """The permutation masks of a test with this seed: ``default_rng(seed).random((n, *mask)) < 0.5``, the same for
    every pair of metrics (common random numbers)."""
    n_docs, n_systems = Z.shape
    mask_shape = {"both": (n_docs, n_systems), "systems": (1, n_systems), "documents": (n_docs, 1)}[resample]
    check_resample_memory(n_resamples, n_docs, n_systems)
    return _fresh(seed).random((n_resamples, *mask_shape)) < 0.5


def _fixed_columns(M: np.ndarray) -> bool:
    """Whether a (D, S) matrix holds one value per system (every column constant over its cells, some column with
    two or more): the column of a system score held fixed (sacrebleu's corpus score, an imported system score,
    :func:`meta_eval.matrix.judgment_matrices` with ``system_values``)."""
    valid = ~np.isnan(M)
    has = valid.any(axis=0)
    if not has.any() or valid.sum(axis=0).max() < 2:
        return False
    hi, lo = _extremes(M.T, valid.T)
    return bool((hi[has] == lo[has]).all())


def fixed_system_pair(pair: np.ndarray, Z: np.ndarray, level: str,
                      swaps: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """A pair of (D, S) metric matrices as the system-level permutation tests take it.

    Where either metric's system scores are held fixed (:func:`_fixed_columns`), swapping single cells between the
    two metrics (PERM-BOTH) would average each system's two fixed scores into a near-constant mixture, so the null
    distribution all but vanishes and any difference looks significant (wmt21-mqm-ted en-de, corpus BLEU .620 vs
    TER .609: p .005 so, .47 by mt-metrics-eval). Such a pair is tested as mt-metrics-eval tests every
    system-level correlation (``stats.PermutationSigDiff`` on the vectors of system scores): on the systems' scores
    (each metric's and the humans' system means, :func:`_system_means`: a fixed column's value), each system's two
    scores swapped with probability 1/2. The swap masks are the first row of ``swaps`` (one coin per system, from
    the same seed). Other pairs and levels are returned as they are.
    """
    if level != "system" or not (_fixed_columns(pair[0]) or _fixed_columns(pair[1])):
        return pair, Z, swaps
    if swaps is not None and swaps.shape[-1] != Z.shape[-1]:
        raise ValueError("fixed system scores (corpus or imported) cannot be tested by swapping whole documents: use "
                         "resample 'both' or 'systems'")
    return (_system_means(pair)[:, None, :], _system_means(Z)[None, :],
            None if swaps is None else swaps[:, :1, :])


def _permutation_counts(pair: np.ndarray, Z: np.ndarray, level: str, kind: str,
                        swaps: np.ndarray) -> tuple[float, int, int, int]:
    """Observed delta = r(A) - r(B) and, over the permutations ``swaps``, #(delta >= observed),
    #(delta <= observed), #valid (a pair with fixed system scores: :func:`fixed_system_pair`)."""
    pair, Z, swaps = fixed_system_pair(pair, Z, level, swaps)
    pair = np.stack([_standardize(pair[0]), _standardize(pair[1])])
    r = _level(pair, Z[None], level, kind)
    observed = float(r[0] - r[1])
    if np.isnan(observed):
        raise ValueError(f"the {level}-level {kind} correlation is undefined on the full data for one of the two "
                         "metrics (constant scores or too few units)")
    n_docs, n_systems = Z.shape
    step = _chunk(2, n_docs, n_systems, level, kind)
    counts = run_chunks(f"permutations ({level} {kind})", _permutation_chunk, (pair, Z, level, kind, observed),
                        [(swaps[start:start + step],) for start in range(0, len(swaps), step)])
    ge, le, valid = (sum(c[k] for c in counts) for k in range(3))
    if valid == 0:
        raise ValueError("no permutation gave a defined correlation difference")
    return observed, ge, le, valid


def _pair_counts(a: np.ndarray, b: np.ndarray, Z: np.ndarray, level: str, kind: str,
                 swaps: np.ndarray) -> tuple[int, int, int]:
    """(#(delta* >= observed), #(delta* <= observed), #valid) for H1: a beats b, computed in the canonical order
    of the pair (:func:`_reversed`), so that (a, b) and (b, a) are one computation."""
    if _reversed(a, b):
        _, ge, le, valid = _permutation_counts(np.stack([b, a]), Z, level, kind, swaps)
        return le, ge, valid
    _, ge, le, valid = _permutation_counts(np.stack([a, b]), Z, level, kind, swaps)
    return ge, le, valid


def _permutation_chunk(pair: np.ndarray, Z: np.ndarray, level: str, kind: str, observed: float,
                       m: np.ndarray) -> tuple[int, int, int]:
    """#(delta >= observed), #(delta <= observed) and #valid over the swap masks ``m`` of one chunk."""
    a, b = pair[0], pair[1]
    perm = np.stack([np.where(m, b, a), np.where(m, a, b)])  # (2, chunk, D, S)
    rp = _level(perm, Z, level, kind)
    delta = rp[0] - rp[1]
    ok = ~np.isnan(delta)
    return (int((delta[ok] >= observed - _TIE_TOL).sum()), int((delta[ok] <= observed + _TIE_TOL).sum()),
            int(ok.sum()))


def permutation_test(X_a, X_b, Z, level: str, kind: str = "spearman", n_resamples: int = 1000,
                     seed: int | np.random.Generator = 0, resample: str = "both", add_one: bool = False) -> float:
    """One-sided permutation test that metric A correlates more with the humans than metric B (H1: r(A) > r(B)).

    The test of Deutsch et al. (2021, section 5). Both metrics' matrices are first standardised (z-scores over all
    their cells; this does not change either correlation) so that their scores are exchangeable. Each permutation
    then swaps A's and B's scores, with probability 1/2 independently, for each system (``"systems"``,
    PERM-SYSTEMS: whole columns), each document (``"documents"``, PERM-INPUTS: whole rows) or each (document,
    system) cell (``"both"``, PERM-BOTH, the paper's recommendation and mt-metrics-eval's PermutationSigDiff), and
    recomputes delta = r(A) - r(B). PERM-BOTH swaps cells independently as the code of the paper's experiments
    (sacrerouge ``permute_both``) and mt-metrics-eval do; the authors' later nlpstats library swaps whole systems
    and then whole documents instead. The p-value is the share of permutations with delta >= the observed delta,
    without a +1 correction, as in the paper's code (sacrerouge) and mt-metrics-eval: it can be 0 and then means
    p < 1/n_resamples. ``add_one=True`` gives (count + 1) / (n + 1) instead (Phipson & Smyth, 2010), never 0.

    Parameters
    ----------
    X_a, X_b : array_like
        (n_docs, n_systems) metric matrices, oriented so that higher is better, NaN in the same cells as Z.
    Z : array_like
        (n_docs, n_systems) human scores.
    level, kind
        See :func:`level_correlation`.
    n_resamples : int
    seed : int or numpy.random.Generator
    resample : {"both", "systems", "documents"}
    add_one : bool

    Returns
    -------
    float
        One-sided p-value; identical metrics give 1.0. Permutations without a defined difference are left out.

    Raises
    ------
    ValueError
        On invalid input or when a correlation on the full data is undefined.

    Examples
    --------
    >>> rng = np.random.default_rng(0); Z = rng.normal(size=(20, 10))
    >>> good, bad = Z + 0.1 * rng.normal(size=Z.shape), Z + 2 * rng.normal(size=Z.shape)
    >>> permutation_test(good, bad, Z, "global", "pearson", n_resamples=200, seed=0)
    0.0
    >>> permutation_test(good, good, Z, "global", "pearson", n_resamples=200, seed=0)
    1.0
    """
    level, kind = _choice("level", level, LEVELS), _choice("kind", kind, LEVEL_KINDS)
    resample = _choice("resample", resample, RESAMPLE_METHODS)
    n_resamples = _positive_int("n_resamples", n_resamples)
    pair, Z = _pair(X_a, X_b, Z)
    swaps = _swap_masks(seed, n_resamples, Z, resample)
    ge, _, valid = _pair_counts(pair[0], pair[1], Z, level, kind, swaps)
    return (ge + 1) / (valid + 1) if add_one else ge / valid


def paired_bootstrap_test(X_a, X_b, Z, level: str, kind: str = "spearman", n_resamples: int = 1000,
                          seed: int | np.random.Generator = 0, resample: str = "both") -> float:
    """One-sided paired bootstrap test of H1: r(A) > r(B): the share of resamples where r(A) - r(B) <= 0.

    Both metrics and Z are resampled with the same indices (:func:`bootstrap_samples`, BOOT-BOTH by default);
    resamples where either correlation is undefined are left out. Deutsch et al. (2021, section 5) run the
    bootstrap test of Berg-Kirkpatrick et al. (2012), which counts resamples with delta >= 2 * observed delta
    (the resampled deltas shifted to mean 0); this function reports the simpler share of resamples in which A does
    not beat B, a percentile-interval test that rejects at alpha exactly when the one-sided (1 - alpha) percentile
    interval of the difference lies above 0. The paper finds the permutation test more powerful.

    Parameters
    ----------
    X_a, X_b, Z, level, kind, n_resamples, seed, resample
        As in :func:`permutation_test`.

    Returns
    -------
    float
        One-sided p-value (1.0 for identical metrics).

    Examples
    --------
    >>> rng = np.random.default_rng(0); Z = rng.normal(size=(20, 10))
    >>> good, bad = Z + 0.1 * rng.normal(size=Z.shape), Z + 2 * rng.normal(size=Z.shape)
    >>> paired_bootstrap_test(good, bad, Z, "system", "pearson", n_resamples=200, seed=0)
    0.0
    """
    pair, Z = _pair(X_a, X_b, Z)
    samples = bootstrap_samples(pair, Z, level, kind, resample, n_resamples, seed)
    delta = samples[:, 0] - samples[:, 1]
    ok = delta[~np.isnan(delta)]
    if len(ok) == 0:
        raise ValueError("no bootstrap resample gave a defined correlation difference")
    return float((ok <= _TIE_TOL).mean())


def pairwise_bootstrap_pvalues(X, Z, level: str, kind: str = "spearman", n_resamples: int = 1000,
                               seed: int | np.random.Generator = 0, resample: str = "both") -> np.ndarray:
    """Paired bootstrap p-values for every ordered pair of metrics, from one shared set of resamples.

    ``P[i, j]`` is the p-value of :func:`paired_bootstrap_test` for H1: metric i correlates more than metric j;
    the diagonal is NaN. All metrics are resampled once (the cost of one :func:`bootstrap_samples` call).

    Parameters
    ----------
    X : array_like
        (n_metrics, n_docs, n_systems), oriented so that higher is better.
    Z, level, kind, n_resamples, seed, resample
        As in :func:`bootstrap_samples`.

    Returns
    -------
    numpy.ndarray
        Shape (n_metrics, n_metrics).
    """
    X3, Z, single = _metric_stack(X, Z)
    if single or X3.shape[0] < 2:
        raise ValueError("X must hold at least 2 metrics: shape (n_metrics, n_docs, n_systems)")
    samples = bootstrap_samples(X3, Z, level, kind, resample, n_resamples, seed)
    n = X3.shape[0]
    P = np.full((n, n), np.nan)
    for i in range(n):
        for j in range(n):
            if i != j:
                d = samples[:, i] - samples[:, j]
                d = d[~np.isnan(d)]
                P[i, j] = (d <= _TIE_TOL).mean() if len(d) else np.nan
    return P


def pairwise_permutation_pvalues(X, Z, level: str, kind: str = "spearman", n_resamples: int = 1000,
                                 seed: int | np.random.Generator = 0, resample: str = "both",
                                 add_one: bool = False) -> np.ndarray:
    """Permutation-test p-values (:func:`permutation_test`) for every ordered pair of metrics.

    ``P[i, j]`` is the one-sided p-value for H1: metric i correlates more than metric j; the diagonal is NaN. One
    run of permutations per unordered pair serves both directions: swapping the roles of i and j negates every
    permuted difference, so P[j, i] is the share of permuted differences <= the observed one. Every pair sees the
    same permutation masks, drawn once from ``numpy.random.default_rng(seed)`` (common random numbers; a Generator
    gives one int seed first), and each pair runs in the canonical order of its two matrices, so ``P[i, j]``
    equals ``permutation_test(X[i], X[j], ...)`` with the same seed bit for bit, whatever the other metrics and
    their order.

    Parameters
    ----------
    X : array_like
        (n_metrics, n_docs, n_systems), oriented so that higher is better.
    Z, level, kind, n_resamples, seed, resample, add_one
        As in :func:`permutation_test`.

    Returns
    -------
    numpy.ndarray
        Shape (n_metrics, n_metrics).
    """
    level, kind = _choice("level", level, LEVELS), _choice("kind", kind, LEVEL_KINDS)
    resample = _choice("resample", resample, RESAMPLE_METHODS)
    n_resamples = _positive_int("n_resamples", n_resamples)
    X3, Z, single = _metric_stack(X, Z)
    if single or X3.shape[0] < 2:
        raise ValueError("X must hold at least 2 metrics: shape (n_metrics, n_docs, n_systems)")
    swaps = _swap_masks(seed, n_resamples, Z, resample)  # drawn once, shared by every pair
    n = X3.shape[0]
    P = np.full((n, n), np.nan)
    extra = 1 if add_one else 0
    for i in range(n):
        for j in range(i + 1, n):
            ge, le, valid = _pair_counts(X3[i], X3[j], Z, level, kind, swaps)
            P[i, j] = (ge + extra) / (valid + extra)
            P[j, i] = (le + extra) / (valid + extra)
    return P
