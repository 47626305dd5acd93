"""BERT-LM pseudo-perplexity (Scialom et al. 2019; Salazar et al. 2020) on a tiny random masked LM loaded by path."""
from __future__ import annotations

import importlib.util
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import meta_eval.metrics.bertlm as bertlm
from meta_eval.metrics import Example, MetricError, create
from meta_eval.metrics.bertlm import BertLM, BertLMPerplexity

SENTENCE = "The cats sat on the mat."  # 8 pieces: the cat ##s sat on the mat .
TEXTS = ["The president visited Paris yesterday.", "a big red dog won the game!", "Cat.", SENTENCE,
         "john smith and the quick brown fox jumps over the lazy dog in london"]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> str:
    from conftest import NEURAL_FIX, make_tiny_bert, require_module
    require_module("torch", NEURAL_FIX)
    require_module("transformers", NEURAL_FIX)

    return str(make_tiny_bert(tmp_path_factory.mktemp("bertlm") / "tiny-mlm", head="mlm"))


def fresh(model: str):
    """The shared masked LM with its per-text memo emptied, so the next call really computes."""
    lm = bertlm.load_masked_lm(model)
    lm.memo.clear()
    return lm


def both(model: str, texts, **cfg) -> tuple[np.ndarray, np.ndarray]:
    fresh(model)
    examples = [Example(t) for t in texts]
    lm, ppl = BertLM(model, **cfg), BertLMPerplexity(model, **cfg)  # not bert-base-uncased: bert-lm[<folder>]
    return lm.score(examples)[lm.variants[0]], ppl.score(examples)[ppl.variants[0]]


def hand_pll(model: str, text: str) -> tuple[float, int]:
    """PLL with plain torch: the full logits of one masked copy at a time, log-softmax, read the original piece."""
    import torch
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(model)
    net = AutoModelForMaskedLM.from_pretrained(model).eval()
    ids = tok(text, return_tensors="pt")["input_ids"][0]
    assert ids[0] == tok.cls_token_id and ids[-1] == tok.sep_token_id
    total = 0.0
    with torch.no_grad():
        for i in range(1, len(ids) - 1):
            masked = ids.clone()
            masked[i] = tok.mask_token_id
            logits = net(input_ids=masked[None]).logits[0, i]
            total += float(torch.log_softmax(logits, dim=-1)[ids[i]])
    return total, len(ids) - 2


def test_pseudo_log_likelihood_by_hand(tiny):
    expected, n = hand_pll(tiny, SENTENCE)
    assert n == 8
    lm = fresh(tiny)
    assert lm.tokenizer.convert_ids_to_tokens(lm.windows(SENTENCE)[0]) == \
        ["the", "cat", "##s", "sat", "on", "the", "mat", "."]
    pll, pieces = lm.pseudo_log_likelihoods([SENTENCE])[0]
    assert pieces == n
    assert pll == pytest.approx(expected, abs=1e-5)
    score, ppl = both(tiny, [SENTENCE])
    assert score[0] == pytest.approx(expected / n, abs=1e-5)
    assert ppl[0] == pytest.approx(math.exp(-expected / n), rel=1e-5)
    # a random model is nearly uniform over the vocabulary, but not exactly
    assert ppl[0] != pytest.approx(lm.vocab_size, rel=1e-3)


def test_the_two_metrics_are_one_computation_with_opposite_orientation(tiny):
    score, ppl = both(tiny, TEXTS)
    np.testing.assert_allclose(ppl, np.exp(-score), rtol=1e-12)
    assert BertLM.higher_is_better and not BertLMPerplexity.higher_is_better
    assert not BertLM.needs_references and not BertLMPerplexity.needs_references
    assert BertLM.variants == ("bert-lm",) and BertLMPerplexity.variants == ("bert-lm-ppl",)
    assert len(set(np.round(score, 6))) == len(TEXTS)  # different texts, different scores


def test_order_and_batch_size_do_not_change_scores(tiny):
    one, _ = both(tiny, TEXTS, batch_size=1)
    many, _ = both(tiny, TEXTS[::-1], batch_size=64)
    np.testing.assert_allclose(one, many[::-1], rtol=1e-5, atol=1e-6)
    mid, _ = both(tiny, TEXTS + TEXTS[:2], batch_size=7)  # duplicates, odd chunks
    np.testing.assert_allclose(mid, np.concatenate([one, one[:2]]), rtol=1e-5, atol=1e-6)


def test_long_text_is_scored_in_windows_using_every_piece(tiny):
    from conftest import TINY_WORDS

    words = [w for w in TINY_WORDS if not w.startswith("[")]
    text = " ".join(words[i % len(words)] for i in range(150))  # one piece per word; 150 > 62 = 64 - 2
    lm = fresh(tiny)
    assert [len(w) for w in lm.windows(text)] == [62, 62, 26]
    pll, pieces = lm.pseudo_log_likelihoods([text])[0]
    assert pieces == 150
    # each window is scored alone, with its own [CLS]/[SEP]: the sum of the three windows scored as texts
    parts = [" ".join(text.split()[i:i + 62]) for i in (0, 62, 124)]
    lm.memo.clear()
    expected = sum(p for p, _ in lm.pseudo_log_likelihoods(parts))
    assert pll == pytest.approx(expected, abs=1e-4)
    score, ppl = both(tiny, [text])
    assert np.isfinite(score).all() and score[0] == pytest.approx(pll / 150, abs=1e-6)


@pytest.mark.parametrize("empty", ["", "   \n\t", "\u200b"])
def test_empty_text_scores_as_a_uniform_guess(tiny, empty):
    vocab_size = len((Path(tiny) / "vocab.txt").read_text(encoding="utf-8").split())
    score, ppl = both(tiny, [empty, SENTENCE, empty])
    assert ppl[0] == ppl[2] == vocab_size
    assert score[0] == score[2] == pytest.approx(-math.log(vocab_size))
    assert score[1] == pytest.approx(hand_pll(tiny, SENTENCE)[0] / 8, abs=1e-5)  # neighbours unaffected


def test_minilm_has_no_mlm_head():
    with pytest.raises(MetricError, match="MiniLM .* without a masked-LM head"):
        BertLM(model="minilm")
    with pytest.raises(ValueError, match="without a masked-LM head"):
        BertLMPerplexity(model="minilm")
    with pytest.raises(MetricError, match="without a masked-LM head"):
        bertlm.load_masked_lm("minilm")
    missing = [m for m in BertLM.requires if importlib.util.find_spec(m) is None]
    if missing:  # the core install: the missing packages are the reason given first
        assert BertLM.unavailable_reason("minilm").startswith(f"missing {', '.join(missing)}: pip install")
    else:
        assert "without a masked-LM head" in BertLM.unavailable_reason("minilm")


def test_checkpoint_without_its_head_is_refused(tmp_path):
    from conftest import NEURAL_FIX, make_tiny_bert, require_module
    require_module("torch", NEURAL_FIX)
    from meta_eval.metrics.encoder import EncoderError

    folder = make_tiny_bert(tmp_path / "tiny-base", head="base")
    with pytest.raises(EncoderError, match="masked-LM head"):
        bertlm.MaskedLM(str(folder))
    with pytest.raises(EncoderError, match="cannot load masked LM"):
        bertlm.MaskedLM(str(tmp_path / "nothing-here"))


def test_unavailable_without_bert_base_uncased(monkeypatch, tiny):
    if bertlm.model_unavailable_reason("bert-base-uncased") is None:
        pytest.skip("bert-base-uncased is cached here")
    reason = BertLM.unavailable_reason()
    assert "bert-base-uncased" in reason and "model=<local folder with a masked-LM head>" in reason
    assert "MiniLM" in reason and "download" in reason
    assert BertLMPerplexity.unavailable_reason() == reason
    assert BertLM.unavailable_reason(tiny) is None
    monkeypatch.setattr(bertlm, "model_unavailable_reason", lambda model: None)  # as if it were cached
    assert BertLM.unavailable_reason() is None


def test_missing_torch_is_reported_first(monkeypatch):
    monkeypatch.setattr(BertLM, "requires", ("importlib", "surely_not_installed_module"))
    hint = "missing surely_not_installed_module: install torch first"  # metrics.device.install_hint("neural")
    assert BertLM.unavailable_reason().startswith(hint)
    assert BertLM.unavailable_reason("minilm").startswith(hint)


def test_options_are_validated():
    assert BertLM(batch_size="8").batch_size == 8  # the command line passes strings
    for bad in (0, -1, "x", True, 2.5, None):
        with pytest.raises(ValueError, match="batch_size"):
            BertLM(batch_size=bad)
    for bad in ("", "  ", None):
        with pytest.raises(ValueError, match="model"):
            BertLM(model=bad)


def test_signature_names_the_choices(tiny):
    sig = create("bert-lm").signature()
    for part in ("bert-lm|", "model:bert-base-uncased(", "transformers==", "torch==", "lm:mlm-pll",
                 "mask:each-piece", "long:windows(max_len-2)+cls/sep", "empty:ppl=vocab-size", "score:pll/n"):
        assert part in sig
    ppl = create("bert-lm-ppl").signature()
    assert "score:exp(-pll/n)" in ppl and ppl.startswith("bert-lm-ppl|")
    assert create("bert-lm", batch_size=3).signature() == sig  # grouping only
    assert create("bert-lm", model=tiny).signature() != sig
    assert "model:tiny-mlm(" in create("bert-lm", model=tiny).signature()


def test_config_does_not_import_torch():
    code = ("import sys, metrics.bertlm as b; b.BertLM().config(); b.BertLM.unavailable_reason(); "
            "print('torch' in sys.modules, 'transformers' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[1])
    assert out.stdout.split() == ["False", "False"]
