"""`meta-eval score`: per-example scores for any texts, from line files or JSONL."""
from __future__ import annotations

import csv
import json

import pytest
from typer.testing import CliRunner

from meta_eval.cli import app
from meta_eval.metrics import Example, create

runner = CliRunner()
CANDS = ["The cat sat on the mat.", "Dogs bark loudly.", ""]
REFS = ["A cat was sitting on a mat.", "The dog barked.", "Something."]


@pytest.fixture()
def files(tmp_path):
    cands, refs = tmp_path / "cands.txt", tmp_path / "refs.txt"
    cands.write_text("\n".join(CANDS) + "\n", encoding="utf-8")
    refs.write_text("\n".join(REFS) + "\n", encoding="utf-8")
    return cands, refs


def test_line_files_to_csv_match_the_python_api(files, tmp_path):
    cands, refs = files
    out = tmp_path / "scores.csv"
    res = runner.invoke(app, ["score", "-m", "rouge,sms", "-c", str(cands), "-r", str(refs), "--no-cache",
                              "--output", str(out)])
    assert res.exit_code == 0, res.output
    rows = list(csv.DictReader(open(out, encoding="utf-8")))
    assert len(rows) == 3  # the empty third candidate is a text too
    expected = create("sms").score([Example(c, (r,)) for c, r in zip(CANDS, REFS)])["sms"]
    assert [float(r["sms"]) for r in rows] == pytest.approx(list(expected), abs=0)
    assert float(rows[2]["rougeL-f"]) == 0.0
    assert "sms|vectors:" in res.output


def test_jsonl_in_jsonl_out_with_several_references(tmp_path):
    inp, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    inp.write_text("\n".join(json.dumps({"candidate": c, "references": [r, c]}) for c, r in zip(CANDS, REFS)))
    res = runner.invoke(app, ["score", "-m", "wms", "-i", str(inp), "--no-cache", "--output", str(out)])
    assert res.exit_code == 0, res.output
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert lines[0]["signatures"][0].startswith("wms|")
    # each candidate is also one of its references: the best similarity is 1 (0 for the empty text)
    assert [x["wms"] for x in lines[1:]] == pytest.approx([1.0, 1.0, 0.0])


def test_bad_inputs_are_clear_errors(files, tmp_path):
    cands, refs = files
    short = tmp_path / "short.txt"
    short.write_text("only one line\n")
    cases = [
        (["score", "-m", "rouge", "-c", str(cands), "-r", str(short)], "has 1 lines but"),
        (["score", "-m", "rouge"], "either --candidates"),
        (["score", "-m", "rouge", "-c", str(cands), "-r", str(refs), "--output", str(tmp_path / "x.xlsx")],
         "write .jsonl, .csv or .tsv"),
        (["score", "-m", "sms", "-c", str(cands)], "no metric could run"),
        (["score", "-m", "nope", "-c", str(cands), "-r", str(refs)], "unknown metric or variant 'nope'; known metrics: "),
    ]
    for args, message in cases:
        res = runner.invoke(app, [*args, "--no-cache"])
        assert res.exit_code == 2, (args, res.output)
        assert message in " ".join(res.output.split()), (args, res.output)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"candidate": "x", "references": ["y"]}\n{"candidate": 3}\n')
    res = runner.invoke(app, ["score", "-m", "rouge", "-i", str(bad), "--no-cache"])
    assert res.exit_code == 2 and "bad.jsonl:2" in res.output
