"""Tests for the judgment loaders: the built-in sets on the real data, bad data files, and the generic JSONL format."""

import gzip
import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from meta_eval import judgments  # noqa: E402
from meta_eval.judgments import DataError, JudgmentError  # noqa: E402

from conftest import DATA_FIX, HAVE_DATA, SHARED as DATA  # noqa: E402  ($META_EVAL_DATA, else ../shared/judgments)
needs_data = pytest.mark.require(HAVE_DATA, f"the real judgment data at {DATA}", DATA_FIX)

MOJIBAKE = "\u00e2\u0080"  # how U+201C/U+201D/U+2019 look when their UTF-8 bytes are decoded as Latin-1


# -- Chaganty et al. 2018 --------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def chaganty():
    return judgments.load("chaganty", DATA, download=False)


@pytest.fixture(scope="module")
def chaganty_all():
    return judgments.load("chaganty", DATA, subset="all", download=False)


@needs_data
def test_chaganty_default_subset_size(chaganty):
    assert chaganty.subset == "sms"
    assert len(chaganty) == 2085
    assert chaganty.documents() == 583
    assert chaganty.dimensions == ("overall", "redundancy", "grammar")
    assert chaganty.default_dimension == "overall"


@needs_data
def test_chaganty_default_subset_rows(chaganty):
    for row in chaganty.rows:
        assert row.n_judges >= 2, row.id
        assert row.system != "reference", row.id
        assert len(row.references) == 1 and row.references[0], row.id
    ids = [r.id for r in chaganty.rows]
    assert len(set(ids)) == len(ids)
    assert "006588:ml+rl#2" in ids
    assert "006588:ml+rl" in ids


@needs_data
def test_chaganty_overall_is_mean_of_judges(chaganty):
    human = chaganty.human("overall")
    assert not np.isnan(human).any()
    for row, score in zip(chaganty.rows, human):
        judges = row.judges["overall"]
        assert len(judges) >= 2
        assert score == pytest.approx(sum(judges) / len(judges), abs=1e-9), row.id
        assert all(v in (-1.0, 0.0, 1.0) for v in judges), row.id


@needs_data
def test_chaganty_all_subset(chaganty_all):
    assert chaganty_all.subset == "all"
    assert len(chaganty_all) == 2599
    scored = chaganty_all.scored("overall")
    assert len(scored) == 2598
    (unjudged,) = [r for r in chaganty_all.rows if r.n_judges == 0]
    assert unjudged.scores["overall"] is None
    assert unjudged.id not in {r.id for r in scored.rows}
    assert any(r.system == "reference" for r in chaganty_all.rows)


# -- ASAP essays, prompt 3 -------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def essays():
    return judgments.load("essays", DATA, download=False)


@pytest.fixture(scope="module")
def essays_all():
    return judgments.load("essays", DATA, subset="all", download=False)


@needs_data
def test_essays_default_subset(essays):
    assert essays.subset == "sms"
    assert len(essays) == 1086
    assert essays.dimensions == ("domain1_score",)
    assert set(essays.human("domain1_score")) <= {0.0, 1.0, 2.0, 3.0}
    for row in essays.rows:
        assert row.scores["domain1_score"] in (0.0, 1.0, 2.0, 3.0), row.id


@needs_data
def test_essays_all_subset(essays_all):
    assert len(essays_all) == 1726
    ids = [r.id for r in essays_all.rows]
    assert len(set(ids)) == len(ids)


@needs_data
def test_essays_mojibake_repaired(essays_all):
    raw = (DATA / "asap-aes-3" / "asap_aes_set3.tsv").read_text(encoding="utf-8")
    assert MOJIBAKE in raw  # otherwise the check below would prove nothing
    bad = [r.id for r in essays_all.rows if MOJIBAKE in r.candidate]
    assert bad == []
    assert any("\u201c" in r.candidate or "\u2019" in r.candidate for r in essays_all.rows)


@needs_data
def test_essays_share_one_reference(essays, essays_all):
    raw_ref = (DATA / "asap-aes-3" / "reference_essay.txt").read_text(encoding="utf-8").strip()
    refs = {r.references for r in essays_all.rows} | {r.references for r in essays.rows}
    assert len(refs) == 1
    (ref,) = refs.pop()
    assert len(ref) > 200
    assert ref.startswith(raw_ref[:80])


# -- bad data directories and names -----------------------------------------------------------------------------------

@needs_data
def test_truncated_chaganty_file_is_a_data_error(tmp_path):
    (tmp_path / "chaganty").mkdir()
    (tmp_path / "chaganty" / "lqual.jsonl.gz").write_bytes((DATA / "chaganty" / "lqual.jsonl.gz").read_bytes()[:1000])
    with pytest.raises(DataError, match="corrupt or truncated"):
        judgments.load("chaganty", tmp_path, download=False)


def test_missing_data_dir_names_the_file(tmp_path):
    missing = tmp_path / "nowhere"
    with pytest.raises(DataError, match=r"lqual\.jsonl\.gz"):
        judgments.load("chaganty", missing, download=False)
    with pytest.raises(DataError, match=r"asap_aes_set3\.tsv"):
        judgments.load("essays", missing, download=False)
    assert not missing.exists()


def test_unknown_set_name():
    with pytest.raises(JudgmentError) as info:
        judgments.load("no-such-set")
    assert "chaganty" in str(info.value) and "essays" in str(info.value)


@needs_data
def test_unknown_subset():
    with pytest.raises(JudgmentError, match="sms"):
        judgments.load("chaganty", DATA, subset="bogus", download=False)


# -- the generic JSON-lines format ------------------------------------------------------------------------------------

def _good_rows():
    return [
        {"id": "a", "doc_id": "d1", "system": "s1", "candidate": "the cat sat", "reference": "a cat sat",
         "scores": {"overall": 0.5, "fluency": 1}},
        {"id": "b", "doc_id": "d1", "system": "s2", "candidate": "a dog ran",
         "references": ["a cat sat", "the cat was sitting"], "scores": {"overall": -1, "fluency": 0.25}},
        {"id": "c", "doc_id": "d2", "system": "s1", "candidate": "it rained", "references": ["it rained today"],
         "source": "Weather report: it rained today.", "scores": {"overall": None, "fluency": 2},
         "judges": {"fluency": [1, 3]}},
        {"id": "d", "doc_id": "d2", "system": "s2", "candidate": "", "references": ["it rained today"],
         "scores": {"overall": 0.0, "fluency": 0}},
        {"id": "e", "doc_id": "d3", "system": "s1", "candidate": "caf\u00c3\u00a9 au lait",
         "references": ["coffee with milk"], "scores": {"overall": 1.0, "fluency": 1.5}},
    ]


def _write(path: Path, rows, raw_lines=()):
    lines = [json.dumps(r) for r in rows] + list(raw_lines)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_jsonl_valid_file(tmp_path):
    js = judgments.load(str(_write(tmp_path / "mine.jsonl", _good_rows())))
    assert js.name == "mine"
    assert len(js) == 5
    assert js.dimensions == ("overall", "fluency")
    assert js.default_dimension == "overall"
    by_id = {r.id: r for r in js.rows}
    assert by_id["a"].references == ("a cat sat",)
    assert by_id["b"].references == ("a cat sat", "the cat was sitting")
    assert by_id["c"].source == "Weather report: it rained today."
    assert by_id["c"].judges["fluency"] == (1.0, 3.0)
    assert by_id["c"].scores["overall"] is None
    assert by_id["d"].candidate == ""
    assert by_id["e"].candidate == "café au lait"
    assert js.max_references == 2
    human = js.human()
    assert np.isnan(human[2]) and np.isnan(human).sum() == 1


def test_jsonl_scored_drops_only_the_null_row(tmp_path):
    js = judgments.load(_write(tmp_path / "mine.jsonl", _good_rows()))
    scored = js.scored("overall")
    assert [r.id for r in scored.rows] == ["a", "b", "d", "e"]
    assert len(js.scored("fluency")) == 5
    assert list(scored.human()) == [0.5, -1.0, 0.0, 1.0]


def test_jsonl_gz(tmp_path):
    path = tmp_path / "mine.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        for r in _good_rows():
            fh.write(json.dumps(r) + "\n")
    js = judgments.load(str(path))
    assert js.name == "mine"
    assert [r.id for r in js.rows] == ["a", "b", "c", "d", "e"]
    assert js.rows[4].candidate == "café au lait"


def test_jsonl_duplicate_ids(tmp_path):
    rows = _good_rows()
    rows[3]["id"] = "a"
    with pytest.raises(JudgmentError, match="duplicate"):
        judgments.load(_write(tmp_path / "dup.jsonl", rows))


def test_jsonl_truncated_last_line(tmp_path):
    rows = _good_rows()
    last = json.dumps(rows.pop())
    path = _write(tmp_path / "trunc.jsonl", rows, [last[: len(last) // 2]])
    with pytest.raises(JudgmentError, match=r"trunc\.jsonl:5\b"):
        judgments.load(path)


def test_jsonl_nan_score(tmp_path):
    rows = _good_rows()
    line = json.dumps(rows[1]).replace('"overall": -1', '"overall": NaN')
    assert "NaN" in line
    path = _write(tmp_path / "nan.jsonl", rows[:1], [line])
    with pytest.raises(JudgmentError, match=r"nan\.jsonl:2"):
        judgments.load(path)


def test_jsonl_infinite_score(tmp_path):
    line = json.dumps(_good_rows()[0]).replace('"overall": 0.5', '"overall": Infinity')
    with pytest.raises(JudgmentError):
        judgments.load(_write(tmp_path / "inf.jsonl", [], [line]))


def test_jsonl_missing_candidate(tmp_path):
    rows = _good_rows()
    del rows[2]["candidate"]
    with pytest.raises(JudgmentError, match="candidate"):
        judgments.load(_write(tmp_path / "nocand.jsonl", rows))


def test_jsonl_empty_file(tmp_path):
    path = tmp_path / "empty.jsonl"
    path.write_text("", encoding="utf-8")
    with pytest.raises(JudgmentError, match="no judgments"):
        judgments.load(path)
    path.write_text("\n\n  \n", encoding="utf-8")
    with pytest.raises(JudgmentError, match="no judgments"):
        judgments.load(path)


def test_jsonl_missing_file(tmp_path):
    with pytest.raises(JudgmentError, match="does not exist"):
        judgments.load(str(tmp_path / "absent.jsonl"))


def test_jsonl_rejects_subset(tmp_path):
    with pytest.raises(JudgmentError):
        judgments.load(str(_write(tmp_path / "mine.jsonl", _good_rows())), subset="sms")


def test_jsonl_default_ids_are_line_numbers(tmp_path):
    rows = _good_rows()
    for r in rows:
        del r["id"]
    js = judgments.load(_write(tmp_path / "noid.jsonl", rows))
    assert [r.id for r in js.rows] == ["1", "2", "3", "4", "5"]
    assert js.rows[0].doc_id == "d1" and not math.isnan(js.human()[0])
