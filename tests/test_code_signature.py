"""A metric's signature covers its code (issue 24, item 6): ``code:<digest>`` of the source that computes its scores
(metrics/code_digest.py) and, for a plugin, its distribution's name and version. An edited metric is never served
from the cache.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import conftest
from meta_eval import metrics
from conftest import WHEEL_FIX, can_build_wheels
from meta_eval.metrics.code_digest import code_digest, code_files

REPO = Path(__file__).resolve().parents[1]


def test_builtin_digests_cover_the_metric_module_and_what_it_imports_from_metrics():
    rouge = code_files(metrics.get_class("rouge"))
    assert {"metrics/rouge.py", "metrics/base.py", "metrics/text.py", "metrics/memo.py"} <= set(rouge)
    assert "metrics/registry.py" not in rouge and "metrics/__init__.py" not in rouge  # registration computes nothing
    assert not any(name.startswith(("rouge_score", "nltk", "numpy")) for name in rouge)  # libraries: by version
    assert rouge["metrics/rouge.py"] == (REPO / "metrics" / "rouge.py").read_bytes()
    mover = code_files(metrics.get_class("wms"))
    assert {"metrics/mover.py", "metrics/vectors.py"} <= set(mover) and "metrics/rouge.py" not in mover
    # distinct metrics, distinct digests; the signature ends with the digest
    digests = {name: code_digest(metrics.get_class(name)) for name in ("rouge", "wms", "chrf", "textrank")}
    assert len(set(digests.values())) == 4 and all(len(d) == 12 for d in digests.values())
    assert metrics.create("rouge").signature().endswith(f"|code:{digests['rouge']}")


def test_digest_is_the_same_in_another_process_and_from_another_folder(tmp_path):
    """Same source, same digest: in a fresh interpreter, and from a copy of the package elsewhere (names are
    package-relative, never absolute paths)."""
    import shutil

    here = code_digest(metrics.get_class("textrank"))
    code = ("from meta_eval import metrics; from meta_eval.metrics.code_digest import code_digest; "
            "print(code_digest(metrics.get_class('textrank')))")
    fresh = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert fresh.returncode == 0, fresh.stderr
    assert fresh.stdout.strip() == here
    for folder in ("metrics", "meta_eval", "judgments", "leaderboard"):
        shutil.copytree(REPO / folder, tmp_path / folder, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("cli.py", "pyproject.toml"):
        shutil.copy(REPO / name, tmp_path / name)
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    moved = subprocess.run([sys.executable, "-c", code + "; print(metrics.__file__)"], capture_output=True,
                           text=True, cwd=tmp_path, env=env, timeout=120)
    assert moved.returncode == 0, moved.stderr
    digest, where = moved.stdout.split()
    assert where.startswith(str(tmp_path)) and digest == here
    # one changed byte in a module the metric imports changes it
    text = tmp_path / "metrics" / "text.py"
    text.write_bytes(text.read_bytes() + b"\n# edited\n")
    edited = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=env,
                            timeout=120)
    assert edited.returncode == 0 and edited.stdout.strip() != here


def _class_from_source(body: str) -> type:
    """A metric class defined by exec, as in a notebook cell or ``python -c`` (no source file)."""
    namespace: dict = {"__name__": "__main__"}
    exec(textwrap.dedent(f'''
        from meta_eval.metrics import Metric

        class Lengthy(Metric):
            variants = ("len",)

            def _score(self, examples):
                return {{"len": [{body} for e in examples]}}
    '''), namespace)
    return namespace["Lengthy"]


def test_a_class_without_a_file_is_digested_from_its_compiled_code():
    a, same, other = (_class_from_source("len(e.candidate)"), _class_from_source("len(e.candidate)"),
                      _class_from_source("len(e.candidate) + 1"))
    assert code_digest(a) == code_digest(same) != code_digest(other)
    assert "__main__.Lengthy.code" in code_files(a) and "metrics/base.py" in code_files(a)


def _class_with_helpers(helper: str, scale: str = "1.0", inner: str = "x") -> type:
    """As a notebook defines one: module-level helpers and a constant beside the class, all without a file."""
    namespace: dict = {"__name__": "__main__"}
    exec(textwrap.dedent(f'''
        from meta_eval.metrics import Metric

        SCALE = {scale}


        def inner(x):
            return {inner}


        def helper(x):
            return {helper}


        class Helped(Metric):
            variants = ("helped",)

            def _score(self, examples):
                return {{"helped": [SCALE * helper(float(len(e.candidate))) for e in examples]}}
    '''), namespace)
    return namespace["Helped"]


def test_a_class_without_a_file_covers_the_helpers_and_values_of_its_module_it_uses():
    """A notebook's metric whose helper was edited kept its digest, and the cache served the old helper's scores."""
    base = code_digest(_class_with_helpers("inner(x)"))
    assert code_digest(_class_with_helpers("inner(x)")) == base
    assert code_digest(_class_with_helpers("-inner(x)")) != base  # the helper the method calls
    assert code_digest(_class_with_helpers("inner(x)", inner="2 * x")) != base  # what the helper calls in turn
    assert code_digest(_class_with_helpers("inner(x)", scale="2.0")) != base  # a constant the method reads


PLUGIN = '''
from meta_eval.metrics import Metric, register

from .helper import unit


@register("edited-metric")
class EditedMetric(Metric):
    """Candidate length in characters (a test plugin whose code is edited between two runs)."""
    variants = ("edited-metric",)

    def config(self):
        return {"unit": unit()}

    def _score(self, examples):
        return {"edited-metric": [float(len(e.candidate)) for e in examples]}
'''


@pytest.mark.require(can_build_wheels(), "setuptools able to build a wheel (the plugin is built without network)",
                     WHEEL_FIX)
def test_an_edited_plugin_is_recomputed_not_served_from_the_cache(tmp_path):
    target = conftest.pip_install_plugin(tmp_path, "editplug", "0.3", {"edited-metric": "editplug"},
                                         {"editplug/__init__.py": PLUGIN,
                                          "editplug/helper.py": "def unit():\n    return 'chars'\n"})
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(target), str(REPO)]), "PYTHONDONTWRITEBYTECODE": "1"}
    data = conftest.small_set(tmp_path / "mine.jsonl", rows=12)
    cache = tmp_path / "cache.sqlite"
    code = "from meta_eval.cli import main; import sys; sys.argv = ['meta-eval', *sys.argv[1:]]; main()"

    def run(name: str) -> tuple[dict, str]:
        out = tmp_path / f"{name}.json"
        res = subprocess.run([sys.executable, "-c", code, "run", "-j", str(data), "-m", "edited-metric", "--cache",
                              str(cache), "--output", str(out), "--workers", "1"], capture_output=True, text=True,
                             env=env, timeout=300, cwd=tmp_path)
        assert res.returncode == 0, res.stderr + res.stdout
        return json.loads(out.read_text()), " ".join((res.stdout + res.stderr).split())

    first, log = run("first")
    sig = first["results"][0]["signature"]
    assert "|editplug==0.3|" in sig and "|code:" in sig and "12 computed, 0 from cache" in log
    again, log = run("again")
    assert again["results"][0]["signature"] == sig and "0 computed, 12 from cache" in log
    # edit _score only (config() unchanged): a new signature, every row recomputed, new numbers
    module = target / "editplug" / "__init__.py"
    module.write_text(module.read_text().replace("float(len(e.candidate))", "-float(len(e.candidate.split()))"))
    edited, log = run("edited")
    assert edited["results"][0]["signature"] != sig and "12 computed, 0 from cache" in log
    assert edited["results"][0]["spearman"] != first["results"][0]["spearman"]
    # a module the plugin imports (relative import) counts too
    (target / "editplug" / "helper.py").write_text("def unit():\n    return 'chars'  # same value, new code\n")
    helper, log = run("helper")
    assert helper["results"][0]["signature"] not in (sig, edited["results"][0]["signature"])
    assert "12 computed, 0 from cache" in log


def test_the_import_scan_visits_statements_only_and_finds_every_import_a_full_walk_finds():
    """``code_digest._imports`` walks statements only (imports are statements): on every source file of meta-eval and
    on nested imports of every kind it finds the same import nodes as :func:`ast.walk` over every node, and a
    module's scan is done once per process (the same object back)."""
    import ast

    from meta_eval.metrics import code_digest as cd

    nested = textwrap.dedent('''
        import a.b as c, d
        @deco(lambda: 1)
        class K:
            from . import e
            async def f(self):
                async with x:
                    async for y in z:
                        import g
        def h():
            try:
                from ..i import j
            except* ValueError:
                import k
            else:
                import l
            finally:
                import m
        match v:
            case [1, *_]:
                while w:
                    for q in r:
                        with s:
                            if t:
                                pass
                            else:
                                from n import *
    ''')
    files = sorted(REPO.glob("meta_eval/**/*.py")) + sorted(REPO.glob("metrics/**/*.py"))
    sources = [nested] + [p.read_text(encoding="utf-8") for p in files]
    assert len(sources) > 50
    for source in sources:
        tree = ast.parse(source)
        every = {(n.lineno, n.col_offset) for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))}
        statements = {(n.lineno, n.col_offset) for n in cd._statements(tree)
                      if isinstance(n, (ast.Import, ast.ImportFrom))}
        assert statements == every
    assert len({n.lineno for n in cd._statements(ast.parse(nested)) if isinstance(n, (ast.Import, ast.ImportFrom))}) \
        == 8
    found = cd._imports("pkg.sub.mod", Path("pkg/sub/mod.py"), nested.encode())
    assert {"a.b", "d", "pkg.sub", "pkg.sub.e", "g", "pkg.i", "pkg.i.j", "k", "l", "m", "n"} == found
    assert cd._imports("pkg.sub.mod", Path("pkg/sub/mod.py"), nested.encode()) is found  # scanned once
