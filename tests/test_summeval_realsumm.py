"""Tests for the SummEval and REALSumm loaders on the real data, bad data files, and the CLI on both sets."""
from __future__ import annotations

import gzip
import json
import re

import pytest
from typer.testing import CliRunner

from meta_eval import judgments
from meta_eval.cli import app
from meta_eval.judgments import DataError, JudgmentError, realsumm, summeval

runner = CliRunner()


def _raw_rows(path):
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


@pytest.fixture(scope="module")
def summeval_set(shared_data):
    return judgments.load("summeval", shared_data, download=False)


@pytest.fixture(scope="module")
def realsumm_set(shared_data):
    return judgments.load("realsumm", shared_data, download=False)


# -- SummEval ---------------------------------------------------------------------------------------------------------

def test_summeval_counts_and_defaults(summeval_set):
    assert summeval_set.name == "summeval"
    assert summeval_set.subset == "all"
    assert len(summeval_set) == 1600
    assert summeval_set.documents() == 100
    assert len(summeval_set.systems()) == 16
    assert summeval_set.dimensions == ("coherence", "consistency", "fluency", "relevance")
    assert summeval_set.default_dimension == "relevance"
    assert summeval_set.has_sources


def test_summeval_rows(summeval_set):
    ids = [r.id for r in summeval_set.rows]
    assert len(set(ids)) == len(ids)
    for row in summeval_set.rows:
        assert row.id == f"{row.doc_id}:{row.system}"
        assert len(row.references) == 11 and all(row.references), row.id
        assert row.source, row.id
        assert row.candidate, row.id
        for dim in summeval_set.dimensions:
            assert 1.0 <= row.scores[dim] <= 5.0, (row.id, dim)
    for dim in summeval_set.dimensions:
        assert len(summeval_set.scored(dim)) == 1600


def test_summeval_texts_kept_as_in_file(summeval_set, shared_data):
    raw = _raw_rows(shared_data / "summeval" / "summeval.jsonl.gz")
    assert len(raw) == len(summeval_set)
    for rec, row in zip(raw, summeval_set.rows):
        assert row.candidate == rec["sys_summ"]
        assert row.references == tuple(rec["ref_summs"])
        assert row.references[0] == rec["ref_summ"]
        assert row.source == rec["src"]
    assert any(" ." in r.candidate for r in summeval_set.rows)  # tokenized text, not detokenized


def test_summeval_first_reference_must_be_ref_summ():
    rec = {"doc_id": "d", "system": "M0", "src": "a b .", "ref_summ": "x .", "ref_summs": ["y .", "x ."],
           "sys_summ": "a .", "scores": {"relevance": 3.0}}
    with pytest.raises(JudgmentError, match="ref_summ"):
        summeval._judgment(rec)
    rec["ref_summs"] = ["x .", "y ."]
    row = summeval._judgment(rec)
    assert row.references == ("x .", "y .") and row.scores["coherence"] is None


# -- REALSumm ---------------------------------------------------------------------------------------------------------

def test_realsumm_counts_and_defaults(realsumm_set):
    assert realsumm_set.name == "realsumm"
    assert realsumm_set.subset == "all"
    assert len(realsumm_set) == 2400
    assert realsumm_set.documents() == 100
    assert len(realsumm_set.systems()) == 24
    assert realsumm_set.dimensions == ("litepyramid_recall",)
    assert realsumm_set.default_dimension == "litepyramid_recall"
    assert realsumm_set.has_sources


def test_realsumm_rows(realsumm_set, shared_data):
    ids = [r.id for r in realsumm_set.rows]
    assert len(set(ids)) == len(ids)
    raw = _raw_rows(shared_data / "realsumm" / "realsumm.jsonl.gz")
    for rec, row in zip(raw, realsumm_set.rows):
        assert row.id == f"{rec['doc_id']}:{rec['system']}"
        assert row.references == (rec["ref_summ"],) and row.references[0]
        assert row.candidate == rec["sys_summ"] and row.source == rec["src"]
        assert 0.0 <= row.scores["litepyramid_recall"] <= 1.0, row.id
    assert len(realsumm_set.scored()) == 2400


# -- bad data directories and subsets ---------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["summeval", "realsumm"])
def test_truncated_file_is_a_data_error(name, shared_data, tmp_path):
    (tmp_path / name).mkdir()
    data = (shared_data / name / f"{name}.jsonl.gz").read_bytes()[:1000]
    (tmp_path / name / f"{name}.jsonl.gz").write_bytes(data)
    with pytest.raises(DataError, match="corrupt or truncated"):
        judgments.load(name, tmp_path, download=False)


@pytest.mark.parametrize("name,module", [("summeval", summeval), ("realsumm", realsumm)])
def test_missing_file_says_how_to_get_it(name, module, tmp_path, monkeypatch):
    import socket

    with socket.socket() as s:  # a port on 127.0.0.1 where nothing listens: the download fails, offline
        s.bind(("127.0.0.1", 0))
        monkeypatch.setenv("META_EVAL_MIRROR", f"http://127.0.0.1:{s.getsockname()[1]}")
    missing = tmp_path / "nowhere"
    for download in (False, True):  # the pinned pickle is downloaded and converted (tests/test_downloads.py)
        with pytest.raises(DataError) as info:
            judgments.load(name, missing, download=download)
        assert module.FILE.how_to_get in str(info.value)
        assert f"{name}.jsonl.gz" in str(info.value)
        assert module.SOURCE.url in str(info.value)
    assert module.FILE.url is None
    assert not missing.exists()


@pytest.mark.parametrize("name", ["summeval", "realsumm"])
def test_unknown_subset(name, shared_data):
    for bogus in ("sms", "bogus"):
        with pytest.raises(JudgmentError, match=re.escape("subsets all")):
            judgments.load(name, shared_data, subset=bogus, download=False)


def test_default_subsets_per_module():
    import meta_eval.judgments.chaganty
    import meta_eval.judgments.essays

    assert judgments.chaganty.DEFAULT_SUBSET == "sms"
    assert judgments.essays.DEFAULT_SUBSET == "sms"
    assert summeval.DEFAULT_SUBSET == realsumm.DEFAULT_SUBSET == "all"
    assert {"summeval", "realsumm"} <= set(judgments.BUILTIN)


# -- the CLI ----------------------------------------------------------------------------------------------------------

def test_cli_lists_both_sets_present(shared_data):
    res = runner.invoke(app, ["judgments", "--data-dir", str(shared_data)])
    assert res.exit_code == 0, res.output
    assert "summeval" in res.output and "realsumm" in res.output
    blocks = {block.split(" ", 1)[0]: " ".join(block.split()) for block in res.output.split("\n\n")[1:]}
    assert "2085 rows, 583 documents" in blocks["chaganty"]
    assert "1600 rows, 100 documents" in blocks["summeval"] and "11 references per row" in blocks["summeval"]
    assert "2400 rows" in blocks["realsumm"] and "24 systems" in blocks["realsumm"]
    assert "1086 rows" in blocks["essays"]


def test_cli_lists_missing_files(tmp_path):
    res = runner.invoke(app, ["judgments", "--data-dir", str(tmp_path)])
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    assert "chaganty/lqual.jsonl.gz: missing" in text and "summeval/summeval.jsonl.gz: missing" in text


def test_cli_run_summeval(shared_data, tmp_path):
    out = tmp_path / "summeval.json"
    res = runner.invoke(app, ["run", "--judgments", "summeval", "--data-dir", str(shared_data), "--metrics",
                              "rouge,sms", "--human", "coherence", "--no-cache", "--output", str(out)])
    assert res.exit_code == 0, res.output
    doc = json.loads(out.read_text())
    assert doc["judgments"] == "summeval" and doc["subset"] == "all" and doc["human"] == "coherence"
    assert doc["n"] == 1600 and doc["rows_without_human"] == 0
    assert {r["metric"] for r in doc["results"]} >= {"sms", "rougeL-f"}


def test_cli_run_realsumm(shared_data, tmp_path):
    out = tmp_path / "realsumm.json"
    res = runner.invoke(app, ["run", "--judgments", "realsumm", "--data-dir", str(shared_data), "--metrics", "wms",
                              "--no-cache", "--output", str(out)])
    assert res.exit_code == 0, res.output
    doc = json.loads(out.read_text())
    assert doc["judgments"] == "realsumm" and doc["human"] == "litepyramid_recall"
    assert doc["n"] == 2400
    assert [r["metric"] for r in doc["results"]] == ["wms"]
