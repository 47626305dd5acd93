"""JUDGE-BENCH's schema (issue #38 items 1-2): the 13 built-in files ``judge-bench:<name>`` load with their raters and
print the raters' agreement; one downloads from a local server with its SHA-256 checked (a changed byte refused); any
file in the schema reads through ``-j FILE.json``; a malformed one is one sentence naming the file and the instance;
a graded property runs with a cheap metric, and so do a categorical and a pairwise one (label statistics)."""
from __future__ import annotations

import functools
import http.server
import json
import shutil
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from meta_eval import judgments
from meta_eval.cli import app
from meta_eval.judgments import judge_bench
from meta_eval.judgments.files import MIRROR_ENV_VAR

runner = CliRunner()
COMMIT = judge_bench.COMMIT
RAW = f"_sources/dmg-illc/JUDGE-BENCH/raw/{COMMIT}/data"

# (instances, raters per item (min, max)) as the table of shared/judgments/judge-bench/PROVENANCE.md gives them
PROVENANCE = {
    "newsroom": (420, (3, 3)), "recipe-crowd-sourcing-data": (52, (15, 88)), "roscoe-cosmos": (195, (1, 1)),
    "roscoe-drop": (210, (1, 1)), "roscoe-esnli": (151, (1, 1)), "roscoe-gsm8k": (200, (1, 1)),
    "dices-990": (990, (69, 76)), "dices-350-expert": (350, (1, 1)), "dices-350-crowdsourced": (350, (123, 123)),
    "cola": (1043, (1, 1)), "inferential-strategies": (300, (2, 2)), "llmbar-natural": (100, (1, 1)),
    "llmbar-adversarial": (319, (1, 1)),
}


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_the_table_above_is_provenance_md_s(shared_data):
    text = (shared_data / "judge-bench" / "PROVENANCE.md").read_text()
    for piece in ("420 summaries", "52 generated recipes", "195 / 210 / 151 / 200", "990 chatbot", "350 conversations",
                  "1,043 sentences", "300 model reasoning", "100 / 319", "| 15-88 |", "| 69-76 (crowd) |",
                  "123 / 1"):
        assert piece in text
    assert set(PROVENANCE) == set(judge_bench.SETS) and len(PROVENANCE) == 13


@pytest.mark.parametrize("name", list(PROVENANCE))
def test_every_file_loads_with_its_raters_and_prints_its_human_agreement(name, shared_data):
    n, (lo, hi) = PROVENANCE[name]
    jset = judgments.load(f"judge-bench:{name}", shared_data, download=False)
    assert len(jset) == n and jset.subset == name and jset.licence and jset.properties
    agreement = judge_bench.human_agreement(jset)
    assert set(agreement) == {p.name for p in jset.properties}
    for prop in jset.properties:
        a = agreement[prop.name]
        assert a["raters_per_item"] == [lo, hi]
        assert a["level"] == {"graded": "ordinal", "categorical": "nominal"}[prop.kind]  # as JUDGE-BENCH
        if hi == 1:
            assert a["alpha"] is None and a["note"] == "one rater: no agreement"
        else:
            assert -1 <= a["alpha"] <= 1
        if prop.categorical:  # labels stay labels, one of the property's
            assert all(r.labels[prop.name] in prop.labels and prop.name not in r.scores for r in jset.rows)
    res = runner.invoke(app, ["judgments", f"judge-bench:{name}", "--data-dir", str(shared_data)],
                        env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    out = _flat(res.output)
    assert f"licence: {jset.licence}" in out and f"rows: {n}" in out
    for prop in jset.properties:
        a = agreement[prop.name]
        shown = "one rater: no agreement" if a["alpha"] is None else f"= {a['alpha']:.3f}"
        assert f"property {prop.name!r}: {prop.scale()}; " in out and shown in out
    assert "position in individual_human_scores is its rater" in out


def test_human_agreement_is_judge_bench_s_alpha(shared_data):
    """JUDGE-BENCH's eval_responses.py: one row per position in individual_human_scores (NaN where a list is
    shorter), krippendorff.alpha at the ordinal level for graded properties, nominal (labels coded by position in
    labels_list) for categorical ones."""
    krippendorff = pytest.importorskip("krippendorff")
    import numpy as np

    for name, prop_name in [("newsroom", "Coherence"), ("recipe-crowd-sourcing-data", "overall"),
                            ("dices-990", "safety")]:
        jset = judgments.load(f"judge-bench:{name}", shared_data, download=False)
        prop = jset.get_property(prop_name)
        lists = [r.raters[prop_name] for r in jset.rows]
        width = max(map(len, lists))
        lower = [x.lower() for x in prop.labels]
        code = (lambda v: lower.index(v.lower())) if prop.categorical else float
        data = np.array([[code(v[k]) if k < len(v) else np.nan for v in lists] for k in range(width)], dtype=float)
        level = "nominal" if prop.categorical else "ordinal"
        expected = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
        assert judge_bench.human_agreement(jset)[prop_name]["alpha"] == pytest.approx(expected, abs=1e-12)


@pytest.fixture()
def serve():
    """Serve a folder from 127.0.0.1; yields a function folder -> (base URL, list of requested paths)."""
    servers = []

    def start(folder: Path):
        log: list[str] = []

        class Handler(http.server.SimpleHTTPRequestHandler):
            def log_message(self, *args):
                log.append(self.path)

        handler = functools.partial(Handler, directory=str(folder))
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}", log

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def test_a_set_downloads_from_the_mirror_with_its_sha256_checked(shared_data, serve, tmp_path, monkeypatch):
    base, log = serve(shared_data / "_sources")
    monkeypatch.setenv(MIRROR_ENV_VAR, base)
    data = tmp_path / "data"
    jset = judgments.load("judge-bench:llmbar-natural", data)
    assert len(jset) == 100
    assert log == [f"/dmg-illc/JUDGE-BENCH/raw/{COMMIT}/data/llmbar/data-natural.json"]
    got = data / "judge-bench" / "llmbar" / "data-natural.json"
    assert got.read_bytes() == (shared_data / RAW / "llmbar" / "data-natural.json").read_bytes()
    assert sorted(p.name for p in got.parent.iterdir()) == ["data-natural.json"]  # no partial file left
    judgments.load("judge-bench:llmbar-natural", data)  # found there now: nothing fetched again
    assert len(log) == 1


def test_a_changed_byte_is_refused_and_nothing_is_written(shared_data, serve, tmp_path, monkeypatch):
    mirror = tmp_path / "mirror" / f"dmg-illc/JUDGE-BENCH/raw/{COMMIT}/data/llmbar"
    mirror.mkdir(parents=True)
    raw = bytearray((shared_data / RAW / "llmbar" / "data-natural.json").read_bytes())
    raw[1000] ^= 1
    (mirror / "data-natural.json").write_bytes(bytes(raw))
    base, _ = serve(tmp_path / "mirror")
    monkeypatch.setenv(MIRROR_ENV_VAR, base)
    data = tmp_path / "data"
    with pytest.raises(judgments.DataError, match="SHA-256 checksum mismatch") as err:
        judgments.load("judge-bench:llmbar-natural", data)
    assert judge_bench.SETS["llmbar-natural"].sha256 in str(err.value)
    assert not (data / "judge-bench").exists() or not any((data / "judge-bench").rglob("*"))
    # the same changed file in the _sources layout of a data folder is refused too, before a byte is read
    layout = data / RAW / "llmbar"
    layout.mkdir(parents=True)
    (layout / "data-natural.json").write_bytes(bytes(raw))
    res = runner.invoke(app, ["judgments", "judge-bench:llmbar-natural", "--data-dir", str(data)])
    assert res.exit_code == 2 and "corrupt or truncated" in _flat(res.output) and "Traceback" not in res.output


def test_a_data_folder_with_the_sources_layout_needs_no_network(shared_data, tmp_path, monkeypatch):
    monkeypatch.setenv(MIRROR_ENV_VAR, "http://127.0.0.1:9")  # nothing listens: a download would fail
    target = tmp_path / RAW / "cola"
    target.mkdir(parents=True)
    shutil.copy(shared_data / RAW / "cola" / "cola.json", target / "cola.json")
    assert len(judgments.load("judge-bench:cola", tmp_path)) == 1043


def _schema_file(path: Path, **change) -> Path:
    doc = {
        "dataset": "tiny", "dataset_url": "https://example.org", "expert_annotator": "false",
        "annotations": [
            {"metric": "quality", "category": "graded", "worst": 1, "best": 5,
             "prompt": "Rate {{ response }} for {{ user_prompt }}"},
            {"metric": "safe", "category": "categorical", "labels_list": ["Yes", "No"], "prompt": "Safe? {{ response }}"},
        ],
        "instances": [
            {"id": i, "instance": {"user_prompt": f"question {i}", "response": text},
             "annotations": {"quality": {"mean_human": sum(q) / len(q), "individual_human_scores": q},
                             "safe": {"majority_human": s[0], "individual_human_scores": s}}}
            for i, (text, q, s) in enumerate([
                ("question 0 answered well and fully", [5, 4], ["Yes", "Yes"]),
                ("a bad answer", [1, 2], ["No", "Yes"]),
                ("question 2 answered", [3, 3], ["Yes", "Yes"]),
                ("nothing", [1, 1], ["No", "No"]),
                ("question 4 answered in part", [4, 3], ["Yes", "No"]),
            ])],
    }
    for key, value in change.items():
        value(doc) if callable(value) else doc.__setitem__(key, value)
    path.write_text(json.dumps(doc))
    return path


def test_a_file_in_the_schema_reads_through_dash_j(tmp_path):
    path = _schema_file(tmp_path / "mine.json")
    jset = judgments.load(str(path))
    assert [p.name for p in jset.properties] == ["quality", "safe"] and jset.default_dimension == "quality"
    row = jset.rows[1]
    assert (row.candidate, row.source, row.scores, row.labels) == ("a bad answer", "question 1", {"quality": 1.5},
                                                                   {"safe": "No"})
    assert row.fields == {"user_prompt": "question 1", "response": "a bad answer"} and row.judges["quality"] == (1, 2)
    # nominal alpha by hand (Krippendorff 2011): 5 units of 2 values, n = 10 pairable values, n_Yes = 6, n_No = 4;
    # units 1 and 4 each add 1 to o(Yes,No) and to o(No,Yes): alpha = 1 - (n - 1) (o_YN + o_NY) / (2 n_Y n_N)
    # = 1 - 9 * 4 / 48 = 0.25
    agreement = judge_bench.human_agreement(jset)
    assert agreement["safe"]["alpha"] == pytest.approx(0.25, abs=1e-12)
    assert agreement["quality"]["level"] == "ordinal"
    res = runner.invoke(app, ["judgments", str(path)], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    assert "property 'safe': categorical: Yes, No; human agreement Krippendorff's alpha (nominal, 2 raters per item) " \
           "= 0.250" in _flat(res.output)
    res = runner.invoke(app, ["run", "-j", str(path), "-m", "textrank", "--cache", str(tmp_path / "c.sqlite")],
                        env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    assert "textrank" in res.output and "n=5" in res.output
    lines = tmp_path / "rows.json"  # a .json file of JSON lines is still read as JSON lines
    lines.write_text("\n".join(json.dumps({"candidate": f"text {i}", "scores": {"q": i}}) for i in range(3)) + "\n")
    assert len(judgments.load(str(lines))) == 3


def _drop_instance_field(doc):
    del doc["instances"][2]["instance"]["response"]


def _bad_label(doc):
    doc["instances"][1]["annotations"]["safe"]["majority_human"] = "Maybe"


def _off_scale(doc):
    doc["instances"][3]["annotations"]["quality"]["individual_human_scores"] = [1, 7]


@pytest.mark.parametrize("change, expected", [
    ({"instances": None, "annotations": None, "rows": [1]}, "a .json judgment file must be in JUDGE-BENCH's schema"),
    ({"x": _drop_instance_field}, "instances[2] (id '2'): the instance has the fields 'user_prompt' but none of"),
    ({"x": _bad_label}, "instances[1] (id '1'): majority_human of 'safe' must be one of its labels Yes, No, got "
                        "\"Maybe\""),
    ({"x": _off_scale}, "instances[3] (id '3'): 'quality' value 7 is outside its scale 1-5"),
    ({"annotations": [{"metric": "quality", "category": "ordinal"}]}, "'category' must be one of graded, continuous"),
])
def test_a_malformed_file_is_one_sentence_naming_the_file_and_what_is_wrong(tmp_path, change, expected):
    path = tmp_path / "bad.json"
    if "rows" in change:  # neither schema: an object without annotations/instances
        path.write_text(json.dumps({"rows": [1]}))
    else:
        _schema_file(path, **change)
    for args in (["judgments", str(path)], ["run", "-j", str(path), "-m", "textrank", "--cache",
                                             str(tmp_path / "c.sqlite")]):
        res = runner.invoke(app, args, env={"COLUMNS": "400"})
        assert res.exit_code == 2, res.output
        out = _flat(res.output)
        assert str(path) in out and expected in out and "Traceback" not in res.output, out


def test_a_graded_property_runs_with_a_cheap_metric(shared_data, tmp_path):
    res = runner.invoke(app, ["run", "-j", "judge-bench:newsroom", "-m", "textrank", "--human", "Coherence",
                              "--data-dir", str(shared_data), "--cache", str(tmp_path / "c.sqlite"), "--output",
                              str(tmp_path / "r.json")], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    doc = json.loads((tmp_path / "r.json").read_text())
    assert (doc["judgments"], doc["human"], doc["n"], doc["level"]) == ("judge-bench:newsroom", "Coherence", 420,
                                                                        "global")
    (result,) = doc["results"]
    assert result["metric"] == "textrank" and result["n"] == 420 and 0 < result["spearman"] < 1


@pytest.mark.parametrize("name, human, kind, rule", [("roscoe-drop", "Missing Steps", "categorical", "threshold"),
                                                      ("llmbar-natural", None, "pairwise", "pick")])
def test_run_on_a_categorical_or_pairwise_property_computes_label_statistics(shared_data, tmp_path, name, human,
                                                                             kind, rule):
    args = ["run", "-j", f"judge-bench:{name}", "-m", "textrank", "--data-dir", str(shared_data), "--cache",
            str(tmp_path / "c.sqlite"), "--output", str(tmp_path / "r.json")] + (["--human", human] if human else [])
    res = runner.invoke(app, args, env={"COLUMNS": "400"})
    assert res.exit_code == 0, res.output
    doc = json.loads((tmp_path / "r.json").read_text())
    (result,) = doc["results"]
    assert doc["kind"] == kind and result["metric"] == "textrank" and result["rule"] == rule
    assert f"rule: textrank: {rule}:" in _flat(res.output) and "Traceback" not in res.output
