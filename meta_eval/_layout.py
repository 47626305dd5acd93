"""How the import names ``meta_eval.metrics``, ``meta_eval.judgments``, ``meta_eval.leaderboard`` and
``meta_eval.cli`` find their code, and the one old name kept for plugins (``metrics``).

The repository keeps the folders its users asked for at its root (``metrics/``, ``judgments/``, ``leaderboard/``,
``cli.py`` beside ``meta_eval/``), but everything is imported under the one name ``meta_eval``, so that a
``metrics.py`` or ``cli.py`` in a user's notebook folder (common in research code) cannot shadow meta-eval's own
modules.

- Installed from a wheel, the four live inside ``meta_eval/`` (``pyproject.toml`` maps the folders with
  ``package-dir``; ``setup.py`` copies ``cli.py`` to ``meta_eval/cli.py``): the standard import system finds them.
- In a source checkout (``pyproject.toml`` beside ``meta_eval/``, e.g. the tests, or ``pip install -e .``),
  :class:`CheckoutFinder` finds ``meta_eval.metrics`` etc. in the checkout's root folders.
- Plugins written for the old top-level name (``from metrics import Metric, register``) keep working:
  :class:`OldNameFinder` serves ``metrics`` and ``metrics.<module>`` as the very same module objects as
  ``meta_eval.metrics[.<module>]`` (one registry, one ``Metric`` class), **unless** another ``metrics`` module is on
  the path (a user's ``metrics.py``): that one wins, since meta-eval itself never imports the old name. New plugins
  should import ``meta_eval.metrics``.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from pathlib import Path

MAPPED = ("metrics", "judgments", "leaderboard", "cli")  # meta_eval.<name> <- <checkout>/<name>
OLD_NAME = "metrics"  # the plugin API's old top-level name

PACKAGE_DIR = Path(__file__).resolve().parent
CHECKOUT = PACKAGE_DIR.parent


def in_checkout() -> bool:
    """True when meta_eval runs from a source checkout (the mapped folders beside it, not inside it)."""
    return ((CHECKOUT / "pyproject.toml").is_file() and (CHECKOUT / "metrics" / "__init__.py").is_file()
            and not (PACKAGE_DIR / "metrics").exists())


class CheckoutFinder(importlib.abc.MetaPathFinder):
    """Finds ``meta_eval.<name>`` (a name of :data:`MAPPED`) in the checkout's root folder."""

    def find_spec(self, fullname, path=None, target=None):
        prefix, _, name = fullname.partition(".")
        if prefix != "meta_eval" or name not in MAPPED:
            return None
        return importlib.machinery.PathFinder.find_spec(fullname, [str(CHECKOUT)])


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, real: str):
        self.real = real

    def create_module(self, spec):
        return importlib.import_module(self.real)

    def exec_module(self, module):  # the real module is already executed
        return None


class OldNameFinder(importlib.abc.MetaPathFinder):
    """Serves ``metrics[.x]`` as ``meta_eval.metrics[.x]`` unless another ``metrics`` is on the path."""

    def find_spec(self, fullname, path=None, target=None):
        top, dot, rest = fullname.partition(".")
        if top != OLD_NAME:
            return None
        real = f"meta_eval.{fullname}"
        if dot:  # a submodule: only when the old name is ours
            ours = sys.modules.get("meta_eval.metrics")
            if ours is None or sys.modules.get(OLD_NAME) is not ours:
                return None
            return importlib.util.spec_from_loader(fullname, _AliasLoader(real))
        other = importlib.machinery.PathFinder.find_spec(OLD_NAME)
        if other is not None and other.origin and not _is_ours(other):
            return None  # a user's metrics.py / metrics/ wins
        return importlib.util.spec_from_loader(fullname, _AliasLoader(real))


def _is_ours(spec) -> bool:
    locations = list(spec.submodule_search_locations or [])
    return any(Path(loc).resolve() in (CHECKOUT / "metrics", PACKAGE_DIR / "metrics") for loc in locations)


def install() -> None:
    """Put the finders in place once per process (idempotent)."""
    if not any(isinstance(f, OldNameFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, OldNameFinder())
    if in_checkout() and not any(isinstance(f, CheckoutFinder) for f in sys.meta_path):
        # first: the checkout meta_eval was imported from wins over an editable install's finder for another one
        sys.meta_path.insert(0, CheckoutFinder())
