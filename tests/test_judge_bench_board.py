"""The committed judge-bench board (issue #38 item 5): one number per question with ``meta-eval run``, the raters'
agreement on every set, how to add an LLM judge, and escaping of the names it shows.

Each set of ``leaderboard/judge-bench/results.json`` is run again with ``meta-eval run`` (the CLI, in-process) on the
board's set, property, metrics, options, resamples and seed (``--pairwise`` on a label property, as the board tests
every pair); every value, interval, p-value, rule and the human agreement must be the board's.
"""
from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from meta_eval.cli import app

BOARD = Path(__file__).resolve().parents[1] / "leaderboard" / "judge-bench"
runner = CliRunner()


def _doc() -> dict:
    return json.loads((BOARD / "results.json").read_text(encoding="utf-8"))


def _command_options(command: str) -> tuple[str, list[str]]:
    words = shlex.split(command)
    metrics = words[words.index("-m") + 1]
    options = [a for i, w in enumerate(words[:-1]) if w == "-o" for a in ("-o", words[i + 1])]
    return metrics, options


def _run(args: list[str], tmp_path: Path) -> dict:
    out = tmp_path / "run.json"
    out.unlink(missing_ok=True)
    res = runner.invoke(app, ["run", *args, "--output", str(out), "--cache", str(tmp_path / "c.sqlite")],
                        env={"COLUMNS": "250"})
    assert out.exists(), res.output
    return json.loads(out.read_text())


def test_the_board_covers_every_judge_bench_file_with_its_human_agreement():
    from meta_eval.judgments.judge_bench import SETS

    doc = _doc()
    assert [s["judgments"] for s in doc["sets"]] == [f"judge-bench:{name}" for name in SETS]
    for s in doc["sets"]:
        agreement = s["human_agreement"]
        assert agreement["level"] in ("ordinal", "interval", "nominal") and len(agreement["raters_per_item"]) == 2
        assert {b["level"] for b in s["levels"]} <= {"global"}  # rows without a system: the global level only
        assert s["levels"] or s["not_compared"]  # nothing compared (3 labels, numeric metrics): said why
    kinds = {s.get("kind", "graded") for s in doc["sets"]}
    assert kinds == {"graded", "categorical", "pairwise"}


def test_every_number_of_the_board_is_meta_eval_runs(shared_data, tmp_path):
    doc = _doc()
    meta = doc["meta_evaluation"]
    metrics, options = _command_options(doc["command"])
    common = ["-m", metrics, *options, "--data-dir", str(shared_data), "--resamples", str(meta["n_resamples"]),
              "--seed", str(meta["seed"]), "--correction", meta["correction"]]  # the board's rule (bh)
    checked = 0
    for s in doc["sets"]:
        args = ["-j", s["judgments"], "--human", s["human"], *common]
        if "kind" not in s:  # graded: the global correlations over the rows, no interval, the same ceiling
            run = _run(args, tmp_path)
            assert run["human_agreement"] == s["human_agreement"]
            got = {r["metric"]: r for r in run["results"]}
            for b in s["levels"]:
                for r in b["results"]:
                    assert r["r"] == pytest.approx(got[r["variant"]][b["statistic"]], abs=1e-6), (s["judgments"], r)
                    assert r["ci"] == [None, None] and got[r["variant"]]["ci"] is None
                    checked += 1
                assert b["ceiling"]["value"] is None and run["ceiling"]["value"] is None
            continue
        if not s["levels"]:  # no rule for these labels: run says the same, and exits 2
            res = runner.invoke(app, ["run", *args, "--cache", str(tmp_path / "c.sqlite")], env={"COLUMNS": "250"})
            assert res.exit_code == 2 and s["not_compared"] in " ".join(res.output.split())
            # the keys of every label set (SCHEMA.md), and each metric that could not be compared, by name
            assert s["sorted_by"] is None and s["split"] is None and isinstance(s["notes"], list)
            assert s["skipped"] and all(f"{k['metric']}: {k['reason']}" in s["not_compared"] for k in s["skipped"])
            continue
        run = _run([*args, "--pairwise"], tmp_path)
        assert run["human_agreement"] == s["human_agreement"] and run["split"] == s["split"]
        assert run["statistic"] == s["sorted_by"] == s["levels"][0]["statistic"]
        got = {r["metric"]: r for r in run["results"]}
        for b in s["levels"]:
            items = {got[r["variant"]]["items"] for r in b["results"]}  # a threshold rule's: the held-out half
            assert b["n_units"] == (items.pop() if len(items) == 1 else run["n"]), (s["judgments"], b["n_units"])
            for r in b["results"]:
                mine = got[r["variant"]]
                assert r["r"] == pytest.approx(mine[b["statistic"]]["value"], abs=1e-6), (s["judgments"], r)
                assert r["ci"] == pytest.approx(mine[b["statistic"]]["interval"], abs=1e-6)
                assert (r["rule"], r["items"]) == (mine["rule"], mine["items"])
                checked += 1
            pw = b["pairwise"]
            if pw is not None:
                for i, a in enumerate(pw["variants"]):
                    for j, c in enumerate(pw["variants"]):
                        if i != j:
                            assert pw["p"][i][j] == pytest.approx(run["pvalues"]["p"][f"{a} > {c}"], abs=1e-6)
                            # adjusted only for each better-valued variant against each worse-valued one: the
                            # n(n-1)/2 pairs of every board's family (None the other way round)
                            want = run["pvalues"]["p_adjusted"].get(f"{a} > {c}")
                            assert (want is None) == (i > j) and (pw["p_adjusted"][i][j] is None) == (i > j)
                            if want is not None:
                                assert pw["p_adjusted"][i][j] == pytest.approx(want, abs=1e-6)
                    n = len(pw["variants"])
                    assert pw["family"] == ("Holm" if pw["correction"] == "holm" else pw["family"].split()[0]) + \
                        f" over all {n * (n - 1) // 2} pairs"
        assert [m["variant"] for m in s["metrics"]] == [r["metric"] for r in run["results"]] or \
            {m["variant"] for m in s["metrics"]} == set(got)
    assert checked > 40


def test_the_board_says_how_to_add_an_llm_judge():
    from meta_eval.leaderboard.judge_board import judge_command

    doc = _doc()
    command = judge_command(doc)
    words = shlex.split(command)
    assert words[words.index("-m") + 1].split(",")[-1] == "llm-judge"
    assert "template=set" in words and "--force" in words and "--out" in words
    readme = (BOARD / "README.md").read_text(encoding="utf-8")
    assert "## Adding an LLM judge" in readme and "template=set" in readme
    assert "doc.add_judge" in (BOARD / "index.html").read_text(encoding="utf-8")
    assert judge_command({"command": "meta-eval leaderboard publish -j summeval --out x", "sets": [
        {"judgments": "summeval"}]}) is None  # other boards: no such section


def test_judge_lines_are_escaped_in_the_readme_and_the_page():
    from meta_eval.leaderboard.render import render_html, render_readme

    doc = _doc()
    evil = "<img src=x onerror=alert(1)>|*x*"
    s = next(s for s in doc["sets"] if s.get("kind") == "pairwise")
    s["human"], s["labels"] = evil, [evil, "b"]
    s["metrics"][0]["rule_text"] = evil
    s["not_compared"] = evil
    readme = render_readme(doc)
    assert "\\<img src=x onerror=alert(1)\\>\\|\\*x\\*" in readme  # the judge lines: Markdown-escaped
    assert not re.search(r"(?<![\\\\`])<img", readme)  # every other one inside a code span
    page = render_html(doc)
    data = re.search(r'<script id="data" type="application/json">(.*?)</script>', page, re.S).group(1)
    assert "<img src=x" not in page and "<" not in data
    assert json.loads(data)["sets"][[x["judgments"] for x in doc["sets"]].index(s["judgments"])]["human"] == evil


def test_length_is_a_named_only_baseline():
    from meta_eval.metrics import Example, create
    from meta_eval.metrics.registry import get_class

    assert create("length").score([Example("a  b\nc", ("x",)), Example(" ", ())])["length"].tolist() == [3.0, 0.0]
    assert get_class("length").in_default_run is False


def test_publishing_a_label_set_again_gives_the_boards_block(shared_data, tmp_path, monkeypatch):
    """``leaderboard publish`` itself on one pairwise set (the categorical path of publish, not only run's): its set
    block equals the committed board's, numbers, tests and family included."""
    monkeypatch.setenv("META_EVAL_DATA", str(shared_data))
    doc = _doc()
    (committed,) = [s for s in doc["sets"] if s["judgments"] == "judge-bench:llmbar-natural"]
    metrics, options = _command_options(doc["command"])
    out = tmp_path / "board"
    res = runner.invoke(app, ["leaderboard", "publish", "-j", "judge-bench:llmbar-natural", "-m", metrics, *options,
                              "--correction", doc["meta_evaluation"]["correction"], "--out", str(out), "--cache",
                              str(tmp_path / "c.sqlite")], env={"COLUMNS": "250"})
    assert res.exit_code == 0, res.output
    (fresh,) = json.loads((out / "results.json").read_text(encoding="utf-8"))["sets"]
    assert fresh["levels"] == committed["levels"]
    assert fresh["human_agreement"] == committed["human_agreement"]
