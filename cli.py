"""The ``meta-eval`` command line (typer).

``meta-eval run`` scores a judgment set with metrics and reports their correlation with the humans;
``meta-eval metrics`` lists the registered metrics and whether they can run here; ``meta-eval judgments`` lists the
judgment sets. Heavy libraries are imported only inside the metrics that need them, so these stay fast.
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.table import Table

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Which automatic text-evaluation metric agrees best with people?")
out = Console()
err = Console(stderr=True)


def _fail(message: str, code: int = 2) -> None:
    err.print(f"[bold red]error:[/] {message}", highlight=False)
    raise typer.Exit(code)


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
    """The options that ``function`` (default: the metric's constructor) takes by name."""
    import inspect

    accepted = inspect.signature(function or cls.__init__).parameters
    return {k: v for k, v in options.items() if k in accepted and k not in ("self", "cls", "args", "kwargs")}


def _choose_metrics(requested: Optional[str], options: dict[str, str], *, what: str, has_sources: bool,
                    has_references: bool):
    """(metric objects to run, [(name, reason)] skipped) for data described by ``what``."""
    import metrics.registry as registry

    names = [m.strip() for m in requested.split(",") if m.strip()] if requested else registry.names()
    chosen, skipped = [], []
    for name in names:
        try:
            cls = registry.get_class(name)
        except registry.UnknownMetricError as exc:
            _fail(str(exc))
        reason = cls.unavailable_reason(**_metric_config(cls, options, cls.unavailable_reason))
        if reason is None and cls.needs_source and not has_sources:
            reason = f"needs source documents, which {what} does not have"
        if reason is None and cls.needs_references and not has_references:
            reason = f"needs references, which {what} does not have"
        if reason is None:
            try:
                chosen.append(cls(**_metric_config(cls, options)))
            except (ValueError, TypeError) as exc:
                reason = f"bad configuration: {exc}"
        if reason is not None:
            skipped.append((name, reason))
    unused = set(options) - {k for m in chosen for k in _metric_config(type(m), options)}
    if unused and chosen:
        _fail(f"no chosen metric takes the option(s) {', '.join(sorted(unused))}")
    return chosen, skipped


def _score_all(chosen, examples, store, batch_size, skipped):
    """Score with every chosen metric (progress bars); a metric that fails is added to ``skipped``."""
    from meta_eval.progress import progress_bar
    from meta_eval.runner import score_examples

    scored = []
    try:
        for metric in chosen:
            try:
                with progress_bar(metric.name) as advance:
                    scored.append(score_examples(metric, examples, store, batch_size, advance))
            except KeyboardInterrupt:
                raise
            except Exception as exc:  # a metric that fails is reported, the others still run
                skipped.append((metric.name, f"failed: {type(exc).__name__}: {exc}"))
    except KeyboardInterrupt:
        err.print("[yellow]interrupted[/]: every finished batch is in the cache; rerun the same command to resume")
        raise typer.Exit(130)
    finally:
        if store is not None:
            store.close()
    return scored


@app.command()
def run(
    judgments: str = typer.Option(..., "--judgments", "-j", help="chaganty, essays, summeval, realsumm, or a .jsonl file"),
    metrics: Optional[str] = typer.Option(None, "--metrics", "-m", help="Comma-separated metric names "
                                          "(default: every registered metric that can run on the set)"),
    human: Optional[str] = typer.Option(None, "--human", help="Human dimension (default: the set's default)"),
    baseline: Optional[str] = typer.Option(None, "--baseline", help="Variant for Williams tests [default: "
                                           "rougeL-f when scored]"),
    correlation: str = typer.Option("spearman", "--correlation", help="spearman, pearson or kendall: sorts the "
                                    "table and is used by the Williams test"),
    subset: Optional[str] = typer.Option(None, "--subset", help="chaganty/essays: 'sms' (the SMS paper's "
                                         "subset, default) or 'all'"),
    option: list[str] = typer.Option([], "--option", "-o", help="KEY=VALUE passed to every chosen metric that "
                                     "takes KEY, e.g. vectors=spacy:en_core_web_md"),
    output: Optional[Path] = typer.Option(None, "--output", help="Write the results as JSON"),
    data_dir: Optional[Path] = typer.Option(None, "--data-dir", help="Folder of judgment files [default: "
                                            "$META_EVAL_DATA, else the user cache]"),
    cache: Optional[Path] = typer.Option(None, "--cache", help="Score cache file [default: user cache]"),
    no_cache: bool = typer.Option(False, "--no-cache", help="Compute everything, store nothing"),
    batch_size: int = typer.Option(256, "--batch-size", min=1, help="Examples per scoring batch"),
    level: str = typer.Option("global", "--level", help="global (all rows; Williams tests, as the SMS paper), "
                              "summary or system (Deutsch et al. 2021: bootstrap intervals, permutation tests)"),
    resamples: int = typer.Option(1000, "--resamples", min=10, help="Resamples at the summary/system level"),
    seed: int = typer.Option(0, "--seed", help="Seed of the resampling at the summary/system level"),
) -> None:
    """Score a judgment set with metrics and report their correlations with the human scores."""
    import judgments as judgment_sets
    from meta_eval.cache import ScoreCache, default_cache_path
    from meta_eval.evaluate import evaluate

    if correlation not in ("spearman", "pearson", "kendall"):
        _fail(f"--correlation must be spearman, pearson or kendall, not {correlation!r}")
    if level not in ("global", "summary", "system"):
        _fail(f"--level must be global, summary or system, not {level!r}")
    started = time.perf_counter()
    try:
        jset = judgment_sets.load(judgments, data_dir, subset=subset)
        dim = human or jset.default_dimension
        total_rows = len(jset)
        jset = jset.scored(dim)
    except (judgment_sets.JudgmentError, judgment_sets.DataError) as exc:
        _fail(str(exc))
    dropped = total_rows - len(jset)
    if len(jset) < 4:
        _fail(f"{jset.name}: only {len(jset)} rows have a {dim!r} score; at least 4 are needed")
    chosen, skipped = _choose_metrics(metrics, _parse_options(option), what=jset.name,
                                      has_sources=jset.has_sources, has_references=jset.max_references > 0)
    err.print(f"{jset.name} ({jset.subset}): {len(jset)} rows, {jset.documents()} documents, human: {dim}"
              + (f" ({dropped} rows without a {dim} score left out)" if dropped else ""), highlight=False)
    store = None if no_cache else ScoreCache(cache or default_cache_path())
    scored = _score_all(chosen, jset.examples(), store, batch_size, skipped)
    if not scored:
        _fail("no metric could run: " + "; ".join(f"{n}: {r}" for n, r in skipped))
    variants = [v for ms in scored for v in ms.scores]
    if baseline is None and "rougeL-f" in variants:
        baseline = "rougeL-f"
    elif baseline is not None and baseline not in variants:
        _fail(f"baseline {baseline!r} was not scored; scored variants: {', '.join(variants)}")
    if level == "global":
        results = evaluate(jset.human(dim), scored, baseline, correlation)
    else:
        from meta_eval.evaluate import evaluate_level

        try:
            results = evaluate_level(jset, dim, scored, level, baseline, correlation, resamples, seed)
        except ValueError as exc:
            _fail(str(exc))
    results.sort(key=lambda r: float("inf") if getattr(r, correlation) is None else -getattr(r, correlation))
    _print_results(jset, dim, results, scored, skipped, baseline, correlation)
    if output is not None:
        doc = {"judgments": jset.name, "subset": jset.subset, "human": dim, "n": len(jset), "rows_without_human":
               dropped, "level": level, "correlation": correlation, "baseline": baseline,
               **({"resamples": resamples, "seed": seed} if level != "global" else {}),
               "results": [r.as_dict() for r in results],
               "skipped": [{"metric": n, "reason": r} for n, r in skipped],
               "timing": {ms.metric: {"seconds": round(ms.seconds, 3), "computed": ms.computed,
                                      "cached": ms.cached} for ms in scored},
               "wall_seconds": round(time.perf_counter() - started, 3)}
        output.parent.mkdir(parents=True, exist_ok=True)
        tmp = output.with_name(output.name + ".tmp")
        tmp.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
        tmp.replace(output)
        err.print(f"wrote {output}")


def _print_results(jset, dim, results, scored, skipped, baseline, correlation) -> None:
    level = results[0].level if results else "global"
    units = {"global": "rows", "summary": "documents", "system": "systems"}[level]
    table = Table(title=f"{jset.name} ({jset.subset}, n={len(jset)}): {level}-level correlation with human '{dim}'")
    table.add_column("metric")
    if level == "global":
        for col in ("spearman", "p", "pearson", "kendall", "n"):
            table.add_column(col, justify="right")
        table.add_column(f"Williams p vs {baseline}" if baseline else "Williams p", justify="right")
    else:
        for col in ("spearman", "pearson", "kendall", f"n {units}", "95% CI"):
            table.add_column(col, justify="right")
        table.add_column(f"perm. p vs {baseline}" if baseline else "perm. p", justify="right")
    for r in results:
        p = r.williams_p_vs_baseline if level == "global" else r.perm_p_vs_baseline
        star = _stars(p) if r.metric != baseline else ""
        better = star and (getattr(r, correlation) or 0) > 0
        last = "(baseline)" if r.metric == baseline else f"{_fmt(p)} {star}".strip()
        if level == "global":
            cells = [_fmt(r.spearman), _fmt(r.spearman_p), _fmt(r.pearson), _fmt(r.kendall), str(r.n)]
        else:
            ci = "-" if not r.ci else f"[{_fmt(r.ci[0])}, {_fmt(r.ci[1])}]"
            cells = [_fmt(r.spearman), _fmt(r.pearson), _fmt(r.kendall), str(r.n), ci]
        table.add_row(r.metric, *cells, last, style="bold" if better else None)
    out.print(table)
    if baseline:
        test = "Williams test" if level == "global" else "PERM-BOTH permutation test (Deutsch et al. 2021)"
        out.print(f"** p < 0.01, * p < 0.05: one-sided {test} that the metric's {correlation} correlation "
                  f"exceeds {baseline}'s", highlight=False)
    notes = [f"{r.metric}: {r.note}" for r in results if r.note]
    for note in notes:
        out.print(f"note: {note}", highlight=False)
    out.print("Signatures:")
    for ms in scored:
        out.print(f"  {ms.signature}", highlight=False, soft_wrap=True)
    for ms in scored:
        err.print(f"  {ms.metric}: {ms.computed} computed, {ms.cached} from cache, {ms.seconds:.2f}s",
                  highlight=False)
    for name, reason in skipped:
        out.print(f"[yellow]skipped[/] {name}: {reason}", highlight=False)


@app.command()
def score(
    metrics: str = typer.Option(..., "--metrics", "-m", help="Comma-separated metric names"),
    candidates: Optional[Path] = typer.Option(None, "--candidates", "-c", help="One candidate text per line"),
    references: list[Path] = typer.Option([], "--references", "-r", help="One reference per line, parallel to "
                                          "the candidates (repeat for several references)"),
    sources: Optional[Path] = typer.Option(None, "--sources", "-s", help="One source document per line"),
    input_: Optional[Path] = typer.Option(None, "--input", "-i", help="JSONL of {candidate, references, source} "
                                          "(instead of the line files)"),
    option: list[str] = typer.Option([], "--option", "-o", help="KEY=VALUE passed to every metric that takes KEY"),
    output: Optional[Path] = typer.Option(None, "--output", help="Write per-example scores (.jsonl, .csv, .tsv)"),
    cache: Optional[Path] = typer.Option(None, "--cache", help="Score cache file [default: user cache]"),
    no_cache: bool = typer.Option(False, "--no-cache", help="Compute everything, store nothing"),
    batch_size: int = typer.Option(256, "--batch-size", min=1, help="Examples per scoring batch"),
    show: int = typer.Option(3, "--show", min=0, help="Print the first N examples' scores"),
) -> None:
    """Score any candidates (with references and/or sources) with any metrics; per-example scores out."""
    import numpy as np

    from meta_eval.cache import ScoreCache, default_cache_path
    from meta_eval.score_files import read_jsonl, read_line_files, write_scores

    if (candidates is None) == (input_ is None):
        _fail("give either --candidates (with --references/--sources line files) or --input FILE.jsonl")
    if output is not None and output.suffix.lower() not in (".jsonl", ".csv", ".tsv"):
        _fail(f"unknown output format {output.suffix!r}: use .jsonl, .csv or .tsv")
    try:
        examples = read_jsonl(input_) if input_ is not None else read_line_files(candidates, references, sources)
    except ValueError as exc:
        _fail(str(exc))
    what = "the input"
    chosen, skipped = _choose_metrics(metrics, _parse_options(option), what=what,
                                      has_sources=all(ex.source for ex in examples),
                                      has_references=all(ex.references for ex in examples))
    store = None if no_cache else ScoreCache(cache or default_cache_path())
    scored = _score_all(chosen, examples, store, batch_size, skipped)
    for name, reason in skipped:
        err.print(f"[yellow]skipped[/] {name}: {reason}", highlight=False)
    if not scored:
        _fail("no metric could run")
    columns = {v: s for ms in scored for v, s in ms.scores.items()}
    shown = min(show, len(examples))
    table = Table(title=f"{len(examples)} examples: per-variant summary and the first {shown} scores")
    for col in ("variant", "mean", "min", "max", *(f"#{i}" for i in range(shown))):
        table.add_column(col, justify="left" if col == "variant" else "right")
    for v, s_ in columns.items():
        table.add_row(v, f"{np.mean(s_):.4f}", f"{np.min(s_):.4f}", f"{np.max(s_):.4f}",
                      *(f"{s_[i]:.4f}" for i in range(shown)))
    out.print(table)
    out.print("Signatures:")
    for ms in scored:
        out.print(f"  {ms.signature}", highlight=False, soft_wrap=True)
    if output is not None:
        write_scores(output, columns, [ms.signature for ms in scored])
        err.print(f"wrote {output}")


@app.command("metrics")
def list_metrics() -> None:
    """List the registered metrics, their variants and needs, and whether they can run here."""
    import metrics.registry as registry

    table = Table(title="Registered metrics")
    for col in ("name", "variants", "needs", "higher is better", "status"):
        table.add_column(col)
    notes = []
    for name in registry.names():
        cls = registry.get_class(name)
        needs = ", ".join(n for n, flag in (("references", cls.needs_references), ("source", cls.needs_source))
                          if flag) or "-"
        reason = cls.unavailable_reason()
        if reason is not None:
            notes.append((name, reason))
        table.add_row(name, ", ".join(cls.variants), needs, "yes" if cls.higher_is_better else "no",
                      "[green]ready[/]" if reason is None else f"[red]unavailable[/] [{len(notes)}]")
    out.print(table)
    for i, (name, reason) in enumerate(notes, 1):
        out.print(f"[{i}] {name}: {reason}", highlight=False, markup=False)
    for name, reason in registry.plugin_errors().items():
        out.print(f"plugin {name}: {reason}", highlight=False, markup=False)


@app.command("judgments")
def list_judgments(
    data_dir: Optional[Path] = typer.Option(None, "--data-dir", help="Folder of judgment files"),
) -> None:
    """List the built-in judgment sets: rows, documents, systems, human dimensions, sources, references."""
    import importlib

    import judgments as judgment_sets
    from judgments.files import verify_all

    root = judgment_sets.data_dir(data_dir)
    table = Table(title=f"Judgment sets (data: {root})")
    for col in ("name", "subset", "rows", "docs", "systems", "human dimensions (default first)", "sources", "refs"):
        table.add_column(col, justify="right" if col in ("rows", "docs", "systems", "refs") else "left")
    problems_seen = []
    for name, module_name in judgment_sets.BUILTIN.items():
        module = importlib.import_module(module_name)
        files = [v for v in vars(module).values() if type(v).__name__ == "DataFile"]
        problems = verify_all(files, root)
        if problems:
            table.add_row(name, "-", "-", "-", "-", "[red]files missing or corrupt[/]", "-", "-")
            problems_seen += [f"{name}: {f.relpath}: {p}" for f, p in problems]
            continue
        jset = judgment_sets.load(name, root, download=False)
        dims = [jset.default_dimension] + [d for d in jset.dimensions if d != jset.default_dimension]
        table.add_row(name, jset.subset, str(len(jset)), str(jset.documents()), str(len(jset.systems())),
                      ", ".join(dims), "yes" if jset.has_sources else "no", str(jset.max_references))
    out.print(table)
    for line in problems_seen:
        out.print(f"[yellow]{line}[/]", highlight=False)


@app.command()
def learn(
    judgments: str = typer.Option(..., "--judgments", "-j", help="chaganty, essays, summeval, realsumm, or a .jsonl "
                                  "file"),
    metrics: str = typer.Option(..., "--metrics", "-m", help="Comma-separated metrics whose variants are the "
                                "features"),
    features: Optional[str] = typer.Option(None, "--features", help="Comma-separated variants to use as features "
                                           "[default: every variant of the chosen metrics]"),
    target: Optional[str] = typer.Option(None, "--target", help="A human dimension, or geomean:dimA,dimB (each "
                                         "rescaled to [1, 2], then their geometric mean) [default: the set's "
                                         "default dimension]"),
    alpha: float = typer.Option(1.0, "--alpha", min=0.0, help="Ridge penalty on the standardised weights"),
    splits: int = typer.Option(1000, "--splits", min=1, help="Random train/held-out splits per protocol"),
    train_fraction: float = typer.Option(0.5, "--train-fraction", help="Share of documents (grouped) or rows "
                                         "(ungrouped) used for fitting in each split"),
    seed: int = typer.Option(0, "--seed", help="Seed of the splits (every subset sees the same splits)"),
    search: bool = typer.Option(True, "--search/--no-search", help="Rank every subset of the features, or fit "
                                "the full feature set only"),
    max_size: Optional[int] = typer.Option(None, "--max-size", min=1, help="Largest subset searched (at most "
                                           "1,024 subsets are allowed)"),
    top: int = typer.Option(10, "--top", min=1, help="Subsets shown in the table"),
    correlation: str = typer.Option("spearman", "--correlation", help="Held-out correlation: spearman, pearson "
                                    "or kendall"),
    subset: Optional[str] = typer.Option(None, "--subset", help="chaganty/essays: 'sms' (default) or 'all'"),
    option: list[str] = typer.Option([], "--option", "-o", help="KEY=VALUE passed to every chosen metric that "
                                     "takes KEY (saved with the model)"),
    save: Optional[str] = typer.Option(None, "--save", help="Save the final model (fitted on all rows) as NAME "
                                       "(then usable as --metrics learned:NAME; stored in $META_EVAL_HOME/learned or "
                                       "the user data dir) or as a path ending in .json"),
    output: Optional[Path] = typer.Option(None, "--output", help="Write the results as JSON"),
    data_dir: Optional[Path] = typer.Option(None, "--data-dir", help="Folder of judgment files [default: "
                                            "$META_EVAL_DATA, else the user cache]"),
    cache: Optional[Path] = typer.Option(None, "--cache", help="Score cache file [default: user cache]"),
    no_cache: bool = typer.Option(False, "--no-cache", help="Compute everything, store nothing"),
    batch_size: int = typer.Option(256, "--batch-size", min=1, help="Examples per scoring batch"),
) -> None:
    """Learn a metric: ridge regression from metric scores to human scores (Scialom et al. 2019, sec. 2.4).

    Every split fits on a random half and correlates on the other half, by document (grouped) and by row
    (ungrouped); subsets of the features are ranked by the mean held-out grouped correlation. The final model is
    fitted on all rows.
    """
    import numpy as np

    import judgments as judgment_sets
    from meta_eval import learn as learning
    from meta_eval.cache import ScoreCache, default_cache_path
    from metrics.learned import model_path

    if correlation not in learning.CORRELATION_KINDS:
        _fail(f"--correlation must be spearman, pearson or kendall, not {correlation!r}")
    if not 0 < train_fraction < 1:
        _fail(f"--train-fraction must be between 0 and 1, got {train_fraction}")
    save_path = None
    if save is not None:
        try:
            save_path = model_path(save)
        except ValueError as exc:
            _fail(str(exc))
    started = time.perf_counter()
    try:
        jset = judgment_sets.load(judgments, data_dir, subset=subset)
        spec = target or jset.default_dimension
        total_rows = len(jset)
        jset, y = learning.target_set(jset, spec)
    except (judgment_sets.JudgmentError, judgment_sets.DataError, ValueError) as exc:
        _fail(str(exc))
    dropped = total_rows - len(jset)
    if len(jset) < 10:
        _fail(f"{jset.name}: only {len(jset)} rows have the target {spec!r}; at least 10 are needed")
    options = _parse_options(option)
    chosen, skipped = _choose_metrics(metrics, options, what=jset.name, has_sources=jset.has_sources,
                                      has_references=jset.max_references > 0)
    if skipped:
        _fail("every metric of --metrics is a feature source, but these cannot run: "
              + "; ".join(f"{n}: {r}" for n, r in skipped))
    err.print(f"{jset.name} ({jset.subset}): {len(jset)} rows, {jset.documents()} documents, target: {spec}"
              + (f" ({dropped} rows without it left out)" if dropped else ""), highlight=False)
    store = None if no_cache else ScoreCache(cache or default_cache_path())
    scored = _score_all(chosen, jset.examples(), store, batch_size, skipped)
    if skipped:
        _fail("; ".join(f"{n}: {r}" for n, r in skipped))
    owner = {}
    for metric, ms in zip(chosen, scored):
        for variant in ms.scores:
            if variant in owner:
                _fail(f"variant {variant!r} is produced by both {owner[variant][0].name} and {metric.name}")
            owner[variant] = (metric, ms)
    names = [f.strip() for f in features.split(",") if f.strip()] if features else list(owner)
    unknown = [f for f in names if f not in owner]
    if unknown or not names or len(set(names)) != len(names):
        _fail(f"--features must name distinct variants of the chosen metrics ({', '.join(owner)}); "
              f"{'unknown: ' + ', '.join(unknown) if unknown else 'got ' + repr(features)}")
    columns = {f: owner[f][1].scores[f] for f in names}
    groups = [r.doc_id for r in jset.rows]
    common = {"alpha": alpha, "n_splits": splits, "train_fraction": train_fraction, "seed": seed,
              "kind": correlation}
    learn_started = time.perf_counter()
    try:
        if search:
            results = learning.search_subsets(columns, y, groups, max_size=max_size, **common)
        else:
            results = [learning.learn_ridge(np.column_stack(list(columns.values())), y, groups,
                                            feature_names=names, **common)]
    except ValueError as exc:
        _fail(f"{exc}" + (" (use --features or --max-size)" if "cap" in str(exc) else ""))
    learn_seconds = time.perf_counter() - learn_started

    def ci(p):
        return "-" if p is None or p.low is None else f"[{_fmt(p.low)}, {_fmt(p.high)}]"

    title = (f"{jset.name} ({jset.subset}, n={len(jset)}, {jset.documents()} documents): ridge (alpha={alpha:g}) to "
             f"'{spec}', held-out {correlation} over {splits} splits ({train_fraction:.0%} train)")
    table = Table(title=title)
    for col in ("#", "features", "size", "grouped (by document)", "95% interval", "ungrouped", "ungrouped - grouped"):
        table.add_column(col, justify="left" if col == "features" else "right")
    for i, r in enumerate(results[:top], 1):
        table.add_row(str(i), " + ".join(r.features), str(r.size), _fmt(r.grouped.mean if r.grouped else None),
                      ci(r.grouped), _fmt(r.ungrouped.mean), _fmt(r.overstatement), style="bold" if i == 1 else None)
    out.print(table)
    if len(results) > top:
        out.print(f"({len(results)} subsets evaluated; {top} shown)", highlight=False)

    best = results[0]
    x = np.column_stack([columns[f] for f in best.features])
    means, stds, weights, intercept = learning.fit_final(x, y, alpha)
    what = "best subset" if search else "full feature set"
    wtable = Table(title=f"Weights of the {what}: mean ± sd over the grouped splits, and the final fit on all "
                         f"{len(jset)} rows")
    for col in ("feature", "standardised (splits)", "raw (splits)", "standardised (final)", "raw (final)"):
        wtable.add_column(col, justify="left" if col == "feature" else "right")
    p = best.primary
    for j, f in enumerate(best.features):
        wtable.add_row(f, f"{p.weight_std_mean[j]:.4f} ± {p.weight_std_sd[j]:.4f}",
                       f"{p.weight_raw_mean[j]:.4f} ± {p.weight_raw_sd[j]:.4f}", f"{weights[j]:.4f}",
                       f"{weights[j] / stds[j]:.4f}")
    wtable.add_row("(intercept)", f"{p.intercept_std[0]:.4f} ± {p.intercept_std[1]:.4f}",
                   f"{p.intercept_raw[0]:.4f} ± {p.intercept_raw[1]:.4f}", f"{intercept:.4f}",
                   f"{intercept - float(np.sum(weights / stds * means)):.4f}")
    out.print(wtable)
    if best.grouped is not None and best.overstatement is not None:
        out.print(f"{' + '.join(best.features)}: held-out {correlation} {_fmt(best.grouped.mean)} "
                  f"{ci(best.grouped)} with each document on one side; {_fmt(best.ungrouped.mean)} "
                  f"{ci(best.ungrouped)} with rows split at random: ungrouped - grouped = {best.overstatement:+.4f} "
                  f"({'the ungrouped protocol overstates' if best.overstatement > 0 else 'no overstatement'})",
                  highlight=False)
    err.print(f"  learning: {learn_seconds:.2f}s for {len(results)} feature set(s) x {splits} splits x "
              f"{2 if best.grouped is not None else 1} protocols", highlight=False)

    components = []
    for metric, ms in zip(chosen, scored):
        used = tuple(v for v in ms.scores if v in best.features)
        if used:
            components.append(learning.Component(metric.name, _metric_config(type(metric), options), ms.signature,
                                                 used))
    model = learning.LearnedModel(features=list(best.features), components=components, means=means.tolist(),
                                  stds=stds.tolist(), weights=weights.tolist(), intercept=intercept, alpha=alpha,
                                  target=spec, judgments=jset.name, subset=jset.subset, n=len(jset),
                                  documents=jset.documents(), heldout=best.as_dict())
    if save_path is not None:
        try:
            model.save(save_path)
        except OSError as exc:
            _fail(f"cannot save the model to {save_path}: {exc}")
        use = f"learned:{save}"
        out.print(f"saved {use} ({len(model.features)} features) to {save_path}; score with --metrics {use}",
                  highlight=False, soft_wrap=True)
    if output is not None:
        doc = {"judgments": jset.name, "subset": jset.subset, "target": spec, "n": len(jset),
               "rows_without_target": dropped, "documents": jset.documents(), "correlation": correlation,
               "alpha": alpha, "splits": splits, "train_fraction": train_fraction, "seed": seed, "search": search,
               "features": names, "best": list(best.features), "results": [r.as_dict() for r in results],
               "model": model.as_dict(), "saved": None if save_path is None else str(save_path),
               "signatures": {ms.metric: ms.signature for ms in scored},
               "timing": {ms.metric: {"seconds": round(ms.seconds, 3), "computed": ms.computed, "cached": ms.cached}
                          for ms in scored},
               "learn_seconds": round(learn_seconds, 3), "wall_seconds": round(time.perf_counter() - started, 3)}
        output.parent.mkdir(parents=True, exist_ok=True)
        tmp = output.with_name(output.name + ".tmp")
        tmp.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
        tmp.replace(output)
        err.print(f"wrote {output}")


leaderboard_app = typer.Typer(no_args_is_help=True, help="Publish comparison leaderboards.")
app.add_typer(leaderboard_app, name="leaderboard")


@leaderboard_app.command("publish")
def leaderboard_publish(
    judgments: str = typer.Option(..., "--judgments", "-j", help="Comma-separated judgment sets"),
    out_dir: Path = typer.Option(..., "--out", help="Folder to write results.json, README.md and index.html"),
    metrics: Optional[str] = typer.Option(None, "--metrics", "-m", help="Comma-separated metric names (default: "
                                          "every registered metric that can run on each set)"),
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
) -> None:
    """Score sets with metrics and publish a reproducible leaderboard (levels, intervals, significance)."""
    import shlex

    import judgments as judgment_sets
    from leaderboard.publish import default_variant_filter, set_results, write_leaderboard
    from meta_eval.cache import ScoreCache, default_cache_path

    if correlation not in ("spearman", "pearson", "kendall"):
        _fail(f"--correlation must be spearman, pearson or kendall, not {correlation!r}")
    if correction not in ("holm", "bh", "none"):
        _fail(f"--correction must be holm, bh or none, not {correction!r}")
    keep = set(v.strip() for v in variants.split(",")) if variants else None
    variant_filter = (lambda v: v in keep) if keep else default_variant_filter
    options = _parse_options(option)
    blocks = []
    for name in [n.strip() for n in judgments.split(",") if n.strip()]:
        try:
            jset = judgment_sets.load(name, data_dir)
            dim = jset.default_dimension
            jset = jset.scored(dim)
        except (judgment_sets.JudgmentError, judgment_sets.DataError) as exc:
            _fail(str(exc))
        chosen, skipped = _choose_metrics(metrics, options, what=jset.name, has_sources=jset.has_sources,
                                          has_references=jset.max_references > 0)
        err.print(f"{jset.name}: {len(jset)} rows, human {dim}; metrics: {', '.join(m.name for m in chosen)}",
                  highlight=False)
        store = None if no_cache else ScoreCache(cache or default_cache_path())
        scored = _score_all(chosen, jset.examples(), store, batch_size, skipped)
        for metric_name, reason in skipped:
            err.print(f"  [yellow]skipped[/] {metric_name}: {reason}", highlight=False)
        if not scored:
            _fail(f"{jset.name}: no metric could run")
        try:
            blocks.append(set_results(jset, dim, scored, n_resamples=resamples, seed=seed, alpha=alpha,
                                      correction=correction, primary=correlation, variant_filter=variant_filter))
        except ValueError as exc:
            _fail(f"{jset.name}: {exc}")
    command = "meta-eval leaderboard publish " + " ".join(shlex.quote(a) for a in sys.argv[3:]) \
        if sys.argv[1:3] == ["leaderboard", "publish"] else "meta-eval leaderboard publish"
    write_leaderboard(out_dir, out_dir.name, blocks, command, n_resamples=resamples, seed=seed, confidence=0.95,
                      alpha=alpha, correction=correction, primary=correlation)
    out.print(f"wrote {out_dir}/results.json, README.md, index.html")


def main() -> None:
    """Console-script entry point."""
    app()


if __name__ == "__main__":
    sys.exit(main())
