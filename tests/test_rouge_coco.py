"""rouge-coco: the MS-COCO caption toolkit's ROUGE-L, which the SMS paper (Clark et al. 2019) reports.

Table 1 of the paper prints ROUGE-L x 100 for three summaries of one news passage: 39.30 (the human summary),
31.44 (its sentences reordered) and 35.07 (a sentence repeated). These values come out of this metric to the digit
when the reference is the passage as the paper shows it preceded by the dateline tokens "( cnn )" (the summaries'
source texts in CNN/DailyMail start that way); no rouge-score variant gives them (rougeL F 38.10 / 33.33 / 32.32).
"""
from __future__ import annotations

import pytest

from meta_eval.metrics import Example, create

__import__("conftest").require_module("pycocoevalcap", "pip install 'meta-eval[coco]'")

# Clark et al. (2019), Table 1: the passage and summaries as printed there (shared with tests/test_sms_table1.py)
from sms_table1_data import PASSAGE, PRINTED, SUMMARIES  # noqa: E402


def test_lcs_f_with_beta_1_2_by_hand():
    # candidate "a b c" vs reference "a c": LCS 2, P = 2/3, R = 1, F = (1 + 1.44) P R / (R + 1.44 P)
    s = create("rouge-coco").score([Example("a b c", ("a c",))])["rougeL-coco"][0]
    assert s == pytest.approx(2.44 * (2 / 3) / (1 + 1.44 * 2 / 3), abs=1e-12)


def test_identical_texts_score_one_and_empty_scores_zero():
    s = create("rouge-coco").score([Example("The cat sat.", ("the cat sat.",)), Example("  ", ("x y",)),
                                    Example("x y", ("",))])["rougeL-coco"]
    assert list(s) == [1.0, 0.0, 0.0]


def test_lowercase_option_parses_as_boolean():
    ex = [Example("The Cat", ("the cat",))]
    assert create("rouge-coco").score(ex)["rougeL-coco"][0] == 1.0
    assert create("rouge-coco", lowercase="false").score(ex)["rougeL-coco"][0] == 0.0
    with pytest.raises(ValueError, match="lowercase"):
        create("rouge-coco", lowercase="maybe")


def test_several_references_take_max_precision_and_max_recall():
    # ref1 "a b": LCS(c="a b c d")=2, P=.5, R=1; ref2 "a b c d e f g h": LCS 4, P=1, R=.5 -> max P 1, max R 1 -> F 1
    s = create("rouge-coco").score([Example("a b c d", ("a b", "a b c d e f g h"))])["rougeL-coco"][0]
    assert s == pytest.approx(1.0)


# the three summaries of Table 1 with their printed ROUGE-L (x 100)
TABLE_1 = list(zip(SUMMARIES, PRINTED["rougeL"]))


def test_reproduces_sms_paper_table_1():
    scores = create("rouge-coco").score([Example(c, (PASSAGE,)) for c, _ in TABLE_1])["rougeL-coco"]
    assert [round(100 * float(x), 2) for x in scores] == [printed for _, printed in TABLE_1]


def test_rouge_score_does_not_reproduce_table_1():
    """The reason for this metric: rouge-score's ROUGE-L (the `rouge` metric) gives other values on the same texts."""
    scores = create("rouge").score([Example(c, (PASSAGE,)) for c, _ in TABLE_1])["rougeL-f"]
    assert all(abs(100 * float(x) - printed) > 0.5 for x, (_, printed) in zip(scores, TABLE_1))
