"""Significance clusters (the mt-metrics-eval rule) and the multiple-comparison corrections, on hand-made p-values."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from meta_eval.stats.clusters import adjust_pvalues, holm, significance_clusters

NAN = np.nan


def test_holm_by_hand():
    # sorted: 0.005*4 = 0.02, 0.01*3 = 0.03, 0.03*2 = 0.06, 0.04*1 = 0.04 -> raised to the running max 0.06
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    # capped at 1; NaN entries are not part of the family (m = 3 here) and stay NaN
    out = holm([[0.5, NAN], [0.01, 0.4]])
    assert out[0, 0] == pytest.approx(0.8) and np.isnan(out[0, 1])  # 0.4*2 = 0.8, then max(0.5*1, 0.8)
    assert out[1, 0] == pytest.approx(0.03) and out[1, 1] == pytest.approx(0.8)
    assert holm([0.9, 0.8]).tolist() == [1.0, 1.0]
    assert holm([]).shape == (0,)


def test_bh_is_scipy_and_none_is_a_copy():
    p = np.array([0.01, 0.04, 0.03, 0.005, NAN])
    bh = adjust_pvalues(p, "bh")
    np.testing.assert_allclose(bh[:4], stats.false_discovery_control(p[:4], method="bh"))
    assert np.isnan(bh[4])
    assert bh[:4] == pytest.approx([0.02, 0.04, 0.04, 0.02])
    np.testing.assert_array_equal(adjust_pvalues(p, "none"), p)
    with pytest.raises(ValueError, match="unknown correction"):
        adjust_pvalues(p, "bonferroni")
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        adjust_pvalues([0.5, 1.5])


# p[i, j]: one-sided p-value for "metric i correlates more than metric j"; A > B > C by correlation
P3 = np.array([[NAN, 0.03, 0.01],
               [0.97, NAN, 0.04],
               [0.99, 0.96, NAN]])
CORRS3 = [0.5, 0.4, 0.2]


@pytest.mark.parametrize("correction, expected", [
    ("none", [("A", 1), ("B", 2), ("C", 3)]),  # 0.03 and 0.04 are significant as they are
    ("holm", [("A", 1), ("B", 1), ("C", 2)]),  # A>C 0.03, A>B 0.06, B>C 0.06
    ("bh", [("A", 1), ("B", 2), ("C", 3)]),  # A>C 0.03, A>B 0.045 -> 0.04, B>C 0.04
])
def test_clusters_with_each_correction(correction, expected):
    ranks, adjusted = significance_clusters(["A", "B", "C"], CORRS3, P3, correction=correction)
    assert ranks == expected
    assert np.isnan(adjusted[1, 0]) and np.isnan(adjusted[2, 0]) and np.isnan(np.diag(adjusted)).all()
    used = adjusted[[0, 0, 1], [1, 2, 2]]
    assert used == pytest.approx({"none": [0.03, 0.01, 0.04], "holm": [0.06, 0.03, 0.06],
                                  "bh": [0.04, 0.03, 0.04]}[correction])


def test_clusters_alpha():
    assert significance_clusters(["A", "B", "C"], CORRS3, P3, alpha=0.01, correction="none")[0] == [
        ("A", 1), ("B", 1), ("C", 2)]  # p <= alpha counts (0.01), as in mt-metrics-eval
    assert significance_clusters(["A", "B", "C"], CORRS3, P3, alpha=0.001, correction="none")[0] == [
        ("A", 1), ("B", 1), ("C", 1)]


def test_a_new_cluster_is_compared_from_its_own_start():
    # A~B, A>>C, B~C: C opens cluster 2 (A beats it). D is beaten by A and B but not by C, the start of its
    # cluster, so D joins cluster 2: the mt-metrics-eval rule only looks back to the current cluster's start.
    P = np.full((4, 4), 0.5)
    P[0, 1], P[0, 2], P[1, 2] = 0.20, 0.01, 0.30
    P[0, 3], P[1, 3], P[2, 3] = 0.001, 0.002, 0.40
    ranks, _ = significance_clusters(list("ABCD"), [0.9, 0.8, 0.7, 0.6], P, correction="none")
    assert ranks == [("A", 1), ("B", 1), ("C", 2), ("D", 2)]


def test_input_order_does_not_matter():
    # the same metrics listed worst first: ranks come back by decreasing correlation, the matrix in input order
    order = [2, 0, 1]
    P = P3[np.ix_(order, order)]
    ranks, adjusted = significance_clusters(["C", "A", "B"], [0.2, 0.5, 0.4], P, correction="holm")
    assert ranks == [("A", 1), ("B", 1), ("C", 2)]
    assert adjusted[1, 0] == pytest.approx(0.03)  # A over C
    assert np.isnan(adjusted[0, 1])  # C over A is not a tested direction


def test_ties_are_ordered_by_name_whatever_the_input_order_and_nan_is_not_significant():
    """Exact ties once kept the input order (the order of ``-m``), so which direction of a tied pair entered the
    family, hence its adjusted p, followed it (audit, session 38); now ties go by name."""
    P = np.array([[NAN, NAN], [NAN, NAN]])
    assert significance_clusters(["X", "Y"], [0.3, 0.3], P)[0] == [("X", 1), ("Y", 1)]
    P = np.array([[NAN, 0.001], [0.9, NAN]])  # X > Y at 0.001, Y > X at 0.9
    assert significance_clusters(["X", "Y"], [0.3, 0.3], P)[0] == [("X", 1), ("Y", 2)]
    ranks, adjusted = significance_clusters(["Y", "X"], [0.3, 0.3], P[::-1, ::-1])  # the same pair named Y, X
    assert ranks == [("X", 1), ("Y", 2)] and adjusted[1, 0] == 0.001 and np.isnan(adjusted[0, 1])
    P = np.array([[NAN, NAN], [0.001, NAN]])  # only Y > X was tested: X, first by name, is not beaten by it
    assert significance_clusters(["X", "Y"], [0.3, 0.3], P)[0] == [("X", 1), ("Y", 1)]


def test_all_or_nothing_significant():
    n = 5
    names = [f"m{i}" for i in range(n)]
    corrs = np.linspace(0.9, 0.1, n)
    upper = np.triu(np.full((n, n), 1e-6), 1)
    assert [r for _, r in significance_clusters(names, corrs, upper)[0]] == [1, 2, 3, 4, 5]
    assert [r for _, r in significance_clusters(names, corrs, np.full((n, n), 0.5))[0]] == [1] * 5


def test_validation():
    with pytest.raises(ValueError, match="unique"):
        significance_clusters(["A", "A", "C"], CORRS3, P3)
    with pytest.raises(ValueError, match="one correlation per metric"):
        significance_clusters(["A", "B"], CORRS3, P3)
    with pytest.raises(ValueError, match="finite"):
        significance_clusters(["A", "B", "C"], [0.5, NAN, 0.1], P3)
    with pytest.raises(ValueError, match=r"\(3, 3\)"):
        significance_clusters(["A", "B", "C"], CORRS3, P3[:2])
    with pytest.raises(ValueError, match="alpha"):
        significance_clusters(["A", "B", "C"], CORRS3, P3, alpha=1.0)
    with pytest.raises(ValueError, match="unknown correction"):
        significance_clusters(["A", "B", "C"], CORRS3, P3, correction="bonferroni")


def test_clusters_from_permutation_pvalues():
    from meta_eval.stats.resampling import level_correlation, pairwise_permutation_pvalues

    rng = np.random.default_rng(0)
    Z = rng.normal(size=10) + rng.normal(size=(30, 10))
    noise = [0.1, 0.12, 1.0, 1.1, 3.0]
    X = np.stack([Z + s * rng.normal(size=Z.shape) for s in noise])
    corrs = level_correlation(X, Z, "summary", "pearson")
    P = pairwise_permutation_pvalues(X, Z, "summary", "pearson", n_resamples=300, seed=0)
    ranks, _ = significance_clusters([f"noise{s}" for s in noise], corrs, P)
    rank = dict(ranks)
    assert rank["noise0.1"] == rank["noise0.12"] == 1
    assert rank["noise1.0"] == rank["noise1.1"] == 2
    assert rank["noise3.0"] == 3


@pytest.mark.parametrize("level, statistic", [("summary", "spearman"), ("system", "spearman"), ("system", "spa"),
                                              ("global", "spearman")])
def test_pairwise_with_one_metric_is_one_cluster_not_a_traceback(shared_data, tmp_path, level, statistic):
    """``--pairwise`` with a single variant crashed at the summary and system levels ("X must hold at least 2
    metrics", a traceback; audit, session 38): it is rank 1, with no p-value, and the reading says why."""
    import json

    from typer.testing import CliRunner

    from meta_eval import run
    from meta_eval.cli import app

    res = CliRunner().invoke(app, ["run", "-j", "summeval", "--data-dir", str(shared_data), "-m", "bleu", "--human",
                                   "relevance", "--limit", "160", "--level", level, "--statistic", statistic,
                                   "--pairwise", "--resamples", "50", "--no-cache", "--output",
                                   str(tmp_path / "r.json")])
    assert res.exit_code == 0, res.output
    assert "--pairwise has no other variant to compare it with" in " ".join(res.output.split())
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["results"][0]["rank"] == 1 and doc["pairwise"]["p"] == [[None]]
    api = run("summeval", metrics=["bleu"], human="relevance", data_dir=shared_data, limit=160, level=level,
              statistic=statistic, pairwise=True, resamples=50, no_cache=True, progress=False)
    assert api.clusters() == {"bleu": 1}
    assert np.isnan(api.pvalue_matrix().p).all() and api.pvalue_matrix().p.shape == (1, 1)


def test_the_order_of_m_changes_no_number_nor_row_order(shared_data, tmp_path):
    """Exact ties (chaganty's system level, 4 systems: bleu, chrf and three ROUGE variants all 0.4) kept the order of
    -m in the table and in the adjusted family (audit, session 38)."""
    import json

    from typer.testing import CliRunner

    from meta_eval.cli import app

    docs = []
    for k, metrics in enumerate(("rouge,chrf,bleu", "bleu,chrf,rouge")):
        out = tmp_path / f"r{k}.json"
        res = CliRunner().invoke(app, ["run", "-j", "chaganty", "--data-dir", str(shared_data), "-m", metrics,
                                       "--level", "system", "--pairwise",
                                       "--resamples", "100", "--cache", str(tmp_path / "c.sqlite"), "--output",
                                       str(out)])
        assert res.exit_code == 0, res.output
        docs.append(json.loads(out.read_text()))
    values = [r["value"] for r in docs[0]["results"]]
    assert len(values) != len(set(values))  # the rows hold an exact tie, else the test tests nothing
    assert docs[0]["results"] == docs[1]["results"] and docs[0]["pairwise"] == docs[1]["pairwise"]
    names = [r["metric"] for r in docs[0]["results"]]
    assert names == ["rougeL-f", "bleu", "chrf", "rouge1-f", "rouge2-f", "rougeLsum-f"]  # the 0.4 ties by name
