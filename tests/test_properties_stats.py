"""Property-based fault suite for the meta-evaluation statistics (hypothesis): row order, ties and constants, seeds,
and a few values checked by hand.

- Row order: a judgment set's rows in any order give the same correlations at every level
  (:mod:`meta_eval.stats.levels`), and the same :func:`meta_eval.evaluate.evaluate_level` results to the bit (values,
  bootstrap intervals, permutation p-values, epsilons): :func:`meta_eval.matrix.to_matrix` sorts documents and
  systems, so the seeded resamples see the same matrix. Permuting the documents and the systems of a matrix leaves
  every statistic's point value unchanged (not the intervals: a seed draws indices, not labels).
- Constants and ties: a constant metric has no correlation: ``r=None`` with the note
  :data:`meta_eval.stats.correlation.CONSTANT_NOTE` (rows), NaN (matrices, documented), a note in the results, never a
  NaN
  there; all-tied pairs give the accuracies the pairwise module documents.
- Seeds: the same seed gives identical resamples and intervals; another seed other resamples.

Examples are derandomised (the same every run, no example database) and small: the file runs in well under a minute.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from meta_eval.judgments.base import Judgment, JudgmentSet
from meta_eval import stats as statistics
from meta_eval.stats.correlation import CONSTANT_NOTE, correlate
from meta_eval.evaluate import LevelError, evaluate, evaluate_level
from meta_eval.stats.levels import global_level, summary_level, system_level
from meta_eval.matrix import to_matrix
from meta_eval.stats.pairwise import acc_eq, pairwise_accuracy, tie_calibration
from meta_eval.stats.pairwise import bootstrap_ci as pairwise_bootstrap_ci
from meta_eval.stats.resampling import bootstrap_samples, level_correlation
from meta_eval.scoring.runner import MetricScores

FAST = settings(max_examples=30, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
KINDS = statistics.CORRELATIONS
# (level, statistic) pairs run end to end through evaluate_level (spa: see test_spa.py; its p-values are seeded too)
LEVEL_STATS = [("summary", "spearman"), ("summary", "kendall"), ("system", "pearson"), ("system", "accuracy"),
               ("summary", "acc-t"), ("global", "acc-eq"), ("global", "acc-t")]


@st.composite
def judged_rows(draw, min_docs=3, max_docs=5, min_systems=3, max_systems=5):
    """Rows (doc, system, human, metric A, metric B) of a document x system grid, a few cells left out; small
    integer (and half-integer) values, so that ties are frequent."""
    n_docs = draw(st.integers(min_docs, max_docs))
    n_systems = draw(st.integers(min_systems, max_systems))
    rows = []
    for d in range(n_docs):
        for s in range(n_systems):
            if draw(st.integers(0, 9)) == 0 and s >= 3:  # ~10% of cells missing, every document keeps 3 systems
                continue
            human = draw(st.integers(1, 5))
            a = draw(st.integers(0, 8)) / 2
            b = draw(st.integers(0, 4))
            rows.append((f"d{d}", f"s{s}", float(human), a, float(b)))
    return rows


def as_set(rows) -> JudgmentSet:
    judged = [Judgment(f"{d}:{s}", d, s, "candidate", ("reference",), scores={"q": h}) for d, s, h, _, _ in rows]
    return JudgmentSet("toy", judged, ("q",), "q")


def scored(rows) -> list[MetricScores]:
    return [MetricScores("a", "a|sig", True, {"a": np.array([r[3] for r in rows])}, 0, 0, 0.0),
            MetricScores("b", "b|sig", False, {"b": np.array([r[4] for r in rows])}, 0, 0, 0.0)]


def outcome(call):
    """The results as plain dicts, or the error's type and message: both must agree across row orders."""
    try:
        return [r.as_dict() for r in call()]
    except (LevelError, ValueError) as exc:
        return (type(exc).__name__, str(exc))


def no_nan(value) -> bool:
    if isinstance(value, float):
        return not math.isnan(value)
    if isinstance(value, dict):
        return all(no_nan(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return all(no_nan(v) for v in value)
    return True


# -- row order ------------------------------------------------------------------------------------------------------

@FAST
@given(data=st.data())
def test_row_order_leaves_every_level_correlation_unchanged(data):
    rows = data.draw(judged_rows())
    perm = data.draw(st.permutations(range(len(rows))))
    shuffled = [rows[i] for i in perm]

    def levels(rs):
        h, m = [r[2] for r in rs], [r[3] for r in rs]
        docs, systems = [r[0] for r in rs], [r[1] for r in rs]
        return [(global_level(m, h, k), system_level(m, h, systems, k), summary_level(m, h, docs, k)) for k in KINDS]

    for before, after in zip(levels(rows), levels(shuffled)):
        for x, y in zip(before, after):
            assert (x.n, x.skipped, x.note) == (y.n, y.skipped, y.note)
            assert (x.r is None) == (y.r is None)
            if x.r is not None:  # sums in another order: equal up to rounding
                assert x.r == pytest.approx(y.r, abs=1e-12)


@settings(max_examples=12, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_row_order_leaves_evaluate_level_identical(data):
    rows = data.draw(judged_rows(max_docs=4, max_systems=4))
    perm = data.draw(st.permutations(range(len(rows))))
    shuffled = [rows[i] for i in perm]
    for level, stat in LEVEL_STATS:
        def run(rs, level=level, stat=stat):
            return outcome(lambda: evaluate_level(as_set(rs), "q", scored(rs), level, "a", stat, n_resamples=40,
                                                  seed=7))
        before, after = run(rows), run(shuffled)
        if level == "global" and isinstance(before, list) and isinstance(after, list):
            # the three correlations shown beside a global accuracy are run's over the rows (global_values, #35):
            # sums in row order, equal up to rounding; everything else (the accuracy over cells, its interval and
            # tests) must stay identical
            for x, y in zip(before, after):
                for k in ("spearman", "pearson", "kendall"):
                    assert (x[k] is None) == (y[k] is None), (level, stat, k)
                    if x[k] is not None:
                        assert x[k] == pytest.approx(y[k], abs=1e-12), (level, stat, k)
                        y[k] = x[k]
        assert before == after, (level, stat)
        if isinstance(before, list):
            assert no_nan(before), before  # undefined is None with a note, never NaN
            for r in before:
                if r["value"] is None:
                    assert "undefined" in r["note"], r


@FAST
@given(data=st.data())
def test_document_and_system_order_leave_every_point_value_unchanged(data):
    rows = data.draw(judged_rows())
    Z, _, _ = to_matrix([r[2] for r in rows], [r[0] for r in rows], [r[1] for r in rows])
    X = np.stack([to_matrix([r[k] for r in rows], [r[0] for r in rows], [r[1] for r in rows])[0] for k in (3, 4)])
    dp = np.array(data.draw(st.permutations(range(Z.shape[0]))))
    sp = np.array(data.draw(st.permutations(range(Z.shape[1]))))
    Xp, Zp = X[:, dp][:, :, sp], Z[dp][:, sp]
    for level in statistics.LEVELS:
        for stat in statistics.CORRELATIONS + statistics.PAIRWISE:
            a = statistics.point(X, Z, stat, level)
            b = statistics.point(Xp, Zp, stat, level)
            np.testing.assert_allclose(b.values, a.values, rtol=0, atol=1e-12, equal_nan=True, err_msg=stat)
            np.testing.assert_allclose(b.epsilon, a.epsilon, rtol=0, atol=1e-12, equal_nan=True, err_msg=stat)


# -- constants and ties ---------------------------------------------------------------------------------------------

@FAST
@given(human=st.lists(st.integers(1, 5), min_size=3, max_size=12), value=st.floats(-10, 10))
def test_a_constant_metric_has_no_correlation_and_says_why(human, value):
    metric = [value] * len(human)
    for kind in KINDS:
        c = correlate(metric, human, kind)
        assert (c.r, c.p, c.note, c.n) == (None, None, CONSTANT_NOTE, len(human))
        g = global_level(metric, human, kind)
        assert g.r is None and g.note == CONSTANT_NOTE
        assert math.isnan(level_correlation(np.array([metric]), np.array([human], dtype=float), "global", kind))


def test_constant_variant_gets_a_note_in_the_results_and_an_all_constant_run_an_error():
    rows = [(f"d{d}", f"s{s}", float(s + d % 2 + (s * d) % 3), float(s), 3.0) for d in range(4) for s in range(4)]
    results = {r.metric: r for r in evaluate(np.array([r[2] for r in rows]), scored(rows), "a")}
    assert results["b"].value is None and results["b"].spearman is None and CONSTANT_NOTE in results["b"].note
    assert results["a"].value is not None and results["a"].note is None
    for level in ("summary", "system"):
        by = {r.metric: r for r in evaluate_level(as_set(rows), "q", scored(rows), level, None, "spearman",
                                                 n_resamples=20)}
        assert by["b"].value is None and by["b"].ci is None and "undefined" in by["b"].note
        assert no_nan([r.as_dict() for r in by.values()])
    only_b = [scored(rows)[1]]
    with pytest.raises(LevelError, match="constant"):
        evaluate(np.array([r[2] for r in rows]), only_b)
    with pytest.raises(LevelError, match="constant"):
        evaluate_level(as_set(rows), "q", only_b, "system", None, "kendall", n_resamples=20)


@FAST
@given(n_docs=st.integers(1, 4), n_systems=st.integers(2, 5), level=st.sampled_from(statistics.LEVELS),
       metric=st.floats(-5, 5), human=st.floats(-5, 5))
def test_all_tied_pairs_have_the_documented_accuracies(n_docs, n_systems, level, metric, human):
    """Both constant: every pair is a tie of both, correct (accuracy 1). Metric constant, human strictly ordered:
    every pair is a metric tie of a pair the humans rank, wrong (0), whatever the epsilon (acc-t: epsilon 0).
    Human constant, metric strictly ordered: accuracy 0; acc-t ties every pair at epsilon = the largest gap (1)."""
    shape = (n_docs, n_systems)
    const_x, const_z = np.full(shape, metric), np.full(shape, human)
    order = np.tile(np.arange(n_systems, dtype=float), (n_docs, 1))
    if level == "global":  # every cell distinct
        order = order + n_systems * np.arange(n_docs)[:, None]
    assert pairwise_accuracy(const_x, const_z, level) == 1.0
    assert tie_calibration(const_x, const_z, level) == (1.0, 0.0)
    assert pairwise_accuracy(const_x, order, level) == 0.0
    assert tie_calibration(const_x, order, level) == (0.0, 0.0)
    assert acc_eq(const_x, order, level, epsilon=3.0) == 0.0
    assert pairwise_accuracy(order, const_z, level) == 0.0
    value, eps = tie_calibration(order, const_z, level)
    assert value == 1.0 and eps == float(np.ptp(order if level == "global" else order[0]))


def test_no_valid_pair_is_nan_in_matrices_and_an_error_for_intervals():
    Z = np.array([[1.0, np.nan], [np.nan, 2.0]])  # no document with two systems
    assert math.isnan(pairwise_accuracy(Z, Z, "summary"))  # documented: NaN means "no valid pair"
    lower, upper = statistics.interval(Z[None], Z, "accuracy", "summary", n_resamples=10)  # documented NaN bounds
    assert np.isnan(lower).all() and np.isnan(upper).all()
    with pytest.raises(ValueError, match="undefined"):
        pairwise_bootstrap_ci(Z, Z, "summary", "accuracy", n_resamples=10)


# -- seeds ----------------------------------------------------------------------------------------------------------

@FAST
@given(seed=st.integers(0, 2**32 - 1), level=st.sampled_from(statistics.LEVELS),
       stat=st.sampled_from(["spearman", "pearson", "kendall", "accuracy", "acc-t"]))
def test_same_seed_same_interval_other_seed_other_resamples(seed, level, stat):
    rng = np.random.default_rng(12345)
    Z = rng.normal(size=(8, 6))
    X = np.stack([Z + rng.normal(size=Z.shape), rng.normal(size=Z.shape)])
    one = statistics.interval(X, Z, stat, level, n_resamples=60, seed=seed)
    two = statistics.interval(X, Z, stat, level, n_resamples=60, seed=seed)
    np.testing.assert_array_equal(one[0], two[0])
    np.testing.assert_array_equal(one[1], two[1])
    a = statistics.samples(X, Z, stat, level, n_resamples=60, seed=seed)
    b = statistics.samples(X, Z, stat, level, n_resamples=60, seed=seed + 1)
    assert not np.array_equal(a, b, equal_nan=True)


def test_other_seeds_usually_move_the_interval():
    rng = np.random.default_rng(99)
    Z = rng.normal(size=(10, 6))
    X = Z + rng.normal(size=Z.shape)
    bounds = {tuple(np.round(statistics.interval(X[None], Z, "spearman", "summary", n_resamples=100, seed=s)[0], 15))
              for s in range(5)}
    assert len(bounds) >= 4  # five seeds: (almost) five different lower bounds


def test_an_int_seed_is_the_generator_it_names():
    rng = np.random.default_rng(5)
    Z = rng.normal(size=(6, 5))
    np.testing.assert_array_equal(bootstrap_samples(Z, Z + 1, "system", "kendall", n_resamples=30, seed=3),
                                  bootstrap_samples(Z, Z + 1, "system", "kendall", n_resamples=30,
                                                    seed=np.random.default_rng(3)))


# -- by hand --------------------------------------------------------------------------------------------------------

def test_values_by_hand():
    # kendall tau-b of (1,2,3,4) vs (1,3,2,4): 5 concordant, 1 discordant pair, no tie: (5 - 1) / 6
    assert correlate([1, 2, 3, 4], [1, 3, 2, 4], "kendall").r == pytest.approx(2 / 3)
    # spearman with a tie in x: ranks (1, 2.5, 2.5, 4) vs (1, 2, 3, 4): pearson of the ranks = 4.5 / sqrt(4.5 * 5)
    assert correlate([1, 2, 2, 4], [1, 2, 3, 4], "spearman").r == pytest.approx(4.5 / math.sqrt(4.5 * 5))
    # system level: means a = (1, 2, 3), b = (2, 2, 5) by system; human means (1, 3, 2): pearson by hand
    m = [1, 2, 3, 1, 2, 5]
    h = [1, 3, 2, 1, 3, 2]
    systems = ["x", "y", "z"] * 2
    mm, hm = np.array([1.0, 2.0, 4.0]), np.array([1.0, 3.0, 2.0])
    r = ((mm - mm.mean()) @ (hm - hm.mean())) / math.sqrt(((mm - mm.mean()) ** 2).sum() * ((hm - hm.mean()) ** 2).sum())
    assert system_level(m, h, systems, "pearson").r == pytest.approx(r)  # = 0.5 / sqrt(4.667 * 2)
    # summary level: document 1 orders x < y < z, humans x < z < y (rho 0.5); document 2 the same (0.5): mean 0.5
    assert summary_level(m, h, ["d1"] * 3 + ["d2"] * 3, "spearman").r == pytest.approx(0.5)
    # pairwise accuracy over the 3 system pairs of one document: (x,y) right, (x,z) right, (y,z) wrong
    assert pairwise_accuracy(np.array([[1.0, 2, 3]]), np.array([[1.0, 3, 2]]), "system") == pytest.approx(2 / 3)
    # acc-t: the one wrong pair (y, z) differs by 1 in the metric; tying it does not help (humans rank it):
    # the best epsilon stays 0
    assert tie_calibration(np.array([[1.0, 2, 3]]), np.array([[1.0, 3, 2]]), "system") == (pytest.approx(2 / 3), 0.0)
