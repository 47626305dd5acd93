"""What a perturbation is, the registry of them, and the random generator each application gets.

A perturbation is a pure function ``(text, rng) -> str | None``: the perturbed text, or ``None`` when it cannot apply to
this text (no number to change, a single sentence to shuffle, ...). ``None`` is never counted as "not detected": the
probe skips the row for that perturbation and counts the skip. A function that returns its input unchanged is treated
as ``None`` by :meth:`Perturbation.apply`, so a no-op can never be scored.

The generator is :func:`perturbation_rng` of (seed, perturbation name, row key): the same seed gives the same perturbed
text for a row whatever the other rows, their order, or the other perturbations chosen.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from meta_eval.errors import MetaEvalError

__all__ = ["FAMILIES", "PERTURBATIONS", "MissingExtraError", "Perturbation", "get", "perturbation_rng", "register"]

#: family -> what the metric's score should do: ``drop`` for an error, ``same`` for an invariance
FAMILIES = {"fluency": "drop", "order": "drop", "content": "drop", "invariance": "same"}


@dataclass(frozen=True)
class Perturbation:
    """One controlled change to a text.

    Parameters
    ----------
    name : str
        Registry name (lower case, hyphens), e.g. ``sentence-reversal``.
    family : str
        One of :data:`FAMILIES`.
    function : callable
        ``function(text, rng) -> str | None``; pure: the result depends only on its arguments.
    citation : str
        The paper(s) the perturbation comes from, e.g. ``"Sai et al. (2021), Perturbation CheckLists, Table 1"``.
    description : str
        One line for tables and ``--help``.
    version : int
        Bump when the function's behaviour changes: it is part of the probe's signature.
    needs : str or None
        The meta-eval extra a perturbation needs beyond the core install (e.g. ``"qa"`` for spaCy's NER), or None.
    languages : tuple of str or None
        The languages (ISO 639-1) whose texts the function's rules are written for (English word lists, English
        NER), or None for any language; the probe does not run it on a set whose candidates are in another language
        (reported as not run, with the reason).
    """

    name: str
    family: str
    function: Callable[[str, np.random.Generator], "str | None"] = field(repr=False)
    citation: str
    description: str
    version: int = 1
    needs: str | None = None
    languages: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if self.family not in FAMILIES:
            raise ValueError(f"perturbation {self.name!r}: family must be one of {', '.join(FAMILIES)}, "
                             f"not {self.family!r}")

    @property
    def expect(self) -> str:
        """``"drop"`` (an error the metric should catch) or ``"same"`` (an invariance)."""
        return FAMILIES[self.family]

    def written_for(self, language: str | None) -> bool:
        """Whether the rules apply to texts in ``language`` (True for an unknown language: a user's JSONL set)."""
        return self.languages is None or language is None or language in self.languages

    def signature(self) -> str:
        """``name@version``: what the probe's signature records for this perturbation."""
        return f"{self.name}@{self.version}"

    def apply(self, text: str, rng: np.random.Generator) -> "str | None":
        """The perturbed text, or None when the perturbation cannot apply (including when it would change nothing)."""
        out = self.function(text, rng)
        if out is None or out == text:
            return None
        return out


class MissingExtraError(MetaEvalError, ImportError):
    """A perturbation cannot run here because what its extra (:attr:`Perturbation.needs`) installs is missing; the
    message says what to install. The only exception a perturbation's function raises: the probe reports that
    perturbation as skipped (exit status 1 where it is fatal)."""

    def __init__(self, message: str):
        super().__init__(message, code=1)


#: name -> Perturbation, in registration order
PERTURBATIONS: dict[str, Perturbation] = {}


def register(perturbation: Perturbation) -> Perturbation:
    """Add ``perturbation`` to :data:`PERTURBATIONS`; a name already taken is an error (never a silent overwrite)."""
    if perturbation.name in PERTURBATIONS:
        raise ValueError(f"a perturbation named {perturbation.name!r} is already registered")
    PERTURBATIONS[perturbation.name] = perturbation
    return perturbation


def get(name: str) -> Perturbation:
    """The registered perturbation ``name``; an unknown name raises ValueError listing the known ones."""
    try:
        return PERTURBATIONS[name]
    except KeyError:
        raise ValueError(f"unknown perturbation {name!r}; known: {', '.join(PERTURBATIONS)}") from None


def perturbation_rng(seed: int, name: str, key: str) -> np.random.Generator:
    """The generator for perturbation ``name`` on the row ``key`` under ``seed``.

    Examples
    --------
    >>> a = perturbation_rng(0, "word-swap", "doc1").integers(1000)
    >>> b = perturbation_rng(0, "word-swap", "doc1").integers(1000)
    >>> bool(a == b)
    True
    """
    digest = hashlib.sha256(f"{int(seed)}\0{name}\0{key}".encode("utf-8")).digest()
    return np.random.default_rng(int.from_bytes(digest[:16], "little"))
