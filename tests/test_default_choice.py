"""Which metrics run when none is named: the quick default of `run`/`score`, `-m all`, `leaderboard publish`.

The default `meta-eval run` keeps to the metrics that take seconds on a CPU (issue 12: <= 30 s for chaganty on 2
cores; the neural ones alone need 65-90 s there), so a metric that loads a neural model declares
``in_quick_run = False``; `-m all` and `leaderboard publish` still run it.
"""
from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

import meta_eval.metrics.registry as registry
from meta_eval.cli import app
from meta_eval.scoring.selection import choose_metrics as _choose_metrics
from meta_eval.metrics import Metric, register

runner = CliRunner()
NEURAL = ("bertscore", "wms-ctx", "sms-ctx", "s+wms-ctx", "moverscore", "qa-sup", "qa-unsup", "bert-lm",
          "bert-lm-ppl")


def _choose(requested, full_default=False):
    chosen, skipped = _choose_metrics(requested, {}, what="a set", has_sources=True, has_references=True,
                                      full_default=full_default)
    return [m.name for m in chosen], dict(skipped)


def test_every_metric_that_needs_torch_is_left_out_of_the_quick_default():
    # the invariant that keeps the default run fast: a metric that imports torch is neural
    for name in registry.names():
        cls = registry.get_class(name)
        if "torch" in cls.requires:
            assert not cls.in_quick_run, name
            assert cls.not_quick_reason, name
        else:
            assert cls.in_quick_run, name
    assert {n for n in registry.names() if not registry.get_class(n).in_quick_run} == set(NEURAL)


def test_default_choice_skips_the_neural_metrics_with_the_reason():
    chosen, skipped = _choose(None)
    for name in ("rouge", "wms", "sms", "s+wms", "novelty"):  # core metrics: no extra needed
        assert name in chosen
    for name in NEURAL:
        assert name not in chosen
        assert skipped[name].startswith("neural, so not in the default choice"), skipped[name]
        assert "-m all" in skipped[name]
    assert "ter" in skipped and "only when named" in skipped["ter"]


def test_all_and_the_full_default_choose_the_neural_metrics_but_not_the_named_only_ones():
    quick, _ = _choose(None)
    for how in ({"requested": "all"}, {"requested": None, "full_default": True}):
        chosen, skipped = _choose(**how)
        assert set(quick) <= set(chosen)  # strictly more where the neural extras are installed (below)
        for name in NEURAL:  # chosen, or skipped only because it cannot run here (its model is not offline)
            assert name in chosen or not skipped[name].startswith("neural"), (how, name, skipped.get(name))
        assert "ter" not in chosen and "only when named" in skipped["ter"]


def test_all_combines_with_names_without_repeating_a_metric():
    chosen, skipped = _choose("rouge,all,ter")
    assert chosen.count("rouge") == 1
    # named, TER is chosen (or skipped only because the sacrebleu extra is missing), never as named-only
    assert "ter" in chosen or not skipped["ter"].startswith("run only when named"), skipped.get("ter")
    assert chosen[0] == "rouge"  # the order given, then the rest of the registry's


def test_no_metric_may_take_the_name_all():
    with pytest.raises(registry.RegistryError, match="reserved"):
        @register("all")
        class _All(Metric):
            def _score(self, examples):
                return {}
    assert "all" not in registry.names()


def _jsonl(tmp_path):
    path = tmp_path / "set.jsonl"
    rows = [("The cabinet approved the budget.", "The government passed its budget.", 0.9),
            ("Budget talks went on.", "The government passed its budget.", 0.4),
            ("Rain is expected tomorrow.", "Heavy rain will hit tomorrow.", 0.8),
            ("The weather.", "Heavy rain will hit tomorrow.", 0.1)]
    with open(path, "w", encoding="utf-8") as fh:
        for i, (cand, ref, score) in enumerate(rows):
            fh.write(json.dumps({"id": f"r{i}", "doc_id": f"d{i // 2}", "system": f"s{i % 2}", "candidate": cand,
                                 "references": [ref], "scores": {"q": score}}) + "\n")
    return path


def test_run_with_all_documents_what_cannot_run_and_exits_0_but_a_named_one_is_missing(tmp_path):
    path, out = _jsonl(tmp_path), tmp_path / "r.json"
    # novelty and textrank need sources, which the set lacks: with -m all that is a documented skip
    res = runner.invoke(app, ["run", "-j", str(path), "-m", "all,rouge", "--no-cache", "--output", str(out)])
    doc = json.loads(out.read_text())
    skipped = {s["metric"]: s["reason"] for s in doc["skipped"]}
    assert res.exit_code == 0, res.output
    assert "needs source documents" in skipped["novelty"] and doc["complete"]
    assert doc["metrics_requested"] == ["all", "rouge"]
    # named one by one, the same skip is a missing result: exit 1 and not complete
    res = runner.invoke(app, ["run", "-j", str(path), "-m", "rouge,novelty", "--no-cache", "--output", str(out)])
    assert res.exit_code == 1 and "novelty not run" in res.output
    assert not json.loads(out.read_text())["complete"]


def test_run_without_metrics_prints_the_neural_skips_grouped_by_reason(tmp_path):
    """One line naming the skipped metrics (issue 26: ~20 skip lines buried the table); -v gives one line per
    reason."""
    res = runner.invoke(app, ["run", "-j", str(_jsonl(tmp_path)), "--no-cache"])
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())  # rich wraps long lines
    line = re.search(r"skipped (\d+) metrics \(([^)]*)\) for (\d+) reasons; -v lists each with its reason", text)
    assert line and {"s+wms-ctx", "sms-ctx", "wms-ctx", "novelty", "textrank"} <= set(line.group(2).split(", "))
    assert "neural, so not in the default choice" not in text
    res = runner.invoke(app, ["run", "-j", str(_jsonl(tmp_path)), "--no-cache", "-v"])
    text = " ".join(res.output.split())
    assert "skipped s+wms-ctx, sms-ctx, wms-ctx: neural, so not in the default choice" in text
    assert "skipped novelty, textrank: needs source documents" in text


def test_metrics_command_marks_the_neural_metrics():
    res = runner.invoke(app, ["metrics"])
    assert res.exit_code == 0, res.output
    assert "(named or -m all): neural" in " ".join(res.output.split())
