"""TextRank importance of a summary's sentences (Mihalcea & Tarau, EMNLP 2004), as used by Scialom et al. (2019).

Scialom, Lamprier, Piwowarski & Staiano ("Answers Unite!", EMNLP 2019, "Evaluation Metrics") score a summary with
TextRank: a graph of sentences linked by their co-occurring words, ranked by a random walk, whose importance scores
"assess the quality of abstractive summaries". They give no further detail, so every choice is written down here and
enters the signature through :meth:`TextRank.config`.

Graph (``graph:source+summary``). One node per sentence of the source *and* per sentence of the summary (the
summary's sentences are ranked as if they were candidate sentences of the document). Sentences are split with
untrained Punkt (:func:`metrics.text.split_sentences`). Nodes are positions, not strings: a summary sentence copied
from the source is a second node (the ``summa`` package keys nodes by text and would merge them).

Words (``tok``, ``stop``, ``stem``). Each sentence is reduced to its kept words as in
:func:`metrics.text.content_sentences`: lower-cased alphabetic tokens that are not NLTK English stopwords (179
words); then Snowball (Porter2) English stemming (``stemmer="snowball"``, the default, or ``"none"``). This follows
``summa`` (Barrios et al. 2016, the widely used implementation of this formula, also gensim's ``summarize``):
lower-case, strip digits and punctuation, drop stopwords, Snowball-stem. Without stopword removal every pair of
sentences shares "the", "of", "a" and the graph becomes nearly complete and flat; stemming lets "killed" and "kills"
count as one word. A sentence with no kept word carries no content and is no node.

Edge weight (``sim:mt04``). Mihalcea & Tarau's sentence similarity (their sentence-extraction section)::

    sim(S_i, S_j) = |{w : w in S_i and w in S_j}| / (log |S_i| + log |S_j|)

where the numerator counts shared word *types* (stems) and |S| is the number of kept tokens of the sentence (after
filtering, repeats counted), as in ``summa``. The logarithm's base does not matter: it scales every weight by the
same factor, and PageRank normalises each node's out-weights. When the denominator is 0 (two one-word sentences)
the weight is 0 (``log0:0``, the ``summa`` guard). The graph is undirected (in-weights equal out-weights).

Ranking (``d``, ``pagerank:exact``). Weighted PageRank (Page et al. 1999, in M&T's weighted form) with damping d = 0.85
(Mihalcea & Tarau's value) and uniform teleportation. Instead of power iteration to a tolerance (M&T stop at 1e-4;
``networkx.pagerank`` at an L1 change below N * tol) the fixed point is computed exactly, as the solution of the
linear system (I - d P^T) x = (1 - d) / N, P the row-normalised weight matrix (:func:`pagerank`, LAPACK through
``numpy.linalg.solve``): no tolerance or iteration cap enters the scores, and it is much faster than
``networkx.pagerank`` on these 30-50 node graphs (REALSumm's 2400 summaries: 2 s instead of 13 s; the tests check
both agree to 1e-9). Nodes without any edge (no
word shared with any other sentence) are removed before ranking, as in ``summa``; their importance is 0
(``isolated:0``). Once they are removed no node is dangling. M&T write the recursion unnormalised,
WS = (1 - d) + d * sum(...); its fixed point is N times the probability vector computed here, a constant factor
that the normalisation below removes.

Score (``score:mean/uniform``). The mean PageRank of the summary's sentences divided by the share 1/N each of the N
ranked nodes would get under a uniform distribution::

    textrank = (N / k) * sum over summary sentences s of PR(s)

with k the number of summary sentences that have a kept word (isolated ones count, with PR 0). 1.0 means the summary's
sentences are as central as an average sentence of the combined graph, above 1 more central. The *mean* (not the
sum) keeps the score from growing with the number of summary sentences, and the factor N keeps it comparable across
source documents of different length (a raw probability shrinks as 1/N).

Documented values (``empty:0``): a summary with no kept word (empty, blank, only stopwords, digits or punctuation)
scores 0.0; so does a summary none of whose sentences shares a word with any other sentence. A source with no kept
word leaves only the summary's sentences in the graph. The metric is deterministic and each example is scored on its
own graph, so scores do not depend on batch composition or order.
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from meta_eval.metrics.base import Example, Metric, MetricError, choice
from meta_eval.metrics.registry import register
from meta_eval.metrics.text import TOKENIZERS, content_sentences

__all__ = ["TextRank", "pagerank", "sentence_similarity", "textrank_scores"]

_STEMMERS = ("snowball", "none")
_DAMPING = 0.85


@lru_cache(maxsize=1)
def _snowball():
    from nltk.stem.snowball import SnowballStemmer

    return SnowballStemmer("english")


@lru_cache(maxsize=262144)
def _stem(word: str) -> str:
    return _snowball().stem(word)


@lru_cache(maxsize=65536)
def _sentences(text: str, tokenizer: str, stemmer: str) -> tuple[tuple[frozenset[str], int], ...]:
    """(set of word types, number of kept tokens) of each sentence of ``text`` with at least one kept word."""
    out = []
    for words in content_sentences(text, tokenizer):
        if stemmer == "snowball":
            words = tuple(_stem(w) for w in words)
        out.append((frozenset(words), len(words)))
    return tuple(out)


def sentence_similarity(a: tuple[frozenset[str], int], b: tuple[frozenset[str], int]) -> float:
    """Mihalcea & Tarau's similarity of two sentences given as (word types, token count).

    Examples
    --------
    >>> round(sentence_similarity((frozenset({"cat", "sat"}), 2), (frozenset({"cat", "ran", "far"}), 3)), 6)
    0.558111
    """
    denominator = math.log(a[1]) + math.log(b[1])
    if denominator <= 0.0:
        return 0.0
    return len(a[0] & b[0]) / denominator


def _weights(rows: tuple, cols: tuple) -> np.ndarray:
    out = np.zeros((len(rows), len(cols)))
    for i, a in enumerate(rows):
        for j, b in enumerate(cols):
            out[i, j] = sentence_similarity(a, b)
    return out


@lru_cache(maxsize=1024)
def _source_block(source: str, tokenizer: str, stemmer: str) -> np.ndarray:
    """Weights among the source's sentences (memoised: many summaries share one source)."""
    sents = _sentences(source, tokenizer, stemmer)
    block = _weights(sents, sents)
    np.fill_diagonal(block, 0.0)
    block.setflags(write=False)
    return block


def pagerank(weights: np.ndarray, damping: float = _DAMPING) -> np.ndarray:
    """PageRank of the nodes of an undirected graph given by its symmetric weight matrix, exactly.

    Solves the fixed point x = (1 - d) / N + d * P^T x, P the row-normalised weights, as the linear system
    (I - d P^T) x = (1 - d) / N (LAPACK ``gesv`` through ``numpy.linalg.solve``); x sums to 1. Every node needs an
    edge (no zero row).

    Examples
    --------
    >>> pagerank(np.array([[0.0, 1.0], [1.0, 0.0]])).tolist()
    [0.5, 0.5]
    """
    n = len(weights)
    strength = weights.sum(axis=1)
    if n == 0 or not np.all(strength > 0):
        raise MetricError("textrank: PageRank needs a graph whose every node has an edge")
    transition = weights / strength[:, None]
    x = np.linalg.solve(np.eye(n) - damping * transition.T, np.full(n, (1.0 - damping) / n))
    return x / x.sum()  # the system already gives sum 1; this only removes rounding


def textrank_scores(source: str, summary: str, tokenizer: str = "wordpunct",
                    stemmer: str = "snowball") -> tuple[np.ndarray, np.ndarray]:
    """PageRank of every sentence of the joint graph: (source sentences' scores, summary sentences' scores).

    Sentences without a kept word are left out; isolated sentences get 0. The scores of the ranked nodes sum to 1.
    """
    src = _sentences(source, tokenizer, stemmer)
    summ = _sentences(summary, tokenizer, stemmer)
    m, k = len(src), len(summ)
    weights = np.zeros((m + k, m + k))
    weights[:m, :m] = _source_block(source, tokenizer, stemmer)
    if k:
        cross = _weights(summ, src + summ)
        weights[m:, :] = cross
        weights[:m, m:] = cross[:, :m].T
        weights[np.arange(m, m + k), np.arange(m, m + k)] = 0.0
    connected = np.flatnonzero(weights.any(axis=1))
    rank = np.zeros(m + k)
    if len(connected):
        rank[connected] = pagerank(weights[np.ix_(connected, connected)])
    return rank[:m], rank[m:]


@register("textrank")
class TextRank(Metric):
    """Importance of the summary's sentences in a TextRank graph built with the source (Mihalcea & Tarau 2004).

    The mean PageRank of the summary's sentences relative to a uniform share (1.0 = an average sentence); see the
    module docstring for every choice. Needs the source; ignores references.

    Parameters
    ----------
    tokenizer : {"wordpunct", "treebank", "spacy"}
        Word tokenizer of :mod:`metrics.text` (default ``"wordpunct"``).
    stemmer : {"snowball", "none"}
        Snowball English stemming of the kept words (default, as ``summa``) or none.

    Examples
    --------
    >>> from meta_eval.metrics import Example
    >>> m = TextRank()
    >>> round(float(m.score([Example("A cat sat.", source="A cat sat. A cat sat.")])["textrank"][0]), 6)
    1.0
    >>> float(m.score([Example("Dogs bark.", source="A cat sat. The cat ran.")])["textrank"][0])
    0.0
    """

    variants = ("textrank",)
    languages = ("en",)
    language_reason = "its stopwords (NLTK) and stemmer (Snowball) are English"
    needs_references = False
    needs_source = True
    libraries = ("numpy", "nltk")

    def __init__(self, tokenizer: str = "wordpunct", stemmer: str = "snowball") -> None:
        self.tokenizer = choice(tokenizer, TOKENIZERS, "tokenizer")
        self.stemmer = choice(stemmer, _STEMMERS, "stemmer")

    def config(self) -> dict[str, object]:
        return {"graph": "source+summary", "tok": f"{self.tokenizer}+punkt-untrained", "lc": "yes",
                "stop": "nltk179", "stem": "snowball-en" if self.stemmer == "snowball" else "none",
                "sim": "mt04", "log0": "0", "isolated": "0", "d": _DAMPING, "pagerank": "exact",
                "score": "mean/uniform", "empty": "0"}

    def _score(self, examples: list[Example]) -> dict[str, list[float]]:
        scores = []
        for ex in examples:
            src_rank, summ_rank = textrank_scores(ex.source or "", ex.candidate, self.tokenizer, self.stemmer)
            k = len(summ_rank)  # summary sentences with a kept word
            # ranked nodes have PR >= (1 - d) / N > 0, isolated ones exactly 0: N counts the non-zero scores
            n = int(np.count_nonzero(src_rank)) + int(np.count_nonzero(summ_rank))
            scores.append(float(n / k * summ_rank.sum()) if k and n else 0.0)
        return {"textrank": scores}
