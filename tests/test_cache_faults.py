"""Faults of the score cache (meta_eval/scoring/cache.py), with real SQLite files and real processes, no mocks.

What is refused untouched (a folder, a non-SQLite file, another program's SQLite database, a damaged file that is not
provably meta-eval's), what is opened read-only (chmod a-w file, read-only folder), what is moved aside (only a
corrupt meta-eval cache), damaged rows (dropped, recomputed, one warning), a lock held longer than SQLite's default
5 s (waited for, never taken for corruption) and six processes opening one fresh cache at once.
"""
from __future__ import annotations

import contextlib
import json
import sqlite3
import stat
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from meta_eval.scoring.cache import CacheError, ScoreCache, example_key  # noqa: E402
from meta_eval.scoring.runner import score_examples  # noqa: E402
from meta_eval.metrics.base import Example, Metric  # noqa: E402


class LengthMetric(Metric):
    """``len(candidate)``, counting what it scores (never registered)."""

    name = "test-faults-length"
    variants = ("len",)

    def __init__(self):
        self.scored = []

    def config(self):
        return {}

    def _score(self, examples):
        self.scored.extend(ex.candidate for ex in examples)
        return {"len": [float(len(ex.candidate)) for ex in examples]}


def _examples(n):
    return [Example(f"candidate {'x' * i}", (f"reference {i}",)) for i in range(n)]


def _listing(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def _make_cache(path: Path, n: int = 3000) -> None:
    with ScoreCache(path) as cache:
        cache.put_many("sig", {f"k{i}": {"a": i / 7} for i in range(n)})


def _clobber(path: Path, start: int, stop: int) -> bytes:
    """Overwrite bytes [start, stop) with a pattern; return the damaged file's bytes."""
    data = bytearray(path.read_bytes())
    assert len(data) >= stop
    data[start:stop] = bytes((0xAB if i % 3 else 0x11) for i in range(start, stop))
    path.write_bytes(bytes(data))
    return bytes(data)


@pytest.fixture
def restore_modes():
    """chmod'ed paths get their write bits back, so that tmp_path can be cleaned."""
    paths = []
    yield paths
    for p in reversed(paths):
        if p.exists():
            p.chmod(p.stat().st_mode | stat.S_IWUSR)


@contextlib.contextmanager
def _no_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


# -- refused, never touched ------------------------------------------------------------------------------------------

def test_a_folder_is_refused_and_not_moved(tmp_path):
    folder = tmp_path / "mycache"
    folder.mkdir()
    (folder / "notes.txt").write_text("keep me")
    with pytest.raises(ValueError) as info:
        ScoreCache(folder)
    assert isinstance(info.value, CacheError)
    assert str(folder) in str(info.value) and "file path" in str(info.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mycache"]
    assert _listing(folder) == {"notes.txt": b"keep me"}


@pytest.mark.parametrize("content", [
    b"my precious notes\nline two\n" * 200,  # a text file given by mistake
    b"SQLite",  # shorter than the header
    b"SQLite format 2\x00" + b"\x00" * 4000,  # almost the header
], ids=["text", "short", "near-header"])
def test_a_file_that_is_not_sqlite_is_left_untouched(tmp_path, content):
    path = tmp_path / "scores.sqlite"
    path.write_bytes(content)
    with pytest.raises(CacheError, match="not an SQLite database") as info:
        ScoreCache(path)
    assert str(path) in str(info.value)
    assert _listing(tmp_path) == {"scores.sqlite": content}


def test_an_empty_file_becomes_a_cache(tmp_path):
    """SQLite reads an empty file as an empty database: it becomes the cache (nothing to lose)."""
    path = tmp_path / "scores.sqlite"
    path.touch()
    with _no_warnings():
        with ScoreCache(path) as cache:
            cache.put_many("s", {"k": {"v": 1.0}})
        with ScoreCache(path) as cache:
            assert cache.get_many("s", ["k"]) == {"k": {"v": 1.0}}


def test_another_programs_sqlite_database_is_left_untouched(tmp_path):
    path = tmp_path / "people.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE people (name TEXT)")
    conn.execute("INSERT INTO people VALUES ('ada')")
    conn.commit()
    conn.close()
    before = _listing(tmp_path)
    with pytest.raises(CacheError, match="not a meta-eval score cache") as info:
        ScoreCache(path)
    assert str(path) in str(info.value)
    assert _listing(tmp_path) == before


def test_a_damaged_database_not_provably_ours_is_left_untouched(tmp_path):
    """The header is SQLite's but page 1 (the schema) is garbage and there is no meta-eval application id."""
    path = tmp_path / "people.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE people (name TEXT)")
    conn.executemany("INSERT INTO people VALUES (?)", [(f"person {i}" * 20,) for i in range(500)])
    conn.commit()
    conn.close()
    damaged = _clobber(path, 100, 4096)
    with pytest.raises(CacheError, match="cannot be proven") as info:
        ScoreCache(path)
    assert str(path) in str(info.value)
    assert _listing(tmp_path) == {"people.db": damaged}


# -- read-only -------------------------------------------------------------------------------------------------------

def test_a_read_only_file_is_used_read_only(tmp_path, restore_modes):
    """chmod 0444: honoured also by root (who could write it), so this runs the same as root or not."""
    path = tmp_path / "scores.sqlite"
    examples = _examples(6)
    with ScoreCache(path) as cache:
        score_examples(LengthMetric(), examples[:4], cache)
    frozen = path.read_bytes()
    path.chmod(0o444)
    restore_modes.append(path)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        with ScoreCache(path) as cache:
            assert cache.read_only
            metric = LengthMetric()
            out = score_examples(metric, examples, cache, batch_size=1)  # two puts: both skipped
            assert sorted(metric.scored) == sorted(ex.candidate for ex in examples[4:])
            assert (out.computed, out.cached) == (2, 4)
            np.testing.assert_array_equal(out.scores["len"], [len(ex.candidate) for ex in examples])
            assert cache.count() == 4
    messages = [str(w.message) for w in record]
    assert len(messages) == 1, messages
    assert str(path) in messages[0] and "not be saved" in messages[0]
    assert path.read_bytes() == frozen
    assert not list(tmp_path.glob("*.corrupt-*"))


def test_a_read_only_folder(tmp_path, restore_modes):
    """An existing cache in a chmod 0555 folder is read; a new one there falls back to memory (one warning)."""
    folder = tmp_path / "ro"
    folder.mkdir()
    path = folder / "scores.sqlite"
    with ScoreCache(path) as cache:
        cache.put_many("sig", {"a": {"v": 1.0}})
    before = _listing(folder)
    folder.chmod(0o555)
    restore_modes.append(folder)
    with pytest.warns(RuntimeWarning, match="not be saved"):
        cache = ScoreCache(path)
    with cache:
        assert cache.read_only
        assert cache.get_many("sig", ["a", "b"]) == {"a": {"v": 1.0}}
        cache.put_many("sig", {"b": {"v": 2.0}})
        assert cache.get_many("sig", ["b"]) == {}
    assert _listing(folder) == before

    new = folder / "new.sqlite"
    with pytest.warns(RuntimeWarning, match="in memory") as record:
        cache = ScoreCache(new)
    assert str(new) in str(record[0].message)
    with cache:
        cache.put_many("sig", {"b": {"v": 2.0}})
        assert cache.get_many("sig", ["b"]) == {"b": {"v": 2.0}}
    assert not new.exists()
    assert _listing(folder) == before


# -- corrupt meta-eval caches: moved aside, a new one works ------------------------------------------------------------

def _legacy_cache(path: Path, n: int = 3000) -> None:
    """A cache as written before the application id existed: only the meta row says it is meta-eval's."""
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.executescript("""
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE signatures (id INTEGER PRIMARY KEY, signature TEXT UNIQUE NOT NULL);
        CREATE TABLE scores (sig INTEGER NOT NULL, key TEXT NOT NULL, payload TEXT NOT NULL,
                             PRIMARY KEY (sig, key)) WITHOUT ROWID;
        INSERT INTO meta VALUES ('schema', '1');
        INSERT INTO signatures (signature) VALUES ('sig');
    """)
    conn.executemany("INSERT INTO scores VALUES (1, ?, ?)", ((f"k{i}", json.dumps({"a": i / 7})) for i in range(n)))
    conn.commit()
    conn.close()


def test_a_healthy_legacy_cache_is_used_and_marked(tmp_path):
    path = tmp_path / "scores.sqlite"
    _legacy_cache(path, n=20)
    with _no_warnings(), ScoreCache(path) as cache:
        assert cache.get_many("sig", ["k7"]) == {"k7": {"a": 1.0}}
        assert cache.count() == 20
    assert path.read_bytes()[68:72] == b"MEVC"


@pytest.mark.parametrize("kind", ["data-page", "schema-page", "legacy-data-page"])
def test_a_corrupt_meta_eval_cache_is_moved_aside(tmp_path, kind):
    path = tmp_path / "scores.sqlite"
    if kind.startswith("legacy"):
        _legacy_cache(path)
        assert path.read_bytes()[68:72] == bytes(4)
    else:
        _make_cache(path)
        assert path.read_bytes()[68:72] == b"MEVC"
    # page 1 holds the schema; damaging it leaves only the application id to prove the file is meta-eval's
    damaged = _clobber(path, 100, 4096) if kind == "schema-page" else _clobber(path, 3 * 4096, 5 * 4096)
    with pytest.warns(RuntimeWarning, match="corrupt meta-eval cache") as record:
        cache = ScoreCache(path)
    assert str(path) in str(record[0].message)
    with cache:
        assert cache.count() == 0
        cache.put_many("sig", {"k": {"a": 1.0}})
    moved = list(tmp_path.glob("scores.sqlite.corrupt-*"))
    assert len(moved) == 1 and moved[0].read_bytes() == damaged
    with _no_warnings(), ScoreCache(path) as again:
        assert again.get_many("sig", ["k"]) == {"k": {"a": 1.0}}


def test_a_cache_of_another_schema_version_is_left_untouched(tmp_path):
    path = tmp_path / "scores.sqlite"
    _make_cache(path, n=5)
    conn = sqlite3.connect(path)
    conn.execute("UPDATE meta SET value = '2' WHERE key = 'schema'")
    conn.commit()
    conn.close()
    before = _listing(tmp_path)
    with pytest.raises(CacheError, match="schema '2'"):
        ScoreCache(path)
    assert _listing(tmp_path) == before


def test_a_corrupt_cache_in_a_read_only_folder_stays_and_memory_is_used(tmp_path, restore_modes):
    folder = tmp_path / "ro"
    folder.mkdir()
    path = folder / "scores.sqlite"
    _make_cache(path)
    _clobber(path, 3 * 4096, 5 * 4096)
    before = _listing(folder)
    folder.chmod(0o555)
    restore_modes.append(folder)
    with pytest.warns(RuntimeWarning, match="left in place") as record:
        cache = ScoreCache(path)
    assert str(path) in str(record[0].message)
    with cache:
        assert cache.count() == 0
        cache.put_many("sig", {"k": {"a": 1.0}})
        assert cache.get_many("sig", ["k"]) == {"k": {"a": 1.0}}
    assert _listing(folder) == before


# -- damaged rows ----------------------------------------------------------------------------------------------------

BAD_PAYLOADS = ['{"len": 12.0', "not json", "null", "[1.0]", '{"len": "twelve"}', '{"len": NaN}',
                '{"len": Infinity}', '{"len": true}', "{}"]


def test_damaged_rows_are_dropped_and_recomputed(tmp_path):
    path = tmp_path / "scores.sqlite"
    n = len(BAD_PAYLOADS) + 3
    examples = _examples(n)
    with ScoreCache(path) as cache:
        first = score_examples(LengthMetric(), examples, cache)
    conn = sqlite3.connect(path)
    for ex, payload in zip(examples, BAD_PAYLOADS):
        conn.execute("UPDATE scores SET payload = ? WHERE key = ?", (payload, example_key(ex)))
    conn.commit()
    conn.close()

    metric = LengthMetric()
    with ScoreCache(path) as cache:
        with pytest.warns(RuntimeWarning, match=f"dropped {len(BAD_PAYLOADS)} damaged row") as record:
            out = score_examples(metric, examples, cache)
        assert cache.count() == n  # recomputed rows stored again
    assert str(path) in str(record[0].message)
    assert sorted(metric.scored) == sorted(ex.candidate for ex in examples[:len(BAD_PAYLOADS)])
    assert (out.computed, out.cached) == (len(BAD_PAYLOADS), 3)
    np.testing.assert_array_equal(out.scores["len"], first.scores["len"])
    with _no_warnings(), ScoreCache(path) as cache:  # repaired: nothing dropped, nothing computed
        metric = LengthMetric()
        out = score_examples(metric, examples, cache)
        assert metric.scored == [] and out.cached == n


def test_non_finite_scores_are_not_stored():
    with ScoreCache() as cache:
        cache.put_many("s", {"a": {"v": float("nan")}, "b": {"v": float("inf")}, "c": {"v": 2.0}})
        assert cache.count() == 1
        assert cache.get_many("s", ["a", "b", "c"]) == {"c": {"v": 2.0}}


# -- locks and concurrency -------------------------------------------------------------------------------------------

_HOLD_LOCK = """
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN EXCLUSIVE")
conn.execute("INSERT OR IGNORE INTO meta VALUES ('held', 'yes')")
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
conn.execute("COMMIT")
"""


def test_a_lock_held_longer_than_sqlites_default_is_waited_for(tmp_path):
    """Another process holds the write lock 6.5 s (more than sqlite3's default 5 s timeout): the cache waits
    (busy_timeout 30 s), never takes "database is locked" for corruption, and moves nothing."""
    path = tmp_path / "scores.sqlite"
    _make_cache(path, n=10)
    holder = subprocess.Popen([sys.executable, "-c", _HOLD_LOCK, str(path), "6.5"], stdout=subprocess.PIPE,
                              text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        start = time.monotonic()
        with _no_warnings(), ScoreCache(path) as cache:
            cache.put_many("sig", {"new": {"a": 1.0}})
            waited = time.monotonic() - start
            assert cache.count() == 11
        assert waited > 4.0, waited  # really blocked: the lock was held while the cache opened
        assert holder.wait(timeout=30) == 0
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()
        holder.stdout.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["scores.sqlite"]


def test_the_switch_to_wal_waits_for_a_write_lock_it_would_not_wait_for(tmp_path, monkeypatch):
    """SQLite's switch to WAL fails at once, without the busy timeout, while another connection holds the write
    (RESERVED) lock: six processes opening one new cache met it (2 opens in 600) when one took the lock between
    another's schema and its switch. Here another connection takes it at that moment and gives it back 1 s later: the
    open retries the switch and goes on (before, it raised at once that the cache "stayed locked for 30 s")."""
    import threading

    path = tmp_path / "scores.sqlite"
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    create_schema = ScoreCache._create_schema
    held = []

    def schema_then_another_takes_the_lock(self, conn, app_id):
        state = create_schema(self, conn, app_id)
        holder.execute("BEGIN IMMEDIATE")
        bare = sqlite3.connect(path, timeout=30)
        start = time.monotonic()
        with pytest.raises(sqlite3.OperationalError, match="locked"):  # what the open met: no wait at all
            bare.execute("PRAGMA journal_mode=WAL")
        held.append(time.monotonic() - start)
        bare.close()
        threading.Timer(1.0, holder.execute, ("COMMIT",)).start()
        return state

    monkeypatch.setattr(ScoreCache, "_create_schema", schema_then_another_takes_the_lock)
    start = time.monotonic()
    with _no_warnings(), ScoreCache(path) as cache:
        waited = time.monotonic() - start
        cache.put_many("sig", {"k": {"a": 1.0}})
        assert cache.count() == 1
    holder.close()
    assert held and held[0] < 5, held
    assert 0.9 < waited < 25, waited
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


_WORKER = """
import sys, time
from meta_eval.scoring.cache import ScoreCache
path, me, start = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
while time.time() < start:
    pass
with ScoreCache(path) as cache:
    for r in range(60):  # 60 new signatures that all six insert at about the same moment
        shared = {f"s{r}-{i}": {"v": float(i + r)} for i in range(4)}
        cache.put_many(f"shared-{r}", shared)
        cache.put_many(f"own-{me}", {f"o{r}-{i}": {"v": float(me)} for i in range(4)})
        got = cache.get_many(f"shared-{r}", list(shared))
        assert got == shared, (r, len(got))
    assert cache.count(f"own-{me}") == 240, cache.count(f"own-{me}")
print("ok", me, flush=True)
"""


@pytest.mark.parametrize("trial", [0, 1])
def test_six_processes_open_one_fresh_cache_at_once(tmp_path, trial):
    path = tmp_path / "new" / "scores.sqlite"
    start = time.time() + 2.0  # all six wait for the same instant, after their imports
    procs = [subprocess.Popen([sys.executable, "-c", _WORKER, str(path), str(i), repr(start)], cwd=REPO,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(6)]
    results = [p.communicate(timeout=120) for p in procs]
    for i, ((out, err), proc) in enumerate(zip(results, procs)):
        code = proc.returncode
        assert code == 0 and out.strip() == f"ok {i}", (i, code, err[-2000:])
        assert "Warning" not in err and "Error" not in err, (i, err[-2000:])
    with _no_warnings(), ScoreCache(path) as cache:
        assert all(cache.count(f"shared-{r}") == 4 for r in range(60))
        assert all(cache.count(f"own-{i}") == 240 for i in range(6))
        assert cache.count() == 60 * 4 + 6 * 240
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT COUNT(*), COUNT(DISTINCT signature) FROM signatures").fetchone() == (66, 66)
    conn.close()
    assert sorted(p.name for p in path.parent.iterdir()) == ["scores.sqlite"]
