"""A learned metric: ridge regression from metric scores to human judgments, evaluated on held-out halves.

The protocol is that of Scialom, Lamprier, Piwowarski & Staiano (EMNLP 2019), "Answers Unite! Unsupervised Metrics
for Reinforced Summarization Models", section 2.4 ("Learned Metric"): a ridge regression (alpha = 1) predicts the
geometric mean of readability and relevance from metric scores; it is fit on a random 50% of the data and the
correlation of its predictions with the target is measured on the other 50%; this is repeated 1,000 times, for
subsets of the metrics (their best: ROUGE-L + QA-conf + QA-F1).

What this module adds, and every choice it makes:

- **Standardisation.** Each split standardises the features with a ``StandardScaler`` fitted on the training half
  only (population standard deviation; a feature constant on the training half keeps scale 1, as in scikit-learn),
  then fits ``Ridge(alpha)`` with an intercept. Weights are reported on the standardised scale (comparable across
  features) and on the raw scale of the metric scores: ``raw_j = std_j / sd_j`` and
  ``raw_intercept = intercept - sum_j raw_j * mean_j``.
- **Grouped splits.** Summarisation sets judge several systems' summaries of one document. A random split of rows
  puts summaries of one document on both sides, so the held-out half is not independent of the training half. With
  ``groups`` (document ids) the split is by document (scikit-learn ``GroupShuffleSplit``: ``train_fraction`` of the
  documents train, the rest are held out). Both protocols run on every model, and
  :attr:`RidgeResult.overstatement` = ungrouped minus grouped mean held-out correlation says how much the
  ungrouped protocol (the paper's) overstates.
- **Held-out half** = every row not in the training half. Its size varies between grouped splits.
- **Summary over splits**: the mean held-out correlation with a 95% percentile interval (2.5th and 97.5th
  percentiles over splits); a split whose held-out correlation is undefined (constant predictions or target) is
  left out and counted (:attr:`ProtocolResult.n_undefined`).
- **Paired comparison.** Every feature set of a search is evaluated on the very same splits (one seed).
- **Feature-set search** (:func:`select_features`; the paper says only "various subsets of our base metrics").
  ``exhaustive`` scores every non-empty subset (up to ``max_size`` features) and is allowed up to
  :data:`MAX_SUBSETS` subsets (every subset of 10 features); ``greedy`` is forward selection: start empty, add
  the feature whose addition gives the highest mean held-out primary correlation (grouped, else ungrouped; ties
  go to the earlier feature), stop when the best addition does not raise it by more than ``min_gain`` (default
  0.001, the tables' last digit) or at ``max_size``. ``auto`` (the default) is exhaustive within the cap and
  greedy beyond it. Both are two-stage when that saves time: feature sets are *screened* on the first
  ``search_splits`` (default 100) of the seeded splits and the primary protocol only, then the finalists (the
  best ``finalists`` = 20 subsets, or every set on the greedy path) are evaluated on all ``n_splits`` splits and
  both protocols, and only those full-protocol numbers are ranked and reported (the screening means are kept in
  :attr:`SearchOutcome.screening` for the record). The screening splits are a prefix of the full ones
  (scikit-learn's splitters draw splits one after another from one seeded generator), so the finalists' numbers
  include them. Either way the best set is chosen on the same splits it is reported on, so its held-out
  correlation is optimistic by the selection, as in the paper.
- **Speed.** Ridge has a closed form, so all splits of a model are solved at once from per-split Gram matrices
  (numerically the same as scikit-learn's ``Ridge`` on each split; the tests check this). Spearman ranks the
  held-out predictions of every split in one sort. 1,000 splits of 2,000 rows take about 0.1-0.2 s per model and
  protocol (Pearson faster; Kendall loops over splits with scipy and is slower).
- **Target.** :func:`target_values`: a dimension name, or ``geomean:dimA,dimB`` (the paper's geometric mean). The
  geometric mean needs positive values and is not invariant to shifts, and human scales differ (chaganty is in
  [-1, 1]); so each dimension is first min-max rescaled to [1, 2] over the rows that have every dimension, then the
  geometric mean is taken. This is always done, also for already-positive scales, so the target's definition never
  depends on the data's sign; with positive scales it differs from the paper's raw geometric mean.

A final model is fitted on all the data (:func:`fit_final`) and saved as a :class:`LearnedModel` (JSON), which the
metric family ``learned:<name>`` (:mod:`metrics.learned`) applies to new texts. The file format (the model
dataclasses, save, load and validation) lives in :mod:`metrics.learned_format`, which this module and
:mod:`metrics.learned` both import (so nothing under ``metrics/`` imports ``meta_eval``); its names are re-exported
here.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from itertools import combinations
from math import comb
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import numpy as np

# the model file's format has its own module, which metrics.learned reads too (re-exported here)
from meta_eval.metrics.learned_format import (MODEL_FORMAT, MODEL_SCHEMA, Component, LearnedModel, LearnedModelError,
                                             canonical_features)

if TYPE_CHECKING:  # pragma: no cover
    from meta_eval.judgments.base import JudgmentSet

__all__ = ["CORRELATION_KINDS", "MAX_SUBSETS", "MODEL_FORMAT", "MODEL_SCHEMA", "Component", "LearnedModel",
           "LearnedModelError", "ProtocolResult", "RidgeResult", "fit_final", "learn_ridge", "make_splits",
           "parse_target", "search_subsets", "target_set", "target_values", "SEARCH_SPLITS", "FINALISTS",
           "SEARCH_STRATEGIES", "MIN_GAIN", "SearchOutcome", "choose_strategy", "select_features"]

CORRELATION_KINDS = ("spearman", "pearson", "kendall")
MAX_SUBSETS = 1024  # 2**10: every subset of 10 features; beyond it `auto` searches greedily
SEARCH_STRATEGIES = ("auto", "exhaustive", "greedy", "none")
SEARCH_SPLITS = 100  # splits that screen feature sets during a search (a prefix of the seeded splits)
FINALISTS = 20  # best screened subsets of an exhaustive search evaluated on every split
MIN_GAIN = 0.001  # greedy adds a feature only if the mean rises by more than this (the tables' last digit)


# -- target ---------------------------------------------------------------------------------------------------------
def parse_target(spec: str) -> tuple[str, tuple[str, ...]]:
    """Split a target spec into (kind, dimensions): ``"overall"`` -> ``("dim", ("overall",))``,
    ``"geomean:a,b"`` -> ``("geomean", ("a", "b"))``.

    Raises
    ------
    ValueError
        For an empty spec or a ``geomean:`` with fewer than two distinct dimensions.
    """
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError("the target must be a dimension name or geomean:dimA,dimB")
    spec = spec.strip()
    if spec.startswith("geomean:"):
        dims = tuple(d.strip() for d in spec[len("geomean:"):].split(",") if d.strip())
        if len(set(dims)) < 2 or len(set(dims)) != len(dims):
            raise ValueError(f"target {spec!r}: geomean needs two or more distinct dimensions, e.g. "
                             "geomean:readability,relevance")
        return "geomean", dims
    return "dim", (spec,)


def target_values(jset: JudgmentSet, spec: str) -> np.ndarray:
    """The regression target of every row of ``jset`` (NaN where a row lacks a needed human score).

    Parameters
    ----------
    jset : JudgmentSet
    spec : str
        A human dimension (its values as they are), or ``geomean:dimA,dimB[,...]``: each dimension min-max
        rescaled to [1, 2] over the rows that have all of them, then their geometric mean (see the module notes).

    Returns
    -------
    ndarray, shape (len(jset),)

    Raises
    ------
    judgments.JudgmentError
        For a dimension the set does not have.
    ValueError
        For a bad spec, or a geomean dimension that is constant (it cannot be rescaled).

    Examples
    --------
    Rows (a, b) = (-1, 0), (0, 10), (1, 5) rescale to (1, 1), (1.5, 2), (2, 1.5), so the target is
    (1, sqrt(3), sqrt(3)).
    """
    kind, dims = parse_target(spec)
    if kind == "dim":
        return jset.human(dims[0])
    values = np.column_stack([jset.human(d) for d in dims]) if len(jset) else np.zeros((0, len(dims)))
    complete = np.isfinite(values).all(axis=1)
    out = np.full(len(jset), math.nan)
    if not complete.any():
        return out
    lo, hi = values[complete].min(axis=0), values[complete].max(axis=0)
    for d, a, b in zip(dims, lo, hi):
        if a == b:
            raise ValueError(f"target {spec!r}: dimension {d!r} is constant ({a}) on {jset.name}; it cannot be "
                             "rescaled for a geometric mean")
    scaled = 1.0 + (values[complete] - lo) / (hi - lo)
    out[complete] = np.exp(np.log(scaled).mean(axis=1))
    return out


def target_set(jset: JudgmentSet, spec: str) -> tuple[JudgmentSet, np.ndarray]:
    """The rows of ``jset`` that have a target value (others are left out, never imputed) and those values, in the
    order of the rows' ids: the ungrouped splits (:func:`make_splits`) draw rows by position, so the file's order of
    the rows would otherwise change the paper protocol's numbers (audit, session 38; the grouped splits draw
    documents by sorted label and never depended on it).

    The set keeps everything it declares but its rows: its prompts (llm-judge ``template=set``), language, task,
    and chaganty's multi-system separator, so that ``learn`` counts its systems and units as every other command
    does (4 systems on chaganty, not 5 with its ``ml;ml+rl`` row as a system of its own)."""
    values = target_values(jset, spec)
    keep = sorted(np.flatnonzero(np.isfinite(values)).tolist(), key=lambda i: jset.rows[i].id)
    return replace(jset, rows=[jset.rows[i] for i in keep]), values[keep]


# -- splits ---------------------------------------------------------------------------------------------------------
def make_splits(n: int, groups: Sequence | None = None, n_splits: int = 1000, train_fraction: float = 0.5,
                seed: int = 0) -> np.ndarray:
    """Training masks of ``n_splits`` random splits, shape (n_splits, n); the held-out half is the complement.

    Without ``groups``: scikit-learn ``ShuffleSplit(train_size=train_fraction)`` over rows. With ``groups`` (one
    label per row, e.g. the document id): ``GroupShuffleSplit(train_size=train_fraction)``, which draws
    ``train_fraction`` of the *groups*, so no group is on both sides.
    """
    from sklearn.model_selection import GroupShuffleSplit, ShuffleSplit

    if not 0 < train_fraction < 1:
        raise ValueError(f"train_fraction must be in (0, 1), got {train_fraction}")
    if n_splits < 1:
        raise ValueError(f"n_splits must be >= 1, got {n_splits}")
    masks = np.zeros((n_splits, n), dtype=bool)
    if groups is None:
        splitter = ShuffleSplit(n_splits=n_splits, train_size=train_fraction, random_state=seed)
        it = splitter.split(np.zeros(n))
    else:
        groups = np.asarray(groups, dtype=object)
        if groups.shape != (n,):
            raise ValueError(f"groups must have one label per row ({n}), got shape {groups.shape}")
        n_groups = len(set(groups.tolist()))
        if n_groups < 2:
            raise ValueError(f"grouped splits need at least 2 groups, got {n_groups}")
        codes = np.unique(groups.astype(str), return_inverse=True)[1]
        splitter = GroupShuffleSplit(n_splits=n_splits, train_size=train_fraction, random_state=seed)
        it = splitter.split(np.zeros(n), groups=codes)
    for s, (train, _test) in enumerate(it):
        masks[s, train] = True
    return masks


def _average_ranks(a: np.ndarray) -> np.ndarray:
    """1-based ranks along axis 1, ties get their average rank (as scipy.stats.rankdata(method='average'))."""
    s, m = a.shape
    order = np.argsort(a, axis=1)
    flat = order + (np.arange(s) * m)[:, None]
    sv = a.ravel()[flat]
    ranks = np.empty(s * m)
    ranks[flat] = np.arange(1.0, m + 1.0)
    ranks = ranks.reshape(s, m)
    tied = (sv[:, 1:] == sv[:, :-1]).any(axis=1)
    if tied.any():  # only rows with ties need the average ranks
        sv, order = sv[tied], order[tied]
        new = np.ones(sv.shape, dtype=bool)
        new[:, 1:] = sv[:, 1:] != sv[:, :-1]
        pos = np.arange(m)
        start = np.maximum.accumulate(np.where(new, pos, 0), axis=1)
        last = np.ones(sv.shape, dtype=bool)
        last[:, :-1] = new[:, 1:]
        end = np.minimum.accumulate(np.where(last, pos, m)[:, ::-1], axis=1)[:, ::-1]
        sub = np.empty(sv.shape)
        np.put_along_axis(sub, order, (start + end) / 2.0 + 1.0, axis=1)
        ranks[tied] = sub
    return ranks


def _masked_pearson(a: np.ndarray, b: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Row-wise Pearson r over the entries where ``valid``; NaN where a row is constant."""
    w = valid.astype(np.float64)
    cnt = w.sum(axis=1)
    am = (a * w).sum(axis=1) / cnt
    bm = (b * w).sum(axis=1) / cnt
    da = np.where(valid, a - am[:, None], 0.0)
    db = np.where(valid, b - bm[:, None], 0.0)
    saa, sbb, sab = (da * da).sum(axis=1), (db * db).sum(axis=1), (da * db).sum(axis=1)
    # a spread at rounding level (relative to the values' size) means "constant": no correlation
    ok = (saa > 1e-24 * (np.where(valid, a, 0.0) ** 2).sum(axis=1) + 1e-300) & \
         (sbb > 1e-24 * (np.where(valid, b, 0.0) ** 2).sum(axis=1) + 1e-300)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = sab / np.sqrt(saa * sbb)
    return np.where(ok, np.clip(r, -1.0, 1.0), np.nan)


class _Protocol:
    """Everything about one set of splits that does not depend on the feature subset (computed once)."""

    def __init__(self, x: np.ndarray, y: np.ndarray, train: np.ndarray, kind: str) -> None:
        self.kind = kind
        self.x_mean = x.mean(axis=0)
        self.y_mean = float(y.mean())
        xc, yc = x - self.x_mean, y - self.y_mean  # global centring: better conditioning, same fits
        self.xc = xc
        m = train.astype(np.float64)
        self.ntr = m.sum(axis=1)
        self.mu = m @ xc / self.ntr[:, None]
        self.ybar = m @ yc / self.ntr
        k = x.shape[1]
        gram = (m @ (xc[:, :, None] * xc[:, None, :]).reshape(len(x), k * k)).reshape(-1, k, k)
        self.gram_c = gram - self.ntr[:, None, None] * self.mu[:, :, None] * self.mu[:, None, :]
        self.xy_c = m @ (xc * yc[:, None]) - self.ntr[:, None] * self.mu * self.ybar[:, None]
        var = np.clip(np.einsum("sii->si", self.gram_c) / self.ntr[:, None], 0.0, None)
        sd = np.sqrt(var)
        tiny = 10 * np.finfo(np.float64).eps * np.maximum(np.abs(self.mu + self.x_mean), 1.0)
        self.sd = np.where(sd > tiny, sd, 1.0)  # StandardScaler keeps scale 1 for a constant feature
        test = ~train
        self.n_test = test.sum(axis=1)
        width = int(self.n_test.max())
        # held-out row indices per split, padded with row 0 and masked by `valid`
        order = np.argsort(~test, axis=1, kind="stable")[:, :width]
        self.valid = np.arange(width)[None, :] < self.n_test[:, None]
        self.test_idx = np.where(self.valid, order, 0)
        self.flat_test = (self.test_idx + (np.arange(len(train)) * len(x))[:, None]).ravel()
        y_test = yc[self.test_idx]
        if kind == "spearman":
            self.y_test = _average_ranks(np.where(self.valid, y_test, np.inf))
        else:
            self.y_test = y_test

    def fit(self, idx: Sequence[int], alpha: float) -> dict[str, np.ndarray]:
        idx = np.asarray(idx)
        sd = self.sd[:, idx]
        a = self.gram_c[:, idx][:, :, idx] / (sd[:, :, None] * sd[:, None, :])
        a = a + alpha * np.eye(len(idx))[None]
        b = self.xy_c[:, idx] / sd
        w_std = np.linalg.solve(a, b[:, :, None])[:, :, 0]
        w_raw = w_std / sd
        # predictions of the held-out rows, in the globally centred frame (correlations ignore the offset)
        pred = (w_raw @ self.xc[:, idx].T).ravel()[self.flat_test].reshape(self.test_idx.shape)
        if self.kind == "spearman":
            r = _masked_pearson(_average_ranks(np.where(self.valid, pred, np.inf)), self.y_test, self.valid)
        elif self.kind == "pearson":
            r = _masked_pearson(pred, self.y_test, self.valid)
        else:
            r = self._kendall(pred)
        mean_raw = self.mu[:, idx] + self.x_mean[idx]
        intercept_std = self.ybar + self.y_mean
        intercept_raw = intercept_std - (w_raw * mean_raw).sum(axis=1)
        return {"r": r, "w_std": w_std, "w_raw": w_raw, "b_std": intercept_std, "b_raw": intercept_raw}

    def _kendall(self, pred: np.ndarray) -> np.ndarray:
        from scipy.stats import kendalltau

        out = np.full(len(pred), np.nan)
        for s in range(len(pred)):
            v = self.valid[s]
            p, t = pred[s, v], self.y_test[s, v]
            if np.ptp(p) > 0 and np.ptp(t) > 0:
                out[s] = kendalltau(p, t, variant="b").statistic
        return out


# -- results --------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ProtocolResult:
    """Held-out results of one model under one split protocol.

    Attributes
    ----------
    protocol : {"grouped", "ungrouped"}
    mean, low, high : float or None
        Mean held-out correlation and its 95% percentile interval over splits (None if no split is defined).
    sd : float or None
        Standard deviation of the held-out correlation over splits.
    n_splits, n_undefined : int
        Splits run, and splits whose held-out correlation was undefined (left out of the summary).
    mean_test_rows : float
        Average size of the held-out half.
    weight_std_mean, weight_std_sd, weight_raw_mean, weight_raw_sd : tuple of float
        Per feature: mean and standard deviation over splits of the ridge weight on the standardised scale and on
        the raw scale of the scores.
    intercept_std, intercept_raw : tuple of float
        (mean, sd) over splits of the intercept on each scale.
    correlations : ndarray
        The held-out correlation of every split (NaN where undefined); not serialised.
    """

    protocol: str
    mean: float | None
    low: float | None
    high: float | None
    sd: float | None
    n_splits: int
    n_undefined: int
    mean_test_rows: float
    weight_std_mean: tuple[float, ...]
    weight_std_sd: tuple[float, ...]
    weight_raw_mean: tuple[float, ...]
    weight_raw_sd: tuple[float, ...]
    intercept_std: tuple[float, float]
    intercept_raw: tuple[float, float]
    correlations: np.ndarray = field(repr=False, compare=False)

    @classmethod
    def _from_fit(cls, protocol: str, fit: Mapping[str, np.ndarray], n_test: np.ndarray) -> ProtocolResult:
        r = fit["r"]
        ok = r[np.isfinite(r)]
        if len(ok):
            mean, sd = float(ok.mean()), float(ok.std(ddof=1)) if len(ok) > 1 else 0.0
            low, high = (float(v) for v in np.percentile(ok, [2.5, 97.5]))
        else:
            mean = sd = low = high = None

        def ms(a: np.ndarray) -> tuple[tuple[float, ...], tuple[float, ...]]:
            sd_ = a.std(axis=0, ddof=1) if len(a) > 1 else np.zeros(a.shape[1:])
            return tuple(float(v) for v in a.mean(axis=0)), tuple(float(v) for v in sd_)

        ws, wr = ms(fit["w_std"]), ms(fit["w_raw"])
        bs, br = ms(fit["b_std"][:, None]), ms(fit["b_raw"][:, None])
        return cls(protocol, mean, low, high, sd, len(r), int(len(r) - len(ok)), float(n_test.mean()), ws[0], ws[1],
                   wr[0], wr[1], (bs[0][0], bs[1][0]), (br[0][0], br[1][0]), r)

    def as_dict(self, features: Sequence[str]) -> dict[str, Any]:
        return {"protocol": self.protocol, "mean": self.mean, "ci95": [self.low, self.high], "sd": self.sd,
                "n_splits": self.n_splits, "n_undefined": self.n_undefined,
                "mean_test_rows": round(self.mean_test_rows, 2),
                "weights": {f: {"std_mean": a, "std_sd": b, "raw_mean": c, "raw_sd": d} for f, a, b, c, d in
                            zip(features, self.weight_std_mean, self.weight_std_sd, self.weight_raw_mean,
                                self.weight_raw_sd)},
                "intercept": {"std_mean": self.intercept_std[0], "std_sd": self.intercept_std[1],
                              "raw_mean": self.intercept_raw[0], "raw_sd": self.intercept_raw[1]}}


@dataclass(frozen=True)
class RidgeResult:
    """One feature set under the repeated-split protocol, grouped (by document) and ungrouped.

    ``grouped`` is None when no groups were given. :attr:`score` (what subsets are ranked by) is the grouped mean
    held-out correlation, or the ungrouped one without groups.
    """

    features: tuple[str, ...]
    alpha: float
    kind: str
    n: int
    n_groups: int | None
    train_fraction: float
    seed: int
    grouped: ProtocolResult | None
    ungrouped: ProtocolResult

    @property
    def size(self) -> int:
        return len(self.features)

    @property
    def primary(self) -> ProtocolResult:
        return self.grouped if self.grouped is not None else self.ungrouped

    @property
    def score(self) -> float | None:
        return self.primary.mean

    @property
    def overstatement(self) -> float | None:
        """How much the ungrouped protocol overstates: ungrouped minus grouped mean held-out correlation."""
        if self.grouped is None or self.grouped.mean is None or self.ungrouped.mean is None:
            return None
        return self.ungrouped.mean - self.grouped.mean

    def as_dict(self) -> dict[str, Any]:
        return {"features": list(self.features), "size": self.size, "alpha": self.alpha, "correlation": self.kind,
                "n": self.n, "documents": self.n_groups, "train_fraction": self.train_fraction, "seed": self.seed,
                "grouped": None if self.grouped is None else self.grouped.as_dict(self.features),
                "ungrouped": self.ungrouped.as_dict(self.features), "overstatement": self.overstatement}


def _check_inputs(x, y, groups, kind, alpha, names):
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.ndim == 1:
        x = x[:, None]
    if x.ndim != 2 or y.ndim != 1 or len(x) != len(y):
        raise ValueError(f"features must be (n, k) and target (n,), got {x.shape} and {y.shape}")
    if x.shape[1] == 0:
        raise ValueError("need at least one feature")
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise ValueError("features and target must be finite (leave out rows without a human score first)")
    if len(y) < 6:
        raise ValueError(f"need at least 6 rows to split in halves and correlate, got {len(y)}")
    if kind not in CORRELATION_KINDS:
        raise ValueError(f"unknown correlation kind {kind!r}; known kinds: {', '.join(CORRELATION_KINDS)}")
    if not (alpha >= 0 and math.isfinite(alpha)):
        raise ValueError(f"alpha must be a finite number >= 0, got {alpha}")
    names = tuple(names) if names is not None else tuple(f"x{i}" for i in range(x.shape[1]))
    if len(names) != x.shape[1] or len(set(names)) != len(names):
        raise ValueError(f"need {x.shape[1]} distinct feature names, got {names}")
    if groups is not None and len(groups) != len(y):
        raise ValueError(f"groups must have one label per row ({len(y)}), got {len(groups)}")
    return canonical_features(x), y, names


def _one_blas_thread():
    """A context in which BLAS uses one thread: the fits' matrix products are small, and on a busy 2-core machine
    OpenBLAS's thread start-up and spinning made each fit about 4x slower than one thread (measured)."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1, user_api="blas")


def _protocols(x, y, groups, n_splits, train_fraction, seed, kind):
    out = {"ungrouped": _Protocol(x, y, make_splits(len(y), None, n_splits, train_fraction, seed), kind)}
    if groups is not None:
        out["grouped"] = _Protocol(x, y, make_splits(len(y), groups, n_splits, train_fraction, seed), kind)
    return out


def _result(protocols, idx, names, alpha, kind, n, n_groups, train_fraction, seed) -> RidgeResult:
    res = {p: ProtocolResult._from_fit(p, proto.fit(idx, alpha), proto.n_test) for p, proto in protocols.items()}
    return RidgeResult(tuple(names[i] for i in idx), float(alpha), kind, n, n_groups, float(train_fraction), int(seed),
                       res.get("grouped"), res["ungrouped"])


def learn_ridge(features, target, groups: Sequence | None = None, alpha: float = 1.0, n_splits: int = 1000,
                train_fraction: float = 0.5, seed: int = 0, kind: str = "spearman",
                feature_names: Sequence[str] | None = None) -> RidgeResult:
    """Repeated random-split evaluation of a ridge regression from metric scores to a human target.

    Each split fits ``StandardScaler`` + ``Ridge(alpha)`` on the training half and correlates its predictions with
    the target on the held-out half (Scialom et al. 2019, section 2.4). Runs the ungrouped protocol (random rows)
    and, with ``groups``, the grouped one (random documents); both use ``seed``.

    Parameters
    ----------
    features : array_like, shape (n, k)
        Metric scores, one column per feature.
    target : array_like, shape (n,)
        Human target (see :func:`target_values`).
    groups : sequence, shape (n,), optional
        Document id of every row, for grouped splits.
    alpha : float
        Ridge penalty on the standardised weights (the paper: 1).
    n_splits : int
        Random splits per protocol (the paper: 1,000).
    train_fraction : float
        Share of rows (ungrouped) or documents (grouped) in the training half (the paper: 0.5).
    seed : int
        Seeds the splits: the same seed gives the same splits and the same numbers.
    kind : {"spearman", "pearson", "kendall"}
        Held-out correlation.
    feature_names : sequence of str, optional

    Returns
    -------
    RidgeResult
    """
    x, y, names = _check_inputs(features, target, groups, kind, alpha, feature_names)
    protocols = _protocols(x, y, groups, n_splits, train_fraction, seed, kind)
    n_groups = None if groups is None else len(set(np.asarray(groups, dtype=object).tolist()))
    with _one_blas_thread():
        return _result(protocols, list(range(x.shape[1])), names, alpha, kind, len(y), n_groups, train_fraction,
                       seed)


def _rank_key(r: RidgeResult):
    score = r.score
    return (score is None, -(score if score is not None else 0.0), r.size, r.features)


def search_subsets(features_by_name: Mapping[str, Sequence[float]], target, groups: Sequence | None = None,
                   max_size: int | None = None, alpha: float = 1.0, n_splits: int = 1000, train_fraction: float = 0.5,
                   seed: int = 0, kind: str = "spearman", max_subsets: int = MAX_SUBSETS) -> list[RidgeResult]:
    """Evaluate every non-empty subset of the features (up to ``max_size`` features) with :func:`learn_ridge`.

    All subsets see the same splits (one ``seed``), so their held-out correlations are paired. Results are ranked
    by mean held-out *grouped* correlation (ungrouped without ``groups``), best first; ties go to the smaller
    subset. Every subset gets every split; :func:`select_features` (what ``meta-eval learn`` runs) screens first
    and falls back to greedy selection beyond the cap.

    Parameters
    ----------
    features_by_name : mapping of str to array_like
        Feature name -> scores (n,), in the order subsets list their features.
    max_size : int, optional
        Largest subset size (default: all features).
    max_subsets : int
        Cap on the number of subsets (default :data:`MAX_SUBSETS` = 1,024 = every subset of 10 features). Each
        subset costs about 0.1-0.2 s per protocol with 1,000 Spearman splits of 2,000 rows.
    Other parameters as :func:`learn_ridge`.

    Raises
    ------
    ValueError
        If the number of subsets exceeds ``max_subsets`` (restrict the features or lower ``max_size``).
    """
    names = list(features_by_name)
    if not names:
        raise ValueError("no features given")
    x = np.column_stack([np.asarray(features_by_name[f], dtype=np.float64) for f in names])
    x, y, names = _check_inputs(x, target, groups, kind, alpha, names)
    k = len(names)
    max_size = k if max_size is None else int(max_size)
    if max_size < 1:
        raise ValueError(f"max_size must be >= 1, got {max_size}")
    max_size = min(max_size, k)
    total = sum(comb(k, s) for s in range(1, max_size + 1))
    if total > max_subsets:
        raise ValueError(f"{total} subsets of {k} features (up to size {max_size}) exceed the cap of {max_subsets}; "
                         "choose fewer features or a smaller maximum subset size")
    protocols = _protocols(x, y, groups, n_splits, train_fraction, seed, kind)
    n_groups = None if groups is None else len(set(np.asarray(groups, dtype=object).tolist()))
    with _one_blas_thread():
        results = [_result(protocols, list(idx), names, alpha, kind, len(y), n_groups, train_fraction, seed)
                   for size in range(1, max_size + 1) for idx in combinations(range(k), size)]
    return sorted(results, key=_rank_key)


# -- search strategies ----------------------------------------------------------------------------------------------
def _n_subsets(k: int, max_size: int) -> int:
    return sum(comb(k, s) for s in range(1, max_size + 1))


def _size_limit(k: int, max_size: int | None) -> int:
    if max_size is None:
        return k
    if isinstance(max_size, bool) or int(max_size) != max_size or max_size < 1:
        raise ValueError(f"max_size must be an integer >= 1, got {max_size!r}")
    return min(int(max_size), k)


def choose_strategy(n_features: int, max_size: int | None = None, strategy: str = "auto",
                    max_subsets: int = MAX_SUBSETS) -> tuple[str, str]:
    """Which search :func:`select_features` runs, and why.

    Parameters
    ----------
    n_features : int
    max_size : int, optional
        Largest feature set (default: all features).
    strategy : {"auto", "exhaustive", "greedy", "none"}
        ``auto``: exhaustive if the number of non-empty subsets up to ``max_size`` is at most ``max_subsets``,
        else greedy forward selection. ``none``: the full feature set only.
    max_subsets : int
        The cap on an exhaustive search.

    Returns
    -------
    (strategy, reason) : tuple of str
        ``strategy`` is ``"exhaustive"``, ``"greedy-forward"`` or ``"none"``; ``reason`` is a sentence for people.

    Raises
    ------
    ValueError
        For an unknown strategy, no features, a bad ``max_size``, or ``exhaustive`` beyond the cap.

    Examples
    --------
    10 features have 1,023 subsets (within the cap of 1,024): ``auto`` is exhaustive; 11 have 2,047: greedy.
    """
    if strategy not in SEARCH_STRATEGIES:
        raise ValueError(f"unknown search strategy {strategy!r}; known: {', '.join(SEARCH_STRATEGIES)}")
    if n_features < 1:
        raise ValueError("no features given")
    size = _size_limit(n_features, max_size)
    total = _n_subsets(n_features, size)
    upto = "" if size == n_features else f" up to size {size}"
    count = f"{total:,} subsets of {n_features} features{upto}"
    if strategy == "none":
        return "none", "search turned off: the full feature set only"
    if strategy == "greedy":
        return "greedy-forward", f"requested ({count})"
    if total <= max_subsets:
        return "exhaustive", (f"{'requested' if strategy == 'exhaustive' else 'auto'}: {count}, within the cap "
                              f"of {max_subsets:,}: every subset is evaluated")
    if strategy == "exhaustive":
        raise ValueError(f"{count} exceed the cap of {max_subsets:,} for an exhaustive search; choose fewer features, "
                         "a smaller maximum subset size, or the greedy search")
    return "greedy-forward", (f"auto: {count} exceed the cap of {max_subsets:,} for an exhaustive search: features "
                              "are added greedily")


@dataclass(frozen=True)
class SearchOutcome:
    """What :func:`select_features` did and found.

    Attributes
    ----------
    results : tuple of RidgeResult
        The finalists, evaluated on all ``n_splits`` splits with both protocols, best first (by the mean held-out
        primary correlation; ties go to the smaller set). Every reported correlation comes from these.
    strategy : {"exhaustive", "greedy-forward", "none"}
    reason : str
        Why this strategy (see :func:`choose_strategy`).
    n_features, max_size : int
        Features searched over and the largest set allowed.
    n_subsets, max_subsets : int
        Non-empty subsets up to ``max_size``, and the cap on an exhaustive search.
    evaluated : int
        Feature sets scored in the search stage.
    search_splits : int
        Splits of the search stage (a prefix of the ``n_splits`` seeded splits, primary protocol only); equal to
        ``n_splits`` when nothing was screened.
    screened : bool
        True when the search stage used fewer splits than the reported numbers.
    n_splits : int
    min_gain : float or None
        Greedy: the smallest improvement of the search-stage mean that adds a feature.
    stopped : str or None
        Greedy: why it stopped.
    path : tuple of dict
        Greedy: one entry per step (``step``, ``added``, ``features`` in the order added, ``score`` = search-stage
        mean, ``candidates`` scored, ``accepted``); the last entry may be the rejected best addition.
    screening : tuple of (tuple of str, float or None)
        Search-stage mean of every finalist when ``screened``.
    """

    results: tuple[RidgeResult, ...]
    strategy: str
    reason: str
    n_features: int
    max_size: int
    n_subsets: int
    max_subsets: int
    evaluated: int
    search_splits: int
    screened: bool
    n_splits: int
    min_gain: float | None = None
    stopped: str | None = None
    path: tuple[dict, ...] = ()
    screening: tuple[tuple[tuple[str, ...], float | None], ...] = ()

    @property
    def best(self) -> RidgeResult:
        return self.results[0]

    def summary(self) -> str:
        """One sentence: what was searched, on which splits, and what is reported."""
        if self.strategy == "none":
            return f"no search: the full set of {self.n_features} features"
        if self.strategy == "exhaustive":
            what = f"exhaustive: all {self.evaluated:,} subsets"
        else:
            what = (f"greedy forward selection: {self.evaluated:,} feature sets over {len(self.path)} step(s); "
                    f"stopped: {self.stopped}")
        if self.screened:
            return (f"{what}; screened on the first {self.search_splits} of the {self.n_splits} splits (primary "
                    f"protocol), then the {len(self.results)} finalists evaluated on all {self.n_splits}")
        return f"{what}; every set evaluated on all {self.n_splits} splits"

    def as_dict(self) -> dict[str, Any]:
        return {"strategy": self.strategy, "reason": self.reason, "summary": self.summary(),
                "features": self.n_features, "max_size": self.max_size, "subsets": self.n_subsets,
                "cap": self.max_subsets, "evaluated": self.evaluated, "search_splits": self.search_splits,
                "screened": self.screened, "splits": self.n_splits, "finalists": len(self.results),
                "min_gain": self.min_gain, "stopped": self.stopped, "path": [dict(p) for p in self.path],
                "screening": [{"features": list(f), "mean": m} for f, m in self.screening]}


class _Screen:
    """Mean held-out correlation of a feature set on some splits of one protocol (the search stage)."""

    def __init__(self, x: np.ndarray, y: np.ndarray, train: np.ndarray, kind: str, alpha: float) -> None:
        self.proto = _Protocol(x, y, train, kind)
        self.alpha = alpha

    def __call__(self, idx: Sequence[int]) -> float | None:
        r = self.proto.fit(list(idx), self.alpha)["r"]
        ok = r[np.isfinite(r)]
        return float(ok.mean()) if len(ok) else None


def _screen_key(score: float | None, idx: tuple[int, ...]):
    return (score is None, -(score if score is not None else 0.0), len(idx), idx)


def select_features(features_by_name: Mapping[str, Sequence[float]], target, groups: Sequence | None = None,
                    strategy: str = "auto", max_size: int | None = None, alpha: float = 1.0, n_splits: int = 1000,
                    train_fraction: float = 0.5, seed: int = 0, kind: str = "spearman",
                    max_subsets: int = MAX_SUBSETS, search_splits: int = SEARCH_SPLITS, finalists: int = FINALISTS,
                    min_gain: float = MIN_GAIN) -> SearchOutcome:
    """Search feature sets for the ridge model with the best mean held-out correlation (see the module notes).

    Parameters
    ----------
    features_by_name : mapping of str to array_like
        Feature name -> scores (n,).
    target, groups, alpha, n_splits, train_fraction, seed, kind
        As :func:`learn_ridge`; every feature set sees the same splits.
    strategy : {"auto", "exhaustive", "greedy", "none"}
        See :func:`choose_strategy`.
    max_size : int, optional
        Largest feature set (exhaustive: subsets up to this size; greedy: stop at this size).
    max_subsets : int
        Cap on an exhaustive search (default :data:`MAX_SUBSETS`).
    search_splits : int
        Splits that screen feature sets (the first ``search_splits`` of the seeded splits, primary protocol only;
        default :data:`SEARCH_SPLITS`). Screening is skipped (every set evaluated on all splits) when it is not
        fewer than ``n_splits``, or, for an exhaustive search, when there are at most ``finalists`` subsets.
    finalists : int
        Exhaustive with screening: how many of the best screened subsets are evaluated on all splits.
    min_gain : float
        Greedy: add a feature only if it raises the search-stage mean by more than this (default
        :data:`MIN_GAIN` = 0.001, the last digit the tables print: smaller gains are noise-level and only make the
        model longer; 0 adds any strict improvement).

    Returns
    -------
    SearchOutcome

    Raises
    ------
    ValueError
        For bad inputs (see :func:`learn_ridge`, :func:`choose_strategy`), or when no single feature has a defined
        held-out correlation (greedy).
    """
    names = list(features_by_name)
    if not names:
        raise ValueError("no features given")
    x = np.column_stack([np.asarray(features_by_name[f], dtype=np.float64) for f in names])
    x, y, names = _check_inputs(x, target, groups, kind, alpha, names)
    for label, value in (("n_splits", n_splits), ("search_splits", search_splits), ("finalists", finalists)):
        if isinstance(value, bool) or int(value) != value or value < 1:
            raise ValueError(f"{label} must be an integer >= 1, got {value!r}")
    if not (math.isfinite(min_gain) and min_gain >= 0):
        raise ValueError(f"min_gain must be a finite number >= 0, got {min_gain}")
    k = len(names)
    how, reason = choose_strategy(k, max_size, strategy, max_subsets)
    with _one_blas_thread():
        return _search(x, y, names, groups, how, reason, _size_limit(k, max_size), alpha, int(n_splits),
                       train_fraction, seed, kind, int(max_subsets), int(search_splits), int(finalists),
                       float(min_gain))


def _search(x, y, names, groups, how, reason, size, alpha, n_splits, train_fraction, seed, kind, max_subsets,
            search_splits, finalists, min_gain) -> SearchOutcome:
    """The body of :func:`select_features` (inputs checked, strategy chosen)."""
    k = len(names)
    masks = {"ungrouped": make_splits(len(y), None, n_splits, train_fraction, seed)}
    if groups is not None:
        masks["grouped"] = make_splits(len(y), groups, n_splits, train_fraction, seed)
    primary = "grouped" if groups is not None else "ungrouped"
    n_groups = None if groups is None else len(set(np.asarray(groups, dtype=object).tolist()))
    n_screen = min(int(search_splits), int(n_splits))

    def evaluate(sets: Sequence[tuple[int, ...]]) -> tuple[RidgeResult, ...]:
        union = sorted(set().union(*sets))
        pos = {j: i for i, j in enumerate(union)}
        protocols = {p: _Protocol(x[:, union], y, m, kind) for p, m in masks.items()}
        sub_names = [names[j] for j in union]
        res = [_result(protocols, [pos[j] for j in idx], sub_names, alpha, kind, len(y), n_groups, train_fraction,
                       seed) for idx in sets]
        return tuple(sorted(res, key=_rank_key))

    common = {"strategy": how, "reason": reason, "n_features": k, "max_size": size,
              "n_subsets": _n_subsets(k, size), "max_subsets": int(max_subsets), "n_splits": int(n_splits)}
    if how == "none":
        return SearchOutcome(evaluate([tuple(range(k))]), evaluated=1, search_splits=int(n_splits), screened=False,
                             **common)
    if how == "exhaustive":
        subsets = [idx for s in range(1, size + 1) for idx in combinations(range(k), s)]
        if n_screen >= n_splits or len(subsets) <= finalists:
            return SearchOutcome(evaluate(subsets), evaluated=len(subsets), search_splits=int(n_splits),
                                 screened=False, **common)
        screen = _Screen(x, y, masks[primary][:n_screen], kind, alpha)
        scores = {idx: screen(idx) for idx in subsets}
        keep = sorted(subsets, key=lambda idx: _screen_key(scores[idx], idx))[:finalists]
        results = evaluate(keep)
        by_names = {tuple(names[j] for j in idx): scores[idx] for idx in keep}
        return SearchOutcome(results, evaluated=len(subsets), search_splits=n_screen, screened=True,
                             screening=tuple((r.features, by_names[r.features]) for r in results), **common)

    # greedy forward selection on the search-stage splits
    screen = _Screen(x, y, masks[primary][:n_screen], kind, alpha)
    chosen: list[int] = []
    current: float | None = None
    path: list[dict] = []
    evaluated = 0
    stopped = f"reached the maximum size {size}" if size < k else "every feature added"
    while len(chosen) < size:
        best_j, best_score, candidates = None, None, 0
        for j in range(k):
            if j in chosen:
                continue
            score = screen(sorted(chosen + [j]))
            candidates += 1
            if score is not None and (best_score is None or score > best_score):
                best_j, best_score = j, score
        evaluated += candidates
        if best_j is None:
            if not chosen:
                raise ValueError("no single feature has a defined held-out correlation (constant predictions or "
                                 "target on every split)")
            stopped = "no addition has a defined held-out correlation"
            break
        accepted = current is None or best_score > current + min_gain
        path.append({"step": len(path) + 1, "added": names[best_j],
                     "features": [names[j] for j in chosen + [best_j]], "score": best_score,
                     "candidates": candidates, "accepted": accepted})
        if not accepted:
            stopped = (f"the best addition ({names[best_j]}: {best_score:.4f}) does not improve the mean "
                       f"{current:.4f} by more than {min_gain:g}")
            break
        chosen.append(best_j)
        current = best_score
    sets = [tuple(sorted(chosen[:i])) for i in range(1, len(chosen) + 1)]
    results = evaluate(sets)
    step_score = {tuple(names[j] for j in idx): p["score"] for idx, p in zip(sets, path)}
    return SearchOutcome(results, evaluated=evaluated, search_splits=n_screen, screened=n_screen < n_splits,
                         min_gain=float(min_gain), stopped=stopped, path=tuple(path),
                         screening=tuple((r.features, step_score[r.features]) for r in results)
                         if n_screen < n_splits else (), **common)


# -- the final model ------------------------------------------------------------------------------------------------
def fit_final(features, target, alpha: float = 1.0) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """Fit ``StandardScaler`` + ``Ridge(alpha)`` on all rows.

    Returns
    -------
    means, stds, weights, intercept
        Scaler means and scales (population sd; 1 for a constant feature), standardised-scale weights, intercept:
        ``prediction = ((x - means) / stds) @ weights + intercept``.
    """
    from sklearn.linear_model import Ridge
    from sklearn.preprocessing import StandardScaler

    x = canonical_features(features)  # as LearnedModel.predict takes them
    y = np.asarray(target, dtype=np.float64)
    if x.ndim == 1:
        x = x[:, None]
    scaler = StandardScaler().fit(x)
    ridge = Ridge(alpha=alpha).fit(scaler.transform(x), y)
    return scaler.mean_.copy(), scaler.scale_.copy(), np.asarray(ridge.coef_, dtype=np.float64).copy(), \
        float(ridge.intercept_)
