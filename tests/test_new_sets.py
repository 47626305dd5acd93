"""The judgment sets of issue 10 (wmt21-mqm-ted, frank, qags) on the real files, bad rows, and a CLI run on each.

Expected numbers come from each set's PROVENANCE.md (row counts, means), from the README of
google/wmt-mqm-human-evaluation (commit 98772eb, section "TED talks": per-system MQM) and from the original public
files in ``shared/judgments/_sources`` (FRANK's human_annotations.json, QAGS's mturk_*.jsonl), read here directly.
"""
from __future__ import annotations

import gzip
import json
from collections import defaultdict

import numpy as np
import pytest
from scipy.stats import spearmanr
from typer.testing import CliRunner

from conftest import require_metrics
from meta_eval import judgments
from meta_eval.cli import app
from meta_eval.judgments import DataError, JudgmentError, frank, qags, wmt21_mqm
from meta_eval import stats as statistics
from meta_eval.stats.ceiling import no_annotator_reason
from meta_eval.evaluate import ceiling as set_ceiling

runner = CliRunner()
FRANK_RAW = "_sources/artidoro/frank/raw/80a88fb12cc0bfc17ff6ee2c5ebb0c4f4dd8a5f4/data/human_annotations.json"
QAGS_RAW = "_sources/W4ngatang/qags/raw/47798e9b63344e2d3fb4df2def6edc18e9402d30/data/mturk_{}.jsonl"

# google/wmt-mqm-human-evaluation README.md (commit 98772eba), "TED talks": expert-based MQM per system, printed as
# the positive weighted error count (meta-eval's mqm is its negative); ref.A is system "ref", ref.B "refB".
README_TED = {
    "en-de": {"ref": "0.91", "Facebook-AI": "1.06", "Online-W": "1.12", "VolcTrans-AT": "1.24",
              "metricsystem3": "1.44", "VolcTrans-GLAT": "1.49", "HuaweiTSC": "1.50", "metricsystem1": "1.63",
              "metricsystem2": "1.69", "metricsystem5": "1.72", "UEdin": "1.77", "metricsystem4": "1.78",
              "eTranslation": "1.96", "Nemo": "2.14"},
    "zh-en": {"refB": "0.42", "DIDI-NLP": "1.65", "metricsystem2": "1.76", "metricsystem1": "1.90", "MiSS": "1.97",
              "IIE-MT": "1.98", "metricsystem4": "2.05", "metricsystem5": "2.15", "SMU": "2.202",
              "Borderline": "2.40", "NiuTrans": "2.49", "Facebook-AI": "2.64", "Online-W": "2.93",
              "metricsystem3": "2.99", "ref": "5.52"},
}


@pytest.fixture(scope="module")
def wmt(shared_data):
    return {s: judgments.load("wmt21-mqm-ted", shared_data, subset=s, download=False) for s in wmt21_mqm.SUBSETS}


@pytest.fixture(scope="module")
def frank_all(shared_data):
    return judgments.load("frank", shared_data, subset="all", download=False)


@pytest.fixture(scope="module")
def qags_all(shared_data):
    return judgments.load("qags", shared_data, subset="all", download=False)


def _by_id(jset):
    return {r.id: r for r in jset.rows}


# -- WMT21 TED MQM ----------------------------------------------------------------------------------------------------

def test_wmt_subsets_rows_and_systems(wmt, shared_data):
    assert judgments.load("wmt21-mqm-ted", shared_data, download=False).subset == "en-de"  # the default
    expected = {"en-de": 6877, "zh-en": 6877, "en-de+human": 7406, "zh-en+human": 7935}  # PROVENANCE: 529 x 13/14/15
    assert {s: len(j) for s, j in wmt.items()} == expected
    for subset, jset in wmt.items():
        lp = subset.split("+")[0]
        assert jset.documents() == 529 and all(r.doc_id.startswith(lp + ":") for r in jset.rows)
        assert jset.dimensions == ("mqm",) and jset.default_dimension == "mqm" and "MQM" in jset.default_reason
        assert jset.max_references == 1 and jset.has_sources and jset.task == "MT"
        humans = {"ref"} if lp == "en-de" else {"ref", "refB"}
        assert set(jset.systems()) & humans == (humans if subset.endswith("+human") else set())
        assert len(jset.systems()) == 13 + (len(humans) if subset.endswith("+human") else 0)
    assert any("left out" in n for n in wmt["en-de"].notes)
    assert any("maximum" in n for n in wmt["zh-en+human"].notes)


@pytest.mark.parametrize("lp", ["en-de", "zh-en"])
def test_wmt_system_means_reproduce_the_readme_table(wmt, lp):
    jset = wmt[f"{lp}+human"]
    by_system = defaultdict(list)
    for row in jset.rows:
        by_system[row.system].append(row.scores["mqm"])
    means = {system: -float(np.mean(v)) for system, v in by_system.items()}
    assert set(means) == set(README_TED[lp])
    # the README prints some means rounded (en-de HuaweiTSC 1.4975 as 1.50) and others truncated (en-de eTranslation
    # 1.9688 as 1.96, zh-en Borderline 2.4053 as 2.40): each must lie within one unit of its last printed digit
    for system, printed in README_TED[lp].items():
        decimals = len(printed.split(".")[1])
        assert abs(means[system] - float(printed)) < 10 ** -decimals, (system, means[system], printed)
    # and the README's ranks (its row order, best first) are the order of the means
    assert sorted(means, key=means.get) == list(README_TED[lp])


def test_wmt_rows_hand_checked(wmt):
    nemo = _by_id(wmt["en-de"])["en-de:1:Nemo"]
    assert nemo.scores == {"mqm": -1.0} and nemo.judges == {"mqm": (-1.0,)} and nemo.n_judges == 1
    assert nemo.source.startswith("I want to ask you all to consider for a second the very simple fact")
    assert nemo.candidate.startswith("Ich möchte Sie alle bitten, für eine Sekunde")
    assert nemo.references == (("Bitte machen Sie sich alle für einen Moment eine ganz einfache Tatsache bewusst: "
                                "So ziemlich alles, was wir über das Universum wissen, wissen wir durch Licht."),)
    assert nemo.where.endswith("wmt21_mqm_ted.jsonl.gz:3")
    zh = _by_id(wmt["zh-en+human"])
    ref_b = ("I hope you can take some time to consider a very simple fact, that is, so far, most of our knowledge "
             "about the universe comes from light.")
    # ref (ref-A) is the original English transcript, judged as a system against the standard reference refB
    assert zh["zh-en:84:ref"].scores["mqm"] == -20.0 and zh["zh-en:84:ref"].references == (ref_b,)
    assert zh["zh-en:84:ref"].candidate.startswith("I want to ask you all to consider for a second")
    assert zh["zh-en:84:refB"].candidate == ref_b and zh["zh-en:84:DIDI-NLP"].scores["mqm"] == 0.0
    assert "zh-en:84:refB" not in _by_id(wmt["zh-en"])
    # the standard reference's own rows: candidate == reference, 529 of them, only in the +human subsets
    for subset, ref_system in (("en-de+human", "ref"), ("zh-en+human", "refB")):
        own = [r for r in wmt[subset].rows if r.system == ref_system]
        assert len(own) == 529 and all(r.candidate == r.references[0] for r in own)


def test_wmt_has_no_human_ceiling(wmt):
    jset = wmt["en-de"]
    assert all(r.n_judges == 1 for r in jset.rows)
    reason = no_annotator_reason(jset, "mqm")
    assert reason is not None and "at least 2 annotator values" in reason and "(most annotators on a row: 1)" in reason
    c = set_ceiling(jset, "mqm", "spearman", "system", n_resamples=20)
    assert c.value is None and c.slots == 0 and c.note == reason


# -- FRANK ------------------------------------------------------------------------------------------------------------

def test_frank_subsets_and_dimensions(frank_all, shared_data):
    default = judgments.load("frank", shared_data, download=False)
    assert default.subset == "test" and len(default) == 1575 and default.documents() == 350  # PROVENANCE
    assert len(frank_all) == 2246 and frank_all.documents() == 499
    counts = {"valid": 671, "cnndm": 1250, "xsum": 996, "cnndm-test": 875, "cnndm-valid": 375, "xsum-test": 700,
              "xsum-valid": 296}
    for subset, n in counts.items():
        assert len(frank.read(shared_data / frank.FILE.relpath, subset)) == n, subset
    assert frank_all.dimensions == ("factuality", *frank.CATEGORIES) and len(frank.CATEGORIES) == 11
    assert frank_all.default_dimension == "factuality" and "FRANK" in frank_all.default_reason
    assert frank_all.max_references == 1 and frank_all.has_sources and frank_all.task == "factuality"
    assert all(not r.judges for r in frank_all.rows)
    assert "no per-annotator values" in no_annotator_reason(frank_all)
    cnndm = frank.read(shared_data / frank.FILE.relpath, "cnndm")
    assert set(cnndm.systems()) == {"bart", "bert_sum", "bus", "pgn", "s2s"}
    assert round(float(cnndm.human().mean()), 3) == 0.784  # PROVENANCE: mean factuality CNN/DM 0.784, XSum 0.080
    assert round(float(frank.read(shared_data / frank.FILE.relpath, "xsum").human().mean()), 3) == 0.080


def test_frank_scores_and_splits_equal_the_original_file(frank_all, shared_data):
    raw = json.loads((shared_data / FRANK_RAW).read_text(encoding="utf-8"))
    rows = _by_id(frank_all)
    test_ids = {r.id for r in frank.read(shared_data / frank.FILE.relpath, "test").rows}
    assert len(raw) == len(rows) == 2246
    for rec in raw:
        row = rows[f"{rec['hash']}:{rec['model_name']}"]
        assert row.scores["factuality"] == rec["Factuality"]
        assert all(row.scores[c] == rec[c] for c in frank.CATEGORIES)
        assert (row.id in test_ids) == (rec["split"] == "test")
    venter = rows["10138849:BERTS2S"]  # XSum, valid split
    assert venter.candidate == "jk venter is one of the world\\'s most successful scientists."
    assert venter.references == ("``maverick\\'\\'is a word that seems to follow craig venter around.",)
    assert venter.scores["OutE"] == venter.scores["factuality"] == 0.0 and venter.scores["EntE"] == 1.0


# -- QAGS -------------------------------------------------------------------------------------------------------------

def test_qags_subsets_dimensions_judges(qags_all, shared_data):
    assert qags_all.subset == "all" and len(qags_all) == 474
    path = shared_data / qags.FILE.relpath
    cnndm, xsum = qags.read(path, "cnndm"), qags.read(path, "xsum")
    assert (len(cnndm), len(xsum)) == (235, 239)
    assert cnndm.systems() == ["bottom_up"] and xsum.systems() == ["bart"]
    assert qags_all.dimensions == ("factuality", "consistent", "mean_yes")
    assert qags_all.default_dimension == "factuality" and "majority" in qags_all.default_reason
    assert qags_all.max_references == 0 and qags_all.has_sources
    assert all(len(r.judges["factuality"]) == 3 and r.references == () for r in qags_all.rows)
    # PROVENANCE: mean factuality 0.744 (CNN/DM) and 0.485 (XSum); 113 and 116 fully consistent summaries
    assert round(float(cnndm.human().mean()), 3) == 0.744 and round(float(xsum.human().mean()), 3) == 0.485
    assert (int(cnndm.human("consistent").sum()), int(xsum.human("consistent").sum())) == (113, 116)
    row = _by_id(qags_all)["xsum-000:bart"]  # Glasgow robbery summarised as Edinburgh; 2 of 3 workers said yes
    assert row.scores == {"factuality": 1.0, "consistent": 1.0, "mean_yes": 2 / 3}
    assert row.judges["factuality"] == (1.0, 1.0, 0.0)
    assert row.candidate == "Two security guards have been threatened during a robbery at a bank in edinburgh."


@pytest.mark.parametrize("dataset", ["cnndm", "xsum"])
def test_qags_scores_equal_majority_votes_of_the_original_file(qags_all, shared_data, dataset):
    rows = _by_id(qags_all)
    lines = (shared_data / QAGS_RAW.format(dataset)).read_text(encoding="utf-8").splitlines()
    assert len(lines) == {"cnndm": 235, "xsum": 239}[dataset]
    system = {"cnndm": "bottom_up", "xsum": "bart"}[dataset]
    for i, line in enumerate(lines):
        rec = json.loads(line)
        row = rows[f"{dataset}-{i:03d}:{system}"]
        votes = [[a["response"] == "yes" for a in s["responses"]] for s in rec["summary_sentences"]]
        assert row.source == rec["article"]
        assert row.scores["factuality"] == sum(sum(v) >= 2 for v in votes) / len(votes)
        assert row.scores["mean_yes"] == pytest.approx(sum(map(sum, votes)) / (3 * len(votes)), abs=1e-12)


def test_qags_human_ceiling_has_three_slots(qags_all):
    c = set_ceiling(qags_all, "factuality", "spearman", "global", n_resamples=100)
    assert c.slots == 3 and c.rows_used == 474 and c.lower <= c.value <= c.upper
    # by hand: each worker slot against the mean of the other two, Spearman, averaged over the 3 slots
    J = np.array([r.judges["factuality"] for r in qags_all.rows])
    by_hand = [spearmanr(J[:, k], np.delete(J, k, axis=1).mean(axis=1))[0] for k in range(3)]
    assert c.slot_values == pytest.approx(tuple(by_hand), abs=1e-12)
    assert c.value == pytest.approx(np.mean(by_hand), abs=1e-12)


# -- meta-eval run on each set ----------------------------------------------------------------------------------------

def _run(shared_data, tmp_path, *args):
    out = tmp_path / "out.json"
    res = runner.invoke(app, ["run", "--data-dir", str(shared_data), "--no-cache", "--output", str(out), *args])
    assert res.exit_code == 0, res.output
    return json.loads(out.read_text()), res.output


def test_run_chrf_on_wmt_system_level(shared_data, tmp_path):
    require_metrics("chrf")
    # chrF, not ROUGE: rouge-score's tokenizer drops German letters, so ROUGE is skipped on en-de (test_languages.py)
    doc, _ = _run(shared_data, tmp_path, "-j", "wmt21-mqm-ted", "-m", "chrf", "--level", "system",
                  "--resamples", "50")
    assert doc["subset"] == "en-de" and doc["human"] == "mqm" and doc["n"] == 6877
    assert {r["n"] for r in doc["results"]} == {13} and not doc["skipped"]
    assert doc["ceiling"]["value"] is None and "no human ceiling" in doc["ceiling"]["note"]
    assert any("left out" in n for n in doc["notes"])


def test_run_rouge_on_frank(shared_data, tmp_path):
    doc, _ = _run(shared_data, tmp_path, "-j", "frank", "-m", "rouge")
    assert doc["subset"] == "test" and doc["human"] == "factuality" and doc["n"] == 1575
    assert {r["n"] for r in doc["results"]} == {1575} and not doc["skipped"]
    assert doc["ceiling"]["value"] is None and "no per-annotator values" in doc["ceiling"]["note"]


def test_run_on_qags_skips_reference_based_metrics(shared_data, tmp_path):
    out = tmp_path / "out.json"
    res = runner.invoke(app, ["run", "--data-dir", str(shared_data), "--no-cache", "--output", str(out), "-j", "qags",
                              "-m", "rouge,textrank"])
    assert res.exit_code == 1, res.output  # rouge was named with -m: textrank's results written, then exit 1
    doc = json.loads(out.read_text())
    assert doc["skipped"] == [{"metric": "rouge", "reason": "needs references, which qags does not have"}]
    assert doc["subset"] == "cnndm"  # the default: QAGS-C (see tests/test_grouping_guards.py for 'all')
    assert [r["metric"] for r in doc["results"]] == ["textrank"] and doc["results"][0]["n"] == 235
    assert doc["ceiling"]["slots"] == 3 and doc["ceiling"]["value"] is not None
    res = runner.invoke(app, ["run", "-j", "qags", "--data-dir", str(shared_data), "--no-cache", "-m", "rouge"])
    assert res.exit_code != 0 and "needs references, which qags does not have" in " ".join(res.output.split())


# -- bad files: errors name the file and line -------------------------------------------------------------------------

def _lines(shared_data, module, n=3):
    with gzip.open(shared_data / module.FILE.relpath, "rt", encoding="utf-8") as fh:
        return [json.loads(next(fh)) for _ in range(n)]


def _write(tmp_path, objs, raw_tail=""):
    path = tmp_path / "bad.jsonl"
    path.write_text("".join(json.dumps(o) + "\n" for o in objs) + raw_tail, encoding="utf-8")
    return path


def test_wmt_bad_rows_name_file_and_line(shared_data, tmp_path):
    objs = _lines(shared_data, wmt21_mqm)
    bad = [dict(o) for o in objs]
    del bad[1]["sys_summ"]
    with pytest.raises(JudgmentError, match=r"bad\.jsonl:2: missing field 'sys_summ'"):
        wmt21_mqm.read(_write(tmp_path, bad))
    bad = [dict(o) for o in objs]
    bad[2]["scores"] = {"mqm": 2.0}
    with pytest.raises(JudgmentError, match=r"bad\.jsonl:3: scores\.mqm is 2"):
        wmt21_mqm.read(_write(tmp_path, bad))
    with pytest.raises(JudgmentError, match=r"bad\.jsonl:1 and .*bad\.jsonl:4 both hold \(segment, system\) "
                                            r"'en-de:1:Facebook-AI'"):
        wmt21_mqm.read(_write(tmp_path, objs + objs[:1]))
    with pytest.raises(JudgmentError, match=r"bad\.jsonl:4: invalid JSON"):
        wmt21_mqm.read(_write(tmp_path, objs, raw_tail='{"doc_id": "en-de:1", "sys'))
    assert len(wmt21_mqm.read(_write(tmp_path, objs))) == 3


def test_frank_and_qags_bad_rows_name_file_and_line(shared_data, tmp_path):
    objs = _lines(shared_data, frank)
    objs[1]["scores"] = dict(objs[1]["scores"], EntE=1.5)
    with pytest.raises(JudgmentError, match=r"bad\.jsonl:2: scores\.EntE is 1\.5, outside 0\.\.1"):
        frank.read(_write(tmp_path, objs), "all")
    objs = _lines(shared_data, qags)
    objs[2]["scores"] = dict(objs[2]["scores"], factuality=0.1)
    with pytest.raises(JudgmentError, match=r"bad\.jsonl:3: scores\.factuality is 0\.1, but the workers' answers"):
        qags.read(_write(tmp_path, objs), "cnndm")
    objs[2]["summary_sentences"][0]["responses"][0]["response"] = "maybe"
    with pytest.raises(JudgmentError, match=r"bad\.jsonl:3: summary sentence 1: response 'maybe'"):
        qags.read(_write(tmp_path, objs))


@pytest.mark.parametrize("name", ["wmt21-mqm-ted", "frank", "qags"])
def test_unknown_subset_and_missing_file(name, shared_data, tmp_path):
    with pytest.raises(JudgmentError, match="has subsets"):
        judgments.load(name, shared_data, subset="nope", download=False)
    relpath = {"wmt21-mqm-ted": wmt21_mqm, "frank": frank, "qags": qags}[name].FILE.relpath
    with pytest.raises(DataError, match=relpath.replace(".", r"\.")):
        judgments.load(name, tmp_path, download=False)


def test_judgments_lists_every_set_with_task_annotators_licence_and_source(shared_data):
    from typer.testing import CliRunner

    from meta_eval.cli import app

    from meta_eval.judgments.catalog import catalog

    res = CliRunner().invoke(app, ["judgments", "--data-dir", str(shared_data)], env={"COLUMNS": "80"})
    assert res.exit_code == 0, res.output
    blocks = {block.split(" ", 1)[0]: block for block in res.output.split("\n\n")[1:]}  # one block per set
    assert set(judgments.BUILTIN) <= set(blocks)
    entries = {e["name"]: e for e in catalog(shared_data)}
    for name, task in [("chaganty", "summarization"), ("essays", "essay scoring"), ("summeval", "summarization"),
                       ("realsumm", "summarization"), ("wmt21-mqm-ted", "MT"), ("wmt23", "MT"), ("frank", "factuality"),
                       ("qags", "factuality")]:
        assert blocks[name].startswith(f"{name} ({task})"), (name, blocks[name][:80])  # names are never cut
        assert entries[name]["task"] == task
        for key in ("annotators", "licence", "data_source"):
            assert entries[name][key], (name, key)
        for label in ("annotators:", "licence:", "from:"):
            assert label in blocks[name], (name, label)
    described = CliRunner().invoke(app, ["judgments", "qags", "--data-dir", str(shared_data)])
    assert "annotators: 3 Mechanical Turk workers" in " ".join(described.output.split())


def test_chaganty_counts_its_judges_for_the_subset_loaded(shared_data):
    """The sms subset leaves out the reference rows, 18 of the 119 with five judges: the listing says 101 there."""
    from collections import Counter

    for subset in ("sms", "all"):
        jset = judgments.load("chaganty", shared_data, subset=subset)
        counts = Counter(r.n_judges for r in jset.rows)
        described = " ".join(CliRunner().invoke(app, ["judgments", "chaganty", "--subset", subset, "--data-dir",
                                                      str(shared_data)]).output.split())
        assert f"2 per summary (5 on {counts[5]}" in described, described
    assert counts[5] == 119 and Counter(r.n_judges for r in judgments.load("chaganty", shared_data).rows)[5] == 101
