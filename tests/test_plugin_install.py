"""A third-party metric package, really installed with pip into a temporary folder, is picked up by the CLI."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

import conftest
from conftest import WHEEL_FIX, can_build_wheels

pytestmark = pytest.mark.require(can_build_wheels(), "setuptools able to build a wheel (the plugin is built "
                                 "without network)", WHEEL_FIX)


def test_pip_installed_plugin_is_listed_and_runs(tmp_path):
    target = conftest.pip_install_plugin(tmp_path, "tinymetric", "0.1", {"length-ratio": "tinymetric"},
                                         {"tinymetric/__init__.py": textwrap.dedent('''
        from meta_eval.metrics import Metric, register

        @register("length-ratio")
        class LengthRatio(Metric):
            """Candidate length over reference length, in characters."""
            variants = ("length-ratio",)

            def config(self):
                return {"unit": "chars"}

            def _score(self, examples):
                return {"length-ratio": [len(e.candidate) / max(1, len(e.references[0])) for e in examples]}
    ''')})
    assert any(p.name.startswith("tinymetric-0.1.dist-info") for p in target.iterdir())

    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(target), os.environ.get("PYTHONPATH", "")])}
    code = "from meta_eval.cli import main; import sys; sys.argv = ['meta-eval', *sys.argv[1:]]; main()"
    listing = subprocess.run([sys.executable, "-c", code, "metrics"], capture_output=True, text=True, env=env,
                             timeout=120)
    assert listing.returncode == 0, listing.stderr
    assert "length-ratio" in listing.stdout

    data = tmp_path / "mine.jsonl"
    rows = [("abcd", "ab", 0.9), ("a", "abcd", 0.1), ("abc", "abc", 0.5), ("abcdef", "abc", 0.8)]
    data.write_text("\n".join(f'{{"candidate": "{c}", "references": ["{r}"], "scores": {{"q": {s}}}}}'
                              for c, r, s in rows))
    run = subprocess.run([sys.executable, "-c", code, "run", "--judgments", str(data), "--metrics", "length-ratio",
                          "--no-cache"], capture_output=True, text=True, env=env, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "length-ratio|unit:chars" in run.stdout
    # lengths ratios 2, .25, 1, 2 against 0.9, 0.1, 0.5, 0.8: Spearman 0.9487 (ties averaged)
    assert "0.949" in run.stdout
