"""The metric registry: names to metric classes.

Built-in metrics register themselves with :func:`register` when their module is imported (all built-in modules are
imported on the first registry access; they keep heavy libraries out of import time). Third-party packages add
metrics through the entry-point group ``meta_eval.metrics``: each entry point names a module (whose import
registers the metric) or a Metric subclass (registered under the entry point's name). A name can be registered
once: a clash is an error (:class:`RegistryError`), never a silent overwrite.

Plugins are loaded lazily, one at a time. The entry point's *name* is the metric's name, so
``get_class("x")``/``create("x")`` imports only the entry point ``x`` (and none when ``x`` is a built-in);
:func:`names` (every metric: ``meta-eval metrics``, the default metric choice) and :func:`plugin_errors` import
them all. Only a name that is neither registered, nor an entry point, nor a family member makes every plugin load
before :class:`UnknownMetricError` is raised (a plugin module may register a metric under another name than its
entry point's; the error then lists every known name).

A plugin that fails while loading is *broken*, and never stops the other metrics: whatever it raised, including
``SystemExit`` (a ``sys.exit()`` at import) and any other ``BaseException`` except ``KeyboardInterrupt`` (which
still interrupts), is caught, the metrics it registered before failing are removed, and the reason (entry point,
distribution, error) is kept: :func:`plugin_errors` reports it (``meta-eval metrics``), the default metric choice
skips it with the reason, and asking for it by name raises :class:`BrokenPluginError` (an
:class:`UnknownMetricError`) with the reason. A plugin whose entry point clashes with a registered name is broken
in the same way (the clash rule).

A Python file given with ``--plugin FILE.py`` (or ``plugins=[...]``) registers its metrics without packaging
(:mod:`metrics.plugin_files`): it is executed once per path and content, and a name it registers that a built-in, an
installed plugin or another plugin file has is an error naming both.

A *metric family* registers a prefix with :func:`register_prefix`: a name ``<prefix>:<rest>`` that is not registered
itself is resolved by the family's resolver, which returns a class for ``rest`` (memoised by the family); the family's
lister says which members exist. Family members run **only when named**: :func:`names` leaves them out (so they
never join a default run), ``names(include_named_only=True)`` lists them, and :func:`is_named_only` tells them
apart. The learned metrics ``learned:<model>`` (:mod:`metrics.learned`) are such a family: a model fitted on one
judgment set must not silently join every later run. The name ``all`` is reserved (:data:`ALL`): ``--metrics all``
stands for every metric :func:`names` lists.

Example
-------
>>> from meta_eval.metrics import Metric, register
>>> @register("length-ratio")                         # doctest: +SKIP
... class LengthRatio(Metric):
...     variants = ("length-ratio",)
...     def _score(self, examples):
...         return {"length-ratio": [len(e.candidate) / max(1, len(e.references[0])) for e in examples]}
"""
from __future__ import annotations

import importlib
from importlib import metadata
import re
from typing import Callable, Mapping, Sequence, TypeVar

from meta_eval.metrics.base import Metric

__all__ = ["ALL", "ENTRY_POINT_GROUP", "RESERVED_VARIANTS", "BrokenPluginError", "RegistryError", "UnknownMetricError",
           "close_variants", "create", "get_class", "is_named_only", "known", "match_variants", "names",
           "plain_variant", "plugin_errors", "register", "register_prefix", "unregister", "variant_families",
           "variant_owners", "variants_for"]

_TAG = re.compile(r"\[[^\[\]]*\]")  # a model tag in a variant name (metrics.model_names)

ENTRY_POINT_GROUP = "meta_eval.metrics"
ALL = "all"  # ``--metrics all``: every registered metric but the named-only ones; no metric may take this name
#: the columns a score file (``--scores-out``, ``judgments --export``) gives a row besides its scores, which
#: ``--scores`` reads as keys or texts: no variant may take one of these names (nor ``human.<x>``), or its scores
#: would overwrite the row's key in the file (a variant named ``system`` once did: audit, session 38)
RESERVED_VARIANTS = ("id", "index", "doc_id", "system", "candidate", "references", "source", "human")
_BUILTIN_MODULES = tuple(f"meta_eval.metrics.{m}" for m in (
    "rouge", "rouge_coco", "mover", "contextual_mover", "moverscore", "bertlm", "qa", "textrank", "novelty",
    "sacrebleu_metrics", "bertscore", "learned", "llm_judge", "length"))

_registry: dict[str, type[Metric]] = {}
_plugin_errors: dict[str, str] = {}
_prefixes: dict[str, tuple[Callable[[str], type[Metric]], Callable[[], list[str]] | None]] = {}
_builtins_loaded = False
_entry_points: dict[str, list[metadata.EntryPoint]] | None = None  # name -> entry points (found, not imported)
_tried: set[str] = set()  # entry-point names whose loading was attempted

M = TypeVar("M", bound=type[Metric])


class RegistryError(ValueError):
    """A registration is invalid (for example, the name is taken)."""


class UnknownMetricError(KeyError):
    """No metric is registered under the requested name."""

    def __str__(self) -> str:  # KeyError quotes its argument; show the message as written
        return str(self.args[0])


class BrokenPluginError(UnknownMetricError):
    """The metric comes from a plugin that failed to load (the message gives the plugin's error)."""


def register(name: str) -> Callable[[M], M]:
    """Class decorator that registers a :class:`Metric` subclass under ``name``.

    Raises
    ------
    RegistryError
        If ``name`` is empty, already registered by another class, or the class is not a Metric.
    """
    if not isinstance(name, str) or not name.strip() or "," in name or "|" in name:
        raise RegistryError(f"invalid metric name {name!r}: use a non-empty name without ',' or '|'")
    if name.strip() == ALL:
        raise RegistryError(f"invalid metric name {name!r}: '{ALL}' is reserved (--metrics {ALL} chooses every "
                            f"metric)")

    def decorate(cls: M) -> M:
        if not (isinstance(cls, type) and issubclass(cls, Metric)):
            raise RegistryError(f"{cls!r} registered as {name!r} is not a metrics.Metric subclass")
        if cls.__module__ not in _BUILTIN_MODULES:  # the built-ins' names are taken first, so a clash with one
            _load_builtins()                        # is refused here, never found later against the built-in
        other = _registry.get(name)
        if other is not None and other is not cls:
            raise RegistryError(f"metric name {name!r} is already registered by {_origin(other)}; cannot register "
                                f"{_origin(cls)} under the same name")
        if cls.__module__ not in _BUILTIN_MODULES:  # -m NAME would name the other's variant no more
            owner = next((o for o in _registry.values() if o is not cls and o.name != name
                          and isinstance(getattr(o, "variants", None), (tuple, list)) and name in o.variants), None)
            if owner is not None:
                raise RegistryError(f"metric name {name!r} is a variant of {owner.name} ({_origin(owner)}), which "
                                    f"-m {name} chooses; cannot register {_origin(cls)} under that name")
        variants = cls.variants if isinstance(cls.variants, (tuple, list)) and cls.variants else (name,)
        taken = [v for v in variants if v in RESERVED_VARIANTS or str(v).startswith("human.")]
        if taken:
            raise RegistryError(f"{_origin(cls)} registered as {name!r}: the variant name(s) {', '.join(taken)} are "
                                f"the row columns of a score file ({', '.join(RESERVED_VARIANTS)}, human.<x>); "
                                "name the variants otherwise")
        cls.name = name
        if not cls.variants:
            cls.variants = (name,)
        _registry[name] = cls
        return cls

    return decorate


def _origin(cls: type) -> str:
    """How a clash names a class: ``module.Class``, or ``Class (plugin file PATH)`` for a single-file plugin."""
    from meta_eval.metrics.plugin_files import origin

    path = origin(cls)
    return f"{cls.__qualname__} (plugin file {path})" if path is not None else f"{cls.__module__}.{cls.__qualname__}"


def register_prefix(prefix: str, resolve: Callable[[str], type[Metric]],
                    list_names: Callable[[], list[str]] | None = None) -> None:
    """Resolve every unregistered name ``<prefix>:<rest>`` with ``resolve(rest)``.

    ``resolve`` returns a Metric subclass whose ``name`` is the full name, or raises :class:`UnknownMetricError`;
    ``list_names()`` returns the ``rest`` parts that exist now (for :func:`names`).
    """
    if not prefix or ":" in prefix or "," in prefix or "|" in prefix:
        raise RegistryError(f"invalid metric prefix {prefix!r}")
    _prefixes[prefix] = (resolve, list_names)


def unregister(name: str) -> None:
    """Remove ``name`` from the registry (for tests and interactive sessions)."""
    _registry.pop(name, None)


def _load_builtins() -> None:
    global _builtins_loaded
    if not _builtins_loaded:
        _builtins_loaded = True
        for module in _BUILTIN_MODULES:
            importlib.import_module(module)


def _plugins() -> dict[str, list[metadata.EntryPoint]]:
    """The entry points of :data:`ENTRY_POINT_GROUP` by name, read from the installed metadata (nothing imported)."""
    global _entry_points
    if _entry_points is None:
        found: dict[str, list[metadata.EntryPoint]] = {}
        for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
            found.setdefault(ep.name, []).append(ep)
        _entry_points = found
    return _entry_points


def _describe(ep: metadata.EntryPoint) -> str:
    dist = getattr(ep, "dist", None)
    where = f" (distribution {dist.name} {dist.version})" if dist is not None and getattr(dist, "name", None) else ""
    return f"plugin {ep.name} = {ep.value!r}{where}"


def _load_plugin(name: str) -> None:
    """Import the entry point(s) called ``name`` once; a failure is recorded in :data:`_plugin_errors`."""
    if name in _tried:
        return
    _tried.add(name)
    for ep in _plugins().get(name, ()):
        before = set(_registry)
        try:
            obj = ep.load()
            if isinstance(obj, type) and issubclass(obj, Metric) and obj not in _registry.values():
                register(ep.name)(obj)
        except KeyboardInterrupt:
            raise
        except SystemExit as exc:  # sys.exit() at import must not end the command (exit 0 with nothing written)
            _broken(ep, before, f"called sys.exit({exc.code!r}) while being imported")
        except BaseException as exc:  # a broken plugin must not break the tool; reported by `meta-eval metrics`
            _broken(ep, before, f"{type(exc).__name__}: {exc}")


def _broken(ep: metadata.EntryPoint, before: set[str], why: str) -> None:
    for added in set(_registry) - before:  # what it registered before failing is not trusted
        _registry.pop(added)
    message = f"{_describe(ep)} failed to load: {why}"
    _plugin_errors[ep.name] = f"{_plugin_errors[ep.name]}; {message}" if ep.name in _plugin_errors else message


def _load_all() -> None:
    _load_builtins()
    for name in list(_plugins()):
        _load_plugin(name)


def _family_members() -> set[str]:
    members = set()
    for prefix, (_, list_names) in _prefixes.items():
        try:
            members.update(f"{prefix}:{rest}" for rest in (list_names() if list_names else ()))
        except Exception:  # an unreadable family folder must not break listing the other metrics
            pass
    return members


def names(include_named_only: bool = False) -> list[str]:
    """Registered metric names (built-ins and plugins that loaded), sorted: the default metric choice.

    Loads every plugin. Broken plugins are left out (see :func:`plugin_errors`).

    Parameters
    ----------
    include_named_only : bool
        Also list the members of metric families that exist now (``learned:<model>``), which run only when named
        (see the module notes). ``meta-eval metrics`` lists them; a default run does not.
    """
    _load_all()
    listed = set(_registry)
    if include_named_only:
        listed |= _family_members() - set(_registry)
    return sorted(listed)


def is_named_only(name: str) -> bool:
    """Whether ``name`` is a family member (``<prefix>:<rest>`` resolved by a family), which runs only when named."""
    _load_builtins()  # the families (metrics.learned) register their prefix when imported
    prefix, sep, rest = name.partition(":")
    return bool(sep and rest) and prefix in _prefixes and name not in _registry


def plugin_errors() -> dict[str, str]:
    """Entry points that failed to load (every plugin is loaded first), with the reason."""
    _load_all()
    return dict(_plugin_errors)


def get_class(name: str) -> type[Metric]:
    """The class registered under ``name``, importing the plugin of that name if there is one (and no other).

    Raises
    ------
    BrokenPluginError
        If ``name`` is a plugin that failed to load (the message gives the plugin's error).
    UnknownMetricError
        Listing the known names (every plugin is loaded before this is raised).
    """
    _load_builtins()
    if name not in _registry and name in _plugins():
        _load_plugin(name)
    if name in _registry:
        return _registry[name]
    if name in _plugin_errors:
        raise BrokenPluginError(f"metric {name!r} comes from a plugin that is broken: {_plugin_errors[name]}")
    prefix, sep, rest = name.partition(":")
    if sep and rest and prefix in _prefixes:
        return _prefixes[prefix][0](rest)
    _load_all()  # a plugin module may register a metric under another name than its entry point's
    if name in _registry:
        return _registry[name]
    broken = f"; broken plugins: {', '.join(sorted(_plugin_errors))} (see `meta-eval metrics`)" if _plugin_errors \
        else ""
    from difflib import get_close_matches

    close = [n for n in sorted(_registry) if n.lower() == name.lower()] or \
        get_close_matches(name, list(_registry), n=3, cutoff=0.6)  # -m ROUGE: rouge
    hint = f" (did you mean {', '.join(close)}?)" if close else ""
    raise UnknownMetricError(f"unknown metric {name!r}{hint}; known metrics: {', '.join(sorted(_registry))}{broken}")


def known(name: str) -> bool:
    """Whether ``name`` is a metric's name: registered, an entry point (loaded or broken) or a family member's
    form (``learned:<model>``); nothing is imported but the built-ins."""
    _load_builtins()
    if name in _registry or name in _plugins() or name in _plugin_errors:
        return True
    prefix, sep, rest = name.partition(":")
    return bool(sep and rest) and prefix in _prefixes


def plain_variant(variant: str) -> str:
    """``variant`` without its model tag (:mod:`metrics.model_names`): ``bertscore[minilm]-f`` -> ``bertscore-f``."""
    return _TAG.sub("", variant, count=1)


def variant_families(variants: Sequence[str]) -> dict[str, list[str]]:
    """``{family: [variants]}``: a family is what two or more of a metric's variants share before their last
    ``-`` (``rouge1`` for ``rouge1-p``, ``rouge1-r``, ``rouge1-f``; ``bertscore`` for ``bertscore-p/r/f``;
    ``bertscore[minilm]`` for ``bertscore[minilm]-p/r/f``)."""
    stems: dict[str, list[str]] = {}
    for v in variants:
        if "-" in v:
            stems.setdefault(v.rsplit("-", 1)[0], []).append(v)
    return {stem: vs for stem, vs in stems.items() if len(vs) > 1}


def _literal_brackets(pattern: str) -> str:
    return "".join({"[": "[[]", "]": "[]]"}.get(c, c) for c in pattern)


def match_variants(token: str, metric: str, variants: Sequence[str]) -> list[str]:
    """The variants of ``metric`` that ``token`` names, in the metric's order: ``all``, the metric's name (every
    variant), a variant, a family (:func:`variant_families`) or a shell-style pattern (``rouge*-f``).

    Variant names may carry a model tag (``bertscore[minilm]-f``, :mod:`metrics.model_names`): a name or a family
    with its tag names exactly that; one without a tag (``bertscore-f``, ``bertscore``) names the variant whatever
    model scored it (the tag says which). In a pattern, ``[...]`` is first read as the shell's character class, then
    literally (``bertscore[minilm]*``)."""
    from fnmatch import fnmatchcase

    if token in ("all", metric):
        return list(variants)
    if token in variants:
        return [token]
    families = variant_families(variants)
    if token in families:
        return list(families[token])
    if any(c in token for c in "*?["):
        literal = _literal_brackets(token)
        found = [v for v in variants if fnmatchcase(v, token) or fnmatchcase(v, literal)
                 or ("[" not in token and fnmatchcase(plain_variant(v), token))]
        if found or "*" in token or "?" in token:
            return found
    if "[" in token:
        return []
    found = [v for v in variants if plain_variant(v) == token]
    if found:
        return found
    stems = variant_families([plain_variant(v) for v in variants]).get(token, [])
    return [v for v in variants if plain_variant(v) in stems]


def variant_owners(token: str, loaded_only: bool = False) -> dict[str, list[str]]:
    """``{metric: [its variants that token names]}`` for a ``token`` that is no metric's name but names a variant,
    a family of variants (``rouge1``: rouge1-p/r/f) or a pattern (``rouge*-f``) of registered metrics
    (:func:`match_variants`); loads every plugin. The variants are those of each class's default configuration, so a
    token with a model tag (``bertscore[minilm]-f``) is owned by the metric its untagged form names.
    ``loaded_only``: the metrics registered now (the built-ins and the plugins already imported), importing none."""
    owners = {}
    if loaded_only:
        _load_builtins()
    for name in (sorted(_registry) if loaded_only else names()):
        variants = get_class(name).variants
        found = match_variants(token, name, variants) if token != name else []
        if not found and "[" in token and token != name:
            found = match_variants(plain_variant(token), name, variants)
        if found:
            owners[name] = found
    return owners


def close_variants(token: str) -> list[str]:
    """Up to three registered variant names close to ``token`` (for an error message)."""
    from difflib import get_close_matches

    return get_close_matches(token, [v for name in names() for v in get_class(name).variants], n=3, cutoff=0.6)


def variants_for(cls: type[Metric], options: "Mapping[str, object] | None" = None) -> tuple[str, ...]:
    """The variant names of metric class ``cls`` configured with ``options`` (constructor options; the others are
    ignored), without building it: ``cls.variant_names(**taken)`` where the class defines that classmethod (the
    neural metrics, whose names carry the model: :mod:`metrics.model_names`), else ``cls.variants``."""
    namer = getattr(cls, "variant_names", None)
    if namer is None:
        return tuple(cls.variants)
    import inspect

    accepted = inspect.signature(namer).parameters
    return tuple(namer(**{k: v for k, v in (options or {}).items() if k in accepted}))


def create(name: str, **config: object) -> Metric:
    """Instantiate the metric registered under ``name`` with ``config``."""
    cls = get_class(name)
    try:
        return cls(**config)
    except TypeError as exc:
        raise RegistryError(f"metric {name!r}: bad configuration {config!r}: {exc}") from None
