"""Multi-reference policies (``refs=max|mean|first|jackknife`` and metric-specific ones) for every metric.

Hand-computed values on a toy metric and on ROUGE, the signature and the cache key, the CLI option.
"""
from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from meta_eval import judgments
from meta_eval.cli import app
from meta_eval.learning import ridge as L
from meta_eval.scoring.cache import ScoreCache
from meta_eval.scoring.runner import score_examples
from meta_eval.metrics import Example, Metric, create, register
from meta_eval.metrics.base import REFS_POLICIES, MetricError
from meta_eval.metrics.learned import LearnedMetric
from meta_eval.metrics.registry import unregister

runner = CliRunner()


@pytest.fixture()
def toy():
    """A metric scoring a (candidate, reference) pair by the reference's length; "neg" is minus that."""
    calls = []

    @register("test-reflen")
    class RefLength(Metric):
        variants = ("len", "neg", "neg-self", "char")
        refs_select = {"neg": "len", "char": "len"}

        def _score(self, examples):
            calls.append([len(e.references) for e in examples])
            lengths = [len(e.references[0]) for e in examples]  # natively: the first reference only
            return {"len": lengths, "neg": [-x for x in lengths], "neg-self": [-x for x in lengths],
                    "char": [ord(e.references[0][0]) for e in examples]}

    try:
        yield RefLength, calls
    finally:
        unregister("test-reflen")


EXAMPLES = [Example("c", ("aaa", "a", "aa")), Example("c", ("aaaa",)), Example("c", ("aa", "aaaa"))]


@pytest.mark.parametrize("policy, length", [
    ("max", [3, 4, 4]), ("mean", [2, 4, 3]), ("first", [3, 4, 2]),
    # jackknife, lengths 3 1 2: leave out 3 -> best 2; leave out 1 -> 3; leave out 2 -> 3: (2 + 3 + 3) / 3
    ("jackknife", [8 / 3, 4, 3])])
def test_policies_by_hand_on_a_toy_metric(toy, policy, length):
    cls, calls = toy
    out = cls().with_refs(policy).score(EXAMPLES)
    assert out["len"] == pytest.approx(length)
    # "neg" follows the reference that "len" selects; "neg-self" selects by itself (the least negative)
    neg = {"max": [-3, -4, -4], "jackknife": [-8 / 3, -4, -3]}.get(policy, [-x for x in length])
    assert out["neg"] == pytest.approx(neg)
    neg_self = {"max": [-1, -4, -2], "jackknife": [-4 / 3, -4, -3]}.get(policy, [-x for x in length])
    assert out["neg-self"] == pytest.approx(neg_self)
    # one _score call on the batch of (candidate, one reference) pairs; first scores only the first reference
    assert calls == [[1] * (3 if policy == "first" else 6)]


def test_undeclared_metric_default_is_its_own_behaviour(toy):
    cls, calls = toy
    metric = cls()
    assert metric.refs_policy is None and metric.refs_policies() == REFS_POLICIES
    assert metric.score(EXAMPLES)["len"] == pytest.approx([3, 4, 2])  # native: the first reference
    assert calls == [[3, 1, 2]]
    assert "refs" not in metric.signature()
    assert "|refs:jackknife|" in metric.with_refs("jackknife").signature()
    assert "refs" not in metric.with_refs(None).signature()


def test_ties_pick_the_first_reference_and_two_references_jackknife_is_the_mean(toy):
    cls, _ = toy
    tie = [Example("c", ("bb", "aa", "cc"))]
    assert cls().with_refs("max").score(tie)["char"][0] == ord("b")
    assert cls().with_refs("jackknife").score(tie)["char"][0] == pytest.approx((ord("a") + 2 * ord("b")) / 3)
    two = [Example("c", ("a", "aaa"))]
    assert cls().with_refs("jackknife").score(two)["len"][0] == cls().with_refs("mean").score(two)["len"][0] == 2.0


def test_with_refs_validates():
    rouge = create("rouge")
    assert rouge.with_refs("MEAN").refs_policy == "mean"
    with pytest.raises(MetricError, match="unknown refs policy 'best'.*max, mean, first, jackknife, pool"):
        create("rouge").with_refs("best")
    with pytest.raises(MetricError, match="reads no reference"):
        create("textrank").with_refs("max")
    assert create("textrank").refs_policies() == ()
    assert create("wms").refs_policies() == REFS_POLICIES
    assert create("novelty").refs_policies() == REFS_POLICIES
    with pytest.raises(MetricError, match="unknown refs policy"):
        create("wms").with_refs("pool")


# -- ROUGE -------------------------------------------------------------------------------------------------------------
CAND = "a b c d"
REFS = ("a b c d", "a b x", "x y")  # rouge1 F: 1, 4/7 (P 2/4, R 2/3), 0


def f1(p, r):
    return 2 * p * r / (p + r) if p + r else 0.0


@pytest.mark.parametrize("policy, rouge1_f", [
    ("max", 1.0), ("mean", (1 + 4 / 7 + 0) / 3), ("first", 1.0),
    ("jackknife", (4 / 7 + 1 + 1) / 3),  # leave out ref 1 -> best 4/7; leave out 2 or 3 -> 1
    # ROUGE-1.5.5 -f A: hits 4 + 2 + 0 over lengths 4 + 3 + 2 (R 6/9), over 3 x 4 candidate tokens (P 6/12)
    ("pool", f1(6 / 12, 6 / 9)),
    # folds without ref 1: hits 2 / lengths 5, P 2/8; without 2: 4/6, 4/8; without 3: 6/7, 6/8
    ("jackknife-pool", (f1(2 / 8, 2 / 5) + f1(4 / 8, 4 / 6) + f1(6 / 8, 6 / 7)) / 3)])
def test_rouge_policies_by_hand(policy, rouge1_f):
    metric = create("rouge").with_refs(policy)
    assert metric.score([Example(CAND, REFS)])["rouge1-f"][0] == pytest.approx(rouge1_f, abs=1e-12)
    single = metric.score([Example(CAND, REFS[1:2])])  # one reference: every policy is that reference's score
    assert single["rouge1-p"][0] == pytest.approx(0.5) and single["rouge1-r"][0] == pytest.approx(2 / 3)


def test_rouge_max_selects_the_reference_per_type_by_f():
    """rouge1 is best against "d c b a" (F 1), rouge2 against "a b x" (F 0.4): P and R follow each one."""
    for metric in (create("rouge"), create("rouge").with_refs("jackknife")):
        out = metric.score([Example(CAND, ("d c b a", "a b x"))])
        if metric.refs_policy == "max":
            assert out["rouge1-p"][0] == out["rouge1-r"][0] == 1.0
            assert out["rouge2-p"][0] == pytest.approx(1 / 3) and out["rouge2-r"][0] == pytest.approx(1 / 2)
        else:  # two references: each fold keeps the other one
            assert out["rouge1-r"][0] == pytest.approx((1 + 2 / 3) / 2)
            assert out["rouge2-f"][0] == pytest.approx(0.4 / 2)


def test_rouge_generic_max_equals_score_multi_on_summeval(shared_data):
    examples = judgments.load("summeval", shared_data).examples()[::100]
    metric = create("rouge")
    native = metric.score(examples)
    exploded = metric._score_by_reference(examples, "max")
    for variant in metric.variants:
        np.testing.assert_array_equal(native[variant], exploded[variant])


def test_rouge_signatures_per_policy():
    default = create("rouge").signature()
    assert "|refs:best-f|" in default and create("rouge").with_refs("max").signature() == default
    labels = {"mean": "mean", "first": "first", "jackknife": "jackknife-best-f", "pool": "pool-counts",
              "jackknife-pool": "jackknife-pool-counts"}
    for policy, label in labels.items():
        sig = create("rouge").with_refs(policy).signature()
        assert f"|refs:{label}|" in sig and sig.count("refs:") == 1
        assert sig.replace(f"refs:{label}", "refs:best-f") == default  # replaced in place


def test_the_policy_is_part_of_the_cache_key(tmp_path):
    store = ScoreCache(tmp_path / "cache.sqlite")
    examples = [Example(CAND, REFS)]
    first = score_examples(create("rouge"), examples, store)
    again = score_examples(create("rouge"), examples, store)
    mean = score_examples(create("rouge").with_refs("mean"), examples, store)
    store.close()
    assert (first.computed, again.cached, mean.computed) == (1, 1, 1)
    assert mean.scores["rouge1-f"][0] == pytest.approx((1 + 4 / 7) / 3)


# -- other metrics -------------------------------------------------------------------------------------------------------
def test_mover_metrics_keep_their_signature_and_average_when_asked():
    cand, refs = "The cat sat on the mat.", ("A cat was on a mat.", "Dogs bark at night.")
    singles = [create("wms").score([Example(cand, (r,))])["wms"][0] for r in refs]
    assert create("wms").score([Example(cand, refs)])["wms"][0] == pytest.approx(max(singles))
    assert create("wms").with_refs("mean").score([Example(cand, refs)])["wms"][0] == pytest.approx(np.mean(singles))
    assert create("wms").with_refs("max").signature() == create("wms").signature()
    assert "|refs:mean|" in create("wms").with_refs("mean").signature()


def test_novelty_refs_is_the_generic_option():
    from meta_eval.metrics.novelty import Novelty

    assert Novelty(refs="first").signature() == create("novelty").with_refs("first").signature()
    assert "|refs:first|" in Novelty(refs="first").signature() and "|refs:mean|" in Novelty().signature()
    src = "the cat sat on the mat today"
    ex = [Example("dogs bark loudly today", ("one two", "one two three four five six seven eight"), src)]
    # R_nov per reference: N = 1 (no trigram is copied), x 4/2 and x 4/8
    want = {"mean": 1.25, "first": 2.0, "max": 2.0, "jackknife": 1.25}
    for policy, value in want.items():
        assert Novelty(refs=policy).score(ex)["novelty"][0] == pytest.approx(value)


def test_qa_sup_declares_pooling():
    from meta_eval.metrics.qa import QASupervised, QAUnsupervised

    assert QASupervised.refs_native == QASupervised.refs_default == "pool"
    assert QAUnsupervised.needs_references is False


def test_a_learned_metric_keeps_the_components_policies(tmp_path):
    rouge = create("rouge").with_refs("mean")
    model = L.LearnedModel(
        features=["rouge1-f"], components=[L.Component("rouge", {"refs": "mean"}, rouge.signature(), ("rouge1-f",))],
        means=[0.0], stds=[1.0], weights=[1.0], intercept=0.0, alpha=1.0, target="x", judgments="toy", subset="all",
        n=5, documents=5, heldout={})
    path = tmp_path / "m.json"
    model.save(path)
    learned = LearnedMetric(model=str(path))
    assert learned.components[0].refs_policy == "mean"
    out = learned.score([Example(CAND, REFS)])[learned.name]
    assert out[0] == pytest.approx((1 + 4 / 7) / 3)
    assert not learned.accepts_refs()
    with pytest.raises(MetricError, match="fixed"):
        learned.with_refs("max")


# -- the command line -----------------------------------------------------------------------------------------------------
@pytest.fixture()
def jsonl(tmp_path):
    rows = [("a b c d", list(REFS), 0.9), ("a b", ["a b c d", "x y"], 0.5), ("x", ["a b c d", "a b x"], 0.1),
            ("a b c", ["a b c", "x y z"], 0.7), ("y z", ["x y z", "a b"], 0.3)]
    path = tmp_path / "toy.jsonl"
    path.write_text("\n".join(json.dumps({"id": f"r{i}", "doc_id": f"d{i}", "system": "s", "candidate": c,
                                          "references": r, "source": "a b c d. x y z. a b x.", "scores": {"q": s}})
                              for i, (c, r, s) in enumerate(rows)) + "\n")
    return path


def run(jsonl, tmp_path, *args):
    out = tmp_path / "out.json"
    res = runner.invoke(app, ["run", "-j", str(jsonl), "--no-cache", "--output", str(out), *args])
    return res, (json.loads(out.read_text()) if res.exit_code == 0 else None)


def test_cli_refs_option_reaches_every_reference_metric(jsonl, tmp_path):
    res, doc = run(jsonl, tmp_path, "-m", "rouge,wms,textrank", "-o", "refs=jackknife")
    assert res.exit_code == 0, res.output
    sigs = {r["metric"]: r["signature"] for r in doc["results"]}
    assert "|refs:jackknife-best-f|" in sigs["rouge1-f"] and "|refs:jackknife|" in sigs["wms"]
    assert "refs:" not in sigs["textrank"]  # reference-free: the option does not apply to it


def test_cli_refs_errors(jsonl, tmp_path):
    res, _ = run(jsonl, tmp_path, "-m", "rouge", "-o", "refs=best")
    assert res.exit_code == 2 and "unknown refs policy 'best'" in " ".join(res.output.split())
    res, _ = run(jsonl, tmp_path, "-m", "textrank", "-o", "refs=max")
    assert res.exit_code == 2 and "no chosen metric takes the option(s) refs" in " ".join(res.output.split())
