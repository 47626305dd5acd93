"""WMT23 general-MT human scores (DA+SQM, 0-100) of en-de and zh-en translations: the general task's human evaluation.

File: ``wmt23/wmt23_da_sqm.jsonl.gz`` (see ``shared/judgments/wmt23/PROVENANCE.md``), converted from the folder
``data/wmt-23/original_data/`` of GitHub ``dmg-illc/JUDGE-BENCH`` (commit 5a0bf50; Bavaresco et al., "LLMs instead of
Human Judges?", ACL 2025), a copy of google-research/mt-metrics-eval's WMT23 data (Apache-2.0, the folder's
``LICENSE``) by :mod:`judgments.convert.wmt23`. One row per (language pair, segment, system) with a score, 21,281
rows. en-de: 549 rated segments (of 557) x (12 MT systems + the human reference ``refA``); zh-en: 884 rated segments
(of 1,976) x (15 MT + ``refA``). Cite Kocmi et al., "Findings of the 2023 Conference on Machine Translation (WMT23)"
and Freitag et al., "Results of WMT23 Metrics Shared Task" (WMT 2023).

Human score ``da_sqm`` (the only dimension, so the default): 0..100, **higher is better**, one value per item (values
such as 99.33 show that some items are a mean over several ratings; no per-rater value is published, so there is no
human ceiling). Which WMT23 score it is, checked against google-research/mt-metrics-eval ``mt_metrics_eval/
meta_info.py`` (mirror at commit 68a481a):

- ``meta_info.WMT23_DA = MetaInfo('refA', {'sys': 'da-sqm', 'domain': 'da-sqm', 'seg': 'da-sqm'}, ...)``:
  mt-metrics-eval names the DA+SQM gold ``da-sqm`` (source-based Direct Assessment with Scalar Quality Metric,
  0-100, the human evaluation of the WMT23 general task, Kocmi et al. 2023), hence the dimension name ``da_sqm``.
  It is not MQM (MQM is minus a weighted error count, 0 best), whose scale these scores do not have.
- For **en-de and zh-en** the metrics task's *standard* gold is **MQM**, not DA+SQM, at the system and the segment
  level: ``meta_info.DATA['wmt23']['en-de']`` and ``['zh-en']`` are ``meta_info.WMT23 = MetaInfo('refA', {'sys':
  'mqm', 'domain': 'mqm', 'seg': 'mqm'}, ...)`` (with ``synthetic_ref`` an outlier system); ``WMT23_DA`` is the
  standard for the other pairs (cs-uk, de-en, en-cs, en-ja, en-zh, ja-en). ``wmt23_metrics.ipynb`` computes a second
  set of results with ``tasks.WMT23(..., gold='da-sqm')`` ("DA scores are available for a wider set of languages than
  the ones used for the main evaluation. Only en-de and zh-en are common to both"; tables 19-27 of the metrics
  paper). So numbers on this set compare with WMT23's DA+SQM tables, not with its main (MQM) en-de and zh-en
  results; the set's notes say so. The MQM scores are not in JUDGE-BENCH's folder.

Each row: candidate = the system's translation (``sys_summ``), source = the source segment (``src``), references =
the standard reference ``refA`` only (``ref_summ``; mt-metrics-eval's ``std_ref`` for both pairs). ``refA`` was rated
like a system (``is_human``); on its rows candidate == reference. ``doc_id`` is the segment (``<lp>:<seg_id>``, the
1-based line of the source files), so meta-eval's summary level ("group by item") is WMT23's item-grouped segment
level, the global level pools all segments and the system level correlates per-system means. Row ids are
``<doc_id>:<system>``. The source has no document or domain ids. Texts are kept exactly as in the file (zh-en segment
1099's reference is a lone ``"``, as in the source).

Subsets (as mt-metrics-eval, WMT leaves the human translation out of the metric correlations):

- ``en-de`` (default) and ``zh-en``: the MT systems only, 6,588 (549 x 12) and 13,260 (884 x 15) rows;
- ``en-de+human`` (7,137) and ``zh-en+human`` (14,144): ``refA`` too, whose rows get every reference-based metric's
  maximum (candidate == reference): for reference-free metrics or "human included" tables;
- pooled, ``en-de,zh-en`` (:mod:`judgments.pooling`): both pairs' rows, every system renamed ``<lp>:<system>``;
  ``language`` is None (the targets differ). WMT pools pairs only for the system-level pairwise accuracy.

The loader checks every row (fields and types, the language pair, ``doc_id`` = ``<lp>:<seg_id>``, ``da_sqm`` finite
in 0..100, one reference per segment (``ref_summs`` = ``[ref_summ]``), ``ref_system`` ``refA``, ``is_human`` exactly
for ``refA`` and its ``sys_summ`` equal to the reference, the same source and reference on every row of a segment)
and raises a :class:`~judgments.base.JudgmentError` naming the file and line; a repeated (segment, system) pair is an
error naming both lines.
"""
from __future__ import annotations

from pathlib import Path

from meta_eval.judgments.base import (
    Judgment,
    JudgmentError,
    JudgmentSet,
    check_unique_ids,
    get_field,
    get_number,
)
from meta_eval.judgments.convert import wmt23 as _convert
from meta_eval.judgments.files import DataFile, ensure_file
from meta_eval.judgments.pooling import build_subset, subset_parts

NAME = "wmt23"
FILE = DataFile(
    relpath="wmt23/wmt23_da_sqm.jsonl.gz",
    url=None,  # converted from the pinned original files below, never downloaded as is
    sha256="8fd9d59c510795c49cbb2b81fd956c1949a06d891d17d3152229904b98f466e0",
    how_to_get="convert the 38 files of data/wmt-23/original_data/ of the repository dmg-illc/JUDGE-BENCH at commit "
               "5a0bf500325029efb5dc8adff2c1e991996f0e78 to gzip JSON lines, one object per rated (language pair, "
               "segment, system) with doc_id, lp, seg_id, system, is_human, ref_system, src, ref_summ, ref_summs, "
               "sys_summ and scores.da_sqm (see PROVENANCE.md)",
    sources=_convert.SOURCES,
    convert="meta_eval.judgments.convert.wmt23:convert",
    content_sha256=_convert.CONTENT_SHA256,  # the decompressed bytes
)
DIMENSION = _convert.DIMENSION
DIMENSIONS = (DIMENSION,)
LANGUAGE_PAIRS = _convert.LANGUAGE_PAIRS
REF_SYSTEM = _convert.REF_SYSTEM
SUBSETS = ("en-de", "zh-en", "en-de+human", "zh-en+human")
DEFAULT_SUBSET = "en-de"
#: where the data come from (repository, commit, files; the papers), shown on leaderboards and in listings
DATA_SOURCE = ("dmg-illc/JUDGE-BENCH@5a0bf50 data/wmt-23/original_data (from google-research/mt-metrics-eval); "
               "Kocmi et al. 2023 (WMT23 findings) and Freitag et al. 2023 (WMT23 metrics task)")
DEFAULT_REASON = ("da_sqm is the set's only human score: WMT23's source-based DA+SQM (0-100, higher is better), the "
                  "general task's human evaluation (mt-metrics-eval gold 'da-sqm')")
ANNOTATORS = ("WMT23 DA+SQM raters (source-based, Appraise); one value per segment and system, a mean where several "
              "rated it (no per-rater values published)")
GOLD_NOTE = ("da_sqm is WMT23's DA+SQM score; for en-de and zh-en the WMT23 metrics task's standard gold is MQM "
             "(mt-metrics-eval meta_info.WMT23), which this set does not hold: compare with the metrics task's "
             "DA+SQM results, not its main en-de and zh-en tables")
CEILING_NOTE = "one value per item and no per-rater values, so there is no human ceiling"


def _judgment(obj: object, where: str) -> tuple[Judgment, dict]:
    """The row as a Judgment, and the fields the cross-row checks need."""
    lp = get_field(obj, "lp", where)
    if lp not in LANGUAGE_PAIRS:
        raise JudgmentError(f"{where}: language pair {lp!r} is not one of {', '.join(LANGUAGE_PAIRS)}")
    doc_id, system = get_field(obj, "doc_id", where), get_field(obj, "system", where)
    seg_id = get_field(obj, "seg_id", where, int)
    if doc_id != f"{lp}:{seg_id}" or seg_id < 1:
        raise JudgmentError(f"{where}: doc_id {doc_id!r} is not '<lp>:<seg_id>' with its language pair {lp!r} and "
                            f"segment {seg_id} (a positive line number)")
    if not system:
        raise JudgmentError(f"{where}: field 'system' is empty")
    ref_system = get_field(obj, "ref_system", where)
    if ref_system != REF_SYSTEM:
        raise JudgmentError(f"{where}: ref_system is {ref_system!r}; WMT23's standard reference for {lp} is "
                            f"{REF_SYSTEM!r}")
    is_human = get_field(obj, "is_human", where, bool)
    if is_human != (system == REF_SYSTEM):
        raise JudgmentError(f"{where}: is_human is {str(is_human).lower()} for system {system!r}; only the "
                            f"reference {REF_SYSTEM!r} is a human translation")
    source, reference = get_field(obj, "src", where), get_field(obj, "ref_summ", where)
    if not source.strip() or not reference.strip():
        raise JudgmentError(f"{where}: the {'source src' if not source.strip() else 'reference ref_summ'} is empty")
    if get_field(obj, "ref_summs", where, list) != [reference]:
        raise JudgmentError(f"{where}: 'ref_summs' must be [ref_summ]: one reference ({REF_SYSTEM}) per segment")
    candidate = get_field(obj, "sys_summ", where)
    if is_human and candidate != reference:
        raise JudgmentError(f"{where}: system {system!r} is the reference, so its sys_summ must equal ref_summ")
    scores = get_field(obj, "scores", where, dict)
    if set(scores) != {DIMENSION}:
        raise JudgmentError(f"{where}: 'scores' must hold {DIMENSION!r} only, got {sorted(scores)}")
    score = get_number(scores[DIMENSION], where, f"scores.{DIMENSION}")
    if not 0.0 <= score <= 100.0:
        raise JudgmentError(f"{where}: scores.{DIMENSION} is {score:g}, outside 0..100")
    row = Judgment(id=f"{doc_id}:{system}", doc_id=doc_id, system=system, candidate=candidate,
                   references=(reference,), source=source, scores={DIMENSION: score}, where=where)
    return row, {"lp": lp, "is_human": is_human}


def _check_segments(parsed: list[tuple[Judgment, dict]]) -> None:
    """The same source and reference on every row of a segment."""
    segment: dict[str, Judgment] = {}
    for row, _ in parsed:
        seen = segment.setdefault(row.doc_id, row)
        if row.source != seen.source or row.references != seen.references:
            raise JudgmentError(f"{row.where}: the source or reference of segment {row.doc_id!r} differs from the "
                                f"one at {seen.where}")


def _select(parsed: list[tuple[Judgment, dict]], path: str | Path, subset: str) -> JudgmentSet:
    """The plain ``subset`` (``<lp>`` or ``<lp>+human``) of the checked rows."""
    lp, with_human = subset.split("+")[0], subset.endswith("+human")
    kept = [row for row, extra in parsed if extra["lp"] == lp and (with_human or not extra["is_human"])]
    if not kept:
        raise JudgmentError(f"{path} has no rows of language pair {lp}")
    if with_human:
        notes = (f"the human reference {REF_SYSTEM} is included; WMT leaves it out of the metric correlations. Its "
                 "rows have candidate == reference, so every reference-based metric gives them its maximum: use this "
                 "subset for reference-free metrics or to reproduce 'human included' tables",)
    else:
        notes = (f"the human reference {REF_SYSTEM} is left out, as WMT leaves human translations out of the metric "
                 f"correlations; --subset {lp}+human keeps it",)
    n_systems, n_segments = len({r.system for r in kept}), len({r.doc_id for r in kept})
    return JudgmentSet(
        NAME, kept, DIMENSIONS, DIMENSION, subset=subset,
        description=f"WMT23 general MT {lp} (Kocmi et al. 2023), {n_segments} segments x {n_systems} systems, DA+SQM "
                    "0-100 (higher is better)",
        default_baseline="bleu",
        default_reason=DEFAULT_REASON, notes=notes + (GOLD_NOTE, CEILING_NOTE), task="MT", licence="Apache-2.0",
        language=lp.split("-")[1], data_source=DATA_SOURCE, annotators=ANNOTATORS)


def read(path: str | Path, subset: str = DEFAULT_SUBSET) -> JudgmentSet:
    """Read and check the converted file at ``path`` (no checksum: :func:`load` verifies it) and keep ``subset`` (one
    of ``SUBSETS``, or a comma-separated list of them: pooled, see :mod:`judgments.pooling`)."""
    from meta_eval.judgments.jsonl import iter_jsonl

    subset_parts(NAME, subset, SUBSETS)
    parsed = [_judgment(obj, where) for where, obj in iter_jsonl(path)]
    if not parsed:
        raise JudgmentError(f"{path} holds no judgments")
    check_unique_ids([row for row, _ in parsed], "(segment, system)")
    _check_segments(parsed)
    return build_subset(NAME, subset, SUBSETS, lambda part: _select(parsed, path, part))


def load(root: Path | None = None, subset: str = DEFAULT_SUBSET, download: bool = True) -> JudgmentSet:
    """Load WMT23 DA+SQM; ``subset`` is ``en-de`` (default), ``zh-en`` (MT systems only), ``<lp>+human``, or a pooled
    list such as ``en-de,zh-en``."""
    subset_parts(NAME, subset, SUBSETS)
    return read(ensure_file(FILE, root, download=download), subset)
