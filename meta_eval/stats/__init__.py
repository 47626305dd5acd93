"""One entry point for every meta-evaluation statistic: its value, interval, test against a baseline and ceiling.

The statistics themselves live in small modules; this one says which exist at which level, and dispatches:

=============  ==================================================  =============================  ==================
statistic      paper                                               levels                         module
=============  ==================================================  =============================  ==================
spearman       Spearman (1904)                                     global, summary, system        resampling
pearson        Pearson (1895)                                      global, summary, system        resampling
kendall        Kendall (1945), tau-b                               global, summary, system        resampling
pdp            mt-metrics-eval (2025), pair-difference Pearson     summary                        pdp
accuracy       Kocmi et al. (2021), pairwise accuracy              global, summary, system        pairwise
acc-eq         Deutsch, Foster & Freitag (2023), fixed epsilon     global, summary, system        pairwise
acc-t          Deutsch, Foster & Freitag (2023), tie calibration   global, summary, system        pairwise
spa            Thompson et al. (2024), soft pairwise accuracy      system                         spa
=============  ==================================================  =============================  ==================

Levels are WMT23's groupings (Freitag et al. 2023, "Results of WMT23 Metrics Shared Task", section 3): ``global`` =
"no grouping" (one statistic over all (document, system) cells of the matrices given; ``run`` and the boards compute
the correlations' global level over the set's rows, :func:`meta_eval.evaluate.global_values` and
:func:`~meta_eval.evaluate.global_interval`, which equal these where every pair is one row), ``summary`` = "group by
item" (the statistic within each document, averaged over documents), ``system`` = system level (per-system means; SPA: per-system
segment scores). SPA exists only at the system level: it compares systems through permutation tests over their
segments. PDP (mt-metrics-eval's ``Pearson(pdp=True)``) is one Pearson's r over the differences of every pair of
systems on the same item, pooled over the items: it exists grouped by item only, since with one group (global,
system) it equals Pearson's r.

Resampling (percentile intervals, seeded): BOOT-BOTH (documents and systems drawn with replacement, Deutsch, Dror &
Roth 2021) for the correlations, PDP and the pairwise accuracies; documents only for SPA (drawing a system twice
would pair it with itself). Tests against a baseline, one-sided (the variant is better): PERM-BOTH (cells swapped
between the two metrics, Deutsch et al. 2021) for the correlations, PDP and ``accuracy``; for ``acc-t`` and ``acc-eq``
the swap of the two metrics' per-pair outcomes, each keeping its own epsilon (mt-metrics-eval's
``PairwisePermutationSigDiff``, which the WMT23/24 tasks use for acc-t); for SPA WMT24's cell-swap test with both
SPAs recomputed. The global level of the correlations keeps the Williams test (Clark et al. 2019, Graham &
Baldwin 2014), the SMS paper's test, for the table (:func:`meta_eval.evaluate.evaluate`) AND the all-pairs matrix,
clusters and boards: it is what the published global-level results report, it is exact (no resamples, so no seed),
and one test per (statistic, level) means the clusters must use it too. It treats the rows as independent; where
rows share documents, the summary and system levels' permutation tests are the ones to lean on.

One draw per question: :func:`versus` and :func:`pvalue_matrix` give the same p-value for the same pair, bit for
bit, whatever the other metrics: each pair's resamples come from ``numpy.random.default_rng(seed)`` alone (common
random numbers: all pairs see the same permutation masks), and each pair is computed once, in a canonical order of
its two metrics, and read from its two tails.

Intervals: BOOT-BOTH at every level, the global one included (the same draws as the leaderboards), and
:func:`interval_label` says what every interval is.

Every function takes a stack ``X`` (n_metrics, n_docs, n_systems) oriented so that higher is better, and the human
matrix ``Z`` (n_docs, n_systems), NaN where a cell is missing (see :mod:`meta_eval.matrix`).

Examples
--------
>>> import numpy as np
>>> Z = np.array([[1., 2, 3, 4], [2, 1, 4, 3], [1, 3, 2, 4]])
>>> check_statistic("spa", "summary")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
meta_eval.stats.StatisticError: spa is defined only at the system level (...), not at the summary level
>>> est = point(np.stack([Z, -Z]), Z, "accuracy", "system")
>>> est.values.tolist(), describe("accuracy", "system")["grouping"]
([1.0, 0.0], 'system')
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["STATISTICS", "CORRELATIONS", "PAIRWISE", "LEVELS", "GROUPING", "StatisticError", "Estimate",
           "check_statistic", "describe", "interval_label", "point", "interval", "versus", "pvalue_matrix", "ceiling",
           "tie_baseline", "SPA_BLOCK", "zero_resolution"]

CORRELATIONS = ("spearman", "pearson", "kendall")
PAIRWISE = ("accuracy", "acc-eq", "acc-t")
STATISTICS = CORRELATIONS + ("pdp",) + PAIRWISE + ("spa",)
LEVELS = ("global", "summary", "system")
GROUPING = {"global": "none", "summary": "item", "system": "system"}
#: SPA's tests stop early as WMT24's ``Task`` does: every 100 resamples, when p < 0.02 or p > 0.5 (one rule for
#: :func:`versus` and :func:`pvalue_matrix`).
SPA_BLOCK = 100
_RESAMPLING = CORRELATIONS + ("pdp",)  # computed by meta_eval.stats.resampling (PDP through meta_eval.stats.pdp)
_LEVELS_OF = {**{s: LEVELS for s in CORRELATIONS + PAIRWISE}, "pdp": ("summary",), "spa": ("system",)}
_WHY_NOT = {"spa": "WMT24's soft pairwise accuracy compares systems through permutation tests over their segments",
            "pdp": "it pairs the systems within each item, as mt-metrics-eval's average_by='item'; over a single "
                   "group, every pair of cells or of system means, it equals Pearson's r: use --statistic pearson"}
_PAPER = {
    "spearman": "Spearman (1904)", "pearson": "Pearson (1895)", "kendall": "Kendall (1945), tau-b",
    "pdp": "mt-metrics-eval (2025), pairwise difference Pearson (Pearson(pdp=True), grouped by item)",
    "accuracy": "Kocmi et al. (2021), pairwise accuracy",
    "acc-eq": "Deutsch, Foster & Freitag (2023), acc_eq at a fixed epsilon",
    "acc-t": "Deutsch, Foster & Freitag (2023), acc_eq with tie calibration",
    "spa": "Thompson et al. (2024), soft pairwise accuracy",
}


class StatisticError(ValueError):
    """A statistic that does not exist, or not at this level (the message says which levels it has)."""


class Estimate(NamedTuple):
    """Values of a statistic for a stack of metrics, shape (n_metrics,), NaN where undefined; ``epsilon`` the tie
    threshold per metric for acc-eq/acc-t (NaN otherwise)."""

    values: np.ndarray
    epsilon: np.ndarray


def check_statistic(statistic: str, level: str) -> None:
    """Raise :class:`StatisticError` unless ``statistic`` exists at ``level``."""
    if statistic not in STATISTICS:
        raise StatisticError(f"unknown statistic {statistic!r}; use one of {', '.join(STATISTICS)}")
    if level not in LEVELS:
        raise StatisticError(f"unknown level {level!r}; use one of {', '.join(LEVELS)}")
    if level not in _LEVELS_OF[statistic]:
        only = " and ".join(_LEVELS_OF[statistic])
        why = f" ({_WHY_NOT[statistic]})" if statistic in _WHY_NOT else ""
        raise StatisticError(f"{statistic} is defined only at the {only} level{why}, not at the {level} level")


def _test_name(statistic: str, level: str) -> str:
    if statistic in CORRELATIONS:
        return "williams" if level == "global" else "perm-both"
    if statistic in ("accuracy", "pdp"):
        return "perm-both"
    if statistic in ("acc-t", "acc-eq"):
        return "perm-pairs"
    return "spa-perm-both"


def describe(statistic: str, level: str, *, n_resamples: int | None = None, seed: int | None = None,
             epsilon: float | None = None, n_permutations: int | None = None, confidence: float = 0.95,
             spa_seed: int | None = None) -> dict:
    """What a result was computed with: statistic, paper, level, WMT23 grouping, resampling, test and seed (SPA:
    also the seed of its permutation signs, ``spa_seed``; None: drawn from ``seed`` first; and the early stopping of
    its test). ``test`` is the one test of (statistic, level): the table, the p-value matrix, the clusters, the
    heatmap, the JSON and the boards all use it (``williams`` at the global level of the correlations)."""
    check_statistic(statistic, level)
    global_corr = statistic in CORRELATIONS and level == "global"
    resampling = {"method": "boot-documents" if statistic == "spa" else "boot-both", "n_resamples": n_resamples,
                  "confidence": confidence, "seed": seed}
    if global_corr:  # the value's rows, resampled through their documents and systems (meta_eval.units)
        resampling["units"] = "rows"
    resampling["label"] = interval_label(resampling)
    doc = {"statistic": statistic, "paper": _PAPER[statistic], "level": level, "grouping": GROUPING[level],
           "resampling": resampling,
           "test": _test_name(statistic, level), "test_resamples": None if global_corr else n_resamples,
           "seed": seed}
    if statistic == "acc-eq":
        doc["epsilon"] = epsilon
    if statistic == "spa":
        doc["n_permutations"] = n_permutations
        doc["spa_seed"] = spa_seed
        doc["early_stopping"] = f"every {SPA_BLOCK} resamples, p < 0.02 or p > 0.5 (WMT24)"
    return doc


def zero_resolution(test: str, n_resamples: int | None) -> int | None:
    """The resamples behind a p-value of 0 from ``test`` run with ``n_resamples``: 0 means p < 1/this (the tests
    count without a +1), the bound :func:`meta_eval.stats.clusters.adjust_pvalues` enters it as. None for the
    Williams test (exact p-values) or without resamples. SPA's test stops after its first block of
    :data:`SPA_BLOCK` resamples when p < 0.02, so its 0 comes from that block.

    >>> zero_resolution("perm-both", 1000), zero_resolution("spa-perm-both", 1000), zero_resolution("williams", 1000)
    (1000, 100, None)
    """
    if test == "williams" or not n_resamples:
        return None
    return min(SPA_BLOCK, int(n_resamples)) if test == "spa-perm-both" else int(n_resamples)


#: What each resampling method draws with replacement (the units of the interval's label).
RESAMPLED = {"boot-both": "BOOT-BOTH: documents (items) and systems drawn with replacement",
             "boot-documents": "documents (items) drawn with replacement, every system kept",
             "boot-both within groups": "BOOT-BOTH within each language pair: documents (items) and systems drawn "
                                        "with replacement inside their pair"}


#: How the global level of the correlations puts its rows into a resample (``resampling["units"] == "rows"``).
ROWS_RESAMPLED = ", each row counted once per draw of its document and of its system"


def interval_label(resampling: dict | None, short: bool = False) -> str:
    """What an interval is, in one phrase: confidence, percentile bootstrap, the units resampled, resamples, seed.

    The one label printed under ``meta-eval run``'s table, kept in the JSON (``resampling["label"]``) and on the
    leaderboards, so that every output says the same thing about the same interval. Every level draws documents and
    systems with replacement (Deutsch, Dror & Roth 2021, section 4). The summary and system levels, and the pairwise
    statistics, resample the (document x system) matrix. The global level of the correlations is over the rows
    (``resampling["units"] == "rows"``, :func:`meta_eval.evaluate.global_interval`): the same draws, and each row
    enters a resample once per draw of its document times per draw of its system; a repeated (document, system)
    pair keeps every row, a row naming several systems (chaganty's ``ml;ml+rl``) is resampled through the first it
    names. Where every pair is one row this is the matrix interval, bit for bit.

    >>> interval_label({"method": "boot-both", "n_resamples": 10, "confidence": 0.95, "seed": 0, "units": "rows"})
    '95% percentile bootstrap interval (BOOT-BOTH: documents (items) and systems drawn with replacement, each row counted once per draw of its document and of its system; 10 resamples, seed 0)'

    >>> interval_label({"method": "boot-both", "n_resamples": 1000, "confidence": 0.95, "seed": 0})
    '95% percentile bootstrap interval (BOOT-BOTH: documents (items) and systems drawn with replacement; 1000 resamples, seed 0)'
    >>> interval_label({"method": "boot-both", "n_resamples": 1000, "confidence": 0.95, "seed": 0}, short=True)
    '95% percentile bootstrap CI (boot-both, 1000 resamples, seed 0)'
    >>> interval_label(None)
    'no interval'

    ``short``: the same facts in the method's name, for a figure's axis.
    """
    if not resampling:
        return "no interval"
    conf = 100 * float(resampling.get("confidence") or 0.95)
    n, seed = resampling.get("n_resamples"), resampling.get("seed")
    what, units, sep = ("CI", resampling["method"], ", ") if short else \
        ("interval", RESAMPLED.get(resampling["method"], resampling["method"]), "; ")
    if resampling.get("units") == "rows":
        units += " over rows" if short else ROWS_RESAMPLED
    return (f"{conf:g}% percentile bootstrap {what} ({units}"
            + (f"{sep}{n} resamples" if n is not None else "") + (f", seed {seed}" if seed is not None else "") + ")")


def point(X, Z, statistic: str, level: str, *, epsilon: float = 0.0, n_permutations: int = 1000,
          seed: int = 0, spa_seed: int | None = None) -> Estimate:
    """The statistic of every metric in the stack ``X`` against ``Z`` at ``level``."""
    check_statistic(statistic, level)
    X = np.asarray(X, dtype=float)
    nan = np.full(X.shape[0], np.nan)
    if statistic in _RESAMPLING:
        from meta_eval.stats.resampling import level_correlation

        return Estimate(np.atleast_1d(np.asarray(level_correlation(X, Z, level, statistic), dtype=float)), nan)
    if statistic in PAIRWISE:
        from meta_eval.stats.pairwise import pairwise_statistic

        est = pairwise_statistic(X, Z, level, statistic, **({"epsilon": epsilon} if statistic == "acc-eq" else {}))
        return Estimate(np.atleast_1d(np.asarray(est.value, dtype=float)),
                        np.atleast_1d(np.asarray(est.epsilon, dtype=float)))
    from meta_eval.stats.spa import soft_pairwise_accuracy

    spa = soft_pairwise_accuracy(X, Z, n_permutations, seed if spa_seed is None else spa_seed).spa
    return Estimate(np.atleast_1d(np.asarray(spa, dtype=float)), nan)


def tie_baseline(Z, level: str) -> float:
    """acc-t of a metric that ties every pair: the share of the level's human pairs that are tied.

    Tie calibration (Deutsch, Foster & Freitag 2023) chooses the metric's tie threshold epsilon to maximise
    accuracy; where the calibrated epsilon ties (almost) every pair, acc-t tends to this value, so a metric whose
    acc-t is near it may only have learned to tie. A constant metric ties every pair at any epsilon, so this is
    acc-t of a constant metric (NaN where the level has no pair).

    Examples
    --------
    >>> Z = np.array([[1.0, 1.0, 2.0], [3.0, 3.0, 3.0]])   # summary level: pairs within each document (row)
    >>> round(tie_baseline(Z, "summary"), 4)                # (1 tie of 3 + 3 ties of 3) / 2 documents
    0.6667
    """
    Z = np.asarray(Z, dtype=float)
    constant = np.where(np.isnan(Z), np.nan, 0.0)[None]
    return float(point(constant, Z, "acc-t", level).values[0])


def samples(X, Z, statistic: str, level: str, *, n_resamples: int = 1000, seed: int = 0, epsilon: float = 0.0,
            n_permutations: int = 1000, spa_seed: int | None = None) -> np.ndarray:
    """Bootstrap values, shape (n_resamples, n_metrics), NaN where a resample has no value (see the module notes
    for what each statistic resamples)."""
    check_statistic(statistic, level)
    X = np.asarray(X, dtype=float)
    if statistic in _RESAMPLING:
        from meta_eval.stats.resampling import bootstrap_samples

        out = bootstrap_samples(X, Z, level, statistic, "both", n_resamples, seed)
    elif statistic in PAIRWISE:
        from meta_eval.stats.pairwise import bootstrap_samples

        out = bootstrap_samples(X, Z, level, statistic, "both", n_resamples, seed,
                                **({"epsilon": epsilon} if statistic == "acc-eq" else {}))
    else:
        from meta_eval.stats.spa import spa_bootstrap_samples

        out = spa_bootstrap_samples(X, Z, n_resamples, n_permutations, seed, sign_seed=spa_seed)
    out = np.asarray(out, dtype=float)
    return out.reshape(n_resamples, -1)


def interval(X, Z, statistic: str, level: str, *, n_resamples: int = 1000, seed: int = 0,
             confidence: float = 0.95, **options) -> tuple[np.ndarray, np.ndarray]:
    """Percentile bootstrap interval per metric: (lower, upper), arrays of shape (n_metrics,), NaN if no resample
    has a value."""
    from meta_eval.stats.resampling import percentile_interval

    return percentile_interval(samples(X, Z, statistic, level, n_resamples=n_resamples, seed=seed, **options),
                               confidence)


def versus(X_a, X_b, Z, statistic: str, level: str, *, n_resamples: int = 1000, seed: int = 0,
           epsilon: float = 0.0, n_permutations: int = 1000, spa_seed: int | None = None) -> float:
    """One-sided p-value that metric A's statistic is higher than metric B's (the test of :func:`describe`).

    A pure function of (X_a, X_b, Z, statistic, level, n_resamples, seed, options): equal bit for bit to
    ``pvalue_matrix(X, ...)[i, j]`` for X[i] = X_a and X[j] = X_b, whatever else X holds. The global level of the
    correlations is the Williams test of Clark et al. (2019) over the judged cells (no resamples); every other
    (statistic, level) a permutation test drawn from ``numpy.random.default_rng(seed)``; SPA with WMT24's early
    stopping (:data:`SPA_BLOCK`).
    """
    check_statistic(statistic, level)
    if statistic in _RESAMPLING:
        if level == "global":
            from meta_eval.stats.significance import williams_pair

            return williams_pair(*_cells(Z, X_a, X_b), statistic)
        from meta_eval.stats.resampling import permutation_test

        return float(permutation_test(X_a, X_b, Z, level, statistic, n_resamples, seed))
    if statistic in PAIRWISE:
        from meta_eval.stats.pairwise import permutation_test

        resample = "both" if statistic == "accuracy" else "pairs"
        return float(permutation_test(X_a, X_b, Z, level, statistic, n_resamples, seed, resample,
                                      **({"epsilon": epsilon} if statistic == "acc-eq" else {})))
    from meta_eval.stats.spa import spa_permutation_test

    return float(spa_permutation_test(X_a, X_b, Z, n_resamples, n_permutations, seed, block_size=SPA_BLOCK,
                                      sign_seed=spa_seed).pvalue)


def _cells(Z, *X) -> list[np.ndarray]:
    """The judged cells of Z and of each matrix in X, flattened in (document, system) order: the rows of the global
    level."""
    Z = np.asarray(Z, dtype=float)
    keep = ~np.isnan(Z)
    return [Z[keep]] + [np.asarray(x, dtype=float)[keep] for x in X]


def pvalue_matrix(X, Z, statistic: str, level: str, *, n_resamples: int = 1000, seed: int = 0,
                  epsilon: float = 0.0, n_permutations: int = 1000, spa_seed: int | None = None) -> np.ndarray:
    """p[i, j]: one-sided p-value that metric i beats metric j, for
    :func:`meta_eval.stats.clusters.significance_clusters`.

    ``p[i, j]`` equals :func:`versus` of (X[i], X[j]) with the same arguments exactly, whatever the other metrics
    and their order: every pair's resamples come from a generator seeded by ``seed`` alone (common random numbers:
    every pair sees the same permutation masks), each pair computed once in a canonical order of its two metrics.
    The global level of the correlations is the Williams test (deterministic, :func:`meta_eval.stats.significance.
    williams_pvalues` over the judged cells), as in :func:`versus` and the table. SPA uses WMT24's early stopping
    (checks every 100 resamples; stops when the p-value of the metric with the higher SPA is < 0.02 or > 0.5) here
    and in :func:`versus`; the other statistics run all ``n_resamples``.
    """
    check_statistic(statistic, level)
    if statistic in CORRELATIONS and level == "global":
        from meta_eval.stats.significance import williams_pvalues

        z, *xs = _cells(Z, *np.asarray(X, dtype=float))
        return williams_pvalues(z, xs, statistic)
    if statistic in _RESAMPLING:
        from meta_eval.stats.resampling import pairwise_permutation_pvalues

        return pairwise_permutation_pvalues(X, Z, level, statistic, n_resamples, seed)
    if statistic in PAIRWISE:
        from meta_eval.stats.pairwise import pairwise_permutation_pvalues

        resample = "both" if statistic == "accuracy" else "pairs"
        return pairwise_permutation_pvalues(X, Z, level, statistic, n_resamples, seed, resample,
                                            **({"epsilon": epsilon} if statistic == "acc-eq" else {}))
    from meta_eval.stats.spa import pairwise_spa_pvalues

    return pairwise_spa_pvalues(X, Z, n_resamples, n_permutations, seed, block_size=SPA_BLOCK,
                                sign_seed=spa_seed).pvalues
