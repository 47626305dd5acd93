"""Bit-for-bit invariance of the neural metrics to what else is scored with a text (metrics/encoder.py,
metrics/bertscore.py): the encoder never pads, BERTScore matches every pair alone, and the torch thread count an
engine grants does not change a bit.

Why bit-for-bit: a score cached by one run (a batch of 256 rows, two threads) must equal the score another run
computes for the same example in another company (a partly filled cache leaves other rows to score, another
``--batch-size``, ``--workers 1``), or a board regenerated from a warm cache differs from one built cold. With
padded batches it did not (a MiniLM sentence of 18 pieces padded to 48 moved by 4.5e-6; bert-score's own batching
changed 8 of 60 WMT rows), so these tests compare with ``np.array_equal``, not a tolerance.

That holds in the portable numeric mode (the default, metrics/numeric.py), whatever the CPU: in the native mode MKL
picks its kernels by the matrix shape on a CPU with AVX-512, so a text's states depend on its batch in the last bits,
and these tests then compare within ``conftest.SCORE_TOL`` (``conftest.assert_same_scores``).
"""
from __future__ import annotations

import numpy as np
import pytest

from conftest import NEURAL_FIX, assert_same_scores, assert_same_states, require_module  # noqa: E402
require_module("torch", NEURAL_FIX)
require_module("transformers", NEURAL_FIX)

from meta_eval.metrics import Example, create  # noqa: E402
from meta_eval.metrics.encoder import length_groups, load_encoder, set_torch_threads, torch_threads  # noqa: E402

# sentences of many lengths, several of the same length, one long enough to need two windows with long="window"
TEXTS = [
    "The cat sat on the mat.", "A dog sat on the rug.", "Police arrested three men on Sunday night.",
    "Stocks fell.", "Shares rose.", "The storm knocked out power to thousands of homes across the region.",
    "He said the plan would cost more than expected, and that voters had not been told the truth about it.",
    "Unbelievable!", "Rain.", "The minister resigned after the report was published on Tuesday.",
    "Scientists found water on a distant moon, raising hopes of finding life beyond Earth someday.",
]


@pytest.fixture(scope="module")
def minilm():
    __import__("conftest").require_minilm()
    return load_encoder("minilm")


def test_length_groups_never_mix_lengths_and_respect_the_batch_size():
    lengths = [5, 3, 5, 5, 9, 3, 5]
    groups = length_groups(lengths, 2)
    assert groups == [[1, 5], [0, 2], [3, 6], [4]]
    assert sorted(i for g in groups for i in g) == list(range(len(lengths)))
    assert all(len({lengths[i] for i in g}) == 1 and len(g) <= 2 for g in groups)
    assert length_groups([], 4) == []
    with pytest.raises(ValueError):
        length_groups([1], 0)


def test_a_text_is_encoded_as_if_alone_whatever_its_batch(minilm):
    alone = [minilm.embed([t])[0].hidden for t in TEXTS]
    for batch_size in (1, 3, 64):
        together = minilm.embed(TEXTS[::-1], batch_size=batch_size)[::-1]
        for text, a, b in zip(TEXTS, alone, together):
            assert_same_states(a, b.hidden, (text, batch_size))


def test_each_gets_every_texts_states_in_input_order(minilm):
    full = minilm.embed(TEXTS)
    lasts = minilm.embed(TEXTS, batch_size=2, each=lambda st: (st.tokens, st.hidden[-1].copy()))
    assert [tokens for tokens, _ in lasts] == [st.tokens for st in full]
    for (_, last), st in zip(lasts, full):
        assert_same_states(last, st.hidden[-1])


@pytest.mark.parametrize("layer", [-1, 0, 3, "mean", "all"])
def test_embed_with_a_layer_gives_the_bits_of_that_layer_of_the_full_states(minilm, layer):
    """embed(layer=...) keeps one layer (issue #37: on a GPU only it crosses to the host); on the CPU it is the same
    bits as layer() of the full states, a two-window text included, and it holds that layer only."""
    window = load_encoder("minilm", long="window")
    texts = TEXTS + [" ".join(TEXTS * 12)]  # the last: two windows
    full = window.embed(texts)
    one = window.embed(texts, layer=layer)
    for a, b in zip(full, one):
        assert b.hidden.shape == (1, *a.hidden.shape[1:]) and b.held == layer and a.held is None
        assert b.tokens == a.tokens and b.word_ids == a.word_ids
        assert_same_states(b.layer(layer), a.layer(layer))
    other = 1 if layer != 1 else 2
    with pytest.raises(ValueError, match="hold layer"):
        one[0].layer(other)


@pytest.mark.parametrize("layer", [7, -8, "max", 1.5, True])
def test_embed_refuses_a_layer_the_encoder_does_not_have(minilm, layer):
    assert minilm.n_states == 7  # MiniLM-L6: the embeddings and six layers
    with pytest.raises(ValueError, match=r"out of range: the encoder has 7 hidden states"):
        minilm.embed(TEXTS[:1], layer=layer)


def test_embed_tokenizes_its_texts_in_one_call_giving_the_pieces_of_a_call_per_text(minilm, monkeypatch):
    """Issue #37: a tokenizer call per text (chaganty's 11,723) cost 2.9 s of ``-m all`` on an H200 (profiled); the
    batch is now tokenized in one call, with the same pieces, word indices and token strings as before."""
    tok = minilm.tokenizer
    real = type(tok).__call__
    calls = []

    def counted(self, *args, **kwargs):
        calls.append(args[0])
        return real(self, *args, **kwargs)

    monkeypatch.setattr(type(tok), "__call__", counted)
    texts = TEXTS + ["", "naïve café: déjà vu", "word " * 700]  # empty, accented, over the limit (truncated)
    states = minilm.embed(texts)
    monkeypatch.undo()
    assert calls == [texts]
    room = minilm.max_length - 2
    for text, st in zip(texts, states):
        alone = real(tok, text, add_special_tokens=False)
        assert st.input_ids.tolist() == [tok.cls_token_id, *list(alone["input_ids"])[:room], tok.sep_token_id]
        assert st.word_ids == [None, *alone.word_ids()[:room], None]
        assert st.tokens == tok.convert_ids_to_tokens(st.input_ids.tolist())
    assert len(states[-1].tokens) == minilm.max_length


def test_windows_are_encoded_as_if_alone(minilm):
    window = load_encoder("minilm", long="window")
    long_text = " ".join(TEXTS * 12)  # over 512 pieces: two windows
    (alone,) = window.embed([long_text])
    assert alone.hidden.shape[1] > 512
    mixed = window.embed([TEXTS[0], long_text, TEXTS[3]], batch_size=2)
    assert_same_states(mixed[1].hidden, alone.hidden)


def test_thread_count_does_not_change_the_states(minilm):
    one = minilm.embed(TEXTS)
    previous = set_torch_threads(2)
    try:
        assert torch_threads() == 2
        two = minilm.embed(TEXTS)
    finally:
        set_torch_threads(previous)
    assert torch_threads() == previous
    for a, b in zip(one, two):
        assert_same_states(a.hidden, b.hidden)


def test_grant_is_validated_and_the_variable_wins(monkeypatch):
    with pytest.raises(ValueError):
        set_torch_threads(0)
    monkeypatch.setenv("META_EVAL_TORCH_THREADS", "3")
    assert torch_threads() == 3 and torch_threads(5) == 5
    monkeypatch.setenv("META_EVAL_TORCH_THREADS", "many")
    from meta_eval.metrics.encoder import EncoderError

    with pytest.raises(EncoderError, match="META_EVAL_TORCH_THREADS"):
        torch_threads()


def _pairs() -> list[Example]:
    return [Example(TEXTS[i], (TEXTS[(i * 3 + 1) % len(TEXTS)], TEXTS[(i + 5) % len(TEXTS)]))
            for i in range(len(TEXTS))]


@pytest.mark.parametrize("name", ["bertscore", "wms-ctx", "sms-ctx"])
def test_scores_do_not_depend_on_company_batch_size_memo_or_threads(minilm, name):
    require_module("bert_score", "pip install 'meta-eval[bertscore]' (after the CPU torch)") \
        if name == "bertscore" else None
    from meta_eval.metrics import bertscore, contextual_mover

    def clear():
        bertscore._states.clear()
        contextual_mover._cache.clear()

    examples = _pairs()
    clear()
    together = create(name, model="minilm").score(examples)
    clear()
    alone = [create(name, model="minilm", batch_size=1).score([ex]) for ex in examples]  # each row in a call of its own
    clear()
    create(name, model="minilm").score(examples[::2])  # a warm memo holding half the texts, then the other rows
    previous = set_torch_threads(2)
    try:
        warm = create(name, model="minilm", batch_size=2).score(examples[::-1])
    finally:
        set_torch_threads(previous)
    for variant, values in together.items():
        assert_same_scores(values, np.concatenate([a[variant] for a in alone]), variant)
        assert_same_scores(values, warm[variant][::-1], variant)


def test_length_groups_cap_the_pieces_per_pass_but_keep_at_least_one_text():
    lengths = [4, 4, 4, 10, 10, 30]
    assert length_groups(lengths, 8, max_tokens=8) == [[0, 1], [2], [3], [4], [5]]
    assert length_groups(lengths, 8, max_tokens=1000) == length_groups(lengths, 8)
    with pytest.raises(ValueError):
        length_groups(lengths, 8, max_tokens=0)


@pytest.mark.parametrize("name", ["bertscore", "wms-ctx"])
def test_the_pieces_per_pass_change_no_bit(minilm, name, monkeypatch):
    require_module("bert_score", "pip install 'meta-eval[bertscore]' (after the CPU torch)") \
        if name == "bertscore" else None
    from meta_eval.metrics import bertscore, contextual_mover, encoder

    examples = _pairs()
    bertscore._states.clear()
    contextual_mover._cache.clear()
    default = create(name, model="minilm").score(examples)
    states = minilm.embed(TEXTS)
    for module in (encoder, bertscore):
        monkeypatch.setattr(module, "TOKENS_PER_PASS", 8)  # one text per pass
    bertscore._states.clear()
    contextual_mover._cache.clear()
    small = create(name, model="minilm").score(examples)
    for a, b in zip(states, minilm.embed(TEXTS)):
        assert_same_states(a.hidden, b.hidden)
    for variant, values in default.items():
        assert_same_scores(values, small[variant], variant)
