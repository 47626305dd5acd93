"""An LLM as a judge: any OpenAI-compatible chat-completions server rates each row (metric ``llm-judge``).

The metric sends one chat-completions request per distinct row to ``<base_url>/chat/completions`` (vLLM, llama.cpp's
server, Ollama, a hosted API) through ``httpx`` (the optional extra ``meta-eval[llm]``), parses a score from each
answer and returns it. It runs only when named (``-m llm-judge``): it needs a server and costs requests.

Templates (``template=``):

- ``geval`` (default): G-Eval (Liu et al., 2023, "G-Eval: NLG Evaluation using GPT-4 with Better Human Alignment",
  EMNLP) for SummEval's ``dimension`` ``coherence``, ``consistency``, ``fluency`` or ``relevance``. The form-filling
  prompts are written after the authors' files in https://github.com/nlpyang/geval, ``prompts/summeval/
  coh_detailed.txt``, ``flu_detailed.txt`` and ``rel_detailed.txt`` (commit 8f54105061e00377fbb909153892d5bfb5b3623a);
  the repository holds no ``con_detailed.txt`` (its ``gpt4_eval.py`` names one), so consistency's criteria and steps
  1-3 are those of ``con_scorer.txt`` (commit e933fe8a03f37e769e4bc3465f4b8d3e8f822d17) in the form of the other
  three. Like ``gpt4_eval.py`` the prompt is sent as a single *system* message and ``max_tokens`` defaults to 5.
  Ranges: 1-5, fluency 1-3. The parsing rule is the authors' (``meta_eval_summeval.py``, ``parse_output``): a number
  at the start of the answer (``^ ?([\\d\\.]+)``); where the authors scored an unparsed answer 0, it is counted here
  (see below). The score is the probability-weighted sum over the score tokens (the paper's equation 1) when the
  server returns ``top_logprobs``: at the first generated token that is a score in range, ``sum p(s) s / sum p(s)``
  over the in-range score tokens among its top log-probabilities; else the mean of the ``samples`` parsed answers
  (the released code asked ``n=20`` at ``temperature=2``: ``-o samples=20 -o temperature=2 -o logprobs=false``).
- ``gemba-da``: GEMBA-DA (Kocmi and Federmann, 2023, "Large Language Models Are State-of-the-Art Evaluators of
  Translation Quality", EAMT), the reference-based direct-assessment prompt, 0-100; ``source_lang`` and
  ``target_lang`` name the languages (required): the authors' ``GEMBA-DA_ref`` prompt (``gemba/prompt.py`` in
  https://github.com/MicrosoftTranslator/GEMBA, commit 55bd91b0f3b09c74b2f8a2edf4d3d765966b9b85), several references
  joined by new lines. Sent as a user message; parsed with the authors' ``parse_numerical_answer`` (exactly one
  integer in the answer, ``['N']`` or ``N/100``). The authors asked again at a higher temperature after an invalid
  answer; here it is counted as unparsed instead.
- a path to a user template file: the placeholders ``{candidate}``, ``{references}`` (joined by new lines),
  ``{source}`` and ``{dimension}`` are replaced (other braces are left as they are); the score range comes from
  ``range=LO:HI`` or from a first line ``range: LO:HI`` of the file (which is not sent). Sent as a user message;
  the score is the first number in the answer.
- ``set``: the judgment set's own prompt for the judged property (``--human``), a jinja template over the row's
  fields (JUDGE-BENCH's schema, :mod:`judgments.judge_bench`), learnt from the set through :meth:`LlmJudge.bind_set`
  (the command that loaded the set calls it, :func:`meta_eval.scoring.selection.choose_metrics`'s ``judged``) and
  filled in a sandboxed jinja environment with ``StrictUndefined`` (a field the row lacks is an error naming it). The
  answer is parsed into the property's label space as JUDGE-BENCH's ``eval_responses.py`` does
  (:func:`parse_set_answer`): a number on the scale for a graded or continuous property, the index of a label in
  :meth:`LlmJudge.label_space` for a categorical one (``("model_a", "model_b")`` for a pairwise one). Sent as a user
  message; ``logprobs`` off unless asked (graded properties only), ``samples`` 1 on label properties. The signature
  names ``set@`` + the SHA-256 of the prompt text, the property (``dimension``) and the labels.

Options (names fixed by issue 28): ``base_url`` (e.g. ``http://127.0.0.1:8000/v1``), ``model``, ``template``,
``dimension``, ``temperature`` (0), ``samples`` (the ``n`` of the request, 1), ``max_tokens``, ``concurrency``
(requests in flight, 8), ``timeout`` (seconds per request, 60), ``retries`` (5), ``api_key_env`` (the environment
variable holding the API key; default ``OPENAI_API_KEY``; the key is sent as a bearer token and never printed,
cached or signed), ``on_unparsed`` (``error`` or ``drop``), plus ``logprobs`` (true), ``top_logprobs`` (20),
``range``, ``source_lang``, ``target_lang``, ``backoff`` (first retry delay in seconds, 1.0), ``answers`` (the
answer store's file, or ``none``), ``max_answer_bytes`` (1,000,000: a server's answer over it is an error naming the
row, and is not stored) and ``allow_insecure_http`` (false, see below).

**Secrets never leave.** The API key and a password in ``base_url`` are registered with
:func:`meta_eval.metrics.redact.add_secret`; every message of this metric is redacted
(:func:`~meta_eval.metrics.redact.redact`: ``http://user:***@host``, ``Bearer ***``), and a server's body is shown
only redacted and cut to 200 characters (:func:`~meta_eval.metrics.redact.server_text`), so a server that echoes the
``Authorization`` header in an error body leaks nothing. Credentials (the key, a URL's user and password) are sent
only over https or to this machine (``localhost``, 127.0.0.0/8, ::1): plain http to another host is refused when the
metric is created, before any request, unless ``-o allow_insecure_http=true``. A URL's user and password go as HTTP
Basic authentication, which httpx sends instead of the key's ``Bearer`` header: one ``Authorization`` header,
``Basic`` (``tests/test_llm_judge_run.py``).

**The signature** names the *served* model id, asked once before scoring from ``<base_url>/models`` (the requested
``model`` must be listed there), the server (``base_url``'s scheme, host, port and path: two servers may serve
different weights under one model id, so a score cached from one is never served for another), the template's name
and the SHA-256 of its text, the dimension, the sampling options and the range; never the URL's user, password, query
or fragment, the key, concurrency, timeout or retries. Every answer must name the same model in its
``model`` field: an answer from another model is an error (a different model is a different metric).

**Answers are stored** (text, log-probabilities, usage) in an SQLite file (default: ``llm-answers.sqlite`` beside the
score cache, ``--cache``'s folder included, :meth:`LlmJudge.store_beside`; ``answers=FILE`` or
``$META_EVAL_LLM_ANSWERS`` name another; ``answers=none`` disables it, and so does a run without the score cache,
``--no-cache``: it stores nothing, :meth:`LlmJudge.no_store`), keyed by the server (scheme, host, port and path,
never credentials), the served model and the SHA-256 of the request body, and
committed as each answer arrives: a killed run resumes without asking an answered row again, even within a batch
(the score cache keeps whole batches), and the unparsed answers are counted again from the store on a cached rerun.
A store is marked as one (SQLite's ``application_id``, :data:`STORE_ID`); an SQLite file that is not (other tables) or
a file that is not SQLite is refused naming it, before anything is written into it (:func:`check_store`).
On the Ray engine the metric's actor asks the server and writes the store (a second writer beside the driver's
score cache, never the same file): SQLite's file locks make concurrent writers (``--actors N``) safe on a local
disk, and the driver only reads the store after scoring; on a multi-node cluster each actor writes the file at the
same path on its own node (set ``answers=`` to a node-local path, not a network file system, where SQLite's locks
and WAL are unreliable), and the driver's counts read its own node's file.

**Retries**: a 429, a 5xx, a timeout (``timeout`` bounds the whole request, reading a slow body included), a
connection error, a body that is not a JSON object or an ``error`` object sent with status 200 is retried up to
``retries`` times, waiting ``backoff * 2**k`` seconds (at most 30; a 429's or 5xx's ``Retry-After``, in seconds or as
an HTTP date, when longer); other 4xx answers are errors at once. An error while asking for a row names the row.

**Unparsed answers** never become numbers silently. ``on_unparsed=error`` (default): an answer with no parseable
score is an error naming the row and the answer. ``on_unparsed=drop``: unparsed answers are left out of a row's
mean; a row with no parsed answer is dropped: ``meta-eval run`` leaves it out of every metric's statistic (as
``--scores-missing drop`` does; ``n`` counts the rows kept and a note says how many were dropped), through
:attr:`LlmJudge.drop_unparsed` and :meth:`LlmJudge.row_counts` (its score, the range's middle, is only what the
score cache holds for it). A parsed number outside
the range is always an error. ``meta-eval run`` shows ``unparsed: N of M`` answers in its table and writes
``unparsed: {"llm-judge": {"unparsed": N, "answers": M}}`` in its JSON: per row, as parsed in this process or read
from the store (:meth:`LlmJudge.row_counts`), and filed in the score cache beside the scores, so a rerun served from
the score cache reports the counts its scores were computed with, whatever answer store it has. Errors about a row
name it as the run does (``mine.jsonl:4 (id 'x')``, :meth:`LlmJudge.label_rows`). A ``usage`` field whose token
counts are not non-negative integers is not counted (the summary line says how many), never an error.
A summary line (requests, their rate and seconds, answers from the store, retries, tokens, unparsed answers) is
printed on stderr after scoring; while it runs, the progress bar shows the requests, requests/s and tokens so far
(:meth:`LlmJudge.progress_note`; a line every few seconds on stderr when it is not a terminal).
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import re
import sqlite3
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np

from meta_eval.metrics.base import Example, Metric, MetricError, boolean, choice, positive_int
from meta_eval.metrics.instance import fields_of
from meta_eval.metrics.redact import add_secret, loopback, redact, server_text
from meta_eval.metrics.registry import register
from meta_eval.metrics.sqlite_busy import retry_busy

__all__ = ["GEMBA_DA", "GEVAL", "LLM_HINT", "PAIRWISE_LABELS", "LlmJudge", "parse_score", "parse_set_answer",
           "weighted_score"]

LLM_HINT = "pip install 'meta-eval[llm]' (httpx, and jinja2 for template=set)"
UNPARSED = ("error", "drop")

_GEVAL_HEAD = ("You will be given one summary written for a news article.\n\nYour task is to rate the summary on one "
               "metric.\n\nPlease make sure you read and understand these instructions carefully. Please keep this "
               "document open while reviewing, and refer to it as needed.\n\n")
_GEVAL_TAIL = "\n\nExample:\n\n\nSource Text:\n\n{source}\n\nSummary:\n\n{candidate}\n\n\nEvaluation Form (scores ONLY):\n\n"

#: G-Eval's SummEval prompts by dimension: (template, (low, high)); see the module notes for their origin
GEVAL = {
    "coherence": (_GEVAL_HEAD + (
        "Evaluation Criteria:\n\nCoherence (1-5) - the collective quality of all sentences. We align this dimension "
        "with the DUC quality question of structure and coherence whereby \"the summary should be well-structured and "
        "well-organized. The summary should not just be a heap of related information, but should build from "
        "sentence to a coherent body of information about a topic.\"\n\nEvaluation Steps:\n\n1. Read the news "
        "article carefully and identify the main topic and key points.\n2. Read the summary and compare it to the "
        "news article. Check if the summary covers the main topic and key points of the news article, and if it "
        "presents them in a clear and logical order.\n3. Assign a score for coherence on a scale of 1 to 5, where 1 "
        "is the lowest and 5 is the highest based on the Evaluation Criteria.\n") + _GEVAL_TAIL + "- Coherence:",
        (1, 5)),
    "consistency": (_GEVAL_HEAD + (
        "Evaluation Criteria:\n\nConsistency (1-5) - the factual alignment between the summary and the summarized "
        "source. A factually consistent summary contains only statements that are entailed by the source document. "
        "Annotators were also asked to penalize summaries that contained hallucinated facts.\n\nEvaluation Steps:"
        "\n\n1. Read the news article carefully and identify the main facts and details it presents.\n2. Read the "
        "summary and compare it to the article. Check if the summary contains any factual errors that are not "
        "supported by the article.\n3. Assign a score for consistency based on the Evaluation Criteria.\n")
        + _GEVAL_TAIL + "- Consistency:", (1, 5)),
    "fluency": (_GEVAL_HEAD + (
        "\nEvaluation Criteria:\n\nFluency (1-3): the quality of the summary in terms of grammar, spelling, "
        "punctuation, word choice, and sentence structure.\n\n- 1: Poor. The summary has many errors that make it "
        "hard to understand or sound unnatural.\n- 2: Fair. The summary has some errors that affect the clarity or "
        "smoothness of the text, but the main points are still comprehensible.\n- 3: Good. The summary has few or "
        "no errors and is easy to read and follow.\n\n\nExample:\n\nSummary:\n\n{candidate}\n\n\nEvaluation Form "
        "(scores ONLY):\n\n- Fluency (1-3):"), (1, 3)),
    "relevance": (_GEVAL_HEAD + (
        "Evaluation Criteria:\n\nRelevance (1-5) - selection of important content from the source. The summary "
        "should include only important information from the source document. Annotators were instructed to "
        "penalize summaries which contained redundancies and excess information.\n\nEvaluation Steps:\n\n1. Read "
        "the summary and the source document carefully.\n2. Compare the summary to the source document and identify "
        "the main points of the article.\n3. Assess how well the summary covers the main points of the article, and "
        "how much irrelevant or redundant information it contains.\n4. Assign a relevance score from 1 to 5.\n")
        + _GEVAL_TAIL + "- Relevance:", (1, 5)),
}

#: GEMBA-DA (Kocmi and Federmann, 2023), reference-based: ``GEMBA-DA_ref`` of the authors' ``gemba/prompt.py``
#: (https://github.com/MicrosoftTranslator/GEMBA, commit 55bd91b0f3b09c74b2f8a2edf4d3d765966b9b85), word for word
GEMBA_DA = ("Score the following translation from {source_lang} to {target_lang} with respect to human reference on a "
            "continuous scale 0 to 100 where score of zero means \"no meaning preserved\" and score of one hundred "
            "means \"perfect meaning and grammar\".\n\n{source_lang} source: \"{source}\"\n{target_lang} human "
            "reference: \"{references}\"\n{target_lang} machine translation: \"{candidate}\"\nScore: ")

_START = re.compile(r"^ ?([\d.]+)")  # G-Eval's parse_output
_ANY = re.compile(r"[-+]?\d+(?:\.\d+)?")
_GEMBA_LIST = re.compile(r"^\[['\"][0-9]*['\"]\]$")
_RANGE = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*[:-]\s*(-?\d+(?:\.\d+)?)\s*$")


def parse_score(text: str, rule: str) -> float | None:
    """The score in an answer, or None. ``rule="start"``: G-Eval's (a number at the start, one optional space
    first); ``"gemba"``: GEMBA's ``parse_numerical_answer`` (exactly one integer in the answer, or ``['N']``, or
    ``N/100``); ``"first"``: the first number anywhere (user templates)."""
    if not isinstance(text, str):
        return None
    if rule == "gemba":
        numbers = re.findall(r"\d+", text)
        if len(numbers) == 1:
            return float(numbers[0])
        if _GEMBA_LIST.match(text) and text[2:-2]:
            return float(text[2:-2])
        if re.match(r"^[0-9]+/100$", text):
            return float(text.split("/")[0])
        return None
    if rule == "start":
        m = _START.match(text)
        if not m:
            return None
        try:
            return float(m.group(1))
        except ValueError:  # "1.2.3", "." (the authors scored these 0)
            return None
    m = _ANY.search(text)
    return float(m.group(0)) if m else None


def weighted_score(logprobs: object, low: float, high: float) -> float | None:
    """G-Eval's probability-weighted score from a chat-completions ``logprobs`` object, or None.

    At the first generated token that is an integer score in ``[low, high]``, the in-range integer tokens among its
    ``top_logprobs`` weigh their values by their probabilities (renormalised over those tokens)."""
    content = logprobs.get("content") if isinstance(logprobs, dict) else None
    if not isinstance(content, list):
        return None
    for position in content:
        if not isinstance(position, dict) or _int_token(position.get("token"), low, high) is None:
            continue
        weights: dict[int, float] = {}
        for alt in position.get("top_logprobs") or []:
            value = _int_token(alt.get("token") if isinstance(alt, dict) else None, low, high)
            lp = alt.get("logprob") if isinstance(alt, dict) else None
            if value is not None and isinstance(lp, (int, float)) and math.isfinite(lp):
                weights[value] = weights.get(value, 0.0) + math.exp(lp)
        total = sum(weights.values())
        if total <= 0:
            return None
        return sum(v * p for v, p in weights.items()) / total
    return None


def _int_token(token: object, low: float, high: float) -> int | None:
    if not isinstance(token, str) or not token.strip().isdigit():
        return None
    value = int(token.strip())
    return value if low <= value <= high else None


PAIRWISE_LABELS = ("model_a", "model_b")
_SET_NUMBER = re.compile(r"[-+]?[0-9]*\.?[0-9]+")  # JUDGE-BENCH's continuous rule


@dataclass(frozen=True)
class _SetProperty:
    """What ``template=set`` needs of the judged property: ``name``, ``kind`` (graded, continuous, categorical or
    pairwise), ``low``/``high`` (the scale, or 0 and the last label's index), ``labels`` (the label space: the
    file's labels in its order; ``model_a``, ``model_b`` for a pairwise property), ``search`` (the labels in the order
    the answer is searched: the file's ``labels_list``) and the set's ``prompt``."""

    name: str
    kind: str
    low: float
    high: float
    labels: tuple[str, ...]
    search: tuple[str, ...]
    prompt: str
    set_name: str


def parse_set_answer(text: object, prop: _SetProperty) -> float | None:
    """An answer to a set's own prompt as JUDGE-BENCH's ``eval_responses.py`` (``extract_answer``, without
    chain-of-thought) reads it, or None (unparsed).

    The answer is stripped and lower-cased. Categorical and pairwise: the first label *of the labels list* (in the
    file's order) found as a whole word (``\\b<label>\\b``) anywhere in the answer, as its index in the label space
    (``"Yes"`` for labels No, Yes: 1.0). Graded: the first run of digits (not part of a longer run) whose value lies
    on the scale (JUDGE-BENCH's ``(?<!\\d)[W-B](?!\\d)``, written for one-digit scales, read so for any integer
    scale). Continuous: the first number (``[-+]?[0-9]*\\.?[0-9]+``), range-checked by the caller. Where
    JUDGE-BENCH put a random label or number in place of an unparsed answer, None is returned and counted.
    """
    if not isinstance(text, str):
        return None
    answer = text.strip().lower()
    if prop.labels:
        space = [x.strip().lower() for x in prop.labels]
        for label in prop.search:
            word = label.strip().lower()
            if re.search(rf"\b{re.escape(word)}\b", answer):
                return float(space.index(word))
        return None
    if prop.kind == "graded":
        for m in re.finditer(r"(?<!\d)\d+(?!\d)", answer):
            if prop.low <= int(m.group(0)) <= prop.high:
                return float(m.group(0))
        return None
    m = _SET_NUMBER.search(answer)
    return float(m.group(0)) if m else None


def _fill(template: str, fields: dict[str, str]) -> str:
    """``template`` with each ``{name}`` of ``fields`` replaced, in one pass over the template: a text filled in is
    never read again, so a candidate that contains ``{source}`` is sent as written.

    >>> _fill("Rate {candidate} for {dimension}.", {"candidate": "a {dimension} b", "dimension": "coherence"})
    'Rate a {dimension} b for coherence.'
    """
    pattern = "|".join(re.escape(name) for name in fields)
    return re.sub(r"\{(" + pattern + r")\}", lambda m: fields[m.group(1)], template)


def _read_until(response, deadline: float, limit: int) -> tuple[bytes | None, int]:
    """The body of a streamed ``response``, read until ``deadline`` (:func:`time.monotonic`): ``(None, size)`` when
    it is not complete by then; at most ``limit + 1`` bytes are kept (the size read so far says it was over)."""
    kept, size = [], 0
    for chunk in response.iter_bytes():
        size += len(chunk)
        if size <= limit + 1:
            kept.append(chunk)
        if time.monotonic() > deadline:
            return None, size
    return b"".join(kept)[:limit + 1], size


def _retry_after(value: str | None) -> float:
    """Seconds a ``Retry-After`` header asks to wait: a number of seconds, or an HTTP date (RFC 9110); 0 when it is
    absent or neither.

    >>> _retry_after("7"), _retry_after(None), _retry_after("soon")
    (7.0, 0.0, 0.0)
    >>> _retry_after("Wed, 21 Oct 2099 07:28:00 GMT") > 1e9
    True
    """
    if not value:
        return 0.0
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    from email.utils import parsedate_to_datetime

    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return 0.0
    if when.tzinfo is None:
        return 0.0
    return max(0.0, when.timestamp() - time.time())


class _TooLarge(Exception):
    def __init__(self, size: int):
        super().__init__(f"{size:,} bytes")
        self.size = size


class _Retryable(Exception):
    def __init__(self, why: str, wait: float = 0.0):
        super().__init__(why)
        self.wait = wait


#: ``PRAGMA application_id`` of an answer store ("LLMA"): a file without it that holds other tables is not ours
STORE_ID = 0x4C4C4D41
_STORE_COLUMNS = ["key", "model", "payload"]


def check_store(path: Path) -> None:
    """Raise :class:`MetricError` unless ``path`` is missing, empty, or an answer store (``application_id``
    :data:`STORE_ID`, or the one table ``answers`` of a store written before the mark); reads only, writes
    nothing."""
    if not path.exists() or (path.is_file() and path.stat().st_size == 0):
        return
    if not path.is_file():
        raise MetricError(f"llm-judge: answers={path} is not a file: name a file for the answer store")
    try:
        with path.open("rb") as fh:
            head = fh.read(16)
        if head != b"SQLite format 3\x00":
            raise sqlite3.DatabaseError("not an SQLite file")
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=30)
        try:
            app_id = conn.execute("PRAGMA application_id").fetchone()[0]
            tables = sorted(r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'"))
            columns = [r[1] for r in conn.execute("PRAGMA table_info(answers)")] if tables == ["answers"] else []
        finally:
            conn.close()
    except (OSError, sqlite3.Error) as exc:
        raise MetricError(f"llm-judge: answers={path} is not an llm-judge answer store ({exc}); name another file, "
                          "or remove it") from None
    if app_id == STORE_ID or (app_id == 0 and (not tables or columns == _STORE_COLUMNS)):
        return
    raise MetricError(f"llm-judge: answers={path} is an SQLite file that is not an llm-judge answer store (tables: "
                      f"{', '.join(tables) or 'none'}; application_id {app_id}): meta-eval writes nothing into it; "
                      "name another file for answers=")


#: how long opening the store waits for another process's lock (SQLite's busy timeout, and :func:`_set_up`'s retries)
_BUSY_S = 30.0


def _set_up(conn: sqlite3.Connection) -> None:
    """Create the ``answers`` table and mark the file (:data:`STORE_ID`) in one ``BEGIN IMMEDIATE`` transaction, then
    switch it to WAL; each step is skipped when already done.

    Ray actors (``--actors 2``) open one new store at once, and SQLite's switch to WAL fails at once with "database
    is locked", without waiting for the busy timeout, while another connection holds the write lock or switches the
    file too: the whole set-up is retried for up to :data:`_BUSY_S` seconds (:func:`metrics.sqlite_busy.retry_busy`)."""

    def once() -> None:
        try:
            conn.execute("BEGIN IMMEDIATE")  # waits for the write lock (busy timeout), unlike the journal-mode switch
            conn.execute("CREATE TABLE IF NOT EXISTS answers (key TEXT PRIMARY KEY, model TEXT, payload TEXT)")
            if conn.execute("PRAGMA application_id").fetchone()[0] != STORE_ID:
                conn.execute(f"PRAGMA application_id = {STORE_ID}")
            conn.execute("COMMIT")
            if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                conn.execute("PRAGMA journal_mode=WAL")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    retry_busy(once, _BUSY_S)


class _Store:
    """The answer store: SQLite, one row per (server, served model, request body), committed at once
    (thread-safe). A file that is not an answer store is refused before anything is written (:func:`check_store`)."""

    def __init__(self, path: Path | None):
        self.path = path
        self.lock = threading.Lock()
        self.conn = None
        if path is not None:
            check_store(path)
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                self.conn = sqlite3.connect(str(path), timeout=_BUSY_S, check_same_thread=False)
                _set_up(self.conn)
            except (OSError, sqlite3.Error) as exc:
                raise MetricError(f"llm-judge: cannot write the answer store {path}: {exc} (name another file with "
                                  "answers=, or answers=none)") from None

    def get(self, key: str) -> dict | None:
        if self.conn is None:
            return None
        with self.lock:
            row = self.conn.execute("SELECT payload FROM answers WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, key: str, model: str, payload: dict) -> None:
        if self.conn is None:
            return
        with self.lock:
            self.conn.execute("INSERT OR REPLACE INTO answers VALUES (?, ?, ?)", (key, model, json.dumps(payload)))
            self.conn.commit()

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None


@register("llm-judge")
class LlmJudge(Metric):
    """An LLM judge through an OpenAI-compatible chat-completions server (see the module notes).

    With ``template=set`` the score of a row is a number on the property's scale, or the index (0.0, 1.0, ...) of the
    answered label in :meth:`label_space` for a categorical or pairwise property."""

    variants = ("llm-judge",)
    needs_references = False
    needs_source = False
    refs_fixed = True  # every reference goes into {references}
    requires = ("httpx",)
    install_hint = LLM_HINT
    libraries = ("httpx",)
    parallel = "single"  # one process asks the server, with its own thread pool
    in_default_run = False
    not_default_reason = "asks an LLM server (base_url, model) for every row"
    # in_quick_run stays True: being named-only already keeps it out of every default choice, and the registry's
    # invariant is that in_quick_run=False means a torch model (tests/test_default_choice.py)
    _stats_keys: ClassVar[tuple[str, ...]] = ("requests", "stored", "retries", "prompt_tokens", "completion_tokens",
                                              "answers", "unparsed", "bad_usage")

    def __init__(self, base_url: str | None = None, model: str | None = None, template: str = "geval",
                 dimension: str | None = None, temperature: float | str = 0, samples: int | str = 1,
                 max_tokens: int | str | None = None, concurrency: int | str = 8, timeout: float | str = 60,
                 retries: int | str = 5, api_key_env: str = "OPENAI_API_KEY", on_unparsed: str = "error",
                 logprobs: bool | str | None = None, top_logprobs: int | str = 20, range: str | None = None,
                 source_lang: str | None = None, target_lang: str | None = None, backoff: float | str = 1.0,
                 answers: str | None = None, allow_insecure_http: bool | str = False,
                 max_answer_bytes: int | str = 1_000_000) -> None:
        if not base_url or not isinstance(base_url, str):
            raise MetricError("llm-judge: base_url is required (e.g. -o base_url=http://127.0.0.1:8000/v1)")
        if not model or not isinstance(model, str):
            raise MetricError("llm-judge: model is required (-o model=NAME, as the server lists it in /models)")
        self.base_url = base_url.rstrip("/")
        self.allow_insecure_http = boolean(allow_insecure_http, "allow_insecure_http")
        self.api_key_env = api_key_env
        self._check_url()
        self.max_answer_bytes = positive_int(max_answer_bytes, "max_answer_bytes")
        self.model = model
        self.temperature = _number(temperature, "temperature", 0, 2)
        self.samples = positive_int(samples, "samples")
        self.concurrency = positive_int(concurrency, "concurrency")
        self.timeout = _number(timeout, "timeout", 1e-3, None)
        self.retries = 0 if str(retries).strip() == "0" else positive_int(retries, "retries")
        self.backoff = _number(backoff, "backoff", 0, None)
        self.on_unparsed = choice(on_unparsed, UNPARSED, "on_unparsed policy")
        # logprobs: G-Eval's weighting, on unless asked off; template=set answers as JUDGE-BENCH did, in words
        self._logprobs_given = logprobs is not None and str(logprobs).strip() != ""
        self.logprobs = boolean(logprobs, "logprobs") if self._logprobs_given else template != "set"
        self.top_logprobs = positive_int(top_logprobs, "top_logprobs")
        self.role = "user"
        self.prop: _SetProperty | None = None  # template=set: the judged property, once bound (bind_set)
        if template == "set":
            if range is not None:
                raise MetricError("llm-judge: template=set takes the score range from the set's property (its worst "
                                  "and best, or its labels): leave out -o range")
            self.text, self.template_name, self.rule, self.range = "", "set", "set", (0, 1)
            default_max = 16
        elif template == "geval":
            if dimension not in GEVAL:
                raise MetricError(f"llm-judge: template=geval needs dimension= one of {', '.join(GEVAL)}, got "
                                  f"{dimension!r}")
            self.text, self.range = GEVAL[dimension]
            self.template_name, self.rule, self.role = "geval", "start", "system"
            default_max = 5
        elif template == "gemba-da":
            if not source_lang or not target_lang:
                raise MetricError("llm-judge: template=gemba-da needs source_lang and target_lang (e.g. "
                                  "-o source_lang=German -o target_lang=English)")
            self.text = GEMBA_DA.replace("{source_lang}", source_lang).replace("{target_lang}", target_lang)
            self.range, self.template_name, self.rule = (0, 100), "gemba-da", "gemba"
            default_max = 16
        else:
            path = Path(os.path.expanduser(str(template)))
            if not path.is_file():
                raise MetricError(f"llm-judge: template {template!r} is neither geval, gemba-da, set nor a file")
            raw = path.read_bytes()
            try:
                text = raw.decode("utf-8-sig").replace("\r\n", "\n").replace("\r", "\n")
            except UnicodeDecodeError as exc:  # the file, line and column, as every other reader says it
                line = raw.count(b"\n", 0, exc.start) + 1
                column = len(raw[raw.rfind(b"\n", 0, exc.start) + 1:exc.start].decode("utf-8", "replace")) + 1
                raise MetricError(f"llm-judge: template file {path}:{line}: not valid UTF-8 (byte "
                                  f"0x{raw[exc.start]:02x} at column {column}); save it as UTF-8") from None
            first, _, rest = text.partition("\n")
            declared = None
            if first.strip().lower().startswith("range:"):
                declared, text = first.split(":", 1)[1], rest
            if range is not None:
                declared = range
            if declared is None:
                raise MetricError(f"llm-judge: template file {path} declares no score range: pass -o range=LO:HI or "
                                  "start the file with a line 'range: LO:HI'")
            self.text, self.template_name, self.rule = text, path.name, "first"
            self.range = _parse_range(declared, str(path))
            default_max = 16
        if range is not None and template in ("geval", "gemba-da"):
            self.range = _parse_range(range, "range")
        self.dimension = dimension
        self.max_tokens = positive_int(max_tokens, "max_tokens") if max_tokens not in (None, "") else default_max
        self.needs_source = "{source}" in self.text
        self.needs_references = "{references}" in self.text
        # answers=None (not given) is the default store, answers="none" none (str(None) is "None": not that test)
        none = answers is not None and str(answers).strip().lower() == "none"
        self._answers_chosen = bool(answers or os.environ.get("META_EVAL_LLM_ANSWERS"))  # else: beside the cache
        self.answers_path = None if none else Path(os.path.expanduser(
            answers or os.environ.get("META_EVAL_LLM_ANSWERS") or _default_answers()))
        if self.answers_path is not None and self._answers_chosen:
            check_store(self.answers_path)  # a foreign file is refused now, before any request
        self._labels: dict[Example, str] = {}  # each example's location ("mine.jsonl:4 (id 'x')"), for messages
        self._row_seen: dict[str, tuple[int, int]] = {}  # request key -> (answers, unparsed) parsed here
        self.served: str | None = None
        self._client = None
        self._store: _Store | None = None
        self.stats = dict.fromkeys(self._stats_keys, 0)
        self._asking: list[float] = []  # when this process sent its first request and got its last answer
        self._tally_of: tuple[str, dict] | None = None  # (the rows' digest, what the store holds for them)

    # -- description ---------------------------------------------------------------------------------------------
    def config(self) -> dict[str, object]:
        if self.template_name == "set":  # the set's prompt (its SHA-256) and the judged property, once bound
            template = (f"set@{hashlib.sha256(self.text.encode()).hexdigest()}" if self.prop is not None
                        else "set(not yet bound to a set)")
            dimension = self.prop.name if self.prop is not None else "none"
        else:
            template = f"{self.template_name}@{hashlib.sha256(self.text.encode()).hexdigest()}"
            dimension = self.dimension or "none"
        cfg = {"model": self.served or f"{self.model}(not yet asked)", "server": self.provenance()["server"],
               "template": template, "dimension": dimension, "role": self.role, "temperature": self.temperature,
               "n": self.samples, "max_tokens": self.max_tokens,
               "logprobs": self.top_logprobs if self.logprobs else "no", "range": f"{self.range[0]}:{self.range[1]}",
               "parse": self.rule}
        if self.prop is not None:
            cfg["parse"] = f"judge-bench-{self.prop.kind}"
            if self.prop.labels:  # a score is the index of its label in this tuple (label_space)
                cfg["labels"] = ",".join(self.prop.labels)
        if self.on_unparsed == "drop":
            cfg["unparsed"] = "drop-midpoint"  # the row's score in the cache; meta-eval run leaves the row out
        return cfg

    def label_space(self, variant: str) -> tuple[str, ...] | None:
        """The labels whose index is this metric's score for ``variant``: with ``template=set`` on a categorical
        property its labels (the file's spelling and order), on a pairwise one ``("model_a", "model_b")``; None for
        a number (a graded or continuous property, every other template, or before :meth:`bind_set`)."""
        if variant not in self.variants:
            raise MetricError(f"llm-judge has the variants {', '.join(self.variants)}, not {variant!r}")
        return self.prop.labels if self.prop is not None and self.prop.labels else None

    def bind_set(self, jset, dimension: str | None) -> None:
        """Learn the judgment set and the judged property (``--human``) before scoring: the command that loaded the
        set calls it (:func:`meta_eval.scoring.selection.choose_metrics`'s ``judged``), with ``jset`` None where there
        is no set. Only ``template=set`` reads them: the set's jinja prompt for ``dimension``, its kind, scale or
        labels. A set without a prompt for it, no set, ``samples`` over 1 or ``logprobs=true`` on a label property
        are a :class:`~metrics.base.MetricError` with a sentence; other templates ignore the call."""
        if self.template_name != "set":
            return
        if jset is None:
            raise MetricError("llm-judge: template=set fills the judgment set's own prompt for the judged property, "
                              "and this command judges no set's property (it runs in meta-eval run, learn with one "
                              "property as --target, leaderboard publish and protocols, on a set read from "
                              "JUDGE-BENCH's schema); choose another template")
        prop = jset.get_property(dimension) if dimension is not None else None
        if prop is None or not prop.prompt.strip():
            why = (f"{jset.name} has no prompt for {dimension!r}" if prop is not None else
                   f"{jset.name} carries no prompts (only sets read from JUDGE-BENCH's schema do: -j FILE.json or "
                   "judge-bench:<name>)")
            raise MetricError(f"llm-judge: template=set: {why}; choose another template (geval, gemba-da or a file)")
        try:
            import jinja2  # noqa: F401
        except ImportError:
            raise MetricError(f"llm-judge: template=set needs jinja2: {LLM_HINT}") from None
        kind = "pairwise" if prop.pairwise else prop.kind
        if prop.categorical:
            labels = PAIRWISE_LABELS if prop.pairwise else tuple(prop.labels)
            low, high = 0, len(labels) - 1
            if self.samples > 1:
                raise MetricError(f"llm-judge: samples={self.samples}: the {kind} property {prop.name!r} is answered "
                                  "with a label, and labels have no mean; use samples=1")
            if self.logprobs:
                raise MetricError(f"llm-judge: logprobs=true weighs score tokens, and the {kind} property "
                                  f"{prop.name!r} is answered with a label; leave out -o logprobs")
        else:
            labels = ()
            low, high = sorted((prop.worst, prop.best))
            low, high = (int(x) if float(x).is_integer() else x for x in (low, high))
        self.prop = _SetProperty(prop.name, kind, low, high, labels, tuple(prop.labels), prop.prompt, jset.name)
        self.text, self.range = prop.prompt, (low, high)
        self._template = None
        self._tally_of = None
        self._compiled()  # a template that is not jinja is an error now, before any request

    def _compiled(self):
        """The set's prompt as a jinja template (sandboxed; an undefined name is an error, never empty text)."""
        template = self.__dict__.get("_template")
        if template is None:
            import jinja2
            from jinja2.sandbox import SandboxedEnvironment

            try:
                template = SandboxedEnvironment(undefined=jinja2.StrictUndefined).from_string(self.prop.prompt)
            except jinja2.TemplateSyntaxError as exc:
                raise MetricError(f"llm-judge: template=set: the prompt of {self.prop.name!r} in "
                                  f"{self.prop.set_name} is not a jinja template ({exc.message}, line "
                                  f"{exc.lineno})") from None
            self._template = template
        return template

    def _render(self, ex: Example) -> str:
        import jinja2

        if self.prop is None:
            raise MetricError("llm-judge: template=set was not given a judgment set (bind_set): it runs in meta-eval "
                              "run, learn, leaderboard publish and protocols, on a set read from JUDGE-BENCH's schema")
        fields = fields_of(ex)
        try:
            return self._compiled().render(**fields)
        except jinja2.UndefinedError as exc:
            raise MetricError(f"llm-judge: template=set: the prompt of {self.prop.name!r} in {self.prop.set_name} "
                              f"reads a field that {self._where(ex)} does not have ({exc.message}; its fields: "
                              f"{', '.join(fields) or 'none'})") from None
        except jinja2.TemplateError as exc:
            raise MetricError(f"llm-judge: template=set: the prompt of {self.prop.name!r} in {self.prop.set_name} "
                              f"cannot be filled for {self._where(ex)}: {exc}") from None

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_template"] = None  # a compiled jinja template: rebuilt at first use
        state["_client"] = None
        state["_store"] = None
        state.pop("_stats_lock", None)  # a lock does not pickle; rebuilt at first use
        return state

    # -- the server ----------------------------------------------------------------------------------------------
    def _api_key(self) -> str | None:
        key = os.environ.get(self.api_key_env or "OPENAI_API_KEY")
        add_secret(key)  # never shown: every message, JSON and board is redacted of it
        return key or None

    def _headers(self) -> dict[str, str]:
        key = self._api_key()
        return {"Authorization": f"Bearer {key}"} if key else {}

    def _check_url(self) -> None:
        """Refuse a ``base_url`` that is not http(s), and credentials (the API key, a URL's user and password) sent
        over plain http to a host that is not this machine unless ``allow_insecure_http=true``; register the URL's
        password as a secret."""
        from urllib.parse import urlsplit

        try:
            parts = urlsplit(self.base_url)
            parts.port  # noqa: B018 (a port that is not a number raises ValueError)
        except ValueError as exc:
            raise MetricError(f"llm-judge: base_url {redact(self.base_url)!r} is not a URL ({exc})") from None
        add_secret(parts.password)
        add_secret(parts.username if parts.password is None else None)  # a user alone is sent as the credential
        if parts.query or parts.fragment:  # the request paths are appended: /v1?key=k became /v1?key=k/models
            raise MetricError(f"llm-judge: base_url {redact(self.base_url)!r} has a query or fragment (after ? "
                              "or #), which would end up before /models and /chat/completions; give the server's "
                              "base URL alone (a key goes in $OPENAI_API_KEY or the variable api_key_env names)")
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise MetricError(f"llm-judge: base_url {redact(self.base_url)!r} is not an http:// or https:// URL "
                              "(e.g. -o base_url=http://127.0.0.1:8000/v1)")
        if parts.scheme == "https" or self.allow_insecure_http or loopback(parts.hostname):
            return
        what = [f"the API key (${self.api_key_env or 'OPENAI_API_KEY'})"] if self._api_key() else []
        what += ["the URL's user and password"] if parts.username or parts.password else []
        if what:
            raise MetricError(f"llm-judge: base_url {redact(self.base_url)} is plain http to {parts.hostname}, not "
                              f"this machine: {' and '.join(what)} would cross the network unencrypted; use https, "
                              "or pass -o allow_insecure_http=true to send it anyway")

    def _http(self):
        if self._client is None:
            import httpx

            self._client = httpx.Client(timeout=self.timeout, headers=self._headers(),
                                        limits=httpx.Limits(max_connections=self.concurrency))
        return self._client

    def fit(self, examples) -> None:
        """Ask the server which model it serves under ``model`` (``GET <base_url>/models``): the signature's id.
        ``template=set`` not bound to a set (:meth:`bind_set`) is an error here, before any request."""
        if self.template_name == "set" and self.prop is None:
            self._render(examples[0] if examples else Example(""))  # raises: no set
        if self.served is not None:
            return
        try:
            body = self._call("GET", "/models", None)
        except _TooLarge as exc:
            raise MetricError(f"llm-judge: the server's /models answer is {exc} (over max_answer_bytes="
                              f"{self.max_answer_bytes:,})") from None
        ids = [m.get("id") for m in body.get("data", []) if isinstance(m, dict)] if isinstance(body, dict) else []
        if self.model not in ids:
            listed = server_text(", ".join(map(str, ids)) or "none")
            raise MetricError(f"llm-judge: the server at {redact(self.base_url)} does not list model {self.model!r} "
                              f"in /models (it lists {listed})")
        self.served = self.model

    def _call(self, method: str, path: str, payload: dict | None) -> dict:
        """One request with retries; the JSON object it answers. ``timeout`` bounds the whole request (a server that
        trickles its answer a byte at a time is cut off too), not only each read."""
        import httpx

        url = self.base_url + path
        shown = redact(url)
        for attempt in range(self.retries + 1):
            try:
                deadline = time.monotonic() + self.timeout
                try:
                    with self._http().stream(method, url, json=payload) as response:
                        content, size = _read_until(response, deadline, self.max_answer_bytes)
                except httpx.TimeoutException:
                    raise _Retryable(f"no answer within {self.timeout} s") from None
                except httpx.TransportError as exc:
                    raise _Retryable(redact(f"{type(exc).__name__}: {exc}")) from None
                if content is None:
                    raise _Retryable(f"no complete answer within {self.timeout} s")
                text = content.decode("utf-8", "replace")
                if response.status_code == 429 or response.status_code >= 500:
                    wait = min(30.0, _retry_after(response.headers.get("retry-after")))
                    raise _Retryable(f"HTTP {response.status_code}: {server_text(text)}", wait)
                if response.status_code >= 400:
                    hint = " (a server that rejects logprobs: pass -o logprobs=false)" if self.logprobs and \
                        response.status_code in (400, 422) else ""
                    raise MetricError(f"llm-judge: {method} {shown} answered HTTP {response.status_code}: "
                                      f"{server_text(text)}{hint}")
                if size > self.max_answer_bytes:
                    raise _TooLarge(size)
                try:
                    body = json.loads(content)
                except ValueError:
                    raise _Retryable(f"a body that is not JSON: {server_text(text)}") from None
                if not isinstance(body, dict):
                    raise _Retryable(f"a JSON {type(body).__name__}, not an object")
                if "error" in body and not {"choices", "data"} & body.keys():  # an error sent with status 200
                    raise _Retryable(f"an error object: {server_text(json.dumps(body['error']))}")
                return body
            except _Retryable as exc:
                if attempt == self.retries:
                    raise MetricError(redact(f"llm-judge: {method} {shown} failed {attempt + 1} time(s); last: "
                                             f"{exc}")) from None
                with self._lock():
                    self.stats["retries"] += 1
                time.sleep(max(exc.wait, min(30.0, self.backoff * 2 ** attempt)))
        raise AssertionError("unreachable")

    def _lock(self):
        lock = self.__dict__.get("_stats_lock")
        if lock is None:
            lock = self.__dict__.setdefault("_stats_lock", threading.Lock())
        return lock

    # -- one row -------------------------------------------------------------------------------------------------
    def prompt(self, ex: Example) -> str:
        """The text sent for ``ex``: for ``template=set`` the set's jinja prompt filled with the row's fields
        (:class:`~metrics.instance.Instance`; a field it lacks is an error naming the row)."""
        if self.template_name == "set":
            return self._render(ex)
        return _fill(self.text, {"candidate": ex.candidate, "references": "\n".join(ex.references),
                                 "source": ex.source or "", "dimension": self.dimension or ""})

    def _body(self, ex: Example) -> dict:
        body = {"model": self.model, "messages": [{"role": self.role, "content": self.prompt(ex)}],
                "temperature": self.temperature, "max_tokens": self.max_tokens, "n": self.samples}
        if self.logprobs:
            body.update(logprobs=True, top_logprobs=self.top_logprobs)
        return body

    def _key(self, body: dict) -> str:
        """The answer store's key: the server (scheme, host, port, path; never credentials), the served model and
        the request body."""
        blob = json.dumps([self.provenance()["server"], self.served, body], sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    def _where(self, ex: Example) -> str:
        """The row as a user finds it: its location (``mine.jsonl:4 (id 'x')``) when the run gave labels, else its
        candidate's start."""
        label = self._labels.get(ex)
        return label if label is not None else f"the row with candidate {ex.candidate[:60]!r}"

    def label_rows(self, examples, labels) -> None:
        """Name each example by its location in messages (the scoring loop passes the rows' labels)."""
        if labels is not None:
            for ex, label in zip(examples, labels):
                self._labels.setdefault(ex, str(label))

    def store_beside(self, cache_path) -> None:
        """Keep the answer store beside the score cache at ``cache_path`` (``llm-answers.sqlite`` in its folder),
        unless ``answers=`` or ``$META_EVAL_LLM_ANSWERS`` chose the file or ``answers=none`` none."""
        if self.answers_path is None or self._answers_chosen or cache_path is None:
            return
        beside = Path(cache_path).parent / "llm-answers.sqlite"
        if beside != self.answers_path:
            if self._store is not None:
                self._store.close()
                self._store = None
            self.answers_path, self._tally_of = beside, None

    def _answer(self, ex: Example) -> dict:
        """The stored answer of ``ex``'s request, else the server's (stored at once): ``{"choices": [{"text",
        "logprobs"}], "usage": [...], "model"}`` with ``samples`` choices. A server's answer over
        ``max_answer_bytes`` is an error naming the row, and is not stored."""
        body = self._body(ex)
        key = self._key(body)
        stored = self._store.get(key) if self._store is not None else None
        if stored is not None:
            with self._lock():
                self.stats["stored"] += 1
            return stored
        choices, usage = [], []
        with self._lock():
            if not self._asking:
                self._asking[:] = [time.perf_counter()] * 2
        while len(choices) < self.samples:  # a server that ignores n (Ollama) answers one choice: ask again
            ask = dict(body, n=self.samples - len(choices))
            try:
                reply = self._call("POST", "/chat/completions", ask)
            except _TooLarge as exc:
                raise MetricError(f"llm-judge: the server's answer for {self._where(ex)} is {exc}, over "
                                  f"max_answer_bytes={self.max_answer_bytes:,}: not stored (raise -o "
                                  "max_answer_bytes=N, or lower max_tokens)") from None
            except MetricError as exc:  # an HTTP error, or retries spent: which row it was asking for
                where = f"llm-judge: for {self._where(ex)}: "
                raise MetricError(str(exc).replace("llm-judge: ", where, 1)) from None
            got = reply.get("model")
            if got != self.served:
                got = server_text(got, 100)
                raise MetricError(f"llm-judge: for {self._where(ex)}, the server answered as model {got}, but this "
                                  "run's signature was made "
                                  f"for {self.served!r} (from /models): a different served model is a different "
                                  f"metric; run again, or pass -o model=ID if the server lists that id (a hosted "
                                  "API answering with a dated snapshot of an alias)")
            fresh = reply.get("choices")
            if not isinstance(fresh, list) or not fresh:
                raise MetricError(f"llm-judge: an answer without choices for {self._where(ex)}: "
                                  f"{server_text(json.dumps(reply))}")
            for c in fresh:
                message = c.get("message") if isinstance(c, dict) else None
                content = message.get("content") if isinstance(message, dict) else None
                choices.append({"text": content if isinstance(content, str) else "",
                                "logprobs": c.get("logprobs") if isinstance(c, dict) else None})
            u = reply.get("usage") if isinstance(reply.get("usage"), dict) else {}
            prompt_tokens, completion_tokens, good = _usage_tokens(u)
            usage.append({"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens})
            with self._lock():
                self.stats["requests"] += 1
                self.stats["prompt_tokens"] += prompt_tokens
                self.stats["completion_tokens"] += completion_tokens
                self.stats["bad_usage"] += not good
                self._asking[1] = time.perf_counter()
        answer = {"choices": choices[:self.samples], "usage": usage, "model": self.served}
        if self._store is not None:
            self._store.put(key, self.served, answer)
        return answer

    def _row_score(self, answer: dict, where: str) -> tuple[float | None, int]:
        """The row's score (None: no parsed answer) and its number of unparsed answers; errors per the policy."""
        low, high = self.range
        values, unparsed = [], 0
        for c, value in zip(answer["choices"], self._parsed(answer)):
            if value is None:
                if self.on_unparsed == "error":
                    raise MetricError(f"llm-judge: unparsed answer {server_text(c.get('text'))} for {where} (no score "
                                      f"by the {self.rule!r} rule; -o on_unparsed=drop leaves such answers out)")
                unparsed += 1
                continue
            if not low <= value <= high:
                raise MetricError(f"llm-judge: score {value} outside the declared range {low}:{high} for {where} "
                                  f"(answer {server_text(c.get('text'))})")
            values.append(value)
        return (float(np.mean(values)) if values else None), unparsed

    # -- scoring -------------------------------------------------------------------------------------------------
    def _score(self, examples: list[Example]) -> dict[str, list[float]]:
        from concurrent.futures import ThreadPoolExecutor

        if self.served is None:
            self.fit(examples)
        if self._store is None:
            self._store = _Store(self.answers_path)
        self._tally_of = None  # the store changes
        self._http()  # one client (and its connection pool) for every thread
        self._lock()
        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            answers = list(pool.map(self._answer, examples))
        out = []
        for ex, answer in zip(examples, answers):
            value, unparsed = self._row_score(answer, self._where(ex))
            self.stats["answers"] += len(answer["choices"])
            self.stats["unparsed"] += unparsed
            self._row_seen[self._key(self._body(ex))] = (len(answer["choices"]), unparsed)
            if value is None:  # every answer unparsed (on_unparsed=drop): the run leaves the row out
                value = (self.range[0] + self.range[1]) / 2
            out.append(value)
        return {"llm-judge": out}

    def _parsed(self, answer: dict) -> list[float | None]:
        """Each answer's score (None: unparsed), by the weighted rule then the text rule; not range-checked.
        ``template=set``: the property's rule (:func:`parse_set_answer`), after the weighted rule for a graded
        property when logprobs were asked."""
        low, high = self.range
        out = []
        if self.prop is not None:
            for c in answer["choices"]:
                value = (weighted_score(c.get("logprobs"), low, high)
                         if self.logprobs and self.prop.kind == "graded" else None)
                out.append(value if value is not None else parse_set_answer(c.get("text"), self.prop))
            return out
        for c in answer["choices"]:
            value = weighted_score(c.get("logprobs"), low, high) if self.logprobs else None
            out.append(value if value is not None else parse_score(c.get("text"), self.rule))
        return out

    def _tally(self, examples) -> dict | None:
        """What the answer store holds for ``examples``' distinct rows (None without a store or before ``fit``):
        ``rows``, ``missing`` (rows it has no answer of), ``answers``, ``unparsed``, ``tokens``, ``empty``
        (the keys of the rows whose every answer was unparsed), ``keys`` (each example's key, in order) and
        ``counts`` (key -> (answers, unparsed) of the rows it holds); memoised for the same rows."""
        if self.answers_path is None or self.served is None:
            return None
        keys = [self._key(self._body(ex)) for ex in examples]
        digest = hashlib.sha256("".join(keys).encode()).hexdigest()
        if self._tally_of is not None and self._tally_of[0] == digest:
            return self._tally_of[1]
        if self._store is None:
            self._store = _Store(self.answers_path)
        tally = {"rows": 0, "missing": 0, "answers": 0, "unparsed": 0, "tokens": 0, "empty": set(), "keys": keys,
                 "counts": {}}
        for key in dict.fromkeys(keys):
            tally["rows"] += 1
            answer = self._store.get(key)
            if answer is None:
                tally["missing"] += 1
                continue
            values = self._parsed(answer)
            tally["answers"] += len(values)
            tally["unparsed"] += sum(v is None for v in values)
            tally["tokens"] += sum(sum(_usage_tokens(u)[:2]) for u in answer.get("usage", []) if isinstance(u, dict))
            tally["counts"][key] = (len(values), sum(v is None for v in values))
            if values and all(v is None for v in values):
                tally["empty"].add(key)
        self._tally_of = (digest, tally)
        return tally

    def unparsed_counts(self, examples) -> dict[str, int] | None:
        """``{"unparsed": N, "answers": M}`` over ``examples``' distinct rows, which ``meta-eval run`` shows in its
        table and JSON: read from the answer store (so a rerun served from the score cache, or a run whose answers
        were asked by a Ray actor, counts them too); without a store, the answers this process parsed (None if it
        parsed none: nothing is known)."""
        tally = self._tally(examples)
        if tally is not None:
            return {"unparsed": tally["unparsed"], "answers": tally["answers"]}
        if not self.stats["answers"]:
            return None
        return {"unparsed": self.stats["unparsed"], "answers": self.stats["answers"]}

    @property
    def drop_unparsed(self) -> bool:
        """``on_unparsed=drop``: a row whose every answer is unparsed is left out of the statistic (by
        :func:`meta_eval.scoring.runner.score_all`'s ``dropped``), not scored."""
        return self.on_unparsed == "drop"

    def row_counts(self, examples) -> list[tuple[int, int] | None]:
        """Per example, ``(answers, unparsed)``: as parsed in this process, else as the answer store holds them,
        else None (unknown). The scoring loop files them in the score cache beside the scores, so that a rerun
        served from the cache reports the counts its scores were computed with, whatever answer store it has."""
        keys = [self._key(self._body(ex)) for ex in examples] if self.served is not None else [None] * len(examples)
        missing = [ex for ex, key in zip(examples, keys) if key not in self._row_seen]
        tally = self._tally(missing) if missing else None
        stored = tally["counts"] if tally is not None else {}
        return [self._row_seen.get(key, stored.get(key)) for key in keys]

    def progress_note(self) -> str | None:
        """The requests this process has sent so far, their rate and tokens (``"120 requests, 41.3 requests/s,
        9,876 tokens"``), for the progress bar; None while none was sent (all from the stores, or asked by a Ray
        actor, whose counts stay in its process)."""
        with self._lock():
            s, asking = dict(self.stats), list(self._asking)
        if not s["requests"]:
            return None
        seconds = max(asking[1] - asking[0], 1e-9) if asking else 0.0
        rate = f"{s['requests'] / seconds:.1f} requests/s" if seconds > 1e-6 else "- requests/s"
        return (f"{s['requests']:,} requests, {rate}, {s['prompt_tokens'] + s['completion_tokens']:,} tokens"
                + (f", {s['retries']} retries" if s["retries"] else ""))

    def no_store(self) -> None:
        """Read and write no answer store (a run without the score cache, ``--no-cache``, stores nothing)."""
        if self._store is not None:
            self._store.close()
            self._store = None
        self.answers_path = None
        self._tally_of = None

    def provenance(self) -> dict[str, str]:
        """What a published board records beside the signature: the server asked (``base_url`` without a user,
        password, query or fragment; the API key is never in it)."""
        from urllib.parse import urlsplit, urlunsplit

        parts = urlsplit(self.base_url)
        host = parts.hostname or ""
        host = f"[{host}]" if ":" in host else host
        netloc = host + (f":{parts.port}" if parts.port else "")
        return {"server": urlunsplit((parts.scheme, netloc, parts.path, "", ""))}

    def degenerate(self, examples, scores=None) -> list[str | None]:
        """Rows whose every answer was unparsed (``on_unparsed=drop``), read back from the answer store, so that a
        rerun served from the score cache (or a run whose answers were asked by a Ray actor) reports them too; also
        prints the run summary on stderr: what the store holds for these rows (answers, unparsed, tokens) and what
        this process asked."""
        reasons: list[str | None] = [None] * len(examples)
        mid = (self.range[0] + self.range[1]) / 2
        s = self.stats
        asking = self._asking
        rate = ""
        if s["requests"] and asking and asking[1] > asking[0]:
            seconds = asking[1] - asking[0]
            rate = f" ({s['requests'] / seconds:.1f} requests/s over {seconds:.2f} s)"
        line = (f"llm-judge: asked here: {s['requests']} requests{rate}, {s['stored']} answers from the store, "
                f"{s['retries']} retries, {s['prompt_tokens']}+{s['completion_tokens']} tokens"
                + (f" ({s['bad_usage']} answers with a usage field that is not token counts, not counted)"
                   if s["bad_usage"] else ""))
        tally = self._tally(examples)
        if tally is not None:
            if self.on_unparsed == "drop" and tally["empty"]:
                for i, key in enumerate(tally["keys"]):  # the rows' keys, computed once by _tally
                    if key in tally["empty"]:
                        reasons[i] = f"unparsed answer (scored the range's middle, {mid:g})"
            line += (f"; the store holds {tally['rows'] - tally['missing']} of {tally['rows']} distinct rows: "
                     f"unparsed: {tally['unparsed']} of {tally['answers']} answers, {tally['tokens']} tokens")
        else:
            line += (f"; no answer store (answers=none, or a run without the score cache): unparsed here: "
                     f"{s['unparsed']} of {s['answers']} answers")
        print(line, file=sys.stderr)
        return reasons

    def release(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None
        if self._store is not None:
            self._store.close()
            self._store = None


def _usage_tokens(usage: object) -> tuple[int, int, bool]:
    """``(prompt_tokens, completion_tokens, well_formed)`` of a ``usage`` object: a count that is not a
    non-negative integer is taken as 0 and the object is not well formed (tokens are reported, never scored)."""
    out, good = [], isinstance(usage, dict)
    for name in ("prompt_tokens", "completion_tokens"):
        value = usage.get(name) if isinstance(usage, dict) else None
        ok = value is None or (isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 10 ** 12)
        good = good and ok
        out.append(value if ok and value is not None else 0)
    return out[0], out[1], good


def _default_answers() -> Path:
    """``<user cache dir>/meta-eval/llm-answers.sqlite``, beside the score cache (metrics never import meta_eval's
    scoring modules: tests/test_learn.py checks the layering)."""
    import platformdirs

    return platformdirs.user_cache_path("meta-eval") / "llm-answers.sqlite"


def _number(value: object, what: str, low: float, high: float | None) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise MetricError(f"llm-judge: {what} must be a number, got {value!r}") from None
    if not math.isfinite(number) or number < low or (high is not None and number > high):
        raise MetricError(f"llm-judge: {what} must be in [{low}, {high if high is not None else 'inf'}], got "
                          f"{value!r}")
    return number


def _parse_range(text: object, where: str) -> tuple[float, float]:
    m = _RANGE.match(str(text))
    if not m or float(m.group(1)) >= float(m.group(2)):
        raise MetricError(f"llm-judge: {where}: a score range is written LO:HI with LO < HI, got {text!r}")
    low, high = float(m.group(1)), float(m.group(2))
    return (int(low) if low.is_integer() else low), (int(high) if high.is_integer() else high)
