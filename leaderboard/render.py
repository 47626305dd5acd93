"""Rendering a leaderboard's ``results.json`` as ``README.md`` (ranked tables) and ``index.html`` (self-contained page).

The page has no external resources: the results are embedded as JSON, and a small script draws, for the chosen set
(one choice per section of the board, "qags (xsum)", chosen by its position: several subsets of one set share its
name), level and statistic, a sortable table (click a column header) with the human ceiling, a bar chart of the
values with their confidence intervals and the ceiling (inline SVG) and a heat map of the pairwise significance
tests (adjusted p-values). Every name from the data is escaped for where it goes (:mod:`meta_eval.report.escape`): HTML
text, JSON embedded in the page (no ``<`` in it), Markdown text or code spans in the README.
"""
from __future__ import annotations

import re

from meta_eval.report.escape import html, html_url, json_in_html, markdown, markdown_code, markdown_url

__all__ = ["render_readme", "render_html", "md_text", "block_notes"]


_UNITS = {"summary": "documents", "system": "systems", "global": "rows"}


def _fmt(x) -> str:
    """A value as every table of meta-eval shows it (:func:`meta_eval.report.tables.fmt`: 3 decimals, scientific
    below 0.001, ``-`` for None); the page shows the same strings, made here (:func:`_page_data`), not by JavaScript
    (whose ``toFixed`` rounds an exact tie such as -0.0625 away from Python's)."""
    from meta_eval.report.tables import fmt

    return fmt(x)


def md_text(text) -> str:
    """``text`` from the data as literal Markdown: :func:`meta_eval.report.escape.markdown` (every character Markdown
    or an HTML tag could read backslash-escaped, line breaks as spaces).

    >>> print(md_text("95% CI (a|b) <i>x</i> *y*"))
    95% CI (a\\|b) \\<i\\>x\\</i\\> \\*y\\*
    """
    return markdown(text)


def _units_word(block: dict) -> str:
    """What ``n_units`` counts, in the set's task's words (``units``; older boards: by level)."""
    return block.get("units") or _UNITS[block["level"]]


def _level_name(block: dict) -> str:
    """The level in the set's task's words (``label``: "segment level, group by item"; older boards: by level)."""
    return block.get("label") or f"{block['level']} level"


def block_notes(block: dict) -> list[str]:
    """What a block's intervals and ranks are, as readable sentences (plain text, not yet escaped): the units the
    level rests on, the interval label and the pairwise test with its multiple-comparison family."""
    notes = [f"{_level_name(block)}: {block['n_units']} {_units_word(block)}"]
    if block.get("interval"):
        notes.append(f"intervals: {block['interval']}")
    pw = block.get("pairwise")
    if pw:
        name = block.get("statistic") or block.get("correlation")
        notes.append(f"ranks{f' ({name})' if name else ''}: {pw['test']} test, "
                     f"{pw.get('family') or pw['correction'] + ' correction'}, alpha {pw['alpha']}"
                     + (f", early stopping {pw['early_stopping']}" if pw.get("early_stopping") else "")
                     + (f"; warning: {pw['resolution_note']}" if pw.get("resolution_note") else ""))
    return notes


def split_signature(signature: str) -> tuple[str, list[tuple[str, str]], list[tuple[str, str]]]:
    """A metric signature as (name, options, versions): ``name|key:value|...|lib==version|code:digest`` split at its
    top-level bars (a part such as sacrebleu's ``sacrebleu:(nrefs:1|case:mixed)`` keeps its own bars). The code
    digest and the numeric mode are options like the others.

    >>> split_signature("chrf|sacrebleu:(nrefs:1|nc:6)|ref:source|sacrebleu==2.6.0|code:ab12")
    ('chrf', [('sacrebleu', '(nrefs:1|nc:6)'), ('ref', 'source'), ('code', 'ab12')], [('sacrebleu', '2.6.0')])
    """
    parts, depth, current = [], 0, ""
    for ch in signature:
        if ch == "|" and depth == 0:
            parts.append(current)
            current = ""
            continue
        depth += (ch == "(") - (ch == ")")
        current += ch
    parts.append(current)
    name, options, versions = parts[0], [], []
    for part in parts[1:]:
        if "==" in part and ":" not in part.split("==", 1)[0]:
            versions.append(tuple(part.split("==", 1)))
        else:
            key, _, value = part.partition(":")
            options.append((key, value))
    return name, options, versions


def set_source(name: str) -> str | None:
    """Where a built-in set's data come from, with its paper (the loader's ``DATA_SOURCE``); None for other sets."""
    import importlib

    from meta_eval.judgments import BUILTIN

    module = BUILTIN.get(name)
    return getattr(importlib.import_module(module), "DATA_SOURCE", None) if module else None


def ceiling_text(note: str | None, judgments: str | None = None) -> str:
    """Why the set ``judgments`` has no human ceiling, in a reader's words where it is a built-in set (what its public
    data hold); for any other set (a user's file) the computed note itself, which is true of any data and is the
    reason the index gives (:mod:`meta_eval.leaderboard.index`): a user's file is no "public data", and its scores
    need not be a mean of annotators'."""
    from meta_eval.judgments import is_builtin

    if judgments is None or not is_builtin(judgments):
        return note or "no per-annotator scores"
    if note and "no per-annotator values" in note:
        return ("the public data give only the mean of the annotators' scores, not each annotator's, so how well "
                "people agree with each other cannot be measured here")
    if note and "at least 2 annotator values" in note:
        return ("each item was rated by one annotator in the public data, so how well people agree with each "
                "other cannot be measured here")
    return note or "no per-annotator scores"


def readable_metrics(metrics: list[dict]) -> list[dict]:
    """Each distinct signature of a set's metrics as ``{metric, options, versions, signature}`` strings (options
    ``key=value``, versions ``dist version``), for the pages."""
    out = []
    system = {m["signature"]: m.get("system_score", "mean") for m in metrics}
    server = {m["signature"]: m.get("server") for m in metrics}
    for sig in dict.fromkeys(m["signature"] for m in metrics):
        name, options, versions = split_signature(sig)
        if system[sig] != "mean":  # how the system level scores a system (sys:corpus: sacrebleu's corpus score)
            options = [*options, (f"sys:{system[sig]}", "")]
        if server[sig]:  # an LLM judge: the server it asked (recorded, not signed)
            options = [*options, ("server", server[sig])]
        out.append({"metric": name, "signature": sig,
                    "options": ", ".join(f"{k}={v}" if v else k for k, v in options) or "-",
                    "versions": ", ".join(f"{d} {v}" for d, v in versions) or "-"})
    return out


def _metrics_table(metrics: list[dict]) -> list[str]:
    """Each metric's options and library versions, readable (the full signature in the last column)."""
    return ["| metric | options | versions | signature |", "|---|---|---|---|"] + [
        f"| {md_text(m['metric'])} | {md_text(m['options'])} | {md_text(m['versions'])} | "
        f"{markdown_code(m['signature'], in_table=True)} |"
        for m in readable_metrics(metrics)]


def board_figures(doc: dict) -> dict[str, bytes]:
    """The board's figures (:func:`meta_eval.report.figures.board_figure`): per set and level, the primary
    correlation with intervals, clusters and the ceiling, as deterministic SVG; ``{}`` without matplotlib."""
    import importlib.util
    import io

    if importlib.util.find_spec("matplotlib") is None:
        return {}
    from meta_eval.report import figures

    out = {}
    primary = doc["meta_evaluation"]["primary"]
    for s in doc["sets"]:
        for b in s["levels"]:
            if b.get("correlation") == primary and any(r.get("r") is not None for r in b["results"]):
                fig = figures.board_figure(s, b)
                buf = io.BytesIO()
                figures.shown_as_text(fig).savefig(buf, format="svg", metadata={"Date": None, "Creator": "meta-eval"},
                                                   bbox_inches="tight")
                __import__("matplotlib.pyplot").pyplot.close(fig)
                out[figures.board_figure_name(s, b)] = buf.getvalue()
    return out


def render_readme(doc: dict, figures: bool = False, blindspots: dict | None = None) -> str:
    """Markdown: one ranked table per set, level and correlation, with intervals and significance ranks; with
    ``figures``, each level's figure (:func:`board_figures`) above its table; with ``blindspots`` (the board's
    blindspots.json), a last section "Blind spots" (:func:`blindspot_lines`)."""
    meta = doc["meta_evaluation"]
    lines = [f"# Leaderboard: {md_text(doc.get('title') or doc['name'])}", "",
             f"Generated by {markdown_code(doc['command'])} with meta-eval {md_text(doc['meta_eval_version'])}.", "",
             f"Meta-evaluation signature: {markdown_code(meta['signature'])}", "",
             "Each table ranks metric variants by their correlation with the human scores at one level "
             "(Deutsch et al. 2021): *summary* = per-document correlation across systems, averaged; *system* = "
             "correlation of per-system means; *global* = over all rows. Intervals are "
             f"{int(meta['confidence'] * 100)}% bootstrap percentile intervals ({meta['ci_method']}, "
             f"{meta['n_resamples']} resamples, seed {meta['seed']}); *rank* is the significance cluster: metrics "
             f"sharing a rank are not significantly different ({meta['test']}, {meta['correction']} correction, "
             f"alpha {meta['alpha']}). Ranks and the order follow the {meta['primary']} correlation. "
             "Further tables give the statistics of the WMT metrics tasks: system-level pairwise accuracy (Kocmi et "
             "al. 2021), soft pairwise accuracy (Thompson et al. 2024) and acc-t grouped by item (Deutsch, Foster & "
             "Freitag 2023), each ranked by its own test. *Human ceiling*: how well one annotator agrees with the "
             "others at the same statistic and level, where a set has per-annotator scores.", ""]
    primary = meta["primary"]
    for s in doc["sets"]:
        source = set_source(s["judgments"])  # the built-in loader's own text (a link in it kept), not the data's
        lines += [f"## {md_text(s['judgments'])} ({md_text(s['subset'])}): human {markdown_code(s['human'])}", "",
                  f"{s['n_rows']} rows, {s['n_documents']} document{'s' if s['n_documents'] != 1 else ''}, "
                  f"{s['n_systems']} system{'s' if s['n_systems'] != 1 else ''}."
                  + (f" Data: {source}." if source else ""), ""]
        for k in s.get("skipped", []):
            lines.append(f"- not run: {md_text(k['metric'])}: {md_text(k['reason'])}")
        for metric, r in s.get("not_measured", {}).items():
            lines.append(f"- {md_text(metric)}: {r['rows']} rows given the metric's documented value ("
                         + "; ".join(f"{n} with {md_text(why)}" for why, n in r["reasons"].items()) + ")")
        if s.get("skipped") or s.get("not_measured"):
            lines.append("")
        from meta_eval.leaderboard.judge_board import set_lines

        judge_lines = set_lines(s)  # a JUDGE-BENCH set: its property, the raters' agreement, the rules
        lines += [f"- {md_text(x)}" for x in judge_lines] + ([""] if judge_lines else [])
        levels = list(dict.fromkeys(b["level"] for b in s["levels"] if b.get("correlation")))
        for level in levels:
            blocks = {b["correlation"]: b for b in s["levels"] if b["level"] == level and b.get("correlation")}
            kinds = [k for k in (primary, *[k for k in ("spearman", "pearson", "kendall") if k != primary])
                     if k in blocks]
            first = blocks[kinds[0]]
            lines += [f"### {md_text(_level_name(first))} (n = {first['n_units']} {md_text(_units_word(first))})", ""]
            if figures and primary in blocks:
                from meta_eval.report.figures import board_figure_name

                lines += [f"![{md_text(s['judgments'])} ({md_text(s['subset'])}), {md_text(level)} level: "
                          f"{md_text(primary)} with intervals and the human ceiling]"
                          f"({markdown_url(board_figure_name(s, blocks[primary]))})", ""]
            lines += [f"> **Warning:** {md_text(first['warning'])}.", ""] if first.get("warning") else []
            lines += ["| rank | metric | " + " | ".join(map(md_text, kinds)) + " |",
                      "|---:|---|" + "---|" * len(kinds)]
            cells = {k: {r["variant"]: r for r in blocks[k]["results"]} for k in kinds}
            for r in first["results"]:
                row = [str(r["rank"]) if r["rank"] is not None else "-", md_text(r["variant"])]
                for k in kinds:
                    c = cells[k].get(r["variant"])
                    row.append("-" if c is None else _value_cell(c))
                lines.append("| " + " | ".join(row) + " |")
            ceilings = [blocks[k].get("ceiling") or {} for k in kinds]
            if any(c.get("value") is not None for c in ceilings):
                lines.append("| | *human ceiling* | " + " | ".join(_ceiling_cell(c) for c in ceilings) + " |")
            undefined = first.get("undefined") or []
            if undefined:
                lines += ["", "Undefined at this level (constant scores or too few units): "
                              f"{md_text(', '.join(undefined))}."]
            ranked = blocks.get(primary) if (blocks.get(primary) or {}).get("pairwise") else first
            notes = block_notes(ranked)
            lines += ["", md_text("; ".join(notes)) + "."]
            lines += _ceiling_note(first, s["judgments"])
            lines.append("")
        for b in s["levels"]:
            if b.get("correlation") is None:
                lines += _extra_table(b, s["judgments"])
        lines += ["Metrics, their options and library versions:", ""]
        lines += _metrics_table(s["metrics"])
        lines.append("")
    from meta_eval.leaderboard.judge_board import ADD_A_JUDGE, judge_command

    add = judge_command(doc)
    if add is not None:
        lines += ["## Adding an LLM judge", "", md_text(ADD_A_JUDGE), "", markdown_code(add), ""]
    if blindspots is not None:
        lines += blindspot_lines(blindspots)
    return "\n".join(lines)


BLINDSPOTS_ABOUT = (
    "How each metric reacts to controlled errors in a text (`meta-eval probe`, the BLINDSPOT protocol of He et al. "
    "2023; docs/probe.md): each reference is scored as the candidate against itself (or the source), then a "
    "perturbed copy of it. A cell is the share of items whose score dropped (95% bootstrap interval over items): for "
    "an error (fluency, order, content) the metric *detects* it, higher is better; for an invariance (marked *false "
    "alarms*) the metric punishes a change that leaves the text as good, lower is better. Items a perturbation cannot "
    "apply to are skipped, never counted.")


def blindspot_lines(blindspots: dict) -> list[str]:
    """The "Blind spots" section of a board's README: per set, the metric x perturbation table of rates."""
    from meta_eval.probe.report import markdown_lines

    lines = ["## Blind spots", "", BLINDSPOTS_ABOUT, "", f"Generated by {markdown_code(blindspots['command'])} with "
             f"meta-eval {md_text(blindspots['meta_eval_version'])}.", ""]
    for s in blindspots["sets"]:
        lines += markdown_lines(s, s.get("figure"))
    return lines


def _blindspot_html(blindspots: dict) -> str:
    """The "Blind spots" section of a board's page: static tables (every name escaped), each set's heatmap."""
    from meta_eval.probe.report import _f

    e = html
    parts = ["<h2>Blind spots</h2>", f'<p class="small">{e(BLINDSPOTS_ABOUT.replace("*", ""))}</p>']
    for s in blindspots["sets"]:
        perts = s["perturbations"]
        cell = {(c["variant"], c["perturbation"]): c for c in s["cells"]}
        variants = list(dict.fromkeys(c["variant"] for c in s["cells"]))
        parts.append(f"<h3>{e(s['judgments'])} ({e(s['subset'])}): {s['n_items']} items against "
                     f"{e(s['settings']['against'])}</h3>")
        if s.get("figure"):
            parts.append(f'<img src="{html_url(s["figure"])}" alt="blind spots heatmap" style="max-width:100%">')
        head = "".join(f"<th>{e(p['name'])}{' (false alarms)' if p['expect'] == 'same' else ''}</th>" for p in perts)
        rows = []
        for v in variants:
            tds = []
            for p in perts:
                c = cell.get((v, p["name"]))
                tds.append("<td>-</td>" if c is None or c["rate"] is None else
                           f"<td>{_f(c['rate'], 2)} [{_f(c['rate_ci'][0], 2)}, {_f(c['rate_ci'][1], 2)}]</td>")
            rows.append(f'<tr><td class="name">{e(v)}</td>{"".join(tds)}</tr>')
        counts = "".join(f"<tr><td class=\"name\">{e(p['name'])}</td><td class=\"name\">{e(p['family'])}</td>"
                         f"<td>{p['n_applied']}</td><td>{p['n_skipped']}</td></tr>" for p in perts)
        parts += [f'<table><tr><th class="name">metric</th>{head}</tr>{"".join(rows)}</table>',
                  '<table><tr><th class="name">perturbation</th><th class="name">family</th><th>applied</th>'
                  f"<th>skipped</th></tr>{counts}</table>",
                  *(f'<p class="small">Metric not probed: {e(d["metric"])} ({e(d["reason"])}).</p>'
                    for d in s.get("skipped") or ()),  # as the README says it (probe.report.markdown_lines)
                  f'<p class="small">Probe signature: <code>{e(s["probe"])}</code></p>']
    return "\n".join(parts) + "\n"


def _value_cell(r: dict) -> str:
    """``0.412 [0.301, 0.520]``; the value alone where a result has no interval (rows without a system)."""
    if r["ci"] == [None, None]:
        return _fmt(r["r"])
    return f"{_fmt(r['r'])} [{_fmt(r['ci'][0])}, {_fmt(r['ci'][1])}]"


def _ceiling_cell(c: dict) -> str:
    if c.get("value") is None:
        return "-"
    return f"*{_fmt(c['value'])} [{_fmt(c['ci'][0])}, {_fmt(c['ci'][1])}]*"


def _ceiling_note(block: dict, judgments: str) -> list[str]:
    c = block.get("ceiling") or {}
    if c.get("value") is not None:
        return ["", f"*Human ceiling*: each of {c['annotators']} annotators against the mean of the others "
                    f"({c['rows']} rows), same statistic, level and bootstrap draws."]
    return ["", f"No human ceiling: {md_text(ceiling_text(c.get('note'), judgments))}."] if c else []


def _extra_table(b: dict, judgments: str) -> list[str]:
    """A ranked table of one pairwise-accuracy / acc-t / SPA block."""
    stat = b["statistic"]
    lines = [f"### {md_text(_level_name(b))}: {md_text(stat)} ({md_text(b['paper'])}; grouping: "
             f"{md_text(b['grouping'])}, n = {b['n_units']} {md_text(_units_word(b))})", ""]
    lines += [f"> **Warning:** {md_text(b['warning'])}.", ""] if b.get("warning") else []
    eps = stat == "acc-t"
    items = any("items" in r for r in b["results"])  # a label block: the items each variant's statistics rest on
    lines += ["| rank | metric | " + md_text(stat) + " | " + ("epsilon | " if eps else "") + ("items | " if items
                                                                                               else ""),
              "|---:|---|---|" + ("---:|" if eps else "") + ("---:|" if items else "")]
    for r in b["results"]:
        row = [str(r["rank"]) if r["rank"] is not None else "-", md_text(r["variant"]), _value_cell(r)]
        if eps:
            row.append(f"{r['epsilon']:.4g}" if r.get("epsilon") is not None else "-")
        if items:
            row.append(str(r.get("items", "-")))
        lines.append("| " + " | ".join(row) + " |")
    c = b.get("ceiling") or {}
    if c.get("value") is not None:
        lines.append("| | *human ceiling* | " + _ceiling_cell(c) + " |" + (" |" if eps else ""))
    if b.get("tie_baseline") is not None:
        lines.append(f"| | *ties every pair* | {_fmt(b['tie_baseline'])} | |")
    extra = block_notes(b) if b.get("interval") else [*block_notes(b), f"intervals: {b['ci_method']}"]
    if b.get("n_permutations"):
        extra.append(f"{b['n_permutations']} permutations per system pair")
    extra = [md_text(x) for x in extra]
    if b.get("tie_baseline") is not None:
        extra.append("*ties every pair*: acc-t of a metric that ties every pair, the share of human ties (a metric "
                     "near it may only have learned to tie)")
    lines += ["", "; ".join(extra) + "."]
    if b.get("undefined"):
        lines += ["", f"Undefined: {md_text(', '.join(b['undefined']))}."]
    return lines + _ceiling_note(b, judgments) + [""]


_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>__TITLE__</title>
<style>
body{font-family:system-ui,sans-serif;margin:24px;color:#222;max-width:1100px}
table{border-collapse:collapse;margin:8px 0 20px}
th,td{border:1px solid #ccc;padding:4px 8px;text-align:right}
th{background:#f2f2f2;cursor:pointer;user-select:none}
td.name,th.name{text-align:left}
th.sorted-desc::after{content:" \\25BC"} th.sorted-asc::after{content:" \\25B2"}
select{margin-right:12px;font-size:14px}
.heat td{width:34px;height:22px;padding:0;font-size:10px;text-align:center}
.small{color:#666;font-size:13px}
code{font-size:12px;word-break:break-all}
</style></head><body>
<h1>__TITLE__</h1>
<p class="small">meta-eval __VERSION__ &middot; <code id="sig"></code></p>
<div>Set <select id="set"></select> Level <select id="level"></select> Statistic <select id="corr"></select></div>
<p class="small" id="about"></p>
<p class="small" id="setinfo"></p>
<h2>Ranking</h2><table id="ranking"></table>
<h2>Values with intervals</h2><div id="chart"></div><div id="figure"></div>
<h2>Pairwise significance</h2>
<p class="small">Cell (row, column): adjusted p-value of the test that the row metric beats the column metric;
darker = more significant.</p><table id="heat" class="heat"></table>
<h2>Metrics and their options</h2><table id="metrics"></table>
<script id="data" type="application/json">__DATA__</script>
<script>
"use strict";
const doc = JSON.parse(document.getElementById("data").textContent);
const $ = id => document.getElementById(id);
$("sig").textContent = doc.meta_evaluation.signature;
let sortKey = "r", sortDir = -1;
function esc(x){ return String(x).replace(/[&<>"']/g, c => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;",
  "'": "&#39;"})[c]); }
function url(path){ return esc(String(path).split("/").map(encodeURIComponent).join("/")); }
function stat(b){ return b.statistic || b.correlation; }
function fill(sel, values, labels){ sel.innerHTML = ""; values.forEach((v, i) => {
  const o = document.createElement("option"); o.value = v; o.textContent = labels ? labels[i] : v;
  sel.appendChild(o); }); }
function currentSet(){ return doc.sets[Number($("set").value)]; }
function currentBlock(){ const s = currentSet(); return s.levels.find(b => b.level === $("level").value &&
  stat(b) === $("corr").value) || s.levels.find(b => b.level === $("level").value) || s.levels[0]; }
function refreshStats(){ const s = currentSet(), keep = $("corr").value;
  const cs = [...new Set(s.levels.filter(b => b.level === $("level").value).map(stat))];
  fill($("corr"), cs); if (cs.includes(keep)) $("corr").value = keep; draw(); }
function refreshChoices(){ const s = currentSet();
  const lv = [...new Set(s.levels.map(b => b.level))], keepL = $("level").value; fill($("level"), lv);
  if (lv.includes(keepL)) $("level").value = keepL; refreshStats(); }
function sortRows(rows){ return rows.slice().sort((a, b) => { const x = a[sortKey], y = b[sortKey];
  if (x === y) return 0; if (x === null) return 1; if (y === null) return -1;
  return (x < y ? -1 : 1) * sortDir; }); }
function drawTable(block){ const t = $("ranking"), eps = stat(block) === "acc-t";
  const items = block.results.some(r => r.items !== undefined);
  const cols = [["rank","rank"],["variant","metric"],["r", stat(block)],["lo","lower"],["hi","upper"]]
    .concat(eps ? [["epsilon","epsilon"]] : []).concat(items ? [["items","items"]] : []);
  const rows = block.results.map(r => ({rank: r.rank, variant: r.variant, r: r.r, shown: r.shown,
    lo: r.ci ? r.ci[0] : null, hi: r.ci ? r.ci[1] : null, epsilon: r.epsilon ?? null, items: r.items ?? null}));
  let h = "<thead><tr>" + cols.map(([k, label]) => `<th data-key="${k}" class="${k === "variant" ? "name " : ""}` +
    `${k === sortKey ? (sortDir < 0 ? "sorted-desc" : "sorted-asc") : ""}">${label}</th>`).join("") + "</tr></thead><tbody>";
  for (const r of sortRows(rows)) h += `<tr><td>${r.rank ?? "-"}</td><td class="name">${esc(r.variant)}</td>` +
    `<td>${r.shown[0]}</td><td>${r.shown[1]}</td><td>${r.shown[2]}</td>` +
    (eps ? `<td>${r.epsilon === null ? "-" : r.epsilon.toPrecision(4)}</td>` : "") +
    (items ? `<td>${r.items ?? "-"}</td>` : "") + "</tr>";
  const c = block.ceiling;
  if (c && c.value !== null && c.value !== undefined) h += `<tr class="ceiling"><td></td><td class="name"><i>human ` +
    `ceiling</i></td><td><i>${c.shown[0]}</i></td><td>${c.shown[1]}</td><td>${c.shown[2]}</td>` +
    (eps ? "<td></td>" : "") + "</tr>";
  if (block.tie_baseline !== null && block.tie_baseline !== undefined) h += `<tr class="ceiling"><td></td>` +
    `<td class="name"><i>ties every pair</i></td><td><i>${block.tie_baseline_shown}</i></td><td></td><td></td>` +
    (eps ? "<td></td>" : "") + "</tr>";
  t.innerHTML = h + "</tbody>";
  const pw = block.pairwise, units = block.units || {summary: "documents", system: "systems", global: "rows"}[block.level];
  $("about").textContent = (block.label || block.level + " level") + ": " + block.n_units + " " + units + "; " +
    (block.paper ? block.paper + "; " : "") + "grouping: " + (block.grouping || block.level) +
    "; intervals: " + (block.interval || block.ci_method) + (pw ? "; ranks: " + pw.test + " test, " +
    (pw.family || pw.correction + " correction") + ", alpha " + pw.alpha +
    (pw.resolution_note ? " (WARNING: " + pw.resolution_note + ")" : "") : "") +
    (block.n_permutations ? "; " + block.n_permutations +
    " permutations per system pair" : "") + "; human ceiling: " + (c && c.value !== null && c.value !== undefined ?
    `${c.shown[0]} (each of ${c.annotators} annotators against the mean of the others)` :
    ((c && (c.reader_note || c.note)) || "none")) + (block.warning ? "; WARNING: " + block.warning : "");
  t.querySelectorAll("th").forEach(th => th.addEventListener("click", () => { const k = th.dataset.key;
    if (k === sortKey) sortDir = -sortDir; else { sortKey = k; sortDir = k === "variant" ? 1 : -1; } draw(); })); }
function drawChart(block){ const rows = block.results.filter(r => r.r !== null);
  const W = 760, bar = 22, left = 170, H = rows.length * (bar + 6) + 30;
  const vals = rows.flatMap(r => r.ci ? [r.ci[0], r.ci[1], r.r] : [r.r]);
  const lo = Math.min(0, ...vals), hi = Math.max(0, ...vals), span = (hi - lo) || 1;
  const X = v => left + (v - lo) / span * (W - left - 20);
  let s = `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" role="img">`;
  s += `<line x1="${X(0)}" y1="0" x2="${X(0)}" y2="${H - 20}" stroke="#999"/>`;
  rows.forEach((r, i) => { const y = i * (bar + 6) + 4;
    s += `<text x="${left - 6}" y="${y + bar * 0.7}" text-anchor="end" font-size="12">${esc(r.variant)}</text>`;
    s += `<rect x="${Math.min(X(0), X(r.r))}" y="${y}" width="${Math.abs(X(r.r) - X(0))}" height="${bar}" fill="#4a7fb5"/>`;
    if (r.ci) s += `<line x1="${X(r.ci[0])}" y1="${y + bar / 2}" x2="${X(r.ci[1])}" y2="${y + bar / 2}" stroke="#222" stroke-width="2"/>` +
      `<line x1="${X(r.ci[0])}" y1="${y + 4}" x2="${X(r.ci[0])}" y2="${y + bar - 4}" stroke="#222"/>` +
      `<line x1="${X(r.ci[1])}" y1="${y + 4}" x2="${X(r.ci[1])}" y2="${y + bar - 4}" stroke="#222"/>`; });
  [lo, 0, hi].forEach(v => { s += `<text x="${X(v)}" y="${H - 4}" font-size="11" text-anchor="middle">${v.toFixed(2)}</text>`; });
  const c = block.ceiling; if (c && c.value !== null && c.value !== undefined && c.value >= lo && c.value <= hi)
    s += `<line class="ceiling" x1="${X(c.value)}" y1="0" x2="${X(c.value)}" y2="${H - 20}" stroke="#c33" ` +
      `stroke-dasharray="4 3"><title>human ceiling ${c.shown[0]}</title></line>`;
  $("chart").innerHTML = s + "</svg>";
  $("figure").innerHTML = block.figure ? `<p class="small">The same as a figure for a paper (SVG): ` +
    `<a href="${url(block.figure)}">${esc(block.figure)}</a></p><img alt="${esc(block.figure)}" ` +
    `src="${url(block.figure)}" style="max-width:520px">` : ""; }
function drawHeat(block){ const pw = block.pairwise, t = $("heat");
  if (!pw) { t.innerHTML = "<tr><td>no pairwise tests at this level</td></tr>"; return; }
  let h = "<tr><th class='name'></th>" + pw.variants.map(v => `<th title="${esc(v)}">${esc(v.slice(0, 8))}</th>`).join("") + "</tr>";
  pw.variants.forEach((a, i) => { h += `<tr><th class="name">${esc(a)}</th>`;
    pw.p_adjusted[i].forEach((p, j) => { if (i === j || p === null) { h += "<td style='background:#eee'></td>"; return; }
      const shade = Math.round(255 * Math.min(1, p / 0.1));
      h += `<td title="${esc(a)} > ${esc(pw.variants[j])}: p = ${p.toPrecision(3)}" style="background:rgb(${shade},${Math.round(90 + shade * 0.65)},255);color:${p < 0.05 ? "#fff" : "#222"}">${p < 0.001 ? "<.001" : p.toFixed(2)}</td>`; });
    h += "</tr>"; });
  t.innerHTML = h; }
function drawSet(){ const s = currentSet();
  $("setinfo").textContent = `${s.judgments} (subset ${s.subset}): human '${s.human}'; ${s.n_rows} rows, ` +
    `${s.n_documents} document${s.n_documents === 1 ? "" : "s"}, ` +
    `${s.n_systems} system${s.n_systems === 1 ? "" : "s"}` + (s.source ? `; data: ${s.source}` : "");
  let h = "<tr><th class='name'>metric</th><th class='name'>options</th><th class='name'>versions</th></tr>";
  for (const m of (s.metrics_readable || [])) h += `<tr><td class="name" title="${esc(m.signature)}">` +
    `${esc(m.metric)}</td><td class="name">${esc(m.options)}</td><td class="name">${esc(m.versions)}</td></tr>`;
  $("metrics").innerHTML = h; }
function draw(){ const b = currentBlock(); drawSet(); drawTable(b); drawChart(b); drawHeat(b); }
fill($("set"), doc.sets.map((s, i) => String(i)), doc.sets.map(s => `${s.judgments} (${s.subset})`));
$("set").addEventListener("change", refreshChoices); $("level").addEventListener("change", refreshStats);
$("corr").addEventListener("change", draw);
refreshChoices();
</script></body></html>
"""


def _page_data(doc: dict, figures=()) -> dict:
    """``doc`` with what the page shows readably: each set's metrics split into options and versions, a reader's
    sentence where a ceiling is missing, and every value, interval and ceiling as :func:`_fmt` writes it (``shown``;
    the script displays those strings) (results.json itself is unchanged)."""
    import copy

    page = copy.deepcopy(doc)
    from meta_eval.leaderboard.judge_board import ADD_A_JUDGE, judge_command

    if judge_command(doc) is not None:
        page["add_judge"] = f"{ADD_A_JUDGE} The command: {judge_command(doc)}"
    for s in page["sets"]:
        s["metrics_readable"] = readable_metrics(s["metrics"])
        from meta_eval.leaderboard.judge_board import set_lines

        if set_lines(s):
            s["judge_lines"] = set_lines(s)
        s["source"] = set_source(s["judgments"])
        for b in s["levels"]:
            if figures:
                from meta_eval.report.figures import board_figure_name

                if board_figure_name(s, b) in figures:
                    b["figure"] = board_figure_name(s, b)
            c = b.get("ceiling") or {}
            if c and c.get("value") is None:
                c["reader_note"] = ceiling_text(c.get("note"), s["judgments"])
            elif c:
                c["shown"] = [_fmt(c["value"]), *(_fmt(x) for x in (c.get("ci") or [None, None]))]
            for r in b["results"]:  # the strings the README shows: one formatter (_fmt) for both
                r["shown"] = [_fmt(r.get("r")), *(_fmt(x) for x in (r.get("ci") or [None, None]))]
            if b.get("tie_baseline") is not None:
                b["tie_baseline_shown"] = _fmt(b["tie_baseline"])
    return page


def render_html(doc: dict, figures=(), blindspots: dict | None = None) -> str:
    """A self-contained HTML page (no network) for the leaderboard ``doc``; ``figures``: the board's figure files
    (:func:`board_figures`), shown under each level's chart; ``blindspots``: a "Blind spots" section at the end."""
    data = json_in_html(_page_data(doc, set(figures)))  # no "<" in it: no </script>, <!-- or <script
    title = doc.get("title") or doc["name"]
    page = _PAGE.replace('<script id="data"', '__BLINDSPOTS__<script id="data"', 1)
    from meta_eval.leaderboard.judge_board import judge_command, judge_page

    if judge_command(doc) is not None:  # a JUDGE-BENCH board: its sets' lines, sets with nothing compared
        page = judge_page(page)
    # every placeholder filled in one pass over the template: text from the data (a set named __DATA__, a title
    # holding __TITLE__) is never itself searched for placeholders
    fill = {"TITLE": html(f"meta-eval leaderboard: {title}"), "VERSION": html(doc["meta_eval_version"]),
            "DATA": data, "BLINDSPOTS": "" if blindspots is None else _blindspot_html(blindspots)}
    return re.sub(r"__(TITLE|VERSION|DATA|BLINDSPOTS)__", lambda m: fill[m.group(1)], page)
