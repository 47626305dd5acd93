"""Generic JSONL judgments never guess: repeated (document, system) pairs, rows without a system, levels that cannot
be computed, the default human dimension, and ``meta-eval judgments PATH`` (end to end through the real CLI).

The metric ``test-value`` scores a candidate with the number it holds (candidate "2.5" -> 2.5), so every expected
correlation below is computed by hand from the rows written in each test.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from meta_eval import judgments
from meta_eval.cli import app
from meta_eval.judgments.base import Judgment, JudgmentError, JudgmentSet
from meta_eval.matrix import judgment_matrices
from meta_eval.metrics import Metric, register
from meta_eval.metrics.registry import unregister

runner = CliRunner()

# (document, system, human, metric). d1 ranks A < B < C for both; d2 swaps A and B for the metric.
BASE = [("d1", "A", 1.0, 1.0), ("d1", "B", 2.0, 2.0), ("d1", "C", 3.0, 3.0),
        ("d2", "A", 1.0, 2.0), ("d2", "B", 2.0, 1.0), ("d2", "C", 3.0, 3.0)]
REPEAT = ("d1", "A", 5.0, 0.0)  # a second row for (d1, A) that disagrees with the first


@pytest.fixture(autouse=True, scope="module")
def value_metric():
    @register("test-value")
    class Value(Metric):
        variants = ("test-value",)
        needs_references = False

        def _score(self, examples):
            return {"test-value": [float(ex.candidate) for ex in examples]}

    yield
    unregister("test-value")


def write(path, rows, system=True, doc=True, dims=("overall",)):
    with open(path, "w", encoding="utf-8") as fh:
        for d, s, h, m in rows:
            obj = {"candidate": str(m), "references": ["r"], "scores": {k: h for k in dims}}
            if doc:
                obj["doc_id"] = d
            if system:
                obj["system"] = s
            fh.write(json.dumps(obj) + "\n")
    return Path(path)


def run(*args):
    res = runner.invoke(app, ["run", "-m", "test-value", "--no-cache", "--resamples", "20", *args])
    return res, " ".join(res.output.split())


def run_json(tmp_path, *args):
    out = tmp_path / "res.json"
    res, text = run(*args, "--output", str(out))
    assert res.exit_code == 0, res.output
    doc = json.loads(out.read_text())
    (result,) = doc["results"]
    return doc, result, text


# -- repeated (document, system) pairs -----------------------------------------------------------------------------

def test_repeated_pair_is_an_error_naming_both_lines(tmp_path):
    path = write(tmp_path / "dup.jsonl", BASE + [REPEAT])
    for level in ("global", "summary", "system"):
        res, text = run("-j", str(path), "--level", level)
        assert res.exit_code == 2, text
        assert "dup.jsonl:1 and " in text and "dup.jsonl:7 both hold (document 'd1', system 'A')" in text
        assert "--duplicates mean" in text and "--duplicates first" in text
    # the API says the same, with the line numbers
    jset = judgments.load(path)
    with pytest.raises(JudgmentError, match=r"dup\.jsonl:1 and .*dup\.jsonl:7 both hold"):
        jset.resolve_duplicates()
    with pytest.raises(JudgmentError, match=r"dup\.jsonl:7 both hold"):
        judgment_matrices(jset, "overall", [])


def test_three_rows_of_one_pair_are_all_named(tmp_path):
    path = write(tmp_path / "dup3.jsonl", BASE + [REPEAT, REPEAT])
    with pytest.raises(JudgmentError, match=r"dup3\.jsonl:1, .*dup3\.jsonl:7 and .*dup3\.jsonl:8 all hold"):
        judgments.load(path).resolve_duplicates()


def test_summary_level_first_keeps_the_first_row_in_file_order(tmp_path):
    # d1 = (1,2,3) vs (1,2,3): rho 1; d2 = (1,2,3) vs (2,1,3): rho 1 - 6*2/(3*8) = 0.5. Summary level: 0.75.
    path = write(tmp_path / "dup.jsonl", BASE + [REPEAT])
    doc, r, text = run_json(tmp_path, "-j", str(path), "--level", "summary", "--duplicates", "first")
    assert r["spearman"] == pytest.approx(0.75, abs=1e-12) and r["pearson"] == pytest.approx(0.75, abs=1e-12)
    assert r["n"] == 2 and doc["n"] == 6
    assert doc["duplicates"] == {"policy": "first", "given_by": "given with --duplicates", "repeated_pairs": 1,
                                 "rows_in_repeated_pairs": 2, "rows_dropped": 1}
    assert "policy 'first'" in text and "dropped 1 row" in text and "dup.jsonl:7" in text
    # the repeat written first: now (d1, A) = (h 5, m 0) is kept: d1 = (5,2,3) vs (0,2,3): rho = 1 - 6*6/24 = -0.5
    path = write(tmp_path / "dup_first.jsonl", [REPEAT] + BASE)
    doc, r, _ = run_json(tmp_path, "-j", str(path), "--level", "summary", "--duplicates", "first")
    assert r["spearman"] == pytest.approx((-0.5 + 0.5) / 2, abs=1e-12)


def test_summary_and_system_level_mean_averages_human_and_metric_scores(tmp_path):
    # (d1, A) becomes human (1+5)/2 = 3, metric (1+0)/2 = 0.5: d1 = h (3,2,3), m (0.5,2,3).
    # Spearman: ranks (2.5,1,2.5) vs (1,2,3): covariance 0, rho 0; summary = (0 + 0.5)/2 = 0.25.
    # Pearson of d1 = -1/(2 sqrt 19) (deviations (1,-2,1)/3 and (-8,1,7)/6); summary = (0.5 - 1/(2 sqrt 19))/2.
    path = write(tmp_path / "dup.jsonl", BASE + [REPEAT])
    doc, r, text = run_json(tmp_path, "-j", str(path), "--level", "summary", "--duplicates", "mean")
    assert r["spearman"] == pytest.approx(0.25, abs=1e-12)
    assert r["pearson"] == pytest.approx((0.5 - 1 / (2 * math.sqrt(19))) / 2, abs=1e-12)
    assert doc["n"] == 7 and doc["duplicates"]["policy"] == "mean" and doc["duplicates"]["rows_dropped"] == 0
    assert "policy 'mean' (given with --duplicates)" in text and "averaged into one cell" in text
    # system level: A = h mean(3, 1) = 2, m mean(0.5, 2) = 1.25; B = (2, 1.5); C = (3, 3).
    # Pearson = (13/12) / sqrt(2/3 * 43/24) = 13 / (2 sqrt 43); Spearman: ranks (1.5,1.5,3) vs (1,2,3) = sqrt(3)/2.
    doc, r, _ = run_json(tmp_path, "-j", str(path), "--level", "system", "--duplicates", "mean")
    assert r["pearson"] == pytest.approx(13 / (2 * math.sqrt(43)), abs=1e-12)
    assert r["spearman"] == pytest.approx(math.sqrt(3) / 2, abs=1e-12) and r["n"] == 3
    # with 'first' instead: A = h 1, m mean(1, 2) = 1.5; B = (2, 1.5); C = (3, 3): Pearson = 1.5/sqrt(2*1.5)
    doc, r, _ = run_json(tmp_path, "-j", str(path), "--level", "system", "--duplicates", "first")
    assert r["pearson"] == pytest.approx(math.sqrt(3) / 2, abs=1e-12)


def test_global_level_mean_counts_every_row_and_first_drops(tmp_path):
    path = write(tmp_path / "dup.jsonl", BASE + [REPEAT])
    # first: h (1,2,3,1,2,3), m (1,2,3,2,1,3): deviations (-1,0,1,-1,0,1), (-1,0,1,0,-1,1): r = 3/4
    doc, r, _ = run_json(tmp_path, "-j", str(path), "--duplicates", "first")
    assert r["pearson"] == pytest.approx(0.75, abs=1e-12) and r["n"] == 6
    # mean: the global level correlates the 7 rows as they are
    doc, r, _ = run_json(tmp_path, "-j", str(path), "--duplicates", "mean")
    h = [row[2] for row in BASE + [REPEAT]]
    m = [row[3] for row in BASE + [REPEAT]]
    assert r["n"] == 7 and r["pearson"] == pytest.approx(np.corrcoef(h, m)[0, 1], abs=1e-12)


def test_a_file_without_repeats_needs_no_policy(tmp_path):
    path = write(tmp_path / "ok.jsonl", BASE)
    doc, r, text = run_json(tmp_path, "-j", str(path), "--level", "summary")
    assert r["spearman"] == pytest.approx(0.75, abs=1e-12)
    assert doc["duplicates"] == {"policy": "error", "given_by": "declared by the ok set", "repeated_pairs": 0,
                                 "rows_in_repeated_pairs": 0, "rows_dropped": 0}
    assert "duplicates:" not in text


def test_unknown_policy_is_refused(tmp_path):
    res, text = run("-j", str(write(tmp_path / "ok.jsonl", BASE)), "--duplicates", "median")
    assert res.exit_code == 2 and "--duplicates must be error, mean or first" in text


# -- systems ----------------------------------------------------------------------------------------------------------

def test_file_without_system_runs_at_the_global_level_only(tmp_path):
    path = write(tmp_path / "nosys.jsonl", BASE, system=False)
    jset = judgments.load(path)
    assert all(r.system is None for r in jset.rows) and jset.systems() == []
    doc, r, text = run_json(tmp_path, "-j", str(path))
    # global: h (1,2,3,1,2,3) vs m (1,2,3,2,1,3): Pearson 3/4 (as above), over 6 rows
    assert r["pearson"] == pytest.approx(0.75, abs=1e-12) and r["n"] == 6
    assert "6 of 6 rows have no 'system': only the global level can be computed" in text
    assert any("no 'system'" in n for n in doc["notes"]) and "unknown" not in text
    for level in ("summary", "system"):
        res, text = run("-j", str(path), "--level", level)
        assert res.exit_code == 2
        assert "nosys.jsonl has no 'system' field (none of its 6 rows has one)" in text
        assert f"the {level} level needs each row's system" in text
        assert text.count("error:") == 1 and "undefined" not in text


def test_some_rows_without_system_name_the_first(tmp_path):
    path = write(tmp_path / "some.jsonl", BASE)
    lines = path.read_text().splitlines()
    row = json.loads(lines[3])
    del row["system"]
    lines[3] = json.dumps(row)
    path.write_text("\n".join(lines) + "\n")
    res, text = run("-j", str(path), "--level", "system")
    assert res.exit_code == 2 and "1 of 6 rows have no 'system' (the first: " in text and "some.jsonl:4)" in text


def test_semicolon_is_part_of_a_jsonl_system_name(tmp_path):
    rows = [("d1", "a;b", 1.0, 1.0), ("d1", "c", 2.0, 2.0), ("d1", "d", 3.0, 3.0),
            ("d2", "a;b", 2.0, 1.0), ("d2", "c", 1.0, 2.0), ("d2", "d", 3.0, 3.0)]
    jset = judgments.load(write(tmp_path / "semi.jsonl", rows))
    assert jset.multi_system_separator is None and jset.systems() == ["a;b", "c", "d"]
    Z, _ = judgment_matrices(jset, "overall", [])
    assert Z.shape == (2, 3)
    # a set that declares the separator (as chaganty does) fills a cell for each system
    split = JudgmentSet("s", jset.rows, jset.dimensions, "overall", multi_system_separator=";")
    Z, _ = judgment_matrices(split, "overall", [])
    assert Z.shape == (2, 4) and Z[0].tolist() == [1.0, 1.0, 2.0, 3.0]


# -- levels that cannot be computed: one error, non-zero exit ----------------------------------------------------------

@pytest.mark.parametrize("rows,level,message", [
    ([("d1", "A", 1.0, 1.0), ("d1", "B", 2.0, 2.0), ("d2", "A", 2.0, 1.0), ("d2", "B", 1.0, 3.0)], "system",
     "the system level cannot be computed for human 'overall': it needs 3 or more systems, there are 2 (A, B)"),
    ([("d1", "A", 1.0, 1.0), ("d1", "B", 2.0, 2.0), ("d2", "A", 2.0, 1.0), ("d2", "C", 1.0, 3.0)], "summary",
     "none is judged for 3 or more systems (the most on one document: 2)"),
    ([("d1", "A", 1.0, 1.0), ("d1", "B", 1.0, 2.0), ("d1", "C", 1.0, 3.0), ("d2", "A", 2.0, 1.0)], "summary",
     "the 1 document judged for 3 or more systems has equal human scores"),
    ([(f"d{i}", "A", 1.0, float(i)) for i in range(5)], "global",
     "every row has the same human score (1), so no correlation is defined"),
])
def test_a_level_that_cannot_be_computed_is_one_error(tmp_path, rows, level, message):
    path = write(tmp_path / "lvl.jsonl", rows)
    res, text = run("-j", str(path), "--level", level)
    assert res.exit_code == 2, text
    assert message in text and "lvl.jsonl" in text
    assert text.count("error:") == 1 and "note:" not in text


def test_no_variant_with_a_correlation_is_an_error_not_a_table_of_dashes(tmp_path):
    rows = [(d, s, h, 7.0) for d, s, h, _ in BASE]  # the metric is constant
    res, text = run("-j", str(write(tmp_path / "const.jsonl", rows)), "--level", "summary")
    assert res.exit_code == 2 and "the summary level has no result" in text and "constant" in text


# -- the default human dimension -----------------------------------------------------------------------------------

def test_several_dimensions_say_which_and_why(tmp_path):
    path = write(tmp_path / "dims.jsonl", BASE, dims=("fluency", "overall", "coherence"))
    doc, _, text = run_json(tmp_path, "-j", str(path))
    assert doc["human"] == "overall"
    assert doc["human_chosen_because"].startswith("the file has a dimension named 'overall'")
    assert ("human: overall (chosen because the file has a dimension named 'overall'" in text
            and "pass --human to choose: fluency, overall, coherence)" in text)
    path = write(tmp_path / "dims2.jsonl", BASE, dims=("fluency", "coherence"))
    doc, _, text = run_json(tmp_path, "-j", str(path))
    assert doc["human"] == "fluency"
    assert "it is the first key of the first row's scores" in doc["human_chosen_because"]
    assert "dims2.jsonl:1" in doc["human_chosen_because"] and "chosen because it is the first key" in text
    doc, _, text = run_json(tmp_path, "-j", str(path), "--human", "coherence")
    assert doc["human"] == "coherence" and doc["human_chosen_because"] == "given with --human"
    assert "chosen because" not in text


def test_one_dimension_needs_no_explanation_line(tmp_path):
    doc, _, text = run_json(tmp_path, "-j", str(write(tmp_path / "one.jsonl", BASE)))
    assert doc["human_chosen_because"] == "it is the file's only dimension" and "chosen because" not in text


# -- meta-eval judgments PATH --------------------------------------------------------------------------------------

def test_judgments_path_describes_a_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = write("desc.jsonl", BASE + [REPEAT], dims=("overall", "fluency"))
    lines = path.read_text().splitlines()
    row = json.loads(lines[1])
    row["scores"] = {"overall": None, "fluency": None}
    row["references"] = ["r", "r2"]
    del row["doc_id"]
    lines[1] = json.dumps(row)
    path.write_text("\n".join(lines) + "\n")
    for args in (["judgments", "desc.jsonl"], ["judgments", "--judgments", "desc.jsonl"]):
        res = runner.invoke(app, args)
        lines_out = res.output.splitlines()
        assert res.exit_code == 0, res.output
        for line in ("  rows: 7", "  documents: 3", "  systems: 3 (A, B, C)",
                     "  human 'overall' (default): 6 rows with a score, 1 without",
                     "  human 'fluency': 6 rows with a score, 1 without", "  rows without any score: 1",
                     "  references per row: 1: 6 rows, 2: 1 row", "  rows with a source: 0 of 7",
                     "  repeated (document, system) pairs: 1 pair (2 rows), e.g. desc.jsonl:1 and desc.jsonl:7: "
                     "(document 'd1', system 'A'); policy: error",
                     "  global level (overall): only with --duplicates mean or first; then yes: 6 rows",
                     "  system level (overall): only with --duplicates mean or first; then yes: 3 systems",
                     "note: 1 of 7 rows have no 'doc_id' (the first: desc.jsonl:2): each of them is its own "
                     "document, so they take no part in the summary level"):
            assert line in lines_out, (line, res.output)


def test_judgments_path_errors_name_the_file(tmp_path):
    res = runner.invoke(app, ["judgments", str(tmp_path / "absent.jsonl")])
    assert res.exit_code == 2 and "absent.jsonl does not exist" in " ".join(res.output.split())


def test_judgments_without_path_still_lists_the_built_in_sets(shared_data):
    res = runner.invoke(app, ["judgments", "--data-dir", str(shared_data)], terminal_width=200)
    assert res.exit_code == 0 and all(n in res.output for n in ("chaganty", "essays", "summeval", "realsumm"))


# -- built-in sets keep their declared behaviour -----------------------------------------------------------------

def test_chaganty_declares_mean_and_says_so(shared_data, tmp_path):
    jset = judgments.load("chaganty", shared_data)
    assert jset.duplicates == "mean" and jset.multi_system_separator == ";"
    resolved, report = jset.resolve_duplicates()
    assert resolved.rows == jset.rows and report.repeated_pairs == 1 and report.rows_dropped == 0
    assert "rows '006588:ml+rl' and '006588:ml+rl#2' hold (document '006588', system 'ml+rl')" in report.message
    assert "policy 'mean' (declared by the chaganty set)" in report.message
    # the 009784 row written by both ml and ml+rl fills two cells; the repeated pair is one averaged cell
    Z, _ = judgment_matrices(jset, "overall", [])
    assert int((~np.isnan(Z)).sum()) == len(jset) + 1 - 1
    with pytest.raises(JudgmentError, match=r"rows '006588:ml\+rl' and '006588:ml\+rl#2' both hold"):
        jset.resolve_duplicates("error")
    res, text = run("-j", "chaganty", "--data-dir", str(shared_data), "--duplicates", "error")
    assert res.exit_code == 2 and "both hold (document '006588', system 'ml+rl')" in text
    dropped, report = jset.resolve_duplicates("first")
    assert len(dropped) == len(jset) - 1 and "006588:ml+rl#2" not in {r.id for r in dropped.rows}


def test_a_set_declares_its_policy_and_its_default_reason():
    rows = [Judgment("1", "d", "A", "x", ()), Judgment("2", "d", "A", "y", ())]
    with pytest.raises(JudgmentError, match="duplicates policy 'median'"):
        JudgmentSet("t", rows, ("q",), "q", duplicates="median")
    jset = JudgmentSet("t", rows, ("q",), "q")
    assert jset.duplicates == "error" and jset.default_reason == "it is the t set's declared default"
    with pytest.raises(JudgmentError, match=r"rows '1' and '2' both hold \(document 'd', system 'A'\)"):
        jset.resolve_duplicates()
