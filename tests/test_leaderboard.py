"""Leaderboards: the statistics block of a set, the rendered README and page, the page in a real browser."""
from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from typer.testing import CliRunner

from cli import app
from judgments.base import Judgment, JudgmentSet
from leaderboard.publish import set_results, write_leaderboard
from leaderboard.render import render_html
from meta_eval.runner import MetricScores


def synthetic(n_docs=12, n_systems=5, seed=0):
    """Humans = system quality + noise; metric 'good' tracks them closely, 'bad' loosely, 'ppl' is lower-better."""
    rng = np.random.default_rng(seed)
    quality = np.linspace(0, 1, n_systems)
    rows, good, bad, ppl = [], [], [], []
    for d in range(n_docs):
        for s in range(n_systems):
            h = quality[s] + rng.normal(0, 0.2)
            rows.append(Judgment(f"d{d}:s{s}", f"d{d}", f"s{s}", "x", ("y",), scores={"q": h}))
            good.append(h + rng.normal(0, 0.05))
            bad.append(h + rng.normal(0, 1.0))
            ppl.append(-h + rng.normal(0, 0.1))
    jset = JudgmentSet("toy", rows, ("q",), "q")
    scored = [MetricScores("good", "good|sig", True, {"good": np.array(good)}, 0, 0, 0.0),
              MetricScores("bad", "bad|sig", True, {"bad": np.array(bad)}, 0, 0, 0.0),
              MetricScores("ppl", "ppl|sig", False, {"ppl": np.array(ppl)}, 0, 0, 0.0)]
    return jset, scored


def test_set_results_levels_intervals_ranks():
    jset, scored = synthetic()
    block = set_results(jset, "q", scored, n_resamples=200, seed=3)
    assert [(b["level"], b["correlation"]) for b in block["levels"]][:3] == [
        ("summary", "spearman"), ("summary", "pearson"), ("summary", "kendall")]
    glob = next(b for b in block["levels"] if b["level"] == "global" and b["correlation"] == "spearman")
    assert glob["n_units"] == 60
    by = {r["variant"]: r for r in glob["results"]}
    # the lower-is-better metric was negated: it correlates positively once oriented
    assert by["ppl"]["r"] > 0.8 and by["good"]["r"] > by["bad"]["r"]
    for r in glob["results"]:
        assert r["ci"][0] <= r["r"] <= r["ci"][1]
    assert by["good"]["rank"] == 1 and by["bad"]["rank"] > 1
    assert set(glob["pairwise"]["variants"]) == {"good", "bad", "ppl"}
    # same seed, same numbers
    assert set_results(jset, "q", scored, n_resamples=200, seed=3) == block
    assert set_results(jset, "q", scored, n_resamples=200, seed=4) != block


def test_written_files_are_self_contained(tmp_path):
    jset, scored = synthetic()
    doc = write_leaderboard(tmp_path, "toy", [set_results(jset, "q", scored, n_resamples=100)], "test",
                            n_resamples=100, seed=0, confidence=0.95, alpha=0.05, correction="holm",
                            primary="spearman")
    assert json.loads((tmp_path / "results.json").read_text()) == json.loads(json.dumps(doc))
    readme = (tmp_path / "README.md").read_text()
    assert "| rank | metric | spearman | pearson | kendall |" in readme and "good" in readme
    page = (tmp_path / "index.html").read_text()
    assert "<script src" not in page and "<link" not in page and "@import" not in page
    assert "</script>" not in page.split('<script id="data" type="application/json">')[1].split("</script>")[0]
    assert render_html(doc) == page


def _browser():
    pytest.importorskip("selenium", reason="pip install selenium for the browser test")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver_path = shutil.which("chromedriver")
    if not chromium or not driver_path:
        pytest.skip("Debian's chromium and chromium-driver are not installed (apt-get install chromium chromium-driver)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--window-size=1200,1600"):
        opts.add_argument(flag)
    return webdriver.Chrome(service=Service(driver_path), options=opts)


def test_page_renders_sorts_and_screenshots_in_chromium(tmp_path):
    jset, scored = synthetic()
    write_leaderboard(tmp_path, "toy", [set_results(jset, "q", scored, n_resamples=100)], "test", n_resamples=100,
                      seed=0, confidence=0.95, alpha=0.05, correction="holm", primary="spearman")
    from selenium.webdriver.common.by import By

    driver = _browser()
    try:
        driver.get((tmp_path / "index.html").resolve().as_uri())
        rows = lambda: [tr.find_elements(By.TAG_NAME, "td")[1].text
                        for tr in driver.find_elements(By.CSS_SELECTOR, "#ranking tbody tr")]
        assert rows()[0] == "good" and len(rows()) == 3          # sorted by r, best first
        driver.find_element(By.CSS_SELECTOR, "#ranking th[data-key='variant']").click()
        assert rows() == ["bad", "good", "ppl"]                   # sorted by name
        driver.find_element(By.CSS_SELECTOR, "#ranking th[data-key='r']").click()
        assert rows()[0] == "good"
        driver.find_element(By.CSS_SELECTOR, "#ranking th[data-key='r']").click()
        assert rows()[-1] == "good"                               # the same header again reverses the order
        assert len(driver.find_elements(By.CSS_SELECTOR, "#chart svg rect")) == 3
        assert len(driver.find_elements(By.CSS_SELECTOR, "#heat td")) == 9
        shot = tmp_path / "page.png"
        driver.save_screenshot(str(shot))
        assert shot.stat().st_size > 10_000
        shutil.copy(shot, "/tmp/meta-eval-leaderboard-test.png")
        errors = [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
        assert errors == [], errors
    finally:
        driver.quit()


def test_publish_command_on_real_data(shared_data, tmp_path):
    out = tmp_path / "lb"
    res = CliRunner().invoke(app, ["leaderboard", "publish", "-j", "chaganty", "-m", "rouge,sms", "--out", str(out),
                                   "--data-dir", str(shared_data), "--cache", str(tmp_path / "c.sqlite"),
                                   "--resamples", "50"])
    assert res.exit_code == 0, res.output
    doc = json.loads((out / "results.json").read_text())
    assert doc["schema"] == "meta-eval-leaderboard/1" and doc["sets"][0]["judgments"] == "chaganty"
    glob = next(b for b in doc["sets"][0]["levels"] if b["level"] == "global" and b["correlation"] == "spearman")
    assert {r["variant"] for r in glob["results"]} == {"rouge1-f", "rouge2-f", "rougeL-f", "rougeLsum-f", "sms"}
    assert "n:50" in doc["meta_evaluation"]["signature"]
