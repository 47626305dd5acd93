"""FRANK (Pagnoni, Balachandran & Tsvetkov, NAACL 2021) from the authors' files into ``frank/frank.jsonl.gz``.

Sources (GitHub ``artidoro/frank``; see ``shared/judgments/frank/PROVENANCE.md``): the human scores
``data/human_annotations.json`` at commit ``80a88fb`` (a list of 2,246 records: ``hash``, ``model_name``, ``dataset``,
``split``, ``Factuality``, 11 error-category fields and their ``Flip_*`` fields), and the texts from the first
version of the repository, commit ``6308064`` (deleted in the next commit, hence pinned): one
``data/articles-wmetrics-reference-json/<hash>.json`` per article, 499 of them (:mod:`judgments.convert.frank_pins`).

Output, one row per annotation record, sorted by (``dataset``, ``doc_id``, ``system``): ``doc_id`` (the article hash),
``dataset`` (``cnndm`` or ``bbc``, as in the source), ``system`` (``model_name``), ``split``, ``src`` (``article``),
``ref_summ`` (CNN/DM: ``<model>_reference``; XSum: ``Gold_lines`` joined with one space, or ``reference`` where the file
has no ``Gold_lines``), ``sys_summ`` (``<model>_lines`` joined with one space: the sentence-split text that was
annotated), ``sys_summ_sentences`` (those lines), ``scores`` (``factuality`` = ``Factuality``, then the 11 categories)
and ``flip_scores`` (the ``Flip_*`` fields without the prefix). Texts unchanged (XSum's literal backslash escapes kept).
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from meta_eval.judgments.convert import ConversionError, GzipFormat, jsonl_bytes, write_gzip
from meta_eval.judgments.convert.frank_pins import PINS, TEXTS_COMMIT, TEXTS_FOLDER
from meta_eval.judgments.files import Source

_REPO = "artidoro/frank"
ANNOTATIONS = Source(_REPO, "80a88fb12cc0bfc17ff6ee2c5ebb0c4f4dd8a5f4", "data/human_annotations.json",
                     "7be2dfd49ad2f2582ab28578cce1dbf256fd46415a0f902a472421bca6fe31d2", 1847530)
TEXTS = tuple(Source(_REPO, TEXTS_COMMIT, f"{TEXTS_FOLDER}/{name}.json", sha, int(size))
              for sha, size, name in (line.split() for line in PINS.splitlines() if line.strip()))
SOURCES = (ANNOTATIONS,) + TEXTS
CONTENT_SHA256 = "74e73da4f62c8c916324fbab3c17b668aafc500b21fc544d03873bfe29d7dad9"  # of the decompressed file
GZIP = GzipFormat()  # Python's GzipFile: level 9, mtime 0, no name
CATEGORIES = ("Semantic_Frame_Errors", "Discourse_Errors", "Content_Verifiability_Errors", "RelE", "EntE", "CircE",
              "OutE", "GramE", "CorefE", "LinkE", "Other")


def _get(obj: dict, key: str, kind, where: str):
    value = obj.get(key) if isinstance(obj, dict) else None
    if kind is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConversionError(f"{where}: {key!r} is not a number: {value!r}")
    elif kind is list:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConversionError(f"{where}: {key!r} is not a list of strings")
    elif not isinstance(value, kind):
        raise ConversionError(f"{where}: {key!r} is missing or not a {kind.__name__}")
    return value


def _load_json(path: Path, name: str):
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ConversionError(f"{name}: invalid JSON ({exc})") from None


def convert(fetched: Sequence, out: Path) -> None:
    """Write ``frank.jsonl.gz`` (2,246 rows) from the verified annotations and article files."""
    by_path = {f.source.path: f.path for f in fetched}
    if ANNOTATIONS.path not in by_path:
        raise ConversionError(f"the source {ANNOTATIONS.path} is missing")
    records = _load_json(by_path[ANNOTATIONS.path], ANNOTATIONS.path)
    if not isinstance(records, list):
        raise ConversionError(f"{ANNOTATIONS.path}: expected a list of records")
    articles: dict[str, dict] = {}
    rows = []
    for i, rec in enumerate(records):
        where = f"{ANNOTATIONS.path}, record {i}"
        doc, model = _get(rec, "hash", str, where), _get(rec, "model_name", str, where)
        dataset, split = _get(rec, "dataset", str, where), _get(rec, "split", str, where)
        name = f"{TEXTS_FOLDER}/{doc}.json"
        if doc not in articles:
            if name not in by_path:
                raise ConversionError(f"{where}: its article {name} is not among the pinned sources")
            articles[doc] = _load_json(by_path[name], name)
        art = articles[doc]
        lines = _get(art, f"{model}_lines", list, name)
        if dataset == "cnndm":
            ref = _get(art, f"{model}_reference", str, name)
        elif "Gold_lines" in art:
            ref = " ".join(_get(art, "Gold_lines", list, name))
        else:
            ref = _get(art, "reference", str, name)
        rows.append({"doc_id": doc, "dataset": dataset, "system": model, "split": split,
                     "src": _get(art, "article", str, name), "ref_summ": ref, "sys_summ": " ".join(lines),
                     "sys_summ_sentences": lines,
                     "scores": {"factuality": _get(rec, "Factuality", float, where),
                                **{c: _get(rec, c, float, where) for c in CATEGORIES}},
                     "flip_scores": {c: _get(rec, f"Flip_{c}", float, where) for c in CATEGORIES}})
    rows.sort(key=lambda r: (r["dataset"], r["doc_id"], r["system"]))
    write_gzip(out, jsonl_bytes(rows), GZIP)
