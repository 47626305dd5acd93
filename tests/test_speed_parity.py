"""The fast paths give the reference implementations' scores, bit for bit (``==``, never approx).

ROUGE (:mod:`metrics.rouge`): the fast path (texts analysed once, bit-parallel LCS, union LCS replaying
``rouge-score``'s backtracking) against ``rouge_score.rouge_scorer.RougeScorer`` itself, both directly and through
:func:`metrics.rouge.reference` (the metric scoring through ``RougeScorer``, as it did before), for every option and
every multi-reference policy, on real rows (chaganty, SummEval with its 11 references) and on generated texts (empty,
punctuation only, repeated tokens, long, Unicode, several lines). The LCS helpers are checked against
``rouge-score``'s ``_lcs_table`` and ``lcs_ind`` on generated sequences with small alphabets (many ties).

MoverScore (:mod:`metrics.moverscore`): encoder states kept between calls give the same bits as a fresh object, and a
pair's score equals the one recomputed from that pair's texts encoded alone.
"""
from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from nltk.stem.porter import PorterStemmer
from rouge_score import rouge_scorer, tokenize as rs_tokenize
from rouge_score.rouge_scorer import _lcs_table, lcs_ind

from meta_eval import judgments
from meta_eval.metrics import Example, create
from meta_eval.metrics.rouge import (_bitmasks, _Ids, _lcs_indices, _lcs_length, _stopword_set, _Text, _Tokenizer,
                                     _Words, prepare, reference)

TYPES = ["rouge1", "rouge2", "rougeL", "rougeLsum"]
PARTS = (("p", "precision"), ("r", "recall"), ("f", "fmeasure"))
POLICIES = ("max", "mean", "first", "jackknife", "pool", "jackknife-pool")
SLOW = settings(deadline=None, suppress_health_check=list(HealthCheck), derandomize=True, database=None)


def _have_smart() -> bool:
    try:
        from meta_eval.metrics.rouge import smart_stopwords

        smart_stopwords()
        return True
    except ValueError:
        return False


OPTIONS = [{}, {"use_stemmer": False}, {"split": "newline"}, {"split": "punkt"}, {"split": "period"},
           {"stopwords": "nltk"}, {"stopwords": "nltk", "use_stemmer": False}, {"max_words": 25},
           {"max_bytes": 120, "split": "newline"}, {"max_words": 12, "stopwords": "nltk", "split": "period"}]
if _have_smart():
    OPTIONS.append({"stopwords": "smart"})


def assert_same(fast: dict, slow: dict, what: str) -> None:
    assert set(fast) == set(slow)
    for variant in fast:
        a, b = np.asarray(fast[variant]), np.asarray(slow[variant])
        bad = np.flatnonzero(a != b)
        assert not bad.size, f"{what} {variant}: row {bad[0]}: {a[bad[0]]!r} != {b[bad[0]]!r}"


def plain(examples, stem: bool = True, texts=lambda t: t) -> dict[str, list[float]]:
    """``RougeScorer(...).score`` / ``score_multi`` as a user would call it."""
    scorer = rouge_scorer.RougeScorer(TYPES, use_stemmer=stem)
    out = {f"{t}-{s}": [] for t in TYPES for s, _ in PARTS}
    for ex in examples:
        refs = [texts(r) for r in ex.references]
        res = scorer.score(refs[0], texts(ex.candidate)) if len(refs) == 1 else scorer.score_multi(refs, texts(ex.candidate))
        for t in TYPES:
            for s, attr in PARTS:
                out[f"{t}-{s}"].append(getattr(res[t], attr))
    return out


# -- the LCS helpers ---------------------------------------------------------------------------------------------------
token_lists = st.lists(st.sampled_from("abcd"), max_size=14) | st.lists(st.sampled_from("abcdefghij"), max_size=40)


@SLOW
@given(token_lists, token_lists)
def test_lcs_length_and_indices_equal_rouge_scores_tables(ref, can):
    masks = _bitmasks(can)
    assert _lcs_length(ref, masks, len(can)) == _lcs_table(ref, can)[-1][-1]
    assert _lcs_indices(ref, masks, len(can)) == lcs_ind(ref, can)  # the same LCS: ties broken as rouge-score


def test_lcs_indices_on_many_random_pairs():
    rng = random.Random(12)
    for _ in range(5000):
        ref = [rng.choice("abc"[:rng.randint(1, 3)]) for _ in range(rng.randint(0, 12))]
        can = [rng.choice("abcd"[:rng.randint(1, 4)]) for _ in range(rng.randint(0, 12))]
        assert _lcs_indices(ref, _bitmasks(can), len(can)) == lcs_ind(ref, can), (ref, can)


def test_lcs_by_hand():
    # ref "a b a", can "b a b": LCS 2 ("a b" or "b a"). From cell (3, 3): a != b and table[3][2] = 2 is not above
    # table[2][3] = 2, so up; b == b keeps ref position 1; a == a keeps position 0: "a b", ref positions [0, 1]
    assert _lcs_length(list("aba"), _bitmasks(list("bab")), 3) == 2
    assert _lcs_indices(list("aba"), _bitmasks(list("bab")), 3) == [0, 1] == lcs_ind(list("aba"), list("bab"))
    assert _lcs_indices(list("abc"), _bitmasks(list("xyz")), 3) == []
    assert _lcs_length([], _bitmasks(list("ab")), 2) == 0


# -- tokens ------------------------------------------------------------------------------------------------------------
WORDS = ("the a cat cats sat sitting running ran ponies generalizations agreed owned humbled dying skies "
         "yes no 2019 1st don't U.S. e-mail naïve café ΣΑΣ İstanbul Kelvin ... !!! , -- reuters ap").split()
texts = (st.lists(st.sampled_from(WORDS + ["\n", "\n\n", " . ", "  "]), max_size=60).map(" ".join)
         | st.text(max_size=120)
         | st.text(st.characters(blacklist_categories=()), max_size=60)  # lone surrogates too (JSON can carry them)
         | st.lists(st.sampled_from(["the", "cat", "cat", "."]), max_size=300).map(" ".join))


@SLOW
@given(texts, st.booleans(), st.sampled_from(["none", "nltk"]))
def test_tokens_equal_rouge_scores_tokenizer(text, stem, stop):
    words = _Words(stem, _stopword_set(stop))
    want = list(_Tokenizer(stem, _stopword_set(stop)).tokenize(text))
    assert words.tokens(text) == want
    if stop == "none":
        assert want == rs_tokenize.tokenize(text, PorterStemmer() if stem else None)
    # the whole text's tokens are its lines' tokens one after the other (what _Text relies on)
    assert _Text(text, words, _Ids()).tokens == want


def test_tokens_split_at_every_non_ascii_character_and_lone_surrogate():
    """Every non-ASCII character (1 to 4 UTF-8 bytes, all >= 0x80) and a lone surrogate (from JSON) is a space."""
    text = "Caf\u00e9s x\ud800y \u00c5ngstr\u00f6m 2\u20ac3 \U0001F600emoji\U0001F600 \u0130stanbul"
    want = rs_tokenize.tokenize(text, None)
    assert want == ["caf", "s", "x", "y", "ngstr", "m", "2", "3", "emoji", "i", "stanbul"]
    assert _Words(False, frozenset()).tokens(text) == want


# -- the metric against rouge-score ------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def rows(shared_data):
    chaganty = judgments.load("chaganty", shared_data).examples()
    summeval = judgments.load("summeval", shared_data).examples()
    assert len(summeval[0].references) == 11
    return {"chaganty": chaganty, "summeval": summeval}


@pytest.mark.parametrize("name, sample", [("chaganty", slice(0, 2085, 9)), ("summeval", slice(0, 1600, 23))])
def test_default_metric_equals_plain_rouge_score_on_real_rows(rows, name, sample):
    """Every variant equals RougeScorer.score_multi's on the metric's sentences (one per line), on real rows."""
    examples = rows[name][sample]
    assert len(examples) >= 60
    fast = create("rouge").score(examples)
    assert_same(fast, plain(examples, texts=prepare), f"{name} vs rouge-score")
    newline = create("rouge", split="newline").score(examples)  # the raw single-line texts, as a user passes them
    assert_same(newline, plain(examples), f"{name} split=newline vs rouge-score")


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "default")
def test_every_option_and_policy_equals_the_rouge_score_path(rows, options):
    examples = rows["summeval"][5:1600:400] + rows["chaganty"][7:2085:260]  # 4 rows x 11 references, 8 x 1
    for policy in POLICIES:
        metric = create("rouge", **options).with_refs(policy)
        slow = reference(metric)
        assert slow.signature() == metric.signature()
        assert_same(metric.score(examples), slow.score(examples), f"{options} refs={policy}")


examples_strategy = st.builds(lambda c, refs: Example(c, tuple(refs)), texts, st.lists(texts, min_size=1, max_size=4))


def test_one_sentence_each_summary_level_hits_are_the_lcs_with_repeated_tokens():
    """The one-sentence shortcut of ``_hits`` (rougeLsum hits = LCS length) against rouge-score itself, on pairs
    where tokens repeat (where clipping could matter) and where the LCS has several tie-broken readings."""
    rng = np.random.default_rng(12)
    vocab = ["the", "cat", "sat", "on", "mat", "cats", "sitting"]
    def line():
        return " ".join(rng.choice(vocab, rng.integers(1, 25)))

    examples = [Example(line(), (line(),)) for _ in range(300)]
    examples += [Example("the cat the cat", ("cat the cat the",)), Example("cat cat cat", ("cat",)),
                 Example("cat", ("cat cat cat",))]
    out = create("rouge", split="newline").score(examples)
    assert_same(out, plain(examples), "one sentence each")
    assert out["rougeLsum-r"][-2] == 1 / 1 and out["rougeLsum-p"][-1] == 1 / 1  # by hand: one 'cat' matches
    assert np.array_equal(out["rougeLsum-f"], out["rougeL-f"])


@settings(SLOW, max_examples=60)
@given(st.lists(examples_strategy, min_size=1, max_size=4), st.sampled_from(OPTIONS), st.sampled_from(POLICIES))
def test_generated_texts_equal_the_rouge_score_path(examples, options, policy):
    metric = create("rouge", **options).with_refs(policy)
    assert_same(metric.score(examples), reference(metric).score(examples), f"{options} refs={policy}")


@settings(SLOW, max_examples=80)
@given(st.lists(examples_strategy, min_size=1, max_size=4), st.booleans())
def test_generated_texts_equal_plain_rouge_score(examples, stem):
    out = create("rouge", use_stemmer=stem, split="newline").score(examples)
    assert_same(out, plain(examples, stem), f"use_stemmer={stem}")


def test_memo_tables_do_not_leak_between_options():
    """One process, several metric objects: each keeps its own analysed texts (stemming on/off, stopwords)."""
    ex = [Example("The cats sat.", ("A cat sat.",))]
    on, off = create("rouge").score(ex), create("rouge", use_stemmer=False).score(ex)
    assert on["rouge1-r"][0] == 2 / 3 and off["rouge1-r"][0] == 1 / 3  # cats/cat match only when stemmed
    assert create("rouge").score(ex)["rouge1-r"][0] == 2 / 3


# -- MoverScore: kept encodings change no bit --------------------------------------------------------------------------
MOVER_TEXTS = ["the cat sat on the mat.", "a dog won the big game!", "barack obama visited paris yesterday.",
               "the quick brown fox jumps over the lazy dog.", "john smith won in london.", "the red house is big.",
               "who won the game in paris?", "the big dog sat on the red mat in london."]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> str:
    from conftest import NEURAL_FIX, make_tiny_bert, require_module

    require_module("torch", NEURAL_FIX)
    require_module("transformers", NEURAL_FIX)
    return str(make_tiny_bert(tmp_path_factory.mktemp("tiny") / "bert"))


def _alone(model: str, cand: str, ref: str, idf=None) -> float:
    """1 - EMD of one pair, each text encoded alone (a batch of one), from the module's documented pieces."""
    from meta_eval.metrics.encoder import load_encoder
    from meta_eval.metrics.mover import mover_distance
    from meta_eval.metrics.moverscore import piece_weights

    encoder = load_encoder(model)
    sides = []
    for text, table in ((ref, idf[0] if idf else None), (cand, idf[1] if idf else None)):
        st = encoder.embed([text], batch_size=1)[0]
        w = piece_weights(st.tokens, st.input_ids, st.special, table)
        keep = w > 0
        vecs = st.hidden[-1][keep].astype(np.float64)
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True) + 1e-30
        sides.append((w[keep] / w[keep].sum(), vecs))
    return 1.0 - mover_distance(sides[0][0], sides[0][1], sides[1][0], sides[1][1])


def test_moverscore_kept_references_give_the_bits_of_a_fresh_object(tiny):
    from meta_eval.scoring.runner import score_examples
    from meta_eval.metrics.moverscore import MoverScore

    rows = [Example(a, (b,)) for a in MOVER_TEXTS for b in MOVER_TEXTS[:3] if a != b]
    first, second = rows[:10], rows[10:]
    metric = MoverScore(model=tiny, idf="none")
    metric.score(first)
    kept = set(metric._states.items)
    assert kept == {r for ex in first for r in ex.references}  # references are kept, candidates are not
    assert kept & {r for ex in second for r in ex.references}  # so the second call reuses some
    again = metric.score(second)["moverscore[bert]"]
    fresh = MoverScore(model=tiny, idf="none").score(second)["moverscore[bert]"]
    assert np.array_equal(again, fresh)
    # and with set IDF through the runner, in batches small enough to spread references over several calls
    one = score_examples(MoverScore(model=tiny), rows, batch_size=256).scores["moverscore[bert]"]
    many = score_examples(MoverScore(model=tiny), rows, batch_size=4).scores["moverscore[bert]"]
    assert np.array_equal(one, many)


def test_moverscore_equals_each_pair_encoded_alone(tiny):
    from meta_eval.metrics.moverscore import MoverScore

    rows = [Example(a, (b,)) for a, b in zip(MOVER_TEXTS, MOVER_TEXTS[1:] + MOVER_TEXTS[:1])]
    got = MoverScore(model=tiny, idf="none").score(rows)["moverscore[bert]"]
    assert [float(x) for x in got] == [_alone(tiny, ex.candidate, ex.references[0]) for ex in rows]


def test_moverscore_minilm_on_chaganty_equals_each_pair_encoded_alone(shared_data):
    """The real encoder on real rows: batching by length, kept references and set IDF change no bit."""
    from conftest import require_minilm
    from meta_eval.metrics.moverscore import IdfSet, MoverScore

    require_minilm()
    from meta_eval.metrics.encoder import load_encoder

    rows = judgments.load("chaganty", shared_data).examples()[:12]
    metric = MoverScore(model="minilm")
    metric.fit(rows)
    got = np.concatenate([metric.score(rows[:5])["moverscore[minilm]"], metric.score(rows[5:])["moverscore[minilm]"]])
    encoder = load_encoder("minilm")
    tables = IdfSet.of(rows).tables(encoder.tokenizer, encoder.max_length - 2)
    want = [_alone("minilm", ex.candidate, ex.references[0], tables) for ex in rows]
    assert [float(x) for x in got] == want


def test_state_cache_is_bounded_and_least_recently_used():
    from meta_eval.metrics.moverscore import _Encoded, _StateCache

    def enc(n):
        return _Encoded(["x"] * n, np.zeros(n, dtype=int), np.zeros(n, dtype=bool), np.zeros((n, 4), np.float32))

    cache = _StateCache(budget=3 * 48)  # three texts of 3 pieces x 4 float32 (48 bytes each)
    for name in "abc":
        cache.put(name, enc(3))
    assert cache.get("a") is not None  # a is now the most recent
    cache.put("d", enc(3))  # evicts b, the least recently used
    assert cache.get("b") is None and all(cache.get(k) is not None for k in "acd")
    cache.put("huge", enc(100))  # larger than the budget: not kept, nothing evicted
    assert cache.get("huge") is None and cache.size == 3 * 48
