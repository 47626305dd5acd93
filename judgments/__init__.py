"""Human-judgment sets and their loaders.

``load(name_or_path)`` returns a :class:`JudgmentSet`: a built-in set by name (``chaganty``, ``essays``,
``summeval``, ``realsumm``, ``wmt21-mqm-ted``, ``wmt23``, ``frank``, ``qags``, and ``judge-bench:<name>`` for the 13
JUDGE-BENCH files), a file in the generic JSON-lines format (see :mod:`judgments.jsonl`) or a ``.json`` file in
JUDGE-BENCH's schema (see :mod:`judgments.judge_bench`). Data files are looked up in ``--data-dir``, else
``$META_EVAL_DATA``, else the user cache directory, and downloaded there from their public URL when possible.
"""
from __future__ import annotations

import importlib
from pathlib import Path

from meta_eval.judgments.base import Judgment, JudgmentError, JudgmentSet
from meta_eval.judgments.export import export_rows
from meta_eval.judgments.files import DataError, data_dir

__all__ = ["BUILTIN", "DataError", "Judgment", "JudgmentError", "JudgmentSet", "data_dir", "export_rows", "is_builtin",
           "load"]

BUILTIN = {name: f"meta_eval.judgments.{module}" for name, module in (
    ("chaganty", "chaganty"), ("essays", "essays"), ("summeval", "summeval"), ("realsumm", "realsumm"),
    ("wmt21-mqm-ted", "wmt21_mqm"), ("wmt23", "wmt23"), ("frank", "frank"), ("qags", "qags"),
    ("judge-bench", "judge_bench"))}


def is_builtin(name) -> bool:
    """Whether ``name`` (as given to ``-j``: ``SET``, ``SET:SUBSET``, ``judge-bench:<file>``) names a built-in set,
    not a file of the user's.

    >>> is_builtin("wmt21-mqm-ted:en-de"), is_builtin("judge-bench:cola"), is_builtin("data/mine.jsonl")
    (True, True, False)
    """
    return str(name).split(":", 1)[0] in BUILTIN


def load(name: str, data_dir_: str | Path | None = None, subset: str | None = None,
         download: bool = True, text: str = "repaired") -> JudgmentSet:
    """Load a built-in judgment set by name, or a generic JSON-lines file by path.

    Parameters
    ----------
    name : str
        A name in :data:`BUILTIN`, with a subset after a colon where wanted (``chaganty:all`` is ``chaganty`` with
        `subset` ``all``, as a board names it; ``judge-bench:<file>`` names a JUDGE-BENCH file), or a path to a ``.jsonl``/``.jsonl.gz`` file or a ``.json`` file (JUDGE-BENCH's schema
        if it is one object with ``annotations``/``instances``, else JSON lines).
    data_dir_ : path, optional
        Folder with the data files (default: ``$META_EVAL_DATA`` or the user cache).
    subset : str, optional
        A built-in set's subset (default: the module's ``DEFAULT_SUBSET``: the SMS paper's subset ``"sms"`` for
        chaganty and essays, ``"en-de"`` (MT systems only) for wmt21-mqm-ted and wmt23, FRANK's ``"test"`` split for
        frank, ``"cnndm"`` for qags, ``"all"`` for summeval and realsumm; each module's ``SUBSETS`` lists its
        subsets). ``judge-bench`` has no default: its subsets are its 13 files (``judge-bench:<file>`` in `name`
        says the same). For wmt21-mqm-ted and wmt23 a comma-separated list of language pairs (``"en-de,zh-en"``)
        pools them (:mod:`judgments.pooling`).
    text : {"repaired", "as-released"}
        Where a loader repairs mis-decoded UTF-8 (essays and JSONL files, with ftfy), ``"as-released"`` skips the
        repair (the SMS paper scored the essays as released). The other sets are never altered, so there ``text``
        must be ``"repaired"`` (the default) or ``"as-released"`` and both give the same texts.
    """
    from meta_eval.judgments.text import text_fixer

    text_fixer(text)  # validates
    if isinstance(name, str) and name.partition(":")[0] in BUILTIN and name.partition(":")[2]:
        prefix, _, given = name.partition(":")  # chaganty:all as publish takes it, judge-bench:<file>
        if subset not in (None, given):
            raise JudgmentError(f"{name} names the {'file' if prefix == 'judge-bench' else 'subset'} {given!r} and "
                                f"--subset another, {subset!r}: give one")
        name, subset = prefix, given
    if name in BUILTIN:
        module = importlib.import_module(BUILTIN[name])
        extra = {"text": text} if name == "essays" else {}
        return module.load(data_dir(data_dir_), subset=subset or module.DEFAULT_SUBSET, download=download, **extra)
    path = Path(name).expanduser()
    if path.suffix in (".jsonl", ".gz", ".json") or path.exists():
        if subset not in (None, "all"):
            raise JudgmentError("subsets apply to built-in sets only")
        from meta_eval.judgments import jsonl

        if path.suffix == ".json":
            from meta_eval.judgments import judge_bench

            return judge_bench.load_json(path, text=text)
        return jsonl.load(path, text=text)
    raise JudgmentError(f"unknown judgment set {name!r}: use one of {', '.join(BUILTIN)} (judge-bench:<name>) "
                         "or a path to a .jsonl file or a .json file in JUDGE-BENCH's schema")
