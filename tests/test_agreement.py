"""Agreement statistics (meta_eval.stats.agreement): Krippendorff's alpha at four levels with missing values;
accuracy, Cohen's kappa, macro-F1 and LLMBar's pairwise accuracy, their bootstrap intervals and paired tests.

Alpha is checked against the `krippendorff` package (Castro 2017; GPL-3.0, a test-only dependency) on seeded random
data with missing values, and against the worked example C of Krippendorff (2011), "Computing Krippendorff's
Alpha-Reliability" (4 observers x 12 units, values 1..5, missing values), to the printed digits. Kappa and macro-F1
are checked on hand-computed cases and against scikit-learn's cohen_kappa_score and f1_score.
"""
from __future__ import annotations

import doctest

import numpy as np
import pytest

from meta_eval.errors import MetaEvalError
from meta_eval.stats import agreement
from meta_eval.stats.agreement import AgreementError, alpha_from_items, krippendorff_alpha



@pytest.fixture(scope="module")
def krippendorff():
    """The `krippendorff` package (the test extra; GPL-3.0, so never a dependency of meta_eval itself)."""
    return __import__("conftest").require_module("krippendorff", "pip install 'meta-eval[test]' (krippendorff==0.9.0)")


@pytest.fixture(scope="module")
def sklearn_metrics():
    """scikit-learn's metrics, the oracle for kappa and macro-F1 (a runtime dependency of meta-eval)."""
    return __import__("sklearn.metrics", fromlist=["metrics"])

nan = np.nan

# Krippendorff (2011), section C ("nominal data, any number of observers, missing values"), observers A..D as rows.
# Unit 12 has one value only (3, listed under observer B here as in the krippendorff package's docstring, under C in
# R's irr/DescTools copy): it is not pairable, so where it sits changes nothing (test_unpairable_units_are_dropped).
KRIPPENDORFF_2011 = [[1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
                     [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
                     [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
                     [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan]]


@pytest.mark.parametrize("level, printed", [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849),
                                            ("ratio", 0.797)])
def test_krippendorff_2011_worked_example(level, printed):
    assert round(krippendorff_alpha(KRIPPENDORFF_2011, level), 3) == printed
    # the same with None for missing values, and with the full domain 1..5 given
    with_none = [[None if v != v else v for v in row] for row in KRIPPENDORFF_2011]
    assert round(krippendorff_alpha(with_none, level, value_domain=[1, 2, 3, 4, 5]), 3) == printed


def test_unpairable_units_are_dropped():
    moved = [row[:] for row in KRIPPENDORFF_2011]
    moved[1][11], moved[2][11] = nan, 3  # unit 12's lone value under observer C instead of B
    lone_five = [row[:] for row in KRIPPENDORFF_2011]
    lone_five[1][11] = 5  # another lone value: still no pair
    dropped = [row[:11] for row in KRIPPENDORFF_2011]  # the unit removed
    for level in agreement.LEVELS:
        base = krippendorff_alpha(KRIPPENDORFF_2011, level)
        for other in (moved, lone_five, dropped):
            assert krippendorff_alpha(other, level) == pytest.approx(base, abs=1e-15)


def _random_data(rng, raters, units, n_values, missing):
    data = rng.integers(1, n_values + 1, size=(raters, units)).astype(float)
    # raters agree somewhat: a shared unit effect
    data = np.clip(np.round(data * 0.5 + rng.integers(1, n_values + 1, size=units) * 0.5), 1, n_values)
    data[rng.random(data.shape) < missing] = nan
    return data


@pytest.mark.parametrize("level", agreement.LEVELS)
@pytest.mark.parametrize("raters, units, n_values, missing", [(2, 10, 3, 0.1), (3, 40, 5, 0.3), (5, 200, 7, 0.5),
                                                              (76, 150, 2, 0.6), (40, 30, 5, 0.9)])
def test_equals_the_krippendorff_package(level, raters, units, n_values, missing, krippendorff):
    rng = np.random.default_rng(raters * 1000 + units)
    for _ in range(3):
        data = _random_data(rng, raters, units, n_values, missing)
        ours = krippendorff_alpha(data, level)
        theirs = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
        assert ours == pytest.approx(float(theirs), abs=1e-12)


@pytest.mark.parametrize("level", ["interval", "ratio"])
def test_equals_the_package_on_continuous_values(level, krippendorff):
    # many distinct values (a large coincidence matrix), some zeros for the ratio level's c + k = 0
    rng = np.random.default_rng(7)
    data = np.round(rng.gamma(2.0, 1.0, size=(6, 80)), 1)
    data[rng.random(data.shape) < 0.3] = nan
    data[0, :5] = 0.0
    assert krippendorff_alpha(data, level) == pytest.approx(
        float(krippendorff.alpha(reliability_data=data, level_of_measurement=level)), abs=1e-12)


def test_string_labels_nominal_and_ordinal():
    words = {1: "very low", 2: "low", 3: "mid", 4: "high", 5: "very high"}
    data = [[None if v != v else words[v] for v in row] for row in KRIPPENDORFF_2011]
    assert round(krippendorff_alpha(data, "nominal"), 3) == 0.743
    # the ordinal level ranks labels in value_domain's order, not alphabetically
    assert round(krippendorff_alpha(data, "ordinal", value_domain=list(words.values())), 3) == 0.815
    with pytest.raises(AgreementError, match="need value_domain"):
        krippendorff_alpha(data, "ordinal")
    with pytest.raises(AgreementError, match="interval level"):
        krippendorff_alpha(data, "interval")


def test_unused_domain_values_change_nothing(krippendorff):
    # values nobody used have frequency 0: the ordinal difference sums frequencies, not ranks
    for level in agreement.LEVELS:
        base = krippendorff_alpha(KRIPPENDORFF_2011, level)
        wide = krippendorff_alpha(KRIPPENDORFF_2011, level, value_domain=[0, 1, 2, 3, 4, 5, 6, 7])
        assert wide == pytest.approx(base, abs=1e-15)
        assert wide == pytest.approx(float(krippendorff.alpha(KRIPPENDORFF_2011, value_domain=[0, 1, 2, 3, 4, 5, 6, 7],
                                                                level_of_measurement=level)), abs=1e-12)


def test_items_position_is_rater(krippendorff):
    # JUDGE-BENCH's individual_human_scores: lists of different lengths, position i = rater i
    items = [["Yes", "Yes"], ["No", "Yes", "No"], ["No", "No"], ["Yes"]]
    matrix = [["Yes", "No", "No", "Yes"], ["Yes", "Yes", "No", None], [None, "No", None, None]]
    assert alpha_from_items(items, "nominal") == krippendorff_alpha(matrix, "nominal")
    # nominal by hand: pairable units 1-3, o(Yes,Yes) = 2, o(No,No) = 2 + 1 = 3, o(Yes,No) = o(No,Yes) = 1 (unit 2,
    # two Yes-No pairs / (3 - 1)); n_Yes = 3, n_No = 4, n = 7: alpha = 1 - (n - 1) * 2 / (2 * 3 * 4) = 0.5
    assert alpha_from_items(items, "nominal") == pytest.approx(0.5, abs=1e-15)
    numbers = [[1, 2], [3, 3, 4], [5], [2, None, 2]]
    as_matrix = [[1, 3, 5, 2], [2, 3, nan, nan], [nan, 4, nan, 2]]
    for level in agreement.LEVELS:
        assert alpha_from_items(numbers, level) == pytest.approx(
            float(krippendorff.alpha(as_matrix, level_of_measurement=level)), abs=1e-12)


def test_undefined_and_refused(krippendorff):
    # all pairable values equal: no disagreement possible
    # all pairable values equal (the lone 2 is not pairable): no disagreement was possible, 0/0, NaN as the package
    assert np.isnan(krippendorff_alpha([[1, 1, nan], [1, 1, 2]], "interval"))
    with np.errstate(invalid="ignore"):
        assert np.isnan(krippendorff.alpha([[1, 1, nan], [1, 1, 2]], level_of_measurement="interval"))
    with pytest.raises(AgreementError, match="at least 2 possible values"):
        krippendorff_alpha([[1, 1], [1, 1]], "interval")
    with pytest.raises(AgreementError, match="no unit has values from at least 2 raters"):
        krippendorff_alpha([[1, nan], [nan, 2]], "interval")
    with pytest.raises(AgreementError, match="rater 1, unit 0: value 9 is not in value_domain"):
        krippendorff_alpha([[1, 2], [9, 2]], "ordinal", value_domain=[1, 2, 3])
    with pytest.raises(AgreementError, match="rater 1, unit 1: value 'Maybe' is not in value_domain"):
        krippendorff_alpha([["Yes", "No"], ["Yes", "Maybe"]], "ordinal", value_domain=["No", "Yes"])
    with pytest.raises(AgreementError, match="unknown level"):
        krippendorff_alpha(KRIPPENDORFF_2011, "circular")
    with pytest.raises(AgreementError, match="alpha_from_items"):
        krippendorff_alpha([[1, 2, 3], [1, 2]], "interval")
    with pytest.raises(AgreementError, match="mixes strings and numbers"):
        krippendorff_alpha([["a", 1], ["a", 2]], "nominal")
    with pytest.raises(AgreementError, match="unit 1: expected a list"):
        alpha_from_items([[1, 2], 3], "interval")
    assert issubclass(AgreementError, MetaEvalError)


def test_fast_on_dices_sized_data():
    import time

    rng = np.random.default_rng(0)
    data = np.where(rng.random((76, 990)) < 0.9, rng.integers(0, 3, size=(76, 990)), nan)
    start = time.perf_counter()
    for level in agreement.LEVELS:
        krippendorff_alpha(data, level)
    assert time.perf_counter() - start < 2.0


def test_docstring_examples():
    result = doctest.testmod(agreement, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


# -- categorical and pairwise judgments -------------------------------------------------------------------------------

from meta_eval.stats.agreement import (accuracy, categorical_interval, cohen_kappa, macro_f1,  # noqa: E402
                                       paired_test, pairwise_accuracy)

GOLD = ["Yes", "Yes", "Yes", "No", "No", "No", "No", "No"]
PRED = ["Yes", "Yes", "No", "No", "No", "No", "Yes", None]


def test_accuracy_by_hand():
    # items 1, 2, 4, 5, 6 agree; item 3 and 7 disagree; item 8 unparsed (None) counts wrong: 5 / 8
    assert accuracy(GOLD, PRED) == 5 / 8
    with pytest.raises(AgreementError, match="gold has 8 items but pred has 7"):
        accuracy(GOLD, PRED[:-1])


def test_kappa_by_hand(sklearn_metrics):
    # two raters, 10 items: both Yes 4, a Yes b No 1, a No b Yes 2, both No 3
    a = ["Yes"] * 5 + ["No"] * 5
    b = ["Yes"] * 4 + ["No"] + ["Yes"] * 2 + ["No"] * 3
    # p_o = 7/10; a: Yes 5/10, No 5/10; b: Yes 6/10, No 4/10; p_e = .5 * .6 + .5 * .4 = .5; kappa = (.7 - .5) / .5 = .4
    assert cohen_kappa(a, b) == pytest.approx(0.4, abs=1e-15)
    assert cohen_kappa(a, b) == pytest.approx(sklearn_metrics.cohen_kappa_score(a, b), abs=1e-12)
    # GOLD/PRED: the unparsed answer is a category of its own that never agrees and has no gold mass:
    # p_o = 5/8; gold Yes 3/8 No 5/8; pred Yes 3/8 No 4/8 (None 1/8); p_e = 9/64 + 20/64 = 29/64;
    # kappa = (40/64 - 29/64) / (35/64) = 11/35
    assert cohen_kappa(GOLD, PRED) == pytest.approx(11 / 35, abs=1e-15)
    as_label = [p if p is not None else "<none>" for p in PRED]
    assert cohen_kappa(GOLD, PRED) == pytest.approx(sklearn_metrics.cohen_kappa_score(GOLD, as_label), abs=1e-12)
    # one label throughout on both sides: p_e = 1, kappa is 0/0
    assert np.isnan(cohen_kappa(["No"] * 3, ["No"] * 3))
    with pytest.raises(AgreementError, match=r"b\[1\] is 'Maybe', not one of the labels"):
        cohen_kappa(["Yes", "No"], ["Yes", "Maybe"], labels=["Yes", "No"])
    with pytest.raises(AgreementError, match=r"a\[0\] is missing"):
        cohen_kappa([None, "No"], ["Yes", "No"])


def test_macro_f1_by_hand(sklearn_metrics):
    # GOLD/PRED: Yes: TP 2, FP 1 (item 7), FN 1 (item 3): F1 = 4 / (4 + 1 + 1) = 2/3;
    # No: TP 3, FP 1 (item 3), FN 2 (items 7, 8 -- the unparsed answer is a false negative): F1 = 6 / (6 + 1 + 2) = 2/3
    assert macro_f1(GOLD, PRED) == pytest.approx(2 / 3, abs=1e-15)
    as_label = [p if p is not None else "<none>" for p in PRED]
    assert macro_f1(GOLD, PRED) == pytest.approx(
        sklearn_metrics.f1_score(GOLD, as_label, labels=["Yes", "No"], average="macro"), abs=1e-12)
    # a label absent from gold and pred: F1 0/0, counted as zero_division (0, scikit-learn's default) and averaged
    assert macro_f1(GOLD, PRED, labels=["Yes", "No", "Maybe"]) == pytest.approx(4 / 9, abs=1e-15)
    assert macro_f1(GOLD, PRED, labels=["Yes", "No", "Maybe"], zero_division=1.0) == pytest.approx(7 / 9, abs=1e-15)


def test_categorical_statistics_equal_sklearn_on_random_labels(sklearn_metrics):
    import warnings

    rng = np.random.default_rng(3)
    labels = np.array(["a", "b", "c", "d"])
    for _ in range(100):
        n = int(rng.integers(2, 50))
        gold = labels[rng.integers(0, 4, n)].tolist()
        pred = [g if rng.random() < 0.5 else str(labels[rng.integers(0, 3)]) for g in gold]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            kappa = sklearn_metrics.cohen_kappa_score(gold, pred)
            f1 = sklearn_metrics.f1_score(gold, pred, labels=list(labels), average="macro", zero_division=0)
        assert cohen_kappa(gold, pred) == pytest.approx(kappa, abs=1e-12, nan_ok=True)
        assert macro_f1(gold, pred, labels=list(labels)) == pytest.approx(f1, abs=1e-12)
        assert accuracy(gold, pred) == pytest.approx(sklearn_metrics.accuracy_score(gold, pred), abs=1e-15)


def test_pairwise_accuracy_by_hand():
    gold = ["model_a", "model_b", "model_a", "model_b", "model_a"]
    one_order = ["model_a", "model_a", "tie", None, "model_a"]
    # LLMBar's rule ("wrong"): 1 + 0 + 0 + 0 + 1 = 2 / 5
    assert pairwise_accuracy(gold, one_order) == pytest.approx(2 / 5, abs=1e-15)
    # "half": 1 + 0 + .5 + .5 + 1 = 3 / 5; "drop": items 3, 4 left out: 2 / 3
    assert pairwise_accuracy(gold, one_order, ties="half") == pytest.approx(3 / 5, abs=1e-15)
    assert pairwise_accuracy(gold, one_order, ties="drop") == pytest.approx(2 / 3, abs=1e-15)
    # both orders, as LLMBar's correct_average: order 1 right on items 1, 5 (2/5), order 2 right on 1, 2, 4 (3/5):
    # (2/5 + 3/5) / 2 = 1/2 = the mean of the item means (1 + .5 + 0 + .5 + .5) / 5
    both = [("model_a", "model_a"), ("model_a", "model_b"), ("tie", "model_b"), (None, "model_b"),
            ("model_a", "model_b")]
    assert pairwise_accuracy(gold, both) == pytest.approx(0.5, abs=1e-15)
    # "drop" on both orders: item 3 keeps its order-2 answer (0), item 4 its order-2 answer (1):
    # (1 + .5 + 0 + 1 + .5) / 5 = 3/5
    assert pairwise_accuracy(gold, both, ties="drop") == pytest.approx(3 / 5, abs=1e-15)
    with pytest.raises(AgreementError, match="unknown tie rule"):
        pairwise_accuracy(gold, one_order, ties="coin")
    with pytest.raises(AgreementError, match=r"gold\[0\] is 'a'"):
        pairwise_accuracy(["a"], ["model_a"])
    with pytest.raises(AgreementError, match=r"pred\[0\] holds 'Output \(a\)'"):
        pairwise_accuracy(["model_a"], ["Output (a)"])


def _judges(n=120, seed=0):
    rng = np.random.default_rng(seed)
    gold = [["Yes", "No"][k] for k in rng.integers(0, 2, n)]
    good = [g if rng.random() < 0.9 else ("No" if g == "Yes" else "Yes") for g in gold]
    bad = [g if rng.random() < 0.55 else ("No" if g == "Yes" else "Yes") for g in gold]
    return gold, good, bad


@pytest.mark.parametrize("stat", ["accuracy", "kappa", "macro-f1", cohen_kappa])
def test_intervals_contain_the_estimate_and_repeat(stat):
    gold, good, _ = _judges()
    point = {"accuracy": accuracy, "kappa": cohen_kappa, "macro-f1": macro_f1}.get(stat, stat)(gold, good)
    lo, hi = categorical_interval(stat, gold, good, resamples=400, seed=5)
    assert lo < point < hi and hi - lo < 0.5
    assert categorical_interval(stat, gold, good, resamples=400, seed=5) == (lo, hi)
    assert categorical_interval(stat, gold, good, resamples=400, seed=6) != (lo, hi)
    # a narrower coverage gives a narrower interval from the same draws
    lo90, hi90 = categorical_interval(stat, gold, good, resamples=400, seed=5, alpha=0.1)
    assert lo <= lo90 and hi90 <= hi


def test_vectorised_statistics_equal_the_function_called_per_resample():
    # the named statistics are computed over all resamples at once; a plain function is called once per resample:
    # with the same draws both give the same bounds
    gold, good, bad = _judges(60)
    for name, fn in (("accuracy", accuracy), ("kappa", cohen_kappa), ("macro-f1", macro_f1)):
        assert categorical_interval(name, gold, good, resamples=200, seed=1) == pytest.approx(
            categorical_interval(lambda g, p, f=fn: f(g, p), gold, good, resamples=200, seed=1), abs=1e-12)
        assert paired_test(name, gold, good, bad, resamples=200, seed=1) == paired_test(
            lambda g, p, f=fn: f(g, p), gold, good, bad, resamples=200, seed=1)
    gold_p = ["model_a", "model_b"] * 30
    pred_p = [(g, "tie") if k % 3 else (g, g) for k, g in enumerate(gold_p)]
    for ties in ("wrong", "half", "drop"):
        assert categorical_interval("pairwise-accuracy", gold_p, pred_p, resamples=200, seed=2, ties=ties) == \
            pytest.approx(categorical_interval(lambda g, p, t=ties: pairwise_accuracy(g, p, ties=t), gold_p, pred_p,
                                               resamples=200, seed=2), abs=1e-12)


@pytest.mark.parametrize("stat", ["accuracy", "kappa", "macro-f1"])
def test_paired_test(stat):
    gold, good, bad = _judges()
    p_good = paired_test(stat, gold, good, bad, resamples=500, seed=0)
    p_bad = paired_test(stat, gold, bad, good, resamples=500, seed=0)
    assert 0.0 <= p_good <= 1.0 and 0.0 <= p_bad <= 1.0
    assert p_good < 0.01 and p_bad > 0.99
    assert paired_test(stat, gold, good, good, resamples=100, seed=0) == 1.0  # identical judges
    assert paired_test(stat, gold, good, bad, resamples=500, seed=0) == p_good  # same seed, same p


def test_paired_test_pairwise():
    gold = ["model_a", "model_b"] * 40
    right = list(gold)
    position_biased = ["model_a"] * 80  # always the first output: right on half
    assert paired_test("pairwise-accuracy", gold, right, position_biased, resamples=300, seed=0) < 0.01
    assert paired_test(pairwise_accuracy, gold, position_biased, right, resamples=300, seed=0) > 0.99


def test_interval_and_test_refusals():
    gold, good, bad = _judges(20)
    with pytest.raises(AgreementError, match="unknown statistic 'f1'"):
        categorical_interval("f1", gold, good)
    with pytest.raises(AgreementError, match="kappa takes no option 'ties'"):
        categorical_interval("kappa", gold, good, ties="half")
    with pytest.raises(AgreementError, match="alpha must be a number in"):
        categorical_interval("kappa", gold, good, alpha=5)
    with pytest.raises(AgreementError, match="resamples must be a positive whole number"):
        paired_test("kappa", gold, good, bad, resamples=0)
    with pytest.raises(AgreementError, match="gold has 20 items but pred_b has 19"):
        paired_test("kappa", gold, good, bad[:-1])
    with pytest.raises(AgreementError, match="undefined on these items for judge A"):
        paired_test("kappa", ["No"] * 20, ["No"] * 20, bad)


def test_alpha_ignores_which_rater_gave_a_value():
    # the coincidence matrix pairs values within a unit, whoever gave them: position = rater cannot change alpha
    rng = np.random.default_rng(11)
    items = [list(rng.integers(1, 6, size=int(rng.integers(1, 8)))) for _ in range(60)]
    shuffled = [list(rng.permutation(values)) for values in items]
    for level in agreement.LEVELS:
        assert alpha_from_items(shuffled, level) == pytest.approx(alpha_from_items(items, level), abs=1e-12)
