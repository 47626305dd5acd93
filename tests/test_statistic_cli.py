"""``meta-eval run --statistic``: pairwise accuracy, acc-eq, acc-t and SPA at the WMT23 levels, the --correlation
alias, the human ceiling in the table and JSON, and clear errors where a statistic does not exist.

Numbers are checked against the statistics modules called directly on the same (document x system) matrices, so
the CLI's plumbing (orientation, matrices, seeds, intervals, ceiling) is what is tested here; the statistics
themselves are tested by hand in test_pairwise.py, test_spa.py and test_ceiling.py.
"""
from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from meta_eval import judgments
from meta_eval.cli import app
from meta_eval.stats.ceiling import annotator_matrices
from meta_eval.matrix import judgment_matrices
from meta_eval.stats.pairwise import pairwise_accuracy, tie_calibration
from meta_eval.stats.spa import soft_pairwise_accuracy
from meta_eval.metrics import Metric, register
from meta_eval.metrics.registry import unregister

runner = CliRunner()


def _words(text: str) -> float:
    return float(len(text.split()))


@pytest.fixture(scope="module")
def length_metrics():
    """Two cheap, real metrics: candidate length in words (higher is better) and its negation declared
    lower-is-better (the CLI must orient it back, so it scores exactly like length)."""
    @register("test-length")
    class Length(Metric):
        variants = ("test-length",)

        def _score(self, examples):
            return {"test-length": [_words(e.candidate) for e in examples]}

    @register("test-shortness")
    class Shortness(Metric):
        variants = ("test-shortness",)
        higher_is_better = False

        def _score(self, examples):
            return {"test-shortness": [-_words(e.candidate) for e in examples]}

    yield
    unregister("test-length")
    unregister("test-shortness")


def _run(shared_data, tmp_path, *args):
    out = tmp_path / "res.json"
    res = runner.invoke(app, ["run", "--data-dir", str(shared_data), "-m", "test-length,test-shortness",
                              "--baseline", "test-shortness", "--resamples", "100", "--no-cache",
                              "--output", str(out), *args])
    return res, (json.loads(out.read_text()) if res.exit_code == 0 else None)


def _matrices(shared_data, name: str, dim: str):
    jset = judgments.load(name, shared_data).scored(dim)
    jset, _ = jset.resolve_duplicates(None)
    length = np.array([_words(r.candidate) for r in jset.rows])
    Z, (X,) = judgment_matrices(jset, dim, [length])
    return jset, X, Z


def test_acc_t_at_the_system_level_on_summeval(shared_data, tmp_path, length_metrics):
    res, doc = _run(shared_data, tmp_path, "-j", "summeval", "--statistic", "acc-t", "--level", "system")
    assert res.exit_code == 0, res.output
    assert (doc["statistic"], doc["level"], doc["grouping"], doc["test"]) == ("acc-t", "system", "system",
                                                                              "perm-pairs")
    assert doc["resampling"] == {"method": "boot-both", "n_resamples": 100, "confidence": 0.95, "seed": 0,
                                 "label": "95% percentile bootstrap interval (BOOT-BOTH: documents (items) and "
                                          "systems drawn with replacement; 100 resamples, seed 0)"}
    assert doc["correlation"] is None
    _, X, Z = _matrices(shared_data, "summeval", "relevance")
    value, eps = tie_calibration(X, Z, "system")
    by = {r["metric"]: r for r in doc["results"]}
    for name in ("test-length", "test-shortness"):  # orientation: the lower-is-better twin scores the same
        assert by[name]["statistic"] == "acc-t"
        assert by[name]["value"] == pytest.approx(value, abs=1e-12)
        assert by[name]["epsilon"] == pytest.approx(eps, abs=1e-12)
        assert by[name]["ci"][0] <= by[name]["value"] <= by[name]["ci"][1]
    assert by["test-length"]["perm_p_vs_baseline"] == 1.0  # identical outcomes: never better
    out = " ".join(res.output.split())
    assert "acc-t" in out and "grouping: system" in out and "tie calibration" in out
    # SummEval's file keeps only the mean of the three experts: no ceiling, and the JSON says why
    assert doc["ceiling"]["value"] is None and "per-annotator" in doc["ceiling"]["note"]
    assert "human ceiling: none" in out


def test_accuracy_grouped_by_item_and_the_ceiling_on_chaganty(shared_data, tmp_path, length_metrics):
    res, doc = _run(shared_data, tmp_path, "-j", "chaganty", "--statistic", "accuracy", "--level", "summary")
    assert res.exit_code == 0, res.output
    assert doc["grouping"] == "item" and doc["test"] == "perm-both"
    jset, X, Z = _matrices(shared_data, "chaganty", "overall")
    assert doc["results"][0]["value"] == pytest.approx(pairwise_accuracy(X, Z, "summary"), abs=1e-12)
    assert doc["results"][0]["epsilon"] is None
    # the ceiling: each of chaganty's 2 judge slots against the other, with the same statistic and level
    c = doc["ceiling"]
    pairs = annotator_matrices(jset, "overall")
    expected = np.mean([pairwise_accuracy(A, O, "summary") for A, O in pairs])
    assert c["slots"] == 2 and c["value"] == pytest.approx(expected, abs=1e-12)
    assert c["statistic"] == "accuracy" and c["level"] == "summary"
    assert c["ci_low"] <= c["value"] <= c["ci_high"]
    assert "human ceiling" in res.output


def test_spa_defaults_to_the_system_level_and_refuses_other_levels(shared_data, tmp_path, length_metrics):
    res, doc = _run(shared_data, tmp_path, "-j", "summeval", "--statistic", "spa", "--permutations", "200")
    assert res.exit_code == 0, res.output
    assert doc["level"] == "system" and doc["n_permutations"] == 200 and doc["test"] == "spa-perm-both"
    assert doc["resampling"]["method"] == "boot-documents"
    _, X, Z = _matrices(shared_data, "summeval", "relevance")
    assert doc["results"][0]["value"] == pytest.approx(soft_pairwise_accuracy(X, Z, 200, 0).spa, abs=1e-12)
    res, _ = _run(shared_data, tmp_path, "-j", "summeval", "--statistic", "spa", "--level", "summary")
    assert res.exit_code == 2
    assert "spa is defined only at the system level" in " ".join(res.output.split())


@pytest.mark.parametrize("args, message", [
    (["--statistic", "tau"], "unknown statistic 'tau'"),
    (["--correlation", "acc-t"], "--correlation must be spearman, pearson or kendall"),
    (["--correlation", "kendall", "--statistic", "pearson"], "disagree"),
    (["--statistic", "acc-t", "--epsilon", "0.1"], "--epsilon is the tie threshold of acc-eq"),
])
def test_bad_statistics_get_a_clear_error(shared_data, tmp_path, length_metrics, args, message):
    res, _ = _run(shared_data, tmp_path, "-j", "summeval", *args)
    assert res.exit_code == 2 and message in " ".join(res.output.split())
    assert "Traceback" not in res.output


def test_correlation_alias_and_acc_eq_at_zero_equals_accuracy(shared_data, tmp_path, length_metrics):
    res, old = _run(shared_data, tmp_path, "-j", "summeval", "--correlation", "kendall", "--level", "system")
    assert res.exit_code == 0, res.output
    res, new = _run(shared_data, tmp_path, "-j", "summeval", "--statistic", "kendall", "--level", "system")
    assert old["results"] == new["results"] and new["statistic"] == new["correlation"] == "kendall"
    assert new["results"][0]["value"] == new["results"][0]["kendall"]
    res, acc = _run(shared_data, tmp_path, "-j", "summeval", "--statistic", "accuracy", "--level", "system")
    res, eq = _run(shared_data, tmp_path, "-j", "summeval", "--statistic", "acc-eq", "--level", "system")
    assert res.exit_code == 0, res.output
    assert eq["epsilon"] == 0.0 and eq["results"][0]["value"] == acc["results"][0]["value"]
    res, wide = _run(shared_data, tmp_path, "-j", "summeval", "--statistic", "acc-eq", "--level", "system",
                     "--epsilon", "1000")  # every metric pair ties; only the humans' tied pairs are right
    assert res.exit_code == 0, res.output
    _, X, Z = _matrices(shared_data, "summeval", "relevance")
    means = Z.mean(axis=0)
    tied = np.mean([means[i] == means[j] for i in range(16) for j in range(i + 1, 16)])
    assert wide["results"][0]["value"] == pytest.approx(tied, abs=1e-12)


def test_control_system_reports_frank_partial_correlation(shared_data, tmp_path, length_metrics):
    from meta_eval.stats.partial import partial_correlation

    res, doc = _run(shared_data, tmp_path, "-j", "summeval", "--statistic", "spearman", "--control", "system")
    assert res.exit_code == 0, res.output
    jset = judgments.load("summeval", shared_data)
    length = np.array([_words(r.candidate) for r in jset.rows])
    expected = partial_correlation(length, jset.human("relevance"), [r.system for r in jset.rows], "spearman")
    by = {r["metric"]: r for r in doc["results"]}
    assert doc["control"] == "system"
    assert by["test-length"]["partial"] == pytest.approx(expected.r, abs=1e-12)
    assert by["test-shortness"]["partial"] == pytest.approx(expected.r, abs=1e-12)  # oriented first
    assert by["test-length"]["partial_p"] == pytest.approx(expected.p, rel=1e-9)
    assert "partial r (system)" in " ".join(res.output.split())
    res, _ = _run(shared_data, tmp_path, "-j", "summeval", "--statistic", "kendall", "--control", "system")
    assert res.exit_code == 2 and "pearson or spearman" in " ".join(res.output.split())


def test_delta_band_reports_kendall_over_the_pairs_in_the_band(shared_data, tmp_path, length_metrics):
    from meta_eval.stats.system_level import delta_correlation

    res, doc = _run(shared_data, tmp_path, "-j", "summeval", "--level", "system", "--statistic", "kendall",
                    "--delta-band", "0:2")
    assert res.exit_code == 0, res.output
    _, X, Z = _matrices(shared_data, "summeval", "relevance")
    expected = delta_correlation(np.nanmean(X, axis=0), np.nanmean(Z, axis=0), 0, 2)
    got = doc["results"][0]["delta"]
    assert got["n_pairs"] == expected.n_pairs and got["tau"] == pytest.approx(expected.tau, abs=1e-12)
    assert 0 < got["n_pairs"] < 120 and doc["delta_band"] == [0.0, 2.0]
    res, _ = _run(shared_data, tmp_path, "-j", "summeval", "--delta-band", "0:2")
    assert res.exit_code == 2 and "needs --level system" in " ".join(res.output.split())
