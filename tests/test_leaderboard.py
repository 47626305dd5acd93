"""Leaderboards: the statistics block of a set, the rendered README and page, the page in a real browser."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from meta_eval.cli import app
from meta_eval.judgments.base import Judgment, JudgmentSet
from meta_eval.leaderboard.publish import set_results, write_leaderboard
from meta_eval.leaderboard.render import render_html, render_readme
from meta_eval.scoring.runner import MetricScores
from meta_eval.evaluate import ceiling as set_ceiling


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
    assert [(b["level"], b["statistic"]) for b in block["levels"]] == [
        ("summary", "spearman"), ("summary", "pearson"), ("summary", "kendall"), ("system", "spearman"),
        ("system", "pearson"), ("system", "kendall"), ("global", "spearman"), ("global", "pearson"),
        ("global", "kendall"), ("system", "accuracy"), ("system", "spa"), ("summary", "acc-t")]
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


def test_wmt_statistics_blocks_and_the_ceiling():
    """System-level accuracy and SPA, acc-t grouped by item: values equal the statistics modules', ranks follow their
    own tests; with per-annotator values every block carries the ceiling of meta_eval.stats.ceiling."""
    from meta_eval import stats as statistics
    from meta_eval.matrix import judgment_matrices
    from meta_eval.stats.pairwise import pairwise_accuracy, tie_calibration
    from meta_eval.stats.spa import soft_pairwise_accuracy

    jset, scored = synthetic(n_docs=10, n_systems=6)
    rng = np.random.default_rng(1)
    rows = []
    for r in jset.rows:  # two annotators per row around the human score; the score is their mean
        a = r.scores["q"] + rng.normal(0, 0.3)
        b = 2 * r.scores["q"] - a
        rows.append(Judgment(r.id, r.doc_id, r.system, r.candidate, r.references, scores={"q": (a + b) / 2},
                             judges={"q": (a, b)}))
    jset = JudgmentSet("toy", rows, ("q",), "q")
    block = set_results(jset, "q", scored, n_resamples=100, seed=0)
    by = {(b["level"], b["statistic"]): b for b in block["levels"]}
    Z, (good,) = judgment_matrices(jset, "q", [scored[0].scores["good"]])
    got = {r["variant"]: r for r in by[("system", "accuracy")]["results"]}
    assert got["good"]["r"] == pytest.approx(pairwise_accuracy(good, Z, "system"), abs=1e-6)
    got = {r["variant"]: r for r in by[("summary", "acc-t")]["results"]}
    value, eps = tie_calibration(good, Z, "summary")
    assert got["good"]["r"] == pytest.approx(value, abs=1e-6) and got["good"]["epsilon"] == pytest.approx(eps)
    got = {r["variant"]: r for r in by[("system", "spa")]["results"]}
    assert got["good"]["r"] == pytest.approx(soft_pairwise_accuracy(good, Z, 1000, 0).spa, abs=1e-6)
    assert by[("system", "spa")]["n_permutations"] == 1000 and by[("system", "spa")]["ci_method"] == "boot-documents"
    assert by[("system", "spa")]["pairwise"]["test"] == "spa-perm-both"
    for b in block["levels"]:
        assert b["ceiling"]["annotators"] == 2
        direct = set_ceiling(jset, "q", b["statistic"], b["level"], n_resamples=100, seed=0)
        assert b["ceiling"]["value"] == pytest.approx(direct.value, abs=1e-6)
        assert b["ceiling"]["ci"] == pytest.approx([direct.lower, direct.upper], abs=1e-6)
        if b["statistic"] in ("spearman", "accuracy", "spa", "acc-t"):  # the primary correlation and the others
            assert b["pairwise"] is not None and {r["rank"] for r in b["results"]} >= {1}
    readme = render_readme({"name": "toy", "command": "test", "meta_eval_version": "0", "sets": [block],
                            "meta_evaluation": {"signature": "s", "confidence": 0.95, "ci_method": "boot-both",
                                                "n_resamples": 100, "seed": 0, "test": "t", "correction": "holm",
                                                "alpha": 0.05, "primary": "spearman"}})
    assert "### system level: spa (Thompson et al. (2024)" in readme and "*human ceiling*" in readme
    assert "| rank | metric | acc-t | epsilon |" in readme


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
    figures = {f"figures/{p.name}" for p in (tmp_path / "figures").glob("*.svg")}  # local files, no network
    assert render_html(doc, figures) == page


def _browser():
    __import__("conftest").require_module("selenium", "pip install 'meta-eval[test]' (selenium drives the browser)")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver_path = shutil.which("chromedriver")
    if not chromium or not driver_path:
        __import__("conftest").require(False, "Debian's chromium and chromium-driver", "apt-get install chromium chromium-driver")
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


def test_page_offers_each_subset_of_one_set_and_shows_the_one_chosen_in_chromium(tmp_path):
    """Two sections of one set (qags's cnndm and xsum): the set selector lists both, as "set (subset)", and choosing
    the second shows the second (the page looked a set up by its name alone and always showed the first)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    blocks = []
    for subset, seed in (("a", 0), ("b", 5)):
        jset, scored = synthetic(seed=seed)
        jset = JudgmentSet("toy", jset.rows, ("q",), "q", subset=subset)
        blocks.append(set_results(jset, "q", scored, n_resamples=50, extra=False))
    write_leaderboard(tmp_path, "toy", blocks, "test", n_resamples=50, seed=0, confidence=0.95, alpha=0.05,
                      correction="holm", primary="spearman")
    driver = _browser()
    try:
        driver.get((tmp_path / "index.html").resolve().as_uri())
        chooser = Select(driver.find_element(By.ID, "set"))
        assert [o.text for o in chooser.options] == ["toy (a)", "toy (b)"]
        for subset, block in (("b", blocks[1]), ("a", blocks[0])):
            chooser.select_by_visible_text(f"toy ({subset})")
            assert driver.find_element(By.ID, "setinfo").text.startswith(f"toy (subset {subset}):")
            shown = {tr.find_elements(By.TAG_NAME, "td")[1].text: tr.find_elements(By.TAG_NAME, "td")[2].text
                     for tr in driver.find_elements(By.CSS_SELECTOR, "#ranking tbody tr")}
            first = block["levels"][0]  # summary spearman, the page's first level and statistic
            assert shown == {r["variant"]: f"{r['r']:.3f}" for r in first["results"]}
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
    assert doc["schema"] == "meta-eval-leaderboard/2" and doc["sets"][0]["judgments"] == "chaganty"
    glob = next(b for b in doc["sets"][0]["levels"] if b["level"] == "global" and b["correlation"] == "spearman")
    assert {r["variant"] for r in glob["results"]} == {"rouge1-f", "rouge2-f", "rougeL-f", "rougeLsum-f", "sms"}
    assert "n:50" in doc["meta_evaluation"]["signature"]


def test_page_shows_the_wmt_statistics_the_ceiling_and_escapes_names_in_chromium(tmp_path):
    """The statistic selector lists the pairwise statistics and SPA, the ceiling is a row and a dashed line, and a
    variant named like an HTML tag is shown as text, never run."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    jset, scored = synthetic(n_docs=8, n_systems=5)
    rows = [Judgment(r.id, r.doc_id, r.system, r.candidate, r.references, scores=r.scores,
                     judges={"q": (r.scores["q"] - 0.1 * (i % 3), r.scores["q"] + 0.1 * (i % 3))})
            for i, r in enumerate(jset.rows)]
    jset = JudgmentSet("toy", rows, ("q",), "q")
    evil = '<img src=x onerror="document.title=1">'
    scored[1] = MetricScores("bad", "bad|sig", True, {evil: scored[1].scores["bad"]}, 0, 0, 0.0)
    write_leaderboard(tmp_path, "toy", [set_results(jset, "q", scored, n_resamples=50)], "test", n_resamples=50,
                      seed=0, confidence=0.95, alpha=0.05, correction="holm", primary="spearman")
    driver = _browser()
    try:
        driver.get((tmp_path / "index.html").resolve().as_uri())
        Select(driver.find_element(By.ID, "level")).select_by_value("system")
        stats = [o.get_attribute("value") for o in Select(driver.find_element(By.ID, "corr")).options]
        assert stats == ["spearman", "pearson", "kendall", "accuracy", "spa"]
        Select(driver.find_element(By.ID, "corr")).select_by_value("spa")
        about = driver.find_element(By.ID, "about").text
        assert "soft pairwise accuracy" in about and "1000 permutations" in about and "human ceiling: " in about
        header = [th.text for th in driver.find_elements(By.CSS_SELECTOR, "#ranking th")]
        assert header[2] == "spa"
        names = [tr.find_elements(By.TAG_NAME, "td")[1].text
                 for tr in driver.find_elements(By.CSS_SELECTOR, "#ranking tbody tr")]
        assert evil in names and names[-1] == "human ceiling"
        assert driver.find_elements(By.CSS_SELECTOR, "#chart line.ceiling")
        assert not driver.find_elements(By.CSS_SELECTOR, "#ranking img, #chart img, #heat img")
        assert driver.title != "1"
        Select(driver.find_element(By.ID, "level")).select_by_value("summary")
        Select(driver.find_element(By.ID, "corr")).select_by_value("acc-t")
        assert "epsilon" in [th.text for th in driver.find_elements(By.CSS_SELECTOR, "#ranking th")]
        errors = [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
        assert errors == [], errors
    finally:
        driver.quit()


def test_a_published_page_shows_title_set_options_and_a_readers_ceiling_note_in_chromium(shared_data, tmp_path):
    """Issue 26: --title heads the page; the set's subset, human dimension and size are shown; each metric's options
    are readable (chrF scored against the source on qags says ref=source); a missing ceiling says why in a reader's
    words."""
    from meta_eval import publish
    from meta_eval.leaderboard.render import split_signature

    out = tmp_path / "board"
    doc = publish(["qags:cnndm", "summeval"], out, ["chrf", "rouge"], options={"ref": "source"}, resamples=20,
                  data_dir=shared_data, cache=tmp_path / "c.sqlite", title="Factuality and SummEval", progress=False)
    assert doc["title"] == "Factuality and SummEval"
    chrf = next(m["signature"] for m in doc["sets"][0]["metrics"] if m["metric"] == "chrf")
    assert ("ref", "source") in split_signature(chrf)[1]
    readme = (out / "README.md").read_text()
    assert readme.startswith("# Leaderboard: Factuality and SummEval")
    assert "ref=source" in readme and "sacrebleu 2.6.0" in readme
    assert "Data: W4ngatang/qags@47798e9" in readme and "Fabbri et al., TACL 2021" in readme
    assert "the public data give only the mean of the annotators' scores" in readme  # summeval
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    driver = _browser()
    try:
        driver.get((out / "index.html").resolve().as_uri())
        assert driver.title == "meta-eval leaderboard: Factuality and SummEval"
        info = driver.find_element(By.ID, "setinfo").text
        assert "qags (subset cnndm): human 'factuality'; 235 rows, 235 documents, 1 system" in info
        assert "Wang, Cho & Lewis, ACL 2020" in info  # the citation
        options = {tr.find_elements(By.TAG_NAME, "td")[0].text: tr.find_elements(By.TAG_NAME, "td")[1].text
                   for tr in driver.find_elements(By.CSS_SELECTOR, "#metrics tr")[1:]}
        assert "ref=source" in options["chrf"] and "code=" in options["chrf"]
        Select(driver.find_element(By.ID, "set")).select_by_visible_text("summeval (all)")
        Select(driver.find_element(By.ID, "level")).select_by_value("system")
        assert "cannot be measured here" in driver.find_element(By.ID, "about").text
        figure = driver.find_element(By.CSS_SELECTOR, "#figure img")  # the board's own figure for this level
        assert figure.get_attribute("src").endswith("figures/summeval-all-system-spearman.svg")
        assert driver.execute_script("return arguments[0].naturalWidth", figure) > 100  # it loaded
        errors = [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
        assert errors == [], errors
    finally:
        driver.quit()


def test_pages_are_a_pure_function_of_results_json_and_carry_the_figures(tmp_path):
    """`leaderboard render` rewrites README.md, index.html and the figures from results.json alone: the same bytes
    as publishing wrote (figures: deterministic SVG), and each level's figure shows every ranked variant."""
    __import__("conftest").require_module("matplotlib", "pip install 'meta-eval[plot]'")
    from meta_eval.leaderboard.publish import render_board

    jset, scored = synthetic()
    write_leaderboard(tmp_path / "a", "toy", [set_results(jset, "q", scored, n_resamples=100)], "test",
                      n_resamples=100, seed=0, confidence=0.95, alpha=0.05, correction="holm", primary="spearman")
    written = {p.relative_to(tmp_path / "a"): p.read_bytes() for p in (tmp_path / "a").rglob("*") if p.is_file()}
    figures = sorted(str(p) for p in written if p.parts[0] == "figures")
    assert figures and all(f.endswith("-spearman.svg") for f in figures)
    readme = written[Path("README.md")].decode()
    assert all(f"]({f})" in readme for f in figures)
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    for p in (tmp_path / "b").rglob("*"):
        if p.is_file() and p.name != "results.json":  # a stale figure is still meta-eval's (its creator): a
            p.write_bytes(p.read_bytes().replace(b"</svg>", b"<!-- stale --></svg>") if p.suffix == ".svg"
                          else b"stale")  # figure meta-eval did not write is never replaced by render
    render_board(tmp_path / "b")
    again = {p.relative_to(tmp_path / "b"): p.read_bytes() for p in (tmp_path / "b").rglob("*") if p.is_file()}
    assert again == written
    svg = written[Path(figures[0])].decode()
    for variant in ("good", "bad", "ppl"):
        assert f">{variant}  [" in svg or f">{variant}<" in svg
    res = CliRunner().invoke(app, ["leaderboard", "render", str(tmp_path / "b")])
    assert res.exit_code == 0 and "rendered" in res.output
    bad = CliRunner().invoke(app, ["leaderboard", "render", str(tmp_path)])
    assert bad.exit_code == 2 and "not a readable leaderboard" in bad.output
