"""The package a user installs (issue 39, item 1): ``python -m build`` makes an sdist, and from it a wheel, that hold
every module of the ``meta_eval`` namespace and its package data, and nothing else; the wheel, installed into a fresh
venv, imports from that venv and runs the README's first command from another folder with the checkout's results.

The build runs on a copy of the checkout in ``tmp_path`` (setuptools writes ``meta_eval.egg-info`` into the source
folder: the checkout is left as it is, and tests running side by side do not share it), with ``--no-isolation``: the
build backend (setuptools) comes from the test environment, so no network is needed.
"""
from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest

from conftest import WHEEL_FIX, can_build_wheels

REPO = Path(__file__).resolve().parents[1]
#: root folders installed as meta_eval.<name> (pyproject.toml's package-dir), and the root module cli.py (setup.py)
MAPPED = {"meta_eval": "meta_eval", "metrics": "meta_eval/metrics", "judgments": "meta_eval/judgments"}
#: leaderboard/: only its modules; leaderboard/<set>/, README.md, SCHEMA.md and index.html are published boards
LEADERBOARD = "meta_eval/leaderboard"
#: what the copy of the checkout leaves out: build outputs, caches, venvs (never part of a build)
NOT_SOURCE = shutil.ignore_patterns(".git", "build", "dist", "*.egg-info", "__pycache__", "*.pyc", ".ci-venv",
                                    ".venv", "venv", "site", ".pytest_cache", "*.sqlite", "results*.json")
BUILD_FIX = "pip install build (the test extra: pip install 'meta-eval[test]')"

pytestmark = pytest.mark.xdist_group("package")  # one worker builds the package once for the three tests


def _code_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc")


def expected_wheel_files() -> set[str]:
    """Every file the wheel must hold outside its ``.dist-info``: each file of the checkout's code folders (modules
    and package data) at its installed path, so a module or data file added to the checkout cannot be forgotten."""
    out = {f"{MAPPED[folder]}/{p.relative_to(REPO / folder).as_posix()}"
           for folder in MAPPED for p in _code_files(REPO / folder)}
    out |= {f"{LEADERBOARD}/{p.name}" for p in (REPO / "leaderboard").glob("*.py")}
    return out | {"meta_eval/cli.py"}


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict:
    """The sdist and the wheel ``python -m build`` makes (the wheel built from the sdist, its default)."""
    from conftest import require

    require(can_build_wheels(), "setuptools able to build a wheel (built without network)", WHEEL_FIX)
    require(importlib.util.find_spec("build") is not None, "the PyPA build package", BUILD_FIX)
    tmp = tmp_path_factory.mktemp("package")
    source, dist = tmp / "source", tmp / "dist"
    shutil.copytree(REPO, source, ignore=NOT_SOURCE)
    res = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(dist), str(source)],
                         capture_output=True, text=True, timeout=600, cwd=tmp)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert "Building wheel from sdist" in res.stdout + res.stderr  # the wheel is the sdist's: the sdist builds it
    (sdist,), (wheel,) = dist.glob("meta_eval-*.tar.gz"), dist.glob("meta_eval-*.whl")
    return {"sdist": sdist, "wheel": wheel, "tmp": tmp}


def test_the_wheel_holds_every_module_and_data_file_and_nothing_else(built):
    names = zipfile.ZipFile(built["wheel"]).namelist()
    info = built["wheel"].name.split("-py")[0] + ".dist-info"
    files = {n for n in names if not n.startswith(info + "/")}
    assert {n.split("/")[0] for n in names} == {"meta_eval", info}  # no tests/, no other top-level package
    missing, extra = expected_wheel_files() - files, files - expected_wheel_files()
    assert not missing and not extra, f"missing from the wheel: {sorted(missing)}; not ours: {sorted(extra)}"
    assert {"meta_eval/metrics/data/nltk_english_stopwords.txt", "meta_eval/protocols/sms-2019.toml",
            "meta_eval/leaderboard/publish.py", "meta_eval/cli.py"} <= files
    # the folders the wheel holds are exactly pyproject.toml's packages (an added sub-package must be listed there)
    packages = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["packages"]
    assert {n.rpartition("/")[0].replace("/", ".") for n in files} == set(packages)
    entry = zipfile.ZipFile(built["wheel"]).read(f"{info}/entry_points.txt").decode()
    assert "meta-eval = meta_eval.cli:main" in entry


def test_the_sdist_holds_the_sources_of_the_wheel_and_no_tests_or_boards(built):
    with tarfile.open(built["sdist"]) as tar:
        top = built["sdist"].name.removesuffix(".tar.gz")
        names = {m.name.removeprefix(top + "/") for m in tar.getmembers() if m.isfile()}
    assert {"cli.py", "setup.py", "pyproject.toml", "README.md", "MANIFEST.in"} <= names  # cli.py: setup.py copies it
    assert not any(n.startswith(("tests/", "bench/", "docs/")) for n in names)
    assert not any(n.startswith("leaderboard/") and n.count("/") > 1 for n in names)  # no board folder
    assert not any(n.startswith("leaderboard/") and not n.endswith(".py") for n in names)
    source = {f"{folder}/{p.relative_to(REPO / folder).as_posix()}" for folder in MAPPED
              for p in _code_files(REPO / folder)}
    assert source <= names


def _without_pythonpath() -> dict[str, str]:
    """The environment of a process that must see the venv alone, not the checkout the tests import from."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}


def _venv_with_the_wheel(built) -> Path:
    """A fresh venv holding only the wheel (installed without its dependencies), which then sees the test
    environment's packages for them (no network): a ``.pth`` line after its own site-packages."""
    venv = built["tmp"] / "venv"
    env = _without_pythonpath()
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", str(venv)], check=True,
                   timeout=300, env=env)
    python = venv / "bin" / "python"
    # --ignore-installed: a meta-eval the target interpreter can see elsewhere (the checkout's meta_eval.egg-info on
    # a PYTHONPATH) must not make pip skip the wheel as "already satisfied"
    res = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-deps",
                          "--no-index", "--ignore-installed", str(built["wheel"])], capture_output=True, text=True,
                         timeout=600, env=env)
    assert res.returncode == 0, res.stderr
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                          capture_output=True, text=True, check=True, env=env).stdout.strip()
    # after the wheel is installed: pip saw no other meta-eval. The test environment's own site-packages (a venv's
    # are not the base Python's system site), added as plain paths: its .pth files (an editable meta-eval's finder)
    # are not run, so only the wheel's meta_eval can be imported.
    ours = {sysconfig.get_path("purelib"), sysconfig.get_path("platlib")}
    (Path(site) / "zz_test_environment.pth").write_text("".join(f"{p}\n" for p in sorted(ours)))
    return venv


def test_the_installed_wheel_imports_from_its_venv_and_runs_the_main_job_like_the_checkout(built, shared_data):
    venv = _venv_with_the_wheel(built)
    elsewhere = built["tmp"] / "elsewhere"
    elsewhere.mkdir()
    env = {**_without_pythonpath(), "META_EVAL_DATA": str(shared_data)}
    res = subprocess.run([str(venv / "bin" / "python"), "-c",
                          "import meta_eval.metrics, meta_eval.cli, meta_eval.judgments, meta_eval.leaderboard, "
                          "meta_eval; print(meta_eval.__file__); print(meta_eval.cli.__file__)"],
                         cwd=elsewhere, env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    for line in res.stdout.split():
        assert Path(line).resolve().is_relative_to(venv.resolve()), line  # the venv's files, not the checkout's
    run = ["run", "--judgments", "chaganty", "-m", "rouge", "--level", "summary", "--no-cache"]
    res = subprocess.run([str(venv / "bin" / "meta-eval"), *run, "--output", str(elsewhere / "wheel.json")],
                         cwd=elsewhere, env=env, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    res = subprocess.run([sys.executable, "-m", "meta_eval.cli", *run, "--output", str(elsewhere / "checkout.json")],
                         cwd=REPO, env={**env, "PYTHONPATH": str(REPO)}, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    wheel, checkout = (json.loads((elsewhere / f"{n}.json").read_text()) for n in ("wheel", "checkout"))
    row = {d: next(r for r in doc["results"] if r["metric"] == "rouge1-f") for d, doc in (("w", wheel),
                                                                                            ("c", checkout))}
    assert row["w"]["spearman"] == row["c"]["spearman"] and row["w"]["ci"] == row["c"]["ci"]
    # the same code digest: the installed files hash as the checkout's (package-relative names, the same bytes)
    assert row["w"]["signature"] == row["c"]["signature"]
