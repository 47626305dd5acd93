"""Publishing is atomic per board and fails early (leaderboard/publish.py, BoardLock and write_leaderboard).

- ``--out`` under a regular file or on ``/proc`` is refused before any scoring (it used to fail after all of it,
  leaving ``.results.json.tmp``);
- a second publisher into a folder being published gets a clear error at once; with ``--force`` it waits and then
  replaces the first board completely, so the folder always holds one whole board from one run;
- a write that fails (a full disk) leaves the old board as it was and no temporary file;
- a folder made for a publish that then failed is removed again.
"""
from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from meta_eval.cli import app
from conftest import small_set
from meta_eval.leaderboard.publish import BoardLock, PublishError, write_leaderboard

runner = CliRunner()


def _flat(text: str) -> str:
    return " ".join(text.split())




def _publish(data: Path, out: Path, *extra: str):
    return runner.invoke(app, ["leaderboard", "publish", "-j", str(data), "-m", "rouge", "--resamples", "20",
                               "--out", str(out), *extra])


def test_a_folder_that_cannot_be_made_is_refused_before_any_scoring(tmp_path):
    data = small_set(tmp_path / "s.jsonl")
    (tmp_path / "afile").write_text("x")
    cache = tmp_path / "scores.sqlite"
    for out, why in ((tmp_path / "afile" / "board", "Not a directory"), (Path("/proc/meta-eval-board"), "")):
        done = runner.invoke(app, ["leaderboard", "publish", "-j", str(data), "-m", "rouge", "--cache", str(cache),
                                   "--out", str(out)])
        assert done.exit_code == 2 and f"--out {out}: cannot write a leaderboard there: {why}" in _flat(done.output)
    assert not cache.exists()  # refused before the cache was opened


def test_a_second_publisher_is_refused_at_once_and_with_force_waits_and_replaces(tmp_path):
    data = small_set(tmp_path / "s.jsonl")
    out = tmp_path / "board"
    with BoardLock(out):  # a publisher at work in this folder
        done = _publish(data, out, "--no-cache")
        assert done.exit_code == 2
        assert "another meta-eval is publishing a leaderboard there right now" in _flat(done.output)
    assert not out.exists()  # the first publisher made the folder, wrote nothing: gone again

    first = BoardLock(out).__enter__()
    release = threading.Timer(1.5, first.__exit__, (None, None, None))
    release.start()
    started = time.monotonic()
    done = _publish(data, out, "--no-cache", "--force")  # waits for the first, then writes its whole board
    release.join()
    assert done.exit_code == 0, done.output
    assert time.monotonic() - started >= 1.4
    assert sorted(p.name for p in out.iterdir()) == ["README.md", "figures", "index.html", "results.json"]
    again = _publish(data, out, "--no-cache")  # a finished board is replaced only with --force
    assert again.exit_code == 2 and "already holds a leaderboard" in _flat(again.output)


def test_a_waiting_publisher_holds_the_folder_that_is_there_when_the_first_removes_the_one_it_made(tmp_path):
    # the first publisher made the folders and wrote nothing: it removes them when it is done; a --force publisher
    # waiting for it must then hold a folder that exists at --out (it once held the removed one, or saw the folder
    # vanish between its checks: "is a file, not a folder", seen in CI)
    out = tmp_path / "new" / "board"
    first = BoardLock(out).__enter__()
    seen: dict = {}

    def second() -> None:
        with BoardLock(out, force=True) as lock:
            seen["folder"] = out.is_dir()
            seen["held is the one at --out"] = os.path.samestat(os.fstat(lock._fd), os.stat(out))

    waiting = threading.Thread(target=second)
    waiting.start()
    time.sleep(0.5)  # the second is blocked on the first's lock
    first.__exit__(None, None, None)
    waiting.join(10)
    assert seen == {"folder": True, "held is the one at --out": True}
    assert not out.parent.exists()  # the second made them again and, having written nothing, removed them


def test_a_write_that_fails_leaves_the_old_board_and_no_temporary(tmp_path, monkeypatch):
    data = small_set(tmp_path / "s.jsonl")
    out = tmp_path / "board"
    assert _publish(data, out, "--no-cache").exit_code == 0

    def files(folder):
        return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}

    before = files(out)
    real = Path.write_text

    def full_disk(self, text, *args, **kwargs):
        if self.name.startswith(".README.md"):
            raise OSError(28, "No space left on device", str(self))
        return real(self, text, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", full_disk)
    done = _publish(data, out, "--no-cache", "--force", "--seed", "7")
    assert done.exit_code == 1
    assert f"cannot write the leaderboard in {out}: No space left on device" in _flat(done.output)
    assert files(out) == before  # no temporary, no half-new board
    with pytest.raises(PublishError, match="No space left on device"):
        write_leaderboard(out, "b", [], "test", n_resamples=10, seed=0, confidence=0.95, alpha=0.05,
                          correction="holm", primary="spearman")
    assert files(out) == before
