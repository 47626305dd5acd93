"""``meta-eval probe`` as a library call: :func:`probe` runs the BLINDSPOT protocol on a judgment set.

The protocol (He et al. 2023, "On the Blind Spots of Model-Based Evaluation Metrics for Text Generation", ACL; the SMS
paper's Table 1, Clark et al. 2019, is one such probe): take a text a person wrote, score it as the candidate, then
score a controlled perturbation of it the same way; the *change* is ``perturbed - original`` in the metric's
orientation (a lower-is-better metric such as TER is negated first, :attr:`MetricScores.higher_is_better`). A metric
*detects* an error when its score drops (:mod:`meta_eval.probe.stats`); for an invariance (a change it should not
punish) a drop is a *false alarm*.

Choices (each an argument, recorded in the probe's signature):

- **Items.** A set with references probes its references, not the system outputs: rows sharing a document's
  reference collapse to one item (SummEval's 1,600 rows hold 100 documents x 11 references). ``references`` is how
  many distinct references of each document become items: 1 (the default: the first reference, the one every row of
  the document lists first), N (up to N), or ``"all"``. A set without references (QAGS), or whose rows all share
  one reference (ASAP essays, graded against one reference essay: its references would make a single item), probes
  its candidates, one item per distinct (document, candidate): ``text`` (:func:`probed_text`) chooses. Items are sorted by their key (document, then text), so neither the rows'
  order nor the other items change an item's perturbation (:func:`~meta_eval.probe.perturbations.perturbation_rng`
  of the seed, the perturbation and the item's key) or the bootstrap.
- **Against.** ``"self"`` (the default where the set has references): the original text is the reference, so the
  original score is the metric's score of a text against itself; ``"source"`` (the default where it has none): the
  source document is the reference (as the SMS paper's Table 1 scores a summary against the article's first lines).
  Either way a source-based metric reads the row's source.
- **Skips.** A perturbation that cannot apply to an item (:meth:`Perturbation.apply` returns None: one sentence to
  reverse, no number to change) skips that item, counted per perturbation; it is never scored, never "not detected".
- **Reference swap** (``reference-swap``, an invariance at row level, for sets whose rows have two or more distinct
  references, e.g. an MT set with refA and refB): the item is a (document, system output); the original is the
  output scored against the row's first reference, the perturbed one the same output scored against its second
  reference. Both references are correct translations, so a metric that rates the output worse against the second
  one raises a false alarm (reference bias, Freitag et al. 2020, "BLEU might be Guilty but References are not
  Innocent"). Which reference comes first is the set's order (WMT's standard reference first), so rises are reported
  beside the drops: drops + rises is the share of outputs whose score depends on the reference chosen. It needs
  ``against="self"`` (against the source there is no reference to swap). It is in the default choice for MT sets
  only: two summaries of one article may rightly choose different content, so there it runs only when named (on
  SummEval, 11 references per row, most outputs score lower against the second reference than the first). No
  built-in MT set has two references per row today (wmt21-mqm-ted's second human translation is rated as a system,
  not a reference), and a JSONL set declares no task, so today it runs where it is named (``--perturbations
  reference-swap`` on a set whose rows give two references).
- **Variants.** Chosen as on every command (:func:`meta_eval.scoring.selection.resolve_metric_choice`): by default
  every variant of the chosen metrics but ROUGE's precision and recall
  (:data:`meta_eval.scoring.selection.DEFAULT_RULE`, the leaderboards' default too); ``variants="all"`` keeps them,
  ``variants="rouge1-f,chrf"`` (names, families, patterns) or a variant in ``metrics`` (``"rouge1-f"``) narrows.

Everything is scored in one :func:`meta_eval.scoring.runner.score_all` call over the original and perturbed examples
(the score cache, batches, engines, progress bars): neural metrics are cached, a killed run resumes, and a metric
that cannot run here is skipped with the reason, as in ``meta-eval run``.
"""
from __future__ import annotations

import hashlib
import json
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping, Sequence

import numpy as np

from meta_eval.errors import MetaEvalError
from meta_eval.probe.perturbations import FAMILIES, PERTURBATIONS, Perturbation

__all__ = ["AGAINST", "PROBE_VERSION", "REFERENCE_SWAP", "TEXTS", "ProbeItem", "ProbeResult", "items_of", "probe",
           "probed_text", "sample_items", "select_perturbations"]

PROBE_VERSION = 2  # 2: items a metric does not measure (its documented value) counted apart, not as ties
AGAINST = ("self", "source")
TEXTS = ("auto", "reference", "candidate")
Say = Callable[[str, str], None]


def _not_a_text_perturbation(text: str, rng) -> None:
    return None  # reference-swap changes the reference, not the text: the runner builds its examples


#: the row-level invariance of the runner (not in the registry: it swaps references, it does not rewrite a text)
REFERENCE_SWAP = Perturbation(
    "reference-swap", "invariance", _not_a_text_perturbation,
    citation="Freitag, Grangier & Caswell (2020), BLEU might be Guilty but References are not Innocent (EMNLP); "
             "Karpinska et al. (2022), DEMETR (EMNLP)",
    description="a system output scored against its second reference instead of its first")


@dataclass(frozen=True)
class ProbeItem:
    """One probed text: ``key`` (stable: document and text), ``text`` (perturbed), ``references`` and ``source``
    (what it is scored against), ``label`` (for messages); for a reference swap, ``swap`` is the second reference."""

    key: str
    text: str
    references: tuple[str, ...]
    source: str | None
    label: str
    swap: str | None = None


def _quiet(channel: str, text: str) -> None:
    return None


def _distinct(refs: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(r for r in refs if r.strip()))


def probed_text(jset, text: str = "auto") -> str:
    """Which texts of ``jset`` are probed: ``"reference"`` or ``"candidate"``.

    ``auto``: the references where the set has at least two distinct ones, else the candidates: a set whose rows all
    share one reference (ASAP essays against one reference essay) would give a single item, so its human-written
    candidates are probed instead, as in a set without references (QAGS).
    """
    if text not in TEXTS:
        raise MetaEvalError(f"--text must be one of {', '.join(TEXTS)}, not {text!r}")
    if text != "auto":
        if text == "reference" and jset.max_references == 0:
            raise MetaEvalError(f"--text reference: {jset.name} ({jset.subset}) has no references")
        return text
    distinct = {r for row in jset.rows for r in _distinct(row.references)}
    return "reference" if len(distinct) >= 2 else "candidate"


def items_of(jset, against: str, references: int | None = 1, text: str = "reference") -> list[ProbeItem]:
    """The probe's text items of ``jset`` (see the module: references collapsed per document, or candidates), sorted
    by key. ``references``: distinct references per document (None: all); ``text``: ``reference`` or
    ``candidate`` (:func:`probed_text`)."""
    items: dict[str, ProbeItem] = {}
    if text == "reference":
        place: dict[str, dict[str, int]] = {}  # document -> reference -> first position in any row's list
        sources: dict[str, str | None] = {}
        for row in jset.rows:
            seen = place.setdefault(row.doc_id, {})
            for k, ref in enumerate(_distinct(row.references)):
                seen[ref] = min(k, seen.get(ref, k))
            if row.source and row.doc_id not in sources:
                sources[row.doc_id] = row.source
        for doc, refs in place.items():
            ordered = sorted(refs, key=lambda r: (refs[r], r))
            for k, ref in enumerate(ordered[:references]):
                key = f"{doc}\x1f{ref}"
                source = sources.get(doc)
                items[key] = ProbeItem(key, ref, (ref,) if against == "self" else (source,), source,
                                       f"{jset.name} document {doc!r}, reference {k + 1}")
    else:
        for row in jset.rows:
            key = f"{row.doc_id}\x1f{row.candidate}"
            if key not in items and row.candidate.strip():
                items[key] = ProbeItem(key, row.candidate, (row.candidate,) if against == "self" else (row.source,),
                                       row.source, f"{jset.name} document {row.doc_id!r}, candidate of system "
                                                   f"{row.system!r}")
    return [items[k] for k in sorted(items)]


def sample_items(items: Sequence[ProbeItem], max_items: int | None, seed: int) -> list[ProbeItem]:
    """``items`` (sorted by key), or a sample of ``max_items`` of them drawn without replacement by a generator of
    ``seed`` alone, kept in key order: the same seed and set give the same sample whatever the rows' order.

    Examples
    --------
    >>> its = [ProbeItem(str(k), "t", ("t",), None, "") for k in range(10)]
    >>> a, b = sample_items(its, 3, 0), sample_items(its, 3, 0)
    >>> [i.key for i in a] == [i.key for i in b] == sorted(i.key for i in a)
    True
    >>> len(sample_items(its, 20, 0))
    10
    """
    if max_items is None or len(items) <= max_items:
        return list(items)
    from meta_eval.probe.perturbations import perturbation_rng

    chosen = perturbation_rng(seed, "\x00items", str(len(items))).choice(len(items), size=max_items, replace=False)
    return [items[i] for i in sorted(chosen)]


def swap_items(jset) -> list[ProbeItem]:
    """The reference-swap items: one per distinct non-empty (document, candidate), its ``swap`` the second distinct
    reference of its first row, or None where that row has fewer than two (the item is then counted as skipped,
    as a text perturbation counts an item it cannot apply to; it was once left out uncounted: audit, session 38)."""
    items: dict[str, ProbeItem] = {}
    for row in jset.rows:
        refs = _distinct(row.references)
        key = f"{row.doc_id}\x1f{row.candidate}"
        if key not in items and row.candidate.strip():
            items[key] = ProbeItem(key, row.candidate, tuple(refs[:1]), row.source,
                                   f"{jset.name} row {row.id!r} (document {row.doc_id!r}, system {row.system!r})",
                                   swap=refs[1] if len(refs) >= 2 else None)
    return [items[k] for k in sorted(items)]


def select_perturbations(spec: str | Sequence[str] | None, *, swap_possible: bool = True,
                         swap_default: bool = True) -> list[Perturbation]:
    """The perturbations named by ``spec``: names and family names (``fluency``, ``order``, ``content``,
    ``invariance``), comma-separated or a list; None or ``all``: every registered one, and ``reference-swap`` where
    ``swap_default`` (an MT set whose rows have two references); named, ``reference-swap`` runs wherever
    ``swap_possible`` (rows with two references). An unknown name raises :class:`MetaEvalError` listing the known
    ones, and so does a ``spec`` that names none (``""``, ``" , "``)."""
    known = {**PERTURBATIONS, REFERENCE_SWAP.name: REFERENCE_SWAP}
    swap_named, swap_possible = swap_possible, swap_possible and swap_default
    words = [w.strip() for w in (spec.split(",") if isinstance(spec, str) else spec or ()) if w.strip()]
    if spec is not None and not words:  # -p '' is not every perturbation, as -m '' is not every metric
        raise MetaEvalError(f"--perturbations is empty: name perturbations ({', '.join(known)}), families "
                            f"({', '.join(FAMILIES)}) or 'all'")
    if not words or words == ["all"]:
        words = list(FAMILIES)
        named = set()
    else:
        named = {w for w in words if w in known}
    chosen: dict[str, Perturbation] = {}
    for word in words:
        if word in known:
            chosen[word] = known[word]
        elif word in FAMILIES:
            chosen.update((p.name, p) for p in known.values() if p.family == word
                          and (p is not REFERENCE_SWAP or swap_possible))
        elif word == "all":
            chosen.update((p.name, p) for p in known.values() if p is not REFERENCE_SWAP or swap_possible)
        else:
            from difflib import get_close_matches

            close = get_close_matches(word, list(known) + list(FAMILIES), n=3, cutoff=0.6)
            raise MetaEvalError(f"unknown perturbation {word!r}" + (f" (did you mean {', '.join(close)}?)" if close
                                                                     else "")
                                + f"; perturbations: {', '.join(known)}; families: {', '.join(FAMILIES)}")
    if REFERENCE_SWAP.name in named and not swap_named:
        raise MetaEvalError("reference-swap needs rows with two distinct references and --against self")
    if not chosen:
        raise MetaEvalError(f"no perturbation in {spec!r}")
    return list(chosen.values())


def _resolve_references(references) -> int | None:
    if references in (None, "all"):
        return None
    try:
        n = int(str(references).strip())
    except ValueError:
        n = 0
    if n < 1:
        raise MetaEvalError(f"--references must be a positive integer or 'all', not {references!r}")
    return n


@dataclass
class ProbeResult:
    """What :func:`probe` returns: the settings, the perturbations with their counts, one cell per (variant,
    perturbation) (:func:`meta_eval.probe.stats.summarize` plus ``variant``, ``metric``, ``perturbation``,
    ``family``, ``expect``, ``skipped``, ``false_alarm``), the McNemar tests between variants, the metrics' signatures
    and the metrics skipped or failed."""

    judgments: str
    subset: str
    against: str
    references: int | None
    seed: int
    tolerance: float
    resamples: int
    confidence: float
    perturbations: list[dict]
    metrics: list[dict]
    cells: list[dict]
    tests: list[dict]
    skipped: list[tuple[str, str]] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    not_run: list[tuple[str, str]] = field(default_factory=list)
    n_items: int = 0
    text: str = "reference"
    n_candidates: int = 0
    """Items the set offers (``n_items`` of them were probed: fewer under ``max_items``)."""
    wall_seconds: float = 0.0
    unavailable: list[tuple[str, str]] = field(default_factory=list)
    variants: dict | None = None
    """Which variants were probed (:meth:`meta_eval.scoring.selection.VariantChoice.as_dict`)."""
    """(perturbation, reason): perturbations chosen but not run because an extra they need is missing."""
    changes: dict = field(default_factory=dict, repr=False)
    """(variant, perturbation) -> (item keys, oriented changes, oriented original scores): the per-item numbers
    behind each cell (the items it measured: not those counted as ``not_measured``)."""
    rows: dict | None = None
    """A quick trial's rows (``--limit``/``--sample``; :meth:`judgments.rows.RowChoice.as_dict`), else None."""
    provenance: dict | None = None
    """The command line, meta-eval's version, the files read (:func:`meta_eval.provenance.record`)."""

    @property
    def signature(self) -> str:
        """The probe's signature (as sacrebleu prints one): every setting its numbers depend on."""
        from meta_eval.metrics.base import package_version

        perts = ",".join(p["signature"] for p in self.perturbations)
        refs = "all" if self.references is None else self.references
        return (f"probe:{PROBE_VERSION}|set:{self.judgments}/{self.subset}|text:{self.text}|against:{self.against}|"
                f"refs:{refs}|{self._items_part()}"
                f"seed:{self.seed}|tol:{self.tolerance:g}|boot:{self.resamples}|conf:{self.confidence:g}|"
                f"perturbations:{perts}|meta-eval:{package_version('meta-eval')}")

    def _items_part(self) -> str:
        """``rows:`` a quick trial's rows (``--limit``/``--sample``, whose items are those of the rows kept), then
        ``items:`` the items probed of those offered, where fewer (``--max-items``)."""
        rows = ""
        if self.rows:
            chosen = f"first-{self.rows['limit']}" if self.rows.get("limit") is not None else \
                f"sample-{self.rows['sample']}-seed-{self.rows['seed']}"
            rows = f"rows:{chosen}-of-{self.rows['of']}|"
        if self.n_candidates > self.n_items:
            return f"{rows}items:{self.n_items}-of-{self.n_candidates}|"
        return rows

    def cell(self, variant: str, perturbation: str) -> dict:
        """The cell of ``variant`` under ``perturbation`` (KeyError if it was not probed)."""
        for c in self.cells:
            if c["variant"] == variant and c["perturbation"] == perturbation:
                return c
        raise KeyError((variant, perturbation))

    def rates(self) -> dict[str, dict[str, float | None]]:
        """``{perturbation: {variant: detection (or false-alarm) rate}}``."""
        out: dict[str, dict] = {}
        for c in self.cells:
            out.setdefault(c["perturbation"], {})[c["variant"]] = c["rate"]
        return out

    def to_dict(self, changes: bool = True) -> dict:
        """Every number as JSON-ready data; ``changes=False`` leaves out the per-item changes."""
        doc = {"probe": self.signature, "judgments": self.judgments, "subset": self.subset,
               "settings": {"text": self.text, "against": self.against, "references": "all" if self.references is None
                            else self.references, "seed": self.seed, "tolerance": self.tolerance,
                            "tolerance_kind": "relative to the item's original score, plus an absolute 1e-9",
                            "resamples": self.resamples, "confidence": self.confidence,
                            "ci_method": "percentile bootstrap over items",
                            "test": "exact McNemar on detection indicators (two-sided binomial test)"},
               "n_items": self.n_items, "n_items_in_set": max(self.n_candidates, self.n_items),
               "perturbations": self.perturbations, "metrics": self.metrics,
               "cells": self.cells, "tests": self.tests,
               "skipped": [{"metric": n, "reason": r} for n, r in self.skipped],
               "failed": [{"metric": n, "reason": r} for n, r in self.failed],
               "perturbations_not_run": [{"perturbation": n, "reason": r} for n, r in self.unavailable],
               "variants": self.variants,
               **({"rows": self.rows} if self.rows is not None else {}),
               **({"provenance": self.provenance} if self.provenance is not None else {}),
               "wall_seconds": round(self.wall_seconds, 3)}
        if changes:  # with each item's original score, from which the tie threshold of --tolerance follows
            doc["changes"] = [{"variant": v, "perturbation": p, "items": list(keys),
                               "change": [float(x) for x in values], "original": [float(x) for x in original]}
                              for (v, p), (keys, values, original) in self.changes.items()]
        return doc

    def to_json(self, changes: bool = True) -> str:
        """:meth:`to_dict` as a JSON string (the same text for the same seed and inputs)."""
        return json.dumps(self.to_dict(changes), indent=2)

    def plot(self, path: str | Path, *, force: bool = False) -> Path:
        """Write the heatmap of detection rates (:func:`meta_eval.probe.report.heatmap`) to ``path``, atomically,
        through the checks of the command line's ``--plot``: an existing file meta-eval did not write is replaced
        only with ``force=True``, the judgment data folder and the score cache never (each, and a folder where it
        cannot be written, an :class:`~meta_eval.report.outputs.OutputError`)."""
        from meta_eval.probe.report import heatmap
        from meta_eval.report.figures import save_figure
        from meta_eval.report.outputs import OutputPlan, as_path

        path = as_path(path, "plot()'s path")  # an OutputError for None or 42, not pathlib's TypeError
        if path is None:
            raise MetaEvalError("plot() needs the path of the figure to write (.png, .svg or .pdf)")
        OutputPlan(force=force, judgments=self.judgments).add(path, "plot()'s path")
        return save_figure(heatmap(self.to_dict(changes=False)), path)


def probe(judgments: str, metrics: str | Sequence[str] | None = None, *,
          perturbations: str | Sequence[str] | None = None, seed: int = 0, against: str | None = None,
          text: str = "auto", max_items: int | None = None,
          tolerance: float = 0.0, resamples: int = 1000, confidence: float = 0.95, references: int | str = 1,
          variants: str | Sequence[str] | None = None, subset: str | None = None,
          options: Mapping[str, object] | Sequence[str] | None = None, data_dir: str | Path | None = None,
          cache: str | Path | None = None, no_cache: bool = False, batch_size: int = 256, engine="local",
          workers: int | None = None, address: str | None = None, actors: int | None = None,
          gpus_per_actor: float = 0.0,
          output: str | Path | None = None, plot: str | Path | None = None, force: bool = False,
          progress: bool = True, say: Say | None = None, plugins: Sequence[str | Path] = (), limit: int | None = None,
          sample: int | None = None) -> ProbeResult:
    """Probe metrics with controlled perturbations on a judgment set: ``meta-eval probe`` as a function.

    Parameters
    ----------
    judgments, subset, data_dir
        The set (a built-in name or a ``.jsonl`` file), its subset and where its data are.
    metrics : str or list of str, optional
        As ``meta-eval run`` (default: the metrics that take seconds on a CPU; ``"all"``: every metric).
    perturbations : str or list of str, optional
        Names and families (``"sentence-reversal,invariance"``); default: all (see :func:`select_perturbations`).
    seed : int
        Seeds every perturbation (per item) and the bootstrap.
    text : {"auto", "reference", "candidate"}
        Which texts are perturbed (:func:`probed_text`; default: the references, or the candidates where the set
        has fewer than two distinct references).
    max_items : int, optional
        Probe a seeded sample of this many items (:func:`sample_items`; default: every item).
    limit, sample : int, optional
        A quick trial (``--limit N``, ``--sample N``): the set's first N rows, or N rows drawn with ``seed``
        (:mod:`judgments.rows`), before the items are formed; recorded as the JSON's ``"rows"``.
    against : {"self", "source"}, optional
        What the text is scored against (default: ``self`` where the set has references, else ``source``).
    tolerance : float
        Relative tie tolerance (:mod:`meta_eval.probe.stats`).
    resamples, confidence
        The percentile bootstrap over items.
    references : int or "all"
        Distinct references per document probed (default 1: the first).
    variants : str or list of str, optional
        As ``meta-eval run --variants``: names, families (``rouge1``), patterns (``rouge*-f``) or ``"all"``;
        None: every variant but ROUGE's precision and recall. A variant in ``metrics`` chooses its metric.
    options, cache, no_cache, batch_size, engine, workers, address, actors, gpus_per_actor, plugins
        As ``meta-eval run``.
    output, plot, force
        Also write the JSON (``.json``) and the heatmap (``.png``, ``.svg``, ``.pdf``), both checked before any work
        by one :class:`~meta_eval.report.outputs.OutputPlan` (never an input nor the data folder, even with
        ``force``; a file meta-eval did not write only with ``force``; not both on one path).
    progress, say
        Progress bars on stderr; ``say(channel, text)`` receives the status lines (as :func:`meta_eval.task.run`).

    Returns
    -------
    ProbeResult

    Raises
    ------
    meta_eval.errors.MetaEvalError
        A bad choice (code 2) or no metric able to run (code 2; 1 if every chosen metric failed).
    """
    from meta_eval import judgments as judgment_sets
    from meta_eval.report.outputs import OutputPlan, as_path
    from meta_eval.scoring import selection
    from meta_eval.task import check_judgments_argument
    from meta_eval.scoring.engines import engine_for

    say = say or _quiet
    started = time.perf_counter()
    check_judgments_argument(judgments)
    from meta_eval.judgments.rows import check_choice, check_resamples, select_rows

    check_choice(limit, sample, seed)
    option_list = selection.option_list(options)
    selection.refuse_set_template(metrics, option_list, "probe", "a perturbation changes the candidate, but the "
                                  "set's prompt is filled from the instance's own fields, which it leaves as they "
                                  "were")
    output, plot = as_path(output, "--output"), as_path(plot, "--plot")
    if against not in (None, *AGAINST):
        raise MetaEvalError(f"--against must be self or source, not {against!r}")
    if not (isinstance(tolerance, (int, float)) and tolerance >= 0):
        raise MetaEvalError(f"--tolerance must be a number >= 0, not {tolerance!r}")
    if not 0 < confidence < 1:
        raise MetaEvalError(f"the confidence must be in (0, 1), not {confidence!r}")
    check_resamples(resamples)
    selection.parse_variants(variants)  # an empty choice fails before any loading
    n_refs = _resolve_references(references)
    if max_items is not None and (isinstance(max_items, bool) or not isinstance(max_items, int) or max_items < 1):
        raise MetaEvalError(f"--max-items must be a positive integer, not {max_items!r}")
    select_perturbations(perturbations)  # an unknown name fails before any loading
    if plot is not None:
        from meta_eval.report.figures import figure_request

        figure_request(plot)  # the suffix, matplotlib
    # every output at once (one OutputPlan), before any loading: never an input, the data folder, a user's file
    # without --force, nor both on one path
    outputs = OutputPlan(force=force, judgments=judgments, data_dir=data_dir, cache=cache, no_cache=no_cache,
                         options=option_list, plugins=plugins, metrics=metrics)
    output, plot = outputs.add(output, "--output"), outputs.add(plot, "--plot")
    from meta_eval.report.outputs import check_format

    check_format(output, "--output", (".json",))  # JSON whatever the suffix said (res.csv held JSON)
    selection.load_plugins(plugins)
    try:
        jset = judgment_sets.load(judgments, data_dir, subset=subset)
    except (judgment_sets.JudgmentError, judgment_sets.DataError, ValueError) as exc:
        raise MetaEvalError(str(exc)) from None
    jset, row_choice = select_rows(jset, limit, sample, seed)  # --limit/--sample
    if row_choice is not None:
        say("err", f"{jset.name} ({jset.subset}): {row_choice.line()}")
    text = probed_text(jset, text)
    against = against or ("self" if jset.max_references > 0 or not jset.has_sources else "source")
    if against == "source" and not jset.has_sources:
        raise MetaEvalError(f"--against source: {jset.name} ({jset.subset}) has no source documents (use --against "
                            "self)")
    swap = swap_items(jset) if against == "self" else []
    chosen_perturbations = select_perturbations(perturbations, swap_possible=any(it.swap for it in swap),
                                                swap_default=jset.task == "MT")
    with engine_for(engine, workers, address, actors, gpus_per_actor) as scoring:
        result = _probe(jset, metrics, chosen_perturbations, swap, seed=seed, against=against, tolerance=tolerance,
                        resamples=int(resamples), confidence=confidence, references=n_refs, text=text,
                        max_items=max_items,
                        variants=variants,
                        options=option_list, cache=cache, no_cache=no_cache, batch_size=batch_size, engine=scoring,
                        progress=progress, say=say, data_dir=data_dir)
    named = {w.strip() for w in (perturbations.split(",") if isinstance(perturbations, str) else perturbations or ())}
    result.not_run += [(f"perturbation {n}", r) for n, r in result.unavailable if n in named]
    from meta_eval.provenance import record

    result.rows = row_choice.as_dict() if row_choice is not None else None
    result.provenance = record(outputs, judgments)
    result.wall_seconds = time.perf_counter() - started
    if output is not None:
        from meta_eval.report.outputs import write_json

        write_json(output, result.to_dict())
    if plot is not None:
        result.plot(plot, force=force)  # checked above with the other outputs
    return result


def _probe(jset, metrics, perturbations, swap, *, seed, against, tolerance, resamples, confidence, references,
           text, max_items, variants, options, cache, no_cache, batch_size, engine, progress, say,
           data_dir=None) -> ProbeResult:
    from meta_eval.judgments.base import LabelledExamples
    from meta_eval.metrics.base import Example
    from meta_eval.probe import stats
    from meta_eval.probe.perturbations import MissingExtraError, perturbation_rng
    from meta_eval.scoring.cache import open_cache
    from meta_eval.scoring.runner import score_all
    from meta_eval.scoring.selection import (available_variants, choose_metrics, group_skips, named_skips,
                                             parse_options, requested_names, resolve_metric_choice)

    all_items = items_of(jset, against, references, text)
    if not all_items:  # a probe of nothing is no result: say so, exit 2 (it once printed empty tables, exit 0)
        raise MetaEvalError(f"nothing to probe: {jset.name} ({jset.subset}) has no non-empty {text} to perturb "
                            f"(--text {text}); give a set with texts, or another --text")
    items = sample_items(all_items, max_items, seed)
    swap = sample_items(swap, max_items, seed)  # --max-items bounds the reference-swap control's items too
    examples, labels = [], []

    def add(text: str, item: ProbeItem, what: str, refs=None) -> int:
        examples.append(Example(text, tuple(refs or item.references), item.source))
        labels.append(f"{item.label} ({what})")
        return len(examples) - 1

    original = [add(item.text, item, "original") for item in items]
    plan = []  # (perturbation, [(item key, original index, perturbed index)], skipped)
    unavailable: list[tuple[str, str]] = []  # (perturbation, why it cannot run here)
    for p in perturbations:
        if p is REFERENCE_SWAP:
            pairs = [(it.key, add(it.text, it, "first reference"), add(it.text, it, "second reference", (it.swap,)))
                     for it in swap if it.swap is not None]
            plan.append((p, pairs, len(swap) - len(pairs)))
            continue
        if not p.written_for(jset.language):
            unavailable.append((p.name, f"its rules are written for {', '.join(p.languages)} text and "
                                        f"{jset.name} ({jset.subset})'s texts are {jset.language}"))
            say("err-skipped", f"perturbation {p.name}: {unavailable[-1][1]}")
            continue
        pairs, skipped, mark = [], 0, len(examples)
        try:
            for item, o in zip(items, original):
                changed = p.apply(item.text, perturbation_rng(seed, p.name, item.key))
                if changed is None:
                    skipped += 1
                else:
                    pairs.append((item.key, o, add(changed, item, p.name)))
        except MissingExtraError as exc:  # e.g. entity-swap without spaCy: the perturbation is not run at all
            del examples[mark:], labels[mark:]
            unavailable.append((p.name, str(exc)))
            say("err-skipped", f"perturbation {p.name}: {exc}")
            continue
        plan.append((p, pairs, skipped))
    if not plan:
        raise MetaEvalError("no perturbation could run: " + "; ".join(f"{n}: {r}" for n, r in unavailable))
    requested, shown = resolve_metric_choice(requested_names(metrics), variants)
    chosen, skipped_metrics = choose_metrics(requested, parse_options(options), what=jset.name,
                                             has_sources=jset.has_sources, has_references=True,
                                             language=jset.language)
    shown.check(available_variants(chosen, skipped_metrics))
    chosen = shown.narrow(chosen, skipped_metrics, requested)
    from meta_eval.report.outputs import check_stores

    check_stores(chosen, data_dir=data_dir, cache=cache, no_cache=no_cache)  # the answer store: before any request
    for names, reason in group_skips(skipped_metrics):
        say("err-skipped", f"{', '.join(names)}: {reason}")
    applied = sum(len(pairs) for _, pairs, _ in plan)
    say("err", f"{jset.name} ({jset.subset}): {len(items)} items (against {against}), {len(perturbations)} "
               f"perturbations, {applied} perturbed texts; {len(examples)} examples per metric")
    done = score_all(chosen, LabelledExamples(examples, labels), open_cache(cache, no_cache), batch_size,
                     engine=engine, progress=progress)
    if not done.scored:
        raise MetaEvalError("no metric could run: " + "; ".join([f"{n}: {r}" for n, r in skipped_metrics]
                                                                + [f"{n}: failed: {r}" for n, r in done.failed]),
                            code=1 if done.failed else 2)
    columns = [(ms, v) for ms in shown.apply(done.scored) for v in ms.scores]
    cells, tests, changes, pert_docs = [], [], {}, []
    for p, pairs, skipped in plan:
        n_items = len(swap) if p is REFERENCE_SWAP else len(items)
        pert_docs.append({"name": p.name, "family": p.family, "expect": p.expect, "version": p.version,
                          "signature": p.signature(), "citation": p.citation, "description": p.description,
                          "needs": p.needs, "n_items": n_items, "n_applied": len(pairs), "n_skipped": skipped})
        keys = [k for k, _, _ in pairs]
        o_idx = np.array([o for _, o, _ in pairs], dtype=np.int64)
        p_idx = np.array([q for _, _, q in pairs], dtype=np.int64)
        boot = stats.bootstrap_indices(len(pairs), resamples, perturbation_rng(seed, p.name, "\x00bootstrap"))
        detected, measured, unmeasured = {}, {}, {}
        for ms, v in columns:
            oriented = ms.scores[v] if ms.higher_is_better else -ms.scores[v]
            # an item whose original or perturbed score is the metric's documented value (metrics.base.Metric.
            # degenerate: no known word, an empty text) measures nothing: counted apart, never a tie or a drop;
            # the reasons are the metric's, so they are read once for all its variants
            if ms.metric not in unmeasured:
                why = done.degenerate.get(ms.metric) or [None] * len(examples)
                good = np.array([why[o] is None and why[q] is None for _, o, q in pairs], dtype=bool)
                unmeasured[ms.metric] = good, Counter(why[o] or why[q] for (_, o, q), g in zip(pairs, good) if not g)
            ok, reasons = unmeasured[ms.metric]
            change = oriented[p_idx] - oriented[o_idx]
            threshold = stats.thresholds(oriented[o_idx], tolerance)
            indices = boot if ok.all() else stats.bootstrap_indices(
                int(ok.sum()), resamples, perturbation_rng(seed, p.name, "\x00bootstrap"))
            summary = stats.summarize(change[ok], threshold[ok], resamples=resamples, confidence=confidence,
                                      indices=indices)
            cells.append({"variant": v, "metric": ms.metric, "perturbation": p.name, "family": p.family,
                          "expect": p.expect, "false_alarm": p.expect == "same", "skipped": skipped, **summary,
                          "not_measured": int((~ok).sum()), "not_measured_reasons": dict(sorted(reasons.items()))})
            changes[(v, p.name)] = ([k for k, good in zip(keys, ok) if good], change[ok], oriented[o_idx][ok])
            detected[v] = stats.outcomes(change, threshold) == -1
            measured[v] = ok
        names = list(detected)
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                both = measured[a] & measured[b]  # McNemar pairs the items both variants measured
                if both.any():
                    tests.append({"perturbation": p.name, "a": a, "b": b,
                                  **stats.mcnemar(detected[a][both], detected[b][both])})
    metric_docs = [{"variant": v, "metric": ms.metric, "signature": ms.signature,
                    "higher_is_better": ms.higher_is_better} for ms, v in columns]
    return ProbeResult(judgments=jset.name, subset=jset.subset, against=against, references=references, seed=seed,
                       tolerance=float(tolerance), resamples=resamples, confidence=confidence,
                       perturbations=pert_docs, metrics=metric_docs, cells=cells, tests=tests,
                       skipped=skipped_metrics, failed=done.failed, not_run=named_skips(skipped_metrics, requested),
                       n_items=len(items), text=text, changes=changes, n_candidates=len(all_items), unavailable=unavailable,
                       variants=shown.as_dict(done.scored))  # noqa: E501 (the line above is main's)


def digest(result: ProbeResult) -> str:
    """SHA-256 of the result's JSON without its wall time: equal for equal inputs, seeds and code."""
    doc = result.to_dict()
    doc.pop("wall_seconds", None)
    doc.pop("provenance", None)
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode("utf-8")).hexdigest()
