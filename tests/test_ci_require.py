"""tests/conftest.py's `require`: a missing requirement skips locally and FAILS with CI set; the judgment data is
looked up in $META_EVAL_DATA first. Each case runs a tiny pytest session in a subprocess with the real conftest."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

CONFTEST = Path(__file__).resolve().parent / "conftest.py"
TINY = '''
import os
from pathlib import Path

import pytest

from conftest import require, require_module


def test_needs_the_data(shared_data):
    assert shared_data == Path(os.environ["META_EVAL_DATA"])


@pytest.mark.require(False, "a browser called nothing", "apt-get install nothing")
def test_marker():
    pass


def test_module():
    require_module("no_such_module_zz", "pip install no-such-module-zz")


def test_present():
    require(True, "python", "none needed")
'''


def run_tiny(tmp_path: Path, data: Path, ci: str | None) -> subprocess.CompletedProcess:
    folder = tmp_path / "suite"
    folder.mkdir(exist_ok=True)
    shutil.copy(CONFTEST, folder / "conftest.py")
    (folder / "test_tiny.py").write_text(TINY, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "PYTEST_ADDOPTS")}
    env["META_EVAL_DATA"] = str(data)
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).resolve().parents[1]), env.get("PYTHONPATH", "")])
    if ci is not None:
        env["CI"] = ci
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "-p",
                           "no:randomly", str(folder)], cwd=folder, env=env, capture_output=True, text=True,
                          timeout=120, check=False)


def test_with_ci_set_missing_data_and_packages_fail(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    done = run_tiny(tmp_path, empty, "1")
    out = done.stdout + done.stderr
    assert done.returncode == 1, out
    # a fixture or marker failing at setup is an "error", a failing body a "failure": both fail the run
    assert "1 failed, 1 passed, 2 errors" in out, out
    assert f"missing: the real judgment data at {empty}" in out and "META_EVAL_DATA" in out
    assert "missing: a browser called nothing; fix: apt-get install nothing" in out
    assert "missing: the Python module 'no_such_module_zz'" in out and "pip install no-such-module-zz" in out
    assert "skipped" not in out


def test_without_ci_they_skip_with_the_reason(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    done = run_tiny(tmp_path, empty, None)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert "1 passed, 3 skipped" in out, out
    assert f"missing: the real judgment data at {empty}" in out


def test_meta_eval_data_is_looked_up_first(tmp_path):
    data = tmp_path / "judgments"
    (data / "chaganty").mkdir(parents=True)
    (data / "chaganty" / "lqual.jsonl.gz").write_bytes(b"")  # only its presence is checked by the fixture
    done = run_tiny(tmp_path, data, "1")
    out = done.stdout + done.stderr
    assert "1 failed, 2 passed, 1 error" in out, out  # test_needs_the_data passes: shared_data is $META_EVAL_DATA


@pytest.mark.parametrize("value, on", [("1", True), ("true", True), ("TRUE", True), ("yes", True), ("", False),
                                       ("0", False), ("false", False), ("no", False), (None, False)])
def test_what_counts_as_ci(monkeypatch, value, on):
    from conftest import on_ci

    if value is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", value)
    assert on_ci() is on
