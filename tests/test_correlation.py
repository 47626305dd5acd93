import math
import warnings

import numpy as np
import pytest
from scipy import stats

from meta_eval.stats.correlation import (
    CORRELATIONS,
    Correlation,
    correlate,
    kendall,
    pearson,
    spearman,
)

KINDS = sorted(CORRELATIONS)
SCIPY = {
    "pearson": stats.pearsonr,
    "spearman": stats.spearmanr,
    "kendall": lambda x, y: stats.kendalltau(x, y, variant="b"),
}


@pytest.fixture
def xy():
    rng = np.random.default_rng(0)
    x = rng.normal(size=60)
    y = 0.5 * x + rng.normal(size=60)
    return x, y


def test_registry_and_dispatch():
    assert CORRELATIONS == {"spearman": spearman, "pearson": pearson, "kendall": kendall}
    x, y = [1, 2, 3, 4, 5], [2, 1, 4, 3, 5]
    for kind, func in CORRELATIONS.items():
        assert correlate(x, y, kind) == func(x, y)


@pytest.mark.parametrize("kind", KINDS)
def test_matches_scipy_on_random_data(kind, xy):
    x, y = xy
    got = correlate(x, y, kind)
    ref = SCIPY[kind](x, y)
    assert isinstance(got, Correlation)
    assert got.n == 60 and got.note is None
    assert got.r == pytest.approx(float(ref.statistic), abs=1e-12)
    assert got.p == pytest.approx(float(ref.pvalue), rel=1e-10, abs=1e-300)
    assert 0.1 < got.r < 0.8  # the data really are (moderately) correlated
    assert isinstance(got.r, float) and isinstance(got.p, float)


def test_hand_values_small_input():
    x, y = [1, 2, 3, 4], [1, 3, 2, 4]
    # ranks = values; d = (0, 1, 1, 0); rho = 1 - 6*2 / (4*(16-1)) = 0.8
    s = spearman(x, y)
    assert s.r == pytest.approx(0.8, abs=1e-12)
    # deviations (-1.5,-.5,.5,1.5) and (-1.5,.5,-.5,1.5): sxy = 4, sxx = syy = 5
    p = pearson(x, y)
    assert p.r == pytest.approx(0.8, abs=1e-12)
    # n = 4 -> df = 2, where the two-sided t-test p-value is exactly 1 - |r|
    assert p.p == pytest.approx(0.2, abs=1e-12)
    assert s.p == pytest.approx(0.2, abs=1e-12)
    # 6 pairs: only (2,3) is discordant -> tau = (5 - 1) / 6
    k = kendall(x, y)
    assert k.r == pytest.approx(4 / 6, abs=1e-12)
    # exact null: 1 of 24 permutations has 0 inversions, 3 have 1 -> 2 * 4/24
    assert k.p == pytest.approx(1 / 3, abs=1e-12)


@pytest.mark.parametrize("kind", KINDS)
def test_perfectly_monotone(kind):
    x = [1.0, 2.0, 5.0, 9.0, 10.0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        up = correlate(x, [v**3 for v in x], kind)
        down = correlate(x, [-math.exp(v) for v in x], kind)
    if kind != "pearson":
        assert up.r == pytest.approx(1.0, abs=1e-12) and down.r == pytest.approx(-1.0, abs=1e-12)
    else:
        assert 0.9 < up.r < 1.0 and -1.0 < down.r < -0.5


def test_kendall_tau_b_with_ties():
    # pairs: (1,2) D; (1,3) C; (1,4) C; (2,3) tied in x; (2,4) C; (3,4) tied in y
    # C = 3, D = 1, n0 = 6, n1 = n2 = 1 -> tau_b = 2 / sqrt(5 * 5) = 0.4
    # (tau-a, which ignores ties, would give (3 - 1) / 6 instead)
    assert kendall([1, 2, 2, 3], [2, 1, 3, 3]).r == pytest.approx(0.4, abs=1e-12)
    # no discordance: C = 4, D = 0 -> 4 / 5
    assert kendall([1, 1, 2, 3], [1, 2, 2, 3]).r == pytest.approx(0.8, abs=1e-12)


@pytest.mark.parametrize("kind", KINDS)
def test_symmetry(kind, xy):
    x, y = xy
    a, b = correlate(x, y, kind), correlate(y, x, kind)
    assert a.r == pytest.approx(b.r, abs=1e-12)
    assert a.p == pytest.approx(b.p, rel=1e-9)


@pytest.mark.parametrize("kind", ["spearman", "kendall"])
def test_rank_correlations_invariant_to_monotone_transforms(kind, xy):
    x, y = xy
    base = correlate(x, y, kind)
    moved = correlate(np.exp(x), y**3 + 2 * y, kind)
    assert moved.r == pytest.approx(base.r, abs=1e-12)
    assert moved.p == pytest.approx(base.p, rel=1e-9)
    # Pearson is not rank-based, so it does change: guards against a mix-up
    assert abs(pearson(np.exp(x), y**3).r - pearson(x, y).r) > 1e-3


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("which", ["x", "y", "both"])
def test_constant_input_is_undefined_without_warning(kind, which):
    varying, const = [1.0, 2.0, 3.0, 4.0], [7.0, 7.0, 7.0, 7.0]
    x = const if which in ("x", "both") else varying
    y = const if which in ("y", "both") else varying
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        c = correlate(x, y, kind)
    assert c == Correlation(r=None, p=None, n=4, note="constant input: correlation undefined")


@pytest.mark.parametrize("kind", KINDS)
def test_non_finite_input_raises_with_count_and_position(kind):
    with pytest.raises(ValueError, match=r"x .*2 NaN and 0 inf.*index 1"):
        correlate([1.0, np.nan, 3.0, np.nan], [1, 2, 3, 4], kind)
    with pytest.raises(ValueError, match=r"y .*0 NaN and 1 inf.*index 2"):
        correlate([1, 2, 3, 4], [1.0, 2.0, -np.inf, 4.0], kind)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(
    "x, y, pattern",
    [
        ([1, 2, 3, 4], [1, 2, 3], "equal length"),
        ([1, 2], [1, 2], "at least 3"),
        ([], [], "at least 3"),
        ([[1, 2], [3, 4]], [[1, 2], [3, 4]], "1-D"),
        (5.0, 5.0, "1-D"),
        (["a", "b", "c"], [1, 2, 3], "numeric"),
    ],
)
def test_invalid_shapes_raise(kind, x, y, pattern):
    with pytest.raises(ValueError, match=pattern):
        correlate(x, y, kind)


@pytest.mark.parametrize("kind", ["Spearman", "tau", "", None])
def test_unknown_kind_lists_known_kinds(kind):
    with pytest.raises(ValueError, match="kendall, pearson, spearman"):
        correlate([1, 2, 3], [1, 2, 3], kind)


def test_result_is_frozen():
    c = spearman([1, 2, 3], [1, 3, 2])
    with pytest.raises(AttributeError):
        c.r = 0.0
