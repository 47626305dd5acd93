"""JUDGE-BENCH's schema (Bavaresco et al., "LLMs instead of Human Judges?", ACL 2025): any such file, and 13 built-in
sets ``judge-bench:<name>``.

The schema
----------
A file is one JSON object (``data/README.md`` and ``data/example.json`` of github.com/dmg-illc/JUDGE-BENCH) with
``dataset``, ``dataset_url``, ``expert_annotator`` (``"true"``/``"false"``, absent in one file), ``annotations`` (one
entry per judged property: ``metric``, ``category`` = continuous | graded | categorical, ``prompt`` = a jinja
template, ``worst``/``best`` for graded and continuous scales, ``labels_list`` for categorical ones) and ``instances``
(``id``, ``instance`` = a string or an object of named string fields, ``annotations`` = {property: {``mean_human``
(graded/continuous) or ``majority_human`` (categorical), ``individual_human_scores``}}).

``meta-eval run -j FILE.json`` and ``meta-eval judgments FILE.json`` read such a file; it is recognised by its keys,
never guessed: a ``.json`` file that is one object with ``annotations`` and ``instances`` is read here, one that is
JSON lines (one object per line) by :mod:`judgments.jsonl`, anything else is an error saying what was expected.
Every error names the file and, for an instance, its position and id (``f.json: instances[3] (id 17): ...``).

Rows
----
One row per instance; its id is the instance's ``id`` (as a string; ids must be unique), its document is itself
(``doc_id`` = id) and it has no system (the files do not say which system wrote an output), so only the global
level is computed. A graded or continuous property's ``mean_human`` is the row's score for that dimension, so the
existing correlations run on it; the raters' values are kept in :attr:`~judgments.base.Judgment.judges` too, so the
leave-one-annotator-out ceiling applies where a row has two or more. A categorical property's ``majority_human``
is kept as a label (:attr:`~judgments.base.Judgment.labels`), never turned into a number; ``meta-eval run`` on it
computes label statistics (accuracy, Cohen's kappa, macro-F1; pairwise accuracy): :mod:`meta_eval.categorical`.
Labels are compared case-insensitively with ``labels_list``, as JUDGE-BENCH's ``eval_responses.py`` does; the file's
own spelling is kept.

The instance's fields are kept on the row (:attr:`~judgments.base.Judgment.fields`: ``{"instance": text}`` for a
string instance, else the object's fields) for prompt templates. What becomes the candidate (and the source), per
built-in set (the section markers are checked on every instance; a missing one is an error naming it):

- ``newsroom``: the text after ``### Generated Summary`` (candidate) and after ``### Source Article`` (source).
- ``roscoe-*``: the text between ``GENERATED RESPONSE:`` and the closing ``Judge the generated response:``
  (candidate), the text between ``CONTEXT:`` and ``GENERATED RESPONSE:`` (source).
- ``inferential-strategies``: the text after ``### MODEL RESPONSE`` (candidate), between ``### PROBLEM STATEMENT``
  and it (source).
- ``dices-*``: ``response`` (candidate), ``user_prompt`` (source).
- ``llmbar-*``: ``output_a`` (candidate), ``input`` (source); ``output_b`` stays in the fields. The property is
  pairwise (``model_a``/``model_b``: which output people preferred): ``meta-eval run`` scores ``output_b`` in the
  candidate's place too, and a numeric metric picks the output it scores higher (:mod:`meta_eval.categorical`).
- ``cola``, ``recipe-crowd-sourcing-data``: the string instance (no source).

Any other file: a string instance is the candidate (no source); an object's candidate is its first field of
``response``, ``output``, ``output_a``, ``output_1`` and its source the first of ``user_prompt``, ``input``,
``source`` (an object with none of the candidate fields is an error listing its fields). Texts are stripped of
surrounding white space. The set's ``candidate_rule`` says which rule was used.

Human agreement
---------------
:func:`human_agreement` gives Krippendorff's alpha per property over ``individual_human_scores`` as JUDGE-BENCH
computes it: a value's position in the list is its rater (the files keep no rater ids), shorter lists are missing
values for the later raters; ordinal level for graded properties, interval for continuous, nominal for categorical
(labels coded by their position in ``labels_list``, lower-cased); a property whose items have one value each has
"one rater: no agreement". JUDGE-BENCH reports alpha = 1 when every rater's values are identical everywhere; so does
this.

A metric as one more rater (``meta-eval run``'s ``alpha +metric``): on a categorical property its answer (the rules
of :mod:`meta_eval.categorical`), nominal. On a graded or continuous property, :func:`alpha_with_metric` at the
property's level (ordinal for graded, interval for continuous), with the metric's scores put on the raters' scale by
their *rank quantiles* (:func:`scale_values`): the scores are ranked (mid-ranks for ties, reversed for a
lower-is-better metric), and the score of quantile q = (rank - 1/2) / n gets the raters' pooled values' value at
that quantile (the sorted values of every rater on every row, position floor(q * M)). So the metric rater keeps its
own order and gets the raters' own distribution of values. Why not rounding its scores into the scale's range: a
metric's scores have no unit on the scale (ROUGE-L F in 0-1, textrank's means, BERTScore's narrow band near 0.9),
so any affine rule (min-max onto worst..best, then round) decides the alpha by the metric's range and outliers
(BERTScore would round to one or two values), not by its agreement; the ordinal level reads only the order of
values and how often each is used, and quantile matching gives the metric the raters' frequencies, so what is left
to agree or disagree on is the order. At the interval level the same values enter their differences. A row without
a finite score is a missing value for the metric rater. The rule is an estimate of agreement for a metric that is
not a rater; a judge that answers on the scale (``llm-judge``) is mapped the same way, so every variant is compared
alike.

Baseline
--------
No default baseline: a set read here declares none (``JudgmentSet.no_baseline`` = :data:`NO_BASELINE`), so ``meta-eval
run`` without ``--baseline`` tests no metric against one and says why once, before the table ("no test against a
baseline: the <set> set declares no default baseline (...)"). The task's default (``rougeL-f``) needs references,
which the schema does not have; ``--baseline VARIANT`` names any scored variant instead.

Built-in sets and where their files are found
---------------------------------------------
The 13 files listed in ``shared/judgments/judge-bench/PROVENANCE.md`` (commit 5a0bf50 of dmg-illc/JUDGE-BENCH),
named as JUDGE-BENCH's results name them, are the subsets of the built-in set ``judge-bench``: ``-j
judge-bench:newsroom`` (or ``-j judge-bench --subset newsroom``). Each is pinned by commit, size and SHA-256
(``SOURCES.md``) and used byte for byte (not converted). In the data folder a file is looked up, in this order, at

1. ``<data>/judge-bench/<path below data/>`` (e.g. ``judge-bench/newsroom/newsroom.json``), where a download puts it;
2. ``<data>/_sources/dmg-illc/JUDGE-BENCH/raw/<commit>/data/<path>``, the mirror layout of the shared data folder
   (``META_EVAL_MIRROR`` layout), so a data folder that keeps the originals there works offline;

and otherwise downloaded into 1. from ``https://github.com/dmg-illc/JUDGE-BENCH/raw/<commit>/data/<path>`` (or
``$META_EVAL_MIRROR``). Either way its SHA-256 is checked before a byte is read.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

from meta_eval.judgments.base import Judgment, JudgmentError, JudgmentSet, Property, json_type, json_value
from meta_eval.judgments.files import DataFile, Source, data_dir, ensure_file

__all__ = ["SETS", "SUBSETS", "alpha_with_metric", "human_agreement", "is_judge_bench", "load", "load_file", "load_json",
           "read", "scale_values", "set_summary"]

NAME = "judge-bench"
REPO = "dmg-illc/JUDGE-BENCH"
COMMIT = "5a0bf500325029efb5dc8adff2c1e991996f0e78"
DATA_SOURCE = (f"{REPO}@5a0bf50 data/ (Bavaresco et al., ACL 2025, \"LLMs instead of Human Judges?\"); each file "
               "from its dataset's authors")
KINDS = ("graded", "continuous", "categorical")
LEVELS = {"graded": "ordinal", "continuous": "interval", "categorical": "nominal"}
#: Why a set in JUDGE-BENCH's schema declares no default baseline (``JudgmentSet.no_baseline``): ``run`` prints it
#: once, before the table, as "no test against a baseline: ...".
NO_BASELINE = ("JUDGE-BENCH's schema has no references, which rougeL-f and bleu need, and no reference-free metric "
               "here scores every such file: textrank needs a source, which cola and recipe-crowd-sourcing-data lack, "
               "and llm-judge a server")


@dataclass(frozen=True)
class BuiltinFile:
    """One built-in JUDGE-BENCH file: its path below ``data/``, size, SHA-256, licence, task and candidate rule."""

    path: str
    size: int
    sha256: str
    licence: str
    task: str
    rule: str

    @property
    def source(self) -> Source:
        return Source(REPO, COMMIT, f"data/{self.path}", self.sha256, self.size)

    def data_file(self) -> DataFile:
        """Where a download puts it: ``judge-bench/<path>``."""
        return DataFile(relpath=f"{NAME}/{self.path}", sha256=self.sha256, sources=(self.source,),
                        how_to_get=f"download {self.source.github_url}")

    def mirror_file(self) -> DataFile:
        """The original in the mirror layout of a data folder: ``_sources/<repo>/raw/<commit>/data/<path>``."""
        return DataFile(relpath=f"_sources/{REPO}/raw/{COMMIT}/data/{self.path}", sha256=self.sha256)


_APACHE, _MIT, _CCBY = "Apache-2.0", "MIT", "CC-BY-4.0"
SETS: dict[str, BuiltinFile] = {
    "newsroom": BuiltinFile("newsroom/newsroom.json", 2415164,
                            "353a7e4646bdbc2f3429e71461d11fe6ce351ee8c2d3e8b4a7ca4aace015a6b0", _APACHE,
                            "summarization", "newsroom"),
    "recipe-crowd-sourcing-data": BuiltinFile(
        "recipe_crowd_sourcing_data/meta_evaluation_recipes.json", 266876,
        "f65832bb83d2969e9eb3156ff89c6c412eb650ed0cfde5e8a81b08dcad871eca", "Apache-2.0 / CC-BY-4.0", "planning",
        "string"),
    "roscoe-cosmos": BuiltinFile("roscoe/roscoe-cosmos-overall.json", 483412,
                                 "d8d320c8198edbc42dfac451a6c53ee14d653773e7becb4ffa3a6a4be2ab11aa", _MIT, "reasoning",
                                 "roscoe"),
    "roscoe-drop": BuiltinFile("roscoe/roscoe-drop-overall.json", 621090,
                               "30fd07f5dc77425c82e4c15da98d2b5ef5fae02671e55fc4fa7e3d0933856496", _MIT, "reasoning",
                               "roscoe"),
    "roscoe-esnli": BuiltinFile("roscoe/roscoe-esnli-overall.json", 315413,
                                "a894de22df1d5e622d745060f93f9b5219697fc7f0fa11225616423bf3ffeb8a", _MIT, "reasoning",
                                "roscoe"),
    "roscoe-gsm8k": BuiltinFile("roscoe/roscoe-gsm8k-overall.json", 450679,
                                "6e4392f8998a39a0435116857914225885d7acf8fb21f4204b48c210a40e604b", _MIT, "reasoning",
                                "roscoe"),
    "dices-990": BuiltinFile("dices/dices_990.json", 1022374,
                             "3f80b2cd66052bc2e6e348742ebb29d1048073908e881c2a60c94026e8647d2f", _CCBY, "safety",
                             "fields"),
    "dices-350-expert": BuiltinFile("dices/dices_350_expert.json", 187997,
                                    "687c75d1ffda680874b1ff73edace6916d39e265490dd69d8480a5f5fcf0ba55", _CCBY, "safety",
                                    "fields"),
    "dices-350-crowdsourced": BuiltinFile("dices/dices_350_crowdsourced.json", 464916,
                                          "9f9694948fc4f734220866fc6fdff397b5207058e0c4d4f9a49d5ab98702c2a4", _CCBY,
                                          "safety", "fields"),
    "cola": BuiltinFile("cola/cola.json", 372885, "0cc14120c2fb46ddc3b5541844772454f05b8831792f3c655c16f2c148cfc80d",
                        "CC0-1.0", "acceptability", "string"),
    "inferential-strategies": BuiltinFile("inferential-strategies/inferential_strategies.json", 1035538,
                                          "955bd97cb917e9bb8379ff2dc59a57b9d6cdc3723c085748fb9b2d0dcb7b5e8a", _CCBY,
                                          "reasoning", "inferential"),
    "llmbar-natural": BuiltinFile("llmbar/data-natural.json", 128846,
                                  "6b0bc161719a1b80dd2f5155cf39a28f8e9f89e222eb06b969e23b05b579cd60", _MIT,
                                  "instruction following", "fields"),
    "llmbar-adversarial": BuiltinFile("llmbar/data-adversarial.json", 575841,
                                      "13aeccef64f46870a978322c68493508dd74cd1297ca38d04f41f692f6a1c4b5", _MIT,
                                      "instruction following", "fields"),
}
SUBSETS = tuple(SETS)
DEFAULT_SUBSET = None  # no default: name the file (judge-bench:<name>)

_RULES = {
    "newsroom": "candidate: the text after '### Generated Summary'; source: the text after '### Source Article'",
    "roscoe": ("candidate: the text between 'GENERATED RESPONSE:' and 'Judge the generated response:'; source: the "
               "text between 'CONTEXT:' and 'GENERATED RESPONSE:'"),
    "inferential": ("candidate: the text after '### MODEL RESPONSE'; source: the text between '### PROBLEM STATEMENT' "
                    "and '### MODEL RESPONSE'"),
    "string": "candidate: the string instance; no source",
}
CANDIDATE_FIELDS = ("response", "output", "output_a", "output_1")
SOURCE_FIELDS = ("user_prompt", "input", "source")


def is_judge_bench(obj: object) -> bool:
    """Whether a parsed JSON document is meant to be in JUDGE-BENCH's schema: an object with ``annotations`` or
    ``instances`` (one without the other is still read as such, and is an error saying what is missing)."""
    return isinstance(obj, dict) and ("annotations" in obj or "instances" in obj)


def load_file(path: str | Path, *, name: str | None = None, rule: str | None = None) -> JudgmentSet:
    """Read a ``.json`` file in JUDGE-BENCH's schema (see the module docstring).

    Raises
    ------
    JudgmentError
        The file is not valid UTF-8 JSON, is not in the schema (the message says what was expected), or an instance
        is malformed (the message names the file, the instance's position and its id).
    """
    from meta_eval.judgments.limits import read_bytes

    path = Path(path)
    doc = parse_json(read_bytes(path, JudgmentError), path)
    if not is_judge_bench(doc):
        raise JudgmentError(_not_schema(path, doc))
    return read(doc, path, name=name, rule=rule)


def load_json(path: str | Path, text: str = "repaired") -> JudgmentSet:
    """A ``.json`` judgment file: JUDGE-BENCH's schema when it is one object with ``annotations`` or ``instances``,
    JSON lines (:func:`judgments.jsonl.load`) when it is one object per line (or one object with ``candidate``), an
    error saying what was expected for anything else. Texts of a JUDGE-BENCH file are kept as they are (`text`
    applies to JSON lines)."""
    from meta_eval.judgments import jsonl
    from meta_eval.judgments.limits import read_bytes

    path = Path(path)
    raw = read_bytes(path, JudgmentError)
    try:
        doc = json.loads(raw.decode("utf-8-sig"))
    except json.JSONDecodeError as exc:
        if exc.msg == "Extra data":  # more than one document: JSON lines, whose reader names the line at fault
            return jsonl.load(path, text=text)
        doc = parse_json(raw, path)  # raises, naming the line
    except (UnicodeDecodeError, RecursionError):
        doc = parse_json(raw, path)  # raises
    if is_judge_bench(doc):
        return read(doc, path)
    if isinstance(doc, dict) and "candidate" in doc:
        return jsonl.load(path, text=text)
    raise JudgmentError(_not_schema(path, doc))


def parse_json(raw: bytes, path: Path) -> object:
    """The JSON document in `raw`; a :class:`JudgmentError` naming `path` (and line and column) if it is not one."""
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise JudgmentError(f"{path}: not valid UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start})") from None
    try:
        return json.loads(text)
    except RecursionError:
        raise JudgmentError(f"{path}: JSON nested too deeply") from None
    except json.JSONDecodeError as exc:
        raise JudgmentError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg} at column {exc.colno})") from None


def _not_schema(path: Path, doc: object) -> str:
    what = (f"an object with the keys {', '.join(map(repr, list(doc)[:8]))}" if isinstance(doc, dict)
            else json_type(doc))
    return (f"{path} is {what}: a .json judgment file must be in JUDGE-BENCH's schema (one object with 'annotations' "
            "and 'instances', see docs/judgments.md), or JSON lines (one object per line, with 'candidate' and "
            "'scores')")


def _number(value: object, where: str, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise JudgmentError(f"{where}: {name} must be a finite number, got {json_value(value)}")
    return float(value)


def _properties(doc: dict, path: Path) -> tuple[Property, ...]:
    anns = doc.get("annotations")
    if not isinstance(anns, list) or not anns:
        raise JudgmentError(f"{path}: 'annotations' must be a non-empty list of the judged properties (JUDGE-BENCH's "
                            f"schema), got {json_type(anns) if 'annotations' in doc else 'nothing'}")
    props: list[Property] = []
    for i, a in enumerate(anns):
        where = f"{path}: annotations[{i}]"
        if not isinstance(a, dict):
            raise JudgmentError(f"{where} must be an object, got {json_type(a)}")
        name = a.get("metric")
        if not isinstance(name, str) or not name.strip():
            raise JudgmentError(f"{where}: 'metric' (the property's name) must be a non-empty string, got {name!r}")
        where = f"{where} ({name!r})"
        if any(p.name == name for p in props):
            raise JudgmentError(f"{where}: the property {name!r} is declared twice")
        kind = a.get("category")
        if kind not in KINDS:
            raise JudgmentError(f"{where}: 'category' must be one of {', '.join(KINDS)}, got {kind!r}")
        prompt = a.get("prompt", "")
        if not isinstance(prompt, str):
            raise JudgmentError(f"{where}: 'prompt' must be a string (a jinja template), got {json_type(prompt)}")
        if kind == "categorical":
            labels = a.get("labels_list")
            if (not isinstance(labels, list) or len(labels) < 2 or not all(isinstance(x, str) and x.strip()
                                                                             for x in labels)
                    or len({x.strip().lower() for x in labels}) != len(labels)):
                raise JudgmentError(f"{where}: a categorical property needs 'labels_list', two or more distinct "
                                    f"non-empty strings, got {labels!r}")
            pairwise = sorted(x.strip().lower() for x in labels) == ["model_a", "model_b"]
            props.append(Property(name, kind, labels=tuple(labels), prompt=prompt, pairwise=pairwise))
        else:
            worst, best = (_number(a.get(k), where, repr(k)) for k in ("worst", "best"))
            if worst == best:
                raise JudgmentError(f"{where}: 'worst' and 'best' are both {worst:g}: a scale needs two ends")
            props.append(Property(name, kind, worst=worst, best=best, prompt=prompt))
    return tuple(props)


def _section(text: str, start: str, end: str | None, where: str, what: str) -> str:
    if text.count(start) != 1 or (end is not None and text.count(end) != 1):
        markers = repr(start) + (f" and {end!r}" if end else "")
        raise JudgmentError(f"{where}: the instance must hold {markers} once each to find its {what}")
    part = text.split(start, 1)[1]
    return (part.split(end, 1)[0] if end is not None else part).strip()


def _texts(instance: object, rule: str, where: str) -> tuple[dict[str, str], str, str | None]:
    """The instance's fields, its candidate and its source under `rule`."""
    if isinstance(instance, str):
        fields = {"instance": instance}
        if rule == "newsroom":
            return (fields, _section(instance, "### Generated Summary", "### Source Article", where, "summary"),
                    _section(instance, "### Source Article", None, where, "source article"))
        if rule == "roscoe":
            return (fields, _section(instance, "GENERATED RESPONSE:", "Judge the generated response:", where,
                                     "generated response"),
                    _section(instance, "CONTEXT:", "GENERATED RESPONSE:", where, "context"))
        if rule == "inferential":
            return (fields, _section(instance, "### MODEL RESPONSE", None, where, "model response"),
                    _section(instance, "### PROBLEM STATEMENT", "### MODEL RESPONSE", where, "problem statement"))
        if rule not in (None, "string"):
            raise JudgmentError(f"{where}: 'instance' must be an object of fields for this set, got a string")
        return fields, instance.strip(), None
    if not isinstance(instance, dict) or not instance:
        raise JudgmentError(f"{where}: 'instance' must be a string or an object of named string fields, got "
                            f"{json_type(instance) if not isinstance(instance, dict) else 'an empty object'}")
    for key, value in instance.items():
        if not isinstance(value, str):
            raise JudgmentError(f"{where}: instance field {key!r} must be a string, got {json_type(value)}")
    if rule not in (None, "fields"):
        raise JudgmentError(f"{where}: 'instance' must be a string for this set, got an object")
    cand = next((k for k in CANDIDATE_FIELDS if k in instance), None)
    if cand is None:
        raise JudgmentError(f"{where}: the instance has the fields {', '.join(map(repr, instance))} but none of "
                            f"{', '.join(map(repr, CANDIDATE_FIELDS))}, so no candidate text (the judged output) can "
                            "be chosen")
    src = next((k for k in SOURCE_FIELDS if k in instance), None)
    return dict(instance), instance[cand].strip(), (instance[src].strip() if src else None)


def _label(value: object, prop: Property, where: str, name: str) -> str:
    lower = [x.strip().lower() for x in prop.labels]
    if not isinstance(value, str) or value.strip().lower() not in lower:
        raise JudgmentError(f"{where}: {name} of {prop.name!r} must be one of its labels {', '.join(prop.labels)}, "
                            f"got {json_value(value)}")
    return prop.labels[lower.index(value.strip().lower())]


def _row(inst: object, i: int, props: tuple[Property, ...], path: Path, rule: str | None) -> Judgment:
    where = f"{path}: instances[{i}]"
    if not isinstance(inst, dict):
        raise JudgmentError(f"{where} must be an object, got {json_type(inst)}")
    rid = inst.get("id")
    if isinstance(rid, bool) or not isinstance(rid, (int, str)) or (isinstance(rid, str) and not rid.strip()):
        raise JudgmentError(f"{where}: 'id' must be an integer or a non-empty string, got {rid!r}")
    rid = str(rid)
    where = f"{where} (id {rid!r})"
    if "instance" not in inst:
        raise JudgmentError(f"{where}: missing field 'instance' (the judged text or an object of its fields)")
    fields, candidate, source = _texts(inst["instance"], rule, where)
    anns = inst.get("annotations")
    if not isinstance(anns, dict):
        raise JudgmentError(f"{where}: 'annotations' must be an object of property -> human judgments, got "
                            f"{json_type(anns) if 'annotations' in inst else 'nothing'}")
    names = {p.name for p in props}
    for key in anns:
        if key not in names:
            raise JudgmentError(f"{where}: annotations name the property {key!r}, which the file's 'annotations' do "
                                f"not declare (it declares {', '.join(map(repr, names))})")
    scores, judges, labels, raters = {}, {}, {}, {}
    for p in props:
        a = anns.get(p.name)
        if a is None:
            continue
        if not isinstance(a, dict):
            raise JudgmentError(f"{where}: annotations[{p.name!r}] must be an object, got {json_type(a)}")
        values = a.get("individual_human_scores", [])
        if not isinstance(values, list):
            raise JudgmentError(f"{where}: individual_human_scores of {p.name!r} must be a list, got "
                                f"{json_type(values)}")
        if p.categorical:
            if "majority_human" not in a:
                raise JudgmentError(f"{where}: the categorical property {p.name!r} needs 'majority_human'")
            labels[p.name] = _label(a["majority_human"], p, where, "majority_human")
            raters[p.name] = tuple(None if v is None else _label(v, p, where, "a rater's value") for v in values)
            continue
        if "mean_human" not in a:
            raise JudgmentError(f"{where}: the {p.kind} property {p.name!r} needs 'mean_human'")
        lo, hi = min(p.worst, p.best), max(p.worst, p.best)
        mean = _number(a["mean_human"], where, f"mean_human of {p.name!r}")
        nums = tuple(None if v is None else _number(v, where, f"a rater's value of {p.name!r}") for v in values)
        for v in (mean, *[x for x in nums if x is not None]):
            if not lo <= v <= hi:
                raise JudgmentError(f"{where}: {p.name!r} value {v:g} is outside its scale {p.worst:g}-{p.best:g}")
        scores[p.name] = mean
        raters[p.name] = nums
        present = tuple(x for x in nums if x is not None)
        if present:
            judges[p.name] = present
    return Judgment(rid, rid, None, candidate, (), source, scores=scores, judges=judges, where=where,
                    labels=labels, raters=raters, fields=fields)


def read(doc: dict, path: str | Path, *, name: str | None = None, rule: str | None = None,
         licence: str = "", task: str = "") -> JudgmentSet:
    """A :class:`JudgmentSet` from a parsed JUDGE-BENCH document (`path` names it in messages; `rule`: a built-in
    set's candidate rule, None for the generic one)."""
    path = Path(path)
    props = _properties(doc, path)
    insts = doc.get("instances")
    if not isinstance(insts, list) or not insts:
        raise JudgmentError(f"{path}: 'instances' must be a non-empty list of the judged instances (JUDGE-BENCH's "
                            f"schema), got {json_type(insts) if 'instances' in doc else 'nothing'}")
    rows = [_row(inst, i, props, path, rule) for i, inst in enumerate(insts)]
    seen: dict[str, Judgment] = {}
    for row in rows:
        if row.id in seen:
            raise JudgmentError(f"{row.where} repeats the id of {seen[row.id].where}; each instance needs its own id")
        seen[row.id] = row
    graded = [p.name for p in props if not p.categorical]
    default = graded[0] if graded else props[0].name
    expert = doc.get("expert_annotator")
    who = {"true": "experts", "false": "crowd workers"}.get(str(expert).lower(), "not stated (no expert_annotator)")
    counts = [len(r.raters.get(p.name, ())) for r in rows for p in props if p.name in r.raters]
    per_item = f"{min(counts)}-{max(counts)}" if counts and min(counts) != max(counts) else str(max(counts, default=0))
    per_item += " rater per item" if per_item == "1" else " raters per item"
    dataset = doc.get("dataset") if isinstance(doc.get("dataset"), str) else ""
    url = doc.get("dataset_url") if isinstance(doc.get("dataset_url"), str) else ""
    if rule is None:
        kinds = {tuple(sorted(r.fields)) for r in rows}
        cand_rule = ("candidate: the string instance; no source" if kinds == {("instance",)} else
                     f"candidate: the first of the fields {', '.join(CANDIDATE_FIELDS)}; source: the first of "
                     f"{', '.join(SOURCE_FIELDS)}, if any (the instance's fields are kept for templates)")
    else:
        cand_rule = _RULES.get(rule) or (
            "candidate: output_a, source: input; the pair (output_a, output_b) is in the fields" if
            any(p.pairwise for p in props) else "candidate: response; source: user_prompt")
    notes = [f"JUDGE-BENCH schema: {cand_rule}",
             "rows have no system (the file does not say who wrote each output): only the global level is computed"]
    categorical = [p.name for p in props if p.categorical]
    if categorical:
        notes.append(f"categorical properties ({', '.join(categorical)}) are kept as labels: `meta-eval run --human "
                     "<property>` compares metrics with them by label statistics (meta_eval.categorical)")
    return JudgmentSet(
        name=name or path.name, rows=rows, dimensions=tuple(p.name for p in props), default_dimension=default,
        description=dataset, default_reason=("it is the file's first graded property" if graded else
                                             "the file has no graded property: its first property"),
        notes=tuple(notes), task=task, licence=licence,
        data_source=f"{dataset} ({url})" if url else dataset,
        annotators=f"{per_item}, {who}", properties=props, candidate_rule=cand_rule, no_baseline=NO_BASELINE)


def locate(name: str, root: Path, download: bool = True) -> Path:
    """The verified local path of built-in file `name` (see the module docstring for the order)."""
    spec = SETS[name]
    mirror = spec.mirror_file()
    if not (root / spec.data_file().relpath).exists() and (root / mirror.relpath).exists():
        return ensure_file(mirror, root, download=False)
    return ensure_file(spec.data_file(), root, download=download)


def load(root: Path | None = None, subset: str | None = None, download: bool = True) -> JudgmentSet:
    """Built-in set ``judge-bench:<subset>`` (`subset`: one of :data:`SUBSETS`)."""
    if subset is None:
        raise JudgmentError(f"judge-bench holds {len(SETS)} files: name one as -j judge-bench:<name> (or --subset "
                            f"<name>), one of {', '.join(SETS)}")
    if subset not in SETS:
        raise JudgmentError(f"judge-bench has no file {subset!r}; its files are {', '.join(SETS)}")
    spec = SETS[subset]
    path = locate(subset, data_dir(root), download)
    jset = load_file(path, name=f"{NAME}:{subset}", rule=spec.rule)
    from dataclasses import replace

    return replace(jset, subset=subset, licence=spec.licence, task=spec.task,
                   data_source=f"{REPO}@5a0bf50 data/{spec.path}; {jset.data_source}")


def human_agreement(jset: JudgmentSet) -> dict[str, dict]:
    """Krippendorff's alpha of the raters per property (see the module docstring).

    Returns
    -------
    dict
        Per property: ``kind``, ``scale``, ``level`` (ordinal, interval or nominal), ``raters_per_item`` (min, max),
        ``alpha`` (a float, or None where it is not defined) and ``note`` (why not, e.g. "one rater: no agreement").
    """
    out = {}
    for p in jset.properties:
        items = [list(r.raters[p.name]) for r in jset.rows if p.name in r.raters]
        counts = [sum(v is not None for v in it) for it in items]
        entry = {"kind": "pairwise" if p.pairwise else p.kind, "scale": p.scale(), "level": LEVELS[p.kind],
                 "raters_per_item": [min(counts, default=0), max(counts, default=0)], "alpha": None, "note": ""}
        out[p.name] = entry
        if max(counts, default=0) < 2:
            entry["note"] = "one rater: no agreement"
            continue
        if p.categorical:
            lower = [x.strip().lower() for x in p.labels]
            items = [[None if v is None else float(lower.index(v.strip().lower())) for v in it] for it in items]
        width = max(len(it) for it in items)
        columns = [[it[k] if k < len(it) else None for it in items] for k in range(width)]
        if all(col == columns[0] for col in columns[1:]):  # as JUDGE-BENCH: identical raters agree perfectly
            entry["alpha"] = 1.0
            continue
        from meta_eval.stats.agreement import AgreementError, alpha_from_items

        try:
            value = alpha_from_items([[math.nan if v is None else v for v in it] for it in items], LEVELS[p.kind])
        except AgreementError as exc:
            entry["note"] = f"not defined ({exc})"
            continue
        entry["alpha"] = None if value is None or not math.isfinite(value) else float(value)
        if entry["alpha"] is None:
            entry["note"] = "not defined (no pairable values that differ)"
    return out


def scale_values(scores, values, higher_is_better: bool = True) -> list:
    """A metric's scores put on the raters' scale by their rank quantiles (see the module docstring): the k-th
    score's mid-rank r among the n finite scores (ties share it) gives the quantile q = (r - 1/2) / n, and the value
    is the raters' pooled values ``values`` (M of them, sorted) at position ``floor(q * M)``; a NaN or None score
    stays None. Lower-is-better scores are ranked reversed.

    >>> scale_values([0.1, 0.9, 0.5, 0.5], [1, 1, 2, 3, 5, 5, 4, 4])
    [1, 5, 4, 4]
    """
    import numpy as np
    from scipy.stats import rankdata

    pool = sorted(v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v)))
    x = np.array([math.nan if s is None else float(s) for s in scores], dtype=float)
    ok = np.isfinite(x)
    out: list = [None] * len(x)
    if not ok.any() or not pool:
        return out
    ranks = rankdata(x[ok] if higher_is_better else -x[ok], method="average")
    q = (ranks - 0.5) / ok.sum()
    at = np.minimum(np.floor(q * len(pool)).astype(int), len(pool) - 1)
    for i, k in zip(np.flatnonzero(ok), at):
        out[i] = pool[k]
    return out


def alpha_with_metric(jset: JudgmentSet, dim: str, scores, higher_is_better: bool = True) -> float | None:
    """Krippendorff's alpha of a graded or continuous property's raters with a metric as one more rater, at the
    level of :func:`human_agreement` (ordinal for graded, interval for continuous), the metric's ``scores`` (one
    per row of ``jset``) put on the raters' scale by :func:`scale_values`; None where the raters' alpha is not
    defined (one rater per item) or the alpha with the metric is not (no pairable values that differ)."""
    from meta_eval.stats.agreement import AgreementError, alpha_from_items

    prop = jset.get_property(dim)
    if prop is None or prop.categorical:
        return None
    items = [list(r.raters.get(dim, ())) for r in jset.rows]
    if max((sum(v is not None for v in it) for it in items), default=0) < 2:
        return None
    mapped = scale_values(scores, [v for it in items for v in it], higher_is_better)
    try:
        value = alpha_from_items([[math.nan if v is None else v for v in it] + [math.nan if m is None else m]
                                  for it, m in zip(items, mapped)], LEVELS[prop.kind])
    except AgreementError:
        return None
    return float(value) if math.isfinite(value) else None


def catalog_entry(root: Path) -> dict:
    """The ``judge-bench`` entry of :func:`judgments.catalog.catalog`: ``sets``, one :func:`set_summary` per file
    found in `root` (nothing is downloaded), and ``problems`` naming the files missing or corrupt there."""
    from meta_eval.judgments.files import DataError

    sets, problems = [], []
    for name in SETS:
        try:
            sets.append(set_summary(load(root, name, download=False)))
        except (DataError, JudgmentError) as exc:
            problems.append(f"judge-bench:{name}: {exc}")
    return {"name": NAME, "task": "LLM judges vs people (JUDGE-BENCH)", "subset": None, "subsets": SUBSETS,
            "rows": sum(s["rows"] for s in sets), "sets": sets, "licence": "per file (below)",
            "data_source": DATA_SOURCE, "problems": problems if not sets else [], "missing": problems}


def set_summary(jset: JudgmentSet) -> dict:
    """What ``meta-eval judgments`` shows for a set read from JUDGE-BENCH's schema: ``name``, ``rows``, ``licence``,
    ``annotators``, ``candidate_rule`` and per property its kind, scale or labels and human agreement."""
    return {"name": jset.name, "rows": len(jset), "licence": jset.licence, "annotators": jset.annotators,
            "candidate_rule": jset.candidate_rule, "task": jset.task, "data_source": jset.data_source,
            "properties": human_agreement(jset)}
