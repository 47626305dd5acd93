"""Bring your own judgments: a generic JSON-lines format.

One JSON object per line (blank lines are skipped)::

    {"id": "d1:sysA",                       # optional, unique; default: the line number
     "doc_id": "d1", "system": "sysA",      # optional; default: the id, and "unknown"
     "candidate": "the text being judged",  # required, a string (may be empty: metrics give documented values)
     "references": ["a reference", "..."],  # or "reference": "one reference"; optional for reference-free metrics
     "source": "the source document",       # optional
     "scores": {"overall": 0.5, "fluency": null},   # required: human score per dimension (number or null)
     "judges": {"overall": [0, 1]}}         # optional: per-judge values

Rules: ids must be unique; a score that is null or absent is *missing* for that dimension and the row is left out
of that dimension's correlations (the count is reported), never imputed; NaN/Infinity are errors. Texts are repaired
for mis-decoded UTF-8 (mojibake) with ``ftfy.fix_encoding``. A ``.jsonl.gz`` file is read through gzip.
The default dimension is the first key of the first row's ``scores``.
"""
from __future__ import annotations

import gzip
import json
import math
import zlib
from pathlib import Path

from judgments.base import Judgment, JudgmentError, JudgmentSet
from judgments.essays import repair_text


def _text(value: object, where: str, name: str) -> str:
    if not isinstance(value, str):
        raise JudgmentError(f"{where}: {name} must be a string, got {type(value).__name__}")
    return repair_text(value)


def _number(value: object, where: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise JudgmentError(f"{where}: human score {value!r} is not a finite number or null")
    return float(value)


def _row(obj: object, where: str, lineno: int) -> Judgment:
    if not isinstance(obj, dict):
        raise JudgmentError(f"{where}: expected a JSON object")
    if "candidate" not in obj:
        raise JudgmentError(f"{where}: missing 'candidate'")
    if not isinstance(obj.get("scores"), dict) or not obj["scores"]:
        raise JudgmentError(f"{where}: missing 'scores' (an object of dimension -> number)")
    refs = obj.get("references", [obj["reference"]] if "reference" in obj else [])
    if isinstance(refs, str) or not isinstance(refs, list):
        raise JudgmentError(f"{where}: 'references' must be a list of strings")
    source = obj.get("source")
    rid = str(obj.get("id", lineno))
    judges = obj.get("judges") or {}
    if not isinstance(judges, dict):
        raise JudgmentError(f"{where}: 'judges' must be an object of dimension -> list of numbers")
    return Judgment(
        id=rid, doc_id=str(obj.get("doc_id", rid)), system=str(obj.get("system", "unknown")),
        candidate=_text(obj["candidate"], where, "candidate"),
        references=tuple(_text(r, where, "a reference") for r in refs),
        source=None if source is None else _text(source, where, "source"),
        scores={str(k): _number(v, where) for k, v in obj["scores"].items()},
        judges={str(k): tuple(x for x in (_number(v, where) for v in vals) if x is not None)
                for k, vals in judges.items()})


def iter_jsonl(path: str | Path, error: type[Exception] = JudgmentError):
    """Yield ``(where, object)`` for every non-blank line of a JSON-lines file (read through gzip for ``.gz``).

    ``where`` is ``"<path>:<line>"``; a missing, unreadable, corrupt or truncated file or an invalid line raises
    ``error`` with a message naming the file and the line.
    """
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt", encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                where = f"{path}:{lineno}"
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise error(f"{where}: invalid JSON ({exc.msg}); is the file truncated?") from None
                yield where, obj
    except FileNotFoundError:
        raise error(f"{path} does not exist") from None
    except (OSError, EOFError, zlib.error, UnicodeDecodeError) as exc:
        raise error(f"{path} cannot be read ({type(exc).__name__}: {exc}); is it corrupt or truncated?") from None


def load(path: str | Path) -> JudgmentSet:
    """Load a judgments file in the generic JSON-lines format (see the module docstring)."""
    path = Path(path)
    rows = [_row(obj, where, int(where.rsplit(":", 1)[1])) for where, obj in iter_jsonl(path)]
    if not rows:
        raise JudgmentError(f"{path} holds no judgments")
    dims: dict[str, None] = {}
    for r in rows:
        dims.update(dict.fromkeys(r.scores))
    name = path.name.split(".")[0]
    return JudgmentSet(name, rows, tuple(dims), next(iter(rows[0].scores)), description=f"user judgments {path}")
