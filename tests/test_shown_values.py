"""One number, one text: a board's README, its page (in a real browser), the index and the blind-spots heatmap show
a value as ``meta-eval run``'s tables do (:func:`meta_eval.report.tables.fmt`).

Audit (session 37): the page's script rounded with JavaScript's ``toFixed``, which takes an exact tie away from zero
(-0.0625 showed -0.063 on frank's page, -0.062 in its README); the README and the index wrote 3 decimals where ``run``
writes scientific below 0.001 (frank's ``ter`` -0.000409: ``-0.000`` against ``-4.1e-04``); the heatmap wrote a
rate of 0.005 as ``0.01`` beside ``5.0e-03`` in the table under it.
"""
from __future__ import annotations

import json

from meta_eval.leaderboard.index import _num
from meta_eval.leaderboard.publish import set_results, write_leaderboard
from meta_eval.leaderboard.render import render_html, render_readme
from meta_eval.report.tables import fmt

from test_leaderboard import _browser, synthetic

VALUES = (-0.0625, -0.000409, 0.1875)  # an exact tie at 3 decimals (binary 1/16), below 0.001, another tie


def _board(tmp_path) -> dict:
    jset, scored = synthetic()
    write_leaderboard(tmp_path, "toy", [set_results(jset, "q", scored, n_resamples=50)], "test", n_resamples=50,
                      seed=0, confidence=0.95, alpha=0.05, correction="holm", primary="spearman")
    doc = json.loads((tmp_path / "results.json").read_text())
    block = doc["sets"][0]["levels"][0]
    block["results"][0]["r"], block["results"][0]["ci"] = VALUES[0], [VALUES[1], VALUES[2]]
    return doc


def test_the_formatter_is_pythons_and_differs_where_the_old_ones_did():
    assert [fmt(v) for v in VALUES] == ["-0.062", "-4.1e-04", "0.188"]  # round half to even; scientific
    assert _num(VALUES[1]) == "-4.1e-04" and _num(None) == "-"


def test_readme_and_page_show_the_same_text_for_a_tie_and_a_small_value(tmp_path):
    doc = _board(tmp_path)
    block = doc["sets"][0]["levels"][0]
    readme = render_readme(doc)
    shown = f"{fmt(VALUES[0])} [{fmt(VALUES[1])}, {fmt(VALUES[2])}]"
    assert shown in readme and "-0.063" not in readme and "-0.000" not in readme
    page = tmp_path / "page.html"
    page.write_text(render_html(doc), encoding="utf-8")
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    driver = _browser()
    try:
        driver.get(page.resolve().as_uri())
        Select(driver.find_element(By.ID, "level")).select_by_value(block["level"])
        Select(driver.find_element(By.ID, "corr")).select_by_value(block.get("statistic") or block["correlation"])
        cells = {tr.find_elements(By.TAG_NAME, "td")[1].text: [td.text for td in tr.find_elements(By.TAG_NAME, "td")]
                 for tr in driver.find_elements(By.CSS_SELECTOR, "#ranking tbody tr")}
        assert cells[block["results"][0]["variant"]][2:5] == [fmt(v) for v in VALUES]
        for r in block["results"][1:]:  # every other row as the README's formatter writes it
            assert cells[r["variant"]][2:5] == [fmt(r["r"]), fmt(r["ci"][0]), fmt(r["ci"][1])]
        errors = [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
        assert errors == [], errors
    finally:
        driver.quit()


def test_the_heatmap_writes_a_rate_as_the_blind_spots_table_does():
    from meta_eval.probe.report import heatmap

    doc = {"judgments": "toy", "subset": "all",
           "perturbations": [{"name": "drop-words", "expect": "drop"}, {"name": "spacing", "expect": "same"}],
           "cells": [{"variant": "m", "perturbation": "drop-words", "rate": 0.005},
                     {"variant": "m", "perturbation": "spacing", "rate": 0.25}]}
    fig = heatmap(doc)
    texts = {t.get_text() for t in fig.axes[0].texts}
    assert texts == {fmt(0.005, 2), fmt(0.25, 2)} == {"5.0e-03", "0.25"}
