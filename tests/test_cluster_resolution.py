"""The significance clusters read a permutation p-value of 0 as the bound it stands for (issue 37's review).

A test with B resamples that finds none as extreme reports 0, which means p < 1/B. The comparisons with a baseline
entered it into the correction as 1/B since session 33; the clusters (``--pairwise``, the heatmap, ``pvalue_matrix``,
the leaderboards) still multiplied the 0 and could split clusters that B resamples cannot separate (Holm over 91
pairs of SummEval's 14 variants with 1,000 resamples: a 0 is at least 0.091 after the rule, never below 0.05). They
now enter it as 1/B too, and a family too large for its resamples says so (``resolution_note``, a warning of kind
``unresolved`` before the table, ``resolution_note`` in a board's ``pairwise``).
"""
from __future__ import annotations

import json

import numpy as np
import pytest

from conftest import small_set
from meta_eval.leaderboard.publish import publish
from meta_eval.stats.clusters import resolution_note, significance_clusters

NAN = float("nan")
# A beats B and C, B beats C, each with no resample as extreme (p of 0); the reverse directions are 1
P = np.array([[NAN, 0.0, 0.0], [1.0, NAN, 0.0], [1.0, 1.0, NAN]])


def test_a_zero_enters_the_clusters_as_one_over_b():
    # exact p-values of 0 (n_resamples None: Williams's test) separate every pair under Holm
    ranks, adjusted = significance_clusters(["A", "B", "C"], [0.5, 0.4, 0.3], P, correction="holm")
    assert ranks == [("A", 1), ("B", 2), ("C", 3)]
    # 20 resamples: each 0 stands for p < 1/20 and Holm over 3 pairs makes it 3/20 = 0.15: one cluster
    ranks, adjusted = significance_clusters(["A", "B", "C"], [0.5, 0.4, 0.3], P, correction="holm", n_resamples=20)
    assert ranks == [("A", 1), ("B", 1), ("C", 1)]
    assert adjusted[0, 1] == adjusted[0, 2] == adjusted[1, 2] == pytest.approx(0.15)
    # 100 resamples: 3/100 = 0.03 <= 0.05, so the clusters split again
    ranks, _ = significance_clusters(["A", "B", "C"], [0.5, 0.4, 0.3], P, correction="holm", n_resamples=100)
    assert ranks == [("A", 1), ("B", 2), ("C", 3)]
    # Benjamini-Hochberg: three zeros at 1/20 stay 3/(3 * 20) = 0.05 <= alpha
    ranks, adjusted = significance_clusters(["A", "B", "C"], [0.5, 0.4, 0.3], P, correction="bh", n_resamples=20)
    assert ranks == [("A", 1), ("B", 2), ("C", 3)] and adjusted[0, 2] == pytest.approx(0.05)


def test_the_resolution_note_says_when_no_pair_can_pass_and_what_would():
    note = resolution_note("holm", 171, 1000, 0.05)
    assert "at least 0.171 > alpha 0.05" in note and "--resamples 3420 or more" in note
    assert "--correction bh or none" in note
    assert resolution_note("holm", 171, 3420, 0.05) is None  # 171/3420 = 0.05 exactly: can pass
    assert resolution_note("holm", 171, 3419, 0.05) is not None
    assert resolution_note("bh", 171, 1000, 0.05) is None and resolution_note("none", 171, 1000, 0.05) is None
    assert resolution_note("holm", 171, None, 0.05) is None  # exact p-values (Williams)
    # SPA's 0 comes from its first 100 resamples whatever --resamples: only the rules can help
    spa = resolution_note("holm", 45, 100, 0.05, more_resamples_help=False)
    assert "at least 0.45" in spa and "--resamples" not in spa and "--correction bh or none" in spa
    # BH with too few resamples: 1/10 > 0.05 whatever the rule
    assert "--resamples 20 or more" in resolution_note("bh", 3, 10, 0.05)


def test_run_warns_before_the_table_and_no_zero_splits_a_cluster(shared_data):
    from meta_eval import run

    result = run("summeval", "rouge,chrf,bleu", variants="all", level="summary", resamples=100, pairwise=True,
                 no_cache=True, progress=False, data_dir=shared_data)
    matrix = result.pvalue_matrix()
    n = len(matrix.variants)
    assert n == 14 and matrix.n_resamples == 100
    assert (matrix.p == 0).sum() > 0  # some pair found no resample as extreme
    zeros = np.isfinite(matrix.p_adjusted) & (matrix.p == 0)
    assert (matrix.p_adjusted[zeros] >= n * (n - 1) / 2 / 100 - 1e-12).all()  # Holm over 91 pairs: >= 0.91
    assert set(result.ranks.values()) == {1}
    (unresolved,) = [w for w in result.warnings if w["kind"] == "unresolved"]
    assert unresolved["message"] == matrix.resolution_note
    assert "Holm over all 91 pairs makes it at least 0.91 > alpha 0.05" in unresolved["message"]
    assert result.to_dict()["warnings"] == result.warnings
    # the same matrix with Benjamini-Hochberg can separate: the note is gone
    assert result.pvalue_matrix(correction="bh").resolution_note is None


def test_a_board_records_the_note_and_its_full_command(tmp_path):
    data, board = small_set(tmp_path / "mine.jsonl"), tmp_path / "board"
    said = []
    publish(str(data), board, "rouge", resamples=20, no_cache=True, progress=False,
            say=lambda channel, text: said.append(text))
    (warning,) = [t for t in said if t.startswith("warning: in ")]
    assert "blocks with clusters no pair can be separated" in warning and "from 20 resamples" in warning
    doc = json.loads((board / "results.json").read_text())
    assert "--resamples 20" in doc["command"] and "--correction" not in doc["command"]  # holm is the default
    blocks = [b for b in doc["sets"][0]["levels"] if b["pairwise"] and b["pairwise"]["test"] != "williams"]
    assert blocks
    for b in blocks:
        m = len(b["pairwise"]["variants"]) * (len(b["pairwise"]["variants"]) - 1) // 2
        # SPA's 0 comes from its first min(100, B) resamples (stats.zero_resolution): 20 here too
        assert b["pairwise"]["resolution_note"] == resolution_note("holm", m, 20, 0.05, b["statistic"] != "spa")
        if b["pairwise"]["resolution_note"]:
            assert {r["rank"] for r in b["results"] if r["rank"] is not None} == {1}
    assert "warning: a p-value of 0 from 20 resamples" in (board / "README.md").read_text()
    again = tmp_path / "bh"
    publish(str(data), again, "rouge", resamples=20, correction="bh", seed=3, no_cache=True, progress=False)
    command = json.loads((again / "results.json").read_text())["command"]
    assert "--correction bh" in command and "--seed 3" in command
