"""Chaganty, Mussmann & Liang (ACL 2018): human judgments of CNN/DailyMail summaries from four systems.

File: ``chaganty/lqual.jsonl.gz`` (see ``shared/judgments/chaganty/PROVENANCE.md``): one row per judged summary,
per-judge values in {-1, 0, 1} for ``overall``, ``redundancy`` and ``grammar``; the row's score is their mean.

Subsets:

- ``sms`` (default): the Sentence Mover's Similarity paper's subset (Clark et al. 2019): generated summaries (system
  not ``reference``) judged by two or more people: 2,085 rows over 583 documents. Each is scored against the CNN/DM
  reference summary of its document.
- ``all``: all 2,599 rows, including the references themselves (scored against themselves, so every
  reference-based metric gives them the maximum) and the one row with no judge (its scores are None).

The row of document 009784 whose system is ``ml;ml+rl`` (both systems wrote the same text) is kept once, with that
system name; the set declares ``multi_system_separator=";"``, so at the summary and system levels that row fills
the cell of both systems. Row ids are ``<document>:<system>``; document 006588's ``ml+rl`` summary was judged in two
batches (5 judges, then 2) and both rows are kept, the second with id ``006588:ml+rl#2``; the set declares the
duplicates policy ``"mean"`` (see :mod:`judgments.base`): the two rows are averaged into one cell at the summary and
system levels and both count at the global level. There are no source articles in this file.
"""
from __future__ import annotations

from pathlib import Path

from meta_eval.judgments.base import (
    Judgment,
    JudgmentError,
    JudgmentSet,
    check_subset,
    make_ids_unique,
    read_gzip_jsonl,
)
from meta_eval.judgments.files import DataFile, Source, ensure_file

# The data file is the authors' original file itself (downloaded and verified, not converted).
SOURCE = Source("arunchaganty/active-evaluation", "7a777a0c8697a8f55f951f394a048433377643af", "data/lqual.jsonl.gz",
                "64eb0d4941e8d537fb4dba0956814ced7f4e942bd3abcadcb072134f8b83b703", 930106)
FILE = DataFile(
    relpath="chaganty/lqual.jsonl.gz",
    url=None,
    sha256=SOURCE.sha256,
    how_to_get="the file is in the authors' repository arunchaganty/active-evaluation at commit 7a777a0 (data/); "
               "it was removed in the next commit, so the commit must be pinned.",
    sources=(SOURCE,),
)
DIMENSIONS = ("overall", "redundancy", "grammar")
SUBSETS = ("sms", "all")
DEFAULT_SUBSET = "sms"
#: where the data come from (repository, commit, files; the paper), shown on leaderboards and in listings
DATA_SOURCE = 'arunchaganty/active-evaluation@7a777a0 data/lqual.jsonl.gz; Chaganty, Mussmann & Liang, ACL 2018'




def _judgment(raw: dict) -> Judgment:
    try:
        contents = raw["input"]["contents"]
        output = raw["output"]
        responses = output["_responses"]
        scores = {d: (None if output.get(d) is None else float(output[d])) for d in DIMENSIONS}
        judges = {d: tuple(float(v) for v in responses.get(d) or ()) for d in DIMENSIONS}
        return Judgment(id=f"{contents['id']}:{contents['system']}", doc_id=str(contents["id"]),
                        system=str(contents["system"]), candidate=contents["text"],
                        references=(contents["reference"],), scores=scores, judges=judges)
    except (KeyError, TypeError, ValueError) as exc:
        raise JudgmentError(f"chaganty: malformed row ({type(exc).__name__}: {exc})") from None


def load(root: Path | None = None, subset: str = "sms", download: bool = True) -> JudgmentSet:
    """Load the Chaganty et al. (2018) judgments; ``subset`` is ``"sms"`` (default, 2,085 rows) or ``"all"``."""
    check_subset("chaganty", subset, SUBSETS)
    path = ensure_file(FILE, root, download=download)
    rows = [_judgment(raw) for raw in read_gzip_jsonl(path, f"delete it to re-download from {SOURCE.url}")]
    rows = make_ids_unique(rows)
    if subset == "sms":
        rows = [r for r in rows if r.system != "reference" and r.n_judges >= 2]
    return JudgmentSet("chaganty", rows, DIMENSIONS, "overall", subset=subset,
                       description="Chaganty et al. 2018, CNN/DailyMail summaries of 4 systems, judged -1..1",
                       duplicates="mean", multi_system_separator=";",
                       default_reason="it is the chaganty set's declared default (the SMS paper's dimension)",
                       language="en",
                       default_baseline="rougeL-f",
                       task="summarization", licence="MIT (arunchaganty/active-evaluation)",
                       data_source=DATA_SOURCE,
                       annotators=_annotators(rows))


def _annotators(rows) -> str:
    """How many judges the loaded rows have, counted (the sms subset: 2 per summary, 5 on 101; all rows: 5 on 119
    and none on one)."""
    from collections import Counter

    counts = Counter(r.n_judges for r in rows)
    usual = counts.most_common(1)[0][0] if counts else 0
    others = ", ".join(f"{k} on {v}" for k, v in sorted(counts.items(), reverse=True) if k != usual)
    return (f"Mechanical Turk workers: {usual} per summary" + (f" ({others})" if others else "")
            + ", per-judge values kept")
