"""Writing result files safely: checked before the work starts, never over an input or a file meta-eval did not write,
written atomically, never half-written.

:func:`check_output` refuses a path that is one of the run's inputs (:func:`same_file`: the path, a link to it or
another name of the same file) or lies in a protected folder (the judgment data folder), and an existing file that
meta-eval did not write (:func:`written_by_meta_eval`) unless ``force``; then it tries (never guesses) that a file can
be created at the path before hours of scoring;
:func:`atomic_write` writes beside the target and renames into place, removing its temporary file and the folders it
made on any error; :func:`write_json` writes a JSON document that way. Failures are :class:`OutputError`
(a ValueError) naming the path; the command line prints them and exits with code 2.
"""
from __future__ import annotations

import json
import os
import secrets
from pathlib import Path

from meta_eval.errors import MetaEvalError

__all__ = ["MARKER", "OutputError", "atomic_write", "check_job_output", "check_output", "same_file", "with_marker",
           "write_json",
           "written_by_meta_eval"]

#: The first key of every JSON document meta-eval writes (results of ``run`` and ``learn``), by which it recognises
#: a file it may replace.
MARKER = "written_by"
_SNIFF = 4096  # bytes read to recognise a file


class OutputError(MetaEvalError, ValueError):
    """A result file that cannot be written where asked (the message names the path and the reason)."""


def with_marker(doc: dict) -> dict:
    """``doc`` with :data:`MARKER` first (``"written_by": "meta-eval <version>"``), as meta-eval writes JSON."""
    from meta_eval.metrics.base import package_version

    return {MARKER: f"meta-eval {package_version('meta-eval')}", **{k: v for k, v in doc.items() if k != MARKER}}


def written_by_meta_eval(path: Path) -> bool:
    """Whether the existing file ``path`` is one meta-eval writes, from its first bytes: a JSON document starting
    with :data:`MARKER` (results of ``run``/``learn``, :func:`with_marker`), a learned model (``"format":
    "meta-eval-learned-model"``), per-example scores of ``meta-eval score`` (JSONL whose first line is
    ``{"signatures": ...}``; CSV/TSV whose header starts with ``index`` and whose first row is index 0), or an empty
    file. Anything else, or a file that cannot be read, is the user's."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(_SNIFF)
    except OSError:
        return False
    if not head.strip():
        return True
    text = head.decode("utf-8", errors="replace")
    compact = "".join(text.split())
    if compact.startswith('{"' + MARKER + '":"meta-eval') or '"format":"meta-eval-learned-model"' in compact:
        return True
    if compact.startswith('{"signatures":['):
        return True
    lines = text.splitlines()
    if len(lines) >= 1 and Path(path).suffix.lower() in (".csv", ".tsv"):
        sep = "," if Path(path).suffix.lower() == ".csv" else "\t"
        header = lines[0].split(sep)
        return header[0] == "index" and (len(lines) == 1 or lines[1].split(sep)[0] == "0")
    return False


def same_file(a: Path, b: Path) -> bool:
    """Whether ``a`` and ``b`` name the same file: the same path once links are resolved, or the same inode (a hard
    link, a bind mount). False where either does not exist."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return Path(a).expanduser().resolve() == Path(b).expanduser().resolve()


def _inside(path: Path, folder: Path) -> bool:
    try:
        Path(path).expanduser().resolve().relative_to(Path(folder).expanduser().resolve())
        return True
    except ValueError:
        return False


def check_output(path: Path | None, option: str = "--output", *, inputs=(), protected=(), force: bool = False
                 ) -> None:
    """Raise :class:`OutputError` unless a file can be written at ``path`` (None: no output); the command line calls
    it before any loading or scoring and exits with code 2.

    Never over what is not meta-eval's: ``path`` must not be any of ``inputs`` (pairs ``(what, path)``: the judgment
    file, the score cache, the texts being scored, a saved model in use; :func:`same_file`, so a link or a hard link
    is caught), nor lie inside a ``protected`` folder (pairs ``(what, folder)``: the judgment data folder), even with
    ``force``; an existing file meta-eval did not write (:func:`written_by_meta_eval`) is replaced only with
    ``force``. Each refusal names both paths.

    Refused too, with one line naming the path: a folder, or any other existing non-regular file (a device or FIFO would
    be replaced by the atomic rename of :func:`atomic_write`); a parent that cannot be created because a regular
    file is in the way (this fails even for root); a folder where no file can be created. The last is tried, not
    guessed from permission bits (``os.access`` says yes to root on a 0555 folder and on file systems that refuse
    anyway): the missing parent folders are made, an empty probe file is created in the folder, and all of it is
    removed again at once, so nothing is left. ``option`` names the flag in the message (``--save`` for ``learn``).
    """
    if path is None:
        return
    path = Path(path).expanduser().absolute()
    for what, other in inputs:
        if other is not None and same_file(path, Path(other)):
            raise OutputError(f"{option} {path} is {what} of this run ({other}): writing there would replace it; "
                              f"choose another path")
    for what, folder in protected:
        if folder is not None and _inside(path, Path(folder)):
            raise OutputError(f"{option} {path} is inside {what} ({folder}), which this run reads; write elsewhere")
    if path.is_file() and not force and not written_by_meta_eval(path):
        raise OutputError(f"{option} {path} exists and meta-eval did not write it (it is not a meta-eval results, "
                          f"scores or model file); choose another path, or pass --force to replace it")
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
    temporary file of :func:`meta_eval.scoring.score_files.write_scores`), as are the parent folders made for it; an
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
    """Write ``doc`` to ``path`` as indented JSON with :data:`MARKER` first (:func:`with_marker`), atomically
    (:func:`atomic_write`)."""
    marked = with_marker(doc)
    atomic_write(path, lambda tmp: tmp.write_text(json.dumps(marked, indent=2) + "\n", encoding="utf-8"))


def check_job_output(path: Path | None, option: str = "--output", *, force: bool = False, judgments=None,
                     data_dir=None, cache=None, no_cache: bool = False, files=(), options=()) -> None:
    """:func:`check_output` against a job's inputs: the judgment file (or, for a built-in set, its data folder), the
    score cache, the ``files`` read (pairs ``(what, path)``) and any ``-o KEY=VALUE`` naming an existing file (a
    saved model, a baseline file). Raises :class:`OutputError`."""
    if path is None:
        return
    inputs, protected = list(files), []
    if judgments is not None:
        from meta_eval import judgments as judgment_sets

        if judgments.split(":")[0] in judgment_sets.BUILTIN:
            protected.append(("the judgment data folder", judgment_sets.data_dir(data_dir)))
        else:
            inputs.append(("the judgment file", Path(judgments)))
    if not no_cache:
        from meta_eval.scoring.cache import default_cache_path

        inputs.append(("the score cache", cache or default_cache_path()))
    for item in options:
        value = item.split("=", 1)[1] if "=" in item else ""
        if value and Path(value).expanduser().is_file():
            inputs.append((f"an input given by -o {item.split('=', 1)[0]}", Path(value).expanduser()))
    check_output(path, option, inputs=inputs, protected=protected, force=force)
