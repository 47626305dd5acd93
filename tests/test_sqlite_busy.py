"""``metrics.sqlite_busy.retry_busy`` with real SQLite locks: the step SQLite does not wait for (the switch to WAL
while another connection holds the write lock) is retried until the lock is given back, for at most ``wait``
seconds; any other error is raised at the first try."""
from __future__ import annotations

import sqlite3
import threading
import time

import pytest

from meta_eval.metrics.sqlite_busy import is_busy, retry_busy


@pytest.fixture
def held(tmp_path):
    """A rollback-journal file whose write (RESERVED) lock another connection holds; yields (path, holder)."""
    path = tmp_path / "f.sqlite"
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("CREATE TABLE t (x)")
    holder.execute("BEGIN IMMEDIATE")
    yield path, holder
    if holder.in_transaction:
        holder.execute("ROLLBACK")
    holder.close()


def test_switch_waits_until_the_lock_is_given_back(held):
    path, holder = held
    conn = sqlite3.connect(path, timeout=30)
    with pytest.raises(sqlite3.OperationalError) as info:  # SQLite itself does not wait for the busy timeout
        conn.execute("PRAGMA journal_mode=WAL")
    assert is_busy(info.value)
    threading.Timer(0.5, holder.execute, ("COMMIT",)).start()
    start = time.monotonic()
    assert retry_busy(lambda: conn.execute("PRAGMA journal_mode=WAL").fetchone()[0], wait=20) == "wal"
    assert 0.4 < time.monotonic() - start < 15
    conn.close()


def test_gives_up_after_wait_with_the_busy_error(held):
    path, _ = held
    conn = sqlite3.connect(path, timeout=30)
    tries = []

    def step():
        tries.append(time.monotonic())
        return conn.execute("PRAGMA journal_mode=WAL")

    start = time.monotonic()
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        retry_busy(step, wait=0.3)
    assert 0.1 < time.monotonic() - start < 3 and len(tries) >= 3
    assert all(b - a < 0.5 for a, b in zip(tries, tries[1:]))  # pauses of at most 250 ms
    conn.close()


def test_other_errors_are_raised_at_the_first_try():
    conn = sqlite3.connect(":memory:")
    tries = []

    def step():
        tries.append(1)
        return conn.execute("SELEKT 1")

    with pytest.raises(sqlite3.OperationalError, match="syntax"):
        retry_busy(step)
    assert tries == [1]
    assert not is_busy(sqlite3.OperationalError("database is locked"))  # no SQLite code: not taken for busy
