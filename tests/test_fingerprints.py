"""What a model folder, a vectors file or a tokenizer stands for in a signature is signed by its content.

An audit found a local model folder signed by its weights' size and first MiB only (a fine-tuned copy with the same
embedding table and size kept its cache entries), its tokenizer files not at all, a vectors file by its first MiB,
and neither spaCy's version (``tokenizer=spacy``) nor tokenizers' version in any signature.
"""
from __future__ import annotations

import os
from pathlib import Path

from meta_eval.metrics.base import file_sha256, package_version
from meta_eval.metrics.encoder import encoder_ident
from meta_eval.metrics.mover import WordMoversSimilarity as WMS
from meta_eval.metrics.vectors import load_vectors

MIB = 1 << 20


def _model_folder(root: Path, name: str, weights: bytes, vocab: str = "[PAD]\n[UNK]\nthe\n") -> Path:
    folder = root / name / "model"  # one folder name: only the content can tell them apart
    folder.mkdir(parents=True)
    (folder / "config.json").write_text('{"model_type": "bert"}')
    (folder / "vocab.txt").write_text(vocab)
    (folder / "model.safetensors").write_bytes(weights)
    (folder / "README.md").write_text("not read by transformers")
    return folder


def _ident(folder: Path) -> str:
    return encoder_ident(str(folder)).split("|")[0]


def test_weights_changed_after_their_first_mib_are_a_new_model(tmp_path):
    head = bytes(range(256)) * (MIB // 256)
    a = _model_folder(tmp_path, "a", head + b"\x00" * 1000)
    b = _model_folder(tmp_path, "b", head + b"\x01" * 1000)  # same size, same first MiB: a fine-tuned top layer
    assert _ident(a) != _ident(b)
    assert _ident(a) == _ident(_model_folder(tmp_path, "c", head + b"\x00" * 1000))


def test_a_changed_tokenizer_alone_is_a_new_model_and_other_files_are_not_signed(tmp_path):
    a = _model_folder(tmp_path, "a", b"w" * 10)
    before = _ident(a)
    (a / "README.md").write_text("edited")  # not a model or tokenizer file
    assert _ident(a) == before
    (a / "vocab.txt").write_text("[PAD]\n[UNK]\nthe\ncat\n")
    assert _ident(a) != before


def test_every_weights_shard_is_signed(tmp_path):
    a = _model_folder(tmp_path, "a", b"w" * 10)
    before = _ident(a)
    (a / "model-00002-of-00002.safetensors").write_bytes(b"second shard")
    assert _ident(a) != before


def test_a_vectors_file_edited_after_its_first_mib_is_new_vectors(tmp_path):
    rows = "".join(f"w{i} {i % 7}.5 0.25 -1.0\n" for i in range(60000))
    assert len(rows.encode()) > MIB
    path = tmp_path / "vec.txt"
    path.write_text(rows)
    load_vectors.cache_clear()
    before = load_vectors(str(path)).ident
    path.write_text(rows[:-len("0.25 -1.0\n")] + "0.25 -2.0\n")  # the last vector, same size
    load_vectors.cache_clear()
    after = load_vectors(str(path)).ident
    load_vectors.cache_clear()
    assert before != after


def test_spacy_and_tokenizers_versions_are_signed():
    assert "spacy" in WMS(tokenizer="spacy").versions()
    assert "spacy" not in WMS(tokenizer="wordpunct").versions()
    assert f"tokenizers=={package_version('tokenizers')}" in encoder_ident("minilm").split("|")


def test_file_sha256_reads_a_changed_file_again(tmp_path):
    path = tmp_path / "f.bin"
    path.write_bytes(b"abc")
    first = file_sha256(path)
    assert first == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"  # SHA-256("abc"), FIPS 180-2
    assert file_sha256(path) == first
    stat = path.stat()
    path.write_bytes(b"abd")  # same size; the memo is keyed by mtime and inode too
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert file_sha256(path) != first
    assert file_sha256(path) == "a52d159f262b2c6ddb724a61840befc36eb30c88877a4030b65cbe86298449c9"
