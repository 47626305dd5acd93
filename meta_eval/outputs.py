"""Writing result files safely: checked before the work starts, written atomically, never half-written.

:func:`check_output` tries (never guesses) that a file can be created at the path before hours of scoring;
:func:`atomic_write` writes beside the target and renames into place, removing its temporary file and the folders it
made on any error; :func:`write_json` writes a JSON document that way. Failures are :class:`OutputError`
(a ValueError) naming the path; the command line prints them and exits with code 2.
"""
from __future__ import annotations

import json
import os
import secrets
from pathlib import Path

__all__ = ["OutputError", "atomic_write", "check_output", "write_json"]


class OutputError(ValueError):
    """A result file that cannot be written where asked (the message names the path and the reason)."""


def check_output(path: Path | None, option: str = "--output") -> None:
    """Raise :class:`OutputError` unless a file can be written at ``path`` (None: no output); the command line calls
    it before any loading or scoring and exits with code 2.

    Refused, with one line naming the path: a folder, or any other existing non-regular file (a device or FIFO would
    be replaced by the atomic rename of :func:`atomic_write`); a parent that cannot be created because a regular
    file is in the way (this fails even for root); a folder where no file can be created. The last is tried, not
    guessed from permission bits (``os.access`` says yes to root on a 0555 folder and on file systems that refuse
    anyway): the missing parent folders are made, an empty probe file is created in the folder, and all of it is
    removed again at once, so nothing is left. ``option`` names the flag in the message (``--save`` for ``learn``).
    """
    if path is None:
        return
    path = Path(path).expanduser().absolute()
    if path.is_dir():
        raise OutputError(f"{option} {path} is a folder; give the path of a file (in that folder, for example)")
    if path.exists() and not path.is_file():
        raise OutputError(f"{option} {path} exists and is not a regular file; give the path of a file to write")
    folder, missing = path.parent, []
    while not folder.exists() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    if not folder.is_dir():
        raise OutputError(f"{option} {path}: cannot create the folder {path.parent}, {folder} is a file, not a "
                          "folder")
    made = []
    try:
        for new in reversed(missing):
            new.mkdir()
            made.append(new)
        probe = path.parent / f".{path.name}.{os.getpid()}-{secrets.token_hex(4)}.probe"
        os.close(os.open(probe, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666))
        probe.unlink()
    except OSError as exc:
        raise OutputError(f"{option} {path}: cannot write there: {exc.strerror or exc}"
                          + (f" ({exc.filename})" if exc.filename else "")) from None
    finally:
        for new in reversed(made):
            try:
                new.rmdir()
            except OSError:
                break


def atomic_write(path: Path, write) -> None:
    """``write(tmp)`` into a new file beside ``path``, then rename it into place (``os.replace``).

    Readers see the old file or the whole new one, never a part. The temporary file is
    ``.<name>.<pid>-<random>.tmp<suffix>`` in the same folder (same file system, so the rename is atomic; the suffix
    kept for writers that choose the format by it), created like ``open()`` creates a file (mode 0o666 minus the
    umask), synced to disk before the rename. On any error, Ctrl-C included, it is removed (and ``<tmp>.tmp``, the
    temporary file of :func:`meta_eval.score_files.write_scores`), as are the parent folders made for it; an
    OSError becomes an :class:`OutputError` naming ``path``.
    """
    path = Path(path).expanduser()
    made = []
    folder = path.parent.absolute()
    while not folder.exists() and folder != folder.parent:
        made.append(folder)
        folder = folder.parent
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        while tmp is None:
            candidate = path.with_name(f".{path.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp{path.suffix}")
            try:
                os.close(os.open(candidate, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666))
                tmp = candidate
            except FileExistsError:
                continue
        write(tmp)
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
        tmp = None
        made = []
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}"
                          + (f" ({exc.filename})" if exc.filename else "")) from None
    finally:
        if tmp is not None:
            tmp.unlink(missing_ok=True)
            tmp.with_name(tmp.name + ".tmp").unlink(missing_ok=True)
        for created in made:
            try:
                created.rmdir()
            except OSError:
                break


def write_json(path: Path, doc: dict) -> None:
    """Write ``doc`` to ``path`` as indented JSON, atomically (:func:`atomic_write`)."""
    atomic_write(path, lambda tmp: tmp.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8"))
