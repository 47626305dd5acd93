"""Deutsch, Dror & Roth (NAACL 2022) system-level correlations (meta_eval.stats.system_level): full-test-set (unpaired)
system scores and delta correlations, on hand-computed cases and invariants."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from meta_eval.stats import levels
from meta_eval.stats.resampling import level_correlation
from meta_eval.stats.system_level import (delta_correlation, pair_fraction_cutoffs, system_scores,
                                          unpaired_system_level, unpaired_system_level_rows)


def test_unpaired_by_hand():
    X_all = np.array([[1.0, 2, 3, 4], [1, 2, 3, 4], [8, 2, 3, 0], [np.nan, 6, 3, 4]])
    Z_judged = np.array([[1.0, 2, 3, 4], [2, 1, 4, 3]])  # documents 0 and 1 were judged
    np.testing.assert_allclose(system_scores(X_all), [10 / 3, 3, 3, 3])
    np.testing.assert_allclose(system_scores(Z_judged), [1.5, 1.5, 3.5, 3.5])
    # Pearson of (10/3, 3, 3, 3) and (1.5, 1.5, 3.5, 3.5): deviations (1/4, -1/12 x3) and (-1, -1, 1, 1):
    # sum xy = -1/4 + 1/12 - 1/12 - 1/12 = -1/3; sum x^2 = 1/16 + 3/144 = 1/12; sum y^2 = 4
    r = unpaired_system_level(X_all, Z_judged, "pearson")
    assert r.level == "system" and r.n == 4
    assert r.r == pytest.approx((-1 / 3) / math.sqrt(4 / 12), abs=1e-12)
    # paired (judged documents only) the metric agrees better with the humans
    paired = level_correlation(X_all[:2], Z_judged, "system", "pearson")
    assert paired == pytest.approx(stats.pearsonr([1, 2, 3, 4], [1.5, 1.5, 3.5, 3.5]).statistic)


def test_unpaired_with_every_document_judged_equals_paired():
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(15, 6))
    X = Z + rng.normal(size=(15, 6))
    X[3, 2] = Z[3, 2] = np.nan  # a missing summary in both
    docs = np.repeat(np.arange(15), 6).astype(str)
    systems = np.tile(np.arange(6), 15).astype(str)
    keep = ~np.isnan(X.ravel())
    for kind in ("pearson", "spearman", "kendall"):
        unpaired = unpaired_system_level(X, Z, kind)
        rows = levels.system_level(X.ravel()[keep], Z.ravel()[keep], systems[keep], kind)
        assert unpaired.r == pytest.approx(rows.r, abs=1e-12) and unpaired.n == rows.n == 6
        assert unpaired.r == pytest.approx(level_correlation(X, Z, "system", kind), abs=1e-12)
        via_rows = unpaired_system_level_rows(X.ravel()[keep], Z.ravel()[keep], systems[keep], kind)
        assert via_rows.r == pytest.approx(rows.r, abs=1e-12)
    assert len(set(docs)) == 15


def test_unpaired_rows_unjudged_rows_count_for_the_metric_only():
    m = [1.0, 2, 3, 9, 2, 3, 1, 2, 3]
    h = [1.0, 2, 3, np.nan, np.nan, np.nan, 1, 2, 3]
    s = ["a", "b", "c"] * 3
    # metric means a: 11/3, b: 2, c: 3; human means 1, 2, 3
    got = unpaired_system_level_rows(m, h, s, "spearman")
    assert got.r == pytest.approx(-0.5, abs=1e-12)  # ranks (3, 1, 2) vs (1, 2, 3): 1 - 6 * 6 / 24
    paired = levels.system_level(m, h, s, "spearman", drop_missing=True)
    assert paired.r == pytest.approx(1.0)


def test_unpaired_invalid_input():
    with pytest.raises(ValueError, match="3 systems .* but Z_judged has 2"):
        unpaired_system_level(np.ones((2, 3)), np.ones((2, 2)))
    with pytest.raises(ValueError, match=r"X_all: system column\(s\) \[1\] have no score"):
        unpaired_system_level([[1.0, np.nan, 2], [2, np.nan, 3]], [[1.0, 2, 3]])
    with pytest.raises(ValueError, match="matrix"):
        unpaired_system_level([1.0, 2, 3], [[1.0, 2, 3]])
    with pytest.raises(ValueError, match="infinite"):
        unpaired_system_level([[1.0, np.inf, 2]], [[1.0, 2, 3]])
    with pytest.raises(ValueError, match="at least 3"):
        unpaired_system_level([[1.0, 2]], [[1.0, 2]])
    with pytest.raises(ValueError, match="system 'c' has no human score"):
        unpaired_system_level_rows([1.0, 2, 3], [1.0, 2, np.nan], ["a", "b", "c"])
    constant = unpaired_system_level([[1.0, 1, 1]], [[1.0, 2, 3]])
    assert constant.r is None and "constant" in constant.note


# ------------------------------------------------------------------------------------------ delta correlation

X4, Z4 = [1.0, 2, 4, 8], [1.0, 3, 2, 4]
# pairs (i, j): metric |delta| and concordance, by hand:
# (0,1) 1 C, (0,2) 3 C, (0,3) 7 C, (1,2) 2 D, (1,3) 6 C, (2,3) 4 C


def test_delta_bands_by_hand():
    d = delta_correlation(X4, Z4, 0, 2)
    assert (d.tau, d.n_pairs, d.concordant, d.discordant) == (0.0, 2, 1, 1)
    d = delta_correlation(X4, Z4, 0, 2, include_upper=False)  # [0, 2): only (0,1)
    assert (d.tau, d.n_pairs) == (1.0, 1)
    d = delta_correlation(X4, Z4, 3, 5)  # (0,2) and (2,3)
    assert (d.tau, d.n_pairs) == (1.0, 2)
    d = delta_correlation(X4, Z4, 2, 6)  # (0,2), (1,2), (1,3), (2,3): (3 - 1) / 4
    assert (d.tau, d.n_pairs) == (0.5, 4)
    d = delta_correlation(X4, Z4)
    assert d.tau == pytest.approx(4 / 6) and d.n_pairs == 6
    assert d.as_dict()["upper"] is None and d.as_dict()["tau"] == pytest.approx(4 / 6)


def test_empty_and_undefined_bands_are_none_with_a_note():
    d = delta_correlation(X4, Z4, 2.5, 2.9)
    assert d.tau is None and d.n_pairs == 0 and "no system pair" in d.note and "[2.5, 2.9]" in d.note
    d = delta_correlation(X4, Z4, 0, 2, min_pairs=5)
    assert d.tau is None and "fewer than min_pairs=5" in d.note
    # every pair in the band tied on the human side
    d = delta_correlation([1.0, 2, 3], [5.0, 5, 5])
    assert d.tau is None and d.tied_human == 3 and "tied" in d.note
    d = delta_correlation([1.0, 2, 3], [1.0, 2, 3], 0, 1, include_upper=False)  # [0, 1): no pair
    assert d.tau is None and "[0, 1)" in d.note


def test_band_covering_every_pair_is_tau_b_with_ties():
    rng = np.random.default_rng(5)
    for _ in range(20):
        x = rng.integers(0, 4, size=9).astype(float)  # ties on both sides, some pairs tied on both
        z = rng.integers(0, 3, size=9).astype(float)
        d = delta_correlation(x, z, 0, math.inf)
        expected = stats.kendalltau(x, z, variant="b").statistic
        if np.isnan(expected):
            assert d.tau is None
        else:
            assert d.tau == pytest.approx(expected, abs=1e-12)
        assert d.n_pairs == 36
        assert d.concordant + d.discordant + d.tied_metric + d.tied_human + d.tied_both == 36
    x, z = [1.0, 1, 2, 3], [1.0, 2, 2, 3]  # tau-a would be (4 - 0) / 6; tau-b is 4 / sqrt(5 * 5)
    assert delta_correlation(x, z).tau == pytest.approx(4 / 5)


def test_band_is_on_the_metric_difference_not_the_human_one():
    x, z = [0.0, 0.1, 5.0], [0.0, 10.0, 1.0]
    d = delta_correlation(x, z, 0, 0.5)  # only (0,1): metric delta 0.1, human delta 10
    assert (d.n_pairs, d.tau) == (1, 1.0)


def test_pair_fraction_cutoffs():
    assert pair_fraction_cutoffs(X4, 0.5) == [3.0, 7.0]  # sorted |deltas| 1, 2, 3, 4, 6, 7
    cut = pair_fraction_cutoffs(X4, 0.1)  # buckets of ceil(0.6) = 1 pair
    assert cut == [1.0, 2.0, 3.0, 4.0, 6.0, 7.0]
    assert [delta_correlation(X4, Z4, 0, u).n_pairs for u in cut] == [1, 2, 3, 4, 5, 6]
    with pytest.raises(ValueError, match="step"):
        pair_fraction_cutoffs(X4, 0)


def test_delta_invalid_input():
    with pytest.raises(ValueError, match="lower <= upper"):
        delta_correlation(X4, Z4, 2, 1)
    with pytest.raises(ValueError, match="lower <= upper"):
        delta_correlation(X4, Z4, -1, 1)
    with pytest.raises(ValueError, match="finite number"):
        delta_correlation(X4, Z4, float("nan"), 1)
    with pytest.raises(ValueError, match="one length"):
        delta_correlation(X4, Z4[:3])
    with pytest.raises(ValueError, match="finite system scores"):
        delta_correlation([1.0, np.nan, 2], [1.0, 2, 3])
    with pytest.raises(ValueError, match="at least 2 systems"):
        delta_correlation([1.0], [1.0])
    with pytest.raises(ValueError, match="min_pairs"):
        delta_correlation(X4, Z4, min_pairs=0)
