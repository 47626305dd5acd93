"""The numeric mode of the neural metrics (metrics/numeric.py): set before torch computes, in the CLI, the library and
worker processes; named in every neural signature; refused with a sentence when torch computed first.

The mode's point is measured elsewhere: tests/test_encoder_invariance.py (a text's states do not depend on its batch)
and tests/test_committed_leaderboards.py (the committed boards, computed in the portable mode, reproduce) fail in
their bit-for-bit form on a CPU with AVX-512 without it. Here: that it is in force where it must be.
"""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

import numpy as np
import pytest

import conftest
from meta_eval.metrics import mkl_vendor, numeric

REPO = Path(__file__).resolve().parents[1]
PORTABLE = dict(numeric.PORTABLE_ENV)
#: on a CPU that is not Intel's, importing meta-eval also holds MKL on its own branch (metrics/mkl_vendor.py)
VENDOR = {} if mkl_vendor.honours_mkl_branch() else {"MKL_CBWR": mkl_vendor.HELD}


def _clean_env(**extra: str) -> dict[str, str]:
    """This environment without any numeric-mode variable (as a user's shell has it), plus ``extra``."""
    drop = {numeric.ENV, numeric.MARK, *numeric.PORTABLE_ENV, "DNNL_MAX_CPU_ISA"}
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update(extra)
    return env


def _python(code: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], cwd=REPO, env=_clean_env(**env), capture_output=True,
                          text=True, timeout=300)


def test_ident_names_the_mode_and_every_setting_that_breaks_bit_identity():
    assert numeric.ident("portable", env={}, machine="x86_64", cpu="avx2") == "num:portable"
    assert numeric.ident("portable", env={}, machine="x86_64", cpu="avx512") == "num:portable"
    # a user's own setting is respected and recorded; the same value as the portable one changes nothing
    assert numeric.ident("portable", env={"MKL_CBWR": "AVX512"}, machine="x86_64", cpu="avx512") == \
        "num:portable(MKL_CBWR=AVX512)"
    assert numeric.ident("portable", env={"MKL_CBWR": "avx2,strict"}, machine="x86_64", cpu="avx512") == \
        "num:portable"
    assert numeric.ident("portable", env={"DNNL_MAX_CPU_ISA": "ALL"}, machine="x86_64", cpu="avx2") == \
        "num:portable(ONEDNN_MAX_CPU_ISA=ALL)"
    assert numeric.ident("native", env={}, machine="x86_64", cpu="avx512") == "num:native(cpu=avx512)"
    assert numeric.ident("native", env={"ATEN_CPU_CAPABILITY": "avx2"}, machine="x86_64", cpu="avx512") == \
        "num:native(cpu=avx512;ATEN_CPU_CAPABILITY=avx2)"
    # no MKL off x86-64, no AVX2 on an old CPU: said, and no bit-identity claimed
    assert numeric.ident("portable", env={}, machine="aarch64", cpu="default") == \
        "num:portable(arch=aarch64;cpu=default)"
    assert numeric.ident("portable", env={}, machine="x86_64", cpu="default") == "num:portable(cpu=default)"
    with pytest.raises(numeric.NumericModeError, match="unknown numeric mode 'fast'"):
        numeric.ident("fast")
    assert numeric.cpu_vector_width() in ("avx512", "avx2", "default", "unknown")


def test_importing_meta_eval_applies_the_mode_before_torch_loads():
    names = [*PORTABLE, "META_EVAL_NUMERIC"]
    code = ("import json, os, sys; import meta_eval; from meta_eval import cli, judgments, metrics; "
            f"print(json.dumps({{'torch': 'torch' in sys.modules, "
            f"'env': {{k: os.environ.get(k) for k in {names!r}}}}}))")
    default = json.loads(_python(code).stdout)
    assert default == {"torch": False, "env": {**PORTABLE, **VENDOR, "META_EVAL_NUMERIC": "portable"}}
    native = json.loads(_python(code, META_EVAL_NUMERIC="native").stdout)
    assert native["env"] == {**{k: None for k in PORTABLE}, "META_EVAL_NUMERIC": "native"}
    # a user's own MKL_CBWR is never overridden
    mine = json.loads(_python(code, MKL_CBWR="AVX512").stdout)
    assert mine["env"]["MKL_CBWR"] == "AVX512" and mine["env"]["ATEN_CPU_CAPABILITY"] == "avx2"


def test_the_mode_is_in_force_in_torch_and_torch_used_first_is_refused_with_a_sentence():
    conftest.require_module("torch", conftest.NEURAL_FIX)
    conftest.require_module("transformers", conftest.NEURAL_FIX)
    check = ("from meta_eval.metrics import numeric; from meta_eval.metrics.encoder import prepare_torch\n"
             "try:\n    prepare_torch(); print('ok', numeric.effective()['MKL_CBWR'])\n"
             "except Exception as exc:\n    print(type(exc).__name__, exc)\n")
    # imported before meta-eval but not yet used: torch's kernels are chosen at its first computation (on a CPU that
    # is not Intel's MKL keeps its own branch, in STRICT mode, and the signature says so)
    assert _python("import torch, metrics\n" + check).stdout.split()[:2] == ["ok", VENDOR.get("MKL_CBWR", "AVX2,STRICT")]
    used = _python("import torch; torch.ones(4) @ torch.ones(4)\nfrom meta_eval import metrics\n" + check).stdout
    # on an AVX2 CPU the native kernels are the portable ones; without the AVX2 branch (VENDOR) nothing is claimed
    if numeric.cpu_vector_width() == "avx512" and not VENDOR:
        assert used.startswith("EncoderError the portable numeric mode is not in force")
        assert "META_EVAL_NUMERIC=native" in used
    native = _python("import torch; torch.ones(4) @ torch.ones(4)\nfrom meta_eval import metrics\n" + check,
                     META_EVAL_NUMERIC="native").stdout
    assert native.split()[:2] == ["ok", "OFF"]


def test_this_test_process_computes_in_the_portable_mode():
    """Fails when something imported and used torch before meta-eval set the mode in this pytest process (or a test
    changed the mode): every bit-for-bit test here would then test the wrong thing."""
    torch = conftest.require_module("torch", conftest.NEURAL_FIX)
    if os.environ.get(numeric.ENV, "portable") != "portable" or not numeric.bit_portable():
        pytest.skip(f"the suite runs in {numeric.ident()}: the bit-for-bit tests compare within tolerances")
    torch.ones(8, 8) @ torch.ones(8, 8)
    state = numeric.effective()
    assert state["MKL_CBWR"] == "AVX2,STRICT" and state["ATEN_CPU_CAPABILITY"] == "AVX2", state
    numeric.apply_to_torch()  # what every model loader does: oneDNN off, then the check
    assert numeric.effective()["onednn"] == "off"
    with pytest.raises(numeric.NumericModeError, match="cannot change from portable to native once torch"):
        numeric.set_mode("native")
    assert numeric.current_mode() == "portable"


def _init_and_report(mode: str) -> dict:
    return {"mode": numeric.current_mode(), "env": {k: os.environ.get(k) for k in PORTABLE}, "ident": numeric.ident()}


def test_a_pool_worker_runs_in_the_mode_it_is_given():
    """The local engine starts its workers with the driver's mode (meta_eval/scoring/engines.py, _init_worker): a worker
    told ``native`` drops the variables it inherited from a portable driver, and keeps a user's own."""
    from meta_eval.scoring.engines import _init_worker

    for mode in ("native", "portable"):
        with ProcessPoolExecutor(1, mp_context=get_context("spawn"), initializer=_init_worker,
                                 initargs=(os.getpid(), mode)) as pool:
            seen = pool.submit(_init_and_report, mode).result(timeout=120)
        assert seen["mode"] == mode
        if mode == "native":  # what the driver held for the CPU's vendor stays, as a user's setting would
            assert seen["env"] == {k: VENDOR.get(k) for k in PORTABLE}
            held = "".join(f";{k}={v}" for k, v in VENDOR.items())
            assert seen["ident"] == f"num:native(cpu={numeric.cpu_vector_width()}{held})"
        else:
            assert seen["env"] == {**PORTABLE, **VENDOR} and seen["ident"] == numeric.ident("portable")


def test_the_cli_option_and_the_variable_choose_the_mode_and_a_bad_one_is_a_sentence():
    for argv, env in ((["--numeric", "fast", "metrics"], {}), (["metrics"], {"META_EVAL_NUMERIC": "fast"})):
        done = subprocess.run([sys.executable, "-m", "cli", *argv], cwd=REPO, env=_clean_env(**env),
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 2 and "Traceback" not in done.stderr
        assert "unknown numeric mode 'fast': use one of portable, native" in " ".join(done.stderr.split())


TEXTS = ["The cat sat on the mat.", "A dog sat on the rug.", "Police arrested three men on Sunday night.",
         "Stocks fell.", "Shares rose.", "The storm knocked out power to thousands of homes across the region.",
         "The minister resigned after the report was published on Tuesday."]


@pytest.mark.parametrize("name", ["wms-ctx", "bertscore"])
def test_native_scores_sign_the_cpu_and_agree_with_portable_ones_within_the_tolerance(name, tmp_path):
    """The same rows scored by the CLI in both modes: each signature names its mode, the portable scores are this
    process's (library) bits, the native ones within ``conftest.SCORE_TOL`` of them (not claimed bit-identical)."""
    conftest.require_module("torch", conftest.NEURAL_FIX)
    conftest.require_metrics(name, model="minilm")
    conftest.require_minilm()
    from meta_eval.metrics import Example, create

    cands, refs = TEXTS, TEXTS[2:] + TEXTS[:2]
    (tmp_path / "c.txt").write_text("\n".join(cands) + "\n", encoding="utf-8")
    (tmp_path / "r.txt").write_text("\n".join(refs) + "\n", encoding="utf-8")
    here = create(name, model="minilm").score([Example(c, (r,)) for c, r in zip(cands, refs)])
    runs = {}
    # META_EVAL_NUMERIC itself is tested above (importing applies it) and by the pool test
    for mode, argv, env in (("portable", [], {}), ("native", ["--numeric", "native"], {})):
        out = tmp_path / f"{mode}.jsonl"
        done = subprocess.run([sys.executable, "-m", "cli", *argv, "score", "-c", str(tmp_path / "c.txt"), "-r",
                               str(tmp_path / "r.txt"), "-m", name, "-o", "model=minilm", "--no-cache", "--workers",
                               "1", "--output", str(out)], cwd=REPO, env=_clean_env(**env), capture_output=True, text=True,
                              timeout=600)
        assert done.returncode == 0, done.stderr
        lines = [json.loads(line) for line in out.read_text().splitlines()]
        runs[mode] = (lines[0]["signatures"], {v: np.array([row[v] for row in lines[1:]]) for v in here})
    width = numeric.cpu_vector_width()
    held = "".join(f";{k}={v}" for k, v in VENDOR.items())  # the vendor's MKL setting, if any (mkl_vendor.py)
    assert all(f"|num:portable{f'({held[1:]})' if held else ''}|" in s for s in runs["portable"][0])
    assert all(f"|num:native(cpu={width}{held})|" in s for s in runs["native"][0])
    for variant, values in here.items():
        conftest.assert_same_scores(runs["portable"][1][variant], values, variant)
        assert np.allclose(runs["native"][1][variant], values, rtol=0, atol=conftest.SCORE_TOL), variant


def test_every_neural_signature_names_its_numeric_mode():
    """Every registered metric whose scores depend on torch signs the mode they were computed in (computed without
    importing torch: a fully cached run never loads it)."""
    from meta_eval.metrics import MetricError, create, registry

    signed = {}
    for name in registry.names():
        try:  # a signature needs no model, so unavailable metrics are checked too
            # bertscore's default roberta-large is refused where it is absent: the offline MiniLM instead
            signature = create(name, **({"model": "minilm"} if name == "bertscore" else {})).signature()
        except MetricError:  # needs options to be built (a learned model's path)
            continue
        if "torch==" in signature:
            signed[name] = signature
    expected = {"moverscore", "wms-ctx", "sms-ctx", "s+wms-ctx", "bert-lm"}
    if importlib.util.find_spec("bert_score") is not None:  # its signature names bert-score's version
        expected.add("bertscore")
    assert expected <= set(signed)
    for name, signature in signed.items():
        assert f"|torch=={signature.split('|torch==')[1].split('|')[0]}|{numeric.ident()}|" in signature, name


#: bench/bench_numeric.py --fingerprint in the portable mode with torch 2.13.0+cpu, measured on an x86-64 CPU with
#: AVX-512 (this project's machines) and on an AVX2 CPU without AVX-512 (qemu-x86_64 -cpu Haswell, emulated): the
#: same digest, which is the portable mode's promise. The native mode gave another digest on the AVX-512 CPU.
PORTABLE_FINGERPRINT = {"2.13.0+cpu": "5ee093f29853b367d119395adf69c5f1c7525da2d797b4f96415226d1f182de4"}


def test_the_portable_bits_are_those_measured_on_an_avx512_and_an_avx2_cpu():
    torch = conftest.require_module("torch", conftest.NEURAL_FIX)
    expected = PORTABLE_FINGERPRINT.get(torch.__version__)
    if expected is None:
        pytest.skip(f"the fingerprint was measured with torch {', '.join(PORTABLE_FINGERPRINT)}; this is "
                    f"{torch.__version__}, whose kernels may round otherwise")
    runs = {}
    for mode in ("portable", "native"):
        done = _python("import runpy, sys; sys.argv = ['bench_numeric', '--fingerprint']; "
                       "runpy.run_path('bench/bench_numeric.py', run_name='__main__')", META_EVAL_NUMERIC=mode)
        assert done.returncode == 0, done.stderr[-2000:]
        runs[mode] = json.loads(done.stdout.strip().splitlines()[-1])
    if runs["portable"]["ident"] != "num:portable":
        pytest.skip(f"{runs['portable']['ident']}: no bit-identity across machines is claimed here")
    assert runs["portable"]["sha256"] == expected, runs["portable"]
    if numeric.cpu_vector_width() == "avx512":
        assert runs["native"]["sha256"] != expected  # the mode is what makes them the same


def test_mkl_is_held_on_its_own_branch_only_on_a_cpu_that_is_not_intels():
    """metrics/mkl_vendor.py: MKL honours MKL_CBWR=AVX2,STRICT on Intel CPUs only (an AMD EPYC stays on AUTO,STRICT),
    so there the portable mode sets MKL_CBWR=AUTO,STRICT as a user would, and the signature says so; never over a
    user's setting, never in the native mode, never on an Intel CPU or off x86-64."""
    for vendor, machine, mode, before, after in (
            ("AuthenticAMD", "x86_64", "portable", {}, {"MKL_CBWR": "AUTO,STRICT"}),
            ("HygonGenuine", "x86_64", None, {}, {"MKL_CBWR": "AUTO,STRICT"}),
            ("GenuineIntel", "x86_64", "portable", {}, {}),
            ("unknown", "x86_64", "portable", {}, {}),
            ("AuthenticAMD", "aarch64", "portable", {}, {}),
            ("AuthenticAMD", "x86_64", "native", {}, {}),
            ("AuthenticAMD", "x86_64", "portable", {"MKL_CBWR": "AVX512"}, {"MKL_CBWR": "AVX512"})):
        env = dict(before)
        mkl_vendor.hold(env, machine=machine, vendor=vendor, mode=mode)
        assert env == after, (vendor, machine, mode)
        # what it holds is a setting ident() records: no bit-identity is claimed for it
        assert numeric.ident("portable", env=env, machine="x86_64", cpu="avx512") == \
            ("num:portable" if env.get("MKL_CBWR") in (None,) else f"num:portable(MKL_CBWR={env['MKL_CBWR']})")
    assert mkl_vendor.cpu_vendor() != ""


def test_on_this_cpu_the_neural_metrics_run_in_the_portable_mode_with_what_mkl_honours():
    """The failure this mends: on an AMD CPU every neural metric was refused ("MKL's branch is AUTO,STRICT"). Here
    MKL's branch in force is the one the signature names."""
    conftest.require_module("torch", conftest.NEURAL_FIX)
    conftest.require_module("transformers", conftest.NEURAL_FIX)
    out = _python("from meta_eval.metrics import numeric; from meta_eval.metrics.encoder import prepare_torch\n"
                  "import torch; torch.ones(4) @ torch.ones(4)\nprepare_torch()\n"
                  "print(numeric.ident(), numeric.effective()['MKL_CBWR'])").stdout.split()
    assert out == ([f"num:portable(MKL_CBWR={mkl_vendor.HELD})", mkl_vendor.HELD] if VENDOR else
                   ["num:portable", "AVX2,STRICT"])


def test_mkl_vendor_examples():
    import doctest

    result = doctest.testmod(mkl_vendor, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


def test_the_maintainers_intel_branch_script_gives_the_pinned_bits_or_runs_nothing():
    """bench/mkl_intel_branch.sh (rebuilding boards on an AMD CPU): MKL on its Intel AVX2 branch gives the pinned
    portable digest, so the command runs signed num:portable; where the check fails (here: ATen held on AVX-512, a
    setting of the user's) the command is not run at all."""
    torch = conftest.require_module("torch", conftest.NEURAL_FIX)
    if torch.__version__ not in PORTABLE_FINGERPRINT or numeric.cpu_vector_width() not in ("avx2", "avx512"):
        pytest.skip(f"the digest is pinned for torch {', '.join(PORTABLE_FINGERPRINT)} on x86-64 with AVX2")
    import shutil

    if shutil.which("cc") is None:
        conftest.require(False, "a C compiler (cc)", "apt-get install gcc")
    command = ["bash", "bench/mkl_intel_branch.sh", sys.executable, "-c",
               "from meta_eval.metrics import numeric; print('ran', numeric.ident())"]
    done = subprocess.run(command, cwd=REPO, env=_clean_env(), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "ran num:portable", done.stderr[-2000:]
    assert "MKL on its Intel AVX2 branch (fingerprint 5ee093f29853" in done.stderr
    if numeric.cpu_vector_width() == "avx512":
        done = subprocess.run(command, cwd=REPO, env=_clean_env(ATEN_CPU_CAPABILITY="avx512"), capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 1 and "ran" not in done.stdout and "nothing run" in done.stderr, done.stderr[-2000:]
