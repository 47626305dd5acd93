"""Imported scores: a metric computed elsewhere (COMET, an LLM judge, a new metric), read from a file.

``meta-eval run -j SET --scores NAME=FILE`` (repeatable; ``NAME:lower=FILE`` when lower is better) makes NAME a
metric like any other: every statistic and level, baselines, significance, clusters, ceilings, the learned
combination and leaderboards use its scores unchanged. mt-metrics-eval's workflow ("write your metric's score files,
compare them with the baselines") and SacreROUGE's metric JSONL files are the models.

Formats (by extension, or ``fmt``: ``jsonl``, ``csv``, ``tsv``, ``mtme``)
-------------------------------------------------------------------------
Every line (row of a table) names what it scores with one kind of key, the same for the whole file:

- ``id``: the set's row id (``meta-eval judgments SET`` shows them; a JSONL set's ``id`` field);
- ``doc_id`` and ``system``: the (document, system) pair, when it names one row of the set;
- ``index``: the row's position (from 0) in the set as loaded: the key of ``meta-eval score``'s output, so a file
  written by ``meta-eval score --input`` on the set's texts in the set's order reads back;
- ``system`` alone: a **system-level** score (used at the system level instead of the mean of row scores; see
  :mod:`meta_eval.scoring.system_scores`). A JSONL file may hold such lines beside its row lines.

The scores are the other fields: ``score`` (the variant is NAME), or several named ones (top-level numbers, or a
``scores`` object): each becomes the variant ``NAME/<field>``. The texts and human scores of a file exported by
``meta-eval judgments SET --export`` (``candidate``, ``references``, ``source``, ``human``, ``human.<dimension>``)
are not scores and are skipped, so an exported file with a score column added reads back
(:mod:`judgments.export`). A first JSONL line ``{"signatures": ...}`` (what
``meta-eval score`` and ``--scores-out`` write) is read as a header, not a row.

- **JSONL** (``.jsonl``, ``.jsonl.gz``): one object per line.
- **CSV / TSV** (``.csv``, ``.tsv``): a header row naming the key columns and the score columns.
- **mt-metrics-eval** (``.seg.score``, ``.sys.score``; Google's ``<metric>-<refs>.<level>.score`` files):
  ``system<TAB>score`` lines. In a ``.seg.score`` file the i-th line of a system scores segment i (from 1) of the
  language pair, so it reads only against a set whose rows carry the segment order (document ids ``<lp>:<n>``, as
  wmt21-mqm-ted and wmt23 have); a ``.sys.score`` file holds one line per system. These files cover every segment
  and system of the test set, rated or not: their lines for segments or systems the set does not hold (unrated
  segments, the human references) are left out and counted, never an error.

Joins are strict, checked before anything is scored: a judged row without a score, a score for no row of the set,
a repeated key and a non-finite or non-numeric value are each one :class:`~meta_eval.errors.MetaEvalError` naming
the file, the line and the first few keys (how many in all). In JSONL a score is a JSON number (the string ``"0.5"`` is
an error); in the text formats a decimal (``0.5``, ``-3``, ``1e-4``; not ``1_000``). Files are read line by line,
within meta-eval's input limits (:mod:`judgments.limits`). A score for a row the set holds but the run leaves out
(no human score, a repeated pair dropped by ``--duplicates first``) is not an error. With ``missing="drop"``
(``--scores-missing drop``) the rows without a score are dropped instead, from every metric alike, and the count is
printed and saved.

Every imported metric has a signature: ``imported:NAME|file:<name>|sha256:<first 16 hex>|rows:<n>|format:<fmt>|
key:<kind>|orientation:higher|lower``; a changed file is a new signature. Imported scores never enter the score
cache: they are read from the file every run.
"""
from __future__ import annotations

import csv
import hashlib
import math
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from meta_eval.errors import MetaEvalError
from meta_eval.metrics.registry import RESERVED_VARIANTS

__all__ = ["FORMATS", "ImportedScores", "ScoreSpec", "ScoreTable", "join_scores", "parse_spec", "read_table"]

FORMATS = ("jsonl", "csv", "tsv", "mtme")
MISSING = ("error", "drop")
_SHOWN = 3  # keys named in a message
_KEYS = ("id", "index", "doc_id", "system")
# the texts and human scores of a file written by `meta-eval judgments SET --export` (judgments/export.py): not scores;
# with the keys, the names no variant may take (metrics.registry.RESERVED_VARIANTS, the one list of them)
_ROW_FIELDS = tuple(name for name in RESERVED_VARIANTS if name not in _KEYS)


def _is_score_field(name: str) -> bool:
    return name not in _KEYS and name not in _ROW_FIELDS and not name.startswith("human.")
#: why a command without --scores-missing (learn, leaderboard publish) refuses a row without a finite score
_EVERY_ROW = "this command needs a score for every judged row"
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")  # a number written as text


@dataclass(frozen=True)
class ScoreSpec:
    """One ``--scores NAME[:lower]=FILE``."""

    name: str
    path: Path
    lower: bool = False
    fmt: str | None = None


def spec_path(text) -> Path | None:
    """The file a ``--scores NAME=FILE`` text names, as :func:`parse_spec` reads it (stripped, ``~`` expanded), for
    the output checks; None where the text names none (its error is :func:`parse_spec`'s)."""
    if not isinstance(text, str) or "=" not in text or not text.split("=", 1)[1].strip():
        return None
    return Path(text.split("=", 1)[1].strip()).expanduser()


def parse_spec(text: str, fmt: str | None = None) -> ScoreSpec:
    """``"NAME=FILE"`` or ``"NAME:lower=FILE"`` (also ``:higher``) as a :class:`ScoreSpec`.

    Examples
    --------
    >>> parse_spec("ter:lower=ter.jsonl")
    ScoreSpec(name='ter', path=PosixPath('ter.jsonl'), lower=True, fmt=None)
    """
    head, sep, path = str(text).partition("=")
    name, _, orientation = head.partition(":")
    name = name.strip()
    if not sep or not name or not path.strip():
        raise MetaEvalError(f"--scores {text!r}: write NAME=FILE (or NAME:lower=FILE when lower is better)")
    if orientation not in ("", "lower", "higher"):
        raise MetaEvalError(f"--scores {text!r}: the orientation after ':' is 'lower' or 'higher', not "
                            f"{orientation!r}")
    if any(c in name for c in "/,|= ") or name.startswith("-"):
        raise MetaEvalError(f"--scores {text!r}: a metric name has no '/', ',', '|', '=' or blank")
    if name in RESERVED_VARIANTS or name.startswith("human."):
        raise MetaEvalError(f"--scores {text!r}: {name!r} is a row column of a score file "
                            f"({', '.join(RESERVED_VARIANTS)}, human.<x>), not a metric name")
    if fmt is not None and fmt not in FORMATS:
        raise MetaEvalError(f"--scores-format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    return ScoreSpec(name, spec_path(str(text)), orientation == "lower", fmt)


def _format(spec: ScoreSpec) -> str:
    if spec.fmt is not None:
        return spec.fmt
    name = spec.path.name.lower()
    if name.endswith((".seg.score", ".sys.score")):
        return "mtme"
    for suffix, fmt in ((".jsonl", "jsonl"), (".jsonl.gz", "jsonl"), (".csv", "csv"), (".tsv", "tsv")):
        if name.endswith(suffix):
            return fmt
    raise MetaEvalError(f"{spec.path}: cannot tell the score file's format from its name; use .jsonl, .csv, .tsv, "
                        f".seg.score or .sys.score, or pass --scores-format ({', '.join(FORMATS)})")


@dataclass
class ScoreTable:
    """A score file as read: one key and one value per variant per line, and the system-level lines."""

    spec: ScoreSpec
    fmt: str
    key: str | None  # "id", "index", "pair", "segment"; None when the file holds system scores only
    variants: list[str]
    keys: list = field(default_factory=list)
    lines: list[int] = field(default_factory=list)
    values: list[tuple[float, ...]] = field(default_factory=list)
    system: dict[str, dict[str, float]] = field(default_factory=dict)  # variant -> system -> score
    system_lines: dict[str, int] = field(default_factory=dict)
    sha256: str = ""
    seconds: float = 0.0
    system_path: Path | None = None  # the file of the system lines, where another file than the rows' (merged)

    @property
    def where(self) -> str:
        return str(self.spec.path)

    @property
    def system_where(self) -> str:
        """The file whose lines :attr:`system_lines` number (a ``.sys.score`` merged into its ``.seg.score``)."""
        return str(self.system_path or self.spec.path)


def _number(value, where: str, column: str, text: bool = False, offers_drop: bool = True) -> float:
    """A score as a finite float. ``text``: the value is a cell of a text format (CSV, TSV, mt-metrics-eval), whose
    numbers are written as text; in JSON a score is a JSON number, and a string (``"0.5"``) is an error.
    ``offers_drop``: whether the command has ``--scores-missing drop`` (:func:`read_table`)."""
    if isinstance(value, str) and not text:
        raise MetaEvalError(f"{where}: the score {column!r} is {_shown(value, text)}, not a number: in a JSON-lines "
                            "file a score is a JSON number, never a string (write 0.5, not \"0.5\")")
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise MetaEvalError(f"{where}: the score {column!r} is {_shown(value, text)}, not a number")
    try:
        x = float(value)
        if isinstance(value, str) and not _DECIMAL.fullmatch(value.strip()) and math.isfinite(x):
            raise ValueError(value)  # Python's float() also takes "1_000" and other scripts' digits
    except ValueError:
        raise MetaEvalError(f"{where}: the score {column!r} is {_shown(value, text)}, not a number (a decimal such "
                            "as 0.5, -3 or 1e-4)") from None
    except OverflowError:  # an integer of hundreds of digits: too large for a float
        x = math.inf
    if not math.isfinite(x):
        raise MetaEvalError(f"{where}: the score {column!r} is {_shown(value, text)}; scores must be finite numbers "
                            + ("(leave the row out of the file and pass --scores-missing drop to drop it)"
                               if offers_drop else f"({_EVERY_ROW})"))
    return x


def _shown(value, text: bool = False, most: int = 40) -> str:
    """A value as a message shows it, at most ``most`` characters (a long integer: its first digits and length): a
    JSON value in JSON's words (``true``, ``null``, ``"high"``: :func:`judgments.base.json_value`), a cell of a text
    format (``text``) quoted as text."""
    from meta_eval.judgments.base import json_value

    if not text or not isinstance(value, str):
        return json_value(value, most)
    shown = repr(value)
    return shown if len(shown) <= most else f"{shown[:most]}... ({len(shown)} characters)"


def _key_kind(fields: Iterable[str], where: str) -> str | None:
    fields = set(fields)
    if "id" in fields:
        return "id"
    if "index" in fields:
        return "index"
    if "doc_id" in fields:
        if "system" not in fields:
            raise MetaEvalError(f"{where}: 'doc_id' without 'system'; a row is named by 'id', 'index', or "
                                "'doc_id' with 'system'")
        return "pair"
    if "system" in fields:
        return None  # a system-level score
    raise MetaEvalError(f"{where}: no key: name the row with 'id', 'index', or 'doc_id' and 'system' (or give "
                        "'system' alone for a system-level score)")


def _key(kind: str, obj, where: str):
    if kind == "index":
        value = obj["index"]
        try:
            index = int(value)
        except (TypeError, ValueError):
            index = -1
        if isinstance(value, bool) or index < 0 or (isinstance(value, float) and value != index) \
                or (isinstance(value, str) and value.strip() != str(index)):
            raise MetaEvalError(f"{where}: 'index' must be a row position (an integer from 0), not {_shown(value)}")
        return index
    if kind == "id":
        return _label(obj["id"], where, "id")
    return _label(obj["doc_id"], where, "doc_id"), _label(obj["system"], where, "system")


def _label(value, where: str, name: str) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int)) or (isinstance(value, str) and not value):
        raise MetaEvalError(f"{where}: {name!r} must be a non-empty string (or an integer), not {_shown(value)}")
    return str(value)


def _score_fields(obj: dict, where: str) -> dict[str, object]:
    nested = obj.get("scores")
    if nested is not None:
        if not isinstance(nested, dict) or not nested:
            raise MetaEvalError(f"{where}: 'scores' must be a non-empty object of named scores")
        return nested
    fields = {k: v for k, v in obj.items() if _is_score_field(k)}
    if not fields:
        raise MetaEvalError(f"{where}: no score: give 'score', a 'scores' object, or named score fields")
    return fields


def _variant(name: str, fields: Sequence[str]) -> list[str]:
    return [name] if list(fields) == ["score"] else [f"{name}/{f}" for f in fields]


class _Builder:
    """Collects the lines of one file, checking that every line has the same key kind and score fields."""

    def __init__(self, spec: ScoreSpec, fmt: str, offers_drop: bool = True):
        self.spec, self.fmt, self.offers_drop = spec, fmt, offers_drop
        self.kind: str | None = None
        self.fields: list[str] | None = None
        self.sys_fields: list[str] | None = None
        self.first_where = ""
        self.table = ScoreTable(spec, fmt, None, [])

    def add(self, fields: dict[str, object], kind: str | None, key, where: str, lineno: int,
            text: bool = False) -> None:
        names = list(fields)  # a JSON object's keys have no order: compared as sets, read in the first line's order
        if kind is None:
            if self.sys_fields is None:
                self.sys_fields = names
            elif set(names) != set(self.sys_fields):
                raise MetaEvalError(f"{where}: the system line's scores {names} differ from the first one's "
                                    f"{self.sys_fields}")
            names = self.sys_fields
            system = key
            if system in self.table.system_lines:
                raise MetaEvalError(f"{where}: system {system!r} is scored twice (first at line "
                                    f"{self.table.system_lines[system]})")
            self.table.system_lines[system] = lineno
            for f, variant in zip(names, _variant(self.spec.name, names)):
                self.table.system.setdefault(variant, {})[system] = _number(fields[f], where, f, text,
                                                                            self.offers_drop)
            return
        if self.kind is None:
            self.kind, self.fields, self.first_where = kind, names, where
        elif kind != self.kind:
            raise MetaEvalError(f"{where}: this line names its row by {_KIND_TEXT[kind]}, but {self.first_where} "
                                f"by {_KIND_TEXT[self.kind]}; use one kind of key in a file")
        elif set(names) != set(self.fields):
            raise MetaEvalError(f"{where}: the scores {names} differ from those of {self.first_where} "
                                f"{self.fields}")
        names = self.fields
        self.table.keys.append(key)
        self.table.lines.append(lineno)
        self.table.values.append(tuple(_number(fields[f], where, f, text, self.offers_drop) for f in names))

    def done(self) -> ScoreTable:
        table = self.table
        if self.fields is None and self.sys_fields is None:
            raise MetaEvalError(f"{self.spec.path} holds no scores")
        row_variants = _variant(self.spec.name, self.fields) if self.fields is not None else None
        sys_variants = _variant(self.spec.name, self.sys_fields) if self.sys_fields is not None else None
        if row_variants and sys_variants and not set(sys_variants) <= set(row_variants):
            raise MetaEvalError(f"{self.spec.path}: the system lines score {sys_variants}, which the row lines "
                                f"{row_variants} do not all score")
        table.key, table.variants = self.kind, row_variants or sys_variants
        return table


_KIND_TEXT = {"id": "'id'", "index": "'index'", "pair": "'doc_id' and 'system'", None: "'system' alone",
              "segment": "segment order"}


def _read_jsonl(spec: ScoreSpec, builder: _Builder) -> None:
    from meta_eval.judgments.base import json_type
    from meta_eval.judgments.jsonl import iter_jsonl

    first = True
    for where, obj in iter_jsonl(spec.path, MetaEvalError):
        lineno = int(where.rsplit(":", 1)[1])
        if not isinstance(obj, dict):
            raise MetaEvalError(f"{where}: expected a JSON object, got {json_type(obj)}")
        if first and "signatures" in obj and not (set(obj) & set(_KEYS)):
            first = False
            continue  # the header of meta-eval's own files
        first = False
        kind = _key_kind(obj, where)
        key = _label(obj["system"], where, "system") if kind is None else _key(kind, obj, where)
        builder.add(_score_fields(obj, where), kind, key, where, lineno)


def _lines(spec: ScoreSpec):
    """``(line number, text)`` of the file's lines, UTF-8, streamed within meta-eval's input limits
    (:mod:`judgments.limits`): memory grows with the longest line, not with the file or the limits."""
    from meta_eval.judgments.limits import check_regular_file, iter_lines
    from meta_eval.judgments.text import decode_line

    path = check_regular_file(spec.path, MetaEvalError)
    try:
        with open(path, "rb") as handle:
            for lineno, raw in iter_lines(handle, path, MetaEvalError):
                yield lineno, decode_line(raw, f"{path}:{lineno}", MetaEvalError, first=lineno == 1)
    except OSError as exc:
        raise MetaEvalError(f"{path} cannot be read ({type(exc).__name__}: {exc})") from None


def _read_table(spec: ScoreSpec, builder: _Builder, delimiter: str) -> None:
    # line by line (a quoted field may hold line ends): never the whole file in memory
    reader = csv.reader((line + "\n" for _, line in _lines(spec)), delimiter=delimiter, strict=True)
    try:
        header = next(reader, None)
        if not header or not any(h.strip() for h in header):
            raise MetaEvalError(f"{spec.path}:1: no header row (key columns such as id, or doc_id and system, "
                                "then score columns)")
        header = [h.strip() for h in header]
        if "" in header:  # "id," named a score column "" (a variant "mine/"); a trailing separator is the same
            raise MetaEvalError(f"{spec.path}:1: column {header.index('') + 1} of the header has no name (a "
                                "separator at the end of the line?); name every column")
        repeated = sorted({h for h in header if header.count(h) > 1})
        if repeated:
            raise MetaEvalError(f"{spec.path}:1: the header repeats {', '.join(map(repr, repeated))}")
        kind = _key_kind(header, f"{spec.path}:1")
        columns = [h for h in header if _is_score_field(h)]
        if not columns:
            raise MetaEvalError(f"{spec.path}:1: no score column besides the keys {header}")
        for cells in reader:
            lineno = reader.line_num
            where = f"{spec.path}:{lineno}"
            if not cells or (len(cells) == 1 and not cells[0].strip()):
                continue
            if len(cells) != len(header):
                raise MetaEvalError(f"{where}: {len(cells)} fields where the header has {len(header)}")
            obj = dict(zip(header, cells))
            key = _label(obj["system"], where, "system") if kind is None else _key(kind, obj, where)
            builder.add({c: obj[c] for c in columns}, kind, key, where, lineno, text=True)
    except csv.Error as exc:
        raise MetaEvalError(f"{spec.path}:{reader.line_num}: {exc}") from None


def _read_mtme(spec: ScoreSpec, builder: _Builder) -> None:
    system_level = spec.path.name.lower().endswith(".sys.score")
    seen: dict[str, int] = {}
    for lineno, line in _lines(spec):
        if not line.strip():
            continue
        where = f"{spec.path}:{lineno}"
        parts = line.rstrip("\r").split("\t")
        if len(parts) != 2 or not parts[0]:
            raise MetaEvalError(f"{where}: expected 'system<TAB>score' (mt-metrics-eval's score file format)")
        system, value = parts
        if system_level:
            builder.add({"score": value}, None, system, where, lineno, text=True)
        else:
            seen[system] = seen.get(system, 0) + 1
            builder.add({"score": value}, "segment", (seen[system], system), where, lineno, text=True)


def read_table(spec: ScoreSpec, offers_drop: bool = True) -> ScoreTable:
    """Read and check one score file (see the module notes); its SHA-256 and reading time are recorded.

    ``offers_drop``: whether the command reading it has ``--scores-missing drop`` (``run`` has; ``learn`` and
    ``leaderboard publish`` have not), so that an error's advice names only what the command offers."""
    started = time.perf_counter()
    fmt = _format(spec)
    if not spec.path.is_file():
        raise MetaEvalError(f"--scores {spec.name}: {spec.path} does not exist" if not spec.path.exists()
                            else f"--scores {spec.name}: {spec.path} is not a regular file")
    builder = _Builder(spec, fmt, offers_drop)
    if fmt == "jsonl":
        _read_jsonl(spec, builder)
    elif fmt in ("csv", "tsv"):
        _read_table(spec, builder, "," if fmt == "csv" else "\t")
    else:
        _read_mtme(spec, builder)
    table = builder.done()
    digest = hashlib.sha256()
    with open(spec.path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 22), b""):
            digest.update(chunk)
    table.sha256 = digest.hexdigest()
    _check_repeats(table)
    table.seconds = time.perf_counter() - started
    return table


def _check_repeats(table: ScoreTable) -> None:
    first: dict = {}
    repeats = []
    for key, line in zip(table.keys, table.lines):
        if key in first:
            repeats.append((key, first[key], line))
        else:
            first[key] = line
    if repeats:
        key, a, b = repeats[0]
        raise MetaEvalError(f"{table.where}:{b}: {_show(table.key, key)} is scored again (first at line {a}); "
                            f"{len(repeats)} repeated key(s) in all")


def _show(kind: str | None, key) -> str:
    if kind == "pair":
        return f"(document {key[0]!r}, system {key[1]!r})"
    if kind == "segment":
        return f"segment {key[0]} of system {key[1]!r}"
    if kind == "index":
        return f"row index {key}"
    return f"row {key!r}"


def _listed(items: Sequence[str], total: int) -> str:
    shown = ", ".join(items[:_SHOWN])
    return shown + (f" (and {total - _SHOWN} more)" if total > _SHOWN else "")


@dataclass
class ImportedScores:
    """One imported metric joined to a set's rows: what :func:`join_scores` returns per score file."""

    name: str
    spec: ScoreSpec
    table: ScoreTable
    values: dict[int, tuple[float, ...]]  # row position in the loaded set -> one value per variant
    ignored: int = 0  # lines for segments or systems the set does not hold (mt-metrics-eval files)

    @property
    def signature(self) -> str:
        from meta_eval.metrics.base import package_version

        t = self.table
        rows = len(t.keys) if t.key is not None else 0
        parts = [f"imported:{self.name}", f"file:{t.spec.path.name}", f"sha256:{t.sha256[:16]}", f"rows:{rows}",
                 f"format:{t.fmt}", f"key:{t.key or 'system'}"]
        if t.system:
            parts.append(f"systems:{len(next(iter(t.system.values())))}")
        parts += [f"orientation:{'lower' if t.spec.lower else 'higher'}", f"meta-eval=={package_version('meta-eval')}"]
        return "|".join(parts)

    def describe(self) -> dict:
        t = self.table
        return {"metric": self.name, "file": str(t.spec.path), "sha256": t.sha256, "format": t.fmt,
                "key": t.key or "system", "rows": len(t.keys), "systems": len(next(iter(t.system.values())))
                if t.system else 0, "orientation": "lower" if t.spec.lower else "higher",
                "variants": t.variants, "ignored_lines": self.ignored, "signature": self.signature}


def merge_tables(tables: Sequence[ScoreTable]) -> list[ScoreTable]:
    """One table per metric name: a name given twice is allowed for a row-level file and a system-level one
    (mt-metrics-eval's ``.seg.score`` and ``.sys.score``), which become one metric; anything else is an error."""
    by_name: dict[str, ScoreTable] = {}
    for t in tables:
        other = by_name.get(t.spec.name)
        if other is None:
            by_name[t.spec.name] = t
            continue
        rows, systems = (t, other) if t.key is not None else (other, t)
        if rows.key is None or systems.key is not None or rows.system or rows.variants != systems.variants \
                or rows.spec.lower != systems.spec.lower:
            raise MetaEvalError(f"--scores {t.spec.name} is given twice ({other.where} and {t.where}); a name may "
                                "be given twice only for one row-level and one system-level file of the same "
                                "scores and orientation")
        rows.system, rows.system_lines, rows.system_path = systems.system, systems.system_lines, systems.spec.path
        rows.sha256 = hashlib.sha256((rows.sha256 + systems.sha256).encode()).hexdigest()
        rows.seconds += systems.seconds
    return list(by_name.values())


def _row_index(jset, kind: str):
    """key -> row position of the loaded set, for a key kind."""
    rows = jset.rows
    if kind == "id":
        return {r.id: i for i, r in enumerate(rows)}
    if kind == "index":
        return None  # positions themselves
    if kind == "pair":
        out: dict = {}
        for i, r in enumerate(rows):
            key = (r.doc_id, r.system)
            out[key] = -1 if key in out else i  # -1: the pair names several rows
        return out
    out = {}
    prefixes = set()
    for i, r in enumerate(rows):
        head, sep, number = r.doc_id.rpartition(":")
        if not sep or not number.isdigit():
            raise MetaEvalError(f"an mt-metrics-eval .seg.score file needs a set whose rows carry the segment order "
                                f"(document ids <lp>:<n>, as wmt21-mqm-ted and wmt23 have); {jset.name} row "
                                f"{r.id!r} has document {r.doc_id!r}")
        prefixes.add(head)
        out[(int(number), r.system)] = i
    if len(prefixes) > 1:
        raise MetaEvalError(f"an mt-metrics-eval .seg.score file scores one language pair, but the set pools "
                            f"{', '.join(sorted(prefixes))}: run one pair at a time")
    return out


def join_scores(tables: Sequence[ScoreTable], loaded, kept: Sequence[int], missing: str = "error",
                offers_drop: bool = True) -> tuple[list[ImportedScores], list[int]]:
    """Join score files to a set's rows, strictly.

    Parameters
    ----------
    tables : sequence of ScoreTable
    loaded : judgments.JudgmentSet
        The set as loaded (every row of the subset): keys are matched against its rows.
    kept : sequence of int
        Positions in ``loaded`` of the rows the run keeps (those with a human score, after duplicates).
    missing : {"error", "drop"}
        A kept row without a score in some file: an error, or dropped (for every metric).
    offers_drop : bool
        Whether the command has ``--scores-missing drop`` (``run``); else (``learn``, ``leaderboard publish``) the
        error for a row without a score does not advise it.

    Returns
    -------
    imported : list of ImportedScores
    keep : list of int
        The positions of ``kept`` that every file scores (all of ``kept`` unless ``missing="drop"``).

    Raises
    ------
    MetaEvalError
        A key that names no row of the set, a (document, system) key that names several rows, or (unless
        ``missing="drop"``) a kept row without a score: naming the file, the line or the keys, and how many.
    """
    if missing not in MISSING:
        raise MetaEvalError(f"--scores-missing must be error or drop, not {missing!r}")
    n_loaded = len(loaded.rows)
    kept_set = set(kept)
    out, covered_all = [], set(kept)
    for t in tables:
        values: dict[int, tuple[float, ...]] = {}
        ignored = 0
        if t.key is not None:
            index = _row_index(loaded, t.key)
            unknown, foreign = [], set()  # foreign: systems of a .seg.score's ignored lines
            for key, line, vals in zip(t.keys, t.lines, t.values):
                if index is None:
                    pos = key if key < n_loaded else None
                else:
                    pos = index.get(key)
                if pos == -1:
                    raise MetaEvalError(f"{t.where}:{line}: {_show(t.key, key)} names several rows of "
                                        f"{loaded.name}; key the file by 'id' instead")
                if pos is None:
                    if t.key == "segment":
                        ignored += 1  # an unrated segment, or a system the subset leaves out
                        foreign.add(key[1])
                        continue
                    unknown.append((line, key))
                    continue
                values[pos] = vals
            if unknown:
                line, key = unknown[0]
                raise MetaEvalError(f"{t.where}:{line}: {_show(t.key, key)} is not a row of {loaded.name} "
                                    f"({loaded.subset}); {len(unknown)} line(s) of the file score no row: "
                                    + _listed([f"line {a}" for a, _ in unknown], len(unknown)))
            absent = [p for p in kept if p not in values]
            if absent and missing == "error":
                names = [loaded.rows[p].id for p in absent]
                lacking = sorted({loaded.rows[p].system for p in absent} - {None})
                foreign -= {loaded.rows[p].system for p in range(n_loaded)}
                spelt = (f"; the systems without scores are {_listed([repr(x) for x in lacking], len(lacking))}, and "
                         f"the file scores systems the set does not have: "
                         f"{_listed([repr(x) for x in sorted(foreign)], len(foreign))} (a name spelt otherwise?)"
                         if t.key == "segment" and foreign and lacking else "")
                raise MetaEvalError(f"{t.where}: no score for {len(absent)} of the {len(kept)} judged rows of "
                                    f"{loaded.name} ({loaded.subset}): {_listed([repr(x) for x in names], len(names))}"
                                    + spelt
                                    + ("; score them, or pass --scores-missing drop to leave them out of every "
                                       "metric's statistics" if offers_drop else f"; score them ({_EVERY_ROW})"))
            covered_all &= set(values)
        if t.system:
            systems = {s for p in kept_set for s in loaded.row_systems(loaded.rows[p])} if kept_set else set()
            for variant, by_system in t.system.items():
                extra = [s for s in by_system if s not in systems]
                if t.fmt == "mtme":
                    ignored += len(extra)
                    for s in extra:
                        del by_system[s]
                elif extra:
                    line = t.system_lines[extra[0]]
                    raise MetaEvalError(f"{t.system_where}:{line}: system {extra[0]!r} is not a system of "
                                        f"{loaded.name} ({loaded.subset}); {len(extra)} system line(s) score no "
                                        "system: " + _listed([repr(s) for s in extra], len(extra)))
                lacking = sorted(systems - set(by_system))
                if lacking:
                    raise MetaEvalError(f"{t.system_where}: no system score for {len(lacking)} of the {len(systems)} "
                                        f"systems of {loaded.name} ({loaded.subset}): "
                                        + _listed([repr(s) for s in lacking], len(lacking)))
        out.append(ImportedScores(t.spec.name, t.spec, t, values, ignored))
    keep = [p for p in kept if p in covered_all]
    return out, keep


def metric_scores(imported: ImportedScores, rows: Sequence[int], loaded):
    """The :class:`~meta_eval.scoring.runner.MetricScores` of an imported metric over ``rows`` (positions in
    ``loaded``): row scores from the file; for a file with system scores only, each row holds its system's score
    (usable at the system level only, which :func:`check_levels` enforces)."""
    from meta_eval.scoring.runner import MetricScores

    t = imported.table
    scores: dict[str, np.ndarray] = {}
    if t.key is not None:
        matrix = np.array([imported.values[p] for p in rows], dtype=np.float64).reshape(len(rows), len(t.variants))
        scores = {v: matrix[:, k].copy() for k, v in enumerate(t.variants)}
    else:
        for v in t.variants:
            scores[v] = np.array([t.system[v][loaded.rows[p].system] for p in rows], dtype=np.float64)
    system = {v: dict(t.system[v]) for v in t.variants if v in t.system} if t.system else None
    return MetricScores(imported.name, imported.signature, not t.spec.lower, scores, computed=0, cached=0,
                        seconds=t.seconds, system=system, system_mode="file" if system else "mean")


def check_levels(imported: Sequence[ImportedScores], level: str, statistic: str) -> None:
    """A file with system scores only can be used at the system level only (and not by SPA, which needs
    segment scores): else a :class:`MetaEvalError` naming it."""
    from meta_eval.scoring.system_scores import uses_system_scores

    for imp in imported:
        if imp.table.key is None and not uses_system_scores(level, statistic):
            raise MetaEvalError(f"--scores {imp.name}: {imp.table.where} holds system-level scores only, so it can "
                                f"be used at --level system (not by SPA, which needs segment scores); this run is "
                                f"--level {level} --statistic {statistic}")


def without_imported(requested: str | None, imported: Sequence[ImportedScores]) -> tuple[str | None, bool]:
    """``--metrics`` without the names of imported metrics (they are not in the registry), and whether it named
    nothing else (then no registered metric runs)."""
    names = {imp.name for imp in imported}
    if not requested or not names:
        return requested, False
    given = [m.strip() for m in requested.split(",") if m.strip()]
    rest = [m for m in given if m not in names]
    return (",".join(rest) or None), not rest


def check_names(imported: Sequence[ImportedScores], chosen) -> None:
    """One namespace for a run's names, checked before anything is scored.

    An imported metric may not take the name of a registered metric (or of a chosen one), and a variant name is
    unique across the run's sources: the chosen metrics (built-in or plugin) and the imported score files. A clash
    is a :class:`MetaEvalError` naming both sources (``--scores rouge1-f (FILE) clashes with the variant rouge1-f of
    the metric rouge (built-in)``); it is never resolved by one row silently replacing the other. Only the sources of
    this run are compared: a plugin variant named like one of a built-in metric that the run does not choose is no
    clash. Without imported metrics the registry is not listed (that would import every installed plugin).
    """
    seen: dict[str, str] = {}  # variant -> the source that gave it first
    for m in chosen:
        source = f"the variant {{variant}} of the metric {m.name} ({metric_origin(type(m))})"
        for variant in m.variants:
            _claim(seen, variant, source.format(variant=variant),
                   "rename one of the two variants, or run the two metrics separately")
    for imp in imported:
        source = f"--scores {{variant}} ({imp.table.where})"
        for variant in imp.table.variants:
            _claim(seen, variant, source.format(variant=variant),
                   f"rename it: --scores NEWNAME={imp.table.where}" if variant == imp.name else
                   f"rename it: --scores NEWNAME={imp.table.where} gives NEWNAME/<field>")
    if not imported:
        return
    from meta_eval.metrics import registry

    clash = sorted({imp.name for imp in imported} & ({m.name for m in chosen} | set(registry.names())))
    if clash:
        raise MetaEvalError(f"--scores {clash[0]}: the name is a meta-eval metric; give the imported scores "
                            "another name")


def _claim(seen: dict[str, str], variant: str, source: str, fix: str) -> None:
    first = seen.setdefault(variant, source)
    if first is not source:
        raise MetaEvalError(f"{source} clashes with {first}: a variant name must be unique in a run (built-in "
                            f"metrics, plugins and --scores share one namespace); {fix}")


def metric_origin(cls: type) -> str:
    """Where a metric class comes from, for messages: ``built-in``, ``plugin file PATH`` or ``plugin module.Class``."""
    from meta_eval.metrics.plugin_files import origin

    path = origin(cls)
    if path is not None:
        return f"plugin file {path}"
    module = getattr(cls, "__module__", "") or ""
    if module.startswith("meta_eval.metrics."):  # meta-eval's own modules (the learned family's classes too)
        return "built-in"
    return f"plugin {module}.{cls.__qualname__}"
