"""ROUGE-1, ROUGE-2 and ROUGE-L (Lin, 2004) through Google's ``rouge-score`` package.

Choices (all in the signature):

- implementation: ``rouge_score.rouge_scorer.RougeScorer`` (the reference re-implementation of ROUGE-1.5.5 used by
  the SMS paper's successors), with its default tokenizer: lower-case, non-alphanumeric characters become spaces;
- Porter stemmer on (``use_stemmer=True``), as in ROUGE-1.5.5's ``-m``; no stopword removal;
- ROUGE-L is the sentence-level LCS over the whole text (``rougeL``), not the summary-level ``rougeLsum``;
- several references: ``RougeScorer.score_multi``, which for each ROUGE type keeps the reference with the best F1
  and reports that reference's precision, recall and F1 (``refs:best-f``);
- an empty candidate or reference scores 0 (rouge-score's own convention).
"""
from __future__ import annotations

from metrics.base import Example, Metric
from metrics.registry import register

_TYPES = ("rouge1", "rouge2", "rougeL")
_PARTS = (("p", "precision"), ("r", "recall"), ("f", "fmeasure"))


@register("rouge")
class Rouge(Metric):
    """ROUGE-1/2/L precision, recall and F1 (Lin, 2004) from ``rouge-score``.

    Parameters
    ----------
    use_stemmer : bool
        Porter-stem tokens before matching (default True, as ROUGE-1.5.5 ``-m``).

    Examples
    --------
    >>> from metrics import Example, create
    >>> s = create("rouge").score([Example("the cat sat", ("the cat sat down",))])
    >>> round(float(s["rouge1-r"][0]), 3)
    0.75
    """

    variants = tuple(f"{t}-{p}" for t in _TYPES for p, _ in _PARTS)
    libraries = ("rouge-score", "nltk")

    def __init__(self, use_stemmer: bool = True) -> None:
        self.use_stemmer = bool(use_stemmer)
        self._scorer = None

    def config(self) -> dict[str, object]:
        return {"types": "+".join(_TYPES), "stem": "porter" if self.use_stemmer else "none",
                "tok": "rouge-score-default", "refs": "best-f"}

    def _score(self, examples: list[Example]) -> dict[str, list[float]]:
        if self._scorer is None:
            from rouge_score import rouge_scorer

            self._scorer = rouge_scorer.RougeScorer(list(_TYPES), use_stemmer=self.use_stemmer)
        out: dict[str, list[float]] = {v: [] for v in self.variants}
        for ex in examples:
            if len(ex.references) == 1:
                scores = self._scorer.score(ex.references[0], ex.candidate)
            else:
                scores = self._scorer.score_multi(list(ex.references), ex.candidate)
            for rtype in _TYPES:
                for short, attr in _PARTS:
                    out[f"{rtype}-{short}"].append(getattr(scores[rtype], attr))
        return out
