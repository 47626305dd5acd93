"""WMT21 TED talks, expert MQM (Freitag et al. 2021): professional translators' error annotations of MT output.

File: ``wmt21-mqm-ted/wmt21_mqm_ted.jsonl.gz`` (see ``shared/judgments/wmt21-mqm-ted/PROVENANCE.md``), converted from
``ted/{ende,zhen}/mqm_ted_*.tsv`` of GitHub ``google/wmt-mqm-human-evaluation`` (commit 7fadea2, Apache-2.0): one row
per (language pair, segment, system), 15,341 rows. en-de: 529 segments x 14 systems (13 MT + the human translation
``ref``); zh-en: 529 segments x 15 systems (13 MT + the human translations ``ref`` and ``refB``).

Human score ``mqm`` (the only dimension, so the default): minus the weighted count of the errors the rater marked
(Major 5, Minor 1, Minor Fluency/Punctuation 0.1, Non-translation 25, Neutral 0; at most five errors per segment), so
**higher is better**, 0 = no error, no lower bound. It is the gold score of the WMT21 metrics task for TED talks
(mt-metrics-eval ``wmt21.tedtalks``: ``std_gold`` ``mqm`` at the segment and system levels). Each item was rated by
**one** professional translator, so ``judges["mqm"]`` holds that single value: there is no second annotator and no
human ceiling (:func:`meta_eval.stats.ceiling.no_annotator_reason` says so).

Each row: candidate = the system's translation (``sys_summ``), source = the source segment (``src``), references =
the **standard reference only** (``ref_summ``): ``refA`` (system ``ref``) for en-de and ``refB`` for zh-en, as
mt-metrics-eval's ``meta_info.py`` declares for ``wmt21.tedtalks``. The other human translation of zh-en is not used
as a second reference: it is rated as a system itself (``ref``, the original English TED transcript, of which the
Chinese source is a translation: mean MQM -5.52, the worst "system"), and WMT scores reference-based metrics against
the standard reference alone. ``ref_summs`` in the file lists every human translation.

``doc_id`` is the source segment (``<lp>:<seg_id>``): a document holds every system's translation of one segment, so
meta-eval's summary level ("group by item") is WMT23's segment-level item-grouped correlation, the global level
("no grouping") pools all segments, and the system level correlates the per-system mean MQM. Row ids are
``<doc_id>:<system>``.

Human translations. WMT, and mt-metrics-eval by default, leave the human translations out of the metric correlations
(its ``mtme`` takes ``set(gold_scores) - human_sys_names`` at every level; human outputs come back only on request,
never the reference in use). So the subsets are:

- ``en-de`` (default: the language pair the MQM studies lead with) and ``zh-en``: the 13 MT systems, 6,877 rows each.
- ``en-de+human`` (7,406 rows) and ``zh-en+human`` (7,935 rows): every rated translation, human ones included, for
  reproducing "human translations included" tables or for reference-free metrics. The rows of the standard reference
  itself (``ref`` in en-de, ``refB`` in zh-en) have candidate == reference, so every reference-based metric gives
  them its maximum (as chaganty's ``all`` subset does with its references); mt-metrics-eval would leave that one
  system out. The set's notes say so.

Pooled: ``en-de,zh-en`` (any comma-separated list of the subsets above, each pair once) holds the rows of both pairs
with every system renamed ``<lp>:<system>``, since the pairs' systems share names (``Facebook-AI`` is in both) and
must not merge (:mod:`judgments.pooling`; ``language`` is None, the targets differ). WMT pools language pairs only
for the system-level pairwise accuracy, counting system pairs within each language pair; the set's notes say so.

Texts are kept exactly as in the file (detokenized, the ``<v>`` error markers already removed). The loader checks
every row (fields and types, ``mqm`` finite and <= 0 and equal to the rater's value, the first of ``ref_summs`` equal
to ``ref_summ``, one standard reference per pair, the same source and reference on every row of a segment, the
reference system's translation equal to the reference) and raises a :class:`~judgments.base.JudgmentError` naming
the file and line; a repeated (segment, system) pair is an error naming both lines.
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
from meta_eval.judgments.convert import wmt21_mqm as _convert
from meta_eval.judgments.files import DataFile, ensure_file
from meta_eval.judgments.pooling import build_subset, subset_parts

FILE = DataFile(
    relpath="wmt21-mqm-ted/wmt21_mqm_ted.jsonl.gz",
    url=None,  # converted from the pinned original files below, never downloaded as is
    sha256="965866866011398bdce806da0e28bd158e9fc6bdb4ec0459fe882faa499fb094",
    how_to_get="convert ted/ende/mqm_ted_ende.tsv and ted/zhen/mqm_ted_zhen.tsv from the repository "
               "google/wmt-mqm-human-evaluation at commit 7fadea281aff8db61cc72fc3d469a4dca78b82a6 to gzip JSON "
               "lines, one object per (language pair, segment, system) with doc_id, lp, system, is_human, "
               "ref_system, src, ref_summ, ref_summs, sys_summ, scores.mqm and annotators.mqm (see PROVENANCE.md)",
    sources=_convert.SOURCES,
    convert="meta_eval.judgments.convert.wmt21_mqm:convert",
    content_sha256=_convert.CONTENT_SHA256,  # the decompressed bytes
)
DIMENSIONS = ("mqm",)
LANGUAGE_PAIRS = ("en-de", "zh-en")
SUBSETS = ("en-de", "zh-en", "en-de+human", "zh-en+human")
DEFAULT_SUBSET = "en-de"
#: where the data come from (repository, commit, files; the paper), shown on leaderboards and in listings
DATA_SOURCE = ("google/wmt-mqm-human-evaluation@7fadea2 ted/{ende,zhen}/mqm_ted_*.tsv; Freitag et al., TACL 2021 and "
               "WMT21 metrics task")
DEFAULT_REASON = ("MQM is the set's only human score: minus the weighted count of the errors one professional "
                  "translator marked (Freitag et al. 2021), higher is better; it is WMT21's gold score for TED talks")
ANNOTATORS = "1 professional translator per segment (expert MQM error annotation; no second rating)"


def _judgment(obj: object, where: str) -> tuple[Judgment, dict]:
    """The row as a Judgment, and the fields the cross-row checks need."""
    lp = get_field(obj, "lp", where)
    if lp not in LANGUAGE_PAIRS:
        raise JudgmentError(f"{where}: language pair {lp!r} is not one of {', '.join(LANGUAGE_PAIRS)}")
    doc_id, system = get_field(obj, "doc_id", where), get_field(obj, "system", where)
    if not doc_id.startswith(f"{lp}:"):
        raise JudgmentError(f"{where}: doc_id {doc_id!r} does not start with its language pair {lp!r}")
    if not system:
        raise JudgmentError(f"{where}: field 'system' is empty")
    reference = get_field(obj, "ref_summ", where)
    if not reference.strip():
        raise JudgmentError(f"{where}: the reference translation 'ref_summ' is empty")
    refs = get_field(obj, "ref_summs", where, list)
    if not refs or refs[0] != reference:
        raise JudgmentError(f"{where}: the first of 'ref_summs' must be the standard reference 'ref_summ'")
    mqm = get_number(get_field(obj, "scores", where, dict).get("mqm"), where, "scores.mqm")
    if mqm > 0:
        raise JudgmentError(f"{where}: scores.mqm is {mqm:g}, but MQM scores are minus an error count (<= 0)")
    raters = get_field(get_field(obj, "annotators", where, dict), "mqm", where, list)
    judges = tuple(get_number(v, where, "a value of annotators.mqm") for v in raters)
    if not judges or abs(sum(judges) / len(judges) - mqm) > 1e-9:
        raise JudgmentError(f"{where}: scores.mqm {mqm:g} is not the mean of annotators.mqm {list(judges)}")
    row = Judgment(id=f"{doc_id}:{system}", doc_id=doc_id, system=system,
                   candidate=get_field(obj, "sys_summ", where), references=(reference,),
                   source=get_field(obj, "src", where), scores={"mqm": mqm}, judges={"mqm": judges}, where=where)
    return row, {"lp": lp, "is_human": get_field(obj, "is_human", where, bool),
                 "ref_system": get_field(obj, "ref_system", where)}


def _check_pair(rows: list[tuple[Judgment, dict]]) -> None:
    """One standard reference per language pair; one source and reference per segment; the reference's own row."""
    ref_system: dict[str, tuple[str, Judgment]] = {}
    segment: dict[str, Judgment] = {}
    for row, extra in rows:
        name, first = ref_system.setdefault(extra["lp"], (extra["ref_system"], row))
        if extra["ref_system"] != name:
            raise JudgmentError(f"{row.where}: ref_system {extra['ref_system']!r} differs from {name!r} at "
                                f"{first.where} (one standard reference per language pair)")
        seen = segment.setdefault(row.doc_id, row)
        if row.source != seen.source or row.references != seen.references:
            raise JudgmentError(f"{row.where}: the source or reference of segment {row.doc_id!r} differs from "
                                f"the one at {seen.where}")
        if row.system == extra["ref_system"] and (not extra["is_human"] or row.candidate != row.references[0]):
            raise JudgmentError(f"{row.where}: system {row.system!r} is the standard reference, so it must be "
                                "is_human with sys_summ equal to ref_summ")


def _select(parsed: list[tuple[Judgment, dict]], path: str | Path, subset: str) -> JudgmentSet:
    """The plain ``subset`` (``<lp>`` or ``<lp>+human``) of the checked rows."""
    lp, with_human = subset.split("+")[0], subset.endswith("+human")
    kept = [(row, extra) for row, extra in parsed if extra["lp"] == lp and (with_human or not extra["is_human"])]
    if not kept:
        raise JudgmentError(f"{path} has no rows of language pair {lp}")
    humans = sorted({row.system for row, extra in parsed if extra["lp"] == lp and extra["is_human"]})
    ref_system = next(extra["ref_system"] for _, extra in kept)
    if with_human:
        notes = ((f"human translations included ({', '.join(humans)}); WMT leaves them out of the metric "
                  f"correlations. The standard reference's own rows (system {ref_system!r}) have candidate == "
                  "reference, so every reference-based metric gives them its maximum: use this subset for "
                  "reference-free metrics or to reproduce 'human included' tables"),)
    else:
        notes = ((f"the human translations ({', '.join(humans)}) are left out, as WMT leaves them out of the "
                  f"metric correlations; --subset {lp}+human keeps them"),)
    notes += ("one rater per segment: judges['mqm'] holds that one value, so there is no human ceiling",)
    return JudgmentSet(
        "wmt21-mqm-ted", [row for row, _ in kept], DIMENSIONS, "mqm", subset=subset,
        description=f"WMT21 TED talks {lp} (Freitag et al. 2021), {len({r.system for r, _ in kept})} systems, "
                    "expert MQM (minus weighted errors, higher is better)",
        default_baseline="bleu",
        default_reason=DEFAULT_REASON, notes=notes, task="MT", licence="Apache-2.0", language=lp.split("-")[1],
        data_source=DATA_SOURCE, annotators=ANNOTATORS)


def read(path: str | Path, subset: str = DEFAULT_SUBSET) -> JudgmentSet:
    """Read and check the converted file at ``path`` (no checksum: :func:`load` verifies it) and keep ``subset`` (one
    of ``SUBSETS``, or a comma-separated list of them: pooled, see :mod:`judgments.pooling`)."""
    from meta_eval.judgments.jsonl import iter_jsonl

    subset_parts("wmt21-mqm-ted", subset, SUBSETS)
    parsed = [_judgment(obj, where) for where, obj in iter_jsonl(path)]
    if not parsed:
        raise JudgmentError(f"{path} holds no judgments")
    check_unique_ids([row for row, _ in parsed], "(segment, system)")
    _check_pair(parsed)
    return build_subset("wmt21-mqm-ted", subset, SUBSETS, lambda part: _select(parsed, path, part))


def load(root: Path | None = None, subset: str = DEFAULT_SUBSET, download: bool = True) -> JudgmentSet:
    """Load WMT21 TED MQM; ``subset`` is ``en-de`` (default), ``zh-en`` (MT systems only), ``<lp>+human``, or a
    pooled list such as ``en-de,zh-en``."""
    subset_parts("wmt21-mqm-ted", subset, SUBSETS)
    return read(ensure_file(FILE, root, download=download), subset)
