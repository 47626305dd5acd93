"""Novelty of a summary: its share of novel n-grams, scaled by its length relative to the reference.

Kryściński, Paulus, Xiong & Socher ("Improving Abstraction in Text Summarization", EMNLP 2018) reward novel
phrases, those that are not in the source document. With ng(x, n) the set of unique n-grams of a text and ||x|| its
number of words::

    N(gen, n)     = |ng(gen, n) - ng(src, n)| / |ng(gen, n)|    (the fraction of the summary's unique n-grams
                                                                   that are novel)
    R_nov(gen, n) = N(gen, n) * ||gen|| / ||ref||               (normalised by the length ratio of the generated
                                                                   and ground-truth summaries)

Scialom et al. ("Answers Unite!", EMNLP 2019, "Evaluation Metrics") use it as an unsupervised metric, in the same
words: "the fraction of unique n-grams in the summary that are novel, normalized by the length ratio of the
generated and reference summaries". The ratio *multiplies* the fraction (``len:mul``): Kryściński et al. introduce
it so that a model cannot earn a high novelty by emitting very short summaries, so shorter summaries must get less,
which dividing would reverse. (This module was written offline from the published formula; the paper text was not
available to re-read, so the equation is cited from memory; it matches the seed paper's wording.)

Choices (all in the signature):

- ``n = 3`` by default (``n:3``): trigrams. Neither paper's text at hand fixes the order (Kryściński et al. report
  novel 1- to 4-grams; the order of their reward could not be re-checked offline); trigrams are long enough that a
  paraphrase built from source words still counts as novel, short enough to be frequent; any n >= 1 can be chosen;
- tokens (``tok``): the text is split into sentences with untrained Punkt (:func:`metrics.text.split_sentences`),
  each sentence is tokenized with NLTK's Treebank tokenizer (default ``"treebank"``, the PTB conventions of the
  Stanford CoreNLP tokenization of the CNN/DailyMail data the reward was defined on; ``"wordpunct"`` and ``"spacy"``
  as in :mod:`metrics.text`) and lower-cased (CNN/DailyMail as prepared by See et al. 2017 is lower-cased). n-grams
  run over the whole token sequence, across sentence boundaries, as over the data's single token stream;
- punctuation (``punct:keep``): punctuation tokens are kept, as they are tokens of that data, and count in ||x||;
  ``punct="drop"`` removes every token without a letter or digit before n-grams and lengths are computed;
- no stemming and no stopword removal (novelty is about surface copying);
- several references (``refs:mean``, the default and the native policy): R_nov is computed against each reference
  with a token and averaged (equivalently N * ||gen|| * mean(1/||ref||)); ``refs="first"`` uses the first reference
  only (in SummEval, the original CNN/DailyMail highlights); ``max`` and ``jackknife`` as every reference-based
  metric (:class:`metrics.base.Metric`). The policy is the generic ``refs`` option (``--option refs=first``), which
  the constructor also takes.

Documented values (``empty:0``): a summary with fewer than n tokens (empty or blank included) has no n-gram and scores
0.0 (nothing novel); references without a token are skipped, and if no reference has a token the length ratio is
undefined and the score is 0.0. A source without a token makes every n-gram novel (N = 1). Scores are >= 0 and
unbounded above (a summary longer than its reference can exceed 1); a summary copied from the source scores 0.
Higher means more abstractive (``higher_is_better``), the direction Kryściński et al. rewarded; Scialom et al. found
it correlates negatively with human judgments.
"""
from __future__ import annotations

from functools import lru_cache

from meta_eval.metrics.base import Example, Metric, positive_int
from meta_eval.metrics.registry import register
from meta_eval.metrics.text import TOKENIZERS, split_sentences, tokenize

__all__ = ["Novelty", "ngrams", "novel_fraction", "words"]

_PUNCT = ("keep", "drop")


@lru_cache(maxsize=65536)
def words(text: str, tokenizer: str = "treebank", punct: str = "keep") -> tuple[str, ...]:
    """Lower-cased tokens of ``text``, sentence by sentence; ``punct="drop"`` keeps tokens with a letter or digit.

    Examples
    --------
    >>> words("The cat's mat. It sat!")
    ('the', 'cat', "'s", 'mat', '.', 'it', 'sat', '!')
    >>> words("The cat's mat. It sat!", punct="drop")
    ('the', 'cat', "'s", 'mat', 'it', 'sat')
    """
    out = [t.lower() for sent in split_sentences(text) for t in tokenize(sent, tokenizer)]
    if punct == "drop":
        out = [t for t in out if any(c.isalnum() for c in t)]
    return tuple(out)


def ngrams(tokens: tuple[str, ...], n: int) -> frozenset[tuple[str, ...]]:
    """The set of unique n-grams of a token sequence (empty when it has fewer than n tokens)."""
    return frozenset(tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1))


def novel_fraction(summary: tuple[str, ...], source: tuple[str, ...], n: int) -> float:
    """N(gen, n): the fraction of the summary's unique n-grams absent from the source (0.0 without n-grams).

    Examples
    --------
    >>> novel_fraction(("a", "b", "c", "d"), ("a", "b", "c"), 2)  # {ab, bc, cd}: only cd is novel
    0.3333333333333333
    """
    grams = ngrams(summary, n)
    if not grams:
        return 0.0
    return len(grams - ngrams(source, n)) / len(grams)


@register("novelty")
class Novelty(Metric):
    """Novelty (Kryściński et al. 2018; Scialom et al. 2019): novel n-gram fraction times ||summary|| / ||reference||.

    Parameters
    ----------
    n : int
        n-gram order (default 3).
    tokenizer : {"treebank", "wordpunct", "spacy"}
        Word tokenizer of :mod:`metrics.text` (default ``"treebank"``).
    punct : {"keep", "drop"}
        Keep punctuation tokens (default) or drop tokens without a letter or digit.
    refs : {"mean", "first", "max", "jackknife"}, optional
        Multi-reference policy (default ``mean``: average over the references); same as :meth:`with_refs`.

    Examples
    --------
    >>> from meta_eval.metrics import Example
    >>> ex = Example("the cat sat on a mat", ("a cat sat",), source="the cat sat on the mat")
    >>> # trigrams: the-cat-sat, cat-sat-on (copied), sat-on-a, on-a-mat (novel): N = 2/4; length ratio 6/3
    >>> float(Novelty().score([ex])["novelty"][0])
    1.0
    """

    variants = ("novelty",)
    needs_references = True
    needs_source = True
    libraries = ("nltk",)
    refs_native = "mean"  # _score averages R_nov over the references that have a token
    refs_default = "mean"

    def __init__(self, n: int = 3, tokenizer: str = "treebank", punct: str = "keep", refs: str | None = None) -> None:
        if tokenizer not in TOKENIZERS:
            raise ValueError(f"unknown tokenizer {tokenizer!r}; choose one of {', '.join(TOKENIZERS)}")
        if punct not in _PUNCT:
            raise ValueError(f"unknown punct policy {punct!r}; choose one of {', '.join(_PUNCT)}")
        self.n = positive_int(n, "n")
        self.tokenizer = tokenizer
        self.punct = punct
        self.with_refs(refs)

    def config(self) -> dict[str, object]:
        return {"n": self.n, "tok": f"{self.tokenizer}+punkt-untrained", "lc": "yes", "punct": self.punct,
                "stem": "none", "stop": "none", "len": "mul", "refs": "mean", "empty": "0"}

    def _words(self, text: str) -> tuple[str, ...]:
        return words(text, self.tokenizer, self.punct)

    def _score(self, examples: list[Example]) -> dict[str, list[float]]:
        scores = []
        for ex in examples:
            summary = self._words(ex.candidate)
            fraction = novel_fraction(summary, self._words(ex.source or ""), self.n)
            lengths = [len(r) for r in map(self._words, ex.references) if r]
            if fraction == 0.0 or not lengths:
                scores.append(0.0)
                continue
            scores.append(sum(fraction * len(summary) / length for length in lengths) / len(lengths))
        return {"novelty": scores}
