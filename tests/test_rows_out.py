"""Rows out, quick trials, reproducible runs (issue #39, item 4; and item 2's torch line).

``meta-eval judgments SET --export FILE`` writes a set's rows with the keys ``--scores`` joins on; ``--limit N`` and
``--sample N --seed S`` (run, probe, score) choose rows in one place (judgments/rows.py) and are recorded; every
command's JSON carries ``provenance``: its command line, meta-eval's version and the SHA-256 of the files it read;
``meta-eval metrics`` names the torch build without importing torch. Real files, real processes, the real CLI.
"""
from __future__ import annotations

import csv
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from conftest import small_set
from meta_eval.cli import app

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[1]

#: texts that a naive CSV writer or reader gets wrong: the separators, quotes, line ends, a tab, non-ASCII
TRICKY = ['a, b, and c', 'she said "no", twice', 'line one\nline two', 'tab\there', '"quoted"', 'é ü 中文 \r\n end',
          'plain text', "it's , \"both\"\n"]


def _flat(text: str) -> str:
    return " ".join(text.split())


def tricky_set(path: Path) -> Path:
    """A JSONL judgment set of 24 rows (8 documents x 3 systems) whose texts hold commas, quotes and line ends."""
    rows = []
    for i in range(24):
        text = TRICKY[i % len(TRICKY)]
        rows.append({"id": f"r,{i}" if i % 5 == 0 else f"r{i}", "doc_id": f"d{i // 3}", "system": f"s{i % 3}",
                     "candidate": f"{text} the cat {i}", "references": [f"a cat, {i}", f'"ref" {text}'],
                     "source": f"source {text} {i // 3}", "scores": {"overall": float(i * 7 % 5),
                                                                     "fluency": None if i == 4 else float(i % 3)}})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """The real command line in its own process (so that the recorded command is the one typed)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run([sys.executable, "-m", "meta_eval.cli", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)


# -- --export ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".jsonl"])
def test_exported_rows_round_trip_through_scores(tmp_path, suffix):
    data = tricky_set(tmp_path / "set.jsonl")
    exported = tmp_path / f"rows{suffix}"
    done = runner.invoke(app, ["judgments", str(data), "--export", str(exported)])
    assert done.exit_code == 0, done.output
    source = [json.loads(line) for line in data.read_text(encoding="utf-8").splitlines()]
    # add a score column computed from the exported rows themselves, and feed the file back
    scored = tmp_path / f"mine{suffix}"
    if suffix == ".jsonl":
        lines = exported.read_text(encoding="utf-8").splitlines()
        header, rows = json.loads(lines[0]), [json.loads(line) for line in lines[1:]]
        assert header["rows"] == 24 and header["dimensions"] == ["overall", "fluency"]
        texts = [(r["id"], r["doc_id"], r["system"], r["candidate"], r["references"], r["source"], r["human"])
                 for r in rows]
        scored.write_text("\n".join([lines[0]] + [json.dumps({**r, "score": len(r["candidate"])}) for r in rows])
                          + "\n", encoding="utf-8")
    else:
        sep = "," if suffix == ".csv" else "\t"
        with open(exported, newline="", encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh, delimiter=sep))
        texts = [(r["id"], r["doc_id"], r["system"], r["candidate"], json.loads(r["references"]), r["source"],
                  {d: None if r[f"human.{d}"] == "" else float(r[f"human.{d}"]) for d in ("overall", "fluency")})
                 for r in rows]
        with open(scored, "w", newline="", encoding="utf-8") as fh:
            writer = csv.writer(fh, delimiter=sep)
            writer.writerow([*rows[0], "score"])
            writer.writerows([*r.values(), len(r["candidate"])] for r in rows)
    # every text, key and human score survives the file exactly (commas, quotes, line ends, \r\n, non-ASCII)
    assert texts == [(s["id"], s["doc_id"], s["system"], s["candidate"], s["references"], s["source"], s["scores"])
                     for s in source]
    out = tmp_path / "out.json"
    done = runner.invoke(app, ["run", "-j", str(data), "--scores", f"mine={scored}", "-m", "mine", "--no-cache",
                               "--output", str(out)])
    assert done.exit_code == 0, done.output
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["n"] == 24 and doc["rows_without_imported_score"] == 0
    assert doc["imported"][0]["rows"] == 24 and doc["imported"][0]["key"] == "id"
    mine = next(r for r in doc["results"] if r["metric"] == "mine")
    human = [s["scores"]["overall"] for s in source]
    from scipy.stats import spearmanr

    expected = spearmanr([len(s["candidate"]) for s in source], human).statistic
    assert mine["value"] == pytest.approx(expected, abs=1e-12)


def test_export_of_a_subset_and_its_guard(tmp_path, shared_data):
    out = tmp_path / "zh.jsonl"
    done = runner.invoke(app, ["judgments", "wmt21-mqm-ted", "--subset", "zh-en", "--export", str(out),
                               "--data-dir", str(shared_data)])
    assert done.exit_code == 0, done.output
    lines = out.read_text(encoding="utf-8").splitlines()
    head = json.loads(lines[0])
    assert head["subset"] == "zh-en" and head["rows"] == len(lines) - 1
    assert all(json.loads(line)["doc_id"].startswith("zh-en:") for line in lines[1:50])
    again = runner.invoke(app, ["judgments", "wmt21-mqm-ted", "--subset", "zh-en", "--export", str(out),
                                "--data-dir", str(shared_data)])
    assert again.exit_code == 0, again.output  # its own file: replaced without --force
    mine = tmp_path / "notes.csv"
    mine.write_text("my notes\n", encoding="utf-8")
    done = runner.invoke(app, ["judgments", str(small_set(tmp_path / "s.jsonl")), "--export", str(mine)])
    assert done.exit_code == 2 and "meta-eval did not write it" in _flat(done.output), done.output
    assert mine.read_text(encoding="utf-8") == "my notes\n"
    done = runner.invoke(app, ["judgments", str(tmp_path / "s.jsonl"), "--export", str(tmp_path / "rows.xlsx")])
    assert done.exit_code == 2 and "write .jsonl, .csv or .tsv" in done.output and "Traceback" not in done.output


# -- --limit / --sample ----------------------------------------------------------------------------------------------
def test_limit_is_the_first_rows_and_is_recorded(tmp_path):
    data = small_set(tmp_path / "set.jsonl", rows=30)
    out = tmp_path / "out.json"
    done = runner.invoke(app, ["run", "-j", str(data), "-m", "rouge", "--no-cache", "--limit", "12", "--output",
                               str(out)])
    assert done.exit_code == 0, done.output
    assert "12 of 30 rows (--limit 12)" in done.output
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["n"] == 12 and doc["rows"] == {"limit": 12, "sample": None, "seed": None, "of": 30, "kept": 12}
    from meta_eval import run

    result = run(str(data), "rouge", limit=12, no_cache=True, progress=False)
    assert [r.id for r in result.jset.rows] == [f"r{i}" for i in range(12)]
    whole = run(str(data), "rouge", no_cache=True, progress=False)
    assert whole.to_dict()["rows"] is None and whole.n == 30


def test_a_limit_over_the_set_is_a_note_and_bad_counts_are_one_line(tmp_path):
    data = small_set(tmp_path / "set.jsonl", rows=30)
    done = runner.invoke(app, ["run", "-j", str(data), "-m", "rouge", "--no-cache", "--limit", "500"])
    assert done.exit_code == 0, done.output
    assert "30 of 30 rows (--limit 500: the set has 30 rows, all are kept)" in _flat(done.output)
    for args, message in ((["--limit", "0"], "--limit must be 1 or more rows, not 0"),
                          (["--sample", "-3"], "--sample must be 1 or more rows, not -3"),
                          (["--limit", "5", "--sample", "5"], "give --limit N (the first N rows) or --sample N")):
        done = runner.invoke(app, ["run", "-j", str(data), "-m", "rouge", "--no-cache", *args])
        assert done.exit_code == 2 and message in _flat(done.output), (args, done.output)
        assert "Traceback" not in done.output and len(done.output.strip().splitlines()) == 1


def test_too_few_rows_under_a_limit_blames_the_limit_not_the_file(tmp_path):
    """It said "only 3 rows have a 'overall' score", as if the file lacked them."""
    data = small_set(tmp_path / "set.jsonl", rows=30)
    done = runner.invoke(app, ["run", "-j", str(data), "-m", "rouge", "--no-cache", "--limit", "3"])
    assert done.exit_code == 2, done.output
    assert ("only 3 rows have a 'overall' score (among the 3 rows that --limit 3 keeps of 30); at least 4 are "
            "needed: keep more rows than --limit 3") in _flat(done.output)


def test_sample_is_seeded_without_replacement_in_file_order(tmp_path):
    from meta_eval import run

    data = small_set(tmp_path / "set.jsonl", rows=30)
    picks = []
    for seed in (3, 3, 4):
        result = run(str(data), "rouge", sample=10, seed=seed, no_cache=True, progress=False)
        picks.append([r.id for r in result.jset.rows])
        expected = sorted(np.random.default_rng(seed).choice(30, size=10, replace=False))
        assert picks[-1] == [f"r{i}" for i in expected]
        assert result.to_dict()["rows"] == {"limit": None, "sample": 10, "seed": seed, "of": 30, "kept": 10}
    assert picks[0] == picks[1] and picks[0] != picks[2]


def test_a_limited_run_joins_a_score_file_for_the_whole_set(tmp_path):
    data = small_set(tmp_path / "set.jsonl", rows=30)
    scores = tmp_path / "s.jsonl"
    scores.write_text("".join(json.dumps({"id": f"r{i}", "score": i % 7}) + "\n" for i in range(30)), encoding="utf-8")
    done = runner.invoke(app, ["run", "-j", str(data), "--scores", f"mine={scores}", "-m", "mine", "--no-cache",
                               "--sample", "9", "--seed", "1"])
    assert done.exit_code == 0, done.output
    assert "9 of 30 rows (--sample 9 --seed 1)" in done.output


def test_score_and_probe_take_the_same_row_choice(tmp_path):
    data = small_set(tmp_path / "set.jsonl", rows=30)
    texts = tmp_path / "texts.jsonl"
    texts.write_text("".join(json.dumps({"candidate": f"the cat {i}", "references": [f"a cat {i % 4}"]}) + "\n"
                             for i in range(20)), encoding="utf-8")
    out = tmp_path / "scores.jsonl"
    done = runner.invoke(app, ["score", "-i", str(texts), "-m", "rouge", "--no-cache", "--sample", "5", "--seed",
                               "7", "--output", str(out)])
    assert done.exit_code == 0, done.output
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    expected = sorted(int(i) for i in np.random.default_rng(7).choice(20, size=5, replace=False))
    assert [line["index"] for line in lines[1:]] == expected  # positions in the input: the file joins by index
    assert lines[0]["rows"] == {"limit": None, "sample": 5, "seed": 7, "of": 20, "kept": 5}
    assert lines[0]["provenance"]["inputs"][0]["sha256"] == hashlib.sha256(texts.read_bytes()).hexdigest()
    probe_out = tmp_path / "probe.json"
    done = runner.invoke(app, ["probe", "-j", str(data), "-m", "rouge", "--no-cache", "--limit", "9", "-p",
                               "sentence-reversal", "--resamples", "10", "--output", str(probe_out)])
    assert done.exit_code == 0, done.output
    doc = json.loads(probe_out.read_text(encoding="utf-8"))
    assert doc["rows"] == {"limit": 9, "sample": None, "seed": None, "of": 30, "kept": 9}
    assert doc["n_items_in_set"] <= 9


PLUGIN = '''
from meta_eval.metrics import Metric, register


@register("plug")
class Plug(Metric):
    """Candidate length in characters."""
    variants = ("plug",)

    def _score(self, examples):
        return {"plug": [float(len(e.candidate)) for e in examples]}
'''


# -- provenance ------------------------------------------------------------------------------------------------------
def test_a_runs_json_carries_its_command_version_and_input_digests(tmp_path):
    data = small_set(tmp_path / "set.jsonl", rows=30)
    scores = tmp_path / "s.csv"
    scores.write_text("id,score\n" + "".join(f"r{i},{i % 7}\n" for i in range(30)), encoding="utf-8")
    plugin = tmp_path / "plug.py"
    plugin.write_text(PLUGIN, encoding="utf-8")
    done = _cli("run", "-j", "set.jsonl", "-m", "rouge,mine,plug", "--scores", "mine=s.csv", "--plugin", "plug.py",
                "--no-cache", "--limit", "20", "--output", "out.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    doc = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    prov = doc["provenance"]
    assert prov["command"] == ("meta-eval run -j set.jsonl -m rouge,mine,plug --scores mine=s.csv --plugin plug.py "
                               "--no-cache --limit 20 --output out.json")
    from meta_eval.metrics.base import package_version

    assert prov["version"] == package_version("meta-eval")
    digests = {(i["what"], i["path"]): i["sha256"] for i in prov["inputs"]}
    assert digests == {("the judgment file", "set.jsonl"): hashlib.sha256(data.read_bytes()).hexdigest(),
                       ("the --scores file of mine", "s.csv"): hashlib.sha256(scores.read_bytes()).hexdigest(),
                       ("the --plugin file", "plug.py"): hashlib.sha256(plugin.read_bytes()).hexdigest()}
    from meta_eval import run

    library = run(str(data), "rouge", limit=20, no_cache=True, progress=False).to_dict()["provenance"]
    assert library["command"] is None and library["inputs"][0]["sha256"] == digests[("the judgment file",
                                                                                       "set.jsonl")]


def test_a_built_in_set_is_recorded_by_its_pinned_digest_and_learn_records_too(tmp_path, shared_data):
    done = _cli("learn", "-j", "chaganty", "-m", "rouge", "--no-cache", "--folds", "2", "--inner-folds", "2",
                "--resamples", "10", "--search", "none", "--output", "learn.json", "--data-dir", str(shared_data),
                cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    prov = json.loads((tmp_path / "learn.json").read_text(encoding="utf-8"))["provenance"]
    assert prov["command"].startswith("meta-eval learn -j chaganty -m rouge")
    from meta_eval.judgments.chaganty import FILE

    assert prov["inputs"] == [{"what": "the built-in set chaganty", "path": FILE.relpath, "sha256": FILE.sha256,
                               "built_in": True}]
    assert FILE.sha256 == hashlib.sha256((shared_data / FILE.relpath).read_bytes()).hexdigest()


# -- the torch line ---------------------------------------------------------------------------------------------------
def test_metrics_names_the_torch_build_without_importing_torch(tmp_path):
    code = ("import sys; from typer.testing import CliRunner; from meta_eval.cli import app; "
            "r = CliRunner().invoke(app, ['metrics']); print(r.output.splitlines()[-1]); "
            "print('torch imported' if 'torch' in sys.modules else 'torch not imported')")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    line, imported = done.stdout.strip().splitlines()[-2:]
    assert imported == "torch not imported"
    from meta_eval import torch_build

    assert line == torch_build.describe()
    version, build = torch_build.installed()
    if version is not None:
        assert line.startswith(f"torch {version} (")
        import torch  # the build read from the files is the one torch reports

        assert build == ("cpu" if torch.version.cuda is None and getattr(torch.version, "hip", None) is None else
                         f"CUDA {torch.version.cuda}" if torch.version.cuda else f"ROCm {torch.version.hip}")


@pytest.mark.parametrize("version,build,gpus,line", [
    (None, None, [], "torch not installed: the neural metrics are unavailable; CPU build: pip install torch "
                     "--index-url https://download.pytorch.org/whl/cpu; CUDA build (Linux): pip install torch"),
    ("2.13.0+cpu", "cpu", [], "torch 2.13.0+cpu (CPU build; no GPU)"),
    ("2.5.1", "CUDA 12.4", ["NVIDIA H100 80GB HBM3"],
     "torch 2.5.1 (CUDA 12.4 build; 1 GPU: NVIDIA H100 80GB HBM3: the neural metrics' device=auto uses it)"),
    ("2.5.1", "CUDA 12.4", [], "torch 2.5.1 (CUDA 12.4 build; no GPU: the neural metrics run on the CPU)"),
    ("2.13.0+cpu", "cpu", ["A", "A"], "torch 2.13.0+cpu (CPU build; 2 GPUs: A; this CPU build cannot use it"),
])
def test_the_torch_line_says_the_build_and_what_meta_eval_does_with_it(version, build, gpus, line):
    from meta_eval.torch_build import format_line

    assert format_line(version, build, gpus).startswith(line)


def test_a_judge_bench_set_is_recorded_by_its_files_pin(tmp_path, shared_data):
    """``-j judge-bench:<file>`` records that file's pinned SHA-256 as a built-in set does (it recorded nothing)."""
    from typer.testing import CliRunner

    from meta_eval.cli import app
    from meta_eval.judgments.judge_bench import SETS

    out = tmp_path / "r.json"
    res = CliRunner().invoke(app, ["run", "-j", "judge-bench:cola", "-m", "length", "--no-cache", "--resamples", "20",
                                   "--data-dir", str(shared_data), "--output", str(out)])
    assert res.exit_code == 0, res.output
    f = SETS["cola"].data_file()
    assert json.loads(out.read_text(encoding="utf-8"))["provenance"]["inputs"] == [
        {"what": "the built-in set judge-bench:cola", "path": f.relpath, "sha256": f.sha256, "built_in": True}]
