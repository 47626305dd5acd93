"""Human ceiling (meta_eval.stats.ceiling): hand-built sets with values worked out by hand, and the real chaganty and
essays sets (essays: 2 raters, so the ceiling is rater 1 vs rater 2)."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from meta_eval.judgments.base import Judgment, JudgmentSet
from meta_eval.stats.ceiling import (AnnotatorPairs, annotator_matrices, has_annotators, human_ceiling,
                               no_annotator_reason, set_ceiling)
from meta_eval.matrix import judgment_matrices
from meta_eval.stats.resampling import bootstrap_ci, level_correlation


def _set(spec, name="toy", **kw) -> JudgmentSet:
    """spec: (doc, system, annotator values or None for no judges, score or None for the mean)."""
    rows = []
    for doc, system, values, *score in spec:
        judges = {} if values is None else {"q": tuple(values)}
        s = score[0] if score else (None if not values else float(np.mean(values)))
        rows.append(Judgment(f"{doc}:{system}", doc, system, "text", ("ref",), scores={"q": s}, judges=judges))
    return JudgmentSet(name, rows, ("q",), "q", **kw)


TWO = _set([("d1", "a", (1, 2)), ("d1", "b", (2, 1)), ("d1", "c", (3, 3)),
            ("d2", "a", (1, 1)), ("d2", "b", (2, 3)), ("d2", "c", (3, 2))])


def test_two_annotators_by_hand():
    pairs = annotator_matrices(TWO, "q")
    assert isinstance(pairs, AnnotatorPairs) and len(pairs) == 2
    assert (pairs.rows_used, pairs.rows_excluded, pairs.judges_per_row) == (6, 0, {2: 6})
    A0, O0 = pairs[0]
    np.testing.assert_array_equal(A0, [[1, 2, 3], [1, 2, 3]])  # documents x systems (a, b, c)
    np.testing.assert_array_equal(O0, [[2, 1, 3], [1, 3, 2]])  # the other annotator
    np.testing.assert_array_equal(pairs[1][0], O0)
    np.testing.assert_array_equal(pairs[1][1], A0)
    # global Pearson: deviations (-1,0,1,-1,0,1) and (0,-1,1,-1,1,0): 2 / sqrt(4 * 4)
    assert human_ceiling(pairs, "global", "pearson", n_resamples=None).value == pytest.approx(0.5, abs=1e-12)
    # summary: document 1 (-1,0,1)·(0,-1,1) = 1 / 2, document 2 (-1,0,1)·(-1,1,0) = 1 / 2
    assert human_ceiling(pairs, "summary", "pearson", n_resamples=None).value == pytest.approx(0.5, abs=1e-12)
    # system means: slot 0 (1, 2, 3), slot 1 (1.5, 2, 2.5): a perfect line
    c = human_ceiling(pairs, "system", "pearson", n_resamples=None)
    assert c.value == pytest.approx(1.0, abs=1e-12) and c.slot_values == pytest.approx((1.0, 1.0))
    # Kendall tau-b, global, (1,2,3,1,2,3) vs (2,1,3,1,3,2): of 15 pairs 3 are tied on each side (12 untied
    # each); counted by hand 7 concordant, 2 discordant (pairs (0,1) and (4,5)): (7 - 2) / sqrt(12 * 12)
    assert human_ceiling(pairs, "global", "kendall", n_resamples=None).value == pytest.approx(5 / 12, abs=1e-12)
    assert stats.kendalltau([1, 2, 3, 1, 2, 3], [2, 1, 3, 1, 3, 2]).statistic == pytest.approx(5 / 12)


def test_three_annotators_mean_of_the_others_by_hand():
    jset = _set([("d1", "a", (1, 2, 3)), ("d1", "b", (2, 2, 2)), ("d1", "c", (3, 1, 2)), ("d1", "d", (4, 4, 1))])
    pairs = annotator_matrices(jset, "q")
    assert len(pairs) == 3 and pairs.rows_used == 4
    others = {0: [2.5, 2.0, 1.5, 2.5], 1: [2.0, 2.0, 2.5, 2.5], 2: [1.5, 2.0, 2.0, 4.0]}  # worked out by hand
    annot = {0: [1, 2, 3, 4], 1: [2, 2, 1, 4], 2: [3, 2, 2, 1]}
    for k in range(3):
        np.testing.assert_array_equal(pairs[k][0], [annot[k]])
        np.testing.assert_allclose(pairs[k][1], [others[k]], rtol=0, atol=1e-15)
    c = human_ceiling(pairs, "global", "pearson", n_resamples=None)
    expected = [stats.pearsonr(annot[k], others[k]).statistic for k in range(3)]
    assert c.slot_values == pytest.approx(expected, abs=1e-12)
    assert c.value == pytest.approx(np.mean(expected), abs=1e-12)
    # slot 0 by hand: deviations (-1.5,-.5,.5,1.5) and (.375,-.125,-.625,.375): -0.25 / sqrt(5 * 0.6875)
    assert expected[0] == pytest.approx(-0.25 / math.sqrt(5 * 0.6875), abs=1e-12)


def test_mixed_counts_slots_and_exclusions():
    jset = _set([("d1", "a", (1, 2, 3)), ("d1", "b", (2, 3)), ("d1", "c", (3, 3, 4)), ("d1", "d", (5,)),
                 ("d1", "e", None, 2.0), ("d1", "f", (1, 1), None)])
    common = annotator_matrices(jset, "q")
    # d (one value) is excluded and counted; e (no values) too; f has values but no human score: not counted
    assert (len(common), common.rows_used, common.rows_excluded) == (2, 3, 2)
    assert common.judges_per_row == {0: 1, 1: 1, 2: 1, 3: 2}
    A0, O0 = common[0]
    np.testing.assert_array_equal(A0, [[1, 2, 3, np.nan, np.nan, np.nan]])
    np.testing.assert_array_equal(O0, [[2.5, 3, 3.5, np.nan, np.nan, np.nan]])
    every = annotator_matrices(jset, "q", slots="all")
    assert len(every) == 3
    np.testing.assert_array_equal(every[2][0], [[3, np.nan, 4, np.nan, np.nan, np.nan]])  # b has no 3rd value
    np.testing.assert_array_equal(every[2][1], [[1.5, np.nan, 3, np.nan, np.nan, np.nan]])
    # the matrices have the metrics' shape, so the same bootstrap draws apply to both
    Z, _ = judgment_matrices(jset, "q", [])
    assert A0.shape == Z.shape


def test_undefined_slot_is_left_out_and_named():
    jset = _set([("d1", "a", (1, 2, 3)), ("d1", "b", (2, 3)), ("d1", "c", (3, 1)), ("d1", "d", (4, 2))])
    c = human_ceiling(annotator_matrices(jset, "q", slots="all"), "global", "pearson", n_resamples=None)
    # slot 2 has one cell: undefined; the ceiling averages slots 0 and 1
    assert c.slots == 2 and c.slot_values[2] is None and "slot(s) [2]" in c.note
    assert c.value == pytest.approx(np.mean(c.slot_values[:2]))


def test_no_annotator_data_gives_a_result_not_a_crash():
    jset = _set([("d1", s, None, float(i)) for i, s in enumerate("abc")], name="agg")
    assert not has_annotators(jset, "q")
    reason = no_annotator_reason(jset)
    assert reason.startswith("agg has no per-annotator values for dimension 'q'")
    pairs = annotator_matrices(jset, "q")
    assert len(pairs) == 0 and pairs.reason == reason and pairs.rows_excluded == 3
    c = set_ceiling(jset, "q", "system", "kendall")
    assert c.value is None and c.lower is None and c.upper is None and c.note == reason
    assert c.as_dict()["value"] is None and c.as_dict()["note"] == reason
    single = _set([("d1", s, (float(i),)) for i, s in enumerate("abc")], name="one")
    assert "no row has both a human score and at least 2 annotator values" in no_annotator_reason(single)
    assert has_annotators(TWO) and no_annotator_reason(TWO) is None


def test_bootstrap_uses_one_draw_for_every_slot():
    rng = np.random.default_rng(3)
    A = rng.normal(size=(12, 6))
    O = A + rng.normal(size=(12, 6))
    # two slots whose statistic is symmetric: every resample gives the same value for both, so the averaged
    # interval is bootstrap_ci's (same seed, same draws)
    for level in ("summary", "system", "global"):
        c = human_ceiling([(A, O), (O, A)], level, "spearman", n_resamples=300, seed=7)
        lo, hi, point = bootstrap_ci(A, O, level, "spearman", n_resamples=300, seed=7)
        assert (c.value, c.lower, c.upper) == pytest.approx((point, lo, hi), abs=1e-12)
        assert c.resamples_used == 300 and c.resample == "both"


def test_custom_statistic_and_samples():
    A = np.array([[1.0, 2.0], [3.0, 5.0]])
    O = np.array([[2.0, 2.0], [3.0, 3.0]])

    def mean_abs_diff(X, Z):
        return float(np.nanmean(np.abs(X - Z)))

    seeds = []

    def samples(X, Z, seed):
        seeds.append(seed)
        return np.array([1.0, 2.0, 3.0]) * mean_abs_diff(X, Z)

    c = human_ceiling([(A, O), (O, A)], None, None, statistic=mean_abs_diff, samples=samples, seed=11)
    assert c.value == pytest.approx(0.75)  # (1 + 0 + 0 + 2) / 4 for both slots
    assert c.statistic == "mean_abs_diff" and c.level is None
    assert seeds == [11, 11]  # one seed for every slot
    assert (c.lower, c.upper) == pytest.approx((np.percentile([.75, 1.5, 2.25], 2.5),
                                                np.percentile([.75, 1.5, 2.25], 97.5)))
    gen_seeds = []
    human_ceiling([(A, O), (O, A)], statistic=mean_abs_diff, seed=np.random.default_rng(0),
                  samples=lambda X, Z, s: gen_seeds.append(s) or np.ones(2))
    assert len(set(gen_seeds)) == 1 and isinstance(gen_seeds[0], int)


def test_invalid_input_raises():
    A = np.arange(6.0).reshape(2, 3)
    with pytest.raises(ValueError, match="unknown level"):
        human_ceiling([(A, A)], "corpus", "pearson")
    with pytest.raises(ValueError, match="custom statistic needs samples"):
        human_ceiling([(A, A)], statistic=lambda X, Z: 0.0)
    with pytest.raises(ValueError, match="NaN in the same cells"):
        human_ceiling([(A, np.where(A > 2, np.nan, A))], "global", "pearson")
    with pytest.raises(ValueError, match="one shape"):
        human_ceiling([(A, A.T)], "global", "pearson")
    with pytest.raises(ValueError, match="unknown slots"):
        annotator_matrices(TWO, "q", slots="some")
    bad = _set([("d1", "a", (1.0, float("nan")), 1.0), ("d1", "b", (1, 2))])
    with pytest.raises(ValueError, match="rows 'd1:a'.*must be finite"):
        annotator_matrices(bad, "q")
    with pytest.raises(ValueError, match="no human dimension"):
        annotator_matrices(TWO, "fluency")


# ------------------------------------------------------------------------------------------------ real data

LEVELS = ("global", "summary", "system")


@pytest.fixture(scope="module")
def essays(shared_data):
    from meta_eval import judgments

    return judgments.load("essays", shared_data)


@pytest.fixture(scope="module")
def chaganty(shared_data):
    from meta_eval import judgments

    return judgments.load("chaganty", shared_data)


def test_essays_ceiling_is_rater1_vs_rater2(essays):
    r1 = np.array([r.judges["domain1_score"][0] for r in essays.rows])
    r2 = np.array([r.judges["domain1_score"][1] for r in essays.rows])
    assert len(r1) == 1086
    pairs = annotator_matrices(essays)
    assert (len(pairs), pairs.rows_used, pairs.rows_excluded) == (2, 1086, 0)
    R1, R2 = judgment_matrices(essays, "domain1_score", [r1, r2])[1]
    direct = {"spearman": stats.spearmanr(r1, r2).statistic, "kendall": stats.kendalltau(r1, r2).statistic}
    for kind in ("spearman", "kendall"):
        for level in LEVELS:  # one document ("asap-3"), one essay per "system": every level is the global one
            c = human_ceiling(pairs, level, kind, n_resamples=200, seed=0)
            assert c.value == pytest.approx(level_correlation(R1, R2, level, kind), abs=1e-12)
            assert c.value == pytest.approx(direct[kind], abs=1e-12)
            lo, hi, _ = bootstrap_ci(R1, R2, level, kind, n_resamples=200, seed=0)
            assert (c.lower, c.upper) == pytest.approx((lo, hi), abs=1e-12)
    assert direct["spearman"] == pytest.approx(0.6640, abs=5e-5)
    assert direct["kendall"] == pytest.approx(0.6212, abs=5e-5)


def test_chaganty_ceiling(chaganty):
    pairs = annotator_matrices(chaganty, "overall")
    # the sms subset: 1,984 rows with 2 judges and 101 with 5; "common" uses 2 slots on every row
    assert (len(pairs), pairs.rows_used, pairs.rows_excluded, pairs.judges_per_row) == (2, 2085, 0,
                                                                                       {2: 1984, 5: 101})
    Z, _ = judgment_matrices(chaganty, "overall", [])
    assert pairs[0][0].shape == Z.shape and not (np.isnan(pairs[0][0]) != np.isnan(Z)).any()
    got = {(lv, k): human_ceiling(pairs, lv, k, n_resamples=200, seed=0) for lv in LEVELS
           for k in ("spearman", "kendall")}
    # measured values (see the helper's report): one crowd worker vs the other(s) of the same summary
    expected = {("global", "spearman"): 0.3253, ("global", "kendall"): 0.2981,
                ("summary", "spearman"): 0.3485, ("summary", "kendall"): 0.3379,
                ("system", "spearman"): 1.0, ("system", "kendall"): 1.0}
    for key, value in expected.items():
        c = got[key]
        assert c.value == pytest.approx(value, abs=5e-5), key
        assert c.lower <= c.value <= c.upper and c.slots == 2
    # independent check of the system level: each pseudo-annotator's per-system means order the 4 systems alike
    systems = ["ml", "ml+rl", "pointer", "seq2seq"]
    means = [[np.mean([r.judges["overall"][k] for r in chaganty.rows if s in r.system.split(";")])
              for s in systems] for k in (0, 1)]
    assert stats.spearmanr(*means).statistic == pytest.approx(1.0)
    # 2-judge rows only, global level, directly from the rows: close to the matrix value (which averages
    # document 006588's two ml+rl rows and counts the ml;ml+rl row for both systems)
    two = [r for r in chaganty.rows if len(r.judges["overall"]) == 2]
    a = [r.judges["overall"][0] for r in two]
    b = [r.judges["overall"][1] for r in two]
    assert stats.spearmanr(a, b).statistic == pytest.approx(got[("global", "spearman")].value, abs=0.02)
