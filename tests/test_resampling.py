"""Score matrices and the resampling statistics of Deutsch, Dror & Roth (TACL 2021): hand-checkable cases, scipy as
the reference for every vectorised coefficient, agreement with meta_eval.stats.levels on real SummEval data."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from meta_eval.stats import resampling
from meta_eval.stats.levels import global_level, summary_level, system_level
from meta_eval.matrix import align_missing, to_matrix
from meta_eval.stats.resampling import (KINDS, LEVELS, average_ranks, batch_correlation, bootstrap_ci,
                                        bootstrap_samples, fisher_ci, level_correlation, level_n,
                                        paired_bootstrap_test, pairwise_bootstrap_pvalues,
                                        pairwise_permutation_pvalues, permutation_test)

SCIPY = {
    "pearson": lambda a, b: stats.pearsonr(a, b).statistic,
    "spearman": lambda a, b: stats.spearmanr(a, b).statistic,
    "kendall": lambda a, b: stats.kendalltau(a, b, variant="b").statistic,
}


def scipy_rows(x, y, kind):
    """The reference: scipy on each row, pairs with a NaN dropped, NaN where scipy has no value."""
    x, y = np.broadcast_arrays(x, y)
    out = []
    for a, b in zip(x.reshape(-1, x.shape[-1]), y.reshape(-1, y.shape[-1])):
        ok = ~(np.isnan(a) | np.isnan(b))
        a, b = a[ok], b[ok]
        defined = len(a) >= 3 and a.max() > a.min() and b.max() > b.min()
        out.append(SCIPY[kind](a, b) if defined else np.nan)
    return np.array(out).reshape(x.shape[:-1])


def synthetic(n_docs=20, n_systems=10, noise=(0.1, 3.0), seed=0):
    """Human scores = a quality per system + noise per summary; metrics = human + noise of the given sizes."""
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=n_systems) + rng.normal(size=(n_docs, n_systems))
    return Z, [Z + s * rng.normal(size=Z.shape) for s in noise]


# ------------------------------------------------------------------------------------------------- to_matrix


def test_to_matrix_by_hand():
    M, docs, systems = to_matrix([1.0, 2.0, 3.0, 4.0], ["d2", "d1", "d1", "d2"], ["b", "a", "b", "a"])
    assert docs == ["d1", "d2"] and systems == ["a", "b"]
    np.testing.assert_array_equal(M, [[2.0, 3.0], [4.0, 1.0]])
    M, _, _ = to_matrix([1.0, 2.0], ["d1", "d2"], ["a", "b"])
    np.testing.assert_array_equal(np.isnan(M), [[False, True], [True, False]])


def test_to_matrix_duplicates_are_named_or_averaged():
    with pytest.raises(ValueError, match=r"\('d1', 'a'\) occurs 2 times.*duplicates='mean'"):
        to_matrix([1.0, 2.0, 5.0], ["d1", "d1", "d2"], ["a", "a", "a"])
    M, _, _ = to_matrix([1.0, 2.0, np.nan, 5.0], ["d1", "d1", "d1", "d2"], ["a", "a", "a", "a"], duplicates="mean")
    np.testing.assert_array_equal(M, [[1.5], [5.0]])  # NaN repeats are left out of the mean
    M, _, _ = to_matrix([np.nan, np.nan], ["d", "d"], ["a", "a"], duplicates="mean")
    assert np.isnan(M).all()


def test_to_matrix_validation():
    with pytest.raises(ValueError, match="duplicates policy"):
        to_matrix([1.0], ["d"], ["a"], duplicates="first")
    with pytest.raises(ValueError, match="systems has 1 labels but there are 2 values"):
        to_matrix([1.0, 2.0], ["d", "e"], ["a"])
    with pytest.raises(ValueError, match="1-D"):
        to_matrix([[1.0]], ["d"], ["a"])


def test_align_missing():
    a, b = align_missing([[1.0, np.nan, 3.0]], [[np.nan, 2.0, 3.0]])
    np.testing.assert_array_equal(np.isnan(a), [[True, True, False]])
    np.testing.assert_array_equal(np.isnan(b), np.isnan(a))
    with pytest.raises(ValueError, match="one shape"):
        align_missing([[1.0]], [[1.0, 2.0]])


# ---------------------------------------------------------------------------------------- batched coefficients


def test_average_ranks_match_scipy_with_ties_and_nan():
    rng = np.random.default_rng(0)
    a = rng.integers(0, 4, size=(50, 7, 16)).astype(float)
    a[rng.random(a.shape) < 0.1] = np.nan
    for axis in (-1, 1):
        np.testing.assert_array_equal(average_ranks(a, axis=axis), stats.rankdata(a, axis=axis, nan_policy="omit"))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("n", [16, 300])  # 300 > 128 takes the scipy loop for Kendall
def test_batch_correlations_equal_scipy_per_resample(kind, n):
    rng = np.random.default_rng(1)
    # (resamples, metrics, n) against a human (resamples, 1, n): heavy ties, one constant row, some NaN
    x = rng.integers(0, 5, size=(6, 4, n)).astype(float)
    y = rng.integers(0, 3, size=(6, 1, n)).astype(float)
    x[0, 0] = 2.0
    x[1, 1, :5] = np.nan
    y[2, 0, -4:] = np.nan
    ours = batch_correlation(x, y, kind)
    ref = scipy_rows(x, y, kind)
    assert ours.shape == (6, 4)
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(ref))
    np.testing.assert_allclose(ours, ref, rtol=0, atol=1e-12)
    assert np.isnan(ours[0, 0])  # constant: undefined, as meta_eval.stats.correlation says


@pytest.mark.parametrize("x_levels, y_levels", [(None, 13), (7, None), (None, None), (200, 3)])
def test_long_kendall_paths_equal_scipy(x_levels, y_levels):
    # global level: counted by levels when x or y has <= 64 distinct values, else scipy per vector
    rng = np.random.default_rng(5)

    def draw(levels):
        v = rng.normal(size=(3, 5, 400)) if levels is None else rng.integers(0, levels, size=(3, 5, 400)) / 3.0
        v[:, :, :30] = np.round(v[:, :, :30])  # some ties in the continuous ones too
        return v

    x, y = draw(x_levels), draw(y_levels)[:, :1]
    x[0, 1, 10:40] = np.nan
    y[1, 0, :3] = 1.0
    ours = batch_correlation(x, y, "kendall")
    np.testing.assert_allclose(ours, scipy_rows(x, y, "kendall"), rtol=0, atol=1e-12)


def test_batch_correlations_need_three_pairs():
    for kind in KINDS:
        assert np.isnan(batch_correlation([1.0, 2.0, np.nan], [2.0, 1.0, 3.0], kind))
    assert batch_correlation([1.0, 2.0, 3.0], [1.0, 3.0, 2.0], "spearman") == pytest.approx(0.5)


# ----------------------------------------------------------------------------------------------------- levels

# the hand-checkable data of tests/test_levels.py as a matrix: 2 documents x 3 systems (a, b, c)
X_HAND = np.array([[1.0, 2.0, 3.0], [2.0, 3.0, 4.0]])
Z_HAND = np.array([[1.0, 3.0, 2.0], [2.0, 4.0, 3.0]])


def test_levels_by_hand():
    # each document: metric a<b<c, humans a<c<b -> Spearman 0.5 twice; system means 1.5, 2.5, 3.5 vs 1.5, 3.5, 2.5
    assert level_correlation(X_HAND, Z_HAND, "summary", "spearman") == pytest.approx(0.5)
    assert level_correlation(X_HAND, Z_HAND, "system", "spearman") == pytest.approx(0.5)
    assert level_correlation(X_HAND, Z_HAND, "system", "pearson") == pytest.approx(0.5)
    assert level_correlation(X_HAND, Z_HAND, "global", "kendall") == pytest.approx(
        stats.kendalltau(X_HAND.ravel(), Z_HAND.ravel()).statistic)
    assert level_n(X_HAND, "system") == 3 and level_n(X_HAND, "summary") == 3 and level_n(X_HAND, "global") == 6


def test_levels_skip_what_is_undefined():
    X, Z = X_HAND.copy(), Z_HAND.copy()
    X[0, 0] = Z[0, 0] = np.nan  # document 1 keeps 2 systems: skipped at the summary level
    assert level_correlation(X, Z, "summary", "spearman") == pytest.approx(0.5)
    # system a keeps only document 2: means a=2, b=2.5, c=3.5 vs a=2, b=3.5, c=2.5
    assert level_correlation(X, Z, "system", "pearson") == pytest.approx(stats.pearsonr([2, 2.5, 3.5],
                                                                                        [2, 3.5, 2.5]).statistic)
    constant = np.array([[1.0, 1.0, 1.0], [2.0, 3.0, 4.0]])
    assert level_correlation(constant, Z_HAND, "summary", "spearman") == pytest.approx(0.5)
    assert math.isnan(level_correlation(np.ones((2, 3)), Z_HAND, "summary", "spearman"))


def test_level_correlation_broadcasts_over_metrics():
    rng = np.random.default_rng(2)
    Z = rng.normal(size=(8, 5))
    X = np.stack([Z + s * rng.normal(size=Z.shape) for s in (0.1, 1.0, 3.0)])
    for level, kind in itertools.product(LEVELS, KINDS):
        stacked = level_correlation(X, Z, level, kind)
        assert stacked.shape == (3,)
        np.testing.assert_allclose(stacked, [level_correlation(x, Z, level, kind) for x in X], atol=1e-12)


def test_level_correlation_validation():
    with pytest.raises(ValueError, match="same cells"):
        level_correlation([[1.0, np.nan, 3.0]], [[1.0, 2.0, 3.0]], "global")
    with pytest.raises(ValueError, match="unknown level"):
        level_correlation(X_HAND, Z_HAND, "document")
    with pytest.raises(ValueError, match="unknown kind"):
        level_correlation(X_HAND, Z_HAND, "global", "cosine")
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        level_correlation([1.0, 2.0, 3.0], [1.0, 2.0, 3.0], "global")
    with pytest.raises(ValueError, match="infinite"):
        level_correlation([[1.0, np.inf, 3.0]], [[1.0, 2.0, 3.0]], "global")


@pytest.fixture(scope="module")
def summeval(shared_data):
    from meta_eval import judgments

    jset = judgments.load("summeval", shared_data)
    human = jset.human("relevance")
    lengths = np.array([len(r.candidate.split()) for r in jset.rows], dtype=float)
    docs = [r.doc_id for r in jset.rows]
    systems = [r.system for r in jset.rows]
    return lengths, human, docs, systems


@pytest.mark.parametrize("kind", KINDS)
def test_agrees_with_levels_on_real_summeval(summeval, kind):
    lengths, human, docs, systems = summeval
    X, doc_labels, sys_labels = to_matrix(lengths, docs, systems)
    Z, _, _ = to_matrix(human, docs, systems)
    assert X.shape == (100, 16) and len(doc_labels) == 100 and len(sys_labels) == 16
    assert level_correlation(X, Z, "summary", kind) == pytest.approx(summary_level(lengths, human, docs, kind).r,
                                                                     abs=1e-12)
    assert level_correlation(X, Z, "system", kind) == pytest.approx(system_level(lengths, human, systems, kind).r,
                                                                    abs=1e-12)
    assert level_correlation(X, Z, "global", kind) == pytest.approx(global_level(lengths, human, kind).r, abs=1e-12)


@pytest.mark.parametrize("kind", KINDS)
def test_agrees_with_levels_on_real_summeval_with_missing_cells(summeval, kind):
    lengths, human, docs, systems = summeval
    human = human.copy()
    human[np.random.default_rng(3).random(len(human)) < 0.3] = np.nan  # leaves some documents with < 3 systems
    X, Z = align_missing(to_matrix(lengths, docs, systems)[0], to_matrix(human, docs, systems)[0])
    ref = summary_level(lengths, human, docs, kind, drop_missing=True)
    assert ref.dropped > 0
    assert level_correlation(X, Z, "summary", kind) == pytest.approx(ref.r, abs=1e-12)
    assert level_correlation(X, Z, "system", kind) == pytest.approx(
        system_level(lengths, human, systems, kind, drop_missing=True).r, abs=1e-12)
    assert level_correlation(X, Z, "global", kind) == pytest.approx(
        global_level(lengths, human, kind, drop_missing=True).r, abs=1e-12)


# -------------------------------------------------------------------------------------------------- bootstrap


@pytest.mark.parametrize("resample", ["both", "systems", "documents"])
def test_bootstrap_resample_is_the_submatrix_of_the_drawn_indices(resample):
    Z, (X, _) = synthetic(n_docs=6, n_systems=5)
    samples = bootstrap_samples(X, Z, "summary", "spearman", resample=resample, n_resamples=4, seed=7)
    rng = np.random.default_rng(7)  # documents are drawn first, then systems, all resamples at once
    docs = rng.integers(0, 6, size=(4, 6)) if resample != "systems" else np.tile(np.arange(6), (4, 1))
    syss = rng.integers(0, 5, size=(4, 5)) if resample != "documents" else np.tile(np.arange(5), (4, 1))
    for b in range(4):
        sub = np.ix_(docs[b], syss[b])
        assert samples[b] == pytest.approx(level_correlation(X[sub], Z[sub], "summary", "spearman"), nan_ok=True)


def test_bootstrap_ci_contains_the_point_and_shrinks_with_more_data():
    widths = []
    for n_docs in (10, 160):
        Z, (X,) = synthetic(n_docs=n_docs, n_systems=8, noise=(1.0,), seed=4)
        for level in LEVELS:
            lo, hi, r = bootstrap_ci(X, Z, level, "pearson", n_resamples=400, seed=0)
            assert lo <= r <= hi and r == pytest.approx(level_correlation(X, Z, level, "pearson"))
        lo, hi, _ = bootstrap_ci(X, Z, "summary", "pearson", resample="documents", n_resamples=400, seed=0)
        widths.append(hi - lo)
    assert widths[1] < widths[0] / 2  # 16x the documents: about 1/4 the width


def test_bootstrap_ci_wider_at_higher_confidence():
    Z, (X,) = synthetic(noise=(1.0,))
    lo90, hi90, _ = bootstrap_ci(X, Z, "global", "spearman", confidence=0.90, seed=0)
    lo99, hi99, _ = bootstrap_ci(X, Z, "global", "spearman", confidence=0.99, seed=0)
    assert lo99 < lo90 < hi90 < hi99


def test_bootstrap_same_seed_same_numbers_different_seed_different_numbers():
    Z, (X,) = synthetic(noise=(1.0,))
    a = bootstrap_samples(X, Z, "summary", "kendall", n_resamples=50, seed=11)
    np.testing.assert_array_equal(a, bootstrap_samples(X, Z, "summary", "kendall", n_resamples=50, seed=11))
    np.testing.assert_array_equal(
        a, bootstrap_samples(X, Z, "summary", "kendall", n_resamples=50, seed=np.random.default_rng(11)))
    assert not np.array_equal(a, bootstrap_samples(X, Z, "summary", "kendall", n_resamples=50, seed=12))
    assert bootstrap_ci(X, Z, "system", "pearson", seed=3) == bootstrap_ci(X, Z, "system", "pearson", seed=3)
    assert bootstrap_ci(X, Z, "system", "pearson", seed=3) != bootstrap_ci(X, Z, "system", "pearson", seed=4)


def test_bootstrap_does_not_depend_on_chunk_size(monkeypatch):
    Z, (X, Y) = synthetic()
    full = bootstrap_samples(np.stack([X, Y]), Z, "global", "spearman", n_resamples=30, seed=5)
    monkeypatch.setattr(resampling, "_CHUNK_CELLS", 1)  # one resample at a time
    np.testing.assert_array_equal(full, bootstrap_samples(np.stack([X, Y]), Z, "global", "spearman",
                                                          n_resamples=30, seed=5))


def test_bootstrap_several_metrics_share_the_resampled_indices():
    Z, (X, Y) = synthetic()
    both = bootstrap_ci(np.stack([X, Y]), Z, "summary", "spearman", n_resamples=200, seed=9)
    assert both.lower.shape == (2,)
    for m, single in enumerate((X, Y)):
        one = bootstrap_ci(single, Z, "summary", "spearman", n_resamples=200, seed=9)
        assert (both.lower[m], both.upper[m], both.point[m]) == pytest.approx(tuple(one))


def test_bootstrap_validation():
    Z, (X,) = synthetic(noise=(1.0,))
    with pytest.raises(ValueError, match="unknown resample"):
        bootstrap_ci(X, Z, "global", resample="cells")
    for bad in (-1, 1.5, True, "0"):
        with pytest.raises(ValueError, match="seed"):
            bootstrap_samples(X, Z, "global", seed=bad)
    with pytest.raises(ValueError, match="n_resamples"):
        bootstrap_ci(X, Z, "global", n_resamples=0)
    with pytest.raises(ValueError, match="confidence"):
        bootstrap_ci(X, Z, "global", confidence=95)
    with pytest.raises(ValueError, match="undefined"):
        bootstrap_ci(np.ones_like(Z), Z, "global")
    with pytest.raises(ValueError, match="shape"):
        bootstrap_ci(X[:, :3], Z, "global")


# ------------------------------------------------------------------------------------------------------ Fisher


def test_fisher_ci_by_hand():
    q = 1.959963984540054  # the 97.5% normal quantile
    lo, hi = fisher_ci(0.5, 28)  # Pearson: SE = 1/sqrt(28 - 3) = 0.2
    assert (lo, hi) == pytest.approx((math.tanh(math.atanh(0.5) - q * 0.2), math.tanh(math.atanh(0.5) + q * 0.2)))
    assert lo == pytest.approx(0.156028, abs=1e-6) and hi == pytest.approx(0.735818, abs=1e-6)
    se = math.sqrt((1 + 0.5**2 / 2) / 25)  # Spearman (Bonett & Wright 2000): c = 1 + r^2/2
    assert fisher_ci(0.5, 28, kind="spearman")[0] == pytest.approx(math.tanh(math.atanh(0.5) - q * se))
    se = math.sqrt(0.437 / 24)  # Kendall: b = 4, c = 0.437
    assert fisher_ci(0.5, 28, kind="kendall")[1] == pytest.approx(math.tanh(math.atanh(0.5) + q * se))
    lo90, hi90 = fisher_ci(0.5, 28, confidence=0.90)
    assert lo < lo90 < hi90 < hi
    assert fisher_ci(1.0, 10) == (1.0, 1.0)


def test_fisher_ci_validation():
    with pytest.raises(ValueError, match="greater than 3"):
        fisher_ci(0.5, 3)
    with pytest.raises(ValueError, match="greater than 4"):
        fisher_ci(0.5, 4, kind="kendall")
    with pytest.raises(ValueError, match=r"\[-1, 1\]"):
        fisher_ci(1.5, 10)
    with pytest.raises(ValueError, match="confidence"):
        fisher_ci(0.5, 10, confidence=0)


# ------------------------------------------------------------------------------------------------------- tests


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("kind", KINDS)
def test_permutation_test_finds_the_clearly_better_metric(level, kind):
    Z, (good, bad) = synthetic()
    assert permutation_test(good, bad, Z, level, kind, n_resamples=300, seed=0) < 0.01
    assert permutation_test(bad, good, Z, level, kind, n_resamples=300, seed=0) > 0.99


@pytest.mark.parametrize("resample", ["both", "systems", "documents"])
def test_permutation_test_identical_metrics_give_p_one(resample):
    Z, (X,) = synthetic(noise=(1.0,))
    assert permutation_test(X, X, Z, "summary", "spearman", n_resamples=200, seed=0, resample=resample) == 1.0
    assert paired_bootstrap_test(X, X, Z, "summary", "spearman", n_resamples=200, seed=0, resample=resample) == 1.0


def test_permutation_test_is_calibrated_for_equally_good_metrics():
    pvalues = []
    for seed in range(20):
        Z, (a, b) = synthetic(noise=(1.0, 1.0), seed=100 + seed)
        pvalues.append(permutation_test(a, b, Z, "global", "pearson", n_resamples=200, seed=seed))
    pvalues = np.array(pvalues)
    assert 0.3 < pvalues.mean() < 0.7  # about uniform
    assert (pvalues < 0.05).sum() <= 3
    assert (pvalues > 0.2).sum() >= 12


def test_permutation_test_matches_exhaustive_enumeration():
    # PERM-SYSTEMS on 4 systems has 2^4 equally likely swap patterns; 4000 random ones estimate the exact p-value
    rng = np.random.default_rng(6)
    Z = rng.normal(size=(5, 4))
    a, b = Z + rng.normal(size=Z.shape), 3 * (Z + 1.5 * rng.normal(size=Z.shape)) + 7  # b on another scale
    za, zb = (a - a.mean()) / a.std(), (b - b.mean()) / b.std()  # the paper standardises both metrics first
    observed = level_correlation(a, Z, "global", "pearson") - level_correlation(b, Z, "global", "pearson")
    deltas = []
    for bits in itertools.product([False, True], repeat=4):
        m = np.array(bits)[None, :]
        deltas.append(level_correlation(np.where(m, zb, za), Z, "global", "pearson")
                      - level_correlation(np.where(m, za, zb), Z, "global", "pearson"))
    exact = np.mean(np.array(deltas) >= observed - 1e-12)
    p = permutation_test(a, b, Z, "global", "pearson", n_resamples=4000, seed=1, resample="systems")
    assert p == pytest.approx(exact, abs=0.03)


def test_permutation_test_seed_and_add_one():
    Z, (a, b) = synthetic(noise=(1.0, 1.2), seed=1)
    p = permutation_test(a, b, Z, "summary", "pearson", n_resamples=500, seed=3)
    assert 0.0 < p < 1.0
    assert p == permutation_test(a, b, Z, "summary", "pearson", n_resamples=500, seed=3)
    assert p == permutation_test(a, b, Z, "summary", "pearson", n_resamples=500, seed=np.random.default_rng(3))
    assert p != permutation_test(a, b, Z, "summary", "pearson", n_resamples=500, seed=4)
    p1 = permutation_test(a, b, Z, "summary", "pearson", n_resamples=500, seed=3, add_one=True)
    assert p1 == pytest.approx((p * 500 + 1) / 501)
    Z, (good, bad) = synthetic()
    assert permutation_test(good, bad, Z, "global", "pearson", n_resamples=99, seed=0, add_one=True) == 0.01


@pytest.mark.parametrize("level", LEVELS)
def test_paired_bootstrap_test(level):
    Z, (good, bad) = synthetic()
    # with 10 systems the bootstrap test is weaker at the system level (Deutsch et al. 2021 find it less powerful)
    assert paired_bootstrap_test(good, bad, Z, level, "spearman", n_resamples=300, seed=0) < (
        0.05 if level == "system" else 0.01)
    assert paired_bootstrap_test(bad, good, Z, level, "spearman", n_resamples=300, seed=0) > 0.99
    Z, (a, b) = synthetic(noise=(1.0, 1.2), seed=1)
    p = paired_bootstrap_test(a, b, Z, level, "spearman", n_resamples=300, seed=0)
    assert p == paired_bootstrap_test(a, b, Z, level, "spearman", n_resamples=300, seed=0)


def test_pairwise_pvalue_matrices_match_the_single_tests():
    Z, mets = synthetic(noise=(0.5, 0.6, 2.0))
    X = np.stack(mets)
    P = pairwise_bootstrap_pvalues(X, Z, "summary", "pearson", n_resamples=200, seed=2)
    assert np.isnan(np.diag(P)).all()
    for i, j in itertools.permutations(range(3), 2):  # one shared set of resamples = the same seed per pair
        assert P[i, j] == paired_bootstrap_test(X[i], X[j], Z, "summary", "pearson", n_resamples=200, seed=2)
    P = pairwise_permutation_pvalues(X[:2], Z, "summary", "pearson", n_resamples=300, seed=5)
    assert P[0, 1] == permutation_test(X[0], X[1], Z, "summary", "pearson", n_resamples=300, seed=5)
    assert P[1, 0] == permutation_test(X[1], X[0], Z, "summary", "pearson", n_resamples=300, seed=5)
    assert P[0, 1] + P[1, 0] >= 1.0
    P = pairwise_permutation_pvalues(X, Z, "system", "spearman", n_resamples=200, seed=0)
    assert P[0, 2] < 0.01 and P[1, 2] < 0.01 and P[2, 0] > 0.99
    with pytest.raises(ValueError, match="at least 2 metrics"):
        pairwise_permutation_pvalues(X[0], Z, "system")


def test_permutation_validation():
    Z, (a, b) = synthetic()
    with pytest.raises(ValueError, match="X_b and Z must be missing"):
        b2 = b.copy()
        b2[0, 0] = np.nan
        permutation_test(a, b2, Z, "global")
    with pytest.raises(ValueError, match="undefined"):
        permutation_test(np.ones_like(a), b, Z, "global")
    with pytest.raises(ValueError, match="unknown resample"):
        permutation_test(a, b, Z, "global", resample="cells")
    with pytest.raises(ValueError, match="seed"):
        paired_bootstrap_test(a, b, Z, "global", seed=None)
