"""Pairwise Difference Pearson (meta_eval.stats.pdp): mt-metrics-eval's ``Correlation.Pearson(pdp=True)``.

Checked against hand-computed values, against the values of mt-metrics-eval's own ``stats_test.py``
(``testPearsonPdp``, ``testPdpWithAveragingAndNones``), and against an independent computation on WMT23 rows: every
ordered pair of systems within each segment enumerated explicitly (self-pairs included, as mt-metrics-eval's
``_enumerate_pairwise_diffs``) and one ``scipy.stats.pearsonr`` over the pooled differences.
"""
from __future__ import annotations

import json
from collections import defaultdict

import numpy as np
import pytest
import scipy.stats
from typer.testing import CliRunner

from meta_eval import stats
from meta_eval.cli import app
from meta_eval.stats.pdp import pairwise_difference_pearson as pdp

runner = CliRunner()


# -- definition -------------------------------------------------------------------------------------------------------

def test_hand_computed_two_items():
    # item 1: human diff 1, metric diff 2; item 2: human diff 3, metric diff 1 (each in both orders, plus the zero
    # self-pairs): r = (1*2 + 3*1) / sqrt((1 + 9) * (4 + 1))
    Z = np.array([[1.0, 2.0], [0.0, 3.0]])
    X = np.array([[0.0, 2.0], [5.0, 6.0]])
    assert pdp(X, Z) == pytest.approx(5 / np.sqrt(50), abs=1e-15)
    # Pearson grouped by item is undefined here (two systems per item); Pearson over the cells is another number
    assert pdp(X, Z) != pytest.approx(scipy.stats.pearsonr(X.ravel(), Z.ravel())[0], abs=1e-3)


def test_the_values_of_mt_metrics_eval_stats_test():
    # stats.Correlation(2, [1, 2, 3, 4, 5, 6], [2, 1, 4, 3, 3, 7]): vectors grouped by system, 2 systems x 3 items
    Z = np.array([[1.0, 4.0], [2.0, 5.0], [3.0, 6.0]])
    X = np.array([[2.0, 3.0], [1.0, 3.0], [4.0, 7.0]])
    assert round(pdp(X, Z, "summary"), 3) == 0.926  # Pearson(average_by='item', pdp=True)
    assert round(pdp(X, Z, "global"), 3) == 0.776  # Pearson(average_by='none', pdp=True) = Pearson
    # testPdpWithAveragingAndNones: g = [1, 5, None, 10, 2, 12], m = [3, 15, 1, 20, 4, 24], 2 systems
    Z = np.array([[1.0, 10.0], [5.0, 2.0], [np.nan, 12.0]])
    X = np.array([[3.0, 20.0], [15.0, 4.0], [np.nan, 24.0]])
    assert round(pdp(X, Z, "summary"), 3) == 0.968
    assert round(pdp(X, Z, "global"), 3) == 0.975


def test_one_group_is_pearson_and_the_statistic_exists_grouped_by_item_only():
    rng = np.random.default_rng(1)
    Z = rng.normal(size=(9, 5))
    X = Z + rng.normal(size=Z.shape)
    assert pdp(X, Z, "global") == pytest.approx(scipy.stats.pearsonr(X.ravel(), Z.ravel())[0], abs=1e-12)
    assert pdp(X, Z, "system") == pytest.approx(scipy.stats.pearsonr(X.mean(0), Z.mean(0))[0], abs=1e-12)
    for level in ("global", "system"):
        with pytest.raises(stats.StatisticError, match="equals Pearson's r: use --statistic pearson"):
            stats.check_statistic("pdp", level)
    doc = stats.describe("pdp", "summary", n_resamples=10, seed=3)
    assert {k: v for k, v in doc.items() if k != "resampling"} == {
        "statistic": "pdp", "paper": stats._PAPER["pdp"], "level": "summary", "grouping": "item", "test": "perm-both",
        "test_resamples": 10, "seed": 3}
    assert {k: v for k, v in doc["resampling"].items() if k != "label"} == {
        "method": "boot-both", "n_resamples": 10, "confidence": 0.95, "seed": 3}


def test_properties():
    rng = np.random.default_rng(2)
    Z = rng.normal(size=(12, 6))
    X = Z + rng.normal(size=Z.shape)
    Z[3, 2] = X[3, 2] = np.nan  # a missing cell
    r = pdp(X, Z)
    assert -1.0 <= r <= 1.0
    # a constant per item added to the metric (or to the humans) cancels in every difference
    assert pdp(X + rng.normal(size=(12, 1)) * 100, Z) == pytest.approx(r, abs=1e-12)
    assert pdp(X, Z + rng.normal(size=(12, 1))) == pytest.approx(r, abs=1e-12)
    assert pdp(3.0 * X, Z) == pytest.approx(r, abs=1e-12) and pdp(-X, Z) == pytest.approx(-r, abs=1e-12)
    assert pdp(X, Z) == pytest.approx(pdp(Z, X), abs=1e-15)  # symmetric
    # the order of items and of systems does not matter
    assert pdp(X[::-1, ::-1], Z[::-1, ::-1]) == pytest.approx(r, abs=1e-12)
    # but a scale per item does (items are pooled, not averaged)
    assert pdp(X * np.arange(1.0, 13.0)[:, None], Z) != pytest.approx(r, abs=1e-3)
    # the metric equal to the humans: 1; constant within every item: undefined; one system per item: undefined
    assert pdp(Z, Z) == pytest.approx(1.0, abs=1e-15)
    assert np.isnan(pdp(np.where(np.isnan(Z), np.nan, np.arange(12.0)[:, None]), Z))
    one = np.where(np.arange(6) == 0, Z, np.nan)
    assert np.isnan(pdp(one, one))
    # a stack of metrics gives one value per metric, the same as one at a time
    assert pdp(np.stack([X, -X]), Z) == pytest.approx([r, -r], abs=1e-15)


@pytest.mark.parametrize("missing", [0, 9])
def test_equals_the_enumeration_with_and_without_missing_cells(missing):
    rng = np.random.default_rng(missing)
    Z = rng.normal(size=(8, 5))
    X = np.stack([Z + rng.normal(size=Z.shape), rng.normal(size=Z.shape) * 50 + 3])
    holes = rng.choice(Z.size, missing, replace=False)
    Z.ravel()[holes] = np.nan
    X[:, Z != Z] = np.nan
    for m in range(2):
        dh, dm = [], []
        for g in range(8):
            for s in range(5):
                for t in range(5):
                    if not (np.isnan(Z[g, s]) or np.isnan(Z[g, t])):
                        dh.append(Z[g, t] - Z[g, s])
                        dm.append(X[m, g, t] - X[m, g, s])
        assert pdp(X[m], Z) == pytest.approx(scipy.stats.pearsonr(dh, dm)[0], abs=1e-12)
        assert pdp(X, Z)[m] == pytest.approx(pdp(X[m], Z), abs=1e-15)


def test_bad_input_is_a_clear_error():
    Z = np.array([[1.0, 2.0], [0.0, 3.0]])
    with pytest.raises(ValueError, match="missing"):
        pdp(np.array([[1.0, np.nan], [0.0, 3.0]]), Z)
    with pytest.raises(ValueError, match="shape"):
        pdp(np.ones((3, 2)), Z)
    with pytest.raises(ValueError, match="unknown level"):
        pdp(Z, Z, "segment")


# -- intervals and tests, through meta_eval.stats -------------------------------------------------------------------

def test_intervals_tests_and_matrix_like_the_other_statistics():
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(30, 6))
    X = np.stack([Z + rng.normal(size=Z.shape), Z + 2 * rng.normal(size=Z.shape), Z + rng.normal(size=Z.shape)])
    est = stats.point(X, Z, "pdp", "summary")
    assert est.values == pytest.approx(pdp(X, Z), abs=0) and np.isnan(est.epsilon).all()
    draws = stats.samples(X, Z, "pdp", "summary", n_resamples=200, seed=5)
    assert draws.shape == (200, 3)
    # each draw is PDP on the resampled sub-matrix (BOOT-BOTH: items and systems with replacement)
    from meta_eval.stats.resampling import _draw_indices

    d, s = _draw_indices(np.random.default_rng(5), "both", 200, 30, 6)
    k = 17
    sub = X[:, d[k][:, None], s[k][None, :]]
    assert draws[k] == pytest.approx(pdp(sub, Z[d[k][:, None], s[k][None, :]]), abs=1e-12)
    lo, hi = stats.interval(X, Z, "pdp", "summary", n_resamples=200, seed=5)
    assert lo == pytest.approx(np.percentile(draws, 2.5, axis=0)) and hi == pytest.approx(np.percentile(draws, 97.5, 0))
    assert (lo <= est.values).all() and (est.values <= hi).all()
    # one-sided PERM-BOTH: the better metric beats the noisy one; a metric never beats itself
    assert stats.versus(X[0], X[1], Z, "pdp", "summary", n_resamples=200, seed=0) < 0.01
    assert stats.versus(X[1], X[0], Z, "pdp", "summary", n_resamples=200, seed=0) > 0.99
    assert stats.versus(X[0], X[0], Z, "pdp", "summary", n_resamples=50, seed=0) == 1.0
    P = stats.pvalue_matrix(X, Z, "pdp", "summary", n_resamples=200, seed=0)
    assert P.shape == (3, 3) and np.isnan(np.diag(P)).all()
    assert P[0, 1] < 0.01 and P[1, 0] > 0.99 and P[2, 1] < 0.01


# -- real data: WMT23 en-de -------------------------------------------------------------------------------------------

def _enumerated_pdp(rows, metric: dict[str, float], dimension: str) -> float:
    """mt-metrics-eval's PDP computed the long way: per segment every ordered pair (s, t) of its rated systems,
    s = t included, differences h[t] - h[s] and m[t] - m[s], pooled over segments, one scipy Pearson."""
    by_segment = defaultdict(list)
    for row in rows:
        by_segment[row.doc_id].append((row.scores[dimension], metric[row.id]))
    dh, dm = [], []
    for cells in by_segment.values():
        for h_s, m_s in cells:
            for h_t, m_t in cells:
                dh.append(h_t - h_s)
                dm.append(m_t - m_s)
    return float(scipy.stats.pearsonr(dh, dm)[0])


def test_equals_an_explicit_enumeration_on_wmt23(shared_data):
    sacrebleu = pytest.importorskip("sacrebleu")
    from meta_eval import judgments
    from meta_eval.matrix import judgment_matrices

    jset = judgments.load("wmt23", shared_data, subset="en-de", download=False)
    # leave every 7th row out, so that segments have different numbers of systems and cells are missing
    jset.rows = [r for i, r in enumerate(jset.rows) if i % 7]
    chrf = {r.id: sacrebleu.sentence_chrf(r.candidate, list(r.references)).score for r in jset.rows}
    length = {r.id: float(len(r.candidate.split())) for r in jset.rows}
    Z, (X_chrf, X_len) = judgment_matrices(jset, "da_sqm", [np.array([chrf[r.id] for r in jset.rows]),
                                                            np.array([length[r.id] for r in jset.rows])])
    assert np.isnan(Z).sum() > 500 and Z.shape == (549, 12)
    got = stats.point(np.stack([X_chrf, X_len]), Z, "pdp", "summary").values
    assert got[0] == pytest.approx(_enumerated_pdp(jset.rows, chrf, "da_sqm"), abs=1e-12)
    assert got[1] == pytest.approx(_enumerated_pdp(jset.rows, length, "da_sqm"), abs=1e-12)
    # another number than Pearson grouped by item (averaged per segment) and than Pearson over all cells
    assert abs(got[0] - stats.point(X_chrf[None], Z, "pearson", "summary").values[0]) > 0.01
    assert abs(got[0] - stats.point(X_chrf[None], Z, "pearson", "global").values[0]) > 0.01


def test_cli_run_on_wmt23(shared_data, tmp_path):
    pytest.importorskip("sacrebleu")
    out = tmp_path / "out.json"
    res = runner.invoke(app, ["run", "-j", "wmt23", "--subset", "en-de", "-m", "chrf,bleu", "--statistic", "pdp",
                              "--baseline", "bleu", "--resamples", "100", "--data-dir", str(shared_data), "--cache",
                              str(tmp_path / "cache"), "--output", str(out)])
    assert res.exit_code == 0, res.output
    assert "statistic: pdp (mt-metrics-eval (2025), pairwise difference Pearson" in res.output
    assert "level: summary" in res.output
    doc = json.loads(out.read_text())
    by = {r["metric"]: r for r in doc["results"]}
    assert set(by) == {"chrf", "bleu"} and all(r["n"] == 549 for r in by.values())
    assert by["chrf"]["value"] > by["bleu"]["value"] > 0
    for r in by.values():
        assert r["ci"][0] <= r["value"] <= r["ci"][1]
    assert by["chrf"]["perm_p_vs_baseline"] < 0.05 and by["bleu"]["perm_p_vs_baseline"] is None
    # the API gives the same numbers; with two variants its p-value matrix runs the baseline test's permutations
    from meta_eval.task import run

    res = run("wmt23", "chrf,bleu", subset="en-de", statistic="pdp", baseline="bleu", resamples=100,
              data_dir=shared_data, cache=tmp_path / "cache", progress=False)
    assert res.level == "summary" and res.values == {m: r["value"] for m, r in by.items()}
    assert res.intervals == {m: tuple(r["ci"]) for m, r in by.items()}
    P = res.pvalue_matrix()
    assert P.test == "perm-both" and P.p[P.variants.index("chrf"), P.variants.index("bleu")] == by["chrf"][
        "perm_p_vs_baseline"]
    # the global level is refused with the reason, exit code 2
    res = runner.invoke(app, ["run", "-j", "wmt23", "--subset", "en-de", "-m", "chrf", "--statistic", "pdp",
                              "--level", "global", "--data-dir", str(shared_data), "--no-cache"])
    assert res.exit_code == 2 and "use --statistic pearson" in res.output


def test_docstring_examples():
    import doctest

    from meta_eval import stats as stats_package
    from meta_eval.stats import pdp as pdp_module

    for module in (pdp_module, stats_package):
        result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
        assert result.attempted > 0 and result.failed == 0, module.__name__


# -- protocols --------------------------------------------------------------------------------------------------------

_PROTOCOL = '''name = "p"
title = "t"
citation = "c"
source = "s"
[[part]]
name = "segments"
judgments = "wmt23"
subset = "en-de"
human = "da_sqm"
statistic = "pdp"
level = "{level}"
metrics = ["chrf"]
tolerance = 0.0
'''


def test_a_protocol_part_computes_pdp_grouped_by_item(shared_data, tmp_path):
    pytest.importorskip("sacrebleu")
    from meta_eval.matrix import judgment_matrices
    from meta_eval.protocol import ProtocolError, load_protocol
    from meta_eval.task import run_protocol

    path = tmp_path / "p.toml"
    path.write_text(_PROTOCOL.format(level="global"))
    with pytest.raises(ProtocolError, match='pdp is computed at level = "summary" only'):
        load_protocol(path)
    path.write_text(_PROTOCOL.format(level="summary"))
    assert load_protocol(path).parts[0].correlation == "pdp"
    doc = run_protocol(str(path), data_dir=shared_data, cache=tmp_path / "cache", resamples=20, seed=1,
                       progress=False)
    part = doc["parts"][0]
    (result,) = part["results"]
    scored = part["_objects"]["scored"][0]
    from meta_eval import judgments

    jset = judgments.load("wmt23", shared_data, subset="en-de", download=False)
    Z, (X,) = judgment_matrices(jset, "da_sqm", [scored.scores["chrf"]])
    assert result["statistic"] == "pdp" and result["value"] == pytest.approx(pdp(X, Z), abs=1e-12)
    lo, hi = stats.interval(X[None], Z, "pdp", "summary", n_resamples=20, seed=1)
    assert result["ci"] == pytest.approx([lo[0], hi[0]], abs=1e-12)


# -- leaderboards -----------------------------------------------------------------------------------------------------

def _toy(task: str):
    from meta_eval.judgments.base import Judgment, JudgmentSet
    from meta_eval.scoring.runner import MetricScores

    rng = np.random.default_rng(4)
    rows, good, bad = [], [], []
    for d in range(15):
        for s in range(5):
            h = s / 4 + rng.normal(0, 0.3)
            rows.append(Judgment(f"d{d}:s{s}", f"d{d}", f"s{s}", "x", ("y",), scores={"q": h}))
            good.append(h + rng.normal(0, 0.1))
            bad.append(h + rng.normal(0, 1.0))
    jset = JudgmentSet("toy", rows, ("q",), "q", task=task)
    scored = [MetricScores("good", "good|sig", True, {"good": np.array(good)}, 0, 0, 0.0),
              MetricScores("bad", "bad|sig", True, {"bad": np.array(bad)}, 0, 0, 0.0)]
    return jset, scored


def test_boards_of_mt_sets_carry_a_pdp_block_equal_to_the_api():
    from meta_eval.leaderboard.publish import set_results
    from meta_eval.leaderboard.render import render_readme
    from meta_eval.matrix import judgment_matrices

    jset, scored = _toy("MT")
    block = set_results(jset, "q", scored, n_resamples=100, seed=2)
    (b,) = [b for b in block["levels"] if b["statistic"] == "pdp"]
    assert (b["level"], b["grouping"], b["n_units"], b["ci_method"]) == ("summary", "item", 15, "boot-both")
    Z, X = judgment_matrices(jset, "q", [scored[0].scores["good"], scored[1].scores["bad"]])
    X = np.stack(X)
    lo, hi = stats.interval(X, Z, "pdp", "summary", n_resamples=100, seed=2)
    got = {r["variant"]: r for r in b["results"]}
    for i, name in enumerate(("good", "bad")):  # boards keep every bit
        assert got[name]["r"] == pytest.approx(pdp(X[i], Z), rel=1e-12, abs=1e-15)
        assert got[name]["ci"] == [float(lo[i]), float(hi[i])]
    P = stats.pvalue_matrix(X, Z, "pdp", "summary", n_resamples=100, seed=2)
    assert b["pairwise"]["test"] == "perm-both" and b["pairwise"]["variants"] == ["good", "bad"]
    assert np.array_equal(np.array(b["pairwise"]["p"], dtype=float), P, equal_nan=True)
    assert got["good"]["rank"] == 1 and got["bad"]["rank"] == 2
    readme = render_readme({"name": "toy", "command": "test", "meta_eval_version": "0", "sets": [block],
                            "meta_evaluation": {"signature": "s", "confidence": 0.95, "ci_method": "boot-both",
                                                "n_resamples": 100, "seed": 0, "test": "t", "correction": "holm",
                                                "alpha": 0.05, "primary": "spearman"}})
    assert "### segment level, group by item: pdp (mt-metrics-eval (2025), pairwise difference Pearson" in readme
    # other tasks: no pdp block
    jset, scored = _toy("summarization")
    assert "pdp" not in {b["statistic"] for b in set_results(jset, "q", scored, n_resamples=20, seed=2)["levels"]}
