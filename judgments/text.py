"""Text utilities shared by the readers of judged and to-be-scored texts (JSONL judgments, essays, ``meta-eval score``).

- :func:`repair_text` undoes mis-decoded UTF-8 (mojibake such as ``â€œ`` for a curly quote) with
  ``ftfy.fix_encoding``; :func:`text_fixer` chooses it or the identity for a ``--text`` mode (:data:`TEXT_MODES`).
- :func:`decode_line` and :func:`decode_lines` decode UTF-8 bytes strictly; invalid bytes are an error naming the
  file, the line and the column (never a byte offset into the file), so the user can open the spot in an editor.
  A UTF-8 byte-order mark at the start of a file is skipped (Windows editors write one).
- :func:`check_encodable` refuses a text holding a lone surrogate (JSON allows the escape ``"\\ud800"``, UTF-8 cannot
  encode it, so the score cache, which hashes the UTF-8 bytes, would fail far from the data).

Empty and whitespace-only texts are *not* errors here: every metric gives them a documented value (see each
metric's docstring), and a reader decides what it accepts.
"""
from __future__ import annotations

from meta_eval.judgments.base import JudgmentError

__all__ = ["TEXT_MODES", "check_encodable", "decode_line", "decode_lines", "repair_text", "text_fixer"]

TEXT_MODES = ("repaired", "as-released")
_BOM = b"\xef\xbb\xbf"


def repair_text(text: str) -> str:
    """Undo mis-decoded UTF-8 (mojibake) with ftfy; text that is already fine is returned unchanged."""
    import ftfy

    return ftfy.fix_encoding(text)


def _identity(text: str) -> str:
    return text


def text_fixer(text: str):
    """The function applied to every text for ``text`` (one of :data:`TEXT_MODES`); else :class:`JudgmentError`."""
    if text not in TEXT_MODES:
        raise JudgmentError(f"text must be one of {', '.join(TEXT_MODES)}, not {text!r}")
    return repair_text if text == "repaired" else _identity


def _bad_utf8(raw: bytes, exc: UnicodeDecodeError) -> str:
    """``"not valid UTF-8 (byte 0xff at column 12)"``: the column counts characters from 1, as editors do."""
    column = len(raw[:exc.start].decode("utf-8", errors="replace")) + 1
    return (f"not valid UTF-8 (byte 0x{raw[exc.start]:02x} at column {column}); the file must be saved as UTF-8 "
            "(was it written as Latin-1 or Windows-1252?)")


def decode_line(raw: bytes, where: str, error: type[Exception], first: bool = False) -> str:
    """One line's bytes as text; ``where`` (``"<file>:<line>"``) starts the message of ``error`` for bad UTF-8.

    ``first``: the file's first line, whose byte-order mark (if any) is dropped.
    """
    if first:
        raw = raw.removeprefix(_BOM)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{where}: {_bad_utf8(raw, exc)}") from None


def decode_lines(data: bytes, path, error: type[Exception]) -> list[str]:
    """A whole file's bytes decoded strictly and split into lines (``\\n``, ``\\r\\n`` and ``\\r`` end a line, as
    in Python's text mode; a final line end leaves an empty last item).

    Invalid UTF-8 raises ``error`` naming ``path``, the line (from 1) and the column.
    """
    data = data.removeprefix(_BOM)
    data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")  # no UTF-8 sequence holds these bytes
    try:
        return data.decode("utf-8").split("\n")
    except UnicodeDecodeError as exc:
        start = data.rfind(b"\n", 0, exc.start) + 1
        end = data.find(b"\n", exc.start)
        raw = data[start:end if end >= 0 else len(data)]
        local = UnicodeDecodeError(exc.encoding, raw, exc.start - start, exc.end - start, exc.reason)
        lineno = data.count(b"\n", 0, exc.start) + 1
        raise error(f"{path}:{lineno}: {_bad_utf8(raw, local)}") from None


def check_encodable(text: str, where: str, name: str, error: type[Exception]) -> str:
    """``text`` unchanged if UTF-8 can encode it, else ``error`` naming ``where``, ``name`` and the character."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise error(f"{where}: {name} holds the lone surrogate \\u{ord(text[exc.start]):04x} at character "
                    f"{exc.start + 1} (an unpaired \\ud800-\\udfff escape), which is not text; fix the "
                    "escape") from None
    return text
