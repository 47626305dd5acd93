"""FRANK (Pagnoni, Balachandran & Tsvetkov, NAACL 2021): factual-error annotations of CNN/DM and XSum summaries.

File: ``frank/frank.jsonl.gz`` (see ``shared/judgments/frank/PROVENANCE.md``), converted from GitHub ``artidoro/frank``
(MIT): the human scores from ``data/human_annotations.json`` (commit 80a88fb), the texts from
``data/articles-wmetrics-reference-json/`` (commit 6308064). 2,246 rows, one per (article, system): CNN/DM 250
articles x 5 systems (``bart``, ``bert_sum``, ``bus``, ``pgn``, ``s2s``) and XSum 249 articles x 4 systems
(``BERTS2S``, ``PtGen``, ``TConvS2S``, ``TranS2S``).

Human dimensions (all 0..1, higher is better):

- ``factuality`` (default): the share of the summary's sentences without any factual error, FRANK's main score
  ("a score between 0 and 1 as we collected judgements on each sentence and average over sentences"). Three
  annotators labelled each sentence; only the authors' aggregate is released in this file (the sentence-level,
  per-annotator file is not included), so ``judges`` is empty and there is no human ceiling.
- the 11 error-category fields as released, each 1 = no error of that kind in the summary, 0 = every sentence has
  one: the three groups ``Semantic_Frame_Errors`` (``RelE`` predicate, ``EntE`` entity, ``CircE`` circumstance),
  ``Discourse_Errors`` (``CorefE`` coreference, ``LinkE`` discourse link) and ``Content_Verifiability_Errors``
  (``OutE`` out-of-article, ``GramE`` grammatical), and ``Other``. The ``flip_scores`` of the file (the paper's
  ablation: factuality with one category's errors flipped) are not dimensions.

Subsets: ``<dataset>-<split>`` with dataset ``cnndm`` or ``xsum`` (``bbc`` in the file) and FRANK's own split
``valid`` (149 articles, 671 rows) or ``test`` (350 articles, 1,575 rows); a dataset alone (``cnndm``, ``xsum``)
takes both splits, a split alone (``valid``, ``test``) both datasets, ``all`` everything (2,246 rows). The
**default is ``test``** (both datasets): the authors ask that metrics be tuned on ``valid`` only and results be
reported on ``test``. The combined subsets pool CNN/DM and XSum, as FRANK's "all data" numbers do; FRANK also controls
for the system (``meta-eval run --control system``, its partial correlation).

Each row: candidate = the summary (``sys_summ``, the annotated sentences joined by one space), source = the article
(``src``), references = one reference (``ref_summ``): for CNN/DM the highlights as FRANK paired them with each model
(cased for ``bart``, lower-cased and tokenized for the other four: a case-sensitive reference-based metric sees two
versions of one reference), for XSum the gold summary. Texts are tokenized and kept exactly as in the file, including
XSum's literal backslash escapes (``world\\'s``). Row ids are ``<doc_id>:<system>`` (system names differ between the
two datasets, so the system level of a pooled subset has 9 systems).

The loader checks every row (fields and types, the 12 scores finite and in [0, 1], ``sys_summ`` equal to its
sentences joined, one dataset, split and article per ``doc_id``) and raises a :class:`~judgments.base.JudgmentError`
naming the file and line; a repeated (article, system) pair is an error naming both lines.
"""
from __future__ import annotations

from pathlib import Path

from meta_eval.judgments.base import (
    Judgment,
    JudgmentError,
    JudgmentSet,
    check_subset,
    check_unique_ids,
    get_field,
    get_number,
)
from meta_eval.judgments.convert import frank as _convert
from meta_eval.judgments.files import DataFile, ensure_file

FILE = DataFile(
    relpath="frank/frank.jsonl.gz",
    url=None,  # converted from the pinned original files below, never downloaded as is
    sha256="471b4115194488b6d5e8f0e82da8495c8afd50170fca32b97ae783673298b5f8",
    how_to_get="convert data/human_annotations.json (repository artidoro/frank, commit "
               "80a88fb12cc0bfc17ff6ee2c5ebb0c4f4dd8a5f4) with the texts of data/articles-wmetrics-reference-json/ "
               "(commit 6308064d4b42b5e613add40bad0c425675dea01b) to gzip JSON lines, one object per (article, "
               "system) with doc_id, dataset, system, split, src, ref_summ, sys_summ, sys_summ_sentences and scores "
               "(see PROVENANCE.md)",
    sources=_convert.SOURCES,
    convert="meta_eval.judgments.convert.frank:convert",
    content_sha256=_convert.CONTENT_SHA256,  # the decompressed bytes
)
CATEGORIES = ("Semantic_Frame_Errors", "Discourse_Errors", "Content_Verifiability_Errors", "RelE", "EntE", "CircE",
              "OutE", "GramE", "CorefE", "LinkE", "Other")
DIMENSIONS = ("factuality", *CATEGORIES)
DATASETS = {"cnndm": "cnndm", "xsum": "bbc"}  # subset name -> the file's ``dataset``
SPLITS = ("valid", "test")
SUBSETS = ("all", *SPLITS, *(f"{d}{s}" for d in DATASETS for s in ("", "-valid", "-test")))
DEFAULT_SUBSET = "test"
#: where the data come from (repository, commit, files; the paper), shown on leaderboards and in listings
DATA_SOURCE = 'artidoro/frank@80a88fb data/human_annotations.json, texts @6308064; Pagnoni et al., NAACL 2021'
DEFAULT_REASON = ("factuality is FRANK's main human score: the share of the summary's sentences the annotators found "
                  "free of factual errors (Pagnoni et al. 2021); the 11 others are its per-category error indicators")


def _judgment(obj: object, where: str) -> tuple[Judgment, dict]:
    dataset, split = get_field(obj, "dataset", where), get_field(obj, "split", where)
    if dataset not in DATASETS.values():
        raise JudgmentError(f"{where}: dataset {dataset!r} is not one of {', '.join(DATASETS.values())}")
    if split not in SPLITS:
        raise JudgmentError(f"{where}: split {split!r} is not one of {', '.join(SPLITS)}")
    doc_id, system = get_field(obj, "doc_id", where), get_field(obj, "system", where)
    if not doc_id or not system:
        raise JudgmentError(f"{where}: 'doc_id' and 'system' must not be empty")
    raw = get_field(obj, "scores", where, dict)
    scores = {}
    for dim in DIMENSIONS:
        value = get_number(raw.get(dim), where, f"scores.{dim}")
        if not 0.0 <= value <= 1.0:
            raise JudgmentError(f"{where}: scores.{dim} is {value:g}, outside 0..1")
        scores[dim] = value
    candidate = get_field(obj, "sys_summ", where)
    sentences = get_field(obj, "sys_summ_sentences", where, list)
    if not all(isinstance(s, str) for s in sentences) or " ".join(sentences) != candidate:
        raise JudgmentError(f"{where}: 'sys_summ' is not its 'sys_summ_sentences' joined by one space")
    reference = get_field(obj, "ref_summ", where)
    if not reference.strip():
        raise JudgmentError(f"{where}: the reference summary 'ref_summ' is empty")
    row = Judgment(id=f"{doc_id}:{system}", doc_id=doc_id, system=system, candidate=candidate,
                   references=(reference,), source=get_field(obj, "src", where), scores=scores, where=where)
    return row, {"dataset": dataset, "split": split}


def _check_articles(rows: list[tuple[Judgment, dict]]) -> None:
    """Every row of an article has the same dataset, split and article text."""
    first: dict[str, tuple[Judgment, dict]] = {}
    for row, extra in rows:
        seen, seen_extra = first.setdefault(row.doc_id, (row, extra))
        if extra != seen_extra or row.source != seen.source:
            raise JudgmentError(f"{row.where}: article {row.doc_id!r} has another dataset, split or text than at "
                                f"{seen.where}")


def _wanted(subset: str, extra: dict) -> bool:
    if subset == "all":
        return True
    dataset, _, split = subset.partition("-") if subset not in SPLITS else ("", "", subset)
    return (not dataset or extra["dataset"] == DATASETS[dataset]) and (not split or extra["split"] == split)


def _notes(subset: str) -> tuple[str, ...]:
    split = next((s for s in SPLITS if subset.endswith(s)), None)
    if split == "test":
        which = "FRANK's test split: the authors ask that results be reported on it (--subset all: every row)"
    elif split == "valid":
        which = "FRANK's valid split: the authors' split for tuning metrics, not for reporting (--subset test)"
    else:
        which = "both of FRANK's splits; the authors tune on valid and report on test (--subset test)"
    return (which,
            ("no per-annotator values: only the authors' aggregate of the 3 annotators is released here, so there "
             "is no human ceiling"),
            "the 11 error-category dimensions are 1 = no such error, 0 = every sentence has one (higher is better)")


def read(path: str | Path, subset: str = DEFAULT_SUBSET) -> JudgmentSet:
    """Read and check the converted file at ``path`` (no checksum: :func:`load` verifies it) and keep ``subset``."""
    from meta_eval.judgments.jsonl import iter_jsonl

    check_subset("frank", subset, SUBSETS)
    parsed = [_judgment(obj, where) for where, obj in iter_jsonl(path)]
    if not parsed:
        raise JudgmentError(f"{path} holds no judgments")
    check_unique_ids([row for row, _ in parsed], "(article, system)")
    _check_articles(parsed)
    rows = [row for row, extra in parsed if _wanted(subset, extra)]
    if not rows:
        raise JudgmentError(f"{path} has no rows of subset {subset!r}")
    return JudgmentSet(
        "frank", rows, DIMENSIONS, "factuality", subset=subset,
        description="FRANK (Pagnoni et al. 2021), CNN/DM and XSum summaries, share of sentences without factual "
                    "error 0..1, with 11 error categories",
        default_baseline="rougeL-f",
        default_reason=DEFAULT_REASON, notes=_notes(subset), task="factuality", language="en",
        licence="MIT (artidoro/frank LICENSE); articles: CNN/DailyMail and BBC news",
        data_source=DATA_SOURCE,
        annotators="3 crowd annotators per summary sentence, aggregated by the authors (no per-annotator values)")


def load(root: Path | None = None, subset: str = DEFAULT_SUBSET, download: bool = True) -> JudgmentSet:
    """Load FRANK; ``subset`` is ``test`` (default), ``valid``, ``all``, ``cnndm``/``xsum`` or ``<dataset>-<split>``."""
    check_subset("frank", subset, SUBSETS)
    return read(ensure_file(FILE, root, download=download), subset)
