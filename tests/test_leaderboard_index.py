"""The leaderboards' index (leaderboard/README.md, leaderboard/index.html) and publish's refusal to overwrite."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import require_metrics
from meta_eval.cli import app
from meta_eval.judgments.base import Judgment, JudgmentSet
from meta_eval.leaderboard.index import MARKER, collect, render_index_html, render_index_readme, write_index
from meta_eval.leaderboard.publish import check_out_dir, set_results, write_leaderboard
from meta_eval.scoring.runner import MetricScores
from test_leaderboard import _browser, synthetic

ROOT = Path(__file__).resolve().parents[1] / "leaderboard"
EVIL = '<img src=x onerror="document.title=1">'


def _with_judges(jset, task):
    """The synthetic set with two annotators per row (so it has a ceiling) and a task."""
    rows = [Judgment(r.id, r.doc_id, r.system, r.candidate, r.references, scores=r.scores,
                     judges={"q": (r.scores["q"] - 0.1 * (i % 3), r.scores["q"] + 0.1 * (i % 3))})
            for i, r in enumerate(jset.rows)]
    return JudgmentSet("toy", rows, ("q",), "q", task=task)


def _board(folder, task="summarization", evil=False):
    jset, scored = synthetic(n_docs=8, n_systems=5)
    jset = _with_judges(jset, task)
    if evil:
        scored[0] = MetricScores("good", "good|sig", True, {EVIL: scored[0].scores["good"]}, 0, 0, 0.0)
    return write_leaderboard(folder, folder.name, [set_results(jset, "q", scored, n_resamples=50)], "test",
                             n_resamples=50, seed=0, confidence=0.95, alpha=0.05, correction="holm",
                             primary="spearman")


def test_collect_picks_the_headline_best_metric_and_the_gap_to_the_ceiling(tmp_path):
    doc = _board(tmp_path / "toy")
    [entry] = collect(tmp_path)
    block = next(b for b in doc["sets"][0]["levels"] if (b["level"], b["statistic"]) == ("summary", "spearman"))
    best = max(block["results"], key=lambda r: r["r"])
    h = entry["headline"]
    assert (h["level"], h["statistic"]) == ("summary", "spearman")  # the summarization headline
    assert h["best"] == best["variant"] == "good" and h["value"] == best["r"]
    assert h["ceiling"] == block["ceiling"]["value"] is not None
    assert h["gap"] == pytest.approx(block["ceiling"]["value"] - best["r"], abs=1e-6)
    assert entry["task"] == "summarization" and entry["n_metrics"] == 3
    assert len(entry["blocks"]) == len(doc["sets"][0]["levels"])


def test_headline_follows_the_task(tmp_path):
    _board(tmp_path / "mt", task="MT")
    _board(tmp_path / "fact", task="factuality")
    by_board = {e["board"]: e["headline"] for e in collect(tmp_path)}
    assert (by_board["mt"]["level"], by_board["mt"]["statistic"]) == ("system", "spa")
    assert (by_board["fact"]["level"], by_board["fact"]["statistic"]) == ("global", "spearman")


def test_a_bad_results_json_is_named(tmp_path):
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "results.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ValueError, match=r"x/results\.json"):
        collect(tmp_path)


def test_write_index_never_replaces_a_file_it_did_not_write(tmp_path):
    _board(tmp_path / "toy")
    (tmp_path / "README.md").write_text("my own notes\n", encoding="utf-8")
    with pytest.raises(ValueError, match="not written by"):
        write_index(tmp_path)
    assert (tmp_path / "README.md").read_text() == "my own notes\n"
    assert not (tmp_path / "index.html").exists()
    write_index(tmp_path, force=True)
    assert MARKER in (tmp_path / "README.md").read_text()
    write_index(tmp_path)  # its own files: replaced without --force
    assert not list(tmp_path.glob(".*.tmp"))


def test_committed_index_matches_the_committed_boards():
    """leaderboard/README.md and index.html are exactly what `meta-eval leaderboard index` makes of the boards."""
    entries = collect(ROOT)
    assert {e["judgments"] for e in entries} >= {"chaganty", "essays", "summeval", "realsumm", "wmt21-mqm-ted",
                                                  "frank", "qags"}
    assert (ROOT / "README.md").read_text(encoding="utf-8") == render_index_readme(entries)
    page = (ROOT / "index.html").read_text(encoding="utf-8")
    found = re.search(r"<p class=small>meta-eval (\S+) &middot;", page)
    assert found, "the index page names the meta-eval version that wrote it"
    version = found.group(1)
    assert page == render_index_html(entries, version)
    for e in entries:  # every link leads to a board that exists
        assert (ROOT / e["board"] / "index.html").exists() and (ROOT / e["board"] / "README.md").exists()


def test_index_page_in_chromium_links_boards_and_shows_hostile_names_as_text(tmp_path):
    from selenium.webdriver.common.by import By

    _board(tmp_path / "toy", evil=True)
    _board(tmp_path / "mt", task="MT")
    write_index(tmp_path, "test")
    driver = _browser()
    try:
        driver.get((tmp_path / "index.html").resolve().as_uri())
        rows = driver.find_elements(By.CSS_SELECTOR, "#index tr")[1:]
        assert [r.find_elements(By.TAG_NAME, "td")[0].text for r in rows] == ["toy", "toy"]
        toy = next(r for r in rows if "summary spearman" in r.text)
        assert EVIL in toy.find_elements(By.TAG_NAME, "td")[7].text  # the hostile name is the best, shown as text
        assert not driver.find_elements(By.CSS_SELECTOR, "img") and driver.title == "meta-eval leaderboards"
        links = [a.get_attribute("href") for a in driver.find_elements(By.CSS_SELECTOR, "#index a")]
        for href in links:
            driver.get(href)
            assert driver.title.startswith("meta-eval leaderboard: ")
        errors = [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
        assert errors == [], errors
    finally:
        driver.quit()


def test_publish_refuses_a_folder_it_did_not_write(tmp_path):
    (tmp_path / "README.md").write_text("a repository's readme\n", encoding="utf-8")
    with pytest.raises(ValueError, match="not written by meta-eval"):
        check_out_dir(tmp_path)
    board = tmp_path / "board"
    _board(board)
    with pytest.raises(ValueError, match="already holds a leaderboard"):
        check_out_dir(board)
    check_out_dir(board, force=True)
    check_out_dir(tmp_path / "new")
    with pytest.raises(ValueError, match="is a file"):
        check_out_dir(tmp_path / "README.md", force=True)


def test_publish_command_checks_out_before_scoring(tmp_path, shared_data):
    (tmp_path / "README.md").write_text("keep me\n", encoding="utf-8")
    cache = tmp_path / "c.sqlite"
    res = CliRunner().invoke(app, ["leaderboard", "publish", "-j", "chaganty", "-m", "rouge", "--out", str(tmp_path),
                                   "--data-dir", str(shared_data), "--cache", str(cache)])
    assert res.exit_code != 0 and "--force" in res.output and "Traceback" not in res.output
    assert (tmp_path / "README.md").read_text() == "keep me\n" and not cache.exists()


def test_publish_takes_a_subset_per_set(tmp_path, shared_data):
    require_metrics("chrf")
    out = tmp_path / "lb"
    res = CliRunner().invoke(app, ["leaderboard", "publish", "-j", "qags:cnndm,qags:xsum", "-m", "chrf", "-o",
                                   "ref=source", "--out", str(out), "--data-dir", str(shared_data), "--cache",
                                   str(tmp_path / "c.sqlite"), "--resamples", "20"])
    assert res.exit_code == 0, res.output
    doc = json.loads((out / "results.json").read_text())
    assert [(s["judgments"], s["subset"], s["task"]) for s in doc["sets"]] == [("qags", "cnndm", "factuality"),
                                                                              ("qags", "xsum", "factuality")]


def test_a_users_set_without_judges_has_one_true_reason_for_no_ceiling_on_its_board_and_in_the_index(tmp_path):
    # the board said "the public data give only the mean of the annotators' scores" (a built-in set's reason) of a
    # user's file, and the index gave the computed reason: both now give the computed one, true of any data
    from conftest import small_set
    from meta_eval.leaderboard.publish import publish
    from meta_eval.report.escape import html, markdown

    data = small_set(tmp_path / "mine.jsonl")
    doc = publish(str(data), tmp_path / "root" / "board", "rouge", resamples=20, no_cache=True, progress=False)
    notes = {b["ceiling"]["note"] for b in doc["sets"][0]["levels"]}
    assert notes == {"mine has no per-annotator values for dimension 'overall' (every row's judges['overall'] is "
                     "empty: the data or its loader keeps only the aggregated score), so there is no human ceiling"}
    (note,) = notes
    write_index(tmp_path / "root", "test")
    board, index = tmp_path / "root" / "board", tmp_path / "root"
    assert f"No human ceiling: {markdown(note)}." in (board / "README.md").read_text()
    assert f"- mine: {markdown(note)}" in (index / "README.md").read_text()
    assert json.dumps(note)[1:-1] in (board / "index.html").read_text()  # the page's reader_note
    assert html(note, quote=True) in (index / "index.html").read_text()  # the index's hover text
    for page in (board / "README.md", board / "index.html", index / "README.md", index / "index.html"):
        assert "public data" not in page.read_text(), page
