"""One draw per question (issue 35): a pair's p-value is the same wherever it appears, and one multiple-comparison
rule marks every star, cluster and "significantly"."""
from __future__ import annotations

import numpy as np
import pytest

from meta_eval import stats

RNG = np.random.default_rng(11)
_Z = RNG.normal(size=8) + RNG.normal(size=(30, 8))
_Z[2, 3] = _Z[7, 0] = np.nan
_X = np.stack([_Z + s * RNG.normal(size=_Z.shape) for s in (0.3, 0.8, 0.8, 2.0)])
_X[:, np.isnan(_Z)] = np.nan

CASES = [(s, lv) for s in stats.STATISTICS for lv in stats.LEVELS
         if lv in stats._LEVELS_OF[s] and not (s in stats.PAIRWISE and lv == "global")]


@pytest.mark.parametrize("statistic,level", CASES, ids=[f"{s}-{lv}" for s, lv in CASES])
def test_versus_equals_the_matrix_entry_bit_for_bit_whatever_the_other_metrics(statistic, level):
    kw = dict(n_resamples=120, seed=4, n_permutations=60)
    P = stats.pvalue_matrix(_X, _Z, statistic, level, **kw)
    for i in range(len(_X)):
        for j in range(len(_X)):
            if i != j:
                assert stats.versus(_X[i], _X[j], _Z, statistic, level, **kw) == P[i, j], (i, j)
    # the same pair among other metrics, in another order: the same p-values
    order = [3, 1, 0]
    P2 = stats.pvalue_matrix(_X[order], _Z, statistic, level, **kw)
    np.testing.assert_array_equal(P2, P[np.ix_(order, order)])
    # a Generator seed draws what its int seed draws
    P3 = stats.pvalue_matrix(_X, _Z, statistic, level, **{**kw, "seed": np.random.default_rng(4)})
    np.testing.assert_array_equal(P3, P)


def test_the_pooled_statistics_versus_equals_the_matrix():
    from meta_eval.stats.pooled import pooled_pvalue_matrix, pooled_versus

    groups = ["de"] * 4 + ["zh"] * 4
    for statistic in ("accuracy", "acc-t"):
        P = pooled_pvalue_matrix(_X, _Z, groups, statistic, 150, 2)
        for i in range(len(_X)):
            for j in range(len(_X)):
                if i != j:
                    assert pooled_versus(_X[i], _X[j], _Z, groups, statistic, 150, 2) == P[i, j]
        np.testing.assert_array_equal(pooled_pvalue_matrix(_X[[2, 0]], _Z, groups, statistic, 150, 2),
                                      P[np.ix_([2, 0], [2, 0])])


def test_spa_versus_stops_early_as_the_matrix_does():
    from meta_eval.stats.spa import spa_permutation_test

    t = spa_permutation_test(_X[0], _X[3], _Z, n_resamples=1000, n_permutations=60, seed=0, block_size=100)
    assert t.n_resamples < 1000  # a clear difference stops after a block (WMT24)
    assert stats.versus(_X[0], _X[3], _Z, "spa", "system", n_resamples=1000, n_permutations=60, seed=0) == t.pvalue


def test_the_global_level_of_the_correlations_is_williams_in_the_table_and_the_matrix():
    from meta_eval.stats.significance import williams_test
    from meta_eval.stats.correlation import correlate

    keep = ~np.isnan(_Z)
    z, a, b = _Z[keep], _X[0][keep], _X[2][keep]
    expected = williams_test(correlate(z, a, "pearson").r, correlate(z, b, "pearson").r,
                             correlate(a, b, "pearson").r, len(z))
    assert stats.versus(_X[0], _X[2], _Z, "pearson", "global") == expected
    assert stats.pvalue_matrix(_X, _Z, "pearson", "global")[0, 2] == expected
    assert stats.describe("pearson", "global")["test"] == "williams"
