"""Bring your own judgments: a generic JSON-lines format that never guesses.

One JSON object per line (blank lines are skipped)::

    {"id": "d1:sysA",                       # optional, unique; default: the line number
     "doc_id": "d1",                        # optional (absent or null): the row is its own document
     "system": "sysA",                      # optional; needed by the summary and system levels
     "candidate": "the text being judged",  # required, a string (may be empty: metrics give documented values)
     "references": ["a reference", "..."],  # or "reference": "one reference"; optional for reference-free metrics
     "source": "the source document",       # optional
     "scores": {"overall": 0.5, "fluency": null},   # required: human score per dimension (number or null)
     "judges": {"overall": [0, 1]}}         # optional: per-judge values, a list per dimension

Rules (each choice is printed by ``meta-eval run`` and ``meta-eval judgments PATH``):

- Every error about the data names the file and the line (``f.jsonl:7: ...``), never a position in a batch:
  invalid JSON, bytes that are not UTF-8 (``f.jsonl:7: not valid UTF-8 (byte 0xe9 at column 31)``; the file must be
  UTF-8, a byte-order mark at its start is skipped), a text holding a lone surrogate escape (``"\\ud800"``),
  NaN/Infinity scores, arrays and objects nested more than 64 levels deep (:func:`check_depth`; Python's reader
  would end in a RecursionError), wrong types (e.g. a ``judges`` value that is not a list), and a row a chosen
  metric cannot score (no reference for a reference-based metric, no source for a source-based one: ``meta-eval
  run`` names the first such rows, :func:`meta_eval.scoring.runner.score_examples`).
- ids must be unique: ``f.jsonl:7: id 'x' on line 7 was already used on line 3``. A row without ``id`` takes its
  line number (as a string) as its id.
- Texts may be empty or whitespace only (every metric gives them a documented value); they are not errors.
- A score that is null or absent is *missing* for that dimension: the row is left out of that dimension's
  correlations (the count is reported), never imputed.
- ``system`` absent or null: the row has *no* system (it is not put in a system named "unknown"). The global level
  works; the summary and system levels are an error naming the file and the first such row. ``system`` is one name:
  ``"a;b"`` is a system called ``a;b`` (only the built-in chaganty set splits on ``;``).
- ``doc_id`` absent or null: the row is its own document (its id stands for the document; noted on the set with
  the first such line; an error naming both lines if another row gives that id as its ``doc_id``). Null is read as
  absent, as for ``system`` and scores, so a writer that emits null for a missing value (pandas) gets the same
  rows; it never becomes a document named "None". Such rows take no part in the summary level, whose documents
  need 3 or more systems.
- Repeated (document, system) pairs are an error naming the lines (``f.jsonl:3 and f.jsonl:7 both hold (document
  'd1', system 'A')``) unless a policy is chosen (``meta-eval run --duplicates mean|first``): ``mean`` averages the
  human *and* the metric scores of the repeated rows into one cell at the summary and system levels (the global
  level counts every row); ``first`` keeps the first row of each pair in file order and drops the others at every
  level, saying how many. ``meta-eval run`` looks for repeats among the rows that have a score for the chosen
  dimension (a repeat whose other row has no score there is no repeat for that dimension), before anything is
  scored. See :mod:`judgments.base`.
- Default human dimension: the file's only dimension; with several, the one named ``overall`` if the file has one
  (the convention of the built-in chaganty set), else the first key of the first row's ``scores``. The reason is
  kept in :attr:`JudgmentSet.default_reason`; ``meta-eval run`` prints it with the other dimensions and writes it to
  the JSON output as ``human_chosen_because``. Pass ``--human`` to choose.

Texts are repaired for mis-decoded UTF-8 (mojibake) with ``ftfy.fix_encoding``. A ``.jsonl.gz`` file is read
through gzip.
"""
from __future__ import annotations

import gzip
import json
import math
import re
import sys
import zlib
from pathlib import Path

from meta_eval.judgments.base import Judgment, JudgmentError, JudgmentSet, json_type, json_value
from meta_eval.judgments.limits import check_regular_file, iter_lines
from meta_eval.judgments.text import check_encodable, decode_line, repair_text, text_fixer

CONVENTIONAL_DEFAULT = "overall"


def _text(value: object, where: str, name: str, fix=repair_text) -> str:
    if not isinstance(value, str):
        raise JudgmentError(f"{where}: {name} must be a string, got {json_type(value)}")
    return fix(check_encodable(value, where, name, JudgmentError))


def _judges(value: object, where: str) -> dict[str, tuple[float, ...]]:
    """``judges``: an object of dimension -> list of numbers (null values, and a null list, are left out)."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise JudgmentError(f"{where}: 'judges' must be an object of dimension -> list of numbers, got "
                            f"{json_type(value)}")
    out = {}
    for dim, values in value.items():
        if values is None:
            continue
        if not isinstance(values, list):
            raise JudgmentError(f"{where}: judges[{dim!r}] must be a list of numbers (one per judge), got "
                                f"{json_value(values)}")
        numbers = (_number(v, where, f"a judges[{dim!r}] value") for v in values)
        out[str(dim)] = tuple(x for x in numbers if x is not None)
    return out


def _number(value: object, where: str, name: str = "human score") -> float | None:
    if value is None:
        return None
    try:
        number = float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else math.nan
    except OverflowError:  # an integer too large for a float (hundreds of digits)
        number = math.inf
    if not math.isfinite(number):
        raise JudgmentError(f"{where}: {name} {json_value(value)} is not a finite number or null")
    return number


def _label(obj: dict, key: str, where: str) -> str | None:
    """A string (or integer) label such as ``system``; None when absent or null."""
    value = obj.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise JudgmentError(f"{where}: {key!r} must be a string, got {json_type(value)}")
    if value == "":
        raise JudgmentError(f"{where}: {key!r} is empty; leave it out if the row has none")
    return str(value)


def _row(obj: object, where: str, lineno: int, fix=repair_text) -> Judgment:
    if not isinstance(obj, dict):
        raise JudgmentError(f"{where}: expected a JSON object")
    if "candidate" not in obj:
        raise JudgmentError(f"{where}: missing 'candidate'")
    if "scores" not in obj:
        raise JudgmentError(f"{where}: missing 'scores' (an object of dimension -> number)")
    if not isinstance(obj["scores"], dict):
        raise JudgmentError(f"{where}: 'scores' must be an object of dimension -> number, got "
                            f"{json_value(obj['scores'])}")
    if not obj["scores"]:
        raise JudgmentError(f"{where}: 'scores' is empty; give at least one dimension's score (number or null), "
                            "e.g. {\"overall\": 0.5}")
    refs = obj.get("references", [obj["reference"]] if "reference" in obj else [])
    if isinstance(refs, str) or not isinstance(refs, list):
        raise JudgmentError(f"{where}: 'references' must be a list of strings")
    source = obj.get("source")
    rid = _label(obj, "id", where) or str(lineno)
    return Judgment(
        id=rid, doc_id=_label(obj, "doc_id", where) or rid, system=_label(obj, "system", where),
        candidate=_text(obj["candidate"], where, "candidate", fix),
        references=tuple(_text(r, where, "a reference", fix) for r in refs),
        source=None if source is None else _text(source, where, "source", fix),
        scores={str(k): _number(v, where) for k, v in obj["scores"].items()},
        judges=_judges(obj.get("judges"), where), where=where)


def default_dimension(dims: tuple[str, ...], first: Judgment) -> tuple[str, str]:
    """The default human dimension of a file and why (the rule of the module docstring)."""
    if len(dims) == 1:
        return dims[0], "it is the file's only dimension"
    if CONVENTIONAL_DEFAULT in dims:
        return CONVENTIONAL_DEFAULT, (f"the file has a dimension named {CONVENTIONAL_DEFAULT!r}, the default by "
                                      "convention when a file has several")
    key = next(iter(first.scores))
    return key, f"it is the first key of the first row's scores ({first.where}) and no dimension is named 'overall'"


def iter_jsonl(path: str | Path, error: type[Exception] = JudgmentError):
    """Yield ``(where, object)`` for every non-blank line of a JSON-lines file (read through gzip for ``.gz``).

    ``where`` is ``"<path>:<line>"`` (lines counted from 1 as an editor does: ``\\n``, ``\\r\\n`` and ``\\r`` end a
    line). A missing, unreadable, corrupt or truncated file raises ``error`` naming the file; a line that is not
    UTF-8 (:func:`judgments.text.decode_line`: the line and the column) or not JSON raises it naming the line. A
    UTF-8 byte-order mark at the start of the file is skipped. Reading is bounded (:mod:`judgments.limits`): a FIFO,
    a device or a folder is refused before it is opened, and a line or a file over the limits raises ``error``
    naming the line and the limit.
    """
    path = check_regular_file(path, error)  # a FIFO or a device is refused before it is opened
    opener = gzip.open if path.suffix == ".gz" else open
    lineno = 0
    try:
        with opener(path, "rb") as fh:
            for lineno, raw in iter_lines(fh, path, error):  # bounded: judgments/limits.py
                where = f"{path}:{lineno}"
                line = decode_line(raw, where, error, first=lineno == 1)
                if not line.strip():
                    continue
                check_depth(line, where, error)
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise error(f"{where}: invalid JSON ({exc.msg} at column {exc.colno}); is the file "
                                "truncated?") from None
                except ValueError as exc:  # an integer of more digits than Python converts (sys.int_info)
                    limit = sys.get_int_max_str_digits()
                    raise error(f"{where}: cannot read this line's JSON: it holds an integer of more than {limit:,} "
                                "digits, which no score, id or label needs" if "digits" in str(exc) else
                                f"{where}: cannot read this line's JSON ({exc})") from None
                yield where, obj
    except FileNotFoundError:
        raise error(f"{path} does not exist") from None
    except (OSError, EOFError, zlib.error) as exc:
        after = f" after line {lineno}" if lineno else ""
        raise error(f"{path} cannot be read{after} ({type(exc).__name__}: {exc}); is it corrupt or "
                    "truncated?") from None


MAX_JSON_DEPTH = 64  # arrays and objects nested in one line; a judged row or a score line needs 3
_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')  # a string (skipped whole) or a bracket


def check_depth(line: str, where: str, error: type[Exception] = JudgmentError, limit: int = MAX_JSON_DEPTH) -> None:
    """``error`` naming ``where`` if the JSON text ``line`` nests arrays and objects more than ``limit`` deep.

    Python's JSON reader recurses once per level, so 100,000 nested ``[`` would end in a RecursionError (a
    traceback) instead of a sentence. Brackets inside strings do not count. A line with at most ``limit`` brackets
    cannot be too deep and is not scanned.
    """
    if line.count("[") + line.count("{") <= limit:
        return
    depth = 0
    for token in _JSON_TOKEN.finditer(line):
        t = token.group()
        if t in "[{":
            depth += 1
            if depth > limit:
                raise error(f"{where}: JSON nested more than {limit} levels deep (at column {token.start() + 1}); "
                            "meta-eval reads rows of a few levels only")
        elif t in "]}":
            depth -= 1


def check_ids(objects: list[tuple[str, dict]], rows: list[Judgment]) -> None:
    """Raise :class:`JudgmentError` at the first id used twice, naming both lines.

    A row without an ``id`` takes its line number as id, so it can collide with an explicit id such as ``"3"``;
    the message then says so.
    """
    first: dict[str, tuple[int, bool]] = {}
    for (where, obj), row in zip(objects, rows):
        line, given = int(where.rsplit(":", 1)[1]), obj.get("id") is not None
        if row.id not in first:
            first[row.id] = (line, given)
            continue
        earlier, earlier_given = first[row.id]
        defaulted = [str(n) for n, g in ((earlier, earlier_given), (line, given)) if not g]
        why = (f" (a row without an 'id' takes its line number as its id: line {' and '.join(defaulted)})"
               if defaulted else "")
        raise JudgmentError(f"{where}: id {row.id!r} on line {line} was already used on line {earlier}{why}; "
                            "each row needs its own id")


def load(path: str | Path, text: str = "repaired") -> JudgmentSet:
    """Load a judgments file in the generic JSON-lines format (see the module docstring).

    The set declares the duplicates policy ``"error"``: repeated (document, system) pairs are reported by
    :meth:`JudgmentSet.describe` and raise in :meth:`JudgmentSet.resolve_duplicates` unless a policy is chosen.
    """
    path = Path(path)
    objects = list(iter_jsonl(path))
    fix = text_fixer(text)
    rows = [_row(obj, where, int(where.rsplit(":", 1)[1]), fix) for where, obj in objects]
    if not rows:
        raise JudgmentError(f"{path} holds no judgments")
    check_ids(objects, rows)
    dims: dict[str, None] = {}
    for r in rows:
        dims.update(dict.fromkeys(r.scores))
    notes = []
    no_doc = [where for where, obj in objects if obj.get("doc_id") is None]
    named: dict[str, str] = {}  # document -> the first line that names it
    for (where, obj), row in zip(objects, rows):
        if obj.get("doc_id") is not None:
            named.setdefault(row.doc_id, where)
    for (where, obj), row in zip(objects, rows):
        if obj.get("doc_id") is None and row.doc_id in named:
            raise JudgmentError(f"{where}: the row has no 'doc_id', so its id {row.id!r} stands for its own "
                                f"document, but {named[row.doc_id]} names a document {row.doc_id!r} too; give "
                                "this row a doc_id (or another id)")
    if no_doc:
        notes.append(f"{len(no_doc)} of {len(rows)} rows have no 'doc_id' (the first: {no_doc[0]}): each of them is "
                     "its own document, so they take no part in the summary level")
    default, reason = default_dimension(tuple(dims), rows[0])
    name = path.name.split(".")[0]
    return JudgmentSet(name, rows, tuple(dims), default, description=f"user judgments {path}", duplicates="error",
                       default_reason=reason, notes=tuple(notes))
