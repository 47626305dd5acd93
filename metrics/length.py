"""The candidate's length in words: the simplest offline baseline of a judge benchmark.

Length is what LLM judges and people are both known to be swayed by (LLMBar, Zeng et al. ICLR 2024, built its
adversarial set so that the longer output is often the worse one), so a board of judges shows it beside them: a judge
that agrees with people no better than length has learnt little. It reads only the candidate, so it runs on every
set, with or without references or a source.

Choices (all in the signature): ``tok:whitespace`` (``str.split()``: runs of white space separate words, nothing
else), ``unit:words``; an empty or blank candidate has length 0. Higher is "better" in the sense that a longer
candidate gets the higher score: on a pairwise property the rule ``pick`` (:mod:`meta_eval.categorical`) then picks
the longer output, on a 2-label property a threshold on the length chooses the label. It runs only when named
(``-m length``): a length is no metric to put in every default run.
"""
from __future__ import annotations

from meta_eval.metrics.base import Example, Metric
from meta_eval.metrics.registry import register

__all__ = ["Length"]


@register("length")
class Length(Metric):
    """The candidate's length in white-space separated words.

    Examples
    --------
    >>> from meta_eval.metrics import Example, create
    >>> create("length").score([Example("a  b\\nc", ("x",)), Example("  ", ("x",))])["length"].tolist()
    [3.0, 0.0]
    """

    variants = ("length",)
    needs_references = False
    needs_source = False
    libraries = ()
    in_default_run = False
    not_default_reason = "run only when named (-m length): a trivial baseline, the candidate's length in words"

    def config(self) -> dict[str, object]:
        return {"tok": "whitespace", "unit": "words"}

    def _score(self, examples: list[Example]) -> dict[str, list[float]]:
        return {"length": [float(len(ex.candidate.split())) for ex in examples]}
