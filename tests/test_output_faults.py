"""Outputs, exit codes and names through the real CLI (`meta-eval run` / `score`).

- A bad ``--output`` (a folder, a parent that cannot be created, a folder that cannot be written) is refused in one
  line naming the path *before* any loading or scoring: the score cache is never opened, nothing is left behind.
  (Root writes into a 0555 folder, so that case runs for other users only; a parent under a regular file fails for
  everyone and always runs.)
- Writes are atomic and leave no temporary file behind, also when the write itself fails.
- A metric that fails while scoring, or a metric named with ``-m`` that cannot run, makes the command exit 1 after
  the other metrics' results were printed and written (the JSON records ``failed``, ``skipped`` and ``complete``);
  metrics chosen by default that cannot run for a documented reason are skipped and leave the exit code at 0.
- Metric, variant, set and dimension names from data files and plugins print literally, never as rich markup.

Failing and oddly named metrics are real :class:`metrics.Metric` subclasses registered with
:func:`metrics.register` (the supported in-process way; :func:`metrics.registry.unregister` afterwards).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from meta_eval.cli import app
from meta_eval.metrics import Metric, register
from meta_eval.metrics.registry import unregister

runner = CliRunner()

ROWS = [
    ("The cabinet approved the new budget on Tuesday.", "The government passed its budget on Tuesday.", 0.9),
    ("Budget talks went on.", "The government passed its budget on Tuesday.", 0.4),
    ("Rain is expected tomorrow across the north.", "Heavy rain will hit northern regions tomorrow.", 0.8),
    ("The weather.", "Heavy rain will hit northern regions tomorrow.", 0.1),
    ("The team won the cup final after extra time.", "The club won the final in extra time.", 0.7),
    ("", "The club won the final in extra time.", 0.0),
]


def _write_set(path: Path, *, references: bool = True, dimension: str = "quality") -> Path:
    with open(path, "w", encoding="utf-8") as fh:
        for i, (cand, ref, score) in enumerate(ROWS):
            row = {"id": f"r{i}", "doc_id": f"d{i // 2}", "system": f"s{i % 2}", "candidate": cand,
                   "scores": {dimension: score}}
            if references:
                row["references"] = [ref]
            fh.write(json.dumps(row) + "\n")
    return path


@pytest.fixture()
def jsonl(tmp_path):
    return _write_set(tmp_path / "mine.jsonl")


def _flat(text: str) -> str:
    return " ".join(text.split())


class _Length(Metric):
    """Reference-free: the candidate's length in characters (a real, trivial metric)."""

    needs_references = False

    def _score(self, examples):
        return {self.variants[0]: [float(len(e.candidate)) for e in examples]}


class _Broken(Metric):
    """Fails while scoring, as a metric whose model file went missing would (needs nothing, so it runs anywhere)."""

    needs_references = False

    def _score(self, examples):
        raise OSError("model file missing")


@pytest.fixture()
def registered():
    """``registered(name, cls)`` registers a fresh subclass of ``cls`` under ``name``; all are unregistered after."""
    names = []

    def add(name, cls, variants=None):
        sub = type(f"Test{len(names)}", (cls,), {"variants": tuple(variants) if variants else ()})
        register(name)(sub)
        names.append(name)
        return sub

    yield add
    for name in names:
        unregister(name)


# -- a bad --output is refused before any work --------------------------------------------------------------------

def _bad_outputs(tmp_path: Path, suffix: str = ".json") -> dict[str, Path]:
    (tmp_path / f"a-folder{suffix}").mkdir()
    (tmp_path / "a-file.txt").write_text("not a folder\n")
    return {"a folder": tmp_path / f"a-folder{suffix}",
            "under a regular file": tmp_path / "a-file.txt" / "sub" / f"res{suffix}"}  # fails even for root


@pytest.mark.parametrize("case", ["a folder", "under a regular file"])
def test_run_refuses_a_bad_output_before_scoring(case, jsonl, tmp_path):
    output = _bad_outputs(tmp_path)[case]
    cache = tmp_path / "cache.sqlite"
    before = sorted(p.name for p in tmp_path.rglob("*"))
    started = time.perf_counter()
    res = runner.invoke(app, ["run", "-j", str(jsonl), "-m", "rouge,sms", "--cache", str(cache),
                              "--output", str(output)])
    seconds = time.perf_counter() - started
    assert res.exit_code == 2, res.output
    assert str(output) in _flat(res.output) and "Traceback" not in res.output
    assert ("is a folder" if case == "a folder" else "is a file, not a folder") in _flat(res.output)
    assert not cache.exists()  # the score cache was never opened: nothing was scored
    assert sorted(p.name for p in tmp_path.rglob("*")) == before  # no .tmp, no folder made
    assert seconds < 10, seconds


def test_run_protocol_refuses_a_bad_output_before_loading(tmp_path):
    output = _bad_outputs(tmp_path)["a folder"]
    res = runner.invoke(app, ["run", "--protocol", "sms-2019", "--data-dir", str(tmp_path / "no-data"),
                              "--cache", str(tmp_path / "c.sqlite"), "--output", str(output)])
    assert res.exit_code == 2 and "is a folder" in _flat(res.output), res.output
    assert not (tmp_path / "no-data").exists() and not (tmp_path / "c.sqlite").exists()


@pytest.mark.parametrize("case", ["a folder", "under a regular file"])
def test_score_refuses_a_bad_output_before_scoring(case, tmp_path):
    cands = tmp_path / "cands.txt"
    cands.write_text("a cat sat\nthe dog\n", encoding="utf-8")
    output = _bad_outputs(tmp_path, ".csv")[case]
    cache = tmp_path / "cache.sqlite"
    before = sorted(p.name for p in tmp_path.rglob("*"))
    res = runner.invoke(app, ["score", "-m", "rouge", "-c", str(cands), "-r", str(cands), "--cache", str(cache),
                              "--output", str(output)])
    assert res.exit_code == 2 and str(output) in _flat(res.output), res.output
    assert not cache.exists() and sorted(p.name for p in tmp_path.rglob("*")) == before


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0,
                    reason="root writes into a 0555 folder; the parent-under-a-file case covers root")
def test_run_refuses_a_read_only_folder(jsonl, tmp_path):
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        res = runner.invoke(app, ["run", "-j", str(jsonl), "-m", "rouge", "--cache", str(tmp_path / "c.sqlite"),
                                  "--output", str(folder / "new" / "res.json")])
        assert res.exit_code == 2 and "cannot write there: Permission denied" in _flat(res.output), res.output
        assert list(folder.iterdir()) == [] and not (tmp_path / "c.sqlite").exists()
    finally:
        folder.chmod(0o755)


def test_a_write_that_fails_leaves_the_old_file_and_no_temporary(tmp_path):
    """The real atomic writer with a write that breaks halfway: the old file is intact, no temporary is left."""
    from meta_eval.report.outputs import OutputError, atomic_write, write_json

    target = tmp_path / "res.json"
    target.write_text('{"old": true}\n')

    def half_then_fail(tmp):
        tmp.write_text('{"new": ')
        raise OSError(28, "No space left on device")

    with pytest.raises(OutputError) as info:
        atomic_write(target, half_then_fail)
    assert info.value.code == 2  # the command's exit status
    assert target.read_text() == '{"old": true}\n' and [p.name for p in tmp_path.iterdir()] == ["res.json"]
    write_json(tmp_path / "made" / "deeper" / "new.json", {"ok": 1})  # missing parents are made at write time
    written = json.loads((tmp_path / "made" / "deeper" / "new.json").read_text())
    # marked as meta-eval's (meta_eval/report/outputs.py)
    assert written == {"written_by": written["written_by"], "ok": 1}
    assert sorted(p.name for p in (tmp_path / "made" / "deeper").iterdir()) == ["new.json"]


# -- exit codes: failed and skipped metrics -------------------------------------------------------------------------

def test_a_requested_metric_that_fails_exits_1_after_writing_the_others(jsonl, tmp_path, registered):
    registered("test-broken", _Broken)
    out = tmp_path / "res.json"
    res = runner.invoke(app, ["run", "-j", str(jsonl), "-m", "rouge,test-broken", "--cache",
                              str(tmp_path / "c.sqlite"), "--output", str(out)])
    assert res.exit_code == 1, res.output
    doc = json.loads(out.read_text())
    assert {r["metric"] for r in doc["results"]} >= {"rouge1-f", "rougeL-f"}
    assert doc["failed"] == [{"metric": "test-broken", "reason": "OSError: model file missing"}]
    assert doc["skipped"] == [] and doc["complete"] is False and doc["metrics_requested"] == ["rouge", "test-broken"]
    text = _flat(res.output)
    assert "failed test-broken: OSError: model file missing" in text
    assert (f"error: test-broken failed: OSError: model file missing; results for the other metrics were written "
            f"to {out}") in text
    assert "rougeL-f" in text and "Traceback" not in res.output
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary left


def test_a_requested_metric_that_cannot_run_exits_1(jsonl, tmp_path, registered):
    class NeedsExtra(_Length):
        requires = ("a_module_that_is_not_installed",)
        install_hint = "pip install the-extra"

    registered("test-needs-extra", NeedsExtra)
    out = tmp_path / "res.json"
    res = runner.invoke(app, ["run", "-j", str(jsonl), "-m", "wms,test-needs-extra", "--no-cache",
                              "--output", str(out)])
    assert res.exit_code == 1, res.output
    doc = json.loads(out.read_text())
    assert [r["metric"] for r in doc["results"]] == ["wms"] and doc["failed"] == [] and doc["complete"] is False
    assert doc["skipped"] == [{"metric": "test-needs-extra",
                               "reason": "missing a_module_that_is_not_installed: pip install the-extra"}]
    assert "test-needs-extra not run: missing a_module_that_is_not_installed" in _flat(res.output)


def test_default_metrics_skip_for_documented_reasons_but_a_crash_is_a_failure(tmp_path, registered):
    """No -m: on a set without references or sources every built-in metric is skipped with its reason (exit 0);
    a default metric that crashes while scoring makes the exit code 1, the other results still written."""
    jsonl = _write_set(tmp_path / "bare.jsonl", references=False)
    registered("test-length", _Length)
    out = tmp_path / "res.json"
    res = runner.invoke(app, ["run", "-j", str(jsonl), "--no-cache", "--output", str(out)])
    assert res.exit_code == 0, res.output
    doc = json.loads(out.read_text())
    assert "test-length" in [r["metric"] for r in doc["results"]]
    skipped = {s["metric"]: s["reason"] for s in doc["skipped"]}
    assert skipped["rouge"] == "needs references, which bare does not have"
    assert doc["complete"] is True and doc["failed"] == [] and doc["metrics_requested"] is None

    registered("test-broken", _Broken)
    res = runner.invoke(app, ["run", "-j", str(jsonl), "--no-cache", "--output", str(out)])
    assert res.exit_code == 1, res.output
    doc = json.loads(out.read_text())
    assert "test-length" in [r["metric"] for r in doc["results"]] and doc["complete"] is False
    assert doc["failed"] == [{"metric": "test-broken", "reason": "OSError: model file missing"}]
    assert "rouge not run" not in _flat(res.output)  # documented skips of default metrics are not failures


def test_score_exits_1_when_a_metric_fails_and_writes_the_others(tmp_path, registered):
    registered("test-broken", _Broken)
    cands = tmp_path / "cands.txt"
    cands.write_text("a cat sat\nthe dog\n", encoding="utf-8")
    out = tmp_path / "scores.csv"
    res = runner.invoke(app, ["score", "-m", "rouge,test-broken", "-c", str(cands), "-r", str(cands),
                              "--no-cache", "--output", str(out)])
    assert res.exit_code == 1, res.output
    header = out.read_text().splitlines()[0].split(",")
    assert header[0] == "index" and "rougeL-f" in header and "test-broken" not in header
    assert "results for the other metrics were written to" in _flat(res.output)
    # no temporary file left; the CSV's record is its sidecar (meta_eval/scoring/score_files.py)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cands.txt", "scores.csv", "scores.csv.meta.json"]


def test_nothing_could_run_is_still_an_error(jsonl, registered):
    registered("test-broken", _Broken)
    res = runner.invoke(app, ["run", "-j", str(jsonl), "-m", "test-broken", "--no-cache"])
    assert res.exit_code == 1 and "no metric could run: test-broken: failed: OSError" in _flat(res.output)


# -- names print literally ------------------------------------------------------------------------------------------

HOSTILE_METRIC = "[bold]x[/]"
HOSTILE_VARIANTS = ("<img src=x onerror=alert(1)>", "[red]v[/red]:warning:")
HOSTILE_FAILING = "[blink]boom[/]"

_DRIVER = f"""
import sys
from meta_eval.metrics import Metric, register

@register({HOSTILE_METRIC!r})
class Hostile(Metric):
    variants = {HOSTILE_VARIANTS!r}
    needs_references = False

    def _score(self, examples):
        return {{v: [float(len(e.candidate) + i) for i, e in enumerate(examples)] for v in self.variants}}

@register({HOSTILE_FAILING!r})
class Fails(Metric):
    needs_references = False

    def _score(self, examples):
        raise OSError("no [italic]model[/italic]")

from meta_eval.cli import main
sys.argv = ["meta-eval", *sys.argv[1:]]
main()
"""


def _cli(*args, cwd: Path):
    env = {**os.environ, "COLUMNS": "250", "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-c", _DRIVER, *args], check=False, capture_output=True, text=True,
                          timeout=300, env=env, cwd=cwd)


def test_hostile_names_print_literally_in_run(tmp_path):
    jsonl = _write_set(tmp_path / "[bold]set[blink].jsonl", dimension="[i]q[/i]")
    out = tmp_path / "[u]res[/u].json"
    res = _cli("run", "-j", str(jsonl), "-m", f"rouge,{HOSTILE_METRIC},{HOSTILE_FAILING}", "--baseline",
               HOSTILE_VARIANTS[1], "--no-cache", "--output", str(out), cwd=tmp_path)
    assert res.returncode == 1, res.stderr
    both = res.stdout + res.stderr
    for literal in (HOSTILE_METRIC, *HOSTILE_VARIANTS, HOSTILE_FAILING, "[bold]set[blink]", "[i]q[/i]", str(out),
                    "no [italic]model[/italic]", f"Williams p vs {HOSTILE_VARIANTS[1]}",
                    f"{HOSTILE_METRIC}|meta-eval=="):
        assert literal in both, literal
    assert "⚠" not in both and "Traceback" not in both
    doc = json.loads(out.read_text())
    assert set(HOSTILE_VARIANTS) <= {r["metric"] for r in doc["results"]}
    assert doc["failed"] == [{"metric": HOSTILE_FAILING, "reason": "OSError: no [italic]model[/italic]"}]


def test_hostile_names_print_literally_in_score(tmp_path):
    cands = tmp_path / "cands.txt"
    cands.write_text("a cat sat\nthe dog\n", encoding="utf-8")
    res = _cli("score", "-m", f"{HOSTILE_METRIC},{HOSTILE_FAILING}", "-c", str(cands), "--no-cache", cwd=tmp_path)
    assert res.returncode == 1, res.stderr
    both = res.stdout + res.stderr
    for literal in (*HOSTILE_VARIANTS, f"{HOSTILE_METRIC}|meta-eval==", f"failed {HOSTILE_FAILING}: OSError",
                    f"{HOSTILE_FAILING} failed: OSError: no [italic]model[/italic]"):
        assert literal in " ".join(both.split()), literal


def test_the_output_helpers_raise_output_errors_naming_the_path(tmp_path):
    from meta_eval.report.outputs import OutputError, atomic_write, check_output, with_marker, write_json

    with pytest.raises(OutputError, match=f"--output {tmp_path} is a folder"):
        check_output(tmp_path)
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(OutputError, match="is a file, not a folder"):
        check_output(blocker / "sub" / "out.json", "--save")
    with pytest.raises(OutputError, match=f"cannot write {blocker / 'sub' / 'out.json'}"):
        atomic_write(blocker / "sub" / "out.json", lambda tmp: tmp.write_text("{}"))
    write_json(tmp_path / "ok.json", {"a": 1})
    assert json.loads((tmp_path / "ok.json").read_text()) == with_marker({"a": 1})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file", "ok.json"]
