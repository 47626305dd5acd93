"""TextRank (Mihalcea & Tarau 2004, as a metric in Scialom et al. 2019): hand-computed graphs and invariants."""
from __future__ import annotations

import math

import numpy as np
import pytest

from meta_eval import judgments
from meta_eval.metrics import Example, MetricError
from meta_eval.metrics.textrank import TextRank, _sentences, pagerank, sentence_similarity, textrank_scores

SOURCE = "Cats chase mice. Dogs chase cats."


def score(cand: str, source: str, **cfg) -> float:
    return float(TextRank(**cfg).score([Example(cand, source=source)])["textrank"][0])


def mt04_ranks(weights: np.ndarray, d: float = 0.85, sweeps: int = 2000) -> np.ndarray:
    """Mihalcea & Tarau's unnormalised recursion WS_i = (1 - d) + d * sum_j w_ji / sum_k w_jk * WS_j, iterated."""
    ws = np.ones(len(weights))
    out_strength = weights.sum(axis=1)
    for _ in range(sweeps):
        ws = np.array([(1 - d) + d * sum(weights[j, i] / out_strength[j] * ws[j] for j in range(len(ws)))
                       for i in range(len(ws))])
    return ws / ws.sum()


def test_sentence_similarity_by_hand():
    cat_sat = (frozenset({"cat", "sat"}), 2)
    assert sentence_similarity(cat_sat, (frozenset({"cat", "ran", "far"}), 3)) == pytest.approx(
        1 / (math.log(2) + math.log(3)))
    # repeated words count once in the overlap but in the length: {cat} shared, |S| = 2 and 4
    assert sentence_similarity(cat_sat, (frozenset({"cat", "dog"}), 4)) == pytest.approx(
        1 / (math.log(2) + math.log(4)))
    assert sentence_similarity(cat_sat, (frozenset({"dog"}), 1)) == 0.0
    # two one-word sentences: log 1 + log 1 = 0, guarded to weight 0 even when the word is shared
    assert sentence_similarity((frozenset({"cat"}), 1), (frozenset({"cat"}), 1)) == 0.0


def test_three_sentence_graph_by_hand():
    # kept stems: S1 {cat, chase, mice}, S2 {dog, chase, cat}, S3 (summary) {mice, fear, dog}, three tokens each:
    # w12 = 2 / (2 ln 3), w13 = w23 = 1 / (2 ln 3)
    c = 1 / (2 * math.log(3))
    weights = np.array([[0, 2 * c, c], [2 * c, 0, c], [c, c, 0]])
    # by symmetry x1 = x2 = (1 - x3) / 2 and x3 = 0.15 / 3 + 0.85 * (x1 / 3 + x2 / 3), so x3 = 1 / 3.85
    x3 = 1 / 3.85
    expected = np.array([(1 - x3) / 2, (1 - x3) / 2, x3])
    np.testing.assert_allclose(mt04_ranks(weights), expected, rtol=1e-12)
    np.testing.assert_allclose(pagerank(weights), expected, rtol=1e-12)
    src_rank, summ_rank = textrank_scores(SOURCE, "Mice fear dogs.")
    np.testing.assert_allclose(np.concatenate([src_rank, summ_rank]), expected, rtol=1e-12)
    # score = N / k * sum PR(summary) = 3 / 1 * x3
    assert score("Mice fear dogs.", SOURCE) == pytest.approx(3 / 3.85, rel=1e-12)


def test_isolated_summary_sentence_counts_with_zero():
    # "Birds sing." shares no word: it is dropped from the graph (N = 3) but counts in the mean (k = 2)
    assert score("Mice fear dogs. Birds sing.", SOURCE) == pytest.approx(3 / 2 / 3.85, rel=1e-12)
    src_rank, summ_rank = textrank_scores(SOURCE, "Mice fear dogs. Birds sing.")
    assert summ_rank[1] == 0.0 and src_rank.sum() + summ_rank.sum() == pytest.approx(1.0)


def test_pagerank_agrees_with_networkx_on_a_real_graph(shared_data):
    nx = __import__("conftest").require_module("networkx", "pip install 'meta-eval[test]'")
    row = judgments.load("summeval", shared_data, download=False).rows[0]
    src_rank, summ_rank = textrank_scores(row.source, row.candidate)
    ours = np.concatenate([src_rank, summ_rank])
    # rebuild the weights independently from the sentence analysis and rank with networkx's power iteration
    sents = _sentences(row.source, "wordpunct", "snowball") + _sentences(row.candidate, "wordpunct", "snowball")
    graph = nx.Graph()
    for i, a in enumerate(sents):
        for j in range(i + 1, len(sents)):
            w = sentence_similarity(a, sents[j])
            if w > 0:
                graph.add_edge(i, j, weight=w)
    rank = nx.pagerank(graph, alpha=0.85, weight="weight", tol=1e-13, max_iter=10_000)
    theirs = np.array([rank.get(i, 0.0) for i in range(len(sents))])
    assert len(ours) == len(sents) > 10
    np.testing.assert_allclose(ours, theirs, atol=1e-9)


def test_equivalent_sentences_score_one():
    # every node alike: a uniform PageRank, so the summary is exactly as central as an average sentence
    assert score("The cat sat.", "A cat sat. A cat sat.") == pytest.approx(1.0, rel=1e-12)
    assert score("Cat sat. Cat sat.", "Cats sat. Cat sat. A cat sat.") == pytest.approx(1.0, rel=1e-12)
    # a blank source leaves the summary's own two sentences
    assert score("Cats sit. Cats run.", "   ") == pytest.approx(1.0, rel=1e-12)


def test_central_sentence_scores_higher():
    # the middle sentence shares words with both others: copying it beats copying an end sentence
    source = "Storm hits coast. Storm floods coast towns near harbour. Harbour towns evacuate."
    assert score("Storm floods coast towns near harbour.", source) > score("Harbour towns evacuate.", source)


def test_stemming_links_inflected_forms():
    source = "Dogs barked loudly. Birds sang."
    assert score("The dog barks.", source) > 0.0  # dog, bark match after Snowball stemming
    assert score("The dog barks.", source, stemmer="none") == 0.0  # dog/dogs, barks/barked differ


@pytest.mark.parametrize("empty", ["", "   \n\t", "the and of it", "123 ... !!!"])
def test_summary_without_content_scores_zero(empty):
    assert score(empty, SOURCE) == 0.0


def test_no_shared_word_and_one_word_sentences_score_zero():
    assert score("Birds sing.", SOURCE) == 0.0
    assert score("Cats.", "Cats.") == 0.0  # log-guard: the only edge has weight 0


SUMMARIES = ["Cats chase mice.", "Mice fear dogs. Dogs chase cats.", "Birds sing.", "", "Dogs and cats chase."]


def test_order_and_batch_invariance():
    metric = TextRank()
    examples = [Example(s, source=SOURCE) for s in SUMMARIES] + [Example(s, source="Mice run. Cats sit.")
                                                                 for s in SUMMARIES]
    together = metric.score(examples)["textrank"]
    reversed_ = metric.score(examples[::-1])["textrank"][::-1]
    one_by_one = np.concatenate([metric.score([ex])["textrank"] for ex in examples])
    np.testing.assert_array_equal(together, reversed_)
    np.testing.assert_array_equal(together, one_by_one)
    assert np.all(np.isfinite(together)) and np.all(together >= 0)


def test_needs_a_source_and_validates_config():
    with pytest.raises(MetricError, match="source"):
        TextRank().score([Example("Cats chase mice.")])
    with pytest.raises(ValueError, match="tokenizer"):
        TextRank(tokenizer="nope")
    with pytest.raises(ValueError, match="stemmer"):
        TextRank(stemmer="porter")
    with pytest.raises(MetricError, match="edge"):
        pagerank(np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 0.0]]))


def test_registered_under_its_name():
    from meta_eval.metrics.registry import _registry

    assert TextRank.name == "textrank" and _registry["textrank"] is TextRank


def test_signature_names_the_choices():
    sig = TextRank().signature()
    for part in ("textrank|", "graph:source+summary", "stop:nltk179", "stem:snowball-en", "sim:mt04", "d:0.85",
                 "pagerank:exact", "score:mean/uniform", "numpy==", "nltk=="):
        assert part in sig
    assert TextRank(stemmer="none").signature() != sig
    cls = TextRank()
    assert cls.needs_source and not cls.needs_references and cls.higher_is_better


@pytest.mark.parametrize("name, dimension", [("summeval", "relevance"), ("realsumm", "litepyramid_recall")])
def test_real_data_correlation(shared_data, name, dimension):
    from scipy.stats import spearmanr

    jset = judgments.load(name, shared_data, download=False).scored(dimension)
    scores = TextRank().score(jset.examples())["textrank"]
    assert len(scores) == len(jset) and np.all(np.isfinite(scores))
    rho = spearmanr(scores, jset.human(dimension)).correlation
    print(f"\ntextrank {name}/{dimension}: n={len(scores)} spearman={rho:.4f} mean={scores.mean():.3f}")
    assert np.isfinite(rho)
