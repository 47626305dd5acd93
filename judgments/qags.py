"""QAGS (Wang, Cho & Lewis, ACL 2020): crowd judgments of the factual consistency of CNN/DM and XSum summaries.

File: ``qags/qags.jsonl.gz`` (see ``shared/judgments/qags/PROVENANCE.md``), converted from ``data/mturk_cnndm.jsonl``
and ``data/mturk_xsum.jsonl`` of GitHub ``W4ngatang/qags`` (commit 47798e9; the repository states no licence for the
data). 474 rows, one per summary: 235 CNN/DM summaries of Bottom-Up Summarization (system ``bottom_up``, "QAGS-C")
and 239 XSum summaries of BART (``bart``, "QAGS-X"), each of a different article (``doc_id`` ``<dataset>-<line>``).
Three Mechanical Turk workers answered, for every sentence of a summary, whether it is supported by the article;
the same three workers judged every sentence of one summary.

Human dimensions:

- ``factuality`` (default, 0..1): the share of the summary's sentences that a majority (2 or 3 of 3) judged
  consistent; the paper's score (three annotations per sentence, majority vote, averaged over the summary).
  ``judges["factuality"]`` holds the three workers' own shares (worker k: the share of sentences k said "yes" to),
  so the human ceiling compares workers with each other. Worker ids differ from summary to summary, so slot k is
  "the k-th worker of this summary", a pseudo-annotator (see :mod:`meta_eval.stats.ceiling`).
- ``consistent`` (0 or 1): 1 if every sentence is majority-consistent, the binary label of later benchmarks. It is
  not a function of per-worker labels, so it has no ``judges``.
- ``mean_yes`` (0..1): the share of "yes" among all sentences x 3 answers, no majority step; it is exactly the mean
  of the three workers' shares, which are its ``judges`` too.

The loader recomputes the three scores and the workers' shares from the raw answers kept in the file
(``summary_sentences``) and uses these exact values (``2/3``, where the file rounds to ``0.666667``); a stored value
that differs from the recomputed one by more than 1e-5 is an error naming the file and line, as is any malformed
row or a repeated (article, system) pair.

Each row: candidate = the summary (``sys_summ``, its sentences joined by one space), source = the article (``src``,
partly lower-cased as released), **no reference** (the source has none): reference-based metrics are skipped with
that reason by ``meta-eval run``, never fed the article instead. Texts are kept exactly as in the file.

Subsets: ``cnndm`` (default, 235 rows, QAGS-C), ``xsum`` (239, QAGS-X) and ``all`` (474; the two pooled); the QAGS
paper reports the two datasets separately, and so does meta-eval: in ``all`` the ``system`` field is the dataset
(``bottom_up`` is every CNN/DM summary, ``bart`` every XSum one), so a statistic over the pool would compare the
datasets, and resampling "systems" would resample the two datasets. ``all`` is therefore marked ``pooled_datasets``
and every level statistic refuses it with that reason (it is still there for ``meta-eval score`` and for reading the
rows). Until 2026-11-26 ``all`` was the default.

Each article has one summary, from one system per dataset, so only the global
level ("no grouping") is defined: the summary level needs 3 systems per document, the system level 3 systems.
XSum summaries are one sentence long, so their ``factuality`` is 0 or 1.
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
from meta_eval.judgments.convert import qags as _convert
from meta_eval.judgments.files import DataFile, ensure_file

FILE = DataFile(
    relpath="qags/qags.jsonl.gz",
    url=None,  # converted from the pinned original files below, never downloaded as is
    sha256="87c0d6732d0a7222196560b4c8a42114b5d1a6546bec67194420337993f87a86",
    how_to_get="convert data/mturk_cnndm.jsonl and data/mturk_xsum.jsonl from the repository W4ngatang/qags at "
               "commit 47798e9b63344e2d3fb4df2def6edc18e9402d30 to gzip JSON lines, one object per summary with "
               "doc_id, dataset, system, src, ref_summ, sys_summ, scores, annotators, worker_ids and "
               "summary_sentences (see PROVENANCE.md)",
    sources=_convert.SOURCES,
    convert="meta_eval.judgments.convert.qags:convert",
    content_sha256=_convert.CONTENT_SHA256,  # the decompressed bytes
)
DIMENSIONS = ("factuality", "consistent", "mean_yes")
DATASETS = ("cnndm", "xsum")
SUBSETS = ("all", *DATASETS)
DEFAULT_SUBSET = "cnndm"
#: where the data come from (repository, commit, files; the paper), shown on leaderboards and in listings
DATA_SOURCE = 'W4ngatang/qags@47798e9 data/mturk_{cnndm,xsum}.jsonl; Wang, Cho & Lewis, ACL 2020'
WORKERS = 3
DEFAULT_REASON = ("factuality is the QAGS paper's human score: the share of the summary's sentences a majority of "
                  "3 crowd workers judged consistent with the article (Wang et al. 2020)")
_TOLERANCE = 1e-5  # the file rounds to 6 decimals


def _votes(obj: dict, where: str) -> tuple[list[str], tuple[int, ...], list[list[bool]]]:
    """(sentences, worker ids, per sentence the workers' yes/no in worker-id order) from ``summary_sentences``."""
    workers = get_field(obj, "worker_ids", where, list)
    if len(workers) != WORKERS or len(set(map(str, workers))) != WORKERS:
        raise JudgmentError(f"{where}: 'worker_ids' must name {WORKERS} different workers, got {workers!r}")
    sentences, votes = [], []
    for i, item in enumerate(get_field(obj, "summary_sentences", where, list), 1):
        at = f"{where}: summary sentence {i}"
        sentences.append(get_field(item, "sentence", at))
        answers = {}
        for response in get_field(item, "responses", at, list):
            answer = get_field(response, "response", at)
            if answer not in ("yes", "no"):
                raise JudgmentError(f"{at}: response {answer!r} is neither 'yes' nor 'no'")
            answers[str(get_field(response, "worker_id", at, (int, str)))] = answer == "yes"
        if sorted(answers) != sorted(map(str, workers)):
            raise JudgmentError(f"{at}: answered by workers {sorted(answers)}, not by the summary's worker_ids "
                                f"{workers}")
        votes.append([answers[str(w)] for w in workers])
    if not sentences:
        raise JudgmentError(f"{where}: 'summary_sentences' is empty")
    return sentences, tuple(workers), votes


def _check(stored: object, computed: float, where: str, name: str) -> float:
    value = get_number(stored, where, name)
    if abs(value - computed) > _TOLERANCE:
        raise JudgmentError(f"{where}: {name} is {value:g}, but the workers' answers give {computed:.6f}")
    return computed


def _judgment(obj: object, where: str) -> tuple[Judgment, str]:
    dataset = get_field(obj, "dataset", where)
    if dataset not in DATASETS:
        raise JudgmentError(f"{where}: dataset {dataset!r} is not one of {', '.join(DATASETS)}")
    doc_id, system = get_field(obj, "doc_id", where), get_field(obj, "system", where)
    if not doc_id or not system:
        raise JudgmentError(f"{where}: 'doc_id' and 'system' must not be empty")
    sentences, _, votes = _votes(obj, where)
    candidate = get_field(obj, "sys_summ", where)
    if " ".join(sentences) != candidate:
        raise JudgmentError(f"{where}: 'sys_summ' is not its summary sentences joined by one space")
    reference = get_field(obj, "ref_summ", where, nullable=True)
    n = len(votes)
    majority = [sum(v) * 2 > WORKERS for v in votes]
    shares = tuple(sum(v[k] for v in votes) / n for k in range(WORKERS))
    raw = get_field(obj, "scores", where, dict)
    scores = {"factuality": _check(raw.get("factuality"), sum(majority) / n, where, "scores.factuality"),
              "consistent": _check(raw.get("consistent"), float(all(majority)), where, "scores.consistent"),
              "mean_yes": _check(raw.get("mean_yes"), sum(shares) / WORKERS, where, "scores.mean_yes")}
    stored = get_field(get_field(obj, "annotators", where, dict), "factuality", where, list)
    if len(stored) != WORKERS:
        raise JudgmentError(f"{where}: annotators.factuality must hold {WORKERS} values, got {len(stored)}")
    for k, (value, share) in enumerate(zip(stored, shares)):
        _check(value, share, where, f"annotators.factuality[{k}]")
    row = Judgment(id=f"{doc_id}:{system}", doc_id=doc_id, system=system, candidate=candidate,
                   references=() if reference is None else (reference,), source=get_field(obj, "src", where),
                   scores=scores, judges={"factuality": shares, "mean_yes": shares}, where=where)
    return row, dataset


def read(path: str | Path, subset: str = DEFAULT_SUBSET) -> JudgmentSet:
    """Read and check the converted file at ``path`` (no checksum: :func:`load` verifies it) and keep ``subset``."""
    from meta_eval.judgments.jsonl import iter_jsonl

    check_subset("qags", subset, SUBSETS)
    parsed = [_judgment(obj, where) for where, obj in iter_jsonl(path)]
    if not parsed:
        raise JudgmentError(f"{path} holds no judgments")
    check_unique_ids([row for row, _ in parsed], "(article, system)")
    rows = [row for row, dataset in parsed if subset in ("all", dataset)]
    if not rows:
        raise JudgmentError(f"{path} has no rows of subset {subset!r}")
    notes = ["no reference summaries: reference-based metrics are skipped; the article is the source",
             ("crowd workers: judges slot k is the k-th of each summary's 3 workers (ids differ between summaries), "
              "a pseudo-annotator for the human ceiling"),
             "one summary per article: only the global level is defined"]
    pooled = ""
    if subset == "all":
        notes.insert(0, "QAGS-C (CNN/DM) and QAGS-X (XSum) pooled; the QAGS paper reports them separately "
                        "(--subset cnndm, --subset xsum)")
        pooled = ("qags 'all' pools two datasets and its 'system' field is the dataset (bottom_up: every CNN/DM "
                  "summary, bart: every XSum one), so a statistic over the pool would compare the datasets; the QAGS "
                  "paper reports them separately: use --subset cnndm or --subset xsum")
    return JudgmentSet(
        "qags", rows, DIMENSIONS, "factuality", subset=subset,
        description="QAGS (Wang et al. 2020), CNN/DM (Bottom-Up) and XSum (BART) summaries, share of sentences "
                    "judged consistent by a majority of 3 workers, 0..1",
        default_baseline="rougeL-f",
        default_reason=DEFAULT_REASON, notes=tuple(notes), task="factuality", language="en", pooled_datasets=pooled,
        licence="none stated for the data (W4ngatang/qags has no licence file for it): cite the paper",
        data_source=DATA_SOURCE,
        annotators="3 Mechanical Turk workers per summary (the same 3 for all its sentences), per-worker values kept")


def load(root: Path | None = None, subset: str = DEFAULT_SUBSET, download: bool = True) -> JudgmentSet:
    """Load QAGS; ``subset`` is ``cnndm`` (default, 235 rows), ``xsum`` (239) or ``all`` (474, both pooled)."""
    check_subset("qags", subset, SUBSETS)
    return read(ensure_file(FILE, root, download=download), subset)
