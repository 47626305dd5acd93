"""SummEval and REALSumm from BARTScore's pickles (``neulab/BARTScore``, ``SUM/SummEval/data.pkl`` and
``SUM/REALSumm/data.pkl`` at commit 248f511), into ``summeval/summeval.jsonl.gz`` and ``realsumm/realsumm.jsonl.gz``.

Input (the structure BARTScore's ``SUM/`` scripts read): a dict ``{doc_id: {"src": str, "ref_summ": str,
["ref_summs": [str, ...]], "sys_summs": {system: {"sys_summ": str, "scores": {dimension: number}}}}}``. It is read
with :func:`judgments.safe_pickle.load_plain` (no global can load, only plain data is accepted), after its SHA-256
matched, and checked field by field (an error names the file, document and system).

Output: one JSON line per (document, system), documents and systems in the pickle's order, keys ``doc_id`` (the
document key as a string: REALSumm's keys are ints), ``system``, ``src``, ``ref_summ``, ``ref_summs`` (SummEval only),
``sys_summ``, ``scores``; texts and scores exactly as in the pickle, written by :func:`judgments.convert.jsonl_bytes`.
Nothing is dropped, renamed, or normalised. The result is the files' shared ``PROVENANCE.md`` describes.

Gzip: the published files were written by GNU gzip ``-9`` (header: the original name ``bartscore_<set>.jsonl``, its
modification time, XFL 2, OS 3). zlib's deflate at level 9 with memory level 9 yields the same deflate stream, so
:data:`SUMMEVAL_GZIP` and :data:`REALSUMM_GZIP` reproduce them byte for byte (checked with zlib 1.2.13; a different
deflate implementation yields the same decompressed bytes, the equivalence :mod:`judgments.files` accepts).
"""
from __future__ import annotations

import numbers
from collections.abc import Sequence
from pathlib import Path

from meta_eval.judgments.convert import ConversionError, GzipFormat, jsonl_bytes, write_gzip
from meta_eval.judgments.safe_pickle import load_plain

SUMMEVAL_GZIP = GzipFormat(name="bartscore_SummEval.jsonl", mtime=1795303538, level=9, mem_level=9, os_code=3)
REALSUMM_GZIP = GzipFormat(name="bartscore_REALSumm.jsonl", mtime=1795303539, level=9, mem_level=9, os_code=3)


def _field(record: dict, key: str, kind: type, where: str):
    if not isinstance(record, dict) or key not in record:
        raise ConversionError(f"{where}: no field {key!r}")
    value = record[key]
    if not isinstance(value, kind) or isinstance(value, bool):
        raise ConversionError(f"{where}: {key!r} is a {type(value).__name__}, not a {kind.__name__}")
    return value


def bartscore_rows(data: object, source: str, multi_ref: bool) -> list[dict]:
    """The JSON rows of a BARTScore ``SUM/*/data.pkl`` object, in its order (see the module docstring)."""
    if not isinstance(data, dict) or not data:
        raise ConversionError(f"{source}: expected a non-empty dict of documents, got {type(data).__name__}")
    rows = []
    for doc_id, doc in data.items():
        where = f"{source}: document {doc_id!r}"
        src, ref = _field(doc, "src", str, where), _field(doc, "ref_summ", str, where)
        refs = _field(doc, "ref_summs", list, where) if multi_ref else None
        if refs is not None and not all(isinstance(r, str) for r in refs):
            raise ConversionError(f"{where}: 'ref_summs' holds something other than strings")
        systems = _field(doc, "sys_summs", dict, where)
        if not systems:
            raise ConversionError(f"{where}: no systems")
        for system, out in systems.items():
            at = f"{where}, system {system!r}"
            if not isinstance(system, str):
                raise ConversionError(f"{at}: the system name is not a string")
            summary, scores = _field(out, "sys_summ", str, at), _field(out, "scores", dict, at)
            for dim, value in scores.items():
                if not isinstance(dim, str) or not isinstance(value, numbers.Real) or isinstance(value, bool):
                    raise ConversionError(f"{at}: score {dim!r} = {value!r} is not a number")
            row = {"doc_id": str(doc_id), "system": system, "src": src, "ref_summ": ref}
            if multi_ref:
                row["ref_summs"] = refs
            row.update(sys_summ=summary, scores=scores)
            rows.append(row)
    return rows


def _convert(fetched: Sequence, out: Path, expected_path: str, multi_ref: bool, fmt: GzipFormat) -> None:
    if len(fetched) != 1 or fetched[0].source.path != expected_path:
        raise ConversionError(f"expected the one source {expected_path}, got {[f.source.path for f in fetched]}")
    source, path = fetched[0]
    data = load_plain(path, sha256=source.sha256)
    write_gzip(out, jsonl_bytes(bartscore_rows(data, source.path, multi_ref)), fmt)


def summeval(fetched: Sequence, out: Path) -> None:
    """Write ``summeval.jsonl.gz`` (1,600 rows) from ``SUM/SummEval/data.pkl``."""
    _convert(fetched, out, "SUM/SummEval/data.pkl", True, SUMMEVAL_GZIP)


def realsumm(fetched: Sequence, out: Path) -> None:
    """Write ``realsumm.jsonl.gz`` (2,400 rows) from ``SUM/REALSumm/data.pkl``."""
    _convert(fetched, out, "SUM/REALSumm/data.pkl", False, REALSUMM_GZIP)
