"""Bounded reading of input files (judgments/limits.py): no input can exhaust the machine or hang a command.

A FIFO, a device or a folder is refused before it is opened (``meta-eval run -j /dev/zero`` grew to 23 GB before);
a line or a file over the limits is refused naming the file, the line and the limit; an integer score too large for
a float is an error naming the line, not an OverflowError. The line reader gives exactly ``bytes.splitlines()``
(hypothesis), whatever its chunking.
"""
from __future__ import annotations

import gzip
import io
import json
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from meta_eval import judgments
from meta_eval.cli import app
from meta_eval.judgments import JudgmentError
from meta_eval.judgments.limits import check_regular_file, iter_lines, read_bytes

runner = CliRunner()


def _flat(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("argv", [["run", "-j", "{x}", "-m", "rouge", "--no-cache"], ["judgments", "{x}"],
                                  ["score", "-c", "{x}", "-m", "rouge", "--no-cache"]])
def test_devices_fifos_and_folders_are_refused_before_they_are_opened(argv, tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)  # no writer: opening it for reading would block forever
    for path, what in (("/dev/zero", "is a character device"), (str(fifo), "is a FIFO (named pipe)"),
                       (str(tmp_path), "is a folder")):
        done = runner.invoke(app, [a.replace("{x}", path) for a in argv])
        assert done.exit_code == 2, done.output
        assert f"{path} {what}: meta-eval reads inputs from regular files only" in _flat(done.output)


def test_a_line_or_a_file_over_the_limit_names_the_line_and_the_limit(tmp_path, monkeypatch):
    rows = [{"id": str(i), "candidate": "word " * (10 + 300 * (i == 2)), "scores": {"q": 1.0}} for i in range(4)]
    path = tmp_path / "set.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    assert len(judgments.load(str(path))) == 4
    monkeypatch.setenv("META_EVAL_MAX_LINE_BYTES", "1000")
    with pytest.raises(JudgmentError, match=rf"{path}:3: a line longer than 1,000 bytes, .*META_EVAL_MAX_LINE_BYTES"):
        judgments.load(str(path))
    monkeypatch.delenv("META_EVAL_MAX_LINE_BYTES")
    monkeypatch.setenv("META_EVAL_MAX_INPUT_BYTES", "200")
    with pytest.raises(JudgmentError, match=rf"{path}:\d: the file holds more than 200 bytes, .*INPUT_BYTES"):
        judgments.load(str(path))
    monkeypatch.setenv("META_EVAL_MAX_INPUT_BYTES", "lots")
    with pytest.raises(JudgmentError, match="META_EVAL_MAX_INPUT_BYTES='lots' is not a positive number of bytes"):
        judgments.load(str(path))


def test_a_gzip_bomb_stops_at_the_uncompressed_limit(tmp_path, monkeypatch):
    path = tmp_path / "bomb.jsonl.gz"
    with gzip.open(path, "wb") as fh:
        fh.write(b"0" * (4 << 20))  # 4 MiB of one line, a few KB compressed
    assert path.stat().st_size < 20_000
    monkeypatch.setenv("META_EVAL_MAX_LINE_BYTES", str(1 << 20))
    with pytest.raises(JudgmentError, match=rf"{path}:1: a line longer than 1 MiB"):
        judgments.load(str(path))


def test_score_reads_line_files_within_the_limits(tmp_path, monkeypatch):
    cands = tmp_path / "c.txt"
    cands.write_text("short\n" + "long " * 100 + "\n", encoding="utf-8")
    monkeypatch.setenv("META_EVAL_MAX_LINE_BYTES", "100")
    done = runner.invoke(app, ["score", "-c", str(cands), "-m", "rouge", "--no-cache"])
    assert done.exit_code == 2 and f"{cands}:2: a line longer than 100 bytes" in _flat(done.output)
    monkeypatch.setenv("META_EVAL_MAX_INPUT_BYTES", "50")
    with pytest.raises(ValueError, match="holds more than 50 bytes"):
        read_bytes(cands)


@pytest.mark.parametrize("digits", [401, 5000])
def test_an_integer_too_large_for_a_float_is_an_error_naming_the_line(tmp_path, digits):
    path = tmp_path / "big.jsonl"
    path.write_text(json.dumps({"id": "a", "candidate": "x", "scores": {"q": 1}}) + "\n"
                    + '{"id": "b", "candidate": "y", "scores": {"q": ' + "9" * digits + "}}\n", encoding="utf-8")
    with pytest.raises(JudgmentError, match=rf"{path}:2: "):
        judgments.load(str(path))
    done = runner.invoke(app, ["run", "-j", str(path), "-m", "rouge", "--no-cache"])
    assert done.exit_code == 2 and "Traceback" not in done.output and f"{path}:2:" in _flat(done.output)


def test_a_link_to_a_regular_file_is_read(tmp_path):
    target = tmp_path / "t.txt"
    target.write_bytes(b"a\n")
    (tmp_path / "link").symlink_to(target)
    assert check_regular_file(tmp_path / "link") == tmp_path / "link"


@settings(max_examples=300, deadline=None)
@given(data=st.lists(st.sampled_from([b"a", b"bc", b"\n", b"\r", b"\r\n", b"xyz" * 5, b""]), max_size=40).map(
    b"".join), limit=st.integers(min_value=1, max_value=40))
def test_the_line_reader_is_splitlines_or_a_refusal_of_a_long_line(data, limit):
    os.environ["META_EVAL_MAX_LINE_BYTES"] = str(limit)
    try:
        expected = data.splitlines()
        # a line longer than the limit (its end not counted) is refused; any other file is split exactly
        too_long = any(len(line) > limit for line in expected)
        try:
            got = [line for _, line in iter_lines(io.BytesIO(data), Path("f"))]
        except ValueError as exc:
            assert too_long and "a line longer than" in str(exc)
        else:
            assert not too_long and got == expected
            numbers = [n for n, _ in iter_lines(io.BytesIO(data), Path("f"))]
            assert numbers == list(range(1, len(expected) + 1))
    finally:
        del os.environ["META_EVAL_MAX_LINE_BYTES"]


def test_a_text_over_the_per_text_limit_is_refused_before_scoring_naming_its_row(tmp_path, monkeypatch):
    """NLTK stops a regular expression after 5 s of wall-clock time: a 20 MB text failed every metric with NLTK's
    own message and no row, and 4-8 MB texts passed or failed with the load. Over the documented limit (1,000,000
    characters) a text is refused up front, naming the row, whatever the machine; at the limit it is scored."""
    rows = [{"id": f"r{i}", "doc_id": f"d{i // 2}", "system": f"s{i % 2}", "candidate": "a reference " + "word " * i,
             "references": ["a reference text"], "scores": {"q": float(i % 3)}} for i in range(8)]
    rows[5]["candidate"] = "x " * 500_001  # 1,000,002 characters
    path = tmp_path / "long.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    cache = tmp_path / "scores.sqlite"
    done = runner.invoke(app, ["run", "-j", str(path), "-m", "rouge,wms", "--cache", str(cache), "--workers", "1"])
    said = _flat(done.output)
    assert done.exit_code != 0 and "Traceback" not in done.output
    for metric in ("rouge", "wms"):
        assert (f"{metric}: {path}:6 (id 'r5') has a candidate of 1,000,002 characters: over meta-eval's limit of "
                f"1,000,000 characters per text") in said, said
    monkeypatch.setenv("META_EVAL_MAX_TEXT_CHARS", "2000000")
    done = runner.invoke(app, ["run", "-j", str(path), "-m", "rouge", "--no-cache", "--workers", "1", "--level",
                               "global"])
    assert done.exit_code == 0, done.output
