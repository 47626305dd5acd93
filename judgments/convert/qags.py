"""QAGS (Wang, Cho & Lewis, ACL 2020) from the authors' files into ``qags/qags.jsonl.gz``.

Sources: GitHub ``W4ngatang/qags`` at commit ``47798e9b``, ``data/mturk_cnndm.jsonl`` and ``data/mturk_xsum.jsonl``:
one JSON object per line, ``{"article": str, "summary_sentences": [{"sentence": str, "responses": [{"worker_id": int,
"response": "yes"|"no"}, x3]}]}``.

Output, one row per source line, CNN/DM first, in source order (as ``shared/judgments/qags/PROVENANCE.md`` describes):
``doc_id`` ``<dataset>-<0-based line number, 3 digits>``, ``dataset``, ``system`` (``bottom_up`` for CNN/DM: Bottom-Up
summaries; ``bart`` for XSum), ``src`` (the article), ``ref_summ`` null (no references), ``sys_summ`` (the sentences
joined with one space), ``scores`` {``factuality``: share of sentences whose majority (>= 2 of 3) said yes,
``consistent``: 1 if all are, ``mean_yes``: share of all yes answers}, ``annotators.factuality`` (per worker: share of
the sentences they said yes to, aligned with ``worker_ids``, the first sentence's worker order), ``worker_ids``, and
``summary_sentences`` (the source's, each with ``n_yes`` and ``majority_consistent`` added). Shares are rounded to 6
decimals. The repository has no aggregation code; this follows the paper's description (majority vote per sentence).
Every sentence must have the same three workers and yes/no answers, or it is a :class:`ConversionError`.
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from meta_eval.judgments.convert import ConversionError, GzipFormat, jsonl_bytes, write_gzip
from meta_eval.judgments.files import Source

_REPO, _COMMIT = "W4ngatang/qags", "47798e9b63344e2d3fb4df2def6edc18e9402d30"
SOURCES = (
    Source(_REPO, _COMMIT, "data/mturk_cnndm.jsonl",
           "5a6e20201f2c5d5d2489865137987c5d68d04c5b4e84662f99bb03862bb3a575", 600853),
    Source(_REPO, _COMMIT, "data/mturk_xsum.jsonl",
           "1fb9af32ba64b0df54b26e12456b0b0324a519a85348c1f7b268899ad6269a15", 570571),
)
DATASETS = {"data/mturk_cnndm.jsonl": ("cnndm", "bottom_up"), "data/mturk_xsum.jsonl": ("xsum", "bart")}
CONTENT_SHA256 = "69a4da8c7e603aa11530a814fe73cff5b2d2a1602137b03e5a44cb598a82bfe7"  # of the decompressed file
GZIP = GzipFormat()  # Python's GzipFile: level 9, mtime 0, no name


def _row(record: object, dataset: str, system: str, index: int, where: str) -> dict:
    if not isinstance(record, dict) or not isinstance(record.get("article"), str):
        raise ConversionError(f"{where}: expected an object with a string 'article'")
    sentences = record.get("summary_sentences")
    if not isinstance(sentences, list) or not sentences:
        raise ConversionError(f"{where}: 'summary_sentences' is not a non-empty list")
    workers = None
    out = []
    for k, sent in enumerate(sentences):
        at = f"{where}, sentence {k}"
        responses = sent.get("responses") if isinstance(sent, dict) else None
        if (not isinstance(sent, dict) or not isinstance(sent.get("sentence"), str)
                or not isinstance(responses, list) or len(responses) != 3):
            raise ConversionError(f"{at}: expected a 'sentence' string and 3 'responses'")
        ids = [r.get("worker_id") if isinstance(r, dict) else None for r in responses]
        if workers is None:
            workers = ids
        if sorted(map(str, ids)) != sorted(map(str, workers)) or len(set(map(str, ids))) != 3:
            raise ConversionError(f"{at}: workers {ids} differ from the first sentence's {workers}")
        answers = [r.get("response") for r in responses]
        if any(a not in ("yes", "no") for a in answers):
            raise ConversionError(f"{at}: a response other than 'yes' or 'no': {answers}")
        n_yes = answers.count("yes")
        out.append({**sent, "n_yes": n_yes, "majority_consistent": int(n_yes >= 2)})
    said_yes = {str(w): 0 for w in workers}
    for sent in sentences:
        for r in sent["responses"]:
            said_yes[str(r["worker_id"])] += r["response"] == "yes"
    n = len(out)
    majority = sum(s["majority_consistent"] for s in out)
    return {"doc_id": f"{dataset}-{index:03d}", "dataset": dataset, "system": system, "src": record["article"],
            "ref_summ": None, "sys_summ": " ".join(s["sentence"] for s in sentences),
            "scores": {"factuality": round(majority / n, 6), "consistent": int(majority == n),
                       "mean_yes": round(sum(s["n_yes"] for s in out) / (3 * n), 6)},
            "annotators": {"factuality": [round(said_yes[str(w)] / n, 6) for w in workers]},
            "worker_ids": workers, "summary_sentences": out}


def convert(fetched: Sequence, out: Path) -> None:
    """Write ``qags.jsonl.gz`` (474 rows) from the two verified MTurk files."""
    by_path = {f.source.path: f for f in fetched}
    if sorted(by_path) != sorted(DATASETS):
        raise ConversionError(f"expected the sources {sorted(DATASETS)}, got {sorted(by_path)}")
    rows = []
    for path, (dataset, system) in DATASETS.items():
        local = by_path[path].path
        with open(local, encoding="utf-8") as fh:
            lines = fh.read().split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        for index, line in enumerate(lines):
            where = f"{path}:{index + 1}"
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ConversionError(f"{where}: invalid JSON ({exc})") from None
            rows.append(_row(record, dataset, system, index, where))
    write_gzip(out, jsonl_bytes(rows), GZIP)
