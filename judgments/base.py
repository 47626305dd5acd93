"""The data model of a human-judgment set: rows of (candidate, references, source) with human scores."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping

import numpy as np

from metrics.base import Example

__all__ = ["Judgment", "JudgmentSet", "JudgmentError"]


class JudgmentError(ValueError):
    """A judgment set is malformed (duplicate ids, missing fields, wrong types, unknown dimension)."""


@dataclass(frozen=True)
class Judgment:
    """One judged text.

    Parameters
    ----------
    id : str
        Unique within the set.
    doc_id, system : str
        The source document and the system (or author) that wrote the candidate.
    candidate : str
    references : tuple of str
    source : str or None
    scores : mapping of str to float or None
        Human score per dimension (mean over judges); None where this row has none.
    judges : mapping of str to tuple of float
        Per-judge values per dimension, where the data has them.
    """

    id: str
    doc_id: str
    system: str
    candidate: str
    references: tuple[str, ...]
    source: str | None = None
    scores: Mapping[str, float | None] = field(default_factory=dict)
    judges: Mapping[str, tuple[float, ...]] = field(default_factory=dict)

    @property
    def n_judges(self) -> int:
        return max((len(v) for v in self.judges.values()), default=0)

    def example(self) -> Example:
        return Example(self.candidate, self.references, self.source)


@dataclass
class JudgmentSet:
    """A named list of judgments with the human dimensions they carry."""

    name: str
    rows: list[Judgment]
    dimensions: tuple[str, ...]
    default_dimension: str
    description: str = ""
    subset: str = "all"

    def __post_init__(self) -> None:
        seen: set[str] = set()
        dupes = [r.id for r in self.rows if r.id in seen or seen.add(r.id)]
        if dupes:
            raise JudgmentError(f"{self.name}: duplicate row ids, e.g. {dupes[:5]} ({len(dupes)} in all)")
        if self.default_dimension not in self.dimensions:
            raise JudgmentError(f"{self.name}: default dimension {self.default_dimension!r} not in {self.dimensions}")

    def __len__(self) -> int:
        return len(self.rows)

    @property
    def has_sources(self) -> bool:
        return bool(self.rows) and all(r.source for r in self.rows)

    @property
    def max_references(self) -> int:
        return max((len(r.references) for r in self.rows), default=0)

    def human(self, dimension: str | None = None) -> np.ndarray:
        """Human scores for ``dimension`` as float64, NaN where a row has none (see :meth:`scored`)."""
        dim = dimension or self.default_dimension
        if dim not in self.dimensions:
            raise JudgmentError(f"{self.name} has no human dimension {dim!r}; it has: {', '.join(self.dimensions)}")
        return np.array([math.nan if r.scores.get(dim) is None else float(r.scores[dim]) for r in self.rows])

    def scored(self, dimension: str | None = None) -> JudgmentSet:
        """The rows that have a human score for ``dimension`` (rows without one are left out, never imputed)."""
        keep = ~np.isnan(self.human(dimension))
        return JudgmentSet(self.name, [r for r, k in zip(self.rows, keep) if k], self.dimensions,
                           self.default_dimension, self.description, self.subset)

    def examples(self) -> list[Example]:
        return [r.example() for r in self.rows]

    def documents(self) -> int:
        return len({r.doc_id for r in self.rows})

    def systems(self) -> list[str]:
        return sorted({r.system for r in self.rows})


def read_gzip_jsonl(path, fix: str) -> list[dict]:
    """All objects of a gzip JSON-lines file; a corrupt or truncated file is a :class:`JudgmentError` saying ``fix``."""
    import gzip
    import json
    import zlib

    try:
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            return [json.loads(line) for line in fh if line.strip()]
    except (OSError, EOFError, zlib.error, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise JudgmentError(f"{path} is corrupt or truncated ({type(exc).__name__}: {exc}); {fix}") from None


def make_ids_unique(rows: list[Judgment]) -> list[Judgment]:
    """Keep every row of a repeated id, renaming the 2nd, 3rd, ... occurrence ``<id>#2``, ``<id>#3`` (in file order)."""
    from dataclasses import replace

    seen: dict[str, int] = {}
    out = []
    for row in rows:
        seen[row.id] = seen.get(row.id, 0) + 1
        out.append(row if seen[row.id] == 1 else replace(row, id=f"{row.id}#{seen[row.id]}"))
    return out
