"""``meta-eval run`` on a categorical or pairwise property (JUDGE-BENCH's ``categorical`` judgments, LLMBar's pairwise
preferences): statistics, the rules by which a metric's score meets a label, human agreement.

Statistics (``--statistic``)
----------------------------
On a categorical property each variant gets three statistics against the majority label (``majority_human``), each
with a percentile bootstrap interval over items (:func:`meta_eval.stats.agreement.categorical_interval`):
``label-accuracy`` (named so because ``accuracy`` is Kocmi et al.'s pairwise system accuracy), ``kappa`` (Cohen's
kappa) and ``macro-f1``; ``--statistic`` picks the one that sorts the table, is tested and chooses thresholds
(default ``kappa``, the statistic JUDGE-BENCH reports for categorical properties). On a pairwise property (labels
``model_a``/``model_b``) the statistic is ``pairwise-accuracy`` (LLMBar's; an answer that picks neither output counts
wrong, as LLMBar counts it). The correlation statistics are refused on these properties with a sentence, and these
four on a graded one.

How a metric's score meets a label (stated under the table and in the JSON as each variant's ``rule``)
----------------------------------------------------------------------------------------------------
- ``label``: a metric with ``label_space(variant)`` returning labels equal to the property's (case-insensitive, as
  sets): its score for a row is the index (0.0, 1.0, ...) of its answer in that tuple, and the answer is the label;
  a score that is NaN or no index is no answer (wrong; a missing value for alpha).
- ``threshold``: a numeric metric on a 2-label property. The rows are split with ``numpy.random.default_rng(seed)``
  (``--seed``): a permutation, its first ``n // 2`` rows choose the threshold, the other rows are where every
  statistic, interval and test of that variant is computed. The rule "score > t gives label H, else the other"
  is chosen on the first half to maximise the sorting statistic over every t in {-inf} and the half's distinct
  scores and both labels as H (ties: the first in that order, H = the first label first, t ascending); NaN scores
  give no answer.
- ``pick``: a numeric metric on a pairwise property scores both outputs (the candidate, ``output_a`` or
  ``output_1``, and the row's ``output_b`` / ``output_2`` field in its place) and picks the one it scores higher
  (lower where lower is better); equal or NaN scores pick neither, counted wrong.
- skipped, with the reason: a numeric metric on a property with more than 2 labels, a label metric whose labels are
  not the property's, a numeric metric on a pairwise set without a second output. As elsewhere a skip is an error
  for the run (exit 1) only for a metric named with ``-m``.

Tests compare two variants with :func:`~meta_eval.stats.agreement.paired_test` on the items both are reported on (the
held-out half when either uses a threshold), against ``--baseline`` (default: the set's default baseline when it is
scored; JUDGE-BENCH's schema declares none, :data:`judgments.judge_bench.NO_BASELINE`, and the run then says "no test
against a baseline" and why once, before the table) and over all pairs with ``--pairwise``; ``--correction`` adjusts them as in a graded run.

Outputs
-------
``--scores`` (joined on the rows' keys as for a graded property; an imported metric is numeric), ``--scores-out``
(every row's scores and its label, column ``human``) and ``--plot FILE`` (each variant's sorting statistic with its
interval, :func:`meta_eval.report.figures.categorical_figure`) work as :func:`run_categorical` says; ``--plot
pvalues:`` / ``scatter:`` and ``--differences`` are refused with a sentence.

Agreement
---------
The set's human agreement is :func:`judgments.judge_bench.human_agreement` (Krippendorff's alpha, nominal for
categorical properties). "Alpha with the metric as one more rater" adds each variant's answer (rules ``label``,
``threshold``, ``pick``) to every item's raters, on the items the variant is reported on, at the nominal level;
it is given where the set has items with 2 or more raters.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from meta_eval.errors import MetaEvalError

__all__ = ["NAMES", "CATEGORICAL_STATISTICS", "PAIRWISE_STATISTIC", "CategoricalResult", "check_options",
           "choose_statistic", "run_categorical"]

CATEGORICAL_STATISTICS = ("label-accuracy", "kappa", "macro-f1")
PAIRWISE_STATISTIC = "pairwise-accuracy"
NAMES = CATEGORICAL_STATISTICS + (PAIRWISE_STATISTIC,)
_AGREEMENT = {"label-accuracy": "accuracy", "kappa": "kappa", "macro-f1": "macro-f1",
              "pairwise-accuracy": "pairwise-accuracy"}
SECOND_OUTPUT = {"output_a": "output_b", "output_1": "output_2"}
#: Why ``--differences`` is refused here (``run`` refuses it before any scoring).
NO_DIFFERENCES = ("--differences is for graded properties; on a categorical or pairwise property each variant's "
                  "interval and its paired test against the baseline are reported")


def check_options(statistic, correlation, level, epsilon, control, delta_band, spa_seed) -> None:
    """Refuse, with a sentence, what a categorical statistic does not take (before anything is loaded)."""
    if correlation is not None:
        raise MetaEvalError(f"--statistic {statistic} is a categorical statistic; --correlation {correlation} is "
                            "for graded human scores: give one of them")
    bad = [(f"--level {level}", level not in (None, "global")), (f"--epsilon {epsilon:g}", bool(epsilon)),
           (f"--control {control}", control is not None), (f"--delta-band {delta_band}", delta_band is not None),
           (f"--spa-seed {spa_seed}", spa_seed is not None)]
    given = [flag for flag, on in bad if on]
    if given:
        raise MetaEvalError(f"--statistic {statistic} compares labels item by item (one level, no systems): drop "
                            f"{', '.join(given)}")


def choose_statistic(asked: str | None, prop, set_name: str) -> str:
    """The sorting statistic for property `prop`: ``asked`` (``--statistic``) if it fits, else a sentence."""
    kind = "pairwise" if prop.pairwise else "categorical"
    fits = (PAIRWISE_STATISTIC,) if prop.pairwise else CATEGORICAL_STATISTICS
    if asked is None:
        return fits[0] if prop.pairwise else "kappa"
    if asked not in fits:
        raise MetaEvalError(f"--statistic {asked} does not apply to {set_name}'s {prop.name!r}, a {kind} property "
                            f"(labels {', '.join(prop.labels)}): use --statistic {' or '.join(fits)}")
    return asked


@dataclass
class CategoricalResult:
    """The results of ``meta-eval run`` on a categorical or pairwise property (see the module docstring).

    ``results`` holds one dict per variant, best first: ``metric``, ``rule``, ``rule_text``, ``items``,
    the statistics (each ``{"value", "interval"}``), ``p_vs_baseline``, ``p_adjusted_vs_baseline``,
    ``alpha_with_metric``; ``human_agreement`` the set's alpha (:func:`judgments.judge_bench.human_agreement`'s
    entry for the property); ``warnings`` as :attr:`meta_eval.results.RunResult.warnings` (``no-baseline``: no test
    ran, and why), printed before the table.
    """

    judgments: str
    subset: str | None
    human: str
    kind: str
    labels: tuple
    n: int
    rows_without_human: int
    statistic: str
    statistics: tuple
    baseline: str | None
    baseline_note: str | None
    resamples: int
    seed: int
    correction: str
    results: list
    human_agreement: dict | None
    split: dict | None
    notes: list
    skipped: list
    failed: list
    not_run: list
    scores: list
    pvalues: dict | None = None
    pairwise: bool = False
    figures: list = field(default_factory=list)
    wall_seconds: float = 0.0
    metrics_requested: list | None = None
    unparsed: dict = field(default_factory=dict)
    warnings: list = field(default_factory=list)
    provenance: dict | None = None
    two_sided: bool = False
    """``--two-sided``: each result's ``p_vs_baseline_two_sided`` (the other tail counted) and its
    ``p_adjusted_vs_baseline`` adjusted from those, what the table shows."""

    @property
    def complete(self) -> bool:
        return not self.failed and not self.not_run

    @property
    def values(self) -> dict:
        return {r["metric"]: r[self.statistic]["value"] for r in self.results}

    @property
    def sides(self) -> str:
        return "two-sided" if self.two_sided else "one-sided"

    def clusters(self, *args, **kwargs) -> None:
        """No significance clusters here: ``--pairwise`` gives every pair's paired test (:attr:`pvalues`)."""
        return None

    def plot(self, kind: str = "intervals", path=None, *, variant: str | None = None, ranks=None,
             force: bool = False, **_):
        """The figure of ``--plot FILE``: each variant's sorting statistic (the table's value) with its bootstrap
        interval, best at the top, the baseline a diamond (:func:`meta_eval.report.figures.categorical_figure`);
        written to ``path`` when given, with the checks of :meth:`meta_eval.results.RunResult.plot` (a user's file
        only with ``force``). Only ``"intervals"``: the heatmap and scatter figures are for graded runs."""
        from meta_eval.report import figures
        from meta_eval.report.outputs import OutputPlan

        if kind != "intervals":
            raise MetaEvalError(f"a {self.kind} run draws the intervals figure only, not {kind!r}")
        if path is not None:
            OutputPlan(force=force, judgments=self.judgments).add(path, "plot()'s path")
        fig = figures.categorical_figure(self)
        if path is not None:
            figures.save_figure(fig, path)
        return fig

    def difference_intervals(self, *args, **kwargs):
        raise MetaEvalError(NO_DIFFERENCES)

    def to_dict(self) -> dict:
        """The document ``meta-eval run --output`` writes: the table's numbers, one per question."""
        return {"judgments": self.judgments, "subset": self.subset, "human": self.human, "kind": self.kind,
                "labels": list(self.labels), "n": self.n, "rows_without_human": self.rows_without_human,
                "statistic": self.statistic, "statistics": list(self.statistics), "level": "global",
                "interval": f"percentile bootstrap over items, {self.resamples} resamples, seed {self.seed}, 95%",
                "test": f"{self.sides} paired permutation test over items, {self.resamples} permutations, seed "
                        f"{self.seed}",
                "baseline": self.baseline, "baseline_note": self.baseline_note, "warnings": list(self.warnings),
                "multiple_comparisons": {"correction": self.correction, "sides": self.sides},
                "human_agreement": self.human_agreement, "split": self.split, "notes": list(self.notes),
                "results": [dict(r) for r in self.results], "pvalues": self.pvalues,
                "skipped": [{"metric": n, "reason": r} for n, r in self.skipped],
                "failed": [{"metric": n, "reason": r} for n, r in self.failed],
                "metrics_requested": self.metrics_requested, "complete": self.complete, "unparsed": self.unparsed,
                "signatures": {ms.metric: ms.signature for ms in self.scores},
                "timing": {ms.metric: {"seconds": round(ms.seconds, 3), "computed": ms.computed,
                                       "cached": ms.cached, "beside": ms.beside} for ms in self.scores},
                "wall_seconds": round(self.wall_seconds, 3), "provenance": self.provenance}


def _lower(labels) -> list[str]:
    return [str(x).strip().lower() for x in labels]


def _answers(scores, space, prop) -> list:
    """A label metric's scores (indices into `space`) as the property's labels; None for no answer."""
    by_lower = dict(zip(_lower(prop.labels), prop.labels))
    names = [by_lower[x] for x in _lower(space)]
    out = []
    for s in scores:
        ok = s is not None and math.isfinite(float(s)) and float(s).is_integer() and 0 <= int(s) < len(names)
        out.append(names[int(s)] if ok else None)
    return out


def canonical_order(rows) -> list[int]:
    """The rows' indices sorted by their ids: the order in which the split, the bootstrap and the permutation test
    see the items, so that a file's instances in another order give the same numbers (the graded levels index
    documents and systems by sorted id too, :mod:`meta_eval.matrix`)."""
    return sorted(range(len(rows)), key=lambda i: rows[i].id)


def split_rows(n: int, seed: int, order=None):
    """(fit, held): the row indices choosing a threshold and those it is evaluated on, each in ``order`` (a
    permutation of the row indices, default ascending; :func:`canonical_order`): the seeded permutation draws
    positions of ``order``, so the halves depend on the rows' ids, not on where the file puts them.

    >>> fit, held = split_rows(4, 0, order=[2, 0, 3, 1])
    >>> sorted(fit.tolist() + held.tolist()), len(fit)
    ([0, 1, 2, 3], 2)
    """
    import numpy as np

    canon = np.arange(n) if order is None else np.asarray(order, dtype=np.int64)
    perm = np.random.default_rng(seed).permutation(n)
    return canon[np.sort(perm[: n // 2])], canon[np.sort(perm[n // 2:])]


def fit_threshold(scores, gold, labels, statistic: str):
    """The rule "score > t gives label H" maximising `statistic` on (scores, gold): (t, H, value)."""
    import numpy as np

    from meta_eval.stats.agreement import _ROWS, _confusion

    scores = np.asarray(scores, dtype=float)
    g = np.array([list(labels).index(x) for x in gold], dtype=np.int64)
    finite = np.isfinite(scores)
    cuts = np.concatenate([[-np.inf], np.unique(scores[finite])])
    name = _AGREEMENT[statistic]
    best = (None, None, -np.inf)
    for h in range(2):
        for a in range(0, len(cuts), 2000):
            t = cuts[a:a + 2000]
            high = scores[None, :] > t[:, None]
            p = np.where(high, h, 1 - h)
            p = np.where(finite[None, :], p, 2)  # NaN: no answer
            values = _ROWS[name](_confusion(np.broadcast_to(g, p.shape), p, 3), 2, 0.0)
            values = np.where(np.isnan(values), -np.inf, values)
            k = int(np.argmax(values))
            if values[k] > best[2]:
                best = (float(t[k]), labels[h], float(values[k]))
    return best


def _apply_threshold(scores, t: float, high: str, labels) -> list:
    low = labels[1] if high == labels[0] else labels[0]
    return [None if not math.isfinite(float(s)) else (high if float(s) > t else low) for s in scores]


def _picks(a, b, higher_is_better: bool) -> list:
    out = []
    for x, y in zip(a, b):
        x, y = float(x), float(y)
        if not (math.isfinite(x) and math.isfinite(y)) or x == y:
            out.append("tie")
        else:
            out.append("model_a" if (x > y) == higher_is_better else "model_b")
    return out


def _alpha_with(rows, dim: str, answers: dict) -> float | None:
    """Nominal alpha over each row's raters plus the variant's answer (``answers``: row index -> label or None)."""
    from meta_eval.stats.agreement import AgreementError, alpha_from_items

    items = []
    for i, label in answers.items():
        raters = [None if v is None else str(v).strip().lower() for v in rows[i].raters.get(dim, ())]
        items.append(raters + [None if label in (None, "tie") else str(label).strip().lower()])
    try:
        value = alpha_from_items(items, "nominal")
    except AgreementError:
        return None
    return float(value) if math.isfinite(value) else None


def evaluate(jset, dim: str, prop, chosen, scored, scored_b, statistic: str, *, resamples: int, seed: int,
             baseline: str | None, correction: str, pairwise: bool = False, raters: bool = False, imported=(),
             two_sided: bool = False):
    """Per variant its answers, rule, statistics, intervals, tests and alpha; (results, skipped, split, pvalues).
    ``imported``: the names of ``--scores`` metrics (one score per row: no pick between two outputs).
    ``two_sided``: each result also gets ``p_vs_baseline_two_sided``, twice the smaller of its two tails, the other
    one counted (the test of the baseline against the variant on the same permutations), and its
    ``p_adjusted_vs_baseline`` adjusts those (each tail's 0 as its bound 1/resamples first, as a graded run)."""
    import numpy as np

    from meta_eval.stats.agreement import categorical_interval, paired_test
    from meta_eval.stats.clusters import adjust_pvalues, best_first, zero_bound

    gold = [r.labels[dim] for r in jset.rows]
    n = len(gold)
    metrics = {m.name: m for m in chosen}
    b_scores = {ms.metric: ms for ms in scored_b}
    order = canonical_order(jset.rows)  # items by id: the file's order of the instances changes no number
    position = {i: k for k, i in enumerate(order)}
    fit, held = split_rows(n, seed, order)
    stats = (PAIRWISE_STATISTIC,) if prop.pairwise else CATEGORICAL_STATISTICS
    rows, skipped, used_split = [], [], False
    for ms in scored:
        metric = metrics.get(ms.metric)
        space_of = getattr(metric, "label_space", None)
        for variant, arr in ms.scores.items():
            space = space_of(variant) if callable(space_of) else None
            entry = {"metric": variant}
            if space is not None:
                if sorted(_lower(space)) != sorted(_lower(prop.labels)):
                    skipped.append((variant, f"it answers in the labels {', '.join(map(str, space))}, not "
                                             f"the labels of '{dim}' ({', '.join(prop.labels)})"))
                    continue
                answers = _answers(arr, space, prop)
                items = np.asarray(order)
                entry.update(rule="label", rule_text="its answer is the label")
            elif prop.pairwise:
                other = b_scores.get(ms.metric)
                if other is None and ms.metric in imported:
                    skipped.append((variant, "an imported score (--scores) has one value per row, so it cannot pick "
                                             "between the row's two outputs"))
                    continue
                if other is None:
                    skipped.append((variant, "a numeric score cannot pick between two outputs here: the rows have no "
                                             "second output (output_b / output_2) to score"))
                    continue
                answers = _picks(arr, other.scores[variant], ms.higher_is_better)
                items = np.asarray(order)
                entry.update(rule="pick", rule_text="it scores both outputs and picks the one it scores "
                             + ("higher" if ms.higher_is_better else "lower (lower is better)")
                             + "; equal scores pick neither (wrong)")
            elif len(prop.labels) == 2:
                t, high, _ = fit_threshold(arr[fit], [gold[i] for i in fit], list(prop.labels), statistic)
                answers = [None] * n
                for i, a in zip(held, _apply_threshold(arr[held], t, high, prop.labels)):
                    answers[i] = a
                items = held
                used_split = True
                low = prop.labels[1] if high == prop.labels[0] else prop.labels[0]
                entry.update(rule="threshold", threshold=t, high_label=high,
                             rule_text=f"score > {t:.4g} gives {high}, else {low}: threshold and direction chosen "
                                       f"on {len(fit)} items (maximising {statistic}), statistics on the other "
                                       f"{len(held)}")
            else:
                skipped.append((variant, f"a numeric score has no rule to meet {len(prop.labels)} labels "
                                         f"({', '.join(prop.labels)}): only a metric answering in the property's "
                                         "labels (label_space) is compared"))
                continue
            g = [gold[i] for i in items]
            p = [answers[i] for i in items]
            entry["items"] = len(items)
            for name in stats:
                opts = {"labels": list(prop.labels)} if name in ("kappa", "macro-f1") else {}
                if name == PAIRWISE_STATISTIC:
                    from meta_eval.stats.agreement import pairwise_accuracy

                    value = pairwise_accuracy(g, p, ties="wrong")
                    opts = {"ties": "wrong"}
                else:
                    from meta_eval.stats import agreement

                    fn = {"label-accuracy": agreement.accuracy, "kappa": agreement.cohen_kappa,
                          "macro-f1": agreement.macro_f1}[name]
                    value = fn(g, p, **opts)
                lo, hi = categorical_interval(_AGREEMENT[name], g, p, resamples=resamples, seed=seed, **opts)
                entry[name] = {"value": _num(value), "interval": [_num(lo), _num(hi)]}
            entry["alpha_with_metric"] = (_alpha_with(jset.rows, dim, {int(i): answers[i] for i in items})
                                          if raters else None)
            entry["_answers"], entry["_items"] = answers, set(int(i) for i in items)
            rows.append(entry)
    opts = {"labels": list(prop.labels)} if statistic in ("kappa", "macro-f1") else (
        {"ties": "wrong"} if statistic == PAIRWISE_STATISTIC else {})

    done: dict = {}  # each ordered pair tested once (--two-sided and --pairwise ask for the same tests)

    def test(a: dict, b: dict) -> float | None:
        key = (a["metric"], b["metric"])
        if key not in done:
            done[key] = _test(a, b)
        return done[key]

    def _test(a: dict, b: dict) -> float | None:
        common = sorted(a["_items"] & b["_items"], key=position.__getitem__)
        if len(common) < 2:
            return None
        try:
            return float(paired_test(_AGREEMENT[statistic], [gold[i] for i in common],
                                     [a["_answers"][i] for i in common], [b["_answers"][i] for i in common],
                                     resamples=resamples, seed=seed, **opts))
        except MetaEvalError:
            return None

    base = next((r for r in rows if r["metric"] == baseline), None)
    for r in rows:
        r["p_vs_baseline"] = test(r, base) if base is not None and r is not base else None
    tested = [r for r in rows if r["p_vs_baseline"] is not None]
    family = [r["p_vs_baseline"] for r in tested]
    if two_sided:  # the other tail counted: the same masks swap the same items, so it is #(delta <= observed) / B
        for r in rows:
            r["p_vs_baseline_two_sided"] = None
        for i, r in enumerate(tested):
            other = test(base, r)
            other = 1.0 if other is None else other
            r["p_vs_baseline_two_sided"] = min(1.0, 2 * min(r["p_vs_baseline"], other))
            family[i] = min(1.0, 2 * min(float(zero_bound(r["p_vs_baseline"], resamples)),
                                         float(zero_bound(other, resamples))))
    # a p of 0 (no permutation as extreme) enters as its bound 1/resamples: the adjusted p is never 0
    adjusted = adjust_pvalues(family, correction, resamples) if tested else []
    for r in rows:
        r["p_adjusted_vs_baseline"] = None
    for r, a in zip(tested, adjusted):
        r["p_adjusted_vs_baseline"] = float(a)
    rows.sort(key=lambda r: best_first(r[statistic]["value"], r["metric"]))
    pvalues = None
    if pairwise and len(rows) > 1:
        names = [r["metric"] for r in rows]
        raw = {f"{a['metric']} > {b['metric']}": test(a, b) for a in rows for b in rows if a is not b}
        # the family the graded runs and the clusters adjust over (meta_eval.results.PValueMatrix): the n(n-1)/2
        # pairs, each better-valued variant (earlier in ``rows``) against each worse-valued one
        keys = [f"{a['metric']} > {b['metric']}" for i, a in enumerate(rows) for b in rows[i + 1:]]
        keys = [k for k in keys if raw[k] is not None]
        adj = adjust_pvalues([raw[k] for k in keys], correction, resamples) if keys else []  # a 0: 1/B
        pvalues = {"order": names, "p": raw, "p_adjusted": dict(zip(keys, map(float, adj)))}
    for r in rows:
        del r["_answers"], r["_items"]
    split = ({"seed": seed, "fit_items": len(fit), "held_out_items": len(held)} if used_split else None)
    return rows, skipped, split, pvalues


def _num(x) -> float | None:
    return float(x) if x is not None and math.isfinite(float(x)) else None


def second_examples(jset):
    """The rows' examples with the second output of a pair as the candidate (the ``output_b`` / ``output_2`` field
    beside the candidate's field), or None when a row has none."""
    from meta_eval.judgments.base import LabelledExamples

    out = []
    for r in jset.rows:
        other = next((SECOND_OUTPUT[k] for k in SECOND_OUTPUT if k in r.fields and SECOND_OUTPUT[k] in r.fields),
                     None)
        if other is None:
            return None
        out.append(replace(r.example(), candidate=r.fields[other].strip()))
    return LabelledExamples(out, jset.row_labels())


def run_categorical(loaded, dim: str, prop, *, asked_statistic, metrics, variants, options, baseline, resamples,
                    seed, correction, pairwise, data_dir, cache, no_cache, batch_size, engine, progress, say, output,
                    started, tables=(), full=None, scores_missing="error", scores_out=None, figures=(),
                    provenance=None, two_sided=False):
    """``meta-eval run`` on categorical / pairwise property `prop` of set `loaded` (called by
    :func:`meta_eval.task.run` once the set is loaded); a :class:`CategoricalResult`.

    ``tables``: the ``--scores`` files read (:func:`meta_eval.scoring.imported.merge_tables`), joined on the rows'
    keys of ``full`` (the set as loaded, every row) as for a graded property; an imported metric is numeric (rule
    ``threshold``; on a pairwise property it has one score per row, so it is skipped with the reason).
    ``scores_out``: every row's scores written as ``--scores`` reads them back, with the row's label (column
    ``human``, which ``--scores`` does not read as a score). ``figures``: ``--plot FILE`` only (the intervals
    figure, :meth:`CategoricalResult.plot`); ``pvalues:`` and ``scatter:`` are refused with a sentence before
    anything is scored."""
    import time

    from meta_eval.judgments.judge_bench import human_agreement
    from meta_eval.report.outputs import write_json
    from meta_eval.scoring import selection
    from meta_eval.scoring.cache import open_cache
    from meta_eval.scoring.runner import Scoring, score_all
    from meta_eval.scoring.selection import named_skips, requested_names

    statistic = choose_statistic(asked_statistic, prop, loaded.name)
    kind = "pairwise" if prop.pairwise else "categorical"
    for fig_kind, _, path in figures:
        if fig_kind != "intervals":
            what = ("the all-pairs p-value heatmap of a graded run's matrix test" if fig_kind == "pvalues" else
                    "a metric's scores against graded human scores")
            raise MetaEvalError(f"--plot {fig_kind}:{path} draws {what}; {loaded.name}'s '{dim}' is {kind} (labels "
                                f"{', '.join(prop.labels)}): --plot {path} draws each variant's {statistic} with its "
                                "interval instead (--pairwise gives every pair's p-value in the JSON)")
    jset = replace(loaded, rows=[r for r in loaded.rows if r.labels.get(dim) is not None])
    dropped = len(loaded) - len(jset)
    imported, position = [], {}
    if tables:  # --scores: joined on the rows' keys as for a graded property (strict; --scores-missing)
        from meta_eval.scoring.imported import join_scores

        full = full if full is not None else loaded
        position = {r.id: i for i, r in enumerate(full.rows)}
        try:
            imported, keep = join_scores(tables, full, [position[r.id] for r in jset.rows], scores_missing)
        except ValueError as exc:
            raise MetaEvalError(str(exc)) from None
        if len(keep) < len(jset):
            jset = replace(jset, rows=[full.rows[p] for p in keep])
    if len(jset) < 4:
        raise MetaEvalError(f"{jset.name}: only {len(jset)} rows have a '{dim}' label; at least 4 are needed")
    if len(loaded.dimensions) > 1:
        say("out", f"human: {dim} ({kind}: {', '.join(prop.labels)}; pass --human to choose: "
                   f"{', '.join(loaded.dimensions)})")
    from meta_eval.scoring.imported import metric_scores

    asked, _, shown, chosen, skipped = selection.choose_for_set(
        requested_names(metrics), variants, baseline, imported, options, jset, dim, data_dir=data_dir, cache=cache,
        no_cache=no_cache)
    say("err", f"{jset.name} ({jset.subset}): {len(jset)} rows, human: {dim} ({kind})"
        + (f" ({dropped} row{'s' if dropped != 1 else ''} without a {dim} label left out)" if dropped else ""))
    scoring = score_all(chosen, jset.examples(), open_cache(cache, no_cache), batch_size, engine=engine,
                        progress=progress) if chosen else Scoring([], [], {})
    notes = []
    if scoring.dropped_rows():
        from meta_eval.task import drop_rows

        jset, scoring, note = drop_rows(jset, scoring)
        notes.append(note)
    scored = shown.apply(scoring.scored + [metric_scores(imp, [position[r.id] for r in jset.rows], full)
                                           for imp in imported])
    failed = list(scoring.failed)
    scored_b = []
    if prop.pairwise:
        numeric = [m for m in chosen if not callable(getattr(m, "label_space", None))
                   or all(m.label_space(v) is None for v in m.variants)]
        second = second_examples(jset) if numeric else None
        if second is not None:
            more = score_all(numeric, second, open_cache(cache, no_cache), batch_size, engine=engine,
                             progress=progress)
            scored_b = shown.apply(more.scored)
            failed += [(n, r) for n, r in more.failed if n not in {f for f, _ in failed}]
    if not scored:
        raise MetaEvalError("no metric could run: " + "; ".join([f"{n}: {r}" for n, r in skipped]
                                                                + [f"{n}: failed: {r}" for n, r in failed]),
                            code=1 if failed else 2)
    names = [v for ms in scored for v in ms.scores]
    baseline_note = None
    if baseline is None:
        from meta_eval.units import default_baseline

        from meta_eval.units import why_no_baseline

        wanted = default_baseline(jset)  # JUDGE-BENCH's schema declares none (judge_bench.NO_BASELINE)
        if wanted is not None and wanted in names:
            baseline = wanted
        else:
            baseline_note = why_no_baseline(jset, wanted, [ms.metric for ms in scored], skipped, failed)
    elif baseline not in names:
        raise MetaEvalError(f"baseline {baseline!r} was not scored; scored variants: {', '.join(names)}")
    agreement = human_agreement(jset).get(dim) if jset.properties else None
    raters = agreement is not None and agreement["raters_per_item"][1] >= 2
    results, rule_skips, split, pvalues = evaluate(
        jset, dim, prop, chosen, scored, scored_b, statistic, resamples=resamples, seed=seed, baseline=baseline,
        correction=correction, pairwise=pairwise, raters=raters, imported={imp.name for imp in imported},
        two_sided=two_sided)
    if not results:
        error = MetaEvalError("no metric could be compared with the labels: "
                              + "; ".join(f"{n}: {r}" for n, r in skipped + rule_skips), code=1 if failed else 2)
        error.skipped = list(skipped) + list(rule_skips)  # (variant or metric, why): a board lists them
        raise error
    if baseline is not None and all(r["metric"] != baseline for r in results):
        baseline_note = f"the baseline {baseline} was skipped ({dict(rule_skips).get(baseline, 'no result')})"
        baseline = None
    by_metric: dict[str, list[str]] = {}
    for ms in scored:
        by_metric[ms.metric] = list(ms.scores)
    for metric, vs in by_metric.items():  # a metric all of whose variants were skipped by a rule: skipped by name
        reasons = [dict(rule_skips)[v] for v in vs if v in dict(rule_skips)]
        if vs and len(reasons) == len(vs):
            rule_skips = [(v, r) for v, r in rule_skips if v not in vs] + [(metric, reasons[0])]
    skipped = list(skipped) + rule_skips
    result = CategoricalResult(
        judgments=jset.name, subset=jset.subset, human=dim, kind=kind, labels=tuple(prop.labels), n=len(jset),
        rows_without_human=dropped, statistic=statistic, statistics=(PAIRWISE_STATISTIC,) if prop.pairwise
        else CATEGORICAL_STATISTICS, baseline=baseline, baseline_note=baseline_note, resamples=resamples,
        seed=seed, correction=correction, results=results, human_agreement=agreement, split=split,
        notes=list(jset.notes) + notes, skipped=skipped, failed=failed, not_run=named_skips(skipped, asked),
        scores=scored, pvalues=pvalues, pairwise=pairwise,
        metrics_requested=[m.strip() for m in asked.split(",") if m.strip()] if asked else None,
        unparsed=getattr(scoring, "unparsed", {}), two_sided=bool(two_sided))
    if baseline is None:  # as a graded run says it (#35): once, before the table
        result.warnings.append({"kind": "no-baseline", "message": f"no test against a baseline: {baseline_note}"})
    from meta_eval.stats.clusters import resolution_note

    unresolved = resolution_note(correction, len(pvalues["p_adjusted"]), resamples, 0.05) if pvalues else None
    if unresolved:  # too few resamples for the family of --pairwise (the stars' 0.05; meta_eval.stats.clusters)
        result.warnings.append({"kind": "unresolved", "message": unresolved})
    result.figures = list(figures)
    result.provenance = provenance  # meta_eval.provenance.record: the command, version, inputs' SHA-256 (#39)
    result.wall_seconds = time.perf_counter() - started
    if output is not None:
        write_json(output, result.to_dict())
    if scores_out is not None:  # through the one write path, as a graded run writes it
        from meta_eval.report.outputs import atomic_write
        from meta_eval.scoring.score_files import file_header, write_row_scores, write_sidecar

        labels = {"human": [r.labels[dim] for r in jset.rows]}
        header = file_header(scored, None, provenance, judgments=jset.name, subset=jset.subset)
        atomic_write(scores_out, lambda tmp: write_row_scores(tmp, jset, scored, labels=labels, header=header))
        write_sidecar(scores_out, header)
    return result
