"""Where the human-judgment data files live, and how a missing one is fetched."""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

import platformdirs
from rich.console import Console
from rich.progress import (BarColumn, DownloadColumn, Progress, TextColumn,
                           TimeRemainingColumn, TransferSpeedColumn)

ENV_VAR = "META_EVAL_DATA"
_CHUNK = 1 << 20  # 1 MiB


@dataclass(frozen=True)
class DataFile:
    """A data file: `relpath` below the data directory (e.g.
    ``"chaganty/lqual.jsonl.gz"``), public `url` (``None``: fetch by hand as
    `how_to_get` says) and expected `sha256` hex digest (``None``: unchecked).
    """

    relpath: str
    url: str | None
    sha256: str | None
    how_to_get: str = ""


class DataError(Exception):
    """A data file is missing, corrupt, or could not be downloaded."""


def data_dir(explicit: str | os.PathLike | None = None) -> Path:
    """Return the data directory (not created).

    Parameters
    ----------
    explicit : str or os.PathLike, optional
        Takes precedence; otherwise ``$META_EVAL_DATA``, otherwise the
        per-user cache folder ``<user cache>/meta-eval/judgments``. ``~``
        is expanded.
    """
    if explicit is not None and str(explicit):
        return Path(explicit).expanduser()
    if os.environ.get(ENV_VAR):
        return Path(os.environ[ENV_VAR]).expanduser()
    return platformdirs.user_cache_path("meta-eval") / "judgments"


def sha256_of(path: str | os.PathLike) -> str:
    """Return the SHA-256 hex digest of the file at `path`, read in 1 MiB chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def _manual_fix(f: DataFile, path: Path) -> str:
    src = f" from {f.url}" if f.url else ""
    how = f" How to get it: {f.how_to_get.rstrip('.')}." if f.how_to_get else ""
    return (f"download it by hand{src} and put it at {path}, or point --data-dir"
            f" / {ENV_VAR} to a folder that has {f.relpath}.{how}")


def _check_existing(f: DataFile, path: Path) -> str | None:
    """Return a problem description for an existing file, or None if fine."""
    if f.sha256 is None:
        return None
    actual = sha256_of(path)
    if actual == f.sha256.lower():
        return None
    fix = (f"delete it to re-download from {f.url}" if f.url
           else f.how_to_get or "replace it with a good copy")
    return (f"{path} is corrupt or truncated: SHA-256 expected {f.sha256}, "
            f"got {actual}. Fix: {fix.rstrip('.')}.")


def _download(f: DataFile, dest: Path, timeout: float, show: bool) -> None:
    """Fetch `f.url` into a temporary file next to `dest`, verify, then rename."""
    req = urllib.request.Request(f.url, headers={"User-Agent": "meta-eval"})
    tmp = None
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = tempfile.NamedTemporaryFile(dir=dest.parent, delete=False,
                                          prefix=".", suffix=".part")
        h, got = hashlib.sha256(), 0
        bar = Progress(TextColumn("{task.description}"), BarColumn(), DownloadColumn(),
                       TransferSpeedColumn(), TimeRemainingColumn(),
                       console=Console(stderr=True),
                       disable=not show or not sys.stderr.isatty())
        with urllib.request.urlopen(req, timeout=timeout) as resp, tmp, bar:
            length = resp.headers.get("Content-Length")
            total = int(length) if length and length.isdigit() else None
            task = bar.add_task(f.relpath, total=total)
            while chunk := resp.read(_CHUNK):
                tmp.write(chunk)
                h.update(chunk)
                got += len(chunk)
                bar.update(task, advance=len(chunk))
        if total is not None and got != total:
            raise DataError(f"connection closed after {got} of {total} bytes")
        if f.sha256 and h.hexdigest() != f.sha256.lower():
            raise DataError(f"SHA-256 checksum mismatch: expected {f.sha256}, "
                            f"got {h.hexdigest()}")
        os.replace(tmp.name, dest)
    except BaseException as exc:
        if tmp is not None:
            tmp.close()
            Path(tmp.name).unlink(missing_ok=True)
        if not isinstance(exc, Exception):
            raise
        why = exc if isinstance(exc, DataError) else f"{type(exc).__name__}: {exc}"
        raise DataError(
            f"Could not download {f.relpath} from {f.url}: {why}. "
            "Check your network connection and retry, or "
            + _manual_fix(f, dest)) from exc


def ensure_file(f: DataFile, root: Path | None = None, *, download: bool = True,
                timeout: float = 30.0, show_progress: bool = True) -> Path:
    """Return the local path of `f`, downloading it if missing.

    Parameters
    ----------
    f : DataFile
        The file wanted.
    root : pathlib.Path, optional
        Data directory; defaults to :func:`data_dir`.
    download : bool
        If False, never touch the network.
    timeout : float
        Socket timeout in seconds.
    show_progress : bool
        Show a progress bar on stderr (only when it is a terminal).

    Returns
    -------
    pathlib.Path
        Path of the present, verified file.

    Raises
    ------
    DataError
        If the file is corrupt, missing and not downloadable, or the
        download fails. Nothing half-written is left behind.
    """
    path = Path(data_dir(root)) / f.relpath
    if path.exists():
        problem = _check_existing(f, path)
        if problem:
            raise DataError(problem)
        return path
    if not download or f.url is None:
        why = "downloading is disabled" if f.url else "it cannot be fetched automatically"
        raise DataError(f"Missing data file {f.relpath} (expected at {path}); {why}."
                        " Fix: " + _manual_fix(f, path))
    _download(f, path, timeout, show_progress)
    return path


def verify_all(files: Iterable[DataFile], root: Path | None = None
               ) -> list[tuple[DataFile, str]]:
    """Return ``(file, problem)`` for every missing or corrupt file under `root`."""
    base = data_dir(root)
    problems = []
    for f in files:
        path = base / f.relpath
        if not path.exists():
            problems.append((f, f"missing: expected at {path}"))
        elif problem := _check_existing(f, path):
            problems.append((f, problem))
    return problems
