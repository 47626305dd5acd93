"""Learned metrics ``learned:<model>``: a saved ridge model (``meta-eval learn --save``) applied to its metrics' scores.

The family follows Scialom, Lamprier, Piwowarski & Staiano (EMNLP 2019), "Answers Unite!", section 2.4: a linear
combination of metric scores fitted to human judgments (see :mod:`meta_eval.learning.ridge` for the fitting protocol).

Where models live (``<model>`` in ``learned:<model>``):

- a *name* (letters, digits, ``_ . + -``, not ending in ``.json``) is the file ``<models dir>/<name>.json``; the
  models dir is ``$META_EVAL_HOME/learned`` when the environment variable ``META_EVAL_HOME`` is set (tests and
  sandboxes use it), else ``platformdirs.user_data_path("meta-eval") / "learned"``;
- anything with a path separator or ending in ``.json`` is a path to a model file (``learned:./mine.json``).

Only when named: a saved model runs only when it is asked for by name (``metrics.create("learned:x")``,
``meta-eval run --metrics learned:x``); it is never part of the default metric choice (``metrics.names()``, what
``run`` and ``leaderboard publish`` use without ``--metrics``), because a model fitted on one judgment set would
otherwise join every later run, including runs on the very set it was fitted on. ``metrics.names(
include_named_only=True)`` (``meta-eval metrics``) lists the saved models of the models dir as ``learned:<name>``,
marked "only when named". ``LearnedMetric(model="x")`` is the same metric.

In-sample runs: a model file records what it was fitted on (set, subset, target and a fingerprint of every row;
see :mod:`metrics.learned_format`). :func:`fit_checks` (called by ``meta-eval run``) compares that with the set
being scored: when any scored row was a training row (fingerprints; or, for an older file without them, when the
set and subset names are those it was fitted on) the run is *in-sample*, the correlations are not held-out, and
``run`` prints a warning and records it on the metric's result (``in_sample`` and ``fitted_on``). An older file that
records neither gives "unknown" (``in_sample: null``), with a note.

Scoring: the component metrics are re-created through the registry with the options saved in the model (the
multi-reference option ``refs``, which most constructors do not take, through :meth:`~metrics.base.Metric.with_refs`;
a learned metric itself takes no ``refs``: each component keeps its saved policy), each scores
the examples, the model's features (their variants) are standardised with the saved scaler and the linear model is
applied. The single variant is named like the metric (``learned:x``); higher is better (the target is a human
score).

Signature: ``learned:<model>|model:sha256:<first 12 hex of the model file>|fit:<set>/<subset>|target:<spec>|
features:<f1+f2...>|components:{<signature of each component>}+...|meta-eval==<version>`` (braces, not brackets,
which rich would take for markup; ``unknown`` for a set, subset or target an older model file does not record).

Upgrades: when a component's signature today differs from the one saved with the model (a library, resource or
meta-eval version changed, so its scores may differ from the ones the weights were fitted on), creating the metric
raises :class:`~metrics.learned_format.LearnedModelError` naming the component and both signatures; re-run ``meta-eval
learn ... --save <name>`` to refit. A missing or corrupt model file is also a ``LearnedModelError`` when the metric
is created, and the metric's :meth:`~metrics.base.Metric.unavailable_reason` (what ``meta-eval metrics`` and
``run`` report) says what is wrong.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Sequence

import numpy as np

from meta_eval.metrics import registry
from meta_eval.metrics.base import Example, Metric
from meta_eval.metrics.learned_format import LearnedModel, LearnedModelError, row_fingerprint

__all__ = ["ENV_HOME", "PREFIX", "FitCheck", "LearnedMetric", "fit_checks", "models_dir", "model_path", "saved_models"]

ENV_HOME = "META_EVAL_HOME"
PREFIX = "learned"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$")


def models_dir() -> Path:
    """``$META_EVAL_HOME/learned`` if ``META_EVAL_HOME`` is set, else the user data dir's ``meta-eval/learned``."""
    home = os.environ.get(ENV_HOME)
    if home:
        return Path(home).expanduser() / "learned"
    import platformdirs

    return platformdirs.user_data_path("meta-eval") / "learned"


def _is_path(spec: str) -> bool:
    return "/" in spec or os.sep in spec or spec.endswith(".json")


def model_path(spec: str) -> Path:
    """The model file of ``spec``: a name in :func:`models_dir`, or a path (see the module notes).

    Raises
    ------
    ValueError
        For a name with characters other than letters, digits and ``_ . + -``.
    """
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError("a learned model needs a name or a path")
    if _is_path(spec):
        return Path(spec).expanduser()
    if not _NAME.match(spec):
        raise ValueError(f"invalid learned-model name {spec!r}: use letters, digits and _ . + - (or give a path "
                         "ending in .json)")
    return models_dir() / f"{spec}.json"


def saved_models() -> list[str]:
    """Names of the models saved in :func:`models_dir`, sorted."""
    folder = models_dir()
    if not folder.is_dir():
        return []
    return sorted(p.stem for p in folder.glob("*.json") if _NAME.match(p.stem) and not p.stem.endswith(".json"))


class LearnedMetric(Metric):
    """A saved learned model applied to the scores of its component metrics.

    Parameters
    ----------
    model : str
        A saved model's name or a path to a model file (see the module notes). Bound classes created for
        ``learned:<model>`` supply it.

    Raises
    ------
    metrics.learned_format.LearnedModelError
        If the file is missing, corrupt or malformed, a component metric is unknown or cannot be configured, or a
        component's signature differs from the saved one.
    """

    needs_references = False
    higher_is_better = True
    refs_fixed = True  # each component keeps the multi-reference policy saved with the model (option "refs")
    parallel = "single"  # its class is built at run time (not picklable) and components may hold models
    _model_spec: ClassVar[str | None] = None
    _load_error: ClassVar[str | None] = None
    _component_names: ClassVar[tuple[str, ...]] = ()

    def __init__(self, model: str | None = None) -> None:
        bound = type(self)._model_spec
        if model is None and bound is None:
            raise ValueError("LearnedMetric needs model=<saved model name or path>")
        if bound is not None and model is not None and model != bound:
            raise ValueError(f"{self.name} is bound to model {bound!r}; use learned:{model} for another model")
        spec = model if model is not None else bound
        if bound is None:  # an unbound LearnedMetric(model=...) names itself like the registry would
            self.name = f"{PREFIX}:{spec}"
            self.variants = (self.name,)
        try:
            self.path = model_path(spec)
        except ValueError as exc:
            raise LearnedModelError(str(exc)) from None
        self.model = LearnedModel.load(self.path)
        self.components: list[Metric] = []
        for comp in self.model.components:
            try:
                options = dict(comp.options)
                refs = options.pop("refs", None) if "refs" not in _constructor_options(comp.name) else None
                metric = registry.create(comp.name, **options)
                if refs is not None:
                    metric.with_refs(refs)
            except (registry.UnknownMetricError, registry.RegistryError, ValueError, TypeError) as exc:
                raise LearnedModelError(f"{self.name}: cannot create its component metric {comp.name!r} with "
                                        f"options {comp.options}: {exc}") from None
            current = metric.signature()
            if _unfitted(current) != _unfitted(comp.signature):  # the set it is fitted on may differ (fit:...)
                raise LearnedModelError(
                    f"{self.name}: component {comp.name!r} has changed since the model was learned, so its scores "
                    f"may differ from the ones the weights were fitted on.\n  saved:   {comp.signature}\n"
                    f"  current: {current}\nRe-run `meta-eval learn ... --save` to refit the model "
                    f"({self.path}).")
            missing = [v for v in comp.variants if v not in metric.variants]
            if missing:
                raise LearnedModelError(f"{self.name}: component {comp.name!r} has no variant(s) {missing}")
            self.components.append(metric)
        self.needs_references = any(m.needs_references for m in self.components)
        self.needs_source = any(m.needs_source for m in self.components)
        self.holds = tuple(dict.fromkeys(r for m in self.components for r in m.holds))

    def release(self) -> None:
        for metric in self.components:
            metric.release()

    @classmethod
    def unavailable_reason(cls) -> str | None:
        if cls._load_error is not None:
            return cls._load_error
        for name in cls._component_names:
            try:
                reason = registry.get_class(name).unavailable_reason()
            except registry.UnknownMetricError as exc:
                return f"component metric: {exc}"
            if reason is not None:
                return f"component {name}: {reason}"
        return None

    def config(self) -> dict[str, object]:
        m = self.model
        return {"model": f"sha256:{m.sha256[:12]}", "fit": m.fitted_on, "target": m.target or "unknown",
                "features": "+".join(m.features),
                "components": "+".join(f"{{{c.signature()}}}" for c in self.components)}

    def fit(self, examples: Sequence[Example]) -> None:
        """Fit every component on the scored set (e.g. MoverScore's IDF); their signatures enter :meth:`config`."""
        for metric in self.components:
            metric.fit(examples)

    def _score(self, examples: list[Example]) -> dict[str, np.ndarray]:
        columns: dict[str, np.ndarray] = {}
        for metric, comp in zip(self.components, self.model.components):
            out = metric.score(examples)
            for variant in comp.variants:
                columns[variant] = out[variant]
        return {self.name: self.model.predict(columns)}


@dataclass(frozen=True)
class FitCheck:
    """Whether scoring a set with a learned model is in-sample (see the module notes).

    Attributes
    ----------
    metric : str
        The learned metric (``learned:<model>``).
    in_sample : bool or None
        True if the scored rows include training rows (or, without fingerprints, the set and subset are the ones
        it was fitted on); None when the model file records neither (an older file).
    fitted_on, target : str
        ``<set>/<subset>`` and the target it was fitted on (``unknown`` for what an older file lacks).
    overlap : int or None
        Scored rows that were training rows (None: the file has no row fingerprints).
    rows, training_rows : int
        Rows scored here; rows the model was fitted on.
    """

    metric: str
    in_sample: bool | None
    fitted_on: str
    target: str
    overlap: int | None
    rows: int
    training_rows: int

    def message(self) -> str | None:
        """The warning (in-sample) or note (unknown) to print; None for a held-out run."""
        if self.in_sample is None:
            return (f"{self.metric}: its model file does not record what it was fitted on (an older file), so "
                    "whether these correlations are held-out is unknown; refit with `meta-eval learn ... --save` "
                    "to record it")
        if not self.in_sample:
            return None
        how = (f"{self.overlap} of the {self.rows} rows scored here were among its {self.training_rows} training "
               f"rows" if self.overlap is not None else "this is that set and subset")
        return (f"{self.metric}: in-sample: fitted on {self.fitted_on} (target {self.target}); {how}; these "
                "correlations are not held-out")

    def as_dict(self) -> dict[str, object]:
        """The fields added to the metric's result entries in ``run --output`` JSON."""
        return {"in_sample": self.in_sample,
                "fitted_on": {"set": self.fitted_on, "target": self.target, "training_rows": self.training_rows,
                              "rows_scored": self.rows, "training_rows_scored": self.overlap}}


def fit_checks(chosen: Sequence[Metric], examples: Sequence[Example], judgments: str,
               subset: str | None) -> dict[str, FitCheck]:
    """A :class:`FitCheck` for every learned metric of ``chosen`` on the set ``judgments``/``subset``.

    ``examples`` are the rows scored (after rows without the human score are left out). Row fingerprints decide
    when the model file has them: a set under another name (a JSONL copy of some rows, subset ``all`` of a model
    fitted on ``sms``) is caught, and an unrelated file that shares a name is not. Without fingerprints the set and
    subset names decide (a missing subset matches any).
    """
    checks = {}
    prints: list[str] | None = None
    for metric in chosen:
        if not isinstance(metric, LearnedMetric):
            continue
        model = metric.model
        overlap = None
        if model.rows is not None:
            if prints is None:
                prints = [row_fingerprint(e) for e in examples]
            training = set(model.rows)
            overlap = sum(p in training for p in prints)
            in_sample: bool | None = overlap > 0
        elif model.judgments is None:
            in_sample = None
        else:
            in_sample = model.judgments == judgments and model.subset in (None, subset)
        checks[metric.name] = FitCheck(metric.name, in_sample, model.fitted_on, model.target or "unknown", overlap,
                                       len(examples), model.n)
    return checks


def _unfitted(signature: str) -> str:
    """``signature`` without its ``fit:`` part (what :meth:`Metric.fit` fitted on, see metrics.base)."""
    return "|".join(p for p in signature.split("|") if not p.startswith("fit:"))


def _constructor_options(name: str) -> set[str]:
    """The keyword options the constructor of metric ``name`` takes."""
    import inspect

    return set(inspect.signature(registry.get_class(name).__init__).parameters)


_classes: dict[str, tuple[tuple, type[LearnedMetric]]] = {}


def _resolve(spec: str) -> type[LearnedMetric]:
    """The class for ``learned:<spec>`` (memoised while the model file is unchanged)."""
    full = f"{PREFIX}:{spec}"
    try:
        path = model_path(spec)
        stat = path.stat()
    except (ValueError, OSError) as exc:
        saved = ", ".join(f"{PREFIX}:{n}" for n in saved_models()) or "none"
        why = str(exc) if isinstance(exc, ValueError) else f"no model file {path}"
        raise registry.UnknownMetricError(
            f"unknown metric {full!r}: {why}; saved learned models (in {models_dir()}): {saved}. Create one with "
            f"`meta-eval learn --judgments ... --metrics ... --save {spec}`") from None
    stamp = (str(path.resolve()), stat.st_mtime_ns, stat.st_size, stat.st_ino)
    memo = _classes.get(spec)
    if memo is not None and memo[0] == stamp:
        return memo[1]
    attrs: dict[str, object] = {"name": full, "variants": (full,), "_model_spec": spec, "__module__": __name__,
                                "__doc__": f"Learned metric from {path}."}
    try:
        model = LearnedModel.load(path)
        classes = [registry.get_class(c.name) for c in model.components]
        attrs["needs_references"] = any(c.needs_references for c in classes)
        attrs["needs_source"] = any(c.needs_source for c in classes)
        attrs["_component_names"] = tuple(c.name for c in model.components)
    except (LearnedModelError, registry.UnknownMetricError) as exc:
        attrs["_load_error"] = str(exc)
    cls = type(f"LearnedMetric[{spec}]", (LearnedMetric,), attrs)
    _classes[spec] = (stamp, cls)
    return cls


registry.register_prefix(PREFIX, _resolve, saved_models)
