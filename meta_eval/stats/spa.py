"""Soft pairwise accuracy (SPA), the system-level meta-metric of the WMT24 metrics shared task, vectorised.

For every pair of systems (i, j) a one-sided paired permutation test gives the p-value p_ij that system i is better
than system j, once from the human scores (p^h) and once from the metric's scores (p^m), and

    SPA = 1 - C(N, 2)^-1 * sum_{i<j} |p^h_ij - p^m_ij|

over the N systems (Thompson et al. 2024): 1 when the metric is exactly as sure as the humans about every
system pair, lower when it is more or less confident than they are. As in the rest of :mod:`meta_eval`, scores are
(n_docs x n_systems) matrices, NaN where a (document, system) cell is missing (the same cells in metric X and human
Z), several metrics as X of shape (n_metrics, n_docs, n_systems), all oriented so that higher is better.

The permutation test (Thompson et al. 2024; reference code ``mt_metrics_eval/pce.py``,
``compute_pairwise_p_values``, google-research/mt-metrics-eval commit 1b47eab4) is the paired sign-flip test of the
difference of the systems' total (equivalently mean) scores over the documents both have:

    t_ij = sum_d (x_di - x_dj),    t_ij(k) = sum_d s_kd (x_di - x_dj),    p_ij = #{k : t_ij(k) >= t_ij} / K

where s_k in {-1, +1}^D is the k-th of K random sign vectors (flipping s_kd swaps the two systems' scores on
document d). The choices follow the reference:

- one sign vector per document, drawn once and shared by every system pair, by the human scores and by every
  metric (the reference reseeds its generator with the same seed, 4, for the human and each metric); the sign of
  document d is +1 when a float32 uniform draw exceeds 0.5 (the reference's ``rint``), so that ``seed=4`` on complete
  data draws the reference's signs;
- no +1 correction: p = count / K, which can be 0 (p < 1/K); the observed statistic (all signs +1) counts when drawn;
- SPA averages over the pairs i < j in column order, as the reference's upper triangle.

Two things differ. Missing cells: the reference needs every system to have the same segments (it drops segments
without a human score and reshapes); here pair (i, j) uses the documents that both systems have (its test ignores the
signs of the others), which is the reference's test when the missing cells are whole rows. A pair with no shared
document has no p-value (NaN) and is left out of the mean, with its count reported; documents nobody scored are
dropped before the signs are drawn, as the reference drops them. Ties: the reference computes in float32 and
compares exactly, so whether a permuted statistic equal to the observed one counts depends on rounding; here sums are
float64, each document's scores are first centred on their mean over the systems (this leaves every t_ij unchanged)
and a permuted t_ij within 1e-9 times the pair's summed absolute (centred) scores of t_ij counts as equal. A p-value
can thus differ from the reference by k/K where the reference's rounding breaks k exact ties.

Significance between two metrics (:func:`spa_permutation_test`, :func:`pairwise_spa_pvalues`) follows mt-metrics-eval
for WMT24 (``data.CompareMetricsWithPairwiseConfidenceError`` -> ``stats.PermutationSigDiff`` with the SPA function
and ``average_by='none'``): both metrics' matrices are z-scored over all their cells, each resample swaps the two
metrics' scores in every (document, system) cell independently with probability 1/2 (PERM-BOTH of Deutsch et al.,
2021) and recomputes both SPAs with the same sign vectors (so the human p-values are computed once), and the p-value
for "A has the higher SPA" is the share of resamples with SPA(A*) - SPA(B*) >= the observed difference. WMT24's
``Task`` checks every 100 resamples and stops early when that share is below 0.02 or above 0.5
(``block_size=100``); here that is an option, off by default, and the number of resamples used is returned.

Every random function takes ``seed``, an int or a :class:`numpy.random.Generator` (never the global RNG). The sign
vectors are drawn first, so the same seed gives the same SPA in every function here; ``sign_seed`` draws them from
a generator of their own instead, apart from the resampling (WMT24 draws the signs with seed 4 whatever the seed of
its significance tests: ``meta-eval run --spa-seed 4``, the ``wmt24-spa`` protocol); the resampling indices are all
drawn before any work, so the numbers do not depend on the chunk size used to bound memory.

References
----------
B. Thompson, N. Mathur, D. Deutsch and H. Khayrallah (2024). Improving Statistical Significance in Human Evaluation
of Automatic Metrics via Soft Pairwise Accuracy. Proceedings of the Ninth Conference on Machine Translation (WMT24)
(arXiv:2409.09598).
M. Freitag et al. (2024). Are LLMs Breaking MT Metrics? Results of the WMT24 Metrics Shared Task. WMT24 (SPA as
the system-level meta-metric).
google-research/mt-metrics-eval: ``mt_metrics_eval/pce.py`` (B. Thompson), ``stats.py``
(``PairwiseConfidenceError``, ``PermutationSigDiff``), ``data.py`` (``CompareMetricsWithPairwiseConfidenceError``),
``tasks.py`` (``Task``, ``WMT24OnWMT23``).
D. Deutsch, R. Dror and D. Roth (2021). A Statistical Analysis of Summarization Evaluation Metrics using Resampling
Methods. TACL 9:1132-1146 (PERM-BOTH).

Examples
--------
>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> Z = rng.normal(size=8) + rng.normal(size=(50, 8))  # 8 systems of different quality, 50 documents
>>> good, noisy = Z + 0.2 * rng.normal(size=Z.shape), Z + 3 * rng.normal(size=Z.shape)
>>> r = soft_pairwise_accuracy(np.stack([Z, good, noisy]), Z, n_permutations=1000, seed=0)
>>> r.spa.round(3).tolist(), r.n_pairs, r.n_permutations  # the humans themselves, a good and a noisy metric
([1.0, 0.991, 0.835], 28, 1000)
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from meta_eval.scoring.chunks import run_chunks
from meta_eval.stats.resampling import (_CHUNK_CELLS, _TIE_TOL, _confidence, _float_array, _metric_stack, _pair,
                                  _exponents, _positive_int, _reversed, _rng, _standardize)

__all__ = ["SPAResult", "SPATest", "PairwiseSPA", "SPAInterval", "permutation_signs", "exact_signs", "pair_pvalues",
           "system_pair_pvalues", "spa_from_pvalues", "soft_pairwise_accuracy", "spa_permutation_test",
           "pairwise_spa_pvalues", "spa_bootstrap_samples", "spa_bootstrap_ci"]

_REL_TOL = 1e-9  # permuted statistics within this share of the pair's summed |scores| of the observed one are ties
_EXACT_MAX_DOCS = 16  # exact_signs: 2**16 sign vectors at most


class SPAResult(NamedTuple):
    """SPA with what it was computed from.

    ``spa`` is a float for one metric, an array of shape (n_metrics,) for several; ``n_pairs`` the system pairs
    averaged over; ``n_undefined_pairs`` the pairs left out because the two systems share no document;
    ``n_permutations`` the sign vectors per pair test (K)."""

    spa: float | np.ndarray
    n_pairs: int
    n_undefined_pairs: int
    n_permutations: int


class SPATest(NamedTuple):
    """A one-sided test of H1: SPA(A) > SPA(B): ``pvalue``, ``delta`` = SPA(A) - SPA(B) on the data,
    ``n_resamples`` used (fewer than asked after an early stop) and ``n_permutations`` per SPA."""

    pvalue: float
    delta: float
    n_resamples: int
    n_permutations: int


class PairwiseSPA(NamedTuple):
    """Tests between every two metrics: ``pvalues[i, j]`` for H1: SPA(i) > SPA(j) (NaN diagonal), ``n_resamples[i,
    j]`` resamples used for that pair (0 on the diagonal), ``spa`` each metric's SPA, ``n_permutations`` per SPA."""

    pvalues: np.ndarray
    n_resamples: np.ndarray
    spa: np.ndarray
    n_permutations: int


class SPAInterval(NamedTuple):
    """Percentile bootstrap interval of SPA: floats for one metric, arrays of shape (n_metrics,) for several;
    ``n_resamples`` the resamples with a defined SPA, ``n_permutations`` per SPA."""

    lower: float | np.ndarray
    upper: float | np.ndarray
    point: float | np.ndarray
    n_resamples: int
    n_permutations: int


# ----------------------------------------------------------------------------------------------------- helpers


class _Layout(NamedTuple):
    """The system pairs i < j and whether the matrix has no missing cell.

    Complete matrices are summed per system ("columns" = systems) and pair statistics are differences of two
    columns, as in the reference; with missing cells every pair needs its own shared documents, so the columns are
    the pairs' per-document differences, zero where either system is missing."""

    i: np.ndarray
    j: np.ndarray
    complete: bool


def _layout(valid: np.ndarray) -> _Layout:
    i, j = np.triu_indices(valid.shape[-1], 1)
    return _Layout(i, j, bool(valid.all()))


def _columns(M: np.ndarray, lay: _Layout) -> np.ndarray:
    """(..., D, S) -> (..., D, C): the systems (complete data) or the pairs' differences, NaN -> 0."""
    if lay.complete:
        return M
    d = M[..., lay.i] - M[..., lay.j]
    return np.where(np.isnan(d), 0.0, d)


def _signed_sums(signs: np.ndarray, C: np.ndarray) -> np.ndarray:
    """sum_d s_kd C[..., d, c] for every sign vector k: (K, D) and (..., D, C) -> (C, ..., K), one BLAS product.

    Columns first and permutations last, so that each pair's permuted statistics are contiguous."""
    lead, (n_docs, n_cols) = C.shape[:-2], C.shape[-2:]
    flat = np.moveaxis(C, -1, 0).reshape(-1, n_docs)
    return (flat @ signs.T).reshape(n_cols, *lead, len(signs))


def _column_sums(C: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(..., D, C) -> the observed column sums and the sums of |values| (the rounding scale), each (C, ...)."""
    return np.moveaxis(C.sum(axis=-2), -1, 0), np.moveaxis(np.abs(C).sum(axis=-2), -1, 0)


def _compare(null: np.ndarray, observed: np.ndarray, scale: np.ndarray, both: bool):
    tol = _REL_TOL * scale
    ge = np.count_nonzero(null >= (observed - tol)[..., None], axis=-1)
    return (ge, np.count_nonzero(null <= (observed + tol)[..., None], axis=-1)) if both else (ge,)


def _counts(partial: np.ndarray, total: np.ndarray, scale: np.ndarray, lay: _Layout, both: bool = False):
    """#(t_ij(k) >= t_ij) (and #(t_ij(k) <= t_ij)) per pair, shape (..., n_pairs), from the signed column sums
    (C, ..., K), the observed column sums (C, ...) and the rounding scale (C, ...)."""
    if lay.complete:  # pair (a, b > a): column a minus column b, one system a at a time (contiguous slices)
        parts = [_compare(partial[a] - partial[a + 1:], total[a] - total[a + 1:], scale[a] + scale[a + 1:], both)
                 for a in range(len(partial) - 1)]
        out = [np.concatenate(p) for p in zip(*parts)]
    else:
        out = list(_compare(partial, total, scale, both))
    out = [np.moveaxis(o, 0, -1) for o in out]
    return tuple(out) if both else out[0]


def _matrix_counts(M: np.ndarray, signs: np.ndarray, lay: _Layout, both: bool = False):
    """Counts for each matrix of a stack M (B, D, S), chunked over B to bound memory."""
    n_perm, n_pairs = len(signs), len(lay.i)
    step = max(1, _CHUNK_CELLS // max(1, n_perm * (n_pairs + M.shape[-1])))
    ge, le = [], []
    for start in range(0, len(M), step):
        C = _columns(M[start:start + step], lay)
        out = _counts(_signed_sums(signs, C), *_column_sums(C), lay, both)
        ge.append(out[0] if both else out)
        if both:
            le.append(out[1])
    return (np.concatenate(ge), np.concatenate(le)) if both else np.concatenate(ge)


def _spa(ge_human: np.ndarray, ge_metric: np.ndarray, n_perm: int, defined: np.ndarray) -> np.ndarray:
    """1 - mean over the defined pairs of |p_h - p_m|, from the counts (..., n_pairs); NaN with no defined pair."""
    diff = np.abs(ge_metric - ge_human) / n_perm
    n = defined.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return 1.0 - np.where(defined, diff, 0.0).sum(axis=-1) / n


def _draw_signs(rng: np.random.Generator, n_perm: int, n_docs: int) -> np.ndarray:
    u = rng.random((n_perm, n_docs), dtype=np.float32)
    return np.where(u > np.float32(0.5), 1.0, -1.0)  # the reference's 2 * rint(u) - 1 (rint(0.5) == 0)


def _centre(M: np.ndarray) -> np.ndarray:
    """Each document's scores minus their mean over the systems (leaves every pair difference unchanged); rows
    with no score stay NaN. A matrix of scores near 1e308 (or 1e-200) is first scaled by a power of 2
    (:func:`meta_eval.stats.resampling._exponents`; exact, so every p-value and SPA is unchanged): its means and
    sums over the documents then cannot overflow."""
    e = _exponents(np.where(np.isnan(M), 0.0, np.abs(M)).max(axis=(-2, -1)))
    M = M if e is None else np.ldexp(M, -e[..., None, None])
    scored = (~np.isnan(M)).any(axis=-1, keepdims=True)
    mean = np.nanmean(np.where(scored, M, 0.0), axis=-1, keepdims=True)
    return M - mean


def _scored_rows(Z: np.ndarray) -> np.ndarray:
    """Indices of the documents some system has; ValueError for fewer than 2 systems or no scored document."""
    if Z.shape[-1] < 2:
        raise ValueError(f"SPA compares systems in pairs: need at least 2 systems (columns), got shape {Z.shape}")
    rows = np.flatnonzero((~np.isnan(Z)).any(axis=-1))
    if len(rows) == 0:
        raise ValueError("every score is missing (NaN): no document to compare the systems on")
    return rows


def _shared(valid: np.ndarray, lay: _Layout) -> np.ndarray:
    """(..., D, S) -> (..., n_pairs): True where the two systems share at least one document."""
    return (valid[..., lay.i] & valid[..., lay.j]).any(axis=-2)


def _require_defined(defined: np.ndarray, n_systems: int) -> None:
    if not defined.any():
        raise ValueError(f"SPA is undefined: none of the {len(defined)} pairs of the {n_systems} systems share a "
                         "scored document")


# ---------------------------------------------------------------------------------------------- pair p-values


def permutation_signs(n_permutations: int, n_docs: int, seed: int | np.random.Generator = 0) -> np.ndarray:
    """Random sign vectors for the paired permutation test, one per row: +1 keeps a document, -1 swaps its systems.

    Each sign is +1 when a float32 uniform draw from ``numpy.random.default_rng(seed)`` exceeds 0.5, as in the
    reference (``pce.compute_pairwise_p_values`` rounds the draws with ``rint``); ``seed=4``, the reference's
    default, gives its signs.

    Parameters
    ----------
    n_permutations : int
        K, the number of sign vectors.
    n_docs : int
        D, the number of documents.
    seed : int or numpy.random.Generator

    Returns
    -------
    numpy.ndarray
        (n_permutations, n_docs) of -1.0 and +1.0.

    Examples
    --------
    >>> permutation_signs(3, 4, seed=0)
    array([[ 1.,  1.,  1., -1.],
           [-1., -1., -1., -1.],
           [-1.,  1.,  1.,  1.]])
    """
    return _draw_signs(_rng(seed), _positive_int("n_permutations", n_permutations),
                       _positive_int("n_docs", n_docs))


def exact_signs(n_docs: int) -> np.ndarray:
    """All 2**n_docs sign vectors: with :func:`pair_pvalues` they give the exact permutation p-values.

    Parameters
    ----------
    n_docs : int
        At most 16.

    Examples
    --------
    >>> exact_signs(2)
    array([[-1., -1.],
           [-1.,  1.],
           [ 1., -1.],
           [ 1.,  1.]])
    """
    n = _positive_int("n_docs", n_docs)
    if n > _EXACT_MAX_DOCS:
        raise ValueError(f"exact enumeration is limited to {_EXACT_MAX_DOCS} documents (2**{_EXACT_MAX_DOCS} sign "
                         f"vectors), got {n}; draw random signs with permutation_signs")
    bits = (np.arange(2 ** n)[:, None] >> np.arange(n - 1, -1, -1)) & 1
    return 2.0 * bits - 1.0


def pair_pvalues(Z, signs) -> np.ndarray:
    """Paired permutation-test p-values for every ordered pair of systems, with given sign vectors.

    ``P[i, j] = #{k : t_ij(k) >= t_ij} / K`` with t_ij = sum_d (z_di - z_dj) over the documents d both systems have
    and t_ij(k) = sum_d s_kd (z_di - z_dj): the one-sided p-value for "system i is better than system j" of
    Thompson et al. (2024); the reference code fills only i < j. Equal values count (see the module notes on ties),
    so P[i, j] + P[j, i] = 1 + (the share of ties).

    Parameters
    ----------
    Z : array_like
        (n_docs, n_systems), or a stack (n_matrices, n_docs, n_systems); NaN where a cell is missing.
    signs : array_like
        (K, n_docs) of -1 and +1, e.g. :func:`permutation_signs` or :func:`exact_signs`.

    Returns
    -------
    numpy.ndarray
        (n_systems, n_systems) (or one such matrix per stacked matrix); NaN on the diagonal and for pairs that
        share no document.

    Examples
    --------
    The worked example of the reference (``pce.compute_pairwise_p_values`` docstring): system A beats B by 0.6 on
    each of 5 segments, t = 3.0, and only the all-(+1) sign vector reaches it: exactly 1 in 2**5.

    >>> Z = np.array([[0.8, 0.2], [0.9, 0.3], [0.7, 0.1], [1.0, 0.4], [0.6, 0.0]])
    >>> P = pair_pvalues(Z, exact_signs(5))
    >>> float(P[0, 1]), float(P[1, 0])
    (0.03125, 1.0)
    """
    Z = _float_array("Z", Z, 2)
    if Z.ndim > 3:
        raise ValueError(f"Z must be (n_docs, n_systems) or (n_matrices, n_docs, n_systems), got shape {Z.shape}")
    try:
        S = np.asarray(signs, dtype=float)
    except (TypeError, ValueError):
        raise ValueError("signs must be a numeric array of -1 and +1") from None
    if S.ndim != 2 or S.shape[1] != Z.shape[-2] or len(S) == 0:
        raise ValueError(f"signs must have shape (K >= 1, n_docs={Z.shape[-2]}), got {S.shape}")
    if not np.isin(S, (-1.0, 1.0)).all():
        raise ValueError("signs must hold only -1 and +1")
    single = Z.ndim == 2
    Z3 = Z[None] if single else Z
    if Z3.shape[-1] < 1 or Z3.shape[-2] < 1:
        raise ValueError(f"empty input: Z shape {Z.shape}")
    valid = ~np.isnan(Z3)
    if (valid != valid[0]).any():  # one layout for the stack
        out = np.stack([pair_pvalues(z, S) for z in Z3])
        return out[0] if single else out
    lay = _layout(valid[0])
    ge, le = _matrix_counts(_centre(Z3), S, lay, both=True)
    n = Z3.shape[-1]
    P = np.full((len(Z3), n, n), np.nan)
    undefined = ~_shared(valid[0], lay)
    P[:, lay.i, lay.j] = np.where(undefined, np.nan, ge / len(S))
    P[:, lay.j, lay.i] = np.where(undefined, np.nan, le / len(S))
    return P[0] if single else P


def system_pair_pvalues(Z, n_permutations: int = 1000, seed: int | np.random.Generator = 0) -> np.ndarray:
    """One-sided paired permutation-test p-values for every ordered pair of systems (Thompson et al. 2024).

    :func:`pair_pvalues` with K = ``n_permutations`` sign vectors from :func:`permutation_signs`, drawn for the
    documents some system has (documents nobody scored are dropped first, as the reference drops them). Vectorised
    over all pairs and permutations: one matrix product of the (K x D) signs with the (D x systems) scores, or with
    the (D x pairs) per-document differences when cells are missing.

    Parameters
    ----------
    Z : array_like
        (n_docs, n_systems), higher is better, NaN where a cell is missing.
    n_permutations : int
    seed : int or numpy.random.Generator
        ``seed=4`` on complete data uses the sign vectors of the reference code.

    Returns
    -------
    numpy.ndarray
        (n_systems, n_systems): ``P[i, j]`` the p-value for "system i is better than system j"; NaN on the diagonal
        and for pairs without a shared document.

    Raises
    ------
    ValueError
        For fewer than 2 systems, no scored document, infinite values or a bad n_permutations or seed.

    Examples
    --------
    Six documents, three systems. By hand: system 0 beats 1 and 2 on every document, so only the all-(+1) sign
    vector reaches t_01 = 17 and t_02 = 12 (p = 1/64). System 2 minus system 1 is (1, 1, -1, 2, 2, 0), t_21 = 5: a
    permuted sum reaches 5 when at most one document with |difference| 1 points against system 2 (4 of the 32
    patterns of the non-zero documents, times 2 for the document with difference 0), p_21 = 8/64; and p_12 = 62/64
    (only the sum -7, 2 of 64 sign vectors, is below -5).

    >>> Z = np.array([[3., 1, 2], [4, 1, 2], [5, 2, 1], [3, 0, 2], [4, 1, 3], [5, 2, 2]])
    >>> pair_pvalues(Z, exact_signs(6)) * 64
    array([[nan,  1.,  1.],
           [64., nan, 62.],
           [64.,  8., nan]])
    >>> system_pair_pvalues(Z, n_permutations=2000, seed=0).round(2)  # Monte Carlo: 1/64 = 0.016, 62/64 = 0.969
    array([[ nan, 0.02, 0.02],
           [1.  ,  nan, 0.97],
           [1.  , 0.13,  nan]])
    """
    Z = _float_array("Z", Z, 2)
    if Z.ndim != 2:
        raise ValueError(f"Z must be one (n_docs, n_systems) matrix, got shape {Z.shape}")
    n_permutations = _positive_int("n_permutations", n_permutations)
    rows = _scored_rows(Z)
    return pair_pvalues(Z[rows], _draw_signs(_rng(seed), n_permutations, len(rows)))


def spa_from_pvalues(P_human, P_metric) -> float:
    """SPA from two p-value matrices: 1 - the mean over the pairs i < j of |P_human[i, j] - P_metric[i, j]|.

    The reference's ``compute_one_minus_pce`` (Thompson et al. 2024), with pairs whose p-value is NaN in both
    matrices (no shared document) left out.

    Parameters
    ----------
    P_human, P_metric : array_like
        (n_systems, n_systems), as from :func:`system_pair_pvalues`; only the upper triangle is used.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        On shapes that differ or are not square, p-values outside [0, 1], NaN in one matrix only, or no defined pair.

    Examples
    --------
    >>> spa_from_pvalues([[np.nan, 0.01, 0.2], [0, np.nan, 0.5], [0, 0, np.nan]],
    ...                  [[np.nan, 0.03, 0.4], [0, np.nan, 0.5], [0, 0, np.nan]])  # 1 - (0.02 + 0.2 + 0) / 3
    0.9266666666666666
    """
    mats = []
    for name, P in (("P_human", P_human), ("P_metric", P_metric)):
        try:
            arr = np.asarray(P, dtype=float)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be a numeric matrix") from None
        if arr.ndim != 2 or arr.shape[0] != arr.shape[1] or arr.shape[0] < 2:
            raise ValueError(f"{name} must be a square (n_systems >= 2) matrix, got shape {arr.shape}")
        mats.append(arr)
    if mats[0].shape != mats[1].shape:
        raise ValueError(f"P_human {mats[0].shape} and P_metric {mats[1].shape} differ in shape")
    i, j = np.triu_indices(mats[0].shape[0], 1)
    h, m = mats[0][i, j], mats[1][i, j]
    if (np.isnan(h) != np.isnan(m)).any():
        raise ValueError("P_human and P_metric must be NaN for the same pairs (no shared document)")
    ok = ~np.isnan(h)
    if ((h[ok] < 0) | (h[ok] > 1) | (m[ok] < 0) | (m[ok] > 1)).any():
        raise ValueError("p-values must be in [0, 1]")
    if not ok.any():
        raise ValueError("no pair of systems has a p-value in both matrices")
    return float(1.0 - np.abs(h[ok] - m[ok]).mean())


# ------------------------------------------------------------------------------------------------------- SPA


def _prepared(X, Z, x_name: str = "X"):
    """Validate, drop unscored documents; return X3, Z, single, layout, defined pairs."""
    X3, Z2, single = _metric_stack(X, Z, x_name)
    rows = _scored_rows(Z2)
    X3, Z2 = X3[:, rows], Z2[rows]
    valid = ~np.isnan(Z2)
    lay = _layout(valid)
    defined = _shared(valid, lay)
    _require_defined(defined, Z2.shape[1])
    return X3, Z2, single, lay, defined


def soft_pairwise_accuracy(X, Z, n_permutations: int = 1000, seed: int | np.random.Generator = 0) -> SPAResult:
    """Soft pairwise accuracy of one or several metrics against human scores (Thompson et al. 2024).

    SPA = 1 - C(N, 2)^-1 * sum_{i<j} |p^h_ij - p^m_ij|, the p-values from :func:`pair_pvalues` with one set of K
    sign vectors shared by the human scores and every metric (as the reference, which reseeds with the same seed),
    so the human p-values are computed once for a stack and a metric equal to the humans (or a positive affine
    map of them) gets SPA = 1. Pairs of systems with no shared document are left out of the mean and
    counted in ``n_undefined_pairs``. SPA is in [0, 1]. The cost is one (K x D) by (D x systems) matrix product per
    matrix and K comparisons per system pair (pairs when cells are missing).

    Parameters
    ----------
    X : array_like
        (n_docs, n_systems) or (n_metrics, n_docs, n_systems), oriented so that higher is better, NaN in the same
        cells as Z.
    Z : array_like
        (n_docs, n_systems) human scores.
    n_permutations : int
        K; 1,000 in the reference and WMT24.
    seed : int or numpy.random.Generator

    Returns
    -------
    SPAResult
        ``(spa, n_pairs, n_undefined_pairs, n_permutations)``; ``spa`` a float for one metric, an array of shape
        (n_metrics,) for several.

    Raises
    ------
    ValueError
        On invalid input (shapes, NaN patterns, infinite values, parameters), fewer than 2 systems, or no pair of
        systems sharing a document.

    Examples
    --------
    >>> Z = np.array([[3., 1, 2], [4, 1, 2], [5, 2, 1], [3, 0, 2], [4, 1, 3], [5, 2, 2]])
    >>> soft_pairwise_accuracy(2 * Z + 1, Z, n_permutations=500)
    SPAResult(spa=1.0, n_pairs=3, n_undefined_pairs=0, n_permutations=500)
    >>> flipped = Z[:, [0, 2, 1]]  # the metric swaps the two weaker systems: p_12 = 8/64 where the humans have 62/64
    >>> spa_from_pvalues(pair_pvalues(Z, exact_signs(6)), pair_pvalues(flipped, exact_signs(6)))  # 1 - (54/64) / 3
    0.71875
    >>> round(soft_pairwise_accuracy(flipped, Z, n_permutations=2000, seed=0).spa, 2)  # Monte Carlo
    0.72
    """
    n_permutations = _positive_int("n_permutations", n_permutations)
    X3, Z2, single, lay, defined = _prepared(X, Z)
    signs = _draw_signs(_rng(seed), n_permutations, Z2.shape[0])
    ge = _matrix_counts(_centre(np.concatenate([Z2[None], X3])), signs, lay)
    spa = _spa(ge[0], ge[1:], n_permutations, defined)
    n_pairs = int(defined.sum())
    return SPAResult(float(spa[0]) if single else spa, n_pairs, len(defined) - n_pairs, n_permutations)


# ------------------------------------------------------------------------------------------- significance test


def _early(block_size, early_min, early_max, n_resamples: int):
    if block_size is None:
        return n_resamples, 0.0, 1.0
    block = _positive_int("block_size", block_size)
    try:
        lo, hi = float(early_min), float(early_max)
    except (TypeError, ValueError):
        raise ValueError(f"early_min and early_max must be numbers, got {early_min!r}, {early_max!r}") from None
    if not 0.0 <= lo <= hi <= 1.0:
        raise ValueError(f"need 0 <= early_min <= early_max <= 1, got {early_min!r}, {early_max!r}")
    return block, lo, hi


class _SwapTest:
    """SPA(A*) - SPA(B*) for swap masks of two (z-scored) metric matrices, by linearity of the signed sums:
    A* = A + W(B - A), B* = B - W(B - A), so both need one matrix product of the signs with W(B - A)."""

    def __init__(self, A: np.ndarray, B: np.ndarray, signs: np.ndarray, lay: _Layout, defined: np.ndarray,
                 ge_human: np.ndarray):
        self.signs, self.lay, self.defined, self.ge_human = signs, lay, defined, ge_human
        CA, CB = _columns(A, lay), _columns(B, lay)
        self.delta = B - A  # NaN in the missing cells
        self.nan0 = self.delta * 0.0  # 0, NaN in the missing cells
        self.pA, self.pB = _signed_sums(signs, CA), _signed_sums(signs, CB)  # (C, K)
        (self.tA, sA), (self.tB, sB) = _column_sums(CA), _column_sums(CB)  # (C,)
        self.scale = 2.0 * (sA + sB)  # bounds the |scores| sums of A* and B*
        n_perm = len(signs)
        self.observed = float(self._spa(self.pA, self.tA) - self._spa(self.pB, self.tB))
        self.step = max(1, _CHUNK_CELLS // max(1, n_perm * (len(lay.i) + A.shape[-1]) + A.size))

    def _spa(self, partial, total):
        scale = self.scale.reshape(self.scale.shape + (1,) * (total.ndim - 1))
        ge = _counts(partial, total, np.broadcast_to(scale, total.shape), self.lay)
        return _spa(self.ge_human, ge, len(self.signs), self.defined)

    def deltas(self, masks: np.ndarray) -> np.ndarray:
        out = []
        for start in range(0, len(masks), self.step):
            W = _columns(np.where(masks[start:start + self.step], self.delta, self.nan0), self.lay)
            Q = _signed_sums(self.signs, W)  # (C, c, K)
            tW = _column_sums(W)[0]  # (C, c)
            pA, pB, tA, tB = self.pA[:, None], self.pB[:, None], self.tA[:, None], self.tB[:, None]
            out.append(self._spa(pA + Q, tA + tW) - self._spa(pB - Q, tB - tW))
        return np.concatenate(out)


def _run_test(test: _SwapTest, masks: np.ndarray, block: int, lo: float, hi: float,
              a_better: bool) -> tuple[int, int, int]:
    """#(delta* >= observed), #(delta* <= observed), resamples used; stops after a block when the p-value of the
    direction a_better (A > B if True, else B > A) is below lo or above hi."""
    ge = le = used = 0
    for start in range(0, len(masks), block):
        d = test.deltas(masks[start:start + block])
        ge += int((d >= test.observed - _TIE_TOL).sum())
        le += int((d <= test.observed + _TIE_TOL).sum())
        used += len(d)
        p = (ge if a_better else le) / used
        if used < len(masks) and (p < lo or p > hi):
            break
    return ge, le, used


def _signs(rng: np.random.Generator, sign_seed, n_permutations: int, n_docs: int) -> np.ndarray:
    """The K sign vectors: from ``rng`` (drawn first, before any resampling), or from their own generator seeded
    with ``sign_seed`` (WMT24 draws them with seed 4, apart from the resampling's seed)."""
    return _draw_signs(rng if sign_seed is None else _rng(sign_seed), n_permutations, n_docs)


def _test_setup(X3: np.ndarray, Z2: np.ndarray, lay: _Layout, rng: np.random.Generator, n_permutations: int,
                sign_seed=None):
    """The sign vectors (drawn first), the human counts (once) and the z-scored metric matrices."""
    signs = _signs(rng, sign_seed, n_permutations, Z2.shape[0])
    ge_human = _matrix_counts(_centre(Z2[None]), signs, lay)[0]
    return signs, ge_human, np.stack([_standardize(x) for x in X3])


def spa_permutation_test(X_a, X_b, Z, n_resamples: int = 1000, n_permutations: int = 1000,
                         seed: int | np.random.Generator = 0, block_size: int | None = None, early_min: float = 0.02,
                         early_max: float = 0.5, add_one: bool = False, sign_seed: int | None = None) -> SPATest:
    """One-sided permutation test that metric A has a higher SPA than metric B, as WMT24 ranks metrics by SPA.

    mt-metrics-eval's ``PermutationSigDiff`` with the SPA function (module notes): both matrices are z-scored over
    their cells (SPA is unchanged), each of ``n_resamples`` resamples swaps A's and B's scores in every (document,
    system) cell independently with probability 1/2 (PERM-BOTH), and both SPAs are recomputed with the same K sign
    vectors as on the data. The p-value is #(SPA(A*) - SPA(B*) >= SPA(A) - SPA(B)) / n, without a +1 correction as
    in the reference (0 then means p < 1/n); ``add_one=True`` gives (count + 1) / (n + 1). The reference draws the
    swaps from numpy's global RNG; here one generator from ``seed`` draws the K sign vectors
    (:func:`permutation_signs`) and then the swaps, ``rng.random((n_resamples, n_docs, n_systems)) < 0.5`` over the
    scored documents.

    With ``block_size`` set, the resamples run in blocks and stop after a block when the p-value so far of the
    metric with the higher SPA is below ``early_min`` or above ``early_max`` (WMT24: ``block_size=100``, 0.02,
    0.5); ``n_resamples`` in the result says how many ran. The pair runs in the canonical order of its two
    matrices, so the test of (B, A) is this one read from its other tail (:func:`pairwise_spa_pvalues`).

    Parameters
    ----------
    X_a, X_b : array_like
        (n_docs, n_systems) metric matrices, higher is better, NaN in the same cells as Z.
    Z : array_like
        (n_docs, n_systems) human scores.
    n_resamples : int
        Swap resamples (the reference's k).
    n_permutations : int
        K sign vectors per SPA.
    seed : int or numpy.random.Generator
    block_size : int or None
    early_min, early_max : float
    add_one : bool

    Returns
    -------
    SPATest
        ``(pvalue, delta, n_resamples, n_permutations)``; a metric against itself gives p = 1.

    Raises
    ------
    ValueError
        On invalid input or parameters (see :func:`soft_pairwise_accuracy`).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> Z = rng.normal(size=8) + rng.normal(size=(40, 8))
    >>> good, noisy = Z + 0.2 * rng.normal(size=Z.shape), Z + 3 * rng.normal(size=Z.shape)
    >>> t = spa_permutation_test(good, noisy, Z, n_resamples=200, n_permutations=200, seed=0)
    >>> t.pvalue, round(t.delta, 3), t.n_resamples
    (0.0, 0.096, 200)
    >>> spa_permutation_test(good, good, Z, n_resamples=50, n_permutations=200).pvalue
    1.0
    """
    n_resamples = _positive_int("n_resamples", n_resamples)
    n_permutations = _positive_int("n_permutations", n_permutations)
    block, lo, hi = _early(block_size, early_min, early_max, n_resamples)
    pair, Z2 = _pair(X_a, X_b, Z)
    X3, Z2, _, lay, defined = _prepared(pair, Z2)
    rng = _rng(seed)
    signs, ge_human, std = _test_setup(X3, Z2, lay, rng, n_permutations, sign_seed)
    masks = rng.random((n_resamples, *Z2.shape)) < 0.5
    ge, le, used, observed = _pair_test(X3[0], X3[1], std[0], std[1], signs, lay, defined, ge_human, masks, block,
                                        lo, hi)
    p = (ge + 1) / (used + 1) if add_one else ge / used
    return SPATest(float(p), observed, used, n_permutations)


def _pair_test(a, b, std_a, std_b, signs, lay, defined, ge_human, masks, block, lo, hi):
    """(#(delta* >= observed), #(delta* <= observed), resamples used, SPA(a) - SPA(b)) for H1: a beats b, run in
    the canonical order of the pair (:func:`meta_eval.stats.resampling._reversed`) with early stopping on the
    p-value of the metric with the higher SPA, so that (a, b) and (b, a) are one computation."""
    flip = _reversed(a, b)
    test = _SwapTest(std_b, std_a, signs, lay, defined, ge_human) if flip else \
        _SwapTest(std_a, std_b, signs, lay, defined, ge_human)
    ge, le, used = _run_test(test, masks, block, lo, hi, a_better=test.observed >= 0)
    return (le, ge, used, -test.observed) if flip else (ge, le, used, test.observed)


def pairwise_spa_pvalues(X, Z, n_resamples: int = 1000, n_permutations: int = 1000,
                         seed: int | np.random.Generator = 0, block_size: int | None = None,
                         early_min: float = 0.02, early_max: float = 0.5, add_one: bool = False, sign_seed: int | None = None) -> PairwiseSPA:
    """:func:`spa_permutation_test` p-values for every ordered pair of metrics, for
    :func:`meta_eval.stats.clusters.significance_clusters` (as
    :func:`meta_eval.stats.resampling.pairwise_permutation_pvalues`).

    ``pvalues[i, j]`` is the one-sided p-value for H1: SPA(i) > SPA(j); the diagonal is NaN. All metrics share one
    set of K sign vectors (drawn first from ``seed``; the human p-values are computed once), so ``spa`` equals
    :func:`soft_pairwise_accuracy` with the same seed. One run of swap resamples per unordered pair serves both
    directions: exchanging the roles of i and j negates every resampled difference, so ``pvalues[j, i]`` is the
    share of differences <= the observed one. Every pair sees the same swap masks, drawn once after the signs
    (common random numbers), and runs in the canonical order of its two matrices, so ``pvalues[i, j]`` equals
    :func:`spa_permutation_test` of (X[i], X[j]) with the same seed and early stopping bit for bit, whatever the
    other metrics. With ``block_size``, early stopping looks at the p-value of the metric with the higher SPA, as
    WMT24 does; ``n_resamples[i, j]`` says how many resamples each pair used.

    Parameters
    ----------
    X : array_like
        (n_metrics >= 2, n_docs, n_systems), higher is better.
    Z, n_resamples, n_permutations, seed, block_size, early_min, early_max, add_one
        As in :func:`spa_permutation_test`.

    Returns
    -------
    PairwiseSPA
        ``(pvalues, n_resamples, spa, n_permutations)``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> Z = rng.normal(size=8) + rng.normal(size=(40, 8))
    >>> X = np.stack([Z + s * rng.normal(size=Z.shape) for s in (0.2, 3.0, 3.0)])
    >>> r = pairwise_spa_pvalues(X, Z, n_resamples=100, n_permutations=200, seed=0)
    >>> bool(r.pvalues[0, 1] < 0.05 and r.pvalues[0, 2] < 0.05 and r.pvalues[1, 0] > 0.5)
    True
    """
    n_resamples = _positive_int("n_resamples", n_resamples)
    n_permutations = _positive_int("n_permutations", n_permutations)
    block, lo, hi = _early(block_size, early_min, early_max, n_resamples)
    X3, Z2, single, lay, defined = _prepared(X, Z)
    if single or len(X3) < 2:
        raise ValueError("X must hold at least 2 metrics: shape (n_metrics, n_docs, n_systems)")
    rng = _rng(seed)
    signs, ge_human, std = _test_setup(X3, Z2, lay, rng, n_permutations, sign_seed)
    n = len(X3)
    spa = _spa(ge_human, _matrix_counts(std, signs, lay), n_permutations, defined)
    P, N = np.full((n, n), np.nan), np.zeros((n, n), dtype=int)
    extra = 1 if add_one else 0
    masks = rng.random((n_resamples, *Z2.shape)) < 0.5  # drawn once: every pair sees the same swaps
    for a in range(n):
        for b in range(a + 1, n):
            ge, le, used, _ = _pair_test(X3[a], X3[b], std[a], std[b], signs, lay, defined, ge_human, masks, block,
                                         lo, hi)
            P[a, b], P[b, a] = (ge + extra) / (used + extra), (le + extra) / (used + extra)
            N[a, b] = N[b, a] = used
    return PairwiseSPA(P, N, spa, n_permutations)


# ---------------------------------------------------------------------------------------------------- bootstrap


def spa_bootstrap_samples(X, Z, n_resamples: int = 1000, n_permutations: int = 1000,
                          seed: int | np.random.Generator = 0, sign_seed: int | None = None) -> np.ndarray:
    """SPA of bootstrap resamples of the documents (rows), with the systems kept.

    Each resample draws n_docs documents with replacement (the same draw for Z and every metric; after the K sign
    vectors, ``rng.integers(0, n_docs, (n_resamples, n_docs))`` over the scored documents), and recomputes
    both the human and the metric p-values on it with the K sign vectors of the data (one sign per resampled
    position, so a document drawn twice is two documents). Systems are not resampled: SPA is a mean over system
    pairs, and a system drawn twice would pair with itself. A resample in which no pair of systems shares a
    document has no SPA (NaN). This interval is an addition to Thompson et al. (2024), who test differences by
    permutation; it measures how SPA varies with the test set. The cost is about that of n_resamples SPAs.

    Parameters
    ----------
    X, Z, n_permutations, seed
        As in :func:`soft_pairwise_accuracy`.
    n_resamples : int

    Returns
    -------
    numpy.ndarray
        (n_resamples,) for one metric, (n_resamples, n_metrics) for several.

    Examples
    --------
    >>> Z = np.array([[3., 1, 2], [4, 1, 2], [5, 2, 1], [3, 0, 2], [4, 1, 3], [5, 2, 2]])
    >>> spa_bootstrap_samples(Z, Z, n_resamples=4, n_permutations=100).tolist()
    [1.0, 1.0, 1.0, 1.0]
    """
    _, samples, single = _bootstrap(X, Z, n_resamples, n_permutations, seed, sign_seed)
    return samples[:, 0] if single else samples


def _bootstrap(X, Z, n_resamples, n_permutations, seed, sign_seed=None) -> tuple[np.ndarray, np.ndarray, bool]:
    """(SPA of the data (n_metrics,), resampled SPAs (n_resamples, n_metrics), single) with one set of signs."""
    n_resamples = _positive_int("n_resamples", n_resamples)
    n_permutations = _positive_int("n_permutations", n_permutations)
    X3, Z2, single, lay, defined = _prepared(X, Z)
    rng = _rng(seed)
    n_docs = Z2.shape[0]
    signs = _signs(rng, sign_seed, n_permutations, n_docs)
    docs = rng.integers(0, n_docs, size=(n_resamples, n_docs))
    M = _centre(np.concatenate([Z2[None], X3]))  # (1 + n_metrics, D, S)
    ge = _matrix_counts(M, signs, lay)
    point = _spa(ge[0], ge[1:], n_permutations, defined)
    valid = ~np.isnan(Z2)
    n_cols = Z2.shape[1] if lay.complete else len(lay.i)
    per_resample = len(M) * (n_permutations * (len(lay.i) + n_cols) + n_docs * (Z2.shape[1] + n_cols))
    step = max(1, _CHUNK_CELLS // per_resample)
    parts = run_chunks("bootstrap (spa)", _bootstrap_chunk, (M, signs, lay, valid, n_permutations),
                       [(docs[start:start + step],) for start in range(0, n_resamples, step)])
    return point, np.concatenate(parts).reshape(n_resamples, len(X3)), single


def _bootstrap_chunk(M: np.ndarray, signs: np.ndarray, lay: _Layout, valid: np.ndarray, n_permutations: int,
                     rows: np.ndarray) -> np.ndarray:
    """SPA (c, n_metrics) of the resamples that drew the documents ``rows`` (c, D)."""
    C = _columns(M[:, rows], lay)  # (1 + m, c, D, C)
    ge = _counts(_signed_sums(signs, C), *_column_sums(C), lay)  # (1 + m, c, pairs)
    shared = np.ones(len(lay.i), dtype=bool) if lay.complete else _shared(valid[rows], lay)
    return _spa(ge[0], ge[1:], n_permutations, shared).T


def spa_bootstrap_ci(X, Z, n_resamples: int = 1000, n_permutations: int = 1000, confidence: float = 0.95,
                     seed: int | np.random.Generator = 0, sign_seed: int | None = None) -> SPAInterval:
    """Percentile bootstrap interval of SPA over documents (:func:`spa_bootstrap_samples`).

    The bounds are the (1 - confidence)/2 and (1 + confidence)/2 percentiles (linear interpolation) of the
    resampled SPAs, resamples without a defined SPA left out; ``point`` is the SPA of the data with the same sign
    vectors (equal to :func:`soft_pairwise_accuracy` with the same seed).

    Parameters
    ----------
    X, Z, n_resamples, n_permutations, seed
        As in :func:`spa_bootstrap_samples`.
    confidence : float
        In (0, 1).

    Returns
    -------
    SPAInterval
        ``(lower, upper, point, n_resamples, n_permutations)``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> Z = rng.normal(size=8) + rng.normal(size=(40, 8)); X = Z + rng.normal(size=Z.shape)
    >>> ci = spa_bootstrap_ci(X, Z, n_resamples=200, n_permutations=200, seed=0)
    >>> bool(ci.lower <= ci.point <= ci.upper), ci.n_resamples
    (True, 200)
    """
    confidence = _confidence(confidence)
    point, samples, single = _bootstrap(X, Z, n_resamples, n_permutations, seed, sign_seed)
    ok = ~np.isnan(samples[:, 0])  # undefined for every metric at once (it depends on the missing cells only)
    if not ok.any():
        raise ValueError("no bootstrap resample has a defined SPA (no pair of systems shares a document)")
    tail = (1.0 - confidence) / 2.0 * 100.0
    lower, upper = np.percentile(samples[ok], [tail, 100.0 - tail], axis=0)
    if single:
        return SPAInterval(float(lower[0]), float(upper[0]), float(point[0]), int(ok.sum()), n_permutations)
    return SPAInterval(lower, upper, point, int(ok.sum()), n_permutations)
