"""Novelty (Kryściński et al. 2018, as a metric in Scialom et al. 2019): hand-counted n-grams and invariants."""
from __future__ import annotations

import numpy as np
import pytest

from meta_eval import judgments
from meta_eval.metrics import Example, MetricError
from meta_eval.metrics.novelty import Novelty, ngrams, novel_fraction, words

SOURCE = "The cat sat on the mat."


def score(cand: str, references, source: str = SOURCE, **cfg) -> float:
    references = (references,) if isinstance(references, str) else tuple(references)
    return float(Novelty(**cfg).score([Example(cand, references, source)])["novelty"][0])


def test_tokens_are_lowercased_treebank_words_with_punctuation():
    assert words("The Cat's mat, it isn't. It sat!") == (
        "the", "cat", "'s", "mat", ",", "it", "is", "n't", ".", "it", "sat", "!")
    assert words("The Cat's mat, it sat!", punct="drop") == ("the", "cat", "'s", "mat", "it", "sat")
    assert words("") == () and words("  \n ") == ()


def test_unique_ngrams():
    assert ngrams(("a", "b", "a", "b"), 2) == {("a", "b"), ("b", "a")}
    assert ngrams(("a", "b"), 3) == frozenset()
    # repeated novel n-grams count once: {x y, y x} both novel, over 2 unique bigrams
    assert novel_fraction(("x", "y", "x", "y"), ("a", "b"), 2) == 1.0
    assert novel_fraction(("a", "b", "c", "d"), ("a", "b", "c"), 2) == pytest.approx(1 / 3)


def test_trigram_novelty_by_hand():
    # summary tokens: the cat sat on a mat . (7); source: the cat sat on the mat . (7); reference: a cat sat . (4)
    # summary trigrams: the-cat-sat, cat-sat-on (in the source), sat-on-a, on-a-mat, a-mat-. (novel): N = 3/5
    assert score("The cat sat on a mat.", "A cat sat.") == pytest.approx(3 / 5 * 7 / 4, rel=1e-12)
    # bigrams: the-cat, cat-sat, sat-on copied; on-a, a-mat novel; mat-. copied: N = 2/6
    assert score("The cat sat on a mat.", "A cat sat.", n=2) == pytest.approx(2 / 6 * 7 / 4, rel=1e-12)
    # unigrams: only "a" is novel among {the, cat, sat, on, a, mat, .}: N = 1/7
    assert score("The cat sat on a mat.", "A cat sat.", n=1) == pytest.approx(1 / 7 * 7 / 4, rel=1e-12)


def test_length_ratio_multiplies():
    # the same fully novel summary: twice as long as the reference scores twice its fraction, half as long half
    assert score("Dogs bark loudly today", "one two") == pytest.approx(1.0 * 4 / 2)
    assert score("Dogs bark loudly today", "one two three four five six seven eight") == pytest.approx(4 / 8)
    # so a shorter summary with the same novel fraction earns less (what the normalisation is for)
    assert score("Dogs bark loudly", "a b c d e f") < score("Dogs bark loudly today", "a b c d e f")


def test_copied_summary_has_zero_novelty():
    source = "Police arrested two men on Monday. The men were released on bail. A trial is expected next year."
    for n in (1, 2, 3, 4):
        for summary in ("The men were released on bail.", source, "Police arrested two men on Monday. The men were"):
            assert score(summary, "Two men were arrested.", source, n=n) == 0.0


def test_no_shared_word_gives_maximal_fraction():
    # every n-gram is novel, N = 1, so the score is the length ratio itself
    summary = "Dogs bark loudly near houses"  # 5 tokens
    for n in (1, 2, 3):
        assert score(summary, "One two three four.", n=n) == pytest.approx(5 / 5)
    # a source without any token also makes everything novel
    assert score(summary, "One two three four.", source="   ") == pytest.approx(1.0)


def test_several_references_mean_or_first():
    # fully novel 4-token summary; references of 2 and 8 tokens: mean of 4/2 and 4/8
    refs = ("one two", "one two three four five six seven eight")
    assert score("Dogs bark loudly today", refs) == pytest.approx((2 + 0.5) / 2)
    assert score("Dogs bark loudly today", refs, refs="first") == pytest.approx(2.0)
    # a blank reference is skipped; only blank references leave the ratio undefined: 0
    assert score("Dogs bark loudly today", ("  ", "one two")) == pytest.approx(2.0)
    assert score("Dogs bark loudly today", ("  ", " ")) == 0.0
    assert score("Dogs bark loudly today", ("  ", "one two"), refs="first") == 0.0


@pytest.mark.parametrize("empty", ["", "   \n\t", "Dogs bark"])
def test_summary_without_trigrams_scores_zero(empty):
    # empty, blank, or fewer than n = 3 tokens: no n-gram, nothing novel
    assert score(empty, "A cat sat.") == 0.0


def test_punctuation_policy():
    # keep: summary "cats , dogs" has bigrams (cats ,) and (, dogs), both absent from the source: N = 1, 3 / 3
    assert score("Cats, dogs", "a b c", source="Cats dogs birds", n=2) == pytest.approx(1.0 * 3 / 3)
    # drop: summary becomes "cats dogs" (2 tokens): its one bigram is in the source
    assert score("Cats, dogs", "a b c", source="Cats dogs birds", n=2, punct="drop") == 0.0


SUMMARIES = ["The cat sat on a mat.", "Dogs bark loudly today", "", "The cat sat on the mat.", "A mat sat on a cat."]


def test_order_and_batch_invariance():
    metric = Novelty()
    examples = [Example(s, (r,), SOURCE) for s in SUMMARIES for r in ("A cat sat.", "Cats sit on mats today.")]
    together = metric.score(examples)["novelty"]
    reversed_ = metric.score(examples[::-1])["novelty"][::-1]
    one_by_one = np.concatenate([metric.score([ex])["novelty"] for ex in examples])
    np.testing.assert_array_equal(together, reversed_)
    np.testing.assert_array_equal(together, one_by_one)
    assert np.all(np.isfinite(together)) and np.all(together >= 0)


def test_needs_source_and_references_and_validates_config():
    with pytest.raises(MetricError, match="reference"):
        Novelty().score([Example("a b c", (), SOURCE)])
    with pytest.raises(MetricError, match="source"):
        Novelty().score([Example("a b c", ("a b",))])
    for bad in (0, -1, 2.5, True, "x", "0"):
        with pytest.raises(ValueError, match="n must"):
            Novelty(n=bad)
    assert Novelty(n="3").n == 3  # `--option n=3` arrives as a string
    for key in ("tokenizer", "punct", "refs"):
        with pytest.raises(ValueError, match=key):
            Novelty(**{key: "nope"})


def test_registered_under_its_name():
    from meta_eval.metrics.registry import _registry

    assert Novelty.name == "novelty" and _registry["novelty"] is Novelty


def test_signature_names_the_choices():
    sig = Novelty().signature()
    for part in ("novelty|", "n:3", "tok:treebank+punkt-untrained", "punct:keep", "len:mul", "refs:mean", "nltk=="):
        assert part in sig
    assert Novelty(n=2).signature() != sig
    assert Novelty(refs="first").signature() != sig


@pytest.mark.parametrize("name, dimension", [("summeval", "relevance"), ("realsumm", "litepyramid_recall")])
def test_real_data_correlation(shared_data, name, dimension):
    from scipy.stats import spearmanr

    jset = judgments.load(name, shared_data, download=False).scored(dimension)
    scores = Novelty().score(jset.examples())["novelty"]
    assert len(scores) == len(jset) and np.all(np.isfinite(scores)) and np.all(scores >= 0)
    rho = spearmanr(scores, jset.human(dimension)).correlation
    print(f"\nnovelty {name}/{dimension}: n={len(scores)} spearman={rho:.4f} mean={scores.mean():.3f}")
    assert np.isfinite(rho)
