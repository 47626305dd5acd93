"""One definition of the units of each level, and the words a set's task uses for them.

Every command that counts the units behind a level (``meta-eval judgments``, ``run``, ``leaderboard publish``,
``probe``, ``learn``) counts them here, so they print the same numbers:

- global level ("no grouping"): the rows with a human score (each judged text is one unit, Clark et al. 2019; a
  repeated (document, system) pair counts every row, a row naming several systems counts once); for the pairwise
  accuracies (``accuracy``, ``acc-eq``, ``acc-t``) the (document, system) cells of the matrix below, by definition:
  they compare pairs of judged outputs (WMT's "no grouping" accuracy is over the flattened system x item score
  matrix, mt-metrics-eval), and two judgings of one output would form a pair whose metric scores tie by
  construction, so the pair would score the annotators' agreement, not the metric;
- summary level ("group by item", Deutsch, Dror & Roth 2021, section 2): the documents (MT: items, i.e. source
  segments) judged for 3 or more systems (2 for the pairwise accuracies and PDP, whose units are pairs of systems)
  whose human scores are not all equal for a correlation: the documents whose correlation the human scores define;
- system level: the systems with at least one judged cell.

The summary and system levels work on the documents x systems matrix of :func:`meta_eval.matrix.judgment_matrices`:
a repeated (document, system) pair is one cell under the set's duplicates policy (:mod:`judgments.base`), and a row
whose ``system`` names several systems joined by the set's ``multi_system_separator`` (chaganty's row of document
009784, system ``ml;ml+rl``: both systems wrote the same text, Chaganty et al. 2018) fills the cell of each of them.
:func:`multi_system_note` says so in every output. :func:`level_cells` gives the rows of that matrix, so that
:func:`meta_eval.stats.levels.summary_level` on them gives exactly what ``run`` prints.

The global level is over the rows everywhere (``run``, its JSON and :class:`meta_eval.results.RunResult`, the
leaderboards): its value, its Williams test and its BOOT-BOTH interval read the rows of :func:`global_rows`. The
interval draws documents and systems with replacement as the matrix bootstrap does, and each row enters a resample
(#draws of its document) x (#draws of its system) times (:func:`meta_eval.stats.resampling.row_bootstrap_samples`);
a row naming several systems is resampled through the first it names (chaganty's ``ml;ml+rl``: ``ml``). Where every
(document, system) pair is one row, this is the matrix interval, bit for bit.

Words: WMT (Freitag et al. 2023, "Results of WMT23 Metrics Shared Task", section 3) calls the levels segment level
"no grouping", segment level "group by item" and system level; :func:`level_words` maps (task, level) to the words
every output uses, and summarization, essay and factuality sets keep "global", "summary" and "documents".
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

__all__ = ["BASELINE_METRIC", "GlobalRows", "LevelUnits", "LevelWords", "count_units", "default_baseline",
           "global_rows", "global_units_are_cells",
           "level_cells", "level_units", "level_words", "multi_system_note", "multi_system_rows", "units_line",
           "why_no_baseline"]


@dataclass(frozen=True)
class LevelWords:
    """How one level reads for a task: ``name`` (``"summary level"``, ``"segment level, group by item"``), ``units``
    (plural noun: ``"documents"``, ``"items"``), ``unit`` (singular) and ``grouping`` (WMT23's word)."""

    level: str
    name: str
    units: str
    unit: str
    grouping: str

    def as_dict(self) -> dict:
        return {"level": self.level, "name": self.name, "units": self.units, "grouping": self.grouping}


_WORDS = {
    "MT": {"global": ("segment level, no grouping", "segments", "segment", "none"),
           "summary": ("segment level, group by item", "items", "item", "item"),
           "system": ("system level", "systems", "system", "system")},
    "": {"global": ("global level", "rows", "row", "none"),
         "summary": ("summary level", "documents", "document", "item"),
         "system": ("system level", "systems", "system", "system")},
}


#: The global level of the pairwise accuracies, outside MT: its units are the (document, system) cells (an MT
#: segment is one cell already, and keeps WMT's words)
_CELL_WORDS = ("global level, over (document, system) cells", "cells", "cell", "none")


def level_words(task: str | None, level: str, statistic: str | None = None) -> LevelWords:
    """The words of ``level`` for a set whose ``task`` is given (``"MT"``: WMT's words; any other: today's); with a
    pairwise accuracy ``statistic`` the global level outside MT reads as cells (:func:`global_units_are_cells`).

    >>> level_words("MT", "summary").name, level_words("MT", "summary").units
    ('segment level, group by item', 'items')
    >>> level_words("summarization", "summary").units
    'documents'
    >>> level_words("summarization", "global").units, level_words("summarization", "global", "acc-t").units
    ('rows', 'cells')
    """
    mt = (task or "").upper() == "MT"
    table = _WORDS["MT" if mt else ""]
    if level not in table:
        raise ValueError(f"level must be global, summary or system, not {level!r}")
    if not mt and global_units_are_cells(level, statistic):
        return LevelWords(level, *_CELL_WORDS)
    return LevelWords(level, *table[level])


def global_units_are_cells(level: str, statistic: str | None) -> bool:
    """Whether ``statistic`` at ``level`` counts (document, system) cells where the other statistics count rows:
    the global level of the pairwise accuracies (``accuracy``, ``acc-eq``, ``acc-t``), which compare pairs of
    judged outputs, one cell each (the module docstring says why)."""
    from meta_eval.stats import PAIRWISE

    return level == "global" and statistic in PAIRWISE


def default_baseline(jset) -> str | None:
    """The variant ``run`` compares every metric with when ``--baseline`` is not given: the set's declared
    ``default_baseline``, else by task: ``bleu`` for MT (WMT's baseline), ``rougeL-f`` for any other task; None for
    a set that declares none applies (``no_baseline``, its reason: JUDGE-BENCH's files)."""
    if getattr(jset, "no_baseline", ""):
        return None
    declared = getattr(jset, "default_baseline", "")
    if declared:
        return declared
    return "bleu" if (getattr(jset, "task", "") or "").upper() == "MT" else "rougeL-f"


#: The metric that computes a default baseline variant (the others are their own metric's name).
BASELINE_METRIC = {"rougeL-f": "rouge", "bleu": "bleu"}


def why_no_baseline(jset, variant: str | None, scored_metrics, skipped, failed, *, choice: dict | None = None,
                    shown=(), cannot: str | None = None) -> str:
    """Why the set's default baseline ``variant`` did not run, for the table's note, the JSON and the reading, with
    advice that can work: scored but not shown (hidden by the variant ``choice``,
    :meth:`~meta_eval.scoring.selection.VariantChoice.as_dict`: ``-m rouge1`` keeps rouge1's variants only;
    ``--baseline`` or naming it with ``-m`` shows it), skipped (with the skip's reason, e.g. a metric that cannot
    score the set's language), failed, not chosen and unable to run on this set (``cannot``: why, e.g. no
    references; then only another ``--baseline`` among the ``shown`` variants helps), or not chosen; ``variant``
    None: the set declares none (its ``no_baseline`` reason)."""
    if variant is None:
        return (f"the {jset.name} set declares no default baseline ({jset.no_baseline}); pass --baseline VARIANT to "
                "compare with one")
    metric = BASELINE_METRIC.get(variant, variant)
    head = f"the {jset.name} set's default baseline {variant}"
    if variant in (choice or {}).get("hidden", ()):
        tokens = choice.get("named_with_metrics", {}).get(metric)
        why = f": -m {','.join(tokens)} shows only the {metric} variants it names" if tokens else f" ({choice['rule']})"
        return (f"{head} was scored but is not shown{why}; pass --baseline {variant} to test against it (it is then "
                "shown too)" + (f", add it to -m ({','.join(tokens)},{variant})" if tokens else "")
                + ", or pass --baseline VARIANT for a shown one")
    for name, reason in skipped:
        if name == metric:
            return f"{head} ({metric}) was skipped: {reason}; pass --baseline VARIANT to compare with another"
    for name, reason in failed:
        if name == metric:
            return f"{head} ({metric}) failed: {reason}; pass --baseline VARIANT to compare with another"
    if cannot is not None:
        return (f"{head} ({metric}) cannot run here: {cannot}; to test against another variant, pass --baseline "
                f"VARIANT (the chosen: {', '.join(shown)})")
    return (f"{head} is not among the chosen metrics ({', '.join(scored_metrics)}); add -m {metric} or pass "
            "--baseline VARIANT")


def count_units(Z: np.ndarray, level: str, statistic: str = "spearman") -> int:
    """The units behind ``level`` in a documents x systems human matrix ``Z`` (NaN: no cell), as the module says.

    >>> Z = np.array([[1., 2, 3], [1, 1, 1], [1, 2, np.nan]])
    >>> count_units(Z, "summary"), count_units(Z, "summary", "accuracy"), count_units(Z, "system")
    (1, 3, 3)
    """
    from meta_eval.stats import PAIRWISE

    Z = np.asarray(Z, dtype=float)
    valid = ~np.isnan(Z)
    if level == "system":
        return int((valid.sum(axis=0) > 0).sum())
    if level == "global":
        return int(valid.sum())
    if level != "summary":
        raise ValueError(f"level must be global, summary or system, not {level!r}")
    if statistic in PAIRWISE or statistic == "pdp":  # an item counts from its first pair of systems
        return int((valid.sum(axis=1) >= 2).sum())
    lo = np.where(valid, Z, np.inf).min(axis=1)
    hi = np.where(valid, Z, -np.inf).max(axis=1)
    return int(((valid.sum(axis=1) >= 3) & (hi > lo)).sum())


def averaged_documents(X: np.ndarray, Z: np.ndarray) -> int:
    """The documents a summary-level correlation of the metric matrix ``X`` averages over: those of
    :func:`count_units` (3 or more judged systems, human scores not all equal) where the metric's scores are not all
    equal either (a constant metric leaves its correlation undefined there, and the average leaves the document
    out). The n of that variant's row in ``run``'s table and JSON, as :func:`meta_eval.stats.levels.summary_level`
    counts it.

    >>> Z = np.array([[1., 2, 3], [3, 1, 2], [1, 2, np.nan]])
    >>> averaged_documents(np.array([[5., 5, 5], [1, 2, 3], [1, 2, 3]]), Z), count_units(Z, "summary")
    (1, 2)
    """
    Z, X = np.asarray(Z, dtype=float), np.asarray(X, dtype=float)
    valid = ~np.isnan(Z) & ~np.isnan(X)

    def varies(M):
        return np.where(valid, M, -np.inf).max(axis=1) > np.where(valid, M, np.inf).min(axis=1)

    return int(((valid.sum(axis=1) >= 3) & varies(Z) & varies(X)).sum())


def multi_system_rows(jset) -> list[int]:
    """Indices of the rows whose ``system`` names several systems (only with a ``multi_system_separator``)."""
    if not getattr(jset, "multi_system_separator", None):
        return []
    return [i for i, r in enumerate(jset.rows) if len(jset.row_systems(r)) > 1]


def multi_system_note(jset) -> str | None:
    """The sentence every output prints about rows whose system names several systems; ``None`` if there is none.

    chaganty: ``"1 row names several systems (document '009784', system 'ml;ml+rl'): it fills the cell of each
    (ml, ml+rl) at the summary and system levels (and the pairwise accuracies' global level, over cells), as one
    summary judged for each system, and counts once at the correlations' global level (resampled through its first
    system there)"``.
    """
    multi = multi_system_rows(jset)
    if not multi:
        return None
    first = jset.rows[multi[0]]
    n = len(multi)
    return (f"{n} row{'s name' if n > 1 else ' names'} several systems (e.g. document {first.doc_id!r}, system "
            f"{first.system!r}): {'each fills' if n > 1 else 'it fills'} the cell of each "
            f"({', '.join(jset.row_systems(first))}) at the summary and system levels (and the pairwise accuracies' "
            f"global level, over cells), as one summary judged for each system, and counts once at the correlations' "
            f"global level (resampled through its first system there)")


def level_cells(jset, dimension: str, scores) -> tuple[np.ndarray, np.ndarray, list[str], list[str]]:
    """(metric, human, documents, systems): one entry per (document, system) cell of the summary and system levels.

    These are the rows :func:`meta_eval.stats.levels.summary_level` and :func:`~meta_eval.stats.levels.system_level`
    need to give what ``run`` prints: a repeated pair is one cell (the set's duplicates policy), a row naming several
    systems one cell per system. Cells without a human score are left out.
    """
    from meta_eval.matrix import judgment_matrices

    jset.require_systems("the summary and system levels need")
    Z, (X,) = judgment_matrices(jset, dimension, [np.asarray(scores, dtype=float)])
    docs = sorted({d for _, d, _ in jset.cells()})
    systems = sorted({s for _, _, s in jset.cells()})
    i, j = np.nonzero(~np.isnan(Z))
    return X[i, j], Z[i, j], [docs[k] for k in i], [systems[k] for k in j]


class GlobalRows(NamedTuple):
    """The global level's units as arrays, one entry per row with a human score (:func:`global_rows`):
    ``values`` (n_metrics, n_rows), ``human`` (n_rows,), ``doc`` and ``system`` (each row's index among the
    ``n_docs`` documents and ``n_systems`` systems of the (document x system) matrix, in its sorted order; a row
    naming several systems has the index of the first it names), ``rows`` the rows' indices in the set."""

    values: np.ndarray
    human: np.ndarray
    doc: np.ndarray
    system: np.ndarray
    n_docs: int
    n_systems: int
    rows: np.ndarray


def global_rows(jset, dimension: str, arrays) -> GlobalRows:
    """The rows of the global level, for its value, its interval and its test (``run``, ``leaderboard publish``).

    Every row with a human score counts once, in row order (a repeated (document, system) pair counts every row,
    a row naming several systems counts once); documents and systems are indexed as the matrices of
    :func:`meta_eval.matrix.judgment_matrices` index them, so that
    :func:`meta_eval.stats.resampling.row_bootstrap_samples` draws the documents and systems the matrix bootstrap
    draws. A row naming several systems (chaganty's ``ml;ml+rl``) is resampled through the first system it names.
    Every row needs a system (:meth:`judgments.JudgmentSet.require_systems`).
    """
    jset.require_systems("the global level's interval (BOOT-BOTH: documents and systems drawn) needs")
    docs = sorted({d for _, d, _ in jset.cells()})
    systems = sorted({s for _, _, s in jset.cells()})
    human = jset.human(dimension)
    keep = np.flatnonzero(np.isfinite(human))
    doc_of = {d: k for k, d in enumerate(docs)}
    system_of = {s: k for k, s in enumerate(systems)}
    doc = np.array([doc_of[jset.rows[i].doc_id] for i in keep], dtype=np.int64)
    system = np.array([system_of[jset.row_systems(jset.rows[i])[0]] for i in keep], dtype=np.int64)
    values = np.array([np.asarray(a, dtype=float)[keep] for a in arrays]).reshape(len(arrays), len(keep))
    return GlobalRows(values, human[keep], doc, system, len(docs), len(systems), keep)


@dataclass(frozen=True)
class LevelUnits:
    """The units of one level of one set: ``n`` of them, named ``words.units``; ``systems`` and ``documents`` as the
    summary and system levels see them (a multi-system row's systems separately), ``note`` from
    :func:`multi_system_note`."""

    level: str
    n: int
    words: LevelWords
    documents: int
    systems: tuple[str, ...]
    note: str | None

    def __str__(self) -> str:
        return f"{self.n} {self.words.units}"

    def as_dict(self) -> dict:
        return {"level": self.level, "n_units": self.n, "units": self.words.units, "label": self.words.name,
                "documents": self.documents, "systems": len(self.systems), "multi_system_rows": self.note}


def level_units(jset, dimension: str, level: str, statistic: str = "spearman") -> LevelUnits:
    """The units of ``level`` for ``jset``'s human ``dimension`` (rows without a score left out, as ``run`` does);
    ``statistic`` decides what is counted where the statistics differ: the documents of the summary level (2 judged
    systems suffice for a pairwise statistic), the cells of the global level for the pairwise accuracies.

    Raises :class:`meta_eval.evaluate.LevelError` when the level cannot be computed (see
    :func:`meta_eval.evaluate.check_level`, which calls this).
    """
    from meta_eval.evaluate import LevelError
    from meta_eval.matrix import judgment_matrices

    words = level_words(jset.task, level, statistic)
    where = f"{jset.origin()}: the {level} level cannot be computed for human '{dimension}'"
    if getattr(jset, "pooled_datasets", ""):
        raise LevelError(f"{where}: {jset.pooled_datasets}")
    note = multi_system_note(jset)
    if level == "global":
        h = jset.human(dimension)
        h = h[np.isfinite(h)]
        if len(h) < 3:
            raise LevelError(f"{where}: it needs 3 or more rows with a score, there are {len(h)}")
        if np.all(h == h[0]):
            raise LevelError(f"{where}: every row has the same human score ({h[0]:g}), so no correlation is defined")
        systems = tuple(sorted({s for _, _, s in jset.cells()}))
        if global_units_are_cells(level, statistic):
            jset.require_systems("the global level of the pairwise accuracies (over (document, system) cells) needs")
            return LevelUnits(level, count_units(judgment_matrices(jset, dimension, [])[0], "global"), words,
                              jset.documents(), systems, note)
        return LevelUnits(level, len(h), words, jset.documents(), systems, note)
    if level not in ("summary", "system"):
        raise ValueError(f"level must be global, summary or system, not {level!r}")
    jset.require_systems(f"the {level} level needs")
    Z, _ = judgment_matrices(jset, dimension, [])
    systems = tuple(sorted({s for _, _, s in jset.cells()}))
    valid = ~np.isnan(Z)
    if level == "system":
        judged = valid.any(axis=0)
        n = int(judged.sum())
        if n < 3:
            raise LevelError(f"{where}: it needs 3 or more systems, there {'is' if n == 1 else 'are'} {n} "
                             f"({', '.join(systems)})")
        with np.errstate(invalid="ignore"):
            means = np.nanmean(Z[:, judged], axis=0)
        if np.all(means == means[0]):
            raise LevelError(f"{where}: all {n} systems have the same mean human score ({means[0]:g})")
        return LevelUnits(level, n, words, Z.shape[0], systems, note)
    n = count_units(Z, "summary", statistic)
    if n == 0:
        per_doc = valid.sum(axis=1)
        enough = per_doc >= 3
        docs = words.units
        why = (f"of its {Z.shape[0]} {docs}, none is judged for 3 or more systems (the most on one {words.unit}: "
               f"{int(per_doc.max(initial=0))})" if not enough.any() else
               f"the {int(enough.sum())} {docs if enough.sum() != 1 else words.unit} judged for 3 or more systems "
               f"{'each have' if enough.sum() != 1 else 'has'} equal human scores")
        notes = "".join(f" ({x})" for x in jset.notes if "doc_id" in x)
        raise LevelError(f"{where}: it needs {docs} judged for 3 or more systems with differing human scores; "
                         f"{why}{notes}")
    return LevelUnits(level, n, words, Z.shape[0], systems, note)



def units_line(jset, level: str = "global") -> str:
    """The line ``learn`` prints about the units its correlations rest on, in ``run``'s words: the level, its rows,
    documents (MT: items) and systems, e.g. ``"units: global level: 2085 rows (583 documents, 5 systems)"``."""
    words = level_words(jset.task, level)
    docs = level_words(jset.task, "summary").units
    systems = len(jset.systems()) if not jset.rows_without_system() else 0
    return (f"units: {words.name}: {len(jset)} {level_words(jset.task, 'global').units} ({jset.documents()} {docs}"
            + (f", {systems} systems" if systems else "") + ")")
