"""WMS, SMS and S+WMS on contextual word vectors (Clark et al. 2019, ELMo column, with a transformers encoder):
word pooling and filtering by hand on a tiny random BERT, per-token types, per-sentence context, invariants, empty
texts, and MiniLM on the real chaganty set."""
from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest

from conftest import NEURAL_FIX, require_module  # noqa: E402
require_module("torch", NEURAL_FIX)
require_module("transformers", NEURAL_FIX)

from conftest import make_tiny_bert  # noqa: E402
from meta_eval.metrics import Example  # noqa: E402
from meta_eval.metrics.base import MetricError  # noqa: E402
from meta_eval.metrics.contextual_mover import (ContextualSentenceMoversSimilarity,  # noqa: E402
                                                ContextualSentenceWordMoversSimilarity,
                                                ContextualWordMoversSimilarity, sentence_word_vectors)
from meta_eval.metrics.encoder import load_encoder  # noqa: E402

CLASSES = {"wms-ctx": ContextualWordMoversSimilarity, "sms-ctx": ContextualSentenceMoversSimilarity,
           "s+wms-ctx": ContextualSentenceWordMoversSimilarity}
TEXTS = ["The cat sat on the mat. The dog won the big game!", "Barack Obama visited Paris yesterday.",
         "The quick brown fox jumps over the lazy dog. John Smith won in London. It was red."]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> str:
    return str(make_tiny_bert(tmp_path_factory.mktemp("tiny") / "bert"))


def states(tiny: str, sentence: str):
    (st,) = load_encoder(tiny).embed([sentence])
    return st


def word(tiny: str, sentence: str, positions, layer="mean") -> np.ndarray:
    """Mean over the given token positions of one sentence's vectors in ``layer``, computed here by hand."""
    hidden = states(tiny, sentence).hidden.astype(np.float64)
    layer_vecs = {"mean": hidden[1:].mean(axis=0), "all": hidden.mean(axis=0)}.get(layer)
    if layer_vecs is None:
        layer_vecs = hidden[layer]
    return layer_vecs[list(positions)].mean(axis=0)


def score(name: str, tiny: str, cand: str, *refs: str, **cfg) -> float:
    return float(CLASSES[name](model=tiny, **cfg).score([Example(cand, refs)])[f"{name}[bert]"][0])  # no ELMo: tagged


# -- words by hand -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("layer", ["mean", "all", 0, -1])
def test_pieces_pool_to_words_and_the_filter_runs_after_embedding(tiny, layer):
    st = states(tiny, "the cats sat.")
    assert st.tokens == ["[CLS]", "the", "cat", "##s", "sat", ".", "[SEP]"]
    got = sentence_word_vectors(st, layer, load_encoder(tiny).tokenizer)
    # kept: "cats" (pieces 2 and 3, averaged) and "sat"; "the" (stopword) and "." (not alphabetic) dropped
    expected = np.array([word(tiny, "the cats sat.", [2, 3], layer), word(tiny, "the cats sat.", [4], layer)])
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
    # the dropped stopword and full stop still gave context: "cats sat" alone gives other vectors
    alone = sentence_word_vectors(states(tiny, "cats sat"), layer, load_encoder(tiny).tokenizer)
    assert alone.shape == got.shape and not np.allclose(alone, got, atol=1e-4)


def test_digits_unknown_words_and_stopwords_are_not_words(tiny):
    st = states(tiny, "the 2012 walked, it was")
    assert "[UNK]" in st.tokens
    assert sentence_word_vectors(st, "mean", load_encoder(tiny).tokenizer).shape == (0, 32)


@pytest.mark.parametrize("layer", ["mean", 0])
def test_the_words_memo_gives_the_same_bits_and_is_what_decides(tiny, layer):
    tokenizer = load_encoder(tiny).tokenizer
    st = states(tiny, "the cats sat.")
    words: dict = {}
    with_memo = sentence_word_vectors(st, layer, tokenizer, words)
    np.testing.assert_array_equal(with_memo, sentence_word_vectors(st, layer, tokenizer))
    assert with_memo.dtype == np.float32
    # one entry per word, by its pieces: "cats" is two pieces, "the" a stopword, "." not alphabetic
    assert words == {("the",): False, ("cat", "##s"): True, ("sat",): True, (".",): False}
    # a one-piece word's vector is its piece's row, exactly the mean of one row
    vectors = st.hidden[1:].mean(axis=0) if layer == "mean" else st.hidden[layer]
    np.testing.assert_array_equal(with_memo[1], vectors[4])
    # the memo is read, not recomputed: a word marked dropped in it is dropped
    assert sentence_word_vectors(st, layer, tokenizer, {**words, ("sat",): False}).shape == (1, 32)


def test_wms_single_words_by_hand(tiny):
    d = np.linalg.norm(word(tiny, "cat.", [1]) - word(tiny, "dog.", [1]))
    for name in CLASSES:  # one word a side: every bag is that word's vector
        assert score(name, tiny, "Cat.", "Dog.") == pytest.approx(math.exp(-d), rel=1e-5)


def test_every_token_is_its_own_type(tiny):
    # "cat cat": two occurrences with different contextual vectors, 1/2 each, both moving to the one "cat" of "cat"
    first, second = word(tiny, "cat cat", [1]), word(tiny, "cat cat", [2])
    target = word(tiny, "cat", [1])
    assert np.linalg.norm(first - second) > 1e-3
    expected = (np.linalg.norm(first - target) + np.linalg.norm(second - target)) / 2
    assert score("wms-ctx", tiny, "cat cat", "cat") == pytest.approx(math.exp(-expected), rel=1e-5)


def test_sentences_are_encoded_alone_and_weighted_by_their_kept_words(tiny):
    # A = "Cats sat. Big dog." -> sentence 1 = mean(cats, sat) of "cats sat." alone, sentence 2 = mean(big, dog) of
    # "big dog." alone, 2 words each; B = "Dog." -> one sentence of one word
    s1 = (word(tiny, "cats sat.", [1, 2]) + word(tiny, "cats sat.", [3])) / 2
    s2 = (word(tiny, "big dog.", [1]) + word(tiny, "big dog.", [2])) / 2
    b = word(tiny, "dog.", [1])
    expected = 0.5 * np.linalg.norm(s1 - b) + 0.5 * np.linalg.norm(s2 - b)
    assert score("sms-ctx", tiny, "Cats sat. Big dog.", "Dog.") == pytest.approx(math.exp(-expected), rel=1e-5)
    # S+WMS: 4 words at 1/8, 2 sentences at 2/8 each, all moving to B's word and sentence (the same point)
    words = [word(tiny, "cats sat.", [1, 2]), word(tiny, "cats sat.", [3]), word(tiny, "big dog.", [1]),
             word(tiny, "big dog.", [2])]
    expected = sum(np.linalg.norm(w - b) for w in words) / 8 + 2 / 8 * (np.linalg.norm(s1 - b) + np.linalg.norm(s2 - b))
    assert score("s+wms-ctx", tiny, "Cats sat. Big dog.", "Dog.") == pytest.approx(math.exp(-expected), rel=1e-5)
    # context is the sentence: the same words encoded as one text would give other vectors
    joint = (word(tiny, "cats sat. big dog.", [5]) + word(tiny, "cats sat. big dog.", [6])) / 2
    assert np.linalg.norm(joint - s2) > 1e-3


# -- invariants --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", list(CLASSES))
def test_identical_texts_score_one_and_scores_are_symmetric(tiny, name):
    metric = CLASSES[name](model=tiny)
    np.testing.assert_allclose(metric.score([Example(t, (t,)) for t in TEXTS])[f"{name}[bert]"], 1.0, atol=1e-12)
    ab = metric.score([Example(TEXTS[0], (TEXTS[1],)), Example(TEXTS[1], (TEXTS[2],))])[f"{name}[bert]"]
    ba = metric.score([Example(TEXTS[1], (TEXTS[0],)), Example(TEXTS[2], (TEXTS[1],))])[f"{name}[bert]"]
    np.testing.assert_allclose(ab, ba, rtol=1e-9)
    assert ((ab > 0) & (ab < 1)).all()


@pytest.mark.parametrize("name", list(CLASSES))
def test_order_and_batch_invariance(tiny, name):
    examples = [Example(a, (b,)) for a in TEXTS for b in TEXTS]
    together = CLASSES[name](model=tiny, batch_size=2).score(examples)[f"{name}[bert]"]
    from meta_eval.metrics import contextual_mover

    contextual_mover._cache.clear()  # recompute: the vectors must not depend on the batches they were in
    reversed_ = CLASSES[name](model=tiny, batch_size=32).score(examples[::-1])[f"{name}[bert]"][::-1]
    contextual_mover._cache.clear()
    one_by_one = np.concatenate([CLASSES[name](model=tiny).score([ex])[f"{name}[bert]"] for ex in examples])
    np.testing.assert_allclose(together, reversed_, rtol=1e-5)
    np.testing.assert_allclose(together, one_by_one, rtol=1e-5)


@pytest.mark.parametrize("name", list(CLASSES))
@pytest.mark.parametrize("empty", ["", "   \n\t", "the and of it", "123 ... !!!"])
def test_no_kept_word_scores_zero(tiny, name, empty):
    out = CLASSES[name](model=tiny).score([Example(empty, (TEXTS[0],)), Example(TEXTS[0], (empty,)),
                                           Example(empty, (empty,))])[f"{name}[bert]"]
    np.testing.assert_array_equal(out, [0.0, 0.0, 0.0])


def test_several_references_keep_the_best(tiny):
    single = [score("sms-ctx", tiny, TEXTS[0], ref) for ref in TEXTS[1:]]
    assert score("sms-ctx", tiny, TEXTS[0], *TEXTS[1:]) == pytest.approx(max(single))


def test_layer_choice_changes_scores_and_signature(tiny):
    a = score("sms-ctx", tiny, TEXTS[0], TEXTS[2])
    b = score("sms-ctx", tiny, TEXTS[0], TEXTS[2], layer="1")  # CLI options arrive as strings
    assert a != pytest.approx(b)
    sig = ContextualSentenceMoversSimilarity(model=tiny).signature()
    for part in ("sms-ctx|", "bert(", "layer:mean(1..L)", "ctx:sentence", "stop:nltk179", "types:per-token",
                 "sim:exp(-d)", "empty:0", "refs:max", "pot=="):
        assert part in sig, part
    assert "layer:1|" in ContextualSentenceMoversSimilarity(model=tiny, layer=1).signature()
    assert "layer:mean(0..L)" in ContextualSentenceMoversSimilarity(model=tiny, layer="all").signature()


def test_bad_layer_is_a_clear_error(tiny):
    with pytest.raises(ValueError, match="layer"):
        ContextualWordMoversSimilarity(layer="top")
    with pytest.raises(MetricError, match="out of range"):
        score("wms-ctx", tiny, "cat", "dog", layer=7)  # the tiny model has 3 hidden states


def test_availability_and_config_without_torch(tiny):
    assert ContextualSentenceMoversSimilarity.unavailable_reason(tiny) is None
    assert "Hugging Face cache" in ContextualSentenceMoversSimilarity.unavailable_reason("no-such-model-here-xyz")
    code = "import sys, metrics.contextual_mover as m; m.ContextualSentenceMoversSimilarity().signature(); " \
           "print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_elmo_is_documented_as_unsupported():
    import meta_eval.metrics.contextual_mover as module

    assert "ELMo itself is not supported" in module.__doc__ and "allennlp" in module.__doc__


# -- real data ---------------------------------------------------------------------------------------------------
CHAGANTY_ROWS = 500  # the first 500 rows: all 2,085 take minutes with MiniLM on one CPU thread


def test_sms_ctx_minilm_on_chaganty_correlates_positively(shared_data):
    from scipy.stats import spearmanr

    from meta_eval import judgments

    __import__("conftest").require_minilm()
    jset = judgments.load("chaganty", shared_data)
    got = ContextualSentenceMoversSimilarity().score(jset.examples()[:CHAGANTY_ROWS])["sms-ctx[minilm]"]
    rho = spearmanr(got, jset.human("overall")[:CHAGANTY_ROWS])[0]
    print(f"sms-ctx minilm chaganty[:{CHAGANTY_ROWS}]: spearman {rho:.3f}")
    assert rho > 0.05
    assert ((got > 0) & (got < 1)).all()
