"""Every example in meta-eval's docstrings runs and gives what it shows.

The examples are documentation (numpydoc's Examples sections, ``>>>`` lines in module notes), so a stale one
misleads a reader: two were found wrong when this test was added (``vectors_unavailable_reason`` cut its message
one character short; ``row_bootstrap_samples`` drew resamples of one cell, whose correlation is NaN, not the 1.0
shown). Each module of the package is run through :mod:`doctest` on its own, with its own globals, as
``python -m doctest`` would.
"""
from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest


def _modules() -> list[str]:
    """The packages ``pyproject.toml`` installs, each package's own modules, and ``meta_eval.cli``."""
    import tomllib
    from pathlib import Path

    config = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text(encoding="utf-8"))
    names = {"meta_eval.cli"}
    for package in config["tool"]["setuptools"]["packages"]:
        names.add(package)
        path = getattr(importlib.import_module(package), "__path__", None) or []
        names.update(f"{package}.{info.name}" for info in pkgutil.iter_modules(path) if info.name != "__main__")
    return sorted(names)


MODULES = _modules()


def test_the_walk_finds_the_packages_modules():
    for name in ("meta_eval.metrics.device", "meta_eval.metrics.vectors", "meta_eval.stats.resampling",
                 "meta_eval.scoring.runner", "meta_eval.cli"):
        assert name in MODULES


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    # verbose=False: left unset, doctest reads "-v" in sys.argv, so `pytest -v` failed every module on its trace
    runner = doctest.DocTestRunner(verbose=False, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    failed = []
    for test in finder.find(module, name):
        if test.examples:
            result = runner.run(test, out=lambda text: failed.append(text))
            assert result.failed == 0 or failed, test.name
    assert not failed, "".join(failed)
