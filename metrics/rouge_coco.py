"""ROUGE-L as the MS-COCO caption toolkit computes it (``pycocoevalcap.rouge.Rouge``), the ROUGE-L of the SMS paper.

Clark, Celikyilmaz & Smith (ACL 2019), "Sentence Mover's Similarity", do not say which ROUGE-L they used. Their
Table 1 (ROUGE-L 39.30 / 31.44 / 35.07 for the human summary, the word-order and the repetition example) is reproduced
to the digit by this one, and only by it among the ROUGE-L variants tried (rouge-score ``rougeL``/``rougeLsum``, P/R/F,
stemming, other tokenizations): with it, their Table 2 ROUGE-L cells come out .117 (summaries, printed .117) and .443
(essays, printed .441), against .123 and .365 with rouge-score's ``rougeL``. It is also the ROUGE-L of nlg-eval.

Choices (all in the signature):

- implementation: ``pycocoevalcap==1.2`` (PyPI, the Python 3 release of the COCO caption evaluation code),
  ``Rouge.calc_score``: the longest common subsequence of the whole candidate and each whole reference (no sentence
  splitting), P = LCS/|candidate|, R = LCS/|reference|, the maximum P and the maximum R over the references, then
  F = (1 + beta^2) P R / (R + beta^2 P) with beta = 1.2 (fixed by the toolkit);
- tokens: the text split on single spaces, as the toolkit does (``str.split(" ")``) after ``strip()``; the COCO
  pipeline normally runs the Stanford PTB tokenizer (Java) first, which the SMS paper's numbers do not need;
- lower-casing on (``lowercase=True``): the SMS paper's Table 1 texts are lower-cased; ``lowercase=false`` keeps case
  (essays: .415 instead of .443);
- several references: the toolkit's max-P / max-R rule (``refs:max-p-max-r``, native), which is not one reference's
  score; ``refs=max|mean|first|jackknife`` score each reference on its own and combine (see metrics.base);
- an empty or blank candidate or reference scores 0 (the toolkit would count an empty string as one token).

The toolkit's LCS is a plain Python dynamic programme (O(|c| |r|)), about 20 s for the 1,086 essays; scores are cached.
"""
from __future__ import annotations

from meta_eval.metrics.base import Example, Metric, boolean
from meta_eval.metrics.registry import register

__all__ = ["RougeCoco"]


@register("rouge-coco")
class RougeCoco(Metric):
    """COCO-caption ROUGE-L (beta 1.2, whole-text LCS, space tokens), through ``pycocoevalcap``.

    Parameters
    ----------
    lowercase : bool
        Lower-case both texts first (default True, as the SMS paper's texts).

    Examples
    --------
    >>> from meta_eval.metrics import Example, create
    >>> s = create("rouge-coco").score([Example("a b c", ("a c",))])["rougeL-coco"]  # P=2/3, R=1
    >>> round(float(s[0]), 6)  # 2.44 * (2/3) / (1 + 1.44 * 2/3)
    0.829932
    """

    variants = ("rougeL-coco",)
    requires = ("pycocoevalcap",)
    install_hint = "pip install 'meta-eval[coco]' (pycocoevalcap==1.2)"
    libraries = ("pycocoevalcap",)
    refs_native = "max-p-max-r"

    def __init__(self, lowercase: bool | str = True) -> None:
        self.lowercase = boolean(lowercase, "lowercase")
        self._rouge = None

    def config(self) -> dict[str, object]:
        return {"impl": "pycocoevalcap.Rouge", "lcs": "whole-text", "beta": "1.2", "tok": "split-space",
                "lc": "yes" if self.lowercase else "no", "refs": "max-p-max-r", "empty": "0"}

    def _prepare(self, text: str) -> str:
        text = text.strip()
        return text.lower() if self.lowercase else text

    def _score(self, examples: list[Example]) -> dict[str, list[float]]:
        if self._rouge is None:
            from pycocoevalcap.rouge.rouge import Rouge

            self._rouge = Rouge()
        out = []
        for ex in examples:
            cand = self._prepare(ex.candidate)
            refs = [r for r in map(self._prepare, ex.references) if r]
            out.append(float(self._rouge.calc_score([cand], refs)) if cand and refs else 0.0)
        return {"rougeL-coco": out}
