"""No statistic on a grouping that cannot carry it (issue 24, item 7).

- qags ``all`` pools QAGS-C and QAGS-X, and its ``system`` field is the dataset (one system per dataset): every level
  refuses it with that reason, and the default subset is the per-dataset ``cnndm``, as the QAGS paper reports them
  (Wang et al. 2020, Table 2: QAGS-C and QAGS-X separately).
- A level with fewer units than ``meta_eval.evaluate.MIN_UNITS`` gets a warning beside its number, in the printed
  table, the run's JSON (``level_warning``) and a published board's level blocks (``warning``). chaganty's ``sms``
  subset has 4 systems (Chaganty et al. 2018 judged 4 systems' summaries).
"""
from __future__ import annotations

import json
import math

import pytest
from typer.testing import CliRunner

from meta_eval import judgments
from meta_eval.cli import app
from meta_eval.evaluate import MIN_UNITS, LevelError, check_level, level_warning, units_warning

runner = CliRunner()


def test_units_warning_thresholds_and_the_numbers_it_states():
    assert units_warning("system", MIN_UNITS["system"]) is None
    assert units_warning("summary", 10) is None and units_warning("global", 10) is None
    four = units_warning("system", 4)
    assert four.startswith("only 4 systems (fewer than 5)") and f"1/{math.factorial(4)}" in four and "1/24" in four
    assert units_warning("summary", 9).startswith("only 9 documents (fewer than 10)")
    assert units_warning("global", 3).startswith("only 3 rows (fewer than 10)")


def test_qags_default_is_a_single_dataset_and_all_is_refused_at_every_level(shared_data):
    default = judgments.load("qags", shared_data)
    assert default.subset == "cnndm" and len(default) == 235 and not default.pooled_datasets
    assert check_level(default, "factuality", "global") == "235 rows"
    pooled = judgments.load("qags", shared_data, subset="all")
    assert len(pooled) == 474 and "the dataset" in pooled.pooled_datasets
    for level in ("global", "summary", "system"):
        with pytest.raises(LevelError, match="pools two datasets.*--subset cnndm or --subset xsum"):
            check_level(pooled, "factuality", level)
    # the flag survives the steps a run takes before checking the level
    scored, _ = pooled.scored("factuality").resolve_duplicates(None)
    with pytest.raises(LevelError, match="pools two datasets"):
        level_warning(scored, "factuality", "global")


def test_run_on_qags_all_is_refused_before_scoring(shared_data, tmp_path):
    out = tmp_path / "out.json"
    res = runner.invoke(app, ["run", "-j", "qags", "--subset", "all", "--data-dir", str(shared_data), "--no-cache",
                              "-m", "chrf", "-o", "ref=source", "--output", str(out)])
    text = " ".join(res.output.split())
    assert res.exit_code == 2 and "pools two datasets" in text and "--subset cnndm" in text, res.output
    assert "from cache" not in text and not out.exists()  # refused before any score


def test_chaganty_system_level_warns_beside_the_number_and_in_the_json(shared_data, tmp_path):
    out = tmp_path / "out.json"
    res = runner.invoke(app, ["run", "-j", "chaganty", "--data-dir", str(shared_data), "--no-cache", "-m", "chrf",
                              "--level", "system", "--resamples", "50", "--output", str(out)])
    assert res.exit_code == 0, res.output
    doc = json.loads(out.read_text())
    assert doc["level_warning"] == units_warning("system", 4)
    assert "4 (!)" in res.output and "warning (!): only 4 systems" in " ".join(res.output.split())
    # enough documents at the summary level: no warning
    out2 = tmp_path / "out2.json"
    res = runner.invoke(app, ["run", "-j", "chaganty", "--data-dir", str(shared_data), "--no-cache", "-m", "chrf",
                              "--level", "summary", "--resamples", "50", "--output", str(out2)])
    assert res.exit_code == 0, res.output
    assert json.loads(out2.read_text())["level_warning"] is None and "(!)" not in res.output


def test_published_blocks_carry_the_warning(shared_data):
    from meta_eval.leaderboard.publish import set_results
    from meta_eval.scoring.runner import score_examples
    from meta_eval.metrics import create

    jset, _ = judgments.load("chaganty", shared_data).scored("overall").resolve_duplicates(None)
    scored = [score_examples(create("chrf"), jset.examples())]
    block = set_results(jset, "overall", scored, n_resamples=20, pairwise=False, extra=False)
    warnings = {b["level"]: b["warning"] for b in block["levels"]}
    assert warnings["system"] == units_warning("system", 4)
    assert warnings["summary"] is None
