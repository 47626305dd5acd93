"""``meta-eval judgments SET --export FILE``: a set's rows out, with the keys ``--scores`` joins on.

Every row of the set as loaded (after ``--subset``: the rows ``meta-eval run`` loads, in the same order, rows
without a human score included), as ``.jsonl``, ``.csv`` or ``.tsv`` (by the file's suffix):

- JSONL: a first line ``{"signatures": [], "judgments": SET, "subset": ..., "rows": N, "dimensions": [...]}`` (the
  header of meta-eval's score files, which ``--scores`` and ``meta-eval score -i`` skip), then one object per
  row: ``index`` (the row's position from 0), ``id``, ``doc_id``, ``system`` (null when the row has none),
  ``candidate``, ``references`` (a list), ``source`` (null when none) and ``human`` (``{dimension: score or
  null}``).
- CSV/TSV: a header ``index,id,doc_id,system,candidate,references,source,human.<dimension>...``, then one record
  per row, quoted where a text holds the separator, a quote or a line end (Python's :mod:`csv`, which
  ``--scores`` reads back); ``references`` is a JSON list in its cell; an empty cell is a missing system, source
  or human score.

To bring one's own scores, add a score column (or a ``score`` field) to the exported file and pass it as ``meta-eval
run -j SET --scores NAME=FILE``: the reader joins on ``id`` and ignores the exported text and human fields
(``candidate``, ``references``, ``source``, ``human``, ``human.<dimension>``; :mod:`meta_eval.scoring.imported`).
The file is written through the one write path (:class:`meta_eval.report.outputs.OutputPlan`): never into the
judgment data folder, never over an input, and over a file meta-eval did not write only with ``force``.
"""
from __future__ import annotations

import csv
import json
from pathlib import Path

from meta_eval.errors import MetaEvalError

__all__ = ["FORMATS", "export_rows", "write_rows"]

FORMATS = (".jsonl", ".csv", ".tsv")


def write_rows(path: Path, jset) -> None:
    """Write ``jset``'s rows to ``path`` (``.jsonl``, ``.csv`` or ``.tsv``; see the module docstring)."""
    suffix = Path(path).suffix.lower()
    dims = list(jset.dimensions)
    with open(path, "w", encoding="utf-8", newline="") as fh:
        if suffix == ".jsonl":
            fh.write(json.dumps({"signatures": [], "judgments": jset.name, "subset": jset.subset, "rows": len(jset),
                                 "dimensions": dims}, ensure_ascii=False) + "\n")
            for i, row in enumerate(jset.rows):
                fh.write(json.dumps({"index": i, "id": row.id, "doc_id": row.doc_id, "system": row.system,
                                     "candidate": row.candidate, "references": list(row.references),
                                     "source": row.source, "human": {d: row.scores.get(d) for d in dims}},
                                    ensure_ascii=False) + "\n")
            return
        writer = csv.writer(fh, delimiter="," if suffix == ".csv" else "\t", lineterminator="\n")
        writer.writerow(["index", "id", "doc_id", "system", "candidate", "references", "source",
                         *(f"human.{d}" for d in dims)])
        for i, row in enumerate(jset.rows):
            writer.writerow([i, row.id, row.doc_id, "" if row.system is None else row.system, row.candidate,
                             json.dumps(list(row.references), ensure_ascii=False),
                             "" if row.source is None else row.source,
                             *("" if row.scores.get(d) is None else repr(float(row.scores[d])) for d in dims)])


def export_rows(judgments: str, path, subset: str | None = None, data_dir=None, force: bool = False, *,
                say=None) -> Path:
    """``meta-eval judgments SET --export FILE`` as a function: write every row of ``judgments`` (after
    ``subset``) to ``path`` and return it.

    Raises
    ------
    meta_eval.errors.MetaEvalError
        An unknown suffix, an output the write path refuses (an input, the data folder, a user's file without
        ``force``), a set that cannot be loaded.
    """
    from meta_eval import judgments as judgment_sets
    from meta_eval.report.outputs import OutputPlan, as_path, atomic_write
    from meta_eval.task import check_judgments_argument

    check_judgments_argument(judgments)
    path = as_path(path, "--export")
    if path.suffix.lower() not in FORMATS:
        raise MetaEvalError(f"--export {path}: write .jsonl, .csv or .tsv (by the file's suffix)")
    path = OutputPlan(force=force, judgments=judgments, data_dir=data_dir).add(path, "--export")
    try:
        jset = judgment_sets.load(judgments, data_dir, subset=subset)
    except (judgment_sets.JudgmentError, judgment_sets.DataError, ValueError) as exc:
        raise MetaEvalError(str(exc)) from None
    atomic_write(path, lambda tmp: write_rows(tmp, jset))
    if say is not None:
        say("err", f"{jset.name} ({jset.subset}): {len(jset)} rows exported")
    return path
