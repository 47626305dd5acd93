"""Single-file plugins: ``--plugin FILE.py`` registers the metrics a Python file defines, without packaging.

For the first hour of a new metric's life, before it is worth a ``pyproject.toml`` and an entry point
(docs/plugins.md). :func:`load_plugin_file` executes the file as a module, so that its
:func:`~metrics.registry.register` decorators run:

- under a name of its own, ``meta_eval_plugin_file_<stem>_<12 hex of the SHA-256 of its resolved path>``: never
  ``__main__``, never a real module's name, the same in every process for the same path, and distinct for two files
  of the same name in different folders (:func:`module_name`);
- once per path and content: loading the same file again is a no-op; loading it again after it was edited replaces
  its metrics by the new ones (a notebook, a test, a long-lived process), whose classes are new objects and so get
  new code digests.

Its signature: :mod:`metrics.code_digest` digests the bytes that were *executed* (kept here, :func:`source_of`, not
read again from the disk, which may have changed since), named by the file's name only, so the same file copied to
another folder (under the same name) has the same signature, and an edited one a new signature (its scores are
recomputed, never served from the cache). A signature without a ``<distribution>==<version>`` part is that of a
metric that was not installed (a plugin file, a script); the code digest alone identifies its code. A ``data/``
folder beside the file is not digested (a file in a project folder would otherwise digest the project's data): a
resource the metric reads belongs in its ``config()``.

Workers (the local process pool, Ray tasks and actors) cannot import the file's module by name: :func:`shippable`
wraps a metric of a plugin file so that unpickling it first executes the very same bytes under the same module name
(:mod:`meta_eval.scoring.engines` pickles metrics through it), wherever the worker runs.

Every problem is a :class:`PluginFileError` (a ValueError) naming the file, and the line where there is one: a file
that does not exist or is not a ``.py`` file, a syntax error, an exception while importing, a file that registers no
metric, a name that clashes with a built-in, an installed plugin or another plugin file (both origins named).
"""
from __future__ import annotations

import hashlib
import importlib.util
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from meta_eval.metrics import registry

__all__ = ["PREFIX", "PluginFile", "PluginFileError", "load_plugin_file", "load_plugin_files", "loaded",
           "module_name", "origin", "shippable", "source_of", "unload_all"]

PREFIX = "meta_eval_plugin_file_"


class PluginFileError(registry.RegistryError):
    """A plugin file that cannot be loaded (the message names the file, and the line where there is one)."""


@dataclass(frozen=True)
class PluginFile:
    """A loaded plugin file: its resolved ``path``, its ``module`` name, the ``source`` bytes executed and the
    ``metrics`` it registered."""

    path: Path
    module: str
    source: bytes
    metrics: tuple[str, ...]


_loaded: dict[str, PluginFile] = {}  # module name -> the file loaded under it


def module_name(path: Path) -> str:
    """The module name of the plugin file at ``path`` (resolved): its stem and the digest of its location."""
    stem = re.sub(r"\W", "_", path.stem, flags=re.ASCII) or "_"
    return f"{PREFIX}{stem}_{hashlib.sha256(str(path).encode('utf-8')).hexdigest()[:12]}"


def loaded() -> list[PluginFile]:
    """The plugin files loaded in this process, in loading order."""
    return list(_loaded.values())


def source_of(module: str) -> bytes | None:
    """The bytes executed as plugin-file module ``module`` (None: not a plugin file)."""
    found = _loaded.get(module)
    return found.source if found is not None else None


def origin(cls: type) -> Path | None:
    """The plugin file that defined ``cls`` (None: not a plugin file)."""
    module = getattr(cls, "__module__", None) or ""
    if not module.startswith(PREFIX):
        return None
    found = _loaded.get(module)
    where = found.path if found is not None else getattr(sys.modules.get(module), "__file__", None)  # being loaded
    return Path(where) if where else None


def load_plugin_files(paths: Iterable[str | Path]) -> list[PluginFile]:
    """:func:`load_plugin_file` for each of ``paths``, in order."""
    return [load_plugin_file(p) for p in paths]


def load_plugin_file(path: str | Path) -> PluginFile:
    """Execute the Python file ``path`` as a module so that the metrics it registers join the registry.

    A no-op when the same file (same resolved path, same bytes) is loaded already; an edited file replaces the
    metrics of its earlier version.

    Raises
    ------
    PluginFileError
        The file is missing or not a ``.py`` file, fails to compile or to import (file and line, no traceback),
        registers no metric, or registers a name that a built-in metric, an installed plugin or another plugin file
        has (both named).
    """
    given = Path(path).expanduser()
    if given.suffix != ".py":
        raise PluginFileError(f"plugin file {path}: not a Python file (a --plugin file ends in .py)")
    if not given.is_file():
        why = "is a folder, not a file" if given.is_dir() else "does not exist"
        raise PluginFileError(f"plugin file {path} {why}")
    resolved = given.resolve()
    try:
        source = resolved.read_bytes()
    except OSError as exc:
        raise PluginFileError(f"plugin file {path} cannot be read: {exc.strerror or exc}") from None
    name = module_name(resolved)
    done = _loaded.get(name)
    if done is not None and done.source == source:
        return done
    registry._load_builtins()  # a clash with a built-in is found by register() in the file
    return _execute(name, resolved, source, shown=str(path), installed=set(registry._plugins()))


def _execute(name: str, path: Path, source: bytes, shown: str, installed: set[str] = frozenset()) -> PluginFile:
    """Execute ``source`` (the bytes of ``path``) as module ``name``; on any failure, leave the registry and
    ``sys.modules`` as they were."""
    other = sys.modules.get(name)
    if other is not None and name not in _loaded:
        raise PluginFileError(f"plugin file {shown}: the module name {name} is taken by {other!r}")
    try:
        code = compile(source, str(path), "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as exc:  # ValueError: null bytes
        line = f", line {exc.lineno}" if getattr(exc, "lineno", None) else ""
        raise PluginFileError(f"plugin file {shown}{line}: {type(exc).__name__}: "
                              f"{getattr(exc, 'msg', None) or exc}") from None
    previous = _loaded.pop(name, None)
    earlier = {m: registry._registry[m] for m in (previous.metrics if previous else ())
               if registry._registry.get(m) is not None and registry._registry[m].__module__ == name}
    for metric in earlier:
        registry.unregister(metric)
    before = set(registry._registry)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # during execution too: dataclasses and pickle look classes up there
    failure = None
    try:
        exec(code, module.__dict__)
    except KeyboardInterrupt:
        _undo(name, other, before, earlier, previous)
        raise
    except SystemExit as exc:
        failure = f"called sys.exit({exc.code!r}) while being imported"
        line = _line(exc, path)
    except BaseException as exc:  # whatever the file raises is reported as one line naming the file
        failure, line = f"{type(exc).__name__}: {exc}", _line(exc, path)
    if failure is not None:
        _undo(name, other, before, earlier, previous)
        where = f", line {line}" if line else ""
        raise PluginFileError(f"plugin file {shown}{where}: {failure}")
    added = tuple(sorted(set(registry._registry) - before))
    problem = None
    if not added:
        problem = (f"plugin file {shown} registers no metric: decorate a meta_eval.metrics.Metric subclass with "
                   f"@register(\"name\") (docs/plugins.md)")
    elif clash := sorted(set(added) & installed):
        eps = "; ".join(registry._describe(ep) for n in clash for ep in registry._plugins()[n])
        problem = (f"plugin file {shown}: metric name(s) {', '.join(map(repr, clash))} already belong to an "
                   f"installed plugin ({eps}); a name can be registered once")
    if problem is not None:
        _undo(name, other, before, earlier, previous)
        raise PluginFileError(problem)
    found = PluginFile(path=path, module=name, source=source, metrics=added)
    _loaded[name] = found
    return found


def _line(exc: BaseException, path: Path) -> int | None:
    """The line of ``path`` where ``exc`` was raised (its innermost frame in that file)."""
    line, tb = None, exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == str(path):
            line = tb.tb_lineno
        tb = tb.tb_next
    if line is None and isinstance(exc, SyntaxError) and exc.filename == str(path):
        line = exc.lineno
    return line


def _undo(name: str, other, before: set[str], earlier: dict, previous: PluginFile | None) -> None:
    for added in set(registry._registry) - before:  # what it registered before failing is not kept
        registry.unregister(added)
    if previous is not None:  # the earlier version of the file stays loaded
        registry._registry.update(earlier)
        _loaded[name] = previous
    if other is not None:
        sys.modules[name] = other
    else:
        sys.modules.pop(name, None)


def unload_all() -> None:
    """Forget every plugin file: unregister its metrics and drop its module (for tests and interactive sessions)."""
    for found in list(_loaded.values()):
        for metric in found.metrics:
            cls = registry._registry.get(metric)
            if cls is not None and cls.__module__ == found.module:
                registry.unregister(metric)
        sys.modules.pop(found.module, None)
    _loaded.clear()


# -- workers -----------------------------------------------------------------------------------------------------

def shippable(metric: object) -> object:
    """``metric`` itself, or, when its class comes from a plugin file, an object that pickles as the metric preceded
    by the source of its plugin file(s): ``pickle.loads`` in a worker process executes them there (under the same
    module names; a no-op where they are loaded already) and returns the metric."""
    files = list(dict.fromkeys(_loaded[k.__module__] for k in type(metric).__mro__ if k.__module__ in _loaded))
    if not files:
        return metric
    return _Shipped(tuple((f.module, str(f.path), f.source) for f in files), metric)


class _Sources:
    """Pickles as a call that executes plugin-file sources (before the metric that needs them is unpickled)."""

    def __init__(self, files: tuple) -> None:
        self.files = files

    def __reduce__(self):
        return _load_sources, (self.files,)


class _Shipped:
    def __init__(self, files: tuple, metric: object) -> None:
        self.files, self.metric = files, metric

    def __reduce__(self):  # the arguments are unpickled in order: the sources run before the metric's class is found
        return _second, (_Sources(self.files), self.metric)


def _second(_: object, metric: object) -> object:
    return metric


def _load_sources(files: tuple) -> None:
    """In a worker: execute each ``(module, path, source)`` shipped by :func:`shippable` unless loaded already."""
    for name, path, source in files:
        done = _loaded.get(name)
        if done is None or done.source != source:
            _execute(name, Path(path), source, shown=path)
