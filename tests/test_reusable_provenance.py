"""Files meant to be reused record what made them (issue #39, item 4 leftovers).

A learned model (``learn --save``) and a score file (``score --output``, ``run --scores-out``) carry the same
``provenance`` as a command's JSON (the command line, meta-eval's version, the SHA-256 of every input), and a score
file each metric's signature with the variants it wrote and the variant choice: in a JSONL file on its first line,
for a CSV/TSV file in the sidecar ``<file>.meta.json`` (the table stays a plain table). Reading them back still works:
``learned:<file>`` scores with the saved model, and ``--scores NAME=FILE`` gives the same statistics as the metric
itself. Everything runs through the real command line (CliRunner) on files in ``tmp_path``.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import small_set
from meta_eval.cli import app

runner = CliRunner()


def _sha(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _record(path: Path) -> dict:
    """A score file's record: the JSONL's first line, or the CSV/TSV's sidecar."""
    if path.suffix == ".jsonl":
        return json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    return json.loads(path.with_name(path.name + ".meta.json").read_text(encoding="utf-8"))


def _invoke(args: list[str]):
    res = runner.invoke(app, [str(a) for a in args])
    assert res.exit_code == 0, res.output
    return res


def test_learn_save_records_provenance_and_the_model_still_scores(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    data = small_set(tmp_path / "essays.jsonl", rows=30)
    model, out = tmp_path / "model.json", tmp_path / "learn.json"
    args = ["learn", "-j", data.name, "-m", "rouge", "--cache", "c.sqlite", "--protocol", "paper", "--splits", "5",
            "--save", str(model), "--output", str(out)]
    _invoke(args)
    saved = json.loads(model.read_text(encoding="utf-8"))
    prov = saved["provenance"]
    assert prov["command"] == "meta-eval " + " ".join(args)
    assert prov["version"] == saved["meta_eval_version"]
    assert prov["inputs"] == [{"what": "the judgment file", "path": "essays.jsonl", "sha256": _sha(data)}]
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["provenance"] == prov  # one record: the same object in the model file and the results
    assert "provenance" not in doc["model"]  # the results keep it once, at the top
    # the model file reads back: learned:<file> scores the set with it
    res = _invoke(["run", "-j", data.name, "-m", f"learned:{model}", "--cache", "c.sqlite", "--allow-in-sample",
                   "--output", "run.json"])
    ran = json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))
    assert [r["metric"] for r in ran["results"]] == [f"learned:{model}"], res.output
    assert {"what": f"the model of learned:{model}", "path": str(model), "sha256": _sha(model)} in \
        ran["provenance"]["inputs"]
    # an input of the run, so never its output
    res = runner.invoke(app, ["run", "-j", data.name, "-m", f"learned:{model}", "--allow-in-sample", "--output",
                              str(model)])
    assert res.exit_code == 2 and "is the model of learned:" in " ".join(res.output.split())
    assert json.loads(model.read_text(encoding="utf-8")) == saved


@pytest.mark.parametrize("suffix", [".jsonl", ".csv", ".tsv"])
def test_score_file_records_signatures_variants_and_provenance(tmp_path, monkeypatch, suffix):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.txt").write_text("the cat sat\na dog ran\nthe sun\n", encoding="utf-8")
    (tmp_path / "r.txt").write_text("the cat sat down\na dog walked\nthe moon\n", encoding="utf-8")
    out = tmp_path / f"s{suffix}"
    args = ["score", "-c", "c.txt", "-r", "r.txt", "-m", "rouge,chrf", "--variants", "rouge1-f,rougeL-f,chrf",
            "--limit", "2", "--no-cache", "--output", out.name]
    res = _invoke(args)
    rec = _record(out)
    assert rec["provenance"]["command"] == "meta-eval " + " ".join(args)
    assert [(i["path"], i["sha256"]) for i in rec["provenance"]["inputs"]] == \
        [("c.txt", _sha(tmp_path / "c.txt")), ("r.txt", _sha(tmp_path / "r.txt"))]
    assert [(m["name"], m["variants"]) for m in rec["metrics"]] == [("rouge", ["rouge1-f", "rougeL-f"]),
                                                                     ("chrf", ["chrf"])]
    assert rec["signatures"] == [m["signature"] for m in rec["metrics"]]
    assert all(m["signature"] in " ".join(res.output.split()) or m["signature"] in res.output.replace("\n", "")
               for m in rec["metrics"])  # the signatures the command printed
    assert rec["variants"]["given"] == ["rouge1-f", "rougeL-f", "chrf"]
    assert rec["variants"]["shown"] == ["rouge1-f", "rougeL-f", "chrf"] and "rouge1-p" in rec["variants"]["hidden"]
    assert rec["rows"]["limit"] == 2
    if suffix == ".jsonl":
        assert not out.with_name(out.name + ".meta.json").exists()
    else:
        assert rec["written_by"].startswith("meta-eval ") and rec["scores_file"] == out.name
        assert rec["format"] == suffix[1:] and rec["sha256"] == _sha(out)
        sep = "," if suffix == ".csv" else "\t"
        assert out.read_text(encoding="utf-8").splitlines()[0].split(sep) == ["index", "rouge1-f", "rougeL-f",
                                                                               "chrf"]  # a plain table


def test_a_sidecar_never_replaces_a_users_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.txt").write_text("the cat sat\n", encoding="utf-8")
    (tmp_path / "r.txt").write_text("the cat sat down\n", encoding="utf-8")
    mine = tmp_path / "s.csv.meta.json"
    mine.write_text("my notes\n", encoding="utf-8")
    res = runner.invoke(app, ["score", "-c", "c.txt", "-r", "r.txt", "-m", "rouge", "--no-cache", "--output", "s.csv"])
    assert res.exit_code == 2 and "meta-eval did not write it" in " ".join(res.output.split())
    assert mine.read_text(encoding="utf-8") == "my notes\n" and not (tmp_path / "s.csv").exists()


@pytest.mark.parametrize("suffix", [".jsonl", ".csv"])
def test_score_and_scores_out_files_round_trip_through_scores(tmp_path, monkeypatch, suffix):
    """``score --output`` (keyed by index) and ``run --scores-out`` (keyed by id) read back with ``--scores`` give
    rouge's own statistics, header line or sidecar notwithstanding."""
    monkeypatch.chdir(tmp_path)
    data = small_set(tmp_path / "essays.jsonl", rows=30)
    common = ["-m", "rouge", "--variants", "rouge1-f,rougeL-f", "--cache", "c.sqlite"]
    _invoke(["run", "-j", data.name, *common, "--output", "direct.json", "--scores-out", f"out{suffix}"])
    _invoke(["score", "-i", data.name, *common, "--output", f"scored{suffix}"])
    rec = _record(tmp_path / f"out{suffix}")
    assert rec["judgments"] == "essays" and rec["provenance"]["inputs"][0]["sha256"] == _sha(data)
    assert [m["variants"] for m in rec["metrics"]] == [["rouge1-f", "rougeL-f"]]
    direct = json.loads((tmp_path / "direct.json").read_text(encoding="utf-8"))
    want = {r["metric"]: (r["value"], r["ci"]) for r in direct["results"]}
    assert sorted(want) == ["rouge1-f", "rougeL-f"]
    for name, path in (("back", f"out{suffix}"), ("idx", f"scored{suffix}")):
        _invoke(["run", "-j", data.name, "-m", name, "--scores", f"{name}={path}", "--cache", "c.sqlite",
                 "--output", f"{name}.json"])
        doc = json.loads((tmp_path / f"{name}.json").read_text(encoding="utf-8"))
        got = {r["metric"]: (r["value"], r["ci"]) for r in doc["results"]}
        assert got == {f"{name}/{v}": value for v, value in want.items()}
        assert any(i["path"] == path and i["sha256"] == _sha(tmp_path / path) for i in doc["provenance"]["inputs"])
