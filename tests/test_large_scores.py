"""Finite scores of any magnitude: human (or metric) scores near 1e308 overflow sums of squares (scipy's pearsonr gave
r = 0.0, p = 1.0 silently; the vectorised Pearson, the system means and the tests' z-scores gave NaN or 0). Every
correlation is scale-free, and a power of 2 scales exactly, so the numbers must equal those of the rescaled data:
scipy on the data divided by 2**1000, and bit for bit the run of the same file with every human score scaled by
2**-1000."""
from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from scipy import stats

from meta_eval.stats.correlation import pearson
from meta_eval.stats.resampling import bootstrap_samples, level_correlation, permutation_test

HUGE = {0: 1e308, 1: -1e308, 2: 1.7e308}  # the issue's rows


def test_pearson_of_scores_near_1e308_is_scipys_on_the_rescaled_scores():
    rng = np.random.default_rng(0)
    x, h = rng.random(40), rng.random(40)
    for i, v in HUGE.items():
        h[i] = v
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow anywhere
        c = pearson(x, h)
    ref = stats.pearsonr(x, h / 2.0 ** 1000)
    assert c.r == pytest.approx(ref.statistic, abs=1e-12) and c.p == pytest.approx(ref.pvalue, abs=1e-12)
    assert abs(c.r) > 0.05  # not the silent 0.0 of scipy on the raw scores
    tiny = rng.random(40) * 1e-200  # squares underflow to 0 the other way
    assert pearson(x, tiny).r == pytest.approx(stats.pearsonr(x, tiny * 2.0 ** 700).statistic, abs=1e-12)


def _matrices():
    """8 documents x 5 systems; every document and every system has one score near 1e308, so dividing by 2**1000
    leaves data that plain float arithmetic handles (the reference)."""
    rng = np.random.default_rng(1)
    X, Z = rng.random((8, 5)), rng.random((8, 5))
    for d in range(8):
        Z[d, d % 5] = (1.7e308, -1e308, 1e308)[d % 3]
    return X, Z, Z / 2.0 ** 1000


@pytest.mark.parametrize("level", ["global", "summary", "system"])
def test_each_levels_pearson_is_scipys_on_the_rescaled_scores(level):
    X, Z, small = _matrices()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = level_correlation(X, Z, level, "pearson")
    if level == "global":
        ref = stats.pearsonr(X.ravel(), small.ravel()).statistic
    elif level == "summary":
        ref = np.mean([stats.pearsonr(X[d], small[d]).statistic for d in range(8)])
    else:
        ref = stats.pearsonr(X.mean(axis=0), small.mean(axis=0)).statistic
    assert np.isfinite(got) and got == pytest.approx(ref, abs=1e-12)


@pytest.mark.parametrize("level", ["global", "summary", "system"])
def test_intervals_and_tests_are_those_of_the_rescaled_scores(level):
    X, Z, small = _matrices()
    B = X + 0.5 * np.random.default_rng(2).random(X.shape)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        draws = bootstrap_samples(X, Z, level, "pearson", n_resamples=50, seed=0)
        p = permutation_test(X, B, Z, level, "pearson", n_resamples=100, seed=0)
        # the metric side near 1e308 too: the tests' z-scores must not overflow
        p_big = permutation_test(np.ldexp(X, 1000), np.ldexp(B, 1000), small, level, "pearson", n_resamples=100,
                                 seed=0)
    np.testing.assert_array_equal(draws, bootstrap_samples(X, small, level, "pearson", n_resamples=50, seed=0))
    assert np.isfinite(draws).sum() > 40
    assert p == permutation_test(X, B, small, level, "pearson", n_resamples=100, seed=0) == p_big


def _judgments(path, scale: int = 0):
    """The issue's file: 40 rows, documents d0..d7, systems s0..s4, random 8-word texts, human score h in [0, 1)
    but rows 0, 1, 2 at 1e308, -1e308, 1.7e308; every h times 2**scale; three judges (h, h/2 and 3h/4 or a random
    one: the ceiling's leave-one-out means of two near 1e308 overflow too)."""
    rng = np.random.default_rng(3)
    words = "the a cat dog runs fast slow red blue green house tree sky river mountain bird".split()
    with open(path, "w") as f:
        for i in range(40):
            h = HUGE.get(i, float(rng.random()))
            text = [" ".join(rng.choice(words, 8)) for _ in range(2)]
            judges = [float(np.ldexp(j, scale)) for j in (h, h / 2, 0.75 * h if i in HUGE else float(rng.random()))]
            f.write(json.dumps({"id": str(i), "doc_id": f"d{i // 5}", "system": f"s{i % 5}", "candidate": text[0],
                                "references": [text[1]], "scores": {"h": float(np.ldexp(h, scale))},
                                "judges": {"h": judges}}) + "\n")
    return path


def test_the_issues_run_gives_scipys_pearson_and_no_overflow(tmp_path):
    from typer.testing import CliRunner

    from meta_eval.cli import app

    path, out = _judgments(tmp_path / "big.jsonl"), tmp_path / "big.json"
    res = CliRunner().invoke(app, ["run", "--no-cache", "-j", str(path), "-m", "chrf", "--statistic", "pearson",
                                   "--resamples", "200", "--output", str(out), "--scores-out",
                                   str(tmp_path / "s.jsonl")])
    assert res.exit_code == 0, res.output
    assert "overflow" not in res.output
    (row,) = json.loads(out.read_text())["results"]
    chrf = [json.loads(line)["chrf"] for line in (tmp_path / "s.jsonl").read_text().splitlines()[1:]]  # 1: header
    h = np.array([json.loads(line)["scores"]["h"] for line in path.read_text().splitlines()])
    ref = stats.pearsonr(chrf, h / 1e300)
    assert row["value"] == row["pearson"] == pytest.approx(ref.statistic, abs=1e-12)
    assert row["pearson_p"] == pytest.approx(ref.pvalue, abs=1e-12) and row["value"] != 0.0


@pytest.mark.parametrize("level,statistic", [("global", "pearson"), ("summary", "pearson"), ("system", "pearson"),
                                             ("summary", "kendall"), ("system", "spa"), ("summary", "acc-t")])
def test_a_run_is_the_run_of_its_scores_scaled_by_a_power_of_2(tmp_path, level, statistic):
    from meta_eval import run

    runs = []
    for scale in (0, -1000):
        path = _judgments(tmp_path / f"h{scale}.jsonl", scale)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            res = run(str(path), metrics="chrf,rouge", statistic=statistic, level=level, baseline="chrf",
                      resamples=100, permutations=100 if statistic == "spa" else None, no_cache=True,
                      progress=False,
                      control="system" if level == "global" else None)  # FRANK's partial r: system means
        runs.append([(r.metric, r.value, r.ci, r.pearson, r.partial, res.pvalues_vs_baseline[r.metric])
                     for r in res.results] + [(res.ceiling.value, res.ceiling.lower, res.ceiling.upper)])
    assert runs[0] == runs[1]
    assert all(value is not None and np.isfinite(value) for _, value, *_ in runs[0][:-1])
    assert runs[0][-1][0] is not None and (level != "global" or runs[0][0][4] is not None)
