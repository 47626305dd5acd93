"""WMS, SMS and S+WMS on contextual word vectors: the contextual-embedding column of Clark, Celikyilmaz & Smith (ACL
2019), with a transformers encoder in place of ELMo.

The paper's reference code (``eaclark07/sms``, ``smd.py``, ``WORD_REP="elmo"``) splits a text into sentences, embeds
each sentence alone with ELMo, averages ELMo's layers into one vector per word, then drops the words that are not
alphabetic or are stopwords (after embedding, so they still gave context), and gives every remaining word occurrence
its own type. Here, every choice:

- sentences: :func:`metrics.text.split_sentences` (untrained Punkt, as the GloVe metrics); each sentence is encoded
  alone, as the reference encodes each sentence alone with ELMo: a word's context is its sentence, and every sentence
  fits the encoder (a sentence longer than the model's maximum length keeps its first pieces, ``long="truncate"``);
- words: the encoder tokenizer's words (``word_ids`` of a fast tokenizer: split on whitespace and punctuation, like
  the ``wordpunct`` tokenizer of the GloVe metrics); a word's text is its pieces joined back
  (``convert_tokens_to_string``; lower-cased and accent-stripped by uncased tokenizers) and its vector is the mean of
  its pieces' vectors; ``[CLS]``/``[SEP]`` are never words;
- layer: ``layer="mean"`` (default) averages the transformer layers (``hidden_states[1:]``), as the paper averaged
  ELMo's layers; ``"all"`` also averages the embedding layer's output (closest to ELMo's average, which included its
  context-independent layer 0); an int picks one entry of ``hidden_states`` (0 = embedding layer, -1 = last);
- filter, after embedding, on the whole word: kept if alphabetic (``str.isalpha``) and, lower-cased, not one of the
  179 NLTK English stopwords (:data:`metrics.text.STOPWORDS`), the filter of :mod:`metrics.text`; a word the
  tokenizer maps to ``[UNK]`` is not alphabetic and is dropped;
- types: every kept word occurrence is its own type with count 1 (the reference gives contextual vectors new ids
  rather than merging equal words); a sentence is the mean of its kept words' vectors, weighted by their number;
  sentences without a kept word are dropped;
- weights, cost, transport, similarity, references: as the GloVe metrics of :mod:`metrics.mover` (shared code):
  WMS weights 1/|A| per word, SMS |s|/|A| per sentence, S+WMS both over 2|A|; Euclidean cost; exact EMD
  (``ot.emd2``); similarity exp(-distance), 1 for identical texts; the maximum over several references (the
  default; ``refs=mean|first|jackknife`` chooses another policy, see :class:`metrics.base.Metric`). The vectors
  are not normalised (neither were ELMo's): with MiniLM, distances between chaganty summaries are 6 to 12 for WMS
  and 3.5 to 6.5 for SMS, so scores are small (exp(-12) to exp(-3.5)); rank correlations do not mind, Pearson's r
  weighs the few large ones;
- empty: a candidate or reference with no kept word (empty, blank, only stopwords, punctuation or digits) scores 0.0,
  as in :mod:`metrics.mover`; :meth:`degenerate` names such rows for ``meta-eval run``'s count;
- unknown words: unlike GloVe, the encoder gives every kept word a vector (a made-up word such as ``zzqx`` is split
  into known word pieces whose states are averaged; a word the tokenizer maps to ``[UNK]`` is not alphabetic and is
  dropped, so it falls under "empty"), so the GloVe metrics' "no known word" case (``unknown:0``) cannot arise and
  two texts of made-up words get a measured score below 1, never a free perfect match.

Device (``device=``, ``dtype=``; :mod:`metrics.device`, through the shared encoder of :mod:`metrics.encoder`): on
the CPU (the default where torch sees no CUDA GPU) everything above holds and the signature gains nothing; on a CUDA
GPU the encoder runs length-sorted padded batches there (a sentence's states then depend on its batch in the last
bits, see :mod:`metrics.encoder`), the transport stays on the CPU, and the signature adds the GPU's name, the dtype
and the CUDA version. Either way the pairs of a call are solved on the encoder's torch threads, idle by then
(:func:`metrics.transport.mover_distances`: each pair alone on one thread, the same bits as one after the other).

The kept word vectors of a sentence are memoised per process, keyed by the encoder's identity (with the device and
dtype on a GPU), the layer and the sentence (at most 256 MB, least recently used out first), so the three metrics on
the same texts encode every sentence once. On all 2,085 chaganty rows with MiniLM (one CPU thread) SMS took 60 s,
then WMS and S+WMS 2 s each.

ELMo itself is not supported: the reference loads it through ``allennlp``, which pins torch < 1.13 and does not
install with the torch 2.x of the neural extra, and ELMo's weights are not installable offline (no package on PyPI
carries them); ``transformers`` cannot load ELMo at all. Faking it with another encoder under ELMo's name would
misreport results, so the encoder is always named in the signature, and in the variant's name: since no model
these metrics can load is the paper's, every variant carries its model's label (:func:`metrics.model_names.tagged`):
``wms-ctx[minilm]``, ``sms-ctx[minilm]``, ``s+wms-ctx[minilm]`` with the default, ``wms-ctx[bert-base-uncased]``
with ``model=bert-base-uncased`` (a hub name by its last path component, a folder by its name). The default stays
the offline MiniLM (decision of issue #37): no encoder is closer to the paper's ELMo than another, and MiniLM
installs offline, so the metrics run everywhere; the bracket tells every reader it is not the paper's ELMo column.
"""
from __future__ import annotations

from typing import ClassVar

import numpy as np

from meta_eval.metrics.base import Example, Metric, MetricError, positive_int
from meta_eval.metrics.device import device_config, resolve_device, resolve_dtype
from meta_eval.metrics.model_names import tagged
from meta_eval.metrics.encoder import (MINILM, NEURAL_HINT, TokenStates, check_layer, encoder_ident, load_encoder,
                                      model_unavailable_reason, torch_threads)
from meta_eval.metrics.memo import BytesLRU, on_release, return_free_memory
from meta_eval.metrics.mover import _Bags, _distribution
from meta_eval.metrics.transport import mover_distances
from meta_eval.metrics.registry import register
from meta_eval.metrics.text import STOPWORDS, split_sentences

__all__ = ["ContextualWordMoversSimilarity", "ContextualSentenceMoversSimilarity",
           "ContextualSentenceWordMoversSimilarity", "sentence_word_vectors"]

_CACHE_BYTES = 256 << 20
_cache: BytesLRU[np.ndarray] = BytesLRU(_CACHE_BYTES, lambda a: a.nbytes)  # (model, layer, sentence)
on_release("encoder", _cache.clear)


def _parse_layer(layer: int | str) -> int | str:
    if layer in ("mean", "all"):
        return layer
    try:
        return int(layer)
    except (TypeError, ValueError):
        raise ValueError(f"layer must be 'mean', 'all' or an integer index into the hidden states, got {layer!r}") \
            from None


def sentence_word_vectors(states: TokenStates, layer: int | str, tokenizer,
                          words: dict[tuple[str, ...], bool] | None = None) -> np.ndarray:
    """Vectors of the kept words of one encoded sentence, shape (n_kept, dim), float32.

    A word's vector is the mean of its pieces' vectors in ``layer``; a word is kept if its text is alphabetic and,
    lower-cased, not a stopword. ``words``: a memo of that decision per word's pieces, shared by the sentences of a
    call (a word's text depends on its pieces only; chaganty's 9,046 sentences hold about 155,000 words, and asking
    the tokenizer's decoder for each cost more than the GPU's forward passes, issue #37). A word of one piece takes
    that piece's row as is, which is what the mean of one row gives, bit for bit.
    """
    if states.held is None:
        try:
            check_layer(layer, states.hidden.shape[0])
        except ValueError as exc:
            raise MetricError(str(exc)) from None
    vectors = states.layer(layer)  # the same bits whether the encoder pooled it (layer=) or it is pooled here
    if words is None:
        words = {}
    groups: dict[int, list[int]] = {}
    for k, word in enumerate(states.word_ids):
        if word is not None:
            groups.setdefault(word, []).append(k)
    kept = []
    for pieces in groups.values():
        key = tuple(states.tokens[k] for k in pieces)
        keep = words.get(key)
        if keep is None:
            text = tokenizer.convert_tokens_to_string(list(key)).strip()
            keep = words[key] = text.isalpha() and text.lower() not in STOPWORDS
        if keep:
            kept.append(vectors[pieces[0]] if len(pieces) == 1 else vectors[pieces].mean(axis=0))
    if not kept:
        return np.zeros((0, vectors.shape[1]), dtype=np.float32)
    return np.asarray(kept, dtype=np.float32)


class _ContextualMover(Metric):
    kind: ClassVar[str] = ""
    language_reason = "the default encoder, MiniLM, was trained on English; pass -o model=... for another language"
    requires = ("torch", "transformers", "ot")
    parallel = "single"  # one process holds the model (meta_eval.scoring.engines)
    holds = ("encoder",)  # the shared encoder and the sentence memo
    in_quick_run = False
    not_quick_reason = ("a transformer encodes every sentence (MiniLM by default, shared by the three contextual "
                        "movers: 31-37 s for chaganty's 9,046 sentences on 2 CPU cores)")
    install_hint = NEURAL_HINT
    libraries = ("pot", "nltk", "numpy", "scipy")
    refs_native = "max"  # _score keeps the best similarity over the references (refs:max, the default)
    refs_default = "max"
    default_model = MINILM  # meta-eval metrics lists it; the paper's ELMo cannot be loaded (module notes)

    @classmethod
    def variant_names(cls, model: str | None = None) -> tuple[str, ...]:
        """The variant's name with ``model`` (default MiniLM): always tagged with the model, as none of them is
        the paper's ELMo (``wms-ctx[minilm]``; :func:`metrics.model_names.tagged`)."""
        return tagged(cls.name, (cls.name,), str(model).strip() if model not in (None, "") else MINILM, None)

    def supported_languages(self) -> tuple[str, ...] | None:
        """English with the default MiniLM encoder (and the English stopwords and splitter); else not restricted."""
        return ("en",) if self.model in (MINILM, "minilm") else None

    def __init__(self, model: str = MINILM, layer: int | str = "mean", batch_size: int | str = 32,
                 device: str | None = None, dtype: str | None = None) -> None:
        self.model = str(model)
        if not self.model.strip():
            raise ValueError("model must be a model name, a local folder or 'minilm'")
        self.variants = self.variant_names(self.model)
        self.layer = _parse_layer(layer)
        self.batch_size = positive_int(batch_size, "batch_size")
        self.device = resolve_device(device)
        self.dtype = resolve_dtype(dtype, self.device)

    @classmethod
    def unavailable_reason(cls, model: str | None = None) -> str | None:
        """Why the metric cannot run here with ``model`` (default: the offline MiniLM)."""
        return super().unavailable_reason() or model_unavailable_reason(model or MINILM)

    def config(self) -> dict[str, object]:
        layer = {"mean": "mean(1..L)", "all": "mean(0..L)"}.get(self.layer, self.layer)  # type: ignore[arg-type]
        return {"model": encoder_ident(self.model), "layer": layer, "ctx": "sentence", "trunc": "max-2",
                "words": "tokenizer-words", "pool": "mean-pieces", "sent": "punkt-untrained", "stop": "nltk179",
                "filter": "alpha-after-embedding", "types": "per-token", "cost": "euclidean", "emd": "exact",
                "sim": "exp(-d)", "empty": "0", "refs": "max", **device_config(self.device, self.dtype)}

    def _sentence_vectors(self, sentences: list[str]) -> dict[str, np.ndarray]:
        ident = encoder_ident(self.model)  # keys the memo: a changed local model is a different encoder
        if self.device != "cpu":
            ident += f"|{self.device}|{self.dtype}"
        out: dict[str, np.ndarray] = {}
        todo = []
        for s in sentences:
            hit = _cache.get((ident, self.layer, s))
            if hit is None:
                todo.append(s)
            else:
                out[s] = hit
        if todo:
            encoder = load_encoder(self.model, device=self.device, dtype=self.dtype)
            try:
                check_layer(self.layer, encoder.n_states)
            except ValueError as exc:
                raise MetricError(str(exc)) from None
            words: dict[tuple[str, ...], bool] = {}  # which words are kept, by their pieces: for this call
            kept = encoder.embed(todo, batch_size=self.batch_size, layer=self.layer, each=lambda states:
                                 sentence_word_vectors(states, self.layer, encoder.tokenizer, words))
            for s, vectors in zip(todo, kept):
                out[s] = vectors
                _cache.put((ident, self.layer, s), vectors)
        return out

    def _bags(self, text: str, vectors: dict[str, np.ndarray]) -> _Bags | None:
        words = [vectors[s] for s in split_sentences(text)]
        words = [w.astype(np.float64) for w in words if len(w)]
        if not words:
            return None
        all_words = np.vstack(words)
        return _Bags(all_words, np.ones(len(all_words)), np.array([w.mean(axis=0) for w in words]),
                     np.array([len(w) for w in words], dtype=np.float64))

    def degenerate(self, examples, scores=None) -> list[str | None]:
        """Per example, why its similarity is the documented 0.0 rather than a measurement, else None.

        A row is degenerate when its candidate has no kept word, or when every reference its policy reads (the first
        one for ``refs=first``, else all) has none. With ``scores`` (this metric's scores of ``examples``), only rows
        scored exactly 0.0 are examined (exp(-distance) > 0 for every measured row), so usually nothing is encoded.
        """
        examples = list(examples)
        out: list[str | None] = [None] * len(examples)
        if scores is None:
            rows = list(range(len(examples)))
        else:
            rows = np.flatnonzero(np.asarray(scores[self.variants[0]], dtype=np.float64) == 0.0).tolist()
        if not rows:
            return out
        first_only = self.refs_policy == "first"
        refs_of = {i: examples[i].references[:1] if first_only else examples[i].references for i in rows}
        texts = list(dict.fromkeys(t for i in rows for t in (examples[i].candidate, *refs_of[i])))
        vectors = self._sentence_vectors(list(dict.fromkeys(s for t in texts for s in split_sentences(t))))
        empty = {t for t in texts if self._bags(t, vectors) is None}
        for i in rows:
            refs = refs_of[i]
            if examples[i].candidate in empty:
                out[i] = "no kept word in the candidate (scored 0.0)"
            elif refs and all(r in empty for r in refs):
                out[i] = f"no kept word in {'the reference' if len(refs) == 1 else 'any reference'} (scored 0.0)"
        return out

    def _score(self, examples: list[Example]) -> dict[str, list[float]]:
        texts = list(dict.fromkeys([ex.candidate for ex in examples] + [r for ex in examples for r in ex.references]))
        sentences = list(dict.fromkeys(s for t in texts for s in split_sentences(t)))
        vectors = self._sentence_vectors(sentences)

        def distribution(text: str):
            bags = self._bags(text, vectors)
            return None if bags is None else _distribution(bags, self.kind)

        # the references' float64 bags are kept for the call (shared by rows), a candidate's only while its pairs are
        # with the threads (a few rows), and the freed heap is handed back after the call: the working set is one
        # batch's references, not all texts
        refs = {r: distribution(r) for ex in examples for r in ex.references}

        def problems():  # every (row, reference) pair in order, a candidate's bags built as the threads need them
            for ex in examples:
                cand = distribution(ex.candidate)
                for ref in ex.references:
                    other = refs[ref]
                    yield None if cand is None or other is None else (cand[1], cand[0], other[1], other[0])

        distances = mover_distances(problems(), torch_threads())  # the encoder's threads, idle meanwhile
        scores = []
        for ex in examples:
            best = 0.0
            for _, distance in zip(ex.references, distances):
                if distance is not None:
                    best = max(best, float(np.exp(-distance)))
            scores.append(best)
        distances.close()  # rows without a reference may leave the pairs' builder unfinished
        refs.clear()
        vectors.clear()
        return_free_memory()
        return {self.variants[0]: scores}


@register("wms-ctx")
class ContextualWordMoversSimilarity(_ContextualMover):
    """Word Mover's Similarity on contextual word vectors, every word occurrence its own type (Clark et al. 2019).

    Parameters
    ----------
    model : str
        ``"minilm"`` (default, offline), a hub name or a local folder (see :mod:`metrics.encoder`).
    layer : {"mean", "all"} or int
        ``"mean"`` of the transformer layers (default), ``"all"`` including the embedding layer, or one index.
    batch_size : int
        Sentences per encoder batch (speed only).
    device, dtype : str, optional
        ``auto`` (default: ``$META_EVAL_DEVICE``, else the first CUDA GPU, else the CPU), ``cpu``, ``cuda``,
        ``cuda:N``; ``fp32`` (default: ``$META_EVAL_DTYPE``, else fp32), ``tf32``, ``bf16``, ``fp16`` (CUDA only).

    Examples
    --------
    >>> from meta_eval.metrics import Example
    >>> m = ContextualWordMoversSimilarity()
    >>> s = m.score([Example("A cat sat.", ("A cat sat.",)), Example("A cat sat.", ("The dog ran.",))])
    >>> [f"{x:.2e}" for x in s["wms-ctx[minilm]"]]   # unnormalised MiniLM states lie far apart: exp(-12.3)
    ['1.00e+00', '4.77e-06']
    """

    kind = "wms"
    variants = ("wms-ctx[minilm]",)  # the default model's name (variant_names)


@register("sms-ctx")
class ContextualSentenceMoversSimilarity(_ContextualMover):
    """Sentence Mover's Similarity on contextual word vectors (Clark et al. 2019); parameters as ``wms-ctx``."""

    kind = "sms"
    variants = ("sms-ctx[minilm]",)


@register("s+wms-ctx")
class ContextualSentenceWordMoversSimilarity(_ContextualMover):
    """S+WMS on contextual word vectors (Clark et al. 2019); parameters as ``wms-ctx``."""

    kind = "s+wms"
    variants = ("s+wms-ctx[minilm]",)
