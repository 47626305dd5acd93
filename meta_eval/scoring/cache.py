"""A SQLite cache of metric scores, keyed by metric signature and a hash of the example's texts.

Every batch is committed as soon as it is scored, so a run that is killed loses at most the batch in flight and the
next run resumes from what was saved. The database runs in WAL mode; every connection waits up to 30 s for a lock
held by another process (``PRAGMA busy_timeout``), so several runs can share one cache file.

What is opened, refused, moved and dropped:

* A missing file is created with its folder, in one ``BEGIN IMMEDIATE`` transaction (safe when several processes
  create it at once). The file is marked as meta-eval's: ``PRAGMA application_id`` 0x4D455643 ("MEVC") in the
  SQLite header and a ``meta`` table holding ``('schema', '1')``.
* A path that is a folder, not a regular file, or a file that does not start with the 16-byte SQLite header (a
  text file given by mistake) raises :class:`CacheError`. An SQLite database that is not a meta-eval cache (tables,
  but neither the ``meta`` row nor the application id) raises :class:`CacheError` too, and so does a meta-eval
  cache of another schema version. Such files are never touched.
* A file with no write permission bit (``chmod a-w``, honoured even for root, who could write it), or one the
  process may not write, or in a folder it may not write, is opened read-only (SQLite ``mode=ro``; ``immutable=1``
  when the folder is read-only and there is no ``-wal`` file): lookups work, new scores are not saved (one warning).
  The file's bytes are not changed; in a writable folder SQLite may leave ``-wal``/``-shm`` files beside it.
* A file that cannot be created (its folder is read-only) is replaced by an in-memory cache, with one warning: the
  run goes on, nothing is saved. Chosen over an error because the scores do not depend on the cache.
* The only file ever moved is one PROVEN to be a corrupt meta-eval cache: it starts with the SQLite header, is
  meta-eval's (the application id in its header, or the ``meta`` row readable) and SQLite reports it corrupt
  (``PRAGMA quick_check`` not ``ok``, or SQLITE_CORRUPT / SQLITE_NOTADB while reading it). It is renamed, with its
  ``-wal`` and ``-shm`` files, to ``<name>.corrupt-<time>`` and a new cache is started, with a warning (not moved
  if another process replaced the file meanwhile: same inode checked just before the rename). A damaged
  file whose owner cannot be proven raises :class:`CacheError` and stays where it is; a corrupt cache in a read-only
  folder is left in place and an in-memory cache is used (warning). "database is locked" (SQLITE_BUSY/LOCKED) never
  counts as corrupt: a cache still locked after 30 s raises :class:`CacheError` when opened, and later only costs the
  batch at hand (not saved, or looked up again: warning).
* A row whose payload is not a JSON object of finite numbers is treated as missing (so it is recomputed) and
  deleted when the cache is writable, with a warning naming the file and the number of rows dropped. Entries with a
  non-finite score are not stored.
"""
from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import math
import os
import shutil
import sqlite3
import sys
import time
import warnings
from collections.abc import Iterable, Iterator, Mapping
from contextvars import ContextVar
from pathlib import Path

import platformdirs

from meta_eval.metrics.base import Example
from meta_eval.metrics.sqlite_busy import BUSY_CODES, primary_code, retry_busy

__all__ = ["CacheError", "ScoreCache", "default_cache_path", "example_key", "keys_remembered", "open_cache"]

_SCHEMA_VERSION = "1"
_CHUNK = 500
_APP_ID = 0x4D455643  # "MEVC", stored at offset 68 of the SQLite header
_HEADER = b"SQLite format 3\x00"
_BUSY_MS = 30_000
# primary SQLite result codes (extended codes carry them in their low byte)
_CORRUPT = {11, 26}  # SQLITE_CORRUPT, SQLITE_NOTADB
_UNWRITABLE = {3, 8, 10, 13, 14}  # SQLITE_PERM, READONLY, IOERR, FULL, CANTOPEN


class CacheError(ValueError):
    """A score cache path that cannot be used: a folder, not a meta-eval cache, damaged beyond proof, or locked."""


def default_cache_path() -> Path:
    """``<user cache dir>/meta-eval/scores.sqlite``."""
    return platformdirs.user_cache_path("meta-eval") / "scores.sqlite"


def open_cache(cache: str | Path | None = None, no_cache: bool = False) -> "ScoreCache | None":
    """The score cache of a job: ``None`` with ``no_cache``, else the file ``cache`` (default:
    :func:`default_cache_path`).

    A path that cannot be a cache raises :class:`~meta_eval.errors.MetaEvalError` with the reason.
    """
    from meta_eval.errors import MetaEvalError

    if no_cache:
        return None
    try:
        return ScoreCache(cache or default_cache_path())
    except CacheError as exc:
        raise MetaEvalError(str(exc)) from None


def example_key(example: Example) -> str:
    """SHA-256 of the example's candidate, references and source (the texts a metric may read), and of its named
    fields when it has some (an :class:`~metrics.instance.Instance` of a JUDGE-BENCH row: two rows with the same
    candidate but another second output are two keys). A plain :class:`~metrics.base.Example` (or one without
    fields) keys exactly as before the fields existed, so no cached score of the other sets changes key.

    Inside :func:`keys_remembered` the key of texts already keyed in the block is looked up instead of hashed again
    (the same key: the memo is indexed by the texts themselves)."""
    fields = getattr(example, "fields", ())
    memo = _KEYS.get()
    texts = None
    if memo is not None:
        texts = _texts(example, fields)
        if texts is not None:
            key = memo.get(texts)
            if key is not None:
                return key
    payload = [example.candidate, list(example.references), example.source]
    if fields:
        payload.append([list(pair) for pair in fields])
    key = hashlib.sha256(json.dumps(payload, ensure_ascii=False).encode("utf-8")).hexdigest()
    if texts is not None and len(memo) < KEYS_REMEMBERED:
        memo[texts] = key
    return key


#: the memo of :func:`keys_remembered`'s block (texts -> key), None outside one
_KEYS: ContextVar[dict | None] = ContextVar("meta_eval_example_keys", default=None)
#: distinct examples a :func:`keys_remembered` block remembers at most (about 215 bytes each beside the texts, which
#: the examples hold anyway: 28 MB at most); every set of this project's data has fewer rows (wmt23: 21,281), a
#: generated set of a million rows has the first ones' keys remembered and the others hashed as outside a block
KEYS_REMEMBERED = 1 << 17


def _texts(example: Example, fields) -> tuple | None:
    """The texts :func:`example_key` hashes as a dict key, or None where one is not a string (or None for the
    source): ``1`` and ``True`` are equal dict keys but not the same JSON, so only strings are remembered."""
    refs = tuple(example.references)
    pairs = tuple(tuple(pair) for pair in fields)
    strings = [example.candidate, *refs, *(x for pair in pairs for x in pair)]
    if not all(type(s) is str for s in strings) or not (example.source is None or type(example.source) is str):
        return None
    return example.candidate, refs, example.source, pairs


@contextlib.contextmanager
def keys_remembered() -> Iterator[None]:
    """Within the block, :func:`example_key` hashes each distinct set of texts once: every metric of a run keys the
    same examples (15 metrics of ``-m all`` on chaganty: 31,275 keys, 0.22 s of hashing on this project's 2-core
    machine, about 0.02 s remembered). The memo lives as long as the block (and in its context only: another
    thread computes its keys as always), holds :data:`KEYS_REMEMBERED` examples at most; nested blocks share the
    outer one's.

    >>> from meta_eval.metrics.base import Example
    >>> with keys_remembered():
    ...     example_key(Example("a", ("b",))) == example_key(Example("a", ("b",)))
    True
    """
    if _KEYS.get() is not None:
        yield
        return
    token = _KEYS.set({})
    try:
        yield
    finally:
        _KEYS.reset(token)


def _warn(message: str) -> None:
    """A RuntimeWarning attributed to the first caller outside this module."""
    frame, level = sys._getframe(1), 2
    while frame is not None and frame.f_code.co_filename == __file__:
        frame, level = frame.f_back, level + 1
    warnings.warn(message, RuntimeWarning, stacklevel=level)


def _write_failure(exc: sqlite3.DatabaseError, path: Path) -> str:
    """Why writing the cache at ``path`` failed, in words for a warning: the real cause, not "read-only" (a full
    disk was reported as read-only)."""
    try:
        free = shutil.disk_usage(path.parent).free
    except OSError:
        free = None
    if primary_code(exc) == 13 or (free is not None and free < 1 << 20):  # SQLITE_FULL, or under 1 MiB left
        return f"cannot be written: the disk is full ({exc}; {free if free is not None else '?'} bytes free)"
    if primary_code(exc) == 10:
        return f"cannot be written: an I/O error ({exc})"
    return f"cannot be written ({exc})"


def _writable(path: Path, folder: bool = False) -> bool:
    """May this process write ``path``, and does the file carry a write bit (a chmod a-w file counts as read-only)?"""
    try:
        bits = path.stat().st_mode & 0o222
    except OSError:
        return False
    return bool(bits) and os.access(path, os.W_OK | (os.X_OK if folder else 0))


def can_save(path) -> bool:
    """Whether a cache at ``path`` can be written, by the test the cache itself applies (:func:`_writable`): the
    file, where it exists, and the nearest folder that exists (where the cache would be created)."""
    path = Path(os.path.expanduser(os.fspath(path)))
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    return _writable(folder, folder=True) and (not path.exists() or _writable(path))


def _valid_payload(payload: object) -> dict[str, float] | None:
    """The scores of a row, or None when the payload is not a JSON object of finite numbers."""
    try:
        value = json.loads(payload)
    except (TypeError, ValueError):
        return None
    if not isinstance(value, dict) or not value:
        return None
    out = {}
    for name, x in value.items():
        if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
            return None
        out[name] = float(x)
    return out


class ScoreCache:
    """Scores per (signature, example key): a mapping of variant name to float.

    Parameters
    ----------
    path : path or None
        The SQLite file (created with its folder); ``None`` keeps the cache in memory for this process only. See the
        module docstring for read-only, corrupt and foreign files.

    Attributes
    ----------
    read_only : bool
        True when the cache file is used for lookups only (read-only file, or writing it failed): nothing is saved.
        An in-memory stand-in (file that could not be created or repaired) is not read-only but is not saved.

    Raises
    ------
    CacheError
        ``path`` is a folder or not a meta-eval cache, is damaged and not provably meta-eval's, or stayed locked.
    """

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = None if path is None else Path(path)
        self.read_only = False
        self._reason = ""
        self._owned = False
        self._cause = ""  # why writing the file failed, when it did (disk full, I/O error, read-only file system)
        self._warned: set[str] = set()
        self._conn: sqlite3.Connection | None = None
        self._conn = self._memory() if self.path is None else self._open(self.path)

    # -- opening ---------------------------------------------------------------------------------------------------

    def _warn(self, kind: str, message: str) -> None:
        if kind not in self._warned:
            self._warned.add(kind)
            _warn(message)

    @staticmethod
    def _connect(target: str, uri: bool = False) -> sqlite3.Connection:
        conn = sqlite3.connect(target, timeout=_BUSY_MS / 1000, uri=uri, isolation_level=None)
        conn.execute(f"PRAGMA busy_timeout = {_BUSY_MS}")
        return conn

    def _memory(self) -> sqlite3.Connection:
        conn = self._connect(":memory:")
        self._create_schema(conn)
        return conn

    def _in_memory_instead(self, why: str) -> sqlite3.Connection:
        self._warn("memory", f"score cache {self.path}: {why}; scores are kept in memory for this run only and will "
                             "not be saved")
        return self._memory()

    def _open(self, path: Path) -> sqlite3.Connection:
        if path.is_dir():
            raise CacheError(f"score cache {path} is a folder; pass a file path (e.g. {path / 'scores.sqlite'})")
        if path.exists() and not path.is_file():
            raise CacheError(f"score cache {path} is not a regular file; pass a file path")
        for _ in range(5):  # another process may move a corrupt file aside while this one looks at it
            if not path.exists():
                try:
                    path.parent.mkdir(parents=True, exist_ok=True)
                except (FileExistsError, NotADirectoryError) as exc:
                    raise CacheError(f"cannot create score cache {path}: {exc.filename} is not a folder") from None
                except OSError as exc:
                    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
                        return self._in_memory_instead(f"cannot create its folder ({exc.strerror})")
                    raise
                if not _writable(path.parent, folder=True):
                    return self._in_memory_instead(f"cannot be created in the read-only folder {path.parent}")
            try:
                st = path.stat()
                with open(path, "rb") as fh:
                    head = fh.read(100)
            except FileNotFoundError:
                st, head = None, b""
            if head and not head.startswith(_HEADER):
                raise CacheError(f"score cache {path} is not an SQLite database (it does not start with the SQLite "
                                 "header); it was left untouched: pass the path of a meta-eval cache file, or a new "
                                 "one")
            app_id = int.from_bytes(head[68:72], "big") if len(head) >= 72 else 0
            conn = self._try_open(path, app_id)
            if conn is not None:
                return conn
            # a proven corrupt meta-eval cache: move it aside (unless someone replaced it meanwhile) and start anew
            if not _writable(path.parent, folder=True):
                return self._in_memory_instead(f"it is corrupt ({self._reason}) and its folder is read-only, so it "
                                               "was left in place (delete it to start a new cache)")
            now = path.stat() if path.exists() else None
            if st is not None and now is not None and (now.st_ino, now.st_dev) == (st.st_ino, st.st_dev):
                try:
                    moved = self._move_aside(path)
                except OSError as exc:
                    return self._in_memory_instead(f"it is corrupt ({self._reason}) and could not be moved aside "
                                                   f"({exc}); it was left in place")
                _warn(f"score cache {path} is a corrupt meta-eval cache ({self._reason}); moved it to {moved} "
                      "and started a new one: scores will be recomputed")
        raise CacheError(f"score cache {path} kept changing while it was opened (other processes repairing it?); "
                         "try again")

    @staticmethod
    def _move_aside(path: Path) -> Path:
        stamp = time.strftime("%Y%m%d-%H%M%S")
        moved = path.with_name(f"{path.name}.corrupt-{stamp}")
        n = 0
        while moved.exists():
            n += 1
            moved = path.with_name(f"{path.name}.corrupt-{stamp}-{n}")
        path.replace(moved)
        for suffix in ("-wal", "-shm"):
            part = Path(str(path) + suffix)
            if part.exists():
                part.replace(Path(str(moved) + suffix))
        return moved

    def _try_open(self, path: Path, app_id: int) -> sqlite3.Connection | None:
        """A ready connection, or None when the file is a proven corrupt meta-eval cache (reason in self._reason)."""
        writable = _writable(path.parent, folder=True) and (not path.exists() or _writable(path))
        conn = None
        self._owned = app_id == _APP_ID  # proven meta-eval's: the application id, or (below) the meta row
        try:
            if writable:
                try:
                    conn = self._connect(str(path))
                    state = self._identify(conn, app_id)
                    if state == "ours" and not self._quick_check(conn):
                        conn.close()
                        return None
                    if state != "foreign":
                        state = self._create_schema(conn, app_id)  # race-safe: re-identifies inside the lock
                except sqlite3.DatabaseError as exc:
                    if primary_code(exc) not in _UNWRITABLE:
                        raise
                    if conn is not None:
                        conn.close()
                    writable = False  # a real write attempt failed (read-only file system, full disk, ...)
                    self._cause = _write_failure(exc, path)
            if not writable:
                conn = self._connect_read_only(path)
                state = self._identify(conn, app_id)
                if state == "ours" and not self._quick_check(conn):
                    conn.close()
                    return None
            if state == "foreign":
                raise CacheError(f"{path} is an SQLite database but not a meta-eval score cache (no meta table); it "
                                 "was left untouched: pass another --cache file path")
            if state == "fresh":  # only when read-only: an empty database file
                conn.close()
                self.read_only = True
                self._warn("read-only", f"score cache {path} {self._cause or 'is read-only'} and empty: scores will "
                                        "not be saved")
                return self._memory()
            if writable:
                # SQLite's switch does not wait (busy timeout) for another connection's write lock: retried
                retry_busy(lambda: conn.execute("PRAGMA journal_mode=WAL"), _BUSY_MS / 1000)
                conn.execute("PRAGMA synchronous=NORMAL")
            else:
                self.read_only = True
                self._warn("read-only", f"score cache {path} {self._cause or 'is read-only'}: cached scores are used, "
                                        "new scores will not be saved")
            return conn
        except sqlite3.DatabaseError as exc:
            if conn is not None:
                conn.close()
            code = primary_code(exc)
            if code in BUSY_CODES:
                raise CacheError(f"score cache {path} stayed locked by another process for {_BUSY_MS // 1000} s "
                                 f"({exc}); try again, or pass another --cache file") from None
            if code in _CORRUPT:
                if self._owned:
                    self._reason = str(exc)
                    return None
                raise CacheError(f"score cache {path} is damaged ({exc}) and cannot be proven to be a meta-eval "
                                 "cache, so it was left untouched: move or delete it, or pass another --cache file "
                                 "path") from None
            if code in _UNWRITABLE:  # not even readable as it is (a full disk with a WAL to recover, an I/O error)
                return self._in_memory_instead(f"{self._cause or _write_failure(exc, path)}, and it cannot be read "
                                               f"either ({exc})")
            raise
        except BaseException:
            if conn is not None:
                conn.close()
            raise

    def _quick_check(self, conn: sqlite3.Connection) -> bool:
        check = conn.execute("PRAGMA quick_check").fetchone()[0]
        self._reason = f"quick_check: {check}"
        return check == "ok"

    def _connect_read_only(self, path: Path) -> sqlite3.Connection:
        uri = path.resolve().as_uri()
        folder_writable = _writable(path.parent, folder=True)
        if not folder_writable and not Path(str(path) + "-wal").exists():
            return self._connect(uri + "?immutable=1", uri=True)  # nobody can add a WAL in a read-only folder
        try:
            conn = self._connect(uri + "?mode=ro", uri=True)
            conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
            return conn
        except sqlite3.DatabaseError as exc:
            if primary_code(exc) not in _UNWRITABLE or folder_writable:
                raise
            return self._connect(uri + "?immutable=1", uri=True)

    def _identify(self, conn: sqlite3.Connection, app_id: int) -> str:
        """'fresh' (no tables), 'ours' (meta-eval's) or 'foreign'; CacheError for another schema version."""
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if not tables:
            return "fresh"
        schema = None
        if "meta" in tables:
            row = conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
            schema = None if row is None else row[0]
        if schema is None:
            return "ours" if app_id == _APP_ID else "foreign"
        self._owned = True
        if schema != _SCHEMA_VERSION:
            raise CacheError(f"score cache schema {schema!r} is not this version's ({_SCHEMA_VERSION!r}); pass "
                             "another --cache file path")
        return "ours"

    def _create_schema(self, conn: sqlite3.Connection, app_id: int = _APP_ID) -> str:
        """Create the tables in one BEGIN IMMEDIATE transaction (idempotent, safe under concurrency)."""
        conn.execute("BEGIN IMMEDIATE")
        try:
            state = self._identify(conn, app_id)
            if state != "foreign":
                conn.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
                conn.execute("CREATE TABLE IF NOT EXISTS signatures (id INTEGER PRIMARY KEY, "
                             "signature TEXT UNIQUE NOT NULL)")
                conn.execute("CREATE TABLE IF NOT EXISTS scores (sig INTEGER NOT NULL, key TEXT NOT NULL, "
                             "payload TEXT NOT NULL, PRIMARY KEY (sig, key)) WITHOUT ROWID")
                conn.execute("INSERT OR IGNORE INTO meta VALUES ('schema', ?)", (_SCHEMA_VERSION,))
                conn.execute(f"PRAGMA application_id = {_APP_ID}")
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        return "ours" if state == "fresh" else state

    # -- lookups and writes ----------------------------------------------------------------------------------------

    def _sig_id(self, signature: str, create: bool) -> int | None:
        if create:
            self._conn.execute("INSERT OR IGNORE INTO signatures (signature) VALUES (?)", (signature,))
        row = self._conn.execute("SELECT id FROM signatures WHERE signature = ?", (signature,)).fetchone()
        return None if row is None else int(row[0])

    def _degraded(self, exc: sqlite3.DatabaseError, writing: bool) -> bool:
        """Warn about a fault met after opening (locked, read-only, full, corrupt); False for other errors.

        The run goes on: scores that could not be read are computed, scores that could not be written are only lost
        for the next run.
        """
        code = primary_code(exc)
        if code not in BUSY_CODES | _UNWRITABLE | _CORRUPT:
            return False
        if code in BUSY_CODES:
            what = (f"stayed locked by another process for {_BUSY_MS // 1000} s ({exc}): "
                    + ("a batch of scores was not saved" if writing else "cached scores could not be read; they are "
                       "computed again"))
        elif writing:
            self.read_only = True
            what = f"{_write_failure(exc, self.path)}: new scores are no longer saved in this run"
        else:
            what = f"{exc}: cached scores could not be read; they are computed again"
        self._warn(f"{code}-{writing}", f"score cache {self.path} {what}")
        return True

    def get_many(self, signature: str, keys: Iterable[str]) -> dict[str, dict[str, float]]:
        """Cached scores of the given keys (absent keys are simply missing from the result).

        Rows whose payload is damaged are treated as missing, deleted when the cache is writable, and counted in a
        warning.
        """
        out: dict[str, dict[str, float]] = {}
        bad: list[str] = []
        try:
            sig = self._sig_id(signature, create=False)
            if sig is None:
                return {}
            keys = list(dict.fromkeys(keys))
            for i in range(0, len(keys), _CHUNK):
                chunk = keys[i:i + _CHUNK]
                marks = ",".join("?" * len(chunk))
                for key, payload in self._conn.execute(
                        f"SELECT key, payload FROM scores WHERE sig = ? AND key IN ({marks})", (sig, *chunk)):
                    scores = _valid_payload(payload)
                    if scores is None:
                        bad.append(key)
                    else:
                        out[key] = scores
            if bad:
                self._drop(sig, bad)
        except sqlite3.DatabaseError as exc:
            if not self._degraded(exc, writing=False):
                raise
        return out

    def _drop(self, sig: int, keys: list[str]) -> None:
        where = self.path if self.path is not None else "(in memory)"
        if self.read_only:
            _warn(f"score cache {where}: ignored {len(keys)} damaged row(s) (payload not a JSON object of finite "
                  "numbers; the cache is read-only, so they stay): they are recomputed")
            return
        with self._transaction():
            self._conn.executemany("DELETE FROM scores WHERE sig = ? AND key = ?", ((sig, k) for k in keys))
        _warn(f"score cache {where}: dropped {len(keys)} damaged row(s) (payload not a JSON object of finite numbers): "
              "they are recomputed")

    @contextlib.contextmanager
    def _transaction(self):
        """BEGIN IMMEDIATE (takes the write lock first, waiting up to busy_timeout) ... COMMIT, or ROLLBACK."""
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            if self._conn.in_transaction:
                self._conn.execute("ROLLBACK")
            raise
        self._conn.execute("COMMIT")

    def put_many(self, signature: str, scores: Mapping[str, Mapping[str, float]]) -> None:
        """Store and commit scores (one transaction); a read-only cache stores nothing.

        An entry with a non-finite value is not stored (it is computed again next time).
        """
        if self.read_only:
            return
        rows = []
        for k, s in scores.items():
            values = {v: float(x) for v, x in s.items()}
            if values and all(math.isfinite(x) for x in values.values()):
                rows.append((k, json.dumps(values)))
        if not rows:
            return
        try:
            with self._transaction():
                sig = self._sig_id(signature, create=True)
                self._conn.executemany("INSERT OR REPLACE INTO scores VALUES (?, ?, ?)",
                                       ((sig, k, payload) for k, payload in rows))
        except sqlite3.DatabaseError as exc:
            if not self._degraded(exc, writing=True):
                raise

    def count(self, signature: str | None = None) -> int:
        """Number of cached examples, for one signature or in all."""
        if signature is None:
            return int(self._conn.execute("SELECT COUNT(*) FROM scores").fetchone()[0])
        sig = self._sig_id(signature, create=False)
        if sig is None:
            return 0
        return int(self._conn.execute("SELECT COUNT(*) FROM scores WHERE sig = ?", (sig,)).fetchone()[0])

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def __enter__(self) -> ScoreCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
