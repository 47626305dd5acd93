"""ASAP automated essay scoring, prompt set 3: the "Essays" set of the Sentence Mover's Similarity paper.

Files (see ``shared/judgments/asap-aes-3/PROVENANCE.md``): ``asap-aes-3/asap_aes_set3.tsv`` (1,726 essays; human score
``domain1_score`` 0..3, the two raters' values kept per row) and ``asap-aes-3/reference_essay.txt`` (the
top-scoring sample essay of the SMS paper's appendix, Table 9, Sample #3). Each essay is scored against that one
reference. These files cannot be downloaded automatically: they are assembled from the Kaggle release and the paper.

Mis-decoded UTF-8 in the essays (for example U+00E2 U+0080 U+009C where a curly quote was meant) is repaired with
``ftfy.fix_encoding`` (:func:`judgments.text.repair_text`); no row is dropped for it. Anonymisation tokens
(``@CAPS1``, ``@NUM1``) stay as they are.

``text="as-released"`` keeps the essays exactly as released, mojibake included: that is the text the SMS paper's
authors scored (its 1,088 essays average 7.5 sentences, as the unrepaired text does here; the repaired text has more
sentence ends), and with it the paper's WMS and SMS cells move from .481/.429 to .423/.456 (printed .429/.457).

Subsets: ``sms`` (default): essays of 5 to 15 sentences, as in the paper, sentences counted with the same splitter
the mover metrics use (untrained Punkt) on the text *as released* (before the repair, as the paper's authors had it):
1,086 essays (the paper reports 1,088 with its splitter; counting after the repair would give 1,139). ``all``: 1,726.
"""
from __future__ import annotations

import csv
from pathlib import Path

from meta_eval.judgments.base import Judgment, JudgmentError, JudgmentSet, check_subset
from meta_eval.judgments.files import DataFile, ensure_file
from meta_eval.judgments.text import text_fixer

# Not downloadable: no public file is pinned for this set (shared/judgments/SOURCES.md lists none). The essays are the
# Kaggle ASAP-AES release (behind a Kaggle login and the competition's terms) or a copy in a student repository
# whose files carry no published checksum, and the reference essay exists only in the SMS paper's appendix.
_HOW = ("no public copy of these files is pinned (the essays come from the Kaggle "
        "ASAP-AES release, which needs a Kaggle login; the reference essay is printed only in the SMS paper). Build "
        "them by hand: asap_aes_set3.tsv = the essay_set 3 rows of Kaggle asap-aes training_set_rel3.tsv (or of "
        "data/fold_0..4/test.tsv of GitHub Rokeer/aes, commit 687873b), tab-separated with the header essay_id, "
        "essay_set, essay, rater1_domain1, rater2_domain1, domain1_score (1,726 essays); reference_essay.txt = the "
        "essay of Clark et al. 2019 (ACL), appendix A.2, Table 9, Sample #3. The SHA-256 checked is that of the "
        "project's copies (shared/judgments/asap-aes-3, described in its PROVENANCE.md): a file built by hand may "
        "differ in bytes; then use --judgments with a JSON-lines file instead")
ESSAYS = DataFile("asap-aes-3/asap_aes_set3.tsv", None,
                  "0aa64a191a84d2e80b4f9a816a5f81dc59291f6a17cf8cc57093cba00309e172", _HOW)
REFERENCE = DataFile("asap-aes-3/reference_essay.txt", None,
                     "131f70b5adaf4f0aac50690f73f9327d4febdb76c90903fe7846b6059d5d86cf", _HOW)
SUBSETS = ("sms", "all")
DEFAULT_SUBSET = "sms"
#: where the data come from (repository, commit, files; the paper), shown on leaderboards and in listings
DATA_SOURCE = "Rokeer/aes@687873b data/fold_*/test.tsv (Kaggle ASAP-AES set 3) + the SMS paper's reference essay"
_COLUMNS = ("essay_id", "essay", "rater1_domain1", "rater2_domain1", "domain1_score")


def _float(value: str, where: str) -> float:
    try:
        return float(value)
    except ValueError:
        raise JudgmentError(f"{where}: {value!r} is not a number") from None


def load(root: Path | None = None, subset: str = "sms", download: bool = True,
         text: str = "repaired") -> JudgmentSet:
    """Load ASAP set 3 essays; ``subset`` is ``"sms"`` (5-15 sentences, default) or ``"all"``; ``text`` is
    ``"repaired"`` (mojibake undone with ftfy, default) or ``"as-released"``."""
    check_subset("essays", subset, SUBSETS)
    fix = text_fixer(text)
    path = ensure_file(ESSAYS, root, download=download)
    reference = fix(ensure_file(REFERENCE, root, download=download).read_text(encoding="utf-8")).strip()
    csv.field_size_limit(1 << 24)
    with open(path, encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh, delimiter="\t")
        missing = [c for c in _COLUMNS if c not in (reader.fieldnames or ())]
        if missing:
            raise JudgmentError(f"{path}: missing columns {missing}; is this asap_aes_set3.tsv?")
        rows, raw_texts = [], {}
        start = reader.line_num + 1  # the physical line a record starts on (a quoted essay may span lines)
        for rec in reader:
            where, start = f"{path}:{start}", reader.line_num + 1
            raw_texts[rec["essay_id"]] = rec["essay"]
            judges = tuple(_float(rec[c], where) for c in ("rater1_domain1", "rater2_domain1") if rec[c] != "")
            rows.append(Judgment(id=rec["essay_id"], doc_id="asap-3", system=f"student-{rec['essay_id']}",
                                 candidate=fix(rec["essay"]), references=(reference,),
                                 scores={"domain1_score": _float(rec["domain1_score"], where)},
                                 judges={"domain1_score": judges}, where=where))
    if subset == "sms":
        from meta_eval.metrics.text import split_sentences

        keep = {rid for rid, raw in raw_texts.items() if 5 <= len(split_sentences(raw)) <= 15}
        rows = [r for r in rows if r.id in keep]
    return JudgmentSet("essays", rows, ("domain1_score",), "domain1_score", subset=subset,
                       description="ASAP-AES prompt 3 student essays vs. a reference essay, graded 0..3",
                       notes=() if text == "repaired" else ("texts as released (mojibake not repaired)",),
                       language="en",
                       default_baseline="rougeL-f",
                       task="essay scoring", licence="not stated (Hewlett Foundation ASAP-AES, Kaggle)",
                       data_source=DATA_SOURCE,
                       annotators="2 trained raters per essay (rater1_domain1, rater2_domain1), both kept")
