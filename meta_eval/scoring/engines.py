"""Engines: where the batches of a metric are scored (this process, a local process pool, or a Ray cluster).

:func:`meta_eval.scoring.runner.score_examples` fits the metric, looks the examples up in the score cache and cuts the
missing distinct examples into batches; an engine scores those batches and hands each batch's scores back as soon as
it is done. Only the driver (the process that called ``score_examples``) writes the cache, one commit per returned
batch, so a killed run loses at most the batches in flight and resumes from the rest. Workers never see the cache:
they receive the pickled, fitted metric and lists of :class:`~metrics.base.Example`, and return the dict of float64
arrays that :meth:`Metric.score <metrics.base.Metric.score>` returns.

Engines
-------
``InProcess`` (``workers=1``)
    Batch after batch in the calling process: exactly the path meta-eval always had.
``LocalEngine`` (``--engine local``, the command line's default, ``workers`` = the cores this process may use)
    The driver and ``workers - 1`` pool processes score the batches together. The pool is started only when the
    driver's own rate projects more than 5 s of work left for a metric, since a worker's start costs seconds (see
    :class:`LocalEngine`); it then stays for the following metrics (worker imports and memos such as the GloVe
    vectors stay loaded) and is closed with the engine. It is a :class:`concurrent.futures.ProcessPoolExecutor`
    started with ``spawn``, never ``fork``: a forked copy of a driver that has loaded torch (or holds threads) can
    deadlock. ``spawn`` rather than ``forkserver``: the workers are then the driver's own children, which lets them
    notice its death (a forkserver's children keep the forkserver alive, and it them), and a forkserver started no
    faster here (2.6 s vs 2.7 s for two workers that import the movers and load GloVe). Like any ``spawn`` pool, a
    script that starts one needs the ``if __name__ == "__main__":`` guard.
``RayEngine`` (``--engine ray``, the optional extra ``pip install "meta-eval[ray]"``)
    Connects to the cluster at ``address`` (else ``$RAY_ADDRESS``); without one, starts a local Ray instance with
    ``workers`` CPUs (no dashboard). Batches of a CPU metric are Ray tasks (one CPU each); a neural metric gets one
    actor that loads its model once and scores its batches in turn. Results come back with ``ray.wait``.

Numeric mode (:mod:`metrics.numeric`)
    Every worker computes in the driver's mode: the pool's initializer and each Ray task or actor call
    :func:`metrics.numeric.set_mode` with it before a metric can load torch, and a Ray instance or cluster gets the
    mode's variables in its ``runtime_env``; a worker whose torch already computed in another mode refuses to score
    (:func:`metrics.numeric.verify`), so a score is never signed with a mode it was not computed in.

Which metrics run where (:attr:`Metric.parallel <metrics.base.Metric.parallel>`)
    ``"process"`` (CPU metrics: ROUGE, the GloVe movers, sacrebleu's, ...): batches spread over the workers.
    ``"single"`` (neural metrics: BERTScore, MoverScore, the contextual movers, BERT-LM, QA): one process holds the
    model. Locally that process is the driver itself (the path of ``workers=1``), with ``workers`` torch threads
    while the metric runs (metrics are scored one after the other, so the pool's cores are idle then; measured
    with MiniLM: 5,700 pieces/s with 2 threads vs 3,200 with 1): a second copy of a 100 MB+ model per core would
    double the memory for little gain, and the contextual metrics of one run share the driver's loaded encoder.
    ``threads=`` on the metric or ``META_EVAL_TORCH_THREADS`` overrides the count.
    On Ray it is one actor per metric, asking for :attr:`Metric.num_gpus <metrics.base.Metric.num_gpus>` GPUs
    when the cluster has any (the built-in metrics run on CPU and ask for none), and for one CPU on a cluster or
    every CPU of a local instance (used as torch threads, as the local driver); on a cluster with GPUs, one actor
    per GPU share (``RayEngine(actors=...)`` sets the count), each loading the model once.
    ``gpus_per_actor`` (``--gpus-per-actor``; default 0, the behaviour above): above 0, the actor of every metric
    that takes the ``device`` option (the torch-backed ones: BERTScore, MoverScore, the contextual movers, BERT-LM,
    QA; :func:`gpu_metric`) asks Ray for that many GPUs (:func:`actor_options`; 0.5 puts two actors on one GPU), and
    its metric resolves ``device=auto`` to that GPU inside the actor (Ray sets ``CUDA_VISIBLE_DEVICES`` there). The
    driver still looks the cache up and writes it, under the signature the actor computes
    (:meth:`Engine.signature`: a one-off actor with the same resources signs the fitted metric), so the cache key
    names the GPU the scores come from even when the driver has none. A cluster (or a local instance) without that
    many GPUs is an :class:`EngineError` when the engine is made, before any work: Ray would otherwise wait for the
    resource for ever.
    A metric that cannot be pickled (a class defined inside a function, a learned model's class built at run time)
    is scored in the driver, with one warning giving the reason. A metric of a plugin file (``--plugin FILE.py``)
    travels with the file's source, which the worker executes first (:func:`metrics.plugin_files.shippable`): the
    file need not exist where the worker runs.
    A local engine also scores in the driver when only one batch is missing (nothing to spread; no pool started).

Bit-identity
    Every engine scores the same batches (the same examples, in the same order within a batch) with the same
    metric code and configuration, and the driver files each batch's scores under its examples' cache keys, so
    the order in which batches finish does not matter: scores are bit-identical across engines and worker counts
    (``tests/test_engines.py`` checks ROUGE, WMS and chrF, and a neural metric with 1 and 2 torch threads).
    Torch threads default to 1 in every process (pool workers, Ray tasks and actors); see "Which metrics run
    where" for the driver.

Errors
    An exception raised by the metric in a worker (a :class:`~metrics.base.MetricError`, ...) is raised again in
    the driver with the same type and message; the batches not yet finished are cancelled. A worker process that
    dies (killed, out of memory) is a :class:`WorkerLostError` naming the metric. Setting an engine up (Ray
    missing, a cluster that cannot be reached) is an :class:`EngineError`.

A local pool's workers watch their parent: when the driver is killed (``kill -9``) they exit within about a second
of running Python code again instead of lingering, and Ctrl-C reaches only the driver, which stops them.
"""
from __future__ import annotations

import abc
import hashlib
import logging
import multiprocessing
import os
import pickle
import signal
import sys
import threading
import time
import warnings
from collections import OrderedDict, deque
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from typing import Callable, Iterator, Sequence

import numpy as np

from meta_eval.metrics import numeric
from meta_eval.metrics.base import Example, Metric

__all__ = ["ENGINES", "RAY_HINT", "Engine", "EngineError", "InProcess", "LocalEngine", "RayEngine", "WorkerLostError",
           "actor_options", "beside_processes", "default_workers", "engine_for", "gpu_metric", "make_engine"]

ENGINES = ("local", "ray")
RAY_HINT = 'pip install "meta-eval[ray]"'
_MEMO = 4  # fitted metrics kept per worker process
_INFLIGHT = 2  # batches in flight per worker: one running, one queued (bounds memory on huge sets)
#: beside a GPU run (:func:`beside_processes`), one pool process per this many batches handed over: a process's start
#: (a fresh interpreter importing numpy, sacrebleu, rouge-score, NLTK and scikit-learn) cost 0.85 CPU-s and about
#: 230 MB on this project's 2-core machine, about what 8 batches of 256 chaganty rows of chrF or ROUGE take (0.12-0.17
#: s each), where 15 processes each scored about 2 of chaganty's 27 batches of ROUGE, BLEU and chrF on the H200
BESIDE_BATCHES_PER_PROCESS = 8

BatchScores = dict[str, np.ndarray]


class EngineError(ValueError):
    """An engine that cannot be set up: an unknown engine, a bad worker count, Ray missing or unreachable."""


class WorkerLostError(RuntimeError):
    """A worker process (or Ray actor/worker) died while scoring a metric's batch."""


def default_workers() -> int:
    """The number of cores this process may use (its CPU affinity where the OS has one, else ``os.cpu_count()``)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def beside_processes(workers: int, batches: int) -> int:
    """How many pool processes score ``batches`` batches handed over at once beside the driver's own work
    (:meth:`LocalEngine.submit_batches`, a GPU run's CPU metrics): one per :data:`BESIDE_BATCHES_PER_PROCESS`
    batches, rounded up, at least one and at most ``workers - 1`` (the driver is busy with its own metrics).

    A small set's few batches then do not start a process per core, each paying its imports for a batch or two while
    the driver imports transformers and launches the GPU's work on the same cores; a large set's many batches still
    get every core. The driver also scores, at the end, any batch no process has started (``runner._Beside``).

    >>> beside_processes(16, 27), beside_processes(16, 252), beside_processes(2, 27), beside_processes(16, 0)
    (4, 15, 1, 1)
    """
    return max(1, min(workers - 1, -(-batches // BESIDE_BATCHES_PER_PROCESS)))


def _workers(workers: int | None, cap: bool = False) -> int:
    """The worker count of an engine: ``workers`` validated (default: every core this process may use); with ``cap``
    (:func:`make_engine`, the command line's ``--workers`` on this machine) at most those cores, with a warning when
    capped: more processes than cores only compete for them (``--workers 1000`` once started 14 on 2 cores). An
    engine built directly (``LocalEngine(3)``) gets what it asks for."""
    if workers is None:
        return default_workers()
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise EngineError(f"workers must be a positive integer, got {workers!r}")
    cores = default_workers()
    if cap and workers > cores:
        warnings.warn(f"--workers {workers} is more than the {cores} core(s) this process may use: using {cores}",
                      stacklevel=2)
        return cores
    return workers


def _main_file_problem() -> str | None:
    """Why a ``spawn`` worker cannot start from this process's ``__main__``, or None. A spawned worker runs the
    driver's main script again by its path (``python script.py``) or module (``python -m``); a script read from
    standard input is named ``<stdin>``, which is no file, and every worker would die on starting."""
    main = sys.modules.get("__main__")
    if getattr(getattr(main, "__spec__", None), "name", None):
        return None
    path = getattr(main, "__file__", None)
    if not path:
        return None  # python -c, a notebook: the workers start without it
    from multiprocessing import process

    if os.path.isfile(os.path.join(process.ORIGINAL_DIR or os.getcwd(), path)):
        return None
    return (f"this program's main script {path} is not a file a worker process can run again: a script read "
            "from standard input")


def _workers_import_main() -> bool:
    """Whether a spawned worker has this process's ``__main__`` (a script run by its path or with ``-m``): not in a
    notebook, ``python -c`` or a script read from standard input."""
    main = sys.modules.get("__main__")
    runnable = getattr(getattr(main, "__spec__", None), "name", None) or getattr(main, "__file__", None)
    return bool(runnable) and _main_file_problem() is None


def _pickled(metric: Metric, workers_import_main: bool | None = None) -> tuple[bytes | None, str]:
    """The pickled metric (``None`` and the reason when it cannot be pickled) for shipping to workers; a metric of a
    plugin file carries the file's source, executed by the worker before the metric is unpickled
    (:func:`metrics.plugin_files.shippable`).

    A class defined in ``__main__`` pickles by reference to ``__main__``, which a worker has only when it runs the
    same main script (``workers_import_main``; default: whether this process's spawned workers do; Ray's workers
    never do): otherwise it is not shipped, and is scored in this process, instead of failing in every worker."""
    from meta_eval.metrics.plugin_files import shippable

    main = next((c for c in type(metric).__mro__ if c.__module__ == "__main__"), None)
    if main is not None and not (_workers_import_main() if workers_import_main is None else workers_import_main):
        return None, (f"its class {main.__qualname__} is defined in __main__ (a notebook, python -c or standard "
                      "input), which a worker process cannot import; to spread it over workers, put it in a file "
                      "and load that with --plugin FILE (plugins=[FILE])")
    try:
        return pickle.dumps(shippable(metric), protocol=pickle.HIGHEST_PROTOCOL), ""
    except Exception as exc:  # pickle raises PicklingError, AttributeError, TypeError, ...
        return None, f"{type(exc).__name__}: {exc}"


def _in_driver_warning(metric: Metric, why: str) -> None:
    warnings.warn(f"{metric.name} cannot be sent to worker processes ({why}); it is scored in this process",
                  RuntimeWarning, stacklevel=4)


class Engine(abc.ABC):
    """Scores batches of one metric and yields ``(batch index, scores)`` as batches finish.

    Subclasses implement :meth:`score_batches`; an engine is a context manager (``close`` stops its workers).
    """

    name = ""
    workers = 1

    @abc.abstractmethod
    def score_batches(self, metric: Metric, batches: Sequence[list[Example]]) -> Iterator[tuple[int, BatchScores]]:
        """Score every batch with the fitted ``metric``; yield each batch's index and ``metric.score(batch)``.

        The generator is consumed by the driver, which commits each yielded batch before asking for the next; a
        batch's scores are those of ``metric.score(batch)`` in this process, bit for bit.
        """

    def signature(self, metric: Metric) -> str:
        """The signature the scores of ``metric`` (fitted) are filed under: where they are computed. Here, in this
        process; a :class:`RayEngine` with GPU actors asks one of them."""
        return metric.signature()

    def map_chunks(self, fn: Callable, shared: tuple, tasks: Sequence[tuple]) -> Iterator[tuple[int, object]]:
        """Yield ``(i, fn(*shared, *tasks[i]))`` for every task, in any order (used by :mod:`meta_eval.scoring.chunks`).

        ``fn`` is a module-level function (workers import it by name), ``shared`` the large read-only arguments
        (sent once per worker), each task the small arguments of one chunk. The default runs the tasks here, in
        order; engines with workers spread them. A result does not depend on where it was computed.
        """
        for i, task in enumerate(tasks):
            yield i, fn(*shared, *task)

    def submit_batches(self, metric: Metric, batches: Sequence[list[Example]], total: int | None = None
                       ) -> list[Future] | None:
        """Hand every batch of the fitted ``metric`` to this engine's workers at once and return one future per
        batch, for a run that scores other metrics in the driver meanwhile (:func:`meta_eval.scoring.runner.score_all`
        on a GPU); :meth:`collect` gives each future's scores. ``total``: the batches of every metric handed over
        so (this one's included; default: this metric's), which sizes a pool the call starts. None where the engine
        cannot (the default: no workers)."""
        return None

    def collect(self, future: Future, what: str) -> tuple[BatchScores, float]:
        """The scores of a future of :meth:`submit_batches` and the seconds its batch took in the worker."""
        raise NotImplementedError

    def idle(self, remaining: Sequence[Metric]) -> None:
        """Called between metrics with the metrics still to run: an engine may stop workers none of them needs
        (they start again when needed). Default: nothing."""

    def close(self) -> None:
        """Stop the engine's workers (nothing to do for most engines)."""

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class InProcess(Engine):
    """Batch after batch in the calling process (``workers=1``): each batch is scored only when the previous one
    has been committed."""

    name = "in-process"

    def score_batches(self, metric, batches):
        for i, batch in enumerate(batches):
            yield i, metric.score(batch)


# -- worker side (module level: imported by name in worker processes) ---------------------------------------------

_worker_metrics: OrderedDict[str, Metric] = OrderedDict()


def _worker_metric(token: str, blob: bytes | None) -> Metric:
    """The unpickled metric of ``token`` in this worker (unpickled once, the last few kept)."""
    metric = _worker_metrics.get(token)
    if metric is None:
        if blob is None:
            raise RuntimeError("metric not shipped to this worker")
        metric = pickle.loads(blob)
        _worker_metrics[token] = metric
        while len(_worker_metrics) > _MEMO:
            _worker_metrics.popitem(last=False)
    else:
        _worker_metrics.move_to_end(token)
    return metric


def _score_recording(metric: Metric, examples: list[Example]) -> tuple[BatchScores, list]:
    """``metric.score(examples)`` and the warnings it issued (category, message), for the driver to issue again."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scores = metric.score(examples)
    return scores, [(w.category, str(w.message)) for w in caught]


def _score_in_worker(token: str, blob: bytes, examples: list[Example]) -> tuple[BatchScores, list]:
    return _score_recording(_worker_metric(token, blob), examples)


def _score_timed_in_worker(token: str, blob: bytes, examples: list[Example]) -> tuple[tuple[BatchScores, float], list]:
    """:func:`_score_in_worker` and the seconds the batch took here (a metric scored beside the driver's)."""
    started = time.perf_counter()
    scores, caught = _score_in_worker(token, blob, examples)
    return (scores, time.perf_counter() - started), caught


def _call_recording(fn: Callable, args: tuple) -> tuple[object, list]:
    """``fn(*args)`` and the warnings it issued, as :func:`_score_recording`."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fn(*args)
    return result, [(w.category, str(w.message)) for w in caught]


def _chunk_in_worker(token: str, blob: bytes | None, fn: Callable, task: tuple) -> tuple[object, list]:
    """One chunk of a resampling: ``fn(*shared, *task)`` with the shared arrays unpickled once per worker."""
    return _call_recording(fn, (*_worker_metric(token, blob), *task))


def _unpack(result: tuple[BatchScores, list]) -> BatchScores:
    """A worker's scores, after issuing its warnings in the driver (where the command line shows them)."""
    scores, caught = result
    for category, message in caught:
        warnings.warn(message, category, stacklevel=2)
    return scores


def _watch_parent(parent: int) -> None:
    while True:
        time.sleep(1.0)
        if os.getppid() != parent:  # re-parented: the driver is gone (killed)
            os._exit(1)


def _init_worker(driver: int, mode: str = "portable") -> None:
    """Pool worker set-up: the driver's numeric mode (before any metric loads torch); Ctrl-C goes to the driver only;
    exit when the driver (the parent) dies, also when it died while this worker was starting."""
    numeric.set_mode(mode)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if os.getppid() != driver:
        os._exit(1)
    threading.Thread(target=_watch_parent, args=(driver,), daemon=True, name="meta-eval-parent-watch").start()


# -- local processes ---------------------------------------------------------------------------------------------

class LocalEngine(Engine):
    """The driver and a process pool on this machine.

    Parameters
    ----------
    workers : int, optional
        Processes that score a CPU metric's batches, the driver included: the driver and ``workers - 1`` pool
        processes; default :func:`default_workers`. ``1`` scores in this process (no pool is ever started).
    start_after : float
        Start the pool once the driver's own rate projects more than this many seconds of work left for the metric
        (``0``: at once). Default 5 s: a worker's start costs 2-8 s on a 2-core machine (a fresh interpreter
        importing POT and its backends, loading GloVe, ...), which a smaller job would not repay.

    Notes
    -----
    The driver always scores batches itself, from the end of the list, while the pool takes them from the front:
    the rate of its first batches (the second and later: the first pays the imports) decides whether the pool is
    started, and a started pool stays for the following metrics (workers keep their imports and memos). When only
    batches held by the pool are left, the driver scores the most recently handed-out one again itself and keeps
    whichever result comes first (a backup task; the results are bit-identical, so it does not matter which). At
    most two batches per pool process are handed out at a time, which bounds memory on huge sets.

    On a GPU run the runner instead hands every batch of the CPU metrics to the pool at once
    (:meth:`submit_batches`; a pool of one process per 8 of those batches, :func:`beside_processes`) and the driver
    scores the neural metrics meanwhile (:func:`meta_eval.scoring.runner.score_all`'s ``beside``).
    """

    name = "local"

    def __init__(self, workers: int | None = None, start_after: float = 5.0) -> None:
        self.workers = _workers(workers)
        self.start_after = float(start_after)
        self._pool: ProcessPoolExecutor | None = None

    def _executor(self, processes: int | None = None) -> ProcessPoolExecutor:
        """The pool, started now if it is not running, with ``processes`` processes (default ``workers - 1``): a
        pool started beside (:meth:`submit_batches`) keeps its size until it is stopped (:meth:`idle`, at the end of
        the metrics beside)."""
        if self._pool is None:
            context = multiprocessing.get_context("spawn")
            self._pool = ProcessPoolExecutor(processes or self.workers - 1, mp_context=context,
                                             initializer=_init_worker, initargs=(os.getpid(), numeric.current_mode()))
        return self._pool

    def score_batches(self, metric, batches):
        if getattr(metric, "parallel", "process") == "single" and self.workers > 1:
            yield from self._score_alone(metric, batches)
            return
        if self.workers == 1 or getattr(metric, "parallel", "process") != "process" or len(batches) < 2:
            yield from InProcess().score_batches(metric, batches)
            return
        problem = _main_file_problem()
        if problem is not None:
            _in_driver_warning(metric, problem)
            yield from InProcess().score_batches(metric, batches)
            return

        def ship():
            blob, why = _pickled(metric)
            if blob is None:
                _in_driver_warning(metric, why)
                return None
            return hashlib.sha256(blob).hexdigest(), blob

        yield from self._spread(len(batches), lambda i: metric.score(batches[i]), ship,
                                lambda shipped, i: self._executor().submit(_score_in_worker, *shipped, batches[i]),
                                f"scoring {metric.name}")

    def submit_batches(self, metric, batches, total=None):
        """Every batch of a CPU metric (``parallel="process"``) to the pool at once: the driver scores none of them.
        A pool started here has :func:`beside_processes` processes for ``total`` batches. None with one worker,
        for a metric that is not spread over processes, or one that cannot be pickled (it is then scored in the
        driver, as always)."""
        if self.workers == 1 or getattr(metric, "parallel", "process") != "process" or _main_file_problem():
            return None
        blob, _ = _pickled(metric)
        if blob is None:
            return None
        token = hashlib.sha256(blob).hexdigest()
        pool = self._executor(beside_processes(self.workers, len(batches) if total is None else total))
        return [pool.submit(_score_timed_in_worker, token, blob, batch) for batch in batches]

    def collect(self, future, what):
        return self._result(future, what)

    def _score_alone(self, metric, batches):
        """A neural metric in the driver with ``workers`` torch threads: metrics are scored one after the other,
        so the pool is idle meanwhile and its cores would otherwise be unused. The thread count does not change
        the scores (``tests/test_engines.py``)."""
        from meta_eval.metrics.encoder import set_torch_threads

        previous = set_torch_threads(self.workers)
        try:
            yield from InProcess().score_batches(metric, batches)
        finally:
            set_torch_threads(previous)

    def map_chunks(self, fn, shared, tasks):
        if self.workers == 1 or len(tasks) < 2:
            yield from super().map_chunks(fn, shared, tasks)
            return
        blob = pickle.dumps(tuple(shared), protocol=pickle.HIGHEST_PROTOCOL)
        shipped = (hashlib.sha256(blob).hexdigest(), blob)
        yield from self._spread(len(tasks), lambda i: fn(*shared, *tasks[i]), lambda: shipped,
                                lambda sh, i: self._executor().submit(_chunk_in_worker, *sh, fn, tasks[i]),
                                f"resampling ({getattr(fn, '__name__', 'chunk')})")

    def _spread(self, n: int, run_here: Callable[[int], object], ship: Callable[[], tuple | None],
                submit: Callable[[tuple, int], Future], what: str) -> Iterator[tuple[int, object]]:
        """Tasks ``0..n-1`` shared by the driver (``run_here``, from the end) and the pool (``submit``, from the
        front; ``ship()`` gives what the workers need once, or None to keep everything in the driver)."""
        shipped: tuple | None = None
        threshold = self.start_after
        use_pool = self._pool is not None or threshold <= 0
        queue = deque(range(n))  # not handed out yet: the pool takes from the front, the driver the end
        pending: dict[Future, int] = {}  # handed to the pool, result not used yet
        finished: set[int] = set()
        timed: list[float] = []  # seconds of the driver's tasks
        done_ok = False
        try:
            while len(finished) < n:
                if not use_pool and len(timed) >= 2 and len(queue) * timed[-1] > threshold:
                    use_pool = True
                if use_pool and shipped is None:
                    shipped = ship()
                    if shipped is None:
                        use_pool, threshold = False, float("inf")  # everything stays in the driver
                while shipped is not None and queue and len(pending) < _INFLIGHT * (self.workers - 1):
                    i = queue.popleft()
                    pending[submit(shipped, i)] = i
                for future in [f for f in pending if f.done()]:
                    i = pending.pop(future)
                    result = self._result(future, what)
                    if i not in finished:
                        finished.add(i)
                        yield i, result
                if len(finished) == n:
                    break
                if queue:  # the driver's share: the last task not handed out
                    i = queue.pop()
                else:  # a backup of the pool's latest task
                    i = max(j for j in pending.values() if j not in finished)
                started = time.perf_counter()
                result = run_here(i)
                timed.append(time.perf_counter() - started)
                finished.add(i)
                for future in [f for f, j in pending.items() if j == i and f.cancel()]:
                    del pending[future]  # a backup that won before the worker started the task
                yield i, result
            done_ok = True
        finally:
            for future in pending:  # backups that lost, or the rest after an error or Ctrl-C
                future.cancel()
            if not done_ok and any(not f.done() for f in pending):
                self._stop()

    def _result(self, future: Future, what: str):
        try:
            return _unpack(future.result())
        except BrokenProcessPool as exc:
            self._stop()
            saved = "the finished batches are in the cache: rerun to resume, " if what.startswith("scoring") else (
                "rerun ")
            raise WorkerLostError(f"a worker process died while {what} (killed, out of memory, or "
                                  "started from a script without the `if __name__ == '__main__':` guard that "
                                  f"multiprocessing needs); {saved}with fewer --workers or --workers 1") from exc

    def _stop(self) -> None:
        """Terminate the pool's workers and shut it down: what they may still be doing is a discarded backup, or
        the rest of a metric that failed or was interrupted (nothing a worker does is ever saved by it)."""
        pool, self._pool = self._pool, None
        if pool is None:
            return
        for process in list((getattr(pool, "_processes", None) or {}).values()):
            if process.is_alive():
                process.terminate()
        pool.shutdown(wait=True, cancel_futures=True)

    def idle(self, remaining: Sequence[Metric]) -> None:
        """Stop the pool when no metric still to run spreads over it (only neural metrics, which run in the driver,
        are left): its workers would keep their metrics' word vectors and memos while the driver loads a model. A
        later resampling or metric starts a fresh pool."""
        if not any(getattr(m, "parallel", "process") == "process" for m in remaining):
            self._stop()

    def close(self) -> None:
        self._stop()


# -- Ray -----------------------------------------------------------------------------------------------------------

def _import_ray():
    try:
        import ray
    except ImportError as exc:
        raise EngineError(f"--engine ray needs Ray, which cannot be imported here ({exc}): {RAY_HINT}") from None
    return ray


def _ray_task(token: str, blob_ref: list, examples: list[Example], mode: str = "portable"
              ) -> tuple[BatchScores, list]:
    """A Ray task in the driver's numeric ``mode``: the metric's bytes are fetched from the object store only the
    first time a worker sees it."""
    numeric.set_mode(mode)  # a worker of a cluster the driver did not start may not have the driver's variables
    blob = None
    if token not in _worker_metrics:
        import ray

        blob = ray.get(blob_ref[0])
    return _score_recording(_worker_metric(token, blob), examples)


def _ray_chunk(token: str, blob_ref: list, fn: Callable, task: tuple) -> tuple[object, list]:
    """A Ray task running one resampling chunk; the shared arrays are fetched once per worker."""
    blob = None
    if token not in _worker_metrics:
        import ray

        blob = ray.get(blob_ref[0])
    return _chunk_in_worker(token, blob, fn, task)


def _unreachable(address: str) -> str | None:
    """Why ``address`` (``host:port`` or ``ray://host:port``) cannot be reached over TCP within 5 s, else None
    (also None for what is not ``host:port``, such as ``auto``): Ray itself retries a dead address for minutes."""
    import socket

    host, _, port = address.split("://", 1)[-1].rpartition(":")
    if not host or not port.isdigit():
        return None
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=5).close()
    except OSError as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


class _MetricActor:
    """One process holding one neural metric (and so its model, loaded at the first batch) for a whole run."""

    def __init__(self, blob: bytes, threads: int = 1, mode: str = "portable") -> None:
        from meta_eval.metrics.encoder import set_torch_threads

        numeric.set_mode(mode)  # the driver's numeric mode, before the model loads torch
        set_torch_threads(threads)  # forward passes at once (one intra-op thread each: the bits do not change)
        self.metric = pickle.loads(blob)

    def score(self, examples: list[Example]) -> tuple[BatchScores, list]:
        return _score_recording(self.metric, examples)

    def signature(self) -> str:
        """The metric's signature as computed here (``device=auto`` resolved on this actor's GPU)."""
        return self.metric.signature()


def gpu_metric(metric: Metric) -> bool:
    """Whether ``metric`` computes with torch on a device it is told: its class takes the ``device`` option
    (:mod:`metrics.device`), so a GPU actor's ``device=auto`` puts it on that GPU."""
    import inspect

    try:
        return "device" in inspect.signature(type(metric).__init__).parameters
    except (TypeError, ValueError):
        return False


def actor_options(metric: Metric, gpus_per_actor: float = 0.0, cluster_gpus: float = 0.0, cpus: int = 1) -> dict:
    """Ray's resources for one actor holding ``metric``: ``{"num_cpus": cpus, "num_gpus": ...}``.

    ``gpus_per_actor`` above 0 and a metric that takes ``device`` (:func:`gpu_metric`): that many GPUs. Otherwise the
    metric's own :attr:`~metrics.base.Metric.num_gpus` where the cluster has GPUs, else none (the behaviour before
    ``--gpus-per-actor``).

    >>> from meta_eval.metrics import create
    >>> actor_options(create("rouge"), 1.0, 8.0)
    {'num_cpus': 1, 'num_gpus': 0.0}
    """
    if gpus_per_actor > 0 and gpu_metric(metric):
        gpus = float(gpus_per_actor)
    else:
        gpus = float(getattr(metric, "num_gpus", 0) or 0)
        if gpus and not cluster_gpus:
            gpus = 0.0
    return {"num_cpus": int(cpus), "num_gpus": gpus}


class RayEngine(Engine):
    """Batches as Ray tasks (CPU metrics) or calls on one actor per neural metric.

    Parameters
    ----------
    workers : int, optional
        A local instance: its number of CPUs (default :func:`default_workers`). A cluster: the batches in flight
        are at most twice this (default: the cluster's CPUs).
    address : str, optional
        A running cluster (``ray://host:10001`` or ``host:6379``); default ``$RAY_ADDRESS``; neither: a new local
        instance, started at the first metric that needs it and stopped by :meth:`close` (a cluster that ``ray
        start`` runs on this machine is joined only when named). When Ray is already
        initialised in this process (a notebook, a test), that connection is used and left open.
    actors : int, optional
        Actors per neural metric, each holding its own copy of the model, batches handed to whichever is free.
        Default: on a cluster with GPUs, as many as its GPUs hold (GPUs // the metric's ``num_gpus``, or //
        ``gpus_per_actor``), else one. On CPUs several actors give the same scores as one, bit for bit: a neural
        metric's score of a text does not depend on the other texts of its batch (:mod:`metrics.encoder`); on GPUs
        within the GPU's batch tolerance (:mod:`metrics.device`).
    gpus_per_actor : float
        GPUs each actor of a metric that takes ``device`` asks for (default 0: none, as before); see the module notes.

    Raises
    ------
    EngineError
        Ray is not installed (the message names ``pip install "meta-eval[ray]"``).

    Notes
    -----
    Worker processes import meta-eval and the metrics' libraries themselves: on a cluster every node needs the same
    installation (and model packages) as the driver. A local instance started here passes this process's
    ``sys.path`` to its workers (Ray's ``code_search_path``), so metrics importable here are importable there. It
    is stopped by :meth:`close` (and by Ray at a normal exit or Ctrl-C); after a ``kill -9`` of the driver two Ray
    agent processes may stay behind: ``ray stop`` ends them.
    """

    name = "ray"

    def __init__(self, workers: int | None = None, address: str | None = None, actors: int | None = None,
                 gpus_per_actor: float = 0.0) -> None:
        _import_ray()
        if actors is not None and (isinstance(actors, bool) or not isinstance(actors, int) or actors < 1):
            raise EngineError(f"actors must be a positive integer, got {actors!r}")
        try:
            gpus = float(gpus_per_actor or 0)
        except (TypeError, ValueError):
            gpus = -1.0
        if isinstance(gpus_per_actor, bool) or not gpus >= 0 or gpus == float("inf"):
            raise EngineError(f"--gpus-per-actor must be a number >= 0, got {gpus_per_actor!r}")
        self.actors = actors
        self.gpus_per_actor = gpus
        self.address = address or os.environ.get("RAY_ADDRESS") or None
        self.workers = _workers(workers) if workers is not None or not self.address else 0
        self._started = False
        self._ready = False
        self._failed: EngineError | None = None
        if gpus:
            self._check_gpus()

    def _check_gpus(self) -> None:
        """Connect now and refuse a cluster (or local instance) with fewer GPUs than one actor asks for: Ray would
        wait for them for ever."""
        ray = self._connect()
        have = float(ray.cluster_resources().get("GPU", 0) or 0)
        if have >= self.gpus_per_actor:
            return
        where = f"the Ray cluster at {self.address}" if self.address else "the local Ray instance (this machine)"
        self.close()
        raise EngineError(f"--gpus-per-actor {self.gpus_per_actor:g} asks for {self.gpus_per_actor:g} GPU(s) per "
                          f"actor, but {where} has {have:g}: Ray would wait for a GPU for ever. Run on a machine or "
                          "cluster with GPUs (Ray must see them: nvidia-smi, CUDA_VISIBLE_DEVICES), or leave "
                          "--gpus-per-actor at 0 (the neural metrics then run on the actors' CPUs)")

    def _connect(self):
        ray = _import_ray()
        if self._failed is not None:
            raise self._failed
        if self._ready:
            return ray
        try:
            if not ray.is_initialized():
                why = _unreachable(self.address) if self.address else None
                if why:
                    raise ConnectionError(f"nothing answers there ({why})")
                # the workers compute in this process's numeric mode: its variables are set before they load torch
                # and the device settings of --device/--dtype (metrics.device), which a GPU actor resolves there
                carried = {k: os.environ[k] for k in ("META_EVAL_DEVICE", "META_EVAL_DTYPE") if os.environ.get(k)}
                runtime_env = {"env_vars": {**numeric.worker_env(), **carried}}
                if self.address:
                    ray.init(address=self.address, log_to_driver=False, logging_level=logging.WARNING,
                             runtime_env=runtime_env)
                else:
                    paths = [p for p in sys.path if p]  # the workers import what this process imports
                    # "local": a new instance of its own; with no address Ray would join the newest `ray start`
                    # cluster on this machine (and refuse num_cpus there)
                    ray.init(address="local", num_cpus=self.workers, include_dashboard=False, log_to_driver=False,
                             logging_level=logging.WARNING, runtime_env=runtime_env,
                             job_config=ray.job_config.JobConfig(code_search_path=paths))
                self._started = True
        except Exception as exc:
            what = f"connect to the Ray cluster at {self.address}" if self.address else "start a local Ray instance"
            hint = ""
            answered = not (isinstance(exc, ConnectionError) and str(exc).startswith("nothing answers"))
            if self.address and answered and os.environ.get("RAY_AUTH_MODE") != "token":
                hint = ("; a cluster started by `ray start` uses token authentication: set RAY_AUTH_MODE=token, with "
                        "the head's token in ~/.ray/auth_token (or RAY_AUTH_TOKEN)")
            self._failed = EngineError(f"could not {what}: {type(exc).__name__}: {exc}{hint}")
            raise self._failed from None
        if not self.workers:
            self.workers = max(1, int(ray.cluster_resources().get("CPU", 1)))
        self._ready = True
        return ray

    def score_batches(self, metric, batches):
        if not batches:
            return
        blob, why = _pickled(metric, workers_import_main=False)  # Ray's workers run their own __main__
        if blob is None:
            _in_driver_warning(metric, why)
            yield from InProcess().score_batches(metric, batches)
            return
        ray = self._connect()
        mode = numeric.current_mode()
        single = getattr(metric, "parallel", "process") != "process"
        actors: list = []
        if single:
            cluster_gpus = float(ray.cluster_resources().get("GPU", 0) or 0)
            gpus = actor_options(metric, self.gpus_per_actor, cluster_gpus)["num_gpus"]
            count = self.actors or (max(1, int(cluster_gpus // gpus)) if gpus else 1)
            count = max(1, min(count, len(batches)))
            # a local instance runs one metric at a time: its actors share every CPU (as the local engine's driver);
            # on a cluster an actor takes one CPU of a node (and its GPUs)
            cpus = 1 if self.address else max(1, self.workers // count)
            options = actor_options(metric, self.gpus_per_actor, cluster_gpus, cpus)
            actors = [ray.remote(**options)(_MetricActor).remote(blob, cpus, mode) for _ in range(count)]
            # slot k: actor k % count; a finished batch's slot takes the next batch, so a free actor gets work
            submit = lambda batch, slot: actors[slot % count].score.remote(batch)  # noqa: E731
            window = _INFLIGHT * count  # per actor: one batch running, one queued
        else:
            token = hashlib.sha256(blob).hexdigest()
            blob_ref = [ray.put(blob)]  # in a list: Ray does not resolve it, a worker fetches it once
            task = ray.remote(num_cpus=1)(_ray_task)
            submit = lambda batch, slot: task.remote(token, blob_ref, batch, mode)  # noqa: E731
            window = _INFLIGHT * self.workers
        pending: dict = {}  # ref -> (batch index, slot)
        queue = iter(enumerate(batches))
        done_ok = False
        try:
            for slot, (i, batch) in zip(range(window), queue):
                pending[submit(batch, slot)] = (i, slot)
            while pending:
                ready, _ = ray.wait(list(pending), num_returns=1)
                ref = ready[0]
                index, slot = pending.pop(ref)
                scores = self._result(ray, ref, f"scoring {metric.name}")
                nxt = next(queue, None)
                if nxt is not None:
                    pending[submit(nxt[1], slot)] = (nxt[0], slot)
                yield index, scores
            done_ok = True
        finally:
            if not done_ok:
                for ref in pending:
                    try:
                        ray.cancel(ref, force=not actors)
                    except Exception:  # already finished or its worker gone: nothing to cancel
                        pass
            for actor in actors:
                ray.kill(actor)

    def signature(self, metric):
        """With GPU actors for ``metric``: its signature as a one-off actor with the same resources computes it
        (``device=auto`` is that GPU there, whatever the driver has); otherwise this process's."""
        single = getattr(metric, "parallel", "process") != "process"
        blob = (_pickled(metric, workers_import_main=False)[0] if single and self.gpus_per_actor > 0
                and gpu_metric(metric) else None)
        if blob is None:
            return metric.signature()
        ray = self._connect()
        options = actor_options(metric, self.gpus_per_actor, float(ray.cluster_resources().get("GPU", 0) or 0))
        actor = ray.remote(**options)(_MetricActor).remote(blob, 1, numeric.current_mode())
        try:
            return ray.get(actor.signature.remote())
        except ray.exceptions.RayTaskError as exc:
            cause = getattr(exc, "cause", None)
            if isinstance(cause, Exception) and not isinstance(cause, ray.exceptions.RayError):
                raise cause from exc
            raise
        finally:
            ray.kill(actor)

    def map_chunks(self, fn, shared, tasks):
        if len(tasks) < 2:
            yield from super().map_chunks(fn, shared, tasks)
            return
        ray = self._connect()
        blob = pickle.dumps(tuple(shared), protocol=pickle.HIGHEST_PROTOCOL)
        token, blob_ref = hashlib.sha256(blob).hexdigest(), [ray.put(blob)]
        task = ray.remote(num_cpus=1)(_ray_chunk)
        pending: dict = {}
        queue = iter(enumerate(tasks))
        what = f"resampling ({getattr(fn, '__name__', 'chunk')})"
        done_ok = False
        try:
            for i, args in queue:
                pending[task.remote(token, blob_ref, fn, args)] = i
                if len(pending) >= _INFLIGHT * self.workers:
                    break
            while pending:
                ready, _ = ray.wait(list(pending), num_returns=1)
                index = pending.pop(ready[0])
                result = self._result(ray, ready[0], what)
                nxt = next(queue, None)
                if nxt is not None:
                    pending[task.remote(token, blob_ref, fn, nxt[1])] = nxt[0]
                yield index, result
            done_ok = True
        finally:
            if not done_ok:
                for ref in pending:
                    try:
                        ray.cancel(ref, force=True)
                    except Exception:  # already finished or its worker gone: nothing to cancel
                        pass

    @staticmethod
    def _result(ray, ref, what: str):
        """``ray.get(ref)``, with the metric's own exception raised again as it was raised in the worker."""
        try:
            return _unpack(ray.get(ref))
        except ray.exceptions.RayTaskError as exc:
            cause = getattr(exc, "cause", None)
            if isinstance(cause, Exception) and not isinstance(cause, ray.exceptions.RayError):
                raise cause from exc
            raise
        except (ray.exceptions.RayActorError, ray.exceptions.WorkerCrashedError, ray.exceptions.NodeDiedError,
                ray.exceptions.ObjectLostError) as exc:
            saved = "; the finished batches are in the cache: rerun to resume" if what.startswith("scoring") else ""
            raise WorkerLostError(f"a Ray worker died while {what} ({type(exc).__name__}){saved}") from exc

    def close(self) -> None:
        if self._started:
            import ray

            ray.shutdown()
            self._started = self._ready = False


def make_engine(name: str = "local", workers: int | None = None, address: str | None = None,
                actors: int | None = None, gpus_per_actor: float = 0.0) -> Engine:
    """The engine called ``name`` (``local`` or ``ray``); ``address``, ``actors`` and ``gpus_per_actor`` are for
    ``ray`` only.

    ``local`` with one worker is :class:`InProcess`, today's path exactly.

    Raises
    ------
    EngineError
        An unknown engine name, a worker count below 1, ``address``, ``actors`` or ``gpus_per_actor`` with
        ``local``, Ray not installed, or fewer GPUs than ``gpus_per_actor`` asks for.
    """
    if name not in ENGINES:
        raise EngineError(f"unknown engine {name!r}; choose one of {', '.join(ENGINES)}")
    if name == "ray":  # a local Ray instance runs on this machine's cores; a cluster's are elsewhere
        return RayEngine(workers if address or os.environ.get("RAY_ADDRESS") else _workers(workers, cap=True),
                         address, actors, gpus_per_actor)
    if address:
        raise EngineError("--address is the Ray cluster's address: it needs --engine ray")
    if actors is not None:
        raise EngineError("--actors counts Ray actors: it needs --engine ray (the local engine runs a neural metric "
                          "in its driver with --workers threads)")
    if gpus_per_actor:
        raise EngineError("--gpus-per-actor gives Ray actors GPUs: it needs --engine ray (the local engine runs a "
                          "neural metric in this process: choose its GPU with --device)")
    count = _workers(workers, cap=True)
    return InProcess() if count == 1 else LocalEngine(count)


@contextmanager
def engine_for(engine="local", workers: int | None = None, address: str | None = None,
               actors: int | None = None, gpus_per_actor: float = 0.0) -> Iterator[Engine]:
    """The engine a job scores on: an :class:`Engine` given as an object is used as is and left open; a name
    (``local``, ``ray``) makes one with ``workers``/``address``/``actors``/``gpus_per_actor``
    (:func:`make_engine`), closed when the job ends. A bad choice raises :class:`~meta_eval.errors.MetaEvalError`
    before any work."""
    from meta_eval.errors import MetaEvalError

    if isinstance(engine, Engine):
        yield engine
        return
    try:
        made = make_engine(engine, workers, address, actors, gpus_per_actor)
    except EngineError as exc:
        raise MetaEvalError(str(exc)) from None
    try:
        yield made
    finally:
        made.close()
