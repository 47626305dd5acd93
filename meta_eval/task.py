"""The main job as a library call: :func:`run` (``meta-eval run``) and :func:`run_protocol` (``meta-eval run
--protocol``).

:func:`run` loads a judgment set, chooses and scores metrics (through the score cache, on an engine), computes the
chosen statistic at the chosen level with intervals, tests against a baseline and the human ceiling, and returns a
:class:`~meta_eval.results.RunResult`; it takes the same choices as the command line, by the same names. Every
problem the user can fix is a :class:`~meta_eval.errors.MetaEvalError` with the message the command line prints.

Messages the command line prints while the job runs (which human dimension, the set's notes, duplicates) go to
``say(channel, text)`` when given (``channel``: ``"out"`` for notes beside the results, ``"err"`` for progress and
status, ``"err-skipped"`` for a metric that cannot run and why, ``"out-warning"`` / ``"out-note"`` for what the
command prints under its results), so a library caller sees nothing it did not ask for.

Example
-------
>>> from meta_eval import run                                              # doctest: +SKIP
>>> res = run("chaganty", metrics=["rouge", "chrf"], level="system")       # doctest: +SKIP
>>> res.to_frame()                                                         # doctest: +SKIP
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Callable, Mapping, Sequence

from meta_eval.errors import MetaEvalError
from meta_eval.scoring import selection

__all__ = ["device_option", "learned_fit_checks", "parse_band", "protocol_document", "protocol_interval",
           "resolve_statistic", "run", "run_protocol", "set_ceiling"]

Say = Callable[[str, str], None]
#: the command line's ``--device`` / ``--dtype`` of every scoring command (a click callback; see selection's notes)
device_option = selection.device_option


#: The suffixes of a score file (``score --output``, ``run --scores-out``): each names its format.
SCORE_FORMATS = (".jsonl", ".csv", ".tsv")
#: Why ``run --output`` takes .json only, where a user may have meant another output.
RESULTS_ONLY_JSON = "the table as csv, md or latex: --format; every row's scores: --scores-out"


def _quiet(channel: str, text: str) -> None:
    return None


def resolve_statistic(statistic: str | None, correlation: str | None, level: str | None, *, epsilon: float = 0.0,
                      control: str | None = None, delta_band: str | tuple | None = None):
    """Check the statistic, level and the options that depend on them; ``(statistic, level, band)``.

    The rules of ``meta-eval run``: ``--correlation`` is one of the three correlations and agrees with
    ``--statistic``; the statistic exists at the level (SPA only at the system level, PDP only at the summary level,
    their defaults); ``epsilon`` only for acc-eq; ``control="system"`` (FRANK's partial correlation) at the global
    level with Pearson or Spearman; a ``delta_band`` ``"LO:HI"`` (or a pair) at the system level.
    """
    from meta_eval import stats

    for option, value in (("--statistic", statistic), ("--level", level), ("--control", control)):
        if value is not None and not str(value).strip():  # "" is not silently the default
            raise MetaEvalError(f"{option} is empty: give a value or leave the option out")
    if correlation is not None and correlation not in stats.CORRELATIONS:
        raise MetaEvalError(f"--correlation must be spearman, pearson or kendall, not {correlation!r} (other "
                            f"statistics: --statistic "
                            f"{', '.join(s for s in stats.STATISTICS if s not in stats.CORRELATIONS)})")
    if correlation is not None and statistic is not None and correlation != statistic:
        raise MetaEvalError(f"--correlation {correlation} and --statistic {statistic} disagree; give one of them")
    statistic = statistic or correlation or "spearman"
    level = level or {"spa": "system", "pdp": "summary"}.get(statistic, "global")
    try:
        stats.check_statistic(statistic, level)
    except stats.StatisticError as exc:
        raise MetaEvalError(f"--statistic {statistic} --level {level}: {exc}") from None
    if epsilon and statistic != "acc-eq":
        raise MetaEvalError(f"--epsilon is the tie threshold of acc-eq; --statistic {statistic} does not take it")
    if control is not None and control != "system":
        raise MetaEvalError(f"--control {control!r}: the only control is system (FRANK's partial correlation, "
                            "controlling for the system)")
    if control is not None and (level != "global" or statistic not in ("pearson", "spearman")):
        raise MetaEvalError(f"--control system is FRANK's partial correlation: it needs --level global and "
                            f"--statistic pearson or spearman (got --control {control} --level {level} --statistic "
                            f"{statistic})")
    band = parse_band(delta_band) if delta_band is not None else None
    if band is not None and level != "system":
        raise MetaEvalError(f"--delta-band compares system pairs: it needs --level system, not {level}")
    return statistic, level, band


def parse_band(delta_band) -> tuple[float, float]:
    """``"LO:HI"`` (HI may be ``inf``) or ``(LO, HI)`` with 0 <= LO <= HI."""
    band = None
    if isinstance(delta_band, str):
        lo_text, sep, hi_text = delta_band.partition(":")
        try:
            band = (float(lo_text), float(hi_text)) if sep else None
        except ValueError:
            band = None
    elif isinstance(delta_band, Sequence) and len(delta_band) == 2:
        band = (float(delta_band[0]), float(delta_band[1]))
    if band is None or not (0 <= band[0] <= band[1]):
        raise MetaEvalError(f"--delta-band must be LO:HI with 0 <= LO <= HI (HI may be inf), got {delta_band!r}")
    return band


def run(judgments: str, metrics: str | Sequence[str] | None = None, *, subset: str | None = None,
        human: str | None = None, statistic: str | None = None, correlation: str | None = None,
        level: str | None = None, baseline: str | None = None, epsilon: float = 0.0, permutations: int | None = None,
        control: str | None = None, delta_band: str | tuple | None = None,
        options: Mapping[str, object] | Sequence[str] | None = None, resamples: int = 1000, seed: int = 0,
        duplicates: str | None = None, text: str | None = None, data_dir: str | Path | None = None,
        cache: str | Path | None = None, no_cache: bool = False, batch_size: int = 256, engine="local",
        workers: int | None = None, address: str | None = None, actors: int | None = None, gpus_per_actor: float = 0.0,
        output: str | Path | None = None, force: bool = False, progress: bool = True, say: Say | None = None,
        system_score: str = "auto", scores: Sequence[str] = (), scores_format: str | None = None,
        scores_missing: str = "error", scores_out: str | Path | None = None,
        plugins: Sequence[str | Path] = (), spa_seed: int | None = None, allow_in_sample: bool = False,
        variants: str | Sequence[str] | None = None,
        correction: str = "holm", plots: Sequence[str | Path] = (), pairwise: bool = False,
        limit: int | None = None, sample: int | None = None, differences: bool = False, two_sided: bool = False):
    """Meta-evaluate metrics on a judgment set: ``meta-eval run`` as a function.

    Parameters
    ----------
    judgments : str
        A built-in set (``chaganty``, ``summeval``, ...; see ``meta-eval judgments``) or a ``.jsonl`` file.
    metrics : str or list of str, optional
        Metric names (``"all"``: every metric but the named-only ones); default: the metrics that take seconds on a
        CPU (not the neural ones). A variant or a family of variants in place of a name (``"rouge1-f"``,
        ``"rouge1"``) chooses that metric with those variants.
    variants : str or list of str, optional
        Only these variants (``--variants``: names, families such as ``rouge1``, patterns such as ``rouge*-f``, or
        ``"all"``); default: every variant but ROUGE's precision and recall
        (:data:`meta_eval.scoring.selection.DEFAULT_RULE`). An explicit ``baseline`` is always shown.
    subset, human, statistic, correlation, level, baseline, epsilon, permutations, control, delta_band
        As ``meta-eval run``'s options of the same names (``delta_band``: ``"LO:HI"`` or a pair).
    options : mapping or list of "KEY=VALUE"
        Passed to every chosen metric that takes KEY (``{"refs": "mean"}``).
    resamples, seed
        Bootstrap and permutation resamples, and their seed (also the seed of ``sample``).
    limit, sample : int, optional
        A quick trial (``--limit N``, ``--sample N``): the set's first N rows in file order, or N rows drawn without
        replacement with ``seed`` (:mod:`judgments.rows`); recorded as the JSON's ``"rows"`` object.
    duplicates, text, data_dir
        How repeated (document, system) pairs are resolved, which text version is scored, where the data are.
    cache, no_cache, batch_size
        The score cache file (default: the user cache) or none, and the examples per batch.
    engine : "local", "ray" or an :class:`~meta_eval.scoring.engines.Engine`
        Where the batches are scored (``workers``, ``address``, ``actors``, ``gpus_per_actor`` as on the command
        line); an engine
        given as an object is used and left open.
    output, force
        Also write the JSON of ``meta-eval run --output``, checked before any work; ``force`` replaces a file
        meta-eval did not write (never an input of the run). Every output (``output``, ``scores_out``, ``plots``)
        is checked together, before any loading or scoring, by one
        :class:`~meta_eval.report.outputs.OutputPlan`: never an input of the run nor a file in the judgment data
        folder (even with ``force``), never two outputs on one path.
    plots : list of str or path
        The figures of ``--plot`` (``FILE``, ``pvalues:FILE``, ``scatter:FILE``, ``scatter=VARIANT:FILE``;
        :func:`meta_eval.report.figures.figure_request`), checked with the other outputs (a scatter's VARIANT
        against the chosen metrics' variants; one hidden by default is shown, as an explicit baseline is) and kept as
        :attr:`RunResult.figures` for :meth:`RunResult.plot` to write (the command line writes them after the
        table, with the clusters of ``--pairwise``).
    progress : bool
        Progress bars (counts, rate, ETA) on stderr when it is a terminal.
    allow_in_sample : bool
        Test a learned metric (``learned:NAME``) scored on rows its model was fitted on like any other metric
        (``--allow-in-sample``). By default its p-values against the baseline (and every other variant's, when the
        baseline is such a model) are withheld (None; no stars, no "significantly" in the reading line) and its
        rows and columns of :meth:`RunResult.pvalue_matrix` are NaN: an in-sample correlation is not a held-out one.
    say : callable, optional
        ``say(channel, text)`` receives the messages the command line prints while the job runs.
    system_score : {"auto", "mean", "corpus"}
        How a system's score is formed at the system level (:mod:`meta_eval.scoring.system_scores`): each
        metric's own way (BLEU, chrF, TER: sacrebleu's corpus score; the others: the mean of the row scores), the
        mean for every metric, or the corpus score (every chosen metric must define one).
    scores : list of "NAME=FILE" or "NAME:lower=FILE"
        Imported metrics (``--scores``, :mod:`meta_eval.scoring.imported`): scores computed elsewhere, joined to
        the set's rows strictly before anything is scored; ``scores_format`` overrides the format the file name
        gives; ``scores_missing="drop"`` drops the rows a file does not score (from every metric) instead of
        failing.
    scores_out : path, optional
        Also write every row's metric scores with the set's row keys (``id``, ``doc_id``, ``system``) as JSONL,
        CSV or TSV (by extension): the format ``scores`` reads back. What made it (each metric's signature and
        variants, the variant choice, the ``provenance``) is its first JSONL line, or for CSV/TSV the sidecar
        ``<file>.meta.json`` (:func:`meta_eval.scoring.score_files.file_header`).
    plugins : list of paths
        Python files whose metrics are registered first (``--plugin FILE.py``; docs/plugins.md).
    spa_seed : int, optional
        SPA: the seed of the permutation signs behind every system pair's p-value, apart from ``seed`` (WMT24 draws
        them with seed 4: mt-metrics-eval ``pce.py``); default: drawn first from ``seed``.
    correction : {"holm", "bh", "none"}
        The multiple-comparison rule of every star, cluster and "significantly" (``--correction``): Holm
        (family-wise error, default), Benjamini-Hochberg (false discovery rate) or none, over the comparisons with
        the baseline (table, reading line) and over all pairs (heatmap, clusters); recorded in the JSON.
    pairwise : bool
        A categorical or pairwise property: also every pair's paired test (``--pairwise``;
        :attr:`~meta_eval.categorical.CategoricalResult.pvalues`). A graded one: its significance clusters
        (:meth:`RunResult.clusters`, kept as :attr:`RunResult.ranks`) with the all-pairs tests behind them, in the
        JSON (each result's ``rank``, and ``pairwise``), computed once for the table, the figures and the JSON.
    differences : bool
        A graded property: each variant's difference to the baseline with its bootstrap interval (``--differences``;
        :meth:`RunResult.difference_intervals`, kept as :attr:`RunResult.differences`), in the JSON as each
        result's ``difference_vs_baseline`` ``{"value", "ci"}``; refused before any scoring on a categorical or
        pairwise property.
    two_sided : bool
        A graded property: the tests against the baseline are two-sided (``--two-sided``; twice the smaller tail,
        the other tail counted: :meth:`RunResult.two_sided_pvalues_vs_baseline`), so the JSON's
        ``p_adjusted_vs_baseline`` and each result's ``p_vs_baseline_two_sided`` are what the table shows.

    Returns
    -------
    meta_eval.results.RunResult or meta_eval.categorical.CategoricalResult
        The latter for a categorical or pairwise property (JUDGE-BENCH's ``categorical`` judgments):
        :mod:`meta_eval.categorical` (statistics ``label-accuracy``, ``kappa``, ``macro-f1``,
        ``pairwise-accuracy``; how a score meets a label).

    Raises
    ------
    meta_eval.errors.MetaEvalError
        With the command line's message and exit code: a bad choice, a set or level that cannot be computed, no
        metric able to run (code 2; 1 if every chosen metric failed).
    """
    from meta_eval.report.figures import figure_request
    from meta_eval.report.outputs import OutputPlan, as_path, check_format
    from meta_eval.scoring.engines import engine_for
    from meta_eval.scoring.imported import parse_spec
    from meta_eval.scoring.system_scores import MODES

    say = say or _quiet
    started = time.perf_counter()
    check_judgments_argument(judgments)
    from meta_eval.judgments.rows import check_choice, check_resamples, check_seed

    check_choice(limit, sample, seed)
    check_seed(spa_seed, "--spa-seed")
    check_resamples(resamples)
    if permutations is not None:
        check_resamples(permutations, "--permutations")
    if human is not None and (not isinstance(human, str) or not human):  # "" is not silently the default
        raise MetaEvalError(f"--human must name a human dimension of the set, not {human!r} (leave it out for the "
                            "set's default; `meta-eval judgments SET` lists them)")
    for option, value in (("--subset", subset), ("--text", text)):
        if value is not None and not str(value).strip():  # "" is not silently the default either
            raise MetaEvalError(f"{option} is empty: give a value or leave the option out")
    option_list = selection.option_list(options)
    data_dir, cache = as_path(data_dir, "--data-dir"), as_path(cache, "--cache")
    specs = [parse_spec(text, scores_format) for text in ([scores] if isinstance(scores, str) else scores)]
    if scores_missing not in ("error", "drop"):
        raise MetaEvalError(f"--scores-missing must be error or drop, not {scores_missing!r}")
    if not specs and (scores_format is not None or scores_missing != "error"):  # else taken and ignored
        raise MetaEvalError(f"{'--scores-format' if scores_format is not None else '--scores-missing'} reads the "
                            "--scores files: give --scores NAME=FILE, or leave the option out")
    figures = [figure_request(item) for item in ([plots] if isinstance(plots, (str, Path)) else plots)]
    # every output at once, before any loading or scoring: a bad output is found in a second, not after hours
    outputs = OutputPlan(force=force, judgments=judgments, data_dir=data_dir, cache=cache, no_cache=no_cache,
                         options=option_list, plugins=plugins, metrics=metrics,
                         files=[(f"the --scores file of {spec.name}", spec.path) for spec in specs])
    output, scores_out = outputs.add(output, "--output"), outputs.add(scores_out, "--scores-out")
    from meta_eval.scoring.score_files import sidecar

    outputs.add(sidecar(scores_out), "--scores-out (its sidecar)")  # a CSV/TSV's record (score_files.file_header)
    for _, _, path in figures:
        outputs.add(path, "--plot")
    check_format(output, "--output", (".json",), RESULTS_ONLY_JSON)  # the suffix says the format
    check_format(scores_out, "--scores-out", SCORE_FORMATS)
    selection.load_plugins(plugins)
    names, _ = selection.resolve_metric_choice(metrics, variants, keep_names=[spec.name for spec in specs])  # now
    if allow_in_sample and not any(n.strip().lower().startswith("learned:") for n in (names or "").split(",")):
        raise MetaEvalError(f"{ALLOW_IN_SAMPLE_FLAG} tests a learned:NAME metric on the rows its model was fitted on: "
                            "-m names no learned metric (add -m learned:NAME, or leave the option out)")
    from meta_eval import categorical

    asked_statistic = statistic or correlation  # a categorical or pairwise property takes its own statistics
    asked_level = level  # before a graded default: a categorical property refuses any other level than global
    if statistic in categorical.NAMES:
        categorical.check_options(statistic, correlation, level, epsilon, control, delta_band, spa_seed)
        level, band = "global", None
    else:
        statistic, level, band = resolve_statistic(statistic, correlation, level, epsilon=epsilon, control=control,
                                                   delta_band=delta_band)
    if duplicates not in (None, "error", "mean", "first"):
        raise MetaEvalError(f"--duplicates must be error, mean or first, not {duplicates!r}")
    if system_score not in MODES:
        raise MetaEvalError(f"--system-score must be one of {', '.join(MODES)}, not {system_score!r}")
    if system_score != "auto" and level != "system":  # else taken and ignored: only the system level forms them
        raise MetaEvalError(f"--system-score {system_score} forms the system-level scores: it needs --level system, "
                            f"not {level}")
    from meta_eval.stats.clusters import CORRECTIONS

    if correction not in CORRECTIONS:
        raise MetaEvalError(f"--correction must be one of {', '.join(CORRECTIONS)}, not {correction!r}")
    if spa_seed is not None and statistic != "spa":
        raise MetaEvalError(f"--spa-seed seeds SPA's permutation signs; --statistic {statistic} does not draw them")
    if permutations is not None and statistic != "spa":  # else taken and ignored
        raise MetaEvalError(f"--permutations counts SPA's permutations; --statistic {statistic} does not draw them")
    permutations = 1000 if permutations is None else permutations
    # a bad engine choice, Ray missing, or --gpus-per-actor without GPUs: now, before any work
    with engine_for(engine, workers, address, actors, gpus_per_actor) as scoring:
        return _run(judgments, metrics, subset=subset, human=human, statistic=statistic, level=level,
                    baseline=baseline, epsilon=epsilon, permutations=permutations, control=control, band=band,
                    options=option_list, resamples=resamples, seed=seed, duplicates=duplicates, text=text,
                    data_dir=data_dir, cache=cache, no_cache=no_cache, batch_size=batch_size, engine=scoring,
                    output=output, progress=progress, say=say, started=started, system_score=system_score,
                    specs=specs, scores_missing=scores_missing, scores_out=scores_out, spa_seed=spa_seed,
                    allow_in_sample=allow_in_sample, variants=variants, correction=correction, figures=figures,
                    asked_statistic=asked_statistic, pairwise=pairwise, rows=(limit, sample), plan=outputs,
                    differences=differences, two_sided=two_sided, asked_level=asked_level)


def check_judgments_argument(judgments, option: str = "--judgments") -> str:
    """``judgments`` (a set's name or a file's path; comma-separated for a board) as a str; None or anything else
    is a :class:`~meta_eval.errors.MetaEvalError` with the command line's sentence (``run(None)``, ``run(42)``)."""
    import os

    if judgments is None:
        raise MetaEvalError(f"give {option} SET (a built-in set or a .jsonl file)")
    if isinstance(judgments, os.PathLike):
        judgments = os.fspath(judgments)
    if not isinstance(judgments, str) or not judgments.strip():
        raise MetaEvalError(f"{option} must be a built-in set's name or a .jsonl file's path, not {judgments!r}")
    return judgments


def _run(judgments, metrics, *, subset, human, statistic, level, baseline, epsilon, permutations, control, band,
         options, resamples, seed, duplicates, text, data_dir, cache, no_cache, batch_size, engine, output,
         progress, say, started, system_score, specs=(), scores_missing="error", scores_out=None, spa_seed=None,
         allow_in_sample=False, variants=None, correction="holm", figures=(), asked_statistic=None,
         pairwise=False, rows=(None, None), plan=None, differences=False, two_sided=False, asked_level=None):
    from meta_eval import categorical
    from meta_eval import judgments as judgment_sets
    from meta_eval import stats
    from meta_eval.evaluate import (add_delta, add_global_intervals, add_partial, check_level, check_pooled, evaluate,
                                    evaluate_level, level_warning)
    from meta_eval.judgments.rows import select_rows
    from meta_eval.provenance import record
    from meta_eval.report.outputs import write_json
    from meta_eval.results import RunResult, sorted_results
    from meta_eval.scoring.cache import open_cache
    from meta_eval.scoring.chunks import spread
    from meta_eval.scoring.imported import check_levels, join_scores, merge_tables, metric_scores, read_table
    from meta_eval.scoring.runner import Scoring, degenerate_lines, degenerate_report, score_all
    from meta_eval.scoring.selection import named_skips, requested_names
    from meta_eval.scoring.system_scores import add_system_scores

    requested = requested_names(metrics)
    tables = merge_tables([read_table(spec) for spec in specs])  # a bad score file fails first, in seconds
    try:
        loaded = judgment_sets.load(judgments, data_dir, subset=subset, text=text or "repaired")
        dim = human or loaded.default_dimension
        trial, row_choice = select_rows(loaded, *rows, seed)  # --limit/--sample; `loaded` (all rows) joins --scores
        if row_choice is not None:
            say("err", f"{loaded.name} ({loaded.subset}): {row_choice.line()}")
        prop = loaded.get_property(dim)
        if prop is not None and prop.categorical:  # labels: accuracy, kappa, macro-F1 or pairwise accuracy
            if differences:  # before any scoring
                raise MetaEvalError(categorical.NO_DIFFERENCES)
            given = [flag for flag, on in ((f"--level {asked_level}", asked_level not in (None, "global")),
                                           (f"--control {control}", control is not None),
                                           ("--delta-band", band is not None)) if on]
            if given:  # as check_options refuses them with a label --statistic, before any scoring
                kind = "pairwise" if prop.pairwise else "categorical"
                raise MetaEvalError(f"{loaded.name}'s '{dim}' is {kind} (labels {', '.join(prop.labels)}): its "
                                    f"statistics compare labels item by item (one level, no systems): drop "
                                    f"{', '.join(given)}")
            return categorical.run_categorical(
                trial, dim, prop, asked_statistic=asked_statistic, metrics=metrics, variants=variants,
                options=options, baseline=baseline, resamples=resamples, seed=seed, correction=correction,
                pairwise=pairwise, data_dir=data_dir, cache=cache, no_cache=no_cache, batch_size=batch_size,
                engine=engine, progress=progress, say=say, output=output, started=started, tables=tables,
                full=loaded, scores_missing=scores_missing, scores_out=scores_out, figures=figures,
                provenance=record(plan, judgments), two_sided=two_sided)
        if statistic in categorical.NAMES:
            raise MetaEvalError(f"--statistic {statistic} compares labels: {loaded.name}'s '{dim}' is not a "
                                "categorical or pairwise property (its scores are graded: use a correlation, "
                                "--statistic spearman, say)")
        total_rows = len(trial)
        jset = trial.scored(dim)
        dropped = total_rows - len(jset)
        jset, dup_report = jset.resolve_duplicates(duplicates)
        imported, missing_scores = [], 0
        if tables:
            position = {r.id: i for i, r in enumerate(loaded.rows)}
            kept = [position[r.id] for r in jset.rows]
            imported, keep = join_scores(tables, loaded, kept, scores_missing)
            check_levels(imported, level, statistic)
            missing_scores = len(kept) - len(keep)
            if missing_scores:  # --scores-missing drop: the same rows for every metric (the table's notes say so)
                from dataclasses import replace

                jset = replace(jset, rows=[loaded.rows[p] for p in keep])
        few = None
        check_pooled(jset, level, statistic)
        if len(jset) >= 4:
            check_level(jset, dim, level, statistic)
            few = level_warning(jset, dim, level, statistic)
    except (judgment_sets.JudgmentError, judgment_sets.DataError, ValueError) as exc:
        raise MetaEvalError(str(exc)) from None
    if len(jset) < 4:
        among = row_choice.among() if row_choice is not None else ""  # --limit 3 is why, not the file
        raise MetaEvalError(f"{jset.name}: only {len(jset)} rows have a '{dim}' score{among}; at least 4 are needed"
                            + (f": keep more rows than {row_choice.flag}" if among else ""))
    why = "given with --human" if human else jset.default_reason
    set_notes = list(jset.notes)
    if jset.rows_without_system():
        set_notes.append(f"{len(jset.rows_without_system())} of {len(jset)} rows have no 'system': only the global "
                         "level can be computed (the summary and system levels need each row's system)")
    if human is None and len(jset.dimensions) > 1:
        say("out", f"human: {dim} (chosen because {why}; pass --human to choose: {', '.join(jset.dimensions)})")
    from meta_eval.units import level_words, multi_system_note

    if multi_system_note(jset):  # how a row naming several systems counts at each level (meta_eval.units)
        set_notes.append(multi_system_note(jset))
    for line in ([dup_report.message] if dup_report.message else []) + [f"note: {n}" for n in set_notes]:
        say("out", line)
    scatter = {f"--plot scatter={v}:{path}:": v for kind, v, path in figures if kind == "scatter" and v}
    asked, requested, shown, chosen, skipped = selection.choose_for_set(
        requested, variants, baseline, imported, options, jset, dim, data_dir=data_dir, cache=cache, no_cache=no_cache,
        shown_too=scatter.values())  # a variant named for a figure is shown, as an explicit baseline is
    planned = [v for m in chosen for v in m.variants] + [v for imp in imported for v in imp.table.variants]
    for option, variant in (({"--baseline": baseline} if baseline is not None else {}) | scatter).items():
        check_planned(option, variant, planned, skipped)  # before the scoring, not after it
    from meta_eval.stats.resampling import check_resample_memory

    n_variants = sum(len(m.variants) for m in chosen) + sum(len(imp.table.variants) for imp in imported)
    for option, count in (("--resamples", resamples), ("--permutations", permutations)):
        if count:  # before the scoring: the draws of the resamples are made at once (a sentence, not MemoryError)
            check_resample_memory(count, jset.documents(), len({r.system for r in jset.rows}), n_variants,
                                        option=option)
    words, n_docs = level_words(jset.task, "summary"), jset.documents()
    say("err", f"{jset.name} ({jset.subset}): {len(jset)} rows, {n_docs} {words.unit if n_docs == 1 else words.units}"
        f", human: {dim}" + (f" ({dropped} row{'s' if dropped != 1 else ''} without a {dim} score left out)"
                             if dropped else ""))
    scoring = score_all(chosen, jset.examples(), open_cache(cache, no_cache), batch_size, engine=engine,
                        progress=progress) if chosen else Scoring([], [], {})  # -m named imported metrics only
    if scoring.dropped_rows():  # an LLM judge's on_unparsed=drop: rows with no parsed answer leave every metric
        jset, scoring, note = drop_rows(jset, scoring)
        set_notes.append(note)
        say("out", f"note: {note}")
    scored, failed = scoring.scored, scoring.failed
    if imported:
        rows = [position[r.id] for r in jset.rows]
        scored = scored + [metric_scores(imp, rows, loaded) for imp in imported]
    variant_record = shown.as_dict(scored)
    scored = shown.apply(scored)
    if not scored:
        raise MetaEvalError("no metric could run: " + "; ".join([f"{n}: {r}" for n, r in skipped]
                                                                + [f"{n}: failed: {r}" for n, r in failed]),
                            code=1 if failed else 2)
    if variant_record["hidden"]:
        say("out", f"variants: {len(variant_record['hidden'])} not shown ({', '.join(variant_record['hidden'])}): "
                   f"{variant_record['rule']}; --variants all shows every variant")
    if level == "system":
        add_system_scores(scored, chosen, jset, system_score, cache=cache, no_cache=no_cache)  # corpus: cached
    degenerate = degenerate_report(scoring)
    for line in degenerate_lines(degenerate, len(jset)):
        say("err", line)
    variants = [v for ms in scored for v in ms.scores]
    baseline_note = None
    if baseline is None:  # the set's declared default (MT: bleu, WMT's baseline; else rougeL-f)
        from meta_eval.units import default_baseline, why_no_baseline

        wanted = default_baseline(jset)
        if wanted in variants:
            baseline = wanted
        else:
            from meta_eval.units import BASELINE_METRIC

            metric = BASELINE_METRIC.get(wanted, wanted)
            tried = {ms.metric for ms in scoring.scored} | {n for n, _ in skipped + failed}
            baseline_note = why_no_baseline(
                jset, wanted, [ms.metric for ms in scored], skipped, failed, choice=variant_record, shown=variants,
                cannot=selection.cannot_run(metric, options, jset, dim) if wanted and metric not in tried else None)
    elif baseline not in variants:
        raise MetaEvalError(f"baseline {baseline!r} was not scored; scored variants: {', '.join(variants)}")
    williams = level == "global" and statistic in stats.CORRELATIONS
    # the resamples' chunks go to the same engine's workers (same seed, same numbers), with progress bars
    from meta_eval.report.progress import resampling_progress

    with resampling_progress(progress) as advance, spread(engine, advance):
        try:
            if williams:
                results = evaluate(jset.human(dim), scored, baseline, statistic)
                add_global_intervals(results, jset, dim, scored, statistic, resamples, seed)
            else:
                results = evaluate_level(jset, dim, scored, level, baseline, statistic, resamples, seed,
                                         epsilon=epsilon, n_permutations=permutations, spa_seed=spa_seed)
            if control:
                add_partial(results, jset, dim, scored, statistic)
            if band is not None:
                add_delta(results, jset, dim, scored, *band)
        except ValueError as exc:
            raise MetaEvalError(f"{jset.origin()}: {exc}" if williams else str(exc)) from None
        ceiling = set_ceiling(jset, dim, statistic, level, resamples, seed, epsilon, permutations, spa_seed)
    results = sorted_results(results)
    setting = stats.describe(statistic, level, n_resamples=resamples, seed=seed, epsilon=epsilon,
                             n_permutations=permutations, spa_seed=spa_seed)
    warnings: list[dict] = []
    fit_checks = learned_fit_checks(chosen, scored, jset, say, allow_in_sample, warnings)
    in_sample = in_sample_tests(results, fit_checks, baseline, allow_in_sample)
    if few:
        warnings.append({"kind": "few-units", "message": few})
    empty_columns = {}
    if baseline is None:
        test = "Williams p" if williams else "perm. p"
        no_test = f"no test against a baseline: {baseline_note or 'no baseline was chosen'}"
        empty_columns[test] = no_test
        warnings.append({"kind": "no-baseline", "message": no_test})
    result = RunResult(
        judgments=jset.name, subset=jset.subset, human=dim, human_chosen_because=why, n=len(jset),
        rows_without_human=dropped, duplicates=dup_report.as_dict(), notes=set_notes, setting=setting,
        statistic=statistic, level=level, baseline=baseline, resamples=resamples, level_warning=few,
        ceiling=ceiling, control=control, delta_band=band, results=results, fit_checks=fit_checks,
        skipped=skipped, failed=failed, not_run=named_skips(skipped, requested),
        metrics_requested=[m.strip() for m in asked.split(",") if m.strip()] if asked else None,
        scores=scored, degenerate=degenerate, wall_seconds=0.0, jset=jset, epsilon=epsilon,
        permutations=permutations, spa_seed=spa_seed, correction=correction,
        tie_baseline=_tie_baseline(jset, dim, level) if statistic == "acc-t" else None, task=jset.task,
        baseline_note=baseline_note, empty_columns=empty_columns)
    result.warnings = warnings
    result.in_sample = in_sample
    result.imported = [imp.describe() for imp in imported]
    result.variants = variant_record
    result.rows_without_imported_score = missing_scores
    result.unparsed = scoring.unparsed
    result.figures = list(figures)
    if jset.properties:  # a set with raters per property (JUDGE-BENCH's schema): their alpha beside the ceiling
        from meta_eval.judgments.judge_bench import human_agreement

        result.human_agreement = human_agreement(jset).get(dim)
        if result.human_agreement is not None and result.human_agreement["alpha"] is not None:
            from meta_eval.judgments.judge_bench import alpha_with_metric

            result.alpha_with_metric = {v: alpha_with_metric(jset, dim, arr, ms.higher_is_better)
                                        for ms in scored for v, arr in ms.scores.items()}
    result.rows = row_choice.as_dict() if row_choice is not None else None
    result.provenance = record(plan, judgments)
    # once, for the table, the figures and the JSON alike
    result.ranks = result.clusters() if pairwise else None
    unresolved = result.pvalue_matrix().resolution_note if pairwise else None
    if unresolved:  # too few resamples for the family: every cluster merges (meta_eval.stats.clusters)
        result.warnings.append({"kind": "unresolved", "message": unresolved})
    result.differences = result.difference_intervals() if differences else None
    result.two_sided = bool(two_sided)
    result.wall_seconds = time.perf_counter() - started
    if output is not None:
        write_json(output, result.to_dict())
    if scores_out is not None:
        from meta_eval.report.outputs import atomic_write
        from meta_eval.scoring.score_files import file_header, write_row_scores, write_sidecar

        header = file_header(scored, variant_record, result.provenance, judgments=jset.name, subset=jset.subset)
        atomic_write(scores_out, lambda tmp: write_row_scores(tmp, jset, scored, header=header))
        write_sidecar(scores_out, header)
    return result


def check_planned(option: str, variant: str, planned: Sequence[str], skipped: Sequence = ()) -> None:
    """Raise :class:`~meta_eval.errors.MetaEvalError` (before any scoring) when ``variant``, named by ``option``
    (``--baseline``, ``--plot scatter=VARIANT:FILE:``), is none of the variants the chosen metrics will score
    (``planned``, the hidden ones included: a named variant is shown), with the close names, the variants and the
    chosen metrics that cannot run here (``skipped``: (name, reason), e.g. an extra not installed)."""
    if variant in planned:
        return
    from difflib import get_close_matches

    close = get_close_matches(variant, planned, n=3, cutoff=0.5)
    raise MetaEvalError(f"{option} {variant!r} is not a variant of the chosen metrics"
                        + (f" (did you mean {', '.join(close)}?)" if close else "") + "; their variants: "
                        + (", ".join(planned) or "none") + " (-m chooses the metrics)"
                        + ("; not run here: " + "; ".join(f"{name}: {why}" for name, why in skipped) if skipped
                           else ""))


def drop_rows(jset, scoring):
    """``jset`` and ``scoring`` without the rows a metric dropped (:meth:`Scoring.dropped_rows`: an LLM judge's
    ``on_unparsed=drop`` rows, every answer unparsed), from every metric as ``--scores-missing drop`` does, so that
    they enter no statistic and ``n`` counts the rows kept, and the note saying so. Fewer than 4 rows left is an
    error."""
    from dataclasses import replace

    gone = set(scoring.dropped_rows())
    keep = [i for i in range(len(jset.rows)) if i not in gone]
    by = "; ".join(f"{name}: {sum(flags)}" for name, flags in scoring.dropped.items() if any(flags))
    if len(keep) < 4:
        raise MetaEvalError(f"{jset.name}: only {len(keep)} of {len(jset.rows)} rows are left once the rows with no "
                            f"parsed answer are dropped ({by}; on_unparsed=drop); at least 4 are needed")
    note = (f"{len(gone)} of {len(jset.rows)} rows dropped from every metric, every answer unparsed "
            f"(on_unparsed=drop; {by}): n counts the {len(keep)} rows kept")
    for ms in scoring.scored:
        ms.scores = {v: arr[keep] for v, arr in ms.scores.items()}
    scoring.degenerate = {n: [r[i] for i in keep] for n, r in scoring.degenerate.items()}
    return replace(jset, rows=[jset.rows[i] for i in keep]), scoring, note


def _tie_baseline(jset, dim: str, level: str) -> float | None:
    """acc-t of a metric that ties every pair on this set and level (:func:`meta_eval.stats.tie_baseline`)."""
    import math

    import numpy as np

    from meta_eval import stats
    from meta_eval.evaluate import pooled_groups
    from meta_eval.matrix import judgment_matrices

    try:
        Z = judgment_matrices(jset, dim, [])[0]
        groups = pooled_groups(jset, level)
        if groups:
            from meta_eval.stats.pooled import pooled_point

            value = float(pooled_point(np.where(np.isnan(Z), np.nan, 0.0)[None], Z, groups, "acc-t").values[0])
        else:
            value = stats.tie_baseline(Z, level)
    except ValueError:
        return None
    return None if math.isnan(value) else value


def set_ceiling(jset, dim, statistic, level, resamples, seed, epsilon, permutations, spa_seed=None):
    """The human ceiling at this statistic and level (a Ceiling with value None and the reason if undefined)."""
    from meta_eval.evaluate import ceiling, pooled_groups

    try:
        if pooled_groups(jset, level):
            raise ValueError("not computed for a set pooling language pairs")
        return ceiling(jset, dim, statistic, level, n_resamples=resamples, seed=seed, epsilon=epsilon,
                       n_permutations=permutations, spa_seed=spa_seed)
    except ValueError as exc:
        from meta_eval.stats.ceiling import Ceiling

        return Ceiling(value=None, lower=None, upper=None, confidence=0.95, statistic=statistic, level=level,
                       slots=0, slot_values=(), rows_used=0, rows_excluded=0, resample=None, n_resamples=0,
                       resamples_used=0, note=f"human ceiling undefined: {exc}")


ALLOW_IN_SAMPLE_FLAG = "--allow-in-sample"


def learned_fit_checks(chosen, scored, jset, say: Say | None = None, allow_in_sample: bool = False,
                       warnings: list | None = None) -> dict[str, dict]:
    """For every learned model scored on rows it was fitted on (:func:`metrics.learned.fit_checks`): a message to
    ``say`` (saying, for an in-sample model, that no significance is claimed unless ``allow_in_sample``) and, per
    variant of the model, the fields its result entry gets in the JSON. With ``warnings`` (the run's ordered list,
    :attr:`meta_eval.results.RunResult.warnings`), an in-sample model's message is appended there as
    ``{"kind": "in-sample", "message": ...}`` instead, to be printed before the results."""
    from meta_eval.metrics.learned import fit_checks

    say = say or _quiet
    ran = {ms.metric for ms in scored}
    checks = fit_checks([m for m in chosen if m.name in ran], jset.examples(), jset.name, jset.subset)
    fields = {}
    for metric in chosen:
        check = checks.get(metric.name)
        if check is None:
            continue
        message = check.message()
        if message is not None and check.in_sample:
            message += ("; tested anyway, as --allow-in-sample asks" if allow_in_sample else
                        f"; no significance is claimed for it (pass {ALLOW_IN_SAMPLE_FLAG} to test it anyway)")
        if message is not None and check.in_sample and warnings is not None:
            warnings.append({"kind": "in-sample", "message": message})
        elif message is not None:
            say("out-warning" if check.in_sample else "out-note", message)
        fields.update({variant: check.as_dict() for variant in metric.variants})
    return fields


def in_sample_tests(results, fit_checks: dict[str, dict], baseline: str | None, allow: bool) -> dict:
    """Withhold the tests of in-sample learned variants (unless ``allow``): their p-values against the baseline
    become None, and every variant's when the baseline itself is one; so do the p-values of their own correlations
    (against no correlation: as optimistic as the correlation itself, and the warning claims no significance).
    Returns what ``run --output`` records as ``in_sample``: the in-sample variants, those whose test against the
    baseline was withheld, and the flag that allows them."""
    variants = sorted(v for v, f in fit_checks.items() if f.get("in_sample"))
    withheld: list[str] = []
    if variants and not allow:
        for r in results:
            if r.metric in variants:
                r.spearman_p = r.pearson_p = r.kendall_p = r.partial_p = None
            if r.metric != baseline and (r.metric in variants or baseline in variants):
                r.perm_p_vs_baseline = r.williams_p_vs_baseline = None
                withheld.append(r.metric)
    return {"variants": variants, "tests_withheld": withheld, "allowed": bool(allow and variants),
            "flag": ALLOW_IN_SAMPLE_FLAG}


def _significant_documents_level(jset, part, scored, say: Say) -> dict[str, float | None]:
    """Summary-level correlation over the documents whose own correlation has p <= ``part.max_p`` (REALSumm)."""
    from meta_eval.stats.levels import summary_level

    human = jset.human(part.human)
    docs = [r.doc_id for r in jset.rows]
    values = {}
    for ms in scored:
        for variant, s_ in ms.scores.items():
            if variant not in part.printed:
                continue
            oriented = s_ if ms.higher_is_better else -s_
            res = summary_level(oriented, human, docs, part.correlation, max_p=part.max_p)
            values[variant] = res.r
            say("err", f"  {variant}: {res.n} documents with p <= {part.max_p:g} kept, {res.skipped} left out")
    return values


def run_protocol(name: str, *, data_dir: str | Path | None = None, cache: str | Path | None = None,
                 no_cache: bool = False, batch_size: int = 256, resamples: int = 1000, seed: int = 0,
                 engine="local", workers: int | None = None, address: str | None = None, actors: int | None = None,
                 gpus_per_actor: float = 0.0,
                 output: str | Path | None = None, force: bool = False, progress: bool = True,
                 say: Say | None = None) -> dict:
    """Run a paper's table as it was run (``meta-eval run --protocol NAME``): every part of the protocol, meta-eval's
    number beside the printed one.

    ``name`` is a shipped protocol's name or the path to a protocol ``.toml`` file (:mod:`meta_eval.protocol`).
    Returns the document ``--output`` writes: ``protocol``, ``title``, ``citation``, ``source``, ``counts`` (cells
    per verdict of :data:`meta_eval.protocol.VERDICTS`: ``match`` at the printed precision, ``within`` the
    tolerance, ``known mismatch``, ``MISMATCH`` (unexplained), ``not run``), ``expected`` (the file's expected
    counts, or None) and ``parts`` (per part: the set, dimension, level, correlation, the compared ``cells``, each
    with its ``ci``, the ``results`` and ``signatures``, and what the intervals are: ``resampling`` and its label
    ``interval``, as ``run`` computes and labels them at every level, the global one included (over the rows,
    :func:`meta_eval.evaluate.add_global_intervals`), or ``no_interval``, why the part's cells have none
    (:func:`protocol_interval`)); each part also holds the objects behind it under the key ``"_objects"``
    (removed from what is written), and ``"_missing"``: the (part, metric, reason) of every metric the protocol
    needs that could not run here (the command then exits 1, after writing ``output``, as it does when a cell is
    an unexplained ``MISMATCH``). Raises :class:`~meta_eval.errors.MetaEvalError` for an unknown protocol, a set
    that cannot be loaded or a level that cannot be computed.
    """
    from meta_eval import judgments as judgment_sets
    from meta_eval import stats
    from meta_eval.evaluate import add_global_intervals, evaluate, evaluate_level
    from meta_eval.judgments.rows import check_resamples, check_seed
    from meta_eval.protocol import VERDICTS, ProtocolError, compare, load_protocol
    from meta_eval.report.outputs import OutputPlan, check_format, write_json
    from meta_eval.scoring.cache import open_cache
    from meta_eval.scoring.engines import engine_for
    from meta_eval.scoring.runner import score_all
    from meta_eval.scoring.selection import choose_metrics

    say = say or _quiet
    started = time.perf_counter()
    check_resamples(resamples)
    check_seed(seed)
    protocol_file = [("the --protocol file", Path(name))] if isinstance(name, (str, Path)) and str(name).endswith(
        ".toml") else []
    try:
        proto = load_protocol(name)
    except ProtocolError as exc:
        raise MetaEvalError(str(exc)) from None
    from meta_eval.report.outputs import job_inputs

    # what every part reads (its judgment file, learned models, option files) is an input too, even with --force
    parts_read = [pair for part in proto.parts for pair in job_inputs(
        judgments=part.judgments, data_dir=data_dir, cache=cache, metrics=list(part.metrics),
        options=[f"{k}={v}" for k, v in part.options.items()])[0]]
    plan = OutputPlan(force=force, data_dir=data_dir, cache=cache, no_cache=no_cache, files=protocol_file,
                      inputs=parts_read)
    output = plan.add(output, "--output")
    check_format(output, "--output", (".json",), "a protocol's results are JSON")  # no --format here to advise
    parts_doc, all_cells, missing = [], [], []
    with engine_for(engine, workers, address, actors, gpus_per_actor) as scoring:
        for part in proto.parts:
            try:
                jset = judgment_sets.load(part.judgments, data_dir, subset=part.subset, text=part.text)
                total_rows = len(jset)
                jset = jset.scored(part.human)
            except (judgment_sets.JudgmentError, judgment_sets.DataError) as exc:
                raise MetaEvalError(f"{proto.name}/{part.name}: {exc}") from None
            chosen, skipped = choose_metrics(",".join(part.metrics), dict(part.options), what=jset.name,
                                             has_sources=jset.has_sources, has_references=jset.max_references > 0,
                                             language=jset.language, judged=(jset, part.human))
            left_out = (f" ({total_rows - len(jset)} without a {part.human} score left out)"
                        if total_rows > len(jset) else "")
            say("err", f"{proto.name}/{part.name}: {jset.name} ({jset.subset}), {len(jset)} rows{left_out}, human "
                       f"{part.human}, {part.level} level, {part.correlation}")
            done = score_all(chosen, jset.examples(), open_cache(cache, no_cache), batch_size, engine=scoring,
                             progress=progress, degenerate=False)
            scored = done.scored
            skipped += [(n, f"failed: {r}") for n, r in done.failed]
            variants = {v for ms in scored for v in ms.scores}
            baseline = part.baseline if part.baseline in variants else None
            results = []
            williams = part.level == "global" and part.correlation in stats.CORRELATIONS
            if scored:
                try:
                    if williams:  # run's global level: the value and Williams test, and its interval over the rows
                        results = evaluate(jset.human(part.human), scored, baseline, part.correlation)
                        add_global_intervals(results, jset, part.human, scored, part.correlation, resamples, seed)
                    else:
                        results = evaluate_level(jset, part.human, scored, part.level, baseline, part.correlation,
                                                 resamples, seed, n_permutations=part.permutations,
                                                 spa_seed=part.spa_seed)
                except ValueError as exc:
                    raise MetaEvalError(f"{proto.name}/{part.name}: {exc}") from None
            by_variant = {r.metric: r for r in results}
            values = {v: r.value if r.value is not None or part.level != "global" else getattr(r, part.correlation)
                      for v, r in by_variant.items()}
            resampling, no_interval = protocol_interval(jset, part, resamples, seed)
            if part.max_p is not None:
                values = _significant_documents_level(jset, part, scored, say)
            for r in results if no_interval else ():
                r.ci = None  # the interval of another number than the cell's: none, and the part says why
            cells = compare(part, values)
            all_cells += cells
            missing += [(part.name, n, r) for n, r in skipped]
            parts_doc.append({"name": part.name, "judgments": jset.name, "subset": jset.subset, "human": part.human,
                              "level": part.level, "correlation": part.correlation, "n": len(jset),
                              "rows_without_human": total_rows - len(jset), "metrics": list(part.metrics),
                              "options": dict(part.options), "baseline": baseline, "tolerance": part.tolerance,
                              "resamples": resamples, "seed": seed, "resampling": resampling,
                              "interval": resampling["label"] if resampling else None, "no_interval": no_interval,
                              "cells": [{**c.as_dict(), "ci": getattr(by_variant.get(c.variant), "ci", None)}
                                        for c in cells], "results": [r.as_dict() for r in results],
                              "signatures": {ms.metric: ms.signature for ms in scored},
                              "skipped": [{"metric": n, "reason": r} for n, r in skipped],
                              "_objects": {"part": part, "cells": cells, "results": results, "scored": scored,
                                           "skipped": skipped}})
    counts = {k: sum(c.verdict == k for c in all_cells) for k in VERDICTS}
    doc = {"protocol": proto.name, "title": proto.title, "citation": proto.citation, "source": proto.source,
           "counts": counts, "expected": proto.expected, "parts": parts_doc,
           "wall_seconds": round(time.perf_counter() - started, 3), "_protocol": proto, "_missing": missing}
    from meta_eval.provenance import record

    doc["provenance"] = record(plan, ",".join(dict.fromkeys(part.judgments for part in proto.parts)))
    if output is not None:
        write_json(output, protocol_document(doc))
    return doc


def protocol_interval(jset, part, resamples: int, seed: int) -> tuple[dict | None, str | None]:
    """(resampling, why none): what a protocol part's intervals are, as ``run`` describes its own
    (:func:`meta_eval.stats.describe`'s ``resampling``, its ``label`` the line under the table and the part's JSON
    ``interval``), or None and the reason a part's cells have none: a ``max_p`` part (its value averages only the
    documents whose own correlation has p <= max_p, a selection the matrix bootstrap does not redo) and the global
    level of a set with rows without a system (BOOT-BOTH draws documents and systems)."""
    from meta_eval import stats

    if part.max_p is not None:
        return None, (f"the value averages only the documents whose own {part.correlation} has p <= {part.max_p:g}, "
                      "a selection the BOOT-BOTH resamples do not redo, so no interval is computed for it")
    if part.level == "global" and jset.rows_without_system():
        return None, "rows without a system cannot be resampled by document and system (BOOT-BOTH)"
    setting = stats.describe(part.correlation, part.level, n_resamples=resamples, seed=seed,
                             n_permutations=part.permutations, spa_seed=part.spa_seed)
    return setting["resampling"], None


def protocol_document(doc: dict) -> dict:
    """The JSON of a :func:`run_protocol` result: without the objects kept for printing."""
    return {k: ([{pk: pv for pk, pv in p.items() if not pk.startswith("_")} for p in v] if k == "parts" else v)
            for k, v in doc.items() if not k.startswith("_")}


def score(metrics: str | Sequence[str], *, examples=None, candidates: str | Path | None = None,
          references: Sequence[str | Path] = (), sources: str | Path | None = None, input: str | Path | None = None,
          options: Mapping[str, object] | Sequence[str] | None = None, output: str | Path | None = None,
          force: bool = False, cache: str | Path | None = None, no_cache: bool = False, batch_size: int = 256,
          engine="local", workers: int | None = None, address: str | None = None, actors: int | None = None,
          gpus_per_actor: float = 0.0,
          progress: bool = True, say: Say | None = None, plugins: Sequence[str | Path] = (),
          variants: str | Sequence[str] | None = None, limit: int | None = None, sample: int | None = None,
          seed: int | None = None):
    """Score any texts with any metrics (``meta-eval score``): per-example scores, no human judgments.

    ``variants`` (``--variants``) and a variant named in ``metrics`` (``"rouge1-f"``) choose the columns as
    :func:`run` chooses its rows (default: every variant but ROUGE's precision and recall; ``"all"``: every one).

    The texts are ``examples`` (:class:`meta_eval.metrics.Example` objects), or line files (``candidates``, a list
    of ``references`` files, one per reference, ``sources``), or a JSONL ``input`` of ``{candidate, references,
    source}``.
    ``output`` (``.jsonl``, ``.csv``, ``.tsv``) is checked before scoring and written after; ``plugins``: Python
    files whose metrics are registered first (``--plugin FILE.py``). ``limit``/``sample`` (with ``seed``, default
    0, only with ``sample``): a quick
    trial on the first N examples or N drawn ones (:mod:`judgments.rows`), the output's ``index`` keeping each
    example's position in the input; the JSONL output's first line records them (``rows``) and the
    ``provenance`` (:mod:`meta_eval.provenance`). Returns a
    :class:`~meta_eval.results.ScoreResult`; a bad choice or input raises :class:`~meta_eval.errors.MetaEvalError`
    (code 2; 1 when every metric failed).
    """
    from meta_eval.report.outputs import OutputPlan, as_path, atomic_write, check_format, check_stores
    from meta_eval.results import ScoreResult
    from meta_eval.scoring.cache import open_cache
    from meta_eval.scoring.engines import engine_for
    from meta_eval.scoring.runner import score_all
    from meta_eval.scoring.score_files import file_header, read_jsonl, read_line_files, sidecar, write_scores, \
        write_sidecar
    from meta_eval.scoring.selection import (choose_metrics, group_skips, named_skips, parse_options,
                                             requested_names)

    say = say or _quiet
    given = [x is not None for x in (examples, candidates, input)]
    if sum(given) != 1:
        raise MetaEvalError("give either --candidates (with --references/--sources line files) or --input "
                            "FILE.jsonl")
    import os

    from meta_eval.judgments.rows import check_choice, select_rows
    from meta_eval.provenance import record

    if seed is not None and sample is None:  # score draws nothing else: a seed without --sample was ignored
        raise MetaEvalError("--seed seeds --sample's draw: give --sample N, or leave --seed out")
    check_choice(limit, sample, 0 if seed is None else seed)
    seed = 0 if seed is None else seed
    if isinstance(references, (str, bytes, os.PathLike)):  # not its characters as file names
        raise MetaEvalError(f"--references must be a list of paths, one line file per reference "
                            f"(references=[{references!r}]), not the single path {references!r}")
    output = as_path(output, "--output")
    option_list = selection.option_list(options)
    selection.refuse_set_template(metrics, option_list, "score", "it scores texts, not the rows of a judgment set, "
                                  "so there is no set's prompt to fill")
    texts = [("the candidates file", candidates), ("the input file", input), ("the sources file", sources),
             *(("a references file", r) for r in references)]
    texts = [(what, as_path(p, "--" + what.split()[-2])) for what, p in texts]
    plan = OutputPlan(force=force, cache=cache, no_cache=no_cache, files=texts, options=option_list, plugins=plugins,
                      metrics=metrics)
    plan.add(output, "--output")
    plan.add(sidecar(output), "--output (its sidecar)")  # a CSV/TSV's record (score_files.file_header)
    check_format(output, "--output", SCORE_FORMATS)  # after the plan: a folder is named a folder
    selection.load_plugins(plugins)
    with engine_for(engine, workers, address, actors, gpus_per_actor) as scoring:
        if examples is None:
            try:
                examples = read_jsonl(input) if input is not None else read_line_files(candidates, references,
                                                                                       sources)
            except ValueError as exc:
                raise MetaEvalError(str(exc)) from None
        if not len(examples):  # else every metric would be skipped for lacking the references no example has
            raise MetaEvalError("no examples to score: the input holds none")
        from meta_eval.metrics import Example

        wrong = next((i for i, ex in enumerate(examples) if not isinstance(ex, Example)), None)
        if wrong is not None:  # before anything reads an example's fields
            raise MetaEvalError(f"examples[{wrong}] is a {type(examples[wrong]).__name__}, not a "
                                "meta_eval.metrics.Example (Example(candidate, references, source))")
        examples, row_choice = select_rows(examples, limit, sample, seed)  # --limit/--sample
        if row_choice is not None:
            say("err", f"the input: {row_choice.line()}")
        requested, shown = selection.resolve_metric_choice(requested_names(metrics), variants)
        chosen, skipped = choose_metrics(requested, parse_options(option_list), what="the input",
                                         has_sources=any(ex.source for ex in examples),  # the runner names
                                         has_references=any(ex.references for ex in examples))  # rows lacking one
        shown.check(selection.available_variants(chosen, skipped))
        chosen = shown.narrow(chosen, skipped, requested)
        check_stores(chosen, cache=cache, no_cache=no_cache)  # the answer store: before any request
        for names, reason in group_skips(skipped):
            say("err-skipped", f"{', '.join(names)}: {reason}")
        done = score_all(chosen, examples, open_cache(cache, no_cache), batch_size, engine=scoring,
                         progress=progress, degenerate=False)
    variant_record = shown.as_dict(done.scored)
    scored, failed = shown.apply(done.scored), done.failed
    if not scored:
        raise MetaEvalError("no metric could run: " + "; ".join([f"{n}: {r}" for n, r in skipped]
                                                                + [f"{n}: failed: {r}" for n, r in failed]),
                            code=1 if failed else 2)
    if variant_record["hidden"]:
        say("err", f"variants: {len(variant_record['hidden'])} not written ({', '.join(variant_record['hidden'])}): "
                   f"{variant_record['rule']}; --variants all writes every variant")
    columns = {v: s for ms in scored for v, s in ms.scores.items()}
    result = ScoreResult(n=len(examples), columns=columns, scores=scored, skipped=skipped, failed=failed,
                         not_run=named_skips(skipped, requested))
    result.variants = variant_record
    result.rows = row_choice.as_dict() if row_choice is not None else None
    result.provenance = record(plan)
    index = list(row_choice.positions) if row_choice is not None else None
    header = file_header(scored, variant_record, result.provenance, **({"rows": result.rows} if result.rows else {}))
    if output is not None:
        atomic_write(output, lambda tmp: write_scores(tmp, columns, header["signatures"], index, header))
        write_sidecar(output, header)
    return result
