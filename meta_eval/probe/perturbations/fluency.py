"""Fluency perturbations: the content stays, the text reads worse (swapped or dropped words, typos, a repeated
phrase, a cut-off end).

Words here are whitespace-separated tokens; a perturbation rewrites only the tokens it changes and keeps the rest of
the text (its spacing and line breaks) as it was. Where a token carries punctuation (``"goal."``, ``"'honour"``), its
*core* is the part between leading and trailing non-word characters (``"goal"``, ``"honour"``).
"""
from __future__ import annotations

import re

import numpy as np

from meta_eval.probe.perturbations._text import replace_spans, token_spans
from meta_eval.probe.perturbations.base import Perturbation, register

__all__ = ["FUNCTION_WORDS", "drop_function_words", "repeat_ngram", "truncate", "typos", "word_swap"]

#: one adjacent swap (word-swap) or one typo (typos) per this many tokens, at least one
TOKENS_PER_EDIT = 10
#: the n of repeat-ngram (fewer when the text has fewer tokens)
REPEAT_N = 3
#: share of the tokens truncate keeps (rounded down, at least one)
TRUNCATE_KEEP = 0.75
#: typos edits only words of at least this many letters
TYPO_MIN_LETTERS = 3

#: the articles and (single-word) prepositions drop-function-words removes, matched case-insensitively as whole
#: tokens, by form (no part-of-speech tagging: the infinitive "to" and the particle "up" go too)
FUNCTION_WORDS = frozenset("""
a an the
about above across after against along amid among around at before behind below beneath beside besides between
beyond by despite down during except for from in inside into like near of off on onto opposite out outside over past
per since through throughout till to toward towards under underneath unlike until up upon via with within without
""".split())

_CORE = re.compile(r"^(\W*)(.*?)(\W*)$", re.S)
#: a clitic written as its own token in tokenized text ("Townsend 's", "has n't"): word-swap leaves it in place
_CLITIC = re.compile(r"^(?:['\u2019](?:s|re|ve|ll|d|m)|n['\u2019]t)$", re.I)
_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def _split_core(token: str) -> tuple[str, str, str]:
    """``(leading punctuation, core, trailing punctuation)`` of a token."""
    lead, core, trail = _CORE.match(token).groups()
    return lead, core, trail


def _n_edits(n: int) -> int:
    return max(1, n // TOKENS_PER_EDIT)


def word_swap(text: str, rng: np.random.Generator) -> "str | None":
    """Pairs of adjacent words swapped: one swap per :data:`TOKENS_PER_EDIT` (10) whitespace tokens, at least one, on
    disjoint pairs chosen at random among the adjacent pairs whose cores differ (a punctuation token, or a clitic
    token of tokenized text like ``'s`` or ``n't``, is never moved). Only the cores move, so ``"a goal."`` becomes
    ``"goal a."``: the sentence boundaries stay.

    He et al. (2023), On the Blind Spots of Model-Based Evaluation Metrics for Text Generation (ACL): "local swap";
    Sai et al. (2021), Perturbation CheckLists (EMNLP): "jumbling" of words.

    Examples
    --------
    >>> word_swap("The cat sat.", np.random.default_rng(0))
    'cat The sat.'
    >>> word_swap("... !!!", np.random.default_rng(0)) is None
    True
    """
    spans = token_spans(text)
    parts = [_split_core(text[s:e]) for s, e in spans]
    movable = [bool(core) and not _CLITIC.match(text[s:e]) for (s, e), (_, core, _) in zip(spans, parts)]
    eligible = [i for i in range(len(parts) - 1) if movable[i] and movable[i + 1] and parts[i][1] != parts[i + 1][1]]
    if not eligible:
        return None
    want, used, chosen = _n_edits(len(spans)), set(), []
    for i in rng.permutation(eligible):
        i = int(i)
        if i in used or i + 1 in used:
            continue
        chosen.append(i)
        used.update((i, i + 1))
        if len(chosen) == want:
            break
    edits = []
    for i in chosen:
        (la, ca, ta), (lb, cb, tb) = parts[i], parts[i + 1]
        edits.append((*spans[i], la + cb + ta))
        edits.append((*spans[i + 1], lb + ca + tb))
    return replace_spans(text, edits)


def _remove_tokens(text: str, spans: list[tuple[int, int]], drop: set[int]) -> "str | None":
    """``text`` without the tokens ``drop`` (each with the whitespace after it, or before it at the end); None when no
    token would remain."""
    kept = [i for i in range(len(spans)) if i not in drop]
    if not kept:
        return None
    last_kept = kept[-1]
    cuts = []
    for i in sorted(drop):
        if i < last_kept:
            nxt = min(j for j in kept if j > i)
            cuts.append((spans[i][0], spans[nxt][0]))
        else:  # after the last kept token: cut from its end
            cuts.append((spans[last_kept][1], spans[i][1]))
    merged: list[list[int]] = []
    for start, end in sorted(cuts):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return replace_spans(text, [(s, e, "") for s, e in merged])


def drop_function_words(text: str, rng: np.random.Generator) -> "str | None":
    """Every article and preposition of :data:`FUNCTION_WORDS` removed (whole tokens, any case; a token with
    punctuation attached, like ``"in,"``, stays). None when there is none, or when nothing else would remain.

    He et al. (2023), On the Blind Spots of Model-Based Evaluation Metrics (ACL): "article removal" and "preposition
    removal"; Sai et al. (2021), Perturbation CheckLists (EMNLP): dropped stopwords.

    Examples
    --------
    >>> drop_function_words("The cat sat on the mat .", None)
    'cat sat mat .'
    >>> drop_function_words("Cats sleep.", None) is None
    True
    """
    spans = token_spans(text)
    drop = {i for i, (s, e) in enumerate(spans) if text[s:e].lower() in FUNCTION_WORDS}
    if not drop:
        return None
    return _remove_tokens(text, spans, drop)


def _case_like(letter: str, model: str) -> str:
    return letter.upper() if model.isupper() else letter


def _typo(word: str, rng: np.random.Generator) -> str:
    """One character edit of ``word`` (at least :data:`TYPO_MIN_LETTERS` letters): deletion, insertion, substitution
    or transposition of adjacent letters, chosen uniformly (a transposition falls back to a substitution in a word
    with no two different adjacent letters). The result always differs from ``word``."""
    op = ("delete", "insert", "substitute", "transpose")[int(rng.integers(4))]
    if op == "transpose":
        pairs = [i for i in range(len(word) - 1) if word[i] != word[i + 1]]
        if pairs:
            i = pairs[int(rng.integers(len(pairs)))]
            return word[:i] + word[i + 1] + word[i] + word[i + 2:]
        op = "substitute"
    if op == "delete":
        i = int(rng.integers(len(word)))
        return word[:i] + word[i + 1:]
    if op == "insert":
        i = int(rng.integers(len(word) + 1))
        letter = _LETTERS[int(rng.integers(len(_LETTERS)))]
        return word[:i] + _case_like(letter, word[min(i, len(word) - 1)]) + word[i:]
    i = int(rng.integers(len(word)))
    choices = [c for c in _LETTERS if c != word[i].lower()]
    return word[:i] + _case_like(choices[int(rng.integers(len(choices)))], word[i]) + word[i + 1:]


def typos(text: str, rng: np.random.Generator) -> "str | None":
    """Character typos: one edit (see :func:`_typo`: delete, insert, substitute a letter a-z, or transpose two adjacent
    letters, uniformly) in each of ``max(1, n // 10)`` words chosen at random among the ``n`` words whose core is
    alphabetic, cased (Latin, Greek, Cyrillic, ... letters) and at least 3 letters long. A rate of one typo per 10
    such words, at least one. None when the text has no such word.

    Sai et al. (2021), Perturbation CheckLists (EMNLP): spelling errors; He et al. (2023), On the Blind Spots of
    Model-Based Evaluation Metrics (ACL): typos; Karpinska et al. (2022), DEMETR (EMNLP): character-level errors.

    Examples
    --------
    >>> typos("The cat sat on the mat.", np.random.default_rng(1))
    'The cat say on the mat.'
    >>> typos("a b c !", np.random.default_rng(1)) is None
    True
    """
    spans = token_spans(text)
    parts = [_split_core(text[s:e]) for s, e in spans]
    eligible = [i for i, (_, core, _) in enumerate(parts)
                if len(core) >= TYPO_MIN_LETTERS and core.isalpha() and core.lower() != core.upper()]
    if not eligible:
        return None
    chosen = rng.choice(eligible, size=min(len(eligible), _n_edits(len(eligible))), replace=False)
    edits = []
    for i in sorted(int(i) for i in chosen):
        lead, core, trail = parts[i]
        edits.append((*spans[i], lead + _typo(core, rng) + trail))
    return replace_spans(text, edits)


def repeat_ngram(text: str, rng: np.random.Generator) -> "str | None":
    """One n-gram of whitespace tokens (n = :data:`REPEAT_N` = 3, or the number of tokens when fewer) repeated right
    after itself, chosen uniformly among the n-grams with at least one letter or digit. None when there is none.

    He et al. (2023), On the Blind Spots of Model-Based Evaluation Metrics (ACL): "repeated token"; Sai et al. (2021),
    Perturbation CheckLists (EMNLP): repetition.

    Examples
    --------
    >>> repeat_ngram("The cat sat on the mat.", np.random.default_rng(0))
    'The cat sat on the mat. on the mat.'
    >>> repeat_ngram("?!", np.random.default_rng(0)) is None
    True
    """
    spans = token_spans(text)
    if not spans:
        return None
    n = min(REPEAT_N, len(spans))
    starts = [i for i in range(len(spans) - n + 1)
              if any(ch.isalnum() for ch in text[spans[i][0]:spans[i + n - 1][1]])]
    if not starts:
        return None
    i = starts[int(rng.integers(len(starts)))]
    start, end = spans[i][0], spans[i + n - 1][1]
    return text[:end] + " " + text[start:end] + text[end:]


def truncate(text: str, rng: np.random.Generator) -> "str | None":
    """The text cut after its first ``floor(0.75 n)`` whitespace tokens (of ``n``; at least one kept): the last quarter
    dropped. A prefix of the text; None with fewer than two tokens.

    He et al. (2023), On the Blind Spots of Model-Based Evaluation Metrics (ACL): "truncation"; Sai et al. (2021),
    Perturbation CheckLists (EMNLP): dropped content at the end.

    Examples
    --------
    >>> truncate("one two three four five six seven eight", None)
    'one two three four five six'
    >>> truncate("one", None) is None
    True
    """
    spans = token_spans(text)
    if len(spans) < 2:
        return None
    keep = max(1, int(len(spans) * TRUNCATE_KEEP))
    return text[:spans[keep - 1][1]]


_HE = "He et al. (2023), On the Blind Spots of Model-Based Evaluation Metrics for Text Generation (ACL)"
_SAI = "Sai et al. (2021), Perturbation CheckLists for Evaluating NLG Evaluation Metrics (EMNLP)"

register(Perturbation(
    "word-swap", "fluency", word_swap,
    citation=f"{_HE}, local swap; {_SAI}, word jumbling",
    description="adjacent words swapped, one pair per 10 tokens"))
register(Perturbation(
    "drop-function-words", "fluency", drop_function_words,
    citation=f"{_HE}, article and preposition removal; {_SAI}, dropped stopwords",
    description="articles and prepositions removed", languages=("en",)))
register(Perturbation(
    "typos", "fluency", typos,
    citation=f"{_SAI}, spelling errors; {_HE}, typos; Karpinska et al. (2022), DEMETR (EMNLP)",
    description="one character typo per 10 words"))
register(Perturbation(
    "repeat-ngram", "fluency", repeat_ngram,
    citation=f"{_HE}, repeated token; {_SAI}, repetition",
    description="a word trigram repeated in place"))
register(Perturbation(
    "truncate", "fluency", truncate,
    citation=f"{_HE}, truncation; {_SAI}, truncation",
    description="the last quarter of the tokens dropped"))
