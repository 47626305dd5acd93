"""Pairwise accuracy, acc_eq and tie calibration of metric scores against human scores, vectorised.

Scores are (n_docs x n_systems) matrices as in :mod:`meta_eval.stats.resampling`: ``X`` a metric (higher = better; or
several metrics as (n_metrics, n_docs, n_systems)), ``Z`` the human scores, NaN where a (document, system) cell is
missing, the same cells missing in both. Every statistic here looks at *pairs*: for a pair with metric difference
dx and human difference dz,

- the humans tie the pair when dz == 0 exactly (no tolerance, as mt-metrics-eval; system means are rounded first,
  see the levels);
- the metric ties it when |dx| <= epsilon (mt-metrics-eval ``PairwiseDiffs``; epsilon = 0: exact ties only);
- the pair is *correct* when both tie it, or neither does and sign(dx) == sign(dz).

Over the pairs of a level, with C concordant, D discordant pairs, T_h pairs tied by the humans only, T_m by the
metric only and T_hm by both (Deutsch, Foster & Freitag 2023; mt-metrics-eval
``TauSufficientStats.acc_23``)::

    acc_eq = (C + T_hm) / (C + D + T_h + T_m + T_hm)

- :func:`pairwise_accuracy` is Kocmi et al. (2021)'s pairwise accuracy, the share of pairs whose metric delta has
  the sign of the human delta, sign(0) = 0. This is mt-metrics-eval's ``stats.Agreement`` (the system-level
  "accuracy" of ``data.CompareMetricsWithGlobalAccuracy``): every pair is in the denominator, a pair tied by the
  humans is correct only if the metric ties it exactly, a metric tie of a pair the humans rank is wrong. It is
  therefore acc_eq at epsilon = 0.
- :func:`acc_eq` is acc_eq at a given epsilon; :func:`tie_calibration` ("acc-t") chooses the epsilon that
  maximises it (the paper's tie calibration, mt-metrics-eval ``tau_optimization``/``KendallWithTiesOpt``).

Levels (meta-eval's names; WMT23's in brackets):

- ``"system"``: the pairs of systems, each system scored by its mean over the documents it has, rounded to 12
  significant digits (:func:`meta_eval.stats.resampling.snap`) so that means equal in exact arithmetic tie;
- ``"summary"`` ["group by item"]: the pairs of systems within each document; the statistic of each document with
  at least 2 scored systems, averaged over those documents (mt-metrics-eval ``average_by='item'``); documents with
  fewer than 2 are skipped. Tie calibration picks ONE epsilon for all documents, maximising the average;
- ``"global"`` ["no grouping"]: all pairs of valid cells, O(n^2) in the n valid cells: done in chunks, capped at
  :data:`GLOBAL_MAX_CELLS` cells (about 33.5M pairs, a few hundred MB for tie calibration).

Undefined values are NaN and mean "no valid pair": fewer than 2 systems with a score (system level), no document
with 2 scored systems (summary level), fewer than 2 valid cells (global level). Invalid input raises ValueError.

Resampling (:func:`bootstrap_samples`, :func:`bootstrap_ci`, :func:`permutation_test`,
:func:`pairwise_permutation_pvalues`) mirrors :mod:`meta_eval.stats.resampling`: the same methods, seeds and index draws
(a given seed draws the same bootstrap indices as :func:`meta_eval.stats.resampling.bootstrap_samples`), vectorised over
metrics and resamples, all random numbers drawn before any work. "acc-t" re-calibrates epsilon in every resample.

References
----------
T. Kocmi, C. Federmann, R. Grundkiewicz, M. Junczys-Dowmunt, H. Matsushita and A. Menezes (2021). To Ship or Not to
Ship: An Extensive Evaluation of Automatic Metrics for Machine Translation. WMT (pairwise accuracy of system pairs).
D. Deutsch, G. Foster and M. Freitag (2023). Ties Matter: Meta-Evaluating Modern Metrics with Pairwise Accuracy and
Tie Calibration. EMNLP (arXiv:2305.14324): acc_eq and tie calibration. Its text was not at hand
here: the definitions follow the authors' code in mt-metrics-eval (``ties_matter.ipynb``, commit 331024ec).
google-research/mt-metrics-eval: ``mt_metrics_eval/stats.py`` (``Agreement``, ``KendallVariants`` variant
'acc23', ``KendallWithTiesOpt``, ``PermutationSigDiff``, ``PairwisePermutationSigDiff``; commit 544e0fc0),
``mt_metrics_eval/tau_optimization.py`` (commit 0b82d96b), ``mt_metrics_eval/tasks.py`` (WMT23/24 task sets).
D. Deutsch, R. Dror and D. Roth (2021). A Statistical Analysis of Summarization Evaluation Metrics using
Resampling Methods. TACL 9 (bootstrap and permutation methods).

Examples
--------
>>> import numpy as np
>>> Z = np.array([[1., 2, 2, 3], [1, 1, 2, 4]])  # human: a tie in each document
>>> X = np.array([[1., 2, 2.1, 3], [2, 1, 3, 4]])
>>> pairwise_accuracy(X, Z, "summary")  # doc 1: 5/6 (the human tie is missed), doc 2: 5/6 (ditto)
0.8333333333333334
>>> tie_calibration(X, Z, "summary")  # epsilon 0.1 ties (2, 2.1) only: doc 1 6/6, doc 2 5/6
PairwiseStat(value=0.9166666666666667, epsilon=0.10000000000000009)
"""
from __future__ import annotations

import numbers
import sys
from functools import lru_cache
from typing import NamedTuple

import numpy as np

from meta_eval.scoring.chunks import run_chunks
from meta_eval.stats.resampling import (LEVELS, RESAMPLE_METHODS, Interval, _TIE_TOL, _choice, _confidence,
                                        _draw_indices, _fresh, _metric_stack, _pair, _positive_int,
                                        _reversed, _rng, _standardize, _swap_masks,
                                        _system_means, fixed_system_pair, percentile_interval, snap)

__all__ = ["LEVELS", "STATISTICS", "PERMUTATION_METHODS", "GLOBAL_MAX_CELLS", "PairwiseStat", "pairwise_accuracy",
           "acc_eq", "tie_calibration", "pairwise_statistic", "bootstrap_samples", "bootstrap_ci",
           "permutation_test", "pairwise_permutation_pvalues"]

STATISTICS = ("accuracy", "acc-eq", "acc-t")
PERMUTATION_METHODS = RESAMPLE_METHODS + ("pairs",)
GLOBAL_MAX_CELLS = 8192  # global level: 8192 valid cells = 33,550,336 pairs

_CHUNK = 1 << 22  # pair differences materialised at once for the system and summary levels (32 MB per float64 array)
_GLOBAL_BLOCK = 1 << 20  # pairs per block at the global level
_ACC_TOL = 1e-12  # grouped accuracies closer than this are equal (float sums of 1 / (n_docs * n_pairs) weights)


class PairwiseStat(NamedTuple):
    """A pairwise statistic and the epsilon behind it: floats for one metric, arrays of shape (n_metrics,) for
    several. ``epsilon`` is NaN for "accuracy" (no tie threshold), the given epsilon for "acc-eq", the calibrated
    one for "acc-t", and NaN where ``value`` is undefined."""

    value: float | np.ndarray
    epsilon: float | np.ndarray


# ----------------------------------------------------------------------------------------------- validation


def _out(a: np.ndarray, single: bool):
    return float(a[0]) if single else a


def _epsilons(epsilon, n: int, what: str = "metric") -> np.ndarray:
    """epsilon: a number, or one per metric; finite and >= 0 -> array of shape (n,)."""
    try:
        e = np.asarray(epsilon, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"epsilon must be a non-negative number (or one per {what}), got {epsilon!r}") from None
    if e.ndim > 1 or (e.ndim == 1 and len(e) != n):
        raise ValueError(f"epsilon must be one number or {n} (one per {what}), got shape {e.shape}")
    if not np.isfinite(e).all() or (e < 0).any():
        raise ValueError(f"epsilon must be finite and >= 0, got {epsilon!r}")
    return np.broadcast_to(e, (n,)).astype(float)


def _no_epsilon(statistic: str, epsilon) -> None:
    if statistic != "acc-eq" and not (isinstance(epsilon, numbers.Real) and epsilon == 0):
        raise ValueError(f"epsilon applies to statistic 'acc-eq' only ('accuracy' has no tie threshold, 'acc-t' "
                         f"calibrates its own), got epsilon={epsilon!r} with statistic {statistic!r}")


def _check_global(Z: np.ndarray, level: str) -> None:
    if level != "global":
        return
    n = int((~np.isnan(Z)).sum())
    if n > GLOBAL_MAX_CELLS:
        raise ValueError(f"the global level compares all pairs of the {n} valid cells ({n * (n - 1) // 2:,} pairs); "
                         f"the cap is {GLOBAL_MAX_CELLS} cells ({GLOBAL_MAX_CELLS * (GLOBAL_MAX_CELLS - 1) // 2:,} "
                         f"pairs): use --level summary (pairs of systems within each document) instead")


# ------------------------------------------------------------------------------- pairs: system and summary levels


@lru_cache(maxsize=64)
def _pair_index(n: int) -> tuple[np.ndarray, np.ndarray]:
    """The pairs (i, j) of n units in the order of :func:`_diffs`: by offset i - j = 1, 2, ..., n - 1."""
    i = np.concatenate([np.arange(k, n) for k in range(1, n)]) if n > 1 else np.zeros(0, dtype=int)
    j = np.concatenate([np.arange(0, n - k) for k in range(1, n)]) if n > 1 else np.zeros(0, dtype=int)
    return i, j


def _offset_diffs(A: np.ndarray) -> np.ndarray:
    """A[..., i] - A[..., j] over the pairs of :func:`_pair_index`, from slices (no gather). The difference of two
    scores near -1e308 and 1e308 is -inf or inf: its sign, and that it is not 0, are still the difference's (the
    pairwise statistics read only these and |d| <= epsilon), so the overflow is not an error here."""
    n = A.shape[-1]
    A = np.ascontiguousarray(A)  # gathered (bootstrap) arrays come with the metric axis innermost
    with np.errstate(over="ignore"):
        return np.concatenate([A[..., k:] - A[..., :n - k] for k in range(1, n)], axis=-1)


def _diffs(A: np.ndarray, level: str, same: np.ndarray | None = None) -> np.ndarray:
    """(..., D, S) -> (..., Q) pairwise differences: of the system means (Q = S(S-1)/2) or within each document
    (Q = D * S(S-1)/2, document-major). ``same`` (..., S(S-1)/2): pairs of a system with its own bootstrap copy,
    made NaN (left out)."""
    if level == "system":
        d = _offset_diffs(snap(_system_means(A)))  # means equal in exact arithmetic must tie
        return d if same is None else np.where(same, np.nan, d)
    d = _offset_diffs(A)  # (..., D, P)
    if same is not None:
        d = np.where(same[..., None, :], np.nan, d)
    return d.reshape(*d.shape[:-2], -1)


class _Human(NamedTuple):
    """What the human differences dz (B, Q) fix for every metric compared with them."""

    sign: np.ndarray  # sign(dz), NaN for invalid pairs
    tie: np.ndarray  # dz == 0 (False for invalid pairs)
    counts: np.ndarray  # (B, G) valid pairs per group: G = 1 (system level) or n_docs (summary level)
    weight: np.ndarray  # (B, Q) weight of each pair in the statistic, 0 for invalid ones; rows sum to 1
    uniform: np.ndarray  # (B,) all valid pairs of the row have one weight
    defined: np.ndarray  # (B,) the row has a valid pair


def _human(dz: np.ndarray, level: str, n_pairs: int) -> _Human:
    valid = ~np.isnan(dz)
    groups = valid.reshape(*dz.shape[:-1], -1, n_pairs if level == "summary" else dz.shape[-1])
    counts = groups.sum(axis=-1)
    in_use = counts > 0
    per_group = np.where(in_use, 1.0 / (np.maximum(counts, 1) * np.maximum(in_use.sum(axis=-1, keepdims=True), 1)),
                         0.0)
    weight = (groups * per_group[..., None]).reshape(dz.shape)
    w_max = per_group.max(axis=-1)
    uniform = w_max == np.where(in_use, per_group, np.inf).min(axis=-1)
    return _Human(np.sign(dz), dz == 0, counts, weight, uniform, in_use.any(axis=-1))


def _accuracy(correct: np.ndarray, h: _Human) -> np.ndarray:
    """acc_eq of each row from its correct pairs (..., B, Q): correct / valid pairs per group, averaged over the
    groups with a valid pair (one group at the system level); NaN where there is none."""
    c = np.count_nonzero(correct.reshape(*correct.shape[:-1], h.counts.shape[-1], -1), axis=-1)
    in_use = h.counts > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(in_use, c / np.maximum(h.counts, 1), 0.0).sum(axis=-1) / in_use.sum(axis=-1)


_LOW_BYTE = 0 if sys.byteorder == "little" else 7
_NO_KEY = np.uint64(0xFFFF_FFFF_FFFF_FFFE)  # after every key of a finite |dx|; low bit 0: counts as a loss


def _keys(dx: np.ndarray, up: np.ndarray, down: np.ndarray) -> np.ndarray:
    """uint64 sort keys (bit pattern of |dx|) << 1 | up for the pairs that change when tied, :data:`_NO_KEY` for the
    others. The bits of a non-negative float64 sort as its value, and the shift drops the sign bit of dx."""
    keys = dx.view(np.uint64) << np.uint64(1)
    np.bitwise_or(keys, up, out=keys)
    np.copyto(keys, _NO_KEY, where=~(up | down))
    return keys


def _sorted_gains(keys: np.ndarray) -> np.ndarray:
    """Sorts the keys of each row in place; returns the running gain 2 * (ups so far) - (keys so far)."""
    keys.sort(axis=-1)
    pos = np.arange(1, keys.shape[-1] + 1, dtype=np.int32)
    low = np.ascontiguousarray(keys).view(np.uint8)[:, _LOW_BYTE::8] & 1  # the low bit, read from one byte
    return 2 * np.cumsum(low, axis=-1, dtype=np.int32) - pos


def _best_packed(dx: np.ndarray, up: np.ndarray, down: np.ndarray) -> np.ndarray:
    """Calibrated epsilon of rows (R, Q) whose valid pairs weigh the same, in exact integer counts.

    Tying a pair gains 1 for a human tie that the metric does not tie exactly (``up``), loses 1 for a concordant
    pair (``down``) and changes nothing for the others, which are left out (:func:`_keys`). After one sort of the
    keys, the gain of epsilon = |dx| of key k is the running count at the last key of its run of equal |dx|. Within a
    run the losses sort before the gains (low bit 0 before 1), so the first position of the maximal running count is
    the end of a run: ``argmax`` gives the best gain and its smallest epsilon with no run detection.
    """
    keys = _keys(dx, up, down)
    gain = _sorted_gains(keys)
    k = np.argmax(gain, axis=-1)
    rows = np.arange(len(keys))
    eps = (keys[rows, k] >> np.uint64(1)).view(np.float64)
    return np.where(gain[rows, k] > 0, eps, 0.0)


def _best_sorted(a: np.ndarray, up: np.ndarray, down: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Calibrated epsilon of rows whose pairs weigh differently (documents with different numbers of valid pairs):
    as :func:`_best_packed` with gains +-w from an argsort; gains within 1e-12 of the best count as equal."""
    gain = w * (up.astype(np.int8) - down.astype(np.int8))
    a = np.where(up | down, a, np.inf)  # pairs that change nothing sort last and are never candidates
    order = np.argsort(a, axis=-1)
    a = np.take_along_axis(a, order, axis=-1)
    gain = np.cumsum(np.take_along_axis(gain, order, axis=-1), axis=-1)
    last = np.ones(a.shape, dtype=bool)
    np.not_equal(a[:, 1:], a[:, :-1], out=last[:, :-1])
    gain = np.where(last & np.isfinite(a), gain, -np.inf)
    best = gain.max(axis=-1, initial=0.0)
    k = np.argmax(gain >= (best - _ACC_TOL)[:, None], axis=-1)
    return np.where(best > _ACC_TOL, a[np.arange(len(a)), k], 0.0)


def _calibrate(dx: np.ndarray, sign_ok: np.ndarray, h: _Human) -> tuple[np.ndarray, np.ndarray]:
    """Tie calibration of every row of dx (M, B, Q): (acc_eq at the best epsilon, that epsilon), both (M, B).

    acc(e) = acc(0) + sum over pairs with |dx| <= e of (tie outcome - sign outcome), weighted: the accuracy at every
    candidate (0 and each distinct |dx|) is a running sum over the pairs sorted by |dx|, O(Q log Q) per row.
    """
    M, B, Q = dx.shape
    up = h.tie & ~sign_ok  # human tie, metric differs
    down = sign_ok & ~h.tie  # concordant
    dx2, up2, down2 = dx.reshape(-1, Q), up.reshape(-1, Q), down.reshape(-1, Q)
    uniform = np.broadcast_to(h.uniform, (M, B)).ravel()
    if uniform.all():
        eps = _best_packed(dx2, up2, down2)
    else:
        eps = np.zeros(M * B)
        if uniform.any():
            eps[uniform] = _best_packed(dx2[uniform], up2[uniform], down2[uniform])
        w = np.broadcast_to(h.weight, (M, B, Q)).reshape(-1, Q)
        rest = ~uniform
        eps[rest] = _best_sorted(np.abs(dx2[rest]), up2[rest], down2[rest], w[rest])
    eps = eps.reshape(M, B)
    return _accuracy(np.where(np.abs(dx) <= eps[..., None], h.tie, sign_ok), h), eps


# ------------------------------------------------------------------------------------------------ global level


def _global_blocks(z: np.ndarray, ids: np.ndarray | None):
    """Blocks of the upper triangle of all pairs of the n cells: (rows slice, first column, keep mask, dz)."""
    n = len(z)
    step = max(1, _GLOBAL_BLOCK // max(1, n))
    for r0 in range(0, n - 1, step):
        r1 = min(r0 + step, n - 1)
        keep = np.arange(r0 + 1, n)[None, :] > np.arange(r0, r1)[:, None]
        if ids is not None:
            keep &= ids[r0:r1, None] != ids[None, r0 + 1:]
        with np.errstate(over="ignore"):  # +-inf for scores near +-1e308: sign and tie as the difference's
            dz = z[r0:r1, None] - z[None, r0 + 1:]
        yield slice(r0, r1), r0 + 1, keep, dz


def _global_correct(x, rows, col, dz, eps):
    with np.errstate(over="ignore"):
        dx = x[rows, None] - x[None, col:]
    return np.where(np.abs(dx) <= eps, dz == 0, np.sign(dx) == np.sign(dz))


def _global_fixed(x: np.ndarray, z: np.ndarray, eps: float, ids=None) -> float:
    correct = total = 0
    for rows, col, keep, dz in _global_blocks(z, ids):
        correct += int(np.count_nonzero(_global_correct(x, rows, col, dz, eps) & keep))
        total += int(np.count_nonzero(keep))
    return correct / total if total else np.nan


def _global_calibrate(x: np.ndarray, z: np.ndarray, ids=None) -> tuple[float, float]:
    """Tie calibration over all cell pairs in exact integer counts, as :func:`_best_packed` for one long row.

    Only the pairs whose outcome changes when tied get a key (:func:`_keys`), written block by block into one
    uint64 array of at most n(n-1)/2 entries (8 bytes each), sorted in place once and scanned in blocks for the
    first maximum of the running gain.
    """
    n = len(z)
    keys = np.empty(n * (n - 1) // 2, dtype=np.uint64)
    used = base = total = 0
    for rows, col, keep, dz in _global_blocks(z, ids):
        with np.errstate(over="ignore"):
            dx = x[rows, None] - x[None, col:]
        sign_ok = (np.sign(dx) == np.sign(dz)) & keep
        tie = (dz == 0) & keep
        up, down = tie & ~sign_ok, sign_ok & ~tie
        base += int(np.count_nonzero(sign_ok))
        total += int(np.count_nonzero(keep))
        k = _keys(dx, up, down)
        k = k[k != _NO_KEY]
        keys[used:used + len(k)] = k
        used += len(k)
    if total == 0:
        return np.nan, np.nan
    keys = keys[:used]
    keys.sort()
    best, best_key, running = 0, np.uint64(0), 0
    for s0 in range(0, used, _GLOBAL_BLOCK):
        seg = keys[s0:s0 + _GLOBAL_BLOCK]
        gain = running + 2 * np.cumsum(seg & np.uint64(1), dtype=np.int64) - np.arange(1, len(seg) + 1)
        running = int(gain[-1])
        k = int(np.argmax(gain))
        if gain[k] > best:  # strict: an equal gain later has a larger epsilon
            best, best_key = int(gain[k]), seg[k] >> np.uint64(1)
    eps = float(np.array([best_key], dtype=np.uint64).view(np.float64)[0]) if best > 0 else 0.0
    return (base + best) / total, eps


def _global_outcomes(xs, epss, z, ids=None):
    """Per block, the correctness of every kept pair for each metric in xs (with its epsilon)."""
    for rows, col, keep, dz in _global_blocks(z, ids):
        yield keep, [_global_correct(x, rows, col, dz, e) for x, e in zip(xs, epss)]


# -------------------------------------------------------------------------------------------------- evaluation


def _evaluate(X: np.ndarray, Z: np.ndarray, level: str, statistic: str, eps: np.ndarray | None = None,
              same: np.ndarray | None = None, ids: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Unvalidated statistic of X (M, B, D, S) against Z (B or 1, D, S): (values (M, B), epsilons (M, B)).

    Metric m of block b is compared with Z[b] (all with Z[0] if Z has one matrix). ``same`` (B, S(S-1)/2) marks
    pairs of a system with its own bootstrap copy, ``ids`` (B, D, S) the original cell of each cell (global level);
    such pairs are left out. ``eps`` (M,) is the epsilon of "accuracy" (0) and "acc-eq"; "acc-t" calibrates its own.
    """
    M, B, D, S = X.shape
    values, epsilons = np.full((M, B), np.nan), np.full((M, B), np.nan)
    if level == "global":
        for b in range(B):
            z = Z[b if Z.shape[0] > 1 else 0].ravel()
            ok = ~np.isnan(z)
            cell = None if ids is None else ids[b if ids.shape[0] > 1 else 0].ravel()[ok]
            for m in range(M):
                x = X[m, b].ravel()[ok]
                if statistic == "acc-t":
                    values[m, b], epsilons[m, b] = _global_calibrate(x, z[ok], cell)
                else:
                    values[m, b] = _global_fixed(x, z[ok], eps[m], cell)
                    epsilons[m, b] = eps[m] if np.isfinite(values[m, b]) else np.nan
        return values, epsilons
    n_pairs = S * (S - 1) // 2
    if n_pairs == 0:
        return values, epsilons
    q = n_pairs * (D if level == "summary" else 1)
    step = max(1, _CHUNK // (q * M))
    for b0 in range(0, B, step):
        b1 = min(b0 + step, B)
        h = _human(_diffs(Z[b0:b1] if Z.shape[0] > 1 else Z, level,
                          None if same is None else same[b0:b1] if same.shape[0] > 1 else same), level, n_pairs)
        dx = _diffs(X[:, b0:b1], level)
        sign_ok = np.sign(dx) == h.sign  # NaN (invalid pair): False
        if statistic == "acc-t":
            v, e = _calibrate(dx, sign_ok, h)
        else:
            e = np.broadcast_to(eps[:, None], (M, b1 - b0))
            correct = sign_ok if not eps.any() else np.where(np.abs(dx) <= e[..., None], h.tie, sign_ok)
            v = _accuracy(correct, h)  # epsilon 0: |dx| <= 0 ties exactly when sign(dx) = 0
        defined = np.broadcast_to(h.defined, (M, b1 - b0))
        values[:, b0:b1] = np.where(defined, v, np.nan)
        epsilons[:, b0:b1] = np.where(defined, e, np.nan)
    return values, epsilons


def _setup(X, Z, level, statistic, epsilon):
    level = _choice("level", level, LEVELS)
    statistic = _choice("statistic", statistic, STATISTICS)
    _no_epsilon(statistic, epsilon)
    X3, Z2, single = _metric_stack(X, Z)
    _check_global(Z2, level)
    eps = _epsilons(epsilon, X3.shape[0]) if statistic == "acc-eq" else np.zeros(X3.shape[0])
    return level, statistic, X3, Z2, single, eps


def pairwise_statistic(X, Z, level: str = "system", statistic: str = "accuracy", epsilon=0.0) -> PairwiseStat:
    """Pairwise accuracy ("accuracy"), acc_eq at ``epsilon`` ("acc-eq") or acc_eq with tie calibration ("acc-t").

    See the module docstring for the pair outcomes and the levels; :func:`pairwise_accuracy`, :func:`acc_eq` and
    :func:`tie_calibration` are the three statistics one at a time.

    Parameters
    ----------
    X : array_like
        (n_docs, n_systems) or (n_metrics, n_docs, n_systems), higher = better, NaN in the same cells as Z.
    Z : array_like
        (n_docs, n_systems) human scores.
    level : {"system", "summary", "global"}
    statistic : {"accuracy", "acc-eq", "acc-t"}
    epsilon : float or array_like
        Metric tie threshold of "acc-eq" (>= 0; one number, or one per metric); must stay 0 for the others.

    Returns
    -------
    PairwiseStat
        ``(value, epsilon)``: value in [0, 1] (NaN if there is no valid pair); epsilon NaN for "accuracy", the given
        one for "acc-eq", the calibrated one for "acc-t". Floats for one metric, arrays for a stack.

    Raises
    ------
    ValueError
        On an unknown level or statistic, a bad epsilon, shapes or NaN patterns that do not match, infinite values,
        or more than :data:`GLOBAL_MAX_CELLS` valid cells at the global level.

    Examples
    --------
    >>> Z = np.array([[1., 2, 3], [1, 2, 3]]); X = np.array([[[1., 2, 3], [3, 2, 1]], [[1., 1, 1], [1, 1, 1]]])
    >>> pairwise_statistic(X, Z, "summary", "acc-t")  # metric 1: doc 1 right, doc 2 reversed; metric 2: constant
    PairwiseStat(value=array([0.5, 0. ]), epsilon=array([0., 0.]))
    """
    level, statistic, X3, Z2, single, eps = _setup(X, Z, level, statistic, epsilon)
    values, epsilons = (a[:, 0] for a in _evaluate(X3[:, None], Z2[None], level, statistic, eps))
    if statistic == "accuracy":
        epsilons = np.full_like(values, np.nan)
    return PairwiseStat(_out(values, single), _out(epsilons, single))


def pairwise_accuracy(X, Z, level: str = "system"):
    """Pairwise accuracy of Kocmi et al. (2021): the share of pairs with sign(metric delta) == sign(human delta).

    accuracy = #{pairs: sign(dx) == sign(dz)} / #pairs, sign(0) = 0, over all valid pairs of the level, as
    mt-metrics-eval's ``stats.Agreement``: a pair the humans tie counts as correct only when the metric ties it
    exactly, a pair the metric ties exactly but the humans rank counts as wrong, and every pair, tied or not, is in
    the denominator. It equals :func:`acc_eq` with epsilon = 0. At the system level this is the statistic of
    WMT21-23's system-level accuracy (``data.CompareMetricsWithGlobalAccuracy``, for one language pair).

    Parameters
    ----------
    X, Z, level
        As in :func:`pairwise_statistic`.

    Returns
    -------
    float or numpy.ndarray
        In [0, 1]; NaN when there is no valid pair.

    Examples
    --------
    >>> Z = np.array([[1., 2, 3, 3, 4]]); X = np.array([[1., 1, 2, 1, 2]])  # mt-metrics-eval testAgreement
    >>> pairwise_accuracy(X, Z, "system")  # 5 of the 10 system pairs
    0.5
    """
    return pairwise_statistic(X, Z, level, "accuracy").value


def acc_eq(X, Z, level: str = "system", epsilon=0.0):
    """acc_eq (Deutsch, Foster & Freitag 2023) with metric ties |dx| <= epsilon.

    acc_eq = (C + T_hm) / (C + D + T_h + T_m + T_hm): a pair is correct when the metric and the humans order it
    the same way, or both tie it (human tie: dz == 0; metric tie: |dx| <= epsilon). mt-metrics-eval
    ``KendallVariants(variant='acc23', epsilon=...)``; averaged over documents at the summary level.

    Parameters
    ----------
    X, Z, level
        As in :func:`pairwise_statistic`.
    epsilon : float or array_like
        >= 0, in the metric's units; one number, or one per metric.

    Returns
    -------
    float or numpy.ndarray

    Examples
    --------
    >>> Z = np.array([[1., 2, 2, 3, 4]]); X = np.array([[2., 1, 1.5, 5, 3]])  # mt-metrics-eval testKendallVariants
    >>> acc_eq(X, Z, "system"), acc_eq(X, Z, "system", epsilon=2)  # (6 concordant) / 10; 3 + 1 tie / 10
    (0.6, 0.4)
    """
    return pairwise_statistic(X, Z, level, "acc-eq", epsilon).value


def tie_calibration(X, Z, level: str = "system") -> PairwiseStat:
    """acc_eq at the epsilon that maximises it ("acc-t"): the tie calibration of Deutsch, Foster & Freitag (2023).

    The candidates are, as in mt-metrics-eval's ``tau_optimization``, epsilon = 0 and every |dx| of a valid pair;
    between the candidates acc_eq is constant, so the maximum over them is the maximum over all epsilon >= 0. The
    search is exact and O(P log P) for P pairs (one sort by |dx| and a running sum; no grid, no sampling: the
    toolkit's ``sample_rate`` is 1). Among equally accurate candidates the smallest epsilon is returned, as the
    toolkit's ``np.nanargmax`` over ascending thresholds does; accuracies are compared in exact integer counts
    when all pairs weigh the same (system and global levels, and the summary level when every document has the
    same number of valid pairs), else as float sums of 1 / (documents x pairs) with a 1e-12 tolerance. At the
    summary level one epsilon serves all documents and maximises their average (the toolkit's
    ``average_by='item'``).

    Parameters
    ----------
    X, Z, level
        As in :func:`pairwise_statistic`.

    Returns
    -------
    PairwiseStat
        ``(value, epsilon)``; NaN for both when there is no valid pair.

    Examples
    --------
    >>> Z = np.array([[1., 2, 2, 3, 4]]); X = np.array([[2., 1, 1.5, 5, 3]])  # mt-metrics-eval testKendallWithTiesOpt
    >>> tie_calibration(X, Z, "system")  # epsilon 0.5 ties (1, 1.5), the human tie (2, 2): 7 of 10
    PairwiseStat(value=0.7, epsilon=0.5)
    """
    return pairwise_statistic(X, Z, level, "acc-t")


# ---------------------------------------------------------------------------------------------------- bootstrap


def _bootstrap(X3, Z, level, statistic, eps, resample, n_resamples, rng) -> np.ndarray:
    n_metrics, n_docs, n_systems = X3.shape
    doc_draws, sys_draws = _draw_indices(rng, resample, n_resamples, n_docs, n_systems)
    out = np.empty((n_resamples, n_metrics))
    cells = n_docs * n_systems
    pairs = n_systems * (n_systems - 1) // 2 * (n_docs if level == "summary" else 1)
    step = 1 if level == "global" else max(1, min(_CHUNK // max(1, n_metrics * pairs), _CHUNK // (n_metrics * cells)))
    tasks = [(None if doc_draws is None else doc_draws[start:start + step],
              None if sys_draws is None else sys_draws[start:start + step], min(step, n_resamples - start))
             for start in range(0, n_resamples, step)]
    parts = run_chunks(f"bootstrap ({level} {statistic})", _bootstrap_chunk, (X3, Z, level, statistic, eps), tasks)
    out[:] = np.concatenate(parts)
    return out


def _bootstrap_chunk(X3, Z, level, statistic, eps, d, s, count) -> np.ndarray:
    """The statistic (count, n_metrics) of ``count`` resamples: drawn documents ``d``, systems ``s`` (None: all)."""
    n_docs, n_systems = Z.shape
    drawn_systems = s is not None
    d = np.broadcast_to(np.arange(n_docs), (count, n_docs)) if d is None else d
    s = np.broadcast_to(np.arange(n_systems), (count, n_systems)) if s is None else s
    i, j = _pair_index(n_systems)
    rows, cols = d[:, :, None], s[:, None, :]
    same = s[:, i] == s[:, j] if drawn_systems and level != "global" else None
    ids = (rows * n_systems + cols) if level == "global" else None
    v, _ = _evaluate(X3[:, rows, cols], Z[rows, cols], level, statistic, eps, same, ids)
    return v.T


def bootstrap_samples(X, Z, level: str = "system", statistic: str = "acc-t", resample: str = "both",
                      n_resamples: int = 1000, seed: int | np.random.Generator = 0, epsilon=0.0) -> np.ndarray:
    """Pairwise statistics of bootstrap resamples of the (document x system) matrix.

    Documents (``"documents"``), systems (``"systems"``) or both (``"both"``) are drawn with replacement, the same
    draw for every metric and for Z, with the indices of :func:`meta_eval.stats.resampling.bootstrap_samples` for the
    same
    seed (Deutsch, Dror & Roth 2021, section 4). "acc-t" re-calibrates epsilon in every resample. A drawn copy of a
    unit is never paired with the unit itself: such a pair is tied in both scores and would count as a correct tie,
    so pairs of a system with its copy (system and summary levels) and of a cell with its copy (global level) are
    left out; pairs between different units count as often as they are drawn.

    Parameters
    ----------
    X, Z, level, statistic, epsilon
        As in :func:`pairwise_statistic`.
    resample : {"both", "systems", "documents"}
    n_resamples : int
    seed : int or numpy.random.Generator

    Returns
    -------
    numpy.ndarray
        Shape (n_resamples,) or (n_resamples, n_metrics); NaN where a resample has no valid pair.

    Examples
    --------
    >>> Z = np.arange(12.0).reshape(3, 4); s = bootstrap_samples(Z, Z, "system", "accuracy", n_resamples=5)
    >>> s.tolist()  # identical metric and human: 1, except resample 1, which drew system 3 four times (no pair)
    [nan, 1.0, 1.0, 1.0, 1.0]
    """
    level, statistic, X3, Z2, single, eps = _setup(X, Z, level, statistic, epsilon)
    resample = _choice("resample", resample, RESAMPLE_METHODS)
    n_resamples = _positive_int("n_resamples", n_resamples)
    out = _bootstrap(X3, Z2, level, statistic, eps, resample, n_resamples, _rng(seed))
    return out[:, 0] if single else out


def bootstrap_ci(X, Z, level: str = "system", statistic: str = "acc-t", resample: str = "both",
                 n_resamples: int = 1000, confidence: float = 0.95, seed: int | np.random.Generator = 0,
                 epsilon=0.0) -> Interval:
    """Percentile bootstrap interval of a pairwise statistic (as :func:`meta_eval.stats.resampling.bootstrap_ci`).

    The (1 - confidence)/2 and (1 + confidence)/2 percentiles of :func:`bootstrap_samples` (resamples without a
    valid pair left out); ``point`` is the statistic on the full data. For "acc-t" every resample has its own
    calibrated epsilon, so the interval covers the uncertainty of the calibration too.

    Returns
    -------
    meta_eval.stats.resampling.Interval
        ``(lower, upper, point)``: floats for one metric, arrays of shape (n_metrics,) for several.

    Raises
    ------
    ValueError
        On invalid input, or when the statistic is undefined on the full data.

    Examples
    --------
    >>> rng = np.random.default_rng(0); Z = rng.normal(size=(20, 8)); X = Z + rng.normal(size=(20, 8))
    >>> lo, hi, point = bootstrap_ci(X, Z, "summary", "acc-t", n_resamples=200, seed=1)
    >>> bool(lo < point < hi)
    True
    """
    confidence = _confidence(confidence)
    level, statistic, X3, Z2, single, eps = _setup(X, Z, level, statistic, epsilon)
    resample = _choice("resample", resample, RESAMPLE_METHODS)
    n_resamples = _positive_int("n_resamples", n_resamples)
    point = _evaluate(X3[:, None], Z2[None], level, statistic, eps)[0][:, 0]
    if np.isnan(point).any():
        raise ValueError(f"the {level}-level {statistic} is undefined (no valid pair) for metric(s) "
                         f"{np.flatnonzero(np.isnan(point)).tolist()}")
    samples = _bootstrap(X3, Z2, level, statistic, eps, resample, n_resamples, _rng(seed))
    lower, upper = percentile_interval(samples, confidence)
    if single:
        return Interval(float(lower[0]), float(upper[0]), float(point[0]))
    return Interval(lower, upper, point)


# ------------------------------------------------------------------------------------------ permutation tests


def _pair_counts(pair, Z, level, epsilons) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per group (document, or one group), the weight of one pair and the numbers of pairs that only A gets right
    (n_a) and that only B gets right (n_b), each metric with its own epsilon."""
    if level == "global":
        z = Z.ravel()
        ok = ~np.isnan(z)
        n_a = n_b = total = 0
        for keep, (ca, cb) in _global_outcomes([pair[0].ravel()[ok], pair[1].ravel()[ok]], epsilons, z[ok]):
            n_a += int(np.count_nonzero(keep & ca & ~cb))
            n_b += int(np.count_nonzero(keep & cb & ~ca))
            total += int(np.count_nonzero(keep))
        return np.array([1.0 / total]), np.array([n_a]), np.array([n_b])
    h = _human(_diffs(Z[None], level), level, Z.shape[1] * (Z.shape[1] - 1) // 2)
    dx = _diffs(pair, level)
    ca, cb = (np.where(np.abs(dx[k]) <= epsilons[k], h.tie[0], np.sign(dx[k]) == h.sign[0]) for k in (0, 1))
    shape = (h.counts.shape[-1], -1)
    weight = h.weight[0].reshape(shape).max(axis=1)  # the one weight of each group's valid pairs (0: none)
    return weight, (ca & ~cb).reshape(shape).sum(axis=1), (cb & ~ca).reshape(shape).sum(axis=1)


def _ordered_counts(a: np.ndarray, b: np.ndarray, Z: np.ndarray, level: str, statistic: str, eps2: np.ndarray,
                    n_resamples: int, seed, resample: str,
                    swaps: np.ndarray | None = None) -> tuple[int, int, int]:
    """(#(delta* >= observed), #(delta* <= observed), #valid) for H1: a beats b, computed in the canonical order of
    the pair (:func:`meta_eval.stats.resampling._reversed`) from ``default_rng(seed)`` (common random numbers:
    ``swaps``, the score-swap masks, are the same for every pair), so that (a, b) and (b, a) are one computation."""
    flip = _reversed(a, b)
    pair = np.stack([b, a] if flip else [a, b])
    eps = eps2[::-1] if flip else eps2
    if swaps is None and resample != "pairs":
        swaps = _swap_masks(seed, n_resamples, Z, resample)
    _, ge, le, valid = _permutation_counts(pair, Z, level, statistic, eps, n_resamples,
                                           _fresh(seed), resample, swaps)
    return (le, ge, valid) if flip else (ge, le, valid)


def _permutation_counts(pair: np.ndarray, Z: np.ndarray, level: str, statistic: str, eps2: np.ndarray,
                        n_resamples: int, rng: np.random.Generator, resample: str,
                        swaps: np.ndarray | None = None) -> tuple[float, int, int, int]:
    """Observed delta = stat(A) - stat(B) and, over the permutations, #(delta >= observed), #(delta <= observed),
    #valid permutations (``swaps``: the score-swap masks; ``rng``: the outcome swaps of resample "pairs")."""
    if resample == "pairs":
        if statistic == "acc-t":
            eps2 = _evaluate(pair[:, None], Z[None], level, "acc-t")[1][:, 0]
        if np.isnan(eps2).any():
            raise ValueError(f"the {level}-level {statistic} is undefined (no valid pair)")
        weight, n_a, n_b = _pair_counts(pair, Z, level, eps2)
        observed = float(weight @ (n_a - n_b))
        # swapping the outcomes of k of a group's n_a pairs (each with probability 1/2) moves (n_a - 2k) * weight
        # from A to B: only the binomial numbers of swapped pairs of each kind matter
        keep_a = rng.binomial(n_a, 0.5, size=(n_resamples, len(n_a)))
        keep_b = rng.binomial(n_b, 0.5, size=(n_resamples, len(n_b)))
        delta = ((2 * keep_a - n_a) - (2 * keep_b - n_b)) @ weight
        return (observed, int((delta >= observed - _TIE_TOL).sum()), int((delta <= observed + _TIE_TOL).sum()),
                n_resamples)
    if statistic == "acc-eq" and (eps2 > 0).any():
        raise ValueError("acc-eq with epsilon > 0 cannot be tested by swapping scores: the swapped matrices mix two "
                         "metrics' scales, so one epsilon has no meaning for them; use resample='pairs' (each metric "
                         "keeps its epsilon) or statistic 'acc-t'")
    pair, Z, swaps = fixed_system_pair(pair, Z, level, swaps)  # system level, fixed system scores: swap systems
    pair = np.stack([_standardize(pair[0]), _standardize(pair[1])])
    values = _evaluate(pair[:, None], Z[None], level, statistic, eps2)[0][:, 0]
    observed = float(values[0] - values[1])
    if np.isnan(observed):
        raise ValueError(f"the {level}-level {statistic} is undefined (no valid pair)")
    deltas = _swap_deltas_summary if level == "summary" else _swap_deltas
    delta = deltas(pair, Z, level, statistic, swaps)
    ok = ~np.isnan(delta)
    valid = int(ok.sum())
    if valid == 0:
        raise ValueError("no permutation gave a defined difference")
    ge = int((delta[ok] >= observed - _TIE_TOL).sum())
    le = int((delta[ok] <= observed + _TIE_TOL).sum())
    return observed, ge, le, valid


def _swap_deltas(pair: np.ndarray, Z: np.ndarray, level: str, statistic: str, swaps: np.ndarray) -> np.ndarray:
    """stat(A') - stat(B') for each swap mask (n, D or 1, S or 1): A' takes B's scores where the mask is set and B'
    takes A's; both statistics computed from scratch ("acc-t" re-calibrated)."""
    n_docs, n_systems = Z.shape
    step = 1 if level == "global" else max(1, _CHUNK // (2 * n_docs * n_systems))
    if len(swaps) == 0:
        return np.empty(0)
    return np.concatenate(run_chunks(f"permutations ({level} {statistic})", _swap_chunk, (pair, Z, level, statistic),
                                     [(swaps[start:start + step],) for start in range(0, len(swaps), step)]))


def _swap_chunk(pair: np.ndarray, Z: np.ndarray, level: str, statistic: str, m: np.ndarray) -> np.ndarray:
    """stat(A') - stat(B') for the swap masks ``m`` of one chunk (:func:`_swap_deltas`)."""
    a, b = pair
    perm = np.concatenate([np.where(m, b, a), np.where(m, a, b)])  # (2 * chunk, D, S)
    v = _evaluate(perm[:, None], Z[None], level, statistic, np.zeros(len(perm)))[0][:, 0]
    return v[:len(m)] - v[len(m):]


def _swap_deltas_summary(pair: np.ndarray, Z: np.ndarray, level: str, statistic: str,
                         swaps: np.ndarray) -> np.ndarray:
    """:func:`_swap_deltas` at the summary level from tables: the same numbers up to float rounding, faster.

    A swapped matrix gives the pair (i, j) of a document one of four differences, A_i - A_j, A_i - B_j, B_i - A_j or
    B_i - B_j, chosen by whether cells i and j are swapped (combination c = 2 swap_i + swap_j; the other matrix gets
    3 - c). Each pair's outcome and sort key in each combination is computed once; a permutation only gathers,
    sorts the keys ("acc-t") and takes the maximal running gain (:func:`_best_packed`; only its value is needed).
    "acc-t" with documents of unequal numbers of valid pairs goes to :func:`_swap_deltas`.
    """
    a, b = pair
    n_docs, n_systems = Z.shape
    i, j = _pair_index(n_systems)
    n_pairs = len(i)
    q = n_docs * n_pairs
    h = _human(_diffs(Z[None], "summary"), "summary", n_pairs)
    if statistic == "acc-t" and not h.uniform[0]:
        return _swap_deltas(pair, Z, level, statistic, swaps)
    dx4 = np.stack([a[:, i] - a[:, j], a[:, i] - b[:, j], b[:, i] - a[:, j], b[:, i] - b[:, j]]).reshape(4, q)
    sign_ok = np.sign(dx4) == h.sign[0]
    if statistic == "acc-t":  # equal weights: counts, divided by the number of valid pairs at the end
        key4 = _keys(dx4, h.tie[0] & ~sign_ok, sign_ok & ~h.tie[0]).ravel()
        diff4 = (sign_ok.astype(np.int32) - sign_ok[::-1]).ravel()  # combination c versus 3 - c
    else:
        diff4 = (h.weight[0] * (sign_ok.astype(np.float64) - sign_ok[::-1])).ravel()
    delta = np.empty(len(swaps))
    step = max(1, _CHUNK // (4 * q))
    offsets = np.arange(q)
    for start in range(0, len(swaps), step):
        m = np.broadcast_to(swaps[start:start + step], (min(step, len(swaps) - start), n_docs, n_systems))
        n = len(m)
        combo = ((m[:, :, i].view(np.uint8) << 1) | m[:, :, j].view(np.uint8)).reshape(n, q)
        flat = combo.astype(np.intp) * q + offsets
        d = diff4[flat].sum(axis=1)
        if statistic == "acc-t":
            best_a = np.maximum(_sorted_gains(key4[flat]).max(axis=1), 0)
            best_b = np.maximum(_sorted_gains(key4[3 * q + 2 * offsets - flat]).max(axis=1), 0)  # (3 - c) q + o
            d = (d + best_a - best_b) / h.counts.sum()
        delta[start:start + n] = d
    return delta


def _test_setup(level, statistic, n_resamples, resample, epsilon, n_metrics):
    level = _choice("level", level, LEVELS)
    statistic = _choice("statistic", statistic, STATISTICS)
    resample = _choice("resample", resample, PERMUTATION_METHODS)
    n_resamples = _positive_int("n_resamples", n_resamples)
    _no_epsilon(statistic, epsilon)
    eps = _epsilons(epsilon, n_metrics) if statistic == "acc-eq" else np.zeros(n_metrics)
    return level, statistic, n_resamples, resample, eps


def permutation_test(X_a, X_b, Z, level: str = "system", statistic: str = "acc-t", n_resamples: int = 1000,
                     seed: int | np.random.Generator = 0, resample: str = "both", epsilon=0.0,
                     add_one: bool = False) -> float:
    """One-sided permutation test that metric A's pairwise statistic beats metric B's (H1: stat(A) > stat(B)).

    Two ways to build the null distribution, both mt-metrics-eval's:

    - ``resample="both"`` (default), ``"systems"`` or ``"documents"``: swap the two metrics' *scores*, as
      ``stats.PermutationSigDiff`` (the toolkit's default ``perm_test='scores'``) and Deutsch et al. (2021)'s
      PERM-BOTH / PERM-SYSTEMS / PERM-INPUTS do: both matrices are z-scored over their cells, then each (document,
      system) cell, each system (whole columns) or each document (whole rows) is swapped with probability 1/2 and
      the statistic recomputed. For "acc-t" epsilon is re-calibrated on every permuted matrix, as the toolkit's
      ``PermutationSigDiff(corr_fcn=KendallWithTiesOpt)`` does, so the test accounts for the calibration. The
      system-level test of ``data.CompareMetricsWithGlobalAccuracy`` swaps whole system scores: ``"systems"``.
      "acc-eq" with epsilon > 0 is refused here (one epsilon has no meaning for swapped scores of two metrics).
      Cost: one sort per permuted matrix (about 0.5 s for 1,000 permutations of a 100 x 16 matrix at the summary
      level); at the global level each permutation is a full O(n^2) pass, use "pairs" or the summary level there.
    - ``resample="pairs"``: swap the two metrics' *pair outcomes* (correct or not), each pair with probability
      1/2, every metric keeping its own epsilon, calibrated once on the full data for "acc-t": the toolkit's
      ``stats.PairwisePermutationSigDiff`` (``perm_test='pairs'``), which the WMT23/24 task sets use for segment-level
      acc-t (``tasks.py``). Only the number of swapped pairs of each kind in each group matters, so the
      permutations are drawn as binomial counts: the same distribution, at O(groups) per permutation.

    Which of the two the Ties Matter paper used could not be checked against its text here; the toolkit's
    ``PairwisePermutationSigDiff`` docstring presents swapping pairs as the cheaper alternative to re-calibrating on
    every draw.

    The p-value is the share of permutations with delta >= the observed delta, no +1 correction (as mt-metrics-eval
    and :func:`meta_eval.stats.resampling.permutation_test`; 0 means p < 1/n_resamples); ``add_one=True`` gives
    (count + 1) / (n + 1). The toolkit's early stopping (``PermutationSigDiffParams``) is not used: all
    ``n_resamples`` permutations are run.

    Parameters
    ----------
    X_a, X_b : array_like
        (n_docs, n_systems) metric matrices, higher = better, NaN in the same cells as Z.
    Z : array_like
        (n_docs, n_systems) human scores.
    level, statistic
        As in :func:`pairwise_statistic`.
    n_resamples : int
    seed : int or numpy.random.Generator
    resample : {"both", "systems", "documents", "pairs"}
    epsilon : float or (float, float)
        "acc-eq" with ``resample="pairs"`` only: one epsilon, or one for A and one for B.
    add_one : bool

    Returns
    -------
    float
        One-sided p-value; a metric against itself gives 1.0.

    Raises
    ------
    ValueError
        On invalid input or when the statistic is undefined on the full data.

    Examples
    --------
    >>> rng = np.random.default_rng(0); Z = rng.normal(size=(20, 10))
    >>> good, bad = Z + 0.1 * rng.normal(size=Z.shape), Z + 2 * rng.normal(size=Z.shape)
    >>> permutation_test(good, bad, Z, "summary", "acc-t", n_resamples=200, seed=0)
    0.0
    >>> permutation_test(good, good, Z, "summary", "acc-t", n_resamples=200, seed=0, resample="pairs")
    1.0
    """
    level, statistic, n_resamples, resample, eps = _test_setup(level, statistic, n_resamples, resample, epsilon, 2)
    pair, Z = _pair(X_a, X_b, Z)
    _check_global(Z, level)
    ge, _, valid = _ordered_counts(pair[0], pair[1], Z, level, statistic, eps, n_resamples, seed,
                                   resample)
    return (ge + 1) / (valid + 1) if add_one else ge / valid


def pairwise_permutation_pvalues(X, Z, level: str = "system", statistic: str = "acc-t", n_resamples: int = 1000,
                                 seed: int | np.random.Generator = 0, resample: str = "both", epsilon=0.0,
                                 add_one: bool = False) -> np.ndarray:
    """:func:`permutation_test` p-values for every ordered pair of metrics, for
    :func:`meta_eval.stats.clusters.significance_clusters`.

    ``P[i, j]`` is the one-sided p-value for H1: metric i's statistic beats metric j's; the diagonal is NaN. One run
    of permutations per unordered pair serves both directions (swapping the roles negates every permuted delta, so
    P[j, i] is the share of deltas <= the observed one). Each pair draws from ``numpy.random.default_rng(seed)``
    (common random numbers: the same swap masks for every pair; "pairs": the same generator state) in the
    canonical order of its two matrices, so ``P[i, j]`` equals :func:`permutation_test` of (X[i], X[j]) with the
    same seed bit for bit, whatever the other metrics, as
    :func:`meta_eval.stats.resampling.pairwise_permutation_pvalues`.

    Parameters
    ----------
    X : array_like
        (n_metrics, n_docs, n_systems), higher = better.
    Z, level, statistic, n_resamples, seed, resample, add_one
        As in :func:`permutation_test`.
    epsilon : float or array_like
        "acc-eq" with ``resample="pairs"``: one epsilon or one per metric.

    Returns
    -------
    numpy.ndarray
        Shape (n_metrics, n_metrics).

    Examples
    --------
    >>> rng = np.random.default_rng(0); Z = rng.normal(size=(20, 10))
    >>> X = np.stack([Z + s * rng.normal(size=Z.shape) for s in (0.1, 3.0)])
    >>> pairwise_permutation_pvalues(X, Z, "summary", "acc-t", n_resamples=100, resample="pairs").tolist()
    [[nan, 0.0], [1.0, nan]]
    """
    X3, Z2, single = _metric_stack(X, Z)
    if single or X3.shape[0] < 2:
        raise ValueError("X must hold at least 2 metrics: shape (n_metrics, n_docs, n_systems)")
    n = X3.shape[0]
    level, statistic, n_resamples, resample, eps = _test_setup(level, statistic, n_resamples, resample, epsilon, n)
    _check_global(Z2, level)
    swaps = None if resample == "pairs" else _swap_masks(seed, n_resamples, Z2, resample)  # once, for every pair
    if resample == "pairs" and statistic == "acc-t":  # calibrate each metric once, not once per pair
        eps = _evaluate(X3[:, None], Z2[None], level, "acc-t")[1][:, 0]
        statistic = "acc-eq"
    P = np.full((n, n), np.nan)
    extra = 1 if add_one else 0
    for i in range(n):
        for j in range(i + 1, n):
            ge, le, valid = _ordered_counts(X3[i], X3[j], Z2, level, statistic, eps[[i, j]], n_resamples, seed,
                                            resample, swaps)
            P[i, j] = (ge + extra) / (valid + extra)
            P[j, i] = (le + extra) / (valid + extra)
    return P
