"""The part of a metric's signature that covers its code: ``code:<digest>`` and, for a plugin, its distribution.

meta-eval's own version stays the same across changes to a metric, and a plugin's ``config()`` does not change when
its ``_score`` is edited, so a signature made of the configuration and library versions alone let an edited metric be
served stale scores from the cache. :func:`code_digest` closes that gap: a SHA-256 over the source files of the code
that computes the metric's scores, so any edit to it is a new signature, hence a new cache key, and every committed
leaderboard whose metric code changed no longer matches (``tests/test_committed_leaderboards.py``).

Which files ("the code that computes the scores"):

- the module of every class in the metric's MRO (a plugin that subclasses a built-in metric gets both);
- transitively, every module those modules import (at the top or inside a function, ``import x`` and ``from x import
  y``, absolute or relative) that belongs to the same top-level package as one of those classes, or to meta-eval's
  ``metrics`` package; third-party libraries are covered by the versions already in the signature;
- the files of a ``data/`` folder beside any of those modules (meta-eval's NLTK stopword list);
- not ``metrics/__init__.py``, ``metrics/registry.py``, ``metrics/plugin_files.py`` nor this module: registering,
  loading plugin files, re-exporting and digesting compute no score, and leaving them out keeps a new metric (or a
  fix here that leaves every digest as it was) from changing every other metric's signature.

A single-file plugin (``--plugin FILE.py``, :mod:`metrics.plugin_files`) is a top-level module named ``FILE.py`` in
the digest, with the bytes that were executed (not the file as it is on the disk now): a copy of the file elsewhere
has the same digest, an edited file a new one; a ``data/`` folder beside it is not digested (the file may sit in a
project folder full of data).

A class with no source file (defined in ``__main__`` of ``python -c`` or in a notebook cell) is digested from the
compiled code of its methods (:func:`marshal.dumps` of each function's code object; stable within one Python
version). The digest is the first 12 hex digits (48 bits) of the SHA-256 over the files' package-relative names and
bytes in sorted order, so it does not depend on where meta-eval is installed.

:func:`plugin_distribution` names the installed distribution that provides a plugin's top-level package, so the
signature also says ``<distribution>==<version>``, as it does for every library.

Examples
--------
>>> from meta_eval.metrics.code_digest import code_files
>>> from meta_eval.metrics.rouge import Rouge
>>> sorted(code_files(Rouge))[:2]
['metrics/base.py', 'metrics/data/nltk_english_stopwords.txt']
"""
from __future__ import annotations

import ast
import hashlib
import importlib.util
import marshal
import sys
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Iterator

__all__ = ["code_digest", "code_files", "plugin_distribution"]

#: meta-eval's metric package: always followed, whatever the plugin's own package is; its files are named
#: ``metrics/<path>`` in the digest wherever it is installed and whatever name it is imported under
BUILTIN_PACKAGE = "meta_eval.metrics"
BUILTIN_LABEL = "metrics"
#: modules that compute no score (registration, re-exports, this digest): never part of a digest
NOT_SCORING = frozenset({"meta_eval.metrics", "meta_eval.metrics.registry", "meta_eval.metrics.code_digest",
                         "meta_eval.metrics.plugin_files"})
DIGEST_HEX = 12


def _module_file(name: str) -> Path | None:
    """The ``.py`` file of module ``name`` (imported or importable), or None (built-in, extension, not found)."""
    module = sys.modules.get(name)
    origin = getattr(module, "__file__", None) if module is not None else None
    if origin is None:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError, AttributeError):
            return None
        origin = spec.origin if spec is not None else None
    if not origin or not str(origin).endswith(".py"):
        return None
    return Path(origin)


def _class_file(cls: type) -> Path | None:
    """The ``.py`` file that defined ``cls``: its module's file, or (a module no longer in ``sys.modules``) the file
    its methods were compiled from."""
    if cls.__module__ == "__main__":
        return None
    path = _module_file(cls.__module__)
    if path is not None:
        return path
    for value in vars(cls).values():
        code = getattr(getattr(value, "__func__", value), "__code__", None)
        if code is not None and code.co_filename.endswith(".py") and Path(code.co_filename).is_file():
            return Path(code.co_filename)
    return None


def _is_package(path: Path) -> bool:
    return path.name == "__init__.py"


def _source(name: str, path: Path) -> tuple[bytes, bool]:
    """The bytes of module ``name`` (file ``path``), and whether it is a plugin file (:mod:`metrics.plugin_files`),
    whose bytes are those that were executed."""
    from meta_eval.metrics.plugin_files import source_of

    executed = source_of(name)
    return (executed, True) if executed is not None else (path.read_bytes(), False)


def _statements(tree: ast.Module) -> Iterator[ast.AST]:
    """Every statement of ``tree`` at any depth (bodies of functions, classes, ``if``, ``try``, ``with``, loops and
    ``match`` cases): imports are statements, so the expressions, most of a module's nodes, need no visit."""
    todo: list[ast.AST] = [tree]
    while todo:
        node = todo.pop()
        yield node
        for _, value in ast.iter_fields(node):
            if isinstance(value, list):
                todo.extend(v for v in value if isinstance(v, (ast.stmt, ast.excepthandler, ast.match_case)))


@lru_cache(maxsize=None)
def _imports(name: str, path: Path, source: bytes) -> frozenset[str]:
    """Module names imported anywhere in ``source`` (the module ``name``, file ``path``), resolved to absolute
    names. Once per module and bytes in a process: every metric's digest follows ``metrics/base.py`` and its kin
    (``-m all`` parsed 115 files for 21 metric classes, 0.46 s of every run on this project's 2-core machine)."""
    tree = ast.parse(source, filename=str(path))
    package = name if _is_package(path) else name.rpartition(".")[0]
    found: set[str] = set()
    for node in _statements(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base_parts = package.split(".")
                keep = len(base_parts) - (node.level - 1)
                if keep <= 0:
                    continue
                base = ".".join(base_parts[:keep])
                module = f"{base}.{node.module}" if node.module else base
            else:
                module = node.module or ""
            if not module:
                continue
            found.add(module)
            for alias in node.names:  # `from pkg import submodule`
                if alias.name != "*":
                    found.add(f"{module}.{alias.name}")
    return frozenset(found)


def _canonical(module: str) -> str:
    """``metrics[.x]`` (the plugin API's old name, :mod:`meta_eval._layout`) as ``meta_eval.metrics[.x]`` when the
    old name is meta-eval's own package."""
    top = module.split(".")[0]
    if top == BUILTIN_LABEL and sys.modules.get(top) is not None and sys.modules.get(top) is sys.modules.get(
            BUILTIN_PACKAGE):
        return f"meta_eval.{module}"
    return module


def _roots(cls: type) -> list[type]:
    return [k for k in cls.__mro__ if k is not object and k.__module__ not in ("abc", "builtins")]


def _package_of(module: str) -> str:
    """The package whose modules a digest follows for ``module``: meta-eval's metrics, else its top-level package."""
    if module == BUILTIN_PACKAGE or module.startswith(BUILTIN_PACKAGE + "."):
        return BUILTIN_PACKAGE
    return module.split(".")[0]


def _label(module: str, package: str, path: Path) -> str:
    """``<package label>/<path inside the package>``: the same wherever the package is installed."""
    label = BUILTIN_LABEL if package == BUILTIN_PACKAGE else package
    if module == package and not _is_package(path):  # a top-level module, not a package
        return path.name
    base = _module_file(package)
    root = base.parent if base is not None else path.parent
    return f"{label}/{path.relative_to(root).as_posix()}"


def code_files(cls: type) -> dict[str, bytes]:
    """The files whose bytes make :func:`code_digest` of metric class ``cls``, by package-relative name.

    Classes without a source file contribute ``<module>.<qualname>.code`` entries (their methods' compiled code).
    """
    roots = _roots(cls)
    packages = {BUILTIN_PACKAGE} | {_package_of(k.__module__) for k in roots}
    files: dict[str, bytes] = {}
    seen: set[str] = set()
    todo = [k.__module__ for k in roots]
    roots_files = {k.__module__: path for k in roots if (path := _class_file(k)) is not None}
    data_dirs: set[tuple[str, Path]] = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        package = _package_of(name)
        if name in NOT_SCORING or package not in packages:
            continue
        path = _module_file(name) or roots_files.get(name)
        if path is None:
            continue
        source, plugin_file = _source(name, path)
        files[_label(name, package, path)] = source
        if not plugin_file and (path.parent / "data").is_dir():
            data_dirs.add((_label(name, package, path).rsplit("/", 1)[0], path.parent / "data"))
        todo.extend(sorted({_canonical(m) for m in _imports(name, path, source)} - seen))
    for prefix, folder in data_dirs:
        for item in sorted(folder.rglob("*")):
            if item.is_file() and "__pycache__" not in item.parts:
                files[f"{prefix}/data/{item.relative_to(folder).as_posix()}"] = item.read_bytes()
    for k in roots:  # classes without a file: their compiled methods, and what of their module they use
        if _class_file(k) is None:
            files[f"{k.__module__}.{k.__qualname__}.code"] = _compiled(k)
    return files


_PLAIN = (bool, int, float, complex, str, bytes, type(None))


def _compiled(cls: type) -> bytes:
    """A class without a source file (defined in a notebook, ``python -c``, standard input) as bytes: the compiled
    code of its methods, and of every function and class of its module that they use, by name, transitively, with
    the module's plain values they read (numbers, strings, tuples of them): a helper edited and run again changes
    the digest, as an edited file does."""
    parts: list[bytes] = []
    seen: set[int] = set()
    todo: list[tuple[str, object]] = [(cls.__qualname__, cls)]
    while todo:
        label, obj = todo.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if isinstance(obj, type):
            members = sorted(vars(obj).items())
        else:
            members = [("", obj)]
        for attr, value in members:
            func = getattr(value, "__func__", value)
            func = getattr(func, "fget", func)  # a property's getter
            code = getattr(func, "__code__", None)
            if code is None:
                continue
            parts.append(f"{label}.{attr}".encode() + b"\0" + marshal.dumps(code))
            scope = getattr(func, "__globals__", {})
            for name in sorted(_global_names(code)):
                used = scope.get(name)
                if isinstance(used, _PLAIN) or (isinstance(used, tuple) and all(isinstance(x, _PLAIN) for x in used)):
                    parts.append(f"{name}=".encode() + repr(used).encode())
                elif getattr(used, "__module__", None) == cls.__module__ and (
                        hasattr(used, "__code__") or isinstance(used, type) and _class_file(used) is None):
                    todo.append((name, used))
    return b"\0\0".join(parts)


def _global_names(code) -> set[str]:
    """The global names ``code`` and the code nested in it (comprehensions, inner functions) read."""
    names = set(code.co_names)
    for const in code.co_consts:
        if hasattr(const, "co_names"):
            names |= _global_names(const)
    return names


@lru_cache(maxsize=None)
def code_digest(cls: type) -> str:
    """First 12 hex digits of the SHA-256 over :func:`code_files` of ``cls`` (names and bytes, sorted by name).

    Cached per class object for the life of the process: a file edited while a process runs counts from the next
    process (or from a reloaded module, whose classes are new objects).
    """
    h = hashlib.sha256()
    for name, data in sorted(code_files(cls).items()):
        h.update(name.encode("utf-8") + b"\0" + len(data).to_bytes(8, "big") + data)
    return h.hexdigest()[:DIGEST_HEX]


@lru_cache(maxsize=1)
def _distributions() -> dict[str, list[str]]:
    return metadata.packages_distributions()


def plugin_distribution(cls: type) -> tuple[str, str] | None:
    """``(distribution, version)`` of the installed distribution providing ``cls``'s top-level package; None for
    meta-eval's own metrics and for classes not installed from a distribution (a script, a notebook, a plugin file)."""
    top = cls.__module__.split(".")[0]
    if _package_of(cls.__module__) == BUILTIN_PACKAGE or top == "__main__":
        return None
    dists = _distributions().get(top) or []
    if not dists:
        return None
    dist = sorted(dists)[0]
    try:
        return dist, metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None

