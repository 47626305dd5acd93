"""The statistics of ``meta-eval probe``: small pure functions over one metric's score changes on the probe's items.

A *change* is ``perturbed - original`` in the metric's orientation (a lower-is-better metric such as TER is negated
first), so a negative change is always "the metric now rates the text worse".

Tolerance. A change is a *tie* when ``|change| <= threshold`` with ``threshold = tolerance * |original| + ATOL``
(:func:`thresholds`): the tolerance is **relative** to the item's own original score, so one number means the same
for a metric on [0, 1] (ROUGE), on [0, 100] (BLEU, chrF) or unbounded (a log-likelihood): ``--tolerance 0.01``
calls a move of less than 1% of the score a tie. :data:`ATOL` (1e-9) is an absolute floor that keeps floating-point
noise (a sum taken in another order) from counting as a move, and is the whole threshold where the original score is
0 (TER of a text against itself). The default tolerance 0 counts every drop, as He et al. (2023) count "the
percentage of samples whose score decreases".

- :func:`outcomes`: each item a drop (-1), a tie (0) or a rise (+1);
- :func:`summarize`: detection rate (drops / items), ties, rises, mean and median change, each rate and central
  value with a percentile bootstrap interval over items (Efron & Tibshirani 1993, ch. 13);
- :func:`mcnemar`: the exact McNemar test between two metrics' detection indicators on the same items (McNemar
  1947; the exact form is a two-sided binomial test on the discordant items, Fagerland, Lydersen & Laake 2013,
  "The McNemar test for binary matched-pairs data", BMC Medical Research Methodology 13:91).

For an invariance (a change the metric should not punish) a detection is a *false alarm*; the functions are the same.
"""
from __future__ import annotations

import numpy as np

__all__ = ["ATOL", "bootstrap_indices", "mcnemar", "outcomes", "percentile_interval", "summarize", "thresholds"]

#: absolute floor of every tie threshold: floating-point noise is never a detection
ATOL = 1e-9


def thresholds(original: np.ndarray, tolerance: float = 0.0) -> np.ndarray:
    """Each item's tie threshold: ``tolerance * |original| + ATOL``.

    >>> thresholds(np.array([0.5, -20.0, 0.0]), 0.1).round(6).tolist()
    [0.05, 2.0, 0.0]
    """
    if not tolerance >= 0:
        raise ValueError(f"the tolerance must be >= 0, got {tolerance!r}")
    return tolerance * np.abs(np.asarray(original, dtype=np.float64)) + ATOL


def outcomes(change: np.ndarray, threshold: np.ndarray | float) -> np.ndarray:
    """-1 where the score dropped by more than ``threshold``, +1 where it rose by more, 0 for a tie.

    >>> outcomes(np.array([-0.2, -0.05, 0.0, 0.05, 0.3]), 0.1).tolist()
    [-1, 0, 0, 0, 1]
    """
    change = np.asarray(change, dtype=np.float64)
    return np.where(change < -threshold, -1, np.where(change > threshold, 1, 0)).astype(np.int8)


def bootstrap_indices(n: int, resamples: int, seed: int) -> np.ndarray:
    """``resamples`` x ``n`` item indices drawn with replacement from ``np.random.default_rng(seed)``: the same draws
    for every metric of a perturbation (paired)."""
    if resamples < 1:
        raise ValueError(f"resamples must be >= 1, got {resamples}")
    return np.random.default_rng(seed).integers(0, n, size=(resamples, n)) if n else np.zeros((resamples, 0), int)


def percentile_interval(values: np.ndarray, confidence: float = 0.95) -> tuple[float, float]:
    """The percentile interval of bootstrap ``values`` (Efron & Tibshirani 1993, eq. 13.5): the run's own
    :func:`meta_eval.stats.resampling.percentile_interval` for one column."""
    from meta_eval.stats.resampling import percentile_interval as columns_interval

    lo, hi = columns_interval(np.asarray(values, dtype=np.float64)[:, None], confidence)
    return float(lo[0]), float(hi[0])


def summarize(change: np.ndarray, threshold: np.ndarray | float, *, resamples: int = 1000, seed: int = 0,
              confidence: float = 0.95, indices: np.ndarray | None = None) -> dict:
    """One metric's reaction to one perturbation over its items.

    Parameters
    ----------
    change : array
        Oriented ``perturbed - original`` per item (only the items the perturbation applied to).
    threshold : array or float
        Per-item tie threshold (:func:`thresholds`).
    resamples, seed, confidence
        The percentile bootstrap over items; ``indices`` (:func:`bootstrap_indices`) overrides the draws.

    Returns
    -------
    dict
        ``n``, ``drops``, ``ties``, ``rises`` (counts), ``rate`` (drops / n: the detection rate, a false-alarm rate
        for an invariance), ``tie_rate``, ``rise_rate``, ``mean``, ``median`` (of the change) and ``rate_ci``,
        ``mean_ci``, ``median_ci``; rates and centres are None (intervals too) when ``n`` is 0.

    Examples
    --------
    >>> s = summarize(np.array([-0.5, -0.2, 0.0, 0.1]), 0.05, resamples=200)
    >>> s["drops"], s["ties"], s["rises"], s["rate"], s["mean"], s["median"]
    (2, 1, 1, 0.5, -0.15, -0.1)
    """
    change = np.asarray(change, dtype=np.float64)
    n = len(change)
    out = outcomes(change, threshold)
    drops, ties, rises = int((out == -1).sum()), int((out == 0).sum()), int((out == 1).sum())
    doc = {"n": n, "drops": drops, "ties": ties, "rises": rises}
    if n == 0:
        return {**doc, **{k: None for k in ("rate", "tie_rate", "rise_rate", "mean", "median", "rate_ci", "mean_ci",
                                             "median_ci")}}
    idx = bootstrap_indices(n, resamples, seed) if indices is None else indices
    detected = (out == -1).astype(np.float64)
    boot_change = change[idx]
    doc.update(rate=drops / n, tie_rate=ties / n, rise_rate=rises / n, mean=float(change.mean()),
               median=float(np.median(change)),
               rate_ci=percentile_interval(detected[idx].mean(axis=1), confidence),
               mean_ci=percentile_interval(boot_change.mean(axis=1), confidence),
               median_ci=percentile_interval(np.median(boot_change, axis=1), confidence))
    return doc


def mcnemar(a: np.ndarray, b: np.ndarray) -> dict:
    """Exact McNemar test that two metrics detect a perturbation equally often on the same items.

    Parameters
    ----------
    a, b : arrays of bool
        Detection indicators of the two metrics, item by item.

    Returns
    -------
    dict
        ``a_only`` (items only ``a`` detects), ``b_only``, ``p``: two-sided exact p-value, the binomial test of
        ``a_only`` successes in ``a_only + b_only`` trials at 1/2 (``scipy.stats.binomtest``); 1.0 without a
        discordant item.

    Examples
    --------
    >>> mcnemar(np.array([1, 1, 1, 0, 1], bool), np.array([0, 0, 1, 0, 1], bool))
    {'a_only': 2, 'b_only': 0, 'p': 0.5}
    """
    from scipy.stats import binomtest

    a, b = np.asarray(a, dtype=bool), np.asarray(b, dtype=bool)
    if a.shape != b.shape:
        raise ValueError(f"McNemar needs the same items for both metrics: {a.shape} vs {b.shape}")
    a_only, b_only = int((a & ~b).sum()), int((~a & b).sum())
    p = 1.0 if a_only + b_only == 0 else float(binomtest(a_only, a_only + b_only, 0.5).pvalue)
    return {"a_only": a_only, "b_only": b_only, "p": p}
