"""MKL's reproducibility branch on a CPU that is not Intel's: what the portable numeric mode can hold there.

The portable mode (:mod:`metrics.numeric`) sets ``MKL_CBWR=AVX2,STRICT`` so that MKL's matrix products take its AVX2
code path on every CPU. MKL honours its branches (but ``COMPATIBLE``) only on Intel processors: measured on an AMD
EPYC with AVX-512 (torch 2.13.0+cpu, MKL 2024.2), ``MKL_CBWR=AVX2,STRICT`` (or ``AVX512,STRICT``) leaves MKL on
``AUTO,STRICT`` (``MKL_VERBOSE`` prints ``CNR:AUTO,STRICT``), so :func:`metrics.numeric.verify` refused every neural
metric there ("the portable numeric mode is not in force").

On such a CPU, in the portable mode, :func:`hold` sets ``MKL_CBWR=AUTO,STRICT`` before :func:`metrics.numeric.prepare`
runs, as a user who read that message would: MKL keeps its own path for the CPU, in STRICT mode (results independent
of memory alignment and of the CPU's caches, hence the same bits from run to run and batch to batch on this machine);
ATen's AVX2 kernels and oneDNN off still apply. The mode's signature part records the setting
(``num:portable(MKL_CBWR=AUTO,STRICT)``), so such scores are never taken for the bit-portable ones: they agree with
them within the tolerances of the native mode (about 1e-6), and their cache entries are their own.

A setting of the user's (``MKL_CBWR`` already set) is left alone; the native mode sets nothing. This module is imported
only by :mod:`metrics` (``__init__``), which the code digest leaves out (it computes no score): what it decides is
in every signature's ``num:`` part.

Examples
--------
>>> env = {}
>>> hold(env, machine="x86_64", vendor="AuthenticAMD", mode="portable"); env
{'MKL_CBWR': 'AUTO,STRICT'}
>>> env = {}
>>> hold(env, machine="x86_64", vendor="GenuineIntel", mode="portable"); env
{}
"""
from __future__ import annotations

import os
import platform
from functools import lru_cache
from typing import MutableMapping

__all__ = ["HELD", "cpu_vendor", "hold", "honours_mkl_branch"]

#: What :func:`hold` sets on a CPU where MKL cannot hold its AVX2 branch.
HELD = "AUTO,STRICT"


@lru_cache(maxsize=1)
def cpu_vendor() -> str:
    """This CPU's vendor as ``/proc/cpuinfo`` names it (``GenuineIntel``, ``AuthenticAMD``, ...), ``unknown`` where it
    cannot be read (off Linux); no torch import."""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as handle:
            for line in handle:
                if line.startswith("vendor_id"):
                    return line.split(":", 1)[1].strip() or "unknown"
    except OSError:
        pass
    return "unknown"


def honours_mkl_branch(machine: str | None = None, vendor: str | None = None) -> bool:
    """Whether MKL can be held to its AVX2 branch here: off x86-64 the question does not arise (MKL is not torch's
    BLAS), on x86-64 only an Intel CPU (an unknown vendor is not taken for a foreign one)."""
    machine = (machine or platform.machine()).lower()
    vendor = vendor or cpu_vendor()
    return machine not in ("x86_64", "amd64") or vendor in ("GenuineIntel", "unknown")


def hold(env: MutableMapping[str, str] | None = None, *, machine: str | None = None, vendor: str | None = None,
         mode: str | None = None) -> None:
    """In the portable mode on a CPU whose MKL does not honour its AVX2 branch, set ``MKL_CBWR`` to :data:`HELD`
    unless it is set (see the module notes); otherwise change nothing. ``mode``: default ``$META_EVAL_NUMERIC``
    (portable when unset or unknown: an unknown mode is reported where it is used)."""
    env = os.environ if env is None else env
    mode = (mode or env.get("META_EVAL_NUMERIC", "") or "portable").strip().lower()
    if mode == "portable" and "MKL_CBWR" not in env and not honours_mkl_branch(machine, vendor):
        env["MKL_CBWR"] = HELD
