"""The data model of a human-judgment set: rows of (candidate, references, source) with human scores.

Repeated (document, system) pairs
---------------------------------
The summary and system levels (Deutsch, Dror & Roth, TACL 2021, section 2) work on a documents x systems matrix,
one cell per (document, system) pair. When several rows hold one pair, the set's ``duplicates`` policy decides, and
meta-eval never decides silently:

- ``"error"`` (the default, and the generic JSONL format's): :meth:`JudgmentSet.resolve_duplicates` raises a
  :class:`JudgmentError` naming the rows (file and line for a JSONL file) before anything is scored.
- ``"mean"``: at the summary and system levels the human scores *and* the metric scores of the repeated rows are
  each averaged into one cell (NaN values left out). The global level correlates rows (each judged text is one unit,
  as in Clark et al. 2019), so every repeated row counts there. The chaganty set declares this policy (document
  006588's ``ml+rl`` summary was judged in two batches and both rows are kept); it is what meta-eval did for every
  set before the policy existed, and the committed leaderboards were computed with it.
- ``"first"``: the first row of each pair (in the set's row order: file order for JSONL) is kept and the later rows
  are removed from the set, so no level sees them. A row that fills several cells (below) is removed when any of its
  cells is already held by an earlier row.

Rows judged for several systems: a set may declare ``multi_system_separator`` (only chaganty does: ``";"``, for the
row whose text both ``ml`` and ``ml+rl`` wrote); such a row fills the cell of each of its systems at the summary and
system levels. In every other set a system named ``a;b`` is one system.

Rows without a system (``system`` is None, e.g. a JSONL file without the field) can be correlated at the global level
only; the summary and system levels raise a :class:`JudgmentError` naming the file and the first such row.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Mapping, Sequence

import numpy as np

from meta_eval.errors import MetaEvalError
from meta_eval.metrics.base import Example

__all__ = ["DUPLICATE_POLICIES", "DuplicateReport", "Judgment", "JudgmentSet", "JudgmentError", "LabelledExamples",
           "Property", "json_type", "json_value"]

DUPLICATE_POLICIES = ("error", "mean", "first")


class JudgmentError(ValueError, MetaEvalError):
    """A judgment set is malformed (duplicate ids, missing fields, wrong types, unknown dimension). A ValueError for
    older callers and a :class:`~meta_eval.errors.MetaEvalError` (exit code 2), the one exception a caller catches."""

    def __init__(self, message: str, code: int = 2):
        MetaEvalError.__init__(self, message, code)


@dataclass(frozen=True)
class Judgment:
    """One judged text.

    Parameters
    ----------
    id : str
        Unique within the set.
    doc_id : str
        The source document.
    system : str or None
        The system (or author) that wrote the candidate; None where the data does not say (global level only).
    candidate : str
    references : tuple of str
    source : str or None
    scores : mapping of str to float or None
        Human score per dimension (mean over judges); None where this row has none.
    judges : mapping of str to tuple of float
        Per-judge values per dimension, where the data has them.
    where : str or None
        Where the row comes from, for messages (``"<file>:<line>"`` for JSONL); not part of equality.
    labels : mapping of str to str
        The human label per *categorical* property (JUDGE-BENCH's ``majority_human``), kept as a label, never a
        number; such a property has no entry in ``scores``.
    raters : mapping of str to tuple
        Per property, the raters' values as the file gives them (numbers, or labels for a categorical property; None
        for a missing value); a value's position is its rater (JUDGE-BENCH's ``individual_human_scores``).
    fields : mapping of str to str
        The judged instance's named fields (JUDGE-BENCH: ``{"instance": text}`` for a string instance, else the
        instance object's fields, e.g. ``user_prompt``/``response`` or ``input``/``output_a``/``output_b``), for
        metrics and prompt templates that need more than candidate, references and source. Not part of equality.
    """

    id: str
    doc_id: str
    system: str | None
    candidate: str
    references: tuple[str, ...]
    source: str | None = None
    scores: Mapping[str, float | None] = field(default_factory=dict)
    judges: Mapping[str, tuple[float, ...]] = field(default_factory=dict)
    where: str | None = field(default=None, compare=False)
    labels: Mapping[str, str] = field(default_factory=dict)
    raters: Mapping[str, tuple] = field(default_factory=dict, compare=False)
    fields: Mapping[str, str] = field(default_factory=dict, compare=False)

    @property
    def n_judges(self) -> int:
        return max((len(v) for v in self.judges.values()), default=0)

    def example(self) -> Example:
        """The row as a metric sees it: an :class:`~metrics.instance.Instance` carrying :attr:`fields` when the row
        has fields (JUDGE-BENCH), else a plain :class:`~metrics.base.Example` (every other set, whose cache keys are
        unchanged)."""
        if self.fields:
            from meta_eval.metrics.instance import Instance

            return Instance(self.candidate, self.references, self.source, fields=tuple(self.fields.items()))
        return Example(self.candidate, self.references, self.source)

    def location(self, set_name: str = "") -> str:
        """Where a user finds this row, for messages: ``"<file>:<line> (id 'x')"`` for a row read from a file
        (the id left out when it is the line number, a JSONL row's default, or when ``where`` names it already, as
        JUDGE-BENCH's ``f.json: instances[3] (id '17')``), else ``"<set> row 'x' (document 'd',
        system 's')"``."""
        if self.where:
            named = self.where.rsplit(":", 1)[-1] == self.id or self.where.endswith(f"(id {self.id!r})")
            return self.where if named else f"{self.where} (id {self.id!r})"
        return (f"{set_name + ' ' if set_name else ''}row {self.id!r} (document {self.doc_id!r}, system "
                f"{self.system!r})")


class LabelledExamples(list):
    """A list of :class:`~metrics.base.Example` that also holds ``labels``: one location per example, for messages.

    :meth:`JudgmentSet.examples` and the readers of ``meta-eval score`` return one, so that
    :func:`meta_eval.scoring.runner.score_examples` can name the file and line (or the row id) of an example a metric
    cannot score (e.g. one without a reference), whatever the batch size and the cache. A copy made with ``list()``
    or a slice is a plain list without labels.
    """

    def __init__(self, examples, labels) -> None:
        super().__init__(examples)
        self.labels = tuple(labels)
        if len(self.labels) != len(self):
            raise ValueError(f"{len(self.labels)} labels for {len(self)} examples")


@dataclass(frozen=True)
class DuplicateReport:
    """What a duplicates policy did to a set: see :meth:`JudgmentSet.resolve_duplicates`."""

    policy: str
    given_by: str
    repeated_pairs: int
    rows_in_repeated_pairs: int
    rows_dropped: int
    message: str | None

    def as_dict(self) -> dict:
        return {"policy": self.policy, "given_by": self.given_by, "repeated_pairs": self.repeated_pairs,
                "rows_in_repeated_pairs": self.rows_in_repeated_pairs, "rows_dropped": self.rows_dropped}


@dataclass(frozen=True)
class Property:
    """A judged property of a set read from JUDGE-BENCH's schema (:mod:`judgments.judge_bench`).

    Parameters
    ----------
    name : str
        The property (JUDGE-BENCH's ``metric``), e.g. ``"Coherence"``.
    kind : {"graded", "continuous", "categorical"}
        JUDGE-BENCH's ``category``: graded (a fixed set of values between ``worst`` and ``best``, the mean of the
        raters is the row's score), continuous (any value in the range, likewise) or categorical (labels, the
        majority label is the row's label).
    worst, best : float or None
        The ends of a graded or continuous scale (None for a categorical property).
    labels : tuple of str
        A categorical property's labels (``labels_list``), in the file's order; empty otherwise.
    prompt : str
        The set's jinja prompt template for the property (over ``instance`` or the instance's fields).
    pairwise : bool
        A categorical property whose labels are ``model_a`` and ``model_b``: which of two outputs is better (LLMBar).
    """

    name: str
    kind: str
    worst: float | None = None
    best: float | None = None
    labels: tuple[str, ...] = ()
    prompt: str = ""
    pairwise: bool = False

    @property
    def categorical(self) -> bool:
        return self.kind == "categorical"

    def scale(self) -> str:
        """``"graded 1-5"``, ``"categorical: No, Yes, Unsure"`` or ``"pairwise: model_a, model_b"``."""
        if self.categorical:
            return f"{'pairwise' if self.pairwise else 'categorical'}: {', '.join(self.labels)}"
        return f"{self.kind} {self.worst:g}-{self.best:g}"


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


@dataclass
class JudgmentSet:
    """A named list of judgments with the human dimensions they carry.

    Parameters
    ----------
    name, rows, dimensions, default_dimension, description, subset
        As named; ``default_dimension`` is the dimension used when none is asked for.
    duplicates : {"error", "mean", "first"}
        The set's declared policy for repeated (document, system) pairs (see the module docstring).
    multi_system_separator : str or None
        If set, a row's ``system`` may name several systems joined by it (chaganty: ``";"``).
    default_reason : str
        Why ``default_dimension`` is the default (printed when a set has several dimensions).
    notes : tuple of str
        What the loader wants every user of the set to know (e.g. rows without ``doc_id``).
    task, licence, data_source, annotators : str
        What the set is for (e.g. ``"MT"``, ``"factuality"``), the licence its data is under, where the data comes
        from (repository, commit, paper) and who judged it (e.g. ``"1 professional translator per segment"``), for
        listings; empty where a loader does not say.
    language : str or None
        The language (ISO 639-1) of the candidate texts, e.g. ``"de"`` for WMT21 en-de; metrics built for other
        languages (:meth:`metrics.base.Metric.supported_languages`) are skipped with the reason. ``None`` (user JSONL
        files): not declared, nothing is skipped for it.
    pooled_datasets : str
        Non-empty when the rows' ``system`` field is really the label of a source dataset (qags ``all``: QAGS-C is
        one system's CNN/DM summaries, QAGS-X another's XSum summaries): the sentence saying so. No level statistic
        is computed on such a set (:func:`meta_eval.evaluate.check_level` refuses with this reason): a correlation
        over the pool compares the datasets, and every resampling of "systems" resamples the datasets.
    pooled_groups : tuple of str
        For a set that pools several language pairs (``wmt23`` subset ``"en-de,zh-en"``,
        :func:`judgments.pooling.pool`): the pairs, in the order given; every row's ``system`` is then
        ``"<pair>:<system>"`` (:meth:`system_group` gives the pair back). Empty for every other set.
    default_baseline : str
        The variant ``meta-eval run`` tests every metric against when ``--baseline`` is not given: ``"bleu"`` for
        the MT sets (WMT's baseline), ``"rougeL-f"`` for the others; empty (user files): chosen by ``task``
        (:func:`meta_eval.units.default_baseline`).
    properties : tuple of Property
        For a set read from JUDGE-BENCH's schema: every judged property with its kind and scale or labels, in the
        file's order (each is also a name in ``dimensions``); empty for every other set. A categorical property has
        labels (:attr:`Judgment.labels`), not scores: :meth:`human` refuses it with a sentence.
    candidate_rule : str
        For such a set: which part of the instance is the candidate (and the source), in words.
    no_baseline : str
        Non-empty when the set declares that no default baseline applies to it: why (JUDGE-BENCH's schema: no
        references, :mod:`judgments.judge_bench`). :func:`meta_eval.units.default_baseline` is then None, and
        ``run`` says "no test against a baseline" with this reason, once, before the table.
    """

    name: str
    rows: list[Judgment]
    dimensions: tuple[str, ...]
    default_dimension: str
    description: str = ""
    subset: str = "all"
    duplicates: str = "error"
    multi_system_separator: str | None = None
    default_reason: str = ""
    notes: tuple[str, ...] = ()
    task: str = ""
    licence: str = ""
    data_source: str = ""
    annotators: str = ""
    language: str | None = None
    pooled_datasets: str = ""
    pooled_groups: tuple[str, ...] = ()
    default_baseline: str = ""
    properties: tuple[Property, ...] = ()
    candidate_rule: str = ""
    no_baseline: str = ""

    def __post_init__(self) -> None:
        first: dict[str, Judgment] = {}
        dupes = []
        for row in self.rows:
            if row.id in first:
                dupes.append((first[row.id], row))
            else:
                first[row.id] = row
        if dupes:
            one, other = dupes[0]
            raise JudgmentError(f"{self.name}: duplicate row ids: {other.location(self.name)} repeats the id of "
                                f"{one.location(self.name)} ({len(dupes)} repeated id{'s' if len(dupes) > 1 else ''} "
                                "in all); each row needs its own id")
        if self.default_dimension not in self.dimensions:
            raise JudgmentError(f"{self.name}: default dimension {self.default_dimension!r} not in {self.dimensions}")
        if self.duplicates not in DUPLICATE_POLICIES:
            raise JudgmentError(f"{self.name}: duplicates policy {self.duplicates!r} is not one of "
                                f"{', '.join(DUPLICATE_POLICIES)}")
        if self.multi_system_separator is not None and not (isinstance(self.multi_system_separator, str)
                                                            and self.multi_system_separator):
            raise JudgmentError(f"{self.name}: multi_system_separator must be a non-empty string or None")
        if not self.default_reason:
            self.default_reason = f"it is the {self.name} set's declared default"

    def __len__(self) -> int:
        return len(self.rows)

    @property
    def has_sources(self) -> bool:
        return bool(self.rows) and all(r.source for r in self.rows)

    @property
    def max_references(self) -> int:
        return max((len(r.references) for r in self.rows), default=0)

    def human(self, dimension: str | None = None) -> np.ndarray:
        """Human scores for ``dimension`` as float64, NaN where a row has none (see :meth:`scored`)."""
        dim = dimension or self.default_dimension
        if dim not in self.dimensions:
            raise JudgmentError(f"{self.name} has no human dimension '{dim}'; it has: {', '.join(self.dimensions)}")
        prop = self.get_property(dim)
        if prop is not None and prop.categorical:
            graded = [p.name for p in self.properties if not p.categorical]
            choose = (f"choose a graded property with --human ({', '.join(graded)})" if graded
                      else "this set has no graded property")
            raise JudgmentError(
                f"{self.name}: '{dim}' is a {'pairwise' if prop.pairwise else 'categorical'} property (labels "
                f"{', '.join(prop.labels)}) without numeric human scores: its labels are compared by label "
                "statistics (meta_eval.categorical, as `meta-eval run` does), or " + choose)
        return np.array([math.nan if r.scores.get(dim) is None else float(r.scores[dim]) for r in self.rows])

    def get_property(self, name: str) -> Property | None:
        """The :class:`Property` named `name` (sets read from JUDGE-BENCH's schema), else None."""
        return next((p for p in self.properties if p.name == name), None)

    def scored(self, dimension: str | None = None) -> JudgmentSet:
        """The rows that have a human score for ``dimension`` (rows without one are left out, never imputed)."""
        keep = ~np.isnan(self.human(dimension))
        return replace(self, rows=[r for r, k in zip(self.rows, keep) if k])

    def examples(self) -> LabelledExamples:
        """The rows' examples, in row order, labelled with :meth:`row_labels` (for the runner's messages): a row with
        fields (JUDGE-BENCH) gives an :class:`~metrics.instance.Instance`, every other row a plain
        :class:`~metrics.base.Example` (:meth:`Judgment.example`)."""
        return LabelledExamples([r.example() for r in self.rows], self.row_labels())

    def row_labels(self) -> list[str]:
        """Each row's location for messages (:meth:`Judgment.location`): file and line, else set, id, document."""
        return [r.location(self.name) for r in self.rows]

    def system_group(self, system: str) -> str | None:
        """The language pair of a system of a pooled set (``"zh-en"`` for ``"zh-en:Yishu"``); None for a set that
        pools nothing. A name without one of the set's pairs before its first ``:`` is a :class:`JudgmentError`."""
        if not self.pooled_groups:
            return None
        group = system.split(":", 1)[0] if ":" in system else None
        if group not in self.pooled_groups:
            raise JudgmentError(f"{self.name} ({self.subset}): system {system!r} is not named '<pair>:<system>' with "
                                f"one of its pooled pairs {', '.join(self.pooled_groups)}")
        return group

    def documents(self) -> int:
        return len({r.doc_id for r in self.rows})

    def systems(self) -> list[str]:
        """The distinct systems, as the summary and system levels see them: a multi-system value such as chaganty's
        ``ml;ml+rl`` is split into its systems (:meth:`row_systems`; :mod:`meta_eval.units` says how such a row
        counts at each level). Without a ``multi_system_separator`` a value ``a;b`` is one system."""
        return sorted({s for r in self.rows for s in self.row_systems(r)})

    # -- (document, system) cells ---------------------------------------------------------------------------------

    def origin(self) -> str:
        """The file the rows come from (from the first row's ``where``), else the set's name."""
        where = self.rows[0].where if self.rows else None
        return where.rsplit(":", 1)[0] if where else self.name

    def describe_rows(self, indices) -> str:
        """``"f.jsonl:3 and f.jsonl:7"`` for rows read from a file, else ``"rows 'a' and 'b'"`` (by id)."""
        rows = [self.rows[i] for i in indices]
        if all(r.where for r in rows):
            return _and([r.where for r in rows])
        return "rows " + _and([repr(r.id) for r in rows])

    def rows_without_system(self) -> list[int]:
        return [i for i, r in enumerate(self.rows) if r.system is None]

    def require_systems(self, what: str = "the summary and system levels need") -> None:
        """Raise :class:`JudgmentError` if a row has no system (``what``, e.g. ``"the summary level needs"``)."""
        missing = self.rows_without_system()
        if not missing:
            return
        if len(missing) == len(self.rows):
            have = f"{self.origin()} has no 'system' field (none of its {len(self.rows)} rows has one)"
        else:
            have = (f"{self.origin()}: {len(missing)} of {len(self.rows)} rows have no 'system' (the first: "
                    f"{self.describe_rows(missing[:1])})")
        raise JudgmentError(f"{have}; {what} each row's system. Only the global level can be computed "
                            "without it; add \"system\" to every row for the others")

    def row_systems(self, row: Judgment) -> list[str]:
        """The systems a row fills a cell for: one, or several if the set declares a multi-system separator."""
        if row.system is None:
            return []
        return row.system.split(self.multi_system_separator) if self.multi_system_separator else [row.system]

    def cells(self) -> list[tuple[int, str, str]]:
        """``(row index, document, system)`` of every matrix cell the rows fill (rows without a system: none)."""
        return [(i, r.doc_id, s) for i, r in enumerate(self.rows) for s in self.row_systems(r)]

    def repeated_pairs(self) -> list[tuple[tuple[str, str], list[int]]]:
        """The (document, system) pairs held by more than one row, in order of first occurrence, with their rows."""
        holders: dict[tuple[str, str], list[int]] = {}
        for i, doc, system in self.cells():
            holders.setdefault((doc, system), []).append(i)
        return [(pair, rows) for pair, rows in holders.items() if len(rows) > 1]

    def duplicates_error(self, repeated=None) -> JudgmentError:
        """The error for repeated pairs under the ``"error"`` policy (names the rows of the first three pairs)."""
        repeated = self.repeated_pairs() if repeated is None else repeated
        parts = [f"{self.describe_rows(rows)} {'both' if len(rows) == 2 else 'all'} hold (document {doc!r}, "
                 f"system {system!r})" for (doc, system), rows in repeated[:3]]
        more = (f" ({len(repeated)} repeated pairs in all, {sum(len(r) for _, r in repeated)} rows)"
                if len(repeated) > 3 else "")
        return JudgmentError(
            "; ".join(parts) + more + ". A (document, system) pair must be one row unless you choose what "
            "repeats mean: --duplicates mean (average the repeated rows' human and metric scores into one cell at "
            "the summary and system levels) or --duplicates first (keep the first row of each pair in file order, "
            "drop the others)")

    def resolve_duplicates(self, policy: str | None = None,
                           given_by: str = "--duplicates") -> tuple[JudgmentSet, DuplicateReport]:
        """Apply a duplicates policy (default: the set's declared one) before anything is scored.

        Returns
        -------
        jset : JudgmentSet
            ``self`` with ``duplicates`` set to the policy; under ``"first"`` the later rows of every repeated
            pair are removed.
        report : DuplicateReport
            Counts, and a message to print when some pair repeats.

        Raises
        ------
        JudgmentError
            Under ``"error"`` when a pair repeats (naming the rows), or for an unknown policy.
        """
        given = f"given with {given_by}" if policy is not None else f"declared by the {self.name} set"
        policy = self.duplicates if policy is None else policy
        if policy not in DUPLICATE_POLICIES:
            raise JudgmentError(f"unknown duplicates policy {policy!r}; use one of {', '.join(DUPLICATE_POLICIES)}")
        repeated = self.repeated_pairs()
        n_rows = sum(len(rows) for _, rows in repeated)
        if not repeated:
            return replace(self, duplicates=policy), DuplicateReport(policy, given, 0, 0, 0, None)
        if policy == "error":
            raise self.duplicates_error(repeated)
        (doc, system), rows = repeated[0]
        found = (f"{len(repeated)} (document, system) pair{'s are' if len(repeated) > 1 else ' is'} held by more "
                 f"than one row ({n_rows} rows; e.g. {self.describe_rows(rows)} hold (document {doc!r}, system "
                 f"{system!r}))")
        if policy == "mean":
            msg = (f"duplicates: {found}; policy 'mean' ({given}): at the summary and system levels (and the "
                   "pairwise accuracies' global level, over cells) the human and the metric scores of each repeated "
                   "pair are averaged into one cell; the correlations' global level counts every row")
            return replace(self, duplicates="mean"), DuplicateReport(policy, given, len(repeated), n_rows, 0, msg)
        held: set[tuple[str, str]] = set()
        keep, dropped = [], []
        for i, row in enumerate(self.rows):
            pairs = [(row.doc_id, s) for s in self.row_systems(row)]
            (dropped if any(p in held for p in pairs) else keep).append(i)
            held.update(pairs)
        msg = (f"duplicates: {found}; policy 'first' ({given}): kept the first row of each pair, dropped "
               f"{len(dropped)} row{'s' if len(dropped) != 1 else ''} ({self.describe_rows(dropped[:5])}"
               f"{', ...' if len(dropped) > 5 else ''}) at every level")
        out = replace(self, rows=[self.rows[i] for i in keep], duplicates="first")
        return out, DuplicateReport(policy, given, len(repeated), n_rows, len(dropped), msg)

    def _multi_system_note(self) -> str | None:
        from meta_eval.units import multi_system_note

        return multi_system_note(self)

    def describe(self) -> dict:
        """What the set holds: rows, documents, systems, dimensions, references per row, repeats, missing values."""
        refs: dict[int, int] = {}
        for r in self.rows:
            refs[len(r.references)] = refs.get(len(r.references), 0) + 1
        repeated = self.repeated_pairs()
        no_system = self.rows_without_system()
        return {
            "name": self.name, "subset": self.subset, "origin": self.origin(), "rows": len(self.rows),
            "documents": self.documents(), "systems": len(self.systems()),
            "rows_without_system": len(no_system),
            "first_row_without_system": self.describe_rows(no_system[:1]) if no_system else None,
            "multi_system_separator": self.multi_system_separator,
            "multi_system_rows": self._multi_system_note(),
            "dimensions": {d: self._with_score(d) for d in self.dimensions},
            "default_dimension": self.default_dimension, "default_reason": self.default_reason,
            "rows_without_any_score": sum(all(r.scores.get(d) is None and r.labels.get(d) is None
                                              for d in self.dimensions) for r in self.rows),
            "references_per_row": {str(k): refs[k] for k in sorted(refs)},
            "rows_with_source": sum(bool(r.source) for r in self.rows),
            "repeated_pairs": len(repeated), "rows_in_repeated_pairs": sum(len(r) for _, r in repeated),
            "repeated_examples": [f"{self.describe_rows(rows)}: (document {doc!r}, system {system!r})"
                                  for (doc, system), rows in repeated[:3]],
            "duplicates_policy": self.duplicates, "notes": list(self.notes),
            "task": self.task, "licence": self.licence, "data_source": self.data_source,
            "annotators": self.annotators, "pooled_groups": list(self.pooled_groups),
            "default_baseline": self._default_baseline(),
        }

    def _with_score(self, dim: str) -> dict:
        """Rows with and without a human score (a label, for a categorical property) for `dim`."""
        prop = self.get_property(dim)
        if prop is not None and prop.categorical:
            n = sum(r.labels.get(dim) is not None for r in self.rows)
        else:
            n = int((~np.isnan(self.human(dim))).sum())
        return {"rows_with_score": n, "rows_without_score": len(self.rows) - n}

    def _default_baseline(self) -> str | None:
        from meta_eval.units import default_baseline

        return default_baseline(self)


def check_subset(name: str, subset: str, subsets: Sequence[str]) -> None:
    """Raise :class:`JudgmentError` unless ``subset`` is one of the set's ``subsets`` (the message lists them)."""
    if subset not in subsets:
        raise JudgmentError(f"{name} has subsets {', '.join(subsets)}, not {subset!r}")


def read_gzip_jsonl(path, fix: str) -> list[dict]:
    """All objects of a gzip JSON-lines file; a corrupt or truncated file is a :class:`JudgmentError` saying ``fix``."""
    import gzip
    import json
    import zlib

    try:
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            return [json.loads(line) for line in fh if line.strip()]
    except (OSError, EOFError, zlib.error, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise JudgmentError(f"{path} is corrupt or truncated ({type(exc).__name__}: {exc}); {fix}") from None


def make_ids_unique(rows: list[Judgment]) -> list[Judgment]:
    """Keep every row of a repeated id, renaming the 2nd, 3rd, ... occurrence ``<id>#2``, ``<id>#3`` (in file order)."""
    from dataclasses import replace

    seen: dict[str, int] = {}
    out = []
    for row in rows:
        seen[row.id] = seen.get(row.id, 0) + 1
        out.append(row if seen[row.id] == 1 else replace(row, id=f"{row.id}#{seen[row.id]}"))
    return out


# -- strict readers for the built-in loaders: every error names the file and line ----------------------------------

_KIND_NAMES = {str: "a string", bool: "true or false", list: "a list", dict: "an object", int: "an integer"}


def json_value(value, most: int = 40) -> str:
    """A value read from a JSON file as a message shows it: in JSON's words (``true``, ``false``, ``null``,
    ``"text"``, ``NaN``), as the user wrote it, not Python's (``True``, ``None``, ``'text'``); at most ``most``
    characters (a long integer: its first digits and its length).

    >>> json_value(True), json_value(None), json_value("two"), json_value(float("nan")), json_value([1, None])
    ('true', 'null', '"two"', 'NaN', '[1, null]')
    """
    import json

    if isinstance(value, int) and not isinstance(value, bool) and len(str(abs(value))) > most:
        return f"{str(value)[:12]}... ({len(str(abs(value)))} digits)"
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    return text if len(text) <= most else f"{text[:most]}... ({len(text)} characters)"


def json_type(value) -> str:
    """What a value read from a JSON file is, in JSON's words: ``null``, ``true``/``false``, ``a number``, ``a
    string``, ``a list``, ``an object`` (not Python's ``NoneType``, ``bool``, ``dict``)."""
    if value is None or isinstance(value, bool):
        return json_value(value)
    return ("a number" if isinstance(value, (int, float)) else _KIND_NAMES.get(type(value))
            or f"a {type(value).__name__}")


def get_field(obj: object, key: str, where: str, kind: type | tuple = str, *, nullable: bool = False):
    """``obj[key]``, checked to be of type ``kind`` (None allowed if ``nullable``).

    A row that is not a JSON object, a missing key or a value of another type is a :class:`JudgmentError` that
    starts with ``where`` (``"<file>:<line>"``). ``bool`` is not accepted where ``int`` is asked for.
    """
    if not isinstance(obj, dict):
        raise JudgmentError(f"{where}: expected a JSON object, got {json_type(obj)}")
    if key not in obj:
        raise JudgmentError(f"{where}: missing field {key!r}")
    value = obj[key]
    if value is None and nullable:
        return None
    if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
        kinds = kind if isinstance(kind, tuple) else (kind,)
        names = " or ".join(_KIND_NAMES.get(k, k.__name__) for k in kinds)
        raise JudgmentError(f"{where}: field {key!r} must be {names}{' or null' if nullable else ''}, got "
                            f"{json_type(value)}")
    return value


def get_number(value: object, where: str, name: str) -> float:
    """``value`` as a finite float; anything else (null, a string, true/false, NaN) is a :class:`JudgmentError`."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise JudgmentError(f"{where}: {name} must be a finite number, got {json_value(value)}")
    return float(value)


def check_unique_ids(rows: list[Judgment], what: str) -> None:
    """Raise a :class:`JudgmentError` naming the lines of the first repeated row id (``what``: the id's meaning)."""
    first: dict[str, Judgment] = {}
    for row in rows:
        if row.id in first:
            raise JudgmentError(f"{first[row.id].where} and {row.where} both hold {what} {row.id!r}: each must be "
                                "one row (a repeat means the file was converted or edited wrongly)")
        first[row.id] = row
