"""Invariances: changes that leave a text's meaning and quality as they were. A metric whose score drops on them
raises a false alarm."""
from __future__ import annotations

import re

import numpy as np

from meta_eval.probe.perturbations.base import Perturbation, register

__all__ = ["extra_whitespace"]


def extra_whitespace(text: str, rng: np.random.Generator) -> "str | None":
    """Every run of spaces between words doubled (None for a text with no space).

    Examples
    --------
    >>> extra_whitespace("a b  c", None)
    'a  b    c'
    """
    if " " not in text.strip():
        return None
    return re.sub(r" +", lambda m: m.group(0) * 2, text)


register(Perturbation(
    "extra-whitespace", "invariance", extra_whitespace,
    citation="Sai et al. (2021), Perturbation CheckLists (EMNLP): invariance to surface changes",
    description="spaces between words doubled"))
