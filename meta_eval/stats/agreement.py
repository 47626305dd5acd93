"""Agreement between raters, and between a judge and people, on graded, categorical and pairwise judgments.

- :func:`krippendorff_alpha`: Krippendorff's alpha over a (raters, units) matrix with missing values, at the
  nominal, ordinal, interval or ratio level (Krippendorff 2011, the coincidence-matrix formulation);
  :func:`alpha_from_items` the same from per-unit lists of values whose position is the rater (JUDGE-BENCH's
  ``individual_human_scores``);
- categorical judgments, a judge's labels against people's (the majority label, say): :func:`accuracy`,
  :func:`cohen_kappa` (Cohen 1960), :func:`macro_f1`;
- pairwise preferences: :func:`pairwise_accuracy`, LLMBar's accuracy (Zeng et al. 2024), both presentation orders
  averaged;
- :func:`categorical_interval` (percentile bootstrap over items) and :func:`paired_test` (one-sided paired
  permutation test over items) for any of these.

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
from collections.abc import Hashable

import numpy as np

from meta_eval.errors import MetaEvalError

__all__ = ["LEVELS", "PAIRWISE_LABELS", "TIE_RULES", "CATEGORICAL", "AgreementError", "krippendorff_alpha",
           "alpha_from_items", "accuracy", "cohen_kappa", "macro_f1", "pairwise_accuracy", "categorical_interval",
           "paired_test"]

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
        present = data[~missing]  # row-major: rater by rater, as np.nonzero(~missing) lists them
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
    if len(set(domain)) != len(domain):
        raise AgreementError("value_domain lists a value twice")
    if len(domain) < 2:
        raise AgreementError(f"the value domain has {len(domain)} value(s) ({', '.join(map(_show, domain))}); "
                             "agreement needs at least 2 possible values")
    keys = np.array(list(present), dtype=str) if numbers_ is None else present
    table = np.array(domain, dtype=str) if numbers_ is None else numbers_
    order = np.argsort(table, kind="stable")
    pos = np.clip(np.searchsorted(table[order], keys), 0, len(table) - 1)
    found = table[order][pos] == keys
    if not found.all():
        rater, unit = (int(x[~found][0]) for x in np.nonzero(~missing))
        raise AgreementError(f"rater {rater}, unit {unit}: value {_show(present[~found][0])} is not in value_domain")
    codes = np.full(data.shape, -1, dtype=np.int64)
    codes[~missing] = order[pos]
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
    * V^2) for V distinct values (JUDGE-BENCH's DICES-990, 990 units x 76 raters, string labels: well under 0.1 s).

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
    position a list does not reach is a missing value. Alpha itself does not depend on that assignment: the
    coincidence matrix counts the pairs of values within each unit whoever gave them, so reordering a unit's list
    leaves alpha unchanged (rater identity matters only to statistics that follow a rater across units).

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


# -- categorical and pairwise judgments --------------------------------------------------------------------------------

#: The pairwise labels of JUDGE-BENCH's LLMBar files, and the answers that choose neither output.
PAIRWISE_LABELS = ("model_a", "model_b")
TIE_ANSWERS = ("tie", None)
#: How :func:`pairwise_accuracy` scores a judgment that chooses neither output ("tie" or None).
TIE_RULES = ("wrong", "half", "drop")
#: The statistics :func:`categorical_interval` and :func:`paired_test` compute by name (or given as these functions).
CATEGORICAL = ("accuracy", "kappa", "macro-f1", "pairwise-accuracy")


def _sequence(name: str, values) -> list:
    if isinstance(values, (str, bytes)) or not hasattr(values, "__len__"):
        raise AgreementError(f"{name} must be a sequence of labels, got {values!r}")
    return list(values.tolist() if isinstance(values, np.ndarray) else values)


def _pair_of(gold, pred, pred_name: str = "pred") -> tuple[list, list]:
    gold, pred = _sequence("gold", gold), _sequence(pred_name, pred)
    if len(gold) != len(pred):
        raise AgreementError(f"gold has {len(gold)} items but {pred_name} has {len(pred)}; give one label per item")
    if not gold:
        raise AgreementError("no items: gold and pred are empty")
    return gold, pred


def _label_codes(gold: list, preds: list[list], labels,
                 names: tuple[str, ...] = ("gold", "pred")) -> tuple[np.ndarray, list[np.ndarray], list]:
    """gold and each pred as codes into ``labels``; a pred None (no answer) gets the code len(labels). ``names``:
    what messages call gold and each pred."""
    for i, g in enumerate(gold):
        if _is_missing(g):
            raise AgreementError(f"{names[0]}[{i}] is missing; every item needs a gold label")
    if labels is None:
        seen = set(gold).union(v for pred in preds for v in pred if not _is_missing(v))
        try:
            labels = sorted(seen)
        except TypeError:
            labels = sorted(seen, key=repr)
    else:
        labels = list(labels)
        if len(set(labels)) != len(labels):
            raise AgreementError("labels lists a label twice")
    index = {v: i for i, v in enumerate(labels)}
    for k, values in enumerate([gold] + preds):
        name = names[k]
        for i, v in enumerate(values):
            if not (k > 0 and _is_missing(v)) and v not in index:
                raise AgreementError(f"{name}[{i}] is {v!r}, not one of the labels {labels}")
    none = len(labels)
    g = np.array([index[v] for v in gold], dtype=np.int64)
    ps = [np.array([none if _is_missing(v) else index[v] for v in pred], dtype=np.int64) for pred in preds]
    return g, ps, labels


def _confusion(g: np.ndarray, p: np.ndarray, k: int) -> np.ndarray:
    """(R, k, k) confusion counts of the rows of g (gold codes) and p (pred codes), both (R, n)."""
    r = np.arange(g.shape[0])[:, None]
    flat = (r * k * k + g * k + p).ravel()
    return np.bincount(flat, minlength=g.shape[0] * k * k).reshape(g.shape[0], k, k).astype(float)


def _accuracy_rows(conf: np.ndarray, n_labels: int, zero_division: float) -> np.ndarray:
    return np.trace(conf, axis1=1, axis2=2) / conf.sum(axis=(1, 2))


def _kappa_rows(conf: np.ndarray, n_labels: int, zero_division: float) -> np.ndarray:
    n = conf.sum(axis=(1, 2))
    observed = np.trace(conf, axis1=1, axis2=2) / n
    expected = (conf.sum(axis=2) * conf.sum(axis=1)).sum(axis=1) / n ** 2
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(expected < 1.0, (observed - expected) / (1.0 - expected), np.nan)


def _macro_f1_rows(conf: np.ndarray, n_labels: int, zero_division: float) -> np.ndarray:
    tp = np.diagonal(conf, axis1=1, axis2=2)[:, :n_labels]
    fp = conf.sum(axis=1)[:, :n_labels] - tp  # predicted l, gold another label
    fn = conf.sum(axis=2)[:, :n_labels] - tp  # gold l, predicted another label or no answer
    denominator = 2 * tp + fp + fn
    f1 = np.divide(2 * tp, denominator, out=np.full_like(tp, float(zero_division)), where=denominator > 0)
    return f1.mean(axis=1)


_ROWS = {"accuracy": _accuracy_rows, "kappa": _kappa_rows, "macro-f1": _macro_f1_rows}


def accuracy(gold, pred) -> float:
    """The share of items whose predicted label is the gold label; a missing prediction (None) is wrong.

    Examples
    --------
    >>> accuracy(["Yes", "No", "No", "Yes"], ["Yes", "No", "Yes", None])
    0.5
    """
    gold, pred = _pair_of(gold, pred)
    return sum(not _is_missing(p) and p == g for g, p in zip(gold, pred)) / len(gold)


def cohen_kappa(a, b, labels=None) -> float:
    """Cohen's kappa (Cohen 1960) between two label sequences: ``(p_o - p_e) / (1 - p_e)``.

    ``p_o`` is the share of items with the same label, ``p_e`` the agreement expected by chance from the two
    sequences' own label frequencies (``sum_l p_a(l) p_b(l)``). For a judge against people, ``a`` is the gold label
    of each item (JUDGE-BENCH: the majority of the raters' labels, ``majority_human``) and ``b`` the judge's.

    Parameters
    ----------
    a, b : sequence
        One label per item. ``a`` may not miss a label; None in ``b`` is an answer outside the labels (a judge's
        unparsed answer): it never agrees, and being no label it adds nothing to ``p_e``.
    labels : sequence, optional
        The label set; default the labels seen in ``a`` and ``b``. A label outside it raises :class:`AgreementError`.

    Returns
    -------
    float
        Kappa in [-1, 1]; NaN when ``p_e = 1`` (both sequences use one and the same label throughout), as
        scikit-learn's ``cohen_kappa_score`` (0/0).

    Examples
    --------
    >>> cohen_kappa(["Yes", "Yes", "No", "No"], ["Yes", "No", "No", "No"])  # p_o = 3/4, p_e = 1/2 * 1/4 + 1/2 * 3/4
    0.5
    """
    a, b = _pair_of(a, b, "b")
    g, (p,), labels = _label_codes(a, [b], labels, ("a", "b"))
    return float(_kappa_rows(_confusion(g[None], p[None], len(labels) + 1), len(labels), 0.0)[0])


def macro_f1(gold, pred, labels=None, zero_division: float = 0.0) -> float:
    """The mean over labels of each label's F1 = 2 TP / (2 TP + FP + FN), the label taken as the positive class.

    Parameters
    ----------
    gold, pred : sequence
        One label per item; None in ``pred`` (no answer) is a false negative of the item's gold label and no one's
        false positive.
    labels : sequence, optional
        The labels averaged over; default the labels seen in ``gold`` and ``pred`` (scikit-learn's default).
    zero_division : float
        The F1 of a label absent from both gold and pred (only possible when ``labels`` is given, or in a bootstrap
        resample): 0/0, counted as ``zero_division`` and kept in the mean. The default 0.0 is scikit-learn's
        ``f1_score(average="macro", zero_division="warn")``, which counts it 0 (with a warning).

    Examples
    --------
    >>> macro_f1(["a", "a", "b", "b"], ["a", "b", "b", "b"])  # F1(a) = 2/3, F1(b) = 4/5
    0.7333333333333334
    """
    gold, pred = _pair_of(gold, pred)
    g, (p,), labels = _label_codes(gold, [pred], labels)
    if not labels:
        raise AgreementError("no labels to average over")
    return float(_macro_f1_rows(_confusion(g[None], p[None], len(labels) + 1), len(labels), zero_division)[0])


def _pairwise_scores(gold, pred, ties: str) -> np.ndarray:
    """Each item's score: the mean over its judgments of 1 (chose gold), 0 (chose the other), the tie rule's value
    for "tie"/None; NaN for an item whose every judgment was dropped."""
    if ties not in TIE_RULES:
        raise AgreementError(f"unknown tie rule {ties!r}; use one of {', '.join(TIE_RULES)}")
    gold, pred = _pair_of(gold, pred)
    tie_value = {"wrong": 0.0, "half": 0.5, "drop": np.nan}[ties]
    scores = np.empty(len(gold))
    for i, (g, judged) in enumerate(zip(gold, pred)):
        if g not in PAIRWISE_LABELS:
            raise AgreementError(f"gold[{i}] is {g!r}; a pairwise gold label is model_a or model_b")
        judgments = list(judged) if isinstance(judged, (list, tuple)) else [judged]
        if not judgments:
            raise AgreementError(f"pred[{i}] is empty; give the judge's choice (or one per presentation order)")
        values = []
        for j in judgments:
            if j in PAIRWISE_LABELS:
                values.append(1.0 if j == g else 0.0)
            elif _is_missing(j) or j == "tie":
                values.append(tie_value)
            else:
                raise AgreementError(f"pred[{i}] holds {j!r}; a pairwise judgment is model_a, model_b, tie or None")
        kept = [v for v in values if not np.isnan(v)]
        scores[i] = sum(kept) / len(kept) if kept else np.nan
    return scores


def pairwise_accuracy(gold, pred, ties: str = "wrong") -> float:
    """LLMBar's accuracy (Zeng et al., ICLR 2024): how often the judge picks the output people picked.

    LLMBar's evaluation (``LLMEvaluator/evaluate.py`` of princeton-nlp/LLMBar) asks the judge twice, the two outputs
    in both orders, maps the second answer back to the original order, scores each answer 1 if it names the gold
    output and 0 otherwise -- an answer that names neither (unparsed, None) is wrong -- and reports the mean of the
    two orders' accuracies (``correct_average``). So an item whose two answers disagree (position bias) scores 1/2.
    Give both answers per item as a pair to reproduce it; one answer per item is the accuracy of one order.

    Parameters
    ----------
    gold : sequence of {"model_a", "model_b"}
        The output people preferred (JUDGE-BENCH's ``majority_human``).
    pred : sequence
        Per item, the judge's choice, ``"model_a"``, ``"model_b"``, ``"tie"`` or None (no choice), or a tuple/list
        of its choices (one per presentation order, each in the original order's terms).
    ties : {"wrong", "half", "drop"}
        How a judgment that chooses neither output scores: ``"wrong"`` 0, LLMBar's rule and the default (the
        issue asks for LLMBar's counting; LLMBar's prompts forbid "both/neither", so not choosing is a failure);
        ``"half"`` 1/2, the convention of win rates that count a tie as half a win; ``"drop"`` the judgment is left
        out (an item without any judgment left is left out of the mean).

    Returns
    -------
    float
        The mean over items of each item's mean judgment score (NaN if ``"drop"`` left no item).

    Examples
    --------
    >>> gold = ["model_a", "model_b", "model_a", "model_b"]
    >>> pairwise_accuracy(gold, ["model_a", "model_b", "model_b", None])  # (1 + 1 + 0 + 0) / 4
    0.5
    >>> pairwise_accuracy(gold, ["model_a", "model_b", "model_b", None], ties="half")  # (1 + 1 + 0 + 0.5) / 4
    0.625
    >>> pairwise_accuracy(gold, [("model_a", "model_a"), ("model_b", "model_a"), ("model_b", "model_b"),
    ...                          ("model_b", "tie")])  # (1 + 0.5 + 0 + 0.5) / 4, both orders
    0.5
    """
    scores = _pairwise_scores(gold, pred, ties)
    kept = scores[~np.isnan(scores)]
    return float(kept.mean()) if len(kept) else float("nan")


_BY_FUNCTION = {accuracy: "accuracy", cohen_kappa: "kappa", macro_f1: "macro-f1",
                pairwise_accuracy: "pairwise-accuracy"}
_OPTIONS = {"accuracy": set(), "kappa": {"labels"}, "macro-f1": {"labels", "zero_division"},
            "pairwise-accuracy": {"ties"}}


class _Prepared:
    """A statistic ready for many resamples: ``rows(take, swap)`` its value on each resample, where ``take`` (R, n)
    gives the items drawn and ``swap`` (R, n), if given, where the two predictions trade places."""

    def __init__(self, stat, gold, preds: list, options: dict):
        if isinstance(stat, str):
            if stat not in CATEGORICAL:
                raise AgreementError(f"unknown statistic {stat!r}; use one of {', '.join(CATEGORICAL)} or a function "
                                     "stat(gold, pred) -> float")
            self.name = stat
        elif callable(stat):
            self.name = _BY_FUNCTION.get(stat) if isinstance(stat, Hashable) else None
        else:
            raise AgreementError(f"stat must be one of {', '.join(CATEGORICAL)} or a function, got {stat!r}")
        if self.name is not None:
            unknown = set(options) - _OPTIONS[self.name]
            if unknown:
                raise AgreementError(f"{self.name} takes no option {sorted(unknown)[0]!r}")
        self.stat, self.options = stat, options
        pairs = [_pair_of(gold, pred, f"pred_{chr(97 + i)}" if len(preds) > 1 else "pred")
                 for i, pred in enumerate(preds)]
        self.gold, self.preds = pairs[0][0], [pred for _, pred in pairs]
        self.n = len(self.gold)
        if self.name == "pairwise-accuracy":
            self.scores = [_pairwise_scores(self.gold, pred, options.get("ties", "wrong")) for pred in self.preds]
        elif self.name is not None:
            names = ("gold", "pred_a", "pred_b") if len(self.preds) > 1 else ("gold", "pred")
            self.g, self.codes, labels = _label_codes(self.gold, self.preds, options.get("labels"), names)
            self.n_labels = len(labels)
        self.point = [self.value(i) for i in range(len(self.preds))]

    def value(self, i: int) -> float:
        fn = self.stat if self.name is None else {v: k for k, v in _BY_FUNCTION.items()}[self.name]
        return float(fn(self.gold, self.preds[i], **self.options))

    def rows(self, i: int, take: np.ndarray | None = None, swap: np.ndarray | None = None) -> np.ndarray:
        """The statistic of prediction i (0: A, 1: B) on each resample: the items ``take`` (R, n) drawn (bootstrap),
        or every item with the predictions of A and B traded where ``swap`` (R, n) is True (permutation)."""
        if self.name == "pairwise-accuracy":
            s = self.scores[i][take] if swap is None else np.where(swap, self.scores[1 - i], self.scores[i])
            kept = ~np.isnan(s)
            count = kept.sum(axis=1)
            return np.divide(np.where(kept, s, 0.0).sum(axis=1), count, out=np.full(len(s), np.nan), where=count > 0)
        if self.name is not None:
            if swap is None:
                g, p = self.g[take], self.codes[i][take]
            else:
                g, p = np.broadcast_to(self.g, swap.shape), np.where(swap, self.codes[1 - i], self.codes[i])
            conf = _confusion(g, p, self.n_labels + 1)
            return _ROWS[self.name](conf, self.n_labels, self.options.get("zero_division", 0.0))
        gold, mine = _objects(self.gold), _objects(self.preds[i])
        other = _objects(self.preds[1 - i]) if swap is not None else mine
        out = np.empty(len(take) if swap is None else len(swap))
        for r in range(len(out)):
            if swap is None:
                g, p = gold[take[r]], mine[take[r]]
            else:
                g, p = gold, np.where(swap[r], other, mine)
            out[r] = float(self.stat(g.tolist(), p.tolist(), **self.options))
        return out


def _objects(values: list) -> np.ndarray:
    """A 1-D object array of the values as they are (tuples stay elements)."""
    out = np.empty(len(values), dtype=object)
    for k, v in enumerate(values):
        out[k] = v
    return out


def _check_resamples(resamples) -> int:
    if isinstance(resamples, bool) or not isinstance(resamples, numbers.Integral) or resamples < 1:
        raise AgreementError(f"resamples must be a positive whole number, got {resamples!r}")
    return int(resamples)


def _blocks(resamples: int, n: int):
    """Resample ranges of at most ~4 million (resample, item) cells, to bound memory."""
    step = max(1, 4_000_000 // max(n, 1))
    return [(start, min(start + step, resamples)) for start in range(0, resamples, step)]


def categorical_interval(stat, gold, pred, *, resamples: int = 1000, seed=0, alpha: float = 0.05,
                         **options) -> tuple[float, float]:
    """Percentile bootstrap interval of a categorical or pairwise statistic, items drawn with replacement.

    Parameters
    ----------
    stat : str or callable
        ``"accuracy"``, ``"kappa"``, ``"macro-f1"``, ``"pairwise-accuracy"`` (or the functions :func:`accuracy`,
        :func:`cohen_kappa`, :func:`macro_f1`, :func:`pairwise_accuracy`), computed vectorised over the resamples;
        any other ``stat(gold, pred, **options) -> float`` is called once per resample.
    gold, pred : sequence
        As the statistic takes them (one entry per item; a pairwise item may hold both orders' answers).
    resamples : int
        Bootstrap resamples (each draws n items with replacement).
    seed : int or numpy.random.Generator
        ``numpy.random.default_rng(seed)`` draws the indices (never the global RNG); a Generator is copied, not
        advanced, as :mod:`meta_eval.stats.resampling` does for its tests.
    alpha : float
        In (0, 1): the interval covers 1 - alpha (the alpha/2 and 1 - alpha/2 percentiles, numpy's linear
        interpolation).
    **options
        Passed to the statistic: ``labels`` (kappa, macro-F1; default the labels seen in the full data, fixed for
        every resample), ``zero_division`` (macro-F1), ``ties`` (pairwise accuracy).

    Returns
    -------
    (float, float)
        The bounds; resamples where the statistic is undefined (kappa with p_e = 1) are left out; NaN bounds if all
        are.

    Examples
    --------
    >>> gold = ["Yes", "No"] * 20
    >>> pred = ["Yes", "No"] * 15 + ["No", "Yes"] * 5
    >>> lo, hi = categorical_interval("kappa", gold, pred, resamples=500, seed=0)
    >>> bool(lo < cohen_kappa(gold, pred) < hi)
    True
    """
    from meta_eval.stats.resampling import _fresh, percentile_interval

    resamples = _check_resamples(resamples)
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real) or not 0.0 < alpha < 1.0:
        raise AgreementError(f"alpha must be a number in (0, 1), got {alpha!r}")
    prepared = _Prepared(stat, gold, [pred], options)
    take = _fresh(seed).integers(0, prepared.n, size=(resamples, prepared.n))
    samples = np.concatenate([prepared.rows(0, take=take[a:b]) for a, b in _blocks(resamples, prepared.n)])
    lo, hi = percentile_interval(samples[:, None], confidence=1.0 - float(alpha))
    return float(lo[0]), float(hi[0])


def paired_test(stat, gold, pred_a, pred_b, *, resamples: int = 1000, seed=0, **options) -> float:
    """One-sided paired permutation test that judge A agrees with the gold labels more than judge B does.

    The items' predictions of A and B trade places, each item independently with probability 1/2 (the masks
    ``numpy.random.default_rng(seed).random((resamples, n)) < 0.5``, the same for every pair of judges: common random
    numbers), and the statistic of both is recomputed; the p-value is the share of permutations whose difference
    stat(A) - stat(B) is at least the observed one, without a +1 correction -- the conventions of
    :func:`meta_eval.stats.resampling.permutation_test` (Deutsch et al. 2021) and mt-metrics-eval's
    ``PairwisePermutationSigDiff``. Swapping predictions rather than per-item outcomes makes it valid for kappa and
    macro-F1, which are not means over items.

    Parameters
    ----------
    stat, gold, resamples, seed, **options
        As in :func:`categorical_interval`.
    pred_a, pred_b : sequence
        The two judges' predictions for the same items.

    Returns
    -------
    float
        The one-sided p-value in [0, 1]; 1.0 when A and B predict the same; permutations where either statistic is
        undefined are left out.

    Raises
    ------
    AgreementError
        If the statistic is undefined on the data for A or B, or no permutation gives a defined difference.

    Examples
    --------
    >>> gold = ["Yes", "No"] * 25
    >>> good, bad = list(gold), ["Yes"] * 50
    >>> paired_test("accuracy", gold, good, bad, resamples=200, seed=0)
    0.0
    """
    from meta_eval.stats.resampling import _TIE_TOL, _fresh

    resamples = _check_resamples(resamples)
    prepared = _Prepared(stat, gold, [pred_a, pred_b], options)
    observed = prepared.point[0] - prepared.point[1]
    if np.isnan(observed):
        judge = "A" if np.isnan(prepared.point[0]) else "B"
        raise AgreementError(f"the statistic is undefined on these items for judge {judge} (kappa with one label "
                             "throughout, say), so the two judges cannot be compared")
    swaps = _fresh(seed).random((resamples, prepared.n)) < 0.5
    ge = valid = 0
    for a, b in _blocks(resamples, prepared.n):
        delta = prepared.rows(0, swap=swaps[a:b]) - prepared.rows(1, swap=swaps[a:b])
        ok = ~np.isnan(delta)
        ge += int((delta[ok] >= observed - _TIE_TOL).sum())
        valid += int(ok.sum())
    if valid == 0:
        raise AgreementError("no permutation gave a defined difference between the two judges")
    return ge / valid
