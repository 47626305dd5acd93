"""MoverScore (Zhao et al. 2019) as moverscore_v2.py computes it: IDF and weights by hand on a tiny random BERT,
transport by hand, the IDF modes' (in)dependence on the set, empty texts, and MiniLM on the real chaganty set.
(The set IDF through the runner, fit() and the cache: tests/test_moverscore_set_idf.py.)"""
from __future__ import annotations

import itertools
import math
import subprocess
import sys
import time
import warnings

import numpy as np
import pytest

from conftest import NEURAL_FIX, require_module  # noqa: E402
require_module("torch", NEURAL_FIX)
require_module("transformers", NEURAL_FIX)

from conftest import make_tiny_bert  # noqa: E402
from meta_eval.metrics import Example  # noqa: E402
from meta_eval.metrics.encoder import load_encoder, model_unavailable_reason  # noqa: E402
from meta_eval.metrics.moverscore import IdfTable, MoverScore, idf_weights, piece_weights  # noqa: E402
from meta_eval.metrics.text import STOPWORDS  # noqa: E402

TEXTS = ["the cat sat on the mat.", "a dog won the big game!", "barack obama visited paris yesterday.",
         "the quick brown fox jumps over the lazy dog.", "john smith won in london."]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> str:
    return str(make_tiny_bert(tmp_path_factory.mktemp("tiny") / "bert"))


@pytest.fixture(scope="module")
def tok(tiny):
    return load_encoder(tiny).tokenizer


def scores(metric: MoverScore, examples) -> np.ndarray:
    return metric.score(examples)[metric.variants[0]]  # moverscore[<model>]


def pairs(texts=TEXTS):
    return [Example(a, (b,)) for a in texts for b in texts if a != b]


def unit_states(tiny: str, text: str):
    (st,) = load_encoder(tiny).embed([text])
    last = st.hidden[-1].astype(np.float64)
    return st, last / np.linalg.norm(last, axis=1, keepdims=True)


# -- IDF and weights by hand -------------------------------------------------------------------------------------
def test_idf_by_hand_on_three_texts(tok):
    table = idf_weights(["the cat sat", "the dog sat", "the the cat"], tok)
    ids = {w: tok.convert_tokens_to_ids(w) for w in ("the", "cat", "sat", "dog", "paris")}
    assert table.n_docs == 3
    # df: the 3 (counted once in "the the cat"), cat 2, sat 2, dog 1, paris 0; N + 1 = 4
    assert table[ids["the"]] == 0.0
    assert table[ids["cat"]] == pytest.approx(math.log(4 / 3))
    assert table[ids["sat"]] == pytest.approx(math.log(4 / 3))
    assert table[ids["dog"]] == pytest.approx(math.log(4 / 2))
    assert table[ids["paris"]] == pytest.approx(math.log(4))
    # [CLS] and [SEP] are in every document: weight 0
    assert table[tok.cls_token_id] == 0.0 and table[tok.sep_token_id] == 0.0


def test_idf_truncates_documents_like_the_encoder(tok):
    table = idf_weights(["the cat sat"], tok, max_tokens=1)  # only "the" is counted
    assert table[tok.convert_tokens_to_ids("the")] == 0.0
    assert table[tok.convert_tokens_to_ids("cat")] == pytest.approx(math.log(2))
    # default: the tokenizer's limit minus the two special tokens (tiny model: 64)
    long = " ".join(["cat"] * 62 + ["dog"] * 5)
    assert idf_weights([long], tok)[tok.convert_tokens_to_ids("dog")] == pytest.approx(math.log(2))  # cut off


def test_subwords_punctuation_and_specials_get_zero_weight(tiny):
    (st,) = load_encoder(tiny).embed(["the cats sat."])
    assert st.tokens == ["[CLS]", "the", "cat", "##s", "sat", ".", "[SEP]"]
    none = piece_weights(st.tokens, st.input_ids, st.special, None)
    np.testing.assert_array_equal(none, [1, 1, 1, 0, 1, 0, 1])  # idf none: [CLS]/[SEP] weigh 1, as the reference
    nltk = piece_weights(st.tokens, st.input_ids, st.special, None, STOPWORDS)
    np.testing.assert_array_equal(nltk, [1, 0, 1, 0, 1, 0, 1])
    table = IdfTable(2, {st.input_ids[0]: 2, st.input_ids[-1]: 2, st.input_ids[2]: 1})
    idf = piece_weights(st.tokens, st.input_ids, st.special, table)
    np.testing.assert_allclose(idf, [0, math.log(3), math.log(3 / 2), 0, math.log(3), 0, 0])


# -- transport by hand -------------------------------------------------------------------------------------------
def test_one_content_piece_each_side_set_idf_by_hand(tiny):
    # set IDF over {cat, dog}: cat and dog weigh log(3/2), [CLS]/[SEP] 0, so all mass sits on one piece each side
    _, cat = unit_states(tiny, "cat")
    _, dog = unit_states(tiny, "dog")
    expected = 1 - np.linalg.norm(cat[1] - dog[1])
    got = scores(MoverScore(model=tiny), [Example("cat", ("dog",)), Example("dog", ("cat",))])
    np.testing.assert_allclose(got, [expected, expected], atol=1e-6)
    got = scores(MoverScore(model=tiny, similarity="1/(1+emd)"), [Example("cat", ("dog",)), Example("dog", ("cat",))])
    np.testing.assert_allclose(got, [1 / (2 - expected)] * 2, atol=1e-6)


def test_uniform_weights_by_brute_force_over_permutations(tiny):
    # idf none: [CLS] dog [SEP] vs [CLS] cat [SEP], 3 pieces a side at 1/3 each, so an optimal plan is a permutation
    # (Birkhoff) and the EMD is the cheapest mean matching cost
    _, a = unit_states(tiny, "cat")
    _, b = unit_states(tiny, "dog")
    cost = np.linalg.norm(a[:, None, :] - b[None, :, :], axis=2)
    best = min(np.mean([cost[i, p[i]] for i in range(3)]) for p in itertools.permutations(range(3)))
    got = scores(MoverScore(model=tiny, idf="none"), [Example("dog", ("cat",))])[0]
    assert got == pytest.approx(1 - best, abs=1e-6)
    assert best > 0


# -- invariants --------------------------------------------------------------------------------------------------
def corpus_file(tmp_path, lines=TEXTS):
    path = tmp_path / "corpus.txt"
    path.write_text("\n".join([*lines, "", "   "]) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("mode", ["set", "none", "corpus"])
def test_identical_texts_score_the_maximum(tiny, tmp_path, mode):
    idf = f"corpus:{corpus_file(tmp_path)}" if mode == "corpus" else mode
    # set mode: references and candidates are the same list, so both IDF tables agree
    got = scores(MoverScore(model=tiny, idf=idf), [Example(t, (t,)) for t in TEXTS])
    np.testing.assert_allclose(got, 1.0, atol=1e-12)


@pytest.mark.parametrize("mode", ["none", "corpus"])
def test_fixed_idf_is_symmetric_and_independent_of_order_and_set(tiny, tmp_path, mode):
    metric = MoverScore(model=tiny, idf=f"corpus:{corpus_file(tmp_path)}" if mode == "corpus" else mode)
    examples = pairs()
    together = scores(metric, examples)
    swapped = scores(metric, [Example(ex.references[0], (ex.candidate,)) for ex in examples])
    reversed_ = scores(metric, examples[::-1])[::-1]
    one_by_one = np.concatenate([scores(metric, [ex]) for ex in examples])
    np.testing.assert_allclose(together, swapped, atol=1e-6)
    np.testing.assert_allclose(together, reversed_, atol=1e-6)
    np.testing.assert_allclose(together, one_by_one, atol=1e-6)
    assert ((together > -1) & (together < 1)).all()


def test_set_idf_depends_on_the_set_but_not_its_order(tiny):
    metric = MoverScore(model=tiny)  # not fitted: each score() call's examples are the set
    examples = pairs()
    together = scores(metric, examples)
    np.testing.assert_allclose(scores(metric, examples[::-1])[::-1], together, atol=1e-6)
    # swapping candidate and reference in every example swaps the two tables too: same scores
    swapped = scores(metric, [Example(ex.references[0], (ex.candidate,)) for ex in examples])
    np.testing.assert_allclose(swapped, together, atol=1e-6)
    # a different set gives different IDF weights, hence different scores for the same example
    half = scores(metric, examples[:6])
    assert np.abs(half - together[:6]).max() > 1e-3
    # a set of one: every piece occurs in every document (IDF 0), nothing to transport
    with pytest.warns(RuntimeWarning, match="IDF 0"):
        alone = scores(metric, examples[:1])
    assert alone[0] == -1.0


def test_set_idf_matches_a_fixed_corpus_of_the_same_texts(tiny, tmp_path):
    # identical candidates and references: set tables == the corpus table of those texts
    examples = [Example(TEXTS[i], (TEXTS[i],)) for i in range(len(TEXTS))] + pairs()
    refs = [ex.references[0] for ex in examples]
    per_set = scores(MoverScore(model=tiny), examples)
    # hyps and refs are the same multiset here, so one corpus file of them reproduces both tables
    assert sorted(refs) == sorted(ex.candidate for ex in examples)
    corpus = scores(MoverScore(model=tiny, idf=f"corpus:{corpus_file(tmp_path, refs)}"), examples)
    np.testing.assert_allclose(per_set, corpus, atol=1e-9)


@pytest.mark.parametrize("empty", ["", "   \n\t", "... !!! ,"])
def test_nothing_to_transport_scores_the_minimum(tiny, empty):
    for idf, similarity, value in (("none", "1-emd", -1.0), ("set", "1-emd", -1.0), ("none", "1/(1+emd)", 1 / 3)):
        metric = MoverScore(model=tiny, idf=idf, similarity=similarity)
        out = scores(metric, [Example(empty, (TEXTS[0],)), Example(TEXTS[0], (empty,)), Example(empty, (empty,)),
                              Example(TEXTS[1], (TEXTS[2],))])
        np.testing.assert_array_equal(out[:3], [value] * 3)
        assert out[3] > value
        assert metric.empty_score == value


def test_several_references_keep_the_best(tiny):
    metric = MoverScore(model=tiny, idf="none")
    single = [scores(metric, [Example(TEXTS[0], (ref,))])[0] for ref in TEXTS[1:]]
    assert scores(metric, [Example(TEXTS[0], tuple(TEXTS[1:]))])[0] == pytest.approx(max(single), abs=1e-9)
    assert scores(metric, [Example(TEXTS[0], ("", TEXTS[1]))])[0] == pytest.approx(single[0], abs=1e-9)


def test_stopwords_option_changes_scores(tiny):
    examples = pairs()[:4]
    plain = scores(MoverScore(model=tiny, idf="none"), examples)
    nltk = scores(MoverScore(model=tiny, idf="none", stopwords="nltk"), examples)
    assert np.abs(plain - nltk).max() > 1e-3


# -- configuration -----------------------------------------------------------------------------------------------
def test_signature_names_every_choice(tiny, tmp_path):
    sig = MoverScore(model=tiny).signature()
    for part in ("moverscore|", "bert(", "layer:last", "ngram:1", "idf:set(ref,hyp)|fit:per-call|", "zero:##+punct",
                 "stop:none",
                 "norm:l2", "emd:exact", "sim:1-emd", "empty:-1", "refs:max", "pot==", "transformers=="):
        assert part in sig, part
    assert "idf:none" in MoverScore(model=tiny, idf="none").signature()
    assert "fit:" not in MoverScore(model=tiny, idf="none").signature()
    path = corpus_file(tmp_path)
    first = MoverScore(model=tiny, idf=f"corpus:{path}").signature()
    assert "idf:corpus(corpus.txt,sha256:" in first
    path.write_text("another corpus\n", encoding="utf-8")
    assert MoverScore(model=tiny, idf=f"corpus:{path}").signature() != first
    assert "sim:1/(1+emd)" in MoverScore(model=tiny, similarity="1/(1+emd)").signature()


def test_config_does_not_import_torch():
    code = ("import sys, metrics.moverscore as m; m.MoverScore(model='minilm').signature(); "
            "m.MoverScore().signature(); print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_bad_configuration_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="idf"):
        MoverScore(idf="tfidf")
    with pytest.raises(ValueError, match="replaced by idf='set'"):
        MoverScore(idf="batch")
    with pytest.raises(ValueError, match="not found"):
        MoverScore(idf=f"corpus:{tmp_path / 'missing.txt'}")
    with pytest.raises(ValueError, match="stopwords"):
        MoverScore(stopwords="english")
    with pytest.raises(ValueError, match="similarity"):
        MoverScore(similarity="exp")
    with pytest.raises(ValueError, match="batch_size"):
        MoverScore(batch_size="0")


def test_default_model_unavailable_offline_says_what_to_do(tiny):
    if model_unavailable_reason("distilbert-base-uncased") is None:
        pytest.skip("distilbert-base-uncased is available here")
    reason = MoverScore.unavailable_reason()
    assert "distilbert-base-uncased" in reason and "--option model=minilm" in reason
    assert MoverScore.unavailable_reason(tiny) is None


# -- real data ---------------------------------------------------------------------------------------------------
CHAGANTY_ROWS = 500  # the first 500 rows: all 2,085 take several minutes with MiniLM on one CPU thread


def test_minilm_on_chaganty_correlates_positively(shared_data):
    from scipy.stats import spearmanr

    from meta_eval import judgments

    __import__("conftest").require_minilm()
    jset = judgments.load("chaganty", shared_data)
    examples = jset.examples()[:CHAGANTY_ROWS]
    human = jset.human("overall")[:CHAGANTY_ROWS]
    metric = MoverScore(model="minilm")  # set IDF over the 500 rows, as the reference's README over its lists
    load_encoder("minilm")
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # 500 rows are enough for set IDF: no degenerate text
        got = scores(metric, examples)
    seconds = time.perf_counter() - start
    rho = spearmanr(got, human)[0]
    print(f"moverscore minilm idf=set chaganty[:{CHAGANTY_ROWS}]: spearman {rho:.3f}, "
          f"{1000 * seconds / len(examples):.1f} ms per pair")
    assert rho > 0.05
    assert ((got > -1) & (got < 1)).all()


@pytest.mark.parametrize("module, name", [("moverscore", "moverscore"), ("contextual_mover", "wms-ctx"),
                                          ("contextual_mover", "sms-ctx"), ("contextual_mover", "s+wms-ctx")])
def test_the_transport_uses_the_granted_threads_and_changes_no_bit(tiny, monkeypatch, module, name):
    import importlib

    from meta_eval.metrics import create
    from meta_eval.metrics.encoder import set_torch_threads

    target = importlib.import_module(f"meta_eval.metrics.{module}")
    real, asked = target.mover_distances, []

    def spy(problems, threads=1):
        asked.append(threads)
        return real(problems, threads)

    monkeypatch.setattr(target, "mover_distances", spy)
    examples = pairs() + [Example(TEXTS[0], (TEXTS[1], TEXTS[2], "")), Example("", (TEXTS[3],))]
    one = create(name, model=tiny).score(examples)
    previous = set_torch_threads(3)
    try:
        three = create(name, model=tiny).score(examples)
    finally:
        set_torch_threads(previous)
    assert asked == [1, 3]
    for variant, values in one.items():
        assert np.array_equal(values, three[variant]) and len(values) == len(examples)
