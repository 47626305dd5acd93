"""The ``meta-eval`` command line (typer).

``meta-eval run`` scores a judgment set with metrics and reports their correlation with the humans;
``meta-eval metrics`` lists the registered metrics and whether they can run here; ``meta-eval judgments`` lists the
judgment sets. Heavy libraries are imported only inside the metrics that need them, so these stay fast.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Which automatic text-evaluation metric agrees best with people?")
# emoji=False: a name like "x:warning:" from the data or a plugin prints as written (markup is escaped where printed)
out = Console(emoji=False)
err = Console(stderr=True, emoji=False)


def _fail(message: str, code: int = 2) -> None:
    # text, not markup ([coco] stays); one line however long (soft_wrap: a path in it can be copied)
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


def _open_store(cache: Optional[Path], no_cache: bool):
    """The score cache of a command (None with --no-cache); a path that cannot be a cache is an error, not a trace."""
    from meta_eval.scoring.cache import CacheError, ScoreCache, default_cache_path

    if no_cache:
        return None
    try:
        return ScoreCache(cache or default_cache_path())
    except CacheError as exc:
        _fail(str(exc))


# "\\[" keeps rich (typer's help markup) from reading [ray] and [default: ...] as style tags
_ENGINE_HELP = ("local (worker processes on this machine) or ray (a Ray cluster at --address or $RAY_ADDRESS, else a "
                "local Ray instance; pip install \"meta-eval\\[ray]\"); scores are identical whatever the engine")
_WORKERS_HELP = ("Worker processes for the CPU metrics; a neural metric runs in one process with this many threads "
                 "\\[default: every core; 1 scores in this process]")
_ADDRESS_HELP = "The Ray cluster for --engine ray \\[default: $RAY_ADDRESS, else a local Ray instance]"
_ACTORS_HELP = ("--engine ray: actors per neural metric, each loading the model once \\[default: one per GPU share on "
                "a cluster with GPUs, else 1]; scores are identical whatever the count")


def _make_engine(engine: str, workers: Optional[int], address: Optional[str], actors: Optional[int] = None):
    """The scoring engine of ``--engine/--workers/--address/--actors`` (:mod:`meta_eval.scoring.engines`); a bad choice is an
    error."""
    from meta_eval.scoring.engines import EngineError, make_engine

    try:
        return make_engine(engine, workers, address, actors)
    except EngineError as exc:
        _fail(str(exc))


def _fmt(x: float | None, digits: int = 3) -> str:
    if x is None:
        return "-"
    return f"{x:.{digits}f}" if abs(x) >= 10 ** -digits or x == 0 else f"{x:.1e}"


def _stars(p: float | None) -> str:
    if p is None:
        return ""
    return "**" if p < 0.01 else "*" if p < 0.05 else ""


def _parse_options(options: list[str]) -> dict[str, str]:
    parsed = {}
    for opt in options:
        key, sep, value = opt.partition("=")
        if not sep or not key:
            _fail(f"--option expects KEY=VALUE, got {opt!r}")
        parsed[key.strip()] = value.strip()
    return parsed


def _metric_config(cls, options: dict[str, str], function=None) -> dict[str, str]:
    """The options that ``function`` (default: the metric's constructor) takes by name.

    For the constructor, the multi-reference policy ``refs`` counts as taken by every reference-based metric whose
    policy can be chosen, even when its constructor does not take it (:func:`_build` sets it with ``with_refs``).
    """
    import inspect

    accepted = inspect.signature(function or cls.__init__).parameters
    config = {k: v for k, v in options.items() if k in accepted and k not in ("self", "cls", "args", "kwargs")}
    if function is None and "refs" in options and cls.needs_references and not cls.refs_fixed:
        config["refs"] = options["refs"]
    return config


def _build(cls, config: dict[str, str]):
    """``cls(**config)``, with ``refs`` passed through ``Metric.with_refs`` when the constructor does not take it."""
    import inspect

    config = dict(config)
    refs = None if "refs" in inspect.signature(cls.__init__).parameters else config.pop("refs", None)
    metric = cls(**config)
    return metric if refs is None else metric.with_refs(refs)


def _named_skips(skipped: list[tuple[str, str]], requested: Optional[str]) -> list[tuple[str, str]]:
    """The skips of metrics named one by one in ``--metrics`` (not through ``all``): missing results (exit 1)."""
    from meta_eval.metrics.registry import ALL

    named = {m.strip() for m in (requested or "").split(",")} - {"", ALL}
    return [(n, r) for n, r in skipped if n in named]


def _choose_metrics(requested: Optional[str], options: dict[str, str], *, what: str, has_sources: bool,
                    has_references: bool, language: str | None = None, full_default: bool = False):
    """(metric objects to run, [(name, reason)] skipped) for data described by ``what``.

    Without ``requested``, the default choice: every registered metric but the ones that run only when named
    (``in_default_run``) and, unless ``full_default`` (``leaderboard publish``), the neural ones (``in_quick_run``:
    the default ``run`` takes seconds). ``all`` in ``requested`` stands for every registered metric but the
    named-only ones. A metric built for other languages than the data's ``language`` (when the set declares one)
    is skipped, with the reason (e.g. GloVe WMS on German candidates)."""
    import meta_eval.metrics.registry as registry

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
            _fail(str(exc))
        considered.append(cls)
        if name not in named and not getattr(cls, "in_default_run", True):
            skipped.append((name, cls.not_default_reason or f"run only when named (-m {name})"))
            continue
        if not requested and not full_default and not getattr(cls, "in_quick_run", True):
            skipped.append((name, f"neural, so not in the default choice (metrics that take seconds on a CPU): "
                                  f"{cls.not_quick_reason or 'a neural model scores every text'}; runs when named "
                                  f"or with -m {registry.ALL}"))
            continue
        reason = cls.unavailable_reason(**_metric_config(cls, options, cls.unavailable_reason))
        if reason is None:  # what a metric needs can depend on its options (ref=source): ask the instance
            try:
                metric = _build(cls, _metric_config(cls, options))
            except (ValueError, TypeError) as exc:
                reason = f"bad configuration: {exc}"
            else:
                if metric.needs_source and not has_sources:
                    reason = f"needs source documents, which {what} does not have"
                elif metric.needs_references and not has_references:
                    reason = f"needs references, which {what} does not have"
                    if "ref" in _metric_config(cls, {"ref": "source"}):
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
    unused = set(options) - {k for cls in considered for k in _metric_config(cls, options)}
    if unused and chosen:
        _fail(f"no chosen metric takes the option(s) {', '.join(sorted(unused))}")
    return chosen, skipped


def _score_all(chosen, examples, store, batch_size, skipped, failed=None, engine=None, degenerate=None):
    """Score with every chosen metric (progress bars); a metric whose scoring raises does not stop the others.

    It is recorded as ``(name, "ExcType: message")`` in ``failed`` when that list is given (``run`` and ``score``
    then exit non-zero after writing the other metrics' results), else as ``(name, "failed: ExcType: message")`` in
    ``skipped`` (the convention of ``learn``, ``leaderboard publish`` and ``run --protocol``). ``engine`` (default:
    this process) scores the batches; an engine that cannot start (Ray unreachable) stops the command. The caller
    closes it. With a ``degenerate`` dict, each metric's :meth:`~metrics.base.Metric.degenerate` reasons are put
    there under its name right after it is scored, while its model is still loaded (for :func:`_degenerate_rows`).

    The metrics run in :func:`meta_eval.scoring.runner.run_order` and each resource (model, word vectors) is released
    when no metric still to run holds it; the results are returned in the order of ``chosen``.
    """
    from meta_eval.scoring.engines import EngineError
    from meta_eval.report.progress import progress_bar
    from meta_eval.scoring.runner import release_done, run_order, score_examples

    scored = []
    order = run_order(chosen)  # metrics sharing a model or vectors together, each resource released when done
    rank = {id(m): k for k, m in enumerate(chosen)}
    try:
        for i, metric in enumerate(order):
            try:
                with progress_bar(escape(metric.name)) as advance:
                    result = score_examples(metric, examples, store, batch_size, advance, engine=engine)
                if degenerate is not None:
                    degenerate[metric.name] = metric.degenerate(examples, result.scores)
                scored.append((rank[id(metric)], result))
            except KeyboardInterrupt:
                raise
            except EngineError as exc:
                _fail(str(exc))
            except Exception as exc:  # a metric that fails is reported, the others still run
                if failed is not None:
                    failed.append((metric.name, f"{type(exc).__name__}: {exc}"))
                else:
                    skipped.append((metric.name, f"failed: {type(exc).__name__}: {exc}"))
            finally:
                release_done(metric, order[i + 1:])
                if engine is not None:
                    engine.idle(order[i + 1:])
    except KeyboardInterrupt:
        err.print("[yellow]interrupted[/]: every finished batch is in the cache; rerun the same command to resume")
        raise typer.Exit(130)
    finally:
        if store is not None:
            store.close()
    return [result for _, result in sorted(scored, key=lambda item: item[0])]


def _degenerate_rows(chosen, scored, examples, found=None) -> dict[str, dict]:
    """Per scored metric, the rows it gave a documented value instead of a measurement (``Metric.degenerate``, or
    its reasons in ``found`` as :func:`_score_all` collected them): their count and reasons; prints one line per
    metric that has any."""
    from collections import Counter

    by_name = {m.name: m for m in chosen}
    report = {}
    for ms in scored:
        rows = found[ms.metric] if found and ms.metric in found else by_name[ms.metric].degenerate(examples, ms.scores)
        reasons = Counter(r for r in rows if r is not None)
        report[ms.metric] = {"rows": sum(reasons.values()), "reasons": dict(reasons)}
        if reasons:
            err.print(f"{ms.metric}: {sum(reasons.values())} of {len(examples)} rows not measured, given the "
                      f"metric's documented value: " + "; ".join(f"{n} with {r}" for r, n in reasons.items())
                      + " (see the metric's documentation)", highlight=False, markup=False, soft_wrap=True)
    return report


@app.command()
def run(
    judgments: Optional[str] = typer.Option(None, "--judgments", "-j", help="chaganty, essays, summeval, realsumm, "
                                            "or a .jsonl file"),
    protocol: Optional[str] = typer.Option(None, "--protocol", help="Run a paper's table as it was run (set, human "
                                           "dimension, level, correlation, metric options) and print the paper's "
                                           "numbers beside meta-eval's; see `meta-eval protocols`"),
    metrics: Optional[str] = typer.Option(None, "--metrics", "-m", help="Comma-separated metric names; 'all': "
                                          "every metric (default: every metric that can run on the set in "
                                          "seconds on a CPU, so not the neural ones; see `meta-eval metrics`)"),
    human: Optional[str] = typer.Option(None, "--human", help="Human dimension (default: the set's default)"),
    baseline: Optional[str] = typer.Option(None, "--baseline", help="Variant for Williams tests [default: "
                                           "rougeL-f when scored]"),
    statistic: Optional[str] = typer.Option(None, "--statistic", help="spearman, pearson, kendall, accuracy "
                                            "(Kocmi et al. 2021), acc-eq (Deutsch et al. 2023, at --epsilon), acc-t "
                                            "(tie calibration), spa (Thompson et al. 2024; system level): sorts the "
                                            "table and is used by the intervals and tests [default: spearman]"),
    correlation: Optional[str] = typer.Option(None, "--correlation", help="Same as --statistic, for spearman, "
                                              "pearson or kendall"),
    epsilon: float = typer.Option(0.0, "--epsilon", min=0.0, help="acc-eq: the metric ties a pair when its "
                                  "scores differ by at most this (0: acc-eq equals accuracy)"),
    permutations: int = typer.Option(1000, "--permutations", min=10, help="spa: permutations behind each system "
                                     "pair's p-value (1,000 in WMT24)"),
    control: Optional[str] = typer.Option(None, "--control", help="system: also report the partial correlation "
                                          "controlling for the system, as FRANK (Pagnoni et al. 2021); global "
                                          "level, pearson or spearman"),
    delta_band: Optional[str] = typer.Option(None, "--delta-band", help="LO:HI: also report Kendall's tau over the "
                                             "system pairs whose metric difference lies in [LO, HI] (Deutsch et "
                                             "al. 2022; HI may be 'inf'); system level"),
    subset: Optional[str] = typer.Option(None, "--subset", help="A subset (see `meta-eval judgments`), e.g. "
                                         "zh-en, frank's cnndm-test; chaganty/essays: 'sms' (the SMS paper's "
                                         "subset, default) or 'all'"),
    option: list[str] = typer.Option([], "--option", "-o", help="KEY=VALUE passed to every chosen metric that "
                                     "takes KEY, e.g. vectors=spacy:en_core_web_md"),
    output: Optional[Path] = typer.Option(None, "--output", help="Write the results as JSON"),
    force: bool = typer.Option(False, "--force", help="Replace an existing --output (or --save) file that "
                               "meta-eval did not write; never an input of the run"),
    data_dir: Optional[Path] = typer.Option(None, "--data-dir", help="Folder of judgment files [default: "
                                            "$META_EVAL_DATA, else the user cache]"),
    cache: Optional[Path] = typer.Option(None, "--cache", help="Score cache file [default: user cache]"),
    no_cache: bool = typer.Option(False, "--no-cache", help="Compute everything, store nothing"),
    batch_size: int = typer.Option(256, "--batch-size", min=1, help="Examples per scoring batch"),
    engine: str = typer.Option("local", "--engine", help=_ENGINE_HELP),
    workers: Optional[int] = typer.Option(None, "--workers", min=1, help=_WORKERS_HELP),
    address: Optional[str] = typer.Option(None, "--address", help=_ADDRESS_HELP),
    actors: Optional[int] = typer.Option(None, "--actors", min=1, help=_ACTORS_HELP),
    level: Optional[str] = typer.Option(None, "--level", help="global (WMT23's 'no grouping': all rows; Williams "
                                        "tests for the correlations, as the SMS paper), summary ('group by item': "
                                        "per document, averaged) or system (per-system means); bootstrap intervals "
                                        "and permutation tests (Deutsch et al. 2021) [default: global, spa: "
                                        "system]"),
    resamples: int = typer.Option(1000, "--resamples", min=10, help="Resamples at the summary/system level"),
    seed: int = typer.Option(0, "--seed", help="Seed of the resampling at the summary/system level"),
    duplicates: Optional[str] = typer.Option(None, "--duplicates", help="Rows repeating a (document, system) "
                                             "pair: error, mean (average human and metric scores per cell at the "
                                             "summary/system levels) or first (keep the first row in file order) "
                                             "[default: error; the chaganty set declares mean]"),
    text: Optional[str] = typer.Option(None, "--text", help="repaired (mis-decoded UTF-8 undone with ftfy, for "
                                       "essays and JSONL files) or as-released (the SMS paper scored the essays "
                                       "as released) [default: repaired]"),
) -> None:
    """Score a judgment set with metrics and report their correlations with the human scores."""
    from meta_eval import task
    from meta_eval.report.tables import print_protocol, print_run

    if protocol is not None:
        fixed = {"--judgments": judgments, "--metrics": metrics, "--human": human, "--baseline": baseline,
                 "--correlation": correlation, "--statistic": statistic, "--subset": subset, "--level": level,
                 "--option": option or None, "--duplicates": duplicates, "--text": text}
        given = [flag for flag, value in fixed.items() if value is not None]
        if given:
            _fail(f"--protocol {protocol} fixes the set, dimension, level, correlation and metrics; drop "
                  f"{', '.join(given)} (or run without --protocol)")
        doc = _call(task.run_protocol, protocol, data_dir=data_dir, cache=cache, no_cache=no_cache,
                    batch_size=batch_size, resamples=resamples, seed=seed, engine=engine, workers=workers,
                    address=address, actors=actors, output=output, force=force, say=_say)
        print_protocol(doc, out)
        _wrote(output)
        if doc["_missing"]:
            _fail("the protocol needs metrics that could not run here: "
                  + "; ".join(f"{p}/{n}: {r}" for p, n, r in doc["_missing"]), code=1)
        return
    if judgments is None:
        _fail("give --judgments SET (a built-in set or a .jsonl file) or --protocol NAME")
    later: list[tuple[str, str]] = []  # the learned models' fit checks, printed under the table
    result = _call(task.run, judgments, metrics, subset=subset, human=human, statistic=statistic,
                   correlation=correlation, level=level, baseline=baseline, epsilon=epsilon,
                   permutations=permutations, control=control, delta_band=delta_band, options=option,
                   resamples=resamples, seed=seed, duplicates=duplicates, text=text, data_dir=data_dir, cache=cache,
                   no_cache=no_cache, batch_size=batch_size, engine=engine, workers=workers, address=address,
                   actors=actors, output=output, force=force, say=_say_then(later))
    print_run(result, out, err)
    for name, reason in result.failed:
        out.print(f"[red]failed[/] {escape(name)}: {escape(reason)}", highlight=False)
    for label, message in later:
        out.print(f"[yellow]{label}[/]: {escape(message)}", highlight=False, soft_wrap=True)
    _wrote(output)
    _exit_if_incomplete(result.failed, result.not_run, output)


def _say(channel: str, text: str) -> None:
    """Where the library's messages go: notes beside the results on stdout, status lines on stderr."""
    (out if channel.startswith("out") else err).print(text, highlight=False, markup=False, soft_wrap=True)


def _say_then(later: list):
    """:func:`_say`, keeping the messages to print under the results table (``out-warning``, ``out-note``)."""
    def say(channel: str, text: str) -> None:
        if channel in ("out-warning", "out-note"):
            later.append((channel.split("-", 1)[1], text))
        else:
            _say(channel, text)
    return say


def _call(function, *args, **kwargs):
    """A library call as a command: its :class:`~meta_eval.errors.MetaEvalError` printed as one line with its exit
    code, Ctrl-C as a line saying the cache holds every finished batch (exit 130)."""
    from meta_eval.errors import MetaEvalError

    try:
        return function(*args, **kwargs)
    except MetaEvalError as exc:
        _fail(str(exc), exc.code)
    except KeyboardInterrupt:
        err.print("[yellow]interrupted[/]: every finished batch is in the cache; rerun the same command to resume")
        raise typer.Exit(130)


def _wrote(path: Optional[Path]) -> None:
    if path is not None:
        err.print(f"wrote {path}", highlight=False, markup=False)


def _check_output(path: Optional[Path], option: str = "--output", *, force: bool = False, judgments=None,
                  data_dir=None, cache=None, no_cache: bool = False, files=(), options=()) -> None:
    """:func:`meta_eval.report.outputs.check_output` against the run's inputs, exiting with code 2 on an
    :class:`~meta_eval.report.outputs.OutputError`: the judgment file (or, for a built-in set, its data folder), the
    score cache, the ``files`` read (pairs ``(what, path)``) and any ``-o KEY=VALUE`` naming an existing file (a saved
    model, a baseline file)."""
    from meta_eval.report.outputs import OutputError, check_output

    if path is None:
        return
    inputs, protected = list(files), []
    if judgments is not None:
        from meta_eval import judgments as judgment_sets
        if judgments.split(":")[0] in judgment_sets.BUILTIN:
            protected.append(("the judgment data folder", judgment_sets.data_dir(data_dir)))
        else:
            inputs.append(("the judgment file", Path(judgments)))
    if not no_cache:
        from meta_eval.scoring.cache import default_cache_path

        inputs.append(("the score cache", cache or default_cache_path()))
    for item in options:
        value = item.split("=", 1)[1] if "=" in item else ""
        if value and Path(value).expanduser().is_file():
            inputs.append((f"an input given by -o {item.split('=', 1)[0]}", Path(value).expanduser()))
    try:
        check_output(path, option, inputs=inputs, protected=protected, force=force)
    except OutputError as exc:
        _fail(str(exc))


def _atomic_write(path: Path, write) -> None:
    """:func:`meta_eval.report.outputs.atomic_write`, exiting with code 2 on an :class:`~meta_eval.report.outputs.OutputError`."""
    from meta_eval.report.outputs import OutputError, atomic_write

    try:
        atomic_write(path, write)
    except OutputError as exc:
        _fail(str(exc))


def _write_json(path: Path, doc: dict) -> None:
    """:func:`meta_eval.report.outputs.write_json` (marked as meta-eval's, atomic), exiting with code 2 on an
    :class:`~meta_eval.report.outputs.OutputError`."""
    from meta_eval.report.outputs import OutputError, write_json

    try:
        write_json(path, doc)
    except OutputError as exc:
        _fail(str(exc))


def _exit_if_incomplete(failed, not_run, output: Optional[Path]) -> None:
    """After the results were printed (and written): exit with code 1 if a metric failed while scoring or a metric
    named with --metrics could not run, in one line naming each and where the other metrics' results are."""
    if not failed and not not_run:
        return
    problems = [f"{n} failed: {r}" for n, r in failed] + [f"{n} not run: {r}" for n, r in not_run]
    where = f"written to {output}" if output is not None else "printed above"
    _fail("; ".join(problems) + f"; results for the other metrics were {where}", code=1)


def _significant_documents_level(jset, part, scored) -> dict[str, float | None]:
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
            err.print(f"  {variant}: {res.n} documents with p <= {part.max_p:g} kept, {res.skipped} left out",
                      highlight=False, markup=False)
    return values


def _run_protocol(name: str, *, data_dir, cache, no_cache, batch_size, resamples, seed, output,
                  engine=None) -> None:
    """``meta-eval run --protocol NAME``: every part of the protocol, meta-eval's number beside the printed one."""
    from meta_eval import judgments as judgment_sets
    from meta_eval.evaluate import evaluate, evaluate_level
    from meta_eval.protocol import ProtocolError, compare, load_protocol

    started = time.perf_counter()
    try:
        proto = load_protocol(name)
    except ProtocolError as exc:
        _fail(str(exc))
    out.print(f"[bold]{escape(proto.name)}[/]: {escape(proto.title)}", highlight=False)
    out.print(f"  {proto.citation}", highlight=False, markup=False)
    out.print(f"  printed numbers: {proto.source}", highlight=False, markup=False)
    parts_doc, all_cells, missing = [], [], []
    for part in proto.parts:
        try:
            jset = judgment_sets.load(part.judgments, data_dir, subset=part.subset, text=part.text)
            total_rows = len(jset)
            jset = jset.scored(part.human)
        except (judgment_sets.JudgmentError, judgment_sets.DataError) as exc:
            _fail(f"{proto.name}/{part.name}: {exc}")
        chosen, skipped = _choose_metrics(",".join(part.metrics), dict(part.options), what=jset.name,
                                          has_sources=jset.has_sources, has_references=jset.max_references > 0,
                                          language=jset.language)
        err.print(f"{proto.name}/{part.name}: {jset.name} ({jset.subset}), {len(jset)} rows"
                  f"{f' ({total_rows - len(jset)} without a {part.human} score left out)' if total_rows > len(jset) else ''}"
                  f", human {part.human}, {part.level} level, {part.correlation}", highlight=False, markup=False)
        store = _open_store(cache, no_cache)
        scored = _score_all(chosen, jset.examples(), store, batch_size, skipped, engine=engine)
        variants = {v for ms in scored for v in ms.scores}
        baseline = part.baseline if part.baseline in variants else None
        results = []
        if scored:
            try:
                if part.level == "global":
                    results = evaluate(jset.human(part.human), scored, baseline, part.correlation)
                else:
                    results = evaluate_level(jset, part.human, scored, part.level, baseline, part.correlation,
                                             resamples, seed)
            except ValueError as exc:
                _fail(f"{proto.name}/{part.name}: {exc}")
        by_variant = {r.metric: r for r in results}
        values = {v: getattr(r, part.correlation) for v, r in by_variant.items()}
        if part.max_p is not None:
            values = _significant_documents_level(jset, part, scored)
        cells = compare(part, values)
        all_cells += cells
        missing += [(part.name, n, r) for n, r in skipped]
        table = Table(title=_plain(f"{proto.name} / {part.name}: {jset.name} ({jset.subset}, n={len(jset)}), "
                                   f"{part.level}-level {part.correlation} with human '{part.human}'", "table.title"))
        test = "Williams p" if part.level == "global" else "perm. p"
        for col in ("paper's row", "variant", "meta-eval", "printed", "difference",
                    *([f"{test} vs {baseline}"] if baseline else []), "status"):
            table.add_column(_plain(col), justify="left" if col in ("paper's row", "variant", "status") else "right")
        style = {"match": "green", "known mismatch": "yellow", "MISMATCH": "bold red", "not run": "red"}
        for c in cells:
            r = by_variant.get(c.variant)
            p_value = None if r is None else (r.williams_p_vs_baseline if part.level == "global"
                                              else r.perm_p_vs_baseline)
            p_cell = ["(baseline)" if c.variant == baseline else f"{_fmt(p_value)} {_stars(p_value)}".strip()]
            table.add_row(_plain(c.label), _plain(c.variant), _fmt(c.meta_eval), _fmt(c.printed),
                          "-" if c.difference is None else f"{c.difference:+.3f}", *(p_cell if baseline else []),
                          f"[{style[c.status]}]{c.status}[/]")
        out.print(table)
        out.print(f"tolerance: |meta-eval - printed| <= {part.tolerance:g}", highlight=False)
        for c in cells:
            if c.reason and not c.matches:
                out.print(f"  {c.variant}: {c.reason}", highlight=False, markup=False, soft_wrap=True)
        for ms in scored:
            out.print(f"  {ms.signature}", highlight=False, markup=False, soft_wrap=True)
        for metric_name, reason in skipped:
            out.print(f"[red]not run[/] {escape(metric_name)}: {escape(reason)}", highlight=False)
        parts_doc.append({"name": part.name, "judgments": jset.name, "subset": jset.subset, "human": part.human,
                          "level": part.level, "correlation": part.correlation, "n": len(jset),
                          "rows_without_human": total_rows - len(jset), "metrics": list(part.metrics),
                          "options": dict(part.options), "baseline": baseline, "tolerance": part.tolerance,
                          **({"resamples": resamples, "seed": seed} if part.level != "global" else {}),
                          "cells": [c.as_dict() for c in cells], "results": [r.as_dict() for r in results],
                          "signatures": {ms.metric: ms.signature for ms in scored},
                          "skipped": [{"metric": n, "reason": r} for n, r in skipped]})
    counts = {k: sum(c.status == k for c in all_cells) for k in ("match", "known mismatch", "MISMATCH", "not run")}
    out.print(f"{proto.name}: {counts['match']} of {len(all_cells)} printed cells match within tolerance; "
              f"{counts['known mismatch']} known mismatches (reasons above); {counts['MISMATCH']} unexplained; "
              f"{counts['not run']} not run", highlight=False, markup=False)
    if output is not None:
        _write_json(output, {"protocol": proto.name, "title": proto.title, "citation": proto.citation,
                             "source": proto.source, "counts": counts, "parts": parts_doc,
                             "wall_seconds": round(time.perf_counter() - started, 3)})
        err.print(f"wrote {output}", highlight=False, markup=False)
    if missing:
        _fail("the protocol needs metrics that could not run here: "
              + "; ".join(f"{p}/{n}: {r}" for p, n, r in missing), code=1)


_TESTS = {"williams": "Williams test", "perm-both": "PERM-BOTH permutation test (Deutsch et al. 2021)",
          "perm-pairs": "permutation test swapping the two metrics' pair outcomes (Deutsch et al. 2023; "
                        "mt-metrics-eval's PairwisePermutationSigDiff)",
          "spa-perm-both": "permutation test swapping the two metrics' scores, both SPAs recomputed (WMT24)"}


def _ceiling(jset, dim, statistic, level, resamples, seed, epsilon, permutations):
    """The human ceiling at this statistic and level (a Ceiling with value None and the reason if undefined)."""
    from meta_eval.evaluate import ceiling

    try:
        return ceiling(jset, dim, statistic, level, n_resamples=resamples, seed=seed, epsilon=epsilon,
                       n_permutations=permutations)
    except ValueError as exc:
        from meta_eval.stats.ceiling import Ceiling

        return Ceiling(value=None, lower=None, upper=None, confidence=0.95, statistic=statistic, level=level,
                       slots=0, slot_values=(), rows_used=0, rows_excluded=0, resample=None, n_resamples=0,
                       resamples_used=0, note=f"human ceiling undefined: {exc}")


def _shared_totals(scored) -> dict[str, float]:
    """Seconds per shared component (the encoder) over every metric's scoring: a line of its own in the timing."""
    totals: dict[str, float] = {}
    for ms in scored:
        for component, seconds in ms.shared.items():
            totals[component] = totals.get(component, 0.0) + seconds
    return totals


def _plain(value, style: str = "") -> Text:
    """A table title, header or cell printed as written, never read as markup or emoji codes: metric, variant, set
    and file names come from data files and plugins (``[bold]x[/]`` prints as those ten characters)."""
    return Text(str(value), style=style)


def _print_results(jset, dim, results, scored, skipped, baseline, setting, ceiling=None, few=None) -> None:
    level, statistic = setting["level"], setting["statistic"]
    correlations = ("spearman", "pearson", "kendall")
    williams = setting["test"] == "williams"
    units = {"global": "rows", "summary": "documents", "system": "systems"}[level]
    what = f"{statistic} correlation" if statistic in correlations else statistic
    table = Table(title=_plain(f"{jset.name} ({jset.subset}, n={len(jset)}): {level}-level {what} with human '{dim}' "
                               f"(grouping: {setting['grouping']})", "table.title"))
    table.add_column("metric")
    first = [] if statistic in correlations else [statistic] + (["epsilon"] if statistic == "acc-t" else [])
    cols = first + (["spearman", "p", "pearson", "kendall", "n"] if williams else
                    ["spearman", "pearson", "kendall", f"n {units}", "95% CI"])
    partial = any(r.partial is not None or r.partial_p is not None for r in results)
    delta = any(r.delta is not None for r in results)
    cols += (["partial r (system)"] if partial else []) + (["Δ-band τ (pairs)"] if delta else [])
    for col in cols:
        table.add_column(col, justify="right")
    test = "Williams p" if williams else "perm. p"
    mark = " (!)" if few else ""  # the warning printed under the table
    table.add_column(_plain(f"{test} vs {baseline}" if baseline else test), justify="right")
    for r in results:
        p = r.williams_p_vs_baseline if williams else r.perm_p_vs_baseline
        star = _stars(p) if r.metric != baseline else ""
        better = star and (r.value or 0) > 0
        last = "(baseline)" if r.metric == baseline else f"{_fmt(p)} {star}".strip()
        eps = [] if statistic != "acc-t" else ["-" if r.epsilon is None else f"{r.epsilon:.3g}"]
        lead = [] if statistic in correlations else [_fmt(r.value), *eps]
        if williams:
            cells = [_fmt(r.spearman), _fmt(r.spearman_p), _fmt(r.pearson), _fmt(r.kendall), f"{r.n}{mark}"]
        else:
            ci = "-" if not r.ci else f"[{_fmt(r.ci[0])}, {_fmt(r.ci[1])}]"
            cells = [_fmt(r.spearman), _fmt(r.pearson), _fmt(r.kendall), f"{r.n}{mark}", ci]
        if partial:
            cells.append(_fmt(r.partial))
        if delta:
            cells.append(f"{_fmt(r.delta['tau'])} ({r.delta['n_pairs']})")
        table.add_row(_plain(r.metric), *lead, *cells, last, style="bold" if better else None)
    if ceiling is not None and ceiling.value is not None:
        ci = "-" if ceiling.lower is None else f"[{_fmt(ceiling.lower)}, {_fmt(ceiling.upper)}]"
        value = _fmt(ceiling.value)
        stat_cells = {statistic: value}
        lead = [] if statistic in correlations else [value] + (["-"] if statistic == "acc-t" else [])
        corr = [stat_cells.get(k, "-") for k in correlations]
        body = [corr[0], "-", corr[1], corr[2], str(ceiling.rows_used)] if williams else [*corr, "-", ci]
        body += ["-"] * (int(partial) + int(delta))
        last = ci if williams else "-"
        table.add_section()
        table.add_row("human ceiling", *lead, *body, last, style="italic")
    out.print(table)
    where = f"{setting['resampling']['method']}, {setting['resampling']['n_resamples']} resamples, " \
            f"seed {setting['seed']}" if setting.get("resampling") else None
    out.print(f"statistic: {statistic} ({setting['paper']}); level: {level}; grouping: {setting['grouping']}"
              + (f"; epsilon {setting['epsilon']:g}" if statistic == "acc-eq" else "")
              + (f"; {setting['n_permutations']} permutations per system pair" if statistic == "spa" else "")
              + (f"; 95% intervals: {where}" if where else ""), highlight=False, soft_wrap=True)
    if few:
        out.print(f"[yellow]warning[/] (!): {escape(few)}", highlight=False, soft_wrap=True)
    if partial:
        out.print(f"partial r (system): the {statistic} correlation controlling for the system (FRANK, Pagnoni et al. "
                  "2021: residuals after removing each system's mean)", highlight=False, soft_wrap=True)
    if delta:
        d = next(r.delta for r in results if r.delta is not None)
        upper = "inf" if d["upper"] is None else f"{d['upper']:g}"
        out.print(f"Δ-band τ: Kendall's tau over the system pairs whose metric difference |Δ| of system means is in "
                  f"[{d['lower']:g}, {upper}] (Deutsch, Dror & Roth 2022), with the number of pairs",
                  highlight=False, soft_wrap=True)
    if ceiling is not None:
        if ceiling.value is not None:
            out.print(f"human ceiling: each annotator against the mean of the others (leave-one-annotator-out, "
                      f"{ceiling.slots} annotator slots, {ceiling.rows_used} rows), same statistic and level"
                      + (f"; {ceiling.note}" if ceiling.note else ""), highlight=False, soft_wrap=True,
                      markup=False)
        else:
            out.print(f"human ceiling: none ({ceiling.note})", highlight=False, soft_wrap=True, markup=False)
    if baseline:
        out.print(f"** p < 0.01, * p < 0.05: one-sided {_TESTS[setting['test']]} that the metric's {what} "
                  f"exceeds {baseline}'s", highlight=False, soft_wrap=True, markup=False)
    notes = [f"{r.metric}: {r.note}" for r in results if r.note]
    for note in notes:
        out.print(f"note: {note}", highlight=False, markup=False)
    out.print("Signatures:")
    for ms in scored:
        out.print(f"  {ms.signature}", highlight=False, soft_wrap=True, markup=False)
    for ms in scored:
        err.print(f"  {ms.metric}: {ms.computed} computed, {ms.cached} from cache, {ms.seconds:.2f}s"
                  + (" (+ shared encoder)" if ms.shared else ""), highlight=False, markup=False)
    for component, seconds in _shared_totals(scored).items():
        users = ", ".join(ms.metric for ms in scored if component in ms.shared)
        err.print(f"  {component} (shared; loading and encoding, paid while scoring {users}): {seconds:.2f}s",
                  highlight=False, markup=False)
    for names, reason in _grouped(skipped):
        out.print(f"[yellow]skipped[/] {escape(', '.join(names))}: {escape(reason)}", highlight=False)


def _grouped(skipped: list[tuple[str, str]]) -> list[tuple[list[str], str]]:
    """The skipped metrics with the same reason on one line: [(names, reason)], in order of first appearance."""
    groups: dict[str, list[str]] = {}
    for name, reason in skipped:
        groups.setdefault(reason, []).append(name)
    return [(names, reason) for reason, names in groups.items()]


@app.command()
def score(
    metrics: str = typer.Option(..., "--metrics", "-m", help="Comma-separated metric names ('all': every "
                                "metric but the ones that run only when named)"),
    candidates: Optional[Path] = typer.Option(None, "--candidates", "-c", help="One candidate text per line"),
    references: list[Path] = typer.Option([], "--references", "-r", help="One reference per line, parallel to "
                                          "the candidates (repeat for several references)"),
    sources: Optional[Path] = typer.Option(None, "--sources", "-s", help="One source document per line"),
    input_: Optional[Path] = typer.Option(None, "--input", "-i", help="JSONL of {candidate, references, source} "
                                          "(instead of the line files)"),
    option: list[str] = typer.Option([], "--option", "-o", help="KEY=VALUE passed to every metric that takes KEY"),
    output: Optional[Path] = typer.Option(None, "--output", help="Write per-example scores (.jsonl, .csv, .tsv)"),
    force: bool = typer.Option(False, "--force", help="Replace an existing --output (or --save) file that "
                               "meta-eval did not write; never an input of the run"),
    cache: Optional[Path] = typer.Option(None, "--cache", help="Score cache file [default: user cache]"),
    no_cache: bool = typer.Option(False, "--no-cache", help="Compute everything, store nothing"),
    batch_size: int = typer.Option(256, "--batch-size", min=1, help="Examples per scoring batch"),
    engine: str = typer.Option("local", "--engine", help=_ENGINE_HELP),
    workers: Optional[int] = typer.Option(None, "--workers", min=1, help=_WORKERS_HELP),
    address: Optional[str] = typer.Option(None, "--address", help=_ADDRESS_HELP),
    actors: Optional[int] = typer.Option(None, "--actors", min=1, help=_ACTORS_HELP),
    show: int = typer.Option(3, "--show", min=0, help="Print the first N examples' scores"),
) -> None:
    """Score any candidates (with references and/or sources) with any metrics; per-example scores out."""
    import numpy as np

    from meta_eval.scoring.score_files import read_jsonl, read_line_files, write_scores

    if (candidates is None) == (input_ is None):
        _fail("give either --candidates (with --references/--sources line files) or --input FILE.jsonl")
    if output is not None and output.suffix.lower() not in (".jsonl", ".csv", ".tsv"):
        _fail(f"unknown output format {output.suffix!r}: use .jsonl, .csv or .tsv")
    texts = [("the candidates file", candidates), ("the input file", input_), ("the sources file", sources),
             *(("a references file", r) for r in references)]
    _check_output(output, force=force, cache=cache, no_cache=no_cache, files=texts, options=option)  # before scoring
    scoring = _make_engine(engine, workers, address, actors)
    try:
        examples = read_jsonl(input_) if input_ is not None else read_line_files(candidates, references, sources)
    except ValueError as exc:
        _fail(str(exc))
    what = "the input"
    chosen, skipped = _choose_metrics(metrics, _parse_options(option), what=what,
                                      has_sources=any(ex.source for ex in examples),  # the runner names
                                      has_references=any(ex.references for ex in examples))  # rows lacking one
    for names, reason in _grouped(skipped):
        err.print(f"[yellow]skipped[/] {escape(', '.join(names))}: {escape(reason)}", highlight=False)
    store = _open_store(cache, no_cache)
    failed: list[tuple[str, str]] = []
    scored = _score_all(chosen, examples, store, batch_size, skipped, failed, engine=scoring)
    scoring.close()
    for name, reason in failed:
        err.print(f"[red]failed[/] {escape(name)}: {escape(reason)}", highlight=False)
    if not scored:
        _fail("no metric could run: " + "; ".join([f"{n}: {r}" for n, r in skipped]
                                                   + [f"{n}: failed: {r}" for n, r in failed]), code=1 if failed else 2)
    columns = {v: s for ms in scored for v, s in ms.scores.items()}
    shown = min(show, len(examples))
    table = Table(title=f"{len(examples)} examples: per-variant summary and the first {shown} scores")
    for col in ("variant", "mean", "min", "max", *(f"#{i}" for i in range(shown))):
        table.add_column(col, justify="left" if col == "variant" else "right")
    for v, s_ in columns.items():
        table.add_row(_plain(v), f"{np.mean(s_):.4f}", f"{np.min(s_):.4f}", f"{np.max(s_):.4f}",
                      *(f"{s_[i]:.4f}" for i in range(shown)))
    out.print(table)
    out.print("Signatures:")
    for ms in scored:
        out.print(f"  {ms.signature}", highlight=False, soft_wrap=True, markup=False)
    if output is not None:
        _atomic_write(output, lambda tmp: write_scores(tmp, columns, [ms.signature for ms in scored]))
        err.print(f"wrote {output}", highlight=False, markup=False)
    _exit_if_incomplete(failed, _named_skips(skipped, metrics), output)  # --metrics is required


@app.command("metrics")
def list_metrics() -> None:
    """List the registered metrics, their variants and needs, and whether they can run here."""
    import meta_eval.metrics.registry as registry

    table = Table(title="Registered metrics")
    for col in ("name", "variants", "needs", "higher is better", "status"):
        table.add_column(col)
    notes = []
    for name in registry.names(include_named_only=True):  # learned models too, marked: they run only when named
        cls = registry.get_class(name)
        needs = ", ".join(n for n, flag in (("references", cls.needs_references), ("source", cls.needs_source))
                          if flag) or "-"
        reason = cls.unavailable_reason()
        if reason is not None:
            notes.append((name, reason))
        only = " (only when named)" if registry.is_named_only(name) or not cls.in_default_run else \
            "" if cls.in_quick_run else " (named or -m all)"
        table.add_row(name, ", ".join(cls.variants), needs, "yes" if cls.higher_is_better else "no",
                      f"[green]ready[/]{only}" if reason is None else f"[red]unavailable[/]{only} [{len(notes)}]")
    for name, reason in sorted(registry.plugin_errors().items()):  # broken plugins: listed, the others still work
        notes.append((name, reason))
        table.add_row(escape(name), "-", "-", "-", f"[red]broken plugin[/] [{len(notes)}]")
    out.print(table)
    out.print(f"(named or -m {registry.ALL}): neural; `meta-eval run` without --metrics keeps to the metrics that "
              f"take seconds on a CPU, `leaderboard publish` runs these too. (only when named): never in a default "
              f"choice nor in -m {registry.ALL}.", highlight=False, markup=False)
    for i, (name, reason) in enumerate(notes, 1):
        out.print(f"[{i}] {name}: {reason}", highlight=False, markup=False)
    from meta_eval.metrics import numeric

    out.print(f"Neural metrics compute in the {numeric.describe()}; --numeric or $META_EVAL_NUMERIC chooses it "
              f"(README: Numeric mode).", highlight=False, markup=False)


@app.command("protocols")
def list_protocols() -> None:
    """List the named protocols: papers' tables that `meta-eval run --protocol NAME` reproduces."""
    from meta_eval.protocol import ProtocolError, load_protocol, protocol_names

    table = Table(title="Protocols (meta-eval run --protocol NAME)")
    for col in ("name", "paper's table", "parts: set / human / level / correlation", "cells"):
        table.add_column(col)
    problems, citations = [], []
    for name in protocol_names():
        try:
            proto = load_protocol(name)
        except ProtocolError as exc:
            problems.append(str(exc))
            continue
        parts = "; ".join(f"{p.name}: {p.judgments} / {p.human} / {p.level} / {p.correlation}" for p in proto.parts)
        table.add_row(proto.name, proto.title, parts, str(sum(len(p.printed) for p in proto.parts)))
        citations.append(f"{proto.name}: {proto.citation}")
    out.print(table)
    for line in citations:
        out.print(line, highlight=False, markup=False, soft_wrap=True)
    for problem in problems:
        out.print(f"broken protocol file: {problem}", highlight=False, markup=False)
    if problems:
        raise typer.Exit(1)


def _describe_judgments(jset) -> None:
    """Print what one judgment set holds (``meta-eval judgments PATH``) and the levels its default dimension allows."""
    from dataclasses import replace

    from meta_eval.evaluate import check_level

    d = jset.describe()
    out.print(f"{d['origin']}: set {jset.name!r} ({jset.subset})", highlight=False, markup=False, soft_wrap=True)

    def add(what: str, value) -> None:
        out.print(f"  {what}: {value}", highlight=False, markup=False, soft_wrap=True)

    for key in ("task", "annotators", "licence", "data_source"):
        if d.get(key):
            add(key.replace("_", " "), d[key])
    add("rows", d["rows"])
    add("documents", d["documents"])
    systems = jset.systems()
    text = f"{len(systems)}" + (f" ({', '.join(systems)})" if 0 < len(systems) <= 12 else "")
    if d["rows_without_system"]:
        text += (f"; {d['rows_without_system']} of {d['rows']} rows have no system (the first: "
                 f"{d['first_row_without_system']})")
    add("systems", text)
    for dim, c in d["dimensions"].items():
        add(f"human {dim!r}" + (" (default)" if dim == d["default_dimension"] else ""),
            f"{c['rows_with_score']} rows with a score, {c['rows_without_score']} without")
    if len(d["dimensions"]) > 1:
        add("default dimension", f"{d['default_dimension']} (because {d['default_reason']}; run --human to choose)")
    add("rows without any score", d["rows_without_any_score"])
    add("references per row", ", ".join(f"{k}: {n} row{'s' if n != 1 else ''}"
                                        for k, n in d["references_per_row"].items()))
    add("rows with a source", f"{d['rows_with_source']} of {d['rows']}")
    n_pairs = d["repeated_pairs"]
    repeats = "none" if not n_pairs else (f"{n_pairs} pair{'s' if n_pairs > 1 else ''} ({d['rows_in_repeated_pairs']} "
                                          "rows), e.g. " + "; ".join(d["repeated_examples"]))
    add("repeated (document, system) pairs", f"{repeats}; policy: {d['duplicates_policy']}")
    dim = jset.default_dimension
    for level in ("global", "summary", "system"):
        prefix = ""
        try:
            scored = jset.scored(dim)
            if scored.duplicates == "error" and scored.repeated_pairs():
                prefix = "only with --duplicates mean or first; then "
                scored = replace(scored, duplicates="mean")
            units = check_level(scored, dim, level)
            add(f"{level} level ({dim})", f"{prefix}yes: {units}")
        except ValueError as exc:
            add(f"{level} level ({dim})", f"{prefix}no: {exc}")
    for note in d["notes"]:
        out.print(f"note: {note}", highlight=False, markup=False, soft_wrap=True)


@app.command("judgments")
def list_judgments(
    path: Optional[str] = typer.Argument(None, help="A .jsonl/.jsonl.gz file (or a built-in set) to describe: rows, "
                                         "documents, systems, dimensions, references per row, repeated pairs, "
                                         "rows without scores, levels. Without it: list the built-in sets"),
    judgments_path: Optional[str] = typer.Option(None, "--judgments", "-j", help="Same as PATH"),
    data_dir: Optional[Path] = typer.Option(None, "--data-dir", help="Folder of judgment files"),
) -> None:
    """List the built-in judgment sets, or describe one file: `meta-eval judgments PATH`."""
    import importlib

    from meta_eval import judgments as judgment_sets
    from meta_eval.judgments.files import verify_all

    if path is not None and judgments_path is not None and path != judgments_path:
        _fail(f"give the set once: PATH {path!r} or --judgments {judgments_path!r}")
    if (path or judgments_path) is not None:
        try:
            _describe_judgments(judgment_sets.load(path or judgments_path, data_dir, download=False))
        except (judgment_sets.JudgmentError, judgment_sets.DataError) as exc:
            _fail(str(exc))
        return
    root = judgment_sets.data_dir(data_dir)
    table = Table(title=f"Judgment sets (data: {root})")
    for col in ("name", "task", "subset", "rows", "docs", "systems", "human dimensions (default first)", "sources",
                "refs"):
        table.add_column(col, justify="right" if col in ("rows", "docs", "systems", "refs") else "left",
                         no_wrap=col == "name")
    origin = Table(title="Where each set comes from")
    for col in ("name", "annotators", "licence", "source"):
        origin.add_column(col, no_wrap=col == "name")
    problems_seen = []
    for name, module_name in judgment_sets.BUILTIN.items():
        module = importlib.import_module(module_name)
        files = [v for v in vars(module).values() if type(v).__name__ == "DataFile"]
        problems = verify_all(files, root)
        if problems:
            table.add_row(name, "-", "-", "-", "-", "-", "[red]files missing or corrupt[/]", "-", "-")
            problems_seen += [f"{name}: {f.relpath}: {p}" for f, p in problems]
            continue
        jset = judgment_sets.load(name, root, download=False)
        dims = [jset.default_dimension] + [d for d in jset.dimensions if d != jset.default_dimension]
        subsets = getattr(module, "SUBSETS", None)
        subset = jset.subset + (f" (of {', '.join(subsets)})" if subsets and len(subsets) > 1 else "")
        table.add_row(name, jset.task or "-", subset, str(len(jset)), str(jset.documents()),
                      str(len(jset.systems())), ", ".join(dims), "yes" if jset.has_sources else "no",
                      str(jset.max_references))
        origin.add_row(name, jset.annotators or "-", jset.licence or "-", jset.data_source or "-")
    out.print(table)
    if origin.row_count:
        out.print(origin)
    for line in problems_seen:
        out.print(f"[yellow]{line}[/]", highlight=False)


def _learned_fit_checks(chosen, scored, jset) -> dict[str, dict]:
    """Print a warning for every learned model scored on rows it was fitted on (:func:`metrics.learned.fit_checks`)
    and return, per variant of a learned model, the fields its ``run --output`` result entry gets."""
    from meta_eval.metrics.learned import fit_checks

    ran = {ms.metric for ms in scored}
    checks = fit_checks([m for m in chosen if m.name in ran], jset.examples(), jset.name, jset.subset)
    fields = {}
    for metric in chosen:
        check = checks.get(metric.name)
        if check is None:
            continue
        message = check.message()
        if message is not None:
            label = "warning" if check.in_sample else "note"
            out.print(f"[yellow]{label}[/]: {escape(message)}", highlight=False, soft_wrap=True)
        fields.update({variant: check.as_dict() for variant in metric.variants})
    return fields


@app.command()
def learn(
    judgments: str = typer.Option(..., "--judgments", "-j", help="chaganty, essays, summeval, realsumm, or a .jsonl "
                                  "file"),
    metrics: str = typer.Option(..., "--metrics", "-m", help="Comma-separated metrics whose variants are the "
                                "features (a metric that needs source documents or references the set lacks is "
                                "skipped, with the reason)"),
    features: Optional[str] = typer.Option(None, "--features", help="Comma-separated variants to use as features "
                                           "[default: every variant of the chosen metrics]"),
    target: Optional[str] = typer.Option(None, "--target", help="A human dimension, or geomean:dimA,dimB (each "
                                         "rescaled to [1, 2], then their geometric mean) [default: the set's "
                                         "default dimension]"),
    alpha: float = typer.Option(1.0, "--alpha", min=0.0, help="Ridge penalty on the standardised weights"),
    splits: int = typer.Option(1000, "--splits", min=1, help="Random train/held-out splits per protocol"),
    train_fraction: float = typer.Option(0.5, "--train-fraction", help="Share of documents (grouped) or rows "
                                         "(ungrouped) used for fitting in each split"),
    seed: int = typer.Option(0, "--seed", help="Seed of the splits (every feature set sees the same splits)"),
    search: str = typer.Option("auto", "--search", help="auto (exhaustive if there are at most 1,024 subsets, "
                               "else greedy), exhaustive (every subset), greedy (forward selection), or none (the "
                               "full feature set only)"),
    no_search: bool = typer.Option(False, "--no-search", help="Same as --search none"),
    max_size: Optional[int] = typer.Option(None, "--max-size", min=1, help="Largest feature set (exhaustive: "
                                           "subsets up to this size; greedy: stop at this size)"),
    search_splits: int = typer.Option(100, "--search-splits", min=1, help="Splits that screen feature sets during "
                                      "a search (the first N of the seeded splits); the finalists are evaluated on "
                                      "all --splits"),
    min_gain: float = typer.Option(0.001, "--min-gain", min=0.0, help="Greedy: add a feature only if it raises the "
                                   "mean held-out correlation by more than this"),
    top: int = typer.Option(10, "--top", min=1, help="Feature sets shown in the table"),
    correlation: str = typer.Option("spearman", "--correlation", help="Held-out correlation: spearman, pearson "
                                    "or kendall"),
    subset: Optional[str] = typer.Option(None, "--subset", help="chaganty/essays: 'sms' (default) or 'all'"),
    option: list[str] = typer.Option([], "--option", "-o", help="KEY=VALUE passed to every chosen metric that "
                                     "takes KEY (saved with the model)"),
    save: Optional[str] = typer.Option(None, "--save", help="Save the final model (fitted on all rows) as NAME "
                                       "(then usable as --metrics learned:NAME; stored in $META_EVAL_HOME/learned or "
                                       "the user data dir) or as a path ending in .json"),
    output: Optional[Path] = typer.Option(None, "--output", help="Write the results as JSON"),
    force: bool = typer.Option(False, "--force", help="Replace an existing --output (or --save) file that "
                               "meta-eval did not write; never an input of the run"),
    data_dir: Optional[Path] = typer.Option(None, "--data-dir", help="Folder of judgment files [default: "
                                            "$META_EVAL_DATA, else the user cache]"),
    cache: Optional[Path] = typer.Option(None, "--cache", help="Score cache file [default: user cache]"),
    no_cache: bool = typer.Option(False, "--no-cache", help="Compute everything, store nothing"),
    batch_size: int = typer.Option(256, "--batch-size", min=1, help="Examples per scoring batch"),
) -> None:
    """Learn a metric: ridge regression from metric scores to human scores (Scialom et al. 2019, sec. 2.4).

    Every split fits on a random half and correlates on the other half, by document (grouped) and by row
    (ungrouped); feature sets are ranked by the mean held-out grouped correlation: every subset when there are at
    most 1,024, else greedy forward selection (--search). The final model is fitted on all rows.
    """
    from meta_eval import judgments as judgment_sets
    from meta_eval.learning import pipeline as learn_run
    from meta_eval.metrics.learned import model_path

    try:
        search = learn_run.check_settings(correlation, train_fraction, search, no_search)
        save_path = None if save is None else model_path(save)
    except ValueError as exc:
        _fail(str(exc))
    given = dict(force=force, judgments=judgments, data_dir=data_dir, cache=cache, no_cache=no_cache, options=option)
    _check_output(save_path, "--save", **given)  # before any loading, scoring or fitting
    _check_output(output, **given, files=[("the --save model", save_path)] if save_path else [])
    started = time.perf_counter()
    try:
        data = learn_run.load_target(judgments, data_dir, subset, target)
    except (judgment_sets.JudgmentError, judgment_sets.DataError, ValueError) as exc:
        _fail(str(exc))
    jset, y, spec = data.jset, data.y, data.spec
    options = _parse_options(option)
    chosen, skipped = _choose_metrics(metrics, options, what=jset.name, has_sources=jset.has_sources,
                                      has_references=jset.max_references > 0, language=jset.language)
    try:
        skipped = learn_run.check_metrics(chosen, skipped, jset)
    except ValueError as exc:
        _fail(str(exc))
    err.print(f"{jset.name} ({jset.subset}): {len(jset)} rows, {jset.documents()} documents, target: {spec}"
              + (f" ({data.dropped} rows without it left out)" if data.dropped else ""), highlight=False)
    for names, reason in _grouped(skipped):
        err.print(f"  [yellow]skipped[/] {escape(', '.join(names))}: {escape(reason)}", highlight=False)
    groups, grouping_note = learn_run.document_groups(jset)
    if grouping_note:
        err.print(f"  [yellow]note[/]: {grouping_note}", highlight=False)
    store = _open_store(cache, no_cache)
    failed: list[tuple[str, str]] = []
    scored = _score_all(chosen, jset.examples(), store, batch_size, failed)
    if failed:
        _fail("; ".join(f"{n}: {r}" for n, r in failed))
    try:
        names, columns = learn_run.feature_columns(chosen, scored, features)
    except ValueError as exc:
        _fail(str(exc))
    try:
        outcome, learn_seconds = learn_run.search(columns, y, groups, strategy=search, max_size=max_size, alpha=alpha,
                                                  splits=splits, train_fraction=train_fraction, seed=seed,
                                                  correlation=correlation, search_splits=search_splits, top=top,
                                                  min_gain=min_gain)
    except ValueError as exc:
        _fail(str(exc))
    results, best = outcome.results, outcome.best

    def ci(p):
        return "-" if p is None or p.low is None else f"[{_fmt(p.low)}, {_fmt(p.high)}]"

    title = (f"{jset.name} ({jset.subset}, n={len(jset)}, {jset.documents()} documents): ridge (alpha={alpha:g}) to "
             f"'{spec}', held-out {correlation} over {splits} splits ({train_fraction:.0%} train); search: "
             f"{outcome.strategy}")
    table = Table(title=title)
    grouped = groups is not None
    columns_shown = (("#", "features", "size", "grouped (by document)", "95% interval", "ungrouped",
                      "ungrouped - grouped") if grouped else ("#", "features", "size", "ungrouped (rows)",
                                                              "95% interval"))
    for col in columns_shown:
        table.add_column(col, justify="left" if col == "features" else "right")
    for i, r in enumerate(results[:top], 1):
        cells = ((_fmt(r.grouped.mean), ci(r.grouped), _fmt(r.ungrouped.mean), _fmt(r.overstatement)) if grouped
                 else (_fmt(r.ungrouped.mean), ci(r.ungrouped)))
        table.add_row(str(i), " + ".join(r.features), str(r.size), *cells, style="bold" if i == 1 else None)
    out.print(table)
    out.print(f"search: {outcome.strategy} ({outcome.reason}); {outcome.summary()}"
              + (f"; {top} of {len(results)} shown" if len(results) > top else ""), highlight=False)
    if outcome.path:
        stage = f"first {outcome.search_splits} splits" if outcome.screened else f"all {splits} splits"
        steps = ", ".join(f"{'+' if p['accepted'] else 'not +'}{p['added']} {p['score']:.4f}" for p in outcome.path)
        out.print(f"greedy path (mean held-out {correlation}, {best.primary.protocol}, {stage}): {steps}",
                  highlight=False)

    model = learn_run.final_model(best, columns, y, chosen, scored,
                                  [_metric_config(type(m), options) for m in chosen], data, alpha)
    what = "full feature set" if outcome.strategy == "none" else "best feature set"
    p = best.primary
    wtable = Table(title=f"Weights of the {what}: mean ± sd over the {p.protocol} splits, and the final fit on all "
                         f"{len(jset)} rows")
    for col in ("feature", "standardised (splits)", "raw (splits)", "standardised (final)", "raw (final)"):
        wtable.add_column(col, justify="left" if col == "feature" else "right")
    for j, f in enumerate(best.features):
        wtable.add_row(f, f"{p.weight_std_mean[j]:.4f} ± {p.weight_std_sd[j]:.4f}",
                       f"{p.weight_raw_mean[j]:.4f} ± {p.weight_raw_sd[j]:.4f}", f"{model.weights[j]:.4f}",
                       f"{model.raw_weights[j]:.4f}")
    wtable.add_row("(intercept)", f"{p.intercept_std[0]:.4f} ± {p.intercept_std[1]:.4f}",
                   f"{p.intercept_raw[0]:.4f} ± {p.intercept_raw[1]:.4f}", f"{model.intercept:.4f}",
                   f"{model.raw_intercept:.4f}")
    out.print(wtable)
    if best.grouped is not None and best.overstatement is not None:
        out.print(f"{' + '.join(best.features)}: held-out {correlation} {_fmt(best.grouped.mean)} "
                  f"{ci(best.grouped)} with each document on one side; {_fmt(best.ungrouped.mean)} "
                  f"{ci(best.ungrouped)} with rows split at random: ungrouped - grouped = {best.overstatement:+.4f} "
                  f"({'the ungrouped protocol overstates' if best.overstatement > 0 else 'no overstatement'})",
                  highlight=False)
    else:
        out.print(f"{' + '.join(best.features)}: held-out {correlation} {_fmt(best.ungrouped.mean)} "
                  f"{ci(best.ungrouped)} with rows split at random", highlight=False)
    err.print(f"  learning: {learn_seconds:.2f}s ({outcome.evaluated} feature set(s) searched, {len(results)} "
              f"evaluated on {splits} splits x {2 if grouped else 1} protocol(s))", highlight=False)

    if save_path is not None:
        try:
            learn_run.save_model(model, save_path)
        except ValueError as exc:
            _fail(str(exc))
        use = f"learned:{save}"
        out.print(f"saved {use} ({len(model.features)} features) to {save_path}; score with --metrics {use}",
                  highlight=False, soft_wrap=True)
    if output is not None:
        settings = {"correlation": correlation, "alpha": alpha, "splits": splits, "train_fraction": train_fraction,
                    "seed": seed}
        doc = learn_run.output_document(data, outcome, model, names, scored, skipped, grouping_note, settings,
                                        save_path, learn_seconds, time.perf_counter() - started)
        _write_json(output, doc)
        err.print(f"wrote {output}")

leaderboard_app = typer.Typer(no_args_is_help=True, help="Publish comparison leaderboards.")
app.add_typer(leaderboard_app, name="leaderboard")


@leaderboard_app.command("publish")
def leaderboard_publish(
    judgments: str = typer.Option(..., "--judgments", "-j", help="Comma-separated judgment sets"),
    out_dir: Path = typer.Option(..., "--out", help="Folder to write results.json, README.md and index.html"),
    metrics: Optional[str] = typer.Option(None, "--metrics", "-m", help="Comma-separated metric names (default "
                                          "and 'all': every registered metric that can run on each set, the neural "
                                          "ones included)"),
    variants: Optional[str] = typer.Option(None, "--variants", help="Only these variants (default: all but "
                                           "ROUGE's precision and recall)"),
    option: list[str] = typer.Option([], "--option", "-o", help="KEY=VALUE passed to every metric that takes KEY"),
    resamples: int = typer.Option(1000, "--resamples", min=10, help="Bootstrap and permutation resamples"),
    seed: int = typer.Option(0, "--seed", help="Seed of every resampling"),
    correlation: str = typer.Option("spearman", "--correlation", help="Correlation for the significance tests"),
    alpha: float = typer.Option(0.05, "--alpha", help="Significance level of the clusters"),
    correction: str = typer.Option("holm", "--correction", help="holm, bh or none"),
    data_dir: Optional[Path] = typer.Option(None, "--data-dir", help="Folder of judgment files"),
    cache: Optional[Path] = typer.Option(None, "--cache", help="Score cache file [default: user cache]"),
    no_cache: bool = typer.Option(False, "--no-cache", help="Compute everything, store nothing"),
    batch_size: int = typer.Option(256, "--batch-size", min=1, help="Examples per scoring batch"),
    force: bool = typer.Option(False, "--force", help="Replace the leaderboard in --out, or write into a non-empty "
                               "folder that meta-eval did not write"),
    engine: str = typer.Option("local", "--engine", help=_ENGINE_HELP),
    workers: Optional[int] = typer.Option(None, "--workers", min=1, help=_WORKERS_HELP),
    address: Optional[str] = typer.Option(None, "--address", help=_ADDRESS_HELP),
    actors: Optional[int] = typer.Option(None, "--actors", min=1, help=_ACTORS_HELP),
    duplicates: Optional[str] = typer.Option(None, "--duplicates", help="Rows repeating a (document, system) "
                                             "pair: error, mean or first, as for `meta-eval run` \\[default: "
                                             "the set's declared policy]"),
) -> None:
    """Score sets with metrics and publish a reproducible leaderboard (levels, intervals, significance).

    ``-j`` takes set names, each optionally with a subset after a colon (``-j
    wmt21-mqm-ted:en-de,wmt21-mqm-ted:zh-en``);
    every set or subset becomes one section of the leaderboard.
    """
    import shlex

    from meta_eval.leaderboard.publish import BoardLock, PublishError, write_leaderboard

    if correlation not in ("spearman", "pearson", "kendall"):
        _fail(f"--correlation must be spearman, pearson or kendall, not {correlation!r}")
    if correction not in ("holm", "bh", "none"):
        _fail(f"--correction must be holm, bh or none, not {correction!r}")
    board = BoardLock(out_dir, force)
    try:
        board.__enter__()  # before any scoring: the folder is checked, made if missing and held until written
    except PublishError as exc:
        _fail(str(exc))
    try:
        scoring = _make_engine(engine, workers, address, actors)
        try:
            blocks = _publish_blocks(judgments, metrics, variants, option, resamples, seed, correlation, alpha,
                                     correction, data_dir, cache, no_cache, batch_size, scoring, duplicates)
        finally:
            scoring.close()
        command = "meta-eval leaderboard publish " + " ".join(shlex.quote(a) for a in sys.argv[3:]) \
            if sys.argv[1:3] == ["leaderboard", "publish"] else "meta-eval leaderboard publish"
        try:
            write_leaderboard(out_dir, out_dir.name, blocks, command, n_resamples=resamples, seed=seed,
                              confidence=0.95, alpha=alpha, correction=correction, primary=correlation)
        except PublishError as exc:
            _fail(str(exc), code=1)
        board.written()
    finally:
        board.__exit__(None, None, None)
    out.print(f"wrote {out_dir}/results.json, README.md, index.html")


def _publish_blocks(judgments, metrics, variants, option, resamples, seed, correlation, alpha, correction, data_dir,
                    cache, no_cache, batch_size, scoring, duplicates=None) -> list[dict]:
    """Score every set of ``leaderboard publish`` on the engine ``scoring`` and build its leaderboard block."""
    from meta_eval import judgments as judgment_sets
    from meta_eval.leaderboard.publish import default_variant_filter, set_results
    from meta_eval.scoring.chunks import spread
    from meta_eval.report.progress import resampling_progress

    keep = set(v.strip() for v in variants.split(",")) if variants else None
    variant_filter = (lambda v: v in keep) if keep else default_variant_filter
    options = _parse_options(option)
    blocks = []
    for name in [n.strip() for n in judgments.split(",") if n.strip()]:
        subset = None
        if ":" in name and name.split(":", 1)[0] in judgment_sets.BUILTIN:
            name, subset = name.split(":", 1)
        try:
            jset = judgment_sets.load(name, data_dir, subset=subset)
            dim = jset.default_dimension
            jset = jset.scored(dim)
            jset, report = jset.resolve_duplicates(duplicates)  # before any scoring; None: the set's policy
            if report.message:
                err.print(report.message, highlight=False, markup=False, soft_wrap=True)
        except (judgment_sets.JudgmentError, judgment_sets.DataError) as exc:
            _fail(str(exc))
        chosen, skipped = _choose_metrics(metrics, options, what=jset.name, has_sources=jset.has_sources,
                                          has_references=jset.max_references > 0, language=jset.language,
                                          full_default=True)  # a published board has every metric
        err.print(f"{jset.name} ({jset.subset}): {len(jset)} rows, human {dim}; metrics: "
                  f"{', '.join(m.name for m in chosen)}", highlight=False, markup=False)
        store = _open_store(cache, no_cache)
        failed: list = []
        examples = jset.examples()
        found: dict = {}
        scored = _score_all(chosen, examples, store, batch_size, skipped, failed, engine=scoring, degenerate=found)
        for names, reason in _grouped(skipped):
            err.print(f"  [yellow]skipped[/] {escape(', '.join(names))}: {escape(reason)}", highlight=False)
        if failed:  # a leaderboard without a metric it was asked for is not published; the scores are cached
            _fail(f"{jset.name}: " + "; ".join(f"{n} failed: {r}" for n, r in failed)
                  + "; nothing was written (every finished batch is in the cache: rerun to resume)", code=1)
        if not scored:
            _fail(f"{jset.name}: no metric could run")
        not_measured = _degenerate_rows(chosen, scored, examples, found)
        try:
            with resampling_progress() as advance, spread(scoring, advance):
                block = set_results(jset, dim, scored, n_resamples=resamples, seed=seed, alpha=alpha,
                                    correction=correction, primary=correlation, variant_filter=variant_filter)
        except ValueError as exc:
            _fail(f"{jset.name}: {exc}")
        block["skipped"] = [{"metric": n, "reason": r} for n, r in skipped]
        block["not_measured"] = {m: r for m, r in not_measured.items() if r["rows"]}
        blocks.append(block)
    return blocks


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
    table = Table(title=f"Leaderboards in {root}")
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
