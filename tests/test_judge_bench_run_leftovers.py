"""Issue #38's run-side leftovers: no default baseline on JUDGE-BENCH's sets (said once, before the table, as #35
says it), Krippendorff's alpha with a metric as one more rater on a graded property (against the `krippendorff`
package), and ``--scores`` / ``--scores-out`` / ``--plot`` on label properties."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from meta_eval.cli import app
from meta_eval.metrics import plugin_files
from test_categorical_run import _categorical_file, _flat, _plugin

runner = CliRunner()


@pytest.fixture(autouse=True)
def _forget_plugin_files():
    yield
    plugin_files.unload_all()


def _run(args: list[str], tmp_path: Path):
    return runner.invoke(app, ["run", *args, "--cache", str(tmp_path / "c.sqlite"), "--plugin",
                               str(_plugin(tmp_path)), "--resamples", "50"], env={"COLUMNS": "250"})


def _graded_file(path: Path, raters, words) -> Path:
    """A graded 1-5 property rated by the given raters (lists, None missing); the candidate has ``words`` words, so
    the ``words`` metric scores it that many."""
    doc = {"dataset": "graded", "annotations": [{"metric": "q", "category": "graded", "worst": 1, "best": 5,
                                                 "prompt": "{{ response }}"}],
           "instances": [{"id": f"g{i}", "instance": {"user_prompt": f"p {i}", "response": "w " * n},
                          "annotations": {"q": {"mean_human": sum(v for v in r if v is not None)
                                                / sum(v is not None for v in r), "individual_human_scores": r}}}
                         for i, (r, n) in enumerate(zip(raters, words))]}
    path.write_text(json.dumps(doc))
    return path


# -- item 2: the default baseline -------------------------------------------------------------------------------------
def test_a_categorical_judge_bench_run_says_once_before_the_table_that_no_baseline_applies(tmp_path):
    path = _categorical_file(tmp_path / "tiny.json")
    out = tmp_path / "r.json"
    res = _run(["-j", str(path), "-m", "words", "--output", str(out)], tmp_path)
    assert res.exit_code == 0, res.output
    text = _flat(res.output)
    assert "rougeL-f" not in text.replace("rougeL-f and bleu need", "")  # never "rougeL-f was not scored"
    reason = ("no test against a baseline: the tiny.json set declares no default baseline (JUDGE-BENCH's schema has "
              "no references, which rougeL-f and bleu need")
    assert text.count("no test against a baseline") == 1 and reason in text, res.output
    assert text.index(reason) < text.index("tiny.json: ok (categorical labels")  # before the table's title
    doc = json.loads(out.read_text())
    assert doc["baseline"] is None and doc["baseline_note"].startswith("the tiny.json set declares no default")
    assert doc["warnings"] == [{"kind": "no-baseline", "message": "no test against a baseline: "
                                                                  + doc["baseline_note"]}]


def test_a_graded_judge_bench_run_and_judgments_name_no_default_baseline(tmp_path):
    path = _graded_file(tmp_path / "g.json", [[1, 2], [2, 2], [3, 4], [4, 5], [5, 5], [3, 3]], [1, 2, 3, 4, 5, 6])
    res = _run(["-j", str(path), "-m", "words"], tmp_path)
    assert res.exit_code == 0, res.output
    assert ("warning: no test against a baseline: the g.json set declares no default baseline (JUDGE-BENCH's schema "
            "has no references" in _flat(res.output)), res.output
    shown = runner.invoke(app, ["judgments", str(path)], env={"COLUMNS": "250"})
    assert shown.exit_code == 0, shown.output
    assert "default baseline: none (JUDGE-BENCH's schema has no references" in _flat(shown.output), shown.output


# -- item 1: alpha with a metric as one more rater on a graded property -----------------------------------------------
GRADED_RATERS = [[1, 2], [2, 2], [3, 4], [4, 5], [5, 5], [3, 3]]


def test_graded_alpha_with_the_metric_as_a_rater_is_the_krippendorff_packages_on_the_same_matrix(tmp_path):
    krippendorff = pytest.importorskip("krippendorff")
    import csv
    import io

    path = _graded_file(tmp_path / "g.json", GRADED_RATERS, [1, 2, 3, 4, 5, 6])
    out = tmp_path / "r.json"
    res = _run(["-j", str(path), "-m", "words", "--output", str(out), "--format", "csv"], tmp_path)
    assert res.exit_code == 0, res.output
    doc = json.loads(out.read_text())
    # rank quantiles by hand: the raters' pooled values sorted are 1 2 2 2 3 3 3 4 4 5 5 5 (M = 12); words scores
    # the rows 1..6, so row k (rank k) has q = (k - 1/2) / 6 and gets the value at position floor(12 q) = 2k - 1:
    metric_rater = [2, 2, 3, 4, 5, 5]
    data = [[r[0] for r in GRADED_RATERS], [r[1] for r in GRADED_RATERS], metric_rater]
    expected = krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal")
    assert doc["human_agreement"]["level"] == "ordinal"
    assert doc["human_agreement"]["alpha"] == pytest.approx(
        krippendorff.alpha(reliability_data=data[:2], level_of_measurement="ordinal"), abs=1e-12)
    (r,) = doc["results"]
    assert r["alpha_with_metric"] == pytest.approx(expected, abs=1e-12)
    table = list(csv.reader(io.StringIO(res.stdout)))
    assert table[1][table[0].index("alpha +metric")] == f"{r['alpha_with_metric']:.3f}"
    assert "alpha +metric: the same with the variant as one more rater, its scores put on the raters' scale by " \
           "rank quantiles (ordinal" in _flat(res.output)


def test_scale_values_keeps_the_order_ties_and_direction_and_leaves_nan_missing():
    from meta_eval.judgments.judge_bench import scale_values

    pool = [1, 2, 2, 2, 3, 3, 3, 4, 4, 5, 5, 5]
    assert scale_values([1, 2, 3, 4, 5, 6], pool) == [2, 2, 3, 4, 5, 5]
    assert scale_values([6, 5, 4, 3, 2, 1], pool, higher_is_better=False) == [2, 2, 3, 4, 5, 5]
    # tied scores share their mid-rank (2.5 of 4: q = 1/2, position 6), NaN stays missing
    assert scale_values([0.1, 0.5, 0.5, float("nan"), 0.9], pool) == [2, 3, 3, None, 5]


# -- item 3: --scores, --scores-out and --plot on a label property ---------------------------------------------------
def test_scores_out_writes_each_rows_scores_and_label_and_scores_reads_them_back(tmp_path):
    path = _categorical_file(tmp_path / "tiny.json")
    first, again = tmp_path / "a.json", tmp_path / "b.json"
    scores = tmp_path / "rows.jsonl"
    res = _run(["-j", str(path), "-m", "words,verdict", "--seed", "3", "--scores-out", str(scores), "--output",
                str(first)], tmp_path)
    assert res.exit_code == 0, res.output
    lines = [json.loads(line) for line in scores.read_text().splitlines()]
    from test_categorical_run import GOLD, LENGTH, VERDICT

    assert [(d["id"], d["human"], d["words"], d["verdict"]) for d in lines[1:]] == [
        (f"r{i}", g, 2.0 + n, float(("no", "yes").index(v))) for i, (g, n, v) in enumerate(zip(GOLD, LENGTH, VERDICT))]
    # read back under another name: the same threshold rule, the same numbers (one number per question)
    res = _run(["-j", str(path), "--scores", f"imported={scores}", "-m", "imported", "--variants", "imported/words",
                "--seed", "3", "--output", str(again)], tmp_path)
    assert res.exit_code == 0, res.output
    a = next(r for r in json.loads(first.read_text())["results"] if r["metric"] == "words")
    (b,) = json.loads(again.read_text())["results"]
    assert b["metric"] == "imported/words" and b["rule"] == "threshold"
    for key in ("threshold", "high_label", "items", "kappa", "label-accuracy", "macro-f1"):
        assert b[key] == a[key], key


def test_scores_join_strictly_on_the_rows_keys(tmp_path):
    path = _categorical_file(tmp_path / "tiny.json")
    scores = tmp_path / "s.csv"
    scores.write_text("id,mine\n" + "".join(f"r{i},{i}\n" for i in range(7)))  # r7 has no score
    res = _run(["-j", str(path), "--scores", f"mine={scores}", "-m", "mine"], tmp_path)
    assert res.exit_code == 2 and "Traceback" not in res.output, res.output
    assert "no score for 1 of the 8 judged rows" in _flat(res.output), res.output


def test_plot_draws_the_tables_intervals_and_refuses_the_graded_figures_naming_it(tmp_path):
    pytest.importorskip("matplotlib")
    path = _categorical_file(tmp_path / "tiny.json")
    figure = tmp_path / "f.svg"
    res = _run(["-j", str(path), "-m", "verdict,words", "--plot", str(figure)], tmp_path)
    assert res.exit_code == 0, res.output
    svg = figure.read_text()
    assert "kappa against the majority label, 95% percentile bootstrap over items" in svg
    assert "verdict" in svg and "words" in svg
    res = _run(["-j", str(path), "-m", "verdict", "--plot", f"scatter:{tmp_path / 'g.png'}"], tmp_path)
    assert res.exit_code == 2 and not (tmp_path / "g.png").exists(), res.output
    assert (f"--plot scatter:{tmp_path / 'g.png'} draws a metric's scores against graded human scores; tiny.json's "
            f"'ok' is categorical (labels Yes, No): --plot {tmp_path / 'g.png'} draws each variant's kappa with its "
            "interval instead") in _flat(res.output), res.output
