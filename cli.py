"""The ``meta-eval`` command line (typer).

``meta-eval run`` scores a judgment set with metrics and reports their correlation with the humans;
``meta-eval metrics`` lists the registered metrics and whether they can run here; ``meta-eval judgments`` lists the
judgment sets. Heavy libraries are imported only inside the metrics that need them, so these stay fast.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer
from rich.table import Table

from meta_eval.cli_options import LIMIT as _LIMIT, SAMPLE as _SAMPLE, SAMPLE_SEED as _SAMPLE_SEED, \
    ArgvGroup as _ArgvGroup
from meta_eval.cli_options import refused_with_protocol as _refused_with_protocol
from meta_eval.leaderboard import HELP as _BOARD_HELP
from meta_eval.learning import HELP as _LEARN_HELP
from meta_eval.report.escape import markup as escape, terminal, terminal_console
from meta_eval.task import device_option as _device_option

app = typer.Typer(add_completion=False, no_args_is_help=True, cls=_ArgvGroup,  # keeps the command line (provenance)
                  help="Which automatic text-evaluation metric agrees best with people?")
# emoji=False: a name like "x:warning:" from the data or a plugin prints as written (markup is escaped where printed,
# a control character such as ESC shows as \x1b: meta_eval/report/escape.py); piped output is never cut to 80 columns
out = terminal_console(emoji=False, width=None if sys.stdout.isatty() else 1000)
err = terminal_console(stderr=True, emoji=False, width=None if sys.stderr.isatty() else 1000)


def _fail(message: str, code: int = 2) -> None:
    # text, not markup ([coco] stays); one line however long (soft_wrap: a path in it can be copied); never a secret
    if "meta_eval.metrics" in sys.modules:  # a metric may have read a secret (cheap: the package is loaded)
        message = __import__("meta_eval.metrics.redact", fromlist=["_"]).redact(message)
    err.print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)
    raise typer.Exit(code)


@app.callback()
def _numeric_mode(numeric: Optional[str] = typer.Option(
        None, "--numeric", metavar="portable|native",
        help="Numeric mode of the neural metrics: portable (the same bits on every x86-64 CPU with AVX2) or native "
             "(this CPU's fastest kernels; scores agree to ~1e-6); named in their signatures \\[default: "
             "$META_EVAL_NUMERIC, else portable]")) -> None:
    """Which automatic text-evaluation metric agrees best with people?"""
    from meta_eval.metrics import numeric as modes

    try:
        modes.set_mode(numeric if numeric is not None else modes.current_mode())
    except modes.NumericModeError as exc:
        _fail(str(exc))


# every built-in set (tests/test_report_output.py checks the list against meta_eval.judgments.BUILTIN; importing it
# here would slow `meta-eval --help`)
_SETS_HELP = ("A built-in set (chaganty, essays, summeval, realsumm, wmt21-mqm-ted, wmt23, frank, qags, "
              "judge-bench:<name>; see `meta-eval judgments`), a .jsonl file or a .json file in JUDGE-BENCH's schema")
_ENGINE_HELP = ("local (worker processes on this machine) or ray (a Ray cluster at --address or $RAY_ADDRESS, else a "
                "local Ray instance; pip install \"meta-eval\\[ray]\"); scores are identical whatever the engine")
_WORKERS_HELP = ("Worker processes for the CPU metrics; a neural metric runs in one process with this many threads "
                 "\\[default: every core; 1 scores in this process]")
_ADDRESS_HELP = "The Ray cluster for --engine ray \\[default: $RAY_ADDRESS, else a local Ray instance]"
_ADDRESS = typer.Option(None, "--address", help=_ADDRESS_HELP)
_ACTORS = typer.Option(None, "--actors", min=1, help="--engine ray: actors per neural metric, each loading the model "
                       "once \\[default: one per GPU share on a cluster with GPUs, else 1]; scores are identical "
                       "whatever the count")
_GPUS = typer.Option(0.0, "--gpus-per-actor", min=0.0, help="--engine ray: GPUs each neural metric's actor asks for "
                     "(0.5: two per GPU); its device=auto is then that GPU \\[default: 0, the actors' CPUs]")

# options shared by run, score, probe, learn and leaderboard publish (--plugin by metrics too)
_PLUGIN = typer.Option([], "--plugin", metavar="FILE.py", help="A Python file whose registered metrics join the "
                       "others, without packaging (repeatable; its signature digests the file; docs/plugins.md)")
_DEVICE = typer.Option(None, "--device", callback=_device_option, help="auto, cpu, cuda or cuda:N, for every metric "
                       "that takes device \\[default: $META_EVAL_DEVICE, else auto: a GPU, else the CPU]")
_DTYPE = typer.Option(None, "--dtype", callback=_device_option, help="fp32 (TF32 off), tf32, bf16 or fp16 (CUDA "
                      "only), for those metrics \\[default: $META_EVAL_DTYPE, else fp32]")


_SCORES_HELP = ("NAME=FILE (repeatable; NAME:lower=FILE when lower is better): a metric computed elsewhere, read "
                "from FILE: JSONL, CSV/TSV, meta-eval's own score files or mt-metrics-eval's .seg.score/.sys.score "
                "(see docs/imported-scores.md); joined strictly to the set's rows before anything is scored")
_SCORES_FORMAT_HELP = "The --scores files' format when their names do not say it: jsonl, csv, tsv or mtme"
_SCORES_MISSING_HELP = ("error (default): a judged row without a score in a --scores file is an error; drop: leave "
                        "such rows out of every metric's statistics (the count is printed and saved)")
_VARIANTS_HELP = "Only these variants: rouge1-f, families (rouge1), 'rouge*-f', all \\[default: not ROUGE's P and R]"


@app.command()
def run(
    ctx: typer.Context, judgments: Optional[str] = typer.Option(None, "--judgments", "-j", help=_SETS_HELP),
    protocol: Optional[str] = typer.Option(None, "--protocol", help="Run a paper's table as it was run (set, human "
                                           "dimension, level, correlation, metric options) and print the paper's "
                                           "numbers beside meta-eval's, each cell a match (at the printed "
                                           "precision), within the tolerance, a known mismatch or an unexplained "
                                           "MISMATCH (exit 1): a shipped protocol's NAME (see `meta-eval "
                                           "protocols`) or the path to a protocol .toml file (format: "
                                           "docs/reproducing.md)"),
    metrics: Optional[str] = typer.Option(None, "--metrics", "-m", help="Comma-separated metric names; 'all': "
                                          "every metric (default: every metric that can run on the set in "
                                          "seconds on a CPU, so not the neural ones; see `meta-eval metrics`)"),
    variants: Optional[str] = typer.Option(None, "--variants", help=_VARIANTS_HELP),
    human: Optional[str] = typer.Option(None, "--human", help="Human dimension (default: the set's default)"),
    baseline: Optional[str] = typer.Option(None, "--baseline", help="Variant for Williams tests \\[default: "
                                           "rougeL-f when scored]"),
    statistic: Optional[str] = typer.Option(None, "--statistic", help="spearman, pearson, kendall, accuracy "
                                            "(Kocmi et al. 2021), acc-eq (Deutsch et al. 2023, at --epsilon), acc-t "
                                            "(tie calibration), spa (Thompson et al. 2024; system level), pdp "
                                            "(mt-metrics-eval's pairwise difference Pearson; summary level): sorts the "
                                            "table and is used by the intervals and tests \\[default: spearman]; a "
                                            "categorical property (JUDGE-BENCH): label-accuracy, kappa (default) or "
                                            "macro-f1, a pairwise one: pairwise-accuracy (docs/statistics.md)"),
    correlation: Optional[str] = typer.Option(None, "--correlation", help="Same as --statistic, for spearman, "
                                              "pearson or kendall"),
    epsilon: float = typer.Option(0.0, "--epsilon", min=0.0, help="acc-eq: the metric ties a pair when its "
                                  "scores differ by at most this (0: acc-eq equals accuracy)"),
    permutations: Optional[int] = typer.Option(None, "--permutations", min=10, help="spa: permutations behind each "
                                               "system pair's p-value (1,000 in WMT24) \\[default: 1000]"),
    control: Optional[str] = typer.Option(None, "--control", help="system: also report the partial correlation "
                                          "controlling for the system, as FRANK (Pagnoni et al. 2021); global "
                                          "level, pearson or spearman"),
    delta_band: Optional[str] = typer.Option(None, "--delta-band", help="LO:HI: also report Kendall's tau over the "
                                             "system pairs whose metric difference lies in [LO, HI] (Deutsch et "
                                             "al. 2022; HI may be 'inf'); system level"),
    subset: Optional[str] = typer.Option(None, "--subset", help="A subset (see `meta-eval judgments`), e.g. "
                                         "zh-en, frank's cnndm-test; en-de,zh-en pools language pairs (wmt21-mqm-ted, "
                                         "wmt23); chaganty/essays: 'sms' (the SMS paper's subset, default) or 'all'"),
    option: list[str] = typer.Option([], "--option", "-o", help="KEY=VALUE passed to every chosen metric that "
                                     "takes KEY, e.g. vectors=spacy:en_core_web_md"),
    output: Optional[Path] = typer.Option(None, "--output", help="Write the results as JSON"),
    force: bool = typer.Option(False, "--force", help="Replace existing --output, --scores-out or --plot files that "
                               "meta-eval did not write; never an input of the run nor in the data folder"),
    data_dir: Optional[Path] = typer.Option(None, "--data-dir", help="Folder of judgment files \\[default: "
                                            "$META_EVAL_DATA, else the user cache]"),
    cache: Optional[Path] = typer.Option(None, "--cache", help="Score cache file \\[default: user cache]"),
    no_cache: bool = typer.Option(False, "--no-cache", help="Compute everything, store nothing"),
    batch_size: int = typer.Option(256, "--batch-size", min=1, help="Examples per scoring batch (on a GPU: >= 8,192)"),
    engine: str = typer.Option("local", "--engine", help=_ENGINE_HELP),
    workers: Optional[int] = typer.Option(None, "--workers", min=1, help=_WORKERS_HELP),
    address: Optional[str] = _ADDRESS, actors: Optional[int] = _ACTORS, gpus: float = _GPUS,
    level: Optional[str] = typer.Option(None, "--level", help="global (WMT23's 'no grouping': all rows; Williams "
                                        "tests for the correlations, as the SMS paper), summary ('group by item': "
                                        "per document, averaged) or system (per-system means); bootstrap intervals "
                                        "and permutation tests (Deutsch et al. 2021) \\[default: global, spa: "
                                        "system]"),
    resamples: int = typer.Option(1000, "--resamples", min=10, help="Resamples of every interval and test"),
    seed: int = typer.Option(0, "--seed", help="Seed of every interval's and test's resampling"),
    allow_in_sample: bool = typer.Option(False, "--allow-in-sample", help=_LEARN_HELP["allow_in_sample"]),
    spa_seed: Optional[int] = typer.Option(None, "--spa-seed", help="spa: seed of the permutation signs behind "
                                           "each system pair's p-value, apart from --seed (WMT24 uses 4, "
                                           "mt-metrics-eval pce.py) \\[default: drawn first from --seed]"),
    system_score: str = typer.Option("auto", "--system-score", help="How a system's score is formed at the "
                                     "system level: auto (each metric's own: sacrebleu's corpus score for BLEU, "
                                     "chrF and TER, as WMT reports; the mean of the row scores for the others), "
                                     "mean (of the row scores, every metric) or corpus"),
    scores: list[str] = typer.Option([], "--scores", help=_SCORES_HELP),
    scores_format: Optional[str] = typer.Option(None, "--scores-format", help=_SCORES_FORMAT_HELP),
    scores_missing: str = typer.Option("error", "--scores-missing", help=_SCORES_MISSING_HELP),
    scores_out: Optional[Path] = typer.Option(None, "--scores-out", help="Also write every row's metric scores "
                                              "with the set's row keys (id, doc_id, system) as .jsonl, .csv or "
                                              ".tsv: the format --scores reads back"),
    duplicates: Optional[str] = typer.Option(None, "--duplicates", help="Rows repeating a (document, system) "
                                             "pair: error, mean (average human and metric scores per cell at the "
                                             "summary/system levels) or first (keep the first row in file order) "
                                             "\\[default: error; the chaganty set declares mean]"),
    text: Optional[str] = typer.Option(None, "--text", help="repaired (mis-decoded UTF-8 undone with ftfy, for "
                                       "essays and JSONL files) or as-released (the SMS paper scored the essays "
                                       "as released) \\[default: repaired]"),
    form: str = typer.Option("table", "--format", help="table (for a terminal), csv, md (Markdown) or latex "
                             "(booktabs): the results table on stdout, the notes on stderr"),
    pairwise: bool = typer.Option(False, "--pairwise", help="All-pairs tests (the run's test) and significance "
                                  "clusters (a rank column; mt-metrics-eval's rule, --correction over all pairs)"),
    correction: str = typer.Option("holm", "--correction", help="Multiple-comparison rule of every star, cluster "
                                   "and 'significantly': holm (family-wise error), bh (Benjamini-Hochberg, false "
                                   "discovery rate) or none; over the comparisons with the baseline (table, "
                                   "reading line) and over all pairs (--pairwise, heatmap)"),
    two_sided: bool = typer.Option(False, "--two-sided", help="Two-sided tests against the baseline (twice the "
                                   "smaller tail) instead of one-sided"),
    differences: bool = typer.Option(False, "--differences", help="Each variant's difference to the baseline with "
                                     "its bootstrap interval (same draws for both)"),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Every skipped metric with its reason"),
    plot: list[Path] = typer.Option([], "--plot", help="Write a figure (.png, .svg, .pdf; repeatable): FILE for the "
                                    "statistic per metric with intervals and the human ceiling, pvalues:FILE for "
                                    "the all-pairs p-value heatmap, scatter:FILE (or scatter=VARIANT:FILE) for a "
                                    "metric against the humans \\[needs the plot extra: pip install "
                                    "'meta-eval\\[plot]']"),
    plugin: list[Path] = _PLUGIN, device: Optional[str] = _DEVICE, dtype: Optional[str] = _DTYPE,
    limit: Optional[int] = _LIMIT, sample: Optional[int] = _SAMPLE,
) -> None:
    """Score a judgment set with metrics and report their correlations with the human scores."""
    from meta_eval import task
    from meta_eval.report.tables import FORMATS, print_protocol, print_run, protocol_problems

    if protocol is not None:
        given = _refused_with_protocol(ctx)
        if given:
            _fail(f"--protocol {protocol} fixes the set, dimension, level, correlation and metrics and prints its own "
                  f"table (written only to --output); drop {', '.join(given)} (or run without --protocol)")
        doc = _call(task.run_protocol, protocol, data_dir=data_dir, cache=cache, no_cache=no_cache,
                    batch_size=batch_size, resamples=resamples, seed=seed, engine=engine, workers=workers,
                    address=address, actors=actors, gpus_per_actor=gpus, output=output, force=force, say=_say)
        print_protocol(doc, out)
        _wrote(output)
        problems = protocol_problems(doc)
        if problems:
            _fail("; ".join(problems), code=1)
        return
    if judgments is None:
        _fail("give --judgments SET (a built-in set or a .jsonl file) or --protocol NAME")
    if form not in FORMATS:
        _fail(f"--format must be one of {', '.join(FORMATS)}, not {form!r}")
    later: list[tuple[str, str]] = []  # the learned models' fit checks, printed under the table
    result = _call(task.run, judgments, metrics, subset=subset, human=human, statistic=statistic,
                   correlation=correlation, level=level, baseline=baseline, epsilon=epsilon,
                   permutations=permutations, control=control, delta_band=delta_band, options=option,
                   resamples=resamples, seed=seed, duplicates=duplicates, text=text, data_dir=data_dir, cache=cache,
                   no_cache=no_cache, batch_size=batch_size, engine=engine, workers=workers, address=address,
                   actors=actors, gpus_per_actor=gpus, output=output, force=force,
                   say=_say_then(later, stdout=form == "table"), system_score=system_score, scores=scores,
                   scores_format=scores_format, scores_missing=scores_missing, scores_out=scores_out,
                   plugins=plugin, spa_seed=spa_seed, allow_in_sample=allow_in_sample, variants=variants,
                   correction=correction, plots=plot, pairwise=pairwise, limit=limit, sample=sample,
                   differences=differences, two_sided=two_sided)  # --pairwise, --differences: once (JSON too)
    print_run(result, out, err, form=form, two_sided=two_sided, verbose=verbose)
    notes = out if form == "table" else err
    for name, reason in result.failed:
        notes.print(f"[red]failed[/] {escape(name)}: {escape(reason)}", highlight=False)
    for label, message in later:
        notes.print(f"[yellow]{label}[/]: {escape(message)}", highlight=False, soft_wrap=True)
    _wrote(output)
    _wrote(scores_out)
    for kind, variant, path in result.figures:
        _call(result.plot, kind, path, variant=variant, ranks=getattr(result, "ranks", None), force=force)
        _wrote(path)
    _exit_if_incomplete(result.failed, result.not_run, output)


def _say(channel: str, text: str) -> None:
    """Where the library's messages go: notes beside the results on stdout, status lines on stderr."""
    if channel in ("err-skipped", "err-note"):
        err.print(f"  [yellow]{channel[4:]}[/] {escape(text)}" if channel == "err-note" else
                  f"[yellow]skipped[/] {escape(text)}", highlight=False)
        return
    (out if channel.startswith("out") else err).print(terminal(text), highlight=False, markup=False, soft_wrap=True)


def _say_then(later: list, stdout: bool = True):
    """:func:`_say`, keeping the messages to print under the results table (``out-warning``, ``out-note``); with
    ``stdout=False`` (``--format csv|md|latex``) every message goes to stderr, leaving stdout to the table."""
    def say(channel: str, text: str) -> None:
        if channel in ("out-warning", "out-note"):
            later.append((channel.split("-", 1)[1], text))
        else:
            _say(channel if stdout else channel.replace("out", "err", 1), text)
    return say


def _call(function, *args, **kwargs):
    """A library call as a command: its :class:`~meta_eval.errors.MetaEvalError` printed as one line with its exit
    code, Ctrl-C (exit 130) and SIGTERM (143) as a line saying what is kept of the work done."""
    from meta_eval.errors import MetaEvalError, what_is_kept

    try:
        return function(*args, **kwargs)
    except MetaEvalError as exc:
        _fail(str(exc), exc.code)
    except (KeyboardInterrupt, Terminated) as exc:
        how, code = ("terminated[/] (SIGTERM)", 143) if isinstance(exc, Terminated) else ("interrupted[/]", 130)
        err.print(f"[yellow]{how}: {escape(what_is_kept(bool(kwargs.get('no_cache')), kwargs.get('cache')))}")
        raise typer.Exit(code)


def _wrote(path: Optional[Path]) -> None:
    if path is not None:
        err.print(f"wrote {path}", highlight=False, markup=False)


def _exit_if_incomplete(failed, not_run, output: Optional[Path]) -> None:
    """After the results were printed (and written): exit with code 1 if a metric failed while scoring or a metric
    named with --metrics could not run, in one line naming each and where the other metrics' results are."""
    if not failed and not not_run:
        return
    problems = [f"{n} failed: {r}" for n, r in failed] + [f"{n} not run: {r}" for n, r in not_run]
    where = f"written to {output}" if output is not None else "printed above"
    _fail("; ".join(problems) + f"; results for the other metrics were {where}", code=1)


@app.command()
def score(
    metrics: str = typer.Option(..., "--metrics", "-m", help="Comma-separated metric names ('all': every "
                                "metric but the ones that run only when named)"),
    variants: Optional[str] = typer.Option(None, "--variants", help=_VARIANTS_HELP),
    candidates: Optional[Path] = typer.Option(None, "--candidates", "-c", help="One candidate text per line"),
    references: list[Path] = typer.Option([], "--references", "-r", help="One reference per line, parallel to "
                                          "the candidates (repeat for several references)"),
    sources: Optional[Path] = typer.Option(None, "--sources", "-s", help="One source document per line"),
    input_: Optional[Path] = typer.Option(None, "--input", "-i", help="JSONL of {candidate, references, source} "
                                          "(instead of the line files)"),
    option: list[str] = typer.Option([], "--option", "-o", help="KEY=VALUE passed to every metric that takes KEY"),
    output: Optional[Path] = typer.Option(None, "--output", help="Write per-example scores (.jsonl, .csv, .tsv)"),
    force: bool = typer.Option(False, "--force", help="Replace an existing --output file that "
                               "meta-eval did not write; never an input of the run"),
    cache: Optional[Path] = typer.Option(None, "--cache", help="Score cache file \\[default: user cache]"),
    no_cache: bool = typer.Option(False, "--no-cache", help="Compute everything, store nothing"),
    batch_size: int = typer.Option(256, "--batch-size", min=1, help="Examples per scoring batch (on a GPU: >= 8,192)"),
    engine: str = typer.Option("local", "--engine", help=_ENGINE_HELP),
    workers: Optional[int] = typer.Option(None, "--workers", min=1, help=_WORKERS_HELP),
    address: Optional[str] = _ADDRESS, actors: Optional[int] = _ACTORS, gpus: float = _GPUS,
    show: int = typer.Option(3, "--show", min=0, help="Print the first N examples' scores"),
    plugin: list[Path] = _PLUGIN, device: Optional[str] = _DEVICE, dtype: Optional[str] = _DTYPE,
    limit: Optional[int] = _LIMIT, sample: Optional[int] = _SAMPLE, seed: Optional[int] = _SAMPLE_SEED,
) -> None:
    """Score any candidates (with references and/or sources) with any metrics; per-example scores out."""
    from meta_eval import task
    from meta_eval.report.tables import print_scores

    result = _call(task.score, metrics, candidates=candidates, references=references, sources=sources,
                   input=input_, options=option, output=output, force=force, cache=cache, no_cache=no_cache, seed=seed,
                   batch_size=batch_size, engine=engine, workers=workers, address=address, actors=actors,
                   gpus_per_actor=gpus, say=_say, plugins=plugin, variants=variants, limit=limit, sample=sample)
    for name, reason in result.failed:
        err.print(f"[red]failed[/] {escape(name)}: {escape(reason)}", highlight=False)
    print_scores(result, out, show)
    _wrote(output)
    _exit_if_incomplete(result.failed, result.not_run, output)  # --metrics is required


@app.command()
def probe(
    judgments: str = typer.Option(..., "--judgments", "-j", help=_SETS_HELP),
    metrics: Optional[str] = typer.Option(None, "--metrics", "-m", help="Metric names; 'all': every metric "
                                          "\\[default: the metrics that take seconds on a CPU]"),
    perturbations: Optional[str] = typer.Option(None, "--perturbations", "-p", help="Perturbation names or families "
                                                "(fluency, order, content, invariance) \\[default: all]"),
    seed: int = typer.Option(0, "--seed", help="Seed of every perturbation (per item) and of the bootstrap"),
    against: Optional[str] = typer.Option(None, "--against", help="self (the text is its own reference; default "
                                          "where the set has references) or source"),
    tolerance: float = typer.Option(0.0, "--tolerance", min=0.0, help="Relative tie tolerance: |change| <= "
                                    "TOLERANCE x |original| (+1e-9) is a tie"),
    text: str = typer.Option("auto", "--text", help="Which texts are perturbed: reference, candidate, or auto (the "
                             "references where the set has two or more distinct ones, else the candidates)"),
    max_items: Optional[int] = typer.Option(None, "--max-items", min=1, help="A seeded sample of N items \\[all]"),
    references: str = typer.Option("1", "--references", help="Distinct references per document probed: N or all "
                                   "(1: each document's first reference)"),
    resamples: int = typer.Option(1000, "--resamples", min=10, help="Bootstrap resamples over items"),
    variants: Optional[str] = typer.Option(None, "--variants", help=_VARIANTS_HELP),
    subset: Optional[str] = typer.Option(None, "--subset", help="A subset (see `meta-eval judgments`)"),
    option: list[str] = typer.Option([], "--option", "-o", help="KEY=VALUE passed to every chosen metric that "
                                     "takes KEY"),
    output: Optional[Path] = typer.Option(None, "--output", help="Write every number and the signatures as JSON"),
    plot: Optional[Path] = typer.Option(None, "--plot", help="Write the metric x perturbation heatmap (.png, .svg, "
                                        ".pdf) \\[needs the plot extra]"),
    force: bool = typer.Option(False, "--force", help="Replace an existing --output or --plot file that meta-eval "
                               "did not write"),
    data_dir: Optional[Path] = typer.Option(None, "--data-dir", help="Folder of judgment files"),
    cache: Optional[Path] = typer.Option(None, "--cache", help="Score cache file \\[default: user cache]"),
    no_cache: bool = typer.Option(False, "--no-cache", help="Compute everything, store nothing"),
    batch_size: int = typer.Option(256, "--batch-size", min=1, help="Examples per scoring batch (on a GPU: >= 8,192)"),
    engine: str = typer.Option("local", "--engine", help=_ENGINE_HELP),
    workers: Optional[int] = typer.Option(None, "--workers", min=1, help=_WORKERS_HELP),
    address: Optional[str] = _ADDRESS, actors: Optional[int] = _ACTORS, gpus: float = _GPUS,
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Also each perturbation's source"),
    plugin: list[Path] = _PLUGIN, device: Optional[str] = _DEVICE, dtype: Optional[str] = _DTYPE,
    limit: Optional[int] = _LIMIT, sample: Optional[int] = _SAMPLE,
) -> None:
    """Blind spots: how each metric's score reacts to controlled errors (and to changes it should ignore).

    The BLINDSPOT protocol (He et al. 2023): each reference is scored as the candidate against itself (or the
    source), then its perturbation; a metric detects an error when its score drops (docs/probe.md).
    """
    from meta_eval.probe.report import print_probe
    from meta_eval.probe.run import probe as run_probe

    result = _call(run_probe, judgments, metrics, perturbations=perturbations, seed=seed, against=against, text=text,
                   max_items=max_items, tolerance=tolerance, resamples=resamples, references=references, limit=limit,
                   variants=variants, subset=subset, options=option, data_dir=data_dir, cache=cache, no_cache=no_cache,
                   batch_size=batch_size, engine=engine, workers=workers, address=address, actors=actors,
                   gpus_per_actor=gpus, output=output, plot=plot, force=force, say=_say, plugins=plugin, sample=sample)
    for name, reason in result.failed:
        err.print(f"[red]failed[/] {escape(name)}: {escape(reason)}", highlight=False)
    print_probe(result.to_dict(changes=False), out, verbose=verbose)
    err.print(f"{result.wall_seconds:.1f} s", highlight=False, markup=False)
    _wrote(output)
    _wrote(plot)
    _exit_if_incomplete(result.failed, result.not_run, output)


def _command_line() -> str:  # as recorded in a board (redacted: meta_eval.metrics.redact)
    return __import__("meta_eval.metrics.redact", fromlist=["_"]).command_line("meta-eval", sys.argv[1:])


@app.command("metrics")
def list_metrics(plugin: list[Path] = _PLUGIN) -> None:
    """List the registered metrics, their variants and needs, and whether they can run here."""
    import meta_eval.metrics.registry as registry
    from meta_eval.metrics import numeric
    from meta_eval.metrics.plugin_files import PluginFileError, load_plugin_files

    try:
        load_plugin_files(plugin)
    except PluginFileError as exc:
        _fail(str(exc))
    table = Table(title="Registered metrics")
    from meta_eval.metrics.model_names import default_model_cell
    from meta_eval.torch_build import install_choice
    for col in ("name", "variants", "needs", "default model", "higher is better", "status"):
        table.add_column(col)
    notes = []
    for name in registry.names(include_named_only=True):  # learned models too, marked: they run only when named
        cls = registry.get_class(name)
        needs = ", ".join(n for n, flag in (("references", cls.needs_references), ("source", cls.needs_source))
                          if flag) or "-"
        reason = install_choice(cls.unavailable_reason())
        if reason is not None:
            notes.append((name, reason))
        only = " (only when named)" if registry.is_named_only(name) or not cls.in_default_run else \
            "" if cls.in_quick_run else " (named or -m all)"
        table.add_row(escape(name), escape(", ".join(cls.variants)), needs, escape(default_model_cell(cls)),
                      "yes" if cls.higher_is_better else "no",
                      f"[green]ready[/]{only}" if reason is None else f"[red]unavailable[/]{only} [{len(notes)}]")
    for name, reason in sorted(registry.plugin_errors().items()):  # broken plugins: listed, the others still work
        notes.append((name, reason))
        table.add_row(escape(name), "-", "-", "-", "-", f"[red]broken plugin[/] [{len(notes)}]")
    out.print(table)
    out.print(f"(named or -m {registry.ALL}): neural; `meta-eval run` without --metrics keeps to the metrics that "
              f"take seconds on a CPU, `leaderboard publish` runs these too. (only when named): never in a default "
              f"choice nor in -m {registry.ALL}.", highlight=False, markup=False)
    for i, (name, reason) in enumerate(notes, 1):
        out.print(f"[{i}] {name}: {reason}", highlight=False, markup=False)
    out.print(f"Neural metrics compute in the {numeric.describe()}; --numeric or $META_EVAL_NUMERIC chooses it "
              f"(docs/engines.md: Numeric mode).", highlight=False, markup=False)
    out.print(__import__("meta_eval.torch_build", fromlist=["_"]).describe(), highlight=False, markup=False)


@app.command("protocols")
def list_protocols() -> None:
    """List the named protocols: papers' tables that `meta-eval run --protocol NAME` reruns, with each part's
    tolerance and the verdict counts a run is expected to give (match, within tolerance, known mismatch)."""
    from meta_eval.report.tables import print_protocols

    problems = print_protocols(out)
    if problems:
        raise typer.Exit(1)


@app.command("judgments")
def list_judgments(
    path: Optional[str] = typer.Argument(None, help="A .jsonl/.jsonl.gz/.json file (or a built-in set) to describe: "
                                         "rows, documents, systems, dimensions, references per row, repeated pairs, "
                                         "rows without scores, levels; for JUDGE-BENCH's schema also each property "
                                         "and the raters' agreement. Without it: list the built-in sets"),
    judgments_path: Optional[str] = typer.Option(None, "--judgments", "-j", help="Same as PATH"),
    data_dir: Optional[Path] = typer.Option(None, "--data-dir", help="Folder of judgment files"),
    subset: Optional[str] = typer.Option(None, "--subset", help="A subset (see `meta-eval judgments`)"),
    export: Optional[Path] = typer.Option(None, "--export", help="Write every row for --scores: .jsonl/.csv/.tsv"),
    force: bool = typer.Option(False, "--force", help="Replace an --export file that meta-eval did not write"),
) -> None:
    """List the built-in judgment sets, or describe one file: `meta-eval judgments PATH` (--export: its rows)."""
    from meta_eval import judgments as judgment_sets
    from meta_eval.report.tables import print_judgment_set

    if path is not None and judgments_path is not None and path != judgments_path:
        _fail(f"give the set once: PATH {path!r} or --judgments {judgments_path!r}")
    if (force and export is None) or (subset is not None and path is None and judgments_path is None):
        _fail("--force replaces an --export file: give --export FILE" if force and export is None else
              "--subset chooses a subset of a set: give the set (PATH or --judgments)")
    if export is not None:
        return _wrote(_call(judgment_sets.export_rows, path or judgments_path, export, subset, data_dir, force))
    if (path or judgments_path) is not None:
        try:
            print_judgment_set(judgment_sets.load(path or judgments_path, data_dir, subset), out)  # as run: fetched
        except (judgment_sets.JudgmentError, judgment_sets.DataError) as exc:
            _fail(str(exc))
        return
    from meta_eval.judgments.catalog import catalog
    from meta_eval.report.tables import print_catalog

    print_catalog(catalog(data_dir), judgment_sets.data_dir(data_dir), out)


@app.command()
def learn(
    judgments: str = typer.Option(..., "--judgments", "-j", help=_SETS_HELP),
    metrics: str = typer.Option(..., "--metrics", "-m", help="Comma-separated metrics whose variants are the "
                                "features (a metric that needs source documents or references the set lacks is "
                                "skipped, with the reason)"),
    features: Optional[str] = typer.Option(None, "--features", help="Comma-separated variants to use as features "
                                           "\\[default: every variant of the chosen metrics]"),
    variants: Optional[str] = typer.Option(None, "--variants", help=_VARIANTS_HELP.split(" \\[")[0]),
    target: Optional[str] = typer.Option(None, "--target", help=_LEARN_HELP["target"]),
    protocol: str = typer.Option("nested", "--protocol", help=_LEARN_HELP["protocol"]),
    folds: Optional[int] = typer.Option(None, "--folds", min=2, help=_LEARN_HELP["folds"]),
    inner_folds: Optional[int] = typer.Option(None, "--inner-folds", min=2, help=_LEARN_HELP["inner_folds"]),
    alphas: Optional[str] = typer.Option(None, "--alphas", help=_LEARN_HELP["alphas"]),
    resamples: Optional[int] = typer.Option(None, "--resamples", min=10, help=_LEARN_HELP["resamples"]),
    baseline: Optional[str] = typer.Option(None, "--baseline", help=_LEARN_HELP["baseline"]),
    alpha: Optional[float] = typer.Option(None, "--alpha", min=0.0, help=_LEARN_HELP["alpha"]),
    splits: Optional[int] = typer.Option(None, "--splits", min=1, help=_LEARN_HELP["splits"]),
    train_fraction: Optional[float] = typer.Option(None, "--train-fraction", help=_LEARN_HELP["train_fraction"]),
    seed: int = typer.Option(0, "--seed", help="Seed of the folds, the bootstrap or the splits"),
    search: str = typer.Option("auto", "--search", help=_LEARN_HELP["search"]),
    no_search: bool = typer.Option(False, "--no-search", help="Same as --search none"),
    max_size: Optional[int] = typer.Option(None, "--max-size", min=1, help=_LEARN_HELP["max_size"]),
    search_splits: Optional[int] = typer.Option(None, "--search-splits", min=1, help=_LEARN_HELP["search_splits"]),
    min_gain: float = typer.Option(0.001, "--min-gain", min=0.0, help=_LEARN_HELP["min_gain"]),
    top: Optional[int] = typer.Option(None, "--top", min=1,
                                      help="--protocol paper: feature sets shown \\[default: 10]"),
    correlation: str = typer.Option("spearman", "--correlation", help=_LEARN_HELP["correlation"]),
    subset: Optional[str] = typer.Option(None, "--subset", help="chaganty/essays: 'sms' (default) or 'all'"),
    option: list[str] = typer.Option([], "--option", "-o", help="KEY=VALUE passed to every chosen metric that "
                                     "takes KEY (saved with the model)"),
    save: Optional[str] = typer.Option(None, "--save", help=_LEARN_HELP["save"]),
    output: Optional[Path] = typer.Option(None, "--output", help="Write the results as JSON"),
    force: bool = typer.Option(False, "--force", help="Replace an existing --output (or --save) file that "
                               "meta-eval did not write; never an input of the run"),
    data_dir: Optional[Path] = typer.Option(None, "--data-dir", help="Folder of judgment files \\[default: "
                                            "$META_EVAL_DATA, else the user cache]"),
    cache: Optional[Path] = typer.Option(None, "--cache", help="Score cache file \\[default: user cache]"),
    no_cache: bool = typer.Option(False, "--no-cache", help="Compute everything, store nothing"),
    batch_size: int = typer.Option(256, "--batch-size", min=1, help="Examples per scoring batch (on a GPU: >= 8,192)"),
    plugin: list[Path] = _PLUGIN, device: Optional[str] = _DEVICE, dtype: Optional[str] = _DTYPE,
    scores: list[str] = typer.Option([], "--scores", help="NAME=FILE: imported scores as features, as `meta-eval "
                                     "run --scores` reads them (a model using them is not saved: they exist only "
                                     "for this set's rows)"),
    scores_format: Optional[str] = typer.Option(None, "--scores-format", help=_SCORES_FORMAT_HELP),
) -> None:
    """Learn a metric: ridge regression from metric scores to human scores (Scialom et al. 2019, sec. 2.4).

    --protocol nested (default): outer folds by document; features (--search) and alpha chosen by inner CV inside
    each training part; the held-out correlation with a bootstrap interval and paired tests. --protocol paper: the
    paper's repeated random halves. The final model is the procedure run on all rows.
    """
    from meta_eval.learning.pipeline import learn as learn_metric
    from meta_eval.report.tables import print_learn

    result = _call(learn_metric, judgments, metrics, features=features, target=target, alpha=alpha, splits=splits,
                   train_fraction=train_fraction, seed=seed, search=search, no_search=no_search, max_size=max_size,
                   search_splits=search_splits, protocol=protocol, folds=folds, inner_folds=inner_folds, alphas=alphas,
                   resamples=resamples, baseline=baseline, min_gain=min_gain, top=top, correlation=correlation,
                   subset=subset, options=option, save=save, output=output, force=force, data_dir=data_dir, cache=cache,
                   no_cache=no_cache, batch_size=batch_size, say=_say, plugins=plugin, scores=scores,
                   scores_format=scores_format, variants=variants)
    print_learn(result, out, err, top or 10)  # and where --save put the model
    _wrote(output)
    if result.not_saved:  # the results stand, the model asked for is missing
        _fail(result.not_saved, code=1)


leaderboard_app = typer.Typer(no_args_is_help=True, help="Publish comparison leaderboards.")
app.add_typer(leaderboard_app, name="leaderboard")


@leaderboard_app.command("publish")
def leaderboard_publish(
    judgments: str = typer.Option(..., "--judgments", "-j", help="Comma-separated judgment sets"),
    out_dir: Path = typer.Option(..., "--out", help="Folder to write results.json, README.md and index.html"),
    metrics: Optional[str] = typer.Option(None, "--metrics", "-m", help="Comma-separated metric names (default "
                                          "and 'all': every registered metric that can run on each set, the neural "
                                          "ones included)"),
    variants: Optional[str] = typer.Option(None, "--variants", help=_VARIANTS_HELP),
    option: list[str] = typer.Option([], "--option", "-o", help="KEY=VALUE passed to every metric that takes KEY"),
    resamples: int = typer.Option(1000, "--resamples", min=10, help=_BOARD_HELP["resamples"]),
    seed: int = typer.Option(0, "--seed", help="Seed of every resampling"),
    correlation: str = typer.Option("spearman", "--correlation", help="Correlation for the significance tests"),
    alpha: float = typer.Option(0.05, "--alpha", help="Significance level of the clusters, in (0, 1)"),
    correction: str = typer.Option("holm", "--correction", help="holm, bh or none"),
    data_dir: Optional[Path] = typer.Option(None, "--data-dir", help="Folder of judgment files"),
    cache: Optional[Path] = typer.Option(None, "--cache", help="Score cache file \\[default: user cache]"),
    no_cache: bool = typer.Option(False, "--no-cache", help="Compute everything, store nothing"),
    batch_size: int = typer.Option(256, "--batch-size", min=1, help="Examples per scoring batch (on a GPU: >= 8,192)"),
    force: bool = typer.Option(False, "--force", help=_BOARD_HELP["force"]),
    engine: str = typer.Option("local", "--engine", help=_ENGINE_HELP),
    workers: Optional[int] = typer.Option(None, "--workers", min=1, help=_WORKERS_HELP),
    address: Optional[str] = _ADDRESS, actors: Optional[int] = _ACTORS, gpus: float = _GPUS,
    duplicates: Optional[str] = typer.Option(None, "--duplicates", help="Rows repeating a (document, system) "
                                             "pair: error, mean or first, as for `meta-eval run` \\[default: "
                                             "the set's declared policy]"),
    human: Optional[str] = typer.Option(None, "--human", help="Human dimension on every set \\[default: each "
                                        "set's own]"),
    title: Optional[str] = typer.Option(None, "--title", help="Title of the pages \\[default: the folder's name]"),
    plugin: list[Path] = _PLUGIN, device: Optional[str] = _DEVICE, dtype: Optional[str] = _DTYPE,
    scores: list[str] = typer.Option([], "--scores", help=_BOARD_HELP["scores"]),
    scores_format: Optional[str] = typer.Option(None, "--scores-format", help=_SCORES_FORMAT_HELP),
) -> None:
    """Score sets with metrics and publish a reproducible leaderboard (levels, intervals, significance).

    ``-j`` takes set names, each optionally with a subset after a colon (``-j
    wmt21-mqm-ted:en-de,wmt21-mqm-ted:zh-en``);
    every set or subset becomes one section of the leaderboard.
    """
    from meta_eval.leaderboard.publish import publish
    from meta_eval.metrics.redact import command_line

    command = command_line("meta-eval leaderboard publish", sys.argv[3:] if sys.argv[1:3] == ["leaderboard",
                                                                                            "publish"] else [])
    _call(publish, judgments, out_dir, metrics, variants=variants, options=option, resamples=resamples, seed=seed,
          correlation=correlation, alpha=alpha, correction=correction, data_dir=data_dir, cache=cache,
          no_cache=no_cache, batch_size=batch_size, force=force, engine=engine, workers=workers, address=address,
          actors=actors, gpus_per_actor=gpus, duplicates=duplicates, human=human, title=title, command=command,
          say=_say, plugins=plugin, scores=scores, scores_format=scores_format)
    out.print(f"wrote {out_dir}/results.json, README.md, index.html", highlight=False, markup=False)


@leaderboard_app.command("probe")
def leaderboard_probe(
    out_dir: Path = typer.Argument(..., help="A leaderboard folder (holding results.json)"),
    judgments: Optional[str] = typer.Option(None, "--judgments", "-j", help=_BOARD_HELP["probe_judgments"]),
    metrics: Optional[str] = typer.Option(None, "--metrics", "-m", help="Metric names \\[default: the board's]"),
    perturbations: Optional[str] = typer.Option(None, "--perturbations", "-p", help="Names or families \\[all]"),
    seed: int = typer.Option(0, "--seed", help="Seed of the perturbations and the bootstrap"),
    tolerance: float = typer.Option(0.0, "--tolerance", min=0.0, help="Relative tie tolerance"),
    resamples: int = typer.Option(1000, "--resamples", min=10, help="Bootstrap resamples over items"),
    max_items: Optional[int] = typer.Option(None, "--max-items", min=1, help="A seeded sample of N items per set"),
    variants: Optional[str] = typer.Option(None, "--variants", help=_VARIANTS_HELP),
    data_dir: Optional[Path] = typer.Option(None, "--data-dir", help="Folder of judgment files"),
    cache: Optional[Path] = typer.Option(None, "--cache", help="Score cache file \\[default: user cache]"),
    no_cache: bool = typer.Option(False, "--no-cache", help="Compute everything, store nothing"),
    batch_size: int = typer.Option(256, "--batch-size", min=1, help="Examples per scoring batch (on a GPU: >= 8,192)"),
    engine: str = typer.Option("local", "--engine", help=_ENGINE_HELP),
    workers: Optional[int] = typer.Option(None, "--workers", min=1, help=_WORKERS_HELP),
) -> None:
    """Probe a board's metrics on its set(s) (`meta-eval probe`) and save BOARD/blindspots.json with the heatmaps;
    the board's pages get a "Blind spots" section. Its correlations are not recomputed."""
    from meta_eval.probe.board import probe_board

    written = _call(probe_board, out_dir, metrics, perturbations=perturbations, seed=seed, tolerance=tolerance,
                    resamples=resamples, max_items=max_items, data_dir=data_dir, cache=cache, no_cache=no_cache,
                    batch_size=batch_size, engine=engine, workers=workers, command=_command_line(), say=_say,
                    variants=variants, judgments=judgments)
    for path in written:
        _wrote(path)


@leaderboard_app.command("render")
def leaderboard_render(
    out_dir: list[Path] = typer.Argument(..., help="Leaderboard folders (each holding a results.json)"),
) -> None:
    """Rewrite boards' pages (README.md, index.html, figures) from their results.json: nothing is scored."""
    from meta_eval.leaderboard.publish import render_board

    for folder in out_dir:
        _call(render_board, folder)
        out.print(f"rendered {folder}/README.md, index.html and its figures", highlight=False, markup=False)


@leaderboard_app.command("index")
def leaderboard_index(
    root: Path = typer.Option(Path("leaderboard"), "--root", help="The folder holding one folder per leaderboard"),
    force: bool = typer.Option(False, "--force", help="Replace a README.md or index.html in --root that this "
                               "command did not write"),
) -> None:
    """Write the index of all leaderboards (ROOT/README.md, ROOT/index.html): best metric per set, human ceiling."""
    from meta_eval.leaderboard.index import write_index
    from meta_eval.metrics.base import package_version

    try:
        entries = write_index(root, package_version("meta-eval"), force=force)
    except ValueError as exc:
        _fail(str(exc))
    table = Table(title=f"Leaderboards in {escape(str(root))}")
    for col in ("set", "subset", "headline", "best", "value", "ceiling", "gap"):
        table.add_column(col, justify="left" if col in ("set", "subset", "headline", "best") else "right")
    for e in entries:
        h = e["headline"]
        table.add_row(*(escape(str(x)) for x in (
            e["judgments"], e["subset"], f"{h['level']} {h['statistic']}", h["best"], f"{h['value']:.3f}",
            "-" if h["ceiling"] is None else f"{h['ceiling']:.3f}", "-" if h["gap"] is None else f"{h['gap']:+.3f}")))
    out.print(table)
    out.print(f"wrote {root}/README.md, {root}/index.html", highlight=False, markup=False)


class Terminated(BaseException):
    """SIGTERM, raised in the main thread by :func:`main`'s handler: like Ctrl-C, the run stops between two batches'
    commits, its ``finally`` blocks close the cache and the engine, and :func:`main` exits with 143. A BaseException
    (not a KeyboardInterrupt) so that neither a metric's ``except Exception`` nor click's Ctrl-C handling takes it."""


def _on_sigterm(signum, frame) -> None:
    raise Terminated()


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """Warnings as one line (``warning: ...``, the category named unless it is a plain UserWarning), not Python's
    ``file:line`` with a line of source, which reads like a crash."""
    kind = "" if category is UserWarning else f" ({category.__name__})"
    err.print(f"[yellow]warning{kind}:[/] {escape(str(message))}", highlight=False, soft_wrap=True)


def main() -> None:
    """Console-script entry point. SIGTERM ends a run as Ctrl-C does, with a message and exit code 143 (128 + 15);
    warnings print as one line each."""
    import signal
    import warnings

    warnings.showwarning = _show_warning
    previous = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        app()
    except Terminated:
        err.print("[yellow]terminated[/] (SIGTERM): every finished batch is in the cache; rerun the same command to "
                  "resume")
        sys.exit(143)
    finally:
        signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":
    sys.exit(main())
