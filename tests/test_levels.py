"""Correlation levels (Deutsch et al. 2021) on hand-checkable data."""
from __future__ import annotations

import numpy as np
import pytest

from meta_eval.stats.levels import global_level, summary_level, system_level

# 2 documents x 3 systems (a, b, c)
M = np.array([1.0, 2.0, 3.0, 2.0, 3.0, 4.0])
H = np.array([1.0, 3.0, 2.0, 2.0, 4.0, 3.0])
DOCS = ["d1"] * 3 + ["d2"] * 3
SYS = ["a", "b", "c"] * 2


def test_summary_level_by_hand():
    # in each document the metric ranks a<b<c, the humans a<c<b: Spearman 0.5 in both, mean 0.5
    res = summary_level(M, H, DOCS, "spearman")
    assert res.r == pytest.approx(0.5) and res.n == 2 and res.skipped == 0


def test_system_level_by_hand():
    # system means: metric a=1.5, b=2.5, c=3.5; human a=1.5, b=3.5, c=2.5 -> Spearman 0.5, Pearson 0.5
    assert system_level(M, H, SYS, "spearman").r == pytest.approx(0.5)
    assert system_level(M, H, SYS, "pearson").r == pytest.approx(0.5)
    assert system_level(M, H, SYS, "spearman").n == 3


def test_global_level_is_the_plain_correlation():
    from scipy.stats import kendalltau

    assert global_level(M, H, "kendall").r == pytest.approx(kendalltau(M, H).statistic)
    assert global_level(M, H).n == 6


def test_missing_values_are_explicit():
    h = H.copy()
    h[0] = np.nan
    with pytest.raises(ValueError, match="drop_missing"):
        system_level(M, h, SYS)
    res = summary_level(M, h, DOCS, drop_missing=True)
    # d1 keeps only 2 rows: no correlation, skipped; d2 gives 0.5
    assert res.dropped == 1 and res.skipped == 1 and res.n == 1 and res.r == pytest.approx(0.5)


def test_constant_documents_are_skipped_and_all_constant_is_undefined():
    m = np.array([1.0, 1.0, 1.0, 2.0, 3.0, 4.0])
    res = summary_level(m, H, DOCS)
    assert res.skipped == 1 and res.r == pytest.approx(0.5)
    res = summary_level(np.ones(6), H, DOCS)
    assert res.r is None and res.note


def test_row_order_does_not_matter():
    perm = np.random.default_rng(0).permutation(6)
    docs, systems = np.array(DOCS)[perm], np.array(SYS)[perm]
    assert summary_level(M[perm], H[perm], docs).r == pytest.approx(summary_level(M, H, DOCS).r)
    assert system_level(M[perm], H[perm], systems).r == pytest.approx(system_level(M, H, SYS).r)


def test_levels_on_real_summeval(shared_data):
    from meta_eval import judgments

    jset = judgments.load("summeval", shared_data)
    human = jset.human("relevance")
    lengths = np.array([len(r.candidate.split()) for r in jset.rows], dtype=float)
    docs = [r.doc_id for r in jset.rows]
    systems = [r.system for r in jset.rows]
    s = summary_level(lengths, human, docs)
    assert s.n + s.skipped == 100 and -1 <= s.r <= 1
    assert system_level(lengths, human, systems).n == 16
