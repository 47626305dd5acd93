"""MoverScore's IDF over the whole scored set (idf="set"): Metric.fit, the runner and the score cache.

The bug this guards against: IDF computed per runner batch, while the cache key named no batch, so the same example
got different scores for different --batch-size values and the cache kept whichever came first. Here: the same rows
scored with batch sizes 1, 7 and 256 give the same bits and one cache entry per distinct example; the signature names
the set (and changes with it); fit() is cheap (no torch); the tables are checked by hand on a 3-example set, and a
score computed from them by hand.
"""
from __future__ import annotations

import json
import math
import subprocess
import sys
import warnings

import numpy as np
import pytest

from conftest import NEURAL_FIX, require_module  # noqa: E402
require_module("torch", NEURAL_FIX)
require_module("transformers", NEURAL_FIX)

from conftest import make_tiny_bert  # noqa: E402
from meta_eval.scoring.cache import ScoreCache, example_key  # noqa: E402
from meta_eval.scoring.runner import score_examples  # noqa: E402
from meta_eval.metrics import Example  # noqa: E402
from meta_eval.metrics.base import MetricError  # noqa: E402
from meta_eval.metrics.encoder import load_encoder  # noqa: E402
from meta_eval.metrics.moverscore import IdfSet, MoverScore, idf_weights  # noqa: E402

TEXTS = ["the cat sat on the mat.", "a dog won the big game!", "barack obama visited paris yesterday.",
         "the quick brown fox jumps over the lazy dog.", "john smith won in london.", "the red house is big.",
         "who won the game in paris?"]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> str:
    return str(make_tiny_bert(tmp_path_factory.mktemp("tiny") / "bert"))


def rows() -> list[Example]:
    """40 rows: every ordered pair of distinct texts (42), minus two, plus a duplicated row and two references."""
    out = [Example(a, (b,)) for a in TEXTS for b in TEXTS if a != b][:38]
    return out + [out[3], Example(TEXTS[0], (TEXTS[1], TEXTS[2]))]


# -- the runner: batch size, cache, signature ----------------------------------------------------------------
def test_batch_size_does_not_change_a_bit_and_each_example_is_cached_once(tiny, tmp_path):
    examples = rows()
    distinct = len(set(map(example_key, examples)))
    assert distinct == len(examples) - 1
    runs = {}
    for size in (1, 7, 256):
        with ScoreCache(tmp_path / f"fresh{size}.sqlite") as cache:  # computed from scratch in batches of `size`
            runs[size] = score_examples(MoverScore(model=tiny), examples, cache, batch_size=size)
            assert cache.count() == distinct
        assert runs[size].computed == distinct
    for size in (1, 7):
        assert runs[size].signature == runs[256].signature
        np.testing.assert_array_equal(runs[size].scores["moverscore[bert]"], runs[256].scores["moverscore[bert]"])
    got = runs[256].scores["moverscore[bert]"]
    assert ((got > -1) & (got < 1)).any() and np.unique(got).size > 30
    # one shared cache: a second run with another batch size only reads, and adds no entry
    with ScoreCache(tmp_path / "shared.sqlite") as cache:
        first = score_examples(MoverScore(model=tiny), examples, cache, batch_size=7)
        again = score_examples(MoverScore(model=tiny), examples, cache, batch_size=1)
        assert (again.computed, again.cached) == (0, distinct)
        assert cache.count() == cache.count(first.signature) == distinct
    np.testing.assert_array_equal(again.scores["moverscore[bert]"], got)


def test_signature_names_the_set(tiny):
    examples = rows()
    sig = score_examples(MoverScore(model=tiny), examples).signature
    assert "|idf:set(ref,hyp)|fit:set(n:40,sha256:" in sig
    same = [score_examples(MoverScore(model=tiny), order).signature for order in (examples[::-1], examples[5:] +
                                                                                   examples[:5])]
    assert same == [sig, sig]  # order does not matter
    assert score_examples(MoverScore(model=tiny), examples[:-1]).signature != sig  # one row fewer
    assert score_examples(MoverScore(model=tiny), examples + [examples[0]]).signature != sig  # a duplicate more
    changed = examples[:-1] + [Example(examples[-1].candidate + " x", examples[-1].references)]
    assert score_examples(MoverScore(model=tiny), changed).signature != sig  # one candidate edited
    # idf=none depends on no set: fit changes nothing
    metric = MoverScore(model=tiny, idf="none")
    before = metric.signature()
    metric.fit(examples)
    assert metric.signature() == before and "fit:" not in before


def test_signature_names_exactly_the_idf_documents(tiny):
    # the same references and candidates paired differently: the same tables, so the same signature, and each
    # example's score depends only on its own texts and those tables
    a, b, c, d = TEXTS[:4]
    first, second = [Example(a, (b,)), Example(c, (d,))], [Example(a, (d,)), Example(c, (b,))]
    m1, m2 = MoverScore(model=tiny), MoverScore(model=tiny)
    m1.fit(first)
    m2.fit(second)
    assert m1.signature() == m2.signature()
    np.testing.assert_array_equal(m1.score(second)["moverscore[bert]"], m2.score(second)["moverscore[bert]"])
    # a candidate turned into a reference changes the tables: another signature
    m3 = MoverScore(model=tiny)
    m3.fit([Example(b, (a,)), Example(c, (d,))])
    assert m3.signature() != m1.signature()


def test_score_without_fit_equals_the_runner_on_the_same_set(tiny):
    examples = rows()
    metric = MoverScore(model=tiny)
    api = metric.score(examples)["moverscore[bert]"]
    assert "fit:per-call" in metric.signature()  # score() fitted a copy, not the metric
    for size in (1, 256):
        run = score_examples(MoverScore(model=tiny), examples, batch_size=size)
        np.testing.assert_array_equal(run.scores["moverscore[bert]"], api)
    # after fit, score() uses the fitted set whatever it is given: a part of the set scores as in the whole
    metric.fit(examples)
    np.testing.assert_array_equal(metric.score(examples[:3])["moverscore[bert]"], api[:3])
    # while a part alone, unfitted, is another set (six rows with six different candidates)
    part = examples[::7]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no text with IDF 0 everywhere: the difference is the weights
        alone = MoverScore(model=tiny).score(part)["moverscore[bert]"]
    assert np.abs(alone - api[::7]).max() > 1e-3


def test_fit_is_cheap_and_a_cached_run_loads_no_model(tiny, tmp_path):
    path, data = tmp_path / "c.sqlite", tmp_path / "rows.json"
    with ScoreCache(path) as cache:
        score_examples(MoverScore(model=tiny), rows(), cache)
    data.write_text(json.dumps([[ex.candidate, list(ex.references)] for ex in rows()]), encoding="utf-8")
    code = ("import json, sys\nfrom meta_eval.scoring.cache import ScoreCache\n"
            "from meta_eval.scoring.runner import score_examples\n"
            "from meta_eval.metrics import Example\nfrom meta_eval.metrics.moverscore import MoverScore\n"
            f"rows = [Example(c, tuple(r)) for c, r in json.load(open({str(data)!r}))]\n"
            f"with ScoreCache({str(path)!r}) as cache:\n"
            f"    out = score_examples(MoverScore(model={tiny!r}), rows, cache)\n"
            "print(out.computed, out.cached, 'torch' in sys.modules, 'transformers' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["0", "39", "False", "False"]


def test_fit_rejects_what_is_not_an_example(tiny):
    with pytest.raises(MetricError, match="example 1 is a str"):
        MoverScore(model=tiny).fit([Example("a", ("b",)), "c"])
    with pytest.raises(MetricError, match="example 0 is a tuple"):
        MoverScore(model=tiny).score([("a", "b")])


# -- the tables and one score by hand ------------------------------------------------------------------------
HAND_SET = [Example("cat dog", ("sat",)), Example("cat", ("sat the",)), Example("the", ("dog",))]


def test_set_tables_by_hand_on_three_examples(tiny):
    tok = load_encoder(tiny).tokenizer
    ids = {w: tok.convert_tokens_to_ids(w) for w in ("cat", "dog", "sat", "the", "paris")}
    refs, hyps = IdfSet.of(HAND_SET).tables(tok, 62)
    # candidates' documents: {cat, dog}, {cat}, {the}; N = 3, so idf = log(4 / (df + 1))
    assert hyps.n_docs == 3
    assert hyps[ids["cat"]] == pytest.approx(math.log(4 / 3))
    assert hyps[ids["dog"]] == pytest.approx(math.log(4 / 2))
    assert hyps[ids["the"]] == pytest.approx(math.log(4 / 2))
    assert hyps[ids["sat"]] == pytest.approx(math.log(4))  # in no candidate
    # references' documents: {sat}, {sat, the}, {dog}
    assert refs.n_docs == 3
    assert refs[ids["sat"]] == pytest.approx(math.log(4 / 3))
    assert refs[ids["the"]] == pytest.approx(math.log(4 / 2))
    assert refs[ids["dog"]] == pytest.approx(math.log(4 / 2))
    assert refs[ids["cat"]] == pytest.approx(math.log(4))
    for table in (refs, hyps):  # [CLS] and [SEP] are in every document
        assert table[tok.cls_token_id] == 0.0 and table[tok.sep_token_id] == 0.0
    # the same as idf_weights of each list (the reference's get_idf_dict)
    assert hyps == idf_weights(["cat dog", "cat", "the"], tok)
    assert refs == idf_weights(["sat", "sat the", "dog"], tok)


def test_a_score_by_hand_from_the_fitted_tables(tiny):
    # "cat dog" against "sat": the reference's mass sits on "sat" alone ([CLS]/[SEP] weigh 0), so the EMD is the
    # candidate's weights times the distances to "sat": cat log(4/3) and dog log(2), each over their sum
    (cand,), (ref,) = load_encoder(tiny).embed(["cat dog"]), load_encoder(tiny).embed(["sat"])
    assert cand.tokens == ["[CLS]", "cat", "dog", "[SEP]"] and ref.tokens == ["[CLS]", "sat", "[SEP]"]
    unit = lambda v: v.astype(np.float64) / np.linalg.norm(v.astype(np.float64))  # noqa: E731
    sat = unit(ref.hidden[-1][1])
    dist = [np.linalg.norm(unit(cand.hidden[-1][k]) - sat) for k in (1, 2)]
    w = np.array([math.log(4 / 3), math.log(2)])
    expected = 1 - float(w @ dist / w.sum())
    metric = MoverScore(model=tiny)
    metric.fit(HAND_SET)
    assert metric.score(HAND_SET[:1])["moverscore[bert]"][0] == pytest.approx(expected, abs=1e-9)
    assert score_examples(MoverScore(model=tiny), HAND_SET).scores["moverscore[bert]"][0] == pytest.approx(expected,
                                                                                                  abs=1e-9)
    # fitted on another set (dog in every candidate: weight 0), the same example scores cat's distance alone
    other = MoverScore(model=tiny)
    other.fit([Example("cat dog", ("sat",)), Example("dog", ("sat the",)), Example("the dog", ("dog",))])
    assert other.score(HAND_SET[:1])["moverscore[bert]"][0] == pytest.approx(1 - dist[0], abs=1e-9)
