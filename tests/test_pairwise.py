"""Pairwise accuracy, acc_eq and tie calibration (meta_eval.stats.pairwise): hand-computed cases, mt-metrics-eval's test
cases re-derived, a brute-force reference on random inputs with ties and missing cells, invariants, resampling.

mt-metrics-eval cases: google-research/mt-metrics-eval, mt_metrics_eval/stats_test.py at commit
38882cc9d61d0ded5a656c60b7272700192bdfde (the expected numbers are re-derived by hand below, not copied).
"""
from __future__ import annotations

import itertools
import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
import pytest
from scipy import stats

from meta_eval.stats import pairwise as pw
from meta_eval.stats.clusters import significance_clusters
from meta_eval.stats.pairwise import (GLOBAL_MAX_CELLS, LEVELS, PairwiseStat, acc_eq, bootstrap_ci, bootstrap_samples,
                                pairwise_accuracy, pairwise_permutation_pvalues, pairwise_statistic,
                                permutation_test, tie_calibration)
from meta_eval.stats.resampling import _draw_indices, snap

# --------------------------------------------------------------------------------------- brute-force reference


def brute_groups(X, Z, level, ids=None):
    """The (dx, dz) pairs of each group, by loops: system level one group over the system means; summary level one
    group per document; global level one group over all valid cells. ``ids``: units that are copies of one
    another (same id) are never paired."""
    X, Z = np.asarray(X, float), np.asarray(Z, float)
    D, S = Z.shape
    if ids is None:
        ids = np.arange(D * S).reshape(D, S) if level == "global" else np.tile(np.arange(S), (D, 1))
    if level == "system":
        cols = [s for s in range(S) if (~np.isnan(Z[:, s])).any()]
        mx = {s: snap(np.nanmean(X[:, s])) for s in cols}  # means rounded to 12 digits, as the module does
        mz = {s: snap(np.nanmean(Z[:, s])) for s in cols}
        return [[(mx[a] - mx[b], mz[a] - mz[b]) for a, b in itertools.combinations(cols, 2) if ids[0, a] != ids[0, b]]]
    if level == "summary":
        groups = []
        for d in range(D):
            cols = [s for s in range(S) if not np.isnan(Z[d, s])]
            groups.append([(X[d, a] - X[d, b], Z[d, a] - Z[d, b]) for a, b in itertools.combinations(cols, 2)
                           if ids[d, a] != ids[d, b]])
        return groups
    cells = [(d, s) for d in range(D) for s in range(S) if not np.isnan(Z[d, s])]
    return [[(X[p] - X[q], Z[p] - Z[q]) for p, q in itertools.combinations(cells, 2) if ids[p] != ids[q]]]


def brute_acc(groups, eps):
    """acc_eq: per group (correct pairs) / (pairs), averaged over the groups that have a pair; NaN if none."""
    accs = []
    for g in groups:
        if g:
            correct = sum((dz == 0) if abs(dx) <= eps else (np.sign(dx) == np.sign(dz)) for dx, dz in g)
            accs.append(correct / len(g))
    return float(np.mean(accs)) if accs else math.nan


def brute_calibrate(groups):
    """mt-metrics-eval's search: candidates 0 and every |dx|, ascending; the first within 1e-12 of the best."""
    cands = sorted({0.0} | {abs(dx) for g in groups for dx, _ in g})
    accs = [brute_acc(groups, c) for c in cands]
    if np.isnan(accs[0]):
        return math.nan, math.nan
    best = max(accs)
    k = next(i for i, a in enumerate(accs) if a >= best - 1e-12)
    return accs[k], cands[k]


def random_case(rng, max_docs=5, max_systems=6, missing=0.2, n_metrics=2):
    """Small matrices with many ties (values on a coarse grid) and missing cells."""
    D, S = int(rng.integers(1, max_docs + 1)), int(rng.integers(1, max_systems + 1))
    Z = rng.integers(0, 3, size=(D, S)).astype(float)
    X = rng.integers(-3, 4, size=(n_metrics, D, S)) * 0.5
    mask = rng.random((D, S)) < missing
    Z[mask] = np.nan
    X[:, mask] = np.nan
    return X, Z


def summeval_like(seed=0, n_docs=30, n_systems=8, noise=(0.3, 2.0)):
    """Human scores with ties (1/3 steps, like averaged Likert ratings) and metrics of decreasing quality."""
    rng = np.random.default_rng(seed)
    Z = np.round((rng.normal(size=n_systems) + rng.normal(size=(n_docs, n_systems))) * 3) / 3
    return Z, np.stack([Z + s * rng.normal(size=Z.shape) for s in noise])


# ------------------------------------------------------------------------------------------- hand-computed


def test_accuracy_mtme_agreement_by_hand():
    # mt-metrics-eval stats_test.py, CorrelationFunctionsTest.testAgreement: gold [1, 2, 3, 3, 4], metric
    # [1, 1, 2, 1, 2] -> 5 agreements in 10 pairs. One document, five systems:
    #   (0,1) 1<2 but metric 1=1: wrong | (0,2) 1<3, 1<2: right | (0,3) 1<3, 1=1: wrong | (0,4) 1<4, 1<2: right
    #   (1,2) 2<3, 1<2: right | (1,3) 2<3, 1=1: wrong | (1,4) 2<4, 1<2: right
    #   (2,3) human tie 3=3, metric 2>1: wrong | (2,4) 3<4, 2=2: wrong | (3,4) 3<4, 1<2: right  -> 5/10
    Z, X = np.array([[1.0, 2, 3, 3, 4]]), np.array([[1.0, 1, 2, 1, 2]])
    for level in LEVELS:  # one document: all three levels see the same 10 pairs
        assert pairwise_accuracy(X, Z, level) == 0.5
    assert acc_eq(X, Z, "system") == 0.5  # accuracy is acc_eq at epsilon 0
    assert math.isnan(pairwise_statistic(X, Z, "system", "accuracy").epsilon)


def test_acc_eq_and_tie_calibration_mtme_kendall_variants():
    # stats_test.py, CorrelationTest.testKendallVariants (acc23 = 0.6; acc23 at epsilon 2 = 0.4) and
    # CorrelationTest.testKendallWithTiesOpt (0.7). gold [1, 2, 2, 3, 4], metric [2, 1, 1.5, 5, 3]:
    #   (0,1) 1<2, 2>1 D (|dm| 1)    (0,2) 1<2, 2>1.5 D (0.5)   (0,3) 1<3, 2<5 C (3)   (0,4) 1<4, 2<3 C (1)
    #   (1,2) human tie, 1<1.5 T_h (0.5)  (1,3) C (4)  (1,4) C (2)  (2,3) C (3.5)  (2,4) C (1.5)  (3,4) 3<4, 5>3 D (2)
    # epsilon 0: C = 6 -> 6/10. epsilon 2 ties every pair with |dm| <= 2: right are the untied C (0,3), (1,3),
    # (2,3) and the tie (1,2) -> 4/10. Calibration: epsilon 0.5 ties (1,2) (+1) and (0,2) (discordant, +0) -> 7/10;
    # epsilon 1 then loses the concordant (0,4) -> 6/10, and every larger epsilon loses more.
    Z, X = np.array([[1.0, 2, 2, 3, 4]]), np.array([[2.0, 1, 1.5, 5, 3]])
    assert acc_eq(X, Z, "system") == pytest.approx(0.6)
    assert acc_eq(X, Z, "system", epsilon=2) == pytest.approx(0.4)
    result = tie_calibration(X, Z, "system")
    assert isinstance(result, PairwiseStat) and result == (pytest.approx(0.7), 0.5)
    assert isinstance(result.value, float) and isinstance(result.epsilon, float)


def test_acc_eq_mtme_kendall_variants_23():
    # stats_test.py testKendallVariants_23 and testKendallVariantsWithPositiveEpsilon: human x = [1,1,1,2,2,3,4],
    # metric y = [1,1,2,2,4,3,3], 21 pairs. The toolkit asserts tau_23 = (C + T_hm - D - T_h - T_m) / 21, and
    # acc_eq = (C + T_hm) / 21 = (1 + tau_23) / 2.
    # epsilon 0: T_hm (0,1); T_h (0,2) (1,2) (3,4); T_m (2,3) (5,6); D (4,5) (4,6); C the other 13 -> 14/21
    #   (tau_23 = (14 - 7) / 21, the toolkit's number).
    # epsilon 1: T_hm (0,1) (0,2) (1,2); T_h (3,4); C (0,4) (0,5) (0,6) (1,4) (1,5) (1,6) (2,4) = 7; the other
    #   10 pairs are metric ties of ranked pairs -> 10/21 (tau_23 = (10 - 11) / 21 = -1/21, as the toolkit).
    x, y = np.array([[1.0, 1, 1, 2, 2, 3, 4]]), np.array([[1.0, 1, 2, 2, 4, 3, 3]])
    assert acc_eq(y, x, "global") == pytest.approx(14 / 21)
    assert acc_eq(y, x, "global", epsilon=0.1) == pytest.approx(14 / 21)  # too small to tie anything new
    assert acc_eq(y, x, "global", epsilon=1.0) == pytest.approx(10 / 21)


def test_tie_calibration_mtme_with_ties_opt_groupings():
    # stats_test.py CorrelationFunctionsTest.testKendallWithTiesOpt: gold [1,2,2,3,3,4], metric [2,1,1.5,5,3,2],
    # num_sys = 2 (system-major vectors: system 0 = items 0-2, system 1 = items 3-5).
    g, m = np.array([1.0, 2, 2, 3, 3, 4]), np.array([2.0, 1, 1.5, 5, 3, 2])
    # average_by 'none' = one group of all 6 scores (global level). 15 pairs:
    #   C: (0,3) (0,4) (1,3) (1,4) (1,5) (2,3) (2,4) (2,5) = 8; D: (0,1) (0,2) (3,5) (4,5); T_m: (0,5) 2=2;
    #   T_h: (1,2) |dm| 0.5, (3,4) |dm| 2  -> acc_eq(0) = 8/15.
    # Tying at 0.5 wins (1,2) but loses the concordant (2,5) (|dm| 0.5): 8/15 again; at 1 the concordant (0,4),
    # (1,5) go: 6/15, ... The best, 8/15, is reached at epsilon 0 and 0.5: the smallest, 0, is returned
    # (the toolkit's np.nanargmax over ascending thresholds).
    assert tie_calibration(m[None], g[None], "global") == (pytest.approx(8 / 15), 0.0)
    # average_by 'item' = documents are the 3 items, with the 2 systems each (summary level):
    #   item 0: gold (1, 3), metric (2, 5) C; item 1: (2, 3), (1, 3) C; item 2: (2, 4), (1.5, 2) C -> 1 at epsilon 0
    Z, X = g.reshape(2, 3).T, m.reshape(2, 3).T
    assert tie_calibration(X, Z, "summary") == (1.0, 0.0)
    # the toolkit's check: the optimum equals acc23 at the chosen epsilon
    for level in ("summary", "global"):
        value, eps = tie_calibration(X, Z, level)
        assert acc_eq(X, Z, level, eps) == value


def test_tie_calibration_mtme_pairwise_permutation_data():
    # stats_test.py PairwisePermutationSigDiffTest: gold [1,3,3,3,1,2,1,2], metric1 [2,4,6,6,2,6,3,7], metric2
    # [1,5,4,4,4,3,2,1], num_sys = 4, average_by 'item': 2 items (documents) x 4 systems.
    Z = np.array([[1.0, 3, 1, 1], [3, 3, 2, 2]])
    M1 = np.array([[2.0, 6, 2, 3], [4, 6, 6, 7]])
    M2 = np.array([[1.0, 4, 4, 2], [5, 4, 3, 1]])
    # metric 1, document 0 (6 pairs): (0,1) C, (0,2) 2=2 both tie, (0,3) human tie |dm| 1, (1,2) C |4|, (1,3) C |3|,
    #   (2,3) human tie |dm| 1 -> 4/6; document 1: (0,1) human tie |2|, (0,2) (0,3) (1,3) D, (1,2) metric tie,
    #   (2,3) human tie |1| -> 0/6; epsilon 0: (4/6 + 0/6) / 2 = 1/3.
    #   Calibration (gains in 12ths): epsilon 1 +3 human ties -> 7/12; epsilon 2 +1 -> 8/12; 3 loses (1,3) -> 7/12;
    #   4 loses (0,1), (1,2) -> 5/12. Best 2/3 at epsilon 2.
    # metric 2, document 0: (0,1) C |3|, (0,2) human tie |3|, (0,3) human tie |1|, (1,2) metric tie, (1,3) C |2|,
    #   (2,3) human tie |2| -> 2/6; document 1: (0,1) human tie |1|, (0,2) C |2|, (0,3) C |4|, (1,2) C |1|,
    #   (1,3) C |3|, (2,3) human tie |2| -> 4/6; epsilon 0: 1/2.
    #   Calibration: epsilon 1: +2 human ties -1 concordant -> 7/12; epsilon 2: +2 -2 -> 7/12; 3: +1 -2 -> 6/12.
    #   Best 7/12, first reached at epsilon 1.
    X = np.stack([M1, M2])
    np.testing.assert_allclose(pairwise_accuracy(X, Z, "summary"), [1 / 3, 1 / 2])
    value, eps = tie_calibration(X, Z, "summary")
    np.testing.assert_allclose(value, [2 / 3, 7 / 12])
    np.testing.assert_array_equal(eps, [2.0, 1.0])


def test_summary_level_by_hand_with_missing_cells():
    # document 0: all 3 systems; document 1: system 2 missing (1 pair); document 2: one system only (skipped).
    Z = np.array([[1.0, 2, 3], [2, 1, np.nan], [np.nan, 5, np.nan]])
    X = np.array([[1.0, 3, 2], [1, 1, np.nan], [np.nan, 0, np.nan]])
    # doc 0: (0,1) C, (0,2) C, (1,2) human 2<3, metric 3>2 D -> 2/3; doc 1: (0,1) human 2>1, metric tie -> 0/1
    # accuracy = (2/3 + 0) / 2 = 1/3. Calibration: weights 1/6 (doc 0 pairs) and 1/2 (doc 1 pair); there is no
    # human tie, so tying only loses: epsilon 0.
    assert pairwise_accuracy(X, Z, "summary") == pytest.approx(1 / 3)
    assert tie_calibration(X, Z, "summary") == (pytest.approx(1 / 3), 0.0)
    # system level: means X (1, 4/3, 2), Z (1.5, 8/3, 3): all 3 pairs concordant
    assert pairwise_accuracy(X, Z, "system") == 1.0
    # global: 6 valid cells, 15 pairs, brute force
    assert pairwise_accuracy(X, Z, "global") == pytest.approx(brute_acc(brute_groups(X, Z, "global"), 0.0))


def test_constant_metric_scores_the_share_of_human_ties():
    # a constant metric ties every pair, so acc_eq = T_hm / all pairs, the share of pairs the humans tie, where tau_b
    # would be undefined (the Ties Matter argument). Humans [1, 1, 2, 3]: 1 tie in 6 pairs.
    Z, X = np.array([[1.0, 1, 2, 3]]), np.full((1, 4), 7.0)
    for level in LEVELS:
        assert acc_eq(X, Z, level) == pytest.approx(1 / 6)
        assert tie_calibration(X, Z, level) == (pytest.approx(1 / 6), 0.0)


def test_tie_calibration_rewards_a_metric_that_predicts_ties():
    # humans tie the pairs (0,1) and (2,3); the metric differs there by 0.01 and elsewhere by >= 1
    Z, X = np.array([[1.0, 1, 2, 2]]), np.array([[0.0, 0.01, 1, 1.01]])
    assert pairwise_accuracy(X, Z) == pytest.approx(4 / 6)
    value, eps = tie_calibration(X, Z)
    assert value == 1.0 and eps == pytest.approx(0.01)


def test_system_means_equal_in_exact_arithmetic_tie():
    # systems a and b have the human scores 0.1, 0.2, 0.3 in opposite orders: equal means, but summed in document
    # order they differ in the last bit; the metric ties them exactly. Means are rounded to 12 digits (snap):
    # (a, b) is a tie of both, (a, c) and (b, c) concordant -> 3/3 (2/3 if the rounding noise counted).
    Z = np.array([[0.1, 0.3, 1.0], [0.2, 0.2, 1.0], [0.3, 0.1, 1.0]])
    X = np.array([[0.0, 0.0, 5.0]] * 3)
    raw = Z.sum(axis=0) / 3
    assert raw[0] != raw[1]  # the premise: float sums in another order
    assert pairwise_accuracy(X, Z, "system") == 1.0
    assert tie_calibration(X, Z, "system") == (1.0, 0.0)


def test_undefined_cases_are_nan():
    one_system = np.array([[1.0], [2.0]])
    for level in LEVELS[:2]:
        assert math.isnan(pairwise_accuracy(one_system, one_system, level))
    # global: 2 cells in one column make one pair
    assert pairwise_accuracy(one_system, one_system, "global") == 1.0
    no_doc_pair = np.array([[1.0, np.nan], [np.nan, 2.0]])
    assert math.isnan(pairwise_accuracy(no_doc_pair, no_doc_pair, "summary"))
    assert pairwise_accuracy(no_doc_pair, no_doc_pair, "system") == 1.0
    value, eps = tie_calibration(no_doc_pair, no_doc_pair, "summary")
    assert math.isnan(value) and math.isnan(eps)
    one_cell = np.array([[np.nan, 3.0]])
    assert math.isnan(pairwise_accuracy(one_cell, one_cell, "global"))
    with pytest.raises(ValueError, match="undefined"):
        bootstrap_ci(one_system, one_system, "system", "accuracy", n_resamples=10)


# ---------------------------------------------------------------------------------------- brute-force checks


def test_fast_equals_brute_force_on_random_inputs_with_ties():
    rng = np.random.default_rng(7)
    for case in range(150):
        X, Z = random_case(rng, missing=0.25 * (case % 3))
        for level in LEVELS:
            acc = pairwise_accuracy(X, Z, level)
            eps_fixed = float(rng.choice([0.0, 0.5, 1.0]))
            fixed = acc_eq(X, Z, level, eps_fixed)
            value, eps = tie_calibration(X, Z, level)
            for m in range(len(X)):
                groups = brute_groups(X[m], Z, level)
                np.testing.assert_allclose(acc[m], brute_acc(groups, 0.0), atol=1e-12)
                np.testing.assert_allclose(fixed[m], brute_acc(groups, eps_fixed), atol=1e-12)
                bv, be = brute_calibrate(groups)
                np.testing.assert_allclose(value[m], bv, atol=1e-12)
                np.testing.assert_array_equal(eps[m], be)  # the same candidate, not just the same accuracy


def test_fast_equals_brute_force_continuous_scores():
    rng = np.random.default_rng(8)
    for _ in range(15):
        Z = rng.integers(0, 4, size=(4, 6)).astype(float)  # human ties; metric scores all distinct
        X = Z + rng.normal(size=Z.shape)
        for level in LEVELS:
            bv, be = brute_calibrate(brute_groups(X, Z, level))
            value, eps = tie_calibration(X, Z, level)
            assert value == pytest.approx(bv, abs=1e-12) and eps == be


# property tests (hypothesis)
cells = st.one_of(st.none(), st.integers(-3, 3))

@st.composite
def matrices(draw):
    D, S = draw(st.integers(1, 4)), draw(st.integers(1, 5))
    z = draw(st.lists(st.lists(cells, min_size=S, max_size=S), min_size=D, max_size=D))
    x = draw(st.lists(st.lists(st.integers(-6, 6), min_size=S, max_size=S), min_size=D, max_size=D))
    Z = np.array([[np.nan if v is None else float(v) for v in row] for row in z])
    X = np.where(np.isnan(Z), np.nan, np.array(x, dtype=float) / 2)
    return X, Z

@settings(max_examples=150, deadline=None)
@given(matrices(), st.sampled_from(LEVELS))
def test_property_calibration_equals_brute_force(case, level):
    X, Z = case
    bv, be = brute_calibrate(brute_groups(X, Z, level))
    value, eps = tie_calibration(X, Z, level)
    if math.isnan(bv):
        assert math.isnan(value) and math.isnan(eps)
    else:
        assert value == pytest.approx(bv, abs=1e-12) and eps == be
        assert value >= pairwise_accuracy(X, Z, level) - 1e-12
        assert acc_eq(X, Z, level, eps) == pytest.approx(value, abs=1e-12)

@settings(max_examples=100, deadline=None)
@given(matrices(), st.sampled_from(LEVELS), st.sampled_from([0.0, 0.5, 1.0, 2.5]))
def test_property_acc_eq_equals_brute_force(case, level, eps):
    X, Z = case
    expected = brute_acc(brute_groups(X, Z, level), eps)
    got = acc_eq(X, Z, level, eps)
    assert (math.isnan(expected) and math.isnan(got)) or got == pytest.approx(expected, abs=1e-12)


# ------------------------------------------------------------------------------------------------- invariants


def test_identical_metric_and_human():
    rng = np.random.default_rng(1)
    Z = rng.normal(size=(10, 6))  # no ties
    tied = np.round(Z)  # many human ties: the identical metric ties them too
    for level in LEVELS:
        assert pairwise_accuracy(Z, Z, level) == 1.0
        assert pairwise_accuracy(tied, tied, level) == 1.0
        assert tie_calibration(Z, Z, level) == (1.0, 0.0)


def test_reversed_metric_and_monotone_transforms():
    rng = np.random.default_rng(2)
    Z = rng.normal(size=(12, 7))
    X = Z + rng.normal(size=Z.shape)  # no ties anywhere: every pair is right for exactly one of X and -X
    G = np.round(Z * 2) / 2  # human ties
    Xg = np.round(X * 4) / 4  # metric ties on a dyadic grid: + 3 and * 2 are exact
    for level in LEVELS:
        assert pairwise_accuracy(X, Z, level) + pairwise_accuracy(-X, Z, level) == pytest.approx(1.0)
        assert pairwise_accuracy(Xg + 3, G, level) == pairwise_accuracy(Xg, G, level)
        base = tie_calibration(Xg, G, level)
        assert tie_calibration(Xg + 3, G, level) == base
        scaled = tie_calibration(Xg * 2, G, level)
        assert scaled.value == base.value and scaled.epsilon == 2 * base.epsilon


def test_order_of_systems_and_documents_does_not_matter():
    rng = np.random.default_rng(3)
    X, Z = random_case(rng, max_docs=6, max_systems=6, missing=0.2, n_metrics=3)
    rows, cols = rng.permutation(Z.shape[0]), rng.permutation(Z.shape[1])
    for level in LEVELS:
        for statistic in pw.STATISTICS:
            eps = 0.5 if statistic == "acc-eq" else 0.0
            a = pairwise_statistic(X, Z, level, statistic, eps)
            b = pairwise_statistic(X[:, rows][:, :, cols], Z[rows][:, cols], level, statistic, eps)
            np.testing.assert_allclose(a.value, b.value, atol=1e-12)
            np.testing.assert_array_equal(a.epsilon, b.epsilon)


def test_metric_stack_equals_metrics_one_at_a_time():
    Z, X = summeval_like(4, n_docs=12, n_systems=6, noise=(0.2, 1.0, 3.0))
    X[1, 0, 0] = X[1, 0, 1]  # a metric tie
    for level in LEVELS:
        stacked = tie_calibration(X, Z, level)
        for m in range(3):
            assert tie_calibration(X[m], Z, level) == (stacked.value[m], stacked.epsilon[m])
        np.testing.assert_array_equal(acc_eq(X, Z, level, [0.0, 0.5, 1.0]),
                                      [acc_eq(X[m], Z, level, e) for m, e in enumerate([0.0, 0.5, 1.0])])


def test_one_document_levels_agree():
    rng = np.random.default_rng(5)
    Z, X = rng.integers(0, 3, size=(1, 8)).astype(float), rng.integers(0, 5, size=(1, 8)) / 2
    results = {level: tie_calibration(X, Z, level) for level in LEVELS}
    assert results["system"] == results["summary"] == results["global"]


def test_chunking_does_not_change_results(monkeypatch):
    Z, X = summeval_like(6, n_docs=15, n_systems=6)
    Z[0, 0] = X[:, 0, 0] = np.nan  # one document with fewer pairs: the weighted (argsort) path
    expected = {level: tie_calibration(X, Z, level) for level in LEVELS}
    boot = bootstrap_samples(X, Z, "summary", "acc-t", n_resamples=30, seed=3)
    monkeypatch.setattr(pw, "_CHUNK", 50)
    monkeypatch.setattr(pw, "_GLOBAL_BLOCK", 7)
    for level in LEVELS:
        got = tie_calibration(X, Z, level)
        np.testing.assert_array_equal(got.value, expected[level].value)
        np.testing.assert_array_equal(got.epsilon, expected[level].epsilon)
    np.testing.assert_array_equal(bootstrap_samples(X, Z, "summary", "acc-t", n_resamples=30, seed=3), boot)


# ----------------------------------------------------------------------------------------------------- global cap


def test_global_cap_names_the_alternative():
    Z = np.zeros((GLOBAL_MAX_CELLS + 1, 1))
    with pytest.raises(ValueError, match=r"8193 valid cells.*use --level summary"):
        pairwise_accuracy(Z, Z, "global")
    with pytest.raises(ValueError, match="use --level summary"):
        permutation_test(Z, Z, Z, "global", "acc-t", n_resamples=5)
    Z[0, 0] = np.nan  # 8192 valid cells are allowed; the summary level is cheap here
    assert math.isnan(pairwise_accuracy(Z, Z, "summary"))


# -------------------------------------------------------------------------------------------------- validation


def test_validation_errors():
    Z = np.array([[1.0, 2, 3], [2, 3, 1]])
    with pytest.raises(ValueError, match="unknown level"):
        pairwise_accuracy(Z, Z, "segment")
    with pytest.raises(ValueError, match="unknown statistic"):
        pairwise_statistic(Z, Z, "system", "kendall")
    with pytest.raises(ValueError, match="finite and >= 0"):
        acc_eq(Z, Z, "system", -0.1)
    with pytest.raises(ValueError, match="one per metric"):
        acc_eq(np.stack([Z, Z]), Z, "system", [0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match="applies to statistic 'acc-eq' only"):
        pairwise_statistic(Z, Z, "system", "acc-t", epsilon=0.5)
    with pytest.raises(ValueError, match="missing \\(NaN\\) in the same cells"):
        pairwise_accuracy(np.where(Z > 2, np.nan, Z), Z)
    with pytest.raises(ValueError, match="infinite"):
        pairwise_accuracy(np.where(Z > 2, np.inf, Z), Z)
    with pytest.raises(ValueError, match="unknown resample"):
        bootstrap_samples(Z, Z, "system", "accuracy", resample="pairs")
    with pytest.raises(ValueError, match="positive integer"):
        permutation_test(Z, Z, Z, "system", "accuracy", n_resamples=0)
    with pytest.raises(ValueError, match="at least 2 metrics"):
        pairwise_permutation_pvalues(Z, Z)
    with pytest.raises(ValueError, match="cannot be tested by swapping scores"):
        permutation_test(Z, Z, Z, "system", "acc-eq", epsilon=0.5)


# ------------------------------------------------------------------------------------------------- bootstrap


def test_bootstrap_uses_resampling_draws_and_leaves_out_self_pairs():
    rng = np.random.default_rng(11)
    Z = rng.integers(0, 3, size=(4, 5)).astype(float)
    X = rng.integers(-3, 4, size=(4, 5)) * 0.5
    Z[1, 2] = X[1, 2] = np.nan
    for level in LEVELS:
        for resample in ("both", "systems", "documents"):
            got = bootstrap_samples(X, Z, level, "acc-t", resample, n_resamples=8, seed=5)
            docs, systems = _draw_indices(np.random.default_rng(5), resample, 8, *Z.shape)
            for k in range(8):
                d = docs[k] if docs is not None else np.arange(Z.shape[0])
                s = systems[k] if systems is not None else np.arange(Z.shape[1])
                # copies of a system (system, summary levels) or of a cell (global level) never pair
                ids = (d[:, None] * Z.shape[1] + s[None, :]) if level == "global" else np.tile(s, (len(d), 1))
                groups = brute_groups(X[np.ix_(d, s)], Z[np.ix_(d, s)], level, ids)
                expected = brute_calibrate(groups)[0]
                assert (math.isnan(expected) and math.isnan(got[k])) or got[k] == pytest.approx(expected, abs=1e-12)


def test_bootstrap_reproducible_and_ci_covers_point():
    Z, X = summeval_like(12)
    a = bootstrap_samples(X, Z, "summary", "acc-t", n_resamples=50, seed=4)
    assert a.shape == (50, 2)
    np.testing.assert_array_equal(a, bootstrap_samples(X, Z, "summary", "acc-t", n_resamples=50, seed=4))
    gen = np.random.default_rng(4)
    first = bootstrap_samples(X, Z, "summary", "acc-t", n_resamples=50, seed=gen)
    np.testing.assert_array_equal(first, a)  # a Generator seeded alike draws the same, and is advanced
    assert not np.array_equal(bootstrap_samples(X, Z, "summary", "acc-t", n_resamples=50, seed=gen), a)
    lo, hi, point = bootstrap_ci(X, Z, "system", "accuracy", n_resamples=200, seed=1)
    assert np.all(lo <= point) and np.all(point <= hi)
    np.testing.assert_array_equal(point, pairwise_accuracy(X, Z, "system"))
    single = bootstrap_ci(X[0], Z, "summary", "acc-t", n_resamples=100, seed=1)
    assert isinstance(single.lower, float) and single.lower < single.point < single.upper


# ------------------------------------------------------------------------------------------------- permutations


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("resample", ["both", "pairs"])
def test_metric_against_itself_has_p_one(level, resample):
    Z, X = summeval_like(2, n_docs=8, n_systems=5)
    for statistic in pw.STATISTICS:
        if statistic == "acc-eq" and resample != "pairs":
            continue
        eps = 0.3 if statistic == "acc-eq" else 0.0
        assert permutation_test(X[0], X[0], Z, level, statistic, n_resamples=50, seed=1, resample=resample,
                                epsilon=eps) == 1.0


@pytest.mark.parametrize("resample", ["both", "systems", "documents", "pairs"])
def test_strong_metric_beats_weak_metric(resample):
    Z, X = summeval_like(3, n_docs=30, n_systems=8, noise=(0.2, 3.0))
    strong, weak = X
    p = permutation_test(strong, weak, Z, "summary", "acc-t", n_resamples=300, seed=0, resample=resample)
    p_back = permutation_test(weak, strong, Z, "summary", "acc-t", n_resamples=300, seed=0, resample=resample)
    assert p < 0.01 and p_back > 0.99


def test_permutation_p_values_are_reproducible_and_match_the_matrix():
    Z, X = summeval_like(5, n_docs=20, n_systems=6, noise=(0.5, 0.8, 3.0))
    for resample in ("both", "pairs"):
        P = pairwise_permutation_pvalues(X, Z, "summary", "acc-t", n_resamples=200, seed=9, resample=resample)
        # the first pair draws first: the same numbers as permutation_test with the same seed, both directions
        assert P[0, 1] == permutation_test(X[0], X[1], Z, "summary", "acc-t", 200, seed=9, resample=resample)
        assert P[1, 0] == permutation_test(X[1], X[0], Z, "summary", "acc-t", 200, seed=9, resample=resample)
        np.testing.assert_array_equal(
            P, pairwise_permutation_pvalues(X, Z, "summary", "acc-t", n_resamples=200, seed=9, resample=resample))
        assert np.isnan(np.diag(P)).all()
        values = tie_calibration(X, Z, "summary").value
        ranks = dict(significance_clusters(["good", "middle", "bad"], values, P, correction="holm")[0])
        assert ranks["good"] == 1 and ranks["bad"] > ranks["middle"]


def test_summary_swap_tables_equal_recomputation():
    # the table-driven permuted deltas of the summary level against the from-scratch recomputation
    rng = np.random.default_rng(12)
    for case in range(60):
        X, Z = random_case(rng, max_docs=4, max_systems=6, missing=0.2 * (case % 2))
        if np.isnan(pairwise_accuracy(X, Z, "summary")).any():
            continue
        for shape in (Z.shape, (1, Z.shape[1]), (Z.shape[0], 1)):
            swaps = rng.random((9, *shape)) < 0.5
            for statistic in ("accuracy", "acc-t"):
                np.testing.assert_allclose(pw._swap_deltas_summary(X, Z, "summary", statistic, swaps),
                                           pw._swap_deltas(X, Z, "summary", statistic, swaps), atol=1e-12)


def test_swapped_scores_recalibrate_epsilon_per_permutation():
    # two metrics that are perfect up to a tie threshold of their own: A ties the human ties within 0.01, B within 5
    Z = np.array([[1.0, 1, 2, 2, 3, 3]] * 6)
    A = Z * 100 + np.tile([0.0, 0.01, 0, 0.01, 0, 0.01], (6, 1))
    B = Z * 1000 + np.tile([0.0, 5, 0, 5, 0, 5], (6, 1))
    assert tie_calibration(np.stack([A, B]), Z, "summary").value.tolist() == [1.0, 1.0]
    # re-calibrated per permutation, the swapped matrices (z-scored) are as good: no evidence either way
    assert permutation_test(A, B, Z, "summary", "acc-t", n_resamples=50, seed=0) == 1.0
    assert permutation_test(A, B, Z, "summary", "acc-t", n_resamples=50, seed=0, resample="pairs") == 1.0


@pytest.mark.parametrize("noise", [(0.3, 1.5), (0.5, 0.7)])  # n_a, n_b = 9, 2 (p = 0.0327) and 6, 5 (p = 0.5)
def test_pairs_method_matches_the_exact_binomial_null(noise):
    # system level, one group: the permuted delta is (2 K_a - n_a - 2 K_b + n_b) / P with K ~ Binomial(n, 1/2);
    # the exact p-value of the observed delta (n_a - n_b) / P is P(K_a - K_b >= n_a - n_b)
    rng = np.random.default_rng(3)
    Z = rng.normal(size=(1, 12))
    A, B = Z + noise[0] * rng.normal(size=Z.shape), Z + noise[1] * rng.normal(size=Z.shape)
    s = np.sign
    i, j = np.triu_indices(12, 1)
    ca = s(A[0, i] - A[0, j]) == s(Z[0, i] - Z[0, j])
    cb = s(B[0, i] - B[0, j]) == s(Z[0, i] - Z[0, j])
    n_a, n_b = int((ca & ~cb).sum()), int((cb & ~ca).sum())
    ka, kb = np.arange(n_a + 1), np.arange(n_b + 1)
    joint = np.outer(stats.binom.pmf(ka, n_a, 0.5), stats.binom.pmf(kb, n_b, 0.5))
    exact = joint[(ka[:, None] - kb[None, :]) >= n_a - n_b].sum()
    n = 20000
    p = permutation_test(A, B, Z, "system", "accuracy", n_resamples=n, seed=3, resample="pairs")
    assert abs(p - exact) < 4 * math.sqrt(exact * (1 - exact) / n) + 1e-4
