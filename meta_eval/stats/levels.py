"""Correlation levels of Deutsch, Dror & Roth (TACL 2021), "A Statistical Analysis of Summarization Evaluation
Metrics using Resampling Methods", section 2:

- global: one correlation over all (document, system) rows;
- system level: the correlation of per-system means (each system's mean over its documents);
- summary level: for each document, the correlation across the systems that summarised it, averaged over documents.

Missing values are explicit: NaN in ``metric`` or ``human`` raises ``ValueError`` unless ``drop_missing=True``,
which drops those rows first (and reports how many in the result). At the summary level, documents with fewer than
3 scored systems or with constant scores have no correlation; they are left out of the average and counted.

These functions take one row per (document, system) cell. For a judgment set, pass the cells of
:func:`meta_eval.units.level_cells` (a repeated pair averaged into one cell under the set's duplicates policy, a row
whose system names two systems, chaganty's ``ml;ml+rl``, in the cell of each): then the value and ``n`` are those
``meta-eval run`` prints at that level.

Example
-------
>>> import numpy as np
>>> m, h = np.array([1., 2, 3, 2, 3, 4]), np.array([1., 3, 2, 2, 4, 3])
>>> docs, systems = ["d1"] * 3 + ["d2"] * 3, ["a", "b", "c"] * 2
>>> round(summary_level(m, h, docs, "spearman").r, 6)
0.5
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from meta_eval.stats.correlation import correlate
from meta_eval.stats.resampling import snap

__all__ = ["LevelCorrelation", "global_level", "system_level", "summary_level"]


@dataclass(frozen=True)
class LevelCorrelation:
    """A correlation at one level: ``r`` (None if undefined), ``n`` units used (rows, systems or documents),
    ``dropped`` rows with a missing value, ``skipped`` documents without a defined correlation (summary level)."""

    level: str
    kind: str
    r: float | None
    n: int
    dropped: int = 0
    skipped: int = 0
    note: str | None = None


def _clean(metric, human, *labels, drop_missing: bool):
    metric, human = np.asarray(metric, dtype=float), np.asarray(human, dtype=float)
    if metric.shape != human.shape or metric.ndim != 1 or any(len(lab) != len(metric) for lab in labels):
        raise ValueError("metric, human and the labels must be 1-D sequences of one length")
    bad = ~(np.isfinite(metric) & np.isfinite(human))
    if bad.any() and not drop_missing:
        raise ValueError(f"{int(bad.sum())} rows have a missing (NaN) metric or human score, the first at index "
                         f"{int(np.flatnonzero(bad)[0])}; pass drop_missing=True to leave them out")
    keep = ~bad
    return (metric[keep], human[keep], *[np.asarray(lab, dtype=object)[keep] for lab in labels], int(bad.sum()))


def global_level(metric, human, kind: str = "spearman", drop_missing: bool = False) -> LevelCorrelation:
    """Correlation over all rows."""
    m, h, dropped = _clean(metric, human, drop_missing=drop_missing)
    c = correlate(m, h, kind)
    return LevelCorrelation("global", kind, c.r, c.n, dropped, note=c.note)


def _group_means(values: np.ndarray, groups: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    keys, inverse = np.unique(groups.astype(str), return_inverse=True)
    sums = np.bincount(inverse, weights=values, minlength=len(keys))
    return keys, sums / np.bincount(inverse, minlength=len(keys))


def system_level(metric, human, systems: Sequence[str], kind: str = "spearman",
                 drop_missing: bool = False) -> LevelCorrelation:
    """Correlation of the per-system mean metric score with the per-system mean human score."""
    m, h, sys_, dropped = _clean(metric, human, systems, drop_missing=drop_missing)
    _, m_means = _group_means(m, sys_)
    _, h_means = _group_means(h, sys_)
    if kind != "pearson":  # rank coefficients: means equal in exact arithmetic must tie (resampling.snap)
        m_means, h_means = snap(m_means), snap(h_means)
    c = correlate(m_means, h_means, kind)
    return LevelCorrelation("system", kind, c.r, c.n, dropped, note=c.note)


def summary_level(metric, human, documents: Sequence[str], kind: str = "spearman",
                  drop_missing: bool = False, max_p: float | None = None) -> LevelCorrelation:
    """Mean over documents of the correlation across that document's summaries.

    ``max_p`` keeps only the documents whose own correlation has a two-sided p-value <= ``max_p`` (the others are
    counted in ``skipped``). This is not Deutsch et al.'s definition: it is what the REALSumm authors' analysis did
    (Bhandari et al. 2020, neulab/REALSumm ``analysis/utils.py`` at 675c506b, ``print_ktau_matrix``: per-document
    Kendall tau against LitePyramid recall, documents with p > 0.05 ignored), so that their printed summary-level
    numbers can be reproduced; use it only for that.

    >>> m, h = [1., 2, 3, 4, 1, 2, 3, 4], [1., 2, 3, 4, 2, 1, 4, 3]
    >>> r = summary_level(m, h, ["a"] * 4 + ["b"] * 4, "spearman", max_p=0.05)
    >>> r.r, r.n, r.skipped
    (1.0, 1, 1)
    """
    if max_p is not None and not 0 < max_p <= 1:
        raise ValueError(f"max_p must be in (0, 1], got {max_p!r}")
    m, h, docs, dropped = _clean(metric, human, documents, drop_missing=drop_missing)
    keys, inverse = np.unique(docs.astype(str), return_inverse=True)
    rs, skipped = [], 0
    for j in range(len(keys)):
        rows = inverse == j
        if rows.sum() < 3:
            skipped += 1
            continue
        c = correlate(m[rows], h[rows], kind)
        if c.r is None or (max_p is not None and not (c.p is not None and c.p <= max_p)):
            skipped += 1
        else:
            rs.append(c.r)
    note = None if rs else "no document has a defined correlation"
    return LevelCorrelation("summary", kind, float(np.mean(rs)) if rs else None, len(rs), dropped, skipped, note)
