"""SIGKILL of the real CLI (`python -m cli run`) in the middle of scoring, then a rerun of the same command.

The rerun must resume from the cache (the killed run's whole batches are reported as cached, only the rest is
computed) and write exactly the JSON of an uninterrupted run on a fresh cache (timings aside). tests/test_cache.py
kills a script that calls the runner directly; this one kills the command a user runs.

chrF on the chaganty set (2085 rows, 2084 distinct examples) in batches of 4: about 5 s of scoring on this 2-core
machine, long enough to kill it mid-way, short enough that the three runs take well under a minute.
"""
from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest

from conftest import require_metrics

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from meta_eval.scoring.cache import ScoreCache  # noqa: E402

METRIC = "chrf"
BATCH = 4
DISTINCT = 2084  # chaganty's sms subset: 2085 rows, one (candidate, references) pair twice


def _command(data: Path, cache: Path, output: Path) -> list[str]:
    return [sys.executable, "-m", "cli", "run", "-j", "chaganty", "-m", METRIC, "--data-dir", str(data),
            "--cache", str(cache), "--output", str(output), "--batch-size", str(BATCH)]


def _env(data: Path) -> dict[str, str]:
    return dict(os.environ, META_EVAL_DATA=str(data), COLUMNS="200")


def _rows(path: Path) -> int:
    """Rows in the cache, read from outside the running process (0 before the table exists)."""
    if not path.exists():
        return 0
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=10)
        try:
            return int(conn.execute("SELECT COUNT(*) FROM scores").fetchone()[0])
        finally:
            conn.close()
    except sqlite3.OperationalError:
        return 0


def _comparable(doc: dict) -> dict:
    """Everything but the timings and the recorded command line (each run writes to its own --output and cache; the
    provenance's version and input digests are compared)."""
    out = {k: v for k, v in doc.items() if k not in ("timing", "wall_seconds")}
    out["provenance"] = {k: v for k, v in out["provenance"].items() if k != "command"}
    return out


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL (POSIX)")
def test_killed_cli_run_resumes_to_the_uninterrupted_result(shared_data, tmp_path):
    require_metrics(METRIC)
    # the uninterrupted reference runs meanwhile, on its own fresh cache
    fresh_out = tmp_path / "fresh.json"
    reference = subprocess.Popen(_command(shared_data, tmp_path / "fresh.sqlite", fresh_out), cwd=REPO,
                                 env=_env(shared_data), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    cache = tmp_path / "killed.sqlite"
    out = tmp_path / "a.json"
    proc = subprocess.Popen(_command(shared_data, cache, out), cwd=REPO, env=_env(shared_data),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 180
        while _rows(cache) < 10 * BATCH:  # a few batches committed: scoring is under way
            assert proc.poll() is None, f"the run ended before it was killed: {proc.stderr.read()[-3000:]}"
            assert time.monotonic() < deadline, "no scores reached the cache in 180 s"
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
        assert proc.wait(timeout=30) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stderr.close()
    assert not out.exists() and not out.with_name(out.name + ".tmp").exists()

    saved = _rows(cache)
    assert 0 < saved < DISTINCT, saved  # killed mid-scoring
    assert saved % BATCH == 0, saved  # whole batches only: each committed at once
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a corrupt-cache or damaged-row warning would fail here
        with ScoreCache(cache) as store:
            assert store.count() == saved

    rerun = subprocess.run(_command(shared_data, cache, out), cwd=REPO, env=_env(shared_data), capture_output=True,
                           text=True, timeout=300, check=False)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert "RuntimeWarning" not in rerun.stderr, rerun.stderr[-3000:]
    resumed = json.loads(out.read_text(encoding="utf-8"))
    assert resumed["timing"][METRIC]["cached"] == saved
    assert resumed["timing"][METRIC]["computed"] == DISTINCT - saved
    assert f"{METRIC}: {DISTINCT - saved} computed, {saved} from cache" in rerun.stderr
    assert _rows(cache) == DISTINCT

    _, ref_err = reference.communicate(timeout=300)
    assert reference.returncode == 0, ref_err[-3000:]
    fresh = json.loads(fresh_out.read_text(encoding="utf-8"))
    assert fresh["timing"][METRIC] | {"seconds": 0} == {"seconds": 0, "computed": DISTINCT, "cached": 0, "beside": False}
    assert fresh["n"] == resumed["n"] == 2085
    assert resumed["results"] and resumed["results"] == fresh["results"]  # every number, to the last digit
    assert _comparable(resumed) == _comparable(fresh)


@pytest.mark.skipif(not hasattr(signal, "SIGTERM"), reason="needs SIGTERM (POSIX)")
def test_sigterm_ends_a_run_like_ctrl_c_with_143_and_the_rerun_resumes(shared_data, tmp_path):
    """SIGTERM (what a batch scheduler or `kill` sends) stops between two batch commits with one line and exit code
    143, stops the workers, leaves no traceback, leaked-semaphore warning or result file, and the rerun resumes."""
    require_metrics(METRIC)
    cache, out = tmp_path / "term.sqlite", tmp_path / "t.json"
    proc = subprocess.Popen(_command(shared_data, cache, out), cwd=REPO, env=_env(shared_data),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 180
        while _rows(cache) < 10 * BATCH:
            assert proc.poll() is None, f"the run ended before SIGTERM: {proc.stderr.read()[-3000:]}"
            assert time.monotonic() < deadline, "no scores reached the cache in 180 s"
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=60)
        said = proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stderr.close()
    assert code == 143, said[-3000:]
    assert "terminated (SIGTERM): every finished batch is in the cache" in " ".join(said.split())
    assert "Traceback" not in said and "leaked semaphore" not in said, said[-3000:]
    assert not out.exists()
    saved = _rows(cache)
    assert 0 < saved < DISTINCT and saved % BATCH == 0
    rerun = subprocess.run(_command(shared_data, cache, out), cwd=REPO, env=_env(shared_data), capture_output=True,
                           text=True, timeout=300, check=False)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert json.loads(out.read_text(encoding="utf-8"))["timing"][METRIC]["cached"] == saved


@pytest.mark.parametrize("no_cache", [True, False, "read-only"])
def test_what_an_interrupted_command_says_it_kept_depends_on_the_cache(shared_data, tmp_path, no_cache):
    """Ctrl-C under --no-cache used to say "every finished batch is in the cache; rerun ... to resume", and so did
    Ctrl-C with a read-only cache file (which only reads: audit, session 37)."""
    from typer.testing import CliRunner

    from meta_eval.cli import app

    plugin = tmp_path / "stops.py"
    name = f"stops-here-{'no-cache' if no_cache is True else 'cached' if not no_cache else 'read-only'}"
    plugin.write_text(f"from meta_eval.metrics import Metric, register\n\n\n@register('{name}')\n"
                      "class StopsHere(Metric):\n    def _score(self, examples):\n        raise KeyboardInterrupt\n")
    store = ["--no-cache"] if no_cache is True else ["--cache", str(tmp_path / "c.sqlite")]
    if no_cache == "read-only":  # a cache file that exists (any SQLite file) without a write bit
        sqlite3.connect(tmp_path / "c.sqlite").close()
        (tmp_path / "c.sqlite").chmod(0o444)
    res = CliRunner().invoke(app, ["run", "-j", "chaganty", "--data-dir", str(shared_data), "-m", name,
                                   "--plugin", str(plugin), "--limit", "20", *store])
    said = " ".join(res.output.split())
    assert res.exit_code == 130, res.output
    if no_cache == "read-only":
        assert (f"interrupted: the cache {tmp_path / 'c.sqlite'} cannot be written (read-only), so the scores computed "
                "since it was read were not kept: a rerun computes them again") in said, said
    elif no_cache:
        assert "interrupted: nothing was kept (--no-cache): a rerun starts again" in said, said
    else:
        assert "interrupted: every finished batch is in the cache; rerun the same command to resume" in said, said


def test_can_save_is_the_caches_own_write_test(tmp_path):
    """What an interrupted command says it kept uses the cache's own test (one test, not two that could disagree):
    a cache not yet made is saved where its nearest existing folder is writable; a file or folder without a write
    bit (root included, which os.access alone lets through) is not."""
    from meta_eval.scoring.cache import ScoreCache, can_save

    assert can_save(tmp_path / "new" / "deeper" / "c.sqlite")
    made = tmp_path / "c.sqlite"
    ScoreCache(made).close()
    assert can_save(made)
    made.chmod(0o444)
    assert not can_save(made)
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        assert not can_save(locked / "sub" / "c.sqlite")
        assert not can_save(locked / "c.sqlite")
    finally:
        locked.chmod(0o755)
