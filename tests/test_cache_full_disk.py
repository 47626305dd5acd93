"""A score cache on a full disk, or one the process may not grow, never ends a run with a traceback and is never
misreported (meta_eval/scoring/cache.py): the run goes on without saving, and the warning names the real cause.

Two real faults, no mocks: a 64 KiB tmpfs filled to the last byte (where this process may mount one: root on Linux;
the case the issue met, ``sqlite3.OperationalError: disk I/O error``), and a process whose file-size limit
(``RLIMIT_FSIZE``) stops every write past the cache's current size, which any POSIX user can set.
"""
from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from conftest import small_set

REPO = Path(__file__).resolve().parents[1]




def _run(data: Path, cache: Path, metrics: str, limit: int | None = None) -> subprocess.CompletedProcess:
    def limited():  # the child only: its writes past `limit` bytes fail with EFBIG instead of killing it
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return subprocess.run([sys.executable, "-m", "cli", "run", "-j", str(data), "-m", metrics, "--workers", "1",
                           "--cache", str(cache)], cwd=REPO, capture_output=True, text=True, timeout=300,
                          preexec_fn=limited if limit is not None else None, env=dict(os.environ, COLUMNS="200"))


def _ok(done: subprocess.CompletedProcess) -> str:
    said = " ".join(done.stderr.split())
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr and "read-only" not in said, said
    return said


def test_a_cache_that_cannot_grow_is_used_without_saving_and_the_cause_is_named(tmp_path):
    data = small_set(tmp_path / "s.jsonl")
    cache = tmp_path / "c.sqlite"
    _ok(_run(data, cache, "rouge"))  # a healthy cache with rouge's scores
    size = cache.stat().st_size + sum(Path(f"{cache}{s}").stat().st_size for s in ("-wal", "-shm")
                                      if Path(f"{cache}{s}").exists())
    said = _ok(_run(data, cache, "rouge,wms", limit=size))
    assert f"score cache {cache} cannot be written: an I/O error" in said and "no longer saved in this run" in said
    assert "rouge: 0 computed, 30 from cache" in said and "wms: 30 computed" in said


@pytest.fixture
def full_disk(tmp_path):
    mount = tmp_path / "tiny"
    mount.mkdir()
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)], capture_output=True)
    if made.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({made.stderr.decode().strip()}); the RLIMIT_FSIZE test covers the "
                    "same paths")
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], capture_output=True)


def _fill(folder: Path) -> None:
    fd = os.open(folder / f"fill-{uuid.uuid4().hex}", os.O_CREAT | os.O_WRONLY)
    try:
        for size in (4096, 512, 1):  # to the last byte
            try:
                while True:
                    os.write(fd, b"\0" * size)
            except OSError:
                pass
    finally:
        os.close(fd)


def test_an_existing_cache_on_a_full_disk(full_disk, tmp_path):
    data = small_set(tmp_path / "s.jsonl")
    cache = full_disk / "c.sqlite"
    _ok(_run(data, cache, "rouge"))
    _fill(full_disk)
    said = _ok(_run(data, cache, "rouge,wms"))
    assert f"score cache {cache}: cannot be written: the disk is full" in said


def test_a_new_cache_on_a_full_disk_is_not_called_read_only(full_disk, tmp_path):
    data = small_set(tmp_path / "s.jsonl")
    _fill(full_disk)
    said = _ok(_run(data, full_disk / "new.sqlite", "rouge"))
    assert f"score cache {full_disk / 'new.sqlite'} cannot be written: the disk is full" in said
    assert "rouge: 30 computed" in said
