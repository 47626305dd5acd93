"""Intervals at every level, labelled; the reading line and its warnings (issue 35, bullets 3 and 5).

- ``meta-eval run`` gives the global level of a correlation the BOOT-BOTH interval the leaderboard prints (over the
  rows, :func:`meta_eval.evaluate.global_interval`): the same function and draws, so for the same set, rows, metrics, seed and resamples run's interval is the board's (the
  board keeps every bit), at every level, and the human ceiling's interval is the board's too.
- Every interval is labelled by one function (:func:`meta_eval.stats.interval_label`): the line under the table,
  the JSON's ``resampling["label"]``, ``to_frame().attrs["interval"]`` and each board block's ``interval``.
- The reading line names every variant tied at the top (values within 1e-12); a variant that only prints the same
  is named as lower. chaganty's system level: rouge2-p and sms both have Spearman 1.000 (4 systems, same order).
- The warnings that change what a number means come first, as one ordered list (JSON ``warnings``), printed before
  the table and the reading line in every format.
"""
from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

from meta_eval import run
from meta_eval.cli import app
from meta_eval.leaderboard.publish import set_results
from meta_eval.report.tables import reading

runner = CliRunner()
B = 100  # resamples: enough to exercise the draws, cheap on 2 cores


@pytest.fixture(scope="module")
def chaganty_runs(shared_data, tmp_path_factory):
    cache = tmp_path_factory.mktemp("cache") / "scores.sqlite"
    return {level: run("chaganty", "rouge,chrf", variants="all", level=level, resamples=B, seed=3,
                       data_dir=shared_data, cache=cache, progress=False)
            for level in ("global", "summary", "system")}


@pytest.mark.parametrize("level", ["global", "summary", "system"])
def test_run_intervals_are_the_boards_at_every_level(chaganty_runs, level):
    res = chaganty_runs[level]
    board = set_results(res.jset, res.human, res.scores, n_resamples=B, seed=3, pairwise=False, extra=False,
                        variant_filter=lambda v: True)
    block = next(b for b in board["levels"] if b["level"] == level and b["statistic"] == "spearman")
    published = {r["variant"]: r["ci"] for r in block["results"]}
    ours = res.intervals
    assert set(published) == set(ours) and len(ours) == 13  # 12 ROUGE variants and chrF
    for variant, ci in published.items():
        assert ours[variant] is not None, variant
        assert [float(x) for x in ours[variant]] == ci, variant  # the same bits: the board rounds nothing
    values = {r["variant"]: r["r"] for r in block["results"]}
    assert all(values[v] == float(res.values[v]) for v in ours)  # and the values, every bit: the board's page
    from meta_eval.leaderboard.render import _fmt  # rounds the number the table rounds, to the same digits
    from meta_eval.report.tables import fmt

    shown = [x for v in ours for x in (values[v], *published[v]) if abs(x) >= 0.001]
    assert shown and all(_fmt(x) == fmt(x) for x in shown)
    # the ceiling is drawn the same way as the metrics, and is the board's
    assert [res.ceiling.lower, res.ceiling.upper] == block["ceiling"]["ci"]
    assert res.ceiling.resample == "both" and res.ceiling.n_resamples == B
    # one label, wherever an interval is shown
    from meta_eval.stats import interval_label

    label = interval_label({"method": "boot-both", "n_resamples": B, "confidence": 0.95, "seed": 3,
                            **({"units": "rows"} if level == "global" else {})})  # global: over the rows
    assert block["interval"] == res.interval_label == res.setting["resampling"]["label"] == label
    frame = res.to_frame()
    assert frame.attrs["interval"] == label
    assert frame.loc["rouge1-f", "ci_low"] == ours["rouge1-f"][0]
    assert res.to_dict()["results"][0]["ci"] == list(ours[res.results[0].metric])


def test_global_interval_is_printed_and_labelled_in_every_format(shared_data, tmp_path):
    out = tmp_path / "run.json"
    args = ["run", "-j", "chaganty", "--data-dir", str(shared_data), "--no-cache", "-m", "chrf", "--resamples",
            str(B), "--baseline", "chrf"]
    res = runner.invoke(app, args + ["--output", str(out)])
    assert res.exit_code == 0, res.output
    doc = json.loads(out.read_text())
    ci = doc["results"][0]["ci"]
    assert ci is not None and ci[0] < doc["results"][0]["spearman"] < ci[1]
    label = doc["resampling"]["label"]
    assert label.startswith("95% percentile bootstrap interval (BOOT-BOTH: documents (items) and systems")
    assert f"{B} resamples, seed 0" in label
    text = " ".join(res.output.split())
    assert f"CI: {label}" in text and f"[{ci[0]:.3f}, {ci[1]:.3f}]" in text
    for form in ("csv", "md", "latex"):
        res = runner.invoke(app, args + ["--format", form])
        assert res.exit_code == 0, res.output
        assert f"{ci[0]:.3f}, {ci[1]:.3f}" in res.output and f"CI: {label}" in " ".join(res.output.split()), form


def _result(values: dict[str, float], baseline: str | None = None):
    rows = [SimpleNamespace(metric=m, value=v, perm_p_vs_baseline=0.01, williams_p_vs_baseline=None)
            for m, v in values.items()]
    return SimpleNamespace(results=rows, statistic="spearman", baseline=baseline, resamples=1000,
                           setting={"test": "perm-both"}, ceiling=None)


def test_tie_means_equal_values_not_equal_print():
    from meta_eval.report.tables import top_variants

    res = _result({"a": 0.8, "b": 0.8 - 1e-15, "c": 0.7999, "d": 0.5}, baseline="d")
    tied, same = top_variants(res)
    assert [r.metric for r in tied] == ["a", "b"] and [r.metric for r in same] == ["c"]
    line = reading(res)
    assert line.startswith("a and b tie for the best agreement with the humans (spearman 0.800)")
    assert "a significantly better than it (p 0.010), b significantly better than it (p 0.010)" in line
    assert "c prints the same 0.800 but is lower (0.7999 against 0.8)" in line
    one = reading(_result({"a": 0.9, "b": 0.8}, baseline="b"))
    assert one.startswith("a agrees best with the humans (spearman 0.900); significantly better than the baseline b")
    base = reading(_result({"a": 0.9, "b": 0.9}, baseline="b"))
    assert "a and b tie" in base and "b is the baseline" in base


@pytest.mark.parametrize("ceiling", [-0.18, 0.0])
def test_no_share_of_a_ceiling_at_or_below_zero(ceiling):
    """A ceiling of -0.18 printed "reaches -480% of it": a share of the judges' disagreement means nothing."""
    res = _result({"a": 0.9, "b": 0.8}, baseline="b")
    res.ceiling = SimpleNamespace(value=ceiling)
    line = reading(res)
    assert f"the human ceiling is {ceiling:.3f}: the judges do not agree with each other" in line
    assert "%" not in line and line.endswith(".")
    res.ceiling = SimpleNamespace(value=1.2)
    assert reading(res).endswith("the human ceiling is 1.200, so it reaches 75% of it.")


def test_chaganty_system_level_names_both_tied_variants(shared_data):
    res = runner.invoke(app, ["run", "-j", "chaganty", "--data-dir", str(shared_data), "--no-cache", "-m",
                              "rouge,sms", "--variants", "all", "--level", "system", "--resamples", str(B)])
    assert res.exit_code == 0, res.output
    line = next(x for x in res.output.splitlines() if x.startswith("reading:"))
    assert line.startswith("reading: rouge2-p and sms tie for the best agreement with the humans (spearman 1.000)")
    assert "so they reach 100% of it" in line


def test_warnings_come_first_in_one_ordered_list(shared_data, tmp_path):
    out = tmp_path / "run.json"
    args = ["run", "-j", "chaganty", "--data-dir", str(shared_data), "--no-cache", "-m", "chrf", "--level",
            "system", "--resamples", str(B)]
    res = runner.invoke(app, args + ["--output", str(out)])
    assert res.exit_code == 0, res.output
    doc = json.loads(out.read_text())
    assert [w["kind"] for w in doc["warnings"]] == ["few-units", "no-baseline"]
    assert doc["warnings"][0]["message"] == doc["level_warning"]
    assert "the chaganty set's default baseline rougeL-f is not among the chosen metrics" in doc["warnings"][1]["message"]
    lines = res.output.splitlines()
    at = {key: next(i for i, x in enumerate(lines) if key(x)) for key in (
        lambda x: x.startswith("warning (!): only 4 systems"),
        lambda x: x.startswith("warning: no test against a baseline"),
        lambda x: "system-level spearman correlation with human" in x,
        lambda x: x.startswith("reading:"), lambda x: x.startswith("Signatures:"))}
    assert list(at.values()) == sorted(at.values()), res.output
    # the same lines, in the same order, before the table in the other formats
    res = runner.invoke(app, args + ["--format", "csv"])
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    first = [i for i, x in enumerate(lines) if x.startswith("warning")]
    header = next(i for i, x in enumerate(lines) if x.startswith("metric,"))
    assert len(first) == 2 and max(first) < header
    assert lines[first[0]].startswith("warning (!): only 4 systems") and "no test against" in lines[first[1]]


def test_the_global_figure_draws_and_labels_the_intervals(chaganty_runs):
    pytest.importorskip("matplotlib")
    res = chaganty_runs["global"]
    fig = res.plot("intervals")
    label = fig.axes[0].get_xlabel()
    assert label.endswith(f"95% percentile bootstrap CI (boot-both over rows, {B} resamples, seed 3)"), label


def test_in_sample_warning_is_printed_before_the_table_and_the_reading_line(shared_data, tmp_path, monkeypatch):
    from meta_eval import judgments
    from meta_eval.metrics.learned import ENV_HOME

    monkeypatch.setenv(ENV_HOME, str(tmp_path / "home"))
    cache = str(tmp_path / "cache.sqlite")
    res = runner.invoke(app, ["learn", "--judgments", "chaganty", "--data-dir", str(shared_data), "--cache", cache,
                              "--metrics", "rouge", "--features", "rougeL-f,rouge1-f", "--search", "none",
                              "--protocol", "paper", "--splits", "20", "--target", "overall", "--save", "mine"])
    assert res.exit_code == 0, res.output
    rows = judgments.load("chaganty", shared_data).rows[:12]
    small = tmp_path / "small.jsonl"
    small.write_text("".join(json.dumps({"id": r.id, "doc_id": r.doc_id, "system": r.system,
                                         "candidate": r.candidate, "references": list(r.references),
                                         "scores": dict(r.scores)}) + "\n" for r in rows))
    out = tmp_path / "run.json"
    res = runner.invoke(app, ["run", "--judgments", str(small), "--metrics", "learned:mine,rouge", "--cache", cache,
                              "--resamples", str(B), "--output", str(out)])
    assert res.exit_code == 0, res.output
    kinds = [w["kind"] for w in json.loads(out.read_text())["warnings"]]
    assert kinds[0] == "in-sample", kinds
    lines = res.output.splitlines()
    warning = next(i for i, x in enumerate(lines) if x.startswith("warning: learned:mine: in-sample"))
    title = next(i for i, x in enumerate(lines) if "global-level spearman correlation" in x)
    said = next(i for i, x in enumerate(lines) if x.startswith("reading:"))
    assert warning < title < said, res.output
    assert sum(x.startswith("warning: learned:mine: in-sample") for x in lines) == 1  # not again under the table
