"""What made a result file: the command line, meta-eval's version and the SHA-256 of every file it read.

Every JSON document a scoring command writes (``run --output``, ``run --protocol ... --output``, ``learn
--output``, ``probe --output``, and the first line of ``score --output`` as JSONL) carries a ``"provenance"``
object (:func:`record`)::

    {"command": "meta-eval run -j mine.jsonl --limit 48 --output out.json",
     "version": "0.1.0",
     "inputs": [{"what": "the judgment file", "path": "mine.jsonl", "sha256": "..."}, ...]}

- ``command``: the command line as typed, redacted (:func:`meta_eval.metrics.redact.command_line`: a credential
  given on it is written as ``***``), set by the command line for the command it runs (:func:`begin`). A library
  call (:func:`meta_eval.task.run` and the others) records ``null``: there is no command line, and the document's
  other keys hold every setting.
- ``version``: meta-eval's version (the ``written_by`` marker says it too).
- ``inputs``: every user file the command read, as its :class:`~meta_eval.report.outputs.OutputPlan` lists them
  (the judgment file, ``--scores``, ``--plugin``, ``-o KEY=FILE`` files such as a saved model or a template, the
  model file of a ``learned:MODEL`` metric, ``--candidates``/``--references``/``--sources``/``--input``), each
  with the SHA-256 of its bytes when the document is written; the score cache is meta-eval's store, not an input,
  and is left out. A built-in set is recorded by the pinned SHA-256 of its data files
  (:class:`judgments.files.DataFile`: the download is checked against it, so the file read has those bytes), with
  ``"built_in": true``.

The files meta-eval writes to be reused record the same object: a learned model (``learn --save``,
:mod:`metrics.learned_format`) and a score file (``score --output``, ``run --scores-out``: the JSONL's first line, a
CSV/TSV's sidecar ``<file>.meta.json``, :mod:`meta_eval.scoring.score_files`).

``leaderboard publish`` records its command in ``results.json`` as before (unchanged: the committed boards are
compared byte for byte with a fresh rendering).
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

__all__ = ["begin", "command", "digest", "record"]

_COMMAND: list[list[str] | None] = [None]


def begin(args, ctx=None) -> None:
    """The arguments of the ``meta-eval`` command now running (after the program's name; None: a library call);
    with a click ``ctx``, cleared again when that command's context closes, so a later library call in the same
    process records ``null``. :class:`meta_eval.cli_options.ArgvGroup` calls it as it parses the command line."""
    _COMMAND[0] = None if args is None else [str(a) for a in args]
    if ctx is not None:
        ctx.call_on_close(lambda: begin(None))


def command() -> str | None:
    """The command line :func:`begin` set, quoted for a shell and redacted
    (:func:`meta_eval.metrics.redact.command_line`); None outside a command."""
    if _COMMAND[0] is None:
        return None
    from meta_eval.metrics.redact import command_line

    return command_line("meta-eval", _COMMAND[0])


def digest(path: str | os.PathLike) -> str | None:
    """The SHA-256 of a file's bytes (None: it cannot be read, or is not a regular file)."""
    h = hashlib.sha256()
    try:
        if not Path(path).is_file():
            return None
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                h.update(block)
    except OSError:
        return None
    return h.hexdigest()


def _built_in(judgments) -> list[dict]:
    import importlib

    from meta_eval import judgments as judgment_sets
    from meta_eval.judgments.files import DataFile

    out = []
    names = str(os.fspath(judgments)).split(",") if isinstance(judgments, (str, os.PathLike)) else []
    for given in dict.fromkeys(n.strip() for n in names):
        name = given.split(":")[0]
        if name == "judge-bench" and ":" in given:  # judge-bench:<file>: that file's pin
            from meta_eval.judgments.judge_bench import SETS

            pinned = SETS.get(given.split(":", 1)[1])
            if pinned is not None:
                f = pinned.data_file()
                out.append({"what": f"the built-in set {given}", "path": f.relpath, "sha256": f.sha256,
                            "built_in": True})
            continue
        if name not in judgment_sets.BUILTIN:
            continue
        module = importlib.import_module(judgment_sets.BUILTIN[name])
        for f in vars(module).values():
            if isinstance(f, DataFile):
                out.append({"what": f"the built-in set {name}", "path": f.relpath, "sha256": f.sha256,
                            "built_in": True})
    return out


def record(plan=None, judgments=None) -> dict:
    """The ``"provenance"`` object (see the module docstring) of a command whose inputs ``plan`` (an
    :class:`~meta_eval.report.outputs.OutputPlan`) lists; ``judgments``: the set(s) as given, for a built-in set's
    pinned digests."""
    from meta_eval.metrics.base import package_version

    inputs = _built_in(judgments) if judgments is not None else []
    seen = set()
    for what, path in (plan.inputs if plan is not None else ()):
        if what == "the score cache" or path is None:
            continue
        key = os.path.abspath(os.fspath(path))
        if key in seen:
            continue
        seen.add(key)
        sha = digest(path)
        if sha is not None:
            inputs.append({"what": what, "path": os.fspath(path), "sha256": sha})
    return {"command": command(), "version": package_version("meta-eval"), "inputs": inputs}
