"""Order and coherence perturbations: the words stay, their arrangement changes (or a sentence is said twice).

Sentences are those of :func:`meta_eval.metrics.text.split_sentences` (untrained Punkt), the splitter the SMS metrics
use. A perturbation that reorders whole sentences joins them with single spaces; the others rewrite only the sentences
they change.
"""
from __future__ import annotations

import re

import numpy as np

from meta_eval.probe.perturbations._text import derange, replace_spans, sentence_spans, sentences
from meta_eval.probe.perturbations.base import Perturbation, register

__all__ = ["repeat_sentence", "sentence_body", "sentence_reversal", "sentence_shuffle", "word_shuffle"]

_SMS = "Clark et al. (2019), Sentence Mover's Similarity (ACL), Table 1"
_HE = "He et al. (2023), On the Blind Spots of Model-Based Evaluation Metrics for Text Generation (ACL)"
_SAI = "Sai et al. (2021), Perturbation CheckLists for Evaluating NLG Evaluation Metrics (EMNLP)"

_TAIL = re.compile(r"^(.*?)(\s*[^\w\s]*)$", re.S)
_CLOSED = re.compile(r"[.!?\u2026][\"'\u201d\u2019)\]\u00bb]*\s*$")


def _movable(found: list[str]) -> bool:
    """Whether whole sentences can be moved: each ends with . ! ? or an ellipsis (before closing quotes or
    brackets). A sentence without one, the text's last ("... The bridge was closed"), joined before another would
    merge with it, and the text would have a sentence fewer."""
    return all(_CLOSED.search(x) for x in found)


def sentence_reversal(text: str, rng: np.random.Generator) -> "str | None":
    """The text's sentences in reverse order (None with fewer than two sentences, when the reversed order reads the
    same, as for two equal sentences, or when a sentence does not end with . ! ? or an ellipsis: moved before
    another it would merge with it).

    Sai et al. (2021), Perturbation CheckLists (EMNLP): sentence-level jumbling; He et al. (2023), On the Blind Spots
    of Model-Based Evaluation Metrics (ACL): "sentence switch".

    Examples
    --------
    >>> sentence_reversal("The cat sat. The dog ran.", None)
    'The dog ran. The cat sat.'
    """
    found = sentences(text)
    if len(found) < 2 or found[::-1] == found or not _movable(found):
        return None
    out = " ".join(reversed(found))
    return None if out == text else out


def sentence_shuffle(text: str, rng: np.random.Generator) -> "str | None":
    """The text's sentences in a random order that differs from the original one, joined with single spaces: a
    uniform permutation, redrawn while it keeps the original sequence (see :func:`._text.derange`). None with fewer
    than two different sentences, or when a sentence does not end with . ! ? or an ellipsis (it would merge with
    the one placed after it).

    Sai et al. (2021), Perturbation CheckLists (EMNLP): sentence-level jumbling; He et al. (2023), On the Blind Spots
    of Model-Based Evaluation Metrics (ACL): "sentence switch".

    Examples
    --------
    >>> sentence_shuffle("A cat sat. A dog ran. A bird sang.", np.random.default_rng(0))
    'A bird sang. A cat sat. A dog ran.'
    >>> sentence_shuffle("A cat sat. A cat sat.", np.random.default_rng(0)) is None
    True
    """
    found = sentences(text)
    if not _movable(found):
        return None
    shuffled = derange(found, rng)
    if shuffled is None:
        return None
    out = " ".join(shuffled)
    return None if out == text else out


def repeat_sentence(text: str, rng: np.random.Generator) -> "str | None":
    """One sentence, chosen uniformly among those with a letter or digit, repeated right after itself (the SMS
    paper's "Repetition"; the rest of the text is kept as it was). A one-sentence text applies too. None when no
    sentence has a letter or digit.

    Clark et al. (2019), Sentence Mover's Similarity (ACL), Table 1, "Repetition"; Sai et al. (2021), Perturbation
    CheckLists (EMNLP): repetition.

    Examples
    --------
    >>> repeat_sentence("A cat sat.\\nA dog ran.", np.random.default_rng(1))
    'A cat sat. A cat sat.\\nA dog ran.'
    """
    spans = [(s, e) for s, e in sentence_spans(text) if any(ch.isalnum() for ch in text[s:e])]
    if not spans:
        return None
    start, end = spans[int(rng.integers(len(spans)))]
    return text[:end] + " " + text[start:end] + text[end:]


def sentence_body(sentence: str) -> tuple[str, str]:
    """``(body, tail)`` of a sentence: the tail is its final run of punctuation with the whitespace before it
    (``"."``, ``" ."``, ``"?!"``), which :func:`word_shuffle` keeps at the end.

    Examples
    --------
    >>> sentence_body("The cat sat .")
    ('The cat sat', ' .')
    """
    body, tail = _TAIL.match(sentence).groups()
    return body, tail


def word_shuffle(text: str, rng: np.random.Generator) -> "str | None":
    """The words of each sentence shuffled within that sentence; the sentences stay where they are, each keeping its
    final punctuation (:func:`sentence_body`). A sentence's words are its whitespace tokens, joined back with single
    spaces; every sentence with at least two different words gets a permutation that differs from its order
    (:func:`._text.derange`). None when no sentence has two different words.

    Each sentence keeps its multiset of words, so the text keeps its multiset of unigrams: ROUGE-1 cannot see this
    perturbation, while ROUGE-L and the n-gram metrics can.

    Clark et al. (2019), Sentence Mover's Similarity (ACL), Table 1, "Word order"; Sai et al. (2021), Perturbation
    CheckLists (EMNLP): word jumbling; He et al. (2023), On the Blind Spots of Model-Based Evaluation Metrics (ACL).

    Examples
    --------
    >>> word_shuffle("The cat sat. It ran away !", np.random.default_rng(0))
    'sat The cat. away ran It !'
    """
    edits = []
    for start, end in sentence_spans(text):
        body, tail = sentence_body(text[start:end])
        words = body.split()
        shuffled = derange(words, rng)
        if shuffled is not None:
            edits.append((start, end, " ".join(shuffled) + tail))
    if not edits:
        return None
    return replace_spans(text, edits)


register(Perturbation(  # version 2: a sentence without final punctuation is not moved (None)
    "sentence-shuffle", "order", sentence_shuffle, version=2,
    citation=f"{_SAI}, sentence jumbling; {_HE}, sentence switch",
    description="sentences in a random different order"))
register(Perturbation(  # version 2: as sentence-shuffle
    "sentence-reversal", "order", sentence_reversal, version=2,
    citation="Sai et al. (2021), Perturbation CheckLists (EMNLP), 'jumbling' at sentence level; "
             "He et al. (2023), On the Blind Spots of Model-Based Evaluation Metrics (ACL), 'sentence switch'",
    description="sentences in reverse order"))
register(Perturbation(
    "repeat-sentence", "order", repeat_sentence,
    citation=f"{_SMS}, Repetition; {_SAI}, repetition",
    description="one sentence repeated in place"))
register(Perturbation(
    "word-shuffle", "order", word_shuffle,
    citation=f"{_SMS}, Word order; {_SAI}, word jumbling",
    description="words shuffled within each sentence"))
