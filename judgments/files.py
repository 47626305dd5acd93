"""Where the human-judgment data files live, and how a missing one is downloaded, verified and converted.

Data directory: ``--data-dir``, else ``$META_EVAL_DATA``, else the per-user cache (:func:`data_dir`).

Pinned sources
--------------
Every downloadable built-in set declares the original public files it is made from, each a :class:`Source`:
GitHub repository, commit, path and SHA-256 (as listed in ``shared/judgments/SOURCES.md``). Its URL is
``https://github.com/<repo>/raw/<commit>/<path>`` (commit-pinned, so it never moves). The environment variable
``META_EVAL_MIRROR`` replaces ``https://github.com`` in every pinned URL: ``<mirror>/<repo>/raw/<commit>/<path>``.
It serves users behind a mirror or proxy, the tests (a local HTTP server on 127.0.0.1), and manual downloads:
put the original files in a folder laid out as ``<repo>/raw/<commit>/<path>`` and set
``META_EVAL_MIRROR=file:///that/folder``; they are then verified and converted exactly as if downloaded. A mirror
behind a password is given as ``https://user:password@host/...``: the user and password are sent as HTTP Basic
authentication to that host only (never to a host it redirects to), never over plain http to another machine than
this one, and every message and line shown has the password replaced by ``***``.

A :class:`DataFile` is either the source file itself (one source, no converter: chaganty) or the output of a
converter run on its sources (``convert="module:function"``: summeval and realsumm convert BARTScore's pickles, see
:mod:`judgments.convert`), or a file with a plain ``url`` (not pinned; the mirror does not apply), or a file that
must be obtained by hand (``how_to_get``: essays).

Download and conversion
-----------------------
Each source is streamed into a partial file (a partial folder for a converted file) beside the target, with a
rich progress bar on stderr when it is a terminal (else a line before and one after); its SHA-256 is computed while it streams and checked before any
byte is used (a converter never sees an unchecked file). The converter writes its output inside that partial
folder; the output's SHA-256 is checked, then the file is renamed into place atomically (``os.replace``). On any
error, Ctrl-C included, the partial file or folder is removed, so nothing half-written stays behind (an empty set
folder created for the download is removed too). A changed or truncated download is a :class:`DataError` naming the
target file, the URL, the expected and actual SHA-256 and the fix (a checksum mismatch is not a network problem:
the mirror or the upstream file serves other bytes).

The final file gets the permissions of any file created with ``open()`` in its folder (0o666 minus the umask, or
the folder's default ACL), whatever the converter did, so a shared data directory stays readable by its group.

Partial files after a crash
---------------------------
A process killed with SIGKILL (or a power cut) cannot remove its partial file. So partial files are named
``<file>.part-<host>-<pid>-<random>`` (a file, or a folder for a converted file): they say which process on which
machine wrote them. Whenever a data file is looked up (:func:`ensure_file`), the partial files of that data file
whose process is no longer running on this host are removed (:func:`remove_stale_parts`). A partial file of a
running process (another download of the same file, in this process or another) is never touched, nor one written
on another host (its process cannot be checked from here), nor anything on Windows (there ``os.kill(pid, 0)`` is not
a harmless probe). We chose this over a lock file because a lock left by a killed process is itself stale and needs
the same check, and two concurrent downloads of one file are harmless (each verifies its own bytes and the renames
are atomic). A recycled pid only delays the cleanup until that unrelated process ends.

Equivalence of gzip files
-------------------------
A converted ``.jsonl.gz`` file is byte-identical to the published one where the platform's zlib produces the same
deflate stream (it does with zlib 1.2.x; :mod:`judgments.convert` documents the settings). Other deflate
implementations (zlib-ng, for example) compress the same bytes differently, so a :class:`DataFile` may also declare
``content_sha256``, the SHA-256 of the *decompressed* bytes: a file whose own SHA-256 differs but whose decompressed
content matches is accepted, here and on every later load (the loaders only ever read the decompressed content).
"""

from __future__ import annotations

import hashlib
import importlib
import os
import re
import secrets
import shutil
import socket
import sys
import time
import urllib.request
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import BinaryIO, NamedTuple

import platformdirs
from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TextColumn,
    TimeRemainingColumn,
    TransferSpeedColumn,
)

from meta_eval.judgments.limits import max_input_bytes
from meta_eval.metrics.redact import add_secret, loopback, redact

ENV_VAR = "META_EVAL_DATA"
MIRROR_ENV_VAR = "META_EVAL_MIRROR"
GITHUB = "https://github.com"
_CHUNK = 1 << 20  # 1 MiB


def mirror_base() -> str:
    """The base URL pinned sources are fetched from: ``$META_EVAL_MIRROR`` (trailing ``/`` dropped), else GitHub."""
    base = os.environ.get(MIRROR_ENV_VAR, "").strip()
    return base.rstrip("/") if base else GITHUB


def pinned_url(repo: str, commit: str, path: str) -> str:
    """``<mirror or https://github.com>/<repo>/raw/<commit>/<path>``, read from the environment at each call."""
    return f"{mirror_base()}/{repo}/raw/{commit}/{path}"


@dataclass(frozen=True)
class Source:
    """An original public file: GitHub `repo` (``owner/name``), full `commit` hash, `path` in the repository,
    its `sha256` and, where known, its `size` in bytes."""

    repo: str
    commit: str
    path: str
    sha256: str
    size: int | None = None

    @property
    def url(self) -> str:
        """The pinned URL (honours ``$META_EVAL_MIRROR``)."""
        return pinned_url(self.repo, self.commit, self.path)

    @property
    def github_url(self) -> str:
        """The URL on github.com, whatever the mirror."""
        return f"{GITHUB}/{self.repo}/raw/{self.commit}/{self.path}"


class Fetched(NamedTuple):
    """A verified download handed to a converter: the pinned `source` and the local `path` of its bytes."""

    source: Source
    path: Path


@dataclass(frozen=True)
class DataFile:
    """A data file below the data directory.

    Parameters
    ----------
    relpath : str
        Path below the data directory, e.g. ``"chaganty/lqual.jsonl.gz"``.
    url : str or None
        A direct download URL (not pinned; ``META_EVAL_MIRROR`` does not apply). Takes precedence over `sources`.
    sha256 : str or None
        Expected SHA-256 of the file (``None``: unchecked).
    how_to_get : str
        How to obtain the file by hand (shown in errors).
    sources : tuple of Source
        The pinned original files. With no `convert`, there must be exactly one and the file *is* that source.
    convert : str or None
        ``"module:function"`` called as ``function(fetched: list[Fetched], out: Path)`` to write the file at `out`.
    content_sha256 : str or None
        For a gzip file: SHA-256 of its decompressed bytes, the accepted equivalence when the file's own SHA-256
        differs (see the module docstring).
    """

    relpath: str
    url: str | None = None
    sha256: str | None = None
    how_to_get: str = ""
    sources: tuple[Source, ...] = ()
    convert: str | None = None
    content_sha256: str | None = None

    def __post_init__(self):
        if self.convert is None and len(self.sources) > 1:
            raise ValueError(f"{self.relpath}: several sources need a converter")
        if self.convert is not None and not self.sources:
            raise ValueError(f"{self.relpath}: a converter needs sources")
        if self.convert is not None and ":" not in self.convert:
            raise ValueError(f"{self.relpath}: convert must be 'module:function', not {self.convert!r}")

    @property
    def downloadable(self) -> bool:
        return bool(self.url or self.sources)

    @property
    def download_urls(self) -> tuple[str, ...]:
        """Where the file (or its sources) would be fetched from now."""
        return (self.url,) if self.url else tuple(s.url for s in self.sources)


class DataError(Exception):
    """A data file is missing, corrupt, or could not be downloaded; its message is redacted (a mirror's password
    never shows, :func:`metrics.redact.redact`)."""

    def __init__(self, *args):
        super().__init__(*(redact(a) if isinstance(a, str) else a for a in args))


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


def gunzipped_sha256_of(path: str | os.PathLike) -> str | None:
    """SHA-256 of the decompressed bytes of the gzip file at `path`; None if it is not a complete gzip file."""
    import gzip
    import zlib

    h = hashlib.sha256()
    try:
        with gzip.open(path, "rb") as fh:
            while chunk := fh.read(_CHUNK):
                h.update(chunk)
    except (OSError, EOFError, zlib.error):
        return None
    return h.hexdigest()


def _summary_urls(f: DataFile, limit: int = 3) -> str:
    urls = f.download_urls
    shown = ", ".join(urls[:limit])
    return shown + (f" and {len(urls) - limit} more" if len(urls) > limit else "")


def _manual_fix(f: DataFile, path: Path) -> str:
    alt = (f" or point --data-dir / {ENV_VAR} to a folder that has {f.relpath}.")
    how = f" How to get it: {f.how_to_get.rstrip('.')}." if f.how_to_get else ""
    if f.url:
        return f"download it by hand from {f.url} and put it at {path}," + alt + how
    if f.sources and f.convert is None:
        return (f"download it by hand from {f.sources[0].github_url} and put it at {path} (or set "
                f"{MIRROR_ENV_VAR} to a mirror of {GITHUB}),"  + alt + how)
    if f.sources:
        first = f.sources[0]
        layout = f"<folder>/{first.repo}/raw/{first.commit}/{first.path}"
        more = (f" (and the other {len(f.sources) - 1} files, at the same commit(s), likewise)"
                if len(f.sources) > 1 else "")
        return (f"set {MIRROR_ENV_VAR} to a mirror of {GITHUB}, or download {first.github_url}{more} by hand, lay "
                f"it out as {layout} and set {MIRROR_ENV_VAR}=file://<folder> so that it is verified and converted "
                f"here;" + alt + how)
    return "put it at " + str(path) + "," + alt + how


def _check_existing(f: DataFile, path: Path) -> str | None:
    """Return a problem description for an existing file, or None if fine."""
    if f.sha256 is None:
        return None
    actual = sha256_of(path)
    if actual == f.sha256.lower():
        return None
    if f.content_sha256 and gunzipped_sha256_of(path) == f.content_sha256.lower():
        return None
    fix = (f"delete it to re-download from {_summary_urls(f)}" if f.downloadable
           else f.how_to_get or "replace it with a good copy")
    return (f"{path} is corrupt or truncated: SHA-256 expected {f.sha256}, "
            f"got {actual}. Fix: {fix.rstrip('.')}.")


def _progress(show: bool) -> Progress:
    return Progress(TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TransferSpeedColumn(),
                    TimeRemainingColumn(), console=Console(stderr=True),
                    disable=not show or not sys.stderr.isatty())


def _mismatch_fix(url: str, github_url: str | None, expected: str, actual: str) -> str:
    """Why a complete download can have another SHA-256, and what to do, for where it came from."""
    if github_url is None:  # a plain URL: no mirror applies
        return (f"the file at {url} is not the one meta-eval expects: it changed there, or a proxy altered it. Fix: "
                f"check what {url} serves; if it is the real file and its SHA-256 is {actual}, it changed upstream: "
                "please report it to meta-eval's maintainers.")
    base = mirror_base()
    if base != GITHUB:
        return (f"the mirror {MIRROR_ENV_VAR}={base} serves a different file at that path (an outdated, altered or "
                f"wrong copy). Fix: check the mirror: its file must be an exact copy of {github_url} (SHA-256 "
                f"{expected}); delete its copy there and fetch it again, or unset {MIRROR_ENV_VAR} to download from "
                "GitHub.")
    return ("the bytes served are not the file of the pinned commit, which GitHub does not change: a proxy, captive "
            f"portal or antivirus between you and GitHub rewrote them, or the repository's history was rewritten. "
            f"Fix: open {url} in a browser to see what is served; if it really has SHA-256 {actual}, the upstream "
            f"file changed: please report it to meta-eval's maintainers (or set {MIRROR_ENV_VAR} to a mirror that "
            "has the pinned file).")


def _request(url: str) -> urllib.request.Request:
    """The request for `url`; a user and password in it (a mirror behind a password) are taken out of the URL, which
    urllib would send as part of the host name, and sent as HTTP Basic authentication to that host only (an
    unredirected header). Over plain http to another machine than this one they are refused (:class:`DataError`),
    as the LLM judge refuses them: they would cross the network in clear."""
    import base64
    from urllib.parse import unquote, urlsplit, urlunsplit

    parts = urlsplit(url)
    req = urllib.request.Request(url, headers={"User-Agent": "meta-eval"})
    if parts.username is None and parts.password is None:
        return req
    add_secret(parts.password)
    if parts.scheme == "http" and not loopback(parts.hostname):
        raise DataError(f"{MIRROR_ENV_VAR} or the URL {url} sends a user and password over plain http to "
                        f"{parts.hostname}, which is not this machine: they would cross the network in clear. Fix: "
                        "use the mirror's https:// address")
    req = urllib.request.Request(urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2])),
                                 headers={"User-Agent": "meta-eval"})
    token = f"{unquote(parts.username or '')}:{unquote(parts.password or '')}".encode()
    req.add_unredirected_header("Authorization", "Basic " + base64.b64encode(token).decode("ascii"))
    return req


def _fetch(url: str, sha256: str | None, size: int | None, out: BinaryIO, *, label: str, f: DataFile, dest: Path,
           timeout: float, bar: Progress, task, set_total: bool = False, github_url: str | None = None) -> None:
    """Stream `url` into `out`; raise DataError unless it is complete and has SHA-256 `sha256`.

    A connection closed before the announced length is a network problem (retry). A complete response with another
    SHA-256 is not: the message names the file, both SHA-256 and the cause for where it came from (the mirror of
    ``META_EVAL_MIRROR``, GitHub at `github_url`, or a plain URL) and the fix (:func:`_mismatch_fix`).
    """
    req = _request(url)
    h, got, total = hashlib.sha256(), 0, None
    most = size if size is not None else max_input_bytes(DataError)  # the pinned size, plus nothing
    allowed = download_seconds(size)
    started = time.monotonic()
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            length = resp.headers.get("Content-Length")
            total = int(length) if length and length.isdigit() else None
            if set_total and total is not None:
                bar.update(task, total=total)
            # read1: whatever has arrived (a server that drips a byte at a time never blocks a full chunk)
            while chunk := resp.read1(min(_CHUNK, most + 1 - got)):
                if got + len(chunk) > most:  # one byte past the pinned size: stop, write nothing of it
                    raise _Oversize(got + len(chunk))
                out.write(chunk)
                h.update(chunk)
                got += len(chunk)
                bar.update(task, advance=len(chunk))
                if time.monotonic() - started > allowed:
                    raise _TooSlow(got)
        out.flush()
    except _Oversize as exc:
        pinned = "the pinned size" if size is not None else "meta-eval's limit for an input file"
        raise DataError(
            f"Could not download {label} from {url}: the server sent more than {pinned} ({most:,} bytes; at least "
            f"{exc.args[0]:,} arrived), so it is not the pinned file; the download was stopped there and nothing was "
            f"written to {dest}. Fix: check the mirror or URL, or " + _manual_fix(f, dest)) from None
    except _TooSlow as exc:
        raise DataError(
            f"Could not download {label} from {url}: only {exc.args[0]:,} of {size or total or 0:,} bytes arrived in "
            f"{allowed:.0f} s, the time allowed for this file ({_FLOOR_RATE // 1000} kB/s at least, {_GRACE:.0f} s "
            f"to start); nothing was written to {dest}. Fix: retry on a faster connection, set "
            f"{DEADLINE_ENV_VAR}=<seconds> to allow longer, or " + _manual_fix(f, dest)) from None
    except Exception as exc:
        raise DataError(
            f"Could not download {label} from {url}: {type(exc).__name__}: {exc}. "
            "Check your network connection and retry, or " + _manual_fix(f, dest)) from exc
    actual = h.hexdigest()
    if total is not None and got != total:
        expected = f"expected SHA-256 {sha256}, " if sha256 else ""
        raise DataError(
            f"Could not download {label} from {url}: the connection closed after {got:,} of {total:,} bytes (a "
            f"network problem; {expected}SHA-256 of the part that arrived: {actual}). Nothing was written to {dest}. "
            "Fix: retry; if it fails again, check your network or proxy, or " + _manual_fix(f, dest))
    if sha256 and actual != sha256.lower():
        sizes = (f"got {got:,} bytes where the pinned file has {size:,}" if size is not None and got != size
                 else f"{got:,} bytes")
        raise DataError(
            f"Could not download {label}: SHA-256 checksum mismatch for {url}: expected {sha256}, got {actual} "
            f"({sizes}). The whole response arrived, so this is not a network error and retrying will not help: "
            f"{_mismatch_fix(url, github_url, sha256, actual)} Nothing was written to {dest}. To get the file "
            "another way: " + _manual_fix(f, dest))


class _Oversize(Exception):
    """More bytes arrived than the pinned size (args: how many)."""


class _TooSlow(Exception):
    """The download ran past its deadline (args: bytes that arrived)."""


#: Sets the seconds a download may take in all (default: :func:`download_seconds`).
DEADLINE_ENV_VAR = "META_EVAL_DOWNLOAD_SECONDS"
_FLOOR_RATE = 20_000  # bytes/s: a slower download is given up
_GRACE = 60.0  # seconds added to every deadline (connection, a slow start)


def download_seconds(size: int | None) -> float:
    """The overall deadline of one download: ``$META_EVAL_DOWNLOAD_SECONDS``, else 60 s plus the pinned size at
    20 kB/s (930 kB: 107 s; 50 MB: 43 min); for a file of unknown size, 60 s plus 1 GiB at that rate. The socket
    timeout alone never ends a download that sends a byte now and then."""
    raw = os.environ.get(DEADLINE_ENV_VAR, "").strip()
    if raw:
        try:
            value = float(raw)
        except ValueError:
            value = 0.0
        if not value > 0:
            raise DataError(f"{DEADLINE_ENV_VAR}={raw!r} is not a positive number of seconds")
        return value
    return _GRACE + (size if size is not None else 1 << 30) / _FLOOR_RATE


def _run_converter(f: DataFile, fetched: list[Fetched], out: Path, dest: Path) -> None:
    module_name, func_name = f.convert.split(":", 1)
    func = getattr(importlib.import_module(module_name), func_name)
    try:
        func(fetched, out)
    except Exception as exc:
        raise DataError(
            f"Could not convert {', '.join(str(x.source.path) for x in fetched[:3])} into {f.relpath} "
            f"({f.convert}): {type(exc).__name__}: {exc}. The sources matched their pinned SHA-256, so this is a bug "
            f"in meta-eval's converter: please report it; meanwhile " + _manual_fix(f, dest)) from exc


def _verify_output(f: DataFile, out: Path, dest: Path) -> None:
    if f.sha256 is None:
        return
    actual = sha256_of(out)
    if actual == f.sha256.lower():
        return
    if f.content_sha256:
        content = gunzipped_sha256_of(out)
        if content == f.content_sha256.lower():
            return
        extra = f" (decompressed: expected {f.content_sha256}, got {content})"
    else:
        extra = ""
    raise DataError(
        f"The file converted from {_summary_urls(f)} is not the expected {f.relpath}: SHA-256 expected "
        f"{f.sha256}, got {actual}{extra}. Nothing was written to {dest}. Fix: report this as a bug in "
        f"meta-eval's converter ({f.convert}); meanwhile " + _manual_fix(f, dest))


def _missing_ancestors(folder: Path) -> list[Path]:
    """`folder` and its ancestors that do not exist yet, deepest first."""
    missing = []
    while not folder.exists() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    return missing


def _host() -> str:
    """This machine's name as written in partial file names (characters other than ``[A-Za-z0-9_.]`` become _)."""
    return re.sub(r"[^A-Za-z0-9_.]", "_", socket.gethostname() or "localhost")[:64]


def _part_pattern(dest: Path) -> re.Pattern:
    """``<dest name>.part-<host>-<pid>-<8 hex digits>`` (:func:`_host` has no ``-``, so the fields split)."""
    return re.compile(rf"{re.escape(dest.name)}\.part-(?P<host>[A-Za-z0-9_.]+)-(?P<pid>\d+)-(?P<token>[0-9a-f]{{8}})")


def _running(pid: int) -> bool:
    """Whether process `pid` exists on this host (signal 0 checks without sending anything). In doubt: True."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # PermissionError: it exists, as another user's process
        return True
    return True


def remove_stale_parts(dest: Path) -> list[Path]:
    """Remove the partial downloads of `dest` whose process is no longer running on this host; return them.

    A partial file or folder is named ``<dest name>.part-<host>-<pid>-<random>`` (see the module docstring). One of
    another host, of a running process (this one included) or any other name is left alone; so is everything on
    Windows. Errors (a read-only data folder, a race with another cleaner) are ignored: this is housekeeping.
    """
    folder = Path(dest).parent
    if os.name == "nt" or not folder.is_dir():
        return []
    pattern, host, removed = _part_pattern(Path(dest)), _host(), []
    try:
        entries = list(folder.iterdir())
    except OSError:
        return []
    for entry in entries:
        m = pattern.fullmatch(entry.name)
        if m is None or m["host"] != host or _running(int(m["pid"])):
            continue
        try:
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()
        except OSError:
            continue
        removed.append(entry)
    return removed


def _part_name(dest: Path) -> Path:
    return dest.with_name(f"{dest.name}.part-{_host()}-{os.getpid()}-{secrets.token_hex(4)}")


def _new_part_file(dest: Path) -> Path:
    """Create an empty partial file beside `dest` (:func:`_part_name`), with the mode ``open()`` gives a new file
    (0o666 minus the umask; :func:`tempfile.mkstemp` would make it 0600), which the final file keeps."""
    while True:
        part = _part_name(dest)
        try:
            os.close(os.open(part, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666))
            return part
        except FileExistsError:
            continue


def _new_part_folder(dest: Path) -> Path:
    """Create an empty partial folder beside `dest` (:func:`_part_name`; mode 0o777 minus the umask)."""
    while True:
        part = _part_name(dest)
        try:
            part.mkdir()
            return part
        except FileExistsError:
            continue


def _give_usual_mode(path: Path, folder: Path) -> None:
    """Set `path`'s permission bits to those of a file newly created by ``open()`` in `folder` (umask and default
    ACL applied), whatever the converter that wrote `path` used (a temporary file would be 0600)."""
    probe = folder / f".mode-probe-{os.getpid()}-{secrets.token_hex(4)}"
    os.close(os.open(probe, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666))
    try:
        mode = probe.stat().st_mode & 0o777
    finally:
        probe.unlink(missing_ok=True)
    os.chmod(path, mode)


def _obtain(f: DataFile, dest: Path, timeout: float, show: bool) -> None:
    """Download (and convert) `f` into `dest` atomically; on any error leave nothing behind."""
    created = _missing_ancestors(dest.parent)
    work: Path | None = None
    part: Path | None = None
    plain = show and not sys.stderr.isatty()  # no bar without a terminal: a line before and after instead
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        if plain:
            what = f.url or (f.sources[0].url if len(f.sources) == 1 else f"{len(f.sources)} pinned files")
            print(redact(f"downloading {f.relpath} from {what} into {dest.parent}"), file=sys.stderr, flush=True)
        with _progress(show) as bar:
            if f.url or f.convert is None:
                url, sha, size = ((f.url, f.sha256, None) if f.url else
                                  (f.sources[0].url, f.sources[0].sha256, f.sources[0].size))
                task = bar.add_task(f.relpath, total=size)
                part = _new_part_file(dest)
                with open(part, "wb") as fh:
                    _fetch(url, sha, size, fh, label=f.relpath, f=f, dest=dest, timeout=timeout, bar=bar, task=task,
                           set_total=size is None, github_url=None if f.url else f.sources[0].github_url)
                if sha != f.sha256:
                    _verify_output(f, part, dest)
                os.replace(part, dest)
                part = None
                if plain:
                    print(f"downloaded {f.relpath}: SHA-256 verified", file=sys.stderr, flush=True)
                return
            work = _new_part_folder(dest)
            sizes = [s.size for s in f.sources]
            total = sum(sizes) if all(n is not None for n in sizes) else None
            n = len(f.sources)
            task = bar.add_task(f.relpath if n == 1 else f"{f.relpath} ({n} files)", total=total)
            fetched = []
            for i, source in enumerate(f.sources):
                local = work / f"{i:04d}-{PurePosixPath(source.path).name}"
                with open(local, "wb") as fh:
                    _fetch(source.url, source.sha256, source.size, fh, label=f"{source.path} (for {f.relpath})",
                           f=f, dest=dest, timeout=timeout, bar=bar, task=task, github_url=source.github_url)
                fetched.append(Fetched(source, local))
            out = work / dest.name
            bar.update(task, description=f"converting into {f.relpath}")
            _run_converter(f, fetched, out, dest)
            _verify_output(f, out, dest)
            _give_usual_mode(out, work)
            os.replace(out, dest)
            if plain:
                print(f"downloaded and converted {f.relpath}: SHA-256 verified", file=sys.stderr, flush=True)
    except BaseException as exc:
        if part is not None:
            part.unlink(missing_ok=True)
        if work is not None:
            shutil.rmtree(work, ignore_errors=True)
            work = None
        for folder in created:
            try:
                folder.rmdir()
            except OSError:
                break
        if isinstance(exc, DataError) or not isinstance(exc, Exception):
            raise
        raise DataError(f"Could not obtain {f.relpath} from {_summary_urls(f)}: {type(exc).__name__}: {exc}. "
                        "Fix: " + _manual_fix(f, dest)) from exc
    finally:
        if work is not None:
            shutil.rmtree(work, ignore_errors=True)


def ensure_file(f: DataFile, root: Path | None = None, *, download: bool = True,
                timeout: float = 30.0, show_progress: bool = True) -> Path:
    """Return the local path of `f`, downloading (and converting) it if missing.

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
        download or conversion fails. Nothing half-written is left behind.
    """
    path = Path(data_dir(root)) / f.relpath
    remove_stale_parts(path)  # left by a download that was killed (SIGKILL, power cut): see the module docstring
    if path.exists():
        problem = _check_existing(f, path)
        if problem:
            raise DataError(problem)
        return path
    if not download or not f.downloadable:
        why = (f"downloading is disabled (it would come from {_summary_urls(f)})" if f.downloadable
               else "it cannot be fetched automatically")
        raise DataError(f"Missing data file {f.relpath} (expected at {path}); {why}."
                        " Fix: " + _manual_fix(f, path))
    _obtain(f, path, timeout, show_progress)
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
