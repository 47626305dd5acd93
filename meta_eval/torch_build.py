"""Which torch build is installed and whether a GPU is visible, without importing torch.

``meta-eval metrics`` prints :func:`describe` under its table. Importing torch takes about 2 s (measured: 2.1 s on
a 2-core machine for torch 2.13.0+cpu, while the whole ``meta-eval metrics`` takes 0.9 s), so nothing here imports
it:

- the version comes from the installed distribution's metadata (:mod:`importlib.metadata`);
- the build from torch's own ``torch/version.py``, read as text (``cuda = '12.4'``, ``hip = '6.2...'``; both
  None: a CPU build), which is what ``torch.version.cuda`` would say; the ``+cpu``/``+cuXXX`` suffix of the version
  is the fallback when that file cannot be read;
- GPU visibility from the NVIDIA driver (``/proc/driver/nvidia/gpus/*/information``, Linux): the GPUs the machine
  has, with their model names, honouring ``CUDA_VISIBLE_DEVICES`` only when it hides every GPU (``""`` or ``-1``).
  It is not ``torch.cuda.is_available()``: a driver too old for the build still shows its GPUs here; the neural
  metrics' ``device=auto`` decides at run time (a GPU, else the CPU) and names the device in their signatures.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

__all__ = ["CPU_INSTALL", "CUDA_INSTALL", "describe", "format_line", "gpus", "install_choice", "installed"]

_GPUS = Path("/proc/driver/nvidia/gpus")


def _installs() -> tuple[str, str]:
    """torch's two install commands, from :mod:`metrics.device` (imported here, not at this module's import: the
    ``meta_eval.metrics`` package imports numpy, and ``import meta_eval`` stays light)."""
    from meta_eval.metrics.device import CPU_INSTALL, CUDA_INSTALL

    return CPU_INSTALL, CUDA_INSTALL


def __getattr__(name: str) -> str:  # CPU_INSTALL and CUDA_INSTALL, as attributes of this module (PEP 562)
    if name in ("CPU_INSTALL", "CUDA_INSTALL"):
        return _installs()[name == "CUDA_INSTALL"]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: The install hint the neural metrics' files gave until 2026-11-28, which plugins may have copied: ``pip install
#: torch==2.13.0 && pip install 'meta-eval[...]' (install the CPU torch first...)``. Stale (that torch command, with no
#: index, installs PyPI's build: the multi-GB CUDA one on Linux), so where a reason is shown it is rewritten into the
#: choice the built-in metrics now give themselves (:func:`metrics.device.install_hint`; :func:`install_choice`).
_FROZEN_HINT = re.compile(r"pip install torch==[0-9][0-9.]* && (pip install '[^']+')"
                          r"(?: \(install the CPU torch first[^)]*\))?")


def installed() -> tuple[str | None, str | None]:
    """``(version, build)`` of the installed torch without importing it: build ``"cpu"``, ``"CUDA 12.4"``,
    ``"ROCm 6.2"`` or None (unknown); version None when torch is not installed."""
    import importlib.metadata
    import importlib.util

    try:
        version = importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        return None, None
    build = None
    try:
        spec = importlib.util.find_spec("torch")
        text = (Path(spec.origin).parent / "version.py").read_text(encoding="utf-8") if spec and spec.origin else ""
        cuda = re.search(r"^cuda\b[^=]*=\s*'([^']+)'", text, re.M)
        hip = re.search(r"^hip\b[^=]*=\s*'([^']+)'", text, re.M)
        if cuda:
            build = f"CUDA {cuda.group(1)}"
        elif hip:
            build = f"ROCm {hip.group(1)}"
        elif re.search(r"^cuda\b[^=]*=\s*None", text, re.M):
            build = "cpu"
    except (OSError, ValueError, ImportError):
        pass
    if build is None:
        local = version.partition("+")[2]
        if local == "cpu":
            build = "cpu"
        elif re.fullmatch(r"cu\d{3,}", local):
            build = f"CUDA {local[2:-1]}.{local[-1]}"
    return version, build


def gpus() -> list[str]:
    """The model names of the NVIDIA GPUs the driver shows (empty: none, or none visible)."""
    if os.environ.get("CUDA_VISIBLE_DEVICES", None) in ("", "-1"):
        return []
    names = []
    try:
        for info in sorted(_GPUS.glob("*/information")):
            model = re.search(r"^Model:\s*(.+)$", info.read_text(encoding="utf-8", errors="replace"), re.M)
            names.append(model.group(1).strip() if model else "an NVIDIA GPU")
    except OSError:
        return names
    return names


def format_line(version: str | None, build: str | None, gpu_names: list[str]) -> str:
    """The line ``meta-eval metrics`` prints (see :func:`describe`)."""
    if version is None:
        cpu, cuda = _installs()
        return (f"torch not installed: the neural metrics are unavailable; CPU build: {cpu}; CUDA build "
                f"(Linux): {cuda} (docs/install.md)")
    seen = (f"{len(gpu_names)} GPU{'s' if len(gpu_names) > 1 else ''}: {', '.join(dict.fromkeys(gpu_names))}"
            if gpu_names else "no GPU")
    if build == "cpu":
        extra = "; this CPU build cannot use it: install the CUDA build (pip install torch)" if gpu_names else ""
        return f"torch {version} (CPU build; {seen}{extra})"
    if build is None:
        return f"torch {version} (build unknown; {seen})"
    where = "the neural metrics' device=auto uses it" if gpu_names else "the neural metrics run on the CPU"
    return f"torch {version} ({build} build; {seen}: {where})"


def install_choice(text: str | None) -> str | None:
    """``text`` (a metric's unavailable reason, or its error) with the old install hint (``_FROZEN_HINT``: the
    built-in metrics' before 2026-11-28, or a plugin's copy of it) replaced by the choice the README gives and
    :func:`metrics.device.install_hint` gives: ``install torch first, the CPU build
    (pip install torch --index-url https://download.pytorch.org/whl/cpu) or the CUDA build on Linux (pip install
    torch); then pip install 'meta-eval[neural]'``. Any other text (None included) comes back unchanged. Called
    where a reason is shown: ``meta-eval metrics``, the skipped metrics of every command
    (:func:`meta_eval.scoring.selection.choose_metrics`) and a metric that fails while scoring
    (:func:`meta_eval.scoring.runner.score_all`)."""
    if not text:
        return text
    cpu, cuda = _installs()
    return _FROZEN_HINT.sub(lambda m: f"install torch first, the CPU build ({cpu}) or the CUDA build on Linux "
                                      f"({cuda}); then {m.group(1)}", text)


def describe() -> str:
    """``torch 2.13.0+cpu (CPU build; no GPU)``, ``torch 2.5.1 (CUDA 12.4 build; 1 GPU: NVIDIA H100 80GB HBM3: the
    neural metrics' device=auto uses it)`` or ``torch not installed: ...`` (with the two install commands)."""
    return format_line(*installed(), gpus())
