"""Which metrics run on a set, with which options: the choice every command makes before scoring.

:func:`choose_metrics` turns ``--metrics`` (or a library caller's list) and ``--option KEY=VALUE`` into configured
metric objects and the reasons the others are skipped (missing extras, a set without references or sources, another
language, neural metrics left out of a quick default run, broken plugins). A problem the user must fix (an unknown
metric, an option no chosen metric takes) raises :class:`meta_eval.errors.MetaEvalError`.
"""
from __future__ import annotations

import inspect
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from meta_eval.errors import MetaEvalError

__all__ = ["build", "choose_metrics", "group_skips", "load_plugins", "metric_config", "named_skips", "option_list",
           "parse_options", "requested_names"]


def parse_options(options: Iterable[str] | Mapping[str, object] | None) -> dict[str, str]:
    """``["k=v", ...]`` (the command line's ``-o``) or a mapping, as ``{key: value}`` strings."""
    if options is None:
        return {}
    if isinstance(options, Mapping):
        return {str(k): str(v) for k, v in options.items()}
    parsed = {}
    for opt in options:
        key, sep, value = opt.partition("=")
        if not sep or not key:
            raise MetaEvalError(f"--option expects KEY=VALUE, got {opt!r}")
        parsed[key.strip()] = value.strip()
    return parsed


def option_list(options: Iterable[str] | Mapping[str, object] | None) -> list[str]:
    """Options as the command line gives them, ``["KEY=VALUE", ...]``, from that or a mapping."""
    if options is None:
        return []
    if isinstance(options, Mapping):
        return [f"{k}={v}" for k, v in options.items()]
    return list(options)


def load_plugins(plugins: Iterable[str | Path] | str | Path | None) -> list[str]:
    """Register the metrics of the single-file plugins ``plugins`` (``--plugin FILE.py``, repeatable;
    :mod:`metrics.plugin_files`) and return their names; a file that cannot be loaded raises
    :class:`~meta_eval.errors.MetaEvalError` naming it (and the line)."""
    from meta_eval.metrics.plugin_files import PluginFileError, load_plugin_files

    if plugins is None:
        return []
    try:
        loaded = load_plugin_files([plugins] if isinstance(plugins, (str, Path)) else plugins)
    except PluginFileError as exc:
        raise MetaEvalError(str(exc)) from None
    return [name for found in loaded for name in found.metrics]


def requested_names(metrics: str | Sequence[str] | None) -> str | None:
    """A metric choice as the command line writes it (``"rouge,chrf"``); a list of names is joined."""
    if metrics is None or isinstance(metrics, str):
        return metrics
    return ",".join(metrics)


def metric_config(cls, options: Mapping[str, str], function=None) -> dict[str, str]:
    """The options that ``function`` (default: the metric's constructor) takes by name.

    For the constructor, the multi-reference policy ``refs`` counts as taken by every reference-based metric whose
    policy can be chosen, even when its constructor does not take it (:func:`build` sets it with ``with_refs``).
    """
    accepted = inspect.signature(function or cls.__init__).parameters
    config = {k: v for k, v in options.items() if k in accepted and k not in ("self", "cls", "args", "kwargs")}
    if function is None and "refs" in options and cls.needs_references and not cls.refs_fixed:
        config["refs"] = options["refs"]
    return config


def build(cls, config: Mapping[str, str]):
    """``cls(**config)``, with ``refs`` passed through ``Metric.with_refs`` when the constructor does not take it."""
    config = dict(config)
    refs = None if "refs" in inspect.signature(cls.__init__).parameters else config.pop("refs", None)
    metric = cls(**config)
    return metric if refs is None else metric.with_refs(refs)


def named_skips(skipped: Sequence[tuple[str, str]], requested: str | None) -> list[tuple[str, str]]:
    """The skips of metrics named one by one (not through ``all``): missing results, the command's exit 1."""
    from meta_eval.metrics.registry import ALL

    named = {m.strip() for m in (requested or "").split(",")} - {"", ALL}
    return [(n, r) for n, r in skipped if n in named]


def group_skips(skipped: Sequence[tuple[str, str]]) -> list[tuple[list[str], str]]:
    """Skipped metrics grouped by their reason, in first-seen order (one printed line per reason)."""
    groups: dict[str, list[str]] = {}
    for name, reason in skipped:
        groups.setdefault(reason, []).append(name)
    return [(names, reason) for reason, names in groups.items()]


def choose_metrics(requested: str | Sequence[str] | None, options: Mapping[str, str], *, what: str,
                   has_sources: bool, has_references: bool, language: str | None = None,
                   full_default: bool = False):
    """(metric objects to run, [(name, reason)] skipped) for data described by ``what``.

    Without ``requested``, the default choice: every registered metric but the ones that run only when named
    (``in_default_run``) and, unless ``full_default`` (``leaderboard publish``), the neural ones (``in_quick_run``:
    the default ``run`` takes seconds). ``all`` in ``requested`` stands for every registered metric but the
    named-only ones. A metric built for other languages than the data's ``language`` (when the set declares one)
    is skipped, with the reason (e.g. GloVe WMS on German candidates)."""
    import meta_eval.metrics.registry as registry

    requested = requested_names(requested)
    given = [m.strip() for m in requested.split(",") if m.strip()] if requested else []
    if requested:  # in the order given, "all" expanded in place, each metric once
        names = list(dict.fromkeys(n for m in given for n in (registry.names() if m == registry.ALL else [m])))
    else:
        names = registry.names()
    named = set(given) - {registry.ALL}
    chosen, skipped, considered = [], [], []
    if not requested or registry.ALL in given:  # a chosen-for-you set skips broken plugins with their error
        skipped += sorted(registry.plugin_errors().items())  # (named, they stop the run)
    for name in names:
        try:
            cls = registry.get_class(name)
        except registry.UnknownMetricError as exc:
            raise MetaEvalError(str(exc)) from None
        considered.append(cls)
        if name not in named and not getattr(cls, "in_default_run", True):
            skipped.append((name, cls.not_default_reason or f"run only when named (-m {name})"))
            continue
        if not requested and not full_default and not getattr(cls, "in_quick_run", True):
            skipped.append((name, f"neural, so not in the default choice (metrics that take seconds on a CPU): "
                                  f"{cls.not_quick_reason or 'a neural model scores every text'}; runs when named "
                                  f"or with -m {registry.ALL}"))
            continue
        reason = cls.unavailable_reason(**metric_config(cls, options, cls.unavailable_reason))
        if reason is None:  # what a metric needs can depend on its options (ref=source): ask the instance
            try:
                metric = build(cls, metric_config(cls, options))
            except (ValueError, TypeError) as exc:
                reason = f"bad configuration: {exc}"
            else:
                if metric.needs_source and not has_sources:
                    reason = f"needs source documents, which {what} does not have"
                elif metric.needs_references and not has_references:
                    reason = f"needs references, which {what} does not have"
                    if "ref" in metric_config(cls, {"ref": "source"}):
                        reason += " (pass --option ref=source to compare with the source instead)"
                elif language and metric.supported_languages() and language not in metric.supported_languages():
                    reason = (f"{what}'s candidates are {language}, and it is built for "
                              f"{'/'.join(metric.supported_languages())} text: "
                              f"{metric.language_reason or 'its resources are for that language'}")
                else:
                    chosen.append(metric)
        if reason is not None:
            skipped.append((name, reason))
    # an option is used if a metric that was asked about takes it (even one skipped for this set's data)
    unused = set(options) - {k for cls in considered for k in metric_config(cls, options)}
    if unused and chosen:
        raise MetaEvalError(f"no chosen metric takes the option(s) {', '.join(sorted(unused))}")
    return chosen, skipped
