"""SummEval (Fabbri et al., TACL 2021): expert judgments of CNN/DailyMail summaries from 16 systems.

File: ``summeval/summeval.jsonl.gz`` (see ``shared/judgments/summeval/PROVENANCE.md``): 1,600 rows = 100 CNN/DM test
documents x 16 systems (``M0`` .. ``M23``). Each row's ``scores`` hold ``coherence``, ``consistency``, ``fluency``
and ``relevance``, each the mean of three expert annotations on a 1..5 scale (the per-annotator values are not in this
file, so ``judges`` is empty). When missing it is downloaded from its public copy, GitHub ``neulab/BARTScore`` at
commit 248f511, ``SUM/SummEval/data.pkl`` (a pickle, pinned by SHA-256 and read without running code, see
:mod:`judgments.safe_pickle`), and converted on the user's machine into exactly this file
(:mod:`judgments.convert.bartscore`; download machinery and ``META_EVAL_MIRROR``: :mod:`judgments.files`).

Default dimension: ``relevance``, the content dimension ("does the summary keep the important information of the
source?"), which is the one comparable to Chaganty et al.'s ``overall`` and REALSumm's pyramid recall; the other three
judge writing quality or faithfulness, which reference-overlap metrics are not built to measure.

Each row's candidate is ``sys_summ``; its references are the 11 ``ref_summs`` in file order (the original CNN/DM
highlights, which must equal ``ref_summ`` or the row is rejected, then 10 crowd-written summaries), so multi-reference
metrics see all 11; its source is the article ``src``. Texts are tokenized (spaces before punctuation, as in
``Tottenham 's draw .``) and are kept exactly as in the file, trailing spaces included: no detokenization, no case or
whitespace change. Row ids are ``<doc_id>:<system>``; the file has no repeated pair, but should one appear, every
repeat is kept with ``#2``, ``#3``, ... appended to its id (as :mod:`judgments.chaganty` does).

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

SOURCE = Source("neulab/BARTScore", "248f511cb34ae3753fc81f7d7a945de5bfe33458", "SUM/SummEval/data.pkl",
                "008f1639a3352f0248cac88b74ff431c27287a027a888902ef425a26005f0acf", 1176833)
FILE = DataFile(
    relpath="summeval/summeval.jsonl.gz",
    url=None,
    sha256="78cae3d44617349e743480cb8ff89d17c4fb991784bafbead65ed0083292fd17",
    how_to_get="it is converted from SUM/SummEval/data.pkl of the repository neulab/BARTScore at commit "
               "248f511cb34ae3753fc81f7d7a945de5bfe33458 (see judgments/convert/bartscore.py)",
    sources=(SOURCE,),
    convert="meta_eval.judgments.convert.bartscore:summeval",
    content_sha256="4a9a975e5c685fcc4da3d835cfd64efede15015524ac8a281dd29cde473500ea",  # the decompressed bytes
)
DIMENSIONS = ("coherence", "consistency", "fluency", "relevance")
SUBSETS = ("all",)
DEFAULT_SUBSET = "all"
#: where the data come from (repository, commit, files; the paper), shown on leaderboards and in listings
DATA_SOURCE = 'neulab/BARTScore@248f511 SUM/SummEval/data.pkl; Fabbri et al., TACL 2021'




def _judgment(raw: dict) -> Judgment:
    try:
        doc_id, system = str(raw["doc_id"]), str(raw["system"])
        refs = raw["ref_summs"]
        if not isinstance(refs, list) or not refs or not all(isinstance(r, str) for r in refs):
            raise TypeError("ref_summs is not a non-empty list of strings")
        if refs[0] != raw["ref_summ"]:
            raise ValueError(f"row {doc_id}:{system}: the first of ref_summs differs from ref_summ")
        scores = {d: (None if raw["scores"].get(d) is None else float(raw["scores"][d])) for d in DIMENSIONS}
        return Judgment(id=f"{doc_id}:{system}", doc_id=doc_id, system=system, candidate=raw["sys_summ"],
                        references=tuple(refs), source=raw["src"], scores=scores)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise JudgmentError(f"summeval: malformed row ({type(exc).__name__}: {exc})") from None


def load(root: Path | None = None, subset: str = DEFAULT_SUBSET, download: bool = True) -> JudgmentSet:
    """Load the SummEval judgments (1,600 rows); ``subset`` must be ``"all"``."""
    check_subset("summeval", subset, SUBSETS)
    path = ensure_file(FILE, root, download=download)
    fix = f"delete it to download and convert it again ({FILE.how_to_get})"
    rows = [_judgment(raw) for raw in read_gzip_jsonl(path, fix)]
    rows = make_ids_unique(rows)
    return JudgmentSet("summeval", rows, DIMENSIONS, "relevance", subset=subset,
                       description="SummEval (Fabbri et al. 2021), CNN/DailyMail summaries of 16 systems, judged 1..5",
                       language="en",
                       default_baseline="rougeL-f",
                       task="summarization", licence="Apache-2.0 (neulab/BARTScore's copy; SummEval: MIT)",
                       data_source=DATA_SOURCE,
                       annotators="3 experts per summary, only their mean in this copy (no per-annotator values)")
