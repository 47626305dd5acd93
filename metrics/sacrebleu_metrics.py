"""BLEU, chrF and TER, sentence by sentence, through ``sacrebleu`` (Post, 2018), the implementation WMT reports.

Metrics ``bleu`` (Papineni et al., 2002), ``chrf`` (Popović, 2015; chrF++ with ``word_order=2``, Popović, 2017) and
``ter`` (Snover et al., 2006), each one variant of the same name, on sacrebleu's 0-100 scale. Every score is
``sacrebleu.metrics.<BLEU|CHRF|TER>(...).sentence_score(candidate, references)``, nothing re-implemented; the
metric objects are built once with the options below and hold no state between examples.

Choices (all in the signature):

- **sacrebleu's own signature** is embedded verbatim in parentheses: ``sacrebleu:(nrefs:var|case:mixed|eff:yes|
  tok:13a|smooth:exp|version:2.6.0)`` (``get_signature()`` of the configured object; parentheses, not brackets,
  which the console would read as markup), and ``sacrebleu==<version>``
  is among the versions. ``nrefs`` is written ``var`` (sacrebleu's notation for a varying number of references):
  each example is scored with all of its references, however many; ``nrefs:1`` with ``ref=source``. Two options
  change the scores but are not in sacrebleu's signature: BLEU's ``max_ngram_order`` and chrF's ``beta``; where
  not at their default (4, 2) they follow it as ``ngram:N`` and ``beta:B``.
- **Row scores are sentence scores, system scores are corpus scores.** meta-eval needs one score per example,
  so every row score is sacrebleu's ``sentence_score`` (the signature says ``level:sentence``). At the system level
  a system's score is sacrebleu's ``corpus_score`` over that system's rows (:meth:`_SacreBleuMetric.corpus_score`,
  ``system_score = "corpus"``), what WMT reports: it pools the n-gram (BLEU, chrF) or edit (TER) statistics of all
  the segments before computing one score, which is not the mean of the sentence scores (see
  ``tests/test_sacrebleu_metrics.py``). The corpus object is built with the same options, except BLEU's
  ``effective_order``, which is false at the corpus level as in sacrebleu's ``corpus_bleu`` and its command line
  (the signature of a system-level result says ``sys:corpus``). With a per-reference policy (``refs=max|mean|
  first|jackknife``) no corpus score is defined, and the system score is the mean of the row scores (``sys:mean``);
  ``meta-eval run --system-score mean`` asks for the mean everywhere (see :mod:`meta_eval.scoring.system_scores`).
- **BLEU options**: ``tokenize`` (default ``13a``, sacrebleu's default for non-CJK targets; ``zh``, ``ja-mecab``,
  ``ko-mecab``, ``intl``, ``char``, ``none``, ``flores101``, ``flores200``, ``spm``, ... as sacrebleu lists them;
  for a Chinese, Japanese or Korean target pass the tokenizer sacrebleu's command line would choose: ``zh``,
  ``ja-mecab``, ``ko-mecab``; ``ja-mecab``/``ko-mecab`` need ``sacrebleu[ja]``/``sacrebleu[ko]``, the SentencePiece
  ones need ``sentencepiece`` and download their model on first use, sacrebleu's own behaviour; a missing extra is
  a configuration error naming it), ``lowercase`` (default false), ``smooth_method`` (``exp``, default, as sacrebleu's
  ``sentence_bleu``; ``floor``, ``add-k``, ``none``) with ``smooth_value`` (sacrebleu's default for the method when
  not given), ``max_ngram_order`` (default 4), ``effective_order`` (default **true**, as sacrebleu's
  ``sentence_bleu`` and its ``--sentence-level`` mode: a short sentence is not zeroed for lacking 4-grams;
  with ``false`` sacrebleu's per-sentence advice to enable it is not logged).
- **chrF options**: ``char_order`` (6), ``word_order`` (0; 2 gives chrF++), ``beta`` (2), ``lowercase`` (false),
  ``whitespace`` (false), ``eps_smoothing`` (false: sacrebleu's default effective-order averaging; true: the
  epsilon smoothing of chrF++.py, Moses and NLTK).
- **TER options**: ``normalized`` (false), ``no_punct`` (false), ``asian_support`` (false), ``case_sensitive``
  (false, sacrebleu's default: TER is computed on lower-cased text unless this is true).
- **Values exactly as sacrebleu returns them**, not clipped: sacrebleu's floating point can put a perfect BLEU a few
  ulps above 100 (``bleu`` of "cat" against "cat" is 100.00000000000004), so tests allow 1e-9 beyond the scale.
- **Orientation**: BLEU and chrF are higher-is-better, TER (edits per reference word) is lower-is-better
  (``higher_is_better = False``: meta-eval's statistics negate it).
- **Several references** (``refs``, see :class:`metrics.base.Metric`): by default sacrebleu's own multi-reference
  computation (``refs:sacrebleu-multi``, the native policy ``multi``), as sacrebleu and WMT compute it: BLEU clips
  each n-gram count by its maximum count in any reference and takes the brevity penalty from the reference length
  closest to the candidate's (the shorter on ties); chrF keeps the statistics of the reference with the best
  chrF; TER takes the fewest edits over the references divided by the *average* reference length. The base
  class's ``refs=max|mean|first|jackknife`` remain available (each reference scored alone, then aggregated);
  for TER, ``max`` and ``jackknife`` pick the *best*, i.e. lowest, TER reference (``refs:min-ter``,
  ``refs:jackknife-min-ter``).
- **Reference-free use**: ``ref=source`` scores the candidate against the example's source as its only reference
  (for factuality sets without references: n-gram overlap with the source document), and writes ``ref:source``
  in the signature. It is a named option, never a silent fallback: with the default ``ref=references`` an example
  without references is an error, and the command line skips the metric on a set without references.
- **Empty or blank candidates** get sacrebleu's value (from ``BLEU.compute_bleu``, ``CHRF._compute_f_score`` and
  ``TER._compute_score_from_stats``): BLEU 0 and chrF 0 (no match; also for an empty reference); TER 100 against
  a non-empty reference (every reference word is an edit), 100 for a non-empty candidate against an empty
  reference, and 0 when both are empty.
"""
from __future__ import annotations

from typing import ClassVar

import numpy as np

from meta_eval.metrics.base import Example, Metric, MetricError, boolean, choice, positive_int
from meta_eval.metrics.registry import register

__all__ = ["Bleu", "Chrf", "REF_SOURCES", "Ter", "SACREBLEU_HINT", "check_reference_source", "reference_texts",
           "require_references"]

SACREBLEU_HINT = "pip install 'meta-eval[sacrebleu]' (sacrebleu==2.6.0)"
#: Values of the ``ref`` option: where a reference-based metric takes its reference(s) from.
REF_SOURCES = ("references", "source")


def check_reference_source(metric: Metric, ref: object) -> str:
    """Validate ``ref`` and, for ``ref="source"``, make ``metric`` read the source instead of references.

    The instance then declares ``needs_references = False`` and ``needs_source = True`` (its class keeps the
    defaults, which ``meta-eval metrics`` lists), so :meth:`metrics.base.Metric.score` requires a source on
    every example and no multi-reference policy can be chosen. Shared by the sacrebleu metrics and BERTScore.
    """
    word = ref.strip().lower() if isinstance(ref, str) else ref
    choice(word, REF_SOURCES, "ref (where the reference comes from)")
    if word == "source":
        metric.needs_references = False
        metric.needs_source = True
    return word


def reference_texts(metric: Metric, ex: Example) -> list[str]:
    """The reference(s) ``metric`` scores ``ex`` against: its references, or ``[source]`` with ``ref=source``."""
    if getattr(metric, "ref", "references") == "source":
        return [ex.source or ""]
    return list(ex.references)


def require_references(metric: Metric, examples) -> None:
    """A clearer error than the base class's for an example without references: name the ``ref=source`` option."""
    if metric.needs_references:
        for i, ex in enumerate(examples):
            if isinstance(ex, Example) and not ex.references:
                raise MetricError(f"{metric.name}: example {i} has no reference; this metric compares with "
                                  "references (pass ref=source to compare with the source instead)")


def _optional_float(value: object, what: str) -> float | None:
    if value is None or (isinstance(value, str) and value.strip().lower() in ("", "none")):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise MetricError(f"{what} must be a number or none, got {value!r}") from None
    if not np.isfinite(number) or number < 0:
        raise MetricError(f"{what} must be a finite non-negative number, got {value!r}")
    return number


def _non_negative_int(value: object, what: str) -> int:
    if not isinstance(value, bool) and str(value).strip() == "0":
        return 0
    try:
        return positive_int(value, what)
    except MetricError:
        raise MetricError(f"{what} must be a non-negative integer, got {value!r}") from None


class _SacreBleuMetric(Metric):
    """Shared machinery: one configured sacrebleu object, its signature, sentence scores with all references."""

    requires = ("sacrebleu",)
    install_hint = SACREBLEU_HINT
    libraries = ("sacrebleu",)
    refs_native = "multi"
    refs_default = "multi"
    refs_labels = {"multi": "sacrebleu-multi"}
    _class_name: ClassVar[str] = ""  # BLEU, CHRF or TER in sacrebleu.metrics

    def _set_ref(self, ref: object) -> None:
        self.ref = check_reference_source(self, ref)
        self._object()  # build now: a bad option fails at configuration, not in the middle of a run

    def _kwargs(self) -> dict[str, object]:
        raise NotImplementedError

    def _object(self):
        """The configured sacrebleu metric object (built on first use, rebuilt after unpickling)."""
        cached = self.__dict__.get("_sacrebleu")
        if cached is not None:
            return cached
        try:
            import sacrebleu.metrics as sm
        except ImportError:
            raise MetricError(f"{self.name} needs sacrebleu: {SACREBLEU_HINT}") from None
        try:
            obj = getattr(sm, self._class_name)(**self._kwargs())
        except (ImportError, RuntimeError) as exc:  # ja-mecab without mecab-python3, spm without sentencepiece
            why = " ".join(str(exc).split())
            raise MetricError(f"{self.name}: sacrebleu cannot build {self._class_name}({self._kwargs()}): {why}") \
                from None
        except (AssertionError, ValueError, KeyError, TypeError) as exc:
            raise MetricError(f"{self.name}: sacrebleu rejects the options {self._kwargs()}: "
                              f"{type(exc).__name__}: {exc}") from None
        self.__dict__["_sacrebleu"] = obj
        return obj

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state.pop("_sacrebleu", None)  # rebuilt in a worker
        return state

    def sacrebleu_signature(self) -> str:
        """sacrebleu's ``get_signature()`` of the configured metric, ``nrefs`` written as meta-eval uses it."""
        cached = self.__dict__.get("_signature")
        if cached is not None:
            return cached
        import sacrebleu.metrics as sm

        probe = getattr(sm, self._class_name)(**self._kwargs())
        probe.sentence_score("", [""])  # sacrebleu fixes the signature's nrefs only once references are seen
        signature = probe.get_signature()
        signature.update("nrefs", 1 if self.ref == "source" else "var")
        self.__dict__["_signature"] = str(signature)
        return self.__dict__["_signature"]

    def unsigned(self) -> dict[str, object]:
        """The options that change scores but that sacrebleu's own signature leaves out, where not at their
        default (BLEU's ``max_ngram_order``, chrF's ``beta``): the signature names them, so that the cache never
        serves one setting's scores for another's."""
        return {}

    def config(self) -> dict[str, object]:
        cfg: dict[str, object] = {"sacrebleu": f"({self.sacrebleu_signature()})", **self.unsigned(),
                                  "level": "sentence"}
        if self.ref == "source":
            cfg["ref"] = "source"
        else:
            cfg["refs"] = "sacrebleu-multi"
        return cfg

    def score(self, examples) -> dict[str, np.ndarray]:
        examples = list(examples)
        require_references(self, examples)
        return super().score(examples)

    @property
    def system_score(self) -> str:
        """``"corpus"``: a system's score is :meth:`corpus_score` over its rows; ``"mean"`` under a per-reference
        policy, where sacrebleu defines no corpus score."""
        return "corpus" if self._refs in (None, self.refs_native) else "mean"

    def _corpus_kwargs(self) -> dict[str, object]:
        return self._kwargs()

    def corpus_score(self, examples) -> dict[str, float]:
        """sacrebleu's ``corpus_score`` over ``examples``, each with all its references (or its source with
        ``ref=source``); reference streams are padded with ``None`` where an example has fewer references, which
        sacrebleu reads as a varying number of references.

        Examples
        --------
        >>> from meta_eval.metrics import Example, create
        >>> rows = [Example("the cat sat", ("the cat sat",)), Example("a dog", ("the dog ran",))]
        >>> round(create("chrf").corpus_score(rows)["chrf"], 4)
        61.8712
        """
        import sacrebleu.metrics as sm

        examples = list(examples)
        if not examples:
            raise MetricError(f"{self.name}: a corpus score needs at least one example")
        require_references(self, examples)
        refs = [reference_texts(self, ex) for ex in examples]
        streams = [[r[k] if k < len(r) else None for r in refs] for k in range(max(len(r) for r in refs))]
        obj = getattr(sm, self._class_name)(**self._corpus_kwargs())
        value = float(obj.corpus_score([ex.candidate for ex in examples], streams).score)
        if not np.isfinite(value):
            raise MetricError(f"{self.name}: sacrebleu's corpus score is {value}")
        return {self.variants[0]: value}

    def _score(self, examples: list[Example]) -> dict[str, list[float]]:
        obj = self._object()
        values = [float(obj.sentence_score(ex.candidate, reference_texts(self, ex)).score) for ex in examples]
        return {self.variants[0]: values}


@register("bleu")
class Bleu(_SacreBleuMetric):
    """Sentence-level BLEU (Papineni et al., 2002) from ``sacrebleu.metrics.BLEU`` (see the module notes).

    Parameters
    ----------
    tokenize : str
        sacrebleu tokenizer (default ``13a``).
    lowercase : bool or str
        Lower-case before tokenizing (default false).
    smooth_method : {"exp", "floor", "add-k", "none"}
        Smoothing (default ``exp``); ``smooth_value`` its value (default: sacrebleu's for the method).
    max_ngram_order : int
        Highest n-gram order (default 4).
    effective_order : bool or str
        Geometric mean over the orders the sentence has (default true, as ``sacrebleu.sentence_bleu``).
    ref : {"references", "source"}
        Compare with the references (default) or with the source (reference-free use).

    Examples
    --------
    >>> from meta_eval.metrics import Example, create
    >>> round(float(create("bleu").score([Example("the cat sat", ("the cat sat",))])["bleu"][0]), 6)
    100.0
    """

    _class_name = "BLEU"

    def __init__(self, tokenize: str = "13a", lowercase: bool | str = False, smooth_method: str = "exp",
                 smooth_value: float | str | None = None, max_ngram_order: int | str = 4,
                 effective_order: bool | str = True, ref: str = "references") -> None:
        self.tokenize = tokenize.strip() if isinstance(tokenize, str) else tokenize
        self.lowercase = boolean(lowercase, "lowercase")
        self.smooth_method = choice(smooth_method, ("exp", "floor", "add-k", "none"), "smooth_method")
        self.smooth_value = _optional_float(smooth_value, "smooth_value")
        self.max_ngram_order = positive_int(max_ngram_order, "max_ngram_order")
        self.effective_order = boolean(effective_order, "effective_order")
        if self.tokenize not in _bleu_tokenizers():
            raise MetricError(f"unknown tokenize {tokenize!r}; choose one of {', '.join(_bleu_tokenizers())}")
        self._set_ref(ref)

    def unsigned(self) -> dict[str, object]:
        return {"ngram": self.max_ngram_order} if self.max_ngram_order != 4 else {}

    def _kwargs(self) -> dict[str, object]:
        return {"tokenize": self.tokenize, "lowercase": self.lowercase, "smooth_method": self.smooth_method,
                "smooth_value": self.smooth_value, "max_ngram_order": self.max_ngram_order,
                "effective_order": self.effective_order}

    def _score(self, examples: list[Example]) -> dict[str, list[float]]:
        if self.effective_order:
            return super()._score(examples)
        # sacrebleu logs "enable effective_order" for every sentence without it: the choice is explicit here
        import logging

        logger = logging.getLogger("sacrebleu")
        level = logger.level
        logger.setLevel(logging.ERROR)
        try:
            return super()._score(examples)
        finally:
            logger.setLevel(level)

    def _corpus_kwargs(self) -> dict[str, object]:
        return {**self._kwargs(), "effective_order": False}  # sacrebleu's corpus_bleu default, as WMT runs it


def _bleu_tokenizers() -> tuple[str, ...]:
    try:
        from sacrebleu.metrics import BLEU
    except ImportError:
        raise MetricError(f"bleu needs sacrebleu: {SACREBLEU_HINT}") from None
    return tuple(BLEU.TOKENIZERS)


@register("chrf")
class Chrf(_SacreBleuMetric):
    """Sentence-level chrF (Popović, 2015) / chrF++ (``word_order=2``) from ``sacrebleu.metrics.CHRF``.

    Parameters
    ----------
    char_order : int
        Character n-gram order (default 6).
    word_order : int
        Word n-gram order (default 0; 2 is chrF++).
    beta : int
        Recall weight of the F-score (default 2).
    lowercase, whitespace, eps_smoothing : bool or str
        sacrebleu's options (default false each; see the module notes).
    ref : {"references", "source"}
        Compare with the references (default) or with the source (reference-free use).
    """

    _class_name = "CHRF"

    def __init__(self, char_order: int | str = 6, word_order: int | str = 0, beta: int | str = 2,
                 lowercase: bool | str = False, whitespace: bool | str = False, eps_smoothing: bool | str = False,
                 ref: str = "references") -> None:
        self.char_order = positive_int(char_order, "char_order")
        self.word_order = _non_negative_int(word_order, "word_order")
        self.beta = positive_int(beta, "beta")
        self.lowercase = boolean(lowercase, "lowercase")
        self.whitespace = boolean(whitespace, "whitespace")
        self.eps_smoothing = boolean(eps_smoothing, "eps_smoothing")
        self._set_ref(ref)

    def unsigned(self) -> dict[str, object]:
        return {"beta": self.beta} if self.beta != 2 else {}

    def _kwargs(self) -> dict[str, object]:
        return {"char_order": self.char_order, "word_order": self.word_order, "beta": self.beta,
                "lowercase": self.lowercase, "whitespace": self.whitespace, "eps_smoothing": self.eps_smoothing}


@register("ter")
class Ter(_SacreBleuMetric):
    """Sentence-level TER (Snover et al., 2006) from ``sacrebleu.metrics.TER``; lower is better.

    Parameters
    ----------
    normalized, no_punct, asian_support, case_sensitive : bool or str
        sacrebleu's options (default false each).
    ref : {"references", "source"}
        Compare with the references (default) or with the source (reference-free use).
    """

    higher_is_better = False
    refs_labels = {"multi": "sacrebleu-multi", "max": "min-ter", "jackknife": "jackknife-min-ter"}
    _class_name = "TER"
    # sacrebleu's TER (pure Python, beam search over shifts) takes ~0.1 s per summary-length row and over 1 s per
    # essay: 2-5 minutes of a default chaganty run that takes seconds otherwise; named (-m ter), it runs as usual
    in_default_run = False
    not_default_reason = ("run only when named (-m ter): sacrebleu's TER takes about 0.1 s per summary-length row "
                          "(minutes on a summarization set)")

    def __init__(self, normalized: bool | str = False, no_punct: bool | str = False,
                 asian_support: bool | str = False, case_sensitive: bool | str = False,
                 ref: str = "references") -> None:
        self.normalized = boolean(normalized, "normalized")
        self.no_punct = boolean(no_punct, "no_punct")
        self.asian_support = boolean(asian_support, "asian_support")
        self.case_sensitive = boolean(case_sensitive, "case_sensitive")
        self._set_ref(ref)

    def _kwargs(self) -> dict[str, object]:
        return {"normalized": self.normalized, "no_punct": self.no_punct, "asian_support": self.asian_support,
                "case_sensitive": self.case_sensitive}

    def _score_by_reference(self, examples: list[Example], policy: str) -> dict[str, np.ndarray]:
        """The base class's per-reference policies, with ``max``/``jackknife`` choosing the lowest TER."""
        if policy not in ("max", "jackknife"):
            return super()._score_by_reference(examples, policy)
        import copy

        negated = copy.copy(self)  # a private copy scores -TER, so this object is never changed
        negated.__dict__["_negate"] = True
        out = super(Ter, negated)._score_by_reference(examples, policy)
        return {k: -v for k, v in out.items()}

    def _score(self, examples: list[Example]) -> dict[str, list[float]]:
        out = super()._score(examples)
        if self.__dict__.get("_negate"):
            return {k: [-x for x in v] for k, v in out.items()}
        return out
