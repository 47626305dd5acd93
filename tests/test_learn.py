"""The learned metric (Scialom et al. 2019, sec. 2.4): repeated-split ridge, subset search, saved models, learned:x."""
from __future__ import annotations

import json

import numpy as np
import pytest
from scipy.stats import kendalltau, pearsonr, rankdata, spearmanr
from sklearn.linear_model import Ridge
from sklearn.preprocessing import StandardScaler
from typer.testing import CliRunner

from meta_eval import metrics
from meta_eval.cli import app
from meta_eval.judgments.base import Judgment, JudgmentSet
from meta_eval.learning import ridge as L
from meta_eval.metrics import Example
from meta_eval.metrics.learned import ENV_HOME, LearnedMetric, models_dir

runner = CliRunner()


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    """Learned models go to a temporary META_EVAL_HOME, never the user's data dir."""
    monkeypatch.setenv(ENV_HOME, str(tmp_path / "home"))
    return tmp_path / "home"


def synthetic(n=1200, seed=0, noise=0.5):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 3)) * [1.0, 4.0, 0.25] + [0.0, 10.0, 3.0]
    y = 2.0 * x[:, 0] - 0.5 * x[:, 1] + 4.0 * x[:, 2] + 5.0 + noise * rng.normal(size=n)
    groups = np.repeat([f"d{i}" for i in range(n // 4)], 4)
    return x, y, groups


# -- the protocol ---------------------------------------------------------------------------------------------------
def test_ridge_recovers_known_coefficients_on_both_scales():
    x, y, groups = synthetic(noise=0.1)
    res = L.learn_ridge(x, y, groups, alpha=1.0, n_splits=200, seed=1, feature_names=["a", "b", "c"])
    for proto in (res.grouped, res.ungrouped):
        assert proto.weight_raw_mean == pytest.approx([2.0, -0.5, 4.0], abs=0.05)
        assert proto.intercept_raw[0] == pytest.approx(5.0, abs=0.3)
        # standardised weight = raw weight x the feature's sd (by hand, with the population sd of all rows)
        assert proto.weight_std_mean == pytest.approx(np.array([2.0, -0.5, 4.0]) * x.std(axis=0), rel=0.03)
        # standardised intercept = mean of the training target
        assert proto.intercept_std[0] == pytest.approx(y.mean(), abs=0.05)
        assert proto.mean > 0.95 and proto.low <= proto.mean <= proto.high and proto.n_undefined == 0
    assert res.overstatement == pytest.approx(res.ungrouped.mean - res.grouped.mean)
    means, stds, w, b = L.fit_final(x, y, 1.0)
    assert w / stds == pytest.approx([2.0, -0.5, 4.0], abs=0.05)
    assert b - np.sum(w / stds * means) == pytest.approx(5.0, abs=0.3)


@pytest.mark.parametrize("kind,func", [("spearman", spearmanr), ("pearson", pearsonr),
                                       ("kendall", lambda a, b: kendalltau(a, b, variant="b"))])
@pytest.mark.parametrize("grouped", [False, True])
def test_one_split_equals_sklearn_ridge_and_scipy(kind, func, grouped):
    x, y, groups = synthetic(n=200, noise=8.0)
    x[:, 0] = np.round(x[:, 0], 1)  # ties
    g = groups if grouped else None
    res = L.learn_ridge(x, y, g, alpha=3.0, n_splits=1, seed=7, kind=kind)
    train = L.make_splits(len(y), g, 1, 0.5, 7)[0]
    scaler = StandardScaler().fit(x[train])
    ridge = Ridge(alpha=3.0).fit(scaler.transform(x[train]), y[train])
    pred = ridge.predict(scaler.transform(x[~train]))
    proto = res.grouped if grouped else res.ungrouped
    assert proto.weight_std_mean == pytest.approx(ridge.coef_, rel=1e-9)
    assert proto.weight_raw_mean == pytest.approx(ridge.coef_ / scaler.scale_, rel=1e-9)
    assert proto.intercept_std[0] == pytest.approx(ridge.intercept_, rel=1e-9)
    assert proto.intercept_raw[0] == pytest.approx(ridge.intercept_ - np.sum(ridge.coef_ / scaler.scale_ *
                                                                             scaler.mean_), rel=1e-9)
    assert proto.mean == pytest.approx(func(pred, y[~train]).statistic, rel=1e-9)


def test_average_ranks_match_scipy():
    rng = np.random.default_rng(3)
    a = np.round(rng.normal(size=(40, 50)), 1)
    a[::3] = rng.normal(size=a[::3].shape)
    assert L._average_ranks(a) == pytest.approx(rankdata(a, axis=1))


def test_grouped_splits_never_share_a_document():
    x, y, groups = synthetic(n=400)
    masks = L.make_splits(len(y), groups, 50, 0.5, seed=0)
    for train in masks:
        assert not set(groups[train]) & set(groups[~train])
        assert len(set(groups[train])) == 50  # half of the 100 documents
    ungrouped = L.make_splits(len(y), None, 50, 0.5, seed=0)
    assert all(m.sum() == 200 for m in ungrouped)
    assert any(set(groups[m]) & set(groups[~m]) for m in ungrouped)  # what the grouped protocol prevents


def test_same_seed_same_numbers():
    x, y, groups = synthetic(noise=6.0)
    a = L.learn_ridge(x, y, groups, n_splits=100, seed=5)
    b = L.learn_ridge(x, y, groups, n_splits=100, seed=5)
    c = L.learn_ridge(x, y, groups, n_splits=100, seed=6)
    assert a == b and np.array_equal(a.grouped.correlations, b.grouped.correlations)
    assert a.as_dict() == b.as_dict()
    assert a.grouped.mean != c.grouped.mean


def test_subset_search_ranks_the_features_that_matter_first():
    rng = np.random.default_rng(11)
    n = 800
    x = rng.normal(size=(n, 4))
    y = x[:, 0] + x[:, 2] + 0.8 * rng.normal(size=n)
    groups = np.repeat(np.arange(n // 4), 4)
    feats = {f"f{i}": x[:, i] for i in range(4)}
    results = L.search_subsets(feats, y, groups, n_splits=100, seed=0)
    assert len(results) == 15
    assert results[0].features == ("f0", "f2")
    scores = [r.score for r in results]
    assert scores == sorted(scores, reverse=True)
    # one seed for all subsets: the same splits (paired), so the full model's splits match a lone fit's
    full = next(r for r in results if r.size == 4)
    alone = L.learn_ridge(x, y, groups, n_splits=100, seed=0, feature_names=list(feats))
    assert np.allclose(full.grouped.correlations, alone.grouped.correlations)
    assert len(L.search_subsets(feats, y, groups, max_size=2, n_splits=10)) == 4 + 6
    with pytest.raises(ValueError, match="exceed the cap"):
        L.search_subsets(feats, y, groups, n_splits=10, max_subsets=10)


def test_bad_inputs_are_clear():
    x, y, groups = synthetic(n=40)
    with pytest.raises(ValueError, match="finite"):
        L.learn_ridge(np.where(np.arange(40)[:, None] == 3, np.nan, x), y)
    with pytest.raises(ValueError, match="correlation kind"):
        L.learn_ridge(x, y, kind="cosine")
    with pytest.raises(ValueError, match="groups"):
        L.learn_ridge(x, y, groups[:10])



# -- search strategies ----------------------------------------------------------------------------------------------
def two_of_fourteen(n=1000, seed=4):
    """y depends on f2 and f5 only; the 12 other features are noise, made exactly uncorrelated (in this sample) with
    y, f2 and f5, so adding one can only fit noise of the training half. f2 is the stronger of the two."""
    rng = np.random.default_rng(seed)
    signal = rng.normal(size=(n, 2))
    y = signal[:, 0] + 0.7 * signal[:, 1] + rng.normal(size=n)
    basis = np.column_stack([np.ones(n), y, signal])
    noise = rng.normal(size=(n, 12))
    noise -= basis @ np.linalg.lstsq(basis, noise, rcond=None)[0]
    cols = list(noise.T)
    cols.insert(2, signal[:, 0])
    cols.insert(5, signal[:, 1])
    groups = np.repeat([f"d{i}" for i in range(n // 5)], 5)
    return {f"f{i}": c for i, c in enumerate(cols)}, y, groups


def test_choose_strategy_switches_at_the_cap():
    assert L.MAX_SUBSETS == 1024
    assert L.choose_strategy(10)[0] == "exhaustive"  # 2**10 - 1 = 1,023 subsets
    how, why = L.choose_strategy(11)  # 2,047
    assert how == "greedy-forward" and "2,047 subsets of 11 features exceed the cap of 1,024" in why
    assert L.choose_strategy(11, max_size=3)[0] == "exhaustive"  # 11 + 55 + 165 = 231
    assert L.choose_strategy(4, max_subsets=15)[0] == "exhaustive"
    assert L.choose_strategy(4, max_subsets=14)[0] == "greedy-forward"
    assert L.choose_strategy(3, strategy="greedy")[0] == "greedy-forward"
    assert L.choose_strategy(30, strategy="none")[0] == "none"
    with pytest.raises(ValueError, match="exceed the cap"):
        L.choose_strategy(11, strategy="exhaustive")
    with pytest.raises(ValueError, match="unknown search strategy"):
        L.choose_strategy(3, strategy="best")
    with pytest.raises(ValueError, match="max_size"):
        L.choose_strategy(3, max_size=0)


def test_screening_splits_are_a_prefix_of_the_full_splits():
    _, y, groups = two_of_fourteen(n=200)
    for g in (None, groups):
        assert np.array_equal(L.make_splits(200, g, 40, 0.5, seed=3)[:10], L.make_splits(200, g, 10, 0.5, seed=3))


def test_greedy_finds_the_two_features_that_matter():
    feats, y, groups = two_of_fourteen()
    out = L.select_features(feats, y, groups, n_splits=200, search_splits=50, seed=0)
    assert out.strategy == "greedy-forward" and "16,383 subsets of 14 features exceed the cap" in out.reason
    assert [p["added"] for p in out.path] == ["f2", "f5", out.path[2]["added"]]
    assert [p["accepted"] for p in out.path] == [True, True, False]
    assert out.evaluated == 14 + 13 + 12 and out.screened and out.search_splits == 50
    assert out.best.features == ("f2", "f5")
    assert [r.features for r in out.results] == [("f2", "f5"), ("f2",)]
    assert "does not improve the mean" in out.stopped
    # every reported number comes from the declared protocol: the same as learn_ridge on all 200 splits ...
    for r in out.results:
        alone = L.learn_ridge(np.column_stack([feats[f] for f in r.features]), y, groups, n_splits=200, seed=0)
        assert r.grouped.n_splits == 200 and r.grouped.mean == pytest.approx(alone.grouped.mean, abs=1e-12)
        assert r.ungrouped.mean == pytest.approx(alone.ungrouped.mean, abs=1e-12)
    # ... and the screening means are the grouped means on the first 50 of those splits
    for features, mean in out.screening:
        first = L.learn_ridge(np.column_stack([feats[f] for f in features]), y, groups, n_splits=50, seed=0)
        assert mean == pytest.approx(first.grouped.mean, abs=1e-12)
    doc = out.as_dict()
    assert doc["strategy"] == "greedy-forward" and doc["evaluated"] == 39 and doc["finalists"] == 2
    assert doc["path"][1]["features"] == ["f2", "f5"] and json.dumps(doc)


def test_greedy_limits_and_min_gain():
    feats, y, groups = two_of_fourteen()
    one = L.select_features(feats, y, groups, strategy="greedy", max_size=1, n_splits=50)
    assert one.best.features == ("f2",) and one.stopped == "reached the maximum size 1" and one.evaluated == 14
    # f5 adds about 0.15 to the held-out correlation: a min_gain above that stops after f2
    strict = L.select_features(feats, y, groups, n_splits=50, min_gain=0.3)
    assert strict.best.features == ("f2",) and not strict.path[-1]["accepted"]
    # without groups the ungrouped protocol ranks, and there are no grouped results
    flat = L.select_features(feats, y, None, n_splits=50)
    assert flat.best.features == ("f2", "f5") and flat.best.grouped is None


def test_exhaustive_with_screening_keeps_the_finalists():
    feats, y, groups = two_of_fourteen(n=600)
    six = {f: feats[f] for f in ("f0", "f1", "f2", "f3", "f4", "f5")}
    full = L.select_features(six, y, groups, n_splits=120, search_splits=120)
    assert full.strategy == "exhaustive" and not full.screened and len(full.results) == 63 == full.evaluated
    assert [r.features for r in full.results] == [r.features for r in L.search_subsets(six, y, groups, n_splits=120)]
    screened = L.select_features(six, y, groups, n_splits=120, search_splits=30, finalists=5)
    assert screened.screened and screened.evaluated == 63 and len(screened.results) == 5
    assert screened.best.features == full.best.features == ("f2", "f5")
    by_features = {r.features: r for r in full.results}
    for r in screened.results:  # finalists carry the full-protocol numbers
        assert r.grouped.mean == pytest.approx(by_features[r.features].grouped.mean, abs=1e-12)
    # few subsets: nothing to screen, every subset on every split
    small = L.select_features({f: feats[f] for f in ("f2", "f5", "f7")}, y, groups, n_splits=60, search_splits=10)
    assert not small.screened and small.search_splits == 60 and len(small.results) == 7
    none = L.select_features(six, y, groups, strategy="none", n_splits=30)
    assert none.strategy == "none" and [r.size for r in none.results] == [6]


def test_search_is_reproducible():
    feats, y, groups = two_of_fourteen(n=400)
    a = L.select_features(feats, y, groups, n_splits=80, search_splits=20, seed=9)
    b = L.select_features(feats, y, groups, n_splits=80, search_splits=20, seed=9)
    c = L.select_features(feats, y, groups, n_splits=80, search_splits=20, seed=10)
    assert a.as_dict() == b.as_dict() and [r.as_dict() for r in a.results] == [r.as_dict() for r in b.results]
    assert a.best.grouped.mean != c.best.grouped.mean


def test_which_metrics_are_skipped_and_which_stop_the_run():
    from meta_eval.learning.pipeline import document_groups, split_skipped

    skipped = [("textrank", "needs source documents, which chaganty does not have"),
               ("moverscore", "the default model is not available offline here")]
    inapplicable, blocking = split_skipped(skipped, has_sources=False, has_references=True)
    assert [n for n, _ in inapplicable] == ["textrank"] and "source documents" in inapplicable[0][1]
    assert blocking == [("moverscore", "the default model is not available offline here")]
    inapplicable, blocking = split_skipped(skipped, has_sources=True, has_references=False)
    assert [n for n, _ in inapplicable] == ["moverscore"] and [n for n, _ in blocking] == ["textrank"]
    one_doc = JudgmentSet("one", [Judgment(id=f"r{i}", doc_id="d", system="s", candidate="c", references=("r",),
                                           scores={"a": float(i)}) for i in range(3)], ("a",), "a")
    groups, note = document_groups(one_doc)
    assert groups is None and "1 document" in note

# -- the target -----------------------------------------------------------------------------------------------------
def jset_of(values_a, values_b):
    rows = [Judgment(id=f"r{i}", doc_id=f"d{i}", system="s", candidate="c", references=("r",),
                     scores={"a": a, "b": b}) for i, (a, b) in enumerate(zip(values_a, values_b))]
    return JudgmentSet("toy", rows, ("a", "b"), "a")


def test_geomean_target_by_hand():
    js = jset_of([-1.0, 0.0, 1.0, None], [0.0, 10.0, 5.0, 3.0])
    # a in [-1, 1] -> [1, 2]: 1, 1.5, 2; b in [0, 10] -> 1, 2, 1.5 (the row without a is left out of the ranges)
    got = L.target_values(js, "geomean:a,b")
    assert got[:3] == pytest.approx([1.0, np.sqrt(3.0), np.sqrt(3.0)])
    assert np.isnan(got[3])
    assert L.target_values(js, "b") == pytest.approx([0.0, 10.0, 5.0, 3.0])
    kept, y = L.target_set(js, "geomean:a, b")
    assert [r.id for r in kept.rows] == ["r0", "r1", "r2"] and y == pytest.approx(got[:3])
    with pytest.raises(ValueError, match="constant"):
        L.target_values(jset_of([1.0, 1.0], [0.0, 1.0]), "geomean:a,b")
    with pytest.raises(ValueError, match="two or more"):
        L.target_values(js, "geomean:a")
    with pytest.raises(ValueError, match="no human dimension 'c'"):
        L.target_values(js, "geomean:a,c")


# -- saved models and the learned metric ----------------------------------------------------------------------------
TEXTS = [("The cat sat on the mat.", "A cat was sitting on the mat."),
         ("Barack Obama visited Paris yesterday.", "The president visited France."),
         ("The team won the big game.", "John Smith won the game for his team."),
         ("Red house.", "The small blue house in London."),
         ("", "The quick brown fox jumps over the lazy dog.")]


def examples():
    return [Example(c, (r,)) for c, r in TEXTS]


def hand_model(path=None):
    rouge, wms = metrics.create("rouge"), metrics.create("wms")
    model = L.LearnedModel(
        features=["rougeL-f", "wms"],
        components=[L.Component("rouge", {}, rouge.signature(), ("rougeL-f",)),
                    L.Component("wms", {}, wms.signature(), ("wms",))],
        means=[0.3, 0.6], stds=[0.2, 0.1], weights=[0.7, -1.3], intercept=0.25, alpha=1.0, target="overall",
        judgments="toy", subset="all", n=5, documents=5, heldout={})
    if path is not None:
        model.save(path)
    return model


def by_hand(model):
    r = np.round(metrics.create("rouge").score(examples())["rougeL-f"], 12)  # a model rounds its features so
    w = np.round(metrics.create("wms").score(examples())["wms"], 12)  # (learned_format.canonical_features)
    return (r - 0.3) / 0.2 * 0.7 + (w - 0.6) / 0.1 * -1.3 + 0.25


def test_save_load_round_trip(tmp_path):
    path = tmp_path / "m.json"
    model = hand_model(path)
    loaded = L.LearnedModel.load(path)
    assert loaded == model and loaded.as_dict() == model.as_dict()
    assert len(loaded.sha256) == 64 and loaded.sha256 == model.sha256
    assert loaded.raw_weights == pytest.approx([3.5, -13.0])
    assert loaded.raw_intercept == pytest.approx(0.25 - 3.5 * 0.3 + 13.0 * 0.6)
    x = np.array([[0.5, 0.4], [0.1, 0.9]])
    assert loaded.predict(x) == pytest.approx(x @ np.array(loaded.raw_weights) + loaded.raw_intercept)
    assert not list(tmp_path.glob("*.tmp"))  # the atomic write leaves nothing behind


def test_learned_metric_equals_the_hand_applied_model(tmp_path):
    path = tmp_path / "m.json"
    model = hand_model(path)
    expected = by_hand(model)
    metric = LearnedMetric(model=str(path))
    assert metric.name == f"learned:{path}" and metric.needs_references
    assert metric.score(examples())[metric.name] == pytest.approx(expected, rel=1e-12)
    via_registry = metrics.create(f"learned:{path}")
    assert via_registry.score(examples())[f"learned:{path}"] == pytest.approx(expected, rel=1e-12)
    sig = via_registry.signature()
    assert sig.startswith(f"learned:{path}|model:sha256:{model.sha256[:12]}|")
    assert "{rouge|" in sig and "{wms|" in sig and "features:rougeL-f+wms" in sig


def test_learned_name_in_the_models_dir(home):
    assert models_dir() == home / "learned"
    hand_model(models_dir() / "mine.json")
    # listed, but only when named: a saved model never joins the default metric choice
    assert "learned:mine" in metrics.names(include_named_only=True)
    assert "learned:mine" not in metrics.names() and "rouge" in metrics.names()
    assert metrics.registry.is_named_only("learned:mine") and not metrics.registry.is_named_only("rouge")
    cls = metrics.get_class("learned:mine")
    assert cls is metrics.get_class("learned:mine")  # memoised
    assert cls.name == "learned:mine" and cls.variants == ("learned:mine",) and cls.needs_references
    assert cls.unavailable_reason() is None
    assert metrics.create("learned:mine").score(examples())["learned:mine"] == pytest.approx(by_hand(None))
    with pytest.raises(metrics.UnknownMetricError, match="saved learned models.*learned:mine"):
        metrics.get_class("learned:other")


def test_a_corrupt_model_gives_a_clear_error(tmp_path, home):
    path = tmp_path / "bad.json"
    hand_model(path)
    path.write_text(path.read_text()[:100])
    with pytest.raises(L.LearnedModelError, match="not valid JSON.*corrupt or truncated"):
        L.LearnedModel.load(path)
    with pytest.raises(L.LearnedModelError, match="not valid JSON"):
        metrics.create(f"learned:{path}")
    doc = hand_model().as_dict()
    doc["weights"] = [1.0]
    path.write_text(json.dumps(doc))
    with pytest.raises(L.LearnedModelError, match="weights has 1 values for 2 features"):
        L.LearnedModel.load(path)
    path.write_text(json.dumps({"format": "something-else"}))
    with pytest.raises(L.LearnedModelError, match="not a meta-eval learned model"):
        L.LearnedModel.load(path)
    # a corrupt model in the models dir is listed as unavailable, and does not break listing the others
    (models_dir()).mkdir(parents=True, exist_ok=True)
    (models_dir() / "broken.json").write_text("{")
    assert "learned:broken" in metrics.names(include_named_only=True)
    assert "not valid JSON" in metrics.get_class("learned:broken").unavailable_reason()
    res = runner.invoke(app, ["metrics"])
    assert res.exit_code == 0, res.output  # the table may wrap the name, so only check that listing still works


def test_a_changed_component_signature_is_an_error(tmp_path):
    path = tmp_path / "m.json"
    doc = hand_model().as_dict()
    doc["components"][1]["signature"] = doc["components"][1]["signature"].replace("pot==", "pot==0.0.0-was-")
    path.write_text(json.dumps(doc))
    with pytest.raises(L.LearnedModelError, match="component 'wms' has changed"):
        LearnedMetric(model=str(path))


def test_in_sample_by_rows_by_name_or_unknown(tmp_path):
    """meta_eval.metrics.learned.fit_checks: row fingerprints decide; an older file without them falls back to the
    names."""
    from meta_eval.metrics.learned import fit_checks
    from meta_eval.metrics.learned_format import row_fingerprints

    exs = examples()
    model = hand_model()
    model.rows = row_fingerprints(exs[:3])  # fitted on the first three rows
    model.save(tmp_path / "m.json")
    metric = LearnedMetric(model=str(tmp_path / "m.json"))
    rouge = metrics.create("rouge")
    checks = fit_checks([rouge, metric], exs[1:], "other-name", "all")
    assert list(checks) == [metric.name]  # only learned metrics are checked
    check = checks[metric.name]
    assert (check.in_sample, check.overlap, check.rows, check.training_rows) == (True, 2, 4, 5)
    assert check.message() == (f"{metric.name}: in-sample: fitted on toy/all (target overall); 2 of the 4 rows "
                               "scored here were among its 5 training rows; these correlations are not held-out")
    held_out = fit_checks([metric], exs[3:], "toy", "all")[metric.name]  # same name, other rows: rows decide
    assert held_out.in_sample is False and held_out.overlap == 0 and held_out.message() is None

    doc = model.as_dict()  # an older file: no row fingerprints
    del doc["rows"]
    (tmp_path / "old.json").write_text(json.dumps(doc))
    old = LearnedMetric(model=str(tmp_path / "old.json"))
    assert fit_checks([old], exs, "toy", "all")[old.name].in_sample is True
    assert "this is that set and subset" in fit_checks([old], exs, "toy", "all")[old.name].message()
    assert fit_checks([old], exs, "toy", "sms")[old.name].in_sample is False
    for key in ("judgments", "subset", "target"):  # older still: nothing recorded, so unknown
        del doc[key]
    (tmp_path / "older.json").write_text(json.dumps(doc))
    loaded = L.LearnedModel.load(tmp_path / "older.json")
    assert (loaded.judgments, loaded.subset, loaded.target, loaded.rows) == (None, None, None, None)
    older = LearnedMetric(model=str(tmp_path / "older.json"))
    check = fit_checks([older], exs, "toy", "all")[older.name]
    assert check.in_sample is None and "unknown" in check.message()
    assert check.as_dict()["fitted_on"]["set"] == "unknown/unknown"
    assert "|fit:unknown/unknown|target:unknown|" in older.signature()


def test_saved_models_never_join_the_default_choice(home):
    from meta_eval.scoring.selection import choose_metrics as _choose_metrics

    hand_model(models_dir() / "mine.json")
    chosen, skipped = _choose_metrics(None, {}, what="x", has_sources=True, has_references=True)
    picked = [m.name for m in chosen] + [n for n, _ in skipped]
    assert "rouge" in picked and not any(n.startswith("learned:") for n in picked)
    chosen, _ = _choose_metrics("learned:mine", {}, what="x", has_sources=True, has_references=True)
    assert [m.name for m in chosen] == ["learned:mine"]  # named, it runs
    res = runner.invoke(app, ["metrics"])
    row = next(line for line in res.output.splitlines() if "learned:mine" in line)
    assert res.exit_code == 0 and "ready (only" in row  # rich wraps the status cell: "(only when named)"


def test_no_module_under_metrics_imports_meta_eval():
    """Layering: the model format lives in metrics.learned_format; meta_eval imports metrics, never the reverse (the
    metrics import only meta_eval.metrics, their own package under the one namespace)."""
    import ast
    from pathlib import Path

    folder = Path(metrics.__file__).parent
    offenders = []
    for path in sorted(folder.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            mods = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            offenders += [f"{path.name}: {m}" for m in mods if (m == "meta_eval" or m.startswith("meta_eval."))
                          and not (m == "meta_eval.metrics" or m.startswith("meta_eval.metrics."))]
    assert offenders == []


# -- the command ----------------------------------------------------------------------------------------------------
def test_cli_learn_on_chaganty_then_run_the_learned_metric(shared_data, tmp_path, home):
    cache = str(tmp_path / "cache.sqlite")
    out = tmp_path / "learn.json"
    res = runner.invoke(app, ["learn", "--protocol", "paper", "--judgments", "chaganty", "--data-dir", str(shared_data), "--cache", cache,
                              "--metrics", "rouge,wms,sms", "--features", "rougeL-f,wms,sms", "--splits", "200",
                              "--target", "overall", "--save", "mine", "--output", str(out)])
    assert res.exit_code == 0, res.output
    doc = json.loads(out.read_text())
    assert doc["n"] == 2085 and doc["documents"] == 583 and doc["target"] == "overall"
    assert len(doc["results"]) == 7 and doc["results"][0]["features"] == doc["best"]
    full = next(r for r in doc["results"] if r["size"] == 3)
    assert 0.2 < full["grouped"]["mean"] < 0.3 and full["grouped"]["n_splits"] == 200
    assert full["overstatement"] == pytest.approx(full["ungrouped"]["mean"] - full["grouped"]["mean"])
    assert "sms" in doc["best"]
    assert (home / "learned" / "mine.json").exists() and doc["saved"] == str(home / "learned" / "mine.json")
    assert "learned:mine" in res.output and "grouped" in res.output

    # score a few chaganty rows with the saved metric through `run`
    from meta_eval import judgments

    rows = judgments.load("chaganty", shared_data).rows[:12]
    small = tmp_path / "small.jsonl"
    small.write_text("".join(json.dumps({"id": r.id, "doc_id": r.doc_id, "system": r.system,
                                         "candidate": r.candidate, "references": list(r.references),
                                         "scores": dict(r.scores)}) + "\n" for r in rows))
    res = runner.invoke(app, ["run", "--judgments", str(small), "--metrics", "learned:mine,rouge,wms,sms",
                              "--cache", cache, "--output", str(tmp_path / "run.json")])
    assert res.exit_code == 0, res.output
    assert "learned:mine|model:sha256:" in res.output
    # these rows are training rows of the model (under another set name): the run says so and records it
    saved = json.loads((home / "learned" / "mine.json").read_text())
    assert (saved["judgments"], saved["subset"], saved["target"]) == ("chaganty", "sms", "overall")
    assert 0 < len(saved["rows"]) <= 2085
    ran = json.loads((tmp_path / "run.json").read_text())
    entry = next(r for r in ran["results"] if r["metric"] == "learned:mine")
    assert entry["in_sample"] is True and entry["fitted_on"]["set"] == "chaganty/sms"
    assert entry["fitted_on"]["training_rows_scored"] == entry["fitted_on"]["rows_scored"] == ran["n"] == 12
    assert "in_sample" not in next(r for r in ran["results"] if r["metric"] == "rougeL-f")
    said = " ".join(res.output.split())
    assert ("warning: learned:mine: in-sample: fitted on chaganty/sms (target overall); 12 of the 12 rows scored "
            "here were among its 2085 training rows; these correlations are not held-out") in said
    model = L.LearnedModel.load(home / "learned" / "mine.json")
    scores = metrics.create("learned:mine").score([r.example() for r in rows])["learned:mine"]
    columns = {}
    for name in ("rouge", "wms", "sms"):
        columns.update(metrics.create(name).score([r.example() for r in rows]))
    assert scores == pytest.approx(model.predict(columns))

    # without --features, rouge's variants + wms + sms (11 or more) have more subsets than the exhaustive cap: the
    # default search is greedy (this used to be an error); asking for the exhaustive search still is one
    out2 = tmp_path / "greedy.json"
    res = runner.invoke(app, ["learn", "--protocol", "paper", "--judgments", "chaganty", "--data-dir", str(shared_data), "--cache", cache,
                              "--metrics", "rouge,wms,sms", "--splits", "20", "--output", str(out2)])
    assert res.exit_code == 0, res.output
    doc = json.loads(out2.read_text())
    k = len(doc["features"])
    assert k >= 11 and doc["search"]["strategy"] == "greedy-forward" and doc["search"]["subsets"] == 2 ** k - 1
    assert f"subsets of {k} features exceed the cap of 1,024" in doc["search"]["reason"]
    said = " ".join(res.output.split())  # rich wraps lines
    assert "search: greedy-forward (auto:" in said and "greedy path (mean held-out spearman, grouped" in said
    assert doc["best"] == doc["results"][0]["features"] and doc["results"][0]["grouped"]["n_splits"] == 20
    res = runner.invoke(app, ["learn", "--protocol", "paper", "--judgments", "chaganty", "--data-dir", str(shared_data), "--cache", cache,
                              "--metrics", "rouge,wms,sms", "--splits", "10", "--search", "exhaustive"])
    assert res.exit_code == 2 and "exceed the cap" in res.output


def test_cli_learn_summeval_default_search(shared_data, tmp_path):
    """The issue's first call: 14 features (rouge's 12 variants, wms, sms) on SummEval, default search."""
    out = tmp_path / "summeval.json"
    res = runner.invoke(app, ["learn", "--protocol", "paper", "--judgments", "summeval", "--data-dir", str(shared_data), "--cache",
                              str(tmp_path / "cache.sqlite"), "--metrics", "rouge,wms,sms", "--target", "relevance",
                              "--splits", "40", "--search-splits", "20", "--output", str(out)])
    assert res.exit_code == 0, res.output
    doc = json.loads(out.read_text())
    assert doc["n"] == 1600 and doc["documents"] == 100 and doc["protocols"] == ["grouped", "ungrouped"]
    search = doc["search"]
    assert search["strategy"] == "greedy-forward" and search["screened"] and search["search_splits"] == 20
    assert search["finalists"] == len(doc["results"]) == sum(p["accepted"] for p in search["path"])
    assert all(r["grouped"]["n_splits"] == 40 for r in doc["results"])
    assert doc["model"]["features"] == doc["best"] and 0 < doc["results"][0]["grouped"]["mean"] < 1


def test_cli_learn_one_document_skipped_metric_and_no_search(shared_data, tmp_path):
    from meta_eval import judgments

    rows = judgments.load("chaganty", shared_data).rows[:40]
    one_doc = tmp_path / "one.jsonl"  # every row from one document: grouped splits are impossible
    one_doc.write_text("".join(json.dumps({"id": r.id, "doc_id": "d0", "system": r.system, "candidate": r.candidate,
                                           "references": list(r.references), "scores": dict(r.scores)}) + "\n"
                               for r in rows))
    cache, out = str(tmp_path / "cache.sqlite"), tmp_path / "one.json"
    base = ["learn", "--protocol", "paper", "--judgments", str(one_doc), "--cache", cache, "--splits", "20", "--output", str(out)]
    res = runner.invoke(app, base + ["--metrics", "rouge,textrank"])
    assert res.exit_code == 0, res.output
    said = " ".join(res.output.split())  # rich wraps lines
    assert "skipped textrank: needs source documents" in said and "only the ungrouped protocol" in said
    doc = json.loads(out.read_text())
    assert doc["skipped"][0]["metric"] == "textrank" and "source documents" in doc["skipped"][0]["reason"]
    assert doc["protocols"] == ["ungrouped"] and all(r["grouped"] is None for r in doc["results"])
    assert doc["search"]["strategy"] == "greedy-forward" and not doc["search"]["screened"]
    res = runner.invoke(app, base + ["--metrics", "rouge", "--features", "rouge1-f,rouge2-f,rougeL-f", "--no-search"])
    assert res.exit_code == 0, res.output
    doc = json.loads(out.read_text())
    assert doc["search"]["strategy"] == "none" and [r["size"] for r in doc["results"]] == [3]
    res = runner.invoke(app, base + ["--metrics", "rouge", "--no-search", "--search", "greedy"])
    assert res.exit_code == 2 and "contradicts" in " ".join(res.output.split())
    # a metric that cannot run here (not a missing input of the set) stops the run
    res = runner.invoke(app, base + ["--metrics", "wms", "--option", "oov=bogus"])
    assert res.exit_code == 2 and "cannot run: wms: bad configuration" in " ".join(res.output.split())
    # only metrics the set cannot feed: nothing to learn from
    res = runner.invoke(app, base + ["--metrics", "textrank,novelty"])
    assert res.exit_code == 2 and "no metric of --metrics can run" in " ".join(res.output.split())


def test_save_never_replaces_a_file_meta_eval_did_not_write(tmp_path):
    """``LearnedModel.save`` (the library method) keeps the write guard's promise: an existing file that is not a
    learned model is left as it was unless ``overwrite=True``; a model file is replaced; a folder is refused."""
    model = hand_model()
    notes = tmp_path / "notes.json"
    notes.write_text('{"mine": true}\n')
    with pytest.raises(FileExistsError, match="not a meta-eval learned-model file"):
        model.save(notes)
    assert notes.read_text() == '{"mine": true}\n'
    path = model.save(tmp_path / "m.json")
    model.intercept += 1.0
    model.save(path)  # a model file: replaced
    assert json.loads(path.read_text())["intercept"] == model.intercept
    model.save(notes, overwrite=True)
    assert json.loads(notes.read_text())["format"] == "meta-eval-learned-model"
    with pytest.raises(IsADirectoryError):
        model.save(tmp_path)
