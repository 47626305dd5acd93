"""System-level pairwise accuracy pooled over groups (meta_eval/stats/pooled.py): hand-computed values, the sum of
the groups' counts (hypothesis), cross-group pairs never counted, one group = meta-eval's system level bit for bit,
the stratified bootstrap re-derived by loops, seeds, input errors, and mt-metrics-eval's pooled accuracy re-derived
on WMT21 TED (en-de + zh-en, sentence chrF against mean MQM).

mt-metrics-eval definition re-derived (not imported): ``stats.Agreement`` counts, over ``itertools.combinations`` of
the systems of one language pair, the pairs with ``np.sign(gold delta) == np.sign(metric delta)``;
``data.CompareMetricsWithGlobalAccuracy._Accuracy`` sums the agreeing pairs and the pairs over the language pairs and
divides once (google-research/mt-metrics-eval, commit 68a481ae).
"""
from __future__ import annotations

import gzip
import itertools
import json
from collections import defaultdict

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from meta_eval import stats
from meta_eval.matrix import to_matrix
from meta_eval.stats.pairwise import pairwise_accuracy
from meta_eval.stats.pooled import (STATISTICS, PooledEstimate, pooled_describe, pooled_interval, pooled_point,
                                    pooled_pvalue_matrix, pooled_samples, pooled_versus)
from meta_eval.stats.resampling import _draw_indices, snap

FAST = settings(max_examples=40, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
NAN = np.nan


def _two_groups():
    """Group "a": systems 0-2 on documents 0-1; group "b": systems 3-4 on documents 2-3 (3 + 1 = 4 pairs).

    Human means: a = (2, 2, 4) (systems 0 and 1 tie), b = (2, 3). Metric means: a = (0.3, 0.3, 0.1), b = (15, 25).
    """
    Z = np.array([[1., 2, 4, NAN, NAN],
                  [3., 2, 4, NAN, NAN],
                  [NAN, NAN, NAN, 1, 5],
                  [NAN, NAN, NAN, 3, 1]])
    X = np.array([[0.2, 0.4, 0.1, NAN, NAN],
                  [0.4, 0.2, 0.1, NAN, NAN],
                  [NAN, NAN, NAN, 10, 30],
                  [NAN, NAN, NAN, 20, 20]])
    return np.stack([X, -X]), Z, ["a", "a", "a", "b", "b"]


# ------------------------------------------------------------------------------------------- hand-computed


def test_hand_computed_two_groups():
    X, Z, groups = _two_groups()
    est = pooled_point(X, Z, groups)
    # metric X, group a: (0,1) human tie, metric tie: right; (0,2) and (1,2): humans 2 < 4, metric 0.3 > 0.1: wrong.
    # group b: 2 < 3 and 15 < 25: right. Pooled 2 / 4, not the mean of the groups' (1/3 + 1) / 2.
    # metric -X: a: the tie right, (0,2), (1,2) right (-0.3 < -0.1): 3/3; b: wrong: 0/1. Pooled 3 / 4.
    assert isinstance(est, PooledEstimate)
    assert est.values.tolist() == [0.5, 0.75]
    assert est.groups == ("a", "b")
    assert est.group_pairs.tolist() == [3, 1]
    assert est.group_correct.tolist() == [[1, 1], [3, 0]]
    assert est.group_values.tolist() == [[1 / 3, 1.0], [1.0, 0.0]]
    assert np.isnan(est.epsilon).all()
    # a single metric (2-D X) still gets arrays of the same shape
    one = pooled_point(X[0], Z, groups)
    assert one.values.shape == (1,) and one.group_values.shape == (1, 2) and one.values[0] == 0.5


def test_hand_computed_acc_t_one_pooled_epsilon():
    """Group a: humans tie all three systems, metric (0, 1, 1.5): pair |dx| 1, 1.5, 0.5. Group b: humans (1, 2, 3),
    metric (0, 0.5, 3), all concordant, |dx| 0.5, 3, 2.5. Pooled acc_eq at epsilon 0: 3/6, 0.5: 3/6, 1: 4/6,
    1.5: 5/6, 2.5: 4/6, 3: 3/6: epsilon 1.5, 5/6, though group b alone would calibrate to 0 (3/3)."""
    Z = np.array([[1., 1, 1, NAN, NAN, NAN], [NAN, NAN, NAN, 1, 2, 3]])
    X = np.array([[0., 1, 1.5, NAN, NAN, NAN], [NAN, NAN, NAN, 0, 0.5, 3]])
    groups = ["a"] * 3 + ["b"] * 3
    est = pooled_point(X, Z, groups, "acc-t")
    assert est.values.tolist() == [5 / 6] and est.epsilon.tolist() == [1.5]
    assert est.group_correct.tolist() == [[3, 2]] and est.group_values.tolist() == [[1.0, 2 / 3]]
    alone = stats.point(X[:, 3:], Z[:, 3:], "acc-t", "system")
    assert alone.values.tolist() == [1.0] and alone.epsilon.tolist() == [0.0]
    assert pooled_point(X, Z, groups, "accuracy").values.tolist() == [0.5]  # b 3/3, a 0/3 (no metric tie)


def test_groups_in_order_of_first_column_and_interleaved_columns():
    X, Z, groups = _two_groups()
    order = [3, 0, 4, 1, 2]  # b, a, b, a, a
    est = pooled_point(X[:, :, order], Z[:, order], [groups[k] for k in order])
    assert est.groups == ("b", "a")
    assert est.values.tolist() == [0.5, 0.75]
    assert est.group_pairs.tolist() == [1, 3] and est.group_correct.tolist() == [[1, 1], [0, 3]]


def test_group_without_pair_and_labels_as_strings():
    X, Z, _ = _two_groups()
    est = pooled_point(X, Z, [1, 1, 1, 2, "x"])  # int labels compared as strings; "2" and "x" have one system each
    assert est.groups == ("1", "2", "x")
    assert est.group_pairs.tolist() == [3, 0, 0]
    assert est.values.tolist() == [1 / 3, 1.0]
    assert np.isnan(est.group_values[:, 1:]).all()
    none = pooled_point(X, Z, ["a", "b", "c", "d", "e"])
    assert np.isnan(none.values).all() and none.group_pairs.sum() == 0


# ------------------------------------------------------------------------------- sums of groups (hypothesis)


@st.composite
def grouped_matrices(draw):
    """Small integer matrices (ties frequent), columns in 1-4 groups, some cells missing, one metric or three."""
    n_docs = draw(st.integers(1, 5))
    n_systems = draw(st.integers(2, 9))
    labels = draw(st.lists(st.sampled_from("pqrs"), min_size=n_systems, max_size=n_systems))
    cells = st.integers(0, 3).map(float)
    Z = np.array(draw(st.lists(cells, min_size=n_docs * n_systems, max_size=n_docs * n_systems))).reshape(n_docs,
                                                                                                          n_systems)
    n_metrics = draw(st.sampled_from([1, 3]))
    X = np.array(draw(st.lists(st.integers(0, 4).map(lambda v: v / 2), min_size=n_metrics * Z.size,
                               max_size=n_metrics * Z.size))).reshape(n_metrics, n_docs, n_systems)
    missing = np.array(draw(st.lists(st.booleans(), min_size=Z.size, max_size=Z.size))).reshape(Z.shape)
    missing &= np.array(draw(st.lists(st.booleans(), min_size=Z.size, max_size=Z.size))).reshape(Z.shape)  # ~1/4
    Z[missing] = np.nan
    X[:, missing] = np.nan
    return X, Z, labels


def _brute(X, Z, labels, eps=None):
    """(correct, pairs) per metric and group by loops over the pairs of each group's systems (means of own cells,
    rounded to 12 digits as the system level does); eps: the metric tie threshold per metric (None: exact ties)."""
    out = {}
    for m in range(X.shape[0]):
        for g in dict.fromkeys(labels):
            cols = [j for j in range(len(labels)) if labels[j] == g and not np.isnan(Z[:, j]).all()]
            right = total = 0
            for a, b in itertools.combinations(cols, 2):
                dz = snap(np.nanmean(Z[:, a])) - snap(np.nanmean(Z[:, b]))
                dx = snap(np.nanmean(X[m, :, a])) - snap(np.nanmean(X[m, :, b]))
                e = 0.0 if eps is None else eps[m]
                right += bool(dz == 0) if abs(dx) <= e else bool(np.sign(dx) == np.sign(dz))
                total += 1
            out[m, g] = (right, total)
    return out


@FAST
@given(grouped_matrices())
def test_pooled_accuracy_is_the_sum_of_the_groups_counts(data):
    X, Z, labels = data
    est = pooled_point(X, Z, labels)
    brute = _brute(X, Z, labels)
    order = list(dict.fromkeys(labels))
    assert list(est.groups) == order
    for m in range(X.shape[0]):
        right = [brute[m, g][0] for g in order]
        pairs = [brute[m, g][1] for g in order]
        assert est.group_correct[m].tolist() == right and est.group_pairs.tolist() == pairs
        expected = sum(right) / sum(pairs) if sum(pairs) else np.nan
        np.testing.assert_array_equal(est.values[m], expected)
        for k, g in enumerate(order):  # each group's value is meta-eval's system-level accuracy on its columns
            cols = [j for j in range(len(labels)) if labels[j] == g]
            np.testing.assert_array_equal(est.group_values[m, k], pairwise_accuracy(X[m][:, cols], Z[:, cols]))
        if sum(pairs):  # the pair-weighted mean of the groups' accuracies
            w = np.array(pairs)[np.array(pairs) > 0]
            assert est.values[m] == pytest.approx(np.sum(est.group_values[m][np.array(pairs) > 0] * w) / w.sum(),
                                                  abs=1e-12)


@FAST
@given(grouped_matrices())
def test_pooled_acc_t_is_the_best_pooled_epsilon(data):
    """acc-t: the maximum over epsilon in {0} and every |dx| of the pooled acc_eq, the smallest such epsilon."""
    X, Z, labels = data
    est = pooled_point(X, Z, labels, "acc-t")
    order = list(dict.fromkeys(labels))
    for m in range(X.shape[0]):
        cands = sorted({0.0} | {abs(snap(np.nanmean(X[m, :, a])) - snap(np.nanmean(X[m, :, b])))
                                for a, b in itertools.combinations(range(len(labels)), 2)
                                if labels[a] == labels[b] and not np.isnan(Z[:, a]).all()
                                and not np.isnan(Z[:, b]).all()})
        best, best_eps = -1.0, None
        for e in cands:
            eps = np.full(X.shape[0], e)
            b = _brute(X, Z, labels, eps)
            right, total = sum(b[m, g][0] for g in order), sum(b[m, g][1] for g in order)
            if total and right / total > best:
                best, best_eps = right / total, e
        if best_eps is None:
            assert np.isnan(est.values[m]) and np.isnan(est.epsilon[m])
        else:
            assert est.values[m] == best and est.epsilon[m] == best_eps
            assert est.group_correct[m].sum() / est.group_pairs.sum() == est.values[m]


# ------------------------------------------------------------------------------------ cross-group pairs


def test_moving_one_group_by_a_huge_constant_changes_nothing():
    rng = np.random.default_rng(4)
    X, Z, groups = _grouped_random(rng, n_metrics=2)
    b = np.array(groups) == "b"
    shifted_X, shifted_Z = X.copy(), Z.copy()
    shifted_X[0][:, b] += 1e6  # metric 0 only: its group b now beats every group-a system
    shifted_Z[:, b] -= 1e6  # the humans: group b now loses to every group-a system
    for statistic in STATISTICS:
        base, moved = pooled_point(X, Z, groups, statistic), pooled_point(shifted_X, shifted_Z, groups, statistic)
        for field in ("values", "epsilon", "group_values", "group_correct", "group_pairs"):
            np.testing.assert_array_equal(getattr(base, field), getattr(moved, field), err_msg=field)
        np.testing.assert_array_equal(pooled_samples(X, Z, groups, statistic, 50, seed=2),
                                      pooled_samples(shifted_X, shifted_Z, groups, statistic, 50, seed=2))
    # per-group z-scores: the swapped cells of the permutation test never mix group b's shifted scale into a
    assert pooled_versus(X[0], X[1], Z, groups, n_resamples=200, seed=3) == \
        pooled_versus(shifted_X[0], X[1], shifted_Z, groups, n_resamples=200, seed=3)
    # had the cross-group pairs counted, the shift would matter: all pairs of one 8-system matrix
    assert stats.point(X, Z, "accuracy", "system").values.tolist() != \
        stats.point(shifted_X, shifted_Z, "accuracy", "system").values.tolist()


def _grouped_random(rng, n_metrics=3, sizes=(("a", 6, 5), ("b", 4, 3), ("c", 3, 4)), levels=4):
    """Block-diagonal matrices: each group (label, documents, systems) scores its own documents only; integer
    scores (ties), a few cells missing."""
    n_docs = sum(d for _, d, _ in sizes)
    n_systems = sum(s for _, _, s in sizes)
    Z = np.full((n_docs, n_systems), np.nan)
    groups, r, c = [], 0, 0
    for label, d, s in sizes:
        Z[r:r + d, c:c + s] = rng.integers(0, levels, size=(d, s))
        groups += [label] * s
        r, c = r + d, c + s
    Z[rng.random(Z.shape) < 0.1] = np.nan
    X = np.stack([Z + rng.integers(-2, 3, size=Z.shape) * k for k in range(1, n_metrics + 1)])
    return X, Z, groups


# ----------------------------------------------------------------------------- one group = the system level


def _one_group_case(seed):
    rng = np.random.default_rng(seed)
    n_docs, n_systems = [(6, 5), (9, 7), (4, 3), (12, 8)][seed % 4]
    Z = rng.integers(0, 4, size=(n_docs, n_systems)).astype(float)
    X = np.stack([Z + rng.integers(-2, 3, size=Z.shape), rng.integers(0, 3, size=Z.shape) / 2,
                  rng.normal(size=Z.shape)])
    missing = rng.random(Z.shape) < 0.15
    if seed % 2:
        missing[1] = True  # a document without any score
        missing[:, -1] = True  # a system without any score
    Z[missing] = np.nan
    X[:, missing] = np.nan
    return X, Z, ["en-de"] * n_systems


@pytest.mark.parametrize("statistic", STATISTICS)
@pytest.mark.parametrize("seed", range(4))
def test_one_group_equals_the_system_level_bit_for_bit(seed, statistic):
    X, Z, groups = _one_group_case(seed)
    est, ref = pooled_point(X, Z, groups, statistic), stats.point(X, Z, statistic, "system")
    np.testing.assert_array_equal(est.values, ref.values)
    np.testing.assert_array_equal(est.epsilon, ref.epsilon)
    np.testing.assert_array_equal(est.group_values[:, 0], ref.values)
    np.testing.assert_array_equal(pooled_samples(X, Z, groups, statistic, 300, seed),
                                  stats.samples(X, Z, statistic, "system", n_resamples=300, seed=seed))
    np.testing.assert_array_equal(pooled_interval(X, Z, groups, statistic, 300, seed, 0.9),
                                  stats.interval(X, Z, statistic, "system", n_resamples=300, seed=seed,
                                                 confidence=0.9))
    assert pooled_versus(X[0], X[1], Z, groups, statistic, 300, seed) == \
        stats.versus(X[0], X[1], Z, statistic, "system", n_resamples=300, seed=seed)
    np.testing.assert_array_equal(pooled_pvalue_matrix(X, Z, groups, statistic, 200, seed),
                                  stats.pvalue_matrix(X, Z, statistic, "system", n_resamples=200, seed=seed))


def test_one_group_bit_for_bit_over_several_chunks():
    """Enough documents that the resamples and the permutations run in several chunks."""
    rng = np.random.default_rng(11)
    Z = rng.normal(size=(3000, 6)).round(1)
    X = np.stack([Z + rng.normal(size=Z.shape), Z + 2 * rng.normal(size=Z.shape)])
    groups = ["x"] * 6
    np.testing.assert_array_equal(pooled_samples(X, Z, groups, "accuracy", 400, 1),
                                  stats.samples(X, Z, "accuracy", "system", n_resamples=400, seed=1))
    assert pooled_versus(X[0], X[1], Z, groups, "accuracy", 400, 1) == \
        stats.versus(X[0], X[1], Z, "accuracy", "system", n_resamples=400, seed=1)


# --------------------------------------------------------------------------- the bootstrap, re-derived


def test_stratified_bootstrap_rederived_by_loops():
    """Each resample: group after group, documents then systems drawn with the generator of the seed; the pooled
    accuracy over the drawn groups by loops, a system never paired with its own copy."""
    rng0 = np.random.default_rng(5)
    X, Z, groups = _grouped_random(rng0, n_metrics=2)
    n, seed = 40, 9
    got = pooled_samples(X, Z, groups, "accuracy", n, seed)
    rng = np.random.default_rng(seed)
    labels = list(dict.fromkeys(groups))
    valid = ~np.isnan(Z)
    parts = []
    for g in labels:
        cols = np.flatnonzero(np.array(groups) == g)
        rows = np.flatnonzero(valid[:, cols].any(axis=1) | ~valid.any(axis=1))  # a row without scores: every group
        parts.append((rows, cols, *_draw_indices(rng, "both", n, len(rows), len(cols))))
    for b in range(n):
        for m in range(X.shape[0]):
            right = total = 0
            for rows, cols, d, s in parts:
                sub_x = X[m][np.ix_(rows[d[b]], cols[s[b]])]
                sub_z = Z[np.ix_(rows[d[b]], cols[s[b]])]
                for p, q in itertools.combinations(range(len(cols)), 2):
                    if s[b][p] == s[b][q] or np.isnan(sub_z[:, p]).all() or np.isnan(sub_z[:, q]).all():
                        continue
                    dz = snap(np.nanmean(sub_z[:, p])) - snap(np.nanmean(sub_z[:, q]))
                    dx = snap(np.nanmean(sub_x[:, p])) - snap(np.nanmean(sub_x[:, q]))
                    right += bool(np.sign(dx) == np.sign(dz))
                    total += 1
            expected = right / total if total else np.nan
            assert got[b, m] == pytest.approx(expected, abs=1e-12, nan_ok=True), (b, m)


def test_interval_brackets_point_and_narrows_with_confidence():
    X, Z, groups = _grouped_random(np.random.default_rng(6))
    point = pooled_point(X, Z, groups).values
    lo, hi = pooled_interval(X, Z, groups, "accuracy", 300, 0, 0.95)
    lo5, hi5 = pooled_interval(X, Z, groups, "accuracy", 300, 0, 0.5)
    assert (lo <= lo5).all() and (hi5 <= hi).all() and (lo <= point).all() and (point <= hi).all()


def test_versus_pairs_test_for_acc_t_uses_pooled_epsilons():
    """acc-t: the binomial pair-outcome swap over the pooled pairs; a metric against itself gives 1."""
    X, Z, groups = _grouped_random(np.random.default_rng(7))
    assert pooled_versus(X[0], X[0], Z, groups, "acc-t", 100, 0) == 1.0
    p_ab = pooled_versus(X[0], X[2], Z, groups, "acc-t", 500, 0)
    p_ba = pooled_versus(X[2], X[0], Z, groups, "acc-t", 500, 0)
    assert 0.0 <= p_ab <= 1.0 and p_ab + p_ba >= 1.0  # ties at the observed delta count on both sides
    P = pooled_pvalue_matrix(X, Z, groups, "acc-t", 500, 0)
    assert P[0, 1] == pooled_versus(X[0], X[1], Z, groups, "acc-t", 500, 0)  # the first pair: a fresh generator
    assert np.isnan(np.diag(P)).all() and (P[0, 1] + P[1, 0] >= 1.0)


# -------------------------------------------------------------------------------------------- seeds


def test_seeds_determine_every_draw():
    X, Z, groups = _grouped_random(np.random.default_rng(8))
    for statistic in STATISTICS:
        a = pooled_samples(X, Z, groups, statistic, 100, 3)
        np.testing.assert_array_equal(a, pooled_samples(X, Z, groups, statistic, 100, 3))
        assert not np.array_equal(a, pooled_samples(X, Z, groups, statistic, 100, 4), equal_nan=True)
        assert pooled_versus(X[0], X[1], Z, groups, statistic, 100, 3) == \
            pooled_versus(X[0], X[1], Z, groups, statistic, 100, 3)
    gen = np.random.default_rng(3)  # a Generator is advanced: two calls draw different resamples
    first, second = pooled_samples(X, Z, groups, "accuracy", 100, gen), pooled_samples(X, Z, groups, "accuracy", 100,
                                                                                       gen)
    np.testing.assert_array_equal(first, pooled_samples(X, Z, groups, "accuracy", 100, 3))
    assert not np.array_equal(first, second, equal_nan=True)


# ---------------------------------------------------------------------------------------------- errors


def test_input_errors():
    X, Z, groups = _two_groups()
    for bad in ("acc-eq", "spearman", "spa", None):
        with pytest.raises(ValueError, match="must be one of accuracy, acc-t"):
            pooled_point(X, Z, groups, bad)
    with pytest.raises(ValueError, match="groups has 4 labels but the matrices have 5 system columns"):
        pooled_point(X, Z, groups[:4])
    with pytest.raises(ValueError, match="sequence of labels"):
        pooled_point(X, Z, "aaabb")
    with pytest.raises(ValueError, match="sequence of labels"):
        pooled_point(X, Z, 5)
    with pytest.raises(ValueError, match=r"1-D"):
        pooled_point(X, Z, [groups])
    with pytest.raises(ValueError, match="missing \\(NaN\\) in the same cells"):
        pooled_point(np.nan_to_num(X), Z, groups)
    with pytest.raises(ValueError, match="matrices have shape"):
        pooled_point(X[:, :3], Z, groups)
    with pytest.raises(ValueError, match="n_resamples must be a positive integer"):
        pooled_samples(X, Z, groups, "accuracy", 0)
    with pytest.raises(ValueError, match="seed must be a non-negative int"):
        pooled_versus(X[0], X[1], Z, groups, seed=-1)
    with pytest.raises(ValueError, match="confidence must be in"):
        pooled_interval(X, Z, groups, confidence=1.5)
    with pytest.raises(ValueError, match="at least 2 metrics"):
        pooled_pvalue_matrix(X[:1], Z, groups)
    for statistic in STATISTICS:
        with pytest.raises(ValueError, match="undefined \\(no group has a valid pair\\)"):
            pooled_versus(X[0], X[1], Z, list("abcde"), statistic)


def test_shared_documents_are_refused_by_the_bootstrap_only():
    X, Z, groups = _two_groups()
    Z2, X2 = Z.copy(), X.copy()
    Z2[0, 3], X2[:, 0, 3] = 2.0, 1.0  # document 0 now scores a system of group b too
    with pytest.raises(ValueError, match=r"1 document rows have scores in more than one group, the first is row 0 "
                                         r"\(groups 'a', 'b'\)"):
        pooled_interval(X2, Z2, groups)
    # the point value (means over each system's own cells) and the cell-swap test need no document layout
    assert pooled_point(X2, Z2, groups).group_pairs.tolist() == [3, 1]
    assert 0.0 <= pooled_versus(X2[0], X2[1], Z2, groups, n_resamples=50) <= 1.0


def test_describe():
    doc = pooled_describe("accuracy", n_resamples=1000, seed=0)
    assert doc["statistic"] == "accuracy" and doc["level"] == "system"
    assert doc["resampling"] == {"method": "boot-both within groups", "n_resamples": 1000, "confidence": 0.95,
                                 "seed": 0, "label": "95% percentile bootstrap interval (BOOT-BOTH within each "
                                                     "language pair: documents (items) and systems drawn with "
                                                     "replacement inside their pair; 1000 resamples, seed 0)"}
    assert doc["test"] == "perm-both within groups" and "Kocmi" in doc["paper"]
    assert pooled_describe("acc-t")["test"] == "perm-pairs (pooled pairs)"
    with pytest.raises(ValueError, match="accuracy, acc-t"):
        pooled_describe("kendall")


# ------------------------------------------------------------------------ WMT21 TED, mt-metrics-eval re-derived


def _agreement(gold, metric):
    """mt-metrics-eval ``stats.Agreement``, re-derived: (agreeing pairs, pairs)."""
    agree = pairs = 0
    for a, b in itertools.combinations(zip(gold, metric), 2):
        agree += np.sign(a[0] - b[0]) == np.sign(a[1] - b[1])
        pairs += 1
    return int(agree), pairs


def test_wmt21_ted_pooled_chrf_equals_mt_metrics_evals_definition(shared_data):
    sacrebleu = __import__("conftest").require_module("sacrebleu", "pip install 'meta-eval[sacrebleu]'")
    chrf = sacrebleu.metrics.CHRF()
    with gzip.open(shared_data / "wmt21-mqm-ted" / "wmt21_mqm_ted.jsonl.gz", "rt", encoding="utf-8") as f:
        rows = [r for r in map(json.loads, f) if not r["is_human"]]  # the 13 MT systems of each pair, as WMT
    metric = [chrf.sentence_score(r["sys_summ"], [r["ref_summ"]]).score for r in rows]
    human = [r["scores"]["mqm"] for r in rows]
    keys = [f"{r['lp']}/{r['system']}" for r in rows]  # systems keyed by (language pair, system)
    Xm, docs, systems = to_matrix(metric, [r["doc_id"] for r in rows], keys)
    Zm, _, _ = to_matrix(human, [r["doc_id"] for r in rows], keys)
    groups = [s.split("/")[0] for s in systems]

    # mt-metrics-eval: per language pair the systems' mean gold and metric scores, Agreement summed, divided once
    by_lp = defaultdict(lambda: defaultdict(lambda: ([], [])))
    for r, m in zip(rows, metric):
        by_lp[r["lp"]][r["system"]][0].append(r["scores"]["mqm"])
        by_lp[r["lp"]][r["system"]][1].append(m)
    agree = pairs = 0
    parts = {}
    for lp in sorted(by_lp):
        names = sorted(by_lp[lp])
        a, p = _agreement([np.mean(by_lp[lp][s][0]) for s in names], [np.mean(by_lp[lp][s][1]) for s in names])
        parts[lp] = (a, p)
        agree, pairs = agree + a, pairs + p
    est = pooled_point(Xm, Zm, groups)
    assert est.groups == ("en-de", "zh-en") and len(docs) == 2 * 529
    assert est.group_pairs.tolist() == [78, 78] and pairs == 156  # 13 systems: 78 pairs each
    assert est.group_correct[0].tolist() == [parts["en-de"][0], parts["zh-en"][0]]
    assert est.values[0] == agree / pairs
    # the pooled value is the pair-weighted mean, here (equal pair counts) the plain mean of the two
    single = [stats.point(Xm[:, np.array(groups) == lp], Zm[:, np.array(groups) == lp], "accuracy", "system").values[0]
              for lp in ("en-de", "zh-en")]
    assert est.values[0] == pytest.approx(sum(single) / 2, abs=1e-12)
    lo, hi = pooled_interval(Xm, Zm, groups, "accuracy", n_resamples=200, seed=0)
    assert lo[0] <= est.values[0] <= hi[0]


def test_docstring_examples():
    import doctest

    from meta_eval.stats import pooled

    result = doctest.testmod(pooled, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 8 and result.failed == 0
