"""Soft pairwise accuracy (Thompson, Mathur, Deutsch & Khayrallah, WMT24): exact enumeration of small permutation
distributions, brute-force loop implementations written here, the worked example and the determinism test of the
reference code (google-research/mt-metrics-eval, mt_metrics_eval/pce.py and pce_test.py at commit
1b47eab408777108168d4568ebc2665cfe5c8686), invariants, and the significance test and bootstrap."""
from __future__ import annotations

import doctest
import itertools
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from meta_eval.stats import spa as spa_module
from meta_eval.stats.clusters import significance_clusters
from meta_eval.stats.spa import (exact_signs, pair_pvalues, pairwise_spa_pvalues, permutation_signs,
                           soft_pairwise_accuracy, spa_bootstrap_ci, spa_bootstrap_samples, spa_from_pvalues,
                           spa_permutation_test, system_pair_pvalues)


def synthetic(n_docs=30, n_systems=6, noise=(0.2, 3.0), seed=0, missing=0.0):
    """Human scores = a quality per system + noise per document; metrics = human + noise of the given sizes."""
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=n_systems) + rng.normal(size=(n_docs, n_systems))
    X = np.stack([Z + s * rng.normal(size=Z.shape) for s in noise])
    if missing:
        holes = rng.random(Z.shape) < missing
        Z[holes] = np.nan
        X[:, holes] = np.nan
    return X, Z


# ------------------------------------------------------------------------------------- brute-force references


def brute_pvalues(Z, signs):
    """Loop over ordered pairs: one-sided sign-flip test of the difference of means over the shared documents."""
    n_systems = Z.shape[1]
    P = np.full((n_systems, n_systems), np.nan)
    for i, j in itertools.permutations(range(n_systems), 2):
        shared = ~np.isnan(Z[:, i]) & ~np.isnan(Z[:, j])
        if not shared.any():
            continue
        d = Z[shared, i] - Z[shared, j]
        observed = d.mean()
        tol = 1e-9 * np.abs(d).mean()
        count = 0
        for s in signs:
            count += (s[shared] * d).mean() >= observed - tol
        P[i, j] = count / len(signs)
    return P


def brute_spa(X, Z, signs):
    ph, pm = brute_pvalues(Z, signs), brute_pvalues(X, signs)
    i, j = np.triu_indices(Z.shape[1], 1)
    ok = ~np.isnan(ph[i, j])
    return 1.0 - np.abs(ph[i, j] - pm[i, j])[ok].mean()


def exact_integer_pvalues(Z):
    """All 2**D sign vectors, exact rational arithmetic on integer scores (no rounding, so ties are exact)."""
    n_docs, n_systems = Z.shape
    P = np.full((n_systems, n_systems), np.nan)
    for i, j in itertools.permutations(range(n_systems), 2):
        shared = [d for d in range(n_docs) if not (np.isnan(Z[d, i]) or np.isnan(Z[d, j]))]
        if not shared:
            continue
        diffs = [int(Z[d, i]) - int(Z[d, j]) for d in shared]
        observed = Fraction(sum(diffs), len(diffs))
        hits = sum(Fraction(sum(s * x for s, x in zip(signs, diffs)), len(diffs)) >= observed
                   for signs in itertools.product((-1, 1), repeat=len(diffs)))
        P[i, j] = hits / 2 ** len(shared)  # the signs of the other documents do not matter
    return P


def zscore_cells(M):
    out = np.full(M.shape, np.nan)
    ok = ~np.isnan(M)
    out[ok] = stats.zscore(M[ok])
    return out


# -------------------------------------------------------------------------------------------- pair p-values


def test_reference_worked_example():
    """pce.py, compute_pairwise_p_values docstring: A = [.8 .9 .7 1 .6], B = [.2 .3 .1 .4 0], test_delta 3.0, and
    the ten listed sign vectors give one null_delta >= 3 (the all-ones row): p = 1/10 = 0.1."""
    Z = np.array([[0.8, 0.2], [0.9, 0.3], [0.7, 0.1], [1.0, 0.4], [0.6, 0.0]])
    signs = np.array([[1, 1, -1, -1, -1], [1, -1, 1, -1, 1], [1, -1, 1, 1, -1], [-1, 1, -1, -1, 1],
                      [1, 1, 1, -1, 1], [-1, 1, -1, 1, -1], [1, 1, 1, 1, 1], [1, -1, 1, -1, 1],
                      [1, 1, -1, -1, 1], [-1, 1, -1, -1, -1]])
    assert pair_pvalues(Z, signs)[0, 1] == pytest.approx(0.1, abs=0)
    # its null deltas -0.6 0.6 0.6 -0.6 1.8 -0.6 3.0 0.6 0.6 -1.8 are all <= 3.0: B better than A has p = 10/10
    assert pair_pvalues(Z, signs)[1, 0] == 1.0
    # exact enumeration: only the all-ones vector of the 32 reaches 3.0
    assert pair_pvalues(Z, exact_signs(5))[0, 1] == 1 / 32


def test_exact_enumeration_with_ties_and_missing_cells():
    """Integer (Likert-like) scores with missing cells: many exact ties, checked in rational arithmetic."""
    rng = np.random.default_rng(3)
    for k in range(6):
        Z = rng.integers(1, 6, size=(8, 4)).astype(float)
        Z[rng.random(Z.shape) < (0.2 if k % 2 else 0.0)] = np.nan  # complete and incomplete matrices
        expected = exact_integer_pvalues(Z)
        for offset in (0.0, 1e9):  # a huge common offset must not blur the ties (scores are centred per document)
            got = pair_pvalues(Z + offset, exact_signs(8))
            np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
            np.testing.assert_allclose(got, expected, rtol=0, atol=1e-15)


def test_pair_pvalues_equal_brute_force_loop():
    X, Z = synthetic(n_docs=12, n_systems=5, missing=0.25, seed=1)
    signs = permutation_signs(300, 12, seed=2)
    for M in (Z, X[0], X[1]):
        np.testing.assert_array_equal(pair_pvalues(M, signs), brute_pvalues(M, signs))
    stacked = pair_pvalues(np.stack([Z, X[0]]), signs)
    np.testing.assert_array_equal(stacked[1], brute_pvalues(X[0], signs))


def test_ties_make_the_two_directions_sum_above_one():
    Z = np.array([[2.0, 1.0], [1.0, 1.0], [1.0, 2.0]])  # differences 1, 0, -1: t = 0
    P = pair_pvalues(Z, exact_signs(3))
    # sign patterns of (d1, d3): (+,+) 0, (+,-) 2, (-,+) -2, (-,-) 0 -> >= 0 in 3 of 4, <= 0 in 3 of 4
    assert P[0, 1] == P[1, 0] == 0.75
    identical = pair_pvalues(np.array([[1.0, 1.0], [3.0, 3.0]]), exact_signs(2))
    assert identical[0, 1] == identical[1, 0] == 1.0


def test_monte_carlo_p_values_approach_exact():
    _, Z = synthetic(n_docs=10, n_systems=4, seed=4)
    exact = pair_pvalues(Z, exact_signs(10))
    mc = system_pair_pvalues(Z, n_permutations=20000, seed=0)
    off = ~np.eye(4, dtype=bool)
    se = np.sqrt(exact * (1 - exact) / 20000) + 1e-4
    assert (np.abs(mc - exact)[off] <= 4 * se[off]).all()


def test_seed_4_reproduces_reference_draws():
    """pce.compute_pairwise_p_values(seg_scores, 1000, seed=4), written here as a loop from its documented steps:
    float32 uniforms rounded with rint, 2m - 1, system sums, p = #(null >= test_delta) / K, upper triangle."""
    rng = np.random.default_rng(7)
    seg_scores = rng.random((10, 100))  # pce_test.py's shape: (num_systems, num_segments)
    u = np.random.default_rng(4).random(size=(1000, 100), dtype=np.float32)
    two_m_minus_one = 2.0 * np.rint(u) - 1.0
    expected = np.full((10, 10), np.nan)
    for i in range(10):
        for j in range(i + 1, 10):
            null = two_m_minus_one @ seg_scores[i] - two_m_minus_one @ seg_scores[j]
            expected[i, j] = np.sum(null >= seg_scores[i].sum() - seg_scores[j].sum()) / 1000
    got = system_pair_pvalues(seg_scores.T, n_permutations=1000, seed=4)
    iu = np.triu_indices(10, 1)
    np.testing.assert_array_equal(got[iu], expected[iu])


def test_deterministic_like_reference_test():
    """pce_test.py, test_pairwise_p_values_are_deterministic: the same scores give the same p-values twice."""
    scores = np.random.default_rng(0).random((10, 100)).T
    np.testing.assert_array_equal(system_pair_pvalues(scores), system_pair_pvalues(scores))
    assert not np.array_equal(system_pair_pvalues(scores, seed=1), system_pair_pvalues(scores, seed=2))
    np.testing.assert_array_equal(permutation_signs(50, 7, 3), permutation_signs(50, 7, np.random.default_rng(3)))


def test_pvalue_validation():
    Z = np.arange(6.0).reshape(3, 2)
    with pytest.raises(ValueError, match="at least 2 systems"):
        system_pair_pvalues(Z[:, :1])
    with pytest.raises(ValueError, match="signs must have shape"):
        pair_pvalues(Z, np.ones((4, 2)))
    with pytest.raises(ValueError, match="only -1 and \\+1"):
        pair_pvalues(Z, np.zeros((4, 3)))
    with pytest.raises(ValueError, match="n_permutations must be a positive integer"):
        system_pair_pvalues(Z, n_permutations=0)
    with pytest.raises(ValueError, match="seed"):
        system_pair_pvalues(Z, seed=-1)
    with pytest.raises(ValueError, match="infinite"):
        system_pair_pvalues(np.array([[1.0, np.inf], [1.0, 2.0]]))
    with pytest.raises(ValueError, match="limited to 16"):
        exact_signs(17)


# ---------------------------------------------------------------------------------------------------------- SPA


def test_spa_equals_brute_force_loop_with_the_same_signs():
    X, Z = synthetic(n_docs=15, n_systems=5, missing=0.2, seed=5)
    signs = permutation_signs(200, 15, seed=9)
    got = soft_pairwise_accuracy(X, Z, n_permutations=200, seed=9)
    assert got.spa.tolist() == pytest.approx([brute_spa(X[0], Z, signs), brute_spa(X[1], Z, signs)], abs=1e-12)
    assert got.n_permutations == 200


def test_spa_by_hand_with_exact_signs():
    """Z: system 0 always best; the metric swaps systems 1 and 2. Exact p: p_01 = p_02 = 1/64, human p_12 = 62/64,
    metric p_12 = human p_21 = 8/64, so SPA = 1 - (54/64)/3 = 0.71875."""
    Z = np.array([[3., 1, 2], [4, 1, 2], [5, 2, 1], [3, 0, 2], [4, 1, 3], [5, 2, 2]])
    ph, pm = pair_pvalues(Z, exact_signs(6)), pair_pvalues(Z[:, [0, 2, 1]], exact_signs(6))
    assert ph[0, 1] == ph[0, 2] == 1 / 64 and ph[1, 2] == 62 / 64 and pm[1, 2] == 8 / 64
    assert spa_from_pvalues(ph, pm) == 1 - (54 / 64) / 3
    assert soft_pairwise_accuracy(Z[:, [0, 2, 1]], Z, 20000, seed=0).spa == pytest.approx(0.71875, abs=0.01)


def test_metric_equal_to_humans_scores_one():
    _, Z = synthetic(seed=6, missing=0.1)
    for X in (Z, 3.0 * Z - 7.0, Z + 1e6):  # positive affine maps keep every p-value (and a huge offset is centred)
        r = soft_pairwise_accuracy(X, Z, n_permutations=500, seed=1)
        assert r.spa == 1.0 and r.n_pairs == 15 and r.n_undefined_pairs == 0


def test_spa_in_unit_interval_and_good_beats_noisy():
    for seed in range(5):
        X, Z = synthetic(n_docs=40, n_systems=8, noise=(0.2, 3.0, -1.0), seed=seed)
        X[2] = -Z  # a metric that reverses the humans
        spa = soft_pairwise_accuracy(X, Z, n_permutations=300, seed=seed).spa
        assert ((spa >= 0) & (spa <= 1)).all()
        assert spa[0] > spa[1] > spa[2]


def test_system_order_invariance():
    X, Z = synthetic(n_docs=25, n_systems=7, seed=8, missing=0.15)
    order = np.random.default_rng(0).permutation(7)
    a = soft_pairwise_accuracy(X, Z, 400, seed=2).spa
    b = soft_pairwise_accuracy(X[:, :, order], Z[:, order], 400, seed=2).spa
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)


def test_stack_equals_per_metric_and_seed_reproducibility():
    X, Z = synthetic(noise=(0.2, 1.0, 3.0), seed=10, missing=0.1)
    stacked = soft_pairwise_accuracy(X, Z, 300, seed=4)
    for m in range(3):
        assert soft_pairwise_accuracy(X[m], Z, 300, seed=4).spa == stacked.spa[m]
    assert soft_pairwise_accuracy(X, Z, 300, seed=4).spa.tolist() == stacked.spa.tolist()
    assert soft_pairwise_accuracy(X, Z, 300, seed=5).spa.tolist() != stacked.spa.tolist()


def test_unscored_documents_are_dropped_before_drawing():
    X, Z = synthetic(seed=11)
    Z2, X2 = np.vstack([np.full((1, 6), np.nan), Z]), np.concatenate([np.full((2, 1, 6), np.nan), X], axis=1)
    assert soft_pairwise_accuracy(X2, Z2, 300, 0).spa.tolist() == soft_pairwise_accuracy(X, Z, 300, 0).spa.tolist()


def test_pairs_without_shared_document_are_left_out_and_counted():
    Z = np.array([[1.0, 2.0, np.nan], [2.0, 3.0, np.nan], [np.nan, 1.0, 4.0], [np.nan, 0.0, 2.0]])
    X = Z + np.array([[2.5, 0, np.nan], [0, 0, np.nan], [np.nan, 0, 0], [np.nan, 0, 0.1]])
    r = soft_pairwise_accuracy(X, Z, 100, 0)
    assert (r.n_pairs, r.n_undefined_pairs) == (2, 1)  # systems 0 and 2 share no document
    P = system_pair_pvalues(Z, 100, 0)
    assert np.isnan(P[0, 2]) and np.isnan(P[2, 0]) and not np.isnan(P[0, 1])
    assert r.spa == spa_from_pvalues(P, system_pair_pvalues(X, 100, 0)) == brute_spa(X, Z, permutation_signs(100, 4))
    # pair (0, 1): human differences (-1, -1) give p = 1; the metric's (1.5, -1) give p = 2/4 (exact); pair (1, 2)
    # has differences (-3, -2) and (-3, -2.1): p = 1 for both
    assert r.spa == pytest.approx(1 - 0.5 / 2, abs=0.15)
    with pytest.raises(ValueError, match="none of the 1 pairs"):
        soft_pairwise_accuracy(Z[:, [0, 2]], Z[:, [0, 2]])


def test_spa_validation():
    X, Z = synthetic(seed=12)
    with pytest.raises(ValueError, match="same cells"):
        Xn = X[0].copy()
        Xn[0, 0] = np.nan
        soft_pairwise_accuracy(Xn, Z)
    with pytest.raises(ValueError, match="shape"):
        soft_pairwise_accuracy(X[0][:, :3], Z)
    with pytest.raises(ValueError, match="at least 2 systems"):
        soft_pairwise_accuracy(X[0][:, :1], Z[:, :1])
    with pytest.raises(ValueError, match="every score is missing"):
        soft_pairwise_accuracy(np.full((3, 3), np.nan), np.full((3, 3), np.nan))
    with pytest.raises(ValueError, match="same pairs"):
        spa_from_pvalues([[np.nan, 0.1], [0.9, np.nan]], [[np.nan, np.nan], [0.9, np.nan]])
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        spa_from_pvalues([[np.nan, 1.5], [0.9, np.nan]], [[np.nan, 0.1], [0.9, np.nan]])


# ------------------------------------------------------------------------------------------ significance test


def brute_swap_test(Xa, Xb, Z, n_resamples, n_permutations, seed):
    """The WMT24 test as a loop: signs, then the swap masks, from one generator (the module's documented order)."""
    rng = np.random.default_rng(seed)
    signs = permutation_signs(n_permutations, Z.shape[0], rng)
    masks = rng.random((n_resamples, *Z.shape)) < 0.5
    A, B = zscore_cells(Xa), zscore_cells(Xb)
    observed = brute_spa(A, Z, signs) - brute_spa(B, Z, signs)
    count = 0
    for m in masks:
        a_star, b_star = np.where(m, B, A), np.where(m, A, B)
        count += brute_spa(a_star, Z, signs) - brute_spa(b_star, Z, signs) >= observed - 1e-12
    return count / n_resamples, observed


def test_permutation_test_equals_brute_force_loop():
    X, Z = synthetic(n_docs=10, n_systems=4, noise=(0.8, 1.5), seed=13, missing=0.1)
    p, delta = brute_swap_test(X[0], X[1], Z, 40, 64, seed=3)
    got = spa_permutation_test(X[0], X[1], Z, n_resamples=40, n_permutations=64, seed=3)
    assert got.pvalue == p and got.delta == pytest.approx(delta, abs=1e-12) and got.n_resamples == 40
    r = soft_pairwise_accuracy(X, Z, 64, seed=3).spa
    assert got.delta == pytest.approx(r[0] - r[1], abs=1e-12)


def test_permutation_test_with_tied_integer_scores_equals_brute_force_loop():
    """Few documents and integer scores: many permuted statistics equal the observed one up to rounding."""
    rng = np.random.default_rng(21)
    Z = rng.integers(1, 4, size=(5, 4)).astype(float)
    Xa, Xb = Z + rng.integers(-1, 2, size=Z.shape), Z + rng.integers(-2, 3, size=Z.shape)
    for seed in range(3):
        p, delta = brute_swap_test(Xa, Xb, Z, 60, 32, seed=seed)
        got = spa_permutation_test(Xa, Xb, Z, n_resamples=60, n_permutations=32, seed=seed)
        assert got.pvalue == p and got.delta == pytest.approx(delta, abs=1e-12)


def test_metric_against_itself_and_clear_winner():
    X, Z = synthetic(n_docs=40, n_systems=8, seed=14)
    assert spa_permutation_test(X[0], X[0], Z, 100, 200, seed=0).pvalue == 1.0
    assert spa_permutation_test(X[0], X[1], Z, 200, 200, seed=0).pvalue < 0.01
    assert spa_permutation_test(X[1], X[0], Z, 200, 200, seed=0).pvalue > 0.99
    one = spa_permutation_test(X[0], X[1], Z, 200, 200, seed=0, add_one=True)
    assert one.pvalue == (spa_permutation_test(X[0], X[1], Z, 200, 200, seed=0).pvalue * 200 + 1) / 201


def test_early_stopping_uses_the_first_block():
    X, Z = synthetic(n_docs=40, n_systems=8, seed=15)
    early = spa_permutation_test(X[0], X[1], Z, 1000, 200, seed=0, block_size=100)
    assert early.n_resamples == 100
    assert early.pvalue == spa_permutation_test(X[0], X[1], Z, 100, 200, seed=0).pvalue
    assert spa_permutation_test(X[0], X[1], Z, 300, 200, seed=0, block_size=100, early_min=0,
                                early_max=1).n_resamples == 300
    with pytest.raises(ValueError, match="early_min"):
        spa_permutation_test(X[0], X[1], Z, 100, 100, block_size=10, early_min=0.6, early_max=0.5)


def test_pairwise_early_stopping_looks_at_the_metric_with_the_higher_spa():
    X, Z = synthetic(n_docs=30, n_systems=6, noise=(1.2, 1.0), seed=0)  # metric 1 has the higher SPA, p about 0.3
    r = pairwise_spa_pvalues(X, Z, n_resamples=200, n_permutations=100, seed=0, block_size=50)
    single = spa_permutation_test(X[1], X[0], Z, 200, 100, seed=0, block_size=50)
    assert r.spa[1] > r.spa[0] and 0.02 < single.pvalue < 0.5
    assert r.n_resamples[0, 1] == r.n_resamples[1, 0] == single.n_resamples == 200
    assert r.pvalues[1, 0] == single.pvalue


def test_pairwise_matrix_feeds_significance_clusters():
    X, Z = synthetic(n_docs=40, n_systems=8, noise=(0.2, 0.25, 3.0), seed=16)
    r = pairwise_spa_pvalues(X, Z, n_resamples=100, n_permutations=200, seed=0)
    assert r.pvalues.shape == (3, 3) and np.isnan(np.diag(r.pvalues)).all()
    assert (r.n_resamples[~np.eye(3, dtype=bool)] == 100).all() and r.n_permutations == 200
    assert r.spa.tolist() == pytest.approx(soft_pairwise_accuracy(X, Z, 200, seed=0).spa.tolist(), abs=1e-12)
    first = spa_permutation_test(X[0], X[1], Z, 100, 200, seed=0)  # pair (0, 1) draws first, after the signs
    assert r.pvalues[0, 1] == first.pvalue
    assert r.pvalues[1, 0] == spa_permutation_test(X[1], X[0], Z, 100, 200, seed=0).pvalue  # the same swaps
    ranks, _ = significance_clusters(["good", "good2", "noisy"], r.spa, r.pvalues, correction="none")
    assert ranks[-1] == ("noisy", 2) and {name for name, rank in ranks if rank == 1} == {"good", "good2"}
    with pytest.raises(ValueError, match="at least 2 metrics"):
        pairwise_spa_pvalues(X[0], Z)


# -------------------------------------------------------------------------------------------------- bootstrap


def test_bootstrap_resample_equals_brute_force():
    X, Z = synthetic(n_docs=12, n_systems=4, seed=17, missing=0.1)
    samples = spa_bootstrap_samples(X, Z, n_resamples=3, n_permutations=100, seed=5)
    rng = np.random.default_rng(5)
    signs = permutation_signs(100, 12, rng)
    docs = rng.integers(0, 12, size=(3, 12))
    for k in range(3):
        expected = [brute_spa(X[m][docs[k]], Z[docs[k]], signs) for m in range(2)]
        np.testing.assert_allclose(samples[k], expected, rtol=0, atol=1e-12)


def test_bootstrap_interval():
    X, Z = synthetic(n_docs=40, n_systems=8, seed=18)
    ci = spa_bootstrap_ci(X, Z, n_resamples=100, n_permutations=100, seed=0)
    assert (ci.lower <= ci.point).all() and (ci.point <= ci.upper).all() and ci.n_resamples == 100
    assert ci.point.tolist() == soft_pairwise_accuracy(X, Z, 100, seed=0).spa.tolist()
    single = spa_bootstrap_ci(X[0], Z, n_resamples=100, n_permutations=100, seed=0)
    assert single.point == ci.point[0] and single.lower == ci.lower[0]
    assert spa_bootstrap_samples(Z, Z, 5, 50).tolist() == [1.0] * 5


def test_docstring_examples():
    result = doctest.testmod(spa_module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted >= 15
