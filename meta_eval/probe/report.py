"""How a probe's results are shown: the terminal table (:func:`print_probe`), Markdown (:func:`markdown_lines`, for the
leaderboards) and the heatmap (:func:`heatmap`, matplotlib imported inside).

All three read the JSON document of :meth:`meta_eval.probe.run.ProbeResult.to_dict`, so a saved ``blindspots.json``
renders the same as a fresh run. Reading a cell: for an error (fluency, order, content) the *rate* is the share of
items whose score dropped (detected; higher is better); for an invariance it is the share of *false alarms* (lower
is better). Ties (``|change| <= tolerance``) and rises are counted apart; items a perturbation cannot apply to are
*skipped*, never counted.
"""
from __future__ import annotations

__all__ = ["best_and_worst", "heatmap", "markdown_lines", "print_probe", "ranked_cells", "top_test"]


def _f(x, digits: int = 3) -> str:
    from meta_eval.report.tables import fmt

    return fmt(x, digits)


def _ci(c: dict, key: str) -> str:
    ci = c.get(f"{key}_ci")
    return "" if ci is None else f" [{_f(ci[0])}, {_f(ci[1])}]"


def _by_perturbation(doc: dict) -> list[tuple[dict, list[dict]]]:
    cells: dict[str, list[dict]] = {}
    for c in doc["cells"]:
        cells.setdefault(c["perturbation"], []).append(c)
    return [(p, cells.get(p["name"], [])) for p in doc["perturbations"]]


def ranked_cells(perturbation: dict, cells: list[dict]) -> list[dict]:
    """The cells with a rate, best first (highest detection rate; lowest false-alarm rate for an invariance), exact
    ties in the order of the variants' names: the one order of the terminal's best-vs-runner-up line and the index's
    best and worst (they once broke ties in opposite ways; audit, session 38)."""
    sign = -1.0 if perturbation["expect"] == "drop" else 1.0
    return sorted((c for c in cells if c["rate"] is not None), key=lambda c: (sign * c["rate"], c["variant"]))


def top_test(doc: dict, perturbation: dict, cells: list[dict]) -> str | None:
    """One sentence: the variant with the best rate against the runner-up, with the McNemar p-value."""
    ranked = ranked_cells(perturbation, cells)
    if len(ranked) < 2:
        return None
    a, b = ranked[0]["variant"], ranked[1]["variant"]
    test = next((t for t in doc["tests"] if t["perturbation"] == perturbation["name"] and {t["a"], t["b"]} == {a, b}),
                None)
    if test is None:
        return None
    word = "detects" if perturbation["expect"] == "drop" else "raises false alarms on"
    only_a, only_b = (test["a_only"], test["b_only"]) if test["a"] == a else (test["b_only"], test["a_only"])
    return (f"{perturbation['name']}: best {a} ({_f(ranked[0]['rate'])}) vs {b} ({_f(ranked[1]['rate'])}); "
            f"{only_a} items only {a} {word}, {only_b} only {b}; exact McNemar p = {_f(test['p'])}")


def print_probe(doc: dict, out, verbose: bool = False) -> None:
    """The probe's table (rich): per perturbation and variant the detection (or false-alarm) rate with its interval,
    ties, rises, mean and median change, items applied and skipped; then the best-vs-runner-up tests and the
    signatures."""
    from rich.table import Table

    from meta_eval.report.tables import plain

    s = doc["settings"]
    table = Table(title=plain(f"Blind spots: {doc['judgments']} ({doc['subset']}), {doc['n_items']} items scored "
                              f"against {s['against']}"), title_justify="left")
    unmeasured = any(c.get("not_measured") for c in doc["cells"])  # a column only where some item measured nothing
    for col in ("perturbation", "metric", "rate [95% CI]", "ties", "rises", "mean change [95% CI]", "median",
                "applied", "skipped", *(("not measured",) if unmeasured else ())):
        table.add_column(plain(col), justify="left" if col in ("perturbation", "metric") else "right")
    for p, cells in _by_perturbation(doc):
        label = f"{p['name']} ({'false alarms' if p['expect'] == 'same' else p['family']})"
        for k, c in enumerate(cells):
            rate = "-" if c["rate"] is None else f"{_f(c['rate'])}{_ci(c, 'rate')}"
            table.add_row(plain(label if k == 0 else ""), plain(c["variant"]), plain(rate), plain(str(c["ties"])),
                          plain(str(c["rises"])), plain(f"{_f(c['mean'])}{_ci(c, 'mean')}"), plain(_f(c["median"])),
                          plain(str(c["n"])), plain(str(c["skipped"])),
                          *((plain(str(c.get("not_measured", 0))),) if unmeasured else ()))
        table.add_section()
    out.print(table)
    out.print(plain("rate: share of items whose score dropped by more than the tolerance (for an invariance: false "
                    "alarms, lower is better); ties and rises counted apart; skipped: items the perturbation cannot "
                    "apply to (never counted). Changes are perturbed - original, in each metric's orientation "
                    "(lower-is-better metrics negated)."
                    + (" not measured: items whose original or perturbed score is the metric's documented value "
                       "(no known word, an empty text), left out of its rate and counts." if unmeasured else "")))
    unmeasured_by: dict[tuple[str, str], list[int]] = {}  # (variant, reason) -> [items, perturbations]
    for c in doc["cells"]:
        for why, n in (c.get("not_measured_reasons") or {}).items():
            seen = unmeasured_by.setdefault((c["variant"], why), [0, 0])
            seen[0], seen[1] = seen[0] + n, seen[1] + 1
    for (variant, why), (n, perts) in unmeasured_by.items():
        out.print(plain(f"not measured: {variant}: {n} item(s) over {perts} perturbation(s): {why}"))
    for p, cells in _by_perturbation(doc):
        line = top_test(doc, p, cells)
        if line:
            out.print(plain(line))
    out.print(plain(f"probe signature: {doc['probe']}"))
    seen = set()
    for m in doc["metrics"]:
        if m["metric"] not in seen:
            seen.add(m["metric"])
            out.print(plain(f"  {m['metric']}: {m['signature']}"))
    for d in doc.get("perturbations_not_run") or []:
        out.print(plain(f"not run: {d['perturbation']} ({d['reason']})"))
    if verbose:
        for p in doc["perturbations"]:
            out.print(plain(f"  {p['signature']}: {p['description']} ({p['citation']})"))


def best_and_worst(perturbation: dict, cells: list[dict]) -> tuple[dict | None, dict | None]:
    """The variant that reacts best (highest detection rate; lowest false-alarm rate) and worst
    (:func:`ranked_cells`: exact ties by name, so the best of tied variants is the first name, the worst the last)."""
    ranked = ranked_cells(perturbation, cells)
    return (ranked[0], ranked[-1]) if ranked else (None, None)


def markdown_lines(doc: dict, figure: str | None = None) -> list[str]:
    """A Markdown section: the metric x perturbation table of rates (invariances marked as false alarms), counts
    and the probe's signature; ``figure``: the heatmap's path, shown above the table."""
    perts = [p for p in doc["perturbations"]]
    variants = list(dict.fromkeys(c["variant"] for c in doc["cells"]))
    cell = {(c["variant"], c["perturbation"]): c for c in doc["cells"]}
    from meta_eval.report.escape import markdown as md, markdown_code, markdown_url

    s = doc["settings"]
    lines = [f"### {md(doc['judgments'])} ({md(doc['subset'])}): {doc['n_items']} items against {md(s['against'])}",
             ""]
    if figure:
        lines += [f"![blind spots of {md(doc['judgments'])} ({md(doc['subset'])})]({markdown_url(figure)})", ""]
    head = [md(p["name"] + (" (false alarms)" if p["expect"] == "same" else "")) for p in perts]
    lines += ["| metric | " + " | ".join(head) + " |", "|---|" + "---:|" * len(perts)]
    for v in variants:
        row = []
        for p in perts:
            c = cell.get((v, p["name"]))
            row.append("-" if c is None or c["rate"] is None else f"{_f(c['rate'], 2)} [{_f(c['rate_ci'][0], 2)}, "
                                                                   f"{_f(c['rate_ci'][1], 2)}]")
        lines.append(f"| {md(v)} | " + " | ".join(row) + " |")
    lines += ["", "| perturbation | family | items applied | skipped | version | from |", "|---|---|---:|---:|---|---|"]
    lines += [f"| {md(p['name'])} | {md(p['family'])} | {p['n_applied']} | {p['n_skipped']} | {md(p['version'])} | "
              f"{md(p['citation'].replace('|', '/'))} |" for p in perts]
    not_run = doc.get("perturbations_not_run") or []
    if not_run:
        lines += [""] + [f"Not run: {md(d['perturbation'])} ({md(d['reason'])})." for d in not_run]
    skipped = doc.get("skipped") or []
    if skipped:
        lines += [""] + [f"Metric not probed: {md(d['metric'])} ({md(d['reason'])})." for d in skipped]
    lines += ["", f"Probe signature: {markdown_code(doc['probe'])}", ""]
    return lines


def heatmap(doc: dict):
    """Metric (rows) x perturbation (columns) heatmap of detection rates; invariance columns show false-alarm rates
    on a red scale and are labelled so. Returns the matplotlib figure."""
    import numpy as np

    from meta_eval.report.figures import _plt

    plt = _plt()
    perts = doc["perturbations"]
    variants = list(dict.fromkeys(c["variant"] for c in doc["cells"]))
    cell = {(c["variant"], c["perturbation"]): c for c in doc["cells"]}
    R = np.full((len(variants), len(perts)), np.nan)
    for i, v in enumerate(variants):
        for j, p in enumerate(perts):
            c = cell.get((v, p["name"]))
            if c is not None and c["rate"] is not None:
                R[i, j] = c["rate"]
    fig, ax = plt.subplots(figsize=(1.2 + 0.55 * max(len(perts), 2), 1.0 + 0.28 * max(len(variants), 2)))
    same = np.array([p["expect"] == "same" for p in perts])
    for mask, cmap in ((~same, "Blues"), (same, "Reds")):
        shown = np.where(mask[None, :], R, np.nan)
        ax.imshow(np.ma.masked_invalid(shown), cmap=cmap, vmin=0, vmax=1, aspect="auto")
    for i in range(len(variants)):
        for j in range(len(perts)):
            text = "-" if np.isnan(R[i, j]) else _f(float(R[i, j]), 2)  # as the board's tables show the rate
            ax.text(j, i, text, ha="center", va="center", fontsize=6,
                    color="white" if not np.isnan(R[i, j]) and R[i, j] > 0.6 else "black")
    ax.set_xticks(range(len(perts)))
    ax.set_xticklabels([p["name"] + (" (false alarms)" if p["expect"] == "same" else "") for p in perts],
                       rotation=45, ha="right")
    ax.set_yticks(range(len(variants)))
    ax.set_yticklabels(variants)
    ax.set_title(f"{doc['judgments']} ({doc['subset']}): share of items whose score drops\n"
                 f"(blue: errors, higher is better; red: invariances, false alarms, lower is better)")
    fig.tight_layout()
    return fig
