"""What :func:`meta_eval.run` returns: the results of one meta-evaluation, as plain attributes, the JSON that
``meta-eval run --output`` writes (:meth:`RunResult.to_dict`), a pandas table (:meth:`RunResult.to_frame`, pandas
imported only there) and the all-pairs p-value matrix (:meth:`RunResult.pvalue_matrix`).

Example
-------
>>> from meta_eval import run                                              # doctest: +SKIP
>>> res = run("chaganty", metrics=["rouge"])                               # doctest: +SKIP
>>> res.values["rougeL-f"], res.signatures["rouge"]                        # doctest: +SKIP
>>> res.to_frame()[["value", "ci_low", "ci_high", "p_vs_baseline"]]        # doctest: +SKIP
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

__all__ = ["PValueMatrix", "RunResult", "ScoreResult"]


@dataclass
class PValueMatrix:
    """``p[i][j]``: the one-sided p-value that ``variants[i]`` beats ``variants[j]`` (NaN on the diagonal), by
    ``test`` with ``n_resamples`` resamples and ``seed`` (``n_resamples`` None: a test without resamples, the
    global level's Williams test).

    ``p_adjusted``: the same p-values adjusted by ``correction`` over the family of the n(n-1)/2 pairs tested (each
    better-valued variant against each worse-valued one; NaN elsewhere), as
    :func:`meta_eval.stats.clusters.significance_clusters` adjusts them; ``ranks``: its clusters at ``alpha``. Every
    star of the heatmap and every cluster reads ``p_adjusted``; :attr:`family` names the rule and its family."""

    variants: list[str]
    p: np.ndarray
    test: str
    n_resamples: int | None
    seed: int | None
    p_adjusted: np.ndarray | None = None
    correction: str = "holm"
    alpha: float = 0.05
    ranks: dict | None = None

    @property
    def family(self) -> str:
        """The multiple-comparison rule and its family, e.g. ``"Holm over all 66 pairs"``."""
        from meta_eval.stats.clusters import family_label

        n = len(self.variants)
        return family_label(self.correction, n * (n - 1) // 2, "pairs", every=True)

    @property
    def resolution_note(self) -> str | None:
        """Why no pair can be significant with these resamples after the rule (a p-value of 0 enters it as 1/B:
        Holm over 171 pairs with 1,000 resamples makes it at least 0.171), and what would do; None when a pair
        can be (:func:`meta_eval.stats.clusters.resolution_note`)."""
        from meta_eval.stats import zero_resolution
        from meta_eval.stats.clusters import resolution_note

        n = len(self.variants)
        return resolution_note(self.correction, n * (n - 1) // 2, zero_resolution(self.test, self.n_resamples),
                               self.alpha, more_resamples_help=self.test != "spa-perm-both")

    def to_frame(self):
        """The matrix as a pandas DataFrame (rows: the better metric, columns: the worse)."""
        pd = _need("pandas", "to_frame()")

        return pd.DataFrame(self.p, index=self.variants, columns=self.variants)


@dataclass
class RunResult:
    """The results of one meta-evaluation (one set, one human dimension, one statistic at one level).

    Attributes
    ----------
    judgments, subset, human : str
        The set, its subset and the human dimension the metrics were compared with.
    human_chosen_because : str
        Why that dimension (given, or the set's declared default and its reason).
    n, rows_without_human : int
        Rows compared; rows left out for lack of a human score.
    statistic, level, baseline : str
        As run (``baseline``: the variant every test compares with; ``rougeL-f`` when scored and none was given).
    setting : dict
        :func:`meta_eval.stats.describe`: paper, grouping, resampling, test, seed.
    results : list of :class:`meta_eval.evaluate.VariantResult`
        One per variant, best first.
    values, intervals, pvalues_vs_baseline : dict
        The statistic, its interval (the global level of a correlation: over the rows, as its value) and the test's
        p-value against the baseline, per variant.
    ceiling : :class:`meta_eval.stats.ceiling.Ceiling`
        The human ceiling (``value`` None, with the reason in ``note``, where the set has no per-annotator scores).
    level_warning : str or None
        Why the level has too few units to read the numbers as more than indicative.
    warnings : list of dict
        Every warning that changes what the numbers mean, in the order printed (before the table and the reading
        line, in every format): ``{"kind": ..., "message": ...}`` with kind ``in-sample`` (a learned metric scored on
        rows it was fitted on), ``few-units`` (:attr:`level_warning`), ``no-baseline`` (no test ran, and why),
        ``unresolved`` (``--pairwise``: too few resamples for the correction over all pairs to separate any pair,
        :attr:`PValueMatrix.resolution_note`).
    signatures : dict
        Metric name -> signature (name, configuration, library versions, code digest).
    notes : list of str
        What the set's loader wants every user to know.
    skipped, failed, not_run : list of (name, reason)
        Metrics not run (and why), metrics whose scoring raised, and the skips of metrics named one by one.
    complete : bool
        No metric failed and every metric named one by one ran.
    scores : list of :class:`meta_eval.scoring.runner.MetricScores`
        The per-row scores behind the statistics.
    """

    judgments: str
    subset: str
    human: str
    human_chosen_because: str
    n: int
    rows_without_human: int
    duplicates: dict
    notes: list[str]
    setting: dict
    statistic: str
    level: str
    baseline: str | None
    resamples: int
    level_warning: str | None
    ceiling: Any
    control: str | None
    delta_band: tuple[float, float] | None
    results: list
    fit_checks: dict
    skipped: list[tuple[str, str]]
    failed: list[tuple[str, str]]
    not_run: list[tuple[str, str]]
    metrics_requested: list[str] | None
    scores: list
    degenerate: dict
    wall_seconds: float
    jset: Any = field(default=None, repr=False)
    epsilon: float = 0.0
    permutations: int = 1000
    spa_seed: int | None = None
    """SPA: the seed of the permutation signs (None: drawn first from the run's seed)."""
    tie_baseline: float | None = None
    """acc-t: the value of a metric that ties every pair (the share of human ties; :func:`meta_eval.stats.tie_baseline`)."""
    in_sample: dict = field(default_factory=dict)
    """Learned variants scored on their training rows (:func:`meta_eval.task.in_sample_tests`): ``variants``,
    ``tests_withheld`` (p-values withheld: no significance claimed in-sample), ``allowed`` (``--allow-in-sample``)."""
    imported: list = field(default_factory=list)
    """One description per imported metric (``--scores``): file, SHA-256, format, key, rows, orientation."""
    variants: dict | None = None
    """Which variants are shown (:meth:`meta_eval.scoring.selection.VariantChoice.as_dict`): the choice as given,
    the rule in words, the variants shown and hidden."""
    rows_without_imported_score: int = 0
    """Rows dropped by ``--scores-missing drop`` because a score file has no score for them (from every metric)."""
    warnings: list = field(default_factory=list)
    """The ordered warnings (see the class notes); JSON ``warnings``, ``to_frame().attrs["warnings"]``."""
    correction: str = "holm"
    """The multiple-comparison rule of every star, cluster and "significantly" (holm, bh or none): over the
    comparisons with the baseline for the table and the reading line, over all pairs for the heatmap and clusters."""
    alpha: float = 0.05
    """The significance level of the clusters, the single star and "significantly"."""
    unparsed: dict = field(default_factory=dict)
    """Per metric that counts its answers (an LLM judge), ``{"unparsed": N, "answers": M}``: answers with no
    parseable score among the answers to the scored rows (:attr:`meta_eval.scoring.runner.Scoring.unparsed`)."""
    task: str = ""
    """The set's task (``"MT"``, ``"summarization"``, ...): it decides the words of the level and its units
    (:func:`meta_eval.units.level_words`)."""
    baseline_note: str | None = None
    """Why no baseline ran (the test column is empty), e.g. the set's default baseline was not among the chosen
    metrics; None when a baseline ran or was not wanted."""
    empty_columns: dict = field(default_factory=dict)
    """Column name -> why every row of it is empty (e.g. the Williams column when no baseline ran)."""
    human_agreement: dict | None = None
    """The set's human agreement on the property, Krippendorff's alpha over its raters
    (:func:`judgments.judge_bench.human_agreement`'s entry: ordinal for graded, interval for continuous scales); None
    for a set without raters per property (only JUDGE-BENCH's schema keeps them). JSON ``human_agreement``."""
    alpha_with_metric: dict | None = None
    """Per variant, Krippendorff's alpha of the raters with the variant as one more rater, its scores put on the
    raters' scale by rank quantiles (:func:`judgments.judge_bench.alpha_with_metric`, the level of
    :attr:`human_agreement`); None where :attr:`human_agreement` has no alpha. JSON: each result's
    ``alpha_with_metric``; the table's ``alpha +metric`` column."""
    rows: dict | None = None
    """A quick trial's rows (``--limit``/``--sample``, :meth:`judgments.rows.RowChoice.as_dict`): ``limit``,
    ``sample``, ``seed``, ``of`` (the set's rows) and ``kept``; None when every row was used."""
    provenance: dict | None = None
    """The command line (None for a library call), meta-eval's version and the SHA-256 of every file read
    (:func:`meta_eval.provenance.record`)."""
    figures: list = field(default_factory=list, repr=False)
    """The figures asked for with the run (``plots`` of :func:`meta_eval.task.run`, ``--plot``): (kind, variant,
    path), each checked with the run's other outputs before any scoring; :meth:`plot` writes one."""
    ranks: dict | None = None
    """The significance clusters of ``pairwise=True`` (``--pairwise``): variant -> rank, :meth:`clusters` computed
    once by the run, for the table's rank column, the figures and the JSON (each result's ``rank``, and
    ``pairwise``: the all-pairs p-values behind them); None when not asked for."""
    differences: dict | None = None
    """The intervals of ``differences=True`` (``--differences``): variant -> the bootstrap interval of its statistic
    minus the baseline's (:meth:`difference_intervals`, computed once by the run), for the table's column and the
    JSON (each result's ``difference_vs_baseline``, :meth:`difference_entries`); None when not asked for."""
    two_sided: bool = False
    """``two_sided=True`` (``--two-sided``): the JSON records the two-sided p-values against the baseline
    (:meth:`two_sided_pvalues_vs_baseline`, each result's ``p_vs_baseline_two_sided``) and adjusts them, as the
    table and the reading line show them."""
    _matrices: dict = field(default_factory=dict, init=False, repr=False, compare=False)
    """:meth:`pvalue_matrix`'s tests by (resamples, seed), before any correction: each runs once."""
    _other_tails: dict | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def words(self):
        """How this run's level and units read for the set's task (:func:`meta_eval.units.level_words`)."""
        from meta_eval.units import level_words

        return level_words(self.task, self.level, self.statistic)

    # -- plain views -------------------------------------------------------------------------------------------
    @property
    def complete(self) -> bool:
        return not self.failed and not self.not_run

    @property
    def values(self) -> dict[str, float | None]:
        return {r.metric: r.value if r.value is not None else getattr(r, self.statistic, None)
                for r in self.results}

    @property
    def intervals(self) -> dict[str, tuple[float | None, float | None] | None]:
        return {r.metric: tuple(r.ci) if r.ci else None for r in self.results}

    @property
    def interval_label(self) -> str:
        """What every interval of this run is (:func:`meta_eval.stats.interval_label`): confidence, percentile
        bootstrap, the units resampled, resamples and seed; the ceiling's interval is drawn the same way."""
        from meta_eval.stats import interval_label

        return interval_label(self.setting.get("resampling"))

    @property
    def pvalues_vs_baseline(self) -> dict[str, float | None]:
        williams = self.setting["test"] == "williams"
        return {r.metric: r.williams_p_vs_baseline if williams else r.perm_p_vs_baseline for r in self.results}

    @property
    def signatures(self) -> dict[str, str]:
        """Metric -> the signature printed with its results (at the system level it ends with how the system
        score was formed: ``|sys:mean``, ``|sys:corpus`` or ``|sys:file``)."""
        from meta_eval.evaluate import level_signature

        return {ms.metric: level_signature(ms, self.level, self.statistic) for ms in self.scores}

    @property
    def system_scores(self) -> dict[str, str] | None:
        """At the system level, metric -> how its system score was formed (``mean``, ``corpus``, ``file``;
        :mod:`meta_eval.scoring.system_scores`); None at the other levels."""
        if self.level != "system":
            return None
        return {m: s.rsplit("|sys:", 1)[1] for m, s in self.signatures.items()}

    # -- the JSON of ``meta-eval run --output`` ----------------------------------------------------------------
    def to_dict(self) -> dict:
        """The document ``meta-eval run --output`` writes (without its ``written_by`` marker)."""
        from meta_eval import stats
        from meta_eval.scoring.runner import shared_totals

        adjusted = self.adjusted_pvalues_vs_baseline(self.two_sided)  # what the stars of the table read
        both = self.two_sided_pvalues_vs_baseline() if self.two_sided and self.baseline else None
        differences = self.difference_entries()
        return {"judgments": self.judgments, "subset": self.subset, "human": self.human,
                "human_chosen_because": self.human_chosen_because, "n": self.n,
                "rows_without_human": self.rows_without_human, "duplicates": self.duplicates, "notes": self.notes,
                **self.setting,
                "correlation": self.statistic if self.statistic in stats.CORRELATIONS else None,
                "baseline": self.baseline, "baseline_note": self.baseline_note, "task": self.task,
                "level_label": self.words.as_dict(), "empty_columns": dict(self.empty_columns),
                "resamples": self.resamples, "warnings": list(self.warnings), "level_warning": self.level_warning,
                "ceiling": self.ceiling.as_dict(), "human_agreement": self.human_agreement,
                "control": self.control,
                "delta_band": list(self.delta_band) if self.delta_band else None,
                "system_scores": self.system_scores, "signatures": self.signatures,
                "tie_baseline": self.tie_baseline,
                "in_sample": self.in_sample,
                "imported": self.imported, "rows_without_imported_score": self.rows_without_imported_score,
                "unparsed": self.unparsed,
                "multiple_comparisons": {"correction": self.correction, "alpha": self.alpha,
                                         "vs_baseline": self.baseline_family if self.baseline else None,
                                         "sides": "two-sided" if self.two_sided else "one-sided"},
                "results": [{**r.as_dict(), "p_adjusted_vs_baseline": adjusted[r.metric],
                             **({"p_vs_baseline_two_sided": both.get(r.metric)} if both is not None else {}),
                             **self.fit_checks.get(r.metric, {}),
                             **({"alpha_with_metric": self.alpha_with_metric.get(r.metric)}
                                if self.alpha_with_metric is not None else {}),
                             **({"rank": self.ranks.get(r.metric)} if self.ranks is not None else {}),
                             **({"difference_vs_baseline": differences.get(r.metric)}
                                if differences is not None else {})} for r in self.results],
                **({"pairwise": self.pairwise_document()} if self.ranks is not None else {}),
                **({"differences": {"baseline": self.baseline, "confidence": 0.95}} if differences is not None
                   else {}),
                "skipped": [{"metric": n, "reason": r} for n, r in self.skipped],
                "failed": [{"metric": n, "reason": r} for n, r in self.failed],
                "metrics_requested": self.metrics_requested, "variants": self.variants,
                "complete": self.complete,
                "timing": {ms.metric: {"seconds": round(ms.seconds, 3), "computed": ms.computed,
                                       "cached": ms.cached, "beside": ms.beside} for ms in self.scores},
                "shared_timing": {k: round(v, 3) for k, v in shared_totals(self.scores).items()},
                "degenerate": self.degenerate, "rows": self.rows, "provenance": self.provenance,
                "wall_seconds": round(self.wall_seconds, 3)}

    # -- tables ------------------------------------------------------------------------------------------------
    def to_frame(self):
        """One row per variant (best first): the statistic, its interval, the three correlations, units, the
        p-value against the baseline, the metric, its signature and any note. pandas is imported here only."""
        pd = _need("pandas", "to_frame()")

        p = self.pvalues_vs_baseline
        rows = []
        for r in self.results:
            rows.append({"variant": r.metric, "value": self.values[r.metric],
                         "ci_low": r.ci[0] if r.ci else None, "ci_high": r.ci[1] if r.ci else None,
                         "spearman": r.spearman, "pearson": r.pearson, "kendall": r.kendall, "n": r.n,
                         "p_vs_baseline": p[r.metric], "is_baseline": r.metric == self.baseline,
                         "signature": r.signature, "note": r.note})
        frame = pd.DataFrame(rows).set_index("variant")
        frame.attrs.update({"statistic": self.statistic, "level": self.level, "judgments": self.judgments,
                            "subset": self.subset, "human": self.human, "ceiling": self.ceiling.value,
                            "interval": self.interval_label, "warnings": list(self.warnings)})
        return frame

    def difference_intervals(self, confidence: float = 0.95) -> dict[str, tuple[float, float] | None]:
        """Per variant, the bootstrap interval of its statistic minus the baseline's (same draws for both; the run's
        resamples and seed). Also at the global level, where the test is Williams's."""
        return _difference_intervals(self, confidence)

    def difference_entries(self, intervals: dict | None = None) -> dict[str, dict | None] | None:
        """Per variant, ``{"value": its statistic minus the baseline's, "ci": [low, high] or None}`` from
        ``intervals`` (default :attr:`differences`; None when neither: not asked for); None for the baseline and a
        variant without a value. The numbers of the table's "Δ vs baseline" column and of the JSON."""
        intervals = self.differences if intervals is None else intervals
        if intervals is None:
            return None
        base = self.values.get(self.baseline) if self.baseline else None
        out: dict[str, dict | None] = {}
        for variant, value in self.values.items():
            if variant == self.baseline or value is None or base is None:
                out[variant] = None
                continue
            ci = intervals.get(variant)
            out[variant] = {"value": value - base, "ci": list(ci) if ci else None}
        return out

    def pairwise_document(self) -> dict:
        """The all-pairs tests behind the clusters (:meth:`pvalue_matrix`, the run's correction and alpha), as the
        JSON records them under ``pairwise``, in the form of a leaderboard block's (leaderboard/SCHEMA.md): the
        test, its resamples and seed, the rule and its family, the variants and ``p[i][j]`` (one-sided, variants[i]
        better than variants[j]) with ``p_adjusted``; NaN as null."""
        matrix = self.pvalue_matrix()

        def rows(P) -> list | None:
            return None if P is None else [[None if not np.isfinite(x) else float(x) for x in row] for row in P]

        return {"test": matrix.test, "n_resamples": matrix.n_resamples, "seed": matrix.seed,
                "correction": matrix.correction, "alpha": matrix.alpha, "family": matrix.family,
                "variants": list(matrix.variants), "p": rows(matrix.p), "p_adjusted": rows(matrix.p_adjusted)}

    def clusters(self, alpha: float | None = None, correction: str | None = None, n_resamples: int | None = None,
                 seed: int | None = None) -> dict[str, int]:
        """Significance clusters (mt-metrics-eval's rule, :func:`meta_eval.stats.clusters.significance_clusters`)
        from :meth:`pvalue_matrix`, ``correction`` (holm, bh, none; default the run's :attr:`correction`) over
        all pairs: variant -> rank (1 = best)."""
        return dict(self.pvalue_matrix(n_resamples, seed, correction=correction, alpha=alpha).ranks)

    def adjusted_pvalues_vs_baseline(self, two_sided: bool = False) -> dict[str, float | None]:
        """Per variant, its p-value against the baseline adjusted by the run's :attr:`correction` over the family of
        the comparisons with the baseline (one per variant with a p-value; :attr:`baseline_family` names it): the
        p-value every star and "significantly" of the table and the reading line reads. ``two_sided``: the
        two-sided p-values, adjusted.

        A permutation p-value of 0 (no resample as extreme) enters the rule as its bound 1/B (:attr:`zero_resolution`
        B; :func:`meta_eval.stats.clusters.adjust_pvalues`), so its adjusted value is an upper bound that B
        resamples can support (Holm over 13 comparisons with 1,000: 0.013), never 0; the raw p stays 0 in
        :attr:`pvalues_vs_baseline`."""
        from meta_eval.stats.clusters import adjust_pvalues, zero_bound

        raw, resolution = self.pvalues_vs_baseline, self.zero_resolution
        if two_sided:  # each tail's 0 as its bound first: a two-sided 0 stands for 2/B
            other = self._other_tail()
            raw = {v: None if p is None else min(1.0, 2 * min(float(zero_bound(p, resolution)),
                                                              float(zero_bound(other[v], resolution))))
                   for v, p in raw.items()}
        tested = [v for v, p in raw.items() if p is not None and np.isfinite(p)]
        adjusted = adjust_pvalues([raw[v] for v in tested], self.correction, resolution) if tested else []
        out: dict[str, float | None] = {v: None for v in raw}
        out.update({v: float(a) for v, a in zip(tested, adjusted)})
        return out

    def two_sided_pvalues_vs_baseline(self) -> dict[str, float | None]:
        """Per variant, the two-sided p-value against the baseline: twice the smaller of the two one-sided tails, at
        most 1. For a permutation test the other tail is counted, not guessed: the test of the baseline against the
        variant from the same seed (:func:`meta_eval.stats.versus`; the canonical order of a pair makes it the
        other tail of the same resamples, as :meth:`pvalue_matrix` has it); for Williams's exact test it is 1 - p."""
        other = self._other_tail()
        return {v: None if p is None else min(1.0, 2 * min(p, other[v])) for v, p in self.pvalues_vs_baseline.items()}

    def _other_tail(self) -> dict[str, float | None]:
        """Per variant, the one-sided p-value that the baseline beats it (computed once)."""
        if self._other_tails is None:
            raw = self.pvalues_vs_baseline
            cached = self._matrices.get((self.resamples, self.setting.get("seed") or 0))  # --pairwise ran them
            if self.setting["test"] == "williams":
                self._other_tails = {v: None if p is None else 1.0 - p for v, p in raw.items()}
            elif cached is not None:  # P[baseline, v]: the same test, computed once (pvalue_matrix's promise)
                names, P = cached[0], cached[1]
                b = names.index(self.baseline)
                self._other_tails = {v: None if p is None else float(P[b, names.index(v)]) for v, p in raw.items()}
            else:
                self._other_tails = self._reverse_tests([v for v, p in raw.items() if p is not None])
                self._other_tails.update({v: None for v, p in raw.items() if p is None})
        return self._other_tails

    def _reverse_tests(self, variants: list[str]) -> dict[str, float]:
        """The run's test of the baseline against each of ``variants`` (the grids and options of the run)."""
        from meta_eval import stats

        names, X, Z = self._grids(valued_only=True)
        base = X[names.index(self.baseline)]
        seed = self.setting.get("seed") or 0
        groups = self._pooled_groups()
        out = {}
        for v in variants:
            if groups:
                from meta_eval.stats.pooled import pooled_versus

                out[v] = float(pooled_versus(base, X[names.index(v)], Z, groups, self.statistic, self.resamples,
                                             seed))
            else:
                out[v] = float(stats.versus(base, X[names.index(v)], Z, self.statistic, self.level,
                                            n_resamples=self.resamples, seed=seed, epsilon=self.epsilon,
                                            n_permutations=self.permutations, spa_seed=self.spa_seed))
        return out

    @property
    def zero_resolution(self) -> int | None:
        """The resamples behind a p-value of 0 against the baseline: it means p < 1/this (None: Williams's exact
        test; SPA: its first block, where its test stops early), :func:`meta_eval.stats.zero_resolution`."""
        from meta_eval.stats import zero_resolution

        return zero_resolution(self.setting["test"], self.resamples)

    @property
    def baseline_family(self) -> str:
        """The rule and family of :meth:`adjusted_pvalues_vs_baseline`, e.g. ``"Holm over the 11 comparisons with
        the baseline"``."""
        from meta_eval.stats.clusters import family_label

        m = sum(p is not None and bool(np.isfinite(p)) for p in self.pvalues_vs_baseline.values())
        return family_label(self.correction, m, "comparisons with the baseline")

    def plot(self, kind: str = "intervals", path: str | Path | None = None, *, variant: str | None = None,
             ranks: dict[str, int] | None = None, clusters: bool = False, correction: str | None = None,
             force: bool = False):
        """A figure of this run (matplotlib, the ``plot`` extra): ``"intervals"`` (the statistic per variant with its
        interval, the human ceiling as a line; ``clusters=True`` or ``ranks`` shade the significance clusters),
        ``"pvalues"`` (the all-pairs p-value heatmap, in cluster order) or ``"scatter"`` (``variant``, default the
        best, against the humans at the run's level). Written to ``path`` (.png, .svg, .pdf; no date in the file)
        when given, atomically, through the checks of the command line's ``--plot``: an existing file meta-eval did
        not write is replaced only with ``force=True``, the judgment data folder and the score cache never (each,
        and a folder where it cannot be written, an :class:`~meta_eval.report.outputs.OutputError`, a
        :class:`~meta_eval.errors.MetaEvalError` naming the path);
        returns the matplotlib Figure (closed once written). The heatmap's stars and the clusters read
        the p-values adjusted by ``correction`` (default the run's) over all pairs."""
        _need("matplotlib", "plot()")
        from meta_eval.report import figures

        from meta_eval.report.outputs import as_path

        if kind not in figures.KINDS:
            raise ValueError(f"kind must be one of {', '.join(figures.KINDS)}, not {kind!r}")
        path = as_path(path, "plot()'s path")  # plot(path=42): an OutputError, not pathlib's TypeError
        if path is not None and Path(path).suffix.lower() not in figures.SUFFIXES:
            raise ValueError(f"a figure is written as {', '.join(figures.SUFFIXES)}, not {Path(path).suffix!r}")
        if path is not None:  # before drawing: never over a user's file (unless force), the data or the cache
            from meta_eval.report.outputs import OutputPlan

            OutputPlan(force=force, judgments=self.judgments).add(path, "plot()'s path")
        if clusters and ranks is None:
            ranks = self.clusters(correction=correction)
        if kind == "intervals":
            fig = figures.intervals_figure(self, ranks)
        elif kind == "pvalues":
            matrix = self.pvalue_matrix(correction=correction)
            fig = figures.pvalues_figure(self, matrix, ranks or matrix.ranks)
        else:
            best = next((r.metric for r in self.results if r.value is not None), None)
            fig = figures.scatter_figure(self, self._plottable(variant or best))
        if path is not None:
            figures.save_figure(fig, path)
        return fig

    def _plottable(self, variant: str | None) -> str:
        """``variant`` when this run has its scores, else a :class:`~meta_eval.errors.MetaEvalError` (code 1: the
        run is done, the figure is missing) saying why: hidden by the variant choice (and how to show it), or
        never scored (its metric failed or was not chosen)."""
        from meta_eval.errors import MetaEvalError

        shown = [v for ms in self.scores for v in ms.scores]
        if variant in shown:
            return variant
        if variant in ((self.variants or {}).get("hidden") or ()):
            raise MetaEvalError(f"{variant!r} was scored but not shown ({self.variants['rule']}), so it is not "
                                f"plotted; name it for the figure (--plot scatter={variant}:FILE, plots=[...]) or "
                                f"with --variants, and it is shown", code=1)
        raise MetaEvalError(f"{variant!r} has no scores in this run; its variants: {', '.join(shown) or 'none'}",
                            code=1)

    def _pooled_groups(self) -> list[str] | None:
        """Each system column's language pair when the run pooled several at the system level, else None."""
        from meta_eval.evaluate import pooled_groups

        return pooled_groups(self.jset, self.level)

    def _grids(self, valued_only: bool = False) -> tuple[list[str], np.ndarray, np.ndarray]:
        """(variants in the order of :attr:`results`, their oriented documents x systems grids stacked, the human
        grid): what the resampling functions take (:func:`meta_eval.matrix.judgment_matrices`)."""
        from meta_eval.evaluate import oriented_system_values
        from meta_eval.matrix import judgment_matrices
        from meta_eval.scoring.system_scores import uses_system_scores

        oriented = {v: (s if ms.higher_is_better else -s) for ms in self.scores for v, s in ms.scores.items()}
        fixed = {v: x for ms in self.scores for v, x in oriented_system_values(ms).items()}
        names = [r.metric for r in self.results if r.metric in oriented
                 and (not valued_only or self.values[r.metric] is not None)]
        Z, matrices = judgment_matrices(self.jset, self.human, [oriented[v] for v in names],
                                        system_values=[fixed[v] for v in names]
                                        if uses_system_scores(self.level, self.statistic) else None)
        return names, np.stack(matrices), Z

    def pvalue_matrix(self, n_resamples: int | None = None, seed: int | None = None, *,
                      correction: str | None = None, alpha: float | None = None) -> PValueMatrix:
        """All-pairs one-sided p-values between the variants with a value, in the order of :attr:`results`.

        The run's test (:func:`meta_eval.stats.describe`, :func:`meta_eval.stats.pvalue_matrix`): the Williams test
        at the global level of the correlations (the table's test, on the same rows), PERM-BOTH for the
        correlations at the other levels, the pair-outcome swap for acc-t and acc-eq, WMT24's test for SPA.
        ``n_resamples`` and ``seed`` default to the run's, and then an entry against the baseline equals
        :attr:`pvalues_vs_baseline` exactly. ``correction`` (holm, bh, none) and ``alpha`` default to the run's;
        they give the result's ``p_adjusted`` and ``ranks`` (the clusters).
        """
        n_resamples = self.resamples if n_resamples is None else n_resamples
        seed = (self.setting.get("seed") or 0) if seed is None else seed
        correction = self.correction if correction is None else correction
        alpha = self.alpha if alpha is None else alpha
        if (n_resamples, seed) not in self._matrices:  # the tests run once: clusters, heatmap and rules share them
            self._matrices[n_resamples, seed] = self._pvalues(n_resamples, seed)
        return self._matrix(*self._matrices[n_resamples, seed], correction, alpha)

    def _pvalues(self, n_resamples: int, seed: int) -> tuple:
        """(variants, P, test, resamples, seed) of the run's all-pairs test, before any correction."""
        from meta_eval import stats

        test = stats.describe(self.statistic, self.level)["test"]
        if test == "williams":  # the rows of evaluate(), not the grids: the table's numbers, exactly
            from meta_eval.stats.significance import williams_pvalues

            oriented = {v: (s if ms.higher_is_better else -s) for ms in self.scores for v, s in ms.scores.items()}
            variants = [r.metric for r in self.results if r.metric in oriented and self.values[r.metric] is not None]
            P = williams_pvalues(self.jset.human(self.human), [oriented[v] for v in variants], self.statistic)
            return variants, P, test, None, None
        variants, X, Z = self._grids(valued_only=True)
        if len(variants) < 2:  # nothing to compare: no test, one cluster (a single metric is rank 1)
            return variants, np.full((len(variants), len(variants)), np.nan), test, n_resamples, seed
        groups = self._pooled_groups()
        if groups:
            from meta_eval.stats.pooled import pooled_pvalue_matrix

            P = pooled_pvalue_matrix(X, Z, groups, self.statistic, n_resamples, seed)
        else:
            P = stats.pvalue_matrix(X, Z, self.statistic, self.level, n_resamples=n_resamples,
                                    seed=seed, epsilon=self.epsilon, n_permutations=self.permutations,
                                    spa_seed=self.spa_seed)
        return variants, P, test, n_resamples, seed

    def _matrix(self, variants, P, test, n_resamples, seed, correction, alpha) -> PValueMatrix:
        from meta_eval.stats import zero_resolution
        from meta_eval.stats.clusters import CORRECTIONS, significance_clusters

        if correction not in CORRECTIONS:
            raise ValueError(f"correction must be one of {', '.join(CORRECTIONS)}, not {correction!r}")
        P = np.array(P, dtype=float)
        if self.in_sample.get("tests_withheld"):  # an in-sample learned variant: no test unless --allow-in-sample
            for i, v in enumerate(variants):
                if v in self.in_sample["variants"]:
                    P[i, :] = P[:, i] = np.nan
        ranks, adjusted = significance_clusters(variants, [self.values[v] for v in variants], P, alpha=alpha,
                                                correction=correction,
                                                n_resamples=zero_resolution(test, n_resamples))
        return PValueMatrix(variants, P, test, n_resamples, seed, adjusted, correction, alpha, dict(ranks))


def sorted_results(results: Sequence) -> list:
    """Best first, exact ties by name; variants without a value last (the order of every table;
    :func:`meta_eval.stats.clusters.best_first`)."""
    from meta_eval.stats.clusters import best_first

    return sorted(results, key=lambda r: best_first(r.value, r.metric))


@dataclass
class ScoreResult:
    """What :func:`meta_eval.score` returns: one array of per-example scores per variant (``columns``), the
    :class:`~meta_eval.scoring.runner.MetricScores` behind them (signatures, timing), and the metrics skipped,
    failed or named but not run."""

    n: int
    columns: dict[str, np.ndarray]
    scores: list
    skipped: list[tuple[str, str]]
    failed: list[tuple[str, str]]
    not_run: list[tuple[str, str]]
    variants: dict | None = None
    """Which variants are columns (:meth:`meta_eval.scoring.selection.VariantChoice.as_dict`)."""
    rows: dict | None = None
    """A quick trial's examples (``--limit``/``--sample``; :meth:`judgments.rows.RowChoice.as_dict`), else None."""
    provenance: dict | None = None
    """The command line, meta-eval's version, the files read (:func:`meta_eval.provenance.record`)."""

    @property
    def complete(self) -> bool:
        """No metric failed and every metric named one by one ran (``meta-eval score`` exits 1 otherwise)."""
        return not self.failed and not self.not_run

    @property
    def signatures(self) -> dict[str, str]:
        return {ms.metric: ms.signature for ms in self.scores}

    def to_frame(self):
        """One row per example, one column per variant (pandas imported here only)."""
        pd = _need("pandas", "to_frame()")

        return pd.DataFrame(self.columns)


def _need(module: str, what: str):
    """Import an optional library, or raise MetaEvalError saying which extra installs it."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        from meta_eval.errors import MetaEvalError

        raise MetaEvalError(f"{what} needs {module.split('.')[0]}: pip install 'meta-eval[plot]'") from None


def _difference_intervals(result: "RunResult", confidence: float = 0.95) -> dict[str, tuple[float, float] | None]:
    """Percentile bootstrap interval of (variant - baseline) on the run's statistic, from the same draws for both
    (:func:`meta_eval.stats.samples`; BOOT-BOTH, documents only for SPA; the global level of the correlations over
    the rows, as its interval), with the run's resamples and seed."""
    from meta_eval import stats

    if result.baseline is None:
        return {}
    groups = result._pooled_groups()
    if result.level == "global" and result.statistic in stats.CORRELATIONS:  # the rows of the value and interval
        from meta_eval.stats.resampling import row_bootstrap_samples
        from meta_eval.units import global_rows

        oriented = {v: (s if ms.higher_is_better else -s) for ms in result.scores for v, s in ms.scores.items()}
        names = [r.metric for r in result.results if r.metric in oriented]
        rows = global_rows(result.jset, result.human, [oriented[v] for v in names])
        draws = row_bootstrap_samples(rows.values, rows.human, rows.doc, rows.system, result.statistic,
                                      result.resamples, result.setting.get("seed") or 0, n_docs=rows.n_docs,
                                      n_systems=rows.n_systems)
    elif groups:
        names, X, Z = result._grids()
        from meta_eval.stats.pooled import pooled_samples

        draws = pooled_samples(X, Z, groups, result.statistic, result.resamples, result.setting.get("seed") or 0)
    else:
        names, X, Z = result._grids()
        draws = stats.samples(X, Z, result.statistic, result.level, n_resamples=result.resamples,
                              seed=result.setting.get("seed") or 0, epsilon=result.epsilon,
                              n_permutations=result.permutations, spa_seed=result.spa_seed)
    base = draws[:, names.index(result.baseline)]
    out = {}
    tail = (1 - confidence) / 2 * 100
    for k, name in enumerate(names):
        if name == result.baseline:
            continue
        diff = draws[:, k] - base
        diff = diff[np.isfinite(diff)]
        out[name] = None if len(diff) == 0 else (float(np.percentile(diff, tail)),
                                                 float(np.percentile(diff, 100 - tail)))
    return out
