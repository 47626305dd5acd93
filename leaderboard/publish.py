"""Building a leaderboard: correlations at every level with bootstrap intervals, pairwise significance tests and
significance clusters, for scored judgment sets; written as ``results.json`` + ``README.md`` + ``index.html``.

Statistics (``meta_eval.stats.resampling``, Deutsch, Dror & Roth, TACL 2021): for each set and level (summary, system,
global) and each correlation (Pearson, Spearman, Kendall tau-b), the correlation of every metric variant with the
human score and its BOOT-BOTH percentile interval; for the primary correlation, the p-values of the run's test for
every ordered pair of variants (:func:`meta_eval.stats.describe`: the Williams test at the global level, PERM-BOTH
at the others, the same numbers as ``meta-eval run`` with the same seed and resamples) and significance clusters
(mt-metrics-eval's ranking) after the ``--correction`` (default Holm) over all pairs.
Metrics where lower is better are negated first. At the summary and system levels a row judged for several systems
(chaganty's ``ml;ml+rl``: both systems wrote the same text) fills the cell of each system, and repeated (document,
system) pairs (chaganty's 006588 ml+rl) are averaged into one cell. The global level is over the rows, as ``meta-eval
run`` computes it (:func:`meta_eval.units.global_rows`): its value, its row-level BOOT-BOTH interval
(:func:`meta_eval.evaluate.global_interval`) and its Williams test all read every row with a human score once. A
level whose correlation is undefined for a variant (constant scores, fewer than 3 units) leaves that variant out of
that level, with a note.

Beside the correlations, the statistics the field reports since 2021 (:mod:`meta_eval.stats`), where they
apply: system-level pairwise accuracy (Kocmi et al. 2021) and soft pairwise accuracy (SPA, Thompson et al. 2024;
the WMT24 meta-metric), and acc-t grouped by item (Deutsch, Foster & Freitag 2023; WMT23's segment-level
statistic), each with its interval, its own significance test and clusters; on MT sets also
mt-metrics-eval's pairwise difference Pearson grouped by item (2025, :mod:`meta_eval.stats.pdp`; no WMT task set
uses it yet). Every block carries the human ceiling
(leave-one-annotator-out, :mod:`meta_eval.stats.ceiling`) at its statistic and level, or why a set has none.

The schema of ``results.json`` is documented in ``leaderboard/SCHEMA.md``.
"""
from __future__ import annotations

import json
import os
import secrets
import stat
from pathlib import Path
from typing import Sequence

import numpy as np

from meta_eval.errors import MetaEvalError, what_is_kept
from meta_eval.stats.clusters import best_first, family_label, significance_clusters
from meta_eval.stats.significance import williams_pvalues
from meta_eval.evaluate import global_interval, global_values, units_warning
from meta_eval.units import count_units, level_words
from meta_eval.stats.ceiling import annotator_matrices
from meta_eval.matrix import judgment_matrices
from meta_eval.stats import GROUPING, describe
from meta_eval.stats.resampling import bootstrap_ci, level_correlation, pairwise_permutation_pvalues
from meta_eval.scoring.runner import MetricScores
from meta_eval.metrics.base import package_version

__all__ = ["SCHEMA", "EXTRA_STATISTICS", "TASK_STATISTICS", "publication_signature", "set_results",
           "write_leaderboard", "default_variant_filter", "check_out_dir", "OUTPUT_FILES", "BoardLock", "PublishError",
           "publish", "publish_blocks", "render_board", "distinct_sets"]

SCHEMA = "meta-eval-leaderboard/2"
ALL_LEVELS = ("summary", "system", "global")
KINDS = ("spearman", "pearson", "kendall")
LEVELS_FOR = {"essays": ("global",)}  # one prompt, each essay its own "system": only the global level is meaningful
EXTRA_STATISTICS = (("system", "accuracy"), ("system", "spa"), ("summary", "acc-t"))
#: Statistics published only on the sets of one task: on MT sets mt-metrics-eval's pairwise difference Pearson
#: grouped by item (stats.py ``Pearson(average_by='item', pdp=True)``, 2025; meta_eval.stats.pdp)
TASK_STATISTICS = {"MT": (("summary", "pdp"),)}
N_PERMUTATIONS = 1000  # SPA: permutations behind each system pair's p-value, as WMT24


def levels_of(jset) -> tuple[str, ...]:
    """The levels published for ``jset``: :data:`LEVELS_FOR`, else all three; only the global level where a row has
    no system (JUDGE-BENCH's files: :mod:`meta_eval.leaderboard.judge_board`), as ``meta-eval run`` computes it."""
    if jset.rows_without_system():
        return ("global",)
    return LEVELS_FOR.get(jset.name, ALL_LEVELS)


def default_variant_filter(variant: str) -> bool:
    """Leave ROUGE's precision and recall out of leaderboards by default (the F-measures stay): the default of every
    command, :func:`meta_eval.scoring.selection.default_variant`."""
    from meta_eval.scoring.selection import default_variant

    return default_variant(variant)


def publication_signature(n_resamples: int, seed: int, confidence: float, alpha: float, correction: str,
                          primary: str) -> str:
    """The meta-evaluation signature: every setting and library version that the numbers depend on."""
    return (f"levels:summary+system+global|corr:spearman+pearson+kendall"
            f"|stats:accuracy(system)+spa(system,perm:{N_PERMUTATIONS})+acc-t(summary)|ci:boot-both(spa:documents)"
            f"|n:{n_resamples}|conf:{confidence}|seed:{seed}|test:williams({primary},global),perm-both({primary}),"
            f"perm-both(accuracy),"
            f"perm-pairs(acc-t),spa-perm-both(spa)|correction:{correction}|alpha:{alpha}|ceiling:loao"
            f"|dup:mean|numpy=={package_version('numpy')}|scipy=={package_version('scipy')}"
            f"|meta-eval=={package_version('meta-eval')}")


def _units(Z: np.ndarray, level: str, statistic: str = "spearman") -> int:
    """Units behind a level: :func:`meta_eval.units.count_units`, the one definition ``run`` and ``judgments`` use."""
    return count_units(Z, level, statistic)


def _words(jset, level: str) -> dict:
    """A block's readable ``label`` and ``units`` in the set's task's words (:func:`meta_eval.units.level_words`:
    MT ``"segment level, group by item"``, ``"items"``); the keys ``level`` and ``grouping`` stay as they are."""
    words = level_words(jset.task, level)
    return {"label": words.name, "units": words.units}


def _clean(x: float) -> float | None:
    """A number as computed (every bit, as ``run --output`` writes it: the pages round the number ``run`` rounds,
    never a number rounded twice), None for a missing or non-finite one."""
    return None if x is None or not np.isfinite(x) else float(x)


def _ceiling(jset, dimension: str, statistic: str, level: str, n_resamples: int, seed: int,
             confidence: float, pairs) -> dict:
    """The block's human ceiling as a dict (``value`` None and the reason in ``note`` when undefined)."""
    from meta_eval.evaluate import ceiling

    try:
        c = ceiling(jset, dimension, statistic, level, n_resamples=n_resamples, seed=seed,
                               confidence=confidence, n_permutations=N_PERMUTATIONS, pairs=pairs).as_dict()
    except ValueError as exc:
        return {"value": None, "note": f"undefined: {exc}"}
    return {"value": _clean(c["value"]), "ci": [_clean(c["ci_low"]), _clean(c["ci_high"])],
            "annotators": c["slots"], "rows": c["rows_used"], "note": c["note"]}


def pairwise_tests(names, point, P, test: str, n_resamples: int | None, alpha: float, correction: str,
                   results: list[dict], **extra) -> dict:
    """A block's ``pairwise`` entry (SCHEMA.md) from its all-pairs p-values ``P``, and each result's ``rank``.

    The clusters (:func:`~meta_eval.stats.clusters.significance_clusters`) enter a p-value of 0 as 1/B, B the
    resamples behind it (:func:`meta_eval.stats.zero_resolution`: None for Williams's exact test, SPA's first
    block), as ``run`` does; ``resolution_note`` says when B is too few for the family to separate any pair."""
    from meta_eval.stats import zero_resolution
    from meta_eval.stats.clusters import resolution_note

    resolution = zero_resolution(test, n_resamples)
    ranks, adjusted = significance_clusters(names, point, P, alpha=alpha, correction=correction,
                                            n_resamples=resolution)
    rank_of = dict(ranks)
    for r in results:
        r["rank"] = rank_of[r["variant"]]
    m = len(names) * (len(names) - 1) // 2
    return {"test": test, "correction": correction, "alpha": alpha,
            "family": family_label(correction, m, "pairs", every=True),
            "resolution_note": resolution_note(correction, m, resolution, alpha,
                                               more_resamples_help=test != "spa-perm-both"),
            "variants": names, "p": [[_clean(x) for x in row] for row in P],
            "p_adjusted": [[_clean(x) for x in row] for row in adjusted], **extra}


def _extra_block(jset, dimension, X_all, Z, variants, level, statistic, *, n_resamples, seed, confidence, alpha,
                 correction, pairwise, pairs) -> dict | None:
    """One block of a pairwise statistic or SPA (see the module notes); None if no variant has a value."""
    from meta_eval import stats as statistics

    try:
        est = statistics.point(X_all, Z, statistic, level, n_permutations=N_PERMUTATIONS, seed=seed)
    except ValueError:
        return None
    ok = np.flatnonzero(np.isfinite(est.values))
    if len(ok) == 0:
        return None
    lo, hi = statistics.interval(X_all[ok], Z, statistic, level, n_resamples=n_resamples, seed=seed,
                                 confidence=confidence, n_permutations=N_PERMUTATIONS)
    names = [variants[i] for i in ok]
    results = [{"variant": n, "r": _clean(est.values[i]), "ci": [_clean(lo[k]), _clean(hi[k])], "rank": None,
                **({"epsilon": _clean(est.epsilon[i])} if statistic == "acc-t" else {})}
               for k, (i, n) in enumerate(zip(ok, names))]
    setting = statistics.describe(statistic, level, n_resamples=n_resamples, seed=seed,
                                  n_permutations=N_PERMUTATIONS, confidence=confidence)
    tests = None
    if pairwise and len(ok) > 1:
        P = statistics.pvalue_matrix(X_all[ok], Z, statistic, level, n_resamples=n_resamples, seed=seed,
                                     n_permutations=N_PERMUTATIONS)
        tests = pairwise_tests(names, est.values[ok], P, setting["test"], n_resamples, alpha, correction, results,
                               **({"early_stopping": "every 100 resamples, p < 0.02 or p > 0.5 (WMT24)"}
                                  if statistic == "spa" else {}))
    results.sort(key=lambda r: best_first(r["r"], r["variant"]))
    units = _units(Z, level, statistic)
    return {"level": level, "statistic": statistic, "paper": setting["paper"], "grouping": setting["grouping"],
            **_words(jset, level),
            "n_units": units, "warning": units_warning(level, units, jset.task), "results": results, "pairwise": tests,
            "seed": seed, "n_resamples": n_resamples,
            "ci_method": setting["resampling"]["method"], "interval": setting["resampling"]["label"],
            "confidence": confidence,
            **({"n_permutations": N_PERMUTATIONS} if statistic == "spa" else {}),
            **({"tie_baseline": _clean(statistics.tie_baseline(Z, level))} if statistic == "acc-t" else {}),
            "undefined": [variants[i] for i in range(len(variants)) if i not in set(ok)],
            "ceiling": _ceiling(jset, dimension, statistic, level, n_resamples, seed, confidence, pairs)}


def set_results(jset, dimension: str, scored: Sequence[MetricScores], *, n_resamples: int = 1000, seed: int = 0,
                confidence: float = 0.95, alpha: float = 0.05, correction: str = "holm", primary: str = "spearman",
                variant_filter=default_variant_filter, pairwise: bool = True, extra: bool = True) -> dict:
    """The leaderboard block of one judgment set (see SCHEMA.md), from its metric scores.

    ``pairwise=False`` leaves out the significance tests (ranks None); ``extra=False`` the blocks of
    :data:`EXTRA_STATISTICS` (pairwise accuracy, SPA, acc-t) and of :data:`TASK_STATISTICS` (MT sets: PDP).
    """
    from meta_eval.evaluate import oriented_system_values

    if jset.rows_without_system():  # JUDGE-BENCH's files: the global level over the rows, as `meta-eval run`
        from meta_eval.leaderboard.judge_board import systemless_results

        return systemless_results(jset, dimension, scored, n_resamples=n_resamples, seed=seed, confidence=confidence,
                                  alpha=alpha, correction=correction, primary=primary,
                                  variant_filter=variant_filter, pairwise=pairwise)
    variants, arrays, metrics, fixed = [], [], [], []
    for ms in scored:
        own = oriented_system_values(ms)
        for variant, values in ms.scores.items():
            if not variant_filter(variant):
                continue
            variants.append(variant)
            arrays.append(values if ms.higher_is_better else -values)
            fixed.append(own[variant])
            metrics.append({"variant": variant, "metric": ms.metric, "signature": ms.signature,
                            "higher_is_better": ms.higher_is_better, "system_score": ms.system_mode})
    Z, matrices = judgment_matrices(jset, dimension, arrays)
    X_rows = np.stack(matrices)
    # the system level's statistics (but SPA) read each metric's own system scores (sys:corpus for BLEU, chrF, TER)
    X_sys = np.stack(judgment_matrices(jset, dimension, arrays, system_values=fixed)[1]) \
        if any(f is not None for f in fixed) else X_rows
    pairs = annotator_matrices(jset, dimension)  # the ceiling's matrices, once for every block
    global_units = int(np.isfinite(jset.human(dimension)).sum())  # the global level's rows (meta_eval.units)
    blocks = []
    for level in LEVELS_FOR.get(jset.name, ALL_LEVELS):
        X_all = X_sys if level == "system" else X_rows
        for kind in KINDS:
            if level == "global":  # over the rows, as `meta-eval run` (meta_eval.units.global_rows)
                points = global_values(jset, dimension, arrays, kind)
            else:
                points = np.array([level_correlation(X, Z, level, kind) for X in X_all], dtype=float)
            ok = np.flatnonzero(np.isfinite(points))
            if len(ok) == 0:
                continue
            if level == "global":
                point = points[ok]
                lo, hi = global_interval(jset, dimension, [arrays[i] for i in ok], kind, n_resamples=n_resamples,
                                         seed=seed, confidence=confidence)
            else:
                lo, hi, point = bootstrap_ci(X_all[ok], Z, level, kind, n_resamples=n_resamples,
                                             confidence=confidence, seed=seed)
            names = [variants[i] for i in ok]
            results = [{"variant": n, "r": _clean(point[k]), "ci": [_clean(lo[k]), _clean(hi[k])],
                        "rank": None} for k, n in enumerate(names)]
            tests = None
            if pairwise and kind == primary and len(ok) > 1:
                if level == "global":  # the Williams test on the rows, as `meta-eval run` (stats.describe)
                    rows = np.isfinite(jset.human(dimension))  # the rows of the value and the interval
                    P = williams_pvalues(jset.human(dimension)[rows], [arrays[i][rows] for i in ok], kind)
                else:
                    P = pairwise_permutation_pvalues(X_all[ok], Z, level, kind, n_resamples=n_resamples, seed=seed)
                tests = pairwise_tests(names, point, P, describe(kind, level)["test"], n_resamples, alpha,
                                       correction, results)
            results.sort(key=lambda r: best_first(r["r"], r["variant"]))
            skipped = [variants[i] for i in range(len(variants)) if i not in set(ok)]
            n_units = global_units if level == "global" else _units(Z, level, kind)
            blocks.append({"level": level, "statistic": kind, "correlation": kind, "grouping": GROUPING[level],
                           **_words(jset, level),
                           "n_units": n_units,
                           "warning": units_warning(level, n_units, jset.task),
                           "results": results, "pairwise": tests, "seed": seed,
                           "n_resamples": n_resamples, "ci_method": "boot-both", "confidence": confidence,
                           "interval": describe(kind, level, n_resamples=n_resamples, seed=seed,
                                                confidence=confidence)["resampling"]["label"],
                           "undefined": skipped,
                           "ceiling": _ceiling(jset, dimension, kind, level, n_resamples, seed, confidence,
                                               pairs)})
    if extra:
        for level, statistic in EXTRA_STATISTICS + TASK_STATISTICS.get(jset.task, ()):
            if level not in LEVELS_FOR.get(jset.name, ALL_LEVELS):
                continue
            X_all = X_sys if level == "system" and statistic != "spa" else X_rows
            block = _extra_block(jset, dimension, X_all, Z, variants, level, statistic, n_resamples=n_resamples,
                                 seed=seed, confidence=confidence, alpha=alpha, correction=correction,
                                 pairwise=pairwise, pairs=pairs)
            if block is not None:
                blocks.append(block)
    return {"judgments": jset.name, "subset": jset.subset, "task": jset.task, "human": dimension, "n_rows": len(jset),
            "n_documents": jset.documents(), "n_systems": len(jset.systems()), "metrics": metrics,
            "levels": blocks}


OUTPUT_FILES = ("results.json", "README.md", "index.html", "figures")
#: What a board folder holds: publish's files and ``leaderboard probe``'s (:data:`meta_eval.probe.board.FILE`),
#: which publishing keeps and shows.
BOARD_FILES = (*OUTPUT_FILES, "blindspots.json")


def _is_leaderboard(results: Path) -> bool:
    """Whether ``results`` is a ``results.json`` that meta-eval wrote (its schema names meta-eval's leaderboard)."""
    try:
        doc = json.loads(results.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return False
    return isinstance(doc, dict) and str(doc.get("schema", "")).startswith("meta-eval-leaderboard/")


def check_out_dir(out_dir: str | Path, force: bool = False) -> None:
    """Refuse to publish into a folder whose files meta-eval did not write, or over an existing leaderboard.

    A folder that does not exist or is empty is fine. A folder that holds a leaderboard meta-eval wrote (its
    ``results.json`` has meta-eval's schema, and nothing but the files a leaderboard consists of, plus hidden files)
    would be replaced: that needs ``force``, as does any other non-empty folder (publishing into ``.`` would otherwise
    overwrite a repository's README.md). A path that is a file is always refused. The message names the files of
    ``figures/`` that meta-eval did not write (:func:`foreign_figures`): ``force`` replaces those named like the
    board's figures too.

    Raises
    ------
    ValueError
        With what is in the way and how to go on.
    """
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {out} is a file, not a folder")
    if not out.exists() or force:
        return
    present = sorted(p.name for p in out.iterdir() if not p.name.startswith("."))
    if not present:
        return
    foreign = [n for n in present if n not in BOARD_FILES]
    users = foreign_figures(out)
    theirs = (f", among them {_listed(users)}, which meta-eval did not write" if users else "")
    if foreign or not _is_leaderboard(out / "results.json"):
        raise ValueError(f"--out {out} is not empty and was not written by meta-eval (it holds "
                         f"{_listed(foreign or present)}); choose a new or empty folder, or pass --force to write "
                         "results.json, README.md, index.html and the figures (figures/*.svg) into it anyway (files "
                         f"of those names are replaced{theirs})")
    raise ValueError(f"--out {out} already holds a leaderboard; pass --force to replace it (compare with "
                     "`git diff` afterwards if it is committed)"
                     + (f"; --force also replaces {_listed(users)}, which meta-eval did not write, where the board "
                        "has a figure of that name" if users else ""))


def _listed(names: Sequence[str], most: int = 5) -> str:
    return ", ".join(names[:most]) + (" ..." if len(names) > most else "")


def foreign_figures(out: Path) -> list[str]:
    """The files of ``out/figures`` that meta-eval did not write (:func:`meta_eval.report.outputs.written_by_meta_eval`:
    its figures carry meta-eval as their creator), as ``figures/NAME``: a board's figures replace such a file only
    with ``--force``."""
    from meta_eval.report.outputs import written_by_meta_eval

    folder = Path(out) / "figures"
    if not folder.is_dir():
        return []
    return [f"figures/{p.name}" for p in sorted(folder.iterdir())
            if not p.name.startswith(".") and (not p.is_file() or not written_by_meta_eval(p))]


def write_leaderboard(out_dir: str | Path, name: str, sets: list[dict], command: str, *, n_resamples: int,
                      seed: int, confidence: float, alpha: float, correction: str, primary: str,
                      title: str | None = None, plan=None, force: bool = False, say=None) -> dict:
    """Write results.json, README.md, index.html and the figures to ``out_dir`` (all or none, through
    :func:`_write_board_files`); return the document. ``title`` (``--title``) heads the pages instead of the folder's
    name and is kept as ``title``; ``command`` is recorded redacted (:func:`meta_eval.metrics.redact.redact`: no
    password, key or token); ``plan`` (:class:`~meta_eval.report.outputs.OutputPlan`) holds the run's inputs, never
    replaced, and ``force`` lets a figure replace a file meta-eval did not write.

    The folder's blindspots.json (``leaderboard probe``) is kept and shown while it matches the new board
    (:func:`meta_eval.probe.board.check_blindspots`: its sets on the board, its metrics' signatures under the
    board's options); else it is removed with the write, and ``say`` (``say(channel, text)``) tells so."""
    from meta_eval.metrics.redact import redact

    doc = {"schema": SCHEMA, "name": name, "command": redact(command), "meta_eval_version": package_version("meta-eval"),
           "meta_evaluation": {"signature": publication_signature(n_resamples, seed, confidence, alpha, correction,
                                                                  primary),
                               "n_resamples": n_resamples, "seed": seed, "confidence": confidence,
                               "alpha": alpha, "correction": correction, "ci_method": "boot-both",
                               "test": f"perm-both on {primary} (williams at the global level)", "primary": primary,
                               "statistics": ["spearman", "pearson", "kendall"]
                               + [f"{stat} ({level})" for level, stat in EXTRA_STATISTICS]
                               + [f"{stat} ({level}, {task} sets)" for task, extra in TASK_STATISTICS.items()
                                  for level, stat in extra],
                               "n_permutations": N_PERMUTATIONS,
                               "ceiling": "leave-one-annotator-out: each annotator against the mean of the "
                                          "others, same statistic, level and bootstrap draws"},
           "sets": sets}
    if title:
        doc = {**{k: v for k, v in doc.items() if k != "sets"}, "title": title, "sets": sets}
    out = Path(out_dir)
    from meta_eval.probe.board import FILE, check_blindspots, read_blindspots

    blindspots = read_blindspots(out)
    stale = check_blindspots(out, doc) if blindspots is not None else []
    if stale:  # probed sets or metrics no longer on the board as published: not shown, removed with the write
        blindspots = None
    _write_board_files(out, [("results.json", json.dumps(doc, indent=1) + "\n"), *_pages(doc, blindspots)],
                       plan=plan, option="--out", force=force, remove=[FILE] if stale else [])
    if stale and say is not None:
        import shlex

        first = stale[0].removeprefix(f"{out.name}/{FILE} ") + ("; ..." if len(stale) > 1 else "")
        say("err", f"note: {out / FILE} removed: it probed sets or metrics no longer on the board as published "
                   f"({first}); run `meta-eval leaderboard probe {shlex.quote(str(out))}` again for the board's "
                   "blind spots")
    return doc


def _pages(doc: dict, blindspots: dict | None = None) -> list[tuple[str, str | bytes]]:
    """The files rendered from a board's document: README.md, index.html and the figures (when matplotlib is
    installed); ``blindspots``: the board's blindspots.json (:mod:`meta_eval.probe.board`), a section of both pages."""
    from meta_eval.leaderboard.render import board_figures, render_html, render_readme

    figures = board_figures(doc)
    return [("README.md", render_readme(doc, figures=bool(figures), blindspots=blindspots)),
            ("index.html", render_html(doc, figures, blindspots=blindspots)), *sorted(figures.items())]


def read_results(out: Path) -> dict:
    """A board's ``results.json`` as a JSON object of this meta-eval's schema with the shape every reader relies on
    (:func:`meta_eval.leaderboard.index.read_board`); else a :class:`PublishError` naming the file (unreadable, not
    UTF-8, not JSON, nested too deep, not an object, ``sets`` missing or mangled, another schema)."""
    from meta_eval.leaderboard.index import read_board

    path = Path(out) / "results.json"
    try:
        doc = read_board(path)
    except MetaEvalError as exc:
        raise PublishError(str(exc)[:400]) from None
    if doc.get("schema") != SCHEMA:
        raise PublishError(f"{path}: schema {str(doc.get('schema'))[:40]!r}, this meta-eval renders {SCHEMA}")
    return doc


def render_board(out_dir: str | Path) -> dict:
    """Rewrite a published board's pages (README.md, index.html, figures) from its ``results.json``; nothing is
    scored or recomputed, and results.json is not touched. For pages made by an older renderer.

    The folder goes through :class:`~meta_eval.report.outputs.OutputPlan` first (never in the judgment data folder;
    writable); a ``results.json`` that is not a leaderboard, or lacks or mangles a field (``sets`` missing, not a
    list, ...), is a :class:`PublishError` naming it (:func:`meta_eval.leaderboard.index.read_board`), not a
    KeyError."""
    from meta_eval.leaderboard.index import malformed
    from meta_eval.probe.board import read_blindspots
    from meta_eval.report.outputs import OutputPlan

    plan = OutputPlan()
    out = plan.add_folder(out_dir, "leaderboard render", ("README.md", "index.html", "figures"), exists=True)
    doc = read_results(out)
    blindspots = read_blindspots(out)
    try:
        pages = _pages(doc, blindspots)
    except (KeyError, TypeError, AttributeError, IndexError, ValueError) as exc:
        if isinstance(exc, MetaEvalError):
            raise
        raise PublishError(str(malformed(out / "results.json", exc))) from None
    _write_board_files(out, pages, plan=plan, option="leaderboard render")
    return doc


def _write_board_files(out: Path, texts: list[tuple[str, str | bytes]], *, plan=None, option: str = "--out",
                       force: bool = False, remove: Sequence[str] = ()) -> None:
    """Write every file in full first, then rename them all into place; nothing half-written is ever left.
    ``remove``: board files of meta-eval's (a stale blindspots.json) removed once the others are in place.

    Each file is checked first by :func:`meta_eval.report.outputs.check_output` against ``plan``'s inputs and
    protected folders (an :class:`~meta_eval.report.outputs.OutputPlan`; default: the judgment data folder and the
    score cache), which no ``force`` overrides. The board's own files (results.json, the pages, blindspots.json)
    are the folder's, which :func:`check_out_dir` or the caller's reading of results.json vouched for; a file of
    ``figures/`` that meta-eval did not write (:func:`foreign_figures`) is replaced only with ``force`` (publish's
    ``--force``, whose check names it); else this is a :class:`PublishError` naming it, before anything is
    written."""
    from meta_eval.report.outputs import OutputError, OutputPlan, _inside, check_output, written_by_meta_eval

    plan = plan if plan is not None else OutputPlan()
    for filename in [name for name, _ in texts] + list(remove):
        final = out / filename
        if not _inside(final, out):  # names come from results.json: file_segment keeps them in, this checks it
            raise PublishError(f"{option} {out}: a board file named {filename!r} would lie outside the board's "
                               "folder; nothing of the board was written")
        try:
            check_output(final, option, inputs=plan.inputs, protected=plan.protected, force=True)
        except OutputError as exc:
            raise PublishError(f"{exc}; nothing of the board was written") from None
        if filename.startswith("figures/") and not force and final.is_file() and not written_by_meta_eval(final):
            raise PublishError(f"{option} {out}: {filename} exists and meta-eval did not write it, and the board "
                               "has a figure of that name: move that file out of the board's figures/ folder"
                               + (" or pass --force to replace it" if option == "--out" else "")
                               + "; nothing of the board was written")
    temporary = []
    try:
        out.mkdir(parents=True, exist_ok=True)
        for filename, text in texts:  # every file written in full first, then all renamed into place
            final = out / filename
            final.parent.mkdir(parents=True, exist_ok=True)
            tmp = final.parent / f".{final.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp"
            temporary.append((tmp, final))
            if isinstance(text, bytes):
                tmp.write_bytes(text)
            else:
                tmp.write_text(text, encoding="utf-8")
        for tmp, final in temporary:
            os.replace(tmp, final)
        temporary = []
        for filename in remove:
            (out / filename).unlink(missing_ok=True)
    except OSError as exc:
        raise PublishError(f"cannot write the leaderboard in {out}: {exc.strerror or exc}"
                           + (f" ({exc.filename})" if exc.filename else "")
                           + "; nothing of it was written (the scores are in the cache: rerun to publish)") from None
    finally:
        for tmp, _ in temporary:
            tmp.unlink(missing_ok=True)


class PublishError(MetaEvalError, ValueError):
    """A leaderboard folder that cannot be used or written (the message names it and what to do)."""


class BoardLock:
    """Holds ``out_dir`` for one publisher from its check (before any scoring) until its board is written.

    ``out_dir`` is created if missing (and removed again on release, before the lock is let go, if this publisher
    made it and left it empty), and locked with ``flock`` on the folder itself, so no lock file is left in the
    user's tree; a publisher that waited for the lock and finds the folder it locked removed makes it again. A
    second publisher into the same folder gets a :class:`PublishError` at once, before it scores anything; with
    ``force`` it waits for the first one and then replaces that board completely. :func:`check_out_dir` runs under
    the lock, so two publishers can never both find a new folder empty and write one after the other. A folder that
    cannot be made (under a regular file, on ``/proc``, read-only) is a :class:`PublishError` here too, before any
    scoring.
    """

    def __init__(self, out_dir: str | Path, force: bool = False) -> None:
        self.out, self.force = Path(out_dir), force
        self._fd: int | None = None
        self._made: list[Path] = []

    def __enter__(self) -> "BoardLock":
        import fcntl

        while True:
            self._open()
            try:
                fcntl.flock(self._fd, fcntl.LOCK_EX | (0 if self.force else fcntl.LOCK_NB))
            except BlockingIOError:
                self.__exit__(None, None, None)
                raise PublishError(f"--out {self.out}: another meta-eval is publishing a leaderboard there right "
                                   "now; wait for it and choose another folder, or pass --force to replace its "
                                   "board when it is done") from None
            if self._holds_out():
                break
            # the publisher we waited for made the folder, wrote nothing and removed it: make it and lock it again
            os.close(self._fd)
            self._fd = None
        try:
            check_out_dir(self.out, self.force)
        except ValueError as exc:
            self.__exit__(None, None, None)
            raise PublishError(str(exc)) from None
        return self

    def _open(self) -> None:
        """Make the missing folders (noting those made here), open ``out`` and check that it takes a file."""
        try:
            if not stat.S_ISDIR(os.stat(self.out).st_mode):
                raise PublishError(f"--out {self.out} is a file, not a folder")
        except (FileNotFoundError, NotADirectoryError):  # missing (made below), or under a file (refused below)
            pass
        folder = self.out.absolute()
        missing = []
        while not folder.exists() and folder != folder.parent:
            missing.append(folder)
            folder = folder.parent
        try:
            for new in reversed(missing):
                try:
                    new.mkdir()
                except FileExistsError:  # another publisher made it meanwhile: not ours to remove
                    continue
                self._made.append(new)
            self._fd = os.open(self.out, os.O_RDONLY)
            probe = self.out / f".publish-probe.{os.getpid()}-{secrets.token_hex(4)}"
            os.close(os.open(probe, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666))
            probe.unlink()
        except OSError as exc:
            self.__exit__(None, None, None)
            raise PublishError(f"--out {self.out}: cannot write a leaderboard there: {exc.strerror or exc}"
                               + (f" ({exc.filename})" if exc.filename else "")) from None

    def _holds_out(self) -> bool:
        """Whether the folder locked is the one at ``out`` now (not one removed while this publisher waited)."""
        try:
            return os.path.samestat(os.fstat(self._fd), os.stat(self.out))
        except (FileNotFoundError, NotADirectoryError):
            return False

    def __exit__(self, *exc_info) -> None:
        # the folders this publisher made and wrote nothing to are removed while it still holds the lock, so a
        # publisher waiting for it finds them gone when it gets the lock (and makes them again), never after
        for made in reversed(self._made):
            try:
                made.rmdir()
            except OSError:
                break
        self._made = []
        if self._fd is not None:
            os.close(self._fd)  # releases the lock
            self._fd = None

    def written(self) -> None:
        """The board is in place: the folders made for it stay."""
        self._made = []


def publish(judgments: str | Sequence[str], out_dir: str | Path, metrics: str | Sequence[str] | None = None, *,
            variants: str | Sequence[str] | None = None, options=None, resamples: int = 1000, seed: int = 0,
            correlation: str = "spearman", alpha: float = 0.05, correction: str = "holm",
            data_dir: str | Path | None = None, cache: str | Path | None = None, no_cache: bool = False,
            batch_size: int = 256, force: bool = False, engine="local", workers: int | None = None,
            address: str | None = None, actors: int | None = None, gpus_per_actor: float = 0.0,
            duplicates: str | None = None,
            human: str | None = None, title: str | None = None, command: str | None = None, progress: bool = True,
            say=None, plugins: Sequence[str | Path] = (), scores: Sequence[str] = (),
            scores_format: str | None = None) -> dict:
    """Score sets with metrics and publish a reproducible leaderboard (``meta-eval leaderboard publish``).

    ``judgments``: set names, each optionally with a subset after a colon (``"wmt21-mqm-ted:en-de"``), as a list or
    comma-separated; each becomes one section. ``out_dir`` is checked, made and held (:class:`BoardLock`) before any
    scoring; ``results.json``, ``README.md`` and ``index.html`` are written there. ``command`` is the command line
    recorded in the board (default: the equivalent ``meta-eval leaderboard publish`` call); ``human`` compares with
    that dimension on every set (default: each set's own default); ``title`` heads the pages; ``plugins``: Python
    files whose metrics are registered first (``--plugin FILE.py``); ``scores``: imported metrics
    (``"NAME=FILE"`` with one set, ``"SET/NAME=FILE"`` naming the set as given in ``judgments``; see
    :mod:`meta_eval.scoring.imported`), read and checked before any scoring (an imported metric named in
    ``metrics`` needs a file for every set, :func:`every_set_scored`); every set is loaded and its metrics
    checked before the first is scored (:func:`publish_blocks`: a learned model fitted on a set's rows is
    refused, :func:`held_out`). Returns the board's document; raises :class:`~meta_eval.errors.MetaEvalError`
    (:class:`PublishError` for the folder; :class:`~meta_eval.report.outputs.OutputError` for a folder in the
    judgment data folder, one whose board files would replace an input, or an ``out_dir`` that is not a path, such
    as None).
    """
    import shlex

    from meta_eval.report.outputs import OutputPlan
    from meta_eval.scoring import selection
    from meta_eval.scoring.engines import engine_for
    from meta_eval.judgments.rows import check_resamples, check_seed
    from meta_eval.task import check_judgments_argument

    if not isinstance(judgments, (str, os.PathLike)) and isinstance(judgments, Sequence) and all(
            isinstance(j, str) for j in judgments):
        judgments = ",".join(judgments)
    check_judgments_argument(judgments)
    check_seed(seed)  # before any set is loaded, not numpy's error after the scoring
    check_resamples(resamples)  # >= 10, as the command requires (one draw gives an interval of one value)
    if correlation not in ("spearman", "pearson", "kendall"):
        raise MetaEvalError(f"--correlation must be spearman, pearson or kendall, not {correlation!r}")
    if correction not in ("holm", "bh", "none"):
        raise MetaEvalError(f"--correction must be holm, bh or none, not {correction!r}")
    if not isinstance(alpha, (int, float)) or isinstance(alpha, bool) or not 0 < alpha < 1:  # nan too: before scoring
        raise MetaEvalError(f"--alpha must be a number in (0, 1) (the significance clusters' level), not {alpha!r}")
    names = os.fspath(judgments)
    if not [n for n in names.split(",") if n.strip()]:
        raise MetaEvalError(f"--judgments {names!r} names no set: give one or more, comma-separated")
    metrics = ",".join(metrics) if metrics is not None and not isinstance(metrics, str) else metrics
    variants = ",".join(variants) if variants is not None and not isinstance(variants, str) else variants
    option_list = selection.option_list(options)
    score_texts = [scores] if isinstance(scores, str) else list(scores)
    # the board folder against every input, before any scoring (BoardLock then checks its contents and holds it)
    from meta_eval.scoring.imported import spec_path

    plan = OutputPlan(judgments=names, data_dir=data_dir, cache=cache, no_cache=no_cache, options=option_list,
                      plugins=plugins, metrics=metrics, files=[("a --scores file", spec_path(t)) for t in score_texts])
    out_dir = plan.add_folder(out_dir, "--out", OUTPUT_FILES)  # figures/ too: no input in it, even with --force
    if command is None:
        args = ["-j", names, *(["-m", metrics] if metrics else []), *(["--variants", variants] if variants else []),
                *[a for o in option_list for a in ("-o", o)], *[a for p in plugins for a in ("--plugin", str(p))],
                *[a for s in ([scores] if isinstance(scores, str) else scores) for a in ("--scores", s)],
                *(["--scores-format", scores_format] if scores_format else []),
                *[a for flag, value, default in (("--resamples", resamples, 1000), ("--seed", seed, 0),
                                                 ("--correlation", correlation, "spearman"), ("--alpha", alpha, 0.05),
                                                 ("--correction", correction, "holm"), ("--human", human, None),
                                                 ("--duplicates", duplicates, None), ("--title", title, None))
                  if value != default for a in (flag, str(value))],  # every setting that changes the board
                "--out", str(out_dir)]
        command = "meta-eval leaderboard publish " + " ".join(shlex.quote(a) for a in args)
    selection.load_plugins(plugins)
    tables = imported_tables(names, scores, scores_format)  # a bad score file fails before any work
    every_set_scored(names, metrics, tables)
    board = BoardLock(out_dir, force)
    board.__enter__()  # before any scoring: the folder is checked, made if missing and held until written
    try:
        with engine_for(engine, workers, address, actors, gpus_per_actor) as scoring:
            blocks = publish_blocks(names, metrics, variants, option_list, resamples, seed, correlation, alpha,
                                    correction, data_dir, cache, no_cache, batch_size, scoring, duplicates,
                                    progress=progress, say=say, human=human, tables=tables)
        try:
            doc = write_leaderboard(out_dir, out_dir.name, blocks, command, n_resamples=resamples, seed=seed,
                                    confidence=0.95, alpha=alpha, correction=correction, primary=correlation,
                                    title=title, plan=plan, force=force, say=say)
        except PublishError as exc:
            raise MetaEvalError(str(exc), code=1) from None
        board.written()
        unresolved(doc, say)
    finally:
        board.__exit__(None, None, None)
    return doc


def unresolved(doc: dict, say) -> None:
    """One warning when some blocks' clusters could separate no pair (their ``pairwise.resolution_note``: too few
    resamples for the correction over all pairs), naming how many and the first note."""
    notes = [(f"{s['judgments']} ({s['subset']}) {b['level']} {b.get('statistic') or b.get('correlation')}",
              b["pairwise"]["resolution_note"]) for s in doc["sets"] for b in s["levels"]
             if b.get("pairwise") and b["pairwise"].get("resolution_note")]
    if notes and say is not None:
        blocks = sum(1 for s in doc["sets"] for b in s["levels"] if b.get("pairwise"))
        say("err", f"warning: in {len(notes)} of the {blocks} blocks with clusters no pair can be separated (every "
                   f"variant shares one cluster); {notes[0][0]}: {notes[0][1]}")


def imported_tables(names: str, scores: Sequence[str], fmt: str | None) -> dict[str, list]:
    """The score files of ``--scores``, read and checked, per set as named in ``names`` (comma-separated):
    ``SET/NAME=FILE`` for that set, ``NAME=FILE`` when there is one set."""
    from meta_eval.scoring.imported import merge_tables, parse_spec, read_table

    sets = [n.strip() for n in names.split(",") if n.strip()]
    by_set: dict[str, list] = {}
    for text in ([scores] if isinstance(scores, str) else scores):
        head, sep, path = str(text).partition("=")
        where, slash, name = head.rpartition("/")
        if not slash:
            if len(sets) != 1:
                raise MetaEvalError(f"--scores {text}: this board has several sets ({', '.join(sets)}); name the "
                                    f"set of the file: SET/NAME=FILE, e.g. {sets[0]}/{head}={path}")
            where = sets[0]
        elif where not in sets:
            raise MetaEvalError(f"--scores {text}: {where!r} is not one of the board's sets ({', '.join(sets)})")
        by_set.setdefault(where, []).append(read_table(parse_spec(f"{name}{sep}{path}", fmt), offers_drop=False))
    return {where: merge_tables(tables) for where, tables in by_set.items()}


def every_set_scored(names: str, metrics: str | None, tables: dict[str, list]) -> None:
    """An imported metric named in ``--metrics`` needs a score file for every set of the board (each set scores
    every metric of ``-m``): one given for some sets only is an error naming the set without a file, before any set
    is loaded or scored (it was an unknown metric once the other sets were scored)."""
    sets = [n.strip() for n in names.split(",") if n.strip()]
    asked = [m.strip() for m in (metrics or "").split(",") if m.strip()]
    for metric in asked:
        having = [s for s in sets if any(t.spec.name == metric for t in tables.get(s, ()))]
        lacking = [s for s in sets if s not in having]
        if having and lacking:
            raise MetaEvalError(f"--scores: no score file was given for {metric!r} on {lacking[0]} (only on "
                                f"{', '.join(having)}), and every set of a board scores every metric of -m: give "
                                f"one with --scores {lacking[0]}/{metric}=FILE, or publish {lacking[0]} on a board "
                                "of its own")


def publish_blocks(judgments: str, metrics, variants, options, resamples, seed, correlation, alpha, correction,
                   data_dir, cache, no_cache, batch_size, engine, duplicates=None, *, progress: bool = True,
                   say=None, human: str | None = None, tables: dict | None = None) -> list[dict]:
    """Score every set of :func:`publish` on ``engine`` and build its leaderboard block (:func:`set_results`).

    Every set is loaded and its metrics chosen and checked first (:func:`_prepare`: imported scores joined, names,
    answer stores, in-sample learned models), so that a bad request about the second set stops the board before
    the first is scored; then each set is scored (:func:`_scored_block`)."""
    from meta_eval.scoring.selection import parse_options

    say = say or (lambda channel, text: None)
    parsed = parse_options(options)
    given = [name.strip() for name in judgments.split(",") if name.strip()]
    plans = [_prepare(name, metrics, variants, options, parsed, data_dir, cache, no_cache, duplicates, say, human,
                      tables) for name in given]
    distinct_sets(given, [p["categorical"][0] if "categorical" in p else p["jset"] for p in plans])
    blocks = []
    for text, plan in zip(given, plans):
        if "categorical" in plan:  # labels: meta-eval run's statistics (leaderboard.judge_board), chosen and scored
            from meta_eval.leaderboard.judge_board import categorical_set

            blocks.append(categorical_set(
                *plan["categorical"], metrics=metrics, variants=variants, options=options, resamples=resamples,
                seed=seed, alpha=alpha, correction=correction, data_dir=data_dir, cache=cache, no_cache=no_cache,
                batch_size=batch_size, engine=engine, progress=progress, say=say))
        else:
            blocks.append(_scored_block(plan, resamples, seed, correlation, alpha, correction, cache, no_cache,
                                        batch_size, engine, progress, say))
        file_digest(blocks[-1], text)
    return blocks


def file_digest(block: dict, given: str) -> None:
    """A set published from a file gets ``file_sha256``, the SHA-256 of the file's bytes (a board records a set's
    name, never a local path): ``leaderboard probe -j FILE`` checks it, so no other file of that name is probed as
    the board's set. A built-in set (pinned by the data's own SHA-256) gets none."""
    from meta_eval import judgments as judgment_sets
    from meta_eval.provenance import digest

    if not judgment_sets.is_builtin(given):
        block["file_sha256"] = digest(given)


def distinct_sets(given: Sequence[str], sets: Sequence) -> None:
    """Refuse two sets of one board with the same name and subset (``s.jsonl`` and ``o/s.jsonl`` are both set
    ``s``): a board names a set by its name and subset only (its section, its figures, ``leaderboard probe``), so
    the second would overwrite the first's figures and be probed as the first. ``given``: the sets as given to
    ``-j``; ``sets``: them loaded, in the same order; checked before any scoring."""
    seen: dict[tuple[str, str], str] = {}
    for text, jset in zip(given, sets):
        key = (jset.name, jset.subset)
        if key in seen:
            raise MetaEvalError(f"-j {seen[key]} and {text} are both the set {jset.name!r} (subset {jset.subset!r}); "
                                "a board names a set by its name (a file's stem) and subset, so two sets of one "
                                "board must differ in one of them (e.g. rename one file); nothing was scored")
        seen[key] = text


def _prepare(given: str, metrics, variants, options, parsed, data_dir, cache, no_cache, duplicates, say, human,
             tables) -> dict:
    """One set of a board, loaded and checked before anything is scored: its rows (duplicates resolved), imported
    scores joined, metrics chosen (as every command chooses them) and checked (names, answer stores, no learned
    model fitted on these rows); a dict for :func:`_scored_block`, or ``{"categorical": (set, dimension,
    property)}`` for a label property."""
    from meta_eval import judgments as judgment_sets
    from meta_eval.report.outputs import check_stores
    from meta_eval.scoring.imported import check_names, without_imported
    from meta_eval.scoring.selection import available_variants, choose_metrics, resolve_metric_choice

    name, subset = given, None
    if ":" in given and judgment_sets.is_builtin(given):
        name, subset = given.split(":", 1)
    try:
        loaded = jset = judgment_sets.load(name, data_dir, subset=subset)
        dim = human or jset.default_dimension
        if dim not in jset.dimensions:
            raise MetaEvalError(f"--human {dim}: {jset.name} has the dimensions {', '.join(jset.dimensions)}")
        prop = next((p for p in (getattr(jset, "properties", None) or ()) if p.name == dim), None)
        if prop is not None and prop.categorical:
            if (tables or {}).get(given):
                raise MetaEvalError(f"--scores {given}/...: {jset.name}'s {dim!r} is a "
                                    f"{'pairwise' if prop.pairwise else 'categorical'} property; imported "
                                    "scores are for graded properties")
            return {"categorical": (jset, dim, prop)}
        jset = jset.scored(dim)
        jset, report = jset.resolve_duplicates(duplicates)  # before any scoring; None: the set's policy
        if report.message:
            say("err", report.message)
        imported, rows, position = [], [], {}
        if (tables or {}).get(given):
            from meta_eval.scoring.imported import check_levels, join_scores

            position = {r.id: i for i, r in enumerate(loaded.rows)}
            rows = [position[r.id] for r in jset.rows]
            imported, _ = join_scores(tables[given], loaded, rows, offers_drop=False)  # strict: every row
            for level in levels_of(jset):
                check_levels(imported, level, "spearman")
    except (judgment_sets.JudgmentError, judgment_sets.DataError) as exc:
        raise MetaEvalError(str(exc)) from None
    requested, only_imported = without_imported(metrics, imported)
    requested, shown = resolve_metric_choice(requested, variants)  # as every command chooses variants
    chosen, skipped = ([], []) if only_imported else choose_metrics(
        requested, parsed, what=jset.name, has_sources=jset.has_sources, has_references=jset.max_references > 0,
        language=jset.language, full_default=True, judged=(jset, dim))  # a published board has every metric
    check_names(imported, chosen)
    shown.check(available_variants(chosen, skipped, imported))
    chosen = shown.narrow(chosen, skipped, requested)
    check_stores(chosen, data_dir=data_dir, cache=cache, no_cache=no_cache)  # the answer store, before asking
    held_out(chosen, jset, given, say)
    return {"jset": jset, "loaded": loaded, "dim": dim, "imported": imported, "rows": rows, "position": position,
            "chosen": chosen, "skipped": skipped, "shown": shown}


def held_out(chosen, jset, given: str, say) -> None:
    """Refuse a learned model (``learned:NAME``) fitted on rows of this set: a board ranks metrics and tests them
    against each other, and an in-sample correlation is no held-out one (``meta-eval run`` shows it, says so and
    withholds its tests: docs/learning.md). The check is ``run``'s (:func:`meta_eval.metrics.learned.fit_checks`:
    the model's row fingerprints, else its set and subset); a model file that records neither is published with
    ``run``'s note."""
    from meta_eval.metrics.learned import fit_checks

    for metric, check in fit_checks(chosen, jset.examples(), jset.name, jset.subset).items():
        if check.in_sample:
            raise MetaEvalError(f"{check.message()}; a leaderboard publishes held-out correlations only, so "
                                f"{metric} is not published on {given}: publish it on rows it was not fitted on, "
                                f"or see it in-sample with `meta-eval run -j {given} -m {metric}` (which withholds "
                                "its tests)")
        if check.message() is not None:
            say("err", f"note: {check.message()}")


def _scored_block(plan: dict, resamples, seed, correlation, alpha, correction, cache, no_cache, batch_size, engine,
                  progress, say) -> dict:
    """Score one set prepared by :func:`_prepare` and build its leaderboard block (:func:`set_results`)."""
    from meta_eval.report.progress import resampling_progress
    from meta_eval.scoring.cache import open_cache
    from meta_eval.scoring.chunks import spread
    from meta_eval.scoring.runner import degenerate_lines, degenerate_report, score_all
    from meta_eval.scoring.selection import group_skips

    jset, loaded, dim, imported, rows = plan["jset"], plan["loaded"], plan["dim"], plan["imported"], plan["rows"]
    chosen, skipped, shown = plan["chosen"], plan["skipped"], plan["shown"]
    say("err", f"{jset.name} ({jset.subset}): {len(jset)} rows, human {dim}; metrics: "
               f"{', '.join([m.name for m in chosen] + [f'{imp.name} (imported)' for imp in imported])}")
    examples = jset.examples()
    scoring = score_all(chosen, examples, open_cache(cache, no_cache), batch_size, engine=engine,
                        progress=progress) if chosen else None
    if scoring is not None and scoring.dropped_rows():  # on_unparsed=drop: rows with no parsed answer leave
        from meta_eval.task import drop_rows

        jset, scoring, note = drop_rows(jset, scoring)
        say("err", f"note: {note}")
        rows = [plan["position"][r.id] for r in jset.rows] if imported else rows
    scored, failed = (scoring.scored, scoring.failed) if scoring is not None else ([], [])
    if imported:
        from meta_eval.scoring.imported import metric_scores

        scored = scored + [metric_scores(imp, rows, loaded) for imp in imported]
    scored = shown.apply(scored)
    for names, reason in group_skips(skipped):
        say("err-skipped", f"{', '.join(names)}: {reason}")
    if failed:  # a leaderboard without a metric it was asked for is not published; the scores are cached
        raise MetaEvalError(f"{jset.name}: " + "; ".join(f"{n} failed: {r}" for n, r in failed)
                            + f"; nothing was written ({what_is_kept(no_cache)})",
                            code=1)
    if not scored:
        raise MetaEvalError(f"{jset.name}: no metric could run")
    if "system" in levels_of(jset):
        from meta_eval.scoring.system_scores import add_system_scores

        add_system_scores(scored, chosen, jset, cache=cache, no_cache=no_cache)  # BLEU, chrF, TER: corpus, cached
    not_measured = degenerate_report(scoring) if scoring is not None else {}  # None: imported metrics only
    for line in degenerate_lines(not_measured, len(examples)):
        say("err", line)
    try:
        with resampling_progress(progress) as advance, spread(engine, advance):
            block = set_results(jset, dim, scored, n_resamples=resamples, seed=seed, alpha=alpha,
                                correction=correction, primary=correlation, variant_filter=lambda v: True)
    except ValueError as exc:
        raise MetaEvalError(f"{jset.name}: {exc}") from None
    # what a metric records beside its signature (an LLM judge: the server asked; never its key)
    facts = {m.name: m.provenance() for m in chosen if callable(getattr(m, "provenance", None))}
    for entry in block["metrics"]:
        entry.update(facts.get(entry["metric"]) or {})
    block["skipped"] = [{"metric": n, "reason": r} for n, r in skipped]
    block["not_measured"] = {m: r for m, r in not_measured.items() if r["rows"]}
    if getattr(jset, "properties", None):  # a JUDGE-BENCH file: the raters' alpha, as `meta-eval run` shows it
        from meta_eval.judgments.judge_bench import human_agreement

        block["human_agreement"] = human_agreement(jset).get(dim)
    return block
