"""Broken plugins, really installed with pip into a temporary folder: loaded only when needed, reported, never fatal.

One distribution ``faultyplugins`` declares four entry points of the group ``meta_eval.metrics``: ``exiting``
(calls ``sys.exit(0)`` at import), ``raising`` (raises at import), ``goodone`` (a working metric) and ``rouge``
(registers a metric under the built-in name ``rouge``: the clash rule); ``rouge1-f`` (the raising module again, under
the name of a built-in variant). Every module writes a marker file when it is
imported, so the tests see which plugins each command imported.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from conftest import WHEEL_FIX, can_build_wheels

pytestmark = pytest.mark.require(can_build_wheels(), "setuptools able to build a wheel (the plugin is built "
                                 "without network)", WHEEL_FIX)

CODE = "from meta_eval.cli import main; import sys; sys.argv = ['meta-eval', *sys.argv[1:]]; main()"
MARK = textwrap.dedent("""
    import os, pathlib
    pathlib.Path(os.environ["FAULT_MARKERS"], __name__).write_text("imported")
""")
MODULES = {
    "exitplug": MARK + "import sys\nsys.exit(0)\n",
    "raiseplug": MARK + "raise RuntimeError('the plugin cannot find its model file')\n",
    "goodplug": MARK + textwrap.dedent('''
        from meta_eval.metrics import Metric, register

        @register("goodone")
        class GoodOne(Metric):
            """Candidate length in characters."""
            needs_references = False
            variants = ("goodone",)

            def _score(self, examples):
                return {"goodone": [float(len(e.candidate)) for e in examples]}
    '''),
    "clashplug": MARK + textwrap.dedent('''
        from meta_eval.metrics import Metric, register

        @register("rouge")
        class NotRouge(Metric):
            variants = ("not-rouge",)

            def _score(self, examples):
                return {"not-rouge": [0.0] * len(examples)}
    '''),
}


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The plugin distribution, pip-installed into a temporary target folder (no network, no build isolation)."""
    root = tmp_path_factory.mktemp("faulty")
    src = root / "src"
    src.mkdir()
    (src / "pyproject.toml").write_text(textwrap.dedent("""
        [build-system]
        requires = ["setuptools"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "faultyplugins"
        version = "0.1"

        [tool.setuptools]
        py-modules = ["exitplug", "raiseplug", "goodplug", "clashplug"]

        [project.entry-points."meta_eval.metrics"]
        exiting = "exitplug"
        raising = "raiseplug"
        goodone = "goodplug"
        rouge = "clashplug"
        rouge1-f = "raiseplug"
    """))
    for name, text in MODULES.items():
        (src / f"{name}.py").write_text(text)
    target = root / "site"
    pip = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                          "--no-index", "--target", str(target), str(src)], capture_output=True, text=True,
                         timeout=300)
    assert pip.returncode == 0, pip.stderr
    assert any(p.name.startswith("faultyplugins-0.1.dist-info") for p in target.iterdir())
    data = root / "mine.jsonl"
    rows = [("abcd", "ab", 0.9), ("a", "abcd", 0.1), ("abc", "abc", 0.5), ("abcdef", "abc", 0.8)]
    data.write_text("\n".join(f'{{"candidate": "{c}", "references": ["{r}"], "scores": {{"q": {s}}}}}'
                              for c, r, s in rows))
    return target, data


def meta_eval(site, tmp_path, *args, code=CODE):
    """Run the real CLI in a fresh interpreter with the plugin folder on sys.path; return (result, imported)."""
    target, _ = site
    markers = tmp_path / "markers"
    markers.mkdir(exist_ok=True)
    for old in markers.iterdir():
        old.unlink()
    env = {**os.environ, "FAULT_MARKERS": str(markers), "META_EVAL_HOME": str(tmp_path / "home"),
           "PYTHONPATH": os.pathsep.join([str(target), os.environ.get("PYTHONPATH", "")])}
    res = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, timeout=300)
    return res, sorted(p.name for p in markers.iterdir())


def test_a_named_builtin_imports_no_plugin(site, tmp_path):
    out = tmp_path / "x.json"
    res, imported = meta_eval(site, tmp_path, "run", "--judgments", str(site[1]), "-m", "rouge", "--no-cache",
                              "--output", str(out))
    assert res.returncode == 0, res.stderr
    assert imported == []  # not even the plugin that claims the name rouge
    doc = json.loads(out.read_text())
    assert {r["metric"] for r in doc["results"]} >= {"rouge1-f", "rougeL-f"}


def test_metrics_lists_broken_plugins_with_their_reasons(site, tmp_path):
    res, imported = meta_eval(site, tmp_path, "metrics")
    assert res.returncode == 0, res.stderr
    assert imported == ["clashplug", "exitplug", "goodplug", "raiseplug"]
    said = " ".join(res.stdout.split())  # rich wraps long lines
    assert "goodone" in said and "broken plugin" in said
    assert "exiting: plugin exiting = 'exitplug' (distribution faultyplugins 0.1) failed to load: called sys.exit(0) " \
           "while being imported" in said
    assert "raising: plugin raising = 'raiseplug' (distribution faultyplugins 0.1) failed to load: RuntimeError: the " \
           "plugin cannot find its model file" in said
    assert "rouge: plugin rouge = 'clashplug' (distribution faultyplugins 0.1) failed to load: RegistryError: metric " \
           "name 'rouge' is already registered by meta_eval.metrics.rouge.Rouge" in said
    assert "rouge1-f" in said  # the built-in rouge is still listed


def test_a_plugin_that_exits_at_import_fails_the_run_when_named(site, tmp_path):
    out = tmp_path / "y.json"
    res, imported = meta_eval(site, tmp_path, "run", "--judgments", str(site[1]), "-m", "exiting", "--no-cache",
                              "--output", str(out))
    assert res.returncode == 2, (res.stdout, res.stderr)
    said = " ".join(res.stderr.split())
    assert "error: metric 'exiting' comes from a plugin that is broken" in said and "sys.exit(0)" in said
    assert not out.exists()
    assert imported == ["exitplug"]  # only the entry point of that name

    res, imported = meta_eval(site, tmp_path, "run", "--judgments", str(site[1]), "-m", "raising", "--no-cache")
    assert res.returncode == 2 and "RuntimeError: the plugin cannot find its model file" in " ".join(res.stderr.split())
    assert imported == ["raiseplug"]


def test_a_good_plugin_runs_beside_broken_ones(site, tmp_path):
    out = tmp_path / "z.json"
    res, imported = meta_eval(site, tmp_path, "run", "--judgments", str(site[1]), "-m", "goodone,rouge", "--no-cache",
                              "--output", str(out))
    assert res.returncode == 0, res.stderr
    assert imported == ["goodplug"]
    doc = json.loads(out.read_text())
    good = next(r for r in doc["results"] if r["metric"] == "goodone")
    # lengths 4, 1, 3, 6 against 0.9, 0.1, 0.5, 0.8: the same order except 4 vs 6, Spearman 1 - 6*2/60 = 0.8
    assert good["spearman"] == pytest.approx(0.8)


def test_the_default_choice_skips_broken_plugins_with_the_reason(site, tmp_path):
    code = ("from meta_eval.scoring.selection import choose_metrics as _choose_metrics\n"
            "chosen, skipped = _choose_metrics(None, {}, what='x', has_sources=False, has_references=True)\n"
            "import json; print(json.dumps({'chosen': [m.name for m in chosen], 'skipped': dict(skipped)}))")
    res, imported = meta_eval(site, tmp_path, code=code)
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout.strip().splitlines()[-1])
    assert "goodone" in doc["chosen"] and "rouge" in doc["chosen"]
    assert "called sys.exit(0) while being imported" in doc["skipped"]["exiting"]
    assert "RuntimeError" in doc["skipped"]["raising"] and "already registered" in doc["skipped"]["rouge"]
    assert imported == ["clashplug", "exitplug", "goodplug", "raiseplug"]


def test_a_broken_plugin_named_after_a_builtin_variant_leaves_the_variant_chosen(site, tmp_path):
    """``-m rouge1-f`` failed with "metric 'rouge1-f' comes from a plugin that is broken" once an installed plugin
    took that name and failed to load (audit, session 38): the built-in variant is chosen, the plugin stays broken."""
    out = tmp_path / "v.json"
    res, imported = meta_eval(site, tmp_path, "run", "--judgments", str(site[1]), "-m", "rouge1-f,goodone",
                              "--no-cache", "--output", str(out))
    assert res.returncode == 0, res.stderr
    doc = json.loads(out.read_text())
    assert {r["metric"] for r in doc["results"]} == {"rouge1-f", "goodone"}
    res, _ = meta_eval(site, tmp_path, "metrics")
    assert "rouge1-f: plugin rouge1-f = 'raiseplug' (distribution faultyplugins 0.1) failed to load" in \
        " ".join(res.stdout.split())
