"""WMT21 TED-talks expert MQM (Freitag et al.) from Google's TSV files into ``wmt21-mqm-ted/wmt21_mqm_ted.jsonl.gz``.

Sources: GitHub ``google/wmt-mqm-human-evaluation`` at commit ``7fadea28``, ``ted/ende/mqm_ted_ende.tsv`` and
``ted/zhen/mqm_ted_zhen.tsv``: one tab-separated row per marked error (Google MQM format; header ``system doc doc_id
seg_id rater source target category severity`` [``comment`` in en-de]); an error's span is marked ``<v>...</v>`` in
``target`` (or in ``source`` for omissions); ``No-error`` rows mark items without error.

Output (``shared/judgments/wmt21-mqm-ted/PROVENANCE.md``), one row per (language pair, segment, system), en-de first,
then by ``seg_id`` and system name (Python string order): ``doc_id`` ``<lp>:<seg_id>``, ``lp``, ``talk`` (``doc``),
``seg_in_talk`` (``doc_id``), ``seg_id``, ``system``, ``is_human`` (the human translations ``ref``, and ``refB`` for
zh-en), ``ref_system`` (the standard reference of ``mt-metrics-eval``'s ``wmt21.tedtalks``: ``ref`` for en-de,
``refB`` for zh-en), ``src`` and ``sys_summ`` (``source`` and ``target`` without the markers; they must be the same on
every row of an item), ``ref_summ`` (the reference system's translation of the segment) and ``ref_summs`` (every human
translation, the standard one first), ``scores.mqm`` (mean over the item's raters of minus the weighted error sum),
``annotators.mqm`` (per rater, in order of appearance), ``raters``, and ``errors`` (``rater``, ``severity``,
``category``, ``weight``, ``span``: the marked text, a list if several, ``side``: ``target`` or ``source``, and
``comment`` where the TSV has a non-empty one). Weights as in ``mt-metrics-eval`` ``converters/score_mqm.py``: Major 5,
Minor 1, Neutral 0, Minor ``Fluency/Punctuation`` 0.1, Major ``Non-translation`` 25; ``No-error`` rows count 0 and
are not errors. Scores are rounded to 6 decimals (sums of 0.1 weights), and ``-0.0`` is written ``0.0``.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from meta_eval.judgments.convert import ConversionError, GzipFormat, jsonl_bytes, write_gzip
from meta_eval.judgments.files import Source

_REPO, _COMMIT = "google/wmt-mqm-human-evaluation", "7fadea281aff8db61cc72fc3d469a4dca78b82a6"
SOURCES = (
    Source(_REPO, _COMMIT, "ted/ende/mqm_ted_ende.tsv",
           "3952dc904997dda31c03421243862cb8a093f9a712fd90dc97b9709b4bb387b3", 2341948),
    Source(_REPO, _COMMIT, "ted/zhen/mqm_ted_zhen.tsv",
           "d91fc0dd21c1949f1e7570671d01ceb1798ebd8d7ea8998844b1a35983de4ed3", 2597899),
)
# source path -> (language pair, human translations with the standard reference first)
PAIRS = {"ted/ende/mqm_ted_ende.tsv": ("en-de", ("ref",)), "ted/zhen/mqm_ted_zhen.tsv": ("zh-en", ("refB", "ref"))}
CONTENT_SHA256 = "d083cdd7fa85764c2e46ce2e631b9aa45ac6371ce1f401786ffe43dc34446bed"  # of the decompressed file
GZIP = GzipFormat()  # Python's GzipFile: level 9, mtime 0, no name
COLUMNS = ("system", "doc", "doc_id", "seg_id", "rater", "source", "target", "category", "severity")
_SPAN = re.compile(r"<v>(.*?)</v>", re.DOTALL)


def weight(severity: str, category: str, where: str = "") -> float:
    """MQM weight of one error (see the module docstring)."""
    if severity == "Major" and category.startswith("Non-translation"):
        return 25.0
    if severity == "Minor" and category == "Fluency/Punctuation":
        return 0.1
    weights = {"Major": 5.0, "Minor": 1.0, "Neutral": 0.0}
    if severity not in weights:
        raise ConversionError(f"{where}: unknown severity {severity!r}")
    return weights[severity]


def _strip(text: str) -> str:
    return text.replace("<v>", "").replace("</v>", "")


def _items(path: Path, name: str) -> dict:
    with open(path, encoding="utf-8", newline="") as fh:
        lines = fh.read().split("\n")
    header = lines[0].rstrip("\r").split("\t")
    if tuple(header[:len(COLUMNS)]) != COLUMNS:
        raise ConversionError(f"{name}:1: header {header} does not start with {list(COLUMNS)}")
    items: dict = {}
    for lineno, line in enumerate(lines[1:], 2):
        if not line:
            continue
        where = f"{name}:{lineno}"
        values = line.split("\t")
        if len(values) != len(header):
            raise ConversionError(f"{where}: {len(values)} fields, the header has {len(header)}")
        f = dict(zip(header, values))
        try:
            key = (int(f["seg_id"]), f["system"])
            seg_in_talk = int(f["doc_id"])
        except ValueError:
            raise ConversionError(f"{where}: seg_id/doc_id are not integers") from None
        src, tgt = _strip(f["source"]), _strip(f["target"])
        item = items.setdefault(key, {"talk": f["doc"], "seg_in_talk": seg_in_talk, "src": src, "tgt": tgt,
                                      "raters": [], "errors": []})
        if (item["src"], item["tgt"], item["talk"], item["seg_in_talk"]) != (src, tgt, f["doc"], seg_in_talk):
            raise ConversionError(f"{where}: texts or talk differ from the item's first row")
        if f["rater"] not in item["raters"]:
            item["raters"].append(f["rater"])
        if f["category"] == "No-error":
            continue
        spans, side = _SPAN.findall(f["target"]), "target"
        if not spans:
            found = _SPAN.findall(f["source"])
            spans, side = (found, "source") if found else (spans, "target")
        error = {"rater": f["rater"], "severity": f["severity"], "category": f["category"],
                 "weight": weight(f["severity"], f["category"], where),
                 "span": spans[0] if len(spans) == 1 else spans, "side": side}
        if f.get("comment"):
            error["comment"] = f["comment"]
        item["errors"].append(error)
    return items


def convert(fetched: Sequence, out: Path) -> None:
    """Write ``wmt21_mqm_ted.jsonl.gz`` (15,341 rows) from the two verified TSV files."""
    by_path = {f.source.path: f.path for f in fetched}
    if sorted(by_path) != sorted(PAIRS):
        raise ConversionError(f"expected the sources {sorted(PAIRS)}, got {sorted(by_path)}")
    rows = []
    for name, (lp, humans) in PAIRS.items():
        items = _items(by_path[name], name)
        for seg, system in sorted(items):
            item = items[(seg, system)]
            refs = []
            for human in humans:
                if (seg, human) not in items:
                    raise ConversionError(f"{name}: segment {seg} has no translation by {human!r}")
                refs.append(items[(seg, human)]["tgt"])
            per_rater = [round(-sum(e["weight"] for e in item["errors"] if e["rater"] == r), 6) + 0.0
                         for r in item["raters"]]
            rows.append({"doc_id": f"{lp}:{seg}", "lp": lp, "talk": item["talk"], "seg_in_talk": item["seg_in_talk"],
                         "seg_id": seg, "system": system, "is_human": system in humans, "ref_system": humans[0],
                         "src": item["src"], "ref_summ": refs[0], "ref_summs": refs, "sys_summ": item["tgt"],
                         "scores": {"mqm": round(sum(per_rater) / len(per_rater), 6) + 0.0},
                         "annotators": {"mqm": per_rater}, "raters": item["raters"], "errors": item["errors"]})
    write_gzip(out, jsonl_bytes(rows), GZIP)
