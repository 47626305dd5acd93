"""Retrying an SQLite step that fails at once with "database is locked" although a busy timeout is set.

SQLite waits for another connection's lock (``timeout=`` of :func:`sqlite3.connect`, ``PRAGMA busy_timeout``) for
most statements, but not for every one: ``PRAGMA journal_mode=WAL`` fails at once with SQLITE_BUSY while another
connection holds the file's write (RESERVED) lock or is switching it too (SQLite 3.40 here: four processes opening
new files at once with a bare switch, 37 opens of 240 failed so; six processes opening one new score cache, 2 of
600, when one took the write lock between another's schema and its switch). Both meta-eval files that
several processes share (the score cache, :mod:`meta_eval.scoring.cache`; the LLM judge's answer store,
:mod:`metrics.llm_judge`, written by Ray actors at once) make such steps through :func:`retry_busy`.

Examples
--------
>>> import sqlite3
>>> from meta_eval.metrics.sqlite_busy import retry_busy
>>> conn = sqlite3.connect(":memory:")
>>> retry_busy(lambda: conn.execute("PRAGMA journal_mode=WAL").fetchone()[0])  # an in-memory file keeps "memory"
'memory'
"""
from __future__ import annotations

import sqlite3
import time
from typing import Callable, TypeVar

__all__ = ["BUSY_CODES", "is_busy", "primary_code", "retry_busy"]

#: SQLITE_BUSY and SQLITE_LOCKED: the primary result codes of "database is locked" / "database table is locked"
BUSY_CODES = frozenset({5, 6})

T = TypeVar("T")


def primary_code(exc: sqlite3.Error) -> int:
    """SQLite's primary result code of ``exc`` (an extended code carries it in its low byte; 0 when unknown)."""
    return (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF


def is_busy(exc: sqlite3.Error) -> bool:
    """Whether ``exc`` is SQLITE_BUSY or SQLITE_LOCKED (any extended code of them)."""
    return primary_code(exc) in BUSY_CODES


def retry_busy(step: Callable[[], T], wait: float = 30.0) -> T:
    """Run ``step`` until it does not fail with SQLITE_BUSY/LOCKED, for up to ``wait`` seconds; return its value.

    The pauses between tries double from 5 ms up to 250 ms. Any other error, and the last busy error once ``wait``
    seconds have passed, is raised. ``step`` must leave no transaction open when it fails (roll back its own)."""
    deadline = time.monotonic() + wait
    pause = 0.005
    while True:
        try:
            return step()
        except sqlite3.OperationalError as exc:
            if not is_busy(exc) or time.monotonic() + pause > deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.25)
