"""The tables and lines meta-eval prints (rich): the only place that turns results into text for a terminal.

:func:`print_run` prints a :class:`~meta_eval.results.RunResult` as ``meta-eval run`` does: the statistic per
variant with its interval and test against the baseline, the human ceiling, the level's warning, notes, signatures
and timing. Names from data files and plugins are printed as written, never read as markup.
"""
from __future__ import annotations

from dataclasses import dataclass

from rich.console import Console
from rich.table import Table
from rich.text import Text

from meta_eval.errors import MetaEvalError
from meta_eval.report.escape import latex, latex_row, markdown, markup as escape, terminal
from meta_eval.scoring.runner import shared_totals
from meta_eval.scoring.selection import group_skips

__all__ = ["FORMATS", "TIE_TOLERANCE", "RunTable", "fmt", "fmt_p", "plain", "print_catalog", "print_judgment_set", "print_learn", "print_protocol",
           "categorical_table", "print_categorical", "print_saved",
           "print_run", "print_scores", "print_skipped", "protocol_summary", "reading", "render_table", "run_table",
           "stars", "top_variants", "warning_lines"]


def fmt(x: float | None, digits: int = 3) -> str:
    """A number as the tables print it: 3 decimals, scientific below 0.001, ``-`` for None."""
    if x is None:
        return "-"
    return f"{x:.{digits}f}" if abs(x) >= 10 ** -digits or x == 0 else f"{x:.1e}"


def stars(p: float | None) -> str:
    """``**`` for p <= 0.01, ``*`` for p <= 0.05: significant at alpha when p <= alpha, as the clusters
    (mt-metrics-eval's ``AssignRanks``) and the heatmap read it, so one p never gets two verdicts."""
    if p is None:
        return ""
    return "**" if p <= 0.01 else "*" if p <= 0.05 else ""


TESTS = {"williams": "Williams test", "perm-both": "PERM-BOTH permutation test (Deutsch et al. 2021)",
          "perm-pairs": "permutation test swapping the two metrics' pair outcomes (Deutsch et al. 2023; "
                        "mt-metrics-eval's PairwisePermutationSigDiff)",
          "spa-perm-both": "permutation test swapping the two metrics' scores, both SPAs recomputed (WMT24)"}



def plain(value, style: str = "") -> Text:
    """A table title, header or cell printed as written, never read as markup or emoji codes: metric, variant, set
    and file names come from data files and plugins (``[bold]x[/]`` prints as those ten characters; a control
    character as its escape, ``\\x1b``: :func:`meta_eval.report.escape.terminal`)."""
    return Text(terminal(value), style=style)


FORMATS = ("table", "csv", "md", "latex")


def fmt_p(p: float | None, n_resamples: int | None = None, tails: int = 1) -> str:
    """A p-value as printed: ``< 1/(B+1)`` (e.g. ``< 0.001``) when a permutation test with ``n_resamples`` B found
    no resample as extreme (its resolution; ``tails`` 2, a two-sided p: ``< 2/(B+1)``), else as :func:`fmt`.

    >>> fmt_p(0.000999, 1000), fmt_p(0.0312, 1000), fmt_p(2e-8), fmt_p(0.0, 20, tails=2)
    ('< 0.001', '0.031', '2.0e-08', '< 0.095')
    """
    if p is None:
        return "-"
    if n_resamples and p <= tails / (n_resamples + 1) + 1e-12:
        return f"< {tails / (n_resamples + 1):.2g}"
    return fmt(p)


def _pair_p(raw: float | None, adjusted: float | None, resamples: int | None, pair: str) -> str:
    """``"a > b p = 0.031 (adjusted 0.062)"``; a p at the test's resolution ``"p < 0.02 (adjusted <= 0.020)"``: it
    entered the adjustment as its bound, so the adjusted value is an upper bound (as the graded tables say it)."""
    shown = fmt_p(raw, resamples)
    bound = shown.startswith("<")
    return (f"{pair} p {shown if bound else '= ' + shown} "
            f"(adjusted {'<= ' + fmt(adjusted) if bound and adjusted is not None else fmt_p(adjusted, resamples)})")


@dataclass
class RunTable:
    """The results of a run as a header and rows of strings: one source for the rich table and for csv, md and
    latex output. ``marks``: per row, the rich style (bold: significantly better than the baseline; italic: the
    human ceiling)."""

    title: str
    header: list[str]
    rows: list[list[str]]
    styles: list[str | None]
    ceiling_at: int | None  # index of the human-ceiling row


def run_table(result, *, two_sided: bool = False, ranks: dict[str, int] | None = None,
              differences: dict | None = None) -> RunTable:
    """Build the table of :func:`print_run` from a :class:`~meta_eval.results.RunResult`."""
    setting, statistic, level = result.setting, result.statistic, result.level
    correlations = ("spearman", "pearson", "kendall")
    williams = setting["test"] == "williams"
    words = result.words  # the set's task decides the words: MT "items", summarization "documents"
    units = words.units
    what = f"{statistic} correlation" if statistic in correlations else statistic
    baseline, results, ceiling = result.baseline, result.results, result.ceiling
    from meta_eval.stats import zero_resolution

    zero = zero_resolution(result.setting["test"], result.resamples)  # a p of 0: p < 1/(zero + 1); SPA: its block
    mark = " (!)" if result.level_warning else ""
    partial = any(r.partial is not None or r.partial_p is not None for r in results)
    delta = any(r.delta is not None for r in results)
    conf = int(round(100 * (setting["resampling"] or {}).get("confidence", 0.95)))
    header = (["rank"] if ranks else []) + ["metric"]
    header += [] if statistic in correlations else [statistic] + (["epsilon"] if statistic == "acc-t" else [])
    groups = list(next((r.per_group for r in results if r.per_group), {}) or {})  # a pooled set: each pair's value
    header += groups
    header += ["spearman", "p", "pearson", "kendall", "n"] if williams else \
        ["spearman", "pearson", "kendall", f"n {units}"]
    header += [f"{conf}% CI ({statistic})"]
    header += (["partial r (system)"] if partial else []) + (["Δ-band τ (pairs)"] if delta else [])
    # a metric that counts its answers (an LLM judge): the answers with no parseable score, N of M
    counted = getattr(result, "unparsed", None) or {}
    metric_of = {v: ms.metric for ms in result.scores for v in ms.scores}
    if counted:
        header.append("unparsed")
    alphas = getattr(result, "alpha_with_metric", None)  # JUDGE-BENCH's raters with the metric as one more
    if alphas is not None:
        header.append("alpha +metric")
    if differences:
        header.append(f"Δ vs {baseline} [{conf}% CI]")
    test = "Williams p" if williams else "perm. p"
    sides = "two-sided" if two_sided else "one-sided"
    header.append(f"{test} vs {baseline} ({sides})" if baseline else test)
    rows, styles = [], []
    adjusted = _adjusted(result, two_sided)  # the stars read the p-values of the run's correction
    entries = result.difference_entries(differences) if differences else {}
    both = result.two_sided_pvalues_vs_baseline() if two_sided and baseline else {}  # the other tail counted
    for r in results:
        p = r.williams_p_vs_baseline if williams else r.perm_p_vs_baseline
        if two_sided:
            p = both.get(r.metric)
        star = stars(adjusted.get(r.metric)) if r.metric != baseline else ""
        base_value = result.values.get(baseline) if baseline else None
        better = bool(star) and r.value is not None and base_value is not None and r.value > base_value
        last = "(baseline)" if r.metric == baseline else f"{fmt_p(p, zero, 2 if two_sided else 1)} {star}".strip()
        if r.metric in (getattr(result, "in_sample", None) or {}).get("tests_withheld", ()):
            last = "withheld (in-sample)"
        row = ([str(ranks.get(r.metric, "-"))] if ranks else []) + [r.metric]
        if statistic not in correlations:
            row += [fmt(r.value)] + (["-" if r.epsilon is None else f"{r.epsilon:.3g}"] if statistic == "acc-t"
                                     else [])
        row += [fmt((r.per_group or {}).get(g)) for g in groups]
        ci = "-" if not r.ci else f"[{fmt(r.ci[0])}, {fmt(r.ci[1])}]"
        row += ([fmt(r.spearman), fmt_p(r.spearman_p), fmt(r.pearson), fmt(r.kendall), f"{r.n}{mark}", ci]
                if williams else [fmt(r.spearman), fmt(r.pearson), fmt(r.kendall), f"{r.n}{mark}", ci])
        if partial:
            row.append(fmt(r.partial))
        if delta:
            row.append(f"{fmt(r.delta['tau'])} ({r.delta['n_pairs']})")
        if counted:
            c = counted.get(metric_of.get(r.metric))
            row.append(f"{c['unparsed']} of {c['answers']}" if c else "-")
        if alphas is not None:
            row.append(fmt(alphas.get(r.metric)))
        if differences:
            e = entries.get(r.metric)  # the JSON's difference_vs_baseline
            row.append("(baseline)" if r.metric == baseline else "-" if e is None else
                       f"{e['value']:+.3f} [{fmt(e['ci'][0])}, {fmt(e['ci'][1])}]" if e["ci"] else f"{e['value']:+.3f}")
        row.append(last)
        rows.append(row)
        styles.append("bold" if better else None)
    ceiling_at = None
    if ceiling is not None and ceiling.value is not None:
        ci = "-" if ceiling.lower is None else f"[{fmt(ceiling.lower)}, {fmt(ceiling.upper)}]"
        value = fmt(ceiling.value)
        row = ([""] if ranks else []) + ["human ceiling"]
        if statistic not in correlations:
            row += [value] + (["-"] if statistic == "acc-t" else [])
        corr = [value if k == statistic else "-" for k in correlations]
        row += [corr[0], "-", corr[1], corr[2], str(ceiling.rows_used), ci] if williams else [*corr, "-", ci]
        row += ["-"] * (int(partial) + int(delta) + int(bool(counted)) + int(alphas is not None)
                        + int(bool(differences))) + ["-"]
        ceiling_at = len(rows)
        rows.append(row)
        styles.append("italic")
    if statistic == "acc-t" and result.tie_baseline is not None:
        row = ([""] if ranks else []) + ["ties every pair", fmt(result.tie_baseline), "-"]
        row += ["-"] * (len(header) - len(row))
        ceiling_at = len(rows) if ceiling_at is None else ceiling_at
        rows.append(row)
        styles.append("italic")
    where = f"{level}-level" if words.name == f"{level} level" else f"{words.name}:"
    title = (f"{result.judgments} ({result.subset}, n={result.n}): {where} {what} with human "
             f"'{result.human}' (grouping: {setting['grouping']})")
    return RunTable(title, header, rows, styles, ceiling_at)


def _adjusted(result, two_sided: bool = False) -> dict:
    """The p-values against the baseline adjusted by the run's correction (none for an object without one)."""
    if hasattr(result, "adjusted_pvalues_vs_baseline"):
        return result.adjusted_pvalues_vs_baseline(two_sided)
    return {}


def _after(result, adjusted: float | None, raw: float | None, resolution: int | None) -> str:
    """``", 0.044 after Holm over the 11 comparisons with the baseline"``: the adjusted p-value and its rule. A raw
    permutation p of 0 entered the rule as its bound 1/B, so its adjusted value is an upper bound: ``<= 0.013``."""
    family = getattr(result, "baseline_family", None)
    if family is None or adjusted is None:
        return ""
    if getattr(result, "correction", "holm") == "none":
        return f", {family}"
    if resolution and raw == 0:
        return f", <= {fmt(adjusted)} after {family}"
    return f", {fmt_p(adjusted, resolution)} after {family}"


def render_table(table: RunTable, form: str) -> str:
    """``table`` as csv, Markdown (pipe table) or LaTeX (booktabs tabular). Every cell and the title are escaped for
    the format (:mod:`meta_eval.report.escape`: a name can neither format the Markdown nor run a LaTeX command, and
    a control character shows as its escape, ``\\x1b``, in csv too: the table goes to standard output, often a
    terminal; Python's csv then quotes the cells that need it). The title (set, n, level, statistic, human
    dimension) is a line of its own above a Markdown table and a ``%`` comment above a LaTeX one; csv is the header
    row and the rows only, for any csv reader: ``meta-eval run --format csv`` prints its title on standard error
    (:func:`emit_table`)."""
    if form == "csv":
        import csv
        import io

        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerows([terminal(c) for c in row] for row in [table.header, *table.rows])
        return buf.getvalue()
    if form == "md":
        esc = [[markdown(c) for c in row] for row in [table.header, *table.rows]]
        lines = [markdown(table.title), "", "| " + " | ".join(esc[0]) + " |",
                 "|" + "|".join(":---" if h in ("rank", "metric") else "---:" for h in table.header) + "|"]
        lines += ["| " + " | ".join(row) + " |" for row in esc[1:]]
        return "\n".join(lines) + "\n"
    if form == "latex":
        spec = "l" * (2 if table.header[0] == "rank" else 1) + "r" * (len(table.header) - (2 if table.header[0]
                                                                                          == "rank" else 1))
        lines = [f"% {latex(table.title)}", f"\\begin{{tabular}}{{{spec}}}", "\\toprule",
                 latex_row(table.header), "\\midrule"]
        for i, row in enumerate(table.rows):
            if i == table.ceiling_at:
                lines.append("\\midrule")
            lines.append(latex_row(row))
        lines += ["\\bottomrule", "\\end{tabular}"]
        return "\n".join(lines) + "\n"
    raise ValueError(f"--format must be one of {', '.join(FORMATS)}, not {form!r}")


#: Two values closer than this are tied (the rounding of equal sums added in another order; the tolerance of
#: :mod:`meta_eval.stats.resampling`): the reading line names every variant tied with the best.
TIE_TOLERANCE = 1e-12
#: after a metric's timing line when it was scored in the workers beside the neural metrics (``MetricScores.beside``)
BESIDE_NOTE = " (its batches' time in the workers, beside the neural metrics)"


def _names(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + f" and {names[-1]}"


def top_variants(result) -> tuple[list, list]:
    """The variants tied at the top (values within :data:`TIE_TOLERANCE` of the best, in table order) and the
    others that print the same value (:func:`fmt`) without being tied. Values equal only at the printed precision
    are not a tie: the reading line says they print the same but are lower."""
    valued = [r for r in result.results if r.value is not None]
    if not valued:
        return [], []
    best = max(r.value for r in valued)
    tied = [r for r in valued if best - r.value <= TIE_TOLERANCE]
    same = [r for r in valued if r not in tied and fmt(r.value) == fmt(best)]
    return tied, same


def warning_lines(result) -> list[str]:
    """The run's warnings (:attr:`meta_eval.results.RunResult.warnings`) as printed, in order, before the table and
    the reading line in every format; the few-units warning carries the ``(!)`` that marks the table's units."""
    return [f"warning{' (!)' if w['kind'] == 'few-units' else ''}: {w['message']}"
            for w in getattr(result, "warnings", None) or []]


def reading(result, *, two_sided: bool = False, ranks: dict[str, int] | None = None) -> str | None:
    """One sentence saying how to read the table: which variant agrees best (every variant tied with it named
    together, :func:`top_variants`), whether that is significant against the baseline (none is claimed for an
    in-sample learned variant unless the run allowed it), how many variants share the top cluster, and how far it is
    from the human ceiling (its share only when the ceiling is above 0: the judges' own agreement)."""
    tied, same = top_variants(result)
    if not tied:
        return None
    best = tied[0]
    williams = result.setting["test"] == "williams"
    from meta_eval.stats import zero_resolution

    zero = zero_resolution(result.setting["test"], result.resamples)
    names = [r.metric for r in tied]
    in_sample = getattr(result, "in_sample", None) or {}
    fitted = [n for n in names if n in in_sample.get("variants", ())]
    if len(tied) == 1:
        text = f"{best.metric} agrees best with the humans ({result.statistic} {fmt(best.value)})"
        if fitted:
            text += " on rows its model was fitted on (in-sample, not held-out)"
    else:
        text = f"{_names(names)} tie for the best agreement with the humans ({result.statistic} {fmt(best.value)})"
        if fitted:
            text += (f" ({_names(fitted)} on rows {'its model was' if len(fitted) == 1 else 'their models were'} "
                     "fitted on: in-sample, not held-out)")
    verdicts, withheld = [], []
    adjusted = _adjusted(result, two_sided)  # once: the correction over the comparisons with the baseline
    for r in tied:
        if not result.baseline or r.metric == result.baseline:
            continue
        if r.metric in in_sample.get("tests_withheld", ()):
            withheld.append(r.metric)
            continue
        p = r.williams_p_vs_baseline if williams else r.perm_p_vs_baseline
        if two_sided:
            p = result.two_sided_pvalues_vs_baseline().get(r.metric)
        if p is not None:
            q = adjusted.get(r.metric, p)
            q = p if q is None else q
            verdict = "significantly better than" if q <= 0.05 else "not significantly better than"
            verdicts.append(((f"{r.metric} " if len(tied) > 1 else ""), verdict,
                             fmt_p(p, zero, 2 if two_sided else 1) + _after(result, q, p, zero)))
    if withheld:
        own = all(n in in_sample.get("variants", ()) for n in withheld)
        who = ("it is" if len(withheld) == 1 else "they are") if own else f"the baseline {result.baseline} is"
        text += (f"; no significance claimed{'' if len(tied) == 1 else ' for ' + _names(withheld)} against the "
                 f"baseline {result.baseline}: {who} in-sample (pass {in_sample['flag']} to test anyway)")
    if len(tied) == 1 and verdicts:
        text += f"; {verdicts[0][1]} the baseline {result.baseline} (p {verdicts[0][2]})"
    elif verdicts:
        text += f"; against the baseline {result.baseline}: " + ", ".join(f"{who}{verdict} it (p {p})"
                                                                         for who, verdict, p in verdicts)
    if result.baseline in names:
        text += " and is the baseline" if len(tied) == 1 else f"; {result.baseline} is the baseline"
    if same:
        text += (f"; {_names([r.metric for r in same])} print{'s' if len(same) == 1 else ''} the same "
                 f"{fmt(best.value)} but {'is' if len(same) == 1 else 'are'} lower ("
                 + ", ".join(f"{r.value:.6g}" for r in same) + f" against {best.value:.6g})")
    if not result.baseline and getattr(result, "baseline_note", None):
        text += f"; no test against a baseline ({result.baseline_note})"
    if ranks and len(ranks) == 1:
        text += "; --pairwise has no other variant to compare it with"
    elif ranks:
        top = [v for v, k in ranks.items() if k == 1]
        text += f"; {len(top)} variant{'s' if len(top) != 1 else ''} share the top significance cluster"
        if len(top) > 1 and any(w["kind"] == "unresolved" for w in getattr(result, "warnings", None) or []):
            text += " (no pair could be separated with these resamples: see the warning)"
    c = result.ceiling
    if c is not None and c.value is not None and c.value > 0:
        text += (f"; the human ceiling is {fmt(c.value)}, so {'it reaches' if len(tied) == 1 else 'they reach'} "
                 f"{best.value / c.value:.0%} of it")
    elif c is not None and c.value is not None:  # no share of a ceiling at or below 0: the judges do not agree
        text += f"; the human ceiling is {fmt(c.value)}: the judges do not agree with each other, so no share of it"
    return text + "."


def _resolution_note(result) -> str:
    """What a permutation p of 0 means, and how the adjustment reads it (:func:`meta_eval.stats.clusters.
    adjust_pvalues`): ``"; p < 0.001 is the resolution of 1000 resamples; ..."``."""
    from meta_eval.stats import zero_resolution

    zero = zero_resolution(result.setting["test"], result.resamples)
    spa = " (SPA's test stops after its first block when p < 0.02)" if zero != result.resamples else ""
    return (f"; p < {1 / (zero + 1):.2g} is the resolution of {zero} resamples{spa}; such a p enters the "
            f"adjustment as 1/{zero}, so its adjusted p is an upper bound (<=)")


#: How a system-level score was formed, as the notes under a system-level table say it.
SYSTEM_MODES = {"mean": "sys:mean (the mean of the system's row scores)",
                "corpus": "sys:corpus (one corpus score over the system's rows, sacrebleu's corpus_score as WMT "
                          "reports; held fixed under resampling)",
                "file": "sys:file (the system scores of the score file; held fixed under resampling)"}


def print_run(result, out: Console, err: Console, *, form: str = "table", two_sided: bool = False,
              ranks: dict[str, int] | None = None, differences: dict | None = None, verbose: bool = False) -> None:
    """The results of ``meta-eval run``: the table (rich, or ``form`` csv / md / latex on stdout, the notes then going
    to ``err``), how to read it, the statistic's paper and resampling, the level's warning, the ceiling, the
    signatures, timing and skipped metrics (grouped; ``verbose``: each with its reason). ``ranks`` and
    ``differences`` default to the result's own (:attr:`~meta_eval.results.RunResult.ranks`, ``.differences``)."""
    from meta_eval.categorical import CategoricalResult

    if isinstance(result, CategoricalResult):  # a categorical or pairwise property (JUDGE-BENCH's labels)
        return print_categorical(result, out, err, form=form, two_sided=two_sided, verbose=verbose)
    ranks = result.ranks if ranks is None else ranks  # the run's (pairwise=True), computed once: the JSON's too
    differences = result.differences if differences is None else differences
    table = run_table(result, two_sided=two_sided, ranks=ranks, differences=differences)
    setting, statistic, level, results = result.setting, result.statistic, result.level, result.results
    what = f"{statistic} correlation" if statistic in ("spearman", "pearson", "kendall") else statistic
    for line in warning_lines(result):  # what changes the numbers' meaning, before the numbers
        (out if form == "table" else err).print(Text.assemble(("warning", "yellow"), line[len("warning"):]),
                                                soft_wrap=True)
    notes = emit_table(table, form, out, err)
    line = reading(result, two_sided=two_sided, ranks=ranks)
    if line:
        notes.print(f"reading: {terminal(line)}", highlight=False, soft_wrap=True, markup=False)
    label = "" if result.words.name == f"{level} level" else f" ({result.words.name})"
    notes.print(f"statistic: {statistic} ({setting['paper']}); level: {level}{label}; grouping: {setting['grouping']}"
                + (f"; epsilon {setting['epsilon']:g}" if statistic == "acc-eq" else "")
                + (f"; {setting['n_permutations']} permutations per system pair" if statistic == "spa" else ""),
                highlight=False, soft_wrap=True)
    notes.print(f"CI: {result.interval_label}, the same draws for every metric and the human ceiling",
                highlight=False, soft_wrap=True, markup=False)
    for column, why in (result.empty_columns or {}).items():
        notes.print(f"{column}: empty on every row: {why}", highlight=False, soft_wrap=True, markup=False)
    if statistic == "acc-t" and result.tie_baseline is not None:
        notes.print(f"ties every pair: acc-t of a metric that ties every pair, {fmt(result.tie_baseline)} (the share "
                    "of human ties); a metric near it may only have learned to tie", highlight=False,
                    soft_wrap=True, markup=False)
    if statistic == "spa" and setting.get("spa_seed") is not None:
        notes.print(f"spa: permutation signs drawn with seed {setting['spa_seed']} (WMT24: 4), the resampling with "
                    f"seed {setting['seed']}", highlight=False, soft_wrap=True, markup=False)
    if any(r.partial is not None or r.partial_p is not None for r in results):
        notes.print(f"partial r (system): the {statistic} correlation controlling for the system (FRANK, Pagnoni et "
                    "al. 2021: residuals after removing each system's mean)", highlight=False, soft_wrap=True)
    if any(r.delta is not None for r in results):
        d = next(r.delta for r in results if r.delta is not None)
        upper = "inf" if d["upper"] is None else f"{d['upper']:g}"
        notes.print(f"Δ-band τ: Kendall's tau over the system pairs whose metric difference |Δ| of system means is "
                    f"in [{d['lower']:g}, {upper}] (Deutsch, Dror & Roth 2022), with the number of pairs",
                    highlight=False, soft_wrap=True)
    ceiling = result.ceiling
    if ceiling is not None:
        if ceiling.value is not None:
            notes.print(f"human ceiling: each annotator against the mean of the others (leave-one-annotator-out, "
                        f"{ceiling.slots} annotator slots, {ceiling.rows_used} rows), same statistic and level"
                        + (f"; {ceiling.note}" if ceiling.note else ""), highlight=False, soft_wrap=True,
                        markup=False)
        else:
            notes.print(f"human ceiling: none ({ceiling.note})", highlight=False, soft_wrap=True, markup=False)
    if result.human_agreement is not None:  # JUDGE-BENCH's raters: Krippendorff's alpha beside the ceiling
        a = result.human_agreement
        more = (f"; alpha +metric: the same with the variant as one more rater, its scores put on the raters' scale "
                f"by rank quantiles ({a['level']}; judge_bench.scale_values)" if a["alpha"] is not None else "")
        notes.print(terminal(agreement_text(a)) + more, highlight=False, soft_wrap=True, markup=False)
    tested = any(p is not None for p in result.pvalues_vs_baseline.values())  # none where all are withheld
    if result.baseline and tested:
        kind = "two-sided" if two_sided else "one-sided"
        claim = "differs from" if two_sided else "exceeds"
        adjusted = "p" if result.correction == "none" else "adjusted p"
        notes.print(f"** {adjusted} <= 0.01, * {adjusted} <= 0.05 ({result.baseline_family}): {kind} "
                    f"{TESTS[setting['test']]} that the metric's {what} {claim} {result.baseline}'s; the column "
                    f"shows the unadjusted p" + (_resolution_note(result) if setting["test"] != "williams"
                                                 else ""), highlight=False, soft_wrap=True, markup=False)
    if ranks:
        from meta_eval.stats.clusters import family_label

        n = len([r for r in results if r.value is not None])
        notes.print("rank: significance clusters (mt-metrics-eval's rule: a variant starts a new cluster when a "
                    f"variant of the current one is significantly better at p <= {result.alpha:g}; all-pairs "
                    f"{TESTS[setting['test']]}, "
                    f"{family_label(result.correction, n * (n - 1) // 2, 'pairs', every=True)})",
                    highlight=False, soft_wrap=True, markup=False)
    for note in [f"{r.metric}: {r.note}" for r in results if r.note]:
        notes.print(f"note: {terminal(note)}", highlight=False, markup=False)
    for imp in result.imported:
        notes.print(f"imported: {imp['metric']} from {imp['file']} ({imp['format']}, {imp['rows']} rows keyed by "
                    f"{imp['key']}" + (f", {imp['systems']} system scores" if imp["systems"] else "")
                    + (f", {imp['ignored_lines']} lines for segments or systems not in the set left out"
                       if imp["ignored_lines"] else "")
                    + ("; lower is better: negated in every statistic" if imp["orientation"] == "lower" else "")
                    + ")", highlight=False, soft_wrap=True, markup=False)
    if result.rows_without_imported_score:
        notes.print(f"--scores-missing drop: {result.rows_without_imported_score} judged rows without an imported "
                    "score left out of every metric", highlight=False, soft_wrap=True, markup=False)
    system_scores = result.system_scores
    if system_scores:
        by_mode: dict[str, list[str]] = {}
        for metric, mode in system_scores.items():
            by_mode.setdefault(mode, []).append(metric)
        notes.print("system scores: " + "; ".join(f"{SYSTEM_MODES[mode]}: {', '.join(names)}"
                                                   for mode, names in by_mode.items())
                    + (" (SPA's permutation test is defined on row scores)" if statistic == "spa" else ""),
                    highlight=False, soft_wrap=True, markup=False)
    notes.print("Signatures:")
    for signature in result.signatures.values():
        notes.print(f"  {signature}", highlight=False, soft_wrap=True, markup=False)
    imported = {imp["metric"] for imp in result.imported}
    distinct = {ms.computed + ms.cached for ms in result.scores if ms.metric not in imported}  # scored here
    if distinct and 0 < max(distinct) < result.n:
        err.print(f"  ({result.n} rows hold {max(distinct)} distinct (candidate, references, source) texts: each is "
                  "scored once)", highlight=False, markup=False)
    for ms in result.scores:
        err.print(f"  {ms.metric}: " + (f"read from its file in {ms.seconds:.2f}s" if ms.metric in imported else
                                         f"{ms.computed} computed, {ms.cached} from cache, {ms.seconds:.2f}s")
                  + (" (+ shared encoder)" if ms.shared else "") + (BESIDE_NOTE if ms.beside else ""),
                  highlight=False, markup=False)
    for component, seconds in shared_totals(result.scores).items():
        users = ", ".join(ms.metric for ms in result.scores if component in ms.shared)
        err.print(f"  {component} (shared; loading and encoding, paid while scoring {users}): {seconds:.2f}s",
                  highlight=False, markup=False)
    print_skipped(result.skipped, notes, verbose)


def print_skipped(skipped, console: Console, verbose: bool = False) -> None:
    """Skipped metrics: with ``verbose`` one line per reason; else one line naming them with the most common
    reasons shortened, and how to see the rest."""
    groups = group_skips(skipped)
    if verbose or len(groups) <= 3:
        for names, reason in groups:
            console.print(f"[yellow]skipped[/] {escape(', '.join(names))}: {escape(reason)}", highlight=False,
                          soft_wrap=True)
        return
    names = [n for group, _ in groups for n in group]
    console.print(f"[yellow]skipped[/] {len(names)} metrics ({escape(', '.join(names))}) for {len(groups)} reasons; "
                  "-v lists each with its reason", highlight=False, soft_wrap=True)


def print_protocol(doc: dict, out: Console) -> None:
    """Each part of a :func:`meta_eval.task.run_protocol` result: meta-eval's number beside the paper's, the status
    of each cell, signatures and what did not run; then the counts."""
    from meta_eval.stats import CORRELATIONS

    proto = doc["_protocol"]
    out.print(f"[bold]{escape(proto.name)}[/]: {escape(proto.title)}", highlight=False)
    out.print(f"  {proto.citation}", highlight=False, markup=False)
    out.print(f"  printed numbers: {proto.source}", highlight=False, markup=False)
    style = {"match": "green", "within": "cyan", "known mismatch": "yellow", "MISMATCH": "bold red", "not run": "red"}
    for p in doc["parts"]:
        objects = p["_objects"]
        part, cells, baseline = objects["part"], objects["cells"], p["baseline"]
        by_variant = {r.metric: r for r in objects["results"]}
        table = Table(title=plain(f"{proto.name} / {part.name}: {p['judgments']} ({p['subset']}, n={p['n']}), "
                                  f"{part.level}-level {part.correlation} with human '{part.human}'", "table.title"))
        test = "Williams p" if part.level == "global" and part.correlation in CORRELATIONS else "perm. p"
        conf = f"{100 * float((p.get('resampling') or {}).get('confidence') or 0.95):g}"
        for col in ("paper's row", "variant", "meta-eval", f"{conf}% CI", "printed", "difference",
                    *([f"{test} vs {baseline}"] if baseline else []), "status"):
            table.add_column(plain(col), justify="left" if col in ("paper's row", "variant", "status") else "right")
        for c in cells:
            r = by_variant.get(c.variant)
            p_value = None if r is None else (r.williams_p_vs_baseline if test == "Williams p"
                                              else r.perm_p_vs_baseline)
            p_cell = ["(baseline)" if c.variant == baseline else f"{fmt(p_value)} {stars(p_value)}".strip()]
            digits = min(max(3, c.precision + 1), 8)  # a decimal beyond the printed ones: the rounding can be read
            table.add_row(plain(c.label), plain(c.variant), fmt(c.meta_eval, digits), _ci_cell(r, p), plain(c.text),
                          "-" if c.difference is None else f"{c.difference:+.{digits}f}", *(p_cell if baseline else []),
                          f"[{style[c.verdict]}]{c.status}[/]")
        shown = {c.variant for c in cells}
        for r in objects["results"]:  # variants with no printed number (a recipe part: meta-eval's numbers only)
            if r.metric in shown:
                continue
            value = r.value if r.value is not None else getattr(r, part.correlation, None)
            p_value = r.williams_p_vs_baseline if test == "Williams p" else r.perm_p_vs_baseline
            p_cell = ["(baseline)" if r.metric == baseline else f"{fmt(p_value)} {stars(p_value)}".strip()]
            table.add_row("-", plain(r.metric), fmt(value), _ci_cell(r, p), "-", "-", *(p_cell if baseline else []),
                          "no printed number")
        out.print(table)
        out.print(f"CI: {p['interval']}" if p.get("interval") else f"CI: none ({p.get('no_interval')})",
                  highlight=False, markup=False, soft_wrap=True)
        if baseline:
            out.print(f"** p <= 0.01, * p <= 0.05: one-sided {test} against {baseline}, unadjusted (no correction "
                      "over the comparisons), as papers print them", highlight=False, markup=False)
        if part.spa_seed is not None:
            out.print(f"spa: {part.permutations} permutations per system pair, signs drawn with seed {part.spa_seed}",
                      highlight=False, markup=False)
        if cells:
            out.print(f"match: meta-eval rounds to the printed number at its printed decimals; within: |meta-eval - "
                      f"printed| <= {part.tolerance:g}", highlight=False, markup=False)
        for c in cells:
            if c.reason and not c.matches:
                out.print(f"  {c.variant}: {c.reason}", highlight=False, markup=False, soft_wrap=True)
        for ms in objects["scored"]:
            out.print(f"  {ms.signature}", highlight=False, markup=False, soft_wrap=True)
        for metric_name, reason in objects["skipped"]:
            out.print(f"[red]not run[/] {escape(metric_name)}: {escape(reason)}", highlight=False)
    out.print(protocol_summary(doc), highlight=False, markup=False)


def _ci_cell(result, part: dict) -> str:
    """A protocol cell's interval as ``run`` prints it; ``-`` where the part has none (its ``no_interval``) or the
    variant has no value."""
    ci = None if result is None or not part.get("interval") else result.ci
    return "-" if not ci else f"[{fmt(ci[0])}, {fmt(ci[1])}]"


def protocol_summary(doc: dict) -> str:
    """The one-line verdict of a :func:`meta_eval.task.run_protocol` result: the counts per verdict."""
    counts, n_cells = doc["counts"], sum(doc["counts"].values())
    return (f"{doc['protocol']}: of {n_cells} printed cells {counts['match']} match at the printed precision, "
            f"{counts['within']} within tolerance, {counts['known mismatch']} known mismatches (reasons named), "
            f"{counts['MISMATCH']} unexplained, {counts['not run']} not run")


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


def overstatement_words(diff: float, tolerance: float = 0.0005) -> str:
    """The paper protocol's ungrouped - grouped difference in words, by sign and size: within ``tolerance`` (half
    the tables' last digit) the protocols agree; otherwise which one is higher and by how much."""
    if abs(diff) < tolerance:
        return f"ungrouped - grouped = {diff:+.4f}: the two protocols agree (|difference| < {tolerance:g})"
    if diff > 0:
        return f"ungrouped - grouped = {diff:+.4f}: splitting rows at random overstates by {diff:.4f}"
    return f"ungrouped - grouped = {diff:+.4f}: splitting rows at random gives {-diff:.4f} less than by document"


def print_nested(result, out: Console, err: Console) -> None:
    """``meta-eval learn`` (nested protocol): the held-out estimate with its interval, the paired tests against the
    best single feature and the baseline, the choices and weights per outer fold, the final model."""
    n, model, jset = result.nested, result.model, result.data.jset
    corr = n.kind
    p_res = n.resamples
    out.print(f"{jset.name} ({jset.subset}, n={len(jset)}, {jset.documents()} documents): ridge to "
              f"'{result.data.spec}'; {n.scheme()}", highlight=False, soft_wrap=True, markup=False)
    table = Table(title=f"Held-out {corr} (pooled predictions of the outer folds); {n.interval_label()}; p: "
                        "two-sided paired bootstrap test on the same rows and draws")
    for col in ("metric", "role", corr, "95% CI", "learned - it", "95% CI (difference)", "p"):
        table.add_column(col, justify="left" if col in ("metric", "role") else "right")

    def ci(a, b):
        return "-" if a is None else f"[{fmt(a)}, {fmt(b)}]"

    table.add_row(plain("learned (" + " + ".join(n.features) + ")"), "nested held-out", fmt(n.value),
                  ci(n.low, n.high), "", "", "", style="bold")
    for c in n.comparisons:
        table.add_row(plain(c.feature), c.role, fmt(c.value), ci(c.low, c.high),
                      "-" if c.difference is None else f"{c.difference:+.3f}", ci(c.diff_low, c.diff_high),
                      fmt_p(c.p, p_res))
    out.print(table)
    folds = Table(title="Outer folds: what the inner cross-validation chose on each training part")
    capped = n.inner_note()  # fewer inner folds than asked somewhere: the number of each fold is a column
    for col in ("fold", "held-out rows", *(("inner folds",) if capped else ()), "features", "alpha", "inner mean",
                f"held-out {corr}"):
        folds.add_column(col, justify="left" if col == "features" else "right")
    for f in n.fold_results:
        folds.add_row(str(f.fold + 1), str(f.test_rows), *((str(f.inner_folds),) if capped else ()),
                      plain(" + ".join(f.features)), f"{f.alpha:g}", fmt(f.inner), fmt(f.correlation))
    out.print(folds)
    if capped:
        out.print(f"note: {capped}", highlight=False, soft_wrap=True, markup=False)
    wtable = Table(title=f"Weights (standardised): mean ± sd over the {n.folds} outer folds (0 where a fold did not "
                         f"choose the feature), and the final model fitted on all {len(jset)} rows (alpha "
                         f"{n.alpha:g})")
    for col in ("feature", "folds", "outer folds", "final (standardised)", "final (raw)"):
        wtable.add_column(col, justify="left" if col == "feature" else "right")
    final = dict(zip(model.features, zip(model.weights, model.raw_weights)))
    for name, w in n.weights.items():
        fw = final.get(name)
        wtable.add_row(plain(name), f"{w['folds_chosen']}/{n.folds}", f"{w['mean']:.4f} ± {w['sd']:.4f}",
                       "-" if fw is None else f"{fw[0]:.4f}", "-" if fw is None else f"{fw[1]:.4f}")
    for name in model.features:
        if name not in n.weights:
            wtable.add_row(plain(name), f"0/{n.folds}", "-", f"{final[name][0]:.4f}", f"{final[name][1]:.4f}")
    out.print(wtable)
    if result.settings.get("baseline") is None:
        out.print("no baseline test: the default baseline rougeL-f is not among the features (--baseline VARIANT)",
                  highlight=False)
    inner = sorted(set(n.inner_used))
    err.print(f"  learning: {result.learn_seconds:.2f}s (search: {n.strategy}, {n.folds} outer x "
              f"{inner[0] if len(inner) == 1 else f'{inner[0]} to {inner[-1]}'} inner folds x {len(n.alphas)} "
              f"alphas, {n.resamples} bootstrap resamples)", highlight=False)


def print_learn(result, out: Console, err: Console, top: int = 10) -> None:
    """``meta-eval learn``: the nested protocol's report (:func:`print_nested`), or the paper protocol's feature
    sets by held-out correlation, the search, the best set's weights (over the splits and in the final fit) and its
    grouped vs ungrouped correlation; the time on ``err``."""
    from meta_eval.units import units_line

    # the units of the held-out correlations, as run's
    out.print(units_line(result.data.jset), highlight=False, markup=False)
    if result.nested is not None:
        print_nested(result, out, err)
        return print_saved(result, out)
    outcome, best, model, jset = result.outcome, result.outcome.best, result.model, result.data.jset
    settings = result.settings
    correlation, splits, alpha = settings["correlation"], settings["splits"], settings["alpha"]

    def ci(p):
        return "-" if p is None or p.low is None else f"[{fmt(p.low)}, {fmt(p.high)}]"

    title = (f"{jset.name} ({jset.subset}, n={len(jset)}, {jset.documents()} documents): ridge (alpha={alpha:g}) to "
             f"'{result.data.spec}', held-out {correlation} over {splits} splits "
             f"({settings['train_fraction']:.0%} train); search: {outcome.strategy}")
    table = Table(title=plain(title))  # the set's name and target come from its file
    grouped = result.grouped
    columns_shown = (("#", "features", "size", "grouped (by document)", "spread over splits", "ungrouped",
                      "ungrouped - grouped") if grouped else ("#", "features", "size", "ungrouped (rows)",
                                                              "spread over splits"))
    for col in columns_shown:
        table.add_column(col, justify="left" if col == "features" else "right")
    results = outcome.results
    for i, r in enumerate(results[:top], 1):
        cells = ((fmt(r.grouped.mean), ci(r.grouped), fmt(r.ungrouped.mean), fmt(r.overstatement)) if grouped
                 else (fmt(r.ungrouped.mean), ci(r.ungrouped)))
        table.add_row(str(i), plain(" + ".join(r.features)), str(r.size), *cells, style="bold" if i == 1 else None)
    out.print(table)
    out.print(f"search: {outcome.strategy} ({outcome.reason}); {outcome.summary()}"
              + (f"; {top} of {len(results)} shown" if len(results) > top else ""), highlight=False, markup=False)
    if outcome.path:
        stage = f"first {outcome.search_splits} splits" if outcome.screened else f"all {splits} splits"
        steps = ", ".join(f"{'+' if p['accepted'] else 'not +'}{p['added']} {p['score']:.4f}" for p in outcome.path)
        out.print(f"greedy path (mean held-out {correlation}, {best.primary.protocol}, {stage}): {steps}",
                  highlight=False, markup=False)
    what = "full feature set" if outcome.strategy == "none" else "best feature set"
    p = best.primary
    wtable = Table(title=f"Weights of the {what}: mean ± sd over the {p.protocol} splits, and the final fit on all "
                         f"{len(jset)} rows")
    for col in ("feature", "standardised (splits)", "raw (splits)", "standardised (final)", "raw (final)"):
        wtable.add_column(col, justify="left" if col == "feature" else "right")
    for j, f in enumerate(best.features):
        wtable.add_row(plain(f), f"{p.weight_std_mean[j]:.4f} ± {p.weight_std_sd[j]:.4f}",
                       f"{p.weight_raw_mean[j]:.4f} ± {p.weight_raw_sd[j]:.4f}", f"{model.weights[j]:.4f}",
                       f"{model.raw_weights[j]:.4f}")
    wtable.add_row("(intercept)", f"{p.intercept_std[0]:.4f} ± {p.intercept_std[1]:.4f}",
                   f"{p.intercept_raw[0]:.4f} ± {p.intercept_raw[1]:.4f}", f"{model.intercept:.4f}",
                   f"{model.raw_intercept:.4f}")
    out.print(wtable)
    if best.grouped is not None and best.overstatement is not None:
        out.print(f"{' + '.join(best.features)}: held-out {correlation} {fmt(best.grouped.mean)} "
                  f"{ci(best.grouped)} with each document on one side; {fmt(best.ungrouped.mean)} "
                  f"{ci(best.ungrouped)} with rows split at random: {overstatement_words(best.overstatement)}",
                  highlight=False, markup=False)
    else:
        out.print(f"{' + '.join(best.features)}: held-out {correlation} {fmt(best.ungrouped.mean)} "
                  f"{ci(best.ungrouped)} with rows split at random", highlight=False, markup=False)
    out.print("paper protocol: the feature set is chosen on the same splits it is reported on (optimistic), alpha "
              "is fixed, and [low, high] is the spread of the held-out correlation over splits (2.5th-97.5th "
              "percentiles), not a confidence interval; --protocol nested gives a held-out estimate with one",
              highlight=False, markup=False)
    err.print(f"  learning: {result.learn_seconds:.2f}s ({outcome.evaluated} feature set(s) searched, {len(results)} "
              f"evaluated on {splits} splits x {2 if grouped else 1} protocol(s))", highlight=False)
    print_saved(result, out)


def print_saved(result, out: Console) -> None:
    """``learn --save``: where the model went and how to score with it (its name as ``learned:NAME`` takes it)."""
    from meta_eval.metrics.learned import models_dir

    if result.saved is None:
        return
    saved = result.saved
    use = f"learned:{saved.stem if saved.parent == models_dir() else saved}"
    out.print(f"saved {use} ({len(result.model.features)} features) to {saved}; score with --metrics {use}",
              highlight=False, soft_wrap=True, markup=False)


def print_judgment_set(jset, out: Console) -> None:
    """Print what one judgment set holds (``meta-eval judgments PATH``) and the levels its default dimension allows."""
    from dataclasses import replace

    from meta_eval.evaluate import check_level
    from meta_eval.units import level_words

    d = jset.describe()
    out.print(terminal(f"{d['origin']}: set {jset.name!r} ({jset.subset})"), highlight=False, markup=False,
              soft_wrap=True)

    def add(what: str, value) -> None:  # one line each: a line break or ESC in a name shows as \x0a, \x1b
        out.print(terminal(f"  {what}: {value}"), highlight=False, markup=False, soft_wrap=True)

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
    if d.get("multi_system_rows"):
        add("rows naming several systems", d["multi_system_rows"])
    for dim, c in d["dimensions"].items():
        add(f"human '{dim}'" + (" (default)" if dim == d["default_dimension"] else ""),
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
    add("default baseline", f"{d['default_baseline']} (run tests every metric against it unless --baseline is given)"
        if d["default_baseline"] else f"none ({jset.no_baseline}; run tests against --baseline VARIANT only)")
    dim = jset.default_dimension
    prop = jset.get_property(dim)
    for level in (("global", "summary", "system") if prop is None or not prop.categorical else ()):
        prefix = ""
        label = level_words(jset.task, level).name
        label = f"{level} level" if label == f"{level} level" else f"{level} level = {label}"
        try:
            scored = jset.scored(dim)
            if scored.duplicates == "error" and scored.repeated_pairs():
                prefix = "only with --duplicates mean or first; then "
                scored = replace(scored, duplicates="mean")
            units = check_level(scored, dim, level)
            add(f"{label} ({dim})", f"{prefix}yes: {units}")
        except ValueError as exc:
            add(f"{label} ({dim})", f"{prefix}no: {exc}")
    if prop is not None and prop.categorical:  # meta_eval.categorical: labels compared item by item
        stats = "pairwise-accuracy" if prop.pairwise else "label-accuracy, kappa, macro-f1"
        add(f"levels ({dim})", f"items only: `run` compares labels item by item ({stats}; docs/statistics.md)")
    if jset.properties:
        from meta_eval.judgments.judge_bench import human_agreement

        for prop, a in human_agreement(jset).items():
            add(f"property {prop!r}", f"{a['scale']}; {agreement_text(a)}")
        add("texts", jset.candidate_rule)
        add("raters", "a value's position in individual_human_scores is its rater (as JUDGE-BENCH's evaluation)")
    for note in d["notes"]:
        out.print(f"note: {terminal(note)}", highlight=False, markup=False, soft_wrap=True)


def print_catalog(entries: list[dict], root, out: Console) -> None:
    """The built-in sets (:func:`meta_eval.judgments.catalog.catalog`), one short block per set that reads at any
    terminal width: name, task, size, subsets, human dimensions, inputs, and where the data come from."""
    out.print(f"Judgment sets (data: {root})", highlight=False, markup=False, soft_wrap=True)
    for e in entries:
        out.print("")
        subsets = f" (subsets: {', '.join(e['subsets'])})" if len(e["subsets"]) > 1 else ""
        if e["problems"]:
            out.print(f"[bold]{escape(e['name'])}[/]{escape(subsets)}: [red]files missing or corrupt[/]",
                      highlight=False, soft_wrap=True)
            for line in e["problems"]:
                out.print(f"  [yellow]{escape(line)}[/]", highlight=False, soft_wrap=True)
            continue
        if "sets" in e:
            print_judge_bench_entry(e, out)
            continue
        out.print(f"[bold]{escape(e['name'])}[/] ({escape(e['task'] or 'task not stated')}), default subset "
                  f"{escape(e['subset'])}{escape(subsets)}: {e['rows']} rows, {e['documents']} documents, "
                  f"{e['systems']} systems", highlight=False, soft_wrap=True)
        lines = [("human", ", ".join(e["dimensions"]) + " (the first is the default)"),
                 ("inputs", f"{'source documents, ' if e['sources'] else 'no source, '}"
                            f"{e['references'] or 'no'} reference{'s' if e['references'] != 1 else ''} per row"),
                 ("annotators", e["annotators"]), ("licence", e["licence"]), ("from", e["data_source"])]
        for key, value in lines:
            if value:
                out.print(f"  {key}: {value}", highlight=False, markup=False, soft_wrap=True)


def print_judge_bench_entry(e: dict, out: Console) -> None:
    """The ``judge-bench`` block of ``meta-eval judgments``: per file (``-j judge-bench:<name>``) its rows, licence,
    raters and each property with its kind, scale or labels and the raters' Krippendorff's alpha."""
    out.print(f"[bold]{escape(e['name'])}[/] ({escape(e['task'])}): {e['rows']} rows in {len(e['sets'])} files, "
              "-j judge-bench:<name>", highlight=False, soft_wrap=True)
    out.print(f"  from: {e['data_source']}", highlight=False, markup=False, soft_wrap=True)
    for s in e["sets"]:
        out.print(f"  {s['name']} ({s['task']}): {s['rows']} rows, {s['annotators']}, licence {s['licence']}",
                  highlight=False, markup=False, soft_wrap=True)
        for prop, a in s["properties"].items():
            out.print(terminal(f"    {prop}: {a['scale']}; {agreement_text(a)}"), highlight=False, markup=False,
                      soft_wrap=True)
    for line in e.get("missing", []):
        out.print(f"  [yellow]{escape(line)}[/]", highlight=False, soft_wrap=True)


def agreement_text(a: dict) -> str:
    """``human agreement alpha (ordinal) = 0.412`` or ``human agreement: one rater: no agreement``, from
    :func:`judgments.judge_bench.human_agreement`."""
    if a["alpha"] is None:
        return f"human agreement: {a['note']}"
    lo, hi = a["raters_per_item"]
    raters = f"{lo}" if lo == hi else f"{lo}-{hi}"
    return f"human agreement Krippendorff's alpha ({a['level']}, {raters} raters per item) = {a['alpha']:.3f}"


def print_protocols(out: Console) -> list[str]:
    """``meta-eval protocols``: every named protocol (:mod:`meta_eval.protocol`) with its parts' tolerance, the
    verdict counts a run is expected to give and its citation; returns the problems of broken protocol files (also
    printed)."""
    from meta_eval.protocol import ProtocolError, load_protocol, protocol_names

    out.print("Protocols: a paper's table run as it was run (meta-eval run --protocol NAME, or --protocol FILE.toml)",
              highlight=False, markup=False)
    problems = []
    for name in protocol_names():
        try:
            proto = load_protocol(name)
        except ProtocolError as exc:
            problems.append(str(exc))
            continue
        out.print("")
        out.print(f"[bold]{escape(proto.name)}[/]: {escape(proto.title)} ({proto.cells} printed cells)",
                  highlight=False, soft_wrap=True)
        for p in proto.parts:
            out.print(f"  {p.name}: {p.judgments}, human {p.human}, {p.level} level, {p.correlation}, tolerance "
                      f"{p.tolerance:g}", highlight=False, markup=False, soft_wrap=True)
        expected = proto.expected
        out.print(f"  expected: match {expected['match']}, within tolerance {expected['within']}, known mismatch "
                  f"{expected['known']}" if expected else "  expected: (not stated)", highlight=False, markup=False,
                  soft_wrap=True)
        out.print(f"  {proto.citation}", highlight=False, markup=False, soft_wrap=True)
    for problem in problems:
        out.print(f"broken protocol file: {problem}", highlight=False, markup=False)
    return problems


def protocol_problems(doc: dict) -> list[str]:
    """What makes ``run --protocol`` exit 1: the cells that do not reproduce the paper without an explanation (with
    :func:`protocol_summary`), and the metrics that could not run here; empty when every cell is accounted for."""
    problems = [f"{c['part']}/{c['variant']} (meta-eval {c['meta_eval']:.{min(c['decimals'] + 1, 8)}f}, printed "
                f"{c['printed_text']}, tolerance {c['tolerance']:g})" for p in doc["parts"] for c in p["cells"]
                if c["verdict"] == "MISMATCH"]
    if problems:
        problems = [f"{protocol_summary(doc)}; unexplained: {', '.join(problems)}"]
    if doc["_missing"]:
        problems.append("the protocol needs metrics that could not run here: "
                        + "; ".join(f"{p}/{n}: {r}" for p, n, r in doc["_missing"]))
    return problems


def categorical_pvalues(result, two_sided: bool = False) -> tuple[dict, dict]:
    """Per variant, its p-value against the baseline and the adjusted one, from a
    :class:`~meta_eval.categorical.CategoricalResult`; ``two_sided``: the two-sided ones the run counted
    (``run(..., two_sided=True)``, ``--two-sided``: each tail counted on the same permutations, never guessed)."""
    if not two_sided:
        return ({r["metric"]: r["p_vs_baseline"] for r in result.results},
                {r["metric"]: r["p_adjusted_vs_baseline"] for r in result.results})
    if not getattr(result, "two_sided", False):
        raise MetaEvalError("this result's tests are one-sided: its other tails were not counted; run it with "
                            "--two-sided (two_sided=True in the Python API)")
    return ({r["metric"]: r.get("p_vs_baseline_two_sided") for r in result.results},
            {r["metric"]: r["p_adjusted_vs_baseline"] for r in result.results})


def categorical_table(result, *, two_sided: bool = False) -> RunTable:
    """A :class:`~meta_eval.categorical.CategoricalResult` as a :class:`RunTable`: per variant (best first) its
    rule, items, each statistic with its interval, alpha with the metric as one more rater and the p-value against
    the baseline (stars from the adjusted p)."""
    raw, adjusted = categorical_pvalues(result, two_sided)
    counted = result.unparsed or {}  # an LLM judge's answers with no label, N of M (as in the graded table)
    metric_of = {v: ms.metric for ms in result.scores for v in ms.scores}
    header = ["metric", "rule", "items"]
    for name in result.statistics:
        header += [name, "95% CI"]
    header += (["unparsed"] if counted else []) + ["alpha +metric", f"p vs {result.baseline}" if result.baseline
                                                   else "p"]
    rows, styles = [], []
    for r in result.results:
        row = [r["metric"], r["rule"], str(r["items"])]
        for name in result.statistics:
            lo, hi = r[name]["interval"]
            row += [fmt(r[name]["value"]), f"[{fmt(lo)}, {fmt(hi)}]"]
        if counted:
            c = counted.get(metric_of.get(r["metric"]))
            row.append(f"{c['unparsed']} of {c['answers']}" if c else "-")
        p = raw[r["metric"]]
        row += [fmt(r["alpha_with_metric"]), fmt_p(p, result.resamples, 2 if two_sided else 1)
                + stars(adjusted[r["metric"]])]
        rows.append(row)
        styles.append("bold" if stars(adjusted[r["metric"]]) else None)
    kind = "pairwise preference" if result.kind == "pairwise" else "categorical labels"
    title = (f"{result.judgments}: {result.human} ({kind}: {', '.join(result.labels)}), sorted by "
             f"{result.statistic}, n = {result.n}")
    return RunTable(title, header, rows, styles, None)


def emit_table(table, form: str, out: Console, err: Console, *, left=("metric",)) -> Console:
    """Print a :class:`RunTable`: a rich table on ``out`` (``form`` "table"; a section line before the ceiling row;
    the ``left`` columns left-aligned), else its csv/md/latex text on stdout (csv's title on stderr, first: the csv
    stays a plain table). Returns the console for the notes under it (stdout for a terminal table, else stderr,
    leaving stdout to the table)."""
    if form == "csv":
        err.print(terminal(table.title), highlight=False, markup=False, soft_wrap=True)
    if form != "table":
        out.file.write(render_table(table, form))
        out.file.flush()
        return err
    rich_table = Table(title=plain(table.title, "table.title"))
    for col in table.header:
        rich_table.add_column(plain(col), justify="left" if col in left else "right")
    for i, (row, style) in enumerate(zip(table.rows, table.styles)):
        if i == table.ceiling_at:
            rich_table.add_section()
        rich_table.add_row(*(plain(c) for c in row), style=style)
    out.print(rich_table)
    return out


def print_categorical(result, out: Console, err: Console, *, form: str = "table", two_sided: bool = False,
                      verbose: bool = False) -> None:
    """``meta-eval run`` on a categorical or pairwise property: the table, then each variant's rule, the split, the
    human agreement, the test and the skipped metrics."""
    table = categorical_table(result, two_sided=two_sided)
    for line in warning_lines(result):  # no test against a baseline, and why: once, before the table
        (out if form == "table" else err).print(Text.assemble(("warning", "yellow"), line[len("warning"):]),
                                                soft_wrap=True)
    notes = emit_table(table, form, out, err, left=("metric", "rule"))

    def say(line: str) -> None:
        notes.print(terminal(line), highlight=False, soft_wrap=True, markup=False)

    for r in result.results:
        say(f"rule: {r['metric']}: {r['rule']}: {r['rule_text']}")
    if result.split:
        say(f"split: rows permuted with seed {result.split['seed']}: {result.split['fit_items']} items choose each "
            f"threshold rule, the other {result.split['held_out_items']} give its statistics and tests")
    agreement = result.human_agreement
    if agreement is not None:
        say(f"{agreement_text(agreement)}; alpha +metric: the same with each variant's answer as one more rater "
            "(nominal)" if agreement["alpha"] is not None else agreement_text(agreement))
    say(f"CI: percentile bootstrap over items, {result.resamples} resamples, seed {result.seed}, 95%")
    if result.statistic == "pairwise-accuracy":
        say("pairwise-accuracy: the share of items where the metric picks the output people picked; picking "
            "neither counts wrong, as LLMBar counts it")
    if result.baseline:
        adjusted = "p" if result.correction == "none" else "adjusted p"
        say(f"** {adjusted} <= 0.01, * {adjusted} <= 0.05 ({result.correction} over the comparisons with the "
            f"baseline): {'two-sided' if two_sided else 'one-sided'} paired permutation test over items that the "
            f"metric's {result.statistic} {'differs from' if two_sided else 'exceeds'} {result.baseline}'s, on the "
            "items both are reported on; the column "
            "shows the unadjusted p")
    if result.pvalues:
        from meta_eval.stats.clusters import family_label

        tested = result.pvalues["p_adjusted"]  # each better-valued variant against each worse-valued one
        n = len(result.pvalues["order"])
        say(f"all pairs (--pairwise; one-sided paired permutation tests, the better-valued variant first; adjusted: "
            f"{family_label(result.correction, n * (n - 1) // 2, 'pairs', every=True)}): " + "; ".join(
                _pair_p(result.pvalues["p"][k], v, result.resamples, k) for k, v in tested.items()))
    for note in result.notes:
        say(f"note: {note}")
    notes.print("Signatures:")
    for ms in result.scores:
        say(f"  {ms.signature}")
        err.print(f"  {ms.metric}: {ms.computed} computed, {ms.cached} from cache, {ms.seconds:.2f}s"
                  + (BESIDE_NOTE if ms.beside else ""), highlight=False, markup=False)
    print_skipped(result.skipped, notes, verbose)
