"""Which metrics run on a set, with which options: the choice every command makes before scoring.

:func:`choose_metrics` turns ``--metrics`` (or a library caller's list) and ``--option KEY=VALUE`` into configured
metric objects and the reasons the others are skipped (missing extras, a set without references or sources, another
language, neural metrics left out of a quick default run, broken plugins). A problem the user must fix (an unknown
metric, an option no chosen metric takes) raises :class:`meta_eval.errors.MetaEvalError`.

``--device`` and ``--dtype`` (run, score, probe, learn, leaderboard publish; :func:`device_option`) are settings, not
options: they set ``$META_EVAL_DEVICE`` / ``$META_EVAL_DTYPE`` for the command, which every metric that takes
``device`` reads when no ``-o device=`` is given (:mod:`metrics.device`), so a metric without one (ROUGE) is not
concerned; :func:`choose_metrics` checks the device and dtype once, before building the first metric that takes
them, so a device that is not here is one clear error (exit 2) rather than a skipped metric.
"""
from __future__ import annotations

import inspect
import os
import re
from pathlib import Path
from typing import Callable, Iterable, Mapping, Sequence

from meta_eval.errors import MetaEvalError
from meta_eval.torch_build import install_choice

__all__ = ["ALL_VARIANTS", "DEFAULT_RULE", "DEVICE_VARIABLES", "VariantChoice", "build", "check_device",
           "check_settings_spelling", "choose_for_set", "choose_metrics", "default_variant", "device_option",
           "group_skips", "load_plugins", "match_variants", "metric_config", "named_skips", "option_list",
           "parse_options", "parse_variants", "refuse_set_template", "requested_names", "resolve_metric_choice",
           "use_device", "variant_families"]


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


#: the environment variable each of the settings ``--device`` and ``--dtype`` sets for a command
DEVICE_VARIABLES = {"device": "META_EVAL_DEVICE", "dtype": "META_EVAL_DTYPE"}
#: how a device is spelt (:data:`metrics.device.DEVICE_CHOICES`, ``cuda:N`` any index), case and spaces aside
_DEVICE_SPELLING = re.compile(r"auto|cpu|cuda(:\d+)?")


def check_settings_spelling() -> None:
    """``$META_EVAL_DEVICE`` and ``$META_EVAL_DTYPE`` (which ``--device`` and ``--dtype`` set) are spelt as a device
    and a precision, or unset; else :class:`MetaEvalError` naming the value and the choices. Whether the device is
    here is :func:`check_device`'s question, asked only where a chosen metric takes one: this is asked of every
    choice, so ``--device gpu`` is an error even for ROUGE alone, where ``--device cuda:7`` is a setting no metric
    reads.
    """
    from meta_eval.metrics.device import DEVICE_CHOICES, DTYPES

    for key, choices, what, spelt in (("device", DEVICE_CHOICES, "a device", _DEVICE_SPELLING.fullmatch),
                                      ("dtype", DTYPES, "a precision", DTYPES.__contains__)):
        name = DEVICE_VARIABLES[key]
        value = os.environ.get(name, "").strip()
        if value and not spelt(value.lower()):
            raise MetaEvalError(f"--{key}/${name}={value!r} is not {what}; choose one of {', '.join(choices)}")


def use_device(device: str | None = None, dtype: str | None = None) -> Callable[[], None]:
    """Set ``$META_EVAL_DEVICE`` / ``$META_EVAL_DTYPE`` to ``device`` / ``dtype`` (those given); return the function
    that puts back what they were."""
    saved = {}
    for key, value in (("device", device), ("dtype", dtype)):
        if value is not None:
            name = DEVICE_VARIABLES[key]
            saved[name] = os.environ.get(name)
            os.environ[name] = str(value)

    def restore() -> None:
        for name, old in saved.items():
            if old is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = old
    return restore


def device_option(ctx, param, value: str | None) -> str | None:
    """The command line's ``--device`` / ``--dtype`` (a click callback): ``value`` is the command's
    ``$META_EVAL_DEVICE`` / ``$META_EVAL_DTYPE`` until it ends (then restored: one process may run several
    commands, as the tests do)."""
    if value is not None:
        ctx.call_on_close(use_device(**{param.name: value}))
    return value


def check_device(options: Mapping[str, str]) -> None:
    """Resolve the ``device`` and ``dtype`` of ``options`` (else the variables, else auto and fp32) as every metric
    that takes them will (:func:`metrics.device.resolve_device`); a device or dtype that cannot be used here raises
    :class:`MetaEvalError` with the reason (e.g. CUDA asked where torch sees no GPU)."""
    from meta_eval.metrics.base import MetricError
    from meta_eval.metrics.device import resolve_device, resolve_dtype

    try:
        resolve_dtype(options.get("dtype"), resolve_device(options.get("device")))
    except MetricError as exc:
        raise MetaEvalError(str(exc)) from None


def requested_names(metrics: str | Sequence[str] | None) -> str | None:
    """A metric choice as the command line writes it (``"rouge,chrf"``); a list of names is joined. None is the
    default choice; a choice that names no metric (``[]``, ``""``, ``","``: a filter that left nothing) is a
    :class:`MetaEvalError`, never the default choice in disguise.

    >>> requested_names(["rouge", "chrf"])
    'rouge,chrf'
    >>> requested_names([])
    Traceback (most recent call last):
    meta_eval.errors.MetaEvalError: the metric choice names no metric ([]); leave it out for the default choice, ...
    """
    if metrics is None:
        return None
    joined = metrics if isinstance(metrics, str) else ",".join(metrics)
    if not any(name.strip() for name in joined.split(",")):
        raise MetaEvalError(f"the metric choice names no metric ({metrics!r}); leave it out for the default choice, "
                            "or name one or more (meta-eval metrics lists them)")
    return joined


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


#: The commands where ``-m llm-judge -o template=set`` runs: they judge one property of a set read from JUDGE-BENCH's
#: schema, and give it to the metric (:func:`choose_metrics`'s ``judged``).
SET_TEMPLATE_COMMANDS = "meta-eval run, learn (a property as --target), leaderboard publish and protocols"


def refuse_set_template(requested: str | Sequence[str] | None, options, command: str, why: str) -> None:
    """Refuse ``-m llm-judge -o template=set`` in ``command`` (``meta-eval score``, ``probe``), where the set's prompt
    cannot be filled for what is scored, with one sentence naming where it runs; before anything is loaded.

    ``why`` says what the command scores instead (``score``: texts, not a set's rows; ``probe``: perturbed
    candidates, while the set's prompt is filled from the instance's own fields, which a perturbation leaves as they
    were). Nothing is refused for another template or when llm-judge is not named (it is never in a default choice
    nor in ``all``)."""
    named = {m.strip() for m in (requested_names(requested) or "").split(",")}
    if "llm-judge" in named and parse_options(option_list(options)).get("template") == "set":
        raise MetaEvalError(f"-m llm-judge -o template=set does not run in meta-eval {command}: {why}; it runs in "
                            f"{SET_TEMPLATE_COMMANDS}")


def choose_for_set(requested: str | None, variants, baseline: str | None, imported: Sequence, options, jset,
                   dimension: str, *, data_dir=None, cache=None, no_cache: bool = False, shown_too: Sequence = ()):
    """The metrics a command that judges ``jset``'s ``dimension`` scores (``meta-eval run`` on a graded or a label
    property): the names without the imported ones (:func:`meta_eval.scoring.imported.without_imported`), the
    variant choice (:func:`resolve_metric_choice`, the baseline and the variants of ``shown_too`` always shown: a
    variant the user named, e.g. ``--plot scatter=rouge1-p:FILE``), the built metrics
    (:func:`choose_metrics` with ``judged``), checked against the imported names and the choice, narrowed to it,
    and their answer stores checked (:func:`meta_eval.report.outputs.check_stores`) before any request.

    Returns ``(asked, names, shown, chosen, skipped)``: the names as asked (imported ones removed), the metric
    names they resolve to (variants and families named by their metric), the :class:`VariantChoice`, the metrics to
    score and the skipped ``(name, reason)``."""
    from meta_eval.report.outputs import check_stores
    from meta_eval.scoring.imported import check_names, without_imported

    asked, only_imported = without_imported(requested, imported)
    names, shown = resolve_metric_choice(asked, variants)
    shown.always.update([baseline] if baseline is not None else [], shown_too)
    chosen, skipped = ([], []) if only_imported else choose_metrics(
        names, parse_options(options), what=jset.name, has_sources=jset.has_sources,
        has_references=jset.max_references > 0, language=jset.language, judged=(jset, dimension))
    check_names(imported, chosen)
    shown.check(available_variants(chosen, skipped, imported))
    chosen = shown.narrow(chosen, skipped, names)
    check_stores(chosen, data_dir=data_dir, cache=cache, no_cache=no_cache)  # the answer store: before any request
    return asked, names, shown, chosen, skipped


def cannot_run(name: str, options, jset, dimension: str) -> str | None:
    """Why the registered metric ``name``, not chosen, could not run on ``jset`` with the run's ``options`` (those
    it takes), in :func:`choose_metrics`'s words (e.g. "needs references, which qags does not have"); None when it
    could. For advice that names only what can work (the set's default baseline, :func:`meta_eval.units.
    why_no_baseline`)."""
    import meta_eval.metrics.registry as registry

    try:
        config = metric_config(registry.get_class(name), parse_options(options))
        chosen, skipped = choose_metrics(name, config, what=jset.name, has_sources=jset.has_sources,
                                         has_references=jset.max_references > 0, language=jset.language,
                                         judged=(jset, dimension))
    except (registry.UnknownMetricError, MetaEvalError) as exc:
        return str(exc)
    return None if chosen else "; ".join(reason for _, reason in skipped) or "it cannot run here"


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
                   full_default: bool = False, judged: tuple | None = None):
    """(metric objects to run, [(name, reason)] skipped) for data described by ``what``.

    Without ``requested``, the default choice: every registered metric but the ones that run only when named
    (``in_default_run``) and, unless ``full_default`` (``leaderboard publish``), the neural ones (``in_quick_run``:
    the default ``run`` takes seconds). ``all`` in ``requested`` stands for every registered metric but the
    named-only ones. A metric built for other languages than the data's ``language`` (when the set declares one)
    is skipped, with the reason (e.g. GloVe WMS on German candidates).

    ``judged``: ``(judgment set, judged property)`` where the command judges a set (``run``, ``leaderboard
    publish``, a protocol's part, ``learn`` when its target is one property), None elsewhere (``score`` and
    ``probe`` refuse ``template=set`` before this, :func:`refuse_set_template`). Every built metric that has a
    ``bind_set(jset, dimension)`` method is given it here, the one place the commands share, before anything is
    scored (the LLM judge's ``template=set`` reads the set's own prompt for the property); ``bind_set(None, None)``
    where there is none. A :class:`~metrics.base.MetricError` it raises (a set without prompts) skips the metric
    with its sentence, as any bad configuration does."""
    import meta_eval.metrics.registry as registry

    requested = requested_names(requested)
    given = [m.strip() for m in requested.split(",") if m.strip()] if requested else []
    if requested:  # in the order given, "all" expanded in place, each metric once
        names = list(dict.fromkeys(n for m in given for n in (registry.names() if m == registry.ALL else [m])))
    else:
        names = registry.names()
    named = set(given) - {registry.ALL}
    chosen, skipped, considered = [], [], []
    check_settings_spelling()
    device_checked = False
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
        if not device_checked and "device" in metric_config(cls, {"device": "auto"}):
            check_device(options)  # once, before the first metric that computes on a device is built
            device_checked = True
        reason = install_choice(cls.unavailable_reason(**metric_config(cls, options, cls.unavailable_reason)))
        if reason is None:  # what a metric needs can depend on its options (ref=source): ask the instance
            try:
                metric = build(cls, metric_config(cls, options))
                if callable(getattr(metric, "bind_set", None)):
                    metric.bind_set(*(judged or (None, None)))
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


# -- variants: which of a metric's outputs are shown ------------------------------------------------------------
# One syntax on every command (run, score, probe, learn, leaderboard publish) and in the Python API:
#   --variants LIST / variants="LIST": only the variants LIST names ("all": every variant);
#   -m VARIANT (a variant or a variant family named where a metric name goes): that metric, with those variants.

DEFAULT_RULE = "every variant but ROUGE's precision and recall"
"""The default choice of variants, the same on every command; ``--variants all`` shows every variant."""


def default_variant(variant: str) -> bool:
    """Whether ``variant`` is shown when no variant is chosen (:data:`DEFAULT_RULE`): every variant but ROUGE's
    precision (``-p``) and recall (``-r``): their F-measure (``-f``, Lin 2004) is the one the leaderboards have
    always shown, and ``--variants all`` brings the others back."""
    return variant not in _rouge_precision_recall()


def _rouge_precision_recall() -> frozenset:
    """The built-in ROUGE metric's precision and recall variants (``rouge1-p`` ... ``rougeLsum-r``), by its class:
    another metric whose names start with "rouge" (a plugin's ``rouge-we-p``) keeps every variant."""
    from meta_eval.metrics.registry import get_class

    return frozenset(v for v in get_class("rouge").variants if v[-2:] in ("-p", "-r"))


ALL_VARIANTS = "all"


def variant_families(variants: Sequence[str]) -> dict[str, list[str]]:
    """:func:`meta_eval.metrics.registry.variant_families` (``rouge1`` for ``rouge1-p``, ``rouge1-r``,
    ``rouge1-f``)."""
    from meta_eval.metrics.registry import variant_families as families

    return families(variants)


def match_variants(token: str, metric: str, variants: Sequence[str]) -> list[str]:
    """:func:`meta_eval.metrics.registry.match_variants`: the variants of ``metric`` that ``token`` names."""
    from meta_eval.metrics.registry import match_variants as match

    return match(token, metric, variants)


def parse_variants(variants: str | Sequence[str] | None) -> tuple[str, ...] | None:
    """``--variants`` as a tuple of names (None: not given); a list is taken as given, a string split on ','."""
    if variants is None:
        return None
    tokens = [t.strip() for t in (variants.split(",") if isinstance(variants, str) else variants)]
    tokens = [t for t in tokens if t]
    if not tokens:
        raise MetaEvalError("--variants is empty: name variants (e.g. rouge1-f,rougeL-f), families (rouge1), "
                            "patterns (rouge*-f) or 'all'")
    return tuple(dict.fromkeys(tokens))


class VariantChoice:
    """Which variants of the chosen metrics are shown: ``--variants`` and the variants named with ``-m``.

    Built by :func:`resolve_metric_choice`; :meth:`shown` gives a metric's shown variants, :meth:`apply` filters
    scored metrics, :meth:`as_dict` is what the JSON records (so a run can be reproduced).

    Rules (docs/metrics.md, "Choosing variants"): a metric named through a variant (``-m rouge1-f``) shows the
    variants named that way; with ``--variants``, every metric also shows the variants it names (every variant
    with ``all``); without it, a metric named by its own name (or chosen by default) shows the
    :data:`DEFAULT_RULE`'s.
    """

    def __init__(self, given: tuple[str, ...] | None, through_metric: Mapping[str, Sequence[str]],
                 named: set[str], every_by_default: bool = False):
        self.given = given
        self.every_by_default = every_by_default  # learn: a metric's variants are its features
        self.through_metric = {m: tuple(ts) for m, ts in through_metric.items()}
        self.named = set(named)  # metrics named by their own name (or chosen by default / 'all')
        self.always: set[str] = set()  # variants shown whatever the rule (an explicit --baseline)

    @property
    def default(self) -> bool:
        return self.given is None and not self.through_metric

    def shown(self, metric: str, variants: Sequence[str]) -> list[str]:
        """The shown variants of ``metric`` (in its order)."""
        keep = {v for v in variants if v in self.always}
        for token in self.through_metric.get(metric, ()):
            keep.update(match_variants(token, metric, variants))
        if self.given is not None:  # --variants adds to what -m named, for every metric (it was ignored for
            for token in self.given:  # one named through a variant: -m rouge1 --variants rouge2-f, or all)
                keep.update(match_variants(token, metric, variants))
        elif metric not in self.through_metric or metric in self.named or ALL_VARIANTS in self.named:
            keep.update(v for v in variants if self.every_by_default or default_variant(v))
        return [v for v in variants if v in keep]

    def check(self, available: Mapping[str, Sequence[str]]) -> None:
        """Raise :class:`MetaEvalError` for a ``--variants`` name that names no variant of the chosen metrics
        (``available``: metric -> its variants), listing them."""
        from meta_eval.metrics.registry import plain_variant

        # a skipped metric offers its default configuration's names: a model-tagged name counts by its plain form
        unknown = [t for t in self.given or () if t != ALL_VARIANTS
                   and not any(match_variants(t, m, vs) or match_variants(plain_variant(t), m, vs)
                               for m, vs in available.items())]
        if unknown:
            raise MetaEvalError(f"--variants: unknown variant(s) {', '.join(map(repr, unknown))}; the chosen "
                                f"metrics' variants: {_describe_variants(available)}")

    def narrow(self, chosen: Sequence, skipped: list, requested: str | None) -> list:
        """The metric objects of ``chosen`` with a shown variant; one without is added to ``skipped`` (with the
        reason) when it was chosen by default, and is an error when ``requested`` names it."""
        named = {m.strip() for m in (requested or "").split(",")}
        kept = []
        for metric in chosen:
            if self.shown(metric.name, list(metric.variants)):
                kept.append(metric)
                continue
            why = f"none of its variants ({', '.join(metric.variants)}) is chosen ({self.describe()})"
            if metric.name in named:
                raise MetaEvalError(f"-m {metric.name}: {why}; add its variants to --variants or leave it out")
            skipped.append((metric.name, why))
        return kept

    def apply(self, scored: Sequence) -> list:
        """``scored`` (:class:`~meta_eval.scoring.runner.MetricScores`) with only the shown variants; a metric left
        with none is dropped."""
        from dataclasses import replace

        kept = []
        for ms in scored:
            shown = self.shown(ms.metric, list(ms.scores))
            if not shown:
                continue
            if len(shown) == len(ms.scores):
                kept.append(ms)
                continue
            system = None if ms.system is None else {v: s for v, s in ms.system.items() if v in shown}
            kept.append(replace(ms, scores={v: ms.scores[v] for v in shown}, system=system))
        return kept

    def hidden(self, scored: Sequence) -> list[str]:
        """The variants of ``scored`` that are not shown."""
        return [v for ms in scored for v in ms.scores if v not in self.shown(ms.metric, list(ms.scores))]

    def describe(self) -> str:
        """The rule in words, as the JSON and the notes say it."""
        parts = []
        if self.given is not None:
            parts.append("every variant" if ALL_VARIANTS in self.given else f"--variants {','.join(self.given)}")
        for metric, tokens in self.through_metric.items():
            parts.append(f"{metric}: {','.join(tokens)} (named with -m)")
        if self.given is None:
            parts.append("every variant (the default of learn's features)" if self.every_by_default
                         else f"the default: {DEFAULT_RULE}")
        return "; ".join(parts)

    def as_dict(self, scored: Sequence = ()) -> dict:
        """What the JSON records: the choice as given, the rule in words, the variants shown and hidden."""
        return {"given": list(self.given) if self.given is not None else None,
                "named_with_metrics": {m: list(ts) for m, ts in self.through_metric.items()},
                "rule": self.describe(),
                "shown": [v for ms in self.apply(scored) for v in ms.scores],
                "hidden": self.hidden(scored)}


def available_variants(chosen: Sequence, skipped: Sequence[tuple[str, str]] = (),
                       imported: Sequence = ()) -> dict[str, list[str]]:
    """metric -> its variants, for the chosen metric objects, the skipped metrics (their class's variants: a name
    in ``--variants`` may belong to a metric that cannot run here) and imported scores."""
    import meta_eval.metrics.registry as registry

    found = {m.name: list(m.variants) for m in chosen}
    for name, _ in skipped:
        try:
            found.setdefault(name, list(registry.get_class(name).variants))
        except Exception:  # an unknown name or a broken plugin has no variants to offer
            pass
    for imp in imported:
        found.setdefault(imp.name, list(imp.table.variants))
    return found


def _describe_variants(available: Mapping[str, Sequence[str]]) -> str:
    return "; ".join(f"{m}: {', '.join(vs)}" for m, vs in available.items()) or "none"


def _broken_over_a_variant(token: str) -> bool:
    """Whether ``token`` is a broken installed plugin's name (:class:`metrics.registry.BrokenPluginError`: it never
    registered) that is also a loaded metric's variant (a built-in's, or an imported plugin's): ``-m`` then chooses
    the variant (the plugin stays listed as broken); only that plugin is imported to tell."""
    import meta_eval.metrics.registry as registry

    try:
        registry.get_class(token)
    except registry.BrokenPluginError:
        return bool(registry.variant_owners(token, loaded_only=True))  # no other plugin imported to tell
    except Exception:  # any other failure is the metric's own, reported where it is built
        return False
    return False


def resolve_metric_choice(requested: str | Sequence[str] | None, variants: str | Sequence[str] | None = None,
                          *, keep_names: Iterable[str] = (), every_by_default: bool = False
                          ) -> tuple[str | None, VariantChoice]:
    """(the metric names to choose, the :class:`VariantChoice`) from ``--metrics`` and ``--variants``.

    A name in ``requested`` that is no metric but a variant or a family of one metric's variants (``rouge1-f``,
    ``rouge1``, ``bertscore-f``) stands for that metric with those variants. ``keep_names`` (imported metrics'
    names) are left as they are. ``every_by_default`` (``learn``, whose variants are features): a metric without a
    chosen variant keeps every variant instead of :data:`DEFAULT_RULE`. A name that names variants of two metrics,
    or nothing, raises :class:`MetaEvalError` (the latter with the registry's message and the close variants).
    """
    import meta_eval.metrics.registry as registry

    given = parse_variants(variants)
    requested = requested_names(requested)
    if not requested:
        return requested, VariantChoice(given, {}, set(), every_by_default)
    keep = set(keep_names)
    names, through, named = [], {}, set()
    for token in [m.strip() for m in requested.split(",") if m.strip()]:
        # a broken installed plugin (an entry point that never registered) named after a loaded metric's variant
        # does not take -m rouge1-f from ROUGE (audit, session 38): the variant is chosen, the plugin stays listed
        if token == registry.ALL or token in keep or registry.is_named_only(token) or (
                registry.known(token) and not _broken_over_a_variant(token)):
            names.append(token)
            named.add(token)
            continue
        owners = registry.variant_owners(token)
        if len(owners) > 1:
            raise MetaEvalError(f"-m {token}: names variants of {len(owners)} metrics ("
                                + "; ".join(f"{m}: {', '.join(vs)}" for m, vs in owners.items())
                                + "); name the metric, with --variants")
        if not owners:
            try:
                registry.get_class(token)  # the registry's message (close names, broken plugins)
            except registry.UnknownMetricError as exc:
                close = registry.close_variants(token)
                owners = {m: vs for v in close for m, vs in registry.variant_owners(v).items()}
                hints = [f"{m}'s variants: {', '.join(registry.get_class(m).variants)}" for m in owners]
                said = str(exc)  # "unknown metric 'x' (did you mean y?); known metrics: ...": its suggestions join
                said_close = re.match(r"unknown metric .*? \(did you mean (.*?)\?\)", said)
                close = list(dict.fromkeys(close + (said_close.group(1).split(", ") if said_close else [])))
                rest = said.split("; ", 1)[1] if said.startswith("unknown metric ") and "; " in said else said
                raise MetaEvalError("; ".join([f"unknown metric or variant {token!r}"
                                               + (f" (did you mean {', '.join(close)}?)" if close else ""),
                                               *hints, rest])) from None
            names.append(token)
            named.add(token)
            continue
        (metric, _), = owners.items()
        names.append(metric)
        through.setdefault(metric, []).append(token)
    names = list(dict.fromkeys(names))
    return ",".join(names), VariantChoice(given, through, named, every_by_default)
