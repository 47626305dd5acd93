"""Bounded reading of input files: regular files only, at most so many bytes, lines of at most so many bytes.

Every file meta-eval reads as input (a JSON-lines judgment set, ``meta-eval score``'s texts) goes through here, so
that no input can exhaust the machine: ``/dev/zero`` or a FIFO with no writer would otherwise be read forever (the
first grew a process to 23 GB), and a file of one endless line would be held whole in memory.

- Not a regular file (a FIFO, a device, a socket, a folder): refused before it is opened.
- More than :func:`max_input_bytes` bytes (uncompressed, for ``.gz``): refused at the byte where it goes over, naming
  the file, the line and the limit. Default 8 GiB; ``META_EVAL_MAX_INPUT_BYTES`` changes it.
- A line of more than :func:`max_line_bytes` bytes: refused naming the file and the line. Default 256 MiB (a
  judged row with its source document is kilobytes); ``META_EVAL_MAX_LINE_BYTES`` changes it.
- A text (candidate, reference or source) of more than :func:`max_text_chars` characters: refused before any
  scoring, naming the row (:func:`meta_eval.scoring.runner.check_examples`). Default 1,000,000 (some 400 pages);
  ``META_EVAL_MAX_TEXT_CHARS`` changes it. Why a limit: NLTK stops every regular expression that runs longer than
  5 s of wall-clock time, so a 20 MB text failed every metric, and 4-8 MB texts passed or failed with the machine's
  load that minute. Under the limit a text's longest regular expression takes well under a second (Punkt's split
  of 1 MB: 2 s in all, in many calls; WordPunct: 0.2 s), so the outcome never depends on the load.
"""
from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO, Iterator

__all__ = ["check_regular_file", "iter_lines", "max_input_bytes", "max_line_bytes", "max_text_chars", "read_bytes"]

_DEFAULT_INPUT = 8 << 30
_DEFAULT_LINE = 256 << 20
_DEFAULT_TEXT = 1_000_000
_READ_CHUNK = 1 << 24  # bytes asked for at once by :func:`read_bytes`: memory grows with the file, not the limit
_KINDS = {stat.S_IFIFO: "a FIFO (named pipe)", stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device",
          stat.S_IFSOCK: "a socket", stat.S_IFDIR: "a folder"}


def _limit(variable: str, default: int, error: type[Exception]) -> int:
    raw = os.environ.get(variable, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise error(f"{variable}={raw!r} is not a positive number of bytes")
    return value


def max_input_bytes(error: type[Exception] = ValueError) -> int:
    """The most bytes read from one input file: ``$META_EVAL_MAX_INPUT_BYTES``, else 8 GiB."""
    return _limit("META_EVAL_MAX_INPUT_BYTES", _DEFAULT_INPUT, error)


def max_text_chars(error: type[Exception] = ValueError) -> int:
    """The longest text scored: ``$META_EVAL_MAX_TEXT_CHARS``, else 1,000,000 characters."""
    return _limit("META_EVAL_MAX_TEXT_CHARS", _DEFAULT_TEXT, error)


def max_line_bytes(error: type[Exception] = ValueError) -> int:
    """The longest line read from an input file: ``$META_EVAL_MAX_LINE_BYTES``, else 256 MiB."""
    return _limit("META_EVAL_MAX_LINE_BYTES", _DEFAULT_LINE, error)


def _size(n: int) -> str:
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n:,} bytes"


def check_regular_file(path: str | os.PathLike, error: type[Exception] = ValueError) -> Path:
    """``path`` if it is a regular file (or a link to one); else ``error`` saying what it is. Never opens it, so a
    FIFO with no writer cannot hang the caller."""
    path = Path(path)
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise error(f"{path} does not exist") from None
    except OSError as exc:
        raise error(f"{path} cannot be read ({type(exc).__name__}: {exc})") from None
    if not stat.S_ISREG(mode):
        what = _KINDS.get(stat.S_IFMT(mode), "not a regular file")
        raise error(f"{path} is {what}: meta-eval reads inputs from regular files only")
    return path


def iter_lines(handle: BinaryIO, path: str | os.PathLike, error: type[Exception] = ValueError
               ) -> Iterator[tuple[int, bytes]]:
    """``(line number, bytes)`` of every line of an open binary file, numbered from 1 as an editor does (``\\n``,
    ``\\r\\n`` and ``\\r`` end a line), without their line ends; ``error`` at the first line longer than
    :func:`max_line_bytes` or once the file has given more than :func:`max_input_bytes` bytes."""
    longest, most = max_line_bytes(error), max_input_bytes(error)
    lineno = total = 0
    pending = b""  # the start of a line that the last read did not finish
    while True:
        chunk = handle.readline(longest + 1)  # stops at a newline or after longest + 1 bytes
        if not chunk:
            for line in pending.splitlines():
                lineno += 1
                yield lineno, line
            return
        total += len(chunk)
        if total > most:
            raise error(f"{path}:{lineno + 1}: the file holds more than {_size(most)}, meta-eval's limit for an "
                        f"input file (set META_EVAL_MAX_INPUT_BYTES to raise it)")
        parts = (pending + chunk).splitlines(keepends=True)
        cut = not chunk.endswith(b"\n")  # the read stopped at the limit: a final "\r" may start a "\r\n"
        pending = b"" if parts[-1].endswith(b"\n") or (parts[-1].endswith(b"\r") and not cut) else parts.pop()
        lines = [part[:-2] if part.endswith(b"\r\n") else part[:-1] for part in parts]
        for k, line in enumerate([*lines, pending.rstrip(b"\r")]):
            if len(line) > longest:
                raise error(f"{path}:{lineno + 1 + k}: a line longer than {_size(longest)}, meta-eval's limit for one "
                            f"line (set META_EVAL_MAX_LINE_BYTES to raise it)")
        for line in lines:
            lineno += 1
            yield lineno, line


def read_bytes(path: str | os.PathLike, error: type[Exception] = ValueError) -> bytes:
    """The whole of a regular file of at most :func:`max_input_bytes` bytes (:func:`check_regular_file`), read in
    bounded pieces, so that the memory used grows with the file and never with the limit."""
    path = check_regular_file(path, error)
    most = max_input_bytes(error)
    chunks, total = [], 0
    try:
        with open(path, "rb") as handle:
            # in bounded reads: ``read(most + 1)`` would ask for an 8 GiB buffer first, which fails even for a
            # two-line file under a memory limit (ulimit -v) below it
            while total <= most:
                chunk = handle.read(min(_READ_CHUNK, most + 1 - total))
                if not chunk:
                    break
                chunks.append(chunk)
                total += len(chunk)
    except OSError as exc:
        raise error(f"{path} cannot be read ({type(exc).__name__}: {exc})") from None
    data = b"".join(chunks)
    if len(data) > most:
        raise error(f"{path} holds more than {_size(most)}, meta-eval's limit for an input file (set "
                    f"META_EVAL_MAX_INPUT_BYTES to raise it)")
    return data
