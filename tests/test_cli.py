"""The typer CLI through typer's test runner, on small hand-made judgment files."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from meta_eval.cli import app
from meta_eval.metrics import Metric, register
from meta_eval.metrics.registry import unregister

runner = CliRunner()

ROWS = [
    ("The cabinet approved the new budget on Tuesday.", "The government passed its budget on Tuesday.", 0.9),
    ("Budget talks went on.", "The government passed its budget on Tuesday.", 0.4),
    ("Rain is expected tomorrow across the north.", "Heavy rain will hit northern regions tomorrow.", 0.8),
    ("The weather.", "Heavy rain will hit northern regions tomorrow.", 0.1),
    ("The team won the cup final after extra time.", "The club won the final in extra time.", 0.7),
    ("", "The club won the final in extra time.", 0.0),
]


@pytest.fixture()
def jsonl(tmp_path):
    path = tmp_path / "mine.jsonl"
    with open(path, "w", encoding="utf-8") as fh:
        for i, (cand, ref, score) in enumerate(ROWS):
            fh.write(json.dumps({"id": f"r{i}", "doc_id": f"d{i // 2}", "system": f"s{i % 2}", "candidate": cand,
                                 "references": [ref], "scores": {"quality": score, "other": None}}) + "\n")
    return path


def run(*args, tmp_path=None):
    extra = ["--cache", str(tmp_path / "cache.sqlite")] if tmp_path is not None else ["--no-cache"]
    return runner.invoke(app, ["run", *args, *extra])


def test_metrics_lists_every_builtin():
    res = runner.invoke(app, ["metrics"])
    assert res.exit_code == 0, res.output
    for name in ("rouge", "wms", "sms", "s+wms", "rougeL-f"):
        assert name in res.output


def test_run_writes_the_documented_json(jsonl, tmp_path):
    out = tmp_path / "res.json"
    # every variant (--variants all; the default hides ROUGE's precision and recall: tests/test_variants.py)
    res = run("--judgments", str(jsonl), "--metrics", "rouge,sms", "--variants", "all", "--output", str(out),
              tmp_path=tmp_path)
    assert res.exit_code == 0, res.output
    doc = json.loads(out.read_text())
    assert doc["judgments"] == "mine" and doc["human"] == "quality" and doc["n"] == len(ROWS)
    assert doc["variants"]["given"] == ["all"] and doc["variants"]["hidden"] == []
    by_name = {r["metric"]: r for r in doc["results"]}
    assert set(by_name) == {"sms", "rouge1-p", "rouge1-r", "rouge1-f", "rouge2-p", "rouge2-r", "rouge2-f",
                            "rougeL-p", "rougeL-r", "rougeL-f", "rougeLsum-p", "rougeLsum-r", "rougeLsum-f"}
    for r in doc["results"]:
        for key in ("spearman", "spearman_p", "pearson", "kendall", "n", "williams_p_vs_baseline", "signature"):
            assert key in r
    assert by_name["rougeL-f"]["williams_p_vs_baseline"] is None
    assert isinstance(by_name["sms"]["williams_p_vs_baseline"], float)
    assert by_name["sms"]["signature"].startswith("sms|")
    assert "Signatures:" in res.output and "sms|vectors:" in res.output
    # second run: everything from the cache, same numbers
    res2 = run("--judgments", str(jsonl), "--metrics", "rouge,sms", "--variants", "all", "--output", str(out),
               tmp_path=tmp_path)
    doc2 = json.loads(out.read_text())
    assert res2.exit_code == 0
    assert doc2["results"] == doc["results"]
    assert all(t["computed"] == 0 for t in doc2["timing"].values())


def test_missing_human_scores_are_left_out_and_reported(jsonl, tmp_path):
    lines = jsonl.read_text().splitlines()
    row = json.loads(lines[0])
    row["scores"]["quality"] = None
    lines[0] = json.dumps(row)
    jsonl.write_text("\n".join(lines) + "\n")
    out = tmp_path / "res.json"
    res = run("--judgments", str(jsonl), "--metrics", "wms", "--output", str(out))
    assert res.exit_code == 0, res.output
    doc = json.loads(out.read_text())
    assert doc["n"] == len(ROWS) - 1 and doc["rows_without_human"] == 1
    assert "1 row without a quality score left out" in " ".join(res.output.split())


@pytest.mark.parametrize("args, message", [
    (["--metrics", "rogue"], "unknown metric or variant 'rogue' (did you mean"),
    (["--human", "nope"], "no human dimension 'nope'"),
    (["--human", "other"], "only 0 rows have a 'other' score"),
    (["--metrics", "wms", "--baseline", "rougeL-f"], "--baseline 'rougeL-f' is not a variant of the chosen metrics"),
    (["--option", "vectors"], "KEY=VALUE"),
    (["--metrics", "rouge", "--option", "vectors=x"], "no chosen metric takes"),
])
def test_bad_requests_get_a_clear_error(jsonl, args, message):
    res = run("--judgments", str(jsonl), *args)
    assert res.exit_code == 2
    assert message in res.output
    assert "Traceback" not in res.output


def test_bad_judgments_get_a_clear_error(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"candidate": "x", "scores": {"q": 1}}\n{"candidate": "y", "sco')
    res = run("--judgments", str(bad))
    assert res.exit_code == 2 and "bad.jsonl:2" in res.output
    res = run("--judgments", "nosuchset")
    assert res.exit_code == 2 and "unknown judgment set" in res.output
    res = run("--judgments", "chaganty", "--data-dir", str(tmp_path / "empty"), "--subset", "nope")
    assert res.exit_code == 2 and "subsets" in res.output


def test_unavailable_and_failing_metrics_do_not_stop_the_others_but_exit_1(jsonl):
    @register("test-needs-extra")
    class NeedsExtra(Metric):
        requires = ("a_module_that_is_not_installed",)
        install_hint = "pip install the-extra"

        def _score(self, examples):
            return {"test-needs-extra": [0.0] * len(examples)}

    @register("test-fails")
    class Fails(Metric):
        def _score(self, examples):
            raise OSError("model file missing")

    try:
        res = run("--judgments", str(jsonl), "--metrics", "wms,test-needs-extra,test-fails")
        assert res.exit_code == 1, res.output  # both were named with --metrics: wms's results, then exit 1
        assert "skipped test-needs-extra: missing a_module_that_is_not_installed: pip install the-extra" in \
            " ".join(res.output.split())
        assert "failed test-fails: OSError: model file missing" in " ".join(res.output.split())
        assert "wms" in res.output and "results for the other metrics were printed above" in res.output
        listing = runner.invoke(app, ["metrics"]).output
        assert "unavailable" in listing
    finally:
        unregister("test-needs-extra")
        unregister("test-fails")


def test_help_and_metrics_do_not_import_heavy_libraries():
    code = ("import sys\nfrom typer.testing import CliRunner\nfrom meta_eval.cli import app\n"
            "r = CliRunner().invoke(app, ['metrics'])\nassert r.exit_code == 0, r.output\n"
            "heavy = [m for m in ('torch', 'transformers', 'spacy', 'ot', 'nltk', 'scipy') if m in sys.modules]\n"
            "print(heavy)")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "[]"


def test_constant_metric_is_reported_as_undefined_and_sorted_last(jsonl, tmp_path):
    @register("test-constant")
    class Constant(Metric):
        def _score(self, examples):
            return {"test-constant": [0.5] * len(examples)}

    try:
        out = tmp_path / "res.json"
        res = run("--judgments", str(jsonl), "--metrics", "test-constant,rouge", "--output", str(out))
        assert res.exit_code == 0, res.output
        doc = json.loads(out.read_text())
        last = doc["results"][-1]
        assert last["metric"] == "test-constant" and last["spearman"] is None
        assert "constant input" in last["note"] and last["williams_p_vs_baseline"] is None
        assert "NaN" not in out.read_text()
    finally:
        unregister("test-constant")


def test_run_at_the_system_level_on_summeval(shared_data, tmp_path):
    """Is SMS significantly better than WMS on SummEval at the system level? (intervals + permutation test)"""
    def go(seed):
        out = tmp_path / f"sys{seed}.json"
        res = runner.invoke(app, ["run", "-j", "summeval", "--data-dir", str(shared_data), "-m", "wms,sms",
                                  "--baseline", "wms", "--level", "system", "--resamples", "200", "--seed",
                                  str(seed), "--cache", str(tmp_path / "c.sqlite"), "--output", str(out)])
        assert res.exit_code == 0, res.output
        return json.loads(out.read_text()), res.output

    doc, output = go(0)
    assert doc["level"] == "system" and doc["resamples"] == 200
    by = {r["metric"]: r for r in doc["results"]}
    assert by["sms"]["n"] == 16 and by["sms"]["level"] == "system"
    assert by["sms"]["ci"][0] <= by["sms"]["spearman"] <= by["sms"]["ci"][1]
    assert 0 <= by["sms"]["perm_p_vs_baseline"] <= 1 and by["wms"]["perm_p_vs_baseline"] is None
    assert "PERM-BOTH" in " ".join(output.split())
    assert go(0)[0]["results"] == doc["results"]
    assert go(1)[0]["results"] != doc["results"]


def test_metrics_lists_each_neural_default_model_and_whether_it_is_here(tmp_path):
    """``meta-eval metrics`` names every neural metric's default model and says whether it is on this machine (read
    from the Hugging Face cache folder and the MiniLM package, without torch): here an empty cache, then one holding
    a (fake) roberta-large snapshot."""
    import os

    from meta_eval.metrics.model_names import model_here

    def listing(hub):
        env = {**os.environ, "HF_HUB_CACHE": str(hub), "COLUMNS": "400"}
        done = subprocess.run([sys.executable, "-m", "meta_eval.cli", "metrics"], env=env, capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return {line.split("│")[1].strip(): [c.strip() for c in line.split("│")[2:-1]]
                for line in done.stdout.splitlines() if line.startswith("│")}

    rows = listing(tmp_path / "empty")
    assert rows["bertscore"][2] == "roberta-large (not here)"
    assert rows["moverscore"][2] == "distilbert-base-uncased (not here)"
    assert rows["bert-lm"][2] == "bert-base-uncased (not here)"
    assert rows["qa-sup"][2] == "bert-large-uncased-whole-word-masking-finetuned-squad (not here)"
    minilm = "here" if model_here("minilm") else "not here"
    assert rows["wms-ctx"][:3] == ["wms-ctx[minilm]", "references", f"minilm ({minilm})"]
    assert rows["rouge"][2] == "-" and rows["bertscore"][0] == "bertscore-p, bertscore-r, bertscore-f"
    snapshot = tmp_path / "hub" / "models--roberta-large" / "snapshots" / "abc"
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text("{}")
    assert listing(tmp_path / "hub")["bertscore"][2] == "roberta-large (here)"


def test_every_options_help_is_shown_whole():
    """Every option's help text appears in its command's --help as written: rich reads an unescaped ``[default: x]``
    as markup and drops it (``run --help`` said "used by the intervals and tests ; a categorical ..."); a help text
    writes ``\\[`` for a literal bracket."""
    import typer

    from meta_eval.cli import app

    def commands(command, path):
        yield path, command
        for name, sub in getattr(command, "commands", {}).items():
            yield from commands(sub, [*path, name])

    lost, seen = [], 0
    for path, command in commands(typer.main.get_command(app), []):
        res = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "2000"}, terminal_width=2000)
        shown = " ".join(res.output.replace("│", " ").split())
        for param in command.params:
            if getattr(param, "help", None):
                seen += 1
                if " ".join(param.help.replace("\\[", "[").split()) not in shown:
                    lost.append((" ".join(path), param.name))
    assert seen > 100 and lost == []
