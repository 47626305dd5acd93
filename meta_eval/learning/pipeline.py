"""``meta-eval learn`` as a library call, :func:`learn`, and its steps.

:func:`learn` checks the settings and outputs, loads the set and target, chooses and scores the metrics, searches
feature sets, fits the final model, saves it and returns a :class:`LearnResult`; the command line only prints it.
Each step raises ``ValueError`` with the message the command prints (:func:`learn` turns them into
:class:`~meta_eval.errors.MetaEvalError`):

- :func:`check_settings`: the option values that typer cannot check (correlation, train fraction, search).
- :func:`load_target`: the judgment set, its rows with a target value, and that target.
- :func:`split_skipped`: which metrics of ``--metrics`` are skipped and which stop the run. A metric that needs
  inputs the set does not have (source documents, references) is *skipped* with its reason, because one
  ``--metrics`` list is meant to serve every set (as ``meta-eval leaderboard publish`` does: textrank and
  novelty need sources, which chaganty and essays lack). A metric that cannot run *here* (a model that is not
  installed, a bad option) or that fails while scoring stops the run: it was named as a feature source, and
  learning without it silently would answer a different question.
- :func:`check_metrics`: :func:`split_skipped`, then stop unless at least one metric can run and none blocks.
- :func:`feature_columns`: the feature columns (every variant of the chosen metrics, or ``--features``).
- :func:`document_groups`: the document of every row for grouped splits, or None when the set has a single
  document (essays: one prompt), where only the ungrouped protocol (the paper's) is possible.
- :func:`search`: the feature-set search (:func:`meta_eval.learning.ridge.select_features`) with the command's settings.
- :func:`final_model`, :func:`save_model` and :func:`output_document`: the model fitted on all rows (recording the
  set, subset, target and row fingerprints it was fitted on, so ``run`` can flag an in-sample use; see
  :mod:`metrics.learned_format`), saving it, and the ``--output`` JSON.

The statistics (splits, ridge, search strategies) are in :mod:`meta_eval.learning.ridge`.
"""
from __future__ import annotations

import math
import numbers
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import numpy as np

from meta_eval.learning import ridge as learning
from meta_eval.metrics.learned_format import row_fingerprints

if TYPE_CHECKING:  # pragma: no cover
    from meta_eval.judgments.base import JudgmentSet
    from meta_eval.scoring.runner import MetricScores
    from meta_eval.metrics.base import Metric

__all__ = ["MIN_ROWS", "PROTOCOLS", "LearnData", "LearnResult", "check_metrics", "check_protocol", "check_settings",
           "document_groups", "parse_alphas",
           "feature_columns",
           "final_model", "learn", "load_target", "output_document", "save_model", "save_path", "search",
           "split_skipped"]

MIN_ROWS = 10  # rows with a target value needed to learn


@dataclass(frozen=True)
class LearnData:
    """The rows to learn from.

    Attributes
    ----------
    jset : JudgmentSet
        The rows that have a target value.
    spec : str
        The target spec (``--target``, or the set's default dimension).
    y : ndarray
        Target values, one per row of ``jset``.
    dropped : int
        Rows of the set left out for lack of a target value.
    """

    jset: JudgmentSet
    spec: str
    y: np.ndarray
    dropped: int


def check_settings(correlation: str, train_fraction: float, search: str, no_search: bool = False) -> str:
    """Check the settings typer cannot check; return the search strategy (``--no-search`` is ``none``).

    Raises
    ------
    ValueError
        For an unknown correlation or search strategy, a train fraction outside (0, 1), or ``--no-search`` with
        another ``--search`` than auto or none.
    """
    if correlation not in learning.CORRELATION_KINDS:
        raise ValueError(f"--correlation must be spearman, pearson or kendall, not {correlation!r}")
    if not 0 < train_fraction < 1:
        raise ValueError(f"--train-fraction must be between 0 and 1, got {train_fraction}")
    if search not in learning.SEARCH_STRATEGIES:
        raise ValueError(f"--search must be {', '.join(learning.SEARCH_STRATEGIES)}, not {search!r}")
    if no_search:
        if search not in ("auto", "none"):
            raise ValueError(f"--no-search contradicts --search {search}")
        search = "none"
    return search


def load_target(judgments: str, data_dir: str | Path | None = None, subset: str | None = None,
                target: str | None = None) -> LearnData:
    """Load a judgment set and keep the rows that have the target (see :func:`meta_eval.learning.ridge.target_set`).

    Raises
    ------
    judgments.JudgmentError, judgments.DataError
        For a set or file that cannot be loaded.
    ValueError
        For a bad target, or fewer than :data:`MIN_ROWS` rows with a target value.
    """
    from meta_eval import judgments as judgment_sets
    jset = judgment_sets.load(judgments, data_dir, subset=subset)
    spec = target or jset.default_dimension
    total = len(jset)
    kept, y = learning.target_set(jset, spec)
    if len(kept) < MIN_ROWS:
        raise ValueError(f"{kept.name}: only {len(kept)} rows have the target {spec!r}; at least {MIN_ROWS} are "
                         "needed")
    return LearnData(kept, spec, y, total - len(kept))


def split_skipped(skipped: Sequence[tuple[str, str]], has_sources: bool,
                  has_references: bool) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """Split the metrics that cannot run into (skipped: the set lacks their inputs, blocking: anything else).

    Parameters
    ----------
    skipped : sequence of (metric name, reason)
        As returned by the command line's metric chooser.
    has_sources, has_references : bool
        What the judgment set has.

    Returns
    -------
    (inapplicable, blocking) : two lists of (name, reason)
        A metric that needs source documents (references) on a set without them is inapplicable, whatever else
        may be wrong with it; the reason then says what the set lacks.
    """
    import meta_eval.metrics.registry as registry

    inapplicable, blocking = [], []
    for name, reason in skipped:
        try:
            cls = registry.get_class(name)
        except Exception:  # an unknown or broken metric is never "inapplicable"
            blocking.append((name, reason))
            continue
        lacks = [what for what, needed, has in (("source documents", cls.needs_source, has_sources),
                                                ("references", cls.needs_references, has_references))
                 if needed and not has]
        if lacks:
            inapplicable.append((name, f"needs {' and '.join(lacks)}, which this set does not have"))
        else:
            blocking.append((name, reason))
    return inapplicable, blocking


def check_metrics(chosen: Sequence[Metric], skipped: Sequence[tuple[str, str]], jset: JudgmentSet) \
        -> list[tuple[str, str]]:
    """The metrics skipped because ``jset`` lacks their inputs (see :func:`split_skipped`).

    Raises
    ------
    ValueError
        If a skipped metric cannot run for another reason (it was named as a feature source), or no metric can run.
    """
    inapplicable, blocking = split_skipped(skipped, jset.has_sources, jset.max_references > 0)
    if blocking:
        raise ValueError("every metric of --metrics is a feature source, but these cannot run: "
                         + "; ".join(f"{n}: {r}" for n, r in blocking))
    if not chosen:
        raise ValueError(f"no metric of --metrics can run on {jset.name}: "
                         + "; ".join(f"{n}: {r}" for n, r in inapplicable))
    return inapplicable


def feature_columns(chosen: Sequence[Metric], scored: Sequence[MetricScores],
                    features: str | None = None) -> tuple[list[str], dict[str, np.ndarray]]:
    """The feature names and columns: every variant of the scored metrics, or the comma-separated ``features``.

    Raises
    ------
    ValueError
        If two metrics produce a variant of the same name, or ``features`` names an unknown variant, a variant
        twice, or nothing.
    """
    owner: dict[str, Any] = {}
    for ms in scored:
        for variant in ms.scores:
            if variant in owner:
                raise ValueError(f"variant {variant!r} is produced by both {owner[variant].metric} and {ms.metric}")
            owner[variant] = ms
    names = [f.strip() for f in features.split(",") if f.strip()] if features else list(owner)
    unknown = [f for f in names if f not in owner]
    if unknown or not names or len(set(names)) != len(names):
        raise ValueError(f"--features must name distinct variants of the chosen metrics ({', '.join(owner)}); "
                         f"{'unknown: ' + ', '.join(unknown) if unknown else 'got ' + repr(features)}")
    return names, {f: np.asarray(owner[f].scores[f], dtype=np.float64) for f in names}


def document_groups(jset: JudgmentSet) -> tuple[list[str] | None, str | None]:
    """The document id of every row for grouped splits, or (None, why) when the set has fewer than 2 documents."""
    n_docs = jset.documents()
    if n_docs < 2:
        return None, (f"{jset.name} has {n_docs} document(s): grouped splits need at least 2, so only the ungrouped "
                      "protocol (rows split at random, the paper's) is run")
    return [r.doc_id for r in jset.rows], None


def search(columns: Mapping[str, np.ndarray], y: np.ndarray, groups: Sequence[str] | None, *, strategy: str,
           max_size: int | None, alpha: float, splits: int, train_fraction: float, seed: int, correlation: str,
           search_splits: int, top: int, min_gain: float) -> tuple[learning.SearchOutcome, float]:
    """Run :func:`meta_eval.learning.ridge.select_features`; return the outcome and the seconds it took.

    At least :data:`meta_eval.learning.ridge.FINALISTS` (or ``top``, if more) screened sets are evaluated on every
    split.

    Raises
    ------
    ValueError
        As ``select_features``; past the exhaustive cap the message says how to get under it.
    """
    started = time.perf_counter()
    try:
        outcome = learning.select_features(columns, y, groups, strategy=strategy, max_size=max_size, alpha=alpha,
                                           n_splits=splits, train_fraction=train_fraction, seed=seed,
                                           kind=correlation, search_splits=search_splits,
                                           finalists=max(top, learning.FINALISTS), min_gain=min_gain)
    except ValueError as exc:
        if "cap" in str(exc):
            raise ValueError(f"{exc} (use --features, --max-size or --search greedy)") from None
        raise
    return outcome, time.perf_counter() - started


def final_model(best, columns: Mapping[str, np.ndarray], y: np.ndarray,
                chosen: Sequence[Metric], scored: Sequence[MetricScores], configs: Sequence[Mapping[str, Any]],
                data: LearnData, alpha: float, heldout: Mapping[str, Any] | None = None) -> learning.LearnedModel:
    """Fit the best feature set on all rows (:func:`meta_eval.learning.ridge.fit_final`) as a :class:`LearnedModel`.

    The model records the set, subset and target of ``data`` and the fingerprints of its rows (what it was
    fitted on, so that ``run`` can tell an in-sample use). ``best`` is a :class:`RidgeResult` (the paper's protocol)
    or a :class:`~meta_eval.learning.nested.NestedResult` (its final features; ``alpha`` is then the alpha the inner
    cross-validation chose on all rows), ``heldout`` what the model file records as its held-out estimate.

    ``configs`` holds, per chosen metric, the options it was created with (saved so ``learned:NAME`` re-creates
    it); only the metrics that feed the model become components.
    """
    x = np.column_stack([columns[f] for f in best.features])
    means, stds, weights, intercept = learning.fit_final(x, y, alpha)
    components = []
    for metric, ms, config in zip(chosen, scored, configs):
        used = tuple(v for v in ms.scores if v in best.features)
        if used:
            components.append(learning.Component(metric.name, dict(config), ms.signature, used))
    jset = data.jset
    return learning.LearnedModel(features=list(best.features), components=components, means=means.tolist(),
                                 stds=stds.tolist(), weights=weights.tolist(), intercept=intercept, alpha=alpha,
                                 target=data.spec, judgments=jset.name, subset=jset.subset, n=len(jset),
                                 documents=jset.documents(),
                                 heldout=dict(heldout) if heldout is not None else best.as_dict(),
                                 rows=row_fingerprints(jset.examples()))


def save_path(save: str) -> Path:
    """Where ``--save`` writes the model, as its help says: a plain NAME (letters, digits and ``_ . + -``) is
    ``<models dir>/NAME.json`` (:func:`metrics.learned.models_dir`), anything else a path ending in ``.json``.

    ``learned:SPEC`` reads any path with a separator, but a save is a write: a path without the suffix (``sub/x``,
    ``../x``) would land beside the working directory under a name no listing shows as a model, so it is refused.

    Raises
    ------
    ValueError
        For a path that does not end in ``.json``, or an invalid name.
    """
    import os

    from meta_eval.metrics.learned import model_path, models_dir

    text = str(save)
    if any(sep and sep in text for sep in ("/", os.sep, os.altsep)) and not text.endswith(".json"):
        raise ValueError(f"--save {text}: a path must end in .json (--save {text}.json); a plain NAME (letters, "
                         f"digits and _ . + -) is stored in {models_dir()}")
    try:
        return model_path(text)
    except ValueError as exc:
        raise ValueError(f"--save: {exc}") from None


def save_model(model: learning.LearnedModel, path: Path) -> None:
    """Save ``model`` to ``path`` through the one write path (:func:`meta_eval.report.outputs.atomic_write`: a
    temporary file beside it, renamed into place), and set its ``sha256`` to the bytes written.

    Raises
    ------
    ValueError
        If the file cannot be written (the message names it).
    """
    import hashlib

    from meta_eval.report.outputs import OutputError, atomic_write

    data = model.to_bytes()
    try:
        atomic_write(Path(path), lambda tmp: tmp.write_bytes(data))
    except (OSError, OutputError) as exc:
        raise ValueError(f"cannot save the model to {path}: {exc}") from None
    model.sha256 = hashlib.sha256(data).hexdigest()


def output_document(data: LearnData, outcome: learning.SearchOutcome | None, model: learning.LearnedModel,
                    names: Sequence[str], scored: Sequence[MetricScores], skipped: Sequence[tuple[str, str]],
                    grouping_note: str | None, settings: Mapping[str, Any], saved: str | Path | None,
                    learn_seconds: float, wall_seconds: float, nested=None) -> dict[str, Any]:
    """The ``--output`` JSON: the data, the settings, the protocol and its results (``nested``: the nested
    cross-validation's held-out estimate, interval, tests, per-fold choices and weights; ``paper``: the search and
    every finalist's repeated-split results), the model (as saved, without its row fingerprints, which only the
    saved file needs, and its provenance, which is the document's own), and the metrics' signatures and timing."""
    jset = data.jset
    model_doc = model.as_dict()
    model_doc.pop("rows", None)
    model_doc.pop("provenance", None)
    doc = {"judgments": jset.name, "subset": jset.subset, "target": data.spec, "n": len(jset),
           "rows_without_target": data.dropped, "documents": jset.documents(), **dict(settings)}
    if nested is not None:
        doc.update({"protocol": "nested", "grouping_note": grouping_note, "nested": nested.as_dict(),
                    "features": list(names), "best": list(nested.features)})
    else:
        doc.update({"protocol": "paper",
                    "protocols": ["grouped", "ungrouped"] if grouping_note is None else ["ungrouped"],
                    "grouping_note": grouping_note, "search": outcome.as_dict(), "features": list(names),
                    "best": list(outcome.best.features), "results": [r.as_dict() for r in outcome.results]})
    doc.update({"skipped": [{"metric": n, "reason": r} for n, r in skipped], "model": model_doc,
                "saved": None if saved is None else str(saved),
                "signatures": {ms.metric: ms.signature for ms in scored},
                "timing": {ms.metric: {"seconds": round(ms.seconds, 3), "computed": ms.computed, "cached": ms.cached,
                                       "beside": ms.beside} for ms in scored},
                "learn_seconds": round(learn_seconds, 3), "wall_seconds": round(wall_seconds, 3)})
    return doc


@dataclass
class LearnResult:
    """What :func:`learn` returns: the data, the protocol's results (``nested``: a
    :class:`~meta_eval.learning.nested.NestedResult`; ``paper``: the search outcome, every finalist's held-out
    results, the best feature set), the final model fitted on all rows, the features, the metrics' scores and what
    was skipped, and the ``--output`` document (:meth:`to_dict`)."""

    data: LearnData
    outcome: learning.SearchOutcome | None
    model: learning.LearnedModel
    features: list[str]
    scores: list
    skipped: list[tuple[str, str]]
    grouping_note: str | None
    settings: dict
    saved: Path | None
    learn_seconds: float
    wall_seconds: float
    nested: Any = None
    provenance: dict | None = None
    """The command line (None for a library call), meta-eval's version and the SHA-256 of every file read
    (:func:`meta_eval.provenance.record`)."""
    not_saved: str | None = None
    """Why the model asked for with ``save`` was not saved (its best features use imported scores), else None; the
    command prints the results, then this, and exits with code 1."""

    @property
    def protocol(self) -> str:
        return "nested" if self.nested is not None else "paper"

    @property
    def best(self):
        """The paper's best :class:`RidgeResult`, or the :class:`NestedResult` (``.features``: the final model's)."""
        return self.nested if self.nested is not None else self.outcome.best

    @property
    def grouped(self) -> bool:
        return self.grouping_note is None

    def to_dict(self) -> dict[str, Any]:
        return {**output_document(self.data, self.outcome, self.model, self.features, self.scores, self.skipped,
                                  self.grouping_note, self.settings, self.saved, self.learn_seconds,
                                  self.wall_seconds, self.nested), "not_saved": self.not_saved,
                "provenance": self.provenance}

    def to_frame(self):
        """``paper``: one row per evaluated feature set (best first): size, mean held-out correlations (grouped
        where defined, ungrouped) and their spread over splits. ``nested``: the learned metric's held-out estimate,
        then the single features it is tested against, with the intervals, differences and p-values (pandas
        imported here only)."""
        from meta_eval.results import _need

        pd = _need("pandas", "to_frame()")
        rows = []
        if self.nested is not None:
            n = self.nested
            rows.append({"features": " + ".join(n.features), "role": "learned (nested held-out)", "value": n.value,
                         "low": n.low, "high": n.high, "difference": None, "difference_low": None,
                         "difference_high": None, "p": None})
            for c in n.comparisons:
                rows.append({"features": c.feature, "role": c.role, "value": c.value, "low": c.low, "high": c.high,
                             "difference": c.difference, "difference_low": c.diff_low,
                             "difference_high": c.diff_high, "p": c.p})
            return pd.DataFrame(rows)
        for r in self.outcome.results:
            g, u = r.grouped, r.ungrouped
            rows.append({"features": " + ".join(r.features), "size": r.size,
                         "grouped": None if g is None else g.mean, "grouped_low": None if g is None else g.low,
                         "grouped_high": None if g is None else g.high, "ungrouped": u.mean,
                         "ungrouped_low": u.low, "ungrouped_high": u.high, "overstatement": r.overstatement})
        return pd.DataFrame(rows)


PROTOCOLS = ("nested", "paper")
PAPER_ONLY = {"alpha": ("--alpha", 1.0), "splits": ("--splits", 1000), "search_splits": ("--search-splits", 100),
              "train_fraction": ("--train-fraction", 0.5), "top": ("--top", 10)}
NESTED_ONLY = {"folds": ("--folds", 5), "inner_folds": ("--inner-folds", 5), "alphas": ("--alphas", None),
               "resamples": ("--resamples", 1000)}


def check_protocol(protocol: str, given: Mapping[str, Any], baseline: str | None,
                   nested: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Every protocol-specific setting (``given``: :data:`PAPER_ONLY`'s, ``nested``: :data:`NESTED_ONLY`'s, None
    where not given) with the chosen protocol's defaults filled in; an error for one given with the other protocol,
    which would ignore it.

    Raises
    ------
    ValueError
        For an unknown protocol, ``--alpha``/``--splits``/``--search-splits``/``--train-fraction``/``--top`` with
        ``nested``,
        or ``--baseline``/``--folds``/``--inner-folds``/``--alphas``/``--resamples`` with ``paper``.
    """
    nested = dict(nested or {})
    if protocol not in PROTOCOLS:
        raise ValueError(f"--protocol must be nested or paper, not {protocol!r}")
    if protocol == "nested":
        bad = [PAPER_ONLY[k][0] for k, v in given.items() if v is not None]
        if bad:
            raise ValueError(f"{', '.join(bad)}: option(s) of --protocol paper (repeated random halves); the nested "
                             "protocol chooses alpha from --alphas by inner cross-validation over --folds outer "
                             "folds")
        return {k: (NESTED_ONLY[k][1] if v is None else v) for k, v in nested.items()}
    bad = [NESTED_ONLY[k][0] for k, v in nested.items() if v is not None] + (["--baseline"] if baseline else [])
    if bad:
        raise ValueError(f"{', '.join(bad)}: option(s) of --protocol nested (outer folds, the bootstrap interval and "
                         "the paired tests against a baseline); the paper protocol fits alpha (--alpha) on --splits "
                         "random halves")
    return {k: (PAPER_ONLY[k][1] if v is None else v) for k, v in given.items()}


def parse_alphas(alphas: str | Sequence[float] | None) -> tuple[float, ...]:
    """``--alphas`` (comma-separated numbers) as a tuple; the default grid when None.

    Raises
    ------
    ValueError
        For a value that is not a finite number >= 0, or an empty grid.
    """
    from meta_eval.learning.nested import ALPHAS

    if alphas is None:
        return ALPHAS
    items = [a.strip() for a in alphas.split(",")] if isinstance(alphas, str) else list(alphas)
    out = []
    for a in items:
        try:
            v = float(a)
        except (TypeError, ValueError):
            v = math.nan
        if not (math.isfinite(v) and v >= 0):
            raise ValueError(f"--alphas: {a!r} is not a number >= 0 (give e.g. --alphas 0.1,1,10)")
        out.append(v)
    if not out:
        raise ValueError("--alphas: give at least one ridge strength, e.g. --alphas 0.1,1,10")
    return tuple(sorted(set(out)))


def learn(judgments: str, metrics: str | Sequence[str], *, features: str | Sequence[str] | None = None,
          target: str | None = None, alpha: float | None = None, splits: int | None = None,
          train_fraction: float | None = None, seed: int = 0, search: str = "auto", no_search: bool = False,
          max_size: int | None = None, search_splits: int | None = None, protocol: str = "nested",
          folds: int | None = None, inner_folds: int | None = None, alphas: str | Sequence[float] | None = None,
          resamples: int | None = None,
          baseline: str | None = None,
          min_gain: float = 0.001, top: int | None = None, correlation: str = "spearman", subset: str | None = None,
          options: Mapping[str, object] | Sequence[str] | None = None, save: str | None = None,
          output: str | Path | None = None, force: bool = False, data_dir: str | Path | None = None,
          cache: str | Path | None = None, no_cache: bool = False, batch_size: int = 256, progress: bool = True,
          say=None, plugins: Sequence[str | Path] = (), scores: Sequence[str] = (),
          scores_format: str | None = None, variants: str | Sequence[str] | None = None) -> LearnResult:
    """Learn a metric (``meta-eval learn``): ridge regression from metric scores to human scores (Scialom et al.
    2019, sec. 2.4), a feature-set search, a final model on all rows, evaluated by ``protocol``:

    - ``"nested"`` (default; :func:`meta_eval.learning.nested.nested_cv`): ``folds`` outer folds by document; the
      features and alpha (from ``alphas``) chosen by ``inner_folds``-fold inner cross-validation inside each
      training part only; the pooled held-out correlation with a document-bootstrap interval (``resamples``) and
      paired bootstrap tests against the best single feature and ``baseline`` (default ``rougeL-f`` when it is a
      feature) on the same rows.
    - ``"paper"``: the paper's repeated random halves (``splits``, ``train_fraction``) with alpha fixed
      (``alpha``, default 1) and the feature set chosen on the same halves it is reported on (optimistic), plus
      the grouped variant; its "interval" is the spread over splits. ``alpha``, ``splits`` and ``search_splits``
      belong to this protocol only.

    The arguments are ``meta-eval learn``'s options by the same names (``save``: a model name or a ``.json``
    path; ``plugins``: Python files whose metrics are registered first, ``--plugin FILE.py``; ``scores``:
    imported metrics, ``NAME=FILE``, as features, :mod:`meta_eval.scoring.imported`; a model whose best features
    include imported scores cannot be saved, as those scores exist only for this set's rows: with every feature
    imported that is an error before any work, else the result is returned (and ``output`` written) with
    ``not_saved`` saying why). ``output`` and ``save`` are checked before any work. Raises
    :class:`~meta_eval.errors.MetaEvalError` with the command's message.
    """
    from meta_eval import judgments as judgment_sets
    from meta_eval.errors import MetaEvalError
    from meta_eval.learning.pipeline import search as run_search  # the parameter ``search`` hides the function
    from meta_eval.report.outputs import OutputPlan, check_format, write_json
    from meta_eval.scoring.cache import open_cache
    from meta_eval.judgments.rows import check_seed
    from meta_eval.task import check_judgments_argument
    from meta_eval.scoring.runner import score_all
    from meta_eval.scoring.selection import (available_variants, choose_metrics, group_skips, load_plugins,
                                             metric_config, parse_options, requested_names, resolve_metric_choice)
    from meta_eval.scoring.selection import option_list as as_option_list

    say = say or (lambda channel, text: None)
    started = time.perf_counter()
    option_list = as_option_list(options)
    features = requested_names(features)
    try:
        chosen_settings = check_protocol(
            protocol, {"alpha": alpha, "splits": splits, "search_splits": search_splits,
                       "train_fraction": train_fraction, "top": top},
            baseline, {"folds": folds, "inner_folds": inner_folds, "alphas": alphas, "resamples": resamples})
        alpha, splits, search_splits, train_fraction, top, folds, inner_folds, alphas, resamples = (
            chosen_settings.get(k) for k in ("alpha", "splits", "search_splits", "train_fraction", "top", "folds",
                                             "inner_folds", "alphas", "resamples"))
        strategy = check_settings(correlation, 0.5 if train_fraction is None else train_fraction, search, no_search)
        if protocol == "paper" and isinstance(seed, numbers.Integral) and seed >= 2 ** 32:
            raise ValueError(f"--seed must be an integer from 0 to 2**32 - 1 with --protocol paper (scikit-learn's "
                             f"ShuffleSplit takes a 32-bit seed), not {seed!r}")
        grid = parse_alphas(alphas)
        for label, value, low in (("--folds", folds, 2), ("--inner-folds", inner_folds, 2),
                                  ("--resamples", resamples, 10), ("--top", top, 1)):
            if value is None:  # the other protocol's: not used
                continue
            if isinstance(value, bool) or int(value) != value or value < low:
                raise ValueError(f"{label} must be an integer >= {low}, got {value!r}")
        saved_to = None if save is None else save_path(save)
    except ValueError as exc:
        raise MetaEvalError(str(exc)) from None
    check_judgments_argument(judgments)
    check_seed(seed)  # a sentence now, not numpy's "expected non-negative integer" after the scoring
    # every output at once, before any loading, scoring or fitting
    from meta_eval.scoring.imported import spec_path

    outputs = OutputPlan(force=force, judgments=judgments, data_dir=data_dir, cache=cache, no_cache=no_cache,
                         options=option_list, plugins=plugins, metrics=metrics,
                         files=[(f"the --scores file of {text.split('=', 1)[0].strip()}", spec_path(text))
                                for text in ([scores] if isinstance(scores, str) else scores or ()) if "=" in text])
    outputs.add(saved_to, "--save")
    output = outputs.add(output, "--output")
    check_format(output, "--output", (".json",))  # JSON whatever the suffix said (res.csv held JSON)
    load_plugins(plugins)
    from meta_eval.scoring.imported import (check_names, join_scores, merge_tables, metric_scores, parse_spec,
                                            read_table, without_imported)

    tables = merge_tables([read_table(parse_spec(text, scores_format), offers_drop=False)
                           for text in ([scores] if isinstance(scores, str) else scores)])
    try:
        data = load_target(judgments, data_dir, subset, target)
        imported, rows, loaded = [], [], None
        if tables:
            loaded = judgment_sets.load(judgments, data_dir, subset=subset)
            position = {r.id: i for i, r in enumerate(loaded.rows)}
            rows = [position[r.id] for r in data.jset.rows]
            imported, _ = join_scores(tables, loaded, rows, offers_drop=False)  # strict: every row with a target
    except (judgment_sets.JudgmentError, judgment_sets.DataError, ValueError) as exc:
        raise MetaEvalError(str(exc)) from None
    jset, y, spec = data.jset, data.y, data.spec
    parsed = parse_options(option_list)
    requested, only_imported = without_imported(requested_names(metrics), imported)
    requested, shown = resolve_metric_choice(requested, variants, every_by_default=True)
    if features is not None and not shown.default:
        raise MetaEvalError(f"--features {features} and --variants/a variant in --metrics both choose the "
                            "features; give one")
    chosen, skipped = ([], []) if only_imported else choose_metrics(
        requested, parsed, what=jset.name, has_sources=jset.has_sources, has_references=jset.max_references > 0,
        language=jset.language, judged=(jset, spec) if spec in jset.dimensions else None)
    check_names(imported, chosen)
    shown.check(available_variants(chosen, skipped, imported))
    chosen = shown.narrow(chosen, skipped, requested)
    from meta_eval.report.outputs import check_stores

    check_stores(chosen, data_dir=data_dir, cache=cache, no_cache=no_cache)  # the answer store: before any request
    try:
        skipped = check_metrics(chosen, skipped, jset) if not only_imported else []
    except ValueError as exc:
        raise MetaEvalError(str(exc)) from None
    from_files = {v: imp.name for imp in imported for v in imp.table.variants}  # variant -> its --scores name
    planned = [f.strip() for f in features.split(",") if f.strip()] if features else None
    if saved_to is not None and (not chosen or (planned and set(planned) <= set(from_files))):
        # knowable before any scoring: every feature comes from a score file, so no model of them can be saved
        raise MetaEvalError(f"--save {save}: every feature uses imported scores ({', '.join(planned or from_files)}), "
                            "which exist only for this set's rows, so a model of them cannot score new texts; "
                            "nothing was learned: learn without --save, or add metrics that meta-eval computes")
    say("err", f"{jset.name} ({jset.subset}): {len(jset)} rows, {jset.documents()} documents, target: {spec}"
        + (f" ({data.dropped} rows without it left out)" if data.dropped else ""))
    for names, reason in group_skips(skipped):
        say("err-skipped", f"{', '.join(names)}: {reason}")
    groups, grouping_note = document_groups(jset)
    if protocol == "nested" and (grouping_note or jset.documents() < 3):  # 2: a training part of 1 document has no
        groups = None  # inner folds by document (it failed after the scoring, "folds must be ... >= 2, got 1")
        grouping_note = (f"{jset.name} has {jset.documents()} document(s): the nested protocol's folds by document "
                         "need at least 3 (2 outer folds, each training part split into 2 inner folds), so its "
                         "folds and bootstrap are by row")
    elif groups is not None and protocol == "nested" and jset.documents() < folds:
        say("err-note", f"{jset.name} has {jset.documents()} documents: {jset.documents()} outer folds, not {folds}")
    if grouping_note:
        say("err-note", grouping_note)
    scoring = score_all(chosen, jset.examples(), open_cache(cache, no_cache), batch_size, progress=progress,
                        degenerate=False) if chosen else None
    if scoring is not None and scoring.failed:
        raise MetaEvalError("; ".join(f"{n}: {r}" for n, r in scoring.failed))
    scored = (scoring.scored if scoring is not None else []) + [metric_scores(imp, rows, loaded) for imp in imported]
    configs = [metric_config(type(m), parsed) for m in chosen]
    nested_result = outcome = None
    if not shown.default:
        features = ",".join(v for ms in shown.apply(scored) for v in ms.scores)
    try:
        names, columns = feature_columns(chosen, scored, features)
        if protocol == "nested":
            from meta_eval.learning.nested import nested_cv

            if baseline is None and "rougeL-f" in names:
                baseline = "rougeL-f"
            elif baseline is None:
                say("err-note", "no baseline test: the default baseline rougeL-f is not among the features; pass "
                    "--baseline VARIANT to test against one")
            elif baseline not in names:
                raise ValueError(f"--baseline {baseline!r} is not a feature; features: {', '.join(names)}")
            began = time.perf_counter()
            nested_result = nested_cv(columns, y, groups, strategy=strategy, max_size=max_size, alphas=grid,
                                      folds=min(folds, jset.documents()) if groups is not None else folds,
                                      inner_folds=inner_folds, seed=seed, kind=correlation, min_gain=min_gain,
                                      resamples=resamples, baseline=baseline)
            learn_seconds = time.perf_counter() - began
        else:
            outcome, learn_seconds = run_search(columns, y, groups, strategy=strategy, max_size=max_size,
                                                alpha=alpha, splits=splits, train_fraction=train_fraction,
                                                seed=seed, correlation=correlation, search_splits=search_splits,
                                                top=top, min_gain=min_gain)
    except ValueError as exc:
        if type(exc).__name__ == "LinAlgError":  # numpy's "Singular matrix": an unpenalised fit of collinear features
            raise MetaEvalError(f"a ridge strength of 0 ({'--alpha 0' if protocol == 'paper' else 'in --alphas'}) "
                                "fits without a penalty, which has no solution here: some features are collinear "
                                "(one a linear combination of others, e.g. two variants equal on every row); use a "
                                "strength > 0") from None
        raise MetaEvalError(str(exc)) from None
    if nested_result is not None:
        n = nested_result
        heldout = {"protocol": "nested", "correlation": correlation, "value": n.value, "ci": [n.low, n.high],
                   "interval": n.interval_label(), "scheme": n.scheme()}
        model = final_model(n, columns, y, chosen, scored, configs, data, n.alpha, heldout)
        best_features = n.features
    else:
        model = final_model(outcome.best, columns, y, chosen, scored, configs, data, alpha)
        best_features = outcome.best.features
    used_files = sorted({from_files[v] for v in best_features if v in from_files})
    not_saved = None
    if saved_to is not None and used_files:  # the results stand; only the model is not saved (the command exits 1)
        not_saved = (f"--save {save}: not saved: the best feature set uses imported scores ({', '.join(used_files)}), "
                     "which exist only for this set's rows, so the model cannot score new texts; the results are "
                     "complete" + (f" (and written to {output})" if output is not None else "")
                     + ": learn without those scores to save a model")
        saved_to = None
    from meta_eval.provenance import record

    provenance = record(outputs, judgments)
    model.provenance = provenance  # the saved file records what made it, as the --output document does
    if saved_to is not None:
        try:
            save_model(model, saved_to)
        except ValueError as exc:
            raise MetaEvalError(str(exc)) from None
    if nested_result is not None:
        settings = {"correlation": correlation, "folds": nested_result.folds,  # as used: the nested JSON's
                    "inner_folds": nested_result.inner_folds_used, "alphas": list(grid), "resamples": resamples,
                    "baseline": baseline, "seed": seed, "variants": shown.as_dict(scored)}
    else:
        settings = {"correlation": correlation, "alpha": alpha, "splits": splits, "train_fraction": train_fraction,
                    "seed": seed, "variants": shown.as_dict(scored)}
    result = LearnResult(data, outcome, model, list(names), scored, list(skipped), grouping_note, settings,
                         saved_to, learn_seconds, 0.0, nested_result, not_saved=not_saved)
    result.provenance = provenance
    result.wall_seconds = time.perf_counter() - started
    if output is not None:
        write_json(output, result.to_dict())
    return result
