"""A SQLite cache of metric scores, keyed by metric signature and a hash of the example's texts.

Every batch is committed as soon as it is scored, so a run that is killed loses at most the batch in flight and the
next run resumes from what was saved. The database runs in WAL mode. A cache file that SQLite cannot read (corrupt,
truncated, not a database) is moved aside to ``<name>.corrupt-<time>`` with a warning and rebuilt empty.
"""
from __future__ import annotations

import hashlib
import json
import sqlite3
import time
import warnings
from pathlib import Path
from typing import Iterable, Mapping

import platformdirs

from metrics.base import Example

__all__ = ["ScoreCache", "example_key", "default_cache_path"]

_SCHEMA_VERSION = "1"
_CHUNK = 500


def default_cache_path() -> Path:
    """``<user cache dir>/meta-eval/scores.sqlite``."""
    return platformdirs.user_cache_path("meta-eval") / "scores.sqlite"


def example_key(example: Example) -> str:
    """SHA-256 of the example's candidate, references and source (the texts a metric may read)."""
    payload = json.dumps([example.candidate, list(example.references), example.source], ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class ScoreCache:
    """Scores per (signature, example key): a mapping of variant name to float.

    Parameters
    ----------
    path : path or None
        The SQLite file (created with its folder); ``None`` keeps the cache in memory for this process only.
    """

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = None if path is None else Path(path)
        self._conn = self._open()

    def _open(self) -> sqlite3.Connection:
        if self.path is None:
            return self._init(sqlite3.connect(":memory:"))
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            conn = sqlite3.connect(self.path)
            ok = conn.execute("PRAGMA quick_check").fetchone()[0] == "ok"
            if ok:
                return self._init(conn)
            conn.close()
            reason = "integrity check failed"
        except sqlite3.DatabaseError as exc:
            reason = str(exc)
        moved = self.path.with_name(f"{self.path.name}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}")
        for suffix in ("", "-wal", "-shm"):
            part = Path(str(self.path) + suffix)
            if part.exists():
                part.replace(Path(str(moved) + suffix))
        warnings.warn(f"score cache {self.path} was unreadable ({reason}); moved it to {moved} and started a new "
                      "one: scores will be recomputed", RuntimeWarning, stacklevel=3)
        return self._init(sqlite3.connect(self.path))

    @staticmethod
    def _init(conn: sqlite3.Connection) -> sqlite3.Connection:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.executescript("""
            CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
            CREATE TABLE IF NOT EXISTS signatures (id INTEGER PRIMARY KEY, signature TEXT UNIQUE NOT NULL);
            CREATE TABLE IF NOT EXISTS scores (sig INTEGER NOT NULL, key TEXT NOT NULL, payload TEXT NOT NULL,
                                               PRIMARY KEY (sig, key)) WITHOUT ROWID;
        """)
        conn.execute("INSERT OR IGNORE INTO meta VALUES ('schema', ?)", (_SCHEMA_VERSION,))
        conn.commit()
        return conn

    def _sig_id(self, signature: str, create: bool) -> int | None:
        row = self._conn.execute("SELECT id FROM signatures WHERE signature = ?", (signature,)).fetchone()
        if row is None and create:
            cur = self._conn.execute("INSERT INTO signatures (signature) VALUES (?)", (signature,))
            return int(cur.lastrowid)
        return None if row is None else int(row[0])

    def get_many(self, signature: str, keys: Iterable[str]) -> dict[str, dict[str, float]]:
        """Cached scores of the given keys (absent keys are simply missing from the result)."""
        sig = self._sig_id(signature, create=False)
        if sig is None:
            return {}
        keys = list(dict.fromkeys(keys))
        out: dict[str, dict[str, float]] = {}
        for i in range(0, len(keys), _CHUNK):
            chunk = keys[i:i + _CHUNK]
            marks = ",".join("?" * len(chunk))
            for key, payload in self._conn.execute(
                    f"SELECT key, payload FROM scores WHERE sig = ? AND key IN ({marks})", (sig, *chunk)):
                out[key] = json.loads(payload)
        return out

    def put_many(self, signature: str, scores: Mapping[str, Mapping[str, float]]) -> None:
        """Store and commit scores (one transaction)."""
        with self._conn:
            sig = self._sig_id(signature, create=True)
            self._conn.executemany("INSERT OR REPLACE INTO scores VALUES (?, ?, ?)",
                                   ((sig, k, json.dumps({v: float(x) for v, x in s.items()}))
                                    for k, s in scores.items()))

    def count(self, signature: str | None = None) -> int:
        """Number of cached examples, for one signature or in all."""
        if signature is None:
            return int(self._conn.execute("SELECT COUNT(*) FROM scores").fetchone()[0])
        sig = self._sig_id(signature, create=False)
        if sig is None:
            return 0
        return int(self._conn.execute("SELECT COUNT(*) FROM scores WHERE sig = ?", (sig,)).fetchone()[0])

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> ScoreCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
