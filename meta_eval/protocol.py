"""Named protocols: what a paper's table fixed, as a small declarative file, and how meta-eval's numbers compare.

A protocol (``meta_eval/protocols/<name>.toml``) names a paper and one or more *parts*, each one table block: the
judgment set and subset, the human dimension, the level (global, summary or system), the correlation, the metrics and
their options (references policy, ROUGE variant options, ...) and the numbers the paper printed for the variants.
``meta-eval run --protocol NAME`` (or ``--protocol path/to/file.toml``) runs every part and prints meta-eval's number
beside the printed one; ``meta-eval protocols`` lists them with their tolerances and expected verdict counts.

Each printed cell gets one verdict (:attr:`Cell.verdict`):

- ``match``: meta-eval's value rounds to the printed number at the printed precision, the number of decimals written
  in the file (``0.2500`` is printed to 4 decimals, ``0.25`` to 2): |meta-eval - printed| <= half a unit in the last
  printed place, the half included (papers round ties either way);
- ``within``: not a match, but |meta-eval - printed| <= the part's tolerance; the status text names the bound
  (``within 0.005``);
- ``known mismatch``: beyond the tolerance, and the file names the reason (``[part.unmatched]``);
- ``MISMATCH``: beyond the tolerance with no reason (``meta-eval run --protocol`` then exits 1);
- ``not run``: the metric could not run here.

Both comparisons are made on the numbers as decimal text (meta-eval's value by its shortest ``repr``, the printed
number and the tolerance as written), so a difference of exactly the tolerance is within it: 0.4 against a printed
0.3 is within 0.1, although ``0.4 - 0.3 > 0.1`` in binary floating point. A reason given for a cell that matches is
stale (the tests flag it); a reason for a cell within the tolerance is shown beside it.

File format (TOML)::

    name = "sms-2019"
    title = "Sentence Mover's Similarity, Table 2"
    citation = "E. Clark, A. Celikyilmaz and N. A. Smith (2019). ... ACL 2019."
    source = "Table 2 (GloVe columns)"           # where in the paper or its authors' repository
    notes = "free text: what the paper fixed and what meta-eval does differently"
    expected = {match = 1, within = 0, known = 0}  # optional: the verdict counts a run gives (the tests check them;
                                                 # the three add up to the printed cells, MISMATCH and not run are 0)

    [[part]]
    name = "summaries"
    judgments = "chaganty"                       # a built-in set
    subset = "sms"                               # optional, the set's default otherwise
    text = "as-released"                         # optional: skip the loader's mojibake repair (essays, JSONL)
    human = "overall"                            # the human dimension
    level = "global"                             # global | summary | system
    correlation = "spearman"                     # spearman | pearson | kendall, or statistic = "accuracy" |
                                                 # "acc-t" | "spa" | "pdp" (the key is either name)
    permutations = 1000                          # optional, spa: permutations behind each system pair's p-value
    spa_seed = 4                                 # optional, spa: the seed of the permutation signs (WMT24: 4)
    metrics = ["rouge", "wms", "sms", "s+wms"]
    options = {refs = "max"}                     # optional: KEY=VALUE for every metric that takes KEY
    baseline = "rougeL-f"                        # optional: significance tests against this variant
    tolerance = 0.02                             # |meta-eval - printed| allowed for a cell to be "within"
    max_p = 0.05                                 # optional, summary level only: average only over documents whose
                                                 # own correlation has p <= max_p (REALSumm's analysis did this)
    [part.printed]                               # variant -> the printed number, written with the paper's decimals
    "rougeL-f" = 0.117                           # (0.250 if the paper printed 0.250: the precision of a match)
    [part.labels]                                # optional: variant -> the paper's row label
    "rougeL-f" = "ROUGE-L"
    [part.unmatched]                             # optional: variant -> why that cell cannot match
    "rougeL-f" = "the paper's ROUGE-L is ..."

A protocol file outside ``meta_eval/protocols`` is run by its path (a name ending in ``.toml``); a ``judgments`` path
in it (a ``.jsonl`` file) is read as the command line reads ``--judgments``, relative to the working directory.
"""
from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

from meta_eval.errors import MetaEvalError

__all__ = ["Cell", "Part", "Protocol", "ProtocolError", "VERDICTS", "compare", "load_protocol", "protocol_names",
           "PROTOCOL_DIR"]

PROTOCOL_DIR = Path(__file__).resolve().parent / "protocols"
LEVELS = ("global", "summary", "system")
CORRELATIONS = ("spearman", "pearson", "kendall")
#: the verdicts of a cell, in the order the counts list them
VERDICTS = ("match", "within", "known mismatch", "MISMATCH", "not run")
#: the keys of a protocol's ``expected`` table and the verdict each counts
EXPECTED = {"match": "match", "within": "within", "known": "known mismatch"}


class ProtocolError(ValueError, MetaEvalError):
    """A protocol file is missing or malformed (a ValueError for older callers and a
    :class:`~meta_eval.errors.MetaEvalError`, exit code 2)."""

    def __init__(self, message: str, code: int = 2):
        MetaEvalError.__init__(self, message, code)


@dataclass(frozen=True)
class Part:
    """One table block of a paper: the set, dimension, level, correlation, metrics and the printed numbers."""

    name: str
    judgments: str
    human: str
    level: str
    correlation: str
    metrics: tuple[str, ...]
    printed: dict[str, float]
    tolerance: float
    subset: str | None = None
    options: dict[str, str] = field(default_factory=dict)
    baseline: str | None = None
    labels: dict[str, str] = field(default_factory=dict)
    unmatched: dict[str, str] = field(default_factory=dict)
    max_p: float | None = None
    text: str = "repaired"
    written: dict[str, str] = field(default_factory=dict)
    permutations: int = 1000
    """SPA: the permutations behind each system pair's p-value."""
    spa_seed: int | None = None
    """SPA: the seed of the permutation signs (WMT24: 4), apart from the resampling seed."""

    def label(self, variant: str) -> str:
        return self.labels.get(variant, variant)

    def printed_text(self, variant: str) -> str:
        """The printed number of ``variant`` as written in the file (``"0.250"``), else the shortest text of the
        float (a :class:`Part` built in code with ``0.25`` is printed to 2 decimals: give ``written={"x": "0.250"}``
        for 3)."""
        return self.written.get(variant) or repr(float(self.printed[variant]))


@dataclass(frozen=True)
class Protocol:
    """A paper's table(s) as meta-eval runs them."""

    name: str
    title: str
    citation: str
    source: str
    parts: tuple[Part, ...]
    notes: str = ""
    path: Path | None = None
    expected: dict[str, int] | None = None

    @property
    def cells(self) -> int:
        """The number of printed cells over all parts."""
        return sum(len(p.printed) for p in self.parts)


@dataclass(frozen=True)
class Cell:
    """One printed number beside meta-eval's, and the verdict (module docstring)."""

    part: str
    variant: str
    label: str
    printed: float
    meta_eval: float | None
    tolerance: float
    reason: str | None
    written: str | None = None

    @property
    def difference(self) -> float | None:
        return None if self.meta_eval is None else self.meta_eval - self.printed

    @property
    def text(self) -> str:
        """The printed number as written (``written``), else the shortest text of the float ``printed``."""
        return self.written or repr(float(self.printed))

    @property
    def precision(self) -> int:
        """The decimals of the printed number as written: 4 for ``0.2500``."""
        return _decimals(Decimal(self.text))

    def _gap(self) -> Decimal | None:
        """|meta-eval - printed| in decimal arithmetic on the numbers' texts; None when not run or not finite."""
        if self.meta_eval is None or not math.isfinite(self.meta_eval):
            return None
        return abs(Decimal(repr(float(self.meta_eval))) - Decimal(self.text))

    @property
    def matches(self) -> bool:
        """Whether meta-eval's value rounds to the printed number at the printed precision (a tie counts)."""
        gap = self._gap()
        return gap is not None and gap <= Decimal(5).scaleb(-self.precision - 1)

    @property
    def within(self) -> bool:
        """Whether |meta-eval - printed| <= the tolerance, the bound included (a match is also within)."""
        gap = self._gap()
        return gap is not None and gap <= Decimal(repr(float(self.tolerance)))

    @property
    def verdict(self) -> str:
        """One of :data:`VERDICTS`: ``match``, ``within``, ``known mismatch``, ``MISMATCH`` or ``not run``."""
        if self.meta_eval is None:
            return "not run"
        if self.matches:
            return "match"
        if self.within:
            return "within"
        return "known mismatch" if self.reason else "MISMATCH"

    @property
    def status(self) -> str:
        """The verdict as shown: a cell within the tolerance names the bound (``within 0.005``)."""
        verdict = self.verdict
        return f"within {self.tolerance:g}" if verdict == "within" else verdict

    def as_dict(self) -> dict:
        return {"part": self.part, "variant": self.variant, "label": self.label, "printed": self.printed,
                "printed_text": self.text, "decimals": self.precision, "meta_eval": self.meta_eval,
                "difference": self.difference, "tolerance": self.tolerance, "status": self.status,
                "verdict": self.verdict, "reason": self.reason}


def _decimals(number: Decimal) -> int:
    """The decimals written in ``number``'s text: 3 for ``0.250``, 0 for ``12``, 2 for ``2.5E-1``."""
    return max(0, -number.as_tuple().exponent)


def protocol_names(directory: Path = PROTOCOL_DIR) -> list[str]:
    """Names of the protocols shipped with meta-eval (the ``.toml`` files of ``directory``), sorted."""
    return sorted(p.stem for p in Path(directory).glob("*.toml"))


def _get(table: dict, key: str, kind, where: str, default=..., choices=None):
    if key not in table:
        if default is ...:
            raise ProtocolError(f"{where}: missing {key!r}")
        return default
    value = table[key]
    if kind is float and isinstance(value, (int, Decimal)) and not isinstance(value, bool):
        value = float(value)
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        raise ProtocolError(f"{where}: {key!r} must be {getattr(kind, '__name__', kind)}, got {value!r}")
    if choices is not None and value not in choices:
        raise ProtocolError(f"{where}: {key!r} must be one of {', '.join(choices)}, got {value!r}")
    return value


def _numbers(table: object, where: str) -> tuple[dict[str, float], dict[str, str]]:
    """The printed numbers and their texts as written (floats are read as :class:`~decimal.Decimal`: 0.250 stays
    ``"0.250"``)."""
    if not isinstance(table, dict) or not table:
        raise ProtocolError(f"{where}: must be a non-empty table of variant = number")
    out, written = {}, {}
    for key, value in table.items():
        if isinstance(value, bool) or not isinstance(value, (int, float, Decimal)) or not math.isfinite(value):
            raise ProtocolError(f"{where}: {key!r} must be a finite number, got {value!r}")
        out[str(key)] = float(value)
        written[str(key)] = str(value)
    return out, written


def _expected(table: object, cells: int, where: str) -> dict[str, int]:
    if not isinstance(table, dict) or set(table) != set(EXPECTED):
        raise ProtocolError(f"{where}: 'expected' must be a table {{match = N, within = N, known = N}}, got "
                            f"{table!r}")
    bad = [k for k, v in table.items() if isinstance(v, bool) or not isinstance(v, int) or v < 0]
    if bad:
        raise ProtocolError(f"{where}: 'expected' {bad[0]!r} must be a count (an integer >= 0)")
    if sum(table.values()) != cells:
        raise ProtocolError(f"{where}: 'expected' counts add up to {sum(table.values())}, the parts print {cells} "
                            "cells")
    return {k: table[k] for k in EXPECTED}


def _strings(table: object, where: str) -> dict[str, str]:
    if not isinstance(table, dict):
        raise ProtocolError(f"{where}: must be a table of key = string")
    bad = [k for k, v in table.items() if not isinstance(v, str) or not v.strip()]
    if bad:
        raise ProtocolError(f"{where}: {bad[0]!r} must be a non-empty string")
    return {str(k): str(v) for k, v in table.items()}


#: What a part may compute besides the correlations (``statistic = ...``); pdp: mt-metrics-eval's pairwise
#: difference Pearson, grouped by item
PAIRWISE = ("accuracy", "acc-t", "spa", "pdp")


def _statistic(table: dict, where: str) -> str:
    """The part's statistic: ``correlation`` (a correlation) or ``statistic`` (also accuracy, acc-t, spa)."""
    if "correlation" in table and "statistic" in table and table["correlation"] != table["statistic"]:
        raise ProtocolError(f"{where}: 'correlation' and 'statistic' disagree; give one of them")
    key = "statistic" if "statistic" in table else "correlation"
    statistic = _get(table, key, str, where, choices=CORRELATIONS + PAIRWISE)
    if statistic == "spa" and table.get("level") != "system":
        raise ProtocolError(f"{where}: spa is computed at level = \"system\" only")
    if statistic == "pdp" and table.get("level") != "summary":
        raise ProtocolError(f"{where}: pdp is computed at level = \"summary\" only (pairs of systems within each "
                            f"item; over one group it equals pearson)")
    if ("spa_seed" in table or "permutations" in table) and statistic != "spa":
        raise ProtocolError(f"{where}: 'spa_seed' and 'permutations' belong to statistic = \"spa\"")
    return statistic


def _part(table: object, where: str) -> Part:
    if not isinstance(table, dict):
        raise ProtocolError(f"{where}: a [[part]] must be a table")
    metrics = _get(table, "metrics", list, where)
    if not metrics or not all(isinstance(m, str) and m for m in metrics):
        raise ProtocolError(f"{where}: 'metrics' must be a non-empty list of metric names")
    options = {str(k): (str(v).lower() if isinstance(v, bool) else str(float(v)) if isinstance(v, Decimal) else str(v))
               for k, v in _get(table, "options", dict, where, {}).items()}
    # a part without [part.printed] is a recipe: it fixes how the numbers are computed (wmt24-spa), nothing to compare
    printed, written = _numbers(table["printed"], f"{where}.printed") if "printed" in table else ({}, {})
    labels = _strings(table.get("labels", {}), f"{where}.labels")
    unmatched = _strings(table.get("unmatched", {}), f"{where}.unmatched")
    for name, extra in (("labels", labels), ("unmatched", unmatched)):
        stray = sorted(set(extra) - set(printed))
        if stray:
            raise ProtocolError(f"{where}.{name}: {', '.join(stray)} not in [part.printed]")
    tolerance = _get(table, "tolerance", float, where)
    if not 0 <= tolerance < 1:
        raise ProtocolError(f"{where}: 'tolerance' must be in [0, 1), got {tolerance}")
    max_p = _get(table, "max_p", float, where, None)
    if max_p is not None and (not 0 < max_p <= 1 or table.get("level") != "summary"):
        raise ProtocolError(f"{where}: 'max_p' (keep only documents whose own correlation has p <= max_p) needs "
                            f"level = \"summary\" and a value in (0, 1], got {max_p!r}")
    return Part(name=_get(table, "name", str, where), judgments=_get(table, "judgments", str, where),
                human=_get(table, "human", str, where), level=_get(table, "level", str, where, choices=LEVELS),
                correlation=_statistic(table, where),
                metrics=tuple(metrics), printed=printed, tolerance=tolerance,
                subset=_get(table, "subset", str, where, None), options=options,
                baseline=_get(table, "baseline", str, where, None), labels=labels, unmatched=unmatched,
                max_p=max_p, text=_get(table, "text", str, where, "repaired", choices=("repaired", "as-released")),
                written=written, permutations=_get(table, "permutations", int, where, 1000),
                spa_seed=_get(table, "spa_seed", int, where, None))


def load_protocol(name_or_path: str | Path, directory: Path = PROTOCOL_DIR) -> Protocol:
    """Load a protocol by name (a file of ``directory``) or by path to a ``.toml`` file.

    Raises
    ------
    ProtocolError
        If there is no such protocol (the message lists the known ones) or the file is malformed (the message
        names the file and the offending key).
    """
    path = Path(name_or_path)
    if path.suffix != ".toml":
        path = Path(directory) / f"{name_or_path}.toml"
        if not path.exists():
            raise ProtocolError(f"unknown protocol {str(name_or_path)!r}; known: "
                                f"{', '.join(protocol_names(directory)) or '(none)'} (or a path to a .toml file)")
    try:
        # floats as Decimal: the printed numbers keep the decimals they were written with (0.250: 3)
        data = tomllib.loads(path.read_text(encoding="utf-8"), parse_float=Decimal)
    except FileNotFoundError:
        raise ProtocolError(f"protocol file {path} does not exist") from None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ProtocolError(f"{path}: cannot be read as TOML ({exc})") from None
    except RecursionError:  # tomllib recurses once per nested array or table
        raise ProtocolError(f"{path}: cannot be read as TOML (arrays or tables nested too deep)") from None
    where = str(path)
    parts = data.get("part")
    if not isinstance(parts, list) or not parts:
        raise ProtocolError(f"{where}: needs at least one [[part]]")
    parsed = tuple(_part(p, f"{where} [[part]] #{i}") for i, p in enumerate(parts, 1))
    names = [p.name for p in parsed]
    if len(set(names)) != len(names):
        raise ProtocolError(f"{where}: part names must be distinct, got {names}")
    expected = (_expected(data["expected"], sum(len(p.printed) for p in parsed), where) if "expected" in data
                else None)
    return Protocol(name=_get(data, "name", str, where), title=_get(data, "title", str, where),
                    citation=_get(data, "citation", str, where), source=_get(data, "source", str, where),
                    parts=parsed, notes=_get(data, "notes", str, where, ""), path=path, expected=expected)


def compare(part: Part, values: dict[str, float | None]) -> list[Cell]:
    """The part's printed cells beside meta-eval's ``values`` (variant -> number; None or absent: not run).

    Examples
    --------
    >>> p = Part("t", "chaganty", "overall", "global", "spearman", ("sms",), {"sms": 0.258}, 0.02)
    >>> [c.status for c in compare(p, {"sms": 0.2584})], [c.status for c in compare(p, {"sms": 0.245})]
    (['match'], ['within 0.02'])
    """
    return [Cell(part.name, v, part.label(v), printed, values.get(v), part.tolerance, part.unmatched.get(v),
                 part.printed_text(v)) for v, printed in part.printed.items()]
