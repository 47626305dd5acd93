"""Partial correlation controlling for the system (meta_eval.stats.partial, FRANK): hand cases, pingouin.partial_corr
(test-only dependency) and FRANK's own recipe (one-hot + LinearRegression residuals, then scipy) on random and real
(chaganty) data."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from meta_eval.stats.correlation import Correlation
from meta_eval.stats.partial import partial_correlation, partial_t_pvalue, within_system_residuals


def _pingouin(m, h, systems, method):
    """pingouin.partial_corr with the system as S - 1 indicator covariates (one dropped: the intercept)."""
    pd = __import__("conftest").require_module("pandas", "pip install 'meta-eval[test]'")
    pg = __import__("conftest").require_module("pingouin", "pip install 'meta-eval[test]'")  # the test extra
    df = pd.DataFrame({"x": np.asarray(m, float), "y": np.asarray(h, float)})
    dummies = pd.get_dummies(pd.Series(list(systems)), drop_first=True).astype(float).to_numpy()
    covar = [f"s{i}" for i in range(dummies.shape[1])]
    df[covar] = dummies
    res = pg.partial_corr(df, "x", "y", covar=covar, method=method)
    p_column = "p_val" if "p_val" in res else "p-val"  # renamed in pingouin 0.7
    return float(res["r"].iloc[0]), float(res[p_column].iloc[0])


def _frank_recipe(m, h, systems):
    """FRANK's evaluate.py, human_metric_correlation: residuals of LinearRegression on one-hot systems, then scipy."""
    from sklearn.linear_model import LinearRegression
    from sklearn.preprocessing import OneHotEncoder

    q = OneHotEncoder(handle_unknown="ignore").fit_transform(np.asarray(systems).reshape(-1, 1))
    x = m - LinearRegression().fit(q, m).predict(q)
    y = h - LinearRegression().fit(q, h).predict(q)
    return stats.pearsonr(x, y), stats.spearmanr(x, y)


def test_perfect_within_system_order_with_opposite_system_means():
    m = [1.0, 2, 3, 10, 11, 12]
    h = [10.0, 11, 12, 1, 2, 3]
    s = ["a"] * 3 + ["b"] * 3
    assert stats.pearsonr(m, h).statistic < -0.8  # the raw correlation is dominated by the system means
    for kind in ("pearson", "spearman"):
        for rank in ("residuals", "scores"):
            c = partial_correlation(m, h, s, kind, rank=rank)
            assert isinstance(c, Correlation) and (c.r, c.p, c.n) == (1.0, 0.0, 6)


def test_hand_case_values_and_degrees_of_freedom():
    m = [1.0, 2, 3, 5, 6, 7]
    h = [1.0, 3, 2, 0, 0, 3]
    s = ["a"] * 3 + ["b"] * 3
    # centred: metric (-1,0,1,-1,0,1); human a: mean 2 -> (-1,1,0), b: mean 1 -> (-1,-1,2)
    np.testing.assert_allclose(within_system_residuals(h, s), [-1, 1, 0, -1, -1, 2])
    # r = (1 + 0 + 0 + 1 + 0 + 2) / sqrt(4 * 8) = 1 / sqrt(2)
    c = partial_correlation(m, h, s, "pearson")
    assert c.r == pytest.approx(1 / math.sqrt(2), abs=1e-12)
    # df = n - S - 1 = 3, t = r sqrt(3 / (1 - r^2)) = sqrt(3); for 3 df P(|T| > sqrt(3)) = 1/2 - 1/pi
    assert c.p == pytest.approx(0.5 - 1 / math.pi, abs=1e-12)
    # FRANK's scipy call: df = n - 2 = 4, t = 2; for 4 df P(|T| > t) = 1 - u (3 - u^2) / 2 with u = t / sqrt(t^2 + 4)
    u = 2 / math.sqrt(8)
    assert partial_correlation(m, h, s, "pearson", df="frank").p == pytest.approx(1 - u * (3 - u * u) / 2,
                                                                                 abs=1e-12)
    # Spearman of the residuals (FRANK): ranks (1.5,3.5,5.5,1.5,3.5,5.5) and (2,5,4,2,2,6): 12 / sqrt(16 * 15.5)
    assert partial_correlation(m, h, s, "spearman").r == pytest.approx(12 / math.sqrt(16 * 15.5), abs=1e-12)
    # ranks first (pingouin): metric ranks (1,...,6) centred (-1,0,1) twice; human ranks (ties averaged):
    hr = stats.rankdata(h)
    np.testing.assert_array_equal(hr, [3, 5.5, 4, 1.5, 1.5, 5.5])
    # ... centred within systems: a mean 4.1667 -> (-7/6, 4/3, -1/6); b mean 17/6 -> (-4/3, -4/3, 8/3)
    # sum xy = 7/6 - 1/6 + 4/3 + 8/3 = 5; sum x^2 = 4; sum y^2 = (49 + 64 + 1 + 64 + 64 + 256) / 36 = 498 / 36
    assert partial_correlation(m, h, s, "spearman", rank="scores").r == pytest.approx(
        5 / math.sqrt(4 * 498 / 36), abs=1e-12)


def test_constant_within_systems_gives_none_with_a_note():
    c = partial_correlation([1.0, 1, 1, 2, 2, 2], [1.0, 3, 2, 4, 5, 9], ["a"] * 3 + ["b"] * 3)
    assert c.r is None and c.p is None and "constant within every system" in c.note
    c = partial_correlation([0.1, 0.2, 0.3, 0.1, 0.2, 0.3], [0.3] * 3 + [0.7] * 3, ["a"] * 3 + ["b"] * 3)
    assert c.r is None and "human" in c.note


def test_invalid_input():
    s = ["a"] * 3 + ["b"] * 3
    with pytest.raises(ValueError, match="unknown kind"):
        partial_correlation([1.0] * 6, [1.0] * 6, s, "kendall")
    with pytest.raises(ValueError, match="unknown rank"):
        partial_correlation([1.0] * 6, [1.0] * 6, s, "spearman", rank="ranks")
    with pytest.raises(ValueError, match="unknown df"):
        partial_correlation([1.0] * 6, [1.0] * 6, s, df="n-2")
    with pytest.raises(ValueError, match="1-D of one length"):
        partial_correlation([1.0] * 6, [1.0] * 5, s)
    with pytest.raises(ValueError, match="labels"):
        partial_correlation([1.0] * 6, [1.0] * 6, s[:5])
    with pytest.raises(ValueError, match="missing.*index 2"):
        partial_correlation([1.0, 2, np.nan, 4, 5, 6], [1.0] * 6, s)
    with pytest.raises(ValueError, match="infinite"):
        partial_correlation([1.0, 2, np.inf, 4, 5, 6], [1.0] * 6, s)
    with pytest.raises(ValueError, match="degrees of freedom"):
        partial_correlation([1.0, 2, 3, 4], [1.0, 3, 2, 4], ["a", "b", "c", "c"])
    with pytest.raises(ValueError, match="df must be a positive integer"):
        partial_t_pvalue(0.5, 0)
    dropped = partial_correlation([1.0, 2, np.nan, 3, 10, 11, 12], [10.0, 11, 5, 12, 1, 2, 3], ["a"] * 4 + ["b"] * 3,
                                  drop_missing=True)
    assert (dropped.r, dropped.n) == (1.0, 6)


def _check(m, h, systems):
    (fp, fpp), (fs, fsp) = _frank_recipe(m, h, systems)
    for kind in ("pearson", "spearman"):
        r, p = _pingouin(m, h, systems, kind)
        ours = partial_correlation(m, h, systems, kind, rank="scores")
        assert ours.r == pytest.approx(r, abs=1e-10) and ours.p == pytest.approx(p, abs=1e-10, rel=1e-9)
    ours_p = partial_correlation(m, h, systems, "pearson", df="frank")
    ours_s = partial_correlation(m, h, systems, "spearman", df="frank")
    assert ours_p.r == pytest.approx(fp, abs=1e-10) and ours_p.p == pytest.approx(fpp, abs=1e-10, rel=1e-9)
    assert ours_s.r == pytest.approx(fs, abs=1e-10) and ours_s.p == pytest.approx(fsp, abs=1e-10, rel=1e-9)
    # the Pearson coefficient does not depend on df; its p-value does (n - S - 1 vs n - 2)
    assert partial_correlation(m, h, systems, "pearson").r == pytest.approx(fp, abs=1e-10)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_data_matches_pingouin_and_frank(seed):
    rng = np.random.default_rng(seed)
    n = 120
    systems = rng.choice(["bart", "pgn", "bus", "bert_sum", "s2s"], n)
    effect = {"bart": 2.0, "pgn": -1.0, "bus": 0.0, "bert_sum": 0.5, "s2s": -2.0}
    h = rng.normal(size=n) + np.array([effect[s] for s in systems])
    m = 0.5 * h + rng.normal(size=n) - np.array([effect[s] for s in systems])
    if seed == 2:
        h = np.round(h)  # ties
    _check(m, h, systems)


def test_real_chaganty_matches_pingouin_and_frank(shared_data):
    from meta_eval import judgments

    jset = judgments.load("chaganty", shared_data)
    systems = [r.system for r in jset.rows]  # the ml;ml+rl row is its own label, as FRANK's encoder would have it
    overall = jset.human("overall")
    length = np.array([len(r.candidate.split()) for r in jset.rows], dtype=float)
    _check(length, overall, systems)  # p around 0.6: the p-values are compared where they are not 0
    _check(jset.human("grammar"), overall, systems)  # heavy ties on both sides
    c = partial_correlation(length, overall, systems, "pearson")
    assert c.n == 2085 and c.r == pytest.approx(0.010752, abs=5e-7) and c.p == pytest.approx(0.62398, abs=5e-5)


def test_the_rows_order_changes_no_bit_of_the_residuals_nor_the_partial_spearman(shared_data):
    """System means summed in row order (np.bincount) differed in the last bit with the order, residuals equal in
    exact arithmetic then ranked by that bit, and SummEval's partial Spearman moved from 0.2824 to 0.2846 over
    permutations of its rows (audit, session 38). The sums are exactly rounded now."""
    from meta_eval import judgments
    from meta_eval.stats.partial import partial_correlation, within_system_residuals

    rows = judgments.load("summeval", data_dir_=shared_data).rows[:400]
    length = np.array([float(len(r.candidate.split())) for r in rows])
    human = np.array([r.scores["relevance"] for r in rows])
    systems = [r.system for r in rows]
    first = partial_correlation(length, human, systems, kind="spearman")
    base = within_system_residuals(human, systems)
    rng = np.random.default_rng(7)
    values = set()
    for _ in range(8):
        p = rng.permutation(len(rows))
        again = partial_correlation(length[p], human[p], [systems[i] for i in p], kind="spearman")
        values.add(again.r)
        assert np.array_equal(within_system_residuals(human[p], [systems[i] for i in p]), base[p])
    assert values == {first.r}, values
    assert within_system_residuals([], []).shape == (0,)
