"""Named protocols: what a paper's table fixed, as a small declarative file, and how meta-eval's numbers compare.

A protocol (``meta_eval/protocols/<name>.toml``) names a paper and one or more *parts*, each one table block: the
judgment set and subset, the human dimension, the level (global, summary or system), the correlation, the metrics and
their options (references policy, ROUGE variant options, ...) and the numbers the paper printed for the variants.
``meta-eval run --protocol NAME`` runs every part and prints meta-eval's number beside the printed one; ``meta-eval
protocols`` lists them. A printed cell that meta-eval does not match within the part's tolerance carries a named
reason in the file (``[part.unmatched]``); the tests check every cell either matches or has its reason.

File format (TOML)::

    name = "sms-2019"
    title = "Sentence Mover's Similarity, Table 2"
    citation = "E. Clark, A. Celikyilmaz and N. A. Smith (2019). ... ACL 2019."
    source = "Table 2 (GloVe columns)"           # where in the paper or its authors' repository
    notes = "free text: what the paper fixed and what meta-eval does differently"

    [[part]]
    name = "summaries"
    judgments = "chaganty"                       # a built-in set
    subset = "sms"                               # optional, the set's default otherwise
    text = "as-released"                         # optional: skip the loader's mojibake repair (essays, JSONL)
    human = "overall"                            # the human dimension
    level = "global"                             # global | summary | system
    correlation = "spearman"                     # spearman | pearson | kendall
    metrics = ["rouge", "wms", "sms", "s+wms"]
    options = {refs = "max"}                     # optional: KEY=VALUE for every metric that takes KEY
    baseline = "rougeL-f"                        # optional: significance tests against this variant
    tolerance = 0.02                             # |meta-eval - printed| allowed for a cell to match
    max_p = 0.05                                 # optional, summary level only: average only over documents whose
                                                 # own correlation has p <= max_p (REALSumm's analysis did this)
    [part.printed]                               # variant -> the printed number
    "rougeL-f" = 0.117
    [part.labels]                                # optional: variant -> the paper's row label
    "rougeL-f" = "ROUGE-L"
    [part.unmatched]                             # optional: variant -> why that cell cannot match
    "rougeL-f" = "the paper's ROUGE-L is ..."
"""
from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Cell", "Part", "Protocol", "ProtocolError", "compare", "load_protocol", "protocol_names",
           "PROTOCOL_DIR"]

PROTOCOL_DIR = Path(__file__).resolve().parent / "protocols"
LEVELS = ("global", "summary", "system")
CORRELATIONS = ("spearman", "pearson", "kendall")


class ProtocolError(ValueError):
    """A protocol file is missing or malformed."""


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

    def label(self, variant: str) -> str:
        return self.labels.get(variant, variant)


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


@dataclass(frozen=True)
class Cell:
    """One printed number beside meta-eval's."""

    part: str
    variant: str
    label: str
    printed: float
    meta_eval: float | None
    tolerance: float
    reason: str | None

    @property
    def difference(self) -> float | None:
        return None if self.meta_eval is None else self.meta_eval - self.printed

    @property
    def matches(self) -> bool:
        # the 1e-9 slack keeps a difference of exactly the tolerance (printed values are rounded) a match
        return self.difference is not None and abs(self.difference) <= self.tolerance + 1e-9

    @property
    def status(self) -> str:
        """``match``, ``known mismatch`` (the file names the reason), ``MISMATCH`` (unexplained) or ``not run``."""
        if self.meta_eval is None:
            return "not run"
        if self.matches:
            return "match"
        return "known mismatch" if self.reason else "MISMATCH"

    def as_dict(self) -> dict:
        return {"part": self.part, "variant": self.variant, "label": self.label, "printed": self.printed,
                "meta_eval": self.meta_eval, "difference": self.difference, "tolerance": self.tolerance,
                "status": self.status, "reason": self.reason}


def protocol_names(directory: Path = PROTOCOL_DIR) -> list[str]:
    """Names of the protocols shipped with meta-eval (the ``.toml`` files of ``directory``), sorted."""
    return sorted(p.stem for p in Path(directory).glob("*.toml"))


def _get(table: dict, key: str, kind, where: str, default=..., choices=None):
    if key not in table:
        if default is ...:
            raise ProtocolError(f"{where}: missing {key!r}")
        return default
    value = table[key]
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        raise ProtocolError(f"{where}: {key!r} must be {getattr(kind, '__name__', kind)}, got {value!r}")
    if choices is not None and value not in choices:
        raise ProtocolError(f"{where}: {key!r} must be one of {', '.join(choices)}, got {value!r}")
    return value


def _numbers(table: object, where: str) -> dict[str, float]:
    if not isinstance(table, dict) or not table:
        raise ProtocolError(f"{where}: must be a non-empty table of variant = number")
    out = {}
    for key, value in table.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ProtocolError(f"{where}: {key!r} must be a number, got {value!r}")
        out[str(key)] = float(value)
    return out


def _strings(table: object, where: str) -> dict[str, str]:
    if not isinstance(table, dict):
        raise ProtocolError(f"{where}: must be a table of key = string")
    bad = [k for k, v in table.items() if not isinstance(v, str) or not v.strip()]
    if bad:
        raise ProtocolError(f"{where}: {bad[0]!r} must be a non-empty string")
    return {str(k): str(v) for k, v in table.items()}


def _part(table: object, where: str) -> Part:
    if not isinstance(table, dict):
        raise ProtocolError(f"{where}: a [[part]] must be a table")
    metrics = _get(table, "metrics", list, where)
    if not metrics or not all(isinstance(m, str) and m for m in metrics):
        raise ProtocolError(f"{where}: 'metrics' must be a non-empty list of metric names")
    options = {str(k): (str(v).lower() if isinstance(v, bool) else str(v))
               for k, v in _get(table, "options", dict, where, {}).items()}
    printed = _numbers(table.get("printed"), f"{where}.printed")
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
                correlation=_get(table, "correlation", str, where, choices=CORRELATIONS),
                metrics=tuple(metrics), printed=printed, tolerance=tolerance,
                subset=_get(table, "subset", str, where, None), options=options,
                baseline=_get(table, "baseline", str, where, None), labels=labels, unmatched=unmatched,
                max_p=max_p, text=_get(table, "text", str, where, "repaired", choices=("repaired", "as-released")))


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
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ProtocolError(f"protocol file {path} does not exist") from None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ProtocolError(f"{path}: cannot be read as TOML ({exc})") from None
    where = str(path)
    parts = data.get("part")
    if not isinstance(parts, list) or not parts:
        raise ProtocolError(f"{where}: needs at least one [[part]]")
    parsed = tuple(_part(p, f"{where} [[part]] #{i}") for i, p in enumerate(parts, 1))
    names = [p.name for p in parsed]
    if len(set(names)) != len(names):
        raise ProtocolError(f"{where}: part names must be distinct, got {names}")
    return Protocol(name=_get(data, "name", str, where), title=_get(data, "title", str, where),
                    citation=_get(data, "citation", str, where), source=_get(data, "source", str, where),
                    parts=parsed, notes=_get(data, "notes", str, where, ""), path=path)


def compare(part: Part, values: dict[str, float | None]) -> list[Cell]:
    """The part's printed cells beside meta-eval's ``values`` (variant -> number; None or absent: not run).

    Examples
    --------
    >>> p = Part("t", "chaganty", "overall", "global", "spearman", ("sms",), {"sms": 0.258}, 0.02)
    >>> [c.status for c in compare(p, {"sms": 0.245})]
    ['match']
    """
    return [Cell(part.name, v, part.label(v), printed, values.get(v), part.tolerance, part.unmatched.get(v))
            for v, printed in part.printed.items()]
