"""When each step of a scoring run starts and ends on the driver's clock (issue #37): where a GPU run's wall time goes.

A profile sums time by function; it does not say which steps overlap, nor what the driver waits for between the
metrics. :func:`traced` wraps the run's steps (creating the metrics, handing the CPU metrics to the workers, which
starts a local engine's pool, each metric's scoring, the beside metrics' finish, releasing resources, closing the
engine, the provenance record) and, inside the neural metrics,
their phases (loading a model, tokenizing, the forward passes, BERTScore's matching, the movers' transports), and
records each call's start and end in seconds from :func:`traced`'s entry, on the thread that called it::

    with traced() as steps:
        meta_eval.score("all", examples=rows, ...)
    print("\\n".join(lines(steps)))

Nothing of the run changes but the clocks read around the wrapped calls (a few microseconds each). Used by
``bench/bench_gpu.py``'s ``-m all`` jobs (``timeline`` in its JSON, and its table) and ``bench/gpu_proxy.py``.
"""
from __future__ import annotations

import contextlib
import functools
import gc
import importlib
import inspect
import threading
import time
from typing import Callable, Iterator

#: (module, attribute path, how the step is named from its arguments) of every step traced.
STEPS: list[tuple[str, str, Callable[..., str]]] = [
    ("meta_eval.scoring.selection", "choose_metrics", lambda *a, **k: "choose and create the metrics"),
    ("meta_eval.scoring.runner", "_prepare", lambda metric, *a, **k: f"prepare {metric.name}"),
    ("meta_eval.scoring.runner", "score_examples", lambda metric, *a, **k: f"score {metric.name}"),
    ("meta_eval.scoring.runner", "_Beside.finish", lambda self, job, *a, **k: f"finish {job.metric.name} (beside)"),
    ("meta_eval.scoring.runner", "release_done", lambda metric, *a, **k: f"release after {metric.name}"),
    ("meta_eval.scoring.engines", "LocalEngine.submit_batches",
     lambda self, metric, *a, **k: f"hand {metric.name} to the workers"),
    ("meta_eval.scoring.engines", "LocalEngine.idle", lambda self, remaining, *a, **k: "engine idle"),
    ("meta_eval.scoring.engines", "LocalEngine.close", lambda *a, **k: "close the engine (workers stop)"),
    ("meta_eval.provenance", "record", lambda *a, **k: "provenance record"),
    # inside the neural metrics: where a metric's clock goes (several calls of one step are shown as one line)
    ("meta_eval.metrics.encoder", "_load_encoder", lambda *a, **k: "  load an encoder (shared, or MoverScore's)"),
    ("meta_eval.metrics.encoder", "Encoder._pieces_of", lambda *a, **k: "  tokenize (encoder)"),
    ("meta_eval.metrics.encoder", "Encoder._padded_pass", lambda *a, **k: "  padded forward passes (encoder)"),
    ("meta_eval.metrics.bertscore", "_load", lambda *a, **k: "  load BERTScore's model"),
    ("meta_eval.metrics.bertscore", "BertScore._embeddings", lambda *a, **k: "  encode (BERTScore, CPU path)"),
    ("meta_eval.metrics.bertscore", "BertScore._gpu_embeddings", lambda *a, **k: "  encode (BERTScore, GPU path)"),
    ("meta_eval.metrics.bertscore", "_gpu_pair_scores", lambda *a, **k: "  greedy matching (BERTScore, GPU)"),
    ("meta_eval.metrics.moverscore", "mover_distances",
     lambda *a, **k: "  transports and their point sets (MoverScore)"),
    ("meta_eval.metrics.contextual_mover", "mover_distances",
     lambda *a, **k: "  transports and their point sets (contextual movers)"),
    ("meta_eval.metrics.bertlm", "MaskedLM.__init__", lambda *a, **k: "  load the masked LM (BERT-LM)"),
    # imports a first call makes inside a metric's clock: POT's pulls scikit-learn in (ot.lowrank imports
    # sklearn.cluster), NLTK's too where POT has not (nltk.classify), so they are told apart from the work around them
    ("meta_eval.metrics.transport", "import_ot", lambda *a, **k: "  import POT (the transports' first call)"),
    ("meta_eval.metrics.text", "_sentence_splitter", lambda *a, **k: "  sentence splitter (the first call imports NLTK)"),
    ("meta_eval.metrics.memo", "return_free_memory", lambda *a, **k: "  hand free memory back (malloc_trim)"),
    ("gc", "freeze", lambda *a, **k: "  gc.freeze (the runner's long-lived heap)"),
]

#: ``$TIMELINE_HEAP=1``: each full collection also counts the objects it walked (``gc.get_objects``, slow: for
#: finding out why a collection is slow, not for timing a run)
HEAP_ENV = "TIMELINE_HEAP"


@contextlib.contextmanager
def traced(steps: list[tuple[str, str, Callable[..., str]]] | None = None) -> Iterator[list[dict]]:
    """Record every call of ``steps`` (default :data:`STEPS`) while the block runs, as dicts ``{"step", "thread",
    "start", "end"}`` (seconds since the block began) in the yielded list, and after the block one entry per
    generation of Python's garbage collector that ran (``{"step": "garbage collection, generation G (N runs)",
    "seconds"}``, from :data:`gc.callbacks`), and each full collection (generation 2) as a step of its own, named
    by the objects frozen at its start (:func:`gc.get_freeze_count`: those it does not walk), the objects it freed
    and, with ``$TIMELINE_HEAP=1``, the objects it walked; the originals are put back after."""
    import os

    heap = os.environ.get(HEAP_ENV) == "1"
    start = time.perf_counter()
    calls: list[dict] = []
    collections: dict[int, list[float]] = {}
    began: list[float] = []
    frozen: list[int] = []

    def watch(phase: str, info: dict) -> None:
        if phase == "start":
            frozen.append(gc.get_freeze_count() if info["generation"] == 2 else 0)  # it walks the frozen objects:
            began.append(time.perf_counter())  # read before the clock starts
        elif began:
            t0 = began.pop()
            end = time.perf_counter()
            collections.setdefault(info["generation"], []).append(end - t0)
            held = frozen.pop()
            if info["generation"] == 2:
                walked = f", {sum(len(gc.get_objects(g)) for g in range(3)):,} walked" if heap else ""
                calls.append({"step": f"  full collection ({held:,} frozen, {info['collected']:,} freed{walked})",
                              "thread": threading.current_thread().name, "start": t0 - start, "end": end - start})

    undo = []
    for module_name, path, name in steps or STEPS:
        owner = importlib.import_module(module_name)
        *outer, attr = path.split(".")
        for part in outer:
            owner = getattr(owner, part)
        original = owner.__dict__[attr]
        undo.append((owner, attr, original))
        setattr(owner, attr, _wrap(original, name, start, calls))
    from meta_eval.scoring.engines import LocalEngine  # where the batches beside finish, on a line of their own

    undo.append((LocalEngine, "submit_batches", LocalEngine.__dict__["submit_batches"]))
    LocalEngine.submit_batches = _finished_beside(LocalEngine.submit_batches, start, calls)
    gc.callbacks.append(watch)
    try:
        yield calls
    finally:
        gc.callbacks.remove(watch)
        for owner, attr, original in reversed(undo):
            setattr(owner, attr, original)
        calls += [{"step": f"garbage collection, generation {g} ({len(t)} runs)", "seconds": sum(t)}
                  for g, t in sorted(collections.items())]


def _wrap(original, name, start, calls):
    if inspect.isgeneratorfunction(original):  # from the call to the last item taken
        def items(entry, produced):
            try:
                yield from produced
            finally:
                entry["end"] = time.perf_counter() - start
                calls.append(entry)

        @functools.wraps(original)
        def timed_items(*args, **kwargs):
            entry = {"step": name(*args, **kwargs), "thread": threading.current_thread().name,
                     "start": time.perf_counter() - start}
            return items(entry, original(*args, **kwargs))
        return timed_items

    @functools.wraps(original)  # the signature kept: the registry and the runner read some
    def timed(*args, **kwargs):
        entry = {"step": name(*args, **kwargs), "thread": threading.current_thread().name,
                 "start": time.perf_counter() - start}
        try:
            return original(*args, **kwargs)
        finally:
            entry["end"] = time.perf_counter() - start
            calls.append(entry)
    for attr in ("cache_clear", "cache_info"):  # an lru_cache's, which the metrics' releases call
        if hasattr(original, attr):
            setattr(timed, attr, getattr(original, attr))
    return timed


def _finished_beside(submit, start, calls):
    """``LocalEngine.submit_batches`` that also records, per metric, a step from the hand-out to the moment its last
    batch finished in the pool (thread ``pool``: not the driver's time, so not counted as covering it), named with
    the pool's size: how long the workers beside kept the cores busy."""
    @functools.wraps(submit)
    def watched(self, metric, *args, **kwargs):
        futures = submit(self, metric, *args, **kwargs)
        if futures:
            size = getattr(getattr(self, "_pool", None), "_max_workers", "?")
            entry = {"step": f"  {metric.name}'s batches in the pool of {size} (handed out to the last finished)",
                     "thread": "pool", "start": time.perf_counter() - start}
            left, lock = [len(futures)], threading.Lock()

            def finished(_future) -> None:
                with lock:
                    left[0] -= 1
                    if left[0] == 0:
                        entry["end"] = time.perf_counter() - start
                        calls.append(entry)
            for future in futures:
                future.add_done_callback(finished)
        return futures
    return watched


def lines(calls: list[dict], total: float | None = None) -> list[str]:
    """The steps in order of their first start, one line each (start, end, seconds, step; the calls of a step made
    more than once on one thread: the first start, the last end, their seconds summed, the count), the time no step
    covers, then the garbage collector's time (which the steps' times include)."""
    timed = sorted((c for c in calls if "start" in c), key=lambda c: c["start"])
    groups: dict[tuple[str, str], list[dict]] = {}
    for c in timed:
        groups.setdefault((c["step"], c["thread"]), []).append(c)
    out = []
    for (step, thread), group in groups.items():  # in order of their first start
        seconds = sum(c["end"] - c["start"] for c in group)
        out.append(f"{group[0]['start']:8.2f} {max(c['end'] for c in group):8.2f} {seconds:7.2f} s  {step}"
                   + ("" if len(group) == 1 else f" ({len(group)} calls)")
                   + ("" if thread == "MainThread" else f"  [{thread}]"))
    if total is not None:
        covered, reach = 0.0, 0.0
        for c in (c for c in timed if c["thread"] != "pool"):  # the union of the driver's intervals
            s, e = max(c["start"], reach), c["end"]
            if e > s:
                covered += e - s
                reach = e
        out.append(f"{total:8.2f} s in all; {total - covered:.2f} s outside every traced step")
    return out + [f"{c['seconds']:25.2f} s  {c['step']}" for c in calls if "start" not in c]
