"""Writing result files safely: checked before the work starts, never over an input or a file meta-eval did not write,
written atomically, never half-written.

:class:`OutputPlan` is the one write path of every command: built once, before any loading or scoring, from all the
command's inputs and all its outputs (``--output``, ``--save``, every ``--plot``, ``--scores-out``, the sidecar
``<file>.meta.json`` of a CSV/TSV score file, a board's folder),
it refuses an output that is an input of the run or lies in the judgment data folder (even with ``force``), one that
replaces a file meta-eval did not write (unless ``force``), two outputs on one path, and a place where nothing can be
written; it uses :func:`check_output` for each file and :func:`check_output_folder` for a folder.

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

__all__ = ["MARKER", "OutputError", "OutputPlan", "atomic_write", "check_format", "check_output",
           "check_output_folder", "check_store", "check_stores", "job_inputs", "ledger_path", "same_file", "with_marker",
           "write_json", "written_by_meta_eval"]

#: The first key of every JSON document meta-eval writes (results of ``run`` and ``learn``), by which it recognises
#: a file it may replace.
MARKER = "written_by"
_SNIFF = 4096  # bytes read to recognise a file
_PDF_TAIL = 65536  # a PDF's information dictionary (its /Creator) is written near its end


class OutputError(MetaEvalError, ValueError):
    """A result file that cannot be written where asked (the message names the path and the reason)."""


def with_marker(doc: dict) -> dict:
    """``doc`` with :data:`MARKER` first (``"written_by": "meta-eval <version>"``), as meta-eval writes JSON."""
    from meta_eval.metrics.base import package_version

    return {MARKER: f"meta-eval {package_version('meta-eval')}", **{k: v for k, v in doc.items() if k != MARKER}}


def ledger_path() -> Path:
    """The ledger of the files meta-eval wrote (:func:`atomic_write` records each one's path and SHA-256):
    ``$META_EVAL_LEDGER``, else ``written.sqlite`` in the user's state folder (``platformdirs.user_state_dir``)."""
    if os.environ.get("META_EVAL_LEDGER"):
        return Path(os.environ["META_EVAL_LEDGER"]).expanduser()
    import platformdirs

    return Path(platformdirs.user_state_dir("meta-eval")) / "written.sqlite"


def _remember(path: Path, sha256: str) -> None:
    """Record in the ledger that meta-eval wrote ``path`` with content ``sha256``; a ledger that cannot be written
    (a read-only home) records nothing, and a later write over the file then asks for ``--force``."""
    import contextlib
    import sqlite3

    try:
        ledger = ledger_path()
        ledger.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.closing(sqlite3.connect(ledger, timeout=30)) as con, con:
            con.execute("CREATE TABLE IF NOT EXISTS written (path TEXT PRIMARY KEY, sha256 TEXT NOT NULL)")
            con.execute("INSERT OR REPLACE INTO written VALUES (?, ?)", (str(path.resolve()), sha256))
    except (OSError, sqlite3.Error):
        pass


def _remembered(path: Path) -> bool:
    """The ledger holds ``path`` with its present content: meta-eval wrote it and nobody changed it since."""
    import contextlib
    import sqlite3

    from meta_eval.judgments.files import sha256_of

    ledger = ledger_path()
    try:
        if not ledger.is_file():
            return False
        with contextlib.closing(sqlite3.connect(f"{ledger.resolve().as_uri()}?mode=ro", uri=True, timeout=30)) as con:
            row = con.execute("SELECT sha256 FROM written WHERE path = ?", (str(Path(path).resolve()),)).fetchone()
        return row is not None and row[0] == sha256_of(path)
    except (OSError, sqlite3.Error):
        return False


def written_by_meta_eval(path: Path) -> bool:
    """Whether the existing file ``path`` is one meta-eval writes: one it wrote and nobody changed since (its path
    and SHA-256 are in the ledger, :func:`ledger_path`, as :func:`atomic_write` records every file), or from its
    first bytes a JSON document starting with :data:`MARKER` (results of ``run``/``learn``, :func:`with_marker`), a
    learned model (``"format": "meta-eval-learned-model"``), a figure (:mod:`meta_eval.report.figures` writes
    meta-eval as its creator: a PNG's ``tEXt`` chunk ``Software``, an SVG's ``dc:creator``, a PDF's ``/Creator``),
    or an empty file. Anything else, or a file that cannot be read, is the user's: score files (JSONL, CSV, TSV)
    are known by the ledger alone, since a user's own scores and an edited export look just like them."""
    if _remembered(path):
        return True
    try:
        with open(path, "rb") as handle:
            head = handle.read(_SNIFF)
            if head.startswith(b"%PDF"):
                handle.seek(max(0, os.fstat(handle.fileno()).st_size - _PDF_TAIL))
                return b"/Creator (meta-eval)" in handle.read(_PDF_TAIL)
    except OSError:
        return False
    if not head.strip():
        return True
    if head.startswith(b"\x89PNG"):
        return b"tEXtSoftware\x00meta-eval" in head
    if b"<svg" in head:
        return b"<dc:creator>" in head and b"<dc:title>meta-eval</dc:title>" in head
    text = head.decode("utf-8", errors="replace")
    compact = "".join(text.split())
    return compact.startswith('{"' + MARKER + '":"meta-eval') or '"format":"meta-eval-learned-model"' in compact


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
    path = Path(os.path.abspath(Path(path).expanduser()))  # "sub/../x" as "x": the folders to make are real ones
    for what, other in inputs:
        if other is not None and same_file(path, Path(other)):
            raise OutputError(f"{option} {path} is {what} of this run ({other}): writing there would replace it; "
                              f"choose another path")
    for what, folder in protected:
        if folder is not None and _inside(path, Path(folder)):
            raise OutputError(f"{option} {path} is inside {what} ({folder}), which this run reads; write elsewhere")
    if path.is_file() and not force and not written_by_meta_eval(path):
        raise OutputError(f"{option} {path} exists and meta-eval did not write it (it is not a meta-eval results, "
                          f"model or figure file, nor a file meta-eval wrote that is unchanged since); choose another "
                          f"path, or pass --force to replace it")
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
    OSError becomes an :class:`OutputError` naming ``path``. The file's path and SHA-256 then go into the ledger
    (:func:`ledger_path`), by which :func:`written_by_meta_eval` knows it later.
    """
    from meta_eval.judgments.files import sha256_of

    path = Path(os.path.abspath(Path(path).expanduser()))
    made = []
    folder = path.parent
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
        sha256 = sha256_of(tmp)
        os.replace(tmp, path)
        tmp = None
        made = []
        _remember(path, sha256)
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


def as_path(value, option: str) -> Path | None:
    """``value`` (a str or os.PathLike; None: not given) as a Path; anything else, or an empty string, is an
    :class:`OutputError` naming ``option`` (a library caller's ``run(42)`` or ``publish(..., out_dir=None)`` gets the
    command line's sentence, not pathlib's TypeError)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (str, os.PathLike)) or not str(os.fspath(value)).strip():
        raise OutputError(f"{option} must be a path (a str or os.PathLike), not {value!r}")
    return Path(os.fspath(value))


def check_format(path: Path | None, option: str, formats: tuple[str, ...], why: str = "") -> None:
    """Raise :class:`OutputError` unless the output ``path`` (None: not asked for) ends in one of ``formats``, the
    suffixes that choose its format (``(".json",)`` for ``run --output``); ``why``: a hint added to the refusal.
    A command calls it once its :class:`OutputPlan` has every output, so that a folder is named a folder and two
    outputs on one path are named as such, not as an unknown format; still before any loading or scoring."""
    if path is None or Path(path).suffix.lower() in formats:
        return
    suffix = Path(path).suffix
    names = ", ".join(formats[:-1]) + " or " + formats[-1] if len(formats) > 1 else formats[0]
    raise OutputError(f"{option} {path}: write {names} (the suffix chooses the format), not "
                      + (repr(suffix) if suffix else "a name without a suffix") + (f"; {why}" if why else ""))


def job_inputs(*, judgments=None, data_dir=None, cache=None, no_cache: bool = False, files=(), options=(),
               plugins=(), metrics=None) -> tuple[list, list]:
    """The ``(inputs, protected)`` pairs of a job for :func:`check_output`: the judgment data folder ``data_dir`` and
    the default one (``$META_EVAL_DATA``, else the user cache), always, whatever ``judgments`` names; the judgment
    file(s) named by ``judgments`` (comma-separated; a built-in set's name, with or without ``:subset``, reads the
    data folder);
    the score cache (the given or the default one, ``no_cache`` or not: it is meta-eval's store, never a result);
    the ``files`` read (pairs ``(what, path)``); the ``--plugin`` files; any ``-o KEY=VALUE`` naming an
    existing file (a saved model, a baseline file); and the model file of every ``learned:MODEL`` in ``metrics``
    (``--metrics``, a comma-separated str or a sequence of names) that exists (a bad name is the metric choice's
    error, later)."""
    from meta_eval import judgments as judgment_sets
    from meta_eval.scoring.cache import default_cache_path

    inputs = [(what, Path(p)) for what, p in files if p is not None]
    protected = [("the judgment data folder", judgment_sets.data_dir(data_dir))]
    if data_dir is not None:  # the default one too: a built-in set's file there may not be downloadable again
        protected.append(("the judgment data folder", judgment_sets.data_dir(None)))
    if isinstance(judgments, (str, os.PathLike)):
        for name in str(os.fspath(judgments)).split(","):
            name = name.strip()
            if name and not judgment_sets.is_builtin(name):
                inputs.append(("the judgment file", Path(name).expanduser()))
    inputs.append(("the score cache", Path(cache).expanduser() if cache is not None else default_cache_path()))
    inputs += [("the --plugin file", Path(p).expanduser()) for p in plugins or () if isinstance(p, (str, os.PathLike))]
    for item in options:
        value = item.split("=", 1)[1] if "=" in item else ""
        if value and Path(value).expanduser().is_file():
            inputs.append((f"an input given by -o {item.split('=', 1)[0]}", Path(value).expanduser()))
    names = metrics.split(",") if isinstance(metrics, str) else metrics if isinstance(metrics, (list, tuple)) else ()
    for name in names:
        spec = name.strip() if isinstance(name, str) else ""
        if spec.startswith("learned:"):
            from meta_eval.metrics.learned import model_path

            try:
                model = model_path(spec[len("learned:"):])
            except ValueError:
                continue
            if model.is_file():
                inputs.append((f"the model of {spec}", model))
    return inputs, protected


def check_output_folder(folder: Path, option: str, *, inputs=(), protected=(), files=(), exists: bool = False
                        ) -> None:
    """Raise :class:`OutputError` unless meta-eval may write ``files`` (names relative to it) into the folder
    ``folder`` (a leaderboard's): not the judgment data folder nor inside it (``protected``), none of ``files`` an
    input of the run (``inputs``), nor a folder of ``files`` (a board's ``figures``, whose names are known only once
    the sets are scored) one that holds an input, not a file; with ``exists`` (a board being rendered or probed,
    the index's root: the caller reports a missing one), a file must be creatable in it if it is there (tried, as
    :func:`check_output` does)."""
    folder = Path(folder).expanduser()
    for what, other in protected:
        if other is not None and _inside(folder, Path(other)):
            raise OutputError(f"{option} {folder} is inside {what} ({other}), which meta-eval reads; write elsewhere")
    for name in files:
        for what, other in inputs:
            if other is None:
                continue
            if same_file(folder / name, Path(other)):
                raise OutputError(f"{option} {folder}: its {name} is {what} of this run ({other}): writing there "
                                  "would replace it; choose another folder")
            if (folder / name).is_dir() and _inside(Path(other), folder / name):
                raise OutputError(f"{option} {folder}: its folder {name}, whose files meta-eval writes, holds {what} "
                                  f"of this run ({other}): writing there could replace it; move the file out of "
                                  "it, or choose another folder")
    if folder.exists() and not folder.is_dir():
        raise OutputError(f"{option} {folder} is a file, not a folder")
    if not exists or not folder.is_dir():
        return
    probe = folder / f".meta-eval-probe.{os.getpid()}-{secrets.token_hex(4)}"
    try:
        os.close(os.open(probe, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666))
        probe.unlink()
    except OSError as exc:
        raise OutputError(f"{option} {folder}: cannot write there: {exc.strerror or exc}") from None


def _key(path: Path) -> Path:
    try:
        return Path(path).expanduser().resolve()
    except (OSError, RuntimeError):
        return Path(path).expanduser().absolute()


class OutputPlan:
    """Every file one command writes, checked together before any loading or scoring: the one write path.

    Built from the job's inputs (the keyword arguments of :func:`job_inputs`, plus ``inputs``/``protected`` pairs),
    then :meth:`add` for each output file and :meth:`add_folder` for an output folder. Each refuses, with an
    :class:`OutputError` (exit code 2) naming the option and the path: an input of the run or a path inside the
    judgment data folder, even with ``force``; an existing file meta-eval did not write, unless ``force``; a path
    already given to another output of this command (``--output X --scores-out X``: one would replace the other);
    a folder, a parent that is a file, a folder where nothing can be created (:func:`check_output`). The files are
    then written with :func:`atomic_write` (:func:`write_json`).
    """

    def __init__(self, *, force: bool = False, inputs=(), protected=(), **job) -> None:
        self.force = bool(force)
        self.inputs, self.protected = job_inputs(**job)
        self.inputs += list(inputs)
        self.protected += list(protected)
        self.outputs: list[tuple[str, Path]] = []

    def _claim(self, path: Path, option: str) -> None:
        key = _key(path)
        for other_option, other in self.outputs:
            if key == _key(other) or same_file(path, other):
                raise OutputError(f"{option} {path} is also given to {other_option} ({other}): one output would "
                                  "replace the other; give each output its own path")
        self.outputs.append((option, path))

    def add(self, path, option: str = "--output") -> Path | None:
        """Check one output file (None: not asked for) and return it as a Path."""
        path = as_path(path, option)
        if path is None:
            return None
        check_output(path, option, inputs=self.inputs, protected=self.protected, force=self.force)
        self._claim(path, option)
        return path

    def add_folder(self, folder, option: str, files=(), *, exists: bool = False) -> Path:
        """Check an output folder (``files``: the names meta-eval writes there; ``exists``: it must exist) and
        return it as a Path; a missing ``folder`` (None) is an :class:`OutputError`."""
        path = as_path(folder, option)
        if path is None:
            raise OutputError(f"{option} must name a folder, not None")
        check_output_folder(path, option, inputs=self.inputs, protected=self.protected, files=files, exists=exists)
        for name in files:
            self._claim(path / name, f"{option} {path}'s")
        return path


def check_store(path, option: str = "answers", *, data_dir=None, cache=None) -> Path:
    """Check where a store that meta-eval creates and then reuses is made (the LLM judge's answer store, whose
    owner recognises its own SQLite file): not in the judgment data folder (nor the default one), not the score
    cache (``cache``, else the default), not a folder, under a folder that can be written; an existing file is
    accepted here. Returns it as an absolute Path; raises :class:`OutputError` naming ``option``."""
    plan = OutputPlan(force=True, data_dir=data_dir, cache=cache)
    return Path(os.path.abspath(plan.add(path, option)))


def check_stores(metrics, *, data_dir=None, cache=None, no_cache: bool = False) -> None:
    """:func:`check_store` for the store of every chosen metric that keeps one (the LLM judge's answer store,
    ``answers_path``), where the run will put it (beside the score cache unless ``answers=`` chose it); called by
    every command after choosing its metrics and before any scoring. Raises :class:`OutputError`."""
    from meta_eval.scoring.cache import default_cache_path

    for metric in metrics:
        if getattr(metric, "answers_path", None) is None:
            continue
        if not no_cache and callable(getattr(metric, "store_beside", None)):
            metric.store_beside(cache or default_cache_path())
        check_store(metric.answers_path, f"{metric.name}: answers", data_dir=data_dir, cache=cache)
