"""Pairwise Difference Pearson (PDP): Pearson's r between the differences of two systems' metric scores and the
differences of their human scores, over the pairs of systems on the same item.

mt-metrics-eval added PDP in July 2025 (google-research/mt-metrics-eval, commit fc0e59f, ``stats.py``:
``Correlation.Pearson(average_by, pdp=True)``, through ``AverageCorrelation._enumerate_pairwise_diffs``). What it
computes, read from that code:

- the scores are arranged by the grouping (``average_by``) into one row per group: with ``'item'`` one row per
  segment holding every system's score on it; with ``'none'`` one row holding all the scores;
- within each row every *ordered* pair of positions (s, t), s = t included, gives the human difference
  ``h[t] - h[s]`` and the metric difference ``m[t] - m[s]``; a pair where either human score is missing is
  dropped (the missing score propagates as NaN, then is filtered with the other missing gold values);
- the differences of **all rows are pooled** into one pair of vectors and one Pearson's r is taken over them
  (``scipy.stats.pearsonr``): the per-item values are *not* averaged, unlike Pearson grouped by item;
- the r is NaN when either vector of differences is constant (no two systems differ on any item).

Because every pair comes in both orders, both vectors of differences have mean zero, so r is
``sum(dh * dm) / sqrt(sum(dh**2) * sum(dm**2))``, and the sum over the ordered pairs of an item with n present
systems is ``2 n**2`` times the (population) covariance of the item's scores. PDP is therefore computed here without
enumerating the pairs::

    PDP = sum_g n_g**2 cov_g(m, h) / sqrt(sum_g n_g**2 var_g(m) * sum_g n_g**2 var_g(h))

over the items g: the within-item covariances pooled with weights n_g**2 (an item with more systems, or with more
spread between them, weighs more). The self-pairs add zeros to both vectors and do not change r. With one group
(``average_by='none'``: every pair of all cells, or of the systems' means at the system level) the same identity
makes PDP equal to Pearson's r, which is why meta-eval defines ``pdp`` only grouped by item (the ``summary`` level,
WMT's "group by item"); at the other levels ``pearson`` is the same number.

Where this differs from mt-metrics-eval: nowhere on data (equal to 1e-12 on WMT23 in ``tests/test_pdp.py``); with no
pair at all (every item has at most one system) mt-metrics-eval returns 0, meta-eval NaN (undefined).

Intervals and tests are those of the other correlations (:mod:`meta_eval.stats.resampling`): BOOT-BOTH percentile
intervals (items and systems drawn with replacement, PDP recomputed on each resample, a system drawn twice pairing
with itself at difference 0) and the one-sided PERM-BOTH test (cells swapped between the two metrics, both PDPs
recomputed). mt-metrics-eval has no test for PDP: its ``PermutationSigDiff`` passes ``pdp`` on to
``scipy.stats.pearsonr``, which does not take it.

References
----------
google-research/mt-metrics-eval (2025), ``mt_metrics_eval/stats.py``, ``Correlation.Pearson(pdp=True)`` and
``AverageCorrelation._enumerate_pairwise_diffs`` (commit fc0e59f, "Added Pairwise Difference Pearson (PDP)
segment-level meta-evaluation metric"). The WMT23-25 task sets of ``tasks.py`` do not use it (WMT25: system-level
SPA/PCE and segment-level acc-t grouped by item).

Examples
--------
Two systems on each of two items: the differences are (human, metric) = (1, 2) and (3, 1), each in both orders and
with the zero self-pairs, so PDP = (1*2 + 3*1) / sqrt((1 + 9) * (4 + 1)) = 5 / sqrt(50):

>>> import numpy as np
>>> Z = np.array([[1., 2], [0, 3]]); X = np.array([[0., 2], [5, 6]])
>>> round(float(pairwise_difference_pearson(X, Z)), 6), round(5 / 50 ** 0.5, 6)
(0.707107, 0.707107)
"""
from __future__ import annotations

import numpy as np

__all__ = ["pairwise_difference_pearson", "level_pdp"]


def _tamed(x: np.ndarray, hi: np.ndarray, lo: np.ndarray) -> np.ndarray:
    """``x`` (..., n_items, n_systems) scaled by a power of 2 per matrix where its scores are near 1e308 (or 1e-200)
    (:func:`meta_eval.stats.resampling._exponents`: exact, so PDP is unchanged), else ``x`` itself: the differences
    and their squares then cannot overflow."""
    from meta_eval.stats.resampling import _exponents

    largest = np.where(hi >= lo, np.maximum(np.abs(hi), np.abs(lo)), 0.0)  # an item without a cell: hi < lo
    e = _exponents(largest.max(axis=-1))
    return x if e is None else np.ldexp(x, -e[..., None, None])


def _pdp(X: np.ndarray, Z: np.ndarray) -> np.ndarray:
    """Unvalidated PDP of X (..., n_items, n_systems) with Z, broadcast over the leading axes; pairs within the rows
    (axis -2 indexes the groups, axis -1 the systems), cells missing in either left out."""
    from meta_eval.stats.resampling import _extremes

    X, Z = np.asarray(X, dtype=float), np.asarray(Z, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        if not (np.isnan(X).any() or np.isnan(Z).any()):  # complete: every item has all systems, one weight n**2
            (hx, lx), (hz, lz) = _extremes(X), _extremes(Z)
            X, Z = _tamed(X, hx, lx), _tamed(Z, hz, lz)
            dx = X - X.mean(axis=-1, keepdims=True)  # each side on its own shape (Z is shared by the metrics)
            dz = Z - Z.mean(axis=-1, keepdims=True)
            sxz = np.einsum("...ij,...ij->...", dx, dz)
            sxx = np.einsum("...ij,...ij->...", dx, dx)
            szz = np.einsum("...ij,...ij->...", dz, dz)
            defined = (hx > lx).any(axis=-1) & (hz > lz).any(axis=-1)
        else:
            X, Z = np.broadcast_arrays(X, Z)
            valid = ~(np.isnan(X) | np.isnan(Z))
            (hx, lx), (hz, lz) = _extremes(X, valid), _extremes(Z, valid)
            X, Z = _tamed(X, hx, lx), _tamed(Z, hz, lz)
            n = valid.sum(axis=-1, keepdims=True)  # present systems per item
            xz, zz = np.where(valid, X, 0.0), np.where(valid, Z, 0.0)
            # centred within each item (numerically stable; the centring does not change any difference)
            dx = np.where(valid, xz - xz.sum(axis=-1, keepdims=True) / np.maximum(n, 1), 0.0)
            dz = np.where(valid, zz - zz.sum(axis=-1, keepdims=True) / np.maximum(n, 1), 0.0)
            w = n[..., 0].astype(float)  # sum over the ordered pairs of item g = 2 * n_g * sum of centred products
            sxz = (w * np.einsum("...i,...i->...", dx, dz)).sum(axis=-1)
            sxx = (w * np.einsum("...i,...i->...", dx, dx)).sum(axis=-1)
            szz = (w * np.einsum("...i,...i->...", dz, dz)).sum(axis=-1)
            defined = (hx > lx).any(axis=-1) & (hz > lz).any(axis=-1)
        r = np.clip(sxz / np.sqrt(sxx * szz), -1.0, 1.0)
    return np.where(defined, r, np.nan)


def level_pdp(X: np.ndarray, Z: np.ndarray, level: str) -> np.ndarray:
    """PDP at a level of :mod:`meta_eval.stats.resampling` (unvalidated, broadcast over leading axes).

    ``"summary"``: pairs of systems within each item (document, segment), pooled (mt-metrics-eval's
    ``average_by='item'``); ``"global"``: every pair of cells (``average_by='none'`` on segment scores);
    ``"system"``: every pair of systems' mean scores (``average_by='none'`` on system scores). The last two equal
    Pearson's r (see the module notes); :mod:`meta_eval.stats` offers ``pdp`` at the summary level only.
    """
    if level == "summary":
        return _pdp(X, Z)
    if level == "global":
        return _pdp(X.reshape(*X.shape[:-2], 1, -1), Z.reshape(*Z.shape[:-2], 1, -1))
    from meta_eval.stats.resampling import _system_means

    return _pdp(_system_means(X)[..., None, :], _system_means(Z)[..., None, :])


def pairwise_difference_pearson(X, Z, level: str = "summary"):
    """Pairwise Difference Pearson of metric scores ``X`` with human scores ``Z`` (mt-metrics-eval's
    ``Correlation.Pearson(average_by='item', pdp=True)`` at the default level).

    Parameters
    ----------
    X : array_like
        (n_items, n_systems) metric scores, or (n_metrics, n_items, n_systems); NaN in the same cells as ``Z``.
    Z : array_like
        (n_items, n_systems) human scores, NaN where a cell is missing.
    level : {"summary", "global", "system"}
        The grouping: pairs of systems within each item (``"summary"``, WMT's "group by item"), every pair of cells
        (``"global"``) or of system means (``"system"``); see :func:`level_pdp`.

    Returns
    -------
    float or numpy.ndarray
        A float for one metric, else shape (n_metrics,); NaN where no item has two systems that differ (in the
        metric or in the human scores).

    Raises
    ------
    ValueError
        On an unknown level, shapes that disagree, infinite values or missing cells that differ between X and Z.

    Examples
    --------
    >>> Z = np.array([[1., 2, 3], [1, 1, 4]])
    >>> float(pairwise_difference_pearson(Z + 10.0, Z)), float(pairwise_difference_pearson(-Z, Z))
    (1.0, -1.0)
    """
    from meta_eval.stats.resampling import LEVELS, _choice, _metric_stack

    level = _choice("level", level, LEVELS)
    X3, Z2, single = _metric_stack(X, Z)
    r = level_pdp(X3, Z2[None], level)
    return float(r[0]) if single else r
