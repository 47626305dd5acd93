"""Agreement statistics (meta_eval.stats.agreement): Krippendorff's alpha at four levels with missing values.

Alpha is checked against the `krippendorff` package (Castro 2017; GPL-3.0, a test-only dependency) on seeded random
data with missing values, and against the worked example C of Krippendorff (2011), "Computing Krippendorff's
Alpha-Reliability" (4 observers x 12 units, values 1..5, missing values), to the printed digits.
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
