"""Correlations of metric variants with human scores, and Williams tests against a baseline variant.

:func:`evaluate` works at the global level (all rows), as in Clark et al. (2019): Spearman (the paper's choice), Pearson and Kendall tau-b with
their p-values; the Williams (1959) test asks whether each variant correlates significantly better with the humans
than the baseline, using the same correlation kind for all three correlations. Variants whose metric is
lower-is-better are negated before any correlation, so that a larger correlation is always better.

:func:`evaluate_level` works at the summary or system level (Deutsch, Dror & Roth 2021): the three correlations at
that level, a BOOT-BOTH percentile interval for the chosen correlation, and a PERM-BOTH permutation test of each
variant against the baseline (one-sided: the variant correlates better), all seeded.

:func:`check_level` says, from the human scores alone and before anything is scored, whether a level can be
computed at all; if not, it raises one :class:`LevelError` that says why (a file without ``system``, fewer than 3
systems, no document judged for 3 or more systems, constant human scores). A level that can be computed but where
one variant has no correlation (e.g. a constant metric) gives that variant a note instead.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Sequence

import numpy as np

from meta_eval.stats.correlation import correlate
from meta_eval.scoring.runner import MetricScores
from meta_eval.stats.significance import williams_pair

__all__ = ["LevelError", "MIN_UNITS", "VariantResult", "add_global_intervals", "ceiling", "check_level", "evaluate",
           "evaluate_level", "global_interval", "global_values",
           "level_warning",
           "units_warning"]

#: The fewest units a level's statistic is reported without a warning (:func:`level_warning`): below it the number
#: is printed with a warning beside it and a ``level_warning`` in the JSON. System level 5: with n systems there are
#: only n! orderings, so with 4 even a perfect rank correlation has a one-sided permutation p of 1/24 = 0.042 (5:
#: 1/120), and the bootstrap redraws 4 systems; a summary-level average over fewer than 10 documents, or a global
#: correlation over fewer than 10 rows, rests on a handful of values.
MIN_UNITS = {"system": 5, "summary": 10, "global": 10}


@dataclass
class VariantResult:
    metric: str
    spearman: float | None
    spearman_p: float | None
    pearson: float | None
    pearson_p: float | None
    kendall: float | None
    kendall_p: float | None
    n: int
    williams_p_vs_baseline: float | None
    signature: str
    note: str | None = None
    level: str = "global"
    ci: list[float | None] | None = None
    perm_p_vs_baseline: float | None = None
    statistic: str | None = None
    value: float | None = None
    epsilon: float | None = None
    partial: float | None = None
    partial_p: float | None = None
    delta: dict | None = None
    per_group: dict | None = None
    """A pooled set's system level: the statistic within each language pair (:mod:`meta_eval.stats.pooled`)."""

    def as_dict(self) -> dict:
        return asdict(self)


class LevelError(ValueError):
    """A correlation level cannot be computed for a judgment set and human dimension (the message says why)."""


def check_level(jset, dimension: str, level: str, statistic: str = "spearman") -> str:
    """Raise :class:`LevelError` if ``level`` cannot be computed from ``jset``'s human scores for ``dimension``.

    Run it on the set that will be scored (rows without a ``dimension`` score left out, duplicates resolved). The
    conditions are those under which :func:`meta_eval.stats.resampling.level_correlation` is defined for the human side:

    - global: 3 or more rows whose human scores are not all equal;
    - system: every row has a system, and 3 or more systems whose mean human scores are not all equal;
    - summary: every row has a system, and at least one document with 3 or more judged systems whose human scores
      are not all equal (documents without are skipped and counted, as in Deutsch et al. 2021);
    - and at no level a set whose ``system`` field is a dataset label (``JudgmentSet.pooled_datasets``, qags
      ``all``): the set's sentence is the reason.

    Returns
    -------
    str
        The units the level will use for ``statistic``, e.g. ``"12 documents"`` (for messages;
        :func:`meta_eval.units.level_units`: the global level of the pairwise accuracies counts cells).

    Raises
    ------
    LevelError
        With one message naming the set, the level and the reason. A row without a system or a repeated
        (document, system) pair under the ``"error"`` policy raises :class:`judgments.JudgmentError` (also a
        ``ValueError``) naming the file and rows.
    """
    n, _, noun = _level_units(jset, dimension, level, statistic)
    return f"{n} {noun}"


def level_warning(jset, dimension: str, level: str, statistic: str = "spearman") -> str | None:
    """The warning printed beside a level's numbers when it has fewer units than :data:`MIN_UNITS`, else ``None``.

    Raises :class:`LevelError` as :func:`check_level` does when the level cannot be computed at all.

    Example: chaganty's ``sms`` subset has 4 systems, so its system level warns
    (``"only 4 systems (fewer than 5): ..."``).
    """
    return units_warning(level, *_level_units(jset, dimension, level, statistic))


def units_warning(level: str, n: int, task: str | None = None, noun: str | None = None) -> str | None:
    """The warning for ``n`` units at ``level`` (:data:`MIN_UNITS`), ``None`` if there are enough; ``noun``: what
    the units are called (default: the level's word for ``task``).

    >>> units_warning("system", 5) is None
    True
    >>> units_warning("system", 4)[:38]
    'only 4 systems (fewer than 5): only 24'
    """
    least = MIN_UNITS[level]
    if n >= least:
        return None
    from meta_eval.units import level_words

    noun = noun or level_words(task, level).units
    why = {"system": f"only {math.factorial(n)} orderings of {n} systems exist, so even a perfect rank correlation "
                     f"has a one-sided permutation p of 1/{math.factorial(n)}, and the bootstrap redraws the same {n} "
                     "systems",
           "summary": f"the average rests on {n} {noun}",
           "global": f"the correlation rests on {n} {noun}"}[level]
    return f"only {n} {noun} (fewer than {least}): {why}; read the value and its interval as indicative only"


def _level_units(jset, dimension: str, level: str, statistic: str = "spearman") -> tuple[int, str, str]:
    """(units, the set's task, their noun) of a computable level; :class:`LevelError` if it cannot be computed
    (:func:`check_level`). The one definition is :func:`meta_eval.units.level_units`."""
    from meta_eval.units import level_units

    u = level_units(jset, dimension, level, statistic)
    return u.n, jset.task, u.words.units


def _no_result(results: list[VariantResult], level: str, kind: str, origin: str | None = None) -> None:
    """Raise one :class:`LevelError` when no variant has a defined value (instead of a table of dashes)."""
    if results and all(r.value is None for r in results):
        names = [r.metric for r in results]
        where = {"global": "over the rows", "summary": "within every document judged for 3 or more systems",
                 "system": "across the systems' means"}[level]
        listed = ", ".join(names[:6]) + (", ..." if len(names) > 6 else "")
        raise LevelError(f"{origin + ': ' if origin else ''}the {level} level has no result: none of the "
                         f"{len(names)} variants ({listed}) has a defined {kind}{' correlation' if kind in ('spearman', 'pearson', 'kendall') else ''} with the human scores; "
                         f"their scores are constant {where}")


def _oriented(ms: MetricScores) -> dict[str, np.ndarray]:
    return ms.scores if ms.higher_is_better else {v: -s for v, s in ms.scores.items()}


def oriented_system_values(ms: MetricScores) -> dict[str, dict[str, float] | None]:
    """Per variant, its system scores oriented like :func:`_oriented` (None: the mean of the row scores)."""
    if ms.system is None:
        return {v: None for v in ms.scores}
    sign = 1.0 if ms.higher_is_better else -1.0
    return {v: None if v not in ms.system else {system: sign * x for system, x in ms.system[v].items()}
            for v in ms.scores}


def level_signature(ms: MetricScores, level: str, statistic: str) -> str:
    """The signature printed with a result: at the system level it says how the system score was formed
    (``|sys:mean``, ``|sys:corpus``, ``|sys:file``; :mod:`meta_eval.scoring.system_scores`)."""
    from meta_eval.scoring.system_scores import uses_system_scores

    if level != "system":
        return ms.signature
    return f"{ms.signature}|sys:{ms.system_mode if uses_system_scores(level, statistic) else 'mean'}"


def evaluate(human: np.ndarray, metric_scores: Sequence[MetricScores], baseline: str | None = None,
             kind: str = "spearman") -> list[VariantResult]:
    """Correlate every variant with ``human``; Williams p-value of each variant against ``baseline``.

    Raises
    ------
    ValueError
        If ``baseline`` is given but is not one of the variants.
    LevelError
        If no variant has a defined ``kind`` correlation (one message instead of a table of dashes).
    """
    human = np.asarray(human, dtype=np.float64)
    variants = {v: (s, ms.signature) for ms in metric_scores for v, s in _oriented(ms).items()}
    if baseline is not None and baseline not in variants:
        raise ValueError(f"baseline {baseline!r} is not among the scored variants: {', '.join(variants)}")
    base = correlate(human, variants[baseline][0], kind) if baseline else None
    results = []
    for name, (scores, signature) in variants.items():
        cors = {k: correlate(human, scores, k) for k in ("spearman", "pearson", "kendall")}
        notes = sorted({c.note for c in cors.values() if c.note})
        wp = None
        if base is not None and name != baseline:
            wp = williams_pair(human, scores, variants[baseline][0], kind)  # the matrix's function too
            if math.isnan(wp):
                wp = None
                notes.append("Williams test undefined (constant scores or identical to the baseline)")
        results.append(VariantResult(name, cors["spearman"].r, cors["spearman"].p, cors["pearson"].r,
                                     cors["pearson"].p, cors["kendall"].r, cors["kendall"].p, len(human), wp,
                                     signature, "; ".join(notes) or None, statistic=kind, value=cors[kind].r))
    _no_result(results, "global", kind)
    return results


def add_global_intervals(results: list[VariantResult], jset, dimension: str, metric_scores: Sequence[MetricScores],
                         kind: str = "spearman", n_resamples: int = 1000, seed: int = 0,
                         confidence: float = 0.95) -> None:
    """Set each global-level result's ``ci``: the BOOT-BOTH percentile interval of its ``kind`` correlation over
    the rows (:func:`global_interval`, the leaderboards' function too).

    With the same set, rows, seed and resamples the interval is the board's. A set with rows without a system
    cannot be resampled by document and system: its results keep ``ci`` None and say why in their note.
    """
    if jset.rows_without_system():
        for r in results:
            if r.value is not None:
                r.note = "; ".join(x for x in (r.note, "no interval: rows without a system cannot be resampled "
                                                        "by document and system (BOOT-BOTH)") if x)
        return
    variants = {v: s for ms in metric_scores for v, s in _oriented(ms).items()}
    names = [r.metric for r in results if r.metric in variants and r.value is not None]
    if not names:
        return
    lower, upper = global_interval(jset, dimension, [variants[n] for n in names], kind, n_resamples=n_resamples,
                                   seed=seed, confidence=confidence)
    bounds = dict(zip(names, zip(lower, upper)))
    for r in results:
        if r.metric in bounds:
            r.ci = [_finite(bounds[r.metric][0]), _finite(bounds[r.metric][1])]


def global_values(jset, dimension: str, arrays: Sequence[np.ndarray], kind: str = "spearman") -> np.ndarray:
    """The global-level ``kind`` correlation of each oriented score array with the human scores, over the rows of
    :func:`meta_eval.units.global_rows`, in row order (:func:`meta_eval.stats.correlation.correlate`, as
    :func:`evaluate`): NaN where undefined. ``run``'s value and the leaderboards' ``r``, the same number."""
    human = jset.human(dimension)
    keep = np.isfinite(human)
    out = [correlate(human[keep], np.asarray(a, dtype=float)[keep], kind).r for a in arrays]
    return np.array([np.nan if r is None else r for r in out], dtype=float)


def global_interval(jset, dimension: str, arrays: Sequence[np.ndarray], kind: str = "spearman", *,
                    n_resamples: int = 1000, seed: int = 0, confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """(lower, upper) per score array: the global level's BOOT-BOTH percentile interval over the rows.

    Documents and systems are drawn with replacement as at the other levels (the generator calls of
    :func:`meta_eval.stats.resampling.bootstrap_samples` on the (document x system) matrix, Deutsch, Dror & Roth
    2021, section 4) and each row enters a resample with multiplicity (#draws of its document) x (#draws of its
    system) (:func:`meta_eval.stats.resampling.row_bootstrap_samples` on :func:`meta_eval.units.global_rows`): the
    rows of the value, so the interval is the value's. Where every (document, system) pair is one row it equals the
    matrix interval bit for bit.
    """
    from meta_eval.stats.resampling import percentile_interval, row_bootstrap_samples
    from meta_eval.units import global_rows

    rows = global_rows(jset, dimension, arrays)
    draws = row_bootstrap_samples(rows.values, rows.human, rows.doc, rows.system, kind, n_resamples, seed,
                                  n_docs=rows.n_docs, n_systems=rows.n_systems)
    return percentile_interval(draws, confidence)


def _finite(x) -> float | None:
    return None if x is None or not np.isfinite(x) else float(x)


def evaluate_level(jset, dimension: str, metric_scores: Sequence[MetricScores], level: str,
                   baseline: str | None = None, kind: str = "spearman", n_resamples: int = 1000,
                   seed: int = 0, confidence: float = 0.95, *, epsilon: float = 0.0,
                   n_permutations: int = 1000, spa_seed: int | None = None) -> list[VariantResult]:
    """A statistic at one level with bootstrap intervals and one-sided tests against ``baseline``.

    ``kind`` is any statistic of :mod:`meta_eval.stats` (the correlations, ``accuracy``, ``acc-eq``, ``acc-t``,
    ``spa``) that exists at ``level``; the correlations at the global level are :func:`evaluate` (Williams tests).
    Every variant also gets its three correlations at the level (at the global level over the rows,
    :func:`global_values`: the numbers ``run --statistic spearman`` prints). Intervals and tests are those of
    :func:`meta_eval.stats.describe`, all seeded with ``seed``. The global level of the pairwise accuracies is over
    the (document, system) cells of :func:`meta_eval.matrix.judgment_matrices` (``n`` counts them,
    :func:`meta_eval.units.level_units`): a pair of two judgings of one output would compare a text with itself.

    Raises
    ------
    LevelError
        If the level cannot be computed for the human scores (:func:`check_level`) or no variant has a defined
        value; a variant without one while others have one gets a note instead.
    meta_eval.stats.StatisticError
        If the statistic does not exist at this level.
    """
    from meta_eval import stats as statistics
    from meta_eval.matrix import judgment_matrices
    from meta_eval.stats.resampling import level_correlation

    statistic = kind
    statistics.check_statistic(statistic, level)
    if statistic in statistics.CORRELATIONS and level == "global":
        raise ValueError("the global level of a correlation is evaluate() (with Williams tests)")
    from meta_eval.scoring.system_scores import uses_system_scores

    variants = {v: (s, level_signature(ms, level, statistic)) for ms in metric_scores
                for v, s in _oriented(ms).items()}
    fixed = {v: x for ms in metric_scores for v, x in oriented_system_values(ms).items()}
    if baseline is not None and baseline not in variants:
        raise ValueError(f"baseline {baseline!r} is not among the scored variants: {', '.join(variants)}")
    names = list(variants)
    check_level(jset, dimension, level)
    Z, matrices = judgment_matrices(jset, dimension, [variants[v][0] for v in names],
                                    system_values=[fixed[v] for v in names]
                                    if uses_system_scores(level, statistic) else None)
    X = np.stack(matrices)
    if pooled_groups(jset, level):
        return _evaluate_pooled(jset, X, Z, names, variants, baseline, statistic, n_resamples, seed, confidence)
    from meta_eval.units import averaged_documents, count_units

    units = count_units(Z, level, statistic)  # the one definition of a level's units (meta_eval.units)
    options = {"epsilon": epsilon, "n_permutations": n_permutations, "spa_seed": spa_seed}
    try:
        est = statistics.point(X, Z, statistic, level, seed=seed, **options)
    except ValueError as exc:
        raise LevelError(f"{jset.origin()}: {exc}") from None
    ok = np.flatnonzero(np.isfinite(est.values))
    lower, upper = np.full(len(names), np.nan), np.full(len(names), np.nan)
    if len(ok):
        lo, hi = statistics.interval(X[ok], Z, statistic, level, n_resamples=n_resamples, seed=seed,
                                     confidence=confidence, **options)
        lower[ok], upper[ok] = lo, hi
    base = names.index(baseline) if baseline is not None else None
    if level == "global":  # the correlations of the global level are over the rows (run's, the boards')
        stacked = {k: global_values(jset, dimension, [variants[v][0] for v in names], k)
                   for k in statistics.CORRELATIONS}
    else:
        stacked = {k: est.values if k == statistic else np.atleast_1d(level_correlation(X, Z, level, k))
                   for k in statistics.CORRELATIONS}  # every variant at once
    results = []
    for m, name in enumerate(names):
        cors = {k: _finite(v[m]) for k, v in stacked.items()}
        value = _finite(est.values[m])
        note, ci, perm = None, None, None
        if value is None:
            note = f"{level}-level {statistic} undefined (constant scores or too few units)"
        else:
            ci = [_finite(lower[m]), _finite(upper[m])]
            if base is not None and m != base and np.isfinite(est.values[base]):
                try:
                    perm = statistics.versus(X[m], X[base], Z, statistic, level, n_resamples=n_resamples,
                                             seed=seed, **options)
                except ValueError as exc:
                    note = f"test against the baseline undefined: {exc}"
        n = averaged_documents(X[m], Z) if level == "summary" and statistic in statistics.CORRELATIONS else units
        results.append(VariantResult(name, cors["spearman"], None, cors["pearson"], None, cors["kendall"], None,
                                     n, None, variants[name][1], note, level, ci, perm, statistic, value,
                                     _finite(est.epsilon[m])))
    _no_result(results, level, statistic, jset.origin())
    return results


#: What a set pooling several language pairs supports at the system level (WMT's pooled pairwise accuracy).
POOLED_STATISTICS = ("accuracy", "acc-t")


def check_pooled(jset, level: str, statistic: str) -> None:
    """Raise :class:`LevelError` for a statistic a set pooling language pairs cannot carry: at the system level only
    the pairwise accuracies (pairs within each language pair, pooled); the summary level (each segment within its
    pair) takes any statistic; the global level would compare segments of different pairs, so it is refused."""
    pairs = getattr(jset, "pooled_groups", ())
    if not pairs:
        return
    if level == "global" or (level == "system" and statistic not in POOLED_STATISTICS):
        raise LevelError(f"{jset.name} --subset {jset.subset} pools the language pairs {', '.join(pairs)}: WMT pools "
                         f"only the system-level pairwise accuracy over them (--level system --statistic accuracy or "
                         f"acc-t), and the summary level keeps each segment within its pair; --level {level} "
                         f"--statistic {statistic} would compare across pairs: run each pair on its own")


def pooled_groups(jset, level: str) -> list[str] | None:
    """The language pair of each system column when ``jset`` pools several pairs and ``level`` is the system level
    (WMT's pooled pairwise accuracy counts only the system pairs within a pair); else None."""
    if level != "system" or not getattr(jset, "pooled_groups", ()):
        return None
    return [jset.system_group(s) for s in sorted({system for _, _, system in jset.cells()})]


def _evaluate_pooled(jset, X, Z, names, variants, baseline, statistic, n_resamples, seed, confidence):
    """The system level of a pooled set: :mod:`meta_eval.stats.pooled` (accuracy or acc-t over the union of each
    pair's system pairs), with each pair's value in ``per_group``; correlations across pairs are not computed."""
    from meta_eval.stats import pooled

    groups = pooled_groups(jset, "system")
    try:
        est = pooled.pooled_point(X, Z, groups, statistic)
    except ValueError as exc:
        raise LevelError(f"{jset.origin()}: {exc}") from None
    ok = np.flatnonzero(np.isfinite(est.values))
    lower, upper = np.full(len(names), np.nan), np.full(len(names), np.nan)
    if len(ok):
        lower[ok], upper[ok] = pooled.pooled_interval(X[ok], Z, groups, statistic, n_resamples, seed, confidence)
    base = names.index(baseline) if baseline is not None else None
    from meta_eval.units import count_units

    units = count_units(Z, "system", statistic)
    results = []
    for m, name in enumerate(names):
        value = _finite(est.values[m])
        note, ci, perm = None, None, None
        if value is None:
            note = f"pooled system-level {statistic} undefined (constant scores or too few systems)"
        else:
            ci = [_finite(lower[m]), _finite(upper[m])]
            if base is not None and m != base and np.isfinite(est.values[base]):
                perm = pooled.pooled_versus(X[m], X[base], Z, groups, statistic, n_resamples, seed)
        per_group = {g: _finite(v) for g, v in zip(est.groups, est.group_values[m])}
        results.append(VariantResult(name, None, None, None, None, None, None, units, None, variants[name][1], note,
                                     "system", ci, perm, statistic, value, _finite(est.epsilon[m]),
                                     per_group=per_group))
    _no_result(results, "system", statistic, jset.origin())
    return results


def add_partial(results: list[VariantResult], jset, dimension: str, metric_scores: Sequence[MetricScores],
                kind: str) -> None:
    """Set each result's ``partial``/``partial_p``: its ``kind`` correlation with the humans controlling for the
    system, as FRANK reports it (:func:`meta_eval.stats.partial.partial_correlation`, residuals within systems, p-value
    with n - S - 1 degrees of freedom). Every row needs a system (else :class:`judgments.JudgmentError`)."""
    from meta_eval.stats.partial import partial_correlation

    jset.require_systems("the partial correlation controlling for the system needs")
    systems = [r.system for r in jset.rows]
    human = jset.human(dimension)
    variants = {v: s for ms in metric_scores for v, s in _oriented(ms).items()}
    for r in results:
        c = partial_correlation(variants[r.metric], human, systems, kind)
        r.partial, r.partial_p = c.r, c.p
        if c.note:
            r.note = "; ".join(x for x in (r.note, f"partial correlation: {c.note}") if x)


def add_delta(results: list[VariantResult], jset, dimension: str, metric_scores: Sequence[MetricScores],
              lower: float, upper: float) -> None:
    """Set each result's ``delta``: Kendall's tau over the system pairs whose metric difference |delta| (of the
    system means, oriented) lies in [lower, upper], with the number of pairs (Deutsch, Dror & Roth 2022,
    :func:`meta_eval.stats.system_level.delta_correlation`)."""
    from meta_eval.matrix import judgment_matrices
    from meta_eval.stats.system_level import delta_correlation, system_scores

    variants = {v: s for ms in metric_scores for v, s in _oriented(ms).items()}
    fixed = {v: x for ms in metric_scores for v, x in oriented_system_values(ms).items()}
    names = [r.metric for r in results]
    Z, matrices = judgment_matrices(jset, dimension, [variants[n] for n in names],
                                    system_values=[fixed[n] for n in names])
    z = system_scores(Z, "human")
    keep = np.isfinite(z)
    for r, X in zip(results, matrices):
        x = system_scores(X, r.metric)
        r.delta = delta_correlation(x[keep], z[keep], lower, upper).as_dict()


def _global_ceiling_rows(jset, dimension: str, pairs, statistic: str, n_resamples: int):
    """The global level's ceiling over the rows, as its metrics' value and interval: each annotator slot's values
    and the mean of the others per row (:attr:`meta_eval.stats.ceiling.AnnotatorPairs.row_pairs`), as (1, n_rows)
    "matrices" for :func:`meta_eval.stats.ceiling.human_ceiling`, with the statistic over the rows and the draws of
    :func:`meta_eval.stats.resampling.row_bootstrap_samples` (the metrics' documents and systems)."""
    from dataclasses import replace

    from meta_eval.stats.resampling import batch_correlation, row_bootstrap_samples
    from meta_eval.units import global_rows

    rows = global_rows(jset, dimension, [])
    row_pairs = tuple((a[rows.rows][None], o[rows.rows][None]) for a, o in pairs.row_pairs)

    def value(A, O):
        return float(batch_correlation(A[0], O[0], statistic))

    def draws(A, O, s):
        return row_bootstrap_samples(A[0], O[0], rows.doc, rows.system, statistic, n_resamples, s,
                                     n_docs=rows.n_docs, n_systems=rows.n_systems)

    value.__name__ = statistic
    return replace(pairs, pairs=row_pairs), value, draws


def ceiling(jset, dimension: str, statistic: str, level: str, *, n_resamples: int = 1000, seed: int = 0,
            confidence: float = 0.95, epsilon: float = 0.0, n_permutations: int = 1000, pairs=None,
            spa_seed: int | None = None):
    """The human ceiling of ``jset`` (:mod:`meta_eval.stats.ceiling`) with this statistic, level and the metrics'
    bootstrap draws.

    Returns a :class:`meta_eval.stats.ceiling.Ceiling`; a set without per-annotator values gives ``value=None`` and the
    reason in ``note``. ``pairs``: :func:`meta_eval.stats.ceiling.annotator_matrices` of ``jset`` when the caller has
    them already (one set, several statistics). The global level of the correlations is over the rows, as the
    metrics' value and interval (:func:`global_interval`): each slot against the mean of the others on every usable
    row, resampled with the metrics' documents and systems.
    """
    from meta_eval import stats
    from meta_eval.stats.ceiling import annotator_matrices, human_ceiling

    stats.check_statistic(statistic, level)
    options = {"epsilon": epsilon, "n_permutations": n_permutations, "spa_seed": spa_seed}

    def value(A, O):
        return float(stats.point(A[None], O, statistic, level, seed=seed, **options).values[0])

    def draws(A, O, s):
        return stats.samples(A[None], O, statistic, level, n_resamples=n_resamples, seed=s, **options)[:, 0]

    value.__name__ = statistic
    pairs = annotator_matrices(jset, dimension) if pairs is None else pairs
    if level == "global" and statistic in stats.CORRELATIONS and pairs.row_pairs and not jset.rows_without_system():
        pairs, value, draws = _global_ceiling_rows(jset, dimension, pairs, statistic, n_resamples)
    c = human_ceiling(pairs, level, None, statistic=value, samples=draws, n_resamples=n_resamples,
                      confidence=confidence, seed=seed,
                      resample="documents" if statistic == "spa" else "both")
    return c
