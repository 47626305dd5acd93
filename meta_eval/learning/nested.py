"""Nested cross-validation of a learned (ridge) metric: what ``meta-eval learn`` reports by default.

The paper's protocol (Scialom, Lamprier, Piwowarski & Staiano, EMNLP 2019, "Answers Unite!", section 2.4; kept as
``learn --protocol paper``, :func:`meta_eval.learning.ridge.select_features`) chooses the feature set on the same
random halves it reports, with the ridge strength fixed at 1, and summarises the spread of the held-out
correlation over halves; the chosen set's number is optimistic by the selection, and the spread over halves is not
a confidence interval. This module evaluates the *whole procedure* (choose features, choose alpha, fit) on rows it
never saw (Varma & Simon 2006, "Bias in error estimation when using cross-validation for model selection"; Cawley &
Talbot 2010):

- **Outer folds.** The rows are split into ``folds`` (default 5) folds *by document* (every document's rows in one
  fold; documents shuffled with ``seed``, then dealt round-robin), or by row when the set has a single document.
  Each fold is held out once.
- **Inside each outer training part only**: the feature set (the search strategy of :func:`ridge.choose_strategy`:
  every subset within the cap, else greedy forward selection, or the full set) and the ridge strength (from the
  grid ``alphas``, default :data:`ALPHAS`) are chosen together by an inner ``inner_folds``-fold cross-validation
  (by document again, one fold per document where the part holds fewer, and the number used is reported per
  fold; the mean inner held-out correlation, ties to the smaller set, then the alpha nearest the paper's 1, then
  the larger: :func:`tie_rank`). The chosen model is
  fitted on the whole training part (``StandardScaler`` + ``Ridge(alpha)``) and predicts the held-out fold. The
  held-out rows of a fold influence nothing that is evaluated on them.
- **The estimate** is the correlation (``kind``) between the pooled held-out predictions (every row predicted once,
  by the model of the fold that held it out) and the target. Its interval is a **percentile bootstrap over
  documents** (``resamples`` draws of documents with replacement, their rows with them; seeded), and the paired
  tests use **the same draws**: the learned metric against the best single feature (the feature with the highest
  correlation with the target on all rows: choosing it on all rows favours it, so the test is conservative for
  the learned metric) and against the baseline variant, on the same rows. The test is the two-sided paired
  bootstrap test of the difference: ``p = min(1, 2 * (min(#(d <= 0), #(d >= 0)) + 1) / (B + 1))`` over the
  resampled differences ``d``.
- **Weights** of each fold's model (standardised scale) are reported per fold, and per feature their mean and
  standard deviation over the folds (0 where a fold did not choose the feature) with how many folds chose it.
- **The final model** (saved with ``--save``) is the same procedure run on all rows: features and alpha chosen by the
  inner cross-validation on all rows, then fitted on all rows. The nested estimate is the estimate of that
  procedure's held-out correlation.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any, Mapping, Sequence

import numpy as np

from meta_eval.learning import ridge

__all__ = ["ALPHAS", "FOLDS", "INNER_FOLDS", "RESAMPLES", "Comparison", "FoldResult", "NestedResult", "fold_ids",
           "nested_cv", "paired_bootstrap"]

ALPHAS = (0.01, 0.1, 1.0, 10.0, 100.0, 1000.0)  # the ridge strengths the inner cross-validation chooses from
FOLDS = 5
INNER_FOLDS = 5
RESAMPLES = 1000
CONFIDENCE = 0.95


def fold_ids(n: int, groups: Sequence | None, k: int, seed: int | np.random.Generator) -> np.ndarray:
    """The fold (0..k-1) of every row: groups (documents) shuffled with ``seed`` and dealt round-robin, so every
    group's rows share a fold; without ``groups`` the rows are shuffled and dealt.

    Raises
    ------
    ValueError
        If there are fewer groups (rows) than folds, or ``k`` < 2.
    """
    if isinstance(k, bool) or int(k) != k or k < 2:
        raise ValueError(f"folds must be an integer >= 2, got {k!r}")
    rng = np.random.default_rng(seed)
    codes = np.arange(n) if groups is None else np.unique(np.asarray(groups, dtype=object).astype(str),
                                                          return_inverse=True)[1]
    n_units = int(codes.max()) + 1 if n else 0
    if n_units < k:
        what = "documents" if groups is not None else "rows"
        raise ValueError(f"{k} folds need at least {k} {what}, got {n_units}")
    fold_of_unit = np.empty(n_units, dtype=np.int64)
    fold_of_unit[rng.permutation(n_units)] = np.arange(n_units) % k
    return fold_of_unit[codes]


def _correlation(pred: np.ndarray, y: np.ndarray, kind: str) -> float:
    """``kind`` correlation of two vectors; NaN when either is constant."""
    valid = np.ones((1, len(y)), dtype=bool)
    if kind == "spearman":
        return float(ridge._masked_pearson(ridge._average_ranks(pred[None]), ridge._average_ranks(y[None]), valid)[0])
    if kind == "pearson":
        return float(ridge._masked_pearson(pred[None], y[None], valid)[0])
    from scipy.stats import kendalltau

    if np.ptp(pred) == 0 or np.ptp(y) == 0:
        return math.nan
    return float(kendalltau(pred, y, variant="b").statistic)


# -- the inner selection ----------------------------------------------------------------------------------------------
PAPER_ALPHA = 1.0  # Scialom et al. (2019) fix the ridge strength at 1 (learn --protocol paper)


def tie_rank(alpha: float) -> tuple[float, float]:
    """How alphas whose inner correlations tie are ordered (smallest first): nearest the paper's
    :data:`PAPER_ALPHA` on a log scale, then the larger.

    A tie is common, not a corner case: a model of one feature predicts a positive multiple of it plus a constant
    whatever alpha, so its correlation within every inner fold is the same for every alpha. Taking the largest
    alpha then (the old rule, "the simpler model") shrank the slope towards 0 (by n / (n + alpha) on n
    standardised rows: 0.29 for alpha 1000 and 400 rows), so the intercepts of the outer folds' models, learned on
    different rows, dominated their pooled predictions and lowered the pooled held-out estimate that no inner fold
    measured. Where the data cannot tell the alphas apart, the paper's alpha is kept.

    >>> sorted((0.01, 0.1, 1.0, 10.0, 100.0, 1000.0), key=tie_rank)[:3], min((0.0, 100.0), key=tie_rank)
    ([1.0, 10.0, 0.1], 100.0)
    """
    distance = abs(math.log10(alpha / PAPER_ALPHA)) if alpha > 0 else math.inf
    return distance, -alpha


def _select(x: np.ndarray, y: np.ndarray, groups, strategy: str, size: int, alphas: Sequence[float],
            inner_folds: int, seed, kind: str, min_gain: float) -> dict[str, Any]:
    """Choose (feature set, alpha) by ``inner_folds``-fold cross-validation on these rows only."""
    k = x.shape[1]
    n_units = len(set(np.asarray(groups, dtype=object).tolist())) if groups is not None else len(y)
    inner = min(inner_folds, n_units)
    folds = fold_ids(len(y), groups, inner, seed)
    masks = np.stack([folds != f for f in range(inner)])
    proto = ridge._Protocol(x, y, masks, kind)
    cache: dict[tuple[int, ...], tuple[float | None, float]] = {}

    def score(idx: tuple[int, ...]) -> tuple[float | None, float]:
        if idx not in cache:
            scored = []
            for a in alphas:
                r = proto.fit(list(idx), a)["r"]
                ok = r[np.isfinite(r)]
                if len(ok):
                    scored.append((float(ok.mean()), a))
            if not scored:
                cache[idx] = (None, alphas[0])
            else:  # ties (within 1e-12) go to the alpha nearest the paper's, then the larger (tie_rank)
                top = max(s for s, _ in scored)
                cache[idx] = min(((s, a) for s, a in scored if s >= top - 1e-12), key=lambda sa: tie_rank(sa[1]))
        return cache[idx]

    def key(idx):
        s, a = score(idx)
        return (s is None, -(s if s is not None else 0.0), len(idx), tie_rank(a), idx)

    if strategy == "none":
        sets = [tuple(range(k))]
    elif strategy == "exhaustive":
        sets = [idx for s in range(1, size + 1) for idx in combinations(range(k), s)]
    else:  # greedy forward selection on the inner mean
        chosen: list[int] = []
        current = None
        sets = []
        while len(chosen) < size:
            cands = [tuple(sorted(chosen + [j])) for j in range(k) if j not in chosen]
            top = min(cands, key=key)
            s = score(top)[0]
            if s is None or (current is not None and not s > current + min_gain):
                break
            chosen, current = list(top), s
            sets.append(top)
        sets = sets or [min(((j,) for j in range(k)), key=key)]
    best = min(sets, key=key)
    s, a = score(best)
    return {"idx": best, "alpha": float(a), "inner": s, "evaluated": len(cache) * len(alphas), "inner_folds": inner}


# -- results ----------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class FoldResult:
    """One outer fold: what was chosen on its training part and how the model did on the fold.

    ``fold`` is its index from 0 (:func:`fold_ids`); the table and the JSON number the folds from 1. ``inner_folds``
    is the number of inner folds its training part used: ``--inner-folds``, or one per document (row) where the part
    holds fewer."""

    fold: int
    train_rows: int
    test_rows: int
    test_documents: int | None
    features: tuple[str, ...]
    alpha: float
    inner: float | None
    weights: tuple[float, ...]
    intercept: float
    correlation: float | None
    inner_folds: int

    def as_dict(self) -> dict[str, Any]:
        return {"fold": self.fold + 1, "train_rows": self.train_rows, "test_rows": self.test_rows,
                "test_documents": self.test_documents, "inner_folds": self.inner_folds,
                "features": list(self.features), "alpha": self.alpha,
                "inner_mean": self.inner, "weights_std": dict(zip(self.features, self.weights)),
                "intercept_std": self.intercept, "heldout": self.correlation}


@dataclass(frozen=True)
class Comparison:
    """The learned metric against one single feature on the same held-out rows (paired bootstrap, same draws)."""

    role: str  # "best single feature" or "baseline"
    feature: str
    value: float | None
    low: float | None
    high: float | None
    difference: float | None
    diff_low: float | None
    diff_high: float | None
    p: float | None

    def as_dict(self) -> dict[str, Any]:
        return {"role": self.role, "feature": self.feature, "value": self.value, "ci": [self.low, self.high],
                "difference": self.difference, "difference_ci": [self.diff_low, self.diff_high], "p": self.p}


@dataclass(frozen=True)
class NestedResult:
    """What :func:`nested_cv` found (see the module notes for every choice)."""

    features: tuple[str, ...]  # the final model's features (chosen on all rows)
    alpha: float  # the final model's alpha
    kind: str
    n: int
    n_groups: int | None
    folds: int
    inner_folds: int  # as asked (--inner-folds); inner_used: what each outer training part used
    final_inner_folds: int  # the inner folds that chose the final model's features and alpha on all rows
    alphas: tuple[float, ...]
    strategy: str
    reason: str
    seed: int
    resamples: int
    value: float | None
    low: float | None
    high: float | None
    resamples_used: int
    fold_results: tuple[FoldResult, ...]
    comparisons: tuple[Comparison, ...]
    baseline_note: str | None
    weights: dict[str, dict[str, float]]
    predictions: np.ndarray = field(repr=False, compare=False)

    @property
    def unit(self) -> str:
        return "documents" if self.n_groups is not None else "rows"

    @property
    def inner_used(self) -> tuple[int, ...]:
        """The inner folds each outer training part used (``inner_folds``, or fewer: one per document there)."""
        return tuple(f.inner_folds for f in self.fold_results)

    @property
    def inner_folds_used(self) -> int | None:
        """The inner folds every outer training part used, or None where they differ (see :attr:`inner_used`)."""
        used = set(self.inner_used)
        return used.pop() if len(used) == 1 else None

    def inner_note(self) -> str | None:
        """Why fewer inner folds than ``--inner-folds`` were used (a training part with fewer documents), or None."""
        unit = "document" if self.n_groups is not None else "row"
        capped = sum(k < self.inner_folds for k in self.inner_used)
        if not capped and self.final_inner_folds == self.inner_folds:
            return None
        used = sorted(set(self.inner_used))
        text = str(used[0]) if len(used) == 1 else f"{used[0]} to {used[-1]}"
        return (f"--inner-folds {self.inner_folds} is more than the {unit}s of {capped} of the {self.folds} outer "
                f"training parts, whose inner cross-validation has one fold per {unit}: {text} inner folds, not "
                f"{self.inner_folds}" + (f" (the final model's, on all rows: {self.final_inner_folds})"
                                         if self.final_inner_folds != self.inner_folds else ""))

    def scheme(self) -> str:
        """The split scheme in one sentence, with the inner folds used (a range where the training parts differ)."""
        by = "document" if self.n_groups is not None else "row"
        used = sorted(set(self.inner_used)) or [self.inner_folds]
        inner = f"{used[0]}-fold" if len(used) == 1 else f"{used[0]}- to {used[-1]}-fold"
        return (f"nested cross-validation: {self.folds} outer folds by {by} (seed {self.seed}); in each outer "
                f"training part only, the feature set ({self.strategy}) and alpha (from "
                f"{', '.join(f'{a:g}' for a in self.alphas)}) chosen by {inner} inner cross-validation by {by}")

    def interval_label(self) -> str:
        return (f"{CONFIDENCE:.0%} percentile bootstrap over {self.unit} ({self.resamples} resamples, seed "
                f"{self.seed}) of the pooled held-out predictions")

    def as_dict(self) -> dict[str, Any]:
        return {"scheme": self.scheme(), "folds": self.folds, "inner_folds": self.inner_folds_used,
                "inner_folds_requested": self.inner_folds, "inner_folds_note": self.inner_note(),
                "grouped": self.n_groups is not None, "alphas": list(self.alphas), "strategy": self.strategy,
                "reason": self.reason, "correlation": self.kind, "n": self.n, "documents": self.n_groups,
                "seed": self.seed, "heldout": {"value": self.value, "ci": [self.low, self.high],
                                               "interval": self.interval_label(),
                                               "resamples": self.resamples, "resamples_used": self.resamples_used},
                "test": "two-sided paired bootstrap test of the difference in correlation, the interval's draws",
                "comparisons": [c.as_dict() for c in self.comparisons], "baseline_note": self.baseline_note,
                "weights": self.weights, "per_fold": [f.as_dict() for f in self.fold_results],
                "final": {"features": list(self.features), "alpha": self.alpha,
                          "inner_folds": self.final_inner_folds}}


# -- the bootstrap ----------------------------------------------------------------------------------------------------
def paired_bootstrap(columns: np.ndarray, y: np.ndarray, groups: Sequence | None, kind: str, resamples: int,
                     seed: int | np.random.Generator) -> np.ndarray:
    """Correlation of every column of ``columns`` (m, n) with ``y`` on ``resamples`` bootstrap draws of the
    documents (``groups``; rows without), with replacement, a drawn document bringing all its rows; the same draws
    for every column. Returns shape (resamples, m), NaN where a draw's correlation is undefined."""
    rng = np.random.default_rng(seed)
    n = len(y)
    codes = np.arange(n) if groups is None else np.unique(np.asarray(groups, dtype=object).astype(str),
                                                          return_inverse=True)[1]
    order = np.argsort(codes, kind="stable")
    sizes = np.bincount(codes)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    g = len(sizes)
    draws = rng.integers(0, g, size=(resamples, g))
    lengths = sizes[draws].sum(axis=1)
    width = int(lengths.max())
    idx = np.zeros((resamples, width), dtype=np.int64)
    for b in range(resamples):
        d = draws[b]
        s = sizes[d]
        offs = np.arange(lengths[b]) - np.repeat(np.cumsum(s) - s, s)
        idx[b, :lengths[b]] = order[np.repeat(starts[d], s) + offs]
    valid = np.arange(width)[None, :] < lengths[:, None]
    out = np.full((resamples, len(columns)), np.nan)
    if kind == "kendall":
        for b in range(resamples):
            rows = idx[b, :lengths[b]]
            for j, col in enumerate(columns):
                out[b, j] = _correlation(col[rows], y[rows], kind)
        return out
    yy = np.where(valid, y[idx], np.inf)
    yt = ridge._average_ranks(yy) if kind == "spearman" else np.where(valid, y[idx], 0.0)
    for j, col in enumerate(columns):
        xx = np.where(valid, col[idx], np.inf)
        xt = ridge._average_ranks(xx) if kind == "spearman" else np.where(valid, col[idx], 0.0)
        out[:, j] = ridge._masked_pearson(xt, yt, valid)
    return out


def _two_sided(d: np.ndarray) -> float:
    return float(min(1.0, 2 * (min((d <= 1e-12).sum(), (d >= -1e-12).sum()) + 1) / (len(d) + 1)))


# -- the procedure ----------------------------------------------------------------------------------------------------
def nested_cv(features_by_name: Mapping[str, Sequence[float]], target, groups: Sequence | None = None, *,
              strategy: str = "auto", max_size: int | None = None, alphas: Sequence[float] = ALPHAS,
              folds: int = FOLDS, inner_folds: int = INNER_FOLDS, seed: int = 0, kind: str = "spearman",
              min_gain: float = ridge.MIN_GAIN, resamples: int = RESAMPLES,
              baseline: str | None = None) -> NestedResult:
    """Nested cross-validation of the ridge procedure, with a bootstrap interval and paired tests (module notes).

    Parameters
    ----------
    features_by_name : mapping of str to array_like
        Feature name -> scores (n,).
    target : array_like, shape (n,)
    groups : sequence, optional
        Document id of every row (folds by document); None: folds by row.
    strategy, max_size, min_gain
        The feature-set search (:func:`meta_eval.learning.ridge.choose_strategy`), run inside every training part.
    alphas : sequence of float
        The ridge strengths to choose from (standardised features).
    folds, inner_folds : int
        Outer and inner folds (the inner ones are capped at the training part's documents; the number each part
        used is recorded, :attr:`FoldResult.inner_folds`, and said, :meth:`NestedResult.inner_note`).
    seed : int
        Seeds the folds and the bootstrap.
    kind : {"spearman", "pearson", "kendall"}
    resamples : int
        Bootstrap draws of the interval and the tests.
    baseline : str, optional
        A feature to test the learned metric against (besides the best single feature).

    Returns
    -------
    NestedResult

    Raises
    ------
    ValueError
        For bad inputs, too few documents for the folds, an empty or negative alpha grid, an unknown baseline.
    """
    names = list(features_by_name)
    if not names:
        raise ValueError("no features given")
    x = np.column_stack([np.asarray(features_by_name[f], dtype=np.float64) for f in names])
    alphas = tuple(float(a) for a in alphas)
    if not alphas or not all(math.isfinite(a) and a >= 0 for a in alphas):
        raise ValueError(f"the alpha grid must be finite numbers >= 0, got {list(alphas)}")
    x, y, names = ridge._check_inputs(x, target, groups, kind, alphas[0], names)
    if isinstance(resamples, bool) or int(resamples) != resamples or resamples < 1:
        raise ValueError(f"resamples must be an integer >= 1, got {resamples!r}")
    if baseline is not None and baseline not in names:
        raise ValueError(f"baseline {baseline!r} is not a feature; features: {', '.join(names)}")
    if isinstance(inner_folds, bool) or int(inner_folds) != inner_folds or inner_folds < 2:
        raise ValueError(f"inner folds must be an integer >= 2, got {inner_folds!r}")
    k = len(names)
    how, reason = ridge.choose_strategy(k, max_size, strategy)
    size = ridge._size_limit(k, max_size)
    g = None if groups is None else np.asarray(groups, dtype=object)
    n_groups = None if g is None else len(set(g.tolist()))
    outer = fold_ids(len(y), g, folds, seed)
    pred = np.full(len(y), np.nan)
    fold_results = []
    with ridge._one_blas_thread():
        for f in range(folds):
            tr, te = outer != f, outer == f
            pick = _select(x[tr], y[tr], None if g is None else g[tr], how, size, alphas, inner_folds,
                           [seed, 1 + f], kind, min_gain)
            idx = list(pick["idx"])
            means, stds, w, b = ridge.fit_final(x[tr][:, idx], y[tr], pick["alpha"])
            pred[te] = ((x[te][:, idx] - means) / stds) @ w + b
            r = _correlation(pred[te], y[te], kind)
            fold_results.append(FoldResult(f, int(tr.sum()), int(te.sum()),
                                           None if g is None else len(set(g[te].tolist())),
                                           tuple(names[j] for j in idx), pick["alpha"], pick["inner"],
                                           tuple(float(v) for v in w), float(b), None if math.isnan(r) else r,
                                           pick["inner_folds"]))
        final = _select(x, y, g, how, size, alphas, inner_folds, [seed, 0], kind, min_gain)
    value = _correlation(pred, y, kind)
    single = [_correlation(x[:, j], y, kind) for j in range(k)]
    defined = [j for j in range(k) if not math.isnan(single[j])]
    best_single = max(defined, key=lambda j: (single[j], -j)) if defined else None
    compared = []
    if best_single is not None:
        compared.append(("best single feature", best_single))
    note = None
    if baseline is not None:
        compared.append(("baseline", names.index(baseline)))
    columns = np.vstack([pred] + [x[:, j] for _, j in compared])
    samples = paired_bootstrap(columns, y, g, kind, int(resamples), [seed, 10_000])
    ok = np.isfinite(samples[:, 0])
    low = high = None
    if ok.any():
        low, high = (float(v) for v in np.percentile(samples[ok, 0], [2.5, 97.5]))
    comparisons = []
    for c, (role, j) in enumerate(compared, 1):
        both = np.isfinite(samples[:, 0]) & np.isfinite(samples[:, c])
        d = samples[both, 0] - samples[both, c]
        own = samples[np.isfinite(samples[:, c]), c]
        comparisons.append(Comparison(
            role, names[j], None if math.isnan(single[j]) else single[j],
            *(float(v) for v in np.percentile(own, [2.5, 97.5])) if len(own) else (None, None),
            None if math.isnan(value) or math.isnan(single[j]) else value - single[j],
            *(float(v) for v in np.percentile(d, [2.5, 97.5])) if len(d) else (None, None),
            _two_sided(d) if len(d) else None))
    chosen_counts = {}
    for fr in fold_results:
        for name in fr.features:
            chosen_counts[name] = chosen_counts.get(name, 0) + 1
    weights = {}
    for name in names:
        if name not in chosen_counts:
            continue
        per = np.array([dict(zip(fr.features, fr.weights)).get(name, 0.0) for fr in fold_results])
        weights[name] = {"mean": float(per.mean()), "sd": float(per.std(ddof=1)) if len(per) > 1 else 0.0,
                         "folds_chosen": chosen_counts[name]}
    return NestedResult(tuple(names[j] for j in final["idx"]), final["alpha"], kind, len(y), n_groups, int(folds),
                        int(inner_folds), final["inner_folds"], alphas, how, reason, int(seed), int(resamples),
                        None if math.isnan(value) else value, low, high, int(ok.sum()), tuple(fold_results),
                        tuple(comparisons), note, weights, pred)
