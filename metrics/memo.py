"""Per-process memory of the metrics: a memo of encoded texts bounded in bytes, and releasing what a run is done with.

The neural metrics keep what they computed for a text (the contextual movers: a sentence's kept word vectors;
BERTScore: a text's token embeddings) so that a text shared by rows of different runner batches (a reference of
chaganty's is shared by 3.6 candidates on average) is encoded once per process. A kept value must be exactly what
a fresh computation gives, which holds because :mod:`metrics.encoder` and BERTScore encode every text as if alone
(no padding), so the memo changes only the time, never a score.

A module that keeps a process-wide resource (a loaded model, word vectors, a memo) registers how to forget it with
:func:`on_release`; :func:`release` forgets the named resources and hands the freed memory back. A run releases a
resource once no metric still to run holds it (:attr:`metrics.base.Metric.holds`), so that ``meta-eval run -m all`` over
chaganty keeps BERTScore's model, GloVe and the contextual movers' encoder one after the other, not all at once.
"""
from __future__ import annotations

import gc
from collections import OrderedDict
from contextlib import contextmanager
from threading import Lock
from typing import Callable, Generic, Hashable, Iterable, Iterator, TypeVar

V = TypeVar("V")

__all__ = ["BytesLRU", "handing_back", "on_release", "paused_gc", "release", "return_free_memory"]


class BytesLRU(Generic[V]):
    """A mapping bounded by the bytes of its values (``size_of(value)``); least recently used out first.

    >>> import numpy as np
    >>> memo = BytesLRU(100, lambda a: a.nbytes)
    >>> memo.put("a", np.zeros(10))          # 80 bytes
    >>> memo.put("b", np.zeros(5))           # 40 more: "a" goes
    >>> memo.get("a") is None, memo.get("b").shape, memo.size
    (True, (5,), 40)
    """

    def __init__(self, limit: int, size_of: Callable[[V], int]) -> None:
        if limit < 0:
            raise ValueError(f"limit must be >= 0 bytes, got {limit}")
        self.limit = limit
        self.size_of = size_of
        self.size = 0
        self.items: OrderedDict[Hashable, tuple[V, int]] = OrderedDict()
        self.lock = Lock()

    def get(self, key: Hashable) -> V | None:
        with self.lock:
            found = self.items.get(key)
            if found is None:
                return None
            self.items.move_to_end(key)
            return found[0]

    def put(self, key: Hashable, value: V) -> None:
        """Keep ``value`` (a value larger than the whole limit is not kept)."""
        nbytes = int(self.size_of(value))
        with self.lock:
            if key in self.items or nbytes > self.limit:
                return
            self.items[key] = (value, nbytes)
            self.size += nbytes
            while self.size > self.limit and self.items:
                _, (_, old) = self.items.popitem(last=False)
                self.size -= old

    def clear(self) -> None:
        with self.lock:
            self.items.clear()
            self.size = 0

    def __len__(self) -> int:
        return len(self.items)


_RELEASERS: dict[str, list[Callable[[], None]]] = {}


def on_release(resource: str, forget: Callable[[], None]) -> None:
    """Register ``forget``, which drops this process's copies of ``resource`` (called by :func:`release`).

    Modules register at import, so a resource whose module was never imported has nothing to forget.
    """
    _RELEASERS.setdefault(resource, []).append(forget)


def release(resources: Iterable[str]) -> list[str]:
    """Forget the named resources (see :func:`on_release`) and hand the freed memory back to the system.

    The next use loads them again. Returns the names that had something registered, sorted. Unknown names are
    ignored (a metric may hold a resource whose module was never imported here).

    >>> from meta_eval.metrics.memo import on_release, release
    >>> memo = {"a": 1}
    >>> on_release("doctest-memo", memo.clear)
    >>> release(["doctest-memo", "never-registered"]), memo
    (['doctest-memo'], {})
    """
    import gc

    done = sorted({r for r in resources if r in _RELEASERS})
    for resource in done:
        for forget in _RELEASERS[resource]:
            forget()
    if done:
        gc.collect()  # a model's modules refer to each other: cycles
        return_free_memory()
    return done


def return_free_memory() -> None:
    """Hand the C heap's free pages back to the operating system (glibc's ``malloc_trim(0)``; nothing elsewhere).

    A neural metric's batches allocate and free tensors of ever different shapes (one per length group); glibc keeps
    the freed memory in its heaps, so a process's resident memory grew with every batch: BERTScore over chaganty's
    2,085 rows went from 557 MB loaded to 910 MB, of which ``malloc_trim`` returned 233 MB. The encoder and BERTScore
    call this after each call, which bounds the growth to about one batch's working set. Takes milliseconds.
    """
    global _trim
    if _trim is None:
        import ctypes
        import ctypes.util

        _trim = False
        name = ctypes.util.find_library("c")
        try:
            libc = ctypes.CDLL(name) if name else None
            _trim = getattr(libc, "malloc_trim", False) or False
        except OSError:
            _trim = False
    if _trim:
        _trim(0)


_trim = None


@contextmanager
def paused_gc() -> Iterator[None]:
    """Pause Python's cyclic garbage collector for the block; it runs again as before afterwards.

    For a loop that creates many small containers that reference no cycle (ROUGE's token lists, Counters and memo
    entries): reference counting frees them, and the collector's passes only cost time, the more so as each full
    collection walks every object the process holds (all its imported modules). Measured on chaganty, ROUGE in a
    fresh process: 0.66-0.68 s of CPU with the collector, 0.36-0.39 s with it paused. Cycles made inside the block
    are collected after it. Nested and concurrent blocks are safe: the one that paused the collector restarts it
    (a block in another thread may then end with the collector running, which only costs time).

    >>> import gc
    >>> with paused_gc():
    ...     gc.isenabled()
    False
    >>> gc.isenabled()
    True
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def handing_back(items: Iterable[V], every: int) -> Iterator[V]:
    """``items`` unchanged, with :func:`return_free_memory` after every ``every`` of them have been consumed.

    For a loop whose steps allocate and free buffers of changing sizes (forward passes of one length group after
    another), so the heap it leaves behind stays bounded during the loop, not only after it.

    >>> list(handing_back(range(5), 2))
    [0, 1, 2, 3, 4]
    """
    if every < 1:
        raise ValueError(f"every must be >= 1, got {every}")
    for n, item in enumerate(items, start=1):
        yield item
        if n % every == 0:
            return_free_memory()
