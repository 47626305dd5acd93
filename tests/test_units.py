"""One definition of each level's units (meta_eval.units), used by ``judgments``, ``run`` and ``leaderboard publish``;
MT sets in MT words; each set's default baseline, and why an empty test column is empty (issue 35, bullets 2 and 8).

Hand-checked numbers (chaganty sms, human ``overall``): 2,085 rows; 583 documents, of which 500 are judged for 3 or
more systems and 492 of those have differing human scores (the 8 others have one score for every system, so no
summary-level correlation is defined on them); 4 systems (ml, ml+rl, pointer, seq2seq): the row of document 009784
whose system is ``ml;ml+rl`` fills the cell of both (shared/judgments/chaganty/PROVENANCE.md: "it counts for both").
"""
from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from conftest import require_metrics
from meta_eval import judgments
from meta_eval.cli import app
from meta_eval.judgments.base import Judgment, JudgmentSet

runner = CliRunner()


def _cli(*args):
    res = runner.invoke(app, list(args))
    assert res.exit_code == 0, res.output
    return res.output


def _lines(output: str, start: str) -> list[str]:
    return [line.strip() for line in output.splitlines() if line.strip().startswith(start)]


# -- synthetic: the rule ------------------------------------------------------------------------------------------

def _set(task="summarization", separator=None):
    rows, k = [], 0
    human = {"d1": [1, 2, 3], "d2": [2, 2, 2], "d3": [1, 3, 2], "d4": [3, 1, 2]}  # d2: equal human scores
    for doc, values in human.items():
        for system, h in zip(("a", "b", "c"), values):
            k += 1
            rows.append(Judgment(f"{k}", doc, system, f"text {k}", ("ref",), scores={"q": float(h)}))
    return JudgmentSet("toy", rows, ("q",), "q", task=task, multi_system_separator=separator)


def test_a_document_with_equal_human_scores_is_not_a_summary_level_unit():
    from meta_eval.evaluate import check_level, evaluate_level
    from meta_eval.scoring.runner import MetricScores

    jset = _set()
    assert check_level(jset, "q", "summary") == "3 documents"
    x = np.array([1., 2, 3, 1, 2, 3, 2, 3, 1, 1, 2, 3])
    ms = MetricScores("m", "m|sig", True, {"m": x}, len(x), 0, 0.0)
    (r,) = evaluate_level(jset, "q", [ms], "summary", None, "spearman", n_resamples=20)
    assert r.n == 3  # not 4: d2's correlation is undefined, the average is over d1, d3, d4
    assert r.value == pytest.approx((1.0 + 0.5 - 0.5) / 3)


def test_mt_sets_name_items_and_segments():
    from meta_eval.evaluate import check_level, units_warning
    from meta_eval.units import level_words

    assert check_level(_set(task="MT"), "q", "summary") == "3 items"
    assert check_level(_set(task="MT"), "q", "global") == "12 segments"
    assert level_words("MT", "global").name == "segment level, no grouping"
    assert level_words("summarization", "summary").name == "summary level"
    assert "rests on 3 items" in units_warning("summary", 3, "MT")


def test_a_row_naming_two_systems_fills_both_cells_and_is_said():
    from meta_eval.units import multi_system_note

    rows = _set(separator=";").rows
    rows[0] = Judgment("1", "d1", "a;b", "text 1", ("ref",), scores={"q": 1.0})
    jset = JudgmentSet("toy", rows[:1] + rows[2:], ("q",), "q", multi_system_separator=";")
    assert jset.systems() == ["a", "b", "c"]
    assert "'a;b'" in multi_system_note(jset) and "(a, b)" in multi_system_note(jset)
    assert multi_system_note(_set()) is None


# -- chaganty: the same counts in every command ----------------------------------------------------------------------

@pytest.fixture(scope="module")
def chaganty_summary(shared_data, tmp_path_factory):
    from meta_eval.task import run

    out = tmp_path_factory.mktemp("units") / "run.json"
    result = run("chaganty", "rouge", level="summary", resamples=30, data_dir=shared_data, no_cache=True,
                 workers=1, output=out, progress=False)
    return result, json.loads(out.read_text())


def test_chaganty_judgments_run_and_publish_print_the_same_counts(shared_data, chaganty_summary):
    from meta_eval.leaderboard.publish import set_results

    text = _cli("judgments", "chaganty", "--data-dir", str(shared_data))
    assert _lines(text, "systems:") == ["systems: 4 (ml, ml+rl, pointer, seq2seq)"]
    assert _lines(text, "global level (overall)") == ["global level (overall): yes: 2085 rows"]
    assert _lines(text, "summary level (overall)") == ["summary level (overall): yes: 492 documents"]
    assert _lines(text, "system level (overall)") == ["system level (overall): yes: 4 systems"]
    assert "'ml;ml+rl'" in _lines(text, "rows naming several systems")[0]

    result, doc = chaganty_summary
    # each row counts the documents its own average is over: 492 but where a variant is constant in some (#37 audit)
    assert max(r["n"] for r in doc["results"]) == 492 and min(r["n"] for r in doc["results"]) >= 480
    assert any("'ml;ml+rl'" in n and "(ml, ml+rl)" in n for n in doc["notes"])
    board = set_results(result.jset, "overall", result.scores, n_resamples=30, pairwise=False, extra=False)
    n_units = {(b["level"], b["statistic"]): b["n_units"] for b in board["levels"]}
    assert n_units[("summary", "spearman")] == 492 and n_units[("system", "spearman")] == 4
    assert n_units[("global", "spearman")] == 2085 and board["n_systems"] == 4


def test_summary_level_on_the_level_cells_is_what_run_prints(shared_data, chaganty_summary):
    from meta_eval.stats.levels import summary_level
    from meta_eval.units import level_cells

    result, doc = chaganty_summary
    ms = next(ms for ms in result.scores if "rouge1-f" in ms.scores)
    x, h, docs, _ = level_cells(result.jset, "overall", ms.scores["rouge1-f"])
    assert len(x) == 2085  # 2,085 rows: one repeated pair averaged (-1), one row in two cells (+1)
    mine = summary_level(x, h, docs, "spearman")
    printed = next(r for r in doc["results"] if r["metric"] == "rouge1-f")
    assert mine.n == printed["n"] == 492
    assert mine.r == pytest.approx(printed["value"], abs=1e-12)


def test_summarization_sets_keep_their_words(chaganty_summary):
    from meta_eval.report.tables import run_table

    result, doc = chaganty_summary
    table = run_table(result)
    assert "n documents" in table.header and "summary-level spearman" in table.title
    assert doc["level_label"] == {"level": "summary", "name": "summary level", "units": "documents",
                                  "grouping": "item"}
    assert doc["baseline"] == "rougeL-f" and doc["baseline_note"] is None


# -- wmt23: MT words, BLEU as the baseline, an empty column says why --------------------------------------------------

def test_wmt23_reads_in_wmt_words_with_bleu_as_its_baseline(shared_data, tmp_path):
    require_metrics("chrf", "bleu")
    text = _cli("judgments", "wmt23", "--data-dir", str(shared_data))  # en-de, the default subset
    assert _lines(text, "summary level") == ["summary level = segment level, group by item (da_sqm): yes: 549 items"]
    assert _lines(text, "global level") == ["global level = segment level, no grouping (da_sqm): yes: 6588 segments"]
    assert judgments.load("wmt23", shared_data, subset="en-de").default_baseline == "bleu"
    out = tmp_path / "run.json"
    shown = _cli("run", "-j", "wmt23", "--subset", "en-de", "-m", "chrf,bleu", "--level", "summary",
                 "--resamples", "30", "--data-dir", str(shared_data), "--no-cache", "--workers", "1",
                 "--output", str(out))
    doc = json.loads(out.read_text())
    assert doc["baseline"] == "bleu" and doc["baseline_note"] is None  # main: no baseline (rougeL-f not run)
    # one item's outputs leave both metrics constant: their averages are over 548 of the 549 items (#37 audit)
    assert {r["n"] for r in doc["results"]} == {548}
    assert doc["level_label"]["name"] == "segment level, group by item" and doc["level_label"]["units"] == "items"
    assert "n items" in shown and "segment level, group by item" in shown and "n documents" not in shown
    assert next(r for r in doc["results"] if r["metric"] == "chrf")["perm_p_vs_baseline"] is not None


def test_an_empty_test_column_says_why(shared_data, tmp_path):
    require_metrics("chrf")
    out = tmp_path / "run.json"
    shown = _cli("run", "-j", "wmt23", "--subset", "en-de", "-m", "chrf", "--data-dir", str(shared_data),
                 "--no-cache", "--workers", "1", "--output", str(out))
    doc = json.loads(out.read_text())
    assert doc["baseline"] is None
    assert "default baseline bleu is not among the chosen metrics (chrf)" in doc["baseline_note"]
    assert "add -m bleu" in doc["empty_columns"]["Williams p"]
    flat = " ".join(shown.split())
    assert "Williams p: empty on every row: no test against a baseline" in flat
    assert "reading:" in flat and "no test against a baseline (the wmt23 set's default baseline bleu" in flat


def test_a_board_block_names_its_level_in_the_sets_words():
    from meta_eval.leaderboard.publish import set_results
    from meta_eval.scoring.runner import MetricScores

    x = np.array([1., 2, 3, 1, 2, 3, 2, 3, 1, 1, 2, 3])
    scored = [MetricScores("m", "m|sig", True, {"m": x, "m2": x[::-1].copy()}, len(x), 0, 0.0)]
    for task, summary, units in (("MT", "segment level, group by item", "items"),
                                 ("summarization", "summary level", "documents")):
        board = set_results(_set(task=task), "q", scored, n_resamples=20, pairwise=False, extra=False)
        block = next(b for b in board["levels"] if b["level"] == "summary" and b["statistic"] == "spearman")
        assert (block["label"], block["units"], block["n_units"]) == (summary, units, 3)  # main: 4, no label
