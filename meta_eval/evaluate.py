"""Correlations of metric variants with human scores, and Williams tests against a baseline variant.

:func:`evaluate` works at the global level (all rows), as in Clark et al. (2019): Spearman (the paper's choice), Pearson and Kendall tau-b with
their p-values; the Williams (1959) test asks whether each variant correlates significantly better with the humans
than the baseline, using the same correlation kind for all three correlations. Variants whose metric is
lower-is-better are negated before any correlation, so that a larger correlation is always better.

:func:`evaluate_level` works at the summary or system level (Deutsch, Dror & Roth 2021): the three correlations at
that level, a BOOT-BOTH percentile interval for the chosen correlation, and a PERM-BOTH permutation test of each
variant against the baseline (one-sided: the variant correlates better), all seeded.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Sequence

import numpy as np

from meta_eval.correlation import correlate
from meta_eval.runner import MetricScores
from meta_eval.significance import williams_test

__all__ = ["VariantResult", "evaluate", "evaluate_level"]


@dataclass
class VariantResult:
    metric: str
    spearman: float | None
    spearman_p: float | None
    pearson: float | None
    pearson_p: float | None
    kendall: float | None
    kendall_p: float | None
    n: int
    williams_p_vs_baseline: float | None
    signature: str
    note: str | None = None
    level: str = "global"
    ci: list[float | None] | None = None
    perm_p_vs_baseline: float | None = None

    def as_dict(self) -> dict:
        return asdict(self)


def _oriented(ms: MetricScores) -> dict[str, np.ndarray]:
    return ms.scores if ms.higher_is_better else {v: -s for v, s in ms.scores.items()}


def evaluate(human: np.ndarray, metric_scores: Sequence[MetricScores], baseline: str | None = None,
             kind: str = "spearman") -> list[VariantResult]:
    """Correlate every variant with ``human``; Williams p-value of each variant against ``baseline``.

    Raises
    ------
    ValueError
        If ``baseline`` is given but is not one of the variants.
    """
    human = np.asarray(human, dtype=np.float64)
    variants = {v: (s, ms.signature) for ms in metric_scores for v, s in _oriented(ms).items()}
    if baseline is not None and baseline not in variants:
        raise ValueError(f"baseline {baseline!r} is not among the scored variants: {', '.join(variants)}")
    base = correlate(human, variants[baseline][0], kind) if baseline else None
    results = []
    for name, (scores, signature) in variants.items():
        cors = {k: correlate(human, scores, k) for k in ("spearman", "pearson", "kendall")}
        notes = sorted({c.note for c in cors.values() if c.note})
        wp = None
        if base is not None and name != baseline:
            r12, r23 = cors[kind].r, correlate(scores, variants[baseline][0], kind).r
            if r12 is not None and base.r is not None and r23 is not None and abs(r23) < 1.0:
                wp = williams_test(r12, base.r, r23, len(human))
            else:
                notes.append("Williams test undefined (constant scores or identical to the baseline)")
        results.append(VariantResult(name, cors["spearman"].r, cors["spearman"].p, cors["pearson"].r,
                                     cors["pearson"].p, cors["kendall"].r, cors["kendall"].p, len(human), wp,
                                     signature, "; ".join(notes) or None))
    return results


def evaluate_level(jset, dimension: str, metric_scores: Sequence[MetricScores], level: str,
                   baseline: str | None = None, kind: str = "spearman", n_resamples: int = 1000,
                   seed: int = 0, confidence: float = 0.95) -> list[VariantResult]:
    """Summary- or system-level correlations with intervals and permutation tests against ``baseline``."""
    from meta_eval.matrix import judgment_matrices
    from meta_eval.resampling import bootstrap_ci, level_correlation, permutation_test

    if level not in ("summary", "system"):
        raise ValueError(f"level must be 'summary' or 'system' here (the global level is evaluate()), not {level!r}")
    variants = {v: (s, ms.signature) for ms in metric_scores for v, s in _oriented(ms).items()}
    if baseline is not None and baseline not in variants:
        raise ValueError(f"baseline {baseline!r} is not among the scored variants: {', '.join(variants)}")
    names = list(variants)
    Z, matrices = judgment_matrices(jset, dimension, [variants[v][0] for v in names])
    units = int((~np.isnan(Z)).sum(axis=1).__ge__(3).sum()) if level == "summary" else \
        int(((~np.isnan(Z)).sum(axis=0) > 0).sum())
    by_name = dict(zip(names, matrices))
    results = []
    for name in names:
        X = by_name[name]
        cors = {k: level_correlation(X, Z, level, k) for k in ("spearman", "pearson", "kendall")}
        cors = {k: (None if not np.isfinite(v) else float(v)) for k, v in cors.items()}
        note, ci, perm = None, None, None
        if cors[kind] is None:
            note = f"{level}-level {kind} correlation undefined (constant scores or too few units)"
        else:
            lo, hi, _ = bootstrap_ci(X, Z, level, kind, n_resamples=n_resamples, confidence=confidence, seed=seed)
            ci = [None if not np.isfinite(lo) else float(lo), None if not np.isfinite(hi) else float(hi)]
            if baseline is not None and name != baseline:
                try:
                    perm = float(permutation_test(X, by_name[baseline], Z, level, kind, n_resamples=n_resamples,
                                                  seed=seed))
                except ValueError as exc:
                    note = f"permutation test undefined: {exc}"
        results.append(VariantResult(name, cors["spearman"], None, cors["pearson"], None, cors["kendall"], None,
                                     units, None, variants[name][1], note, level, ci, perm))
    return results
