"""Figures of a run (matplotlib, the ``plot`` extra, imported only here): what a reader would rather look at than read.

- :func:`intervals_figure`: the statistic per variant with its interval, best at the top, the human ceiling as a
  dashed line with its interval as a band, the baseline marked, and (with ``ranks``) each significance cluster in
  its own shade with its rank;
- :func:`pvalues_figure`: the all-pairs p-value matrix as a heatmap, variants in cluster order (row beats column);
- :func:`scatter_figure`: a metric against the human scores at the run's level (system means at the system level,
  every cell at the summary level, every row at the global level).

Vector output is deterministic: no date, a fixed creator and a fixed SVG hash salt, so a test can compare the text
elements and the same run writes the same bytes. Sizes suit a paper's column (3.3 in wide) or page (6.8 in).

Example
-------
>>> res = meta_eval.run("chaganty", metrics=["rouge", "chrf"], level="system")      # doctest: +SKIP
>>> res.plot("intervals", "chaganty.svg")                                            # doctest: +SKIP
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

__all__ = ["KINDS", "board_figure", "board_figure_name", "figure_request", "intervals_figure", "pvalues_figure",
           "save_figure", "scatter_figure"]

KINDS = ("intervals", "pvalues", "scatter")
SUFFIXES = (".png", ".svg", ".pdf")
_METADATA = {".svg": {"Date": None, "Creator": "meta-eval"}, ".pdf": {"CreationDate": None, "Creator": "meta-eval",
                                                                      "Producer": "meta-eval"},
             ".png": {"Software": "meta-eval"}}


def _plt():
    import matplotlib

    matplotlib.use("Agg")  # files only, never a window
    import matplotlib.pyplot as plt

    plt.rcParams.update({"svg.hashsalt": "meta-eval", "font.size": 8, "axes.titlesize": 8, "axes.labelsize": 8,
                         "xtick.labelsize": 7, "ytick.labelsize": 7, "legend.fontsize": 7, "figure.dpi": 150,
                         "svg.fonttype": "none", "text.parse_math": False})  # a name with two $ is text, not TeX
    return plt


def _what(result) -> str:
    stat = result.statistic
    return f"{stat} correlation" if stat in ("spearman", "pearson", "kendall") else stat


def _draw_intervals(rows: list[tuple[str, float, list | None, int | None, bool]], ceiling: tuple | None,
                    xlabel: str, title: str):
    """The drawing behind :func:`intervals_figure` and :func:`board_figure`: one dot (a diamond for the baseline)
    and whisker per row ``(label, value, [low, high] or None, rank or None, is_baseline)``, best at the top, shaded
    by rank; ``ceiling`` ``(value, low, high)`` as a dashed line with its interval shaded."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(3.3, 0.9 + 0.2 * len(rows)))
    ys = np.arange(len(rows))[::-1]
    shades = ["#1f4e79", "#4a7fb5", "#7fa7d1", "#a9c4e2", "#c8d9ec"]
    for y, (_, value, ci, rank, baseline) in zip(ys, rows):
        colour = shades[((rank or 1) - 1) % len(shades)]
        if ci and ci[0] is not None:
            ax.plot([ci[0], ci[1]], [y, y], color=colour, linewidth=1.2, solid_capstyle="butt")
        ax.plot([value], [y], marker="D" if baseline else "o", color=colour, markersize=4, linestyle="none")
    ax.set_yticks(ys, [label + (f"  [{rank}]" if rank else "") for label, _, _, rank, _ in rows])
    if ceiling is not None and ceiling[0] is not None:
        value, low, high = ceiling
        if low is not None:
            ax.axvspan(low, high, color="#c0392b", alpha=0.12, linewidth=0)
        ax.axvline(value, color="#c0392b", linestyle="--", linewidth=1)
        title += f"\nhuman ceiling {value:.3f} (dashed; shaded: its interval)"
    ax.set_xlabel(xlabel)
    ax.set_title(title)
    ax.axvline(0, color="#999999", linewidth=0.6)
    ax.grid(axis="x", color="#dddddd", linewidth=0.5)
    ax.set_axisbelow(True)
    fig.tight_layout()
    return fig


def intervals_figure(result, ranks: dict[str, int] | None = None):
    """The statistic of every variant with its interval (dots and whiskers), best at the top."""
    valued = [r for r in result.results if r.value is not None]
    rows = [(r.metric + (" (baseline)" if r.metric == result.baseline else ""), r.value, r.ci,
             (ranks or {}).get(r.metric), r.metric == result.baseline) for r in valued]
    c = result.ceiling
    from meta_eval.stats import interval_label

    interval = f", {interval_label(result.setting.get('resampling'), short=True)}" if any(r.ci for r in valued) \
        else ""
    title = (f"{result.judgments} ({result.subset}): {result.level} level, n = {valued[0].n if valued else 0}"
             + ("; [k]: significance cluster" if ranks else ""))
    return _draw_intervals(rows, None if c is None else (c.value, c.lower, c.upper),
                           f"{_what(result)} with human '{result.human}'{interval}", title)


def categorical_figure(result):
    """A categorical or pairwise run (:class:`~meta_eval.categorical.CategoricalResult`): each variant's sorting
    statistic against the labels with its percentile bootstrap interval over items, the numbers of the table and
    the JSON (``results[i][statistic]``), best at the top, the baseline a diamond; no ceiling line (the raters'
    alpha is another statistic, printed under the table)."""
    stat = result.statistic
    valued = [r for r in result.results if r[stat]["value"] is not None]
    rows = [(r["metric"] + (" (baseline)" if r["metric"] == result.baseline else ""), r[stat]["value"],
             r[stat]["interval"], None, r["metric"] == result.baseline) for r in valued]
    against = "the labels people chose more often" if result.kind == "pairwise" else "the majority label"
    return _draw_intervals(rows, None, f"{stat} against {against}, 95% percentile bootstrap over items",
                           f"{result.judgments}: {result.human} ({result.kind}: {', '.join(result.labels)}), "
                           f"n = {result.n}")


def pvalues_figure(result, matrix, ranks: dict[str, int] | None = None):
    """The one-sided p-value that the row variant beats the column variant, in cluster (or value) order; a star
    where the p-value adjusted by the matrix's correction over all pairs (``matrix.p_adjusted``, the p-values the
    clusters read) is <= its alpha, so two variants of one cluster never carry a star between them."""
    plt = _plt()
    order = list(matrix.variants)
    if ranks:
        order.sort(key=lambda v: (ranks.get(v, 10 ** 6), -result.values.get(v, 0)))
    index = [matrix.variants.index(v) for v in order]
    P = matrix.p[np.ix_(index, index)]
    adjusted = matrix.p if matrix.p_adjusted is None else matrix.p_adjusted
    A = np.nan_to_num(np.asarray(adjusted, dtype=float)[np.ix_(index, index)], nan=1.0)
    k = len(order)
    fig, ax = plt.subplots(figsize=(min(6.8, 1.2 + 0.32 * k), min(6.8, 1.0 + 0.3 * k)))
    image = ax.imshow(np.where(np.isnan(P), 1.0, P), cmap="Blues_r", vmin=0, vmax=0.1, interpolation="nearest")
    ax.set_xticks(range(k), order, rotation=90)
    ax.set_yticks(range(k), order)
    ax.set_xlabel("worse (column)")
    ax.set_ylabel("better (row)")
    for i in range(k):
        for j in range(k):
            if i != j and A[i, j] <= matrix.alpha:
                ax.text(j, i, "*", ha="center", va="center", color="white", fontsize=7)
    bar = fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    resamples = "" if matrix.n_resamples is None else f", {matrix.n_resamples} resamples"
    star = f"* p <= {matrix.alpha:g}" if matrix.correction == "none" else f"* adjusted p <= {matrix.alpha:g}"
    bar.set_label(f"one-sided p ({matrix.test}{resamples}); {star} ({matrix.family})")
    ax.set_title(f"{result.judgments} ({result.subset}): {result.level}-level {result.statistic}, row beats column")
    fig.tight_layout()
    return fig


def scatter_figure(result, variant: str):
    """``variant``'s scores against the human scores at the run's level (system means, cells, or rows)."""
    from meta_eval.matrix import judgment_matrices

    plt = _plt()
    by_variant = {v: s for ms in result.scores for v, s in ms.scores.items()}
    if variant not in by_variant:
        raise ValueError(f"{variant!r} was not scored; scored variants: {', '.join(by_variant)}")
    if result.level == "global":
        x, y = by_variant[variant], result.jset.human(result.human)
        unit = "rows"
    else:
        from meta_eval.scoring.system_scores import uses_system_scores

        own = {v: (ms.system or {}).get(v) for ms in result.scores for v in ms.scores}  # corpus or file scores
        values = own[variant] if uses_system_scores(result.level, result.statistic) else None
        Z, (X,) = judgment_matrices(result.jset, result.human, [by_variant[variant]], system_values=[values])
        if result.level == "system":
            with np.errstate(invalid="ignore"):
                x, y = np.nanmean(X, axis=0), np.nanmean(Z, axis=0)
            unit = "system means"
        else:
            x, y = X.ravel(), Z.ravel()
            unit = "document x system cells"
    keep = np.isfinite(x) & np.isfinite(y)
    fig, ax = plt.subplots(figsize=(3.3, 3.0))
    ax.scatter(x[keep], y[keep], s=6 if keep.sum() > 50 else 18, alpha=0.5 if keep.sum() > 50 else 0.9,
               color="#1f4e79", linewidths=0)
    value = result.values.get(variant)
    ax.set_xlabel(f"{variant} ({unit})")
    ax.set_ylabel(f"human '{result.human}'")
    ax.set_title(f"{result.judgments} ({result.subset}): {result.level} level, {result.statistic} "
                 + ("-" if value is None else f"{value:.3f}") + f", n = {int(keep.sum())}")
    fig.tight_layout()
    return fig


def figure_request(item: str | Path, option: str = "--plot") -> tuple[str, str | None, Path]:
    """``FILE``, ``pvalues:FILE``, ``scatter:FILE`` or ``scatter=VARIANT:FILE`` (``run --plot``) as (kind, variant,
    path); a suffix other than .png, .svg or .pdf, an unknown kind, ``=VARIANT`` on another kind than scatter, or
    matplotlib missing, is a :class:`~meta_eval.errors.MetaEvalError`, raised before any scoring.

    Whatever stands before the first colon is a kind unless it holds a path separator: ``foo:x.png`` is refused
    (an unknown kind), never written to a file named ``foo:x.png``; ``figs/foo:x.png`` (or its absolute path) is
    that file. A known kind before ``=`` is a kind whatever follows: ``scatter=a\\b:x.png`` is variant ``a\\b``.

    >>> figure_request("scatter=sms[w/o]:x.png")[:2]
    ('scatter', 'sms[w/o]')
    """
    import importlib.util

    from meta_eval.errors import MetaEvalError

    item = str(item)
    kind, variant, path = "intervals", None, item
    head, sep, rest = item.partition(":")
    drive = len(head) == 1 and rest[:1] in ("/", "\\")  # C:\figs\x.png
    named = head.partition("=")[0] in KINDS  # scatter=VARIANT: a variant's name may hold a slash or backslash
    if sep and not drive and (named or not any(c in head for c in "/\\")):
        kind, eq, variant = head.partition("=")
        forms = "FILE (the intervals), pvalues:FILE, scatter:FILE or scatter=VARIANT:FILE"
        if kind not in KINDS:
            raise MetaEvalError(f"{option} {item}: unknown figure kind {kind!r}; give {forms} (a file name with a "
                                f"colon: with its folder, {Path(item).absolute()})")
        if eq and (kind != "scatter" or not variant):
            raise MetaEvalError(f"{option} {item}: " + ("name the variant after 'scatter='" if kind == "scatter"
                                                         else "only scatter takes a variant") + f"; give {forms}")
        variant, path = variant or None, rest
    if Path(path).suffix.lower() not in SUFFIXES:
        raise MetaEvalError(f"{option} {item}: a figure is written as .png, .svg or .pdf")
    if importlib.util.find_spec("matplotlib") is None:
        raise MetaEvalError(f"{option} needs matplotlib: pip install 'meta-eval[plot]'")
    return kind, variant, Path(path)


def shown_as_text(fig):
    """Every text of ``fig`` (titles, labels, tick labels, cell texts) with its control characters written as
    escapes (:func:`meta_eval.report.escape.terminal`, line breaks kept): a raw ESC from a name made the SVG
    invalid XML, which no browser shows. Returns ``fig``; every writer of a figure calls it before saving."""
    from matplotlib.text import Text

    from meta_eval.report.escape import terminal

    for ax in fig.axes:  # tick labels are drawn from the axis's formatter: escaped there, not on the Text
        for axis in (ax.xaxis, ax.yaxis):
            texts = [t.get_text() for t in axis.get_ticklabels()]
            shown = [terminal(t, keep="\n") for t in texts]
            if shown != texts:
                axis.set_ticks(axis.get_ticklocs(), shown)
    for text in fig.findobj(Text):
        shown = terminal(text.get_text(), keep="\n")
        if shown != text.get_text():
            text.set_text(shown)
    return fig


def save_figure(fig, path: str | Path) -> Path:
    """Write ``fig`` to ``path`` (.png, .svg or .pdf) with fixed metadata (no date; meta-eval as its creator, by
    which :func:`meta_eval.report.outputs.written_by_meta_eval` knows it may replace it), atomically
    (:func:`~meta_eval.report.outputs.atomic_write`: a folder where nothing can be written is an
    :class:`~meta_eval.report.outputs.OutputError` naming the path), then close it."""
    from meta_eval.report.outputs import atomic_write

    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        raise ValueError(f"a figure is written as {', '.join(SUFFIXES)}, not {path.suffix!r} ({path})")
    import matplotlib.pyplot as plt

    try:
        atomic_write(path, lambda tmp: shown_as_text(fig).savefig(tmp, format=suffix[1:],
                                                                  metadata=_METADATA[suffix], bbox_inches="tight"))
    finally:
        plt.close(fig)
    return path


def board_figure(set_block: dict, level_block: dict):
    """A published leaderboard's figure for one set and level (:mod:`leaderboard.publish` blocks): the statistic per
    variant with its interval, shaded by significance cluster (the block's ranks), the human ceiling as a dashed
    line with its interval; the same drawing as :func:`intervals_figure`."""
    rows = [(r["variant"], r["r"], r.get("ci"), r.get("rank"), False) for r in level_block["results"]
            if r.get("r") is not None]
    c = level_block.get("ceiling") or {}
    ceiling = (c["value"], *(c.get("ci") or (None, None))) if c.get("value") is not None else None
    stat = level_block["statistic"]
    what = f"{stat} correlation" if stat in ("spearman", "pearson", "kendall") else stat
    title = (f"{set_block['judgments']} ({set_block['subset']}): {level_block['level']} level, "
             f"n = {level_block['n_units']}" + ("; [k]: significance cluster" if any(r[3] for r in rows) else ""))
    return _draw_intervals(rows, ceiling, f"{what} with human '{set_block['human']}', "
                           f"{int(round(100 * level_block['confidence']))}% bootstrap CI", title)


def board_figure_name(set_block: dict, level_block: dict) -> str:
    """``figures/<set>-<subset>-<level>-<statistic>.svg``: where a board keeps that figure (a path separator or a
    control character in a name written ``_``: :func:`meta_eval.report.escape.file_segment`).

    A set named ``<collection>:<file>`` (``judge-bench:roscoe-cosmos``, whose subset is the file's name again) is
    written ``<collection>-<file without hyphens>``, once: no colon in a file name, and no figure named like the
    set's data file (``roscoe-cosmos-overall.json``), which the repository must never look as if it held.

    >>> board_figure_name({"judgments": "judge-bench:roscoe-cosmos", "subset": "roscoe-cosmos"},
    ...                   {"level": "global", "statistic": "spearman"})
    'figures/judge-bench-roscoecosmos-global-spearman.svg'
    >>> board_figure_name({"judgments": "chaganty", "subset": "sms"}, {"level": "summary", "statistic": "kendall"})
    'figures/chaganty-sms-summary-kendall.svg'
    """
    collection, _, part = set_block["judgments"].partition(":")
    if part:
        subset = set_block["subset"]
        stem = f"{collection}-{part.replace('-', '')}" + ("" if subset in (None, part) else f"-{subset}")
    else:
        stem = f"{collection}-{set_block['subset']}"
    from meta_eval.report.escape import file_segment  # a name from results.json cannot leave figures/

    return f"figures/{file_segment(stem + '-' + level_block['level'] + '-' + level_block['statistic'])}.svg"
