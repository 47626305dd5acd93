"""Scoring a judgment set with metrics, batch by batch, through the score cache.

:func:`score_examples` is the one place where metrics meet the cache: it hashes every example, looks the keys up
under the metric's signature, scores only the missing distinct examples in batches (each batch committed at once, so
a killed run resumes), and returns one array per variant aligned with the input. Metric code itself stays
side-effect free and batch-oriented, so that a batch can equally run in a worker process.

Before anything else the metric is fitted on the whole set (:meth:`metrics.base.Metric.fit`: all the input
examples, in input order, duplicates included; a no-op for most metrics), so a metric whose scores depend on the set
(MoverScore's IDF) computes its statistics once, the same for every ``batch_size`` and whatever is cached, and names
them in its signature: the same example never gets two different scores under one cache key.

Before fitting, every example is checked against what the metric reads (:func:`check_examples`): an example without
a reference (for a reference-based metric) or without a source (for a source-based one) is a
:class:`~metrics.base.MetricError` naming the first such examples by their *label*, the location a user can open
(``"mine.jsonl:4 (id 'x')"``, or ``"chaganty row 'x' (document 'd', system 's')"``), never by their position in a
batch, so the message is the same for every ``batch_size`` and whatever is cached. Labels are passed as ``labels``
or read from the examples' ``labels`` attribute (:class:`judgments.base.LabelledExamples`, which
:meth:`judgments.base.JudgmentSet.examples` and the readers of ``meta-eval score`` return); without labels an example
is named by its position in the input (from 0). The same holds for a metric's error about one example of a batch
(a non-finite score; a :class:`~metrics.base.MetricError` that carries the ``example`` and the ``where`` text it
named it by, as the LLM judge's unparsed or out-of-range answers do): the runner names the row instead.

Where the batches are scored is the ``engine``'s business (:mod:`meta_eval.scoring.engines`): by default in this
process,
batch after batch; with a :class:`~meta_eval.scoring.engines.LocalEngine` or
:class:`~meta_eval.scoring.engines.RayEngine`, in worker
processes, their scores coming back as batches finish. Either way only this function writes the cache, one commit
per finished batch, and the scores are bit-identical (same batches, filed under their examples' keys).

Several metrics on one set run in :func:`run_order` (metrics that hold the same process-wide resources, a model or
word vectors, one after the other), and :func:`release_done` forgets a resource as soon as no metric still to run
holds it: ``run -m all`` over chaganty peaks at the largest of its neural metrics, not at their sum.
"""
from __future__ import annotations

import contextlib
import copy
import inspect
import re
import time
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from meta_eval.scoring.cache import ScoreCache, example_key, keys_remembered
from meta_eval.scoring.engines import Engine, InProcess
from meta_eval.metrics.base import Example, Metric, MetricError, NonFiniteScore

__all__ = ["BESIDE_ENV", "MetricScores", "Scoring", "answer_counts", "beside_choice", "check_examples",
           "degenerate_lines", "degenerate_report", "long_lived", "on_gpu_device", "release_done", "run_order",
           "score_all", "score_examples", "shared_totals"]

ProgressCallback = Callable[[int, int], None]


@dataclass
class MetricScores:
    """A metric's scores on a list of examples."""

    metric: str
    signature: str
    higher_is_better: bool
    scores: dict[str, np.ndarray]
    computed: int
    cached: int
    seconds: float
    shared: dict[str, float] = field(default_factory=dict)
    """Seconds spent in components shared between metrics while this metric was scored (``"encoder minilm"``:
    loading the encoder and encoding sentences other metrics reuse), left out of ``seconds``."""
    system: dict[str, dict[str, float]] | None = None
    """Per variant, each system's score where it is not the mean of the row scores (:mod:`.system_scores`: a
    corpus score, or a file's system scores); ``None``: the system level averages the row scores."""
    system_mode: str = "mean"
    """How the system-level score is formed: ``"mean"`` (of the row scores), ``"corpus"`` (the metric's
    ``corpus_score`` over each system's rows) or ``"file"`` (system scores read from a score file)."""
    beside: bool = False
    """Computed in the engine's workers beside the driver's neural metrics (:func:`score_all`'s ``beside``; False
    when everything came from the cache): then ``seconds`` is the sum of its batches' times there, not a stretch of
    the driver's clock."""


_SHOWN = 3  # examples named in a message


def check_examples(metric: Metric, examples: Sequence[Example], labels: Sequence[str] | None = None) -> None:
    """Raise :class:`MetricError` unless every example has what ``metric`` reads (references, source).

    Parameters
    ----------
    metric : Metric
        Its instance attributes ``needs_references`` and ``needs_source`` are read (an option such as
        ``ref=source`` changes them on the instance).
    examples : sequence of Example
    labels : sequence of str, optional
        One location per example, used to name the bad ones; default: ``"example <i> of the input (from 0)"``.

    Raises
    ------
    MetricError
        Naming the first three examples with a text over :func:`judgments.limits.max_text_chars` (checked first),
        or that lack a reference or a source, and how many do.
    """
    for i, ex in enumerate(examples):
        if not isinstance(ex, Example):
            raise MetricError(f"{_name(i, labels)} is a {type(ex).__name__}, not a metrics.Example")
    _check_lengths(metric, examples, labels)
    for needed, what, lacks in ((metric.needs_references, "a reference", lambda ex: not ex.references),
                                (metric.needs_source, "a source", lambda ex: not ex.source)):
        bad = [i for i, ex in enumerate(examples) if lacks(ex)] if needed else []
        if not bad:
            continue
        names = [_name(i, labels) for i in bad[:_SHOWN]]
        listed = ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else names[0]
        more = f" (and {len(bad) - _SHOWN} more)" if len(bad) > _SHOWN else ""
        count = f"{len(bad)} of {len(examples)} rows have none" if len(bad) > 1 else "1 row has none"
        empty = " (or an empty one)" if what == "a source" else ""
        hint = (" (or pass --option ref=source to compare with the source)"
                if what == "a reference" and "ref" in inspect.signature(type(metric).__init__).parameters else "")
        raise MetricError(f"{metric.name} needs {what} for every row, but {count}{empty}: {listed}{more}. Add "
                          f"{what} to {'these rows' if len(bad) > 1 else 'it'}, leave the rows out, or choose "
                          f"metrics that do not need one{hint}")


def _check_lengths(metric: Metric, examples: Sequence[Example], labels: Sequence[str] | None) -> None:
    """:class:`MetricError` naming the rows with a text over :func:`judgments.limits.max_text_chars` (see there
    why: past it, NLTK's wall-clock limit on a regular expression makes the outcome depend on the machine's load)."""
    from meta_eval.judgments.limits import max_text_chars

    most = max_text_chars(MetricError)
    long = []
    for i, ex in enumerate(examples):
        fields = [("candidate", ex.candidate), *(("reference", r) for r in ex.references), ("source", ex.source or "")]
        worst = max(fields, key=lambda f: len(f[1]))
        if len(worst[1]) > most:
            long.append((i, worst[0], len(worst[1])))
    if long:
        shown = "; ".join(f"{_name(i, labels)} has a {what} of {n:,} characters" for i, what, n in long[:_SHOWN])
        more = f" (and {len(long) - _SHOWN} more rows)" if len(long) > _SHOWN else ""
        raise MetricError(f"{metric.name}: {shown}{more}: over meta-eval's limit of {most:,} characters per text, "
                          "past which NLTK's 5 s limit on a regular expression makes the outcome depend on the "
                          "machine's load; shorten or leave out these rows, or raise META_EVAL_MAX_TEXT_CHARS")


def _name(i: int, labels: Sequence[str] | None) -> str:
    return labels[i] if labels is not None else f"example {i} of the input (from 0)"


def score_examples(metric: Metric, examples: Sequence[Example], cache: ScoreCache | None = None,
                   batch_size: int = 256, on_progress: ProgressCallback | None = None,
                   labels: Sequence[str] | None = None, engine: Engine | None = None) -> MetricScores:
    """Score ``examples`` with ``metric``, reusing and filling ``cache``.

    Parameters
    ----------
    metric : Metric
    examples : sequence of Example
        The whole set: ``metric.fit`` sees all of it, whatever is cached.
    cache : ScoreCache, optional
        Without one, everything is computed.
    batch_size : int
        Distinct examples per call to ``metric.score`` (and per cache commit).
    on_progress : callable(done, total), optional
        Called after the cache lookup and after every batch, counting distinct examples.
    labels : sequence of str, optional
        One location per example for messages (:func:`check_examples`); default: the ``labels`` attribute of
        ``examples`` if it has one.
    engine : meta_eval.scoring.engines.Engine, optional
        Where the batches are scored; default: in this process, one batch after the other (each committed before
        the next is scored). With another engine ``on_progress`` is called as batches finish, in any order.

    Raises
    ------
    MetricError
        From :func:`check_examples`, before anything is fitted, looked up or scored.
    """
    job = _prepare(metric, examples, cache, batch_size, on_progress, labels, engine)
    try:
        for index, out in (engine or InProcess()).score_batches(metric, job.batch_examples()):
            job.commit(index, out)
    except (NonFiniteScore, MetricError) as exc:
        located = job.locate(exc)
        if located is None:
            raise
        raise located from None
    return job.result()


@dataclass
class _Job:
    """One metric's scoring of a set between its cache lookup and its scores: the steps of :func:`score_examples`,
    apart so that :func:`score_all` can hand a CPU metric's batches to the workers and commit them later."""

    metric: Metric
    cache: ScoreCache | None
    labels: Sequence[str] | None
    keys: list[str]
    distinct: dict[str, Example]
    found: dict[str, dict[str, float]]
    batches: list[list[str]]
    signature: str
    on_progress: ProgressCallback | None
    started: float
    shared_before: dict[str, float]
    done: int = 0
    worked: float | None = None  # seconds its batches took in the workers, when they ran beside the driver's
    pending: dict[int, Future] = field(default_factory=dict)  # beside: batch index -> its worker's future
    error: Exception | None = None  # beside: what a batch raised (for _Beside.finish)

    def batch_examples(self) -> list[list[Example]]:
        return [[self.distinct[k] for k in batch] for batch in self.batches]

    def commit(self, index: int, out: dict[str, np.ndarray]) -> None:
        """File batch ``index``'s scores in the cache (one commit) and count it."""
        batch = self.batches[index]
        fresh = {k: {v: float(out[v][j]) for v in self.metric.variants} for j, k in enumerate(batch)}
        if self.cache is not None:
            self.cache.put_many(self.signature, fresh)
        self.found.update(fresh)
        self.done += len(batch)
        if self.on_progress:
            self.on_progress(self.done, len(self.distinct))

    def locate(self, exc: Exception) -> Exception | None:
        """``exc`` (about one example of a batch) naming the example's row instead, or None to raise it as is."""
        metric = self.metric
        if isinstance(exc, NonFiniteScore):  # name the row, not the example's place in a batch
            if exc.example is None:
                return None
            rows = self._rows(example_key(exc.example))
            where = rows[0] if rows else "an example"
            return MetricError(f"{metric.name}/{exc.variant}: non-finite score ({exc.value}) for {where}"
                               + (f" (and {len(rows) - 1} more row(s) with the same texts)" if len(rows) > 1 else "")
                               + "; a metric must return a finite number for every example")
        # an error about one example in a batch (``example``, ``where``): name its row
        example, where = getattr(exc, "example", None), getattr(exc, "where", None)
        rows = self._rows(example_key(example)) if isinstance(example, Example) and where else []
        if not rows or where not in str(exc):
            return None
        return MetricError(str(exc).replace(where, rows[0] + (f" (and {len(rows) - 1} more row(s) with the same "
                                                             "texts)" if len(rows) > 1 else "")))

    def _rows(self, key: str) -> list[str]:
        return [_name(i, self.labels) for i, k in enumerate(self.keys) if k == key]

    def result(self) -> MetricScores:
        variants = self.metric.variants
        scores = {v: np.array([self.found[k][v] for k in self.keys], dtype=np.float64) for v in variants}
        shared = {k: v - self.shared_before.get(k, 0.0) for k, v in _shared_seconds().items()}
        shared = {k: v for k, v in shared.items() if v > 0}
        todo = sum(len(b) for b in self.batches)
        seconds = (self.worked if self.worked is not None else
                   max(0.0, time.perf_counter() - self.started - sum(shared.values())))
        return MetricScores(self.metric.name, self.signature, self.metric.higher_is_better, scores, computed=todo,
                            cached=len(self.distinct) - todo, seconds=seconds,
                            shared=shared if self.worked is None else {},
                            beside=self.worked is not None and todo > 0)


def _prepare(metric: Metric, examples: Sequence[Example], cache: ScoreCache | None, batch_size: int,
             on_progress: ProgressCallback | None, labels: Sequence[str] | None, engine: Engine | None) -> _Job:
    """:func:`score_examples` up to the batches: check, fit, sign, look the cache up, cut what is missing."""
    if batch_size < 1:
        raise ValueError("batch_size must be >= 1")
    started = time.perf_counter()
    shared_before = _shared_seconds()
    if labels is None:
        labels = getattr(examples, "labels", None)
    # a private copy of every example for this metric: a metric (a plugin) that changes the examples it is given,
    # even through object.__setattr__ on the frozen dataclass, changes its own copies only, never what the next
    # metric or the caller sees (the texts themselves are immutable str and tuples, so this is a shallow copy)
    examples = [copy.copy(ex) for ex in examples]
    if labels is not None and len(labels) != len(examples):
        raise ValueError(f"{len(labels)} labels for {len(examples)} examples")
    check_examples(metric, examples, labels)
    if labels is not None and callable(getattr(metric, "label_rows", None)):
        metric.label_rows(examples, labels)  # a metric whose messages name rows (the LLM judge) names them so
    metric.fit(examples)  # set-wide statistics (e.g. MoverScore's IDF) first: the signature names what was fitted
    signature = (engine or InProcess()).signature(metric)  # where it is scored: a Ray GPU actor signs its own
    keys = [example_key(ex) for ex in examples]
    distinct: dict[str, Example] = dict(zip(keys, examples))
    found = cache.get_many(signature, distinct) if cache is not None else {}
    found = {k: v for k, v in found.items() if set(v) == set(metric.variants)}
    todo = [k for k in distinct if k not in found]
    if on_progress:
        on_progress(len(distinct) - len(todo), len(distinct))
    if on_gpu(signature):  # few long calls of texts of like length: the GPU's padded batches waste little
        todo.sort(key=lambda k: _text_chars(distinct[k]))
        batch_size = max(batch_size, GPU_BATCH_ROWS)
    batches = [todo[i:i + batch_size] for i in range(0, len(todo), batch_size)]
    return _Job(metric, cache, labels, keys, distinct, found, batches, signature, on_progress, started,
                shared_before, done=len(distinct) - len(todo))


#: distinct examples per ``metric.score`` call, at least, for a metric that computes on a GPU (:func:`on_gpu`)
GPU_BATCH_ROWS = 8192
_GPU_SIGNATURE = re.compile(r"(^|\|)device:cuda\(")


def on_gpu(signature: str) -> bool:
    """Whether a metric's ``signature`` says it computes on a CUDA GPU (:func:`metrics.device.device_config`'s
    ``device:cuda(<GPU name>)``; as a Ray GPU actor signs it, whatever the driver has).

    Such a metric gets its examples sorted by length (characters of its texts) and at least :data:`GPU_BATCH_ROWS`
    of them per call, whatever ``batch_size`` says: its memory is bounded by its token budget per pass
    (``max_tokens``), not by the rows of a call, and each call pads its own texts to its longest: on a lent H200,
    roberta-large-shaped BERTScore on wmt23's 21,281 pairs took over 45 s in fp32 and 18.8 s in bf16 with 256 unsorted
    rows per call, and 23.5 s and 11.0 s this way (docs/engines.md). On the CPU nothing changes: the CPU path encodes
    texts in exact-length groups, so neither the order nor the batch changes a bit of its scores.

    >>> on_gpu("bertscore[minilm]|layer:6|device:cuda(NVIDIA H200)|dtype:fp32|cuda:13.0|code:ab")
    True
    >>> on_gpu("bertscore[minilm]|layer:6|num:portable|code:ab")
    False
    """
    return bool(_GPU_SIGNATURE.search(signature))


def _text_chars(example: Example) -> int:
    return len(example.candidate) + sum(len(r) for r in example.references) + len(example.source or "")


def _shared_seconds() -> dict[str, float]:
    """:func:`metrics.encoder.shared_seconds` when the encoder module is loaded (never imports torch here)."""
    import sys

    encoder = sys.modules.get("meta_eval.metrics.encoder")
    return encoder.shared_seconds() if encoder is not None else {}


def run_order(metrics: Sequence[Metric]) -> list[Metric]:
    """``metrics`` in the order to score them: those that hold no shared resource first, then one group per
    resource (the first one a metric :attr:`~metrics.base.Metric.holds`), groups in order of first appearance,
    except that the groups of metrics that run in one process (``parallel="single"``: the neural ones) come last;
    order kept within a group.

    Scores do not depend on the order; memory does: with :func:`release_done` after each metric, a resource is
    loaded once and forgotten when its group is done, and a local engine's worker pool, which only the CPU metrics
    use, is stopped before the models load (:meth:`meta_eval.scoring.engines.Engine.idle`).

    >>> from meta_eval.metrics.registry import create
    >>> [m.name for m in run_order([create(n, **({"model": "minilm"} if n == "bertscore" else {}))
    ...                             for n in ("wms-ctx", "rouge", "wms", "bertscore", "sms-ctx", "sms")])]
    ['rouge', 'wms', 'sms', 'wms-ctx', 'sms-ctx', 'bertscore']
    """
    groups: dict[str, list[Metric]] = {"": []}
    for metric in metrics:
        groups.setdefault(metric.holds[0] if metric.holds else "", []).append(metric)
    ordered = sorted(groups.values(), key=lambda group: any(m.parallel == "single" for m in group))  # stable
    return [metric for group in ordered for metric in group]


def release_done(metric: Metric, remaining: Sequence[Metric]) -> list[str]:
    """After ``metric`` is done with a set: forget its memo (:meth:`~metrics.base.Metric.release`) and the shared
    resources it holds that none of ``remaining`` (the metrics still to run in this process) holds
    (:func:`metrics.memo.release`). Returns the resources released."""
    from meta_eval.metrics.memo import release

    metric.release()
    needed = {r for m in remaining for r in m.holds}
    return release(r for r in metric.holds if r not in needed)


#: Python's first-generation threshold (objects allocated, less those freed, between automatic collections) while
#: :func:`long_lived` keeps the heap frozen; CPython's default is 700 (2,000 from 3.14)
YOUNG_THRESHOLD = 50_000


@contextlib.contextmanager
def long_lived(metrics: Sequence[Metric]):
    """Python's garbage collector told to skip, between the driver's metrics, what outlives them (:func:`gc.freeze`).

    Each shared resource released (:func:`release_done`) costs a full collection (:func:`metrics.memo.release`: a
    model's modules refer to each other), which walks every object in the process: after a neural metric that is
    transformers' and torch's modules too, about 0.15 s on this project's 2-core machine and 0.2-0.3 s on a lent
    H200 machine, and Python's own full collections walk them as well (4-5 of them while the first model's code is
    imported there, 0.6-0.9 s). The block yields ``release(metric, remaining)``, which releases what ``metric``
    (one of ``metrics``, the driver's) held (:func:`release_done`) and returns the resources released:

    - On entering, when one of ``metrics`` holds a resource, everything alive was made before the run and is
      frozen, so Python's own collections while the first model loads walk only what was made since. Right before
      the first release that may collect, it is unfrozen: that collection walks everything, so a resource loaded
      before the run is freed at its release.
    - While the block froze, Python's first-generation threshold is :data:`YOUNG_THRESHOLD` (a higher one is kept;
      0, collection off, too): importing transformers' model code makes about 300,000 objects, which under the
      default threshold (700) the collector walked again and again, in hundreds of young collections and in every
      full one they triggered. The collector still runs, once per 50,000 more container objects allocated than
      freed, so cyclic garbage waits at most that long. On the CPU proxy (``bench/gpu_proxy.py --cold``, ``-m all``
      on chaganty) the collections went from about 1,690 (0.23 s young, 0.88 s full) to about 110 (0.17 s, 0.60 s).
    - Right after a release that collected, when no resource a finished metric held is held by a metric still to run
      (so no model or vectors loaded in the run is alive), everything alive is long-lived (modules, the examples,
      the scores) and is frozen: later collections walk only what was made since.
    - On leaving, if the block froze, it restores the threshold and unfreezes. CPython can only unfreeze every
      frozen object at once, so a freeze made before the run is undone with it: the count cannot tell a process's
      own freeze from the interpreter's, as Python 3.12 starts with objects frozen (375 on the lent GPU machines'
      3.12.3, with ``-S`` and ``-I`` too), where keeping away from any earlier freeze froze nothing at all. A
      process that froze its heap for its forked children freezes it again after the run (:func:`gc.freeze`). A
      run whose metrics hold no resource freezes nothing and leaves the count and the threshold as it found them.

    >>> import gc
    >>> before = gc.get_threshold()
    >>> with long_lived([type("M", (), {"holds": ("model",)})()]) as release:
    ...     gc.get_freeze_count() > 0, gc.get_threshold()[0] >= YOUNG_THRESHOLD
    (True, True)
    >>> gc.get_freeze_count(), gc.get_threshold() == before
    (0, True)
    """
    import gc

    held: set[str] = set()
    froze = before_run = any(m.holds for m in metrics)  # before_run: what is frozen was alive before the run
    thresholds = gc.get_threshold()
    if froze:
        gc.freeze()
        if thresholds[0]:  # 0: the automatic collection is off, and stays off
            gc.set_threshold(max(thresholds[0], YOUNG_THRESHOLD), *thresholds[1:])

    def release(metric: Metric, remaining: Sequence[Metric]) -> list[str]:
        nonlocal before_run, froze
        needed = {r for m in remaining for r in m.holds}
        if before_run and any(r not in needed for r in metric.holds):
            gc.unfreeze()
            before_run = False
        released = release_done(metric, remaining)
        held.update(metric.holds)
        if released and not held & needed:
            gc.freeze()
            froze = True
        return released

    try:
        yield release
    finally:
        if froze:
            gc.set_threshold(*thresholds)
            gc.unfreeze()


@dataclass
class Scoring:
    """What :func:`score_all` returns: the scores of the metrics that ran (in the order they were given), the
    metrics whose scoring raised (``(name, "ExcType: message")``) and, per scored metric, the rows it gave a
    documented value instead of a measurement (:meth:`~metrics.base.Metric.degenerate`: one reason or None per
    row) and, per metric that counts its answers (an LLM judge's ``row_counts``), ``{"unparsed": N,
    "answers": M}`` and, where it drops rows (``drop_unparsed``: an LLM judge's ``on_unparsed=drop``), one flag
    per example (True: every answer of the row unparsed, to be left out of the statistic)."""

    scored: list[MetricScores]
    failed: list[tuple[str, str]]
    degenerate: dict[str, list]
    unparsed: dict[str, dict[str, int]] = field(default_factory=dict)
    dropped: dict[str, list[bool]] = field(default_factory=dict)

    def dropped_rows(self) -> list[int]:
        """The examples (by position) some metric dropped (:attr:`dropped`), in order."""
        return sorted({i for flags in self.dropped.values() for i, gone in enumerate(flags) if gone})


_COUNTS = " | answer counts"  # the score cache's pseudo-signature beside a metric's, for its per-row answer counts


def answer_counts(metric: Metric, examples: Sequence[Example], cache: ScoreCache | None,
                  signature: str) -> list[tuple[int, int] | None]:
    """Per example, ``(answers, unparsed)`` of a metric with ``row_counts`` (the LLM judge), or None where unknown:
    read from the score cache beside the metric's scores (``signature`` + " | answer counts"), else asked of the
    metric (what it parsed here, or its answer store holds) and filed in the cache, so that a rerun served from
    the score cache reports the counts its scores were computed with, whatever answer store it has."""
    keys = [example_key(ex) for ex in examples]
    distinct = dict(zip(keys, examples))
    known: dict[str, tuple[int, int]] = {}
    if cache is not None:
        for k, v in cache.get_many(signature + _COUNTS, distinct).items():
            if set(v) == {"answers", "unparsed"}:
                known[k] = (int(v["answers"]), int(v["unparsed"]))
    todo = [k for k in distinct if k not in known]
    if todo:
        fresh = {k: c for k, c in zip(todo, metric.row_counts([distinct[k] for k in todo])) if c is not None}
        if cache is not None and fresh:
            cache.put_many(signature + _COUNTS, {k: {"answers": a, "unparsed": u} for k, (a, u) in fresh.items()})
        known.update(fresh)
    return [known.get(k) for k in keys]


@keys_remembered()  # every metric keys the same examples: each distinct one is hashed once per call
def score_all(chosen: Sequence[Metric], examples: Sequence[Example], cache: ScoreCache | None, batch_size: int = 256,
              *, engine: Engine | None = None, progress: bool = True, degenerate: bool = True,
              beside: bool | None = None) -> Scoring:
    """Score ``examples`` with every metric of ``chosen``; a metric whose scoring raises does not stop the others.

    The metrics run in :func:`run_order`, each resource (model, word vectors) released when no metric still to run
    holds it (:func:`release_done`), and ``engine`` (default: this process) is told when the CPU metrics are done
    (:meth:`~meta_eval.scoring.engines.Engine.idle`). A metric's :meth:`~metrics.base.Metric.degenerate` reasons are
    collected right after it is scored, while its model is still loaded (``degenerate=False``: not asked), and so
    are the answer counts of a metric that has ``unparsed_counts(examples)`` (an LLM judge: ``{"unparsed": N,
    "answers": M}``, or None). Without a cache (``--no-cache``: store nothing) a metric with a store of its own
    (``no_store()``: the LLM judge's answer store) is told to keep none either.
    ``progress``: a bar per metric (counts, rate, ETA, and the metric's ``progress_note()`` when it has one, such as
    an LLM judge's requests/s and tokens) on stderr when it is a terminal. An engine that cannot start
    (Ray unreachable) raises :class:`~meta_eval.errors.MetaEvalError`; Ctrl-C (KeyboardInterrupt) propagates,
    every finished batch being in the cache. The cache is closed at the end.

    ``beside``: score the CPU metrics (``parallel="process"``) in the engine's worker processes *while* the driver
    scores the neural ones, instead of before them (:class:`_Beside`). Default (None): :func:`beside_choice`, which
    says yes when a neural metric computes on a GPU, where the driver's own work is mostly waiting for the GPU and
    the machine's other cores would be idle; on a CPU-only run the neural metrics use every core as torch threads,
    so the metrics run one after the other as before. The scores are the same either way (the same batches, filed
    by the driver); a metric scored beside reports as its ``seconds`` the sum of its batches' times in the workers.
    """
    from meta_eval.errors import MetaEvalError
    from meta_eval.scoring.engines import EngineError

    from meta_eval.report.escape import markup as escape
    from meta_eval.report.progress import progress_bar
    scored, failed, found, unparsed, dropped = [], [], {}, {}, {}
    order = run_order(chosen)
    rank = {id(m): k for k, m in enumerate(chosen)}
    if beside is None:
        beside = beside_choice(order)
    takes = engine is not None and engine.workers > 1 and type(engine).submit_batches is not Engine.submit_batches
    aside = _Beside(engine) if beside and takes else None  # a local engine with workers; not Ray (its own actors)

    def setup(metric: Metric) -> None:
        if cache is None and callable(getattr(metric, "no_store", None)):
            metric.no_store()
        if cache is not None and cache.path is not None and callable(getattr(metric, "store_beside", None)):
            metric.store_beside(cache.path)  # the LLM judge's answer store: beside the score cache

    def account(metric: Metric, result: MetricScores) -> None:
        if degenerate:
            found[metric.name] = metric.degenerate(examples, result.scores)
            counts = getattr(metric, "unparsed_counts", None)
            counts = counts(examples) if callable(counts) else None
            if callable(getattr(metric, "row_counts", None)):
                rows = answer_counts(metric, examples, cache, result.signature)
                seen = {example_key(ex): c for ex, c in zip(examples, rows) if c is not None}
                if seen:
                    counts = {"unparsed": sum(u for _, u in seen.values()),
                              "answers": sum(a for a, _ in seen.values())}
                if getattr(metric, "drop_unparsed", False):
                    dropped[metric.name] = [c is not None and c[0] > 0 and c[0] == c[1] for c in rows]
            if counts is not None:
                unparsed[metric.name] = counts
        scored.append((rank[id(metric)], result))

    @contextlib.contextmanager
    def reported(metric: Metric):
        try:
            yield
        except KeyboardInterrupt:
            raise
        except EngineError as exc:
            raise MetaEvalError(str(exc)) from None
        except (Exception, SystemExit) as exc:  # a metric that fails is reported (never a secret), the others run
            from meta_eval.metrics.plugin_files import origin
            from meta_eval.metrics.redact import redact
            from meta_eval.torch_build import install_choice  # the frozen torch hint, as the README's choice

            where = origin(type(metric))  # a --plugin file's metric: the file to fix
            said = (f"it called sys.exit({exc.code!r}) while scoring" if isinstance(exc, SystemExit)
                    else f"{type(exc).__name__}: {exc}")  # a plugin's exit would otherwise end the run with 0
            failed.append((metric.name, install_choice(redact(said + (
                f" (in plugin file {where})" if where is not None else "")))))

    def bar(metric: Metric):
        note = getattr(metric, "progress_note", None)
        return progress_bar(escape(metric.name), progress, note if callable(note) else None)

    try:
        if aside is not None:  # the CPU metrics' batches go to the workers first, all at once
            settled, lost, ready = set(), [], []  # handed to the workers or failed before; the latter; prepared
            for metric in [m for m in order if m.parallel == "process"]:
                settled.add(id(metric))
                lost.append(metric)
                with reported(metric):
                    setup(metric)
                    ready.append(_prepare(metric, examples, cache, batch_size, None, None, engine))
                    lost.pop()
            total = sum(len(job.batches) for job in ready)  # every metric's: the size of the pool it starts
            for job in ready:
                lost.append(job.metric)
                with reported(job.metric):
                    futures = engine.submit_batches(job.metric, job.batch_examples(), total)
                    if futures is None:  # not for the workers (it cannot be pickled): in the driver, below
                        settled.discard(id(job.metric))
                    else:
                        aside.add(job, futures)
                    lost.pop()
            order = [m for m in order if id(m) not in settled]
            for metric in lost:
                release_done(metric, order + aside.metrics())
        # the metrics beside are finished inside the block too: their releases then collect only what was made
        # since the last freeze, not the whole heap (0.26 s on the CPU proxy, bench/gpu_proxy.py)
        with long_lived(order + (aside.metrics() if aside is not None else [])) as release:
            for i, metric in enumerate(order):
                try:
                    with reported(metric):
                        setup(metric)
                        with bar(metric) as advance:
                            if aside is not None:
                                advance = aside.draining(advance)
                            result = score_examples(metric, examples, cache, batch_size, advance, engine=engine)
                        account(metric, result)
                finally:
                    remaining = order[i + 1:] + (aside.metrics() if aside is not None else [])
                    release(metric, remaining)
                    if engine is not None and aside is None:
                        engine.idle(order[i + 1:])
            if aside is not None:
                for job in list(aside.jobs):
                    metric = job.metric
                    try:
                        with reported(metric):
                            with bar(metric) as advance:
                                job.on_progress = advance
                                advance(job.done, len(job.distinct))
                                result = aside.finish(job)
                            account(metric, result)
                    finally:
                        release(metric, aside.metrics())
                if engine is not None:
                    engine.idle([])
    finally:
        if aside is not None:
            aside.cancel()
        if cache is not None:
            cache.close()
    return Scoring([result for _, result in sorted(scored, key=lambda item: item[0])], failed, found, unparsed,
                   dropped)


BESIDE_ENV = "META_EVAL_BESIDE"


def beside_choice(metrics: Sequence[Metric]) -> bool:
    """Whether :func:`score_all` scores the CPU metrics beside the neural ones by default: ``$META_EVAL_BESIDE``
    (``on``, ``off``, or ``auto``, the default when unset), ``auto`` meaning when one of ``metrics`` is a neural
    metric (``parallel="single"``) that computes on a GPU (:func:`on_gpu_device`).

    >>> from meta_eval.metrics.registry import create
    >>> beside_choice([create("rouge"), create("wms-ctx", device="cpu")])
    False
    """
    import os

    from meta_eval.errors import MetaEvalError

    value = os.environ.get(BESIDE_ENV, "").strip().lower() or "auto"
    if value not in ("auto", "on", "off"):
        raise MetaEvalError(f"{BESIDE_ENV} must be auto, on or off, got {value!r}")
    if value != "auto":
        return value == "on"
    return any(m.parallel == "single" and on_gpu_device(m) for m in metrics)


def on_gpu_device(metric: Metric) -> bool:
    """Whether ``metric`` takes the ``device`` option and it resolves to a CUDA GPU here
    (:func:`metrics.device.resolve_device`; ``auto`` without a CUDA build of torch costs no torch import).

    >>> from meta_eval.metrics.registry import create
    >>> on_gpu_device(create("rouge")), on_gpu_device(create("wms-ctx", device="cpu"))
    (False, False)
    """
    from meta_eval.metrics.device import resolve_device
    from meta_eval.scoring.engines import gpu_metric

    if not gpu_metric(metric):
        return False
    try:
        return resolve_device(getattr(metric, "device", None)).startswith("cuda")
    except Exception:  # a device this machine does not have: the metric itself says so when it runs
        return False


class _Beside:
    """CPU metrics whose batches the engine's workers score while the driver scores the others (``beside`` of
    :func:`score_all`). Only the driver commits: each finished batch when the driver's metric reports progress
    (:meth:`draining`) and the rest at :meth:`finish`, where a batch no worker has started yet is scored by the
    driver itself. A killed run loses at most the batches finished since the last commit; it resumes from the
    cache as any run."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.jobs: list[_Job] = []

    def add(self, job: _Job, futures: Sequence[Future]) -> None:
        job.worked, job.pending = 0.0, dict(enumerate(futures))
        self.jobs.append(job)

    def metrics(self) -> list[Metric]:
        """The metrics not yet finished."""
        return [job.metric for job in self.jobs]

    def draining(self, advance: ProgressCallback) -> ProgressCallback:
        """``advance`` that also commits the workers' finished batches."""
        def both(done: int, total: int) -> None:
            advance(done, total)
            self.drain()
        return both

    def drain(self) -> None:
        """Commit every finished batch (an error is kept for :meth:`finish`)."""
        for job in self.jobs:
            for index in [i for i, f in job.pending.items() if f.done()]:
                self._take(job, index)

    def _take(self, job: _Job, index: int) -> None:
        future = job.pending.pop(index)
        if job.error is not None:
            future.cancel()
            return
        try:
            out, seconds = self.engine.collect(future, f"scoring {job.metric.name}")
            job.worked += seconds
            job.commit(index, out)
        except Exception as exc:
            job.error = exc
            self._cancel(job)

    def finish(self, job: _Job) -> MetricScores:
        """The job's scores once every batch is committed; its error (the row named) if a batch raised."""
        from concurrent.futures import FIRST_COMPLETED, wait

        pending = job.pending
        try:
            while pending and job.error is None:
                done = [i for i, f in pending.items() if f.done()]
                for index in done:
                    self._take(job, index)
                if done or not pending:
                    continue
                index = next((i for i in sorted(pending, reverse=True) if pending[i].cancel()), None)
                if index is None:  # every remaining batch is running in a worker
                    wait(list(pending.values()), return_when=FIRST_COMPLETED)
                    continue
                del pending[index]  # not started anywhere: the driver scores it
                started = time.perf_counter()
                try:
                    out = job.metric.score([job.distinct[k] for k in job.batches[index]])
                except Exception as exc:
                    job.error = exc
                    break
                job.worked += time.perf_counter() - started
                job.commit(index, out)
        finally:
            self.jobs.remove(job)
            self._cancel(job)
        if job.error is not None:
            located = job.locate(job.error) if isinstance(job.error, (NonFiniteScore, MetricError)) else None
            raise (located or job.error)
        return job.result()

    @staticmethod
    def _cancel(job: _Job) -> None:
        for future in job.pending.values():
            future.cancel()

    def cancel(self) -> None:
        """Cancel every batch not started (after an error or Ctrl-C in the driver)."""
        for job in self.jobs:
            self._cancel(job)


def degenerate_report(scoring: Scoring) -> dict[str, dict]:
    """Per scored metric, how many rows it gave its documented value instead of a measurement, and why:
    ``{metric: {"rows": n, "reasons": {reason: count}}}`` (the ``degenerate`` / ``not_measured`` of the JSON)."""
    from collections import Counter

    report = {}
    for ms in scoring.scored:
        reasons = Counter(r for r in scoring.degenerate.get(ms.metric, ()) if r is not None)
        report[ms.metric] = {"rows": sum(reasons.values()), "reasons": dict(reasons)}
    return report


def degenerate_lines(report: dict[str, dict], n_rows: int) -> list[str]:
    """One line per metric of :func:`degenerate_report` with rows given its documented value, and why."""
    return [f"{name}: {r['rows']} of {n_rows} rows not measured, given the metric's documented value: "
            + "; ".join(f"{n} with {why}" for why, n in r["reasons"].items()) + " (see the metric's documentation)"
            for name, r in report.items() if r["rows"]]


def shared_totals(scored: Sequence[MetricScores]) -> dict[str, float]:
    """Seconds per shared component (the encoder) over every metric's scoring: a line of its own in the timing."""
    totals: dict[str, float] = {}
    for ms in scored:
        for component, seconds in ms.shared.items():
            totals[component] = totals.get(component, 0.0) + seconds
    return totals
