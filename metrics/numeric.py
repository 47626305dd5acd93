"""The numeric mode of the neural metrics: which CPU kernels torch may use, so that scores are the same bits on
every machine (``portable``, the default) or as fast as this CPU allows (``native``).

torch's CPU build picks its kernels by the processor it runs on: Intel MKL (matrix products) by its instruction set
and the matrix shape, ATen (softmax, layer norm, GELU, additions) by its vector width, oneDNN (some batched products)
likewise. On a CPU with AVX-512 the same MiniLM sentence then gets other last bits than on an AVX2 CPU, and other
bits again with other texts in its batch (measured with torch 2.13.0+cpu, MKL 2024.2: ``tests/test_encoder_invariance``
failed 6 of 12 on AVX-512; a committed leaderboard's bertscore-p moved from 0.270154 to 0.270078).

Modes
-----
``portable`` (default)
    Before torch loads, meta-eval sets :data:`PORTABLE_ENV`: ``MKL_CBWR=AVX2,STRICT`` (MKL's conditional numerical
    reproducibility: the AVX2 code path on any CPU that has AVX2, with results independent of alignment and of the
    CPU's caches), ``ATEN_CPU_CAPABILITY=avx2`` and ``ONEDNN_MAX_CPU_ISA=AVX2``; and when torch loads,
    :func:`apply_to_torch` turns torch's oneDNN (mkldnn) paths off, so that every matrix product goes to MKL. Each
    part matters: on an AVX-512 CPU, MiniLM's states of 300 chaganty summaries had five different SHA-256 digests with
    nothing set, MKL's setting alone, MKL's and ATen's, all three variables, and all three with oneDNN off; oneDNN is
    turned off rather than capped because its just-in-time kernels block the work by the CPU's cache sizes, which MKL's
    reproducibility mode covers and oneDNN's does not. An Intel x86-64 CPU with AVX2 then computes what any other
    does, so scores and leaderboards reproduce to the bit across machines. MKL honours its AVX2 branch on Intel
    processors only: on an AMD CPU it stays on its own path (``AUTO``, measured on an AMD EPYC), so there ATen's AVX2
    kernels and oneDNN off still apply but the signature says ``num:portable(vendor=AuthenticAMD)`` and
    bit-identity with other machines is not claimed (scores agree to about 1e-6, as in the native mode). It costs
    speed on CPUs with AVX-512 (``bench/bench_speed.py`` prints the mode; README "Numeric mode").
``native``
    meta-eval sets nothing and leaves oneDNN on: each library picks the fastest kernels for this CPU. Scores then
    agree with the portable ones to about 1e-6, not to the bit, and the signature names the CPU's vector width that
    produced them.

A variable the user has set is never overridden; it is recorded in the signature (``num:portable(MKL_CBWR=AVX512)``),
and then bit-identity across machines is not claimed. Off x86-64 (ARM, Apple silicon) MKL is not torch's BLAS and no
mode can claim it either: the signature says ``arch=...``. meta-eval's neural metrics run on the CPU only.

Choosing: ``META_EVAL_NUMERIC=portable|native`` in the environment, ``meta-eval --numeric native COMMAND``, or
:func:`set_mode` before any neural metric runs. The mode must be in force before torch first computes (MKL and ATen
choose their kernels then): importing :mod:`metrics` (which the CLI, :mod:`meta_eval` and :mod:`judgments` all do)
applies it, pool workers get the driver's mode before any metric, and the Ray engine passes :func:`worker_env` to its
workers and the mode to each task. :func:`apply_to_torch`, called by every model loader once torch is imported, turns
oneDNN off and raises :class:`NumericModeError` when the kernels in force are not the ones the mode asks for (torch
computed before meta-eval was imported, or a worker started otherwise), so a score is never signed with a mode it
was not computed in.

Examples
--------
>>> from meta_eval.metrics import numeric
>>> numeric.PORTABLE_ENV["MKL_CBWR"]
'AVX2,STRICT'
>>> numeric.ident("portable", env={}, machine="x86_64", cpu="avx512", vendor="GenuineIntel")
'num:portable'
>>> numeric.ident("portable", env={}, machine="x86_64", cpu="avx512", vendor="AuthenticAMD")
'num:portable(vendor=AuthenticAMD)'
>>> numeric.ident("native", env={}, machine="x86_64", cpu="avx512")
'num:native(cpu=avx512)'
"""
from __future__ import annotations

import ctypes
import os
import platform
import sys
from functools import lru_cache
from typing import Mapping

__all__ = ["ENV", "MARK", "MODES", "PORTABLE_ENV", "NumericModeError", "apply_to_torch", "bit_portable",
           "cpu_vector_width", "cpu_vendor", "current_mode", "describe", "effective", "ident", "prepare", "set_mode",
           "verify", "worker_env"]

#: The environment variable that chooses the mode.
ENV = "META_EVAL_NUMERIC"
MODES = ("portable", "native")
#: What the portable mode sets before torch loads (each only where the user has not set it).
PORTABLE_ENV = {"MKL_CBWR": "AVX2,STRICT", "ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2"}
_ALIASES = {"ONEDNN_MAX_CPU_ISA": ("DNNL_MAX_CPU_ISA",)}  # oneDNN's older name for the same setting
_MKL_BRANCHES = {1: "OFF", 2: "AUTO", 3: "COMPATIBLE", 4: "SSE2", 6: "SSSE3", 7: "SSE4_1", 8: "SSE4_2", 9: "AVX",
                 10: "AVX2", 11: "AVX512_MIC", 12: "AVX512", 13: "AVX512_MIC_E1", 14: "AVX512_E1"}
_MKL_STRICT = 0x10000

#: Names the variables meta-eval set (comma-separated), so that a worker process it starts, which inherits them, does
#: not take them for the user's.
MARK = "META_EVAL_NUMERIC_SET"
# the variables meta-eval set in this process or its parent, and the value it set
_set_by_us: dict[str, str] = {name: os.environ[name] for name in os.environ.get(MARK, "").split(",")
                              if name in PORTABLE_ENV and name in os.environ}
_mode: list[str] = []  # the mode prepare() applied last ([] before the first call)


class NumericModeError(RuntimeError):
    """The numeric mode is unknown, or the kernels in force are not the ones it asks for."""


def _check(mode: str) -> str:
    value = str(mode).strip().lower()
    if value not in MODES:
        raise NumericModeError(f"unknown numeric mode {mode!r}: use one of {', '.join(MODES)} (set by {ENV} or "
                               f"--numeric)")
    return value


def current_mode() -> str:
    """The mode asked for: the last :func:`prepare`/:func:`set_mode`, else ``$META_EVAL_NUMERIC``, else portable."""
    if _mode:
        return _mode[-1]
    return _check(os.environ.get(ENV, "").strip() or "portable")


def _user_value(name: str, env: Mapping[str, str]) -> str | None:
    """The value of ``name`` (or its older alias) that the user set, None where unset or set by meta-eval (in this
    process's environment; every value of another mapping counts as the user's)."""
    ours = _set_by_us if env is os.environ else {}
    for key in (name, *_ALIASES.get(name, ())):
        value = env.get(key)
        if value is not None and ours.get(key) != value:
            return value
    return None


def prepare(mode: str | None = None) -> str:
    """Apply ``mode`` (default :func:`current_mode`) to this process's environment before torch loads: the portable
    mode sets each variable of :data:`PORTABLE_ENV` the user has not set; the native mode removes those meta-eval
    set. Exports the mode as ``$META_EVAL_NUMERIC`` so that worker processes inherit it. Returns the mode.

    Cheap (no import); called when :mod:`metrics` is imported. Once torch is loaded the kernels are fixed: changing
    the mode then raises :class:`NumericModeError`.
    """
    want = _check(mode) if mode is not None else current_mode()
    if _mode and want != _mode[-1] and "torch" in sys.modules:
        raise NumericModeError(f"the numeric mode cannot change from {_mode[-1]} to {want} once torch is loaded: set "
                               f"{ENV}={want} (or meta-eval --numeric {want}) before anything imports torch")
    for name, value in PORTABLE_ENV.items():
        if want == "portable":
            if _user_value(name, os.environ) is None and name not in os.environ:
                os.environ[name] = value
                _set_by_us[name] = value
        elif name in _set_by_us and os.environ.get(name) == _set_by_us[name]:
            del os.environ[name]
            del _set_by_us[name]
    os.environ[ENV] = want
    os.environ[MARK] = ",".join(_set_by_us)
    _mode.append(want)
    del _mode[:-1]
    return want


def set_mode(mode: str) -> str:
    """Choose the numeric mode for this process and its workers (see the module notes); before torch loads."""
    return prepare(mode)


@lru_cache(maxsize=1)
def cpu_vector_width() -> str:
    """This CPU's widest vector instructions as torch's dispatch names them: ``avx512`` (AVX-512 F, BW, VL and DQ),
    ``avx2`` (AVX2 and FMA), else ``default``; read from ``/proc/cpuinfo`` (no torch import). Off Linux: torch's
    ``get_cpu_capability()`` where torch is loaded, else ``unknown``."""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as handle:
            flags: set[str] = set()
            for line in handle:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    break
    except OSError:
        flags = set()
    if not flags:
        torch = sys.modules.get("torch")
        return torch.backends.cpu.get_cpu_capability().lower() if torch is not None else "unknown"
    if {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= flags:
        return "avx512"
    if {"avx2", "fma"} <= flags:
        return "avx2"
    return "default"


@lru_cache(maxsize=1)
def cpu_vendor() -> str:
    """This CPU's vendor as ``/proc/cpuinfo`` names it (``GenuineIntel``, ``AuthenticAMD``, ...; no torch import),
    ``unknown`` where it cannot be read.

    MKL honours its reproducibility branches but ``COMPATIBLE`` only on Intel processors: measured on an AMD EPYC
    (AVX-512, torch 2.13.0+cpu, MKL 2024.2), ``MKL_CBWR=AVX2,STRICT`` (and ``AVX512,STRICT``) leave MKL on
    ``AUTO,STRICT`` (``MKL_VERBOSE`` prints ``CNR:AUTO,STRICT``), so MKL there runs its own path for the CPU."""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as handle:
            for line in handle:
                if line.startswith("vendor_id"):
                    return line.split(":", 1)[1].strip() or "unknown"
    except OSError:
        pass
    return "unknown"


def _mkl_branch_honoured(machine: str, vendor: str) -> bool:
    """Whether MKL can be held to its AVX2 branch here: x86-64 and an Intel CPU (see :func:`cpu_vendor`). An
    unknown vendor (off Linux) is not taken for a foreign one."""
    return machine not in ("x86_64", "amd64") or vendor in ("GenuineIntel", "unknown")


def ident(mode: str | None = None, *, env: Mapping[str, str] | None = None, machine: str | None = None,
          cpu: str | None = None, vendor: str | None = None) -> str:
    """The mode's part of a neural metric's signature, computed without importing torch.

    ``num:portable``: the portable settings are in force on x86-64, the same bits on every CPU with AVX2.
    ``num:native(cpu=avx512)``: this CPU's own kernels. Variables the user set are listed in the parentheses
    (``num:portable(MKL_CBWR=AVX512)``), ``arch=...`` off x86-64, ``cpu=...`` on an x86-64 CPU without AVX2 and
    ``vendor=...`` on an x86-64 CPU that is not Intel's, where MKL does not honour its AVX2 branch
    (:func:`cpu_vendor`): ATen's AVX2 kernels and oneDNN off still apply, MKL's products follow MKL's own path;
    each means no bit-identity across machines.

    Parameters
    ----------
    mode : {"portable", "native"}, optional
        Default :func:`current_mode`.
    env, machine, cpu, vendor : optional
        The environment, ``platform.machine()``, :func:`cpu_vector_width` and :func:`cpu_vendor` to describe
        (defaults: this process's).
        In a given ``env`` every variable counts as the user's.
    """
    mode = _check(mode) if mode is not None else current_mode()
    env = os.environ if env is None else env
    machine = (machine or platform.machine()).lower()
    notes = []
    if machine not in ("x86_64", "amd64"):
        notes.append(f"arch={machine}")
    width = cpu or cpu_vector_width()
    if mode == "native" or width not in ("avx2", "avx512"):  # portable needs AVX2: say where it is missing
        notes.append(f"cpu={width}")
    vendor = vendor or cpu_vendor()
    if mode == "portable" and not _mkl_branch_honoured(machine, vendor):
        notes.append(f"vendor={vendor}")
    for name, value in PORTABLE_ENV.items():
        user = _user_value(name, env)
        if user is not None and (mode == "native" or user.strip().upper() != value.upper()):
            notes.append(f"{name}={user.strip()}")
    return f"num:{mode}" + (f"({';'.join(notes)})" if notes else "")


def bit_portable(mode: str | None = None) -> bool:
    """Whether scores computed now are claimed bit-identical on every x86-64 CPU with AVX2: the portable mode with
    its settings unchanged, on x86-64 (then :func:`ident` is exactly ``num:portable``)."""
    return ident(mode) == "num:portable"


def _mkl_cbwr() -> str | None:
    """MKL's reproducibility branch in force in the loaded torch (``AVX2,STRICT``, ``OFF``: none), None where torch
    is not loaded or its MKL cannot be asked."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    lib = os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cpu.so")
    try:
        handle = ctypes.CDLL(lib, mode=getattr(os, "RTLD_NOLOAD", 0))  # the loaded library: never load a second
        get = handle.mkl_serv_cbwr_get
    except (OSError, AttributeError):
        return None
    get.restype, get.argtypes = ctypes.c_int, [ctypes.c_int]
    value = get(-1)  # MKL_CBWR_ALL: the branch and the STRICT bit
    branch = _MKL_BRANCHES.get(value & 0xFFFF, str(value & 0xFFFF))
    return branch + (",STRICT" if value & _MKL_STRICT else "")


def effective() -> dict[str, str | None]:
    """The kernels in force in this process's loaded torch: ``MKL_CBWR`` (MKL's own answer), ``ATEN_CPU_CAPABILITY``
    (torch's ``get_cpu_capability()``), ``ONEDNN_MAX_CPU_ISA`` (the environment: oneDNN cannot be asked),
    ``onednn`` (whether torch's oneDNN paths are on) and ``mkl`` (whether torch was built with MKL). Empty where
    torch is not loaded."""
    torch = sys.modules.get("torch")
    if torch is None:
        return {}
    isa = os.environ.get("ONEDNN_MAX_CPU_ISA") or os.environ.get("DNNL_MAX_CPU_ISA")
    return {"MKL_CBWR": _mkl_cbwr(), "ATEN_CPU_CAPABILITY": torch.backends.cpu.get_cpu_capability(),
            "ONEDNN_MAX_CPU_ISA": isa, "onednn": "on" if torch.backends.mkldnn.enabled else "off",
            "mkl": str(bool(torch.backends.mkl.is_available()))}


def apply_to_torch() -> None:
    """Once torch is imported: in the portable mode turn its oneDNN paths off (every product then goes to MKL, whose
    reproducibility mode is in force; see the module notes), in the native mode leave them as torch has them; then
    :func:`verify`. Called by every model loader (:func:`metrics.encoder.prepare_torch`)."""
    torch = sys.modules.get("torch")
    if torch is not None and current_mode() == "portable":
        torch.backends.mkldnn.enabled = False
    verify()


def verify() -> None:
    """Raise :class:`NumericModeError` when the loaded torch's kernels are not those :func:`ident` signs for: in the
    portable mode (settings unchanged, x86-64), MKL's branch must be ``AVX2,STRICT`` (on an Intel CPU; elsewhere MKL
    keeps its own, :func:`cpu_vendor`), ATen's capability ``AVX2`` and oneDNN off.
    Called by :func:`apply_to_torch`, in the driver and in every worker."""
    mode = current_mode()
    if mode != "portable":
        return
    strict = bit_portable(mode)  # else only where the sole note is the vendor: ATen and oneDNN are still held
    if not strict and ident(mode) != f"num:portable(vendor={cpu_vendor()})":
        return
    state = effective()
    if not state:
        return
    wrong = []
    if state["mkl"] != "True":
        wrong.append("this torch was built without MKL")
    elif strict and state["MKL_CBWR"] not in (None, "AVX2,STRICT"):
        wrong.append(f"MKL's branch is {state['MKL_CBWR']}")
    if str(state["ATEN_CPU_CAPABILITY"]).upper() != "AVX2":
        wrong.append(f"ATen's capability is {state['ATEN_CPU_CAPABILITY']}")
    if state["onednn"] != "off":
        wrong.append("torch's oneDNN paths are on")
    if wrong:
        raise NumericModeError(
            f"the portable numeric mode is not in force ({'; '.join(wrong)}): torch had already computed before "
            f"meta-eval set {', '.join(f'{k}={v}' for k, v in PORTABLE_ENV.items())}, and its kernels are chosen at "
            f"its first computation. Import meta_eval (or metrics) before using torch, set those variables yourself, "
            f"or choose the native mode ({ENV}=native; its scores carry num:native in their signature)")


def describe() -> str:
    """One line for a benchmark or a report: the mode, its signature part, this CPU and what is set."""
    settings = " ".join(f"{k}={os.environ[k]}" for k in PORTABLE_ENV if k in os.environ) or "nothing set"
    onednn = "oneDNN off" if current_mode() == "portable" else "oneDNN as torch has it"
    return (f"numeric mode {current_mode()} ({ident()}; this CPU's vector width: {cpu_vector_width()}; {settings}; "
            f"{onednn})")


def worker_env() -> dict[str, str]:
    """The variables a worker process needs to run in this process's mode (for Ray's ``runtime_env``): the mode and
    every :data:`PORTABLE_ENV` variable as set here."""
    env = {ENV: current_mode(), MARK: ",".join(_set_by_us)}
    for name in (*PORTABLE_ENV, *(a for aliases in _ALIASES.values() for a in aliases)):
        if name in os.environ:
            env[name] = os.environ[name]
    return env
