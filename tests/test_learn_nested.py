"""``learn`` as a paper reports it (issue 35, bullet 6): nested cross-validation (features and alpha chosen inside
each training part only), a real interval (document bootstrap of the pooled held-out predictions), paired tests
against the best single feature and the baseline on the same rows and draws, and ``run -m learned:NAME`` on its
training rows claiming no significance unless ``--allow-in-sample``."""
from __future__ import annotations

import json
from itertools import combinations

import numpy as np
import pytest
from scipy.stats import spearmanr
from sklearn.linear_model import Ridge
from sklearn.preprocessing import StandardScaler
from typer.testing import CliRunner

from meta_eval.cli import app
from meta_eval.learning import nested as N
from meta_eval.metrics.learned import ENV_HOME

runner = CliRunner()


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    monkeypatch.setenv(ENV_HOME, str(tmp_path / "home"))
    return tmp_path / "home"


def data(n_docs=40, per=4, seed=0):
    rng = np.random.default_rng(seed)
    groups = np.repeat([f"d{i}" for i in range(n_docs)], per)
    doc = np.repeat(rng.normal(size=n_docs), per)
    a, b, c = rng.normal(size=(3, n_docs * per))
    y = a + 0.6 * b + 0.5 * doc + rng.normal(size=n_docs * per)
    return {"a": a + 0.3 * doc, "b": b, "c": c}, y, groups


def said(res) -> str:
    return " ".join(res.output.split())


# -- the procedure -------------------------------------------------------------------------------------------------
def test_folds_keep_each_document_on_one_side():
    _, _, groups = data()
    folds = N.fold_ids(len(groups), groups, 5, 0)
    for g in set(groups):
        assert len(set(folds[groups == g])) == 1
    assert sorted(np.bincount(folds).tolist()) == [32] * 5  # 40 documents dealt round-robin: 8 per fold
    with pytest.raises(ValueError, match="5 folds need at least 5 documents, got 3"):
        N.fold_ids(9, np.repeat(["x", "y", "z"], 3), 5, 0)


def test_held_out_rows_never_influence_what_is_evaluated_on_them():
    """Replace the target of one outer fold's rows by noise: that fold's choice (features, alpha), weights and
    predictions do not move; the paper's protocol chose the features on the very splits it reported."""
    cols, y, groups = data()
    res = N.nested_cv(cols, y, groups, resamples=50, seed=3)
    folds = N.fold_ids(len(y), groups, 5, 3)
    for f in (0, 4):
        y2 = y.copy()
        y2[folds == f] = np.random.default_rng(f).normal(size=(folds == f).sum()) * 100
        res2 = N.nested_cv(cols, y2, groups, resamples=50, seed=3)
        a, b = res.fold_results[f], res2.fold_results[f]
        assert (a.features, a.alpha, a.inner, a.weights, a.intercept) == (b.features, b.alpha, b.inner, b.weights,
                                                                         b.intercept)
        assert np.array_equal(res.predictions[folds == f], res2.predictions[folds == f])


def test_inner_choice_is_the_argmax_of_a_hand_cross_validation():
    """Every (feature set, alpha) scored by sklearn Ridge on the inner folds by hand; the chosen pair is the best
    mean inner held-out Spearman (ties: smaller set, then the alpha nearest the paper's 1, then the larger), and
    alpha is not fixed at 1."""
    cols, y, groups = data(n_docs=30, per=3, seed=1)
    x = np.column_stack(list(cols.values()))
    alphas = (0.1, 1.0, 100.0)
    pick = N._select(x, y, groups, "exhaustive", 3, alphas, 5, [7, 1], "spearman", 0.001)
    inner = N.fold_ids(len(y), groups, 5, [7, 1])
    table = {}
    for size in (1, 2, 3):
        for idx in combinations(range(3), size):
            for a in alphas:
                rs = []
                for f in range(5):
                    tr, te = inner != f, inner == f
                    sc = StandardScaler().fit(x[tr][:, idx])
                    m = Ridge(alpha=a).fit(sc.transform(x[tr][:, idx]), y[tr])
                    rs.append(spearmanr(m.predict(sc.transform(x[te][:, idx])), y[te]).statistic)
                table[(idx, a)] = np.mean(rs)
    best = min(table, key=lambda k: (-round(table[k], 10), len(k[0]), abs(np.log10(k[1])), -k[1]))
    assert (pick["idx"], pick["alpha"]) == best
    assert pick["inner"] == pytest.approx(table[best], abs=1e-10)


def test_one_feature_ties_every_alpha_and_keeps_the_papers():
    """One feature: every alpha predicts a positive multiple of it plus a constant, so every inner correlation ties;
    the tie goes to the paper's alpha 1, not to 1000 (which shrank the slope to 400/1400 of it on 400 rows and let
    the folds' intercepts drive the pooled predictions)."""
    cols, y, groups = data(seed=8)
    one = {"a": cols["a"]}
    res = N.nested_cv(one, y, groups, resamples=20, seed=2)
    assert [fr.alpha for fr in res.fold_results] == [1.0] * 5 and res.alpha == 1.0
    x = one["a"][:, None]
    pick = N._select(x, y, groups, "none", 1, N.ALPHAS, 5, [2, 0], "spearman", 0.0)
    inner = N.fold_ids(len(y), groups, 5, [2, 0])
    per_alpha = []
    for a in N.ALPHAS:  # by hand with sklearn: the same inner mean for every alpha
        rs = []
        for f in range(5):
            tr, te = inner != f, inner == f
            sc = StandardScaler().fit(x[tr])
            rs.append(spearmanr(Ridge(alpha=a).fit(sc.transform(x[tr]), y[tr]).predict(sc.transform(x[te])),
                                y[te]).statistic)
        per_alpha.append(np.mean(rs))
    assert max(per_alpha) - min(per_alpha) < 1e-12 and pick["alpha"] == 1.0
    assert sorted((0.01, 10.0, 0.1, 100.0), key=N.tie_rank) == [10.0, 0.1, 100.0, 0.01]  # log distance, then larger


def test_predictions_are_sklearn_fits_of_each_folds_choice():
    cols, y, groups = data(seed=2)
    res = N.nested_cv(cols, y, groups, resamples=20, seed=5)
    x = np.column_stack(list(cols.values()))
    folds = N.fold_ids(len(y), groups, 5, 5)
    names = list(cols)
    for fr in res.fold_results:
        idx = [names.index(f) for f in fr.features]
        tr, te = folds != fr.fold, folds == fr.fold
        sc = StandardScaler().fit(x[tr][:, idx])
        m = Ridge(alpha=fr.alpha).fit(sc.transform(x[tr][:, idx]), y[tr])
        assert res.predictions[te] == pytest.approx(m.predict(sc.transform(x[te][:, idx])), abs=1e-9)
        assert fr.correlation == pytest.approx(spearmanr(res.predictions[te], y[te]).statistic, abs=1e-12)
    assert res.value == pytest.approx(spearmanr(res.predictions, y).statistic, abs=1e-12)


def test_interval_and_paired_tests_are_one_document_bootstrap_by_hand():
    cols, y, groups = data(seed=4)
    res = N.nested_cv(cols, y, groups, resamples=200, seed=11, baseline="c")
    # the same draws by hand: documents with replacement, each bringing its rows
    docs = np.unique(groups)
    rng = np.random.default_rng([11, 10_000])
    draws = rng.integers(0, len(docs), size=(200, len(docs)))
    single = {f: spearmanr(v, y).statistic for f, v in cols.items()}
    best = max(single, key=single.get)
    learned, other = [], {best: [], "c": []}
    for d in draws:
        rows = np.concatenate([np.flatnonzero(groups == docs[i]) for i in d])
        learned.append(spearmanr(res.predictions[rows], y[rows]).statistic)
        for f in other:
            other[f].append(spearmanr(cols[f][rows], y[rows]).statistic)
    learned = np.array(learned)
    assert [res.low, res.high] == pytest.approx(np.percentile(learned, [2.5, 97.5]).tolist(), abs=1e-10)
    roles = {c.role: c for c in res.comparisons}
    assert roles["best single feature"].feature == best and roles["baseline"].feature == "c"
    for c in res.comparisons:
        d = learned - np.array(other[c.feature])
        p = min(1.0, 2 * (min((d <= 0).sum(), (d >= 0).sum()) + 1) / 201)
        assert c.p == pytest.approx(p)
        assert c.difference == pytest.approx(res.value - single[c.feature])
        assert [c.diff_low, c.diff_high] == pytest.approx(np.percentile(d, [2.5, 97.5]).tolist(), abs=1e-10)
    assert roles["baseline"].p < 0.05  # c is noise
    assert "percentile bootstrap over documents (200 resamples" in res.interval_label()


def test_weights_spread_over_folds():
    cols, y, groups = data(seed=6)
    res = N.nested_cv(cols, y, groups, resamples=20)
    for name, w in res.weights.items():
        per = [dict(zip(f.features, f.weights)).get(name, 0.0) for f in res.fold_results]
        assert w["mean"] == pytest.approx(np.mean(per)) and w["sd"] == pytest.approx(np.std(per, ddof=1))
        assert w["folds_chosen"] == sum(name in f.features for f in res.fold_results)


def test_overstatement_is_worded_by_sign_and_size():
    from meta_eval.report.tables import overstatement_words

    assert "agree" in overstatement_words(0.0001) and "overstates" not in overstatement_words(0.0001)
    assert "overstates by 0.0120" in overstatement_words(0.012)
    assert "overstates" not in overstatement_words(-0.012) and "0.0120 less" in overstatement_words(-0.012)


# -- the command ---------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def learned(shared_data, tmp_path_factory):
    """One nested learn on chaganty (rouge, sms), saved as `mine` in a module-wide home."""
    import os

    folder = tmp_path_factory.mktemp("nested")
    old = os.environ.get(ENV_HOME)
    os.environ[ENV_HOME] = str(folder / "home")
    out = folder / "learn.json"
    cache = str(folder / "cache.sqlite")
    res = runner.invoke(app, ["learn", "-j", "chaganty", "--data-dir", str(shared_data), "--cache", cache,
                              "-m", "rouge,sms", "--features", "rouge1-r,rouge2-r,rougeL-f,sms", "--resamples", "200",
                              "--save", "mine", "--output", str(out)])
    if old is None:
        del os.environ[ENV_HOME]
    else:
        os.environ[ENV_HOME] = old
    return {"res": res, "doc": json.loads(out.read_text()) if out.exists() else None, "folder": folder,
            "cache": cache}


def test_cli_learn_reports_the_nested_estimate_tests_and_folds(learned):
    res, doc = learned["res"], learned["doc"]
    assert res.exit_code == 0, res.output
    assert doc["protocol"] == "nested" and "results" not in doc
    nd = doc["nested"]
    assert nd["folds"] == 5 and nd["inner_folds"] == 5 and nd["grouped"] and nd["alphas"] == list(N.ALPHAS)
    assert "5 outer folds by document" in nd["scheme"] and "inner cross-validation" in nd["scheme"]
    h = nd["heldout"]
    assert h["ci"][0] < h["value"] < h["ci"][1] and h["resamples"] == 200
    roles = {c["role"]: c for c in nd["comparisons"]}
    assert roles["best single feature"]["feature"] == "sms" and roles["baseline"]["feature"] == "rougeL-f"
    assert len(nd["per_fold"]) == 5 and all(f["alpha"] in N.ALPHAS and f["features"] for f in nd["per_fold"])
    assert doc["model"]["features"] == doc["best"] == nd["final"]["features"]
    assert doc["model"]["alpha"] == nd["final"]["alpha"] and doc["model"]["heldout"]["value"] == h["value"]
    text = said(res)
    # the table shows the JSON's numbers
    from meta_eval.report.tables import fmt, fmt_p

    assert f"│ {fmt(h['value'])} │ [{fmt(h['ci'][0])}, {fmt(h['ci'][1])}] │" in text
    for c in nd["comparisons"]:
        assert f"│ {fmt(c['value'])} │ [{fmt(c['ci'][0])}, {fmt(c['ci'][1])}] │ {c['difference']:+.3f} │ " \
               f"[{fmt(c['difference_ci'][0])}, {fmt(c['difference_ci'][1])}] │ {fmt_p(c['p'], 200)} │" in text
    assert "two-sided paired bootstrap test" in text and "95% percentile bootstrap over documents" in text
    for f in nd["per_fold"]:
        assert " + ".join(f["features"]) in text


def test_cli_learn_paper_options_belong_to_the_paper_protocol(shared_data, tmp_path):
    res = runner.invoke(app, ["learn", "-j", "chaganty", "--data-dir", str(shared_data), "--no-cache", "-m", "rouge",
                              "--splits", "20"])
    assert res.exit_code == 2 and "--splits: option(s) of --protocol paper" in said(res)
    res = runner.invoke(app, ["learn", "--protocol", "paper", "-j", "chaganty", "--data-dir", str(shared_data),
                              "--no-cache", "-m", "rouge", "--baseline", "rouge1-f"])
    assert res.exit_code == 2 and "--baseline: option(s) of --protocol nested" in said(res)
    res = runner.invoke(app, ["learn", "-j", "chaganty", "--data-dir", str(shared_data), "--no-cache", "-m", "rouge",
                              "--alphas", "1,x"])
    assert res.exit_code == 2 and "--alphas: 'x' is not a number" in said(res)


def test_learn_api_gives_the_cli_document(learned, shared_data):
    from meta_eval import learn

    res = learn("chaganty", "rouge,sms", features="rouge1-r,rouge2-r,rougeL-f,sms", resamples=200,
                data_dir=shared_data, cache=learned["cache"], progress=False)
    got, want = res.to_dict(), dict(learned["doc"])
    for d in (got, want):
        for key in ("timing", "learn_seconds", "wall_seconds", "saved", "written_by"):
            d.pop(key, None)
        d["model"].pop("created", None)
    assert got["provenance"].pop("command") is None  # a library call records none, the command line its own
    assert want["provenance"].pop("command").startswith("meta-eval learn -j chaganty")
    assert got == want
    frame = res.to_frame()
    assert frame["value"].iloc[0] == res.nested.value and frame["p"].iloc[1] == res.nested.comparisons[0].p


def test_run_on_the_training_rows_claims_no_significance(learned, shared_data, monkeypatch):
    monkeypatch.setenv(ENV_HOME, str(learned["folder"] / "home"))
    base = ["run", "-j", "chaganty", "--data-dir", str(shared_data), "--cache", learned["cache"], "-m",
            "learned:mine,sms", "--baseline", "sms", "--resamples", "100"]
    out = learned["folder"] / "run.json"
    res = runner.invoke(app, base + ["--output", str(out), "--force"])
    assert res.exit_code == 0, res.output
    text = said(res)
    reading = text[text.index("reading:"):text.index("statistic:")]
    assert "significantly better" not in reading and "in-sample" in reading and "--allow-in-sample" in reading
    assert "withheld (in-sample)" in text and "no significance is claimed for it (pass --allow-in-sample" in text
    doc = json.loads(out.read_text())
    entry = next(r for r in doc["results"] if r["metric"] == "learned:mine")
    assert entry["in_sample"] is True and entry["williams_p_vs_baseline"] is None
    # nor its own correlation's p-value (audit, session 37: p = 5.5e-23 beside "no significance is claimed")
    assert entry["spearman_p"] is entry["pearson_p"] is entry["kendall_p"] is None
    assert isinstance(next(r for r in doc["results"] if r["metric"] == "sms")["spearman_p"], float)
    assert doc["in_sample"] == {"variants": ["learned:mine"], "tests_withheld": ["learned:mine"], "allowed": False,
                                "flag": "--allow-in-sample"}
    res = runner.invoke(app, base + ["--output", str(out), "--force", "--allow-in-sample"])
    assert res.exit_code == 0, res.output
    doc = json.loads(out.read_text())
    entry = next(r for r in doc["results"] if r["metric"] == "learned:mine")
    assert isinstance(entry["williams_p_vs_baseline"], float) and doc["in_sample"]["allowed"] is True
    assert isinstance(entry["spearman_p"], float)
    assert "tested anyway" in said(res)


def test_run_in_sample_pvalue_matrix_is_nan_for_the_learned_variant(learned, shared_data, monkeypatch):
    from meta_eval import run

    monkeypatch.setenv(ENV_HOME, str(learned["folder"] / "home"))
    res = run("chaganty", ["learned:mine", "sms", "rouge"], baseline="sms", level="summary", resamples=50,
              data_dir=shared_data, cache=learned["cache"], progress=False)
    m = res.pvalue_matrix()
    i = m.variants.index("learned:mine")
    assert np.isnan(m.p[i]).all() and np.isnan(m.p[:, i]).all()
    assert res.pvalues_vs_baseline["learned:mine"] is None and res.pvalues_vs_baseline["rouge1-f"] is not None


def test_cli_learn_nested_on_one_document_folds_by_row(shared_data, tmp_path):
    from meta_eval import judgments

    rows = judgments.load("chaganty", shared_data).rows[:40]
    one_doc = tmp_path / "one.jsonl"
    one_doc.write_text("".join(json.dumps({"id": r.id, "doc_id": "d0", "system": r.system, "candidate": r.candidate,
                                           "references": list(r.references), "scores": dict(r.scores)}) + "\n"
                               for r in rows))
    out = tmp_path / "one.json"
    res = runner.invoke(app, ["learn", "-j", str(one_doc), "--no-cache", "-m", "rouge", "--features",
                              "rouge1-f,rouge2-f,rougeL-f", "--resamples", "50", "--output", str(out)])
    assert res.exit_code == 0, res.output
    assert "the nested protocol's folds by document need at least 3" in said(res)
    assert "so its folds and bootstrap are by row" in said(res)
    nd = json.loads(out.read_text())["nested"]
    assert not nd["grouped"] and "5 outer folds by row" in nd["scheme"] and "over rows" in nd["heldout"]["interval"]
    assert sum(f["test_rows"] for f in nd["per_fold"]) == 40


def test_a_feature_with_last_bit_noise_keeps_the_papers_alpha_in_every_fold():
    """F = 2PR/(P+R) computed with P and R in either order: equal scores that differ in the last bit, as ROUGE's F
    (chaganty's rougeL-f holds 330 such pairs). The prediction w * (x - mean) merged or separated such a pair
    depending on w, the one-feature model's inner Spearman moved by ~1e-5 from alpha to alpha, and the folds chose
    alphas 100, 1, 1, 1000, 0.1 by that noise instead of the paper's 1 on the tie."""
    from meta_eval.metrics.learned_format import canonical_features

    rng = np.random.default_rng(0)
    n = 1200
    p, r = rng.integers(1, 12, n) / (m := rng.integers(12, 30, n)), rng.integers(1, 12, n) / m
    f = np.where(rng.random(n) < 0.5, 2 * r * p / (r + p), 2 * p * r / (p + r))
    assert len(set(f.tolist())) > len(set(canonical_features(f).tolist()))  # equal values with other bits
    res = N.nested_cv({"f": f}, f + rng.normal(0, 0.3, n), np.arange(n) // 4, resamples=10, seed=0)
    assert [fr.alpha for fr in res.fold_results] == [1.0] * 5 and res.alpha == 1.0
