"""Text preprocessing shared by the mover metrics (Clark et al., 2019, and Kusner et al., 2015).

The SMS reference code (``eaclark07/sms``, ``smd.py``) splits a text into sentences with NLTK's ``sent_tokenize``,
tokenizes each sentence with spaCy, lower-cases, and keeps the tokens that are alphabetic (``str.isalpha``) and not in
NLTK's English stopword list. Here:

- sentences: NLTK's Punkt algorithm, *untrained* (``PunktSentenceTokenizer()``), because the trained ``punkt`` data
  files do not install offline; on this data it differs from the trained model only on rare abbreviations;
- words: ``wordpunct`` (default) = NLTK's ``WordPunctTokenizer`` (runs of letters/digits, runs of punctuation), which
  splits hyphenated words like spaCy does and is 5x faster than the Treebank tokenizer; ``treebank`` = NLTK's
  ``NLTKWordTokenizer`` (what ``nltk.word_tokenize`` uses); ``spacy`` = spaCy's English tokenizer, as in the reference
  code (needs the ``spacy`` extra);
- stopwords: NLTK's English list as the reference used it (179 words), shipped in ``metrics/data``.

A text's analysis is memoised per process (pure function of the text and the tokenizer), so WMS, SMS and S+WMS on
the same texts tokenize each distinct text once; its sentences are memoised too (a pure function of the text), so
ROUGE-Lsum, the GloVe and contextual movers, Novelty and the probes split each distinct text once per process. Punkt
was the run's largest pure-Python cost: ``-m all`` on chaganty called it 23,952 times for about 2,700 distinct texts
(6.5 s of a 67 s run on the project's 2-core machine; 5.3 s of a GPU run).
"""
from __future__ import annotations

from functools import lru_cache
from importlib import resources

__all__ = ["STOPWORDS", "TOKENIZERS", "content_sentences", "split_sentences", "tokenize"]

TOKENIZERS = ("wordpunct", "treebank", "spacy")


@lru_cache(maxsize=None)
def _stopwords() -> frozenset[str]:
    text = resources.files("meta_eval.metrics").joinpath("data/nltk_english_stopwords.txt").read_text(encoding="utf-8")
    return frozenset(w.strip() for w in text.splitlines() if w.strip())


STOPWORDS = _stopwords()


@lru_cache(maxsize=1)
def _sentence_splitter():
    from nltk.tokenize.punkt import PunktSentenceTokenizer

    return PunktSentenceTokenizer()


@lru_cache(maxsize=None)
def _word_tokenizer(name: str):
    if name == "wordpunct":
        from nltk.tokenize import WordPunctTokenizer

        return WordPunctTokenizer().tokenize
    if name == "treebank":
        from nltk.tokenize import NLTKWordTokenizer

        return NLTKWordTokenizer().tokenize
    if name == "spacy":
        try:
            import spacy
        except ImportError:
            raise ValueError("tokenizer 'spacy' needs spaCy: pip install 'meta-eval[spacy]'") from None
        tok = spacy.blank("en").tokenizer
        return lambda s: [t.text for t in tok(s)]
    raise ValueError(f"unknown tokenizer {name!r}; choose one of {', '.join(TOKENIZERS)}")


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text`` (untrained Punkt); an empty or blank text has none.

    A new list on every call (the caller may change it), made from the text's memoised sentences.
    """
    return list(_sentences(text))


@lru_cache(maxsize=65536)
def _sentences(text: str) -> tuple[str, ...]:
    if not text.strip():
        return ()
    return tuple(_sentence_splitter().tokenize(text))


def tokenize(sentence: str, tokenizer: str = "wordpunct") -> list[str]:
    """Tokens of one sentence with the named tokenizer."""
    return _word_tokenizer(tokenizer)(sentence)


@lru_cache(maxsize=65536)
def content_sentences(text: str, tokenizer: str = "wordpunct") -> tuple[tuple[str, ...], ...]:
    """The kept words of each sentence of ``text``: lower-cased alphabetic tokens that are not stopwords.

    Sentences with no kept word are dropped (as in the reference code).

    Examples
    --------
    >>> content_sentences("The cat sat on the mat. It was happy!")
    (('cat', 'sat', 'mat'), ('happy',))
    """
    out = []
    for sent in split_sentences(text):
        words = tuple(w for w in (t.lower() for t in tokenize(sent, tokenizer) if t.isalpha()) if w not in STOPWORDS)
        if words:
            out.append(words)
    return tuple(out)
