"""One draw per question (issue 35): a pair's p-value is the same wherever it appears, and one multiple-comparison
rule marks every star, cluster and "significantly"."""
from __future__ import annotations

import numpy as np
import pytest

from meta_eval import stats

RNG = np.random.default_rng(11)
_Z = RNG.normal(size=8) + RNG.normal(size=(30, 8))
_Z[2, 3] = _Z[7, 0] = np.nan
_X = np.stack([_Z + s * RNG.normal(size=_Z.shape) for s in (0.3, 0.8, 0.8, 2.0)])
_X[:, np.isnan(_Z)] = np.nan

CASES = [(s, lv) for s in stats.STATISTICS for lv in stats.LEVELS
         if lv in stats._LEVELS_OF[s] and not (s in stats.PAIRWISE and lv == "global")]


@pytest.mark.parametrize("statistic,level", CASES, ids=[f"{s}-{lv}" for s, lv in CASES])
def test_versus_equals_the_matrix_entry_bit_for_bit_whatever_the_other_metrics(statistic, level):
    kw = dict(n_resamples=120, seed=4, n_permutations=60)
    P = stats.pvalue_matrix(_X, _Z, statistic, level, **kw)
    for i in range(len(_X)):
        for j in range(len(_X)):
            if i != j:
                assert stats.versus(_X[i], _X[j], _Z, statistic, level, **kw) == P[i, j], (i, j)
    # the same pair among other metrics, in another order: the same p-values
    order = [3, 1, 0]
    P2 = stats.pvalue_matrix(_X[order], _Z, statistic, level, **kw)
    np.testing.assert_array_equal(P2, P[np.ix_(order, order)])
    # a Generator seed draws what its int seed draws
    P3 = stats.pvalue_matrix(_X, _Z, statistic, level, **{**kw, "seed": np.random.default_rng(4)})
    np.testing.assert_array_equal(P3, P)


def test_the_pooled_statistics_versus_equals_the_matrix():
    from meta_eval.stats.pooled import pooled_pvalue_matrix, pooled_versus

    groups = ["de"] * 4 + ["zh"] * 4
    for statistic in ("accuracy", "acc-t"):
        P = pooled_pvalue_matrix(_X, _Z, groups, statistic, 150, 2)
        for i in range(len(_X)):
            for j in range(len(_X)):
                if i != j:
                    assert pooled_versus(_X[i], _X[j], _Z, groups, statistic, 150, 2) == P[i, j]
        np.testing.assert_array_equal(pooled_pvalue_matrix(_X[[2, 0]], _Z, groups, statistic, 150, 2),
                                      P[np.ix_([2, 0], [2, 0])])


def test_spa_versus_stops_early_as_the_matrix_does():
    from meta_eval.stats.spa import spa_permutation_test

    t = spa_permutation_test(_X[0], _X[3], _Z, n_resamples=1000, n_permutations=60, seed=0, block_size=100)
    assert t.n_resamples < 1000  # a clear difference stops after a block (WMT24)
    assert stats.versus(_X[0], _X[3], _Z, "spa", "system", n_resamples=1000, n_permutations=60, seed=0) == t.pvalue


def test_the_global_level_of_the_correlations_is_williams_in_the_table_and_the_matrix():
    from meta_eval.stats.significance import williams_test
    from meta_eval.stats.correlation import correlate

    keep = ~np.isnan(_Z)
    z, a, b = _Z[keep], _X[0][keep], _X[2][keep]
    expected = williams_test(correlate(z, a, "pearson").r, correlate(z, b, "pearson").r,
                             correlate(a, b, "pearson").r, len(z))
    assert stats.versus(_X[0], _X[2], _Z, "pearson", "global") == expected
    assert stats.pvalue_matrix(_X, _Z, "pearson", "global")[0, 2] == expected
    assert stats.describe("pearson", "global")["test"] == "williams"


# ------------------------------------------------------------------------------- one multiple-comparison rule


def test_holm_matches_a_hand_computed_example_and_statsmodels():
    from statsmodels.stats.multitest import multipletests

    from meta_eval.stats.clusters import adjust_pvalues

    p = [0.01, 0.04, 0.03, 0.005]  # sorted 0.005, 0.01, 0.03, 0.04: 4*0.005, 3*0.01, 2*0.03, max(0.04, 0.06)
    assert adjust_pvalues(p, "holm").tolist() == pytest.approx([0.03, 0.06, 0.06, 0.02])
    q = np.random.default_rng(0).uniform(0, 0.2, size=17)
    np.testing.assert_allclose(adjust_pvalues(q, "holm"), multipletests(q, method="holm")[1], rtol=1e-12)
    np.testing.assert_allclose(adjust_pvalues(q, "bh"), multipletests(q, method="fdr_bh")[1], rtol=1e-12)


@pytest.fixture(scope="module")
def summeval_system(shared_data):
    from meta_eval import run

    return run("summeval", metrics="rouge", variants="all", level="system", resamples=200, data_dir=shared_data,
               progress=False)  # all 12 ROUGE variants: 66 pairs, 11 comparisons with the baseline


def test_the_tables_p_vs_the_baseline_is_the_matrix_entry_and_the_stars_are_adjusted(summeval_system):
    res = summeval_system
    matrix = res.pvalue_matrix()
    base = matrix.variants.index(res.baseline)
    raw = res.pvalues_vs_baseline
    for i, v in enumerate(matrix.variants):
        if i != base:
            assert matrix.p[i, base] == raw[v], v  # the same draws, bit for bit
    adjusted = res.adjusted_pvalues_vs_baseline()
    from meta_eval.stats.clusters import adjust_pvalues

    tested = [v for v in raw if raw[v] is not None]
    assert [adjusted[v] for v in tested] == adjust_pvalues([raw[v] for v in tested], "holm").tolist()
    assert res.baseline_family == f"Holm over the {len(tested)} comparisons with the baseline"
    doc = res.to_dict()
    assert doc["multiple_comparisons"]["correction"] == "holm"
    assert {r["metric"]: r["p_adjusted_vs_baseline"] for r in doc["results"]} == adjusted
    from meta_eval.report.tables import reading, run_table

    table = run_table(res)
    for row, r in zip(table.rows, res.results):
        p = adjusted[r.metric]
        assert row[-1].endswith("*") == (p is not None and p <= 0.05), (r.metric, row[-1], p)
    assert "after Holm over the" in (reading(res) or "") or res.results[0].metric == res.baseline


def test_no_heatmap_star_between_variants_of_one_cluster(summeval_system):
    __import__("conftest").require_module("matplotlib", "pip install 'meta-eval[plot]'")
    res = summeval_system
    matrix = res.pvalue_matrix()
    ranks = res.clusters()
    assert ranks == matrix.ranks
    fig = res.plot("pvalues")
    ax = fig.axes[0]
    names = [t.get_text() for t in ax.get_yticklabels()]
    starred = {(names[int(round(t.get_position()[1]))], names[int(round(t.get_position()[0]))])
               for t in ax.texts if t.get_text() == "*"}
    assert all(ranks[a] != ranks[b] for a, b in starred), starred
    idx = {v: k for k, v in enumerate(matrix.variants)}
    expected = {(a, b) for a in names for b in names if a != b
                and np.nan_to_num(matrix.p_adjusted[idx[a], idx[b]], nan=1.0) <= 0.05}
    assert starred == expected
    assert "Holm over all 66 pairs" in ax.figure.axes[-1].get_ylabel()
    # unadjusted: more stars, some of them inside a cluster of the Holm rule (the rouge1-f > rougeLsum-r)
    raw = res.pvalue_matrix(correction="none")
    assert np.array_equal(raw.p, matrix.p, equal_nan=True)
    assert (np.nan_to_num(raw.p_adjusted, nan=1) <= 0.05).sum() >= (np.nan_to_num(matrix.p_adjusted, nan=1)
                                                                    <= 0.05).sum()


def test_a_fresh_board_has_runs_pvalues_and_clusters(summeval_system, shared_data):
    from leaderboard.publish import set_results

    res = summeval_system
    scored = res.scores
    block = set_results(res.jset, res.human, scored, n_resamples=200, seed=0, variant_filter=lambda v: True,
                        extra=False)
    system = next(b for b in block["levels"] if b["level"] == "system" and b["statistic"] == "spearman")
    matrix = res.pvalue_matrix()
    tests = system["pairwise"]
    assert tests["test"] == matrix.test == "perm-both" and tests["family"] == matrix.family
    order = [matrix.variants.index(v) for v in tests["variants"]]
    np.testing.assert_array_equal(np.array(tests["p"], dtype=float), matrix.p[np.ix_(order, order)])  # every bit
    assert {r["variant"]: r["rank"] for r in system["results"]} == matrix.ranks


def test_run_correction_on_the_command_line(shared_data, tmp_path):
    import json

    from typer.testing import CliRunner

    from meta_eval.cli import app

    runner = CliRunner()
    out = tmp_path / "r.json"
    res = runner.invoke(app, ["run", "-j", "summeval", "-m", "rouge", "--variants", "all", "--level", "system",
                              "--resamples", "200", "--correction", "none", "--output", str(out), "--data-dir", str(shared_data)])
    assert res.exit_code == 0, res.output
    doc = json.loads(out.read_text())
    assert doc["multiple_comparisons"]["correction"] == "none"
    assert all(r["p_adjusted_vs_baseline"] == r["perm_p_vs_baseline"] for r in doc["results"])
    text = " ".join(res.output.split())
    assert "unadjusted (no correction over the 11 comparisons with the baseline)" in text
    res = runner.invoke(app, ["run", "-j", "summeval", "-m", "rouge", "--variants", "all", "--level", "system",
                              "--resamples", "200", "--pairwise", "--data-dir", str(shared_data)])
    text = " ".join(res.output.split())
    assert res.exit_code == 0 and "(Holm over the 11 comparisons with the baseline)" in text
    assert "Holm over all 66 pairs" in text
    bad = runner.invoke(app, ["run", "-j", "summeval", "-m", "rouge", "--correction", "bonferoni",
                              "--data-dir", str(shared_data)])
    assert bad.exit_code == 2 and "--correction must be one of holm, bh, none" in " ".join(bad.output.split())


def test_the_global_level_board_uses_runs_williams_pvalues_and_clusters(shared_data):
    from leaderboard.publish import set_results
    from meta_eval import run

    res = run("chaganty", metrics="rouge,chrf", data_dir=shared_data, progress=False)
    matrix = res.pvalue_matrix()
    assert matrix.test == "williams" and matrix.n_resamples is None
    base = matrix.variants.index("rougeL-f")
    assert all(matrix.p[i, base] == res.pvalues_vs_baseline[v] for i, v in enumerate(matrix.variants) if i != base)
    block = set_results(res.jset, res.human, res.scores, n_resamples=50, seed=0, variant_filter=lambda v: True,
                        extra=False)
    glob = next(b for b in block["levels"] if b["level"] == "global" and b["statistic"] == "spearman")
    tests = glob["pairwise"]
    assert tests["test"] == "williams"
    order = [matrix.variants.index(v) for v in tests["variants"]]
    np.testing.assert_array_equal(np.array(tests["p"], dtype=float), matrix.p[np.ix_(order, order)])  # every bit
    assert {r["variant"]: r["rank"] for r in glob["results"]} == matrix.ranks


def test_describe_names_spas_early_stopping():
    assert stats.describe("spa", "system")["early_stopping"] == "every 100 resamples, p < 0.02 or p > 0.5 (WMT24)"


def test_the_rule_is_worded_in_the_singular_for_one_comparison_and_the_module_examples_hold():
    import doctest

    from meta_eval.stats import clusters

    assert clusters.family_label("holm", 1, "comparisons with the baseline") == \
        "Holm over the 1 comparison with the baseline"
    assert clusters.family_label("bh", 2, "comparisons with the baseline") == \
        "Benjamini-Hochberg over the 2 comparisons with the baseline"
    result = doctest.testmod(clusters, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


def test_the_clusters_and_the_heatmap_read_one_matrix_computed_once(shared_data, monkeypatch, tmp_path):
    """``run --pairwise --plot pvalues:FILE`` asks for the clusters, then the heatmap: one all-pairs test, not two."""
    pytest.importorskip("matplotlib")
    from meta_eval import run, stats

    res = run("summeval", metrics="rouge", level="system", resamples=50, data_dir=shared_data, progress=False)
    calls = []
    real = stats.pvalue_matrix
    monkeypatch.setattr(stats, "pvalue_matrix", lambda *a, **k: calls.append(1) or real(*a, **k))
    ranks = res.clusters()
    res.plot("pvalues", tmp_path / "p.png", ranks=ranks)
    res.plot("intervals", tmp_path / "i.png", clusters=True)
    assert len(calls) == 1 and res.pvalue_matrix().ranks == ranks
    assert res.pvalue_matrix(correction="none").ranks is not None  # another rule adjusts the same p-values
    assert len(calls) == 1
    res.pvalue_matrix(seed=1)  # other draws are another test
    assert len(calls) == 2


def test_williams_matrix_equals_the_pair_test_bit_for_bit_with_ties():
    """A rank correlation with ties is symmetric only up to rounding: the matrix computed corr(s_i, s_j) in index
    order and the pair test corr(a, b) in argument order, so 48 of 500 random tied triples differed in the last bit.
    Both now take the two vectors in one canonical order."""
    from meta_eval.stats.significance import williams_pair, williams_pvalues

    rng = np.random.default_rng(0)
    for _ in range(200):
        h = rng.integers(0, 5, 40).astype(float)
        s = [rng.integers(0, 4, 40).astype(float) for _ in range(3)]
        P = williams_pvalues(h, s)
        for i in range(3):
            for j in range(3):
                if i != j:
                    w = williams_pair(h, s[i], s[j])
                    assert (np.isnan(w) and np.isnan(P[i, j])) or w == P[i, j], (i, j)
