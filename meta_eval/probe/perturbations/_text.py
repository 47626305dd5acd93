"""Text helpers shared by the perturbations: sentences and whitespace tokens *with their positions*, so that a
perturbation rewrites only the part of the text it changes and leaves the rest (spacing, line breaks) as it was."""
from __future__ import annotations

import re
from typing import Iterable

import numpy as np

__all__ = ["derange", "replace_spans", "sentence_spans", "sentences", "token_spans"]

_TOKEN = re.compile(r"\S+")


def sentences(text: str) -> list[str]:
    """The sentences of ``text`` by :func:`meta_eval.metrics.text.split_sentences` (untrained Punkt), the splitter the
    SMS metrics use."""
    from meta_eval.metrics.text import split_sentences

    return split_sentences(text)


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each sentence of :func:`sentences` in ``text``; the sentences Punkt returns are slices of
    the text, found here left to right (a sentence that cannot be found, which Punkt does not produce, is skipped).

    Examples
    --------
    >>> sentence_spans("The cat sat.  It ran.")
    [(0, 12), (14, 21)]
    """
    spans, pos = [], 0
    for sentence in sentences(text):
        start = text.find(sentence, pos)
        if start < 0:
            continue
        spans.append((start, start + len(sentence)))
        pos = start + len(sentence)
    return spans


def token_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each whitespace-separated token of ``text``.

    Examples
    --------
    >>> token_spans(" ab  c")
    [(1, 3), (5, 6)]
    """
    return [m.span() for m in _TOKEN.finditer(text)]


def replace_spans(text: str, edits: Iterable[tuple[int, int, str]]) -> str:
    """``text`` with each ``(start, end, replacement)`` applied; the spans must not overlap.

    Examples
    --------
    >>> replace_spans("the cat sat", [(8, 11, "ran"), (0, 3, "a")])
    'a cat ran'
    """
    out, pos = [], 0
    for start, end, replacement in sorted(edits):
        if start < pos:
            raise ValueError(f"overlapping edits at {start}")
        out.append(text[pos:start])
        out.append(replacement)
        pos = end
    out.append(text[pos:])
    return "".join(out)


def derange(items: list, rng: np.random.Generator, tries: int = 20) -> "list | None":
    """A random permutation of ``items`` that differs from ``items`` as a sequence (None when all items are equal).

    Up to ``tries`` uniform permutations are drawn; if all equal the original (probability at most 2**-tries, since
    with two distinct items at most half of the permutations keep the sequence), the rotation by one is used, which
    differs from the original whenever the items are not all equal.

    Examples
    --------
    >>> derange(["a", "a"], np.random.default_rng(0)) is None
    True
    >>> sorted(derange(["a", "b", "c"], np.random.default_rng(0)))
    ['a', 'b', 'c']
    """
    if len(set(items)) < 2:
        return None
    for _ in range(tries):
        order = rng.permutation(len(items))
        out = [items[i] for i in order]
        if out != items:
            return out
    return items[1:] + items[:1]
