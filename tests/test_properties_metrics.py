"""Property-based fault suite for the cheap metrics (hypothesis): documented maxima, ranges, order, batch and
reference/candidate symmetry, and no NaN on any text.

Metrics: ROUGE, COCO ROUGE-L, WMS/SMS/S+WMS (GloVe), BLEU, chrF, TER, TextRank and Novelty. Each property holds by the
metric's docstring; the texts mix known words, stopwords, words unknown to GloVe, unicode (accents, CJK, emoji,
ligatures, combining marks), digits, punctuation and all kinds of blanks, and arbitrary short unicode strings.
Examples are derandomised (the same ones every run, no example database written) and small, so the file runs in
well under a minute on two cores.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import require
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from meta_eval.metrics import Example, create
from meta_eval.metrics.base import MetricError
from meta_eval.metrics.registry import get_class
from meta_eval.metrics.text import STOPWORDS

CHEAP = ("rouge", "rouge-coco", "wms", "sms", "s+wms", "bleu", "chrf", "ter", "textrank", "novelty")
MOVERS = ("wms", "sms", "s+wms")
# documented ranges (each metric's module docstring): (low, high), None = unbounded
RANGES = {"rouge": (0.0, 1.0), "rouge-coco": (0.0, 1.0), "wms": (0.0, 1.0), "sms": (0.0, 1.0), "s+wms": (0.0, 1.0),
          "bleu": (0.0, 100.0), "chrf": (0.0, 100.0), "ter": (0.0, None), "textrank": (0.0, None),
          "novelty": (0.0, None)}
# BLEU of identical texts is sacrebleu's exp(mean log precision) * 100 = 100.00000000000004 (float rounding), so
# bounds are checked to this tolerance; a real excess would be far larger.
FLOAT_SLACK = 1e-9

CONTENT = ["cat", "dog", "sat", "mat", "president", "visited", "paris", "yesterday", "quick", "brown", "running",
           "city", "scored", "game"]
STOP = ["the", "a", "of", "it", "and", "was"]
UNKNOWN = ["zzqx", "qqzzx", "plorkt", "vexnub"]
ODD = ["café", "naïve", "東京", "🙂", "e\u0301", "Ünïcödé", "İstanbul", "ﬁne", "ß", "123", "3.14", "...", "!!", "--",
       "'s", "n't", "\u200b", "\u00a0"]
SEPS = [" ", "  ", "\t", "\n", ". ", "! ", "? ", ", ", "\n\n", ""]

words = st.sampled_from(CONTENT + STOP + UNKNOWN + ODD)
built = st.lists(st.tuples(words, st.sampled_from(SEPS)), max_size=8).map(lambda p: "".join(w + s for w, s in p))
texts = st.one_of(built, st.text(max_size=16), st.sampled_from(["", " ", "\n\t ", "...", "zzqx qqzzx.",
                                                                "plorkt vexnub."]))
assert not set(CONTENT) & STOPWORDS  # every word of `plain` is kept: TextRank's one-word sentences weigh 0 (log0:0)
# plain sentences of at least two known content words (where the maxima are defined)
plain = st.lists(st.sampled_from(CONTENT), min_size=2, max_size=8).map(lambda w: " ".join(w).capitalize() + ".")

FAST = settings(max_examples=25, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module", params=CHEAP)
def metric(request):
    cls = get_class(request.param)
    reason = cls.unavailable_reason()
    require(reason is None, f"the metric {request.param}", str(reason))
    return create(request.param)


def examples_of(cands, refs, sources=None):
    sources = sources if sources is not None else refs
    return [Example(c, (r,), s) for c, r, s in zip(cands, refs, sources)]


def score_or_documented_error(metric, examples):
    """The scores, or None when the metric refuses the batch with its documented error (MetricError)."""
    try:
        return metric.score(examples)
    except MetricError:
        return None


def in_range(name: str, values: np.ndarray) -> bool:
    low, high = RANGES[name]
    return bool((values >= low - FLOAT_SLACK).all() and (high is None or (values <= high + FLOAT_SLACK).all()))


# -- never NaN, always in range -----------------------------------------------------------------------------------------

@FAST
@given(data=st.data())
def test_any_text_gives_finite_in_range_scores_or_a_documented_error(metric, data):
    n = data.draw(st.integers(1, 3))
    cands = data.draw(st.lists(texts, min_size=n, max_size=n))
    refs = data.draw(st.lists(texts, min_size=n, max_size=n))
    sources = data.draw(st.lists(texts, min_size=n, max_size=n))
    out = score_or_documented_error(metric, examples_of(cands, refs, sources))
    if out is None:  # the documented refusal: a metric that needs a source or reference and got a blank one
        assert metric.needs_source and any(not s for s in sources) or metric.needs_references and any(
            not r for r in refs)
        return
    assert set(out) == set(metric.variants)
    for variant, values in out.items():
        assert values.shape == (n,) and np.isfinite(values).all(), variant
        assert in_range(metric.name, values), (variant, values)


# -- order and batch invariance -----------------------------------------------------------------------------------------

@FAST
@given(data=st.data())
def test_scores_do_not_depend_on_order_or_batching(metric, data):
    n = data.draw(st.integers(2, 5))
    cands = data.draw(st.lists(st.one_of(plain, texts), min_size=n, max_size=n))
    refs = data.draw(st.lists(st.one_of(plain, texts), min_size=n, max_size=n))
    sources = data.draw(st.lists(plain, min_size=n, max_size=n))  # never blank: the whole batch scores
    examples = examples_of(cands, refs, sources)
    perm = data.draw(st.permutations(range(n)))
    together = metric.score(examples)
    shuffled = metric.score([examples[i] for i in perm])
    one_by_one = [metric.score([ex]) for ex in examples]
    for variant in metric.variants:
        np.testing.assert_array_equal(shuffled[variant], together[variant][list(perm)], err_msg=variant)
        np.testing.assert_array_equal(np.concatenate([o[variant] for o in one_by_one]), together[variant],
                                      err_msg=variant)


# -- documented maxima --------------------------------------------------------------------------------------------------

@FAST
@given(text=plain)
def test_identical_texts_score_the_documented_maximum(metric, text):
    out = metric.score([Example(text, (text,), text)])
    got = {v: float(a[0]) for v, a in out.items()}
    name = metric.name
    if name == "rouge":  # at least two tokens: every n-gram and the LCS match, P = R = F = 1
        assert got == pytest.approx({v: 1.0 for v in metric.variants}, abs=1e-12)
    elif name in ("rouge-coco", *MOVERS):  # 1.0 (identical texts with known words)
        assert got[name if name != "rouge-coco" else "rougeL-coco"] == pytest.approx(1.0, abs=1e-12)
    elif name in ("bleu", "chrf"):
        assert got[name] == pytest.approx(100.0, abs=FLOAT_SLACK)
    elif name == "ter":  # no edit
        assert got["ter"] == 0.0
    elif name == "novelty":  # a summary copied from the source has no novel n-gram
        assert got["novelty"] == 0.0
    else:  # textrank: a summary equal to its source is exactly as central as the average sentence (N / k * k / N)
        assert got["textrank"] == pytest.approx(1.0, abs=1e-9)


# -- symmetry -----------------------------------------------------------------------------------------------------------

@settings(max_examples=40, deadline=None, derandomize=True, database=None)
@given(a=st.one_of(plain, texts), b=st.one_of(plain, texts))
@pytest.mark.parametrize("name", MOVERS)
def test_mover_similarity_is_symmetric_with_one_reference(name, a, b):
    metric = create(name)
    ab, ba = metric.score([Example(a, (b,)), Example(b, (a,))])[name]
    assert ab == pytest.approx(ba, rel=1e-9, abs=0.0)


@settings(max_examples=40, deadline=None, derandomize=True, database=None)
@given(a=st.one_of(plain, texts), b=st.one_of(plain, texts))
def test_rouge_precision_and_recall_swap_with_the_texts(a, b):
    out = create("rouge").score([Example(a, (b,)), Example(b, (a,))])
    for kind in ("rouge1", "rouge2", "rougeL"):  # rougeLsum's union LCS is not symmetric
        assert out[f"{kind}-p"][0] == pytest.approx(out[f"{kind}-r"][1], abs=1e-12)
        assert out[f"{kind}-f"][0] == pytest.approx(out[f"{kind}-f"][1], abs=1e-12)


# -- the mover metrics' documented 0.0: no kept or known word, and only then ------------------------------------------

@settings(max_examples=40, deadline=None, derandomize=True, database=None)
@given(a=st.one_of(plain, texts), b=st.one_of(plain, texts))
@pytest.mark.parametrize("name", MOVERS)
def test_mover_zero_exactly_when_a_side_has_no_known_word(name, a, b):
    metric = create(name)
    examples = [Example(a, (b,)), Example(a, (a,))]
    scores = metric.score(examples)
    reasons = metric.degenerate(examples)
    assert reasons == metric.degenerate(examples, scores)  # the shortcut through the scores changes nothing
    for value, reason in zip(scores[name], reasons):
        assert (value == 0.0) == (reason is not None), (value, reason)
        if reason is None:
            assert 0.0 < value <= 1.0
    assert scores[name][1] in (0.0, pytest.approx(1.0, abs=1e-12))  # a text against itself: a match or no word


@pytest.mark.parametrize("name", MOVERS)
def test_two_texts_of_unknown_words_are_no_perfect_match(name):
    metric = create(name)
    examples = [Example("zzqx qqzzx.", ("plorkt vexnub.",)), Example("zzqx qqzzx.", ("zzqx qqzzx.",)),
                Example("The cat sat.", ("plorkt vexnub.",)), Example("plorkt vexnub.", ("The cat sat.",)),
                Example("The cat sat.", ("the of.", "zzqx.")), Example("The cat sat.", ("zzqx.", "A cat sat."))]
    got = metric.score(examples)[name]
    np.testing.assert_array_equal(got[:5], [0.0] * 5)
    assert got[5] == pytest.approx(1.0)  # the one reference with known words decides (refs:max)
    assert metric.degenerate(examples) == [
        "no known word in the candidate (scored 0.0)", "no known word in the candidate (scored 0.0)",
        "no known word in the reference (scored 0.0)", "no known word in the candidate (scored 0.0)",
        "no known word in any reference (scored 0.0)", None]
    assert "|unknown:0|" in metric.signature()


def test_degenerate_defaults_to_every_row_measured():
    examples = [Example("", ("",)), Example("zzqx", ("zzqx",))]
    assert create("rouge").degenerate(examples) == [None, None]
    assert math.isfinite(create("rouge").score(examples)["rouge1-f"].sum())


def test_run_counts_the_rows_without_a_known_word(tmp_path):
    """`meta-eval run` prints one line per metric with such rows and records them under "degenerate" in --output."""
    import json

    from typer.testing import CliRunner

    from meta_eval.cli import app

    plain_texts = ["The cat sat on the mat.", "A dog ran in the city.", "The president visited Paris.",
                   "Quick brown dogs won the game.", "The city was quiet yesterday.", "Cats and dogs ran."]
    rows = []
    for i in range(12):
        cand = "zzqx qqzzx." if i in (2, 5) else ("  " if i == 7 else plain_texts[i % 6])
        ref = "plorkt vexnub." if i == 5 else plain_texts[(i + 1) % 6]
        rows.append({"id": f"r{i}", "doc_id": f"d{i // 4}", "system": f"s{i % 4}", "candidate": cand,
                     "references": [ref], "scores": {"q": float(i % 5)}})
    data = tmp_path / "unknown.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "out.json"
    result = CliRunner().invoke(app, ["run", "--judgments", str(data), "--metrics", "wms,rouge", "--no-cache",
                                      "--output", str(out)])
    assert result.exit_code == 0, result.output
    assert ("wms: 3 of 12 rows not measured, given the metric's documented value: 2 with no known word in the "
            "candidate (scored 0.0); 1 with no kept word in the candidate (scored 0.0)") in " ".join(
                result.output.split())
    assert result.output.count("rows not measured") == 1  # ROUGE measures every row (a blank text's 0 is measured)
    doc = json.loads(out.read_text())
    assert doc["degenerate"]["wms"] == {"rows": 3, "reasons": {"no known word in the candidate (scored 0.0)": 2,
                                                               "no kept word in the candidate (scored 0.0)": 1}}
    assert doc["degenerate"]["rouge"] == {"rows": 0, "reasons": {}}


def test_contextual_movers_measure_made_up_words_and_name_their_empty_rows():
    """A contextual encoder gives made-up words vectors (word pieces): no free perfect match, nothing degenerate;
    texts with no kept word score the documented 0.0 and are named."""
    from conftest import require_minilm

    require_minilm()
    metric = create("wms-ctx")  # the offline MiniLM by default: wms-ctx[minilm]
    examples = [Example("zzqx qqzzx.", ("plorkt vexnub.",)), Example("", ("The cat sat.",)),
                Example("The cat sat.", ("the of it.",)), Example("The cat sat.", ("", "The dog ran."))]
    scores = metric.score(examples)
    got = scores["wms-ctx[minilm]"]
    assert 0.0 < got[0] < 1.0 and got[1] == got[2] == 0.0 and got[3] > 0.0
    expected = [None, "no kept word in the candidate (scored 0.0)", "no kept word in the reference (scored 0.0)", None]
    assert metric.degenerate(examples) == expected
    assert metric.degenerate(examples, scores) == expected
