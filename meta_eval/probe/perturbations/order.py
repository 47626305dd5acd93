"""Order and coherence perturbations: the words stay, their arrangement changes."""
from __future__ import annotations

import numpy as np

from meta_eval.probe.perturbations.base import Perturbation, register

__all__ = ["sentence_reversal"]


def _sentences(text: str) -> list[str]:
    from meta_eval.metrics.text import split_sentences  # the splitter the mover metrics use

    return split_sentences(text)


def sentence_reversal(text: str, rng: np.random.Generator) -> "str | None":
    """The text's sentences in reverse order (None with fewer than two sentences).

    Examples
    --------
    >>> sentence_reversal("The cat sat. The dog ran.", None)
    'The dog ran. The cat sat.'
    """
    sentences = _sentences(text)
    if len(sentences) < 2:
        return None
    return " ".join(reversed(sentences))


register(Perturbation(
    "sentence-reversal", "order", sentence_reversal,
    citation="Sai et al. (2021), Perturbation CheckLists (EMNLP), 'jumbling' at sentence level; "
             "He et al. (2023), On the Blind Spots of Model-Based Evaluation Metrics (ACL), 'sentence switch'",
    description="sentences in reverse order"))
