"""BERT-LM: fluency as a text's pseudo-perplexity under a masked language model.

Scialom, Lamprier, Piwowarski & Staiano (EMNLP 2019), "Answers Unite! Unsupervised Metrics for Reinforced
Summarization Models", section 2.2: "we propose to consider the perplexity of the generated summary according to the
BERT LM (Devlin et al., 2019) ... we used the publicly available pre-trained English 'base' model". BERT is not a
left-to-right model, so the paper's perplexity is computed here as the *pseudo*-perplexity of Salazar, Liang, Nguyen
& Kirchhoff (ACL 2020), "Masked Language Model Scoring", eq. 2-3: mask each word piece in turn and read the model's
probability of the original piece given all the others.

For a candidate W of N word pieces w_1..w_N:

- PLL(W) = sum_t log P(w_t | W with w_t replaced by [MASK]) (natural log; ``log_softmax`` of the masked position's
  logits over the whole vocabulary, read at the original piece's id);
- pseudo-perplexity PPPL(W) = exp(-PLL(W) / N).

Two metrics share this implementation, because the base class has one orientation flag per metric and the
statistics negate every variant of a lower-is-better metric: one metric with both variants would report one of them
with the wrong sign. Running both costs one pass: the loaded model memoises (PLL, N) per text.

- ``bert-lm`` (higher is better): -log PPPL = PLL / N, the mean log-probability per piece;
- ``bert-lm-ppl`` (lower is better): PPPL itself.

Choices (all in the signature through :meth:`config`):

- model: ``bert-base-uncased`` by default (the paper's English "base" model; the paper does not say cased or uncased),
  loaded with ``AutoModelForMaskedLM`` from the Hugging Face cache (or the hub where it is reachable) or from a local
  folder (``model=<folder>``). With the default the variants keep their plain names (``bert-lm``, ``bert-lm-ppl``); any
  other model is named in them, ``bert-lm[<label>]``, ``bert-lm-ppl[<label>]`` (a hub name by its last path component, a
  folder by its name: :func:`metrics.model_names.tagged`). The checkpoint must carry its masked-LM head: a checkpoint
  whose head weights are missing (they would be randomly initialised) is refused. The offline MiniLM package
  (``model=minilm``) is an encoder without an MLM head and cannot serve. The model's identity (name and cached snapshot,
  or folder and weights fingerprint, plus transformers and torch versions) enters the signature;
- text: the whole candidate is one sequence, as the paper scores "the generated summary" (no sentence splitting;
  Salazar et al. scored single sentences); it is tokenised by the model's own tokenizer (for bert-base-uncased:
  lower-cased, accents stripped, WordPiece), without any other preprocessing; [UNK] pieces are scored like any
  other piece;
- masking: one copy of the sequence per piece, that piece replaced by the tokenizer's mask token, nothing else
  changed (no 80/10/10 corruption); [CLS] and [SEP] are context only, never scored;
- long texts: the model takes at most ``max_length`` positions (min of the tokenizer's ``model_max_length`` and the
  model's ``max_position_embeddings``; 512 for BERT), so the pieces are cut into consecutive, non-overlapping
  windows of ``max_length - 2`` pieces, each wrapped in its own [CLS]/[SEP] and scored with the context of its window
  only; every piece is scored exactly once and N counts all of them;
- empty texts: a candidate with no word piece (empty, whitespace only, or only characters the tokenizer drops) gets
  PPPL = |V|, the vocabulary size, i.e. the pseudo-perplexity of a uniform guess (bert-lm = -log |V|): an empty text
  gives no evidence of fluency, so it scores as a model that knows nothing would. It is a finite, documented value,
  not a minimum: text the model finds implausible can score worse;
- arithmetic: the model runs in float32 in eval mode under ``torch.inference_mode()``; the head is applied only at
  the masked position of each copy; log-probabilities are summed in float64;
- batching: the masked copies of all the texts of a call are sorted by length and run ``batch_size`` copies at a time,
  padded per batch with an attention mask. ``batch_size`` changes the grouping, not the computation (results agree to
  float32 rounding), so it is not part of the signature;
- threads: as :mod:`metrics.encoder`, torch uses ``META_EVAL_TORCH_THREADS`` intra-op threads (default 1);
- device (``device=auto|cpu|cuda|cuda:N``, ``dtype=fp32|tf32|bf16|fp16``, :mod:`metrics.device`): on the CPU the
  path above, unchanged, and the same signature as without the option; on a GPU the model is moved there once, the
  masked copies are packed longest first into padded batches of at most ``max_tokens`` pieces (padding included;
  default :data:`metrics.device.TOKEN_BUDGET`) by :func:`metrics.device.padded_batches`, each pass run under
  :func:`metrics.device.precision` (fp32 with TF32 off unless ``dtype`` says otherwise) and
  :func:`metrics.device.run_with_backoff` (an out-of-memory error halves the batch and retries). Log-probabilities
  are still taken in float32 and summed in float64. The signature then adds ``device:cuda(<GPU name>)``, the dtype
  and the CUDA version (:func:`metrics.device.device_config`): GPU scores never share a cache key with CPU ones.
  On a GPU a copy's logits depend on the other copies of its padded batch in the last float32 bits (about 1e-5
  relative for BERT-sized models, see :mod:`metrics.device`), so GPU scores agree with CPU scores within a
  tolerance, not bit for bit.
"""
from __future__ import annotations

import math
from functools import lru_cache
from typing import Sequence

from meta_eval.metrics import device as placement
from meta_eval.metrics.base import Example, Metric, MetricError, positive_int
from meta_eval.metrics.encoder import (MINILM, NEURAL_HINT, EncoderError, encoder_ident, local_source,
                             model_unavailable_reason, prepare_torch)
from meta_eval.metrics.memo import on_release
from meta_eval.metrics.model_names import tagged
from meta_eval.metrics.placed import Placed
from meta_eval.metrics.registry import register

__all__ = ["BertLM", "BertLMPerplexity", "MaskedLM", "load_masked_lm", "DEFAULT_MODEL"]

DEFAULT_MODEL = "bert-base-uncased"
_MEMO_SIZE = 65_536
_NO_HEAD = ("the offline MiniLM package (model=minilm) is a sentence encoder without a masked-LM head, so it cannot "
            "compute BERT-LM pseudo-perplexity; use bert-base-uncased (download it once where the Hugging Face hub "
            "is reachable) or pass model=<local folder with a masked-LM head>")


def _not_minilm(model: str) -> None:
    if model == MINILM:
        raise MetricError(_NO_HEAD)


class MaskedLM:
    """A masked language model with its tokenizer; use :func:`load_masked_lm` to get the shared instance.

    Attributes
    ----------
    max_length : int
        Positions the model takes, special tokens included.
    vocab_size : int
        Size of the output vocabulary (the pseudo-perplexity of an empty text).
    memo : dict of str to (float, int)
        (PLL, number of pieces) of the texts already scored, bounded to the most recent 65,536 texts.
    """

    def __init__(self, model: str = DEFAULT_MODEL, threads: int | None = None, device: str = "cpu",
                 dtype: str = "fp32") -> None:
        _not_minilm(model)
        self.threads = prepare_torch(threads, NEURAL_HINT)
        self.device, self.dtype = device, dtype
        import transformers

        source = str(local_source(model, "masked LM"))  # a local folder, never the hub (metrics.encoder.local_source)
        try:
            self.tokenizer = transformers.AutoTokenizer.from_pretrained(source)
            self.model, info = transformers.AutoModelForMaskedLM.from_pretrained(source, output_loading_info=True)
        except (OSError, ValueError) as exc:
            reason = model_unavailable_reason(model) or f"{type(exc).__name__}: {exc}"
            raise EncoderError(f"cannot load masked LM {model!r}: {reason}") from None
        absent = sorted(info.get("missing_keys") or ())
        if absent:
            raise EncoderError(f"{model!r} has no complete masked-LM head: the weights {', '.join(absent[:4])}"
                               f"{' ...' if len(absent) > 4 else ''} are missing and would be random; BERT-LM needs "
                               "a checkpoint saved with its MLM head (e.g. bert-base-uncased)")
        for token in ("cls_token_id", "sep_token_id", "mask_token_id", "pad_token_id"):
            if getattr(self.tokenizer, token) is None:
                raise EncoderError(f"the tokenizer of {model!r} has no {token.removesuffix('_id')}")
        self.model.eval()
        if device != "cpu":
            self.model.to(device)
        self.name = model
        self.max_length = int(min(self.tokenizer.model_max_length,
                                  getattr(self.model.config, "max_position_embeddings", 512)))
        if self.max_length < 3:
            raise EncoderError(f"{model!r} takes {self.max_length} positions; it needs at least 3")
        self.vocab_size = int(self.model.config.vocab_size)
        self.memo: dict[str, tuple[float, int]] = {}
        self._positions = None
        self.model.base_model.register_forward_hook(self._keep_masked_position)

    def _keep_masked_position(self, module, args, output):
        """Forward hook on the encoder: keep only each row's masked position, so the MLM head runs on one vector per
        copy instead of the whole sequence (batch x length x vocabulary logits would take gigabytes)."""
        if self._positions is None:
            return output
        rows, cols = self._positions
        hidden = output[0][rows, cols].unsqueeze(1)
        if isinstance(output, tuple):
            return (hidden, *output[1:])
        output[next(iter(output.keys()))] = hidden
        return output

    def windows(self, text: str) -> list[list[int]]:
        """The text's word-piece ids cut into consecutive windows of ``max_length - 2`` (no special tokens)."""
        ids = list(self.tokenizer(text, add_special_tokens=False)["input_ids"])
        room = self.max_length - 2
        return [ids[i:i + room] for i in range(0, len(ids), room)]

    def pseudo_log_likelihoods(self, texts: Sequence[str], batch_size: int = 32,
                               max_tokens: int = placement.TOKEN_BUDGET) -> list[tuple[float, int]]:
        """(PLL, number of pieces) of every text, natural log; (0.0, 0) for a text without pieces.

        Order and ``batch_size`` do not change the results beyond float32 rounding. On a GPU the copies go in padded
        batches of at most ``max_tokens`` pieces (``batch_size`` is the CPU's batch).
        """
        import torch

        todo = [t for t in dict.fromkeys(texts) if t not in self.memo]
        cls, sep = self.tokenizer.cls_token_id, self.tokenizer.sep_token_id
        mask_id, pad = self.tokenizer.mask_token_id, self.tokenizer.pad_token_id
        seqs, owner = [], []
        for t, text in enumerate(todo):
            for piece_ids in self.windows(text):
                seqs.append([cls, *piece_ids, sep])
                owner.append(t)
        copies = [(s, pos) for s, seq in enumerate(seqs) for pos in range(1, len(seq) - 1)]
        copies.sort(key=lambda c: (len(seqs[c[0]]), c))
        pll = [0.0] * len(todo)
        count = [0] * len(todo)

        def forward(batch: list[tuple[int, int]]) -> list[float]:
            width = max(len(seqs[s]) for s, _ in batch)
            ids = torch.full((len(batch), width), pad, dtype=torch.long)
            attention = torch.zeros((len(batch), width), dtype=torch.long)
            for row, (s, pos) in enumerate(batch):
                ids[row, :len(seqs[s])] = torch.tensor(seqs[s])
                attention[row, :len(seqs[s])] = 1
            cols = torch.tensor([pos for _, pos in batch])
            rows = torch.arange(len(batch))
            original = ids[rows, cols].clone()
            ids[rows, cols] = mask_id
            if self.device != "cpu":
                ids, attention, rows, cols, original = (t.to(self.device) for t in (ids, attention, rows, cols,
                                                                                    original))
            self._positions = (rows, cols)
            try:
                logits = self.model(input_ids=ids, attention_mask=attention).logits[:, 0, :]
            finally:
                self._positions = None
            return torch.log_softmax(logits.float(), dim=-1)[rows, original].double().tolist()

        if self.device == "cpu":  # the CPU path as it always was: sorted copies, batch_size at a time
            batches = [copies[start:start + batch_size] for start in range(0, len(copies), batch_size)]
        else:  # longest first, padded, under a token budget; an out-of-memory error halves a batch
            packed = placement.padded_batches([len(seqs[s]) for s, _ in copies], max_tokens)
            batches = [[copies[k] for k in batch] for batch in packed]
        with torch.inference_mode(), placement.precision(self.device, self.dtype):
            for batch in batches:
                if self.device == "cpu":
                    logp = forward(batch)
                else:
                    logp = placement.run_with_backoff(lambda rows: forward([batch[k] for k in rows]),
                                                      list(range(len(batch))), device=self.device,
                                                      size=lambda k: len(seqs[batch[k][0]]))
                for (s, _), lp in zip(batch, logp):
                    pll[owner[s]] += lp
                    count[owner[s]] += 1
        for t, text in enumerate(todo):
            if len(self.memo) >= _MEMO_SIZE:
                del self.memo[next(iter(self.memo))]
            self.memo[text] = (pll[t], count[t])
        return [self.memo[t] for t in texts]


@lru_cache(maxsize=2)
def load_masked_lm(model: str = DEFAULT_MODEL, threads: int | None = None, device: str = "cpu",
                   dtype: str = "fp32") -> MaskedLM:
    """The process-wide masked LM for ``model`` on ``device`` in ``dtype`` (resolved values: ``cpu`` or
    ``cuda:N``; loaded on first use, then shared by ``bert-lm`` and ``bert-lm-ppl``)."""
    return MaskedLM(model, threads, device, dtype)


on_release("bertlm", load_masked_lm.cache_clear)


class _PseudoPerplexity(Placed, Metric):
    needs_references = False
    requires = ("torch", "transformers")
    parallel = "single"  # one process holds the model (meta_eval.scoring.engines)
    holds = ("bertlm",)  # the masked LM and its memo
    in_quick_run = False
    not_quick_reason = "a masked LM runs once per word piece of every text (pseudo-perplexity)"
    install_hint = NEURAL_HINT
    libraries = ("tokenizers",)
    _formula: str = ""  # how the score is derived from PLL and N (part of the signature)
    default_model = DEFAULT_MODEL  # meta-eval metrics lists it

    @classmethod
    def variant_names(cls, model: str | None = None) -> tuple[str, ...]:
        """The variant's name with ``model``: plain with bert-base-uncased (the default, the paper's English base
        BERT), else tagged with the model (``bert-lm[my-mlm]``; :func:`metrics.model_names.tagged`)."""
        model = str(model).strip() if model not in (None, "") else DEFAULT_MODEL
        return tagged(cls.name, (cls.name,), model, DEFAULT_MODEL)

    def __init__(self, model: str = DEFAULT_MODEL, batch_size: int = 32, device: str | None = None,
                 dtype: str | None = None, max_tokens: int = placement.TOKEN_BUDGET) -> None:
        if not isinstance(model, str) or not model.strip():
            raise MetricError(f"model must be a hub name or a local folder, got {model!r}")
        _not_minilm(model.strip())
        self.model = model.strip()
        self.variants = self.variant_names(self.model)
        self.batch_size = positive_int(batch_size, "batch_size")
        self.max_tokens = positive_int(max_tokens, "max_tokens")
        # kept as given ("auto" resolves where the metric runs: a Ray actor holding a GPU); checked here
        self.device, self.dtype = device, dtype
        self._placement()

    @classmethod
    def unavailable_reason(cls, model: str = DEFAULT_MODEL) -> str | None:
        """None if ``model`` (default bert-base-uncased) can load here, else why not and how to fix it."""
        reason = super().unavailable_reason()
        if reason is not None:
            return reason
        if model == MINILM:
            return _NO_HEAD
        if model_unavailable_reason(model) is None:
            return None
        return (f"model {model!r} (a masked LM with its MLM head) is neither a local folder nor in the Hugging Face "
                "cache (this machine may have no hub access); download it once where the hub is reachable, or pass "
                "--option model=<local folder with a masked-LM head>; the offline MiniLM package cannot serve: it has "
                "no MLM head")

    def config(self) -> dict[str, object]:
        return {"model": encoder_ident(self.model), "lm": "mlm-pll", "mask": "each-piece", "text": "whole",
                "long": "windows(max_len-2)+cls/sep", "empty": "ppl=vocab-size", "score": self._formula,
                **placement.device_config(*self._placement())}

    def _value(self, pll: float, pieces: int, vocab_size: int) -> float:
        raise NotImplementedError

    def _score(self, examples: list[Example]) -> dict[str, list[float]]:
        lm = load_masked_lm(self.model, None, *self._placement())
        stats = lm.pseudo_log_likelihoods([ex.candidate for ex in examples], self.batch_size, self.max_tokens)
        return {self.variants[0]: [self._value(pll, n, lm.vocab_size) for pll, n in stats]}


@register("bert-lm")
class BertLM(_PseudoPerplexity):
    """BERT-LM fluency: mean log-probability per word piece under a masked LM, -log pseudo-perplexity (Scialom et al.
    2019; Salazar et al. 2020). Higher is better; reference-free.

    Parameters
    ----------
    model : str
        A masked LM with its head: a hub name (default ``bert-base-uncased``, from the Hugging Face cache) or a local
        folder. ``minilm`` is refused: it has no MLM head.
    batch_size : int
        Masked copies per forward pass on the CPU (default 32); does not change the scores.
    device : str, optional
        ``auto`` (default, through ``$META_EVAL_DEVICE``: the first CUDA GPU, else the CPU), ``cpu``, ``cuda``,
        ``cuda:N`` (:mod:`metrics.device`).
    dtype : str, optional
        ``fp32`` (default), or on a GPU ``tf32``, ``bf16``, ``fp16``.
    max_tokens : int
        Pieces per padded GPU pass, padding included (default :data:`metrics.device.TOKEN_BUDGET`).

    Examples
    --------
    >>> from meta_eval.metrics import Example, create
    >>> metric = create("bert-lm")
    >>> metric.config()["score"]
    'pll/n'
    >>> metric.score([Example("The cat sat on the mat.")])["bert-lm"]  # doctest: +SKIP
    array([-1.9...])
    """

    higher_is_better = True
    _formula = "pll/n"

    def _value(self, pll: float, pieces: int, vocab_size: int) -> float:
        return pll / pieces if pieces else -math.log(vocab_size)


@register("bert-lm-ppl")
class BertLMPerplexity(_PseudoPerplexity):
    """BERT-LM pseudo-perplexity exp(-PLL / N) under a masked LM (Scialom et al. 2019; Salazar et al. 2020). Lower is
    better; reference-free. Same computation as :class:`BertLM` (shared per process), reported as a perplexity.

    Parameters as :class:`BertLM`.

    Examples
    --------
    >>> from meta_eval.metrics import Example, create
    >>> create("bert-lm-ppl").higher_is_better
    False
    >>> create("bert-lm-ppl").score([Example("")])["bert-lm-ppl"]  # doctest: +SKIP
    array([30522.])
    """

    higher_is_better = False
    _formula = "exp(-pll/n)"

    def _value(self, pll: float, pieces: int, vocab_size: int) -> float:
        return math.exp(-pll / pieces) if pieces else float(vocab_size)
