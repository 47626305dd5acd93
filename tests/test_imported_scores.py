"""Imported scores (``--scores NAME=FILE``): formats, strict joins, orientation, system-level files, the round trip
through ``--scores-out``, and the statistics on them.

The set is wmt21-mqm-ted zh-en (13 MT systems, 529 segments) with chrF and BLEU, which score its 6,877 rows in
seconds. "Identical" means equal to 1e-12: an imported copy of chrF must give chrF's correlations.
"""
from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from conftest import require_module
from meta_eval import run
from meta_eval.cli import app
from meta_eval.errors import MetaEvalError
from meta_eval.scoring.imported import parse_spec

runner = CliRunner()
SET = dict(judgments="wmt21-mqm-ted", subset="zh-en")


@pytest.fixture(scope="module")
def base(shared_data, tmp_path_factory):
    """chrF and BLEU on the set, their per-row scores written with --scores-out (JSONL and CSV)."""
    require_module("sacrebleu", "pip install 'meta-eval[sacrebleu]'")
    folder = tmp_path_factory.mktemp("imported")
    cache = folder / "cache.sqlite"
    res = run(**SET, metrics="chrf,bleu", level="system", statistic="pearson", resamples=50, data_dir=shared_data,
              cache=cache, scores_out=folder / "out.jsonl", progress=False)
    run(**SET, metrics="chrf,bleu", resamples=50, data_dir=shared_data, cache=cache,
        scores_out=folder / "out.csv", progress=False)
    rows = [json.loads(line) for line in (folder / "out.jsonl").read_text().splitlines()[1:]]
    return {"folder": folder, "cache": cache, "data": shared_data, "system_run": res,
            "rows": [r for r in rows if "id" in r], "systems": [r for r in rows if "id" not in r]}


def _run(base, scores, **kw):
    kw = {"resamples": 50, "progress": False, "data_dir": base["data"], "cache": base["cache"], **kw}
    return run(**SET, scores=scores, **kw)


def _write_jsonl(path: Path, objs) -> Path:
    path.write_text("".join(json.dumps(o) + "\n" for o in objs), encoding="utf-8")
    return path


def _cli(base, *args):
    return runner.invoke(app, ["run", "-j", SET["judgments"], "--subset", SET["subset"], "--data-dir",
                               str(base["data"]), "--cache", str(base["cache"]), "--resamples", "50", *args])


# -- the round trip: --scores-out read back by --scores gives identical correlations ------------------------------
@pytest.mark.parametrize("level,statistic", [("global", "spearman"), ("summary", "kendall"), ("system", "pearson"),
                                             ("system", "accuracy")])
def test_scores_out_round_trips_to_identical_statistics(base, level, statistic):
    res = _run(base, [f"mine={base['folder'] / 'out.jsonl'}"], metrics="chrf,bleu", level=level,
               statistic=statistic)
    values = res.values
    for variant in ("chrf", "bleu"):
        assert values[f"mine/{variant}"] == pytest.approx(values[variant], abs=1e-12)
        assert res.intervals[f"mine/{variant}"] == pytest.approx(res.intervals[variant], abs=1e-12)
    if level == "system":  # the file's system lines are the corpus scores, so the system level reads them back
        assert res.system_scores == {"chrf": "corpus", "bleu": "corpus", "mine": "file"}


def test_csv_round_trip_and_only_imported_metrics(base):
    res = _run(base, [f"mine={base['folder'] / 'out.csv'}"], metrics="mine", level="summary", statistic="spearman")
    assert [ms.metric for ms in res.scores] == ["mine"]  # -m naming only imported metrics runs no other metric
    ref = _run(base, [], metrics="chrf", level="summary", statistic="spearman")
    assert res.values["mine/chrf"] == pytest.approx(ref.values["chrf"], abs=1e-12)


def test_the_written_rows_are_the_sets_rows_with_the_metrics_own_values(base):
    rows = base["rows"]
    assert len(rows) == 6877 and len({r["id"] for r in rows}) == 6877
    assert {"id", "doc_id", "system", "chrf", "bleu"} == set(rows[0])
    chrf = base["system_run"].scores[0]
    assert chrf.metric == "chrf"
    np.testing.assert_array_equal([r["chrf"] for r in rows], chrf.scores["chrf"])
    systems = {r["system"]: r for r in base["systems"]}
    assert len(systems) == 13 and systems.keys() == chrf.system["chrf"].keys()
    assert all(systems[s]["chrf"] == v for s, v in chrf.system["chrf"].items())


# -- formats ------------------------------------------------------------------------------------------------------
def test_keys_by_pair_csv_tsv_and_index_give_the_same_scores(base):
    rows = base["rows"]
    folder = base["folder"]
    with open(folder / "pair.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["doc_id", "system", "score"])
        w.writerows([[r["doc_id"], r["system"], repr(r["chrf"])] for r in reversed(rows)])  # order is free
    with open(folder / "pair.tsv", "w", newline="") as fh:
        w = csv.writer(fh, delimiter="\t")
        w.writerow(["id", "a", "b"])
        w.writerows([[r["id"], r["chrf"], r["bleu"]] for r in rows])
    _write_jsonl(folder / "index.jsonl", [{"signatures": ["x"]}] + [{"index": i, "score": r["chrf"]}
                                                                   for i, r in enumerate(rows)])
    res = _run(base, [f"p={folder / 'pair.csv'}", f"t={folder / 'pair.tsv'}", f"i={folder / 'index.jsonl'}"],
               metrics="chrf", level="summary", statistic="pearson")
    v = res.values
    assert v["p"] == pytest.approx(v["chrf"], abs=1e-12) and v["i"] == pytest.approx(v["chrf"], abs=1e-12)
    assert v["t/a"] == pytest.approx(v["chrf"], abs=1e-12)
    assert {d["metric"]: d["key"] for d in res.imported} == {"p": "pair", "t": "id", "i": "index"}


def test_lower_is_better_is_oriented_and_said(base):
    neg = _write_jsonl(base["folder"] / "neg.jsonl", [{"id": r["id"], "score": -r["chrf"]} for r in base["rows"]])
    res = _run(base, [f"neg:lower={neg}"], metrics="chrf", level="system", statistic="kendall")
    assert res.values["neg"] == pytest.approx(_run(base, [], metrics="chrf", level="system", statistic="kendall",
                                                   system_score="mean").values["chrf"], abs=1e-12)
    assert "orientation:lower" in res.signatures["neg"] and res.signatures["neg"].endswith("|sys:mean")
    out = _cli(base, "-m", "chrf", "--scores", f"neg:lower={neg}")
    assert out.exit_code == 0, out.output
    assert "imported" in out.output and "lower is better" in out.output


def test_mt_metrics_eval_score_files_with_unrated_lines_and_system_scores(base):
    """mt-metrics-eval's layout: every system (also the human ones) on every segment 1..529, in segment order; the
    .sys.score lines are used at the system level."""
    folder = base["folder"]
    by = {(int(r["doc_id"].split(":")[1]), r["system"]): r["chrf"] for r in base["rows"]}
    systems = sorted({s for _, s in by} | {"ref", "refB"})
    last = max(seg for seg, _ in by)  # segment ids run past 529: the unrated ones are in the file too
    lines = [f"{s}\t{by.get((seg, s), 50.0)}" for s in systems for seg in range(1, last + 1)]
    (folder / "chrF-refB.seg.score").write_text("\n".join(lines) + "\n")
    corpus = {r["system"]: r["chrf"] for r in base["systems"]}
    (folder / "chrF-refB.sys.score").write_text("".join(f"{s}\t{corpus.get(s, 1.0)}\n" for s in systems))
    specs = [f"m={folder / 'chrF-refB.seg.score'}", f"m={folder / 'chrF-refB.sys.score'}"]
    res = _run(base, specs, metrics="chrf", level="system", statistic="pearson")
    assert res.values["m"] == pytest.approx(res.values["chrf"], abs=1e-12)  # both the corpus chrF
    assert res.system_scores["m"] == "file"
    # every line of ref and refB, the unrated segments of the MT systems, and the 2 human system lines
    assert res.imported[0]["ignored_lines"] == len(lines) - 6877 + 2
    summary = _run(base, specs, metrics="chrf", level="summary", statistic="pearson")
    assert summary.values["m"] == pytest.approx(summary.values["chrf"], abs=1e-12)


def test_a_system_only_file_is_refused_below_the_system_level(base):
    path = _write_jsonl(base["folder"] / "sys.jsonl", [{"system": r["system"], "score": r["chrf"]}
                                                       for r in base["systems"]])
    res = _run(base, [f"s={path}"], metrics="chrf", level="system", statistic="spearman")
    assert res.values["s"] == pytest.approx(res.values["chrf"], abs=1e-12)
    with pytest.raises(MetaEvalError, match="system-level scores only"):
        _run(base, [f"s={path}"], metrics="chrf", level="global")


# -- strict joins: one clear error before any scoring ------------------------------------------------------------
def _bad(base, name, objs):
    return _write_jsonl(base["folder"] / name, objs)


@pytest.mark.parametrize("case,expect", [
    ("missing", r"miss\.jsonl: no score for 1 of the 6877 judged rows .*'zh-en:\d+:"),
    ("repeat", r"repeat\.jsonl:3: row 'zh-en:\d+:\w+' is scored again \(first at line 1\); 1 repeated"),
    ("nan", r"nan\.jsonl:2: the score 'score' is NaN; scores must be finite"),
    ("text", r"text\.jsonl:2: the score 'score' is \"high\", not a number"),
    ("stranger", r"stranger\.jsonl:6878: row 'nope' is not a row of wmt21-mqm-ted \(zh-en\); 1 line"),
])
def test_bad_files_fail_before_scoring_naming_file_and_line(base, case, expect):
    rows = [{"id": r["id"], "score": r["chrf"]} for r in base["rows"]]
    objs = {"missing": rows[1:], "repeat": rows[:2] + rows[:1] + rows[2:],
            "nan": rows[:1] + [{"id": rows[1]["id"], "score": float("nan")}] + rows[2:],
            "text": rows[:1] + [{"id": rows[1]["id"], "score": "high"}] + rows[2:],
            "stranger": rows + [{"id": "nope", "score": 1.0}]}[case]
    name = {"missing": "miss", "repeat": "repeat", "nan": "nan", "text": "text", "stranger": "stranger"}[case]
    path = _bad(base, f"{name}.jsonl", objs)
    out = _cli(base, "-m", "chrf", "--cache", str(base["folder"] / "never.sqlite"), "--scores", f"x={path}")
    assert out.exit_code == 2, out.output
    assert "Traceback" not in out.output
    import re

    assert re.search(expect, " ".join(out.output.split())), out.output
    assert not (base["folder"] / "never.sqlite").exists()  # failed before anything was scored


def test_missing_rows_dropped_on_request_from_every_metric(base, tmp_path):
    rows = [{"id": r["id"], "score": r["chrf"]} for r in base["rows"]]
    path = _write_jsonl(tmp_path / "some.jsonl", rows[3:])
    res = _run(base, [f"x={path}"], metrics="chrf", scores_missing="drop", output=tmp_path / "r.json")
    assert res.n == 6874 and res.rows_without_imported_score == 3
    assert {r.n for r in res.results} == {6874}  # chrF is compared on the same rows
    assert res.values["x"] == pytest.approx(res.values["chrf"], abs=1e-12)
    assert json.loads((tmp_path / "r.json").read_text())["rows_without_imported_score"] == 3


def test_a_changed_file_is_a_new_signature(base, tmp_path):
    rows = [{"id": r["id"], "score": r["chrf"]} for r in base["rows"]]
    path = _write_jsonl(tmp_path / "m.jsonl", rows)
    first = _run(base, [f"m={path}"], metrics="chrf").signatures["m"]
    rows[0]["score"] += 1.0
    _write_jsonl(path, rows)
    second = _run(base, [f"m={path}"], metrics="chrf").signatures["m"]
    assert first != second and first.split("|sha256:")[0] == second.split("|sha256:")[0]


@pytest.mark.parametrize("text,message", [("mine", "NAME=FILE"), ("mine:worse=f.jsonl", "'lower' or 'higher'"),
                                          ("a/b=f.jsonl", "no '/'")])
def test_bad_specs(text, message):
    with pytest.raises(MetaEvalError, match=message):
        parse_spec(text)


def test_a_name_of_a_meta_eval_metric_is_refused(base, tmp_path):
    path = _write_jsonl(tmp_path / "c.jsonl", [{"id": r["id"], "score": 1.0} for r in base["rows"]])
    with pytest.raises(MetaEvalError, match="is a meta-eval metric"):
        _run(base, [f"chrf={path}"], metrics="bleu")


# -- leaderboards ---------------------------------------------------------------------------------------------------
def test_a_leaderboard_publishes_imported_scores(base, tmp_path):
    from meta_eval.leaderboard.publish import publish

    doc = publish(["wmt21-mqm-ted:zh-en"], tmp_path / "board", "chrf,mine", resamples=20, data_dir=base["data"],
                  cache=base["cache"], progress=False, scores=[f"mine={base['folder'] / 'out.jsonl'}"])
    section = doc["sets"][0]
    assert {m["variant"]: m["system_score"] for m in section["metrics"]} == {
        "chrf": "corpus", "mine/chrf": "file", "mine/bleu": "file"}
    for block in section["levels"]:
        r = {x["variant"]: x["r"] for x in block["results"]}
        assert r["mine/chrf"] == pytest.approx(r["chrf"], abs=1e-6), (block["level"], block["statistic"])
    assert "--scores mine=" in doc["command"]
    with pytest.raises(MetaEvalError, match="name the set of the file: SET/NAME=FILE"):
        publish("wmt21-mqm-ted:zh-en,wmt21-mqm-ted:en-de", tmp_path / "b2", "chrf", data_dir=base["data"],
                scores=[f"mine={base['folder'] / 'out.jsonl'}"])


# -- the learned combination ----------------------------------------------------------------------------------------
def test_learn_takes_imported_scores_as_features_and_refuses_to_save_them(base, tmp_path):
    from meta_eval.learning.pipeline import learn

    path = base["folder"] / "out.jsonl"
    res = learn(SET["judgments"], "mine", subset=SET["subset"], scores=[f"mine={path}"], splits=20,
                search_splits=10, protocol="paper", data_dir=base["data"], cache=base["cache"], progress=False)
    ref = learn(SET["judgments"], "chrf,bleu", subset=SET["subset"], splits=20, search_splits=10, protocol="paper",
                data_dir=base["data"], cache=base["cache"], progress=False)
    assert [f.replace("mine/", "") for f in res.outcome.best.features] == list(ref.outcome.best.features)
    assert res.outcome.best.grouped.mean == pytest.approx(ref.outcome.best.grouped.mean, abs=1e-12)
    with pytest.raises(MetaEvalError, match="uses imported scores"):
        learn(SET["judgments"], "mine", subset=SET["subset"], scores=[f"mine={path}"], splits=20, search_splits=10,
              protocol="paper", data_dir=base["data"], cache=base["cache"], progress=False, save=str(tmp_path / "m.json"))


@pytest.mark.parametrize("header", ["id,", "id,score,", "id,,score"])
def test_a_header_column_without_a_name_is_refused(base, header):
    """``id,`` read an unnamed score column: a variant ``x/`` of empty cells, exit 0."""
    rows = [r["id"] for r in base["rows"]]
    width = header.count(",") + 1
    path = base["folder"] / "unnamed.csv"
    path.write_text(header + "\n" + "".join(",".join([i] + ["0.5"] * (width - 1)) + "\n" for i in rows),
                    encoding="utf-8")
    out = _cli(base, "-m", "chrf", "--cache", str(base["folder"] / "never.sqlite"), "--scores", f"x={path}")
    assert out.exit_code == 2 and "Traceback" not in out.output, out.output
    column = header.split(",").index("") + 1
    assert f"unnamed.csv:1: column {column} of the header has no name" in " ".join(out.output.split())


def test_a_json_lines_files_score_names_may_come_in_any_order(base, tmp_path):
    """JSON objects have no key order; a file whose lines list the scores in another order was refused ("the scores
    ['bleu', 'chrf'] differ from those of ... ['chrf', 'bleu']"; audit, session 38). The values are matched by name."""
    rows = [dict(reversed(list(r.items()))) if k % 2 else r for k, r in enumerate(base["rows"])]
    assert list(rows[0]) != list(rows[1]) and set(rows[0]) == set(rows[1])
    path = _write_jsonl(tmp_path / "mixed.jsonl", rows)
    res = _run(base, [f"mine={path}"], metrics="chrf,bleu")
    for variant in ("chrf", "bleu"):
        assert res.values[f"mine/{variant}"] == pytest.approx(res.values[variant], abs=1e-12)


def test_a_system_file_merged_into_a_row_file_is_named_in_its_own_errors(base, tmp_path):
    """With a row file and a system file under one name, an error about a system line named the row file and the
    system file's line number (audit, session 38)."""
    rows = _write_jsonl(tmp_path / "rows.jsonl", base["rows"])
    systems = [dict(s) for s in base["systems"]]
    systems[3] = {**systems[3], "system": "Ghost-MT"}
    sys_file = _write_jsonl(tmp_path / "systems.jsonl", systems)
    res = _cli(base, "-m", "chrf", "--scores", f"mine={rows}", "--scores", f"mine={sys_file}", "--level", "system")
    said = " ".join(res.output.split())
    assert res.exit_code == 2, res.output
    assert f"{sys_file}:4: system 'Ghost-MT' is not a system of" in said, said


def test_a_seg_score_file_with_a_system_spelt_otherwise_names_both_spellings(base, tmp_path):
    """A .seg.score file whose system is spelt otherwise than the set's had its lines ignored, and the error listed
    only the rows left without a score (audit, session 38): it names the system without scores and the file's
    systems the set does not have."""
    by = {(int(r["doc_id"].split(":")[1]), r["system"]): r["chrf"] for r in base["rows"]}
    systems = sorted({s for _, s in by})
    renamed = {systems[0]: systems[0].replace("-", "_") + "_x"}
    last = max(seg for seg, _ in by)
    lines = [f"{renamed.get(s, s)}\t{by.get((seg, s), 50.0)}" for s in systems for seg in range(1, last + 1)]
    path = tmp_path / "chrF-refB.seg.score"
    path.write_text("\n".join(lines) + "\n")
    res = _cli(base, "-m", "chrf", "--scores", f"m={path}")
    said = " ".join(res.output.split())
    assert res.exit_code == 2, res.output
    assert f"the systems without scores are {systems[0]!r}, and the file scores systems the set does not have: " \
           f"{renamed[systems[0]]!r} (a name spelt otherwise?)" in said, said
