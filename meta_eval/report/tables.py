"""The tables and lines meta-eval prints (rich): the only place that turns results into text for a terminal.

:func:`print_run` prints a :class:`~meta_eval.results.RunResult` as ``meta-eval run`` does: the statistic per
variant with its interval and test against the baseline, the human ceiling, the level's warning, notes, signatures
and timing. Names from data files and plugins are printed as written, never read as markup.
"""
from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from meta_eval.scoring.runner import shared_totals
from meta_eval.scoring.selection import group_skips

__all__ = ["fmt", "plain", "print_judgment_set", "print_learn", "print_protocol", "print_run", "print_scores", "stars"]


def fmt(x: float | None, digits: int = 3) -> str:
    """A number as the tables print it: 3 decimals, scientific below 0.001, ``-`` for None."""
    if x is None:
        return "-"
    return f"{x:.{digits}f}" if abs(x) >= 10 ** -digits or x == 0 else f"{x:.1e}"


def stars(p: float | None) -> str:
    """``**`` for p < 0.01, ``*`` for p < 0.05."""
    if p is None:
        return ""
    return "**" if p < 0.01 else "*" if p < 0.05 else ""


TESTS = {"williams": "Williams test", "perm-both": "PERM-BOTH permutation test (Deutsch et al. 2021)",
          "perm-pairs": "permutation test swapping the two metrics' pair outcomes (Deutsch et al. 2023; "
                        "mt-metrics-eval's PairwisePermutationSigDiff)",
          "spa-perm-both": "permutation test swapping the two metrics' scores, both SPAs recomputed (WMT24)"}



def plain(value, style: str = "") -> Text:
    """A table title, header or cell printed as written, never read as markup or emoji codes: metric, variant, set
    and file names come from data files and plugins (``[bold]x[/]`` prints as those ten characters)."""
    return Text(str(value), style=style)


def print_run(result, out: Console, err: Console) -> None:
    """The results table of ``meta-eval run`` (stdout) and its notes; timing lines on ``err``."""
    _print_results(result.judgments, result.subset, result.n, result.human, result.results, result.scores,
                   result.skipped, result.baseline, result.setting, result.ceiling, result.level_warning, out, err)


def _print_results(name, subset, n, dim, results, scored, skipped, baseline, setting, ceiling, few, out, err) -> None:
    level, statistic = setting["level"], setting["statistic"]
    correlations = ("spearman", "pearson", "kendall")
    williams = setting["test"] == "williams"
    units = {"global": "rows", "summary": "documents", "system": "systems"}[level]
    what = f"{statistic} correlation" if statistic in correlations else statistic
    table = Table(title=plain(f"{name} ({subset}, n={n}): {level}-level {what} with human '{dim}' "
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
    table.add_column(plain(f"{test} vs {baseline}" if baseline else test), justify="right")
    for r in results:
        p = r.williams_p_vs_baseline if williams else r.perm_p_vs_baseline
        star = stars(p) if r.metric != baseline else ""
        better = star and (r.value or 0) > 0
        last = "(baseline)" if r.metric == baseline else f"{fmt(p)} {star}".strip()
        eps = [] if statistic != "acc-t" else ["-" if r.epsilon is None else f"{r.epsilon:.3g}"]
        lead = [] if statistic in correlations else [fmt(r.value), *eps]
        if williams:
            cells = [fmt(r.spearman), fmt(r.spearman_p), fmt(r.pearson), fmt(r.kendall), f"{r.n}{mark}"]
        else:
            ci = "-" if not r.ci else f"[{fmt(r.ci[0])}, {fmt(r.ci[1])}]"
            cells = [fmt(r.spearman), fmt(r.pearson), fmt(r.kendall), f"{r.n}{mark}", ci]
        if partial:
            cells.append(fmt(r.partial))
        if delta:
            cells.append(f"{fmt(r.delta['tau'])} ({r.delta['n_pairs']})")
        table.add_row(plain(r.metric), *lead, *cells, last, style="bold" if better else None)
    if ceiling is not None and ceiling.value is not None:
        ci = "-" if ceiling.lower is None else f"[{fmt(ceiling.lower)}, {fmt(ceiling.upper)}]"
        value = fmt(ceiling.value)
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
        out.print(f"** p < 0.01, * p < 0.05: one-sided {TESTS[setting['test']]} that the metric's {what} "
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
    for component, seconds in shared_totals(scored).items():
        users = ", ".join(ms.metric for ms in scored if component in ms.shared)
        err.print(f"  {component} (shared; loading and encoding, paid while scoring {users}): {seconds:.2f}s",
                  highlight=False, markup=False)
    for names, reason in group_skips(skipped):
        out.print(f"[yellow]skipped[/] {escape(', '.join(names))}: {escape(reason)}", highlight=False)


def print_protocol(doc: dict, out: Console) -> None:
    """Each part of a :func:`meta_eval.task.run_protocol` result: meta-eval's number beside the paper's, the status
    of each cell, signatures and what did not run; then the counts."""
    proto = doc["_protocol"]
    out.print(f"[bold]{escape(proto.name)}[/]: {escape(proto.title)}", highlight=False)
    out.print(f"  {proto.citation}", highlight=False, markup=False)
    out.print(f"  printed numbers: {proto.source}", highlight=False, markup=False)
    style = {"match": "green", "known mismatch": "yellow", "MISMATCH": "bold red", "not run": "red"}
    for p in doc["parts"]:
        objects = p["_objects"]
        part, cells, baseline = objects["part"], objects["cells"], p["baseline"]
        by_variant = {r.metric: r for r in objects["results"]}
        table = Table(title=plain(f"{proto.name} / {part.name}: {p['judgments']} ({p['subset']}, n={p['n']}), "
                                  f"{part.level}-level {part.correlation} with human '{part.human}'", "table.title"))
        test = "Williams p" if part.level == "global" else "perm. p"
        for col in ("paper's row", "variant", "meta-eval", "printed", "difference",
                    *([f"{test} vs {baseline}"] if baseline else []), "status"):
            table.add_column(plain(col), justify="left" if col in ("paper's row", "variant", "status") else "right")
        for c in cells:
            r = by_variant.get(c.variant)
            p_value = None if r is None else (r.williams_p_vs_baseline if part.level == "global"
                                              else r.perm_p_vs_baseline)
            p_cell = ["(baseline)" if c.variant == baseline else f"{fmt(p_value)} {stars(p_value)}".strip()]
            table.add_row(plain(c.label), plain(c.variant), fmt(c.meta_eval), fmt(c.printed),
                          "-" if c.difference is None else f"{c.difference:+.3f}", *(p_cell if baseline else []),
                          f"[{style[c.status]}]{c.status}[/]")
        out.print(table)
        out.print(f"tolerance: |meta-eval - printed| <= {part.tolerance:g}", highlight=False)
        for c in cells:
            if c.reason and not c.matches:
                out.print(f"  {c.variant}: {c.reason}", highlight=False, markup=False, soft_wrap=True)
        for ms in objects["scored"]:
            out.print(f"  {ms.signature}", highlight=False, markup=False, soft_wrap=True)
        for metric_name, reason in objects["skipped"]:
            out.print(f"[red]not run[/] {escape(metric_name)}: {escape(reason)}", highlight=False)
    counts, n_cells = doc["counts"], sum(doc["counts"].values())
    out.print(f"{proto.name}: {counts['match']} of {n_cells} printed cells match within tolerance; "
              f"{counts['known mismatch']} known mismatches (reasons above); {counts['MISMATCH']} unexplained; "
              f"{counts['not run']} not run", highlight=False, markup=False)


def print_scores(result, out: Console, show: int = 3) -> None:
    """``meta-eval score``: per variant the mean, min and max and the first ``show`` examples' scores; signatures."""
    import numpy as np

    shown = min(show, result.n)
    table = Table(title=f"{result.n} examples: per-variant summary and the first {shown} scores")
    for col in ("variant", "mean", "min", "max", *(f"#{i}" for i in range(shown))):
        table.add_column(col, justify="left" if col == "variant" else "right")
    for v, s_ in result.columns.items():
        table.add_row(plain(v), f"{np.mean(s_):.4f}", f"{np.min(s_):.4f}", f"{np.max(s_):.4f}",
                      *(f"{s_[i]:.4f}" for i in range(shown)))
    out.print(table)
    out.print("Signatures:")
    for ms in result.scores:
        out.print(f"  {ms.signature}", highlight=False, soft_wrap=True, markup=False)


def print_learn(result, out: Console, err: Console, top: int = 10) -> None:
    """``meta-eval learn``: the feature sets by held-out correlation, the search, the best set's weights (over the
    splits and in the final fit) and its grouped vs ungrouped correlation; the time on ``err``."""
    outcome, best, model, jset = result.outcome, result.outcome.best, result.model, result.data.jset
    settings = result.settings
    correlation, splits, alpha = settings["correlation"], settings["splits"], settings["alpha"]

    def ci(p):
        return "-" if p is None or p.low is None else f"[{fmt(p.low)}, {fmt(p.high)}]"

    title = (f"{jset.name} ({jset.subset}, n={len(jset)}, {jset.documents()} documents): ridge (alpha={alpha:g}) to "
             f"'{result.data.spec}', held-out {correlation} over {splits} splits "
             f"({settings['train_fraction']:.0%} train); search: {outcome.strategy}")
    table = Table(title=title)
    grouped = result.grouped
    columns_shown = (("#", "features", "size", "grouped (by document)", "95% interval", "ungrouped",
                      "ungrouped - grouped") if grouped else ("#", "features", "size", "ungrouped (rows)",
                                                              "95% interval"))
    for col in columns_shown:
        table.add_column(col, justify="left" if col == "features" else "right")
    results = outcome.results
    for i, r in enumerate(results[:top], 1):
        cells = ((fmt(r.grouped.mean), ci(r.grouped), fmt(r.ungrouped.mean), fmt(r.overstatement)) if grouped
                 else (fmt(r.ungrouped.mean), ci(r.ungrouped)))
        table.add_row(str(i), " + ".join(r.features), str(r.size), *cells, style="bold" if i == 1 else None)
    out.print(table)
    out.print(f"search: {outcome.strategy} ({outcome.reason}); {outcome.summary()}"
              + (f"; {top} of {len(results)} shown" if len(results) > top else ""), highlight=False)
    if outcome.path:
        stage = f"first {outcome.search_splits} splits" if outcome.screened else f"all {splits} splits"
        steps = ", ".join(f"{'+' if p['accepted'] else 'not +'}{p['added']} {p['score']:.4f}" for p in outcome.path)
        out.print(f"greedy path (mean held-out {correlation}, {best.primary.protocol}, {stage}): {steps}",
                  highlight=False)
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
        out.print(f"{' + '.join(best.features)}: held-out {correlation} {fmt(best.grouped.mean)} "
                  f"{ci(best.grouped)} with each document on one side; {fmt(best.ungrouped.mean)} "
                  f"{ci(best.ungrouped)} with rows split at random: ungrouped - grouped = {best.overstatement:+.4f} "
                  f"({'the ungrouped protocol overstates' if best.overstatement > 0 else 'no overstatement'})",
                  highlight=False)
    else:
        out.print(f"{' + '.join(best.features)}: held-out {correlation} {fmt(best.ungrouped.mean)} "
                  f"{ci(best.ungrouped)} with rows split at random", highlight=False)
    err.print(f"  learning: {result.learn_seconds:.2f}s ({outcome.evaluated} feature set(s) searched, {len(results)} "
              f"evaluated on {splits} splits x {2 if grouped else 1} protocol(s))", highlight=False)


def print_judgment_set(jset, out: Console) -> None:
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
