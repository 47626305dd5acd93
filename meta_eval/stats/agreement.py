"""Agreement between raters, and between a judge and people, on graded, categorical and pairwise judgments.

- :func:`krippendorff_alpha`: Krippendorff's alpha over a (raters, units) matrix with missing values, at the
  nominal, ordinal, interval or ratio level (Krippendorff 2011, the coincidence-matrix formulation);
  :func:`alpha_from_items` the same from per-unit lists of values whose position is the rater (JUDGE-BENCH's
  ``individual_human_scores``).

Krippendorff's alpha (Krippendorff 2011, "Computing Krippendorff's Alpha-Reliability", section C, data with missing
values) is ``1 - D_o / D_e``, with the observed and expected disagreement taken from the coincidence matrix::

    o_ck = sum over units u of  #(c, k pairs of values in u) / (m_u - 1)      (m_u: values in unit u)
    n_c  = sum_k o_ck,   n = sum_c n_c
    alpha = 1 - (n - 1) * sum_ck o_ck d2_ck / sum_ck n_c n_k d2_ck

with the difference functions ``d2`` of the four levels: nominal ``c != k``; ordinal ``(sum_{g=c..k} n_g - (n_c +
n_k) / 2) ** 2`` (the values ranked in the order of ``value_domain``); interval ``(c - k) ** 2``; ratio ``((c - k) /
(c + k)) ** 2``. These are also the `krippendorff` package's (Castro 2017, version 0.9.0), which the tests match to
1e-12. Choices where the paper leaves the computation to the user:

- A unit with fewer than 2 values is not pairable: it is dropped (it adds nothing to ``o``, Krippendorff 2011 step
  C.1), and its lone value does not count in ``n``. No unit with 2 values raises :class:`AgreementError`.
- Values in ``value_domain`` that nobody used have ``n_g = 0``: they change no level's alpha (the ordinal difference
  sums the frequencies ``n_g`` of the values between c and k, not their number), so ``value_domain`` matters only
  to give the order of string labels at the ordinal level and to reject a value outside it.
- Fewer than 2 values in the domain (the observed values, or ``value_domain`` when given) raises
  :class:`AgreementError`, as the `krippendorff` package raises ``ValueError``. With 2 or more but every pairable
  value equal, the expected disagreement is 0 and alpha is 0/0: NaN is returned (the package also returns NaN there,
  with a numpy warning).
- Values are numbers (NaN or None missing) or strings (None or NaN missing). Strings have no differences: they work
  at the nominal level, and at the ordinal level with ``value_domain`` giving their order.

References
----------
K. Krippendorff (2011). Computing Krippendorff's Alpha-Reliability. Annenberg School for Communication,
University of Pennsylvania, Departmental Papers (ASC) 43.
S. Castro (2017). Fast Krippendorff: Fast computation of Krippendorff's alpha agreement measure.
https://github.com/pln-fing-udelar/fast-krippendorff (the `krippendorff` package; GPL-3.0, used in the tests only).
A. Bavaresco et al. (2025). LLMs instead of Human Judges? A Large Scale Empirical Study across 20 NLP Evaluation
Tasks. ACL (JUDGE-BENCH).

Examples
--------
Krippendorff (2011)'s example C: 4 observers, 12 units, values 1..5, missing values as NaN:

>>> import numpy as np
>>> nan = np.nan
>>> data = [[1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
...         [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
...         [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
...         [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan]]
>>> [round(krippendorff_alpha(data, level), 3) for level in ("nominal", "ordinal", "interval", "ratio")]
[0.743, 0.815, 0.849, 0.797]
>>> round(alpha_from_items([["Yes", "Yes"], ["No", "Yes", "No"], ["No", "No"]], "nominal"), 4)
0.5
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from meta_eval.errors import MetaEvalError

__all__ = ["LEVELS", "AgreementError", "krippendorff_alpha", "alpha_from_items"]

#: Krippendorff's levels of measurement (Stevens' scales), each with its difference function.
LEVELS = ("nominal", "ordinal", "interval", "ratio")


class AgreementError(MetaEvalError):
    """Data an agreement statistic cannot be computed on; the message says which value or unit and why."""


def _is_missing(v) -> bool:
    return v is None or (isinstance(v, numbers.Real) and not isinstance(v, bool) and math.isnan(float(v)))


def _show(v) -> str:
    """A value as a message shows it: a string quoted, a whole number without '.0'."""
    if isinstance(v, numbers.Real) and not isinstance(v, bool):
        v = float(v)
        return str(int(v)) if v.is_integer() else repr(v)
    return repr(v)


def _matrix(reliability_data) -> np.ndarray:
    """(raters, units) as a float array (numbers) or an object array (strings), missing as NaN / None."""
    if isinstance(reliability_data, np.ndarray) and reliability_data.dtype.kind in "iufb":
        data = reliability_data.astype(float)
    else:
        try:
            data = np.asarray(reliability_data, dtype=object)
        except ValueError:
            data = None
        if data is None or data.ndim != 2 or any(isinstance(v, (list, tuple, np.ndarray)) for v in data.flat):
            raise AgreementError("reliability_data must be a (raters, units) matrix with one value per cell (NaN or "
                                 "None where missing); for per-unit lists of different lengths use alpha_from_items")
        if all(_is_missing(v) or (isinstance(v, numbers.Real) and not isinstance(v, bool)) for v in data.flat):
            data = np.array([[np.nan if v is None else float(v) for v in row] for row in data], dtype=float)
    if data.ndim != 2:
        raise AgreementError(f"reliability_data must be a (raters, units) matrix, got {data.ndim} dimension(s)")
    return data


def _codes(data: np.ndarray, level: str, value_domain) -> tuple[np.ndarray, np.ndarray | None, int]:
    """Each cell's index in the value domain (-1 where missing), the domain's numbers (None for strings), and the
    domain's size."""
    if data.dtype == object:
        missing = np.array([_is_missing(v) for v in data.flat], dtype=bool).reshape(data.shape)
        present = data[~missing]
        strings = [isinstance(v, str) for v in present]
        if not all(strings):
            if any(strings):
                raise AgreementError("reliability_data mixes strings and numbers; use one kind of value")
            bad = next(v for v in present if not isinstance(v, numbers.Real) or isinstance(v, bool))
            raise AgreementError(f"reliability_data holds {_show(bad)}, which is neither a number nor a string label")
        if level not in ("nominal", "ordinal"):
            raise AgreementError(f"string labels have no differences at the {level} level; use the nominal level, "
                                 "or the ordinal level with value_domain giving their order")
        if value_domain is None:
            if level == "ordinal":
                raise AgreementError("string labels at the ordinal level need value_domain, the labels in their "
                                     "order (for example a set's labels_list)")
            domain = sorted(set(present))
        else:
            domain = [str(v) for v in value_domain]
        numbers_ = None
    else:
        missing = np.isnan(data)
        present = data[~missing]
        if value_domain is None:
            domain = np.unique(present).tolist()
        else:
            try:
                domain = np.asarray(value_domain, dtype=float).ravel().tolist()
            except (TypeError, ValueError):
                raise AgreementError("value_domain must hold numbers when the ratings are numbers") from None
        numbers_ = np.asarray(domain, dtype=float)
    index = {v: i for i, v in enumerate(domain)}
    if len(index) != len(domain):
        raise AgreementError("value_domain lists a value twice")
    if len(domain) < 2:
        raise AgreementError(f"the value domain has {len(domain)} value(s) ({', '.join(map(_show, domain))}); "
                             "agreement needs at least 2 possible values")
    codes = np.full(data.shape, -1, dtype=np.int64)
    flat_codes, flat_missing = codes.reshape(-1), missing.reshape(-1)
    for pos, v in enumerate(data.flat):
        if flat_missing[pos]:
            continue
        code = index.get(v)
        if code is None:
            rater, unit = divmod(pos, data.shape[1])
            raise AgreementError(f"rater {rater}, unit {unit}: value {_show(v)} is not in value_domain")
        flat_codes[pos] = code
    return codes, numbers_, len(domain)


def _coincidences(codes: np.ndarray, n_values: int) -> np.ndarray:
    """The (V, V) coincidence matrix of Krippendorff (2011), units with fewer than 2 values dropped."""
    n_raters, n_units = codes.shape
    rater_unit = np.broadcast_to(np.arange(n_units), codes.shape)
    ok = codes >= 0
    counts = np.bincount(rater_unit[ok] * n_values + codes[ok], minlength=n_units * n_values)
    counts = counts.reshape(n_units, n_values).astype(float)  # (units, V): how many raters gave each value
    m = counts.sum(axis=1)
    if not (m >= 2).any():
        raise AgreementError("no unit has values from at least 2 raters; alpha needs pairable values")
    weight = np.divide(1.0, m - 1, out=np.zeros_like(m), where=m >= 2)
    weighted = counts * weight[:, None]
    return weighted.T @ counts - np.diag(weighted.sum(axis=0))


def _differences(level: str, n_v: np.ndarray, values: np.ndarray | None) -> np.ndarray:
    """The squared differences d2[c, k] of the level (Krippendorff 2011, section E)."""
    if level == "nominal":
        return 1.0 - np.eye(len(n_v))
    if level == "ordinal":
        idx = np.arange(len(n_v))
        lo, hi = np.minimum.outer(idx, idx), np.maximum.outer(idx, idx)
        cum = np.cumsum(n_v)
        between = cum[hi] - cum[lo] + n_v[lo]
        return (between - (n_v[lo] + n_v[hi]) / 2.0) ** 2
    if level == "interval":
        return np.subtract.outer(values, values) ** 2
    total = np.add.outer(values, values)
    return np.divide(np.subtract.outer(values, values), total, out=np.zeros_like(total), where=total != 0) ** 2


def krippendorff_alpha(reliability_data, level: str = "interval", value_domain=None) -> float:
    """Krippendorff's alpha of a (raters, units) matrix with missing values (Krippendorff 2011).

    Parameters
    ----------
    reliability_data : array_like
        Shape (raters, units), the orientation of the `krippendorff` package: ``reliability_data[i][u]`` is rater
        i's value for unit u, NaN or None where rater i did not rate u. Numbers, or strings (nominal level, or
        ordinal with ``value_domain``).
    level : {"nominal", "ordinal", "interval", "ratio"}
        The level of measurement, which picks the difference function.
    value_domain : sequence, optional
        The possible values, in order (the order matters at the ordinal level only). Default: the values observed,
        sorted. Values nobody used change no result; a value outside the domain raises :class:`AgreementError`.

    Returns
    -------
    float
        Alpha: 1 for perfect agreement, 0 for agreement at chance, negative below chance; NaN when the domain has
        2 or more values but every pairable value is the same (no disagreement was possible).

    Raises
    ------
    AgreementError
        An unknown level, a matrix that is not 2-D, strings at the interval or ratio level, a value outside
        ``value_domain``, fewer than 2 values in the domain, or no unit with 2 or more values.

    Notes
    -----
    Units with fewer than 2 values are dropped (they are not pairable). The computation is vectorised: the
    coincidence matrix is one (units x V) count matrix multiplied by itself, so the cost is O(raters * units + units
    * V^2) for V distinct values (JUDGE-BENCH's DICES-990, 990 units x 76 raters, takes milliseconds).

    Examples
    --------
    >>> import numpy as np
    >>> krippendorff_alpha([[1, 2, 3, np.nan], [1, 2, 3, 4]], "interval")
    1.0
    >>> round(krippendorff_alpha([["a", "a", "b", "b"], ["a", "b", "b", None]], "nominal"), 4)
    0.4444
    """
    if level not in LEVELS:
        raise AgreementError(f"unknown level of measurement {level!r}; use one of {', '.join(LEVELS)}")
    codes, values, n_values = _codes(_matrix(reliability_data), level, value_domain)
    o = _coincidences(codes, n_values)
    n_v = o.sum(axis=0)
    n = n_v.sum()
    e = (np.outer(n_v, n_v) - np.diag(n_v)) / (n - 1)
    d2 = _differences(level, n_v, values)
    expected = float((e * d2).sum())
    if expected == 0.0:
        return float("nan")
    return float(1.0 - (o * d2).sum() / expected)


def alpha_from_items(items, level: str, value_domain=None) -> float:
    """Krippendorff's alpha from one list of values per unit, a value's position in its list being its rater.

    This is how JUDGE-BENCH reads ``individual_human_scores``: its evaluation builds the reliability matrix by
    position (the i-th score of every instance belongs to rater i), the lists may have different lengths, and a
    position a list does not reach is a missing value. Where a file's lists are not ordered by annotator, this pairs
    values that no single rater gave; alpha is still computed as JUDGE-BENCH computes it.

    Parameters
    ----------
    items : sequence of sequences
        ``items[u]`` the values of unit u (numbers or strings; None or NaN for a missing one).
    level, value_domain
        As in :func:`krippendorff_alpha`.

    Returns
    -------
    float
        :func:`krippendorff_alpha` of the (max list length, units) matrix.

    Examples
    --------
    >>> alpha_from_items([[1, 1], [2, 2, 2], [3, 3]], "interval")
    1.0
    """
    rows = []
    for u, values in enumerate(items):
        if isinstance(values, (str, bytes)) or not hasattr(values, "__len__"):
            raise AgreementError(f"unit {u}: expected a list of the raters' values, got {values!r}")
        rows.append(list(values))
    if not rows:
        raise AgreementError("no units: alpha needs at least one unit with 2 values")
    n_raters = max(len(r) for r in rows)
    data = np.full((n_raters, len(rows)), None, dtype=object)
    for u, values in enumerate(rows):
        for i, v in enumerate(values):
            data[i, u] = v
    return krippendorff_alpha(data, level, value_domain)
