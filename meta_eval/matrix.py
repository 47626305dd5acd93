"""Score matrices: one (document x system) grid of scores per metric or human dimension.

The resampling statistics of :mod:`meta_eval.stats.resampling` work on matrices rather than rows: entry ``M[i, j]`` is
the score of system ``j`` on document ``i`` (rows = documents, the paper's "inputs"; columns = systems), NaN where
that system has no summary of that document or the score is missing. Deutsch, Dror & Roth (TACL 2021, section 2)
write the same data as a systems x inputs matrix; this package uses the transpose throughout.

References
----------
D. Deutsch, R. Dror and D. Roth (2021). A Statistical Analysis of Summarization Evaluation Metrics using
Resampling Methods. TACL 9:1132-1146.

Examples
--------
>>> M, docs, systems = to_matrix([1.0, 2.0, 3.0], ["d1", "d1", "d2"], ["a", "b", "a"])
>>> docs, systems
(['d1', 'd2'], ['a', 'b'])
>>> M
array([[ 1.,  2.],
       [ 3., nan]])
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

__all__ = ["to_matrix", "align_missing", "DUPLICATE_POLICIES"]

DUPLICATE_POLICIES = ("error", "mean")


def _labels(name: str, labels, n: int) -> np.ndarray:
    try:
        arr = np.asarray([str(v) for v in labels], dtype=object)
    except TypeError:
        raise ValueError(f"{name} must be a sequence of labels, got {type(labels).__name__}") from None
    if len(arr) != n:
        raise ValueError(f"{name} has {len(arr)} labels but there are {n} values")
    return arr


def to_matrix(values, doc_ids: Sequence, systems: Sequence,
              duplicates: str = "error") -> tuple[np.ndarray, list[str], list[str]]:
    """Arrange row scores into a (n_docs x n_systems) float matrix, NaN for missing (document, system) pairs.

    Parameters
    ----------
    values : array_like
        1-D scores, one per row (NaN allowed: that cell stays missing).
    doc_ids, systems : sequence
        The document and the system of each row; labels are compared as strings.
    duplicates : {"error", "mean"}
        What to do when a (document, system) pair occurs in more than one row. ``"error"`` (default) raises;
        ``"mean"`` stores the mean of the pair's non-NaN values (NaN if all of them are NaN), e.g. several
        annotations of one summary that were not averaged upstream.

    Returns
    -------
    M : numpy.ndarray
        Shape (n_docs, n_systems), float64.
    docs, systems : list of str
        Row and column labels, each sorted.

    Raises
    ------
    ValueError
        If ``values`` is not 1-D numeric, the label sequences have another length, ``duplicates`` is unknown, or a
        pair repeats under ``duplicates="error"`` (the message names the first repeated pair and how many repeat).

    Examples
    --------
    >>> to_matrix([1.0, 3.0], ["d", "d"], ["a", "a"], duplicates="mean")[0]
    array([[2.]])
    """
    if duplicates not in DUPLICATE_POLICIES:
        raise ValueError(f"unknown duplicates policy {duplicates!r}; use one of {DUPLICATE_POLICIES}")
    try:
        vals = np.asarray(values, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"values must be numeric: {exc}") from None
    if vals.ndim != 1:
        raise ValueError(f"values must be 1-D, got shape {vals.shape}")
    docs = _labels("doc_ids", doc_ids, len(vals))
    syss = _labels("systems", systems, len(vals))
    doc_keys, doc_idx = np.unique(docs.astype(str), return_inverse=True)
    sys_keys, sys_idx = np.unique(syss.astype(str), return_inverse=True)
    n_docs, n_sys = len(doc_keys), len(sys_keys)
    cell = doc_idx * n_sys + sys_idx
    counts = np.bincount(cell, minlength=n_docs * n_sys)
    if (counts > 1).any() and duplicates == "error":
        repeated = np.flatnonzero(counts > 1)
        first = cell[np.flatnonzero(counts[cell] > 1)[0]]
        d, s = divmod(int(first), n_sys)
        raise ValueError(f"(document, system) pair ({str(doc_keys[d])!r}, {str(sys_keys[s])!r}) occurs "
                         f"{counts[first]} times ({len(repeated)} repeated pairs in all); pass duplicates='mean' "
                         "to average repeats")
    finite = ~np.isnan(vals)
    sums = np.bincount(cell[finite], weights=vals[finite], minlength=n_docs * n_sys)
    n_finite = np.bincount(cell[finite], minlength=n_docs * n_sys)
    with np.errstate(invalid="ignore", divide="ignore"):
        flat = np.where(n_finite > 0, sums / np.maximum(n_finite, 1), np.nan)
    return flat.reshape(n_docs, n_sys), [str(k) for k in doc_keys], [str(k) for k in sys_keys]


def align_missing(*matrices) -> list[np.ndarray]:
    """Copies of same-shape matrices with NaN in every cell where any of them is NaN.

    The statistics of :mod:`meta_eval.stats.resampling` need metric and human matrices with one NaN pattern (a cell is
    either scored by all or left out by all); this is the usual way to get there (pairwise deletion).

    Raises
    ------
    ValueError
        If no matrix is given or the shapes differ.

    Examples
    --------
    >>> a, b = align_missing([[1.0, np.nan]], [[np.nan, 2.0]])
    >>> a
    array([[nan, nan]])
    """
    if not matrices:
        raise ValueError("align_missing needs at least one matrix")
    mats = [np.array(m, dtype=float) for m in matrices]
    shapes = {m.shape for m in mats}
    if len(shapes) != 1:
        raise ValueError(f"matrices must share one shape, got {sorted(shapes)}")
    missing = np.zeros(mats[0].shape, dtype=bool)
    for m in mats:
        missing |= np.isnan(m)
    for m in mats:
        m[missing] = np.nan
    return mats


def judgment_matrices(jset, dimension: str, arrays: Sequence[np.ndarray], duplicates: str | None = None,
                      system_values: Sequence | None = None) -> tuple[np.ndarray, list[np.ndarray]]:
    """The human matrix and one matrix per score array (aligned with ``jset.rows``), documents x systems.

    Parameters
    ----------
    jset : judgments.JudgmentSet
    dimension : str
        The human dimension.
    arrays : sequence of array_like
        Metric scores, one value per row of ``jset``.
    duplicates : {"error", "mean", "first"}, optional
        What repeated (document, system) pairs mean (see :mod:`judgments.base`); default: the set's declared
        ``jset.duplicates``. ``"mean"`` averages the human and the metric scores of the repeated rows per cell,
        ``"first"`` takes the first row's values, ``"error"`` raises.
    system_values : sequence of (mapping or None), optional
        One per array: ``{system: score}`` for a metric whose system score is not the mean of its rows (a corpus
        score, :mod:`meta_eval.scoring.system_scores`); each cell its system has then holds that score, so the
        column mean is it (cells stay NaN where the array is NaN). ``None`` leaves the array's matrix as it is.

    A row fills one cell, or one per system when the set declares a ``multi_system_separator`` (chaganty's
    ``ml;ml+rl``); in every other set a system name containing ``;`` is one system.

    Raises
    ------
    judgments.JudgmentError
        If a row has no system (the file and the row are named), or a pair repeats under ``"error"`` (the rows are
        named: file and line for JSONL).
    """
    from meta_eval.judgments.base import DUPLICATE_POLICIES as SET_POLICIES

    policy = jset.duplicates if duplicates is None else duplicates
    if policy not in SET_POLICIES:
        raise ValueError(f"unknown duplicates policy {policy!r}; use one of {', '.join(SET_POLICIES)}")
    jset.require_systems()
    cells = jset.cells()
    if policy == "error":
        repeated = jset.repeated_pairs()
        if repeated:
            raise jset.duplicates_error(repeated)
    elif policy == "first":
        seen: set[tuple[str, str]] = set()
        cells = [c for c in cells if (c[1], c[2]) not in seen and not seen.add((c[1], c[2]))]
    take = np.array([i for i, _, _ in cells], dtype=np.int64)
    docs = [d for _, d, _ in cells]
    systems = [s for _, _, s in cells]
    mode = "mean" if policy == "mean" else "error"
    Z, _, columns = to_matrix(jset.human(dimension)[take], docs, systems, duplicates=mode)
    matrices = [to_matrix(np.asarray(a, dtype=float)[take], docs, systems, duplicates=mode)[0] for a in arrays]
    if system_values is not None:
        if len(system_values) != len(matrices):
            raise ValueError(f"system_values has {len(system_values)} entries for {len(matrices)} arrays")
        for M, values in zip(matrices, system_values):
            if values is not None:
                _fill_columns(M, columns, values)
    return Z, matrices


def _fill_columns(M: np.ndarray, columns: Sequence[str], values) -> None:
    """Set every non-NaN cell of column j of ``M`` to ``values[columns[j]]`` (in place)."""
    missing = [c for c in columns if c not in values]
    if missing:
        raise ValueError(f"no system score for {len(missing)} system(s): {', '.join(missing[:3])}")
    filled = np.array([float(values[c]) for c in columns])
    present = ~np.isnan(M)
    M[present] = np.broadcast_to(filled, M.shape)[present]
