"""Converters from the original public files of a judgment set to the data file meta-eval reads.

A converter is a function ``convert(fetched, out)``: `fetched` is the list of verified downloads
(:class:`judgments.files.Fetched`: the pinned :class:`~judgments.files.Source` and the local path of its bytes, whose
SHA-256 has already been checked), `out` the path to write. :mod:`judgments.files` calls it inside a ``.part`` folder,
checks the output's SHA-256 and renames it into place; a converter raises :class:`ConversionError` (a ValueError)
naming the source file and the record when the input is not what it expects.

The goal is the exact file in ``shared/judgments`` (same SHA-256). For gzip files that means the same gzip header
(flags, original file name, modification time, extra flags, OS byte) and the same deflate stream: :class:`GzipFormat`
records those for each published file, and :func:`write_gzip` writes them without :mod:`gzip` (whose header is not
configurable enough: it always writes OS 255 and uses zlib's default memory level 8).

Modules: :mod:`judgments.convert.bartscore` (SummEval and REALSumm from BARTScore's pickles),
:mod:`judgments.convert.wmt21_mqm` (WMT21 TED MQM TSVs), :mod:`judgments.convert.wmt23` (WMT23 DA+SQM text files
from JUDGE-BENCH), :mod:`judgments.convert.frank` (FRANK annotations and
article files, pinned in :mod:`judgments.convert.frank_pins`), :mod:`judgments.convert.qags` (QAGS MTurk files). Each
declares ``SOURCES`` (the pinned :class:`~judgments.files.Source` files) and ``CONTENT_SHA256`` (of the decompressed
output); a loader wires one in with ``DataFile(relpath, sha256=..., sources=SOURCES, convert="<module>:convert",
content_sha256=CONTENT_SHA256)``. Every converter reproduces the file in ``shared/judgments`` byte for byte here
(tests/test_downloads.py).
"""
from __future__ import annotations

import json
import os
import struct
import zlib
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["ConversionError", "GzipFormat", "jsonl_bytes", "write_gzip"]


class ConversionError(ValueError):
    """An original file does not have the structure its converter expects."""


@dataclass(frozen=True)
class GzipFormat:
    """Everything, besides the data, that decides the bytes of a gzip file (RFC 1952).

    Parameters
    ----------
    name : str
        Original file name stored in the header (FNAME); ``""``: none.
    mtime : int
        Modification time stored in the header (seconds since 1970; 0: none).
    level : int
        zlib compression level; the header's XFL byte follows it as zlib and GNU gzip set it (2 for 9, 4 for 1).
    mem_level : int
        zlib memory level (8 is zlib's and Python's default, 9 is what GNU gzip's ``-9`` output equals).
    os_code : int
        Header OS byte: 3 (Unix) as GNU gzip and C zlib write, 255 (unknown) as Python's :mod:`gzip` writes.
    """

    name: str = ""
    mtime: int = 0
    level: int = 9
    mem_level: int = 8
    os_code: int = 255


def write_gzip(path: str | os.PathLike, data: bytes, fmt: GzipFormat = GzipFormat()) -> None:
    """Write `data` to `path` as one gzip member with exactly the header and deflate settings of `fmt`.

    The default `fmt` gives the same bytes as ``gzip.GzipFile(fileobj=fh, mode="wb", compresslevel=9, mtime=0)``
    (no file name in the header, OS byte 255).
    """
    flags = 0x08 if fmt.name else 0
    xfl = 2 if fmt.level == 9 else 4 if fmt.level == 1 else 0
    header = b"\x1f\x8b\x08" + bytes([flags]) + struct.pack("<I", fmt.mtime) + bytes([xfl, fmt.os_code])
    if fmt.name:
        header += fmt.name.encode("latin-1") + b"\x00"
    deflate = zlib.compressobj(fmt.level, zlib.DEFLATED, -zlib.MAX_WBITS, fmt.mem_level)
    body = deflate.compress(data) + deflate.flush()
    trailer = struct.pack("<II", zlib.crc32(data) & 0xFFFFFFFF, len(data) & 0xFFFFFFFF)
    with open(path, "wb") as fh:
        fh.write(header + body + trailer)


def jsonl_bytes(rows: Iterable[dict]) -> bytes:
    """UTF-8 JSON lines as the published files are written: ``json.dumps(row, ensure_ascii=False)`` + newline
    (default separators ``", "`` and ``": "``, keys in insertion order, floats by ``repr``)."""
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows).encode("utf-8")
