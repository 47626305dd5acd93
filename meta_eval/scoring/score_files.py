"""Reading texts to score and writing per-example scores, for ``meta-eval score``.

Inputs are either parallel text files, one text per line (``--candidates``, any number of ``--references``,
optional ``--sources``; the same number of lines in each, an empty line is an empty text), or one JSON-lines file
(``--input``) with objects ``{"candidate": str, "references": [str, ...], "source": str}`` (``"reference": str`` is
accepted too). Texts are repaired for mis-decoded UTF-8 with ftfy (:func:`judgments.text.repair_text`), as the
judgment loaders do. Files must be UTF-8 (a byte-order mark at the start is skipped); every error about the data
names the file and the line, and the examples come back labelled with their line
(:class:`judgments.base.LabelledExamples`), so that the runner names the line of an example a metric cannot score
(e.g. one without a source).

Outputs: ``.jsonl`` (one object per example: its index and every variant's score), ``.csv`` or ``.tsv``
(a header row of variant names), chosen by the file extension.

What made a score file (``meta-eval score --output``, ``meta-eval run --scores-out``) is recorded with it
(:func:`file_header`): each metric's signature and the variants it wrote, the variant choice (``--variants``), the
rows chosen (``--limit``/``--sample``) and the ``provenance`` (:mod:`meta_eval.provenance`: the command line,
meta-eval's version, the SHA-256 of every input). In a JSONL file it is the first line, which
:mod:`meta_eval.scoring.imported` skips as a header; a CSV/TSV file stays a plain table (any tool reads it) and the
record goes beside it, into the sidecar ``<file>.meta.json`` (:func:`sidecar`, :func:`write_sidecar`), which also
holds the table's SHA-256, so that a sidecar tells whether the table is still the one it describes.
"""
from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from meta_eval.judgments.base import LabelledExamples
from meta_eval.judgments.limits import max_line_bytes, read_bytes
from meta_eval.judgments.text import check_encodable, decode_lines, repair_text
from meta_eval.metrics.base import Example

__all__ = ["SIDECAR", "file_header", "read_line_files", "read_jsonl", "sidecar", "write_row_scores", "write_scores",
           "write_sidecar"]

#: The suffix added to a CSV/TSV score file's name for its sidecar (``scores.csv`` -> ``scores.csv.meta.json``).
SIDECAR = ".meta.json"


def _lines(path: Path) -> list[str]:
    data = read_bytes(path)  # a regular file of bounded size (judgments/limits.py), else a ValueError
    longest = max_line_bytes()
    for lineno, line in enumerate(data.splitlines(), 1):
        if len(line) > longest:
            raise ValueError(f"{path}:{lineno}: a line longer than {longest:,} bytes, meta-eval's limit for one line "
                             "(set META_EVAL_MAX_LINE_BYTES to raise it)")
    lines = decode_lines(data, path, ValueError)
    if lines and lines[-1] == "":
        lines.pop()  # the final newline does not start another text
    return [repair_text(line.rstrip("\r")) for line in lines]


def read_line_files(candidates: Path, references: Sequence[Path] = (),
                    sources: Path | None = None) -> LabelledExamples:
    """Examples from parallel one-text-per-line files (all must have the same number of lines).

    Each example is labelled ``"line <n> of <candidates>[, <reference files>][, <sources>]"``.
    """
    cands = _lines(candidates)
    refs = [_lines(p) for p in references]
    srcs = _lines(sources) if sources is not None else None
    for path, lines in [*zip(references, refs), *([(sources, srcs)] if srcs is not None else [])]:
        if len(lines) != len(cands):
            raise ValueError(f"{path} has {len(lines)} lines but {candidates} has {len(cands)}; "
                             "the files must be parallel, one text per line")
    if not cands:
        raise ValueError(f"{candidates} holds no text")
    files = ", ".join(str(p) for p in (candidates, *references, *([sources] if sources is not None else [])))
    return LabelledExamples([Example(c, tuple(r[i] for r in refs), srcs[i] if srcs is not None else None)
                             for i, c in enumerate(cands)], [f"line {i} of {files}" for i in range(1, len(cands) + 1)])


def _text(value: str, where: str, name: str) -> str:
    return repair_text(check_encodable(value, where, name, ValueError))


def read_jsonl(path: Path) -> LabelledExamples:
    """Examples from a JSON-lines file of ``{"candidate", "references", "source"}`` objects, labelled
    ``"<path>:<line>"``. A first line that is meta-eval's own header (``{"signatures": ...}`` without a
    ``candidate``: ``meta-eval judgments SET --export rows.jsonl`` writes one, judgments/export.py) is skipped, as
    ``--scores`` skips it; the export's other fields (``id``, ``human``, ...) are not read."""
    from meta_eval.judgments.jsonl import iter_jsonl

    examples, labels, first = [], [], True
    for where, obj in iter_jsonl(path, ValueError):
        header, first = first and isinstance(obj, dict) and "signatures" in obj and "candidate" not in obj, False
        if header:  # meta-eval's header line, not an example
            continue
        if not isinstance(obj, dict) or not isinstance(obj.get("candidate"), str):
            raise ValueError(f"{where}: expected an object with a string 'candidate'")
        refs = obj.get("references", [obj["reference"]] if "reference" in obj else [])
        if not isinstance(refs, list) or not all(isinstance(r, str) for r in refs):
            raise ValueError(f"{where}: 'references' must be a list of strings")
        source = obj.get("source")
        if source is not None and not isinstance(source, str):
            raise ValueError(f"{where}: 'source' must be a string")
        examples.append(Example(_text(obj["candidate"], where, "candidate"),
                                tuple(_text(r, where, "a reference") for r in refs),
                                None if source is None else _text(source, where, "source")))
        labels.append(where)
    if not examples:
        raise ValueError(f"{path} holds no example")
    return LabelledExamples(examples, labels)


def file_header(scored: Sequence, variants: Mapping | None = None, provenance: Mapping | None = None,
                **more) -> dict:
    """What a score file records about itself: ``{"signatures": [...], **more, "metrics": [{"name", "signature",
    "variants"}, ...], "variants": ..., "provenance": ...}``.

    ``scored``: the :class:`~meta_eval.scoring.runner.MetricScores` written (each metric's signature, and the
    variants it wrote, which are the file's columns); ``variants``: the variant choice
    (:meth:`meta_eval.scoring.selection.VariantChoice.as_dict`: as given, the rule, the variants shown and hidden);
    ``provenance``: :func:`meta_eval.provenance.record`; ``more``: e.g. ``judgments``/``subset`` (``--scores-out``),
    ``rows`` (``--limit``/``--sample``). ``signatures`` comes first: it is how meta-eval recognises its own score
    files (:func:`meta_eval.report.outputs.written_by_meta_eval`) and the JSONL reader its header line.
    """
    return {"signatures": [ms.signature for ms in scored], **more,
            "metrics": [{"name": ms.metric, "signature": ms.signature, "variants": list(ms.scores)} for ms in scored],
            "variants": dict(variants) if variants is not None else None,
            "provenance": dict(provenance) if provenance is not None else None}


def sidecar(path: Path | None) -> Path | None:
    """The sidecar of a CSV/TSV score file (``<file>.meta.json``), which holds its :func:`file_header`; None for a
    JSONL file (its first line holds it) or no file."""
    if path is None or Path(path).suffix.lower() not in (".csv", ".tsv"):
        return None
    return Path(path).with_name(Path(path).name + SIDECAR)


def write_sidecar(path: Path, header: Mapping) -> None:
    """Write the sidecar of the CSV/TSV score file ``path`` (already written; nothing for a JSONL file) through the
    one write path (:func:`meta_eval.report.outputs.write_json`: the ``written_by`` marker first, atomically):
    ``{"written_by", "scores_file": <its name>, "format": "csv"|"tsv", "sha256": <its bytes' SHA-256>, **header}``."""
    from meta_eval.provenance import digest
    from meta_eval.report.outputs import write_json

    side = sidecar(path)
    if side is None:
        return
    write_json(side, {"scores_file": Path(path).name, "format": Path(path).suffix.lower()[1:],
                      "sha256": digest(path), **header})


def write_scores(path: Path, scores: Mapping[str, np.ndarray], signatures: Sequence[str],
                 index: Sequence[int] | None = None, header: Mapping | None = None) -> None:
    """Write per-example scores as .jsonl, .csv or .tsv (atomically: a temporary file, then a rename).

    ``index``: each example's position in the input (default 0, 1, ...; a ``--sample`` keeps the drawn rows'
    positions, so the file still joins as ``--scores`` by ``index``); ``header``: more keys of the JSONL's first
    line after ``signatures`` (:func:`file_header`'s; a CSV/TSV file's go to its sidecar, :func:`write_sidecar`)."""
    names = list(scores)
    n = len(next(iter(scores.values()))) if scores else 0
    index = list(range(n)) if index is None else list(index)
    tmp = path.with_name(path.name + ".tmp")
    suffix = path.suffix.lower()
    if suffix not in (".jsonl", ".csv", ".tsv"):
        raise ValueError(f"unknown output format {path.suffix!r}: use .jsonl, .csv or .tsv")
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(tmp, "w", encoding="utf-8", newline="") as fh:
        if suffix == ".jsonl":
            fh.write(json.dumps({"signatures": list(signatures),
                                 **{k: v for k, v in (header or {}).items() if k != "signatures"}}) + "\n")
            for i in range(n):
                fh.write(json.dumps({"index": index[i], **{v: float(scores[v][i]) for v in names}}) + "\n")
        else:
            writer = csv.writer(fh, delimiter="," if suffix == ".csv" else "\t")
            writer.writerow(["index", *names])
            for i in range(n):
                writer.writerow([index[i], *(repr(float(scores[v][i])) for v in names)])
    tmp.replace(path)


def write_row_scores(path: Path, jset, scored, labels: dict | None = None, header: Mapping | None = None) -> None:
    """``meta-eval run --scores-out``: every row's metric scores with the set's row keys, as ``.jsonl``, ``.csv`` or
    ``.tsv``, the format ``--scores`` reads back (:mod:`meta_eval.scoring.imported`).

    JSONL: a first line ``{"signatures": [...], "judgments": ..., "subset": ...}``, then one object per row:
    ``{"id", "doc_id", "system", <variant>: score, ...}``, then, for the variants whose system score is not the
    mean of their rows (a corpus score: a system-level run of BLEU, chrF, TER), one line per system
    ``{"system", <variant>: score, ...}``, so that a system-level run reads back the same system scores. CSV/TSV: a
    header ``index,id,doc_id,system,<variants>`` (``index`` numbers the lines from 0; the row is named by ``id``),
    row scores only. Scores are the metrics' own values, not oriented (TER stays lower-is-better).

    ``labels``: column -> one text per row, written after the keys (a categorical run's ``human``: the row's label,
    which ``--scores`` does not read as a score); a label metric's score is the index of its answer in its
    ``label_space``, as the run reads it. ``header``: more keys of the JSONL's first line (:func:`file_header`'s:
    ``metrics``, ``variants``, ``provenance``; a CSV/TSV file's go to its sidecar, :func:`write_sidecar`).
    """
    columns = {v: s for ms in scored for v, s in ms.scores.items()}
    names = list(columns)
    labels = labels or {}
    suffix = path.suffix.lower()
    with open(path, "w", encoding="utf-8", newline="") as fh:
        if suffix == ".jsonl":
            fh.write(json.dumps({"signatures": [ms.signature for ms in scored], "judgments": jset.name,
                                 "subset": jset.subset, **{k: v for k, v in (header or {}).items()
                                                           if k not in ("signatures", "judgments", "subset")}})
                     + "\n")
            for i, row in enumerate(jset.rows):
                fh.write(json.dumps({"id": row.id, "doc_id": row.doc_id, "system": row.system,
                                     **{k: values[i] for k, values in labels.items()},
                                     **{v: float(columns[v][i]) for v in names}}) + "\n")
            own = {v: by_system for ms in scored for v, by_system in (ms.system or {}).items()}
            for system in sorted({s for by_system in own.values() for s in by_system}):
                fh.write(json.dumps({"system": system, **{v: float(own[v][system]) for v in own}}) + "\n")
        elif suffix in (".csv", ".tsv"):
            writer = csv.writer(fh, delimiter="," if suffix == ".csv" else "\t")
            writer.writerow(["index", "id", "doc_id", "system", *labels, *names])
            for i, row in enumerate(jset.rows):
                writer.writerow([i, row.id, row.doc_id, row.system, *(values[i] for values in labels.values()),
                                 *(repr(float(columns[v][i])) for v in names)])
        else:
            raise ValueError(f"unknown scores format {path.suffix!r}: use .jsonl, .csv or .tsv")
