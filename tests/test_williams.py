import math

import numpy as np
import pytest
from scipy import special

from meta_eval.stats.correlation import correlate
from meta_eval.stats.significance import williams_from_scores, williams_t, williams_test


def steiger_williams_p(r12, r13, r23, n):
    """Independent reference: Williams' T2 in the notation of Steiger (1980),
    with |R| the determinant of the correlation matrix (via numpy) and
    rbar = (r12 + r13) / 2; the Student-t tail via the regularized incomplete
    beta function, P(T >= t) = I_{df/(df+t^2)}(df/2, 1/2) / 2 for t >= 0."""
    R = np.array([[1.0, r12, r13], [r12, 1.0, r23], [r13, r23, 1.0]])
    det = np.linalg.det(R)
    rbar = (r12 + r13) / 2
    t = (r12 - r13) * math.sqrt(
        (n - 1) * (1 + r23) / (2 * ((n - 1) / (n - 3)) * det + rbar**2 * (1 - r23) ** 3)
    )
    df = n - 3
    tail = 0.5 * special.betainc(df / 2, 0.5, df / (df + t * t))
    return t, (tail if t >= 0 else 1 - tail)


def test_hand_computed_case():
    # r12 = 0.6, r13 = 0.4, r23 = 0.5, n = 20 (df = 17)
    # K = 1 - 0.36 - 0.16 - 0.25 + 2*0.6*0.4*0.5 = 0.23 + 0.24 = 0.47
    # numerator = (0.6 - 0.4) * sqrt(19 * 1.5) = 0.2 * sqrt(28.5)
    #           = 0.2 * 5.338539126015656 = 1.067707825203131
    # denominator = sqrt(2*0.47*19/17 + (1.0**2 / 4) * 0.5**3)
    #             = sqrt(1.0505882352941 + 0.03125) = sqrt(1.0818382352941)
    #             = 1.040114529892799
    # t = 1.067707825203131 / 1.040114529892799 = 1.0265290932078
    # p = P(T_17 >= 1.0265290932) = 0.5 * I_{17/(17+t^2)}(8.5, 0.5) = 0.1595139842
    assert williams_t(0.6, 0.4, 0.5, 20) == pytest.approx(1.0265290932078, abs=1e-9)
    assert williams_test(0.6, 0.4, 0.5, 20) == pytest.approx(0.1595139842, abs=1e-9)


def test_published_style_case():
    # n = 2085, r12 = 0.258, r13 = 0.117, r23 = 0.5 (df = 2082)
    # K = 1 - 0.066564 - 0.013689 - 0.25 + 2*0.258*0.117*0.5 = 0.699933
    # numerator = 0.141 * sqrt(2084 * 1.5) = 0.141 * sqrt(3126) = 7.883400662151
    # denominator = sqrt(2*0.699933*2084/2082 + (0.375**2 / 4) * 0.5**3)
    #             = sqrt(1.401211084534 + 0.004394531250) = 1.185582246509
    # t = 6.649391626233; p = P(T_2082 >= t) = 1.874196e-11
    assert williams_t(0.258, 0.117, 0.5, 2085) == pytest.approx(6.649391626233, abs=1e-9)
    p = williams_test(0.258, 0.117, 0.5, 2085)
    assert p < 0.01
    assert p == pytest.approx(1.874196e-11, rel=1e-5)


@pytest.mark.parametrize(
    "r12, r13, r23, n",
    [
        (0.6, 0.4, 0.5, 20),
        (0.258, 0.117, 0.5, 2085),
        (0.3, 0.5, 0.2, 40),
        (-0.2, -0.6, 0.7, 12),
        (0.9, 0.85, 0.95, 500),
        (0.1, 0.05, -0.3, 8),
    ],
)
def test_matches_independent_steiger_form(r12, r13, r23, n):
    t_ref, p_ref = steiger_williams_p(r12, r13, r23, n)
    assert williams_t(r12, r13, r23, n) == pytest.approx(t_ref, rel=1e-10, abs=1e-12)
    assert williams_test(r12, r13, r23, n) == pytest.approx(p_ref, rel=1e-8, abs=1e-14)


@pytest.mark.parametrize("r, r23, n", [(0.5, 0.3, 50), (0.0, 0.9, 4), (-0.7, 0.6, 1000)])
def test_equal_correlations_give_half(r, r23, n):
    assert williams_t(r, r, r23, n) == 0.0
    assert williams_test(r, r, r23, n) == 0.5


@pytest.mark.parametrize("r12, r13, r23, n", [(0.6, 0.4, 0.5, 20), (0.1, 0.3, -0.2, 9)])
def test_antisymmetry(r12, r13, r23, n):
    t = williams_t(r12, r13, r23, n)
    assert t != 0.0
    assert williams_t(r13, r12, r23, n) == pytest.approx(-t, rel=1e-12)
    p, q = williams_test(r12, r13, r23, n), williams_test(r13, r12, r23, n)
    assert p + q == pytest.approx(1.0, abs=1e-12)


def test_p_decreases_with_n():
    ps = [williams_test(0.6, 0.4, 0.5, n) for n in (5, 10, 20, 50, 100, 1000)]
    assert all(a > b for a, b in zip(ps, ps[1:])), ps


def test_more_correlated_metrics_give_smaller_p():
    ps = [williams_test(0.6, 0.4, r23, 30) for r23 in (0.0, 0.3, 0.6, 0.8)]
    assert all(a > b for a, b in zip(ps, ps[1:])), ps


@pytest.mark.parametrize(
    "args, pattern",
    [
        ((0.5, 0.4, 0.3, 3), "greater than 3"),
        ((0.5, 0.4, 0.3, 0), "greater than 3"),
        ((0.5, 0.4, 0.3, 20.0), "integer"),
        ((0.5, 0.4, 0.3, True), "integer"),
        ((0.5, 0.4, 0.3, "20"), "integer"),
        ((1.1, 0.4, 0.3, 20), r"r12 .*\[-1, 1\]"),
        ((0.5, -1.01, 0.3, 20), r"r13 .*\[-1, 1\]"),
        ((0.5, 0.4, float("nan"), 20), r"r23 .*finite"),
        ((0.5, float("inf"), 0.3, 20), r"r13 .*finite"),
        ((0.5, None, 0.3, 20), "r13 must be a number"),
        ((0.9, -0.9, 0.9, 20), "inconsistent"),
        ((0.9, 0.0, 0.8, 20), "inconsistent"),  # K = 1 - 0.81 - 0.64 = -0.45
        ((0.5, 0.5, 1.0, 20), "denominator"),  # r23 == 1: metrics identical in rank
        ((0.5, -0.5, 0.5, 20), "denominator"),  # K == 0 and r12 + r13 == 0
    ],
)
def test_invalid_inputs_raise(args, pattern):
    with pytest.raises(ValueError, match=pattern):
        williams_t(*args)
    with pytest.raises(ValueError, match=pattern):
        williams_test(*args)


def test_numpy_integer_n_is_accepted():
    assert williams_test(0.6, 0.4, 0.5, np.int64(20)) == williams_test(0.6, 0.4, 0.5, 20)


def _synthetic(seed=0, n=300):
    rng = np.random.default_rng(seed)
    human = rng.normal(size=n)
    good = human + 0.3 * rng.normal(size=n)
    bad = human + 1.5 * rng.normal(size=n)
    return human, good, bad


@pytest.mark.parametrize("kind", ["spearman", "pearson", "kendall"])
def test_from_scores_detects_better_metric(kind):
    human, good, bad = _synthetic()
    p = williams_from_scores(human, good, bad, kind=kind)
    assert p < 0.01
    assert williams_from_scores(human, bad, good, kind=kind) > 0.99
    # it really is williams_test on the three same-kind correlations
    r12, r13, r23 = (correlate(x, y, kind).r for x, y in ((human, good), (human, bad), (good, bad)))
    assert p == pytest.approx(williams_test(r12, r13, r23, len(human)), rel=1e-12)


def test_from_scores_defaults_to_spearman():
    human, good, bad = _synthetic(n=40)
    assert williams_from_scores(human, good, bad) == williams_from_scores(
        human, good, bad, kind="spearman"
    )
    assert williams_from_scores(human, good, bad) != williams_from_scores(
        human, good, bad, kind="pearson"
    )


def test_from_scores_rejects_bad_input():
    human, good, bad = _synthetic(n=20)
    with pytest.raises(ValueError, match="undefined"):
        williams_from_scores(human, np.ones(20), bad)
    with pytest.raises(ValueError, match="undefined"):
        williams_from_scores(np.full(20, 3.0), good, bad)
    with pytest.raises(ValueError, match="equal length"):
        williams_from_scores(human, good[:-1], bad)
    with pytest.raises(ValueError, match="known kinds"):
        williams_from_scores(human, good, bad, kind="cosine")
    with pytest.raises(ValueError, match="greater than 3"):
        williams_from_scores([1, 2, 3], [1, 3, 2], [2, 1, 3])
    with pytest.raises(ValueError, match="denominator"):
        williams_from_scores(human, good, good)  # r23 == 1
