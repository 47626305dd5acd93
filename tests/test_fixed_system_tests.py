"""System-level permutation tests of metrics whose system scores are held fixed (corpus BLEU/chrF/TER, imported
system scores).

Each cell of such a metric's system column holds the same score, so PERM-BOTH's cell swaps averaged the two metrics'
scores of every system into a near-constant mixture: the null distribution all but vanished and any difference came
out significant (wmt21-mqm-ted en-de, BLEU .620 vs TER .609 at the system level: p .005; mt-metrics-eval, which tests
system-level correlations on the vectors of system scores, gives .47). Such a pair is now tested as mt-metrics-eval
does: each system's two (z-scored) system scores swapped with probability 1/2. The hand computations below redo that
with numpy and scipy from the same seed.
"""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as st

from meta_eval.stats import pairwise as pw
from meta_eval.stats.resampling import fixed_system_pair, pairwise_permutation_pvalues, permutation_test


def _fixed(values, D):
    return np.tile(np.asarray(values, dtype=float), (D, 1))


def _by_hand(a_sys, b_sys, z_sys, seed, n, D, S, statistic):
    """mt-metrics-eval's system-level test: z-scored system vectors, one coin per system (the first row of the
    masks drawn for the (D, S) matrices from the same seed)."""
    masks = (np.random.default_rng(seed).random((n, D, S)) < 0.5)[:, 0, :]
    a, b = st.zscore(a_sys), st.zscore(b_sys)
    observed = statistic(a, z_sys) - statistic(b, z_sys)
    count = 0
    for m in masks:
        pa, pb = np.where(m, b, a), np.where(m, a, b)
        count += statistic(pa, z_sys) - statistic(pb, z_sys) >= observed - 1e-12
    return count / n


def _pearson(x, z):
    return st.pearsonr(x, z).statistic


def _data(seed=0, D=6, S=9):
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(D, S)) + np.linspace(0, 2, S)
    z_sys = Z.mean(axis=0)
    a_sys = z_sys + rng.normal(scale=0.8, size=S)  # two metrics of close system-level correlation
    b_sys = z_sys + rng.normal(scale=0.8, size=S)
    return Z, z_sys, a_sys, b_sys


def test_a_fixed_pair_is_tested_on_the_system_scores_as_mt_metrics_eval():
    Z, z_sys, a_sys, b_sys = _data()
    D, S = Z.shape
    A, B = _fixed(a_sys, D), _fixed(b_sys, D)
    p = permutation_test(A, B, Z, "system", "pearson", n_resamples=500, seed=3)
    assert p == pytest.approx(_by_hand(a_sys, b_sys, z_sys, 3, 500, D, S, _pearson), abs=1e-12)
    assert 0.05 < p < 0.95  # the difference is small; cell swaps called it significant
    # one fixed metric against one of row scores: the row metric enters with its system means
    rows = Z + np.random.default_rng(9).normal(size=Z.shape)
    p_mixed = permutation_test(A, rows, Z, "system", "pearson", n_resamples=500, seed=3)
    assert p_mixed == pytest.approx(_by_hand(a_sys, rows.mean(axis=0), z_sys, 3, 500, D, S, _pearson), abs=1e-12)
    # the all-pairs matrix gives the same p-values
    P = pairwise_permutation_pvalues(np.stack([A, B, rows]), Z, "system", "pearson", n_resamples=500, seed=3)
    assert P[0, 1] == p and P[0, 2] == p_mixed


def test_row_scores_keep_perm_both_and_other_levels_are_untouched():
    Z, *_ = _data(seed=1)
    rng = np.random.default_rng(2)
    A, B = Z + rng.normal(size=Z.shape), Z + rng.normal(size=Z.shape)
    pair = np.stack([A, B])
    same, Zs, swaps = fixed_system_pair(pair, Z, "system", np.zeros((4, *Z.shape), bool))
    assert same is pair and Zs is Z and swaps.shape == (4, *Z.shape)
    fixed = np.stack([_fixed(A.mean(axis=0), Z.shape[0]), B])
    for level in ("summary", "global"):
        assert fixed_system_pair(fixed, Z, level, None)[0] is fixed
    converted, Zc, masks = fixed_system_pair(fixed, Z, "system", np.ones((4, *Z.shape), bool))
    assert converted.shape == (2, 1, Z.shape[1]) and Zc.shape == (1, Z.shape[1]) and masks.shape == (4, 1, Z.shape[1])
    with pytest.raises(ValueError, match="cannot be tested by swapping whole documents"):
        fixed_system_pair(fixed, Z, "system", np.ones((4, Z.shape[0], 1), bool))


def test_system_accuracy_of_fixed_scores_swaps_systems():
    Z, z_sys, a_sys, b_sys = _data(seed=4, S=8)
    D, S = Z.shape
    A, B = _fixed(a_sys, D), _fixed(b_sys, D)

    def accuracy(x, z):  # pairwise ranking accuracy over system pairs (ties in the metric count as wrong)
        i, j = np.triu_indices(len(z), 1)
        return float(np.mean(np.sign(x[i] - x[j]) == np.sign(z[i] - z[j])))

    P = pw.pairwise_permutation_pvalues(np.stack([A, B]), Z, "system", "accuracy", n_resamples=300, seed=5)
    assert P[0, 1] == pytest.approx(_by_hand(a_sys, b_sys, z_sys, 5, 300, D, S, accuracy), abs=1e-12)


def test_wmt21_corpus_bleu_against_ter_is_not_significant(shared_data):
    """The case the audit found: corpus BLEU .620 against corpus TER .609 (system level, Pearson, en-de)."""
    from meta_eval import run

    result = run("wmt21-mqm-ted", "ter,bleu", subset="en-de", level="system", statistic="pearson", baseline="ter",
                 resamples=200, no_cache=True, progress=False, data_dir=shared_data)
    assert result.values["bleu"] == pytest.approx(0.620, abs=5e-4) and result.values["ter"] == pytest.approx(
        0.609, abs=5e-4)
    names, X, Z = result._grids(valued_only=True)
    i, j = names.index("bleu"), names.index("ter")
    a_sys = np.array([X[i][:, s][~np.isnan(X[i][:, s])][0] for s in range(X.shape[2])])
    b_sys = np.array([X[j][:, s][~np.isnan(X[j][:, s])][0] for s in range(X.shape[2])])
    z_sys = np.nanmean(Z, axis=0)
    want = _by_hand(a_sys, b_sys, z_sys, 0, 200, *Z.shape, _pearson)
    assert result.pvalues_vs_baseline["bleu"] == pytest.approx(want, abs=1e-12)
    assert result.pvalues_vs_baseline["bleu"] > 0.2  # was 0.005


def test_a_p_of_exactly_alpha_gets_one_verdict_everywhere(shared_data):
    """p = 0.05 is significant at 0.05 for the clusters (mt-metrics-eval's AssignRanks: p <= pval) and the
    heatmap; the stars and the reading line said "not significantly better" (p < 0.05) for the same p."""
    from meta_eval import run
    from meta_eval.report.tables import reading, stars

    result = run("chaganty", "rouge", variants="rouge1-f,rougeL-f", level="summary", resamples=100, seed=0,
                 baseline="rougeL-f", pairwise=True, no_cache=True, progress=False, data_dir=shared_data)
    (adjusted,) = [q for v, q in result.adjusted_pvalues_vs_baseline().items() if q is not None]
    assert adjusted == 0.05
    assert result.ranks == {"rouge1-f": 1, "rougeL-f": 2}
    assert stars(adjusted) == "*" and stars(0.0500001) == "" and stars(0.01) == "**"
    assert "significantly better than the baseline rougeL-f" in reading(result)
    assert "not significantly" not in reading(result)


def test_a_variants_summary_n_counts_the_documents_it_averages(shared_data):
    """chaganty: rouge2-f is constant in 3 of the 492 documents, so its summary-level average is over 489; the row
    said 492 (the human side only). run's n now equals meta_eval.stats.levels.summary_level's on the same cells."""
    from meta_eval import run
    from meta_eval.stats.levels import summary_level
    from meta_eval.units import level_cells

    result = run("chaganty", "rouge", variants="rouge1-f,rouge2-f", level="summary", resamples=20, no_cache=True,
                 progress=False, data_dir=shared_data)
    n = {}
    for ms in result.scores:
        for v, scores in ms.scores.items():
            m, h, docs, _ = level_cells(result.jset, result.human, scores)
            independent = summary_level(m, h, docs, "spearman")
            (row,) = [r for r in result.results if r.metric == v]
            assert (row.n, row.value) == (independent.n, pytest.approx(independent.r, abs=1e-12)), v
            n[v] = row.n
    assert n == {"rouge1-f": 492, "rouge2-f": 489}
    assert result.to_dict()["results"][[r["metric"] for r in result.to_dict()["results"]].index("rouge2-f")]["n"] == 489


def test_two_sided_p_values_count_the_other_tail_and_the_json_has_them(shared_data, tmp_path):
    """--two-sided guessed the other tail as 1 - p + 1/(B+1); it is the count of resamples <= the observed
    difference, the matrix entry P[baseline, variant] of the same draws. The JSON wrote one-sided adjusted
    p-values beside a two-sided table."""
    import json

    from meta_eval import run
    from meta_eval.report.tables import run_table
    from meta_eval.stats.clusters import adjust_pvalues

    out = tmp_path / "r.json"
    result = run("summeval", "rouge,bleu", level="summary", resamples=100, two_sided=True, pairwise=True,
                 no_cache=True, progress=False, data_dir=shared_data, output=out)
    matrix, b = result.pvalue_matrix(), None
    b = matrix.variants.index("rougeL-f")
    both = result.two_sided_pvalues_vs_baseline()
    for i, v in enumerate(matrix.variants):
        if i != b:
            assert both[v] == min(1.0, 2 * min(matrix.p[i, b], matrix.p[b, i])), v
    assert both["rouge2-f"] == pytest.approx(0.10) and both["bleu"] == pytest.approx(0.16)  # were 0.12 and 0.18
    doc = json.loads(out.read_text())
    assert doc["multiple_comparisons"]["sides"] == "two-sided"
    tested = [r["metric"] for r in doc["results"] if r["metric"] != "rougeL-f"]
    by = {r["metric"]: r for r in doc["results"]}
    assert [by[v]["p_vs_baseline_two_sided"] for v in tested] == [both[v] for v in tested]
    holm = adjust_pvalues([both[v] for v in tested], "holm", 100)
    assert [by[v]["p_adjusted_vs_baseline"] for v in tested] == pytest.approx(list(holm))
    shown = {row[0]: row[-1] for row in run_table(result, two_sided=True).rows}
    assert shown["rouge2-f"].startswith("0.100") and shown["bleu"].startswith("0.160")
    # Williams (global level): exact, the other tail is 1 - p
    glob = run("summeval", "rouge,bleu", level="global", two_sided=True, no_cache=True, progress=False,
               data_dir=shared_data)
    for v, p in glob.pvalues_vs_baseline.items():
        if p is not None:
            assert glob.two_sided_pvalues_vs_baseline()[v] == pytest.approx(min(1.0, 2 * min(p, 1 - p)), abs=1e-15)


def test_pooled_system_accuracy_of_fixed_scores_swaps_systems():
    """The pooled system-level accuracy (language pairs pooled, WMT21-23) had the same cell swaps: two metrics of
    close accuracy, fixed system scores, p 0.003; swapping whole systems' scores gives 0.087."""
    from meta_eval.stats.pooled import pooled_pvalue_matrix, pooled_versus

    rng = np.random.default_rng(0)
    D, S = 8, 10
    Z = rng.normal(size=(D, S)) + np.linspace(0, 2, S)
    z = Z.mean(axis=0)
    A, B = _fixed(z + rng.normal(scale=0.8, size=S), D), _fixed(z + rng.normal(scale=0.8, size=S), D)
    groups = ["en-de"] * 5 + ["zh-en"] * 5
    P = pooled_pvalue_matrix(np.stack([A, B]), Z, groups, "accuracy", 300, 0)
    assert P[0, 1] == pooled_versus(A, B, Z, groups, "accuracy", 300, 0) == pytest.approx(26 / 300)
    # a metric of row scores against another keeps the cell swaps (PERM-BOTH within groups)
    rows = Z + rng.normal(size=Z.shape)
    assert fixed_system_pair(np.stack([rows, Z + rng.normal(size=Z.shape)]), Z, "system", None)[1] is Z
