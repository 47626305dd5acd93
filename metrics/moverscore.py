"""MoverScore (Zhao, Peyrard, Liu, Gao, Meyer & Eger, EMNLP 2019), as the authors' ``moverscore_v2.py`` computes it.

Reference: ``moverscore_v2.py`` of the PyPI package ``moverscore==1.0.3`` (April 2020, the release ``pip install
moverscore`` gives; same file in the GitHub repository AIPHES/emnlp19-moverscore at that time), called as its README
says: ``word_mover_score(references, translations, get_idf_dict(references), get_idf_dict(translations),
stop_words=[], n_gram=1, remove_subwords=True)``. Every choice, in the order the reference makes it:

- encoder: ``distilbert-base-uncased`` (the reference's default), last layer (``hidden_states[-1]``); ``model=`` takes
  any model :func:`metrics.encoder.load_encoder` can load, e.g. ``minilm`` (offline) or a local folder. The paper's
  own best configuration (WMD-1 + BERT fine-tuned on MNLI + power means over layers, the v1 code) is not what
  ``moverscore_v2.py`` computes, and this module follows v2, so v2's DistilBERT is the default and the one model
  whose variant keeps the plain name ``moverscore``; any other model is named in it, ``moverscore[minilm]``
  (a hub name by its last path component, a folder by its name: :func:`metrics.model_names.tagged`). When
  DistilBERT is not in the local Hugging Face cache, ``moverscore`` without ``model=`` is an error (a default choice
  or ``-m all`` skips it with the reason), never a silent substitution;
- tokens: ``[CLS]`` + the text's word pieces + ``[SEP]``, the pieces truncated to the model's maximum length minus 2
  (510), as the reference's ``truncate``; each distinct text of a batch is encoded once (a text that is both a
  reference and a candidate has one set of states), in batches of texts with the same number of pieces, hence
  without padding (the reference pads its batches; padding changes states by float rounding only, and chaganty
  scores by up to 5e-8): a text's states do not depend on the texts scored with it (1 to 32 rows of one length give
  the same bits on CPU), so a score has the same bits for every ``--batch-size`` (with ``idf="set"``: once fitted);
- n-grams: unigrams only (``n_gram=1``: v2 ignores the argument and always scores single pieces);
- weights: IDF, ``idf(t) = log((N + 1) / (df(t) + 1))`` over N documents, df counted on each document's *set* of
  piece ids, ``[CLS]`` and ``[SEP]`` included, so both get weight log(1) = 0; an id unseen in the documents gets
  log(N + 1) (the reference's ``get_idf_dict``; :func:`idf_weights` computes it). ``idf`` chooses the documents:

  * ``"set"`` (default, the reference's README: ``get_idf_dict(references)`` and ``get_idf_dict(translations)``
    over the whole lists it scores): the references of the scored set give the references' table and its
    candidates give the candidates' table, separately (``idf_dict_ref``, ``idf_dict_hyp``); every listed reference
    of every example is a document and so is every example's candidate (a duplicated row, or a reference shared by
    several examples, counts once per example, like the reference's parallel lists). The set is what
    :meth:`MoverScore.fit` was given: the runner (``meta-eval run``, ``score``, ``learn``, leaderboards) fits on
    every row of the set before it looks up the cache, so a score depends neither on ``--batch-size`` nor on what is
    cached. The signature names the set, ``fit:set(n:<rows>,sha256:<16 hex>)`` (SHA-256 of the sorted references
    and the sorted candidates: exactly the tables' documents, whatever their order), so scores fitted on different
    sets never share a cache key. Without ``fit`` (Python API), each :meth:`MoverScore.score` call's examples are
    the set, as the reference takes the lists it is given, and the signature says ``fit:per-call``. Fitting only
    keeps and hashes the texts; they are tokenized (no encoder pass) at the first ``score``, once per set. A set of
    one example gives every piece weight log(2/2) = 0 (see "nothing to transport" below; a RuntimeWarning says
    so): set IDF needs many examples.
  * ``"none"``: every piece weighs 1, ``[CLS]`` and ``[SEP]`` included (the reference's documented alternative
    ``defaultdict(lambda: 1.)``); scores do not depend on the set.
  * ``"corpus:<path>"``: one table for references and candidates from a fixed UTF-8 corpus file, one document per
    line (blank lines skipped); the file's SHA-256 prefix enters the signature; scores do not depend on the set.
  * ``"batch"`` is refused (with a message naming ``"set"``): it computed the tables over each runner batch (256
    examples), so a cached score depended on ``--batch-size`` while its cache key did not.

- zero weights (and, in the reference, zero vectors; a piece of zero weight carries no mass, so its vector never
  matters): pieces containing ``##`` (WordPiece continuations: only the first piece of a word counts), pieces that are
  one ASCII punctuation character (``string.punctuation``), and stopwords (``stopwords="none"``, the reference's
  ``stop_words=[]``, default; ``"nltk"``: the 179 NLTK English stopwords of :mod:`metrics.text`, matched against the
  pieces as the reference matches its list). The ``##`` rule is WordPiece's: other tokenizers keep every piece;
- vectors: each piece's state divided by its L2 norm (the reference's ``raw.div_(norm + 1e-30)``);
- cost: Euclidean distance between the unit vectors of the reference's and the candidate's pieces, computed exactly
  in float64 (``scipy.spatial.distance.cdist``); the reference's float32 expansion |x|^2 + |y|^2 - 2xy differs by up
  to ~3e-4 near zero distance (it gives identical texts 0.9997 to 0.9999, not 1);
- transport: the exact earth mover's distance (``ot.emd2``, network simplex) between the reference's weights and the
  candidate's weights, each divided by its sum. The reference solves the same problem with pyemd's
  ``emd_with_flow`` on the joint (reference + candidate) token space, where each side has zero mass on the other's
  tokens, which is the same optimum. The pairs of a call are solved on the encoder's torch threads, idle by then
  (:func:`metrics.transport.mover_distances`: each pair alone on one thread, the same bits as one after the other);
- score: ``similarity="1-emd"`` (default): 1 - EMD, what ``moverscore==1.0.3`` returns; the unit vectors are at most
  2 apart, so scores lie in [-1, 1] and identical texts score 1. ``"1/(1+emd)"``: what later versions of
  ``moverscore_v2.py`` on GitHub master return (range [1/3, 1]). Both decrease with the EMD, so rank correlations
  agree;
- several references: the maximum score over the references (``refs:max``; the reference takes one reference);
- nothing to transport: when no piece of a text other than ``[CLS]``/``[SEP]`` carries weight (an empty or blank
  text; only punctuation, continuation pieces or stopwords; in the IDF modes only pieces that occur in every
  document), the pair scores the similarity of the largest possible distance, 2: -1.0 (``"1/(1+emd)"``: 1/3).
  The reference instead returns 1.0 there (pyemd moves no mass when one side's weights sum to zero), which would
  rank an empty candidate first.

Checked against a re-implementation of the reference's algorithm (padded batch, joint token space, float32 cost,
full transport problem) with the same MiniLM encoder on the first 256 chaganty pairs (``bench/bench_metrics.py``,
IDF over those 256 pairs): scores agree within 2e-7 with IDF (``idf="set"``) and without (``"none"``), and this
implementation took 40 ms per pair against the reference algorithm's 95-100 ms (one CPU thread: distinct texts
encoded once, batches of equal length, transport only between pieces that carry weight).

Speed (``bench/bench_speed.py``; one torch thread for both; chaganty's 2,085 rows with MiniLM, through the runner
as ``meta-eval run`` scores): 2.9 to 3.2 times the rows per second of that re-implementation and 4.2 to 4.4 times
those of ``moverscore_v2`` as released (eager attention with attention maps, pyemd's transport), over two runs, with
the same scores as before this speed work, bit for bit. On the whole machine, as each runs by default (this one has 2
cores: torch's two intra-op threads for the reference, two one-thread forward passes at once for meta-eval;
``META_EVAL_TORCH_THREADS=2``): 3.5 to 3.6 times the re-implementation and 5.2 to 5.4 times the released code by
wall-clock time (4.7 to 4.9 by CPU time), over two runs; a third run gave 3.5 and 5.5 (5.0 by CPU time). The
released code is the reference issue 12's 5x target is read against, as rouge-score's release is ROUGE's: a
re-implementation is a yardstick of our own making. References are kept encoded between calls (:class:`_StateCache`,
128 MiB of last-layer states; only the last layer is kept of any text), so a reference shared by rows of several
runner batches is encoded once.

The encoder's forward pass is about 85 % of the time. On chaganty it is 4.32 TFLOP of matrix products over the
2,667 distinct texts (196,630 pieces), where the re-implementation's padded batches are 12.59 TFLOP (559,980 pieces:
it pads each batch to its longest text and encodes a reference once per row). At this CPU's measured 102 GFLOP/s per
thread that is at least 21 s on 2 threads; the passes take 29-30 s (70 % of that rate: attention, softmax, layer
norms and GELU are bound by memory), so 5x the re-implementation's 125 s (25 s in all) is out of reach with these
scores. More would need fewer or cheaper pieces, and each way found changes the floats: padding or packing texts of
different lengths together (up to 5e-8 in a score), lower precision, or splitting a matrix product over several
intra-op threads. Several forward passes at once, each on one thread, change nothing (:mod:`metrics.encoder`): the
local engine runs MoverScore's passes ``--workers`` at a time. On small sets the batches of one length are small,
and the reference's single padded batch can be as fast (40 rows: 0.9x).

Device (``device=auto|cpu|cuda|cuda:N``, ``dtype=fp32|tf32|bf16|fp16``, ``max_tokens``; :mod:`metrics.device`): the
encoder runs where the shared encoder of :mod:`metrics.encoder` runs it (:func:`metrics.encoder.load_encoder` with
the device and dtype). On the CPU everything above holds and the signature is the one without the option. On a GPU
the encoder packs texts into length-sorted padded batches under a token budget (an out-of-memory error halves a
batch), so a text's states depend on its batch-mates in the last float32 bits (about 1e-5, see
:mod:`metrics.device`) and scores agree with the CPU's within a tolerance, not bit for bit; the signature adds
``device:cuda(<GPU name>)``, the dtype and the CUDA version. The transport stays POT's exact EMD on the CPU
(``ot.emd2``, float64 network simplex): it is the only solver that gives the same optimum (POT's GPU path is
Sinkhorn, an entropic approximation, or the same CPU network simplex after a copy back), and with the states in
hand it is a small part of the time (the encoder's forward pass is about 85 % of it on a CPU; on a GPU the states
move back to the CPU once per text, float32, only the last layer).
"""
from __future__ import annotations

import copy
import hashlib
import json
import math
import string
import warnings
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import numpy as np

from meta_eval.metrics import device as placement
from meta_eval.metrics.base import Example, Metric, MetricError, file_sha256, positive_int
from meta_eval.metrics.encoder import (NEURAL_HINT, encoder_ident, load_encoder, model_unavailable_reason,
                                      torch_threads)
from meta_eval.metrics.memo import BytesLRU, on_release
from meta_eval.metrics.model_names import tagged
from meta_eval.metrics.transport import mover_distances
from meta_eval.metrics.registry import register
from meta_eval.metrics.text import STOPWORDS

__all__ = ["MoverScore", "IdfSet", "IdfTable", "idf_weights", "piece_weights", "DEFAULT_MODEL"]

DEFAULT_MODEL = "distilbert-base-uncased"
_PUNCTUATION = frozenset(string.punctuation)
_SIMILARITIES = {"1-emd": lambda d: 1.0 - d, "1/(1+emd)": lambda d: 1.0 / (1.0 + d)}
_STOPWORD_LISTS = {"none": frozenset(), "nltk": STOPWORDS}
_MAX_DISTANCE = 2.0  # between unit vectors


@dataclass(frozen=True)
class IdfTable:
    """Document frequencies of piece ids over ``n_docs`` documents; ``table[id]`` is the IDF weight.

    ``idf(id) = log((n_docs + 1) / (df(id) + 1))``; an id in no document gets ``log(n_docs + 1)``.
    """

    n_docs: int
    doc_freq: Mapping[int, int] = field(default_factory=dict)

    def __getitem__(self, token_id: int) -> float:
        return math.log((self.n_docs + 1) / (self.doc_freq.get(int(token_id), 0) + 1))

    def lookup(self, ids: Iterable[int]) -> np.ndarray:
        """IDF weights of a sequence of ids."""
        return np.array([self[i] for i in ids], dtype=np.float64)


def _table_from_ids(documents: Iterable[Sequence[int]]) -> IdfTable:
    freq: dict[int, int] = {}
    n = 0
    for ids in documents:
        n += 1
        for i in set(int(x) for x in ids):
            freq[i] = freq.get(i, 0) + 1
    return IdfTable(n, freq)


def _document_ids(texts: Sequence[str], tokenizer, max_tokens: int | None) -> list[list[int]]:
    """``[CLS]`` + the first ``max_tokens`` pieces + ``[SEP]`` of every text (one tokenizer call for all)."""
    if not texts:
        return []
    pieces = tokenizer(list(texts), add_special_tokens=False)["input_ids"]
    return [[tokenizer.cls_token_id, *(ids if max_tokens is None else ids[:max_tokens]), tokenizer.sep_token_id]
            for ids in pieces]


def idf_weights(texts: Sequence[str], tokenizer, max_tokens: int | None = None) -> IdfTable:
    """The reference's ``get_idf_dict``: IDF of every piece id over ``texts``, one document each.

    Parameters
    ----------
    texts : sequence of str
        The documents (duplicates count as separate documents).
    tokenizer : transformers tokenizer
        With ``cls_token_id`` and ``sep_token_id``; every document is ``[CLS]`` + its pieces + ``[SEP]``.
    max_tokens : int, optional
        Keep the first ``max_tokens`` pieces of each document (default: ``tokenizer.model_max_length - 2``, as the
        reference's ``truncate``; no limit when the tokenizer declares none).

    Examples
    --------
    >>> from meta_eval.metrics.encoder import load_encoder
    >>> tok = load_encoder("minilm").tokenizer
    >>> table = idf_weights(["the cat", "the dog"], tok)
    >>> round(table[tok.convert_tokens_to_ids("cat")], 4), table[tok.cls_token_id]
    (0.4055, 0.0)
    """
    if max_tokens is None:
        limit = int(getattr(tokenizer, "model_max_length", 0) or 0)
        max_tokens = limit - 2 if 2 < limit < 1_000_000 else None
    return _table_from_ids(_document_ids(list(texts), tokenizer, max_tokens))


@dataclass(frozen=True)
class IdfSet:
    """The documents of ``idf="set"``'s two tables: every reference of every example, and every candidate.

    Parameters
    ----------
    references, candidates : tuple of str
        In example order, duplicates kept (each is one document, as in the reference's parallel lists).
    """

    references: tuple[str, ...]
    candidates: tuple[str, ...]

    @classmethod
    def of(cls, examples: Iterable[Example]) -> IdfSet:
        """The documents of ``examples``; :class:`~metrics.base.MetricError` if one is not an Example."""
        refs: list[str] = []
        cands: list[str] = []
        for i, ex in enumerate(examples):
            if not isinstance(ex, Example):
                raise MetricError(f"example {i} is a {type(ex).__name__}, not a metrics.Example")
            cands.append(ex.candidate)
            refs.extend(ex.references)
        return cls(tuple(refs), tuple(cands))

    def digest(self) -> str:
        """SHA-256 (hex) of the sorted references and the sorted candidates: names the tables' documents exactly,
        independently of the examples' order and of how references pair with candidates."""
        payload = json.dumps([sorted(self.references), sorted(self.candidates)])
        return hashlib.sha256(payload.encode("ascii")).hexdigest()

    def tables(self, tokenizer, max_tokens: int | None) -> tuple[IdfTable, IdfTable]:
        """(references' table, candidates' table), each as :func:`idf_weights` of its list; every distinct text is
        tokenized once (the tokenizer only: no encoder pass)."""
        texts = list(dict.fromkeys(self.references + self.candidates))
        ids = dict(zip(texts, _document_ids(texts, tokenizer, max_tokens)))
        return (_table_from_ids(ids[t] for t in self.references),
                _table_from_ids(ids[t] for t in self.candidates))


def piece_weights(tokens: Sequence[str], input_ids: Sequence[int], special: Sequence[bool], table: IdfTable | None,
                  stopwords: frozenset[str] = frozenset()) -> np.ndarray:
    """Transport weight of every token of one encoded text, before normalisation.

    IDF from ``table`` (1 when ``table`` is None); 0 for pieces containing ``##``, single ASCII punctuation characters
    and ``stopwords``. Special tokens keep their IDF weight (0 in every IDF table, as they occur in every document).
    """
    weights = np.ones(len(tokens)) if table is None else table.lookup(input_ids)
    for k, (tok, is_special) in enumerate(zip(tokens, special)):
        if not is_special and ("##" in tok or tok in _PUNCTUATION or tok in stopwords):
            weights[k] = 0.0
    return weights


def _encoder(model: str, device: str = "cpu", dtype: str = "fp32", max_tokens: int | None = None):
    """The shared encoder for ``model`` on ``device`` in ``dtype``: on the CPU exactly the call of before (the same
    memoised encoder as the contextual movers); elsewhere with the device, dtype and token budget."""
    if device == "cpu":
        return load_encoder(model)
    extra = {} if max_tokens is None else {"max_tokens": max_tokens}
    return load_encoder(model, device=device, dtype=dtype, **extra)


@lru_cache(maxsize=8)
def _corpus_table(path: str, sha: str, model: str, ident: str, max_tokens: int) -> IdfTable:
    """IDF of a corpus file, memoised by its content hash and the encoder's identity (the tokenizer alone: the
    CPU's encoder is loaded, whatever device scores)."""
    encoder = load_encoder(model)
    lines = [line.strip() for line in Path(path).read_text(encoding="utf-8").splitlines()]
    return idf_weights([line for line in lines if line], encoder.tokenizer, max_tokens)


on_release("moverscore", _corpus_table.cache_clear)


@dataclass(frozen=True)
class _Encoded:
    """What MoverScore keeps of one encoded text: its pieces and the last layer's states (float32)."""

    tokens: list[str]
    input_ids: np.ndarray
    special: np.ndarray
    last: np.ndarray  # (n_pieces, dim)


def _embed_unpadded(encoder, texts: list[str], batch_size: int) -> list[_Encoded]:
    """``encoder.embed`` of ``texts``, keeping the last layer only.

    The encoder batches texts of the same number of pieces without padding, so a text's states do not depend on its
    batch-mates (bit for bit), and a score does not depend on which other examples are scored in the same call.
    Only the last layer is taken from each forward pass (``layer=-1``: on a GPU only it crosses to the host), and
    each text's is copied out as soon as its batch is done.
    """
    return encoder.embed(texts, batch_size=batch_size, layer=-1,
                         each=lambda st: _Encoded(st.tokens, st.input_ids, st.special, st.layer(-1).copy()))


class _StateCache(BytesLRU):
    """Encoded reference texts kept between :meth:`MoverScore.score` calls (least recently used first out).

    A reference shared by rows of different runner batches (chaganty: 583 references for 2,085 rows, 256 rows per
    batch) is then encoded once per process instead of once per batch. A text's states do not depend on its batch
    (see :func:`_embed_unpadded`), so a kept state has the bits a fresh encoding would have. Bounded by ``budget``
    bytes of states (default 128 MiB, about 1,000 summaries of 80 pieces with a 384-d encoder).
    """

    def __init__(self, budget: int = 128 << 20) -> None:
        super().__init__(budget, lambda encoded: encoded.last.nbytes)


@register("moverscore")
class MoverScore(Metric):
    """MoverScore (Zhao et al., 2019) as ``moverscore_v2.py`` computes it: 1 - EMD over IDF-weighted unigram pieces.

    Parameters
    ----------
    model : str
        Encoder: ``"distilbert-base-uncased"`` (default, the reference's; needs the Hugging Face cache or hub access),
        ``"minilm"`` (offline MiniLM), another hub name or a local folder; any model but the default is named in the
        variant (``moverscore[minilm]``).
    idf : str
        ``"set"`` (default; IDF over the scored set's references and candidates, separately: the set given to
        :meth:`fit`, else each :meth:`score` call's examples), ``"none"`` (all weights 1) or ``"corpus:<path>"``
        (IDF over a corpus file, one document per line).
    stopwords : {"none", "nltk"}
        Pieces given weight 0 besides continuations and punctuation (the reference's default is none).
    similarity : {"1-emd", "1/(1+emd)"}
        The score computed from the EMD (moverscore 1.0.3, default; or later GitHub versions).
    batch_size : int
        Texts per encoder batch (speed only).
    device : str, optional
        ``auto`` (default, through ``$META_EVAL_DEVICE``: the first CUDA GPU, else the CPU), ``cpu``, ``cuda``,
        ``cuda:N`` (:mod:`metrics.device`).
    dtype : str, optional
        ``fp32`` (default), or on a GPU ``tf32``, ``bf16``, ``fp16``.
    max_tokens : int, optional
        Pieces per padded GPU pass, padding included (default: the encoder's, :data:`metrics.device.TOKEN_BUDGET`).

    Examples
    --------
    >>> from meta_eval.metrics import Example
    >>> m = MoverScore(model="minilm", idf="none")
    >>> s = m.score([Example("A cat sat.", ("A cat sat.",)), Example("A cat sat.", ("The dog ran.",))])
    >>> [round(float(x), 3) for x in s["moverscore[minilm]"]]
    [1.0, -0.095]
    """

    variants = ("moverscore",)
    language_reason = ("its default encoders, DistilBERT and MiniLM, were trained on English; pass -o model=... "
                       "for another language")
    requires = ("torch", "transformers", "ot")
    holds = ("encoder", "moverscore")  # the shared encoder; the corpus IDF tables
    in_quick_run = False
    not_quick_reason = ("a transformer encodes every text (DistilBERT by default; with MiniLM about 160 MT-length "
                        "rows/s per CPU core)")
    parallel = "single"  # one process holds the model (meta_eval.scoring.engines)
    install_hint = NEURAL_HINT
    libraries = ("pot", "numpy", "scipy")
    default_model = DEFAULT_MODEL  # meta-eval metrics lists it
    refs_native = "max"  # the maximum score over the references (see the module notes)
    refs_default = "max"

    def supported_languages(self) -> tuple[str, ...] | None:
        """English with the reference's DistilBERT or the offline MiniLM; not restricted with another model."""
        return ("en",) if self.model in (DEFAULT_MODEL, "minilm") else None

    @classmethod
    def variant_names(cls, model: str | None = None) -> tuple[str, ...]:
        """The variant's name with ``model``: ``moverscore`` with the default DistilBERT, else tagged with the model
        (``moverscore[minilm]``; :func:`metrics.model_names.tagged`)."""
        model = str(model).strip() if model not in (None, "") else DEFAULT_MODEL
        return tagged(cls.name or "moverscore", ("moverscore",), model, DEFAULT_MODEL)

    def __init__(self, model: str = DEFAULT_MODEL, idf: str = "set", stopwords: str = "none",
                 similarity: str = "1-emd", batch_size: int | str = 32, device: str | None = None,
                 dtype: str | None = None, max_tokens: int | str | None = None) -> None:
        self.model = str(model)
        if not self.model.strip():
            raise ValueError("model must be a model name, a local folder or 'minilm'")
        self.variants = self.variant_names(self.model)
        self.idf = str(idf)
        self._corpus: tuple[str, str] | None = None
        if self.idf.startswith("corpus:"):
            path = Path(self.idf[len("corpus:"):]).expanduser()
            if not path.is_file():
                raise ValueError(f"idf corpus file {str(path)!r} not found (idf='corpus:<path>', one text per line)")
            self._corpus = (str(path.resolve()), file_sha256(path))
        elif self.idf == "batch":
            raise ValueError("idf='batch' was replaced by idf='set' (IDF over the whole scored set, the default): "
                             "batch IDF made a score depend on --batch-size, which its cache key did not name")
        elif self.idf not in ("set", "none"):
            raise ValueError(f"unknown idf mode {self.idf!r}; choose set, none or corpus:<path>")
        self._fitted: tuple[IdfSet, str] | None = None  # idf="set": the documents given to fit() and their digest
        self._fit_tables: tuple[IdfTable, IdfTable] | None = None  # their tables, made at the first score()
        if stopwords not in _STOPWORD_LISTS:
            raise ValueError(f"unknown stopwords {stopwords!r}; choose one of {', '.join(_STOPWORD_LISTS)}")
        self.stopwords = stopwords
        if similarity not in _SIMILARITIES:
            raise ValueError(f"unknown similarity {similarity!r}; choose one of {', '.join(_SIMILARITIES)}")
        self.similarity = similarity
        self.batch_size = positive_int(batch_size, "batch_size")
        self.max_tokens = None if max_tokens in (None, "") else positive_int(max_tokens, "max_tokens")
        # kept as given ("auto" resolves where the metric runs: a Ray actor holding a GPU); checked here
        self.device, self.dtype = device, dtype
        self._placement()
        self._states: _StateCache | None = None  # encoded references kept between calls (same model, same bits)

    def _placement(self) -> tuple[str, str]:
        """The resolved (device, dtype): ``cpu`` or ``cuda:N``, and the precision (:mod:`metrics.device`)."""
        device = placement.resolve_device(self.device)
        return device, placement.resolve_dtype(self.dtype, device)

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_states"] = None  # a worker process encodes again rather than receive the kept states
        return state

    @classmethod
    def unavailable_reason(cls, model: str | None = None) -> str | None:
        """Why MoverScore cannot run here with ``model`` (default: the reference's distilbert-base-uncased)."""
        reason = super().unavailable_reason()
        if reason is not None:
            return reason
        model = model or DEFAULT_MODEL
        reason = model_unavailable_reason(model)
        if reason is None:
            return None
        if model == DEFAULT_MODEL:
            return (f"the default model {DEFAULT_MODEL} is not available offline here ({reason}); "
                    "run with --option model=minilm (the offline MiniLM encoder; variant "
                    f"{cls.variant_names('minilm')[0]}) or model=<local folder>")
        return reason

    @property
    def empty_score(self) -> float:
        """The score of a pair with nothing to transport: the similarity of the largest distance, 2."""
        return float(_SIMILARITIES[self.similarity](_MAX_DISTANCE))

    def config(self) -> dict[str, object]:
        if self._corpus is not None:
            idf = f"corpus({Path(self._corpus[0]).name},sha256:{self._corpus[1][:12]})"
        elif self.idf == "set":
            idf = "set(ref,hyp)"
        else:
            idf = "none"
        cfg: dict[str, object] = {"model": encoder_ident(self.model), "layer": "last", "trunc": "max-2", "ngram": 1,
                                  "idf": idf}
        if self.idf == "set":
            if self._fitted is None:
                cfg["fit"] = "per-call"
            else:
                cfg["fit"] = f"set(n:{len(self._fitted[0].candidates)},sha256:{self._fitted[1][:16]})"
        cfg.update({"specials": "idf", "zero": "##+punct", "stop": "none" if self.stopwords == "none" else "nltk179",
                    "norm": "l2", "cost": "euclidean", "emd": "exact", "sim": self.similarity,
                    "empty": f"{self.empty_score:.6g}", "refs": "max"})
        cfg.update(placement.device_config(*self._placement()))  # nothing on the CPU
        return cfg

    def fit(self, examples: Sequence[Example]) -> None:
        """Take ``examples`` as the set whose references and candidates give ``idf="set"``'s two tables.

        The runner calls it with every row of the scored set before it looks up the cache (see
        :meth:`metrics.base.Metric.fit`); the signature then names the set (``fit:set(n:...,sha256:...)``). Cheap:
        the texts are kept and hashed here and tokenized at the first :meth:`score` (tokenizer only, once per set).
        After ``fit`` every ``score`` call uses these tables, whatever examples it is given; ``fit`` again replaces
        them. The other IDF modes ignore it.
        """
        if self.idf != "set":
            return
        docs = IdfSet.of(examples)
        self._fitted = (docs, docs.digest())
        self._fit_tables = None

    def score(self, examples: Sequence[Example]) -> dict[str, np.ndarray]:
        """Score a batch (see :meth:`metrics.base.Metric.score`).

        With ``idf="set"`` and no :meth:`fit`, this call's examples are the set (fitted on a copy, this object is not
        changed), as the reference computes its tables over the lists it is given: the same scores as the runner
        gives when it scores exactly these examples, in one batch or in many.
        """
        if self.idf == "set" and self._fitted is None:
            examples = list(examples)
            fitted = copy.copy(self)
            fitted._states = self._state_cache()  # the copy shares the kept encodings (they do not depend on IDF)
            fitted.fit(examples)
            return fitted.score(examples)
        return super().score(examples)

    def release(self) -> None:
        """Forget the kept encodings of references (rebuilt at the next :meth:`score`)."""
        self._states = None

    def _state_cache(self) -> _StateCache:
        if getattr(self, "_states", None) is None:
            self._states = _StateCache()
        return self._states

    def _tables(self, encoder, examples: list[Example]) -> tuple[IdfTable | None, IdfTable | None]:
        if self.idf == "none":
            return None, None
        if self._corpus is not None:
            table = _corpus_table(self._corpus[0], self._corpus[1], self.model, encoder.ident, encoder.max_length - 2)
            return table, table
        if self._fitted is None:  # _score called without score(): its examples are the set
            return IdfSet.of(examples).tables(encoder.tokenizer, encoder.max_length - 2)
        if self._fit_tables is None:
            self._fit_tables = self._fitted[0].tables(encoder.tokenizer, encoder.max_length - 2)
        return self._fit_tables

    def _score(self, examples: list[Example]) -> dict[str, list[float]]:
        encoder = _encoder(self.model, *self._placement(), self.max_tokens)
        cands = [ex.candidate for ex in examples]
        refs = [r for ex in examples for r in ex.references]
        texts = list(dict.fromkeys(cands + refs))
        cache = self._state_cache()
        states = {t: found for t in texts if (found := cache.get(t)) is not None}
        missing = [t for t in texts if t not in states]
        kept = set(refs)  # references recur across batches; candidates rarely do
        for text, encoded in zip(missing, _embed_unpadded(encoder, missing, self.batch_size)):
            states[text] = encoded
            if text in kept:
                cache.put(text, encoded)
        ref_table, hyp_table = self._tables(encoder, examples)
        stop = _STOPWORD_LISTS[self.stopwords]
        memo: dict[tuple[str, str], tuple[np.ndarray, np.ndarray] | None] = {}
        degenerate: set[str] = set()

        def side(text: str, role: str):
            key = (text, role)
            if key not in memo:
                st = states[text]
                w = piece_weights(st.tokens, st.input_ids, st.special, ref_table if role == "ref" else hyp_table,
                                  stop)
                if not (w[~st.special] > 0).any():
                    content = any(not s and "##" not in t and t not in _PUNCTUATION and t not in stop
                                  for t, s in zip(st.tokens, st.special))
                    if content:  # content pieces, but every one has IDF 0
                        degenerate.add(text)
                    memo[key] = None
                else:
                    keep = w > 0
                    vecs = st.last[keep].astype(np.float64)
                    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True) + 1e-30
                    memo[key] = (w[keep] / w[keep].sum(), vecs)
            return memo[key]

        def problems():  # every (row, reference) pair in order, built as the transport threads need them
            for ex in examples:
                hyp = side(ex.candidate, "hyp")
                for ref in ex.references:
                    other = side(ref, "ref")
                    yield None if hyp is None or other is None else (other[0], other[1], hyp[0], hyp[1])

        to_score = _SIMILARITIES[self.similarity]
        distances = mover_distances(problems(), torch_threads())  # the encoder's threads, idle meanwhile
        scores = []
        for ex in examples:
            best = self.empty_score
            for _, distance in zip(ex.references, distances):
                if distance is not None:
                    best = max(best, float(to_score(distance)))
            scores.append(best)
        next(distances, None)  # runs the pairs' builder to its end: rows without a reference still get side()
        if degenerate:
            warnings.warn(f"moverscore: {len(degenerate)} text(s) of this batch have content, but every piece has "
                          f"IDF 0 (it occurs in every document of the IDF table); they score {self.empty_score:g}. "
                          "IDF over the scored set needs many examples: score (or fit) more examples together, "
                          "or use idf='none' or idf='corpus:<path>'",
                          RuntimeWarning, stacklevel=3)
        return {self.variants[0]: scores}

