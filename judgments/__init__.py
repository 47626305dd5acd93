"""Human-judgment sets and their loaders.

``load(name_or_path)`` returns a :class:`JudgmentSet`: a built-in set by name (``chaganty``, ``essays``,
``summeval``, ``realsumm``, ``wmt21-mqm-ted``, ``wmt23``, ``frank``, ``qags``) or a file in
the generic JSON-lines format (see :mod:`judgments.jsonl`). Data files are looked up in ``--data-dir``, else
``$META_EVAL_DATA``, else the user cache directory, and downloaded there from their public URL when possible.
"""
from __future__ import annotations

import importlib
from pathlib import Path

from meta_eval.judgments.base import Judgment, JudgmentError, JudgmentSet
from meta_eval.judgments.export import export_rows
from meta_eval.judgments.files import DataError, data_dir

__all__ = ["BUILTIN", "DataError", "Judgment", "JudgmentError", "JudgmentSet", "data_dir", "export_rows", "load"]

BUILTIN = {name: f"meta_eval.judgments.{module}" for name, module in (
    ("chaganty", "chaganty"), ("essays", "essays"), ("summeval", "summeval"), ("realsumm", "realsumm"),
    ("wmt21-mqm-ted", "wmt21_mqm"), ("wmt23", "wmt23"), ("frank", "frank"), ("qags", "qags"))}


def load(name: str, data_dir_: str | Path | None = None, subset: str | None = None,
         download: bool = True, text: str = "repaired") -> JudgmentSet:
    """Load a built-in judgment set by name, or a generic JSON-lines file by path.

    Parameters
    ----------
    name : str
        A name in :data:`BUILTIN`, or a path to a ``.jsonl``/``.jsonl.gz`` file.
    data_dir_ : path, optional
        Folder with the data files (default: ``$META_EVAL_DATA`` or the user cache).
    subset : str, optional
        A built-in set's subset (default: the module's ``DEFAULT_SUBSET``: the SMS paper's subset ``"sms"`` for
        chaganty and essays, ``"en-de"`` (MT systems only) for wmt21-mqm-ted and wmt23, FRANK's ``"test"`` split
        for frank, ``"all"`` for the others; each module's ``SUBSETS`` lists its subsets). For wmt21-mqm-ted and
        wmt23 a comma-separated list of language pairs (``"en-de,zh-en"``) pools them (:mod:`judgments.pooling`).
    text : {"repaired", "as-released"}
        Where a loader repairs mis-decoded UTF-8 (essays and JSONL files, with ftfy), ``"as-released"`` skips the
        repair (the SMS paper scored the essays as released). The other sets are never altered, so there ``text``
        must be ``"repaired"`` (the default) or ``"as-released"`` and both give the same texts.
    """
    from meta_eval.judgments.text import text_fixer

    text_fixer(text)  # validates
    if name in BUILTIN:
        module = importlib.import_module(BUILTIN[name])
        extra = {"text": text} if name == "essays" else {}
        return module.load(data_dir(data_dir_), subset=subset or module.DEFAULT_SUBSET, download=download, **extra)
    path = Path(name).expanduser()
    if path.suffix in (".jsonl", ".gz") or path.exists():
        if subset not in (None, "all"):
            raise JudgmentError("subsets apply to built-in sets only")
        from meta_eval.judgments import jsonl

        return jsonl.load(path, text=text)
    raise JudgmentError(f"unknown judgment set {name!r}: use one of {', '.join(BUILTIN)} or a path to a .jsonl file")
