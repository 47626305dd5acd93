"""meta-eval's statistics against nlpstats 0.0.1, D. Deutsch's own toolbox for Deutsch, Dror & Roth (TACL 2021), "A
Statistical Analysis of Summarization Evaluation Metrics using Resampling Methods" (``nlpstats.correlations``,
imported as ``ncorr``).

nlpstats takes (systems x inputs) matrices; meta-eval takes (documents x systems), so every nlpstats call gets the
transposes. Names: nlpstats' level "input" is meta-eval's "summary"; its resampling/permutation method "inputs" is
meta-eval's "documents". Compared, on random matrices with tied scores and NaN cells and on a real SummEval slice
(human relevance against a ROUGE-1-like and a ROUGE-2-like unigram/bigram F1 computed here, and against the human
coherence scores used as a "metric"):

- correlations: ``meta_eval.stats.resampling.level_correlation`` and ``meta_eval.stats.levels.*_level`` against
  ``nlpstats.correlations.correlate``, to 1e-12;
- Williams: ``meta_eval.stats.significance.williams_test`` (one-sided, H1: r12 > r13) with the level correlations and
  ``level_n`` against ``nlpstats.correlations.williams_test(alternative="greater")``, to 1e-12; nlpstats'
  "two-sided" is 2 * min(p, 1 - p) and its "less" is 1 - p;
- Fisher: ``meta_eval.stats.resampling.fisher_ci`` with ``level_n`` against ``nlpstats.correlations.fisher`` (both use
  Bonett & Wright's variances for Spearman and Kendall), to 1e-12;
- bootstrap: ``bootstrap_samples``/``bootstrap_ci`` against ``nlpstats.correlations.bootstrap`` fed meta-eval's own
  index draws (exactly equal), and with nlpstats' own global-RNG draws at 5,000 resamples (within Monte Carlo error);
- permutation: ``permutation_test`` against ``nlpstats.correlations.permutation_test(alternative="greater")`` fed
  meta-eval's own swap masks (equal p-values), and with nlpstats' own draws ("systems" <-> "systems", "documents" <->
  "inputs"; meta-eval's "both" swaps cells independently, nlpstats' "both" swaps systems then inputs, so they are
  not compared).

Known differences, each pinned by a test: nlpstats averages the +-1 "correlations" of documents with only 2 scored
systems into the summary level (meta-eval leaves them out); nlpstats' Williams test takes absolute values of the
three correlations (meta-eval keeps the signs: metrics are oriented first); nlpstats' Fisher interval is (NaN, NaN)
for n <= b where meta-eval raises.

Floating-point ties: at the system level a rank coefficient ranks per-system means, and two means that are equal in
exact arithmetic can differ in the last bit depending on the order of summation, which differs between the two
libraries (and is not tie-safe in either). The exact-draw tests therefore use quarter-step scores (every sum is exact)
for the bootstrap and continuous scores for the system-level permutation test (its standardisation makes any sum
inexact).
"""
from __future__ import annotations

import re
import warnings
from collections import Counter

import nlpstats.correlations as ncorr  # the test extra pins nlpstats
import numpy as np
import pytest

from meta_eval import judgments
from meta_eval.stats import resampling
from meta_eval.stats.levels import global_level, summary_level, system_level
from meta_eval.matrix import judgment_matrices
from meta_eval.stats.resampling import (KINDS, LEVELS, bootstrap_ci, bootstrap_samples, fisher_ci, level_correlation,
                                  level_n, permutation_test)
from meta_eval.stats.significance import williams_from_scores, williams_test

NL_LEVEL = {"summary": "input", "system": "system", "global": "global"}
NL_METHOD = {"both": "both", "systems": "systems", "documents": "inputs"}


def nl(func, *args, **kwargs):
    """Call an nlpstats function without scipy's constant-input and numpy's arctanh(1) warnings."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return func(*args, **kwargs)


def synthetic(seed: int, n_docs: int = 30, n_systems: int = 12, missing: float = 0.0, scores: str = "tied"):
    """Human Z = a quality per system + noise; metrics X (better) and Y (worse) = Z + noise; documents x systems.

    ``scores="tied"``: Z rounded to integers and X, Y to quarters (many ties; every sum is exact in floating point);
    ``"continuous"``: nothing rounded. ``missing``: the share of cells set to NaN in all three matrices.
    """
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=n_systems) + rng.normal(size=(n_docs, n_systems))
    X = Z + rng.normal(scale=1.5, size=Z.shape)
    Y = Z + rng.normal(scale=2.0, size=Z.shape)
    if scores == "tied":
        Z, X, Y = np.round(Z), np.round(4 * X) / 4, np.round(4 * Y) / 4
    cut = rng.random(Z.shape) < missing
    for M in (X, Y, Z):
        M[cut] = np.nan
    return X, Y, Z


def _rows(M: np.ndarray):
    """The matrix as rows (value, document label, system label), for meta_eval.stats.levels."""
    d, s = np.indices(M.shape)
    return M.ravel(), d.ravel().astype(str), s.ravel().astype(str)


def _ngram_f1(candidate: str, references, n: int) -> float:
    """A cheap ROUGE-n-like score: the best n-gram F1 against any reference (lower-cased alphanumeric tokens)."""
    def grams(text):
        toks = re.findall(r"[a-z0-9]+", text.lower())
        return Counter(zip(*[toks[i:] for i in range(n)]))
    cand, best = grams(candidate), 0.0
    for ref in references:
        r = grams(ref)
        overlap = sum((cand & r).values())
        if overlap:
            best = max(best, 2.0 * overlap / (sum(cand.values()) + sum(r.values())))
    return best


@pytest.fixture(scope="module")
def summeval(shared_data):
    """SummEval (Fabbri et al., TACL 2021), 100 documents x 16 systems: Z = relevance; metrics: unigram F1,
    bigram F1 and the human coherence scores."""
    jset = judgments.load("summeval", shared_data)
    rouge1 = [_ngram_f1(r.candidate, r.references, 1) for r in jset.rows]
    rouge2 = [_ngram_f1(r.candidate, r.references, 2) for r in jset.rows]
    Z, (R1, R2, COH) = judgment_matrices(jset, "relevance", [rouge1, rouge2, jset.human("coherence")])
    assert Z.shape == (100, 16) and not np.isnan(Z).any()
    return {"Z": Z, "rouge1": R1, "rouge2": R2, "coherence": COH}


@pytest.fixture
def global_rng():
    """nlpstats draws from numpy's global RNG: seed it for the test and restore the state afterwards."""
    state = np.random.get_state()
    yield np.random.seed
    np.random.set_state(state)


# ------------------------------------------------------------------------------------------------ correlations


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("level", LEVELS)
def test_level_correlations_equal_on_random_matrices_with_ties_and_nan(level, kind):
    """level_correlation(X, Z) and meta_eval.stats.levels on the rows == ncorr.correlate(X.T, Z.T), 30 x 12, 15% NaN."""
    X, _, Z = synthetic(0, missing=0.15)
    assert (~np.isnan(Z)).sum(axis=1).min() >= 3  # no document with < 3 systems: see the test below for those
    assert len(np.unique(Z[~np.isnan(Z)])) < 10  # heavily tied
    expected = nl(ncorr.correlate, X.T, Z.T, NL_LEVEL[level], kind)
    assert np.isfinite(expected)
    assert level_correlation(X, Z, level, kind) == pytest.approx(expected, abs=1e-12)
    (x, docs, systems), (z, _, _) = _rows(X), _rows(Z)
    by_rows = {"summary": lambda: summary_level(x, z, docs, kind, drop_missing=True),
               "system": lambda: system_level(x, z, systems, kind, drop_missing=True),
               "global": lambda: global_level(x, z, kind, drop_missing=True)}[level]()
    assert by_rows.r == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("metric", ["rouge1", "coherence"])
def test_level_correlations_equal_on_summeval(summeval, metric, level, kind):
    """level_correlation(metric, relevance) == ncorr.correlate on SummEval (100 x 16)."""
    X, Z = summeval[metric], summeval["Z"]
    expected = nl(ncorr.correlate, X.T, Z.T, NL_LEVEL[level], kind)
    assert level_correlation(X, Z, level, kind) == pytest.approx(expected, abs=1e-12)


def test_summary_level_documents_with_two_systems_differ():
    """Known difference: a document with only 2 scored systems. nlpstats' input_level passes the 2 values to scipy,
    which returns -1 or +1, and averages that in; meta-eval (level_correlation, levels.summary_level) needs 3 systems
    per document and leaves it out (counted in ``skipped``)."""
    Z = np.array([[1.0, 2.0, 3.0, 4.0], [1.0, 2.0, np.nan, np.nan]])
    X = np.array([[1.0, 3.0, 2.0, 4.0], [2.0, 1.0, np.nan, np.nan]])  # document 1: pearson 0.8; document 2: -1
    assert nl(ncorr.correlate, X.T, Z.T, "input", "pearson") == pytest.approx((0.8 - 1.0) / 2, abs=1e-12)
    assert level_correlation(X, Z, "summary", "pearson") == pytest.approx(0.8, abs=1e-12)
    (x, docs, _), (z, _, _) = _rows(X), _rows(Z)
    res = summary_level(x, z, docs, "pearson", drop_missing=True)
    assert (res.r, res.n, res.skipped) == (pytest.approx(0.8, abs=1e-12), 1, 1)


# -------------------------------------------------------------------------------------------------- Williams


def _williams_pair(A, B, Z, level, kind):
    """meta-eval's one-sided Williams p for H1: r(A, Z) > r(B, Z) from its level correlations and level_n."""
    r12, r13, r23 = (level_correlation(P, Q, level, kind) for P, Q in ((A, Z), (B, Z), (A, B)))
    return williams_test(r12, r13, r23, level_n(Z, level))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("level", LEVELS)
def test_williams_equal(summeval, level, kind):
    """williams_test(r12, r13, r23, level_n) == ncorr.williams_test(A.T, B.T, Z.T, level, kind, "greater"); its
    "two-sided" == 2 min(p, 1 - p) and "less" == 1 - p. On SummEval (ROUGE-1-like vs ROUGE-2-like, coherence vs
    ROUGE-1-like) and on random matrices with NaN; at the global level also williams_from_scores on the cells."""
    cases = [(summeval["rouge1"], summeval["rouge2"], summeval["Z"]),
             (summeval["coherence"], summeval["rouge1"], summeval["Z"]), synthetic(1, missing=0.1)]
    for i, (A, B, Z) in enumerate(cases):
        p = _williams_pair(A, B, Z, level, kind)
        nl_level = NL_LEVEL[level]
        greater = nl(ncorr.williams_test, A.T, B.T, Z.T, nl_level, kind, alternative="greater").pvalue
        assert 0.0 < p < 1.0
        assert p == pytest.approx(greater, abs=1e-12)
        if i == 0:  # the other alternatives once (each nlpstats call recomputes the three correlations)
            two = nl(ncorr.williams_test, A.T, B.T, Z.T, nl_level, kind, alternative="two-sided").pvalue
            less = nl(ncorr.williams_test, A.T, B.T, Z.T, nl_level, kind, alternative="less").pvalue
            assert two == pytest.approx(2 * min(p, 1 - p), abs=1e-12)
            assert less == pytest.approx(1 - p, abs=1e-12)
        if level == "global":
            ok = ~np.isnan(Z)
            assert williams_from_scores(Z[ok], A[ok], B[ok], kind) == pytest.approx(greater, abs=1e-12)


def test_williams_absolute_values_differ(summeval):
    """Known difference: nlpstats takes |r12|, |r13|, |r23| (as the WMT scripts do before R's r.test); meta-eval keeps
    the signs, because its callers orient every metric so that higher is better. With metric B negated (r13 < 0,
    r23 < 0) nlpstats gives meta-eval's p-value for the absolute correlations, not its p-value for the signed ones."""
    A, B, Z = summeval["rouge1"], -summeval["rouge2"], summeval["Z"]
    r12, r13, r23 = (level_correlation(P, Q, "system", "pearson") for P, Q in ((A, Z), (B, Z), (A, B)))
    assert r12 > 0 > r13 and r23 < 0
    nl_p = ncorr.williams_test(A.T, B.T, Z.T, "system", "pearson", alternative="greater").pvalue
    assert nl_p == pytest.approx(williams_test(abs(r12), abs(r13), abs(r23), 16), abs=1e-12)
    signed = williams_test(r12, r13, r23, 16)
    assert signed < 0.01 and nl_p > 0.3  # r = 0.67 vs r = -0.65: p = 0.0034 signed, 0.33 with absolute values


# ---------------------------------------------------------------------------------------------------- Fisher


@pytest.mark.parametrize("confidence", [0.95, 0.9])
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("level", LEVELS)
def test_fisher_equal(summeval, level, kind, confidence):
    """fisher_ci(level_correlation, level_n(Z, level), confidence, kind) == ncorr.fisher(X.T, Z.T, level, kind,
    confidence): b, c = (3, 1) Pearson, (3, 1 + r^2/2) Spearman, (4, 0.437) Kendall (Bonett & Wright, 2000)."""
    for X, Z in ((summeval["rouge1"], summeval["Z"]), synthetic(2, missing=0.1)[0::2]):
        lo, hi = fisher_ci(level_correlation(X, Z, level, kind), level_n(Z, level), confidence, kind)
        ref = nl(ncorr.fisher, X.T, Z.T, NL_LEVEL[level], kind, confidence_level=confidence)
        assert lo < hi
        assert (lo, hi) == (pytest.approx(ref.lower, abs=1e-12), pytest.approx(ref.upper, abs=1e-12))


def test_fisher_edge_cases():
    """r == 1 (rank coefficients of identical scores, exactly 1.0 in both): both give (1, 1). Known difference: n <= b
    (4 systems, Kendall: b = 4) gives (NaN, NaN) in nlpstats, a ValueError in meta-eval."""
    Z = np.arange(20.0).reshape(5, 4)
    for kind in ("spearman", "kendall"):
        assert tuple(nl(ncorr.fisher, Z.T, Z.T, "global", kind)) == (1.0, 1.0)
        assert fisher_ci(level_correlation(Z, Z, "global", kind), 20, kind=kind) == (1.0, 1.0)
    X = Z + np.array([[0.0, 0, 0, 0]] * 4 + [[0, 9, 0, 0]])
    assert np.isnan(nl(ncorr.fisher, X.T, Z.T, "system", "kendall")).all()
    with pytest.raises(ValueError, match="greater than 4"):
        fisher_ci(level_correlation(X, Z, "system", "kendall"), level_n(Z, "system"), kind="kendall")


# ------------------------------------------------------------------------------------------------- bootstrap


def _meta_eval_draws(seed, resample, n, n_docs, n_systems):
    """An nlpstats resampling method that replays meta-eval's index draws for ``seed`` (its _draw_indices) one per
    call, as (systems x inputs) sub-matrices of the drawn systems on the drawn documents."""
    docs, systems = resampling._draw_indices(np.random.default_rng(seed), resample, n, n_docs, n_systems)
    calls = iter(range(n))

    def method(matrices, paired_inputs=True):
        k = next(calls)
        d = docs[k] if docs is not None else np.arange(n_docs)
        s = systems[k] if systems is not None else np.arange(n_systems)
        return [m[np.ix_(s, d)] for m in matrices]
    return method


@pytest.mark.parametrize("resample", ["both", "systems", "documents"])
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("level", LEVELS)
def test_bootstrap_same_draws_equal(level, kind, resample):
    """bootstrap_samples / bootstrap_ci (seed 7) == ncorr.bootstrap fed the same index draws: every resampled
    correlation to 1e-12 (NaN resamples dropped by both), both percentile bounds and the point estimate.
    Quarter-step scores with ties; 10% NaN at the system and global levels (the summary level is kept complete:
    a resample of systems can leave a document with < 3 or no scored systems, see the two-systems test)."""
    small = level == "summary"  # nlpstats calls scipy once per document and resample
    X, _, Z = synthetic(3, n_docs=8 if small else 25, n_systems=6 if small else 10, missing=0.0 if small else 0.1)
    n = 80 if small else 300
    samples = bootstrap_samples(X, Z, level, kind, resample, n, seed=7)
    ci = bootstrap_ci(X, Z, level, kind, resample, n, seed=7)
    ref = nl(ncorr.bootstrap, X.T, Z.T, NL_LEVEL[level], kind, _meta_eval_draws(7, resample, n, *Z.shape),
             n_resamples=n)
    samples = samples[~np.isnan(samples)]
    assert len(samples) == len(ref.samples) > 0.9 * n
    np.testing.assert_allclose(samples, ref.samples, rtol=0, atol=1e-12)
    assert (ci.lower, ci.upper) == (pytest.approx(ref.lower, abs=1e-12), pytest.approx(ref.upper, abs=1e-12))
    assert ci.point == pytest.approx(nl(ncorr.correlate, X.T, Z.T, NL_LEVEL[level], kind), abs=1e-12)
    assert ci.lower < ci.upper


# tolerances: 4 * sqrt(2) * the standard deviation of a bound over 12 meta-eval seeds at 5,000 resamples (SummEval,
# rouge1), rounded up; smaller than the gap between BOOT-BOTH and the other methods (checked in the test)
BOOT_TOL = {"system": (0.06, 0.02), "global": (0.012, 0.008)}


@pytest.mark.parametrize("level", ["system", "global"])
def test_bootstrap_own_draws_agree_within_monte_carlo_error(summeval, global_rng, level):
    """BOOT-BOTH, Pearson, 5,000 resamples on SummEval: bootstrap_ci (seed 0) against ncorr.bootstrap with
    "both" drawing from numpy's global RNG (seeded 0): bounds within BOOT_TOL, identical point estimates; the
    meta-eval BOOT-SYSTEMS and BOOT-INPUTS intervals are not within BOOT_TOL (the check can tell methods apart)."""
    X, Z = summeval["rouge1"], summeval["Z"]
    ci = bootstrap_ci(X, Z, level, "pearson", "both", 5000, seed=0)
    global_rng(0)
    ref = nl(ncorr.bootstrap, X.T, Z.T, level, "pearson", "both", n_resamples=5000)
    tol_lo, tol_hi = BOOT_TOL[level]
    assert abs(ci.lower - ref.lower) < tol_lo and abs(ci.upper - ref.upper) < tol_hi
    assert ci.point == pytest.approx(ncorr.correlate(X.T, Z.T, level, "pearson"), abs=1e-12)
    for other in ("systems", "documents"):
        o = bootstrap_ci(X, Z, level, "pearson", other, 5000, seed=0)
        assert abs(o.lower - ref.lower) > tol_lo or abs(o.upper - ref.upper) > tol_hi


# ----------------------------------------------------------------------------------------------- permutation


def _meta_eval_swaps(seed, resample, n, n_docs, n_systems):
    """An nlpstats permutation method that replays meta-eval's swap masks for ``seed`` (drawn as in
    resampling._permutation_counts: ``rng.random((n, *mask_shape)) < 0.5``), transposed to systems x inputs."""
    shape = {"both": (n_docs, n_systems), "systems": (1, n_systems), "documents": (n_docs, 1)}[resample]
    masks = iter(np.random.default_rng(seed).random((n, *shape)) < 0.5)

    def method(A, B):
        m = next(masks).T
        return np.where(m, B, A), np.where(m, A, B)
    return method


PERM_CASES = [(level, kind, resample) for level in ("system", "global") for kind in KINDS
              for resample in ("both", "systems", "documents")]
PERM_CASES += [("summary", "pearson", "both"), ("summary", "spearman", "systems"), ("summary", "kendall", "documents")]


@pytest.mark.parametrize("level,kind,resample", PERM_CASES)
def test_permutation_same_swaps_equal(level, kind, resample):
    """permutation_test(X, Y, Z, seed=5) == ncorr.permutation_test(X.T, Y.T, Z.T, alternative="greater") fed the
    same swap masks (both standardise X and Y over all cells first, so Y is put on another scale; one-sided share
    of delta >= observed, no +1).
    Tied quarter-step scores at the summary and global levels; continuous scores at the system level, where the
    standardised means would otherwise carry float-rounded ties (see the module docstring)."""
    small = level == "summary"
    X, Y, Z = synthetic(4, n_docs=8 if small else 20, n_systems=7 if small else 9,
                        scores="continuous" if level == "system" else "tied")
    Y = 8.0 * Y + 2.0  # another scale, exactly: what the standardisation is for
    n = 60 if small else 300
    p = permutation_test(X, Y, Z, level, kind, n, seed=5, resample=resample)
    ref = nl(ncorr.permutation_test, X.T, Y.T, Z.T, NL_LEVEL[level], kind,
             _meta_eval_swaps(5, resample, n, *Z.shape), alternative="greater", n_resamples=n)
    assert 0.0 < p < 1.0
    assert p == pytest.approx(ref.pvalue, abs=1e-12)


def test_permutation_own_draws_agree_within_monte_carlo_error(summeval, global_rng):
    """SummEval, system level, Pearson, ROUGE-1-like vs ROUGE-2-like (a middling p): permutation_test (seed 0,
    2,000 permutations) "systems" / "documents" against ncorr.permutation_test "systems" / "inputs" with
    numpy's global RNG seeded 0: |difference| < 0.05 (3.2 standard errors at p = 0.4), while the two methods differ
    by about 0.085 (p about 0.39 and 0.30 at 4,000 permutations); a clear case (global level) gives 0 for both."""
    A, B, Z = summeval["rouge1"], summeval["rouge2"], summeval["Z"]
    ps = {}
    for resample in ("systems", "documents"):
        global_rng(0)
        ref = nl(ncorr.permutation_test, A.T, B.T, Z.T, "system", "pearson", NL_METHOD[resample],
                 alternative="greater", n_resamples=2000).pvalue
        ps[resample] = permutation_test(A, B, Z, "system", "pearson", 2000, seed=0, resample=resample)
        assert 0.2 < ps[resample] < 0.5
        assert abs(ps[resample] - ref) < 0.05
    assert ps["systems"] - ps["documents"] > 0.05
    global_rng(0)
    clear = nl(ncorr.permutation_test, A.T, B.T, Z.T, "global", "pearson", "both", alternative="greater",
               n_resamples=300).pvalue
    assert clear == permutation_test(A, B, Z, "global", "pearson", 300, seed=0, resample="both") == 0.0
