"""Where and in what precision the torch-backed metrics compute: the ``device`` and ``dtype`` options (issue #37).

Why: every neural metric used to run on the CPU only. Measured on a lent NVIDIA H200 (torch 2.11, CUDA 13), encoding
chaganty's 2,681 texts (198k tokens) with MiniLM-L6 took 6.9 s on the same machine's 16 CPU cores and 0.31 s on the
GPU in fp32 (22.6x); a roberta-large-shaped encoder took 3.1 s in fp32, 0.77 s in TF32 and 1.2 s under bf16 autocast.

What this module gives the metrics (pure Python at import: torch is imported inside the functions that need it):

- :func:`resolve_device`: ``auto`` (the first CUDA GPU torch sees, else the CPU), ``cpu``, ``cuda`` (= ``cuda:0``),
  ``cuda:N``; nothing given reads ``$META_EVAL_DEVICE``, then ``auto``. The result is ``"cpu"`` or ``"cuda:N"``.
- :func:`resolve_dtype`: ``fp32`` (default; TF32 off), ``tf32``, ``bf16``, ``fp16`` (opt-in, CUDA only); nothing
  given reads ``$META_EVAL_DTYPE``, then ``fp32``. On the CPU only fp32 is accepted.
- :func:`device_config`: what the signature adds: nothing on the CPU (so a CPU signature, hence its cache entries,
  stay exactly as they were), and on a GPU ``device=cuda(<GPU name>)``, the dtype and the CUDA version (torch's
  version is already in the encoder's identity), so a CPU run is never served GPU scores, nor the reverse.
- :func:`precision`: the context the forward passes run in: TF32 flags off (fp32, bf16, fp16) or on (tf32), restored
  afterwards, and ``torch.autocast`` to bfloat16/float16 for bf16/fp16; a no-op on the CPU.
- :func:`padded_batches`: length-sorted batches under a token budget (:data:`TOKEN_BUDGET` pieces per pass, padding
  included). On a GPU a text's states depend on the other texts of its padded batch in the last bits (2.6e-6 for
  MiniLM, 1.2e-5 for a roberta-large shape), while GPU fp32 is bit-identical run to run for the same batches; the
  exact-length groups that give bit-identity on a CPU bought nothing there and cost 2.4x on chaganty.
- :func:`run_with_backoff`: an out-of-memory error halves the batch and retries (never a crash); a single text that
  does not fit is a clear :class:`~metrics.base.MetricError`.

Numbers from the issue: GPU fp32 vs CPU fp32, states within 6e-7 relative and greedy-matching F1 within 1.5e-7; TF32
F1 within 2e-5; bf16 F1 within 2e-4 (SummEval's relevance Spearman moved 7e-5).

>>> padded_batches([3, 9, 4, 9, 1], max_tokens=20)
[[1, 3], [2, 0, 4]]
>>> resolve_dtype(None, "cpu")
'fp32'
"""
from __future__ import annotations

import contextlib
import os
import re
from typing import Callable, Iterator, Sequence

__all__ = ["CPU_INSTALL", "CUDA_INSTALL", "DEVICE_CHOICES", "DTYPES", "TOKEN_BUDGET", "install_hint", "resolve_device",
           "resolve_dtype", "device_config", "precision", "padded_batches", "run_with_backoff", "is_oom"]

#: torch's two builds, as the README gives them: the CPU build (~200 MB) and, on Linux, PyPI's CUDA build
CPU_INSTALL = "pip install torch --index-url https://download.pytorch.org/whl/cpu"
CUDA_INSTALL = "pip install torch"


def install_hint(extra: str) -> str:
    """How to get a torch-backed metric: torch first (either build), then meta-eval's ``extra``.

    >>> install_hint("neural")[-36:]
    "then pip install 'meta-eval[neural]'"
    """
    return (f"install torch first, the CPU build ({CPU_INSTALL}) or the CUDA build on Linux ({CUDA_INSTALL}); "
            f"then pip install 'meta-eval[{extra}]'")


#: the values ``device`` accepts (``cuda:N``: any GPU index torch sees)
DEVICE_CHOICES = ("auto", "cpu", "cuda", "cuda:N")
#: the values ``dtype`` accepts: fp32 (TF32 off, the default), tf32, bf16 and fp16 (autocast); CUDA only but fp32
DTYPES = ("fp32", "tf32", "bf16", "fp16")
#: pieces per GPU pass, padding included (256 texts of 512 pieces); the option ``max_tokens`` overrides it
TOKEN_BUDGET = 256 * 512

DEVICE_ENV = "META_EVAL_DEVICE"
DTYPE_ENV = "META_EVAL_DTYPE"
_CUDA_N = re.compile(r"cuda:(\d+)")


def _error(message: str) -> Exception:
    from meta_eval.metrics.base import MetricError  # base imports numpy: not at this module's import

    return MetricError(message)


def _cuda_count() -> int:
    """How many CUDA GPUs torch sees: 0 without torch, and 0 for a torch built without CUDA, read from its
    ``version.py`` without importing torch (so ``auto`` costs nothing on a CPU-only install); else torch's count."""
    import importlib.util
    import sys

    if "torch" not in sys.modules:
        spec = importlib.util.find_spec("torch")
        if spec is None or not spec.submodule_search_locations:
            return 0
        try:
            with open(os.path.join(list(spec.submodule_search_locations)[0], "version.py"), encoding="utf-8") as fh:
                built = fh.read()
        except OSError:
            built = ""
        if re.search(r"^cuda(: *Optional\[str\])? *= *None *$", built, re.MULTILINE):
            return 0
    import torch

    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def resolve_device(spec: str | None = None) -> str:
    """``"cpu"`` or ``"cuda:N"`` for ``spec`` (see :data:`DEVICE_CHOICES`); None or "" reads ``$META_EVAL_DEVICE``,
    then ``auto``. A value that is not a device, or CUDA asked where torch sees no GPU: :class:`MetricError` naming
    the value and what is available."""
    source = "device"
    if spec is None or str(spec).strip() == "":
        spec = os.environ.get(DEVICE_ENV, "").strip() or "auto"
        source = f"--device/${DEVICE_ENV}" if os.environ.get(DEVICE_ENV, "").strip() else "device"
    value = str(spec).strip().lower()
    if value == "cpu":
        return "cpu"
    if value not in ("auto", "cuda") and not _CUDA_N.fullmatch(value):
        raise _error(f"{source}={spec!r} is not a device; choose one of {', '.join(DEVICE_CHOICES)}")
    count = _cuda_count()
    if value == "auto":
        return "cuda:0" if count else "cpu"
    if not count:
        raise _error(f"{source}={spec!r} asks for a CUDA GPU, but torch sees none here (torch without CUDA, no "
                     f"driver, or CUDA_VISIBLE_DEVICES empty); use device=cpu or device=auto")
    index = 0 if value == "cuda" else int(_CUDA_N.fullmatch(value).group(1))
    if index >= count:
        raise _error(f"{source}={spec!r}: torch sees {count} CUDA GPU(s) here (cuda:0 to cuda:{count - 1})")
    return f"cuda:{index}"


def resolve_dtype(spec: str | None, device: str) -> str:
    """The precision for ``spec`` on ``device`` (a resolved device): None or "" reads ``$META_EVAL_DTYPE``, then
    ``fp32``; one of :data:`DTYPES`; anything but fp32 on the CPU is a :class:`MetricError`."""
    source = "dtype"
    if spec is None or str(spec).strip() == "":
        env = os.environ.get(DTYPE_ENV, "").strip()
        spec, source = (env, f"--dtype/${DTYPE_ENV}") if env else ("fp32", "dtype")
    value = str(spec).strip().lower()
    if value not in DTYPES:
        raise _error(f"{source}={spec!r} is not a precision; choose one of {', '.join(DTYPES)}")
    if value != "fp32" and not str(device).startswith("cuda"):
        raise _error(f"{source}={spec!r} needs a CUDA GPU; on the CPU (device={device}) only fp32 is accepted")
    return value


def device_config(device: str, dtype: str) -> dict[str, str]:
    """What a metric's configuration (hence signature and cache key) adds for ``device`` and ``dtype``: ``{}`` on
    the CPU (signatures as they were), else ``{"device": "cuda(<GPU name>)", "dtype": ..., "cuda": <version>}``."""
    if not str(device).startswith("cuda"):
        return {}
    import torch

    return {"device": f"cuda({torch.cuda.get_device_name(torch.device(device))})", "dtype": dtype,
            "cuda": str(torch.version.cuda)}


@contextlib.contextmanager
def precision(device: str, dtype: str) -> Iterator[None]:
    """The context of a metric's forward passes on ``device`` in ``dtype``: on CUDA, TF32 matmul and cuDNN flags off
    (on for tf32), restored on exit, and autocast to bfloat16/float16 for bf16/fp16; on the CPU nothing."""
    if not str(device).startswith("cuda"):
        yield
        return
    import torch

    matmul, cudnn = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = dtype == "tf32"
    try:
        if dtype in ("bf16", "fp16"):
            with torch.autocast("cuda", dtype=torch.bfloat16 if dtype == "bf16" else torch.float16):
                yield
        else:
            yield
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = matmul, cudnn


def padded_batches(lengths: Sequence[int], max_tokens: int, max_texts: int | None = None) -> list[list[int]]:
    """Indices into ``lengths`` sorted by length, longest first (ties in input order), packed greedily into batches
    whose padded size ``len(batch) * max(length in batch)`` is at most ``max_tokens`` and that hold at most
    ``max_texts`` texts; a text longer than ``max_tokens`` gets a batch of its own.

    >>> padded_batches([2, 2, 2, 2], max_tokens=8, max_texts=3)
    [[0, 1, 2], [3]]
    """
    if max_tokens < 1:
        raise ValueError(f"max_tokens must be >= 1, got {max_tokens}")
    if max_texts is not None and max_texts < 1:
        raise ValueError(f"max_texts must be >= 1, got {max_texts}")
    order = sorted(range(len(lengths)), key=lambda i: -int(lengths[i]))
    batches: list[list[int]] = []
    current: list[int] = []
    for i in order:
        # sorted longest first: the batch's padded length is its first text's
        width = int(lengths[current[0]]) if current else int(lengths[i])
        if current and ((len(current) + 1) * max(width, 1) > max_tokens
                        or (max_texts is not None and len(current) >= max_texts)):
            batches.append(current)
            current = []
        current.append(i)
    if current:
        batches.append(current)
    return batches


def is_oom(exc: BaseException) -> bool:
    """Whether ``exc`` is an out-of-memory error: ``torch.cuda.OutOfMemoryError``, or a RuntimeError saying
    "out of memory" (older torch, cuBLAS/cuDNN allocation failures)."""
    try:
        import torch

        if isinstance(exc, torch.cuda.OutOfMemoryError):
            return True
    except (ImportError, AttributeError):
        pass
    return isinstance(exc, RuntimeError) and "out of memory" in str(exc).lower()


def _empty_cache() -> None:
    try:
        import torch
    except ImportError:
        return
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def run_with_backoff(fn: Callable[[list[int]], list], batch: list[int], *,
                     on_oom: Callable[[list[int], str], None] | None = None,
                     device: str = "the GPU", size: Callable[[int], int] | None = None) -> list:
    """``fn(batch)`` (a list with one result per index, in order); on an out-of-memory error (:func:`is_oom`) the
    CUDA cache is emptied, ``on_oom(batch, message)`` called if given (the error's first line), and each half of the batch run the same way, the
    results concatenated in batch order. A one-text batch that runs out of memory is a :class:`MetricError` (its
    size in pieces is ``size(index)`` where given)."""
    try:
        return list(fn(batch))
    except Exception as exc:
        if not is_oom(exc):
            raise
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    _empty_cache()  # outside the except block: the traceback no longer holds the failed pass's tensors
    if on_oom is not None:
        on_oom(batch, message)
    if len(batch) == 1:
        pieces = f"{size(batch[0])} pieces" if size is not None else "its pieces"
        raise _error(f"one text of {pieces} does not fit on {device}; even alone it ran out of memory ({message}): "
                     f"free the GPU, lower max_length, or use a smaller model or device=cpu")
    half = (len(batch) + 1) // 2
    return (run_with_backoff(fn, batch[:half], on_oom=on_oom, device=device, size=size)
            + run_with_backoff(fn, batch[half:], on_oom=on_oom, device=device, size=size))
