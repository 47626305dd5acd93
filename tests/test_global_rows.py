"""The global level is over rows everywhere (issue 35, "one number per question"): its value, its BOOT-BOTH interval
and its Williams test read the same rows in ``run``, the JSON, :class:`meta_eval.results.RunResult` and the board.

- :func:`meta_eval.stats.resampling.row_bootstrap_samples`: documents and systems drawn as the matrix bootstrap
  draws them; a row enters a resample (#draws of its document) x (#draws of its system) times. Checked by hand on a
  set with a repeated (document, system) pair and a row naming two systems.
- Where every pair is one row (every set but chaganty) it equals the matrix bootstrap bit for bit: on random data
  and on summeval and realsumm.
- chaganty (a repeated pair, a ``ml;ml+rl`` row): run's value == the JSON == the board's ``r``, and the intervals
  and the Williams p-values are the board's.
"""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as scipy_stats

from meta_eval import judgments
from meta_eval.evaluate import global_interval, global_values
from meta_eval.judgments.base import Judgment, JudgmentSet
from meta_eval.matrix import judgment_matrices
from meta_eval.stats import interval as matrix_interval
from meta_eval.stats.resampling import (_row_bootstrap_chunk, bootstrap_samples, row_bootstrap_samples, row_cells)
from meta_eval.units import global_rows

B = 60


def _toy() -> JudgmentSet:
    """3 documents x 3 systems (a, b, c); (d0, a) judged twice; d1's row ``b;c`` written by both b and c."""
    spec = [("d0", "a", 1.0), ("d0", "a", 4.0), ("d0", "b", 2.0), ("d0", "c", 6.0), ("d1", "a", 3.0),
            ("d1", "b;c", 5.0), ("d2", "a", 7.0), ("d2", "b", 8.0), ("d2", "c", 2.5)]
    rows = [Judgment(f"r{i}", d, s, f"text {i}", ("ref",), scores={"q": h}) for i, (d, s, h) in enumerate(spec)]
    return JudgmentSet("toy", rows, ("q",), "q", duplicates="mean", multi_system_separator=";")


METRIC = np.array([2.0, 3.0, 1.0, 5.0, 4.0, 4.5, 6.0, 9.0, 0.5])


def test_global_rows_index_documents_and_systems_as_the_matrix():
    jset = _toy()
    rows = global_rows(jset, "q", [METRIC])
    assert (rows.n_docs, rows.n_systems) == (3, 3)  # the matrix's: 3 documents, systems a, b, c
    assert rows.doc.tolist() == [0, 0, 0, 0, 1, 1, 2, 2, 2]
    assert rows.system.tolist() == [0, 0, 1, 2, 0, 1, 0, 1, 2]  # "b;c" through its first system, b
    assert rows.values.shape == (1, 9) and rows.human.tolist() == [r.scores["q"] for r in jset.rows]
    Z, _ = judgment_matrices(jset, "q", [])
    assert Z.shape == (3, 3) and Z[0, 0] == 2.5  # the matrix averages the repeated pair: 8 cells, 9 rows
    slot = row_cells(rows.doc, rows.system, 3, 3)
    assert slot.shape == (3, 3, 2) and slot[0, 0].tolist() == [0, 1] and slot[1, 2].tolist() == [-1, -1]


def test_the_full_sample_is_the_row_value():
    jset = _toy()
    rows = global_rows(jset, "q", [METRIC])
    ident = np.arange(3)[None]
    Xe = np.concatenate([rows.values, [[np.nan]]], axis=1)
    full = _row_bootstrap_chunk(Xe, np.append(rows.human, np.nan), row_cells(rows.doc, rows.system, 3, 3),
                                "spearman", ident, ident)
    value = global_values(jset, "q", [METRIC], "spearman")[0]
    assert value == pytest.approx(scipy_stats.spearmanr(METRIC, jset.human("q")).statistic, abs=1e-15)
    assert full[0, 0] == pytest.approx(value, abs=1e-12)  # 9 rows, not the matrix's 8 cells
    Z, (X,) = judgment_matrices(jset, "q", [METRIC])
    keep = ~np.isnan(Z)
    assert value != pytest.approx(scipy_stats.spearmanr(X[keep], Z[keep]).statistic, abs=1e-6)


def test_a_resample_counts_each_row_by_its_document_and_system_draws():
    jset = _toy()
    rows = global_rows(jset, "q", [METRIC])
    Xe = np.concatenate([rows.values, [[np.nan]]], axis=1)
    slot = row_cells(rows.doc, rows.system, 3, 3)
    d, s = np.array([[0, 0, 2]]), np.array([[1, 0, 1]])  # d0 twice, d2 once; a once, b twice, c never
    got = _row_bootstrap_chunk(Xe, np.append(rows.human, np.nan), slot, "pearson", d, s)[0, 0]
    # by hand: rows 0, 1 (d0, a): 2 x 1; row 2 (d0, b): 2 x 2; row 3 (d0, c): 0; rows 4, 5 (d1): 0;
    # row 6 (d2, a): 1 x 1; row 7 (d2, b): 1 x 2; row 8 (d2, c): 0
    times = np.array([2, 2, 4, 0, 0, 0, 1, 2, 0])
    x, h = np.repeat(METRIC, times), np.repeat(jset.human("q"), times)
    assert got == pytest.approx(np.corrcoef(x, h)[0, 1], abs=1e-12)
    # the seeded function draws documents, then systems, as the matrix bootstrap: the same 3 + 3 indices
    rng = np.random.default_rng(7)
    dd, ss = rng.integers(0, 3, size=(1, 3)), rng.integers(0, 3, size=(1, 3))
    times = np.array([np.sum(dd == rows.doc[r]) * np.sum(ss == rows.system[r]) for r in range(9)])
    x, h = np.repeat(METRIC, times), np.repeat(jset.human("q"), times)
    expected = np.corrcoef(x, h)[0, 1] if len(set(x)) > 1 and len(set(h)) > 1 and len(x) >= 3 else np.nan
    got = row_bootstrap_samples(METRIC, rows.human, rows.doc, rows.system, "pearson", 1, 7, n_docs=3, n_systems=3)
    assert got[0] == pytest.approx(expected, abs=1e-12, nan_ok=True)


@pytest.mark.parametrize("kind", ["spearman", "pearson", "kendall"])
def test_one_row_per_cell_is_the_matrix_bootstrap_bit_for_bit(kind):
    rng = np.random.default_rng(1)
    n_docs, n_systems = 25, 6
    Z = rng.normal(size=(n_docs, n_systems)).round(1)  # ties for the rank coefficients
    X = np.stack([Z + rng.normal(size=Z.shape) for _ in range(3)])
    missing = rng.random(Z.shape) < 0.25
    Z[missing], X[:, missing] = np.nan, np.nan
    i, j = np.nonzero(~missing)
    order = rng.permutation(len(i))  # rows in any order
    rows = row_bootstrap_samples(X[:, i, j][:, order], Z[i, j][order], i[order], j[order], kind, 150, 11,
                                 n_docs=n_docs, n_systems=n_systems)
    cells = bootstrap_samples(X, Z, "global", kind, "both", 150, 11)
    assert np.array_equal(rows, cells, equal_nan=True)


def test_row_bootstrap_refuses_bad_indices():
    with pytest.raises(ValueError, match="out of range"):
        row_bootstrap_samples([1., 2, 3], [1., 2, 3], [0, 1, 5], [0, 0, 0], n_docs=3)
    with pytest.raises(ValueError, match="integer indices"):
        row_bootstrap_samples([1., 2, 3], [1., 2, 3], [0., 1, 2], [0, 0, 0])


def _length(jset) -> np.ndarray:
    return np.array([len(r.candidate.split()) for r in jset.rows], dtype=float)


@pytest.mark.parametrize("name", ["summeval", "realsumm"])
def test_sets_whose_rows_are_their_cells_keep_todays_intervals(shared_data, name):
    jset, _ = judgments.load(name, shared_data).scored(None).resolve_duplicates(None)
    dim = jset.default_dimension
    assert not jset.repeated_pairs() and not any(len(jset.row_systems(r)) > 1 for r in jset.rows)
    arrays = [_length(jset), -_length(jset), np.array([len(r.candidate) for r in jset.rows], dtype=float)]
    Z, mats = judgment_matrices(jset, dim, arrays)
    for kind in ("spearman", "kendall"):
        lo, hi = global_interval(jset, dim, arrays, kind, n_resamples=B, seed=5)
        mlo, mhi = matrix_interval(np.stack(mats), Z, kind, "global", n_resamples=B, seed=5)
        assert np.array_equal(lo, mlo) and np.array_equal(hi, mhi), kind


@pytest.fixture(scope="module")
def chaganty_global(shared_data, tmp_path_factory):
    from meta_eval import run

    cache = tmp_path_factory.mktemp("cache") / "scores.sqlite"
    return run("chaganty", "rouge", level="global", resamples=B, seed=2, data_dir=shared_data, cache=cache,
               progress=False)


def test_chaganty_run_json_api_and_board_give_one_global_number(chaganty_global):
    from meta_eval.leaderboard.publish import set_results
    from meta_eval.stats.significance import williams_pvalues

    res = chaganty_global
    jset = res.jset
    assert res.n == 2085 and jset.repeated_pairs() and any(len(jset.row_systems(r)) > 1 for r in jset.rows)
    doc = res.to_dict()
    json_values = {r["metric"]: r["value"] for r in doc["results"]}
    board = set_results(jset, res.human, res.scores, n_resamples=B, seed=2, extra=False)
    block = next(b for b in board["levels"] if b["level"] == "global" and b["statistic"] == "spearman")
    published = {r["variant"]: r for r in block["results"]}
    assert set(published) == {"rouge1-f", "rouge2-f", "rougeL-f", "rougeLsum-f"}
    assert block["n_units"] == res.n == 2085
    for variant, row in published.items():
        assert json_values[variant] == res.values[variant]
        assert float(res.values[variant]) == row["r"], variant  # the board keeps every bit
        assert [float(x) for x in res.intervals[variant]] == row["ci"], variant
    assert round(res.values["rouge1-f"], 5) == 0.17062  # the rows' value, not the cells' 0.170865
    # the interval is computed from the value's rows: the same as global_interval on them
    oriented = {v: s for ms in res.scores for v, s in ms.scores.items()}
    lo, hi = global_interval(jset, res.human, [oriented["rouge1-f"]], "spearman", n_resamples=B, seed=2)
    assert list(res.intervals["rouge1-f"]) == [lo[0], hi[0]]
    # the Williams test reads the same rows: the board's p-values are run's
    names = block["pairwise"]["variants"]
    P = williams_pvalues(jset.human(res.human), [oriented[v] for v in names], "spearman")
    assert block["pairwise"]["p"] == [[None if np.isnan(x) else float(x) for x in row] for row in P]
    base = names.index("rougeL-f")
    assert res.pvalues_vs_baseline["rouge1-f"] == block["pairwise"]["p"][names.index("rouge1-f")][base]
    assert "each row counted once per draw of its document and of its system" in block["interval"]
    assert block["interval"] == res.interval_label


def test_chaganty_difference_intervals_use_the_rows(chaganty_global):
    res = chaganty_global
    oriented = {v: s for ms in res.scores for v, s in ms.scores.items()}
    rows = global_rows(res.jset, res.human, [oriented["rouge1-f"], oriented["rougeL-f"]])
    draws = row_bootstrap_samples(rows.values, rows.human, rows.doc, rows.system, "spearman", B, 2,
                                  n_docs=rows.n_docs, n_systems=rows.n_systems)
    diff = draws[:, 0] - draws[:, 1]
    diff = diff[np.isfinite(diff)]
    assert res.difference_intervals()["rouge1-f"] == pytest.approx((np.percentile(diff, 2.5),
                                                                    np.percentile(diff, 97.5)), abs=1e-12)


def test_units_line_names_rows_documents_and_systems():
    from meta_eval.units import units_line

    assert units_line(_toy()) == "units: global level: 9 rows (3 documents, 3 systems)"


def test_the_global_ceiling_is_over_the_rows(chaganty_global):
    from meta_eval.evaluate import ceiling
    from meta_eval.stats.ceiling import annotator_matrices

    res = chaganty_global
    jset, dim = res.jset, res.human
    pairs = annotator_matrices(jset, dim)
    by_hand = []
    for a, o in pairs.row_pairs:  # each slot against the mean of the others, over the usable rows
        ok = np.isfinite(a) & np.isfinite(jset.human(dim))
        by_hand.append(scipy_stats.spearmanr(a[ok], o[ok]).statistic)
    assert res.ceiling.value == pytest.approx(float(np.mean(by_hand)), abs=1e-12)
    assert res.ceiling.rows_used == 2085 and res.ceiling.resamples_used > 0
    assert res.ceiling.lower <= res.ceiling.value <= res.ceiling.upper
    # the board's ceiling is run's (same function, same rows and draws)
    again = ceiling(jset, dim, "spearman", "global", n_resamples=B, seed=2, pairs=pairs)
    assert (again.value, again.lower, again.upper) == (res.ceiling.value, res.ceiling.lower, res.ceiling.upper)


def test_one_row_per_cell_keeps_todays_global_ceiling():
    from meta_eval.evaluate import ceiling
    from meta_eval.stats.ceiling import annotator_matrices, human_ceiling

    rng = np.random.default_rng(3)
    rows = []
    for d in range(12):
        for s in "abcde":
            judges = tuple(float(x) for x in rng.integers(1, 6, size=3))
            rows.append(Judgment(f"{d}{s}", f"d{d}", s, "t", ("r",), scores={"q": float(np.mean(judges))},
                                 judges={"q": judges}))
    jset = JudgmentSet("grid", rows, ("q",), "q")
    pairs = annotator_matrices(jset, "q")
    ours = ceiling(jset, "q", "kendall", "global", n_resamples=B, seed=4, pairs=pairs)
    matrix = human_ceiling(pairs, "global", "kendall", n_resamples=B, seed=4)
    assert (ours.value, ours.lower, ours.upper) == pytest.approx((matrix.value, matrix.lower, matrix.upper),
                                                                 abs=1e-15)
    assert (ours.lower, ours.upper) == (matrix.lower, matrix.upper)


def test_chaganty_global_run_says_how_the_multi_system_row_is_resampled(chaganty_global):
    note = next(n for n in chaganty_global.notes if "'ml;ml+rl'" in n)
    assert "counts once at the correlations' global level (resampled through its first system there)" in note
