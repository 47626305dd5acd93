"""BLEU, chrF and TER through sacrebleu: equal to sacrebleu called directly, hand-computed values, the signature,
orientation, multi-reference policies and the ref=source option."""
from __future__ import annotations

import pickle

import numpy as np
import pytest

sacrebleu = __import__("conftest").require_module("sacrebleu", "pip install 'meta-eval[sacrebleu]'")
from sacrebleu.metrics import BLEU, CHRF, TER  # noqa: E402

from meta_eval.metrics import Example, create, names  # noqa: E402
from meta_eval.metrics.base import MetricError  # noqa: E402

PAIRS = [("The cat sat on the mat.", ("The cat is sitting on the mat.",)),
         ("Police arrested three men on Sunday.", ("Three men were arrested by police on Sunday.",)),
         ("Stocks fell sharply.", ("Shares dropped.", "Stocks fell sharply on Monday.")),
         ("Il pleut.", ("It is raining.", "Rain is falling today.", "It rains."))]
EXAMPLES = [Example(c, r) for c, r in PAIRS]


def test_registered_with_orientation():
    assert {"bleu", "chrf", "ter"} <= set(names())
    assert create("bleu").higher_is_better and create("chrf").higher_is_better
    assert create("ter").higher_is_better is False  # edits per reference word: fewer is better


@pytest.mark.parametrize("name, reference, options", [
    ("bleu", BLEU(effective_order=True), {}),
    ("bleu", BLEU(tokenize="intl", lowercase=True, smooth_method="floor", smooth_value=0.2, effective_order=True),
     {"tokenize": "intl", "lowercase": "yes", "smooth_method": "floor", "smooth_value": "0.2"}),
    ("bleu", BLEU(effective_order=False, max_ngram_order=2), {"effective_order": "false", "max_ngram_order": "2"}),
    ("chrf", CHRF(), {}),
    ("chrf", CHRF(word_order=2, beta=3, lowercase=True), {"word_order": "2", "beta": "3", "lowercase": "true"}),
    ("ter", TER(), {}),
    ("ter", TER(normalized=True, case_sensitive=True, no_punct=True),
     {"normalized": "1", "case_sensitive": "on", "no_punct": "yes"}),
])
def test_equal_to_sacrebleu_sentence_score(name, reference, options):
    out = create(name, **options).score(EXAMPLES)[name]
    expected = [reference.sentence_score(c, list(r)).score for c, r in PAIRS]  # all references at once
    np.testing.assert_array_equal(out, expected)


def test_hand_computed_values():
    same = [Example("the cat sat on the mat", ("the cat sat on the mat",))]
    assert create("bleu").score(same)["bleu"][0] == pytest.approx(100.0)
    assert create("chrf").score(same)["chrf"][0] == pytest.approx(100.0)
    assert create("ter").score(same)["ter"][0] == 0.0
    # clipped n-gram precisions 5/6, 3/5, 2/4, 1/3, equal lengths (BP = 1): 100 * (1/12) ** (1/4)
    ex = [Example("the cat sat on the mat", ("the cat sat on a mat",))]
    assert create("bleu").score(ex)["bleu"][0] == pytest.approx(100 * (1 / 12) ** 0.25)
    # one insertion against a four-word reference
    assert create("ter").score([Example("the cat sat", ("the cat sat down",))])["ter"][0] == pytest.approx(25.0)
    assert create("chrf").score([Example("abc", ("xyz",))])["chrf"][0] == 0.0


def test_empty_candidates_get_sacrebleus_values():
    rows = [Example("", ("a reference",)), Example("   ", ("a reference",)), Example("", ("",)),
            Example("words", ("",))]
    assert create("bleu").score(rows)["bleu"].tolist() == [0.0, 0.0, 0.0, 0.0]
    assert create("chrf").score(rows)["chrf"].tolist() == [0.0, 0.0, 0.0, 0.0]
    assert create("ter").score(rows)["ter"].tolist() == [100.0, 100.0, 0.0, 100.0]


def test_native_multi_reference_and_base_policies():
    # TER: fewest edits (1, against "a b c") over the average reference length (3 + 7) / 2 = 5
    ex = [Example("a b", ("a b c", "a b c d e f g"))]
    assert create("ter").score(ex)["ter"][0] == pytest.approx(20.0)
    # refs=max for TER keeps the best (lowest) single-reference TER: 1 / 3
    assert create("ter").with_refs("max").score(ex)["ter"][0] == pytest.approx(100 / 3)
    assert create("ter").with_refs("mean").score(ex)["ter"][0] == pytest.approx((100 / 3 + 500 / 7) / 2)
    assert "refs:min-ter" in create("ter").with_refs("max").signature()
    # BLEU: n-grams matched across both references score higher natively than with either reference alone
    ex = [Example("the cat sat on the mat today", ("the cat sat on a rug", "a dog lay on the mat today"))]
    native = create("bleu").score(ex)["bleu"][0]
    single = [BLEU(effective_order=True).sentence_score(ex[0].candidate, [r]).score for r in ex[0].references]
    assert native > max(single)
    assert create("bleu").with_refs("max").score(ex)["bleu"][0] == pytest.approx(max(single))
    assert create("bleu").with_refs("first").score(ex)["bleu"][0] == pytest.approx(single[0])
    assert "refs:sacrebleu-multi" in create("bleu").signature()
    assert "refs:max" in create("bleu").with_refs("max").signature()


def test_sentence_level_is_not_corpus_level():
    """System-level statistics average sentence scores; sacrebleu's corpus_score pools the statistics."""
    hyps = ["the cat sat on the mat", "a quick brown fox", "hello"]
    refs = ["the cat sat on a mat", "the quick brown fox jumps", "hello world"]
    for name, ref in (("bleu", BLEU(effective_order=True)), ("chrf", CHRF()), ("ter", TER())):
        sentence = create(name).score([Example(h, (r,)) for h, r in zip(hyps, refs)])[name]
        corpus = ref.corpus_score(hyps, [refs]).score
        assert sentence.mean() != pytest.approx(corpus, abs=0.5), name
    assert "level:sentence" in create("bleu").signature()


def test_signature_embeds_sacrebleus_own():
    probe = BLEU(tokenize="intl", effective_order=True)
    probe.sentence_score("x", ["x"])
    own = probe.get_signature()
    own.update("nrefs", "var")
    sig = create("bleu", tokenize="intl").signature()
    assert f"sacrebleu:({own})" in sig
    assert "tok:intl" in sig and f"version:{sacrebleu.__version__}" in sig
    assert f"sacrebleu=={sacrebleu.__version__}" in sig and sig.startswith("bleu|")
    chrf_sig = create("chrf", word_order=2).signature()
    assert "nw:2" in chrf_sig and chrf_sig != create("chrf").signature()
    assert "case:lc" in create("ter").signature() and "case:mixed" in create("ter", case_sensitive=True).signature()


ALTERNATIVES = {"bleu": {"tokenize": "char", "lowercase": True, "smooth_method": "floor", "smooth_value": 0.5,
                         "max_ngram_order": 2, "effective_order": False},
                "chrf": {"char_order": 4, "word_order": 2, "beta": 1, "lowercase": True, "whitespace": True,
                         "eps_smoothing": True},
                "ter": {"normalized": True, "no_punct": True, "asian_support": True, "case_sensitive": True}}


@pytest.mark.parametrize("name", sorted(ALTERNATIVES))
def test_every_option_that_changes_the_scores_changes_the_signature(name):
    """The signature keys the cache: an option whose scores differ with the same signature would be served the
    other setting's scores (BLEU's max_ngram_order and chrF's beta were, before they were signed)."""
    rows = [Example("The Cat sat on the mat , twice.", ("the cat sat on a mat twice", "A cat sat there.")),
            Example("dogs bark loudly at night", ("dogs barked loud at night .",)),
            Example("Ein Hund bellt", ("ein hund bellt laut",))]
    default = create(name)
    base = default.score(rows)[name]
    for option, value in ALTERNATIVES[name].items():
        other = create(name, **{option: value})
        if not np.array_equal(other.score(rows)[name], base):
            assert other.signature() != default.signature(), option
    assert "ngram:2" in create("bleu", max_ngram_order=2).signature()
    assert "beta:1" in create("chrf", beta=1).signature() and "beta" not in create("chrf").signature()


def test_source_as_reference_is_a_named_option():
    rows = [Example("a cat sat", (), "a cat sat on the mat"), Example("dogs bark", (), "a cat sat on the mat")]
    for name, ref in (("bleu", BLEU(effective_order=True)), ("chrf", CHRF()), ("ter", TER())):
        metric = create(name, ref="source")
        out = metric.score(rows)[name]
        np.testing.assert_array_equal(out, [ref.sentence_score(r.candidate, [r.source]).score for r in rows])
        sig = metric.signature()
        assert "|ref:source|" in sig and "nrefs:1" in sig and "|refs:" not in sig
        assert metric.needs_source and not metric.needs_references
        with pytest.raises(MetricError, match="reads no reference"):
            metric.with_refs("max")
    with pytest.raises(MetricError, match="no reference.*ref=source"):  # never a silent fallback to the source
        create("bleu").score(rows)
    with pytest.raises(MetricError, match="no source"):
        create("bleu", ref="source").score([Example("a", ("b",))])


def test_a_set_without_references_skips_the_metric_with_the_reason():
    from meta_eval.scoring.selection import choose_metrics as _choose_metrics

    chosen, skipped = _choose_metrics("bleu,chrf,ter", {}, what="frank", has_sources=True, has_references=False)
    assert chosen == []
    assert [n for n, _ in skipped] == ["bleu", "chrf", "ter"]
    assert all("needs references, which frank does not have" in r for _, r in skipped)


@pytest.mark.parametrize("name, options, message", [
    ("bleu", {"tokenize": "moses"}, "unknown tokenize"),
    ("bleu", {"smooth_method": "laplace"}, "unknown smooth_method"),
    ("bleu", {"smooth_value": "much"}, "smooth_value"),
    ("bleu", {"lowercase": "maybe"}, "lowercase must be a boolean"),
    ("bleu", {"ref": "src"}, "unknown ref"),
    ("bleu", {"tokenize": "ja-mecab"}, "sacrebleu cannot build"),
    ("chrf", {"word_order": "-1"}, "non-negative"),
    ("chrf", {"char_order": "0"}, "positive"),
    ("ter", {"normalized": "2"}, "normalized must be a boolean"),
])
def test_bad_options_are_errors(name, options, message):
    import importlib.util

    if options.get("tokenize") == "ja-mecab" and importlib.util.find_spec("MeCab") is not None:
        pytest.skip("mecab is installed here")
    with pytest.raises(MetricError, match=message):
        create(name, **options)


def test_pickled_metric_scores_the_same():
    for name in ("bleu", "chrf", "ter"):
        metric = create(name)
        clone = pickle.loads(pickle.dumps(metric))
        np.testing.assert_array_equal(clone.score(EXAMPLES)[name], metric.score(EXAMPLES)[name])
        assert clone.signature() == metric.signature()


def test_listed_with_install_hint_when_missing(monkeypatch):
    import importlib.util

    from typer.testing import CliRunner

    from meta_eval.cli import app
    from meta_eval.metrics.sacrebleu_metrics import Bleu

    listing = CliRunner().invoke(app, ["metrics"]).output
    for name in ("bleu", "chrf", "ter"):
        assert name in listing
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda mod, *a: None if mod == "sacrebleu" else real(mod, *a))
    assert "meta-eval[sacrebleu]" in Bleu.unavailable_reason()


def test_ter_runs_only_when_named():
    from meta_eval.scoring.selection import choose_metrics as _choose_metrics

    chosen, skipped = _choose_metrics(None, {}, what="a set", has_sources=False, has_references=True)
    assert "ter" not in {m.name for m in chosen} and "bleu" in {m.name for m in chosen}
    assert "only when named (-m ter)" in dict(skipped)["ter"]
    chosen, skipped = _choose_metrics("ter,bleu", {}, what="a set", has_sources=False, has_references=True)
    assert [m.name for m in chosen] == ["ter", "bleu"] and not skipped


@pytest.mark.parametrize("option", ["max_ngram_order=2", "beta=1"])
def test_an_option_sacrebleus_signature_leaves_out_is_not_served_the_defaults_cached_scores(option, tmp_path,
                                                                                            shared_data):
    """sacrebleu's signature leaves out BLEU's max_ngram_order and chrF's beta: -o max_ngram_order=2 was served the
    cached scores of 4 under the same signature. Through one cache, the two values now print different
    signatures and different correlations."""
    import json

    from typer.testing import CliRunner

    from meta_eval.cli import app

    base = ["run", "-j", "chaganty", "--data-dir", str(shared_data), "-m", "bleu,chrf", "--limit", "40",
            "--resamples", "10", "--cache", str(tmp_path / "c.sqlite")]
    key, value = option.split("=")
    name = {"max_ngram_order": "bleu", "beta": "chrf"}[key]
    found = {}
    for extra in ([], ["-o", option]):
        out = tmp_path / f"r{len(extra)}.json"
        res = CliRunner().invoke(app, [*base, *extra, "--output", str(out)])
        assert res.exit_code == 0, res.output
        found[bool(extra)] = json.loads(out.read_text())
    sig = {k: v["signatures"][name] for k, v in found.items()}
    assert sig[False] != sig[True] and {"max_ngram_order": "ngram:2", "beta": "beta:1"}[key] in sig[True]
    rows = {k: [r for r in v["results"] if r["metric"] == name] for k, v in found.items()}
    assert rows[False] and [r["value"] for r in rows[False]] != [r["value"] for r in rows[True]]
