"""System-level pairwise accuracy pooled over groups of systems (WMT's accuracy over all language pairs).

WMT21-23 rank metrics by one system-level pairwise accuracy over several language pairs (Kocmi et al. 2021; WMT23
metrics findings, Freitag et al. 2023, the first task of mt-metrics-eval's ``tasks.WMT23``): over the *union* of
every language pair's system pairs, the share of pairs that the metric orders as the humans do. Systems are keyed
by (language pair, system), so a pair never crosses language pairs::

    pooled accuracy = sum_g correct_g / sum_g pairs_g

a pair-weighted mean of the per-group accuracies (a group with 15 systems and 105 pairs weighs 105/10 as much as
one with 5 systems), not their plain mean. mt-metrics-eval: ``data.CompareMetricsWithGlobalAccuracy``, whose
``_Accuracy`` sums ``stats.Agreement``'s (agreeing pairs, pairs) over the language pairs and divides once.

Here the groups are labels of the columns of one (document x system) matrix: ``groups[j]`` is the group (language
pair) of system column ``j``, and a pair of columns counts only when both carry the same label. Labels are compared
as strings (as :func:`meta_eval.matrix.to_matrix` compares its labels); groups are listed in the order of their
first column.

Pair outcomes and ties are those of :mod:`meta_eval.stats.pairwise` at the system level (mt-metrics-eval's
``stats.Agreement``): each system is scored by the mean of its own non-missing cells, means rounded to 12
significant digits (:func:`meta_eval.stats.resampling.snap`); a pair is correct when sign(metric delta) equals
sign(human delta), sign(0) = 0, so a pair the humans tie is correct only when the metric ties it exactly, a metric
tie of a pair the humans rank is wrong, and every pair with both human means defined is in the denominator. Pairs
of a system with no human score are left out. ``"acc-t"`` (Deutsch, Foster & Freitag 2023) is acc_eq with ONE
epsilon, calibrated over the pooled pairs (all pairs weigh the same, as for one language pair); its per-group
values are each group's acc_eq at that pooled epsilon, so the pooled value is still their pair-weighted mean.
Other statistics are refused.

Documents. The point value needs no document layout: a system mean is over that column's own cells, whichever rows
they are in. In WMT data each language pair has its own segments, so column ``j`` of group ``g`` is NaN on the other
groups' rows; the bootstrap relies on that and checks it: the documents of group ``g`` are the rows with no valid
cell outside ``g`` (a row without any valid cell belongs to every group, as meta-eval's one-matrix bootstrap draws
such rows too), and a row with valid cells in two groups is refused by :func:`pooled_samples` (key the rows by
(group, document)). The permutation test swaps single cells and needs no layout.

Resampling, as meta-eval's system level (:func:`meta_eval.stats.describe`), within each group:

- interval (:func:`pooled_interval`): BOOT-BOTH stratified by group (Deutsch, Dror & Roth 2021): in every resample
  each group draws its own documents and its own systems with replacement (group after group, documents then
  systems, from one ``np.random.default_rng(seed)``), a system is never paired with its own drawn copy, and the
  pooled statistic is recomputed over the resampled groups ("acc-t" re-calibrated); percentile interval;
- test (:func:`pooled_versus`): ``"accuracy"`` PERM-BOTH: each metric is z-scored within each group (one mean and SD
  over the group's cells), every (document, system) cell is swapped between the two metrics with probability 1/2
  and both pooled accuracies recomputed; ``"acc-t"`` swaps the two metrics' pooled pair outcomes, each metric keeping
  its own pooled epsilon (mt-metrics-eval's ``PairwisePermutationSigDiff``). One-sided, p = share of permutations
  with delta >= the observed delta, no +1.

With one group every function here returns exactly what :func:`meta_eval.stats.point`, :func:`~meta_eval.stats.
interval`, :func:`~meta_eval.stats.versus` and :func:`~meta_eval.stats.pvalue_matrix` return at the system level for
the same seed (``tests/test_pooled.py``).

Differences from mt-metrics-eval's significance test for this task (``ComputeSigMatrix`` with ``_Accuracy``,
``PermutationSigDiff(average_by='none', perm_test='scores')``): it z-scores the concatenated *system-level* scores of
all language pairs together and swaps whole system scores (a PERM-SYSTEMS test on system scores), with early
stopping (every 100 draws, stop when p < 0.02 or p > 0.5). Here the cells are swapped (PERM-BOTH, the test meta-eval
uses for ``accuracy`` at the system level), each group standardised on its own so that one language pair's score
range does not leak into another's swaps, and all ``n_resamples`` permutations are run. mt-metrics-eval has no
interval for this task. Its system scores of a metric are the metric's own system-level scores (for chrF, corpus
chrF); here, as everywhere in meta-eval, they are the means of the segment scores.

References
----------
T. Kocmi, C. Federmann, R. Grundkiewicz, M. Junczys-Dowmunt, H. Matsushita and A. Menezes (2021). To Ship or Not to
Ship: An Extensive Evaluation of Automatic Metrics for Machine Translation. WMT (pairwise accuracy over system pairs
of many language pairs).
M. Freitag, N. Mathur, C. Lo, E. Avramidis, R. Rei, B. Thompson, T. Kocmi, F. Blain, D. Deutsch, C. Stewart,
C. Zerva, S. Castilho, A. Lavie and G. Foster (2023). Results of WMT23 Metrics Shared Task: Metrics Might Be Guilty
but References Are Not Innocent. WMT (system-level pairwise accuracy over en-de, he-en and zh-en).
D. Deutsch, G. Foster and M. Freitag (2023). Ties Matter: Meta-Evaluating Modern Metrics with Pairwise Accuracy and
Tie Calibration. EMNLP (acc_eq, tie calibration).
D. Deutsch, R. Dror and D. Roth (2021). A Statistical Analysis of Summarization Evaluation Metrics using Resampling
Methods. TACL 9 (BOOT-BOTH, PERM-BOTH).
google-research/mt-metrics-eval: ``mt_metrics_eval/data.py`` ``CompareMetricsWithGlobalAccuracy``,
``mt_metrics_eval/stats.py`` ``Agreement``, ``PermutationSigDiff``, ``mt_metrics_eval/tasks.py`` ``WMT23``
(commit 68a481ae).

Examples
--------
>>> import numpy as np
>>> Z = np.array([[1., 2, 3, 1, 2]])  # group a: systems 0-2 (3 pairs), group b: systems 3-4 (1 pair)
>>> X = np.array([[[1., 3, 2, 2, 1]]])  # a: (0,1), (0,2) right, (1,2) wrong; b: wrong
>>> est = pooled_point(X, Z, ["a", "a", "a", "b", "b"])
>>> est.values.tolist(), est.group_values.tolist(), est.group_pairs.tolist()
([0.5], [[0.6666666666666666, 0.0]], [3, 1])
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from meta_eval.scoring.chunks import run_chunks
from meta_eval.stats.pairwise import _CHUNK, _accuracy, _calibrate, _diffs, _human, _offset_diffs, _pair_index
from meta_eval.stats.resampling import (_TIE_TOL, _draw_indices, _fresh, _metric_stack, _pair,
                                        _positive_int, _reversed, _rng, _standardize, _swap_masks, _system_means,
                                        fixed_system_pair, percentile_interval, snap)

__all__ = ["STATISTICS", "PooledEstimate", "pooled_point", "pooled_samples", "pooled_interval", "pooled_versus",
           "pooled_pvalue_matrix", "pooled_describe"]

STATISTICS = ("accuracy", "acc-t")


class PooledEstimate(NamedTuple):
    """A pooled statistic and its parts; arrays of fixed shape whatever the number of metrics.

    ``values`` (n_metrics,): the pooled statistic, NaN when no group has a pair. ``epsilon`` (n_metrics,): the
    pooled tie threshold of "acc-t", NaN for "accuracy". ``groups`` (n_groups,): the labels, in the order of their
    first column. ``group_values`` (n_metrics, n_groups): each group's accuracy (for "acc-t" its acc_eq at the
    pooled epsilon), NaN for a group without a pair. ``group_correct`` (n_metrics, n_groups) and ``group_pairs``
    (n_groups,): integer counts of correct and of all valid pairs, so that ``values == group_correct.sum(1) /
    group_pairs.sum()``.
    """

    values: np.ndarray
    epsilon: np.ndarray
    groups: tuple[str, ...]
    group_values: np.ndarray
    group_correct: np.ndarray
    group_pairs: np.ndarray


class _Groups(NamedTuple):
    labels: tuple[str, ...]
    columns: tuple[np.ndarray, ...]  # the system columns of each group, ascending


# ----------------------------------------------------------------------------------------------- validation


def _statistic(statistic) -> str:
    if not isinstance(statistic, str) or statistic not in STATISTICS:
        raise ValueError(f"the pooled system-level statistic must be one of {', '.join(STATISTICS)} (WMT's pooled "
                         f"pairwise accuracy, and acc-t with one epsilon over the pooled pairs), got {statistic!r}")
    return statistic


def _groups(groups, n_systems: int) -> _Groups:
    """One label per system column -> the labels in order of first appearance and each label's columns."""
    if isinstance(groups, (str, bytes)) or not hasattr(groups, "__len__") or not hasattr(groups, "__iter__"):
        raise ValueError(f"groups must be a sequence of labels, one per system column, got {groups!r}")
    if np.ndim(groups) != 1:
        raise ValueError(f"groups must be one label per system column (1-D), got shape {np.shape(groups)}")
    labels = [str(g) for g in groups]
    if len(labels) != n_systems:
        raise ValueError(f"groups has {len(labels)} labels but the matrices have {n_systems} system columns")
    order = list(dict.fromkeys(labels))
    arr = np.asarray(labels, dtype=object)
    return _Groups(tuple(order), tuple(np.flatnonzero(arr == g) for g in order))


def _group_rows(Z: np.ndarray, g: _Groups) -> list[np.ndarray]:
    """The documents of each group: the rows with no valid cell outside it; raise if a row has cells in two."""
    valid = ~np.isnan(Z)
    member = np.stack([valid[:, cols].any(axis=1) for cols in g.columns], axis=1)  # (n_docs, n_groups)
    shared = member.sum(axis=1) > 1
    if shared.any():
        row = int(np.flatnonzero(shared)[0])
        names = ", ".join(repr(g.labels[k]) for k in np.flatnonzero(member[row]))
        raise ValueError(f"{int(shared.sum())} document rows have scores in more than one group, the first is row "
                         f"{row} (groups {names}): the pooled bootstrap resamples each group's own documents, so a "
                         f"row must belong to one group; key the rows by (group, document), e.g. doc ids "
                         f"'en-de:1' and 'zh-en:1'")
    return [np.flatnonzero(member[:, k] | ~member.any(axis=1)) for k in range(len(g.labels))]


# -------------------------------------------------------------------------------------------------- evaluation


def _pooled_diffs(A: np.ndarray, g: _Groups) -> np.ndarray:
    """(..., D, S) -> (..., Q): differences of the rounded system means over the pairs within each group, group
    after group (within a group in the order of :func:`meta_eval.stats.pairwise._pair_index`)."""
    means = snap(_system_means(A))
    return np.concatenate([_offset_diffs(means[..., cols]) if len(cols) > 1 else means[..., :0]
                           for cols in g.columns], axis=-1)


def _score(dx: np.ndarray, dz: np.ndarray, statistic: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The pooled statistic of dx (M, B, Q) against dz (B, Q): (values (M, B), epsilons (M, B), correct (M, B, Q)),
    NaN where a row has no valid pair; pairwise's system level with the pooled pairs as one group."""
    M, B, Q = dx.shape
    if Q == 0:
        return np.full((M, B), np.nan), np.full((M, B), np.nan), np.zeros((M, B, 0), dtype=bool)
    h = _human(dz, "system", Q)
    sign_ok = np.sign(dx) == h.sign  # NaN (invalid pair): False
    if statistic == "acc-t":
        v, e = _calibrate(dx, sign_ok, h)
        correct = np.where(np.abs(dx) <= e[..., None], h.tie, sign_ok)
    else:
        v, e, correct = _accuracy(sign_ok, h), np.zeros((M, B)), sign_ok  # |dx| <= 0 ties only when sign(dx) = 0
    defined = np.broadcast_to(h.defined, (M, B))
    return np.where(defined, v, np.nan), np.where(defined, e, np.nan), correct


def pooled_point(X, Z, groups, statistic: str = "accuracy") -> PooledEstimate:
    """The pooled system-level statistic of every metric in ``X`` against ``Z``, with its per-group parts.

    Parameters
    ----------
    X : array_like
        (n_metrics, n_docs, n_systems) or (n_docs, n_systems), higher = better, NaN in the same cells as Z.
    Z : array_like
        (n_docs, n_systems) human scores, NaN where a cell is missing.
    groups : sequence
        One label per system column (the language pair); only pairs of columns with the same label count.
    statistic : {"accuracy", "acc-t"}

    Returns
    -------
    PooledEstimate

    Raises
    ------
    ValueError
        On another statistic, a ``groups`` of the wrong length, or the matrix errors of
        :func:`meta_eval.stats.pairwise.pairwise_statistic` (shapes, NaN patterns, infinite values).

    Examples
    --------
    >>> Z = np.array([[1., 2, 1, 2], [1., 2, 1, 2]])
    >>> pooled_point(np.stack([Z, -Z]), Z, ["de", "de", "zh", "zh"]).values.tolist()
    [1.0, 0.0]
    """
    statistic = _statistic(statistic)
    X3, Z2, _ = _metric_stack(X, Z)
    g = _groups(groups, Z2.shape[1])
    dz = _pooled_diffs(Z2[None], g)  # (1, Q)
    values, eps, correct = _score(_pooled_diffs(X3, g)[:, None], dz, statistic)
    bounds = np.cumsum([0] + [len(cols) * (len(cols) - 1) // 2 for cols in g.columns])
    valid = ~np.isnan(dz[0])
    pairs = np.array([np.count_nonzero(valid[a:b]) for a, b in zip(bounds[:-1], bounds[1:])], dtype=np.int64)
    right = np.array([[np.count_nonzero(c[a:b]) for a, b in zip(bounds[:-1], bounds[1:])] for c in correct[:, 0]],
                     dtype=np.int64).reshape(X3.shape[0], len(g.labels))
    with np.errstate(invalid="ignore", divide="ignore"):
        per_group = np.where(pairs > 0, right / np.maximum(pairs, 1), np.nan)
    if statistic == "accuracy":
        eps = np.full_like(values, np.nan)
    return PooledEstimate(values[:, 0], eps[:, 0], g.labels, per_group, right, pairs)


# ---------------------------------------------------------------------------------------------------- bootstrap


def _bootstrap_chunk(X3: np.ndarray, Z: np.ndarray, parts: tuple, statistic: str, draws: tuple) -> np.ndarray:
    """The pooled statistic (count, n_metrics) of one chunk of resamples; ``parts`` holds each group's (rows,
    columns), ``draws`` each group's drawn (documents, systems) indices into them."""
    dx, dz = [], []
    for (rows, cols), (d, s) in zip(parts, draws):
        if len(cols) < 2:  # no pair
            continue
        i, j = _pair_index(len(cols))
        r, c = rows[d][:, :, None], cols[s][:, None, :]
        dx.append(_diffs(X3[:, r, c], "system"))
        dz.append(_diffs(Z[r, c], "system", s[:, i] == s[:, j]))  # a system and its own copy: no pair
    if not dx:
        return np.full((len(draws[0][0]), X3.shape[0]), np.nan)
    v, _, _ = _score(np.concatenate(dx, axis=-1), np.concatenate(dz, axis=-1), statistic)
    return v.T


def pooled_samples(X, Z, groups, statistic: str = "accuracy", n_resamples: int = 1000,
                   seed: int | np.random.Generator = 0) -> np.ndarray:
    """Pooled statistics of stratified BOOT-BOTH resamples, shape (n_resamples, n_metrics), NaN where a resample
    has no valid pair.

    Each group draws its documents (:func:`_group_rows`) and its systems with replacement, group after group,
    documents then systems, all before any work (with one group these are the indices of
    :func:`meta_eval.stats.pairwise.bootstrap_samples` for the same seed); a drawn copy of a system is never paired
    with the system itself; "acc-t" re-calibrates its pooled epsilon in every resample.

    Raises
    ------
    ValueError
        As :func:`pooled_point`, and when a document row has valid cells in two groups.
    """
    statistic = _statistic(statistic)
    n_resamples = _positive_int("n_resamples", n_resamples)
    X3, Z2, _ = _metric_stack(X, Z)
    g = _groups(groups, Z2.shape[1])
    rng = _rng(seed)
    parts = tuple(zip(_group_rows(Z2, g), g.columns))
    draws = [_draw_indices(rng, "both", n_resamples, len(rows), len(cols)) for rows, cols in parts]
    cells = sum(len(rows) * len(cols) for rows, cols in parts)
    step = max(1, _CHUNK // max(1, X3.shape[0] * cells))
    tasks = [(tuple((d[start:start + step], s[start:start + step]) for d, s in draws),)
             for start in range(0, n_resamples, step)]
    return np.concatenate(run_chunks(f"bootstrap (pooled system {statistic})", _bootstrap_chunk,
                                     (X3, Z2, parts, statistic), tasks))


def pooled_interval(X, Z, groups, statistic: str = "accuracy", n_resamples: int = 1000,
                    seed: int | np.random.Generator = 0, confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval of the pooled statistic per metric from :func:`pooled_samples`: (lower, upper), arrays
    of shape (n_metrics,), NaN if no resample has a value (as :func:`meta_eval.stats.interval`).

    Examples
    --------
    >>> rng = np.random.default_rng(0); Z = rng.normal(size=(30, 8)); X = Z + rng.normal(size=Z.shape)
    >>> Z[:15, 4:] = X[:15, 4:] = Z[15:, :4] = X[15:, :4] = np.nan  # two groups, 15 documents each
    >>> lo, hi = pooled_interval(X, Z, [0] * 4 + [1] * 4, n_resamples=200, seed=1)
    >>> bool(lo[0] <= pooled_point(X, Z, [0] * 4 + [1] * 4).values[0] <= hi[0])
    True
    """
    return percentile_interval(pooled_samples(X, Z, groups, statistic, n_resamples, seed), confidence)


# ------------------------------------------------------------------------------------------ permutation tests


def _standardize_groups(A: np.ndarray, g: _Groups) -> np.ndarray:
    """z-scores of a (n_docs, n_systems) matrix within each group's columns (one mean and SD per group)."""
    out = np.empty_like(A)
    for cols in g.columns:
        out[:, cols] = _standardize(A[:, cols])
    return out


def _swap_chunk(pair: np.ndarray, Z: np.ndarray, g: _Groups, statistic: str, m: np.ndarray) -> np.ndarray:
    """stat(A') - stat(B') for the swap masks ``m`` (count, D, S) of one chunk: A' takes B's cells where set."""
    a, b = pair
    perm = np.concatenate([np.where(m, b, a), np.where(m, a, b)])
    v = _score(_pooled_diffs(perm, g)[:, None], _pooled_diffs(Z[None], g), statistic)[0][:, 0]
    return v[:len(m)] - v[len(m):]


def _outcome_counts(pair: np.ndarray, Z: np.ndarray, g: _Groups, eps2: np.ndarray) -> tuple[float, int, int]:
    """The weight of one pooled pair and the numbers of pooled pairs only A (n_a) and only B (n_b) gets right, each
    metric with its own epsilon."""
    dz = _pooled_diffs(Z[None], g)[0]
    dx = _pooled_diffs(pair, g)
    tie, sign = dz == 0, np.sign(dz)
    ca, cb = (np.where(np.abs(dx[k]) <= eps2[k], tie, np.sign(dx[k]) == sign) for k in (0, 1))
    total = int(np.count_nonzero(~np.isnan(dz)))
    return 1.0 / total, int(np.count_nonzero(ca & ~cb)), int(np.count_nonzero(cb & ~ca))


def _ordered_counts(a: np.ndarray, b: np.ndarray, Z: np.ndarray, g: _Groups, statistic: str,
                    eps2: np.ndarray | None, n_resamples: int, seed,
                    swaps: np.ndarray | None = None) -> tuple[int, int, int]:
    """:func:`_counts` for H1: a beats b, run in the canonical order of the pair
    (:func:`meta_eval.stats.resampling._reversed`) from ``default_rng(seed)`` (common random numbers: the same
    swap masks for every pair), so that (a, b) and (b, a) are one computation."""
    flip = _reversed(a, b)
    pair = np.stack([b, a] if flip else [a, b])
    eps = None if eps2 is None else (eps2[::-1] if flip else eps2)
    if swaps is None and statistic != "acc-t":
        swaps = _swap_masks(seed, n_resamples, Z, "both")
    ge, le, valid = _counts(pair, Z, g, statistic, eps, n_resamples, _fresh(seed), swaps)
    return (le, ge, valid) if flip else (ge, le, valid)


def _counts(pair: np.ndarray, Z: np.ndarray, g: _Groups, statistic: str, eps2: np.ndarray | None, n_resamples: int,
            rng: np.random.Generator, swaps: np.ndarray | None = None) -> tuple[int, int, int]:
    """Over the permutations: #(delta >= observed), #(delta <= observed), #valid permutations; ``eps2`` the two
    pooled epsilons of "acc-t" (None: calibrate them here); ``swaps`` the swap masks (else drawn from ``rng``)."""
    if statistic == "acc-t":
        if eps2 is None:
            eps2 = _score(_pooled_diffs(pair, g)[:, None], _pooled_diffs(Z[None], g), "acc-t")[1][:, 0]
        if np.isnan(eps2).any():
            raise ValueError("the pooled system-level acc-t is undefined (no group has a valid pair)")
        w, n_a, n_b = _outcome_counts(pair, Z, g, eps2)
        weight, n_a, n_b = np.array([w]), np.array([n_a]), np.array([n_b])
        observed = float(weight @ (n_a - n_b))
        # swapping k of the n_a pairs that only A gets right moves (n_a - 2k) * weight from A to B (binomial counts)
        keep_a = rng.binomial(n_a, 0.5, size=(n_resamples, 1))
        keep_b = rng.binomial(n_b, 0.5, size=(n_resamples, 1))
        delta = ((2 * keep_a - n_a) - (2 * keep_b - n_b)) @ weight
        return (int((delta >= observed - _TIE_TOL).sum()), int((delta <= observed + _TIE_TOL).sum()), n_resamples)
    if swaps is None:
        swaps = rng.random((n_resamples, *Z.shape)) < 0.5
    pair, Z, swaps = fixed_system_pair(pair, Z, "system", swaps)  # fixed system scores: swap whole systems
    pair = np.stack([_standardize_groups(pair[0], g), _standardize_groups(pair[1], g)])
    values = _score(_pooled_diffs(pair, g)[:, None], _pooled_diffs(Z[None], g), statistic)[0][:, 0]
    observed = float(values[0] - values[1])
    if np.isnan(observed):
        raise ValueError("the pooled system-level accuracy is undefined (no group has a valid pair)")
    n_docs, n_systems = Z.shape
    step = max(1, _CHUNK // (2 * n_docs * n_systems))
    delta = np.concatenate(run_chunks(f"permutations (pooled system {statistic})", _swap_chunk,
                                      (pair, Z, g, statistic),
                                      [(swaps[start:start + step],) for start in range(0, n_resamples, step)]))
    ok = ~np.isnan(delta)
    if not ok.any():
        raise ValueError("no permutation gave a defined difference")
    return (int((delta[ok] >= observed - _TIE_TOL).sum()), int((delta[ok] <= observed + _TIE_TOL).sum()),
            int(ok.sum()))


def pooled_versus(X_a, X_b, Z, groups, statistic: str = "accuracy", n_resamples: int = 1000,
                  seed: int | np.random.Generator = 0) -> float:
    """One-sided permutation p-value that metric A's pooled statistic is higher than metric B's.

    "accuracy": PERM-BOTH within groups (z-scores per metric and group, cells swapped with probability 1/2);
    "acc-t": the swap of the two metrics' pooled pair outcomes, each with its own pooled epsilon. See the module
    notes; with one group the p-value of :func:`meta_eval.stats.versus` at the system level.

    Parameters
    ----------
    X_a, X_b : array_like
        (n_docs, n_systems) metric matrices, higher = better, NaN in the same cells as Z.
    Z, groups, statistic
        As in :func:`pooled_point`.
    n_resamples : int
    seed : int or numpy.random.Generator

    Returns
    -------
    float
        The share of permutations whose delta is at least the observed one; a metric against itself gives 1.0.

    Raises
    ------
    ValueError
        On invalid input, or when the statistic is undefined (no group has a pair).

    Examples
    --------
    >>> rng = np.random.default_rng(0); Z = rng.normal(size=(20, 12)) + np.linspace(0, 1, 12)
    >>> good, bad = Z + 0.1 * rng.normal(size=Z.shape), Z + 3 * rng.normal(size=Z.shape)
    >>> groups = ["de"] * 6 + ["zh"] * 6  # 29 of 30 pairs right against 20 of 30
    >>> pooled_versus(good, bad, Z, groups, n_resamples=200, seed=0), pooled_versus(good, good, Z, groups)
    (0.01, 1.0)
    """
    statistic = _statistic(statistic)
    n_resamples = _positive_int("n_resamples", n_resamples)
    pair, Z2 = _pair(X_a, X_b, Z)
    g = _groups(groups, Z2.shape[1])
    ge, _, valid = _ordered_counts(pair[0], pair[1], Z2, g, statistic, None, n_resamples, seed)
    return ge / valid


def pooled_pvalue_matrix(X, Z, groups, statistic: str = "accuracy", n_resamples: int = 1000,
                         seed: int | np.random.Generator = 0) -> np.ndarray:
    """p[i, j]: :func:`pooled_versus` p-value that metric i beats metric j (diagonal NaN), for
    :func:`meta_eval.stats.clusters.significance_clusters`.

    One run of permutations per unordered pair serves both directions; every pair draws from
    ``numpy.random.default_rng(seed)`` (the same swap masks for every pair) in the canonical order of its two
    matrices ("acc-t": each metric calibrated once), so ``p[i, j]`` equals :func:`pooled_versus` of (X[i], X[j])
    bit for bit, as :func:`meta_eval.stats.pvalue_matrix`, which it equals for one group.
    """
    statistic = _statistic(statistic)
    n_resamples = _positive_int("n_resamples", n_resamples)
    X3, Z2, single = _metric_stack(X, Z)
    if single or X3.shape[0] < 2:
        raise ValueError("X must hold at least 2 metrics: shape (n_metrics, n_docs, n_systems)")
    g = _groups(groups, Z2.shape[1])
    n = X3.shape[0]
    eps, swaps = None, None
    if statistic == "acc-t":
        eps = _score(_pooled_diffs(X3, g)[:, None], _pooled_diffs(Z2[None], g), "acc-t")[1][:, 0]
    else:  # drawn once: every pair sees the same swaps
        swaps = _swap_masks(seed, n_resamples, Z2, "both")
    P = np.full((n, n), np.nan)
    for i in range(n):
        for j in range(i + 1, n):
            ge, le, valid = _ordered_counts(X3[i], X3[j], Z2, g, statistic, None if eps is None else eps[[i, j]],
                                            n_resamples, seed, swaps)
            P[i, j], P[j, i] = ge / valid, le / valid
    return P


def pooled_describe(statistic: str = "accuracy", *, n_resamples: int | None = None, seed: int | None = None,
                    confidence: float = 0.95) -> dict:
    """What a pooled result was computed with, in the keys of :func:`meta_eval.stats.describe`."""
    from meta_eval.stats import describe, interval_label

    doc = describe(_statistic(statistic), "system", n_resamples=n_resamples, seed=seed, confidence=confidence)
    doc["grouping"] = "system, pooled over groups"
    doc["resampling"]["method"] = "boot-both within groups"
    doc["resampling"]["label"] = interval_label(doc["resampling"])
    doc["test"] = "perm-both within groups" if statistic == "accuracy" else "perm-pairs (pooled pairs)"
    doc["paper"] += "; pooled over language pairs as WMT21-23 (Kocmi et al. 2021, Freitag et al. 2023)"
    return doc
