"""REALSumm (Bhandari et al., EMNLP 2020): LitePyramid judgments of CNN/DailyMail summaries from 24 systems.

File: ``realsumm/realsumm.jsonl.gz`` (see ``shared/judgments/realsumm/PROVENANCE.md``): 2,400 rows = 100 CNN/DM test
documents x 24 systems. The one human dimension, ``litepyramid_recall`` (0..1), is the share of the reference's
semantic content units that crowd workers found in the summary (the per-worker values are not in this file, so
``judges`` is empty). When missing it is downloaded from its public copy, GitHub ``neulab/BARTScore`` at commit
248f511, ``SUM/REALSumm/data.pkl`` (the judgments come from ``neulab/REALSumm``, CC BY 4.0; a pickle, pinned by SHA-256
and read without running code, see :mod:`judgments.safe_pickle`), and converted on the user's machine into exactly
this file (:mod:`judgments.convert.bartscore`; download machinery and ``META_EVAL_MIRROR``: :mod:`judgments.files`).

Each row's candidate is ``sys_summ``, its one reference is ``ref_summ`` (the CNN/DM highlights the content units were
written from) and its source is the article ``src``. Texts are tokenized (spaces before punctuation) and partly
lowercased; they are kept exactly as in the file: no detokenization, no case or whitespace change. System names are
the authors' output file names (``bart_out.txt``, ...), kept as they are. Row ids are ``<doc_id>:<system>``; the file
has no repeated pair, but should one appear, every repeat is kept with ``#2``, ``#3``, ... appended to its id (as
:mod:`judgments.chaganty` does).

Subsets: ``all`` (default, and the only one): every row.
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

SOURCE = Source("neulab/BARTScore", "248f511cb34ae3753fc81f7d7a945de5bfe33458", "SUM/REALSumm/data.pkl",
                "1f9c97d27e8fe3ade81f76ea33dc6d3b5b333a602b1c568130306039bd701942", 1510489)
FILE = DataFile(
    relpath="realsumm/realsumm.jsonl.gz",
    url=None,
    sha256="6f41ed5b9385c90e46671eb8a118faa0259030e7a6b66a1348b176a3a682d42f",
    how_to_get="it is converted from SUM/REALSumm/data.pkl of the repository neulab/BARTScore at commit "
               "248f511cb34ae3753fc81f7d7a945de5bfe33458 (see judgments/convert/bartscore.py)",
    sources=(SOURCE,),
    convert="meta_eval.judgments.convert.bartscore:realsumm",
    content_sha256="4bd69f5e8973873325c5eb53720b69e0dff2af2dfc58b1e2d43cf219cc3bb029",  # the decompressed bytes
)
DIMENSIONS = ("litepyramid_recall",)
SUBSETS = ("all",)
DEFAULT_SUBSET = "all"
#: where the data come from (repository, commit, files; the paper), shown on leaderboards and in listings
DATA_SOURCE = 'neulab/BARTScore@248f511 SUM/REALSumm/data.pkl; Bhandari et al., EMNLP 2020'




def _judgment(raw: dict) -> Judgment:
    try:
        doc_id, system = str(raw["doc_id"]), str(raw["system"])
        scores = {d: (None if raw["scores"].get(d) is None else float(raw["scores"][d])) for d in DIMENSIONS}
        return Judgment(id=f"{doc_id}:{system}", doc_id=doc_id, system=system, candidate=raw["sys_summ"],
                        references=(raw["ref_summ"],), source=raw["src"], scores=scores)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise JudgmentError(f"realsumm: malformed row ({type(exc).__name__}: {exc})") from None


def load(root: Path | None = None, subset: str = DEFAULT_SUBSET, download: bool = True) -> JudgmentSet:
    """Load the REALSumm judgments (2,400 rows); ``subset`` must be ``"all"``."""
    check_subset("realsumm", subset, SUBSETS)
    path = ensure_file(FILE, root, download=download)
    fix = f"delete it to download and convert it again ({FILE.how_to_get})"
    rows = [_judgment(raw) for raw in read_gzip_jsonl(path, fix)]
    rows = make_ids_unique(rows)
    return JudgmentSet("realsumm", rows, DIMENSIONS, "litepyramid_recall", subset=subset,
                       description="REALSumm (Bhandari et al. 2020), CNN/DailyMail summaries of 24 systems, "
                                   "LitePyramid recall 0..1",
                       language="en",
                       default_baseline="rougeL-f",
                       task="summarization", licence="Apache-2.0 (neulab/BARTScore's copy; REALSumm: CC BY 4.0)",
                       data_source=DATA_SOURCE,
                       annotators="crowd LitePyramid judgments, aggregated per summary (no per-annotator values)")
