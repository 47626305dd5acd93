"""Invariances: changes that leave a text's meaning and quality as they were. A metric whose score drops on them
raises a false alarm.

Each keeps the multiset of the text's lower-cased alphanumeric tokens (maximal runs of letters and digits, as
ROUGE's tokenizer sees them): extra-whitespace and punctuation-spacing change only spaces next to punctuation or
between tokens, casing toggles the case of single letters.
"""
from __future__ import annotations

import re

import numpy as np

from meta_eval.probe.perturbations._text import replace_spans, sentence_spans
from meta_eval.probe.perturbations.base import Perturbation, register

__all__ = ["CLOSING", "OPENING", "casing", "extra_whitespace", "punctuation_spacing"]

_SAI = "Sai et al. (2021), Perturbation CheckLists for Evaluating NLG Evaluation Metrics (EMNLP)"
_DEMETR = "Karpinska et al. (2022), DEMETR: Diagnosing Evaluation Metrics for Translation (EMNLP)"

#: punctuation written after a word: tokenized text has a space before it, detokenized text none
CLOSING = ".,;:!?%)]}"
#: punctuation written before a word: tokenized text has a space after it, detokenized text none
OPENING = "([{"
_C, _O = re.escape(CLOSING), re.escape(OPENING)
_SPACE_BEFORE_CLOSING = re.compile(rf"(?<=\S) +(?=[{_C}]+(?:\s|$))")
_SPACE_AFTER_OPENING = re.compile(rf"(?:^|(?<=\s))([{_O}]) +(?=\S)")
_WORD_THEN_CLOSING = re.compile(rf"(?<=[^\W_])(?=[{_C}]+(?:\s|$))")
_OPENING_THEN_WORD = re.compile(rf"(?:^|(?<=\s))([{_O}])(?=[^\W_])")


def extra_whitespace(text: str, rng: np.random.Generator) -> "str | None":
    """Every run of spaces between words doubled (None for a text with no space).

    Sai et al. (2021), Perturbation CheckLists (EMNLP): invariance to surface changes.

    Examples
    --------
    >>> extra_whitespace("a b  c", None)
    'a  b    c'
    """
    if " " not in text.strip():
        return None
    return re.sub(r" +", lambda m: m.group(0) * 2, text)


def _toggled(ch: str) -> "str | None":
    """``ch`` in the other case when that is one character with the same lower-case form (not for ß, İ, ...)."""
    other = ch.swapcase()
    if len(other) != 1 or other == ch or other.lower() != ch.lower() or other.swapcase() != ch:
        return None
    return other


def casing(text: str, rng: np.random.Generator) -> "str | None":
    """The case of the first letter of every sentence toggled (``The`` -> ``the``, ``the`` -> ``The``); a sentence
    whose first letter has no case (Chinese) is left as it is. None when no sentence has one.

    Chosen over lower-casing the whole text because it applies alike to cased texts and to the lower-cased,
    tokenized references some sets carry (SummEval's, CNN/DailyMail's), and because it keeps the capitals of names
    inside sentences, whose loss could count as a real change for a metric that reads entities; as in the sets
    themselves, sentence case is a matter of preprocessing, not of quality. A name that starts a sentence does lose
    its capital (``Obama said.`` -> ``obama said.``): without a tagger the probe cannot tell it from a common word.

    Sai et al. (2021), Perturbation CheckLists (EMNLP): invariance to surface changes; Karpinska et al. (2022),
    DEMETR (EMNLP): the "base" (surface) perturbations.

    Examples
    --------
    >>> casing("The cat sat. a dog ran.", None)
    'the cat sat. A dog ran.'
    >>> casing("Obama said. He left.", None)
    'obama said. he left.'
    >>> casing("123 ?", None) is None
    True
    """
    edits = []
    for start, end in sentence_spans(text):
        for i in range(start, end):
            if text[i].isalpha():
                other = _toggled(text[i])
                if other is not None:
                    edits.append((i, i + 1, other))
                break
    if not edits:
        return None
    return replace_spans(text, edits)


def punctuation_spacing(text: str, rng: np.random.Generator) -> "str | None":
    """Tokenized spacing of punctuation turned into detokenized spacing, or the other way round.

    When the text has a space before a closing mark of :data:`CLOSING` (``. , ; : ! ? % ) ] }`` followed by a space
    or the end) or after an opening bracket of :data:`OPENING` (``( [ {``), all those spaces are removed
    (``"a goal ."`` -> ``"a goal."``, ``"( 3 )"`` -> ``"(3)"``); otherwise a space is inserted between a word and
    every such mark attached to it (``"a goal."`` -> ``"a goal ."``). Quotes and clitics (``'s``, ``n't``) are left
    alone. None when the text has neither.

    Sai et al. (2021), Perturbation CheckLists (EMNLP): invariance to surface changes; Karpinska et al. (2022),
    DEMETR (EMNLP): the "base" (surface) perturbations.

    Examples
    --------
    >>> punctuation_spacing("He won , but ( narrowly ) lost .", None)
    'He won, but (narrowly) lost.'
    >>> punctuation_spacing("He won, but (narrowly) lost.", None)
    'He won , but ( narrowly ) lost .'
    """
    if _SPACE_BEFORE_CLOSING.search(text) or _SPACE_AFTER_OPENING.search(text):
        return _SPACE_AFTER_OPENING.sub(r"\1", _SPACE_BEFORE_CLOSING.sub("", text))
    if _WORD_THEN_CLOSING.search(text) or _OPENING_THEN_WORD.search(text):
        return _OPENING_THEN_WORD.sub(r"\1 ", _WORD_THEN_CLOSING.sub(" ", text))
    return None


register(Perturbation(
    "extra-whitespace", "invariance", extra_whitespace,
    citation="Sai et al. (2021), Perturbation CheckLists (EMNLP): invariance to surface changes",
    description="spaces between words doubled"))
register(Perturbation(
    "casing", "invariance", casing,
    citation=f"{_SAI}, invariance to surface changes; {_DEMETR}, base (surface) perturbations",
    description="first letter of every sentence in the other case"))
register(Perturbation(
    "punctuation-spacing", "invariance", punctuation_spacing,
    citation=f"{_SAI}, invariance to surface changes; {_DEMETR}, base (surface) perturbations",
    description="spaces before punctuation removed (tokenized text) or added"))
