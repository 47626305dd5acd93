"""The global level of the pairwise accuracies is over (document, system) cells, by definition (issue 35 item 2,
docs/statistics.md "The global level of the pairwise accuracies is over cells"): a repeated pair is one cell, a row
naming two systems fills both, as at the summary and system levels; the units line, ``n`` and the warnings count
the cells, and the correlation columns beside the accuracy stay the rows' (``run --statistic spearman``'s).
"""
from __future__ import annotations

import json
from itertools import combinations

import numpy as np
import pytest
from typer.testing import CliRunner

import conftest
from meta_eval.cli import app
from meta_eval.evaluate import check_level, evaluate_level, global_values, level_warning
from meta_eval.judgments.base import Judgment, JudgmentSet
from meta_eval.scoring.runner import MetricScores
from meta_eval.units import level_units, level_words

# (document, system, human, metric): d0 judged three times for system a, d1's row "b;c" written by b and c
SPEC = [("d0", "a", 1.0, 2.0), ("d0", "a", 4.0, 3.0), ("d0", "a", 2.5, 2.5), ("d0", "b", 2.0, 5.5),
        ("d0", "c", 6.0, 5.0), ("d1", "a", 3.0, 4.0), ("d1", "b;c", 5.0, 4.5)]


def _toy() -> tuple[JudgmentSet, MetricScores]:
    rows = [Judgment(f"r{i}", d, s, f"text {i}", ("ref",), scores={"q": h}) for i, (d, s, h, _) in enumerate(SPEC)]
    jset = JudgmentSet("toy", rows, ("q",), "q", duplicates="mean", multi_system_separator=";")
    scores = MetricScores("m", "m|sig", True, {"m": np.array([x for *_, x in SPEC])}, 0, 0, 0.0)
    return jset, scores


def _by_hand(x, z) -> float:
    pairs = list(combinations(range(len(z)), 2))
    return sum(np.sign(x[i] - x[j]) == np.sign(z[i] - z[j]) for i, j in pairs) / len(pairs)


@pytest.mark.parametrize("statistic", ["accuracy", "acc-eq", "acc-t"])
def test_global_pairwise_accuracy_is_over_the_cells_by_hand(statistic):
    jset, scores = _toy()
    # 7 rows, 6 cells: (d0,a) = mean of 3 rows (human 2.5, metric 2.5), (d0,b), (d0,c), (d1,a), (d1,b) = (d1,c)
    cells_x = np.array([2.5, 5.5, 5.0, 4.0, 4.5, 4.5])
    cells_z = np.array([2.5, 2.0, 6.0, 3.0, 5.0, 5.0])
    by_hand = _by_hand(cells_x, cells_z)
    assert by_hand == pytest.approx(10 / 15)  # (d0,b) is ordered wrongly against the 5 others
    rows_x, rows_z = np.array([x for *_, x in SPEC]), np.array([h for _, _, h, _ in SPEC])
    assert _by_hand(rows_x, rows_z) != pytest.approx(by_hand)  # the rows would give another number
    (r,) = evaluate_level(jset, "q", [scores], "global", None, statistic, n_resamples=20, seed=0)
    if statistic != "acc-t":  # acc-t calibrates its epsilon: at least the accuracy
        assert r.value == pytest.approx(by_hand, abs=1e-12)
    else:
        assert r.value >= by_hand - 1e-12
    assert r.n == 6  # the cells, not the 7 rows
    units = level_units(jset, "q", "global", statistic)
    assert (units.n, units.words.units, units.words.name) == (6, "cells",
                                                              "global level, over (document, system) cells")
    assert check_level(jset, "q", "global", statistic) == "6 cells"
    assert level_warning(jset, "q", "global", statistic).startswith("only 6 cells (fewer than")
    # the correlations keep the rows: their units, and the columns beside the accuracy (run's global values)
    assert check_level(jset, "q", "global") == "7 rows" and level_words("", "global").units == "rows"
    for k in ("spearman", "pearson", "kendall"):
        assert getattr(r, k) == pytest.approx(global_values(jset, "q", [rows_x], k)[0], abs=1e-12)


def test_chaganty_global_accuracy_prints_and_writes_the_cells(tmp_path, shared_data):
    """On chaganty the cells (a repeated pair merged, the ``ml;ml+rl`` row filling two) and the rows are both 2,085:
    the JSON's units say which, and the correlation columns are plain run's over the rows (kendall 0.091, not the
    cells' 0.092)."""
    conftest.require_metrics("rouge")
    from meta_eval import judgments
    from meta_eval.matrix import judgment_matrices

    common = ["-j", "chaganty", "-m", "rouge", "--variants", "rouge1-f,rougeL-f", "--level", "global",
              "--resamples", "10", "--no-cache", "--data-dir", str(shared_data)]
    acc, corr = tmp_path / "acc.json", tmp_path / "kendall.json"
    res = CliRunner().invoke(app, ["run", *common, "--statistic", "accuracy", "--output", str(acc)])
    assert res.exit_code == 0, res.output
    assert "n cells" in res.output and "global level, over (document, system) cells" in res.output
    res = CliRunner().invoke(app, ["run", *common, "--statistic", "kendall", "--output", str(corr)])
    assert res.exit_code == 0, res.output
    a, k = json.loads(acc.read_text()), json.loads(corr.read_text())
    assert a["level_label"]["units"] == "cells" and k["level_label"]["units"] == "rows"
    jset = judgments.load("chaganty", shared_data).scored("overall")
    cells = int((~np.isnan(judgment_matrices(jset, "overall", [])[0])).sum())
    assert cells == len(jset) == 2085 and all(r["n"] == cells for r in a["results"])
    plain = {r["metric"]: r["kendall"] for r in k["results"]}
    assert {r["metric"]: r["kendall"] for r in a["results"]} == plain
    assert round(plain["rougeL-f"], 3) == 0.091
