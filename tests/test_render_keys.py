"""The board pages render every key a block carries about its numbers (issue 35): the level's units (``units``,
``n_units``, ``label``), what the intervals are (``interval``, :func:`meta_eval.stats.interval_label`) and the
pairwise test's multiple-comparison family (``pairwise.family``), escaped for Markdown and HTML."""
from __future__ import annotations

import copy
import json
from pathlib import Path

from meta_eval.leaderboard.render import block_notes, md_text, render_html, render_readme
from meta_eval.stats import interval_label

BOARD = Path(__file__).resolve().parents[1] / "leaderboard" / "summeval" / "results.json"
EVIL = "<script>alert(1)</script> a|b *c*"


def _doc() -> dict:
    """A committed board (read only), its primary blocks given the keys of today's publish, one of them hostile."""
    doc = copy.deepcopy(json.loads(BOARD.read_text(encoding="utf-8")))
    primary = doc["meta_evaluation"]["primary"]
    for b in doc["sets"][0]["levels"]:
        b["label"] = {"global": "global level", "summary": "summary level", "system": "system level"}[b["level"]]
        b["units"] = {"global": "rows", "summary": "documents", "system": "systems"}[b["level"]]
        b["interval"] = interval_label({"method": b["ci_method"], "n_resamples": b["n_resamples"],
                                        "confidence": b["confidence"], "seed": b["seed"],
                                        **({"units": "rows"} if b["level"] == "global" else {})})
        if b.get("pairwise"):
            n = len(b["pairwise"]["variants"])
            b["pairwise"]["family"] = f"Holm over all {n * (n - 1) // 2} pairs"
    summary = next(b for b in doc["sets"][0]["levels"] if b["level"] == "summary" and b.get("correlation") == primary)
    summary["units"] = EVIL
    return doc


def test_readme_names_units_interval_and_family(tmp_path):
    doc = _doc()
    text = render_readme(doc)
    (tmp_path / "README.md").write_text(text, encoding="utf-8")
    primary = doc["meta_evaluation"]["primary"]
    blocks = {(b["level"], b["statistic"]): b for b in doc["sets"][0]["levels"]}
    glob = blocks["global", primary]
    assert f"### global level (n = {glob['n_units']} rows)" in text
    assert md_text(glob["interval"]) in text and "each row counted once per draw of its document" in text
    assert f"ranks ({primary}): {glob['pairwise']['test']} test, {glob['pairwise']['family']}, alpha" in text
    system = blocks["system", primary]
    assert f"system level: {system['n_units']} systems; intervals: " in text
    # the pairwise accuracy block (an extra table) carries its family too
    acc = blocks["system", "accuracy"]
    assert md_text(f"ranks (accuracy): {acc['pairwise']['test']} test, {acc['pairwise']['family']}") in text
    # a hostile value is literal text: no tag, no table cell break, no emphasis
    assert "<script>" not in text and "\\<script\\>alert(1)\\</script\\> a\\|b \\*c\\*" in text


def test_html_page_shows_the_keys_and_escapes_them(tmp_path):
    doc = _doc()
    page = render_html(doc)
    (tmp_path / "index.html").write_text(page, encoding="utf-8")
    # the data cannot close the page's script: no "<" in the embedded JSON
    assert "</script> a|b" not in page and "\\u003c/script\\u003e a|b" in page
    data = json.loads(page.split('<script id="data" type="application/json">', 1)[1].split("</script>", 1)[0])
    assert data["sets"][0]["levels"][0]["interval"] == doc["sets"][0]["levels"][0]["interval"]
    # the page's script writes units, interval and family with textContent (no markup is parsed)
    for key in ("block.units", "block.interval", "pw.family", "block.label", "block.n_units"):
        assert key in page, key
    assert '$("about").textContent' in page


def test_block_notes_of_an_older_board_fall_back():
    old = {"level": "summary", "n_units": 12, "ci_method": "boot-both", "pairwise": {"test": "perm-both",
                                                                                      "correction": "holm",
                                                                                      "alpha": 0.05}}
    assert block_notes(old) == ["summary level: 12 documents", "ranks: perm-both test, holm correction, alpha 0.05"]


def test_text_from_the_data_is_never_searched_for_the_pages_placeholders():
    """A set named ``__DATA__`` whose blind-spots figure went into ``<img src="...">`` had the page's JSON put in
    its place (the placeholders were filled after the data's HTML was in), breaking out of the attribute into an
    ``onerror`` handler; a title holding ``__TITLE__`` or ``__DATA__`` the same."""
    from html.parser import HTMLParser

    doc = _doc()
    doc["title"] = "T __DATA__ __VERSION__ q onerror=alert(3) z"
    blind = copy.deepcopy(json.loads((BOARD.parent.parent / "chaganty" / "blindspots.json").read_text("utf-8")))
    blind["sets"][0]["judgments"] = "__DATA__"
    blind["sets"][0]["figure"] = "figures/blindspots-__DATA__.png"
    page = render_html(doc, blindspots=blind)
    attributes = []

    class Attrs(HTMLParser):
        def handle_starttag(self, tag, attrs):
            attributes.extend(name for name, _ in attrs)

    Attrs().feed(page)
    assert "onerror" not in attributes
    assert 'src="figures/blindspots-__DATA__.png"' in page.replace("%5F", "_")
    assert "<title>meta-eval leaderboard: T __DATA__ __VERSION__ q onerror=alert(3) z</title>" in page
    data = json.loads(page.split('<script id="data" type="application/json">', 1)[1].split("</script>", 1)[0])
    assert data["title"] == doc["title"] and page.count('<script id="data"') == 1
