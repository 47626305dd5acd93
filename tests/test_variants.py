"""Choosing variants (issue 35, "Variants on every command"): one syntax (``--variants``, or a variant or family in
place of a metric name in ``-m``), parsed by one function (:func:`meta_eval.scoring.selection.resolve_metric_choice`)
for run, score, probe, learn and leaderboard publish; one default (every variant but ROUGE's precision and recall);
the choice recorded in the JSON; a clear error (exit 2) naming the valid variants."""
from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

import conftest
from meta_eval.cli import app
from meta_eval.errors import MetaEvalError
from meta_eval.scoring import selection

runner = CliRunner()
ROUGE = ["rouge1-p", "rouge1-r", "rouge1-f", "rouge2-p", "rouge2-r", "rouge2-f", "rougeL-p", "rougeL-r", "rougeL-f",
         "rougeLsum-p", "rougeLsum-r", "rougeLsum-f"]
ROUGE_F = ["rouge1-f", "rouge2-f", "rougeL-f", "rougeLsum-f"]


def _cli(*args):
    return runner.invoke(app, [str(a) for a in args])


@pytest.fixture()
def small(tmp_path):
    return conftest.small_set(tmp_path / "small.jsonl", rows=30)


# -- the parser --------------------------------------------------------------------------------------------------
def test_a_variant_or_family_in_place_of_a_metric_chooses_that_metric_with_those_variants():
    requested, choice = selection.resolve_metric_choice("rouge1-f,chrf")
    assert requested == "rouge,chrf"
    assert choice.shown("rouge", ROUGE) == ["rouge1-f"] and choice.shown("chrf", ["chrf"]) == ["chrf"]
    requested, choice = selection.resolve_metric_choice(["rouge1"])  # a family: rouge1-p, rouge1-r, rouge1-f
    assert requested == "rouge" and choice.shown("rouge", ROUGE) == ["rouge1-p", "rouge1-r", "rouge1-f"]
    requested, choice = selection.resolve_metric_choice("rouge,rouge1-p")  # the metric's default, plus rouge1-p
    assert requested == "rouge" and choice.shown("rouge", ROUGE) == ["rouge1-p", *ROUGE_F]
    _, choice = selection.resolve_metric_choice("rouge", "rouge*-f,rouge2")  # --variants: patterns, families
    assert choice.shown("rouge", ROUGE) == ["rouge1-f", "rouge2-p", "rouge2-r", "rouge2-f", "rougeL-f",
                                            "rougeLsum-f"]
    assert selection.resolve_metric_choice("rouge", "all")[1].shown("rouge", ROUGE) == ROUGE
    # --variants adds to a metric named through a variant (it was ignored: -m rouge1 --variants rouge2-f showed
    # rouge1-p/r/f alone, and --variants all said "every variant" while hiding 9)
    _, choice = selection.resolve_metric_choice("rouge1", "rouge2-f")
    assert choice.shown("rouge", ROUGE) == ["rouge1-p", "rouge1-r", "rouge1-f", "rouge2-f"]
    assert selection.resolve_metric_choice("rouge1-f", "all")[1].shown("rouge", ROUGE) == ROUGE
    _, choice = selection.resolve_metric_choice("rouge1,chrf", "chrf")
    assert choice.shown("rouge", ROUGE) == ["rouge1-p", "rouge1-r", "rouge1-f"] and choice.shown("chrf", ["chrf"]) \
        == ["chrf"]


def test_one_default_rule_everywhere():
    _, choice = selection.resolve_metric_choice(None)
    assert choice.default and choice.shown("rouge", ROUGE) == ROUGE_F
    assert choice.shown("bertscore", ["bertscore-p", "bertscore-r", "bertscore-f"]) == \
        ["bertscore-p", "bertscore-r", "bertscore-f"]
    from meta_eval.leaderboard.publish import default_variant_filter

    assert [v for v in ROUGE if default_variant_filter(v)] == ROUGE_F  # the boards' filter is the same rule
    # learn's features: every variant unless chosen
    assert selection.resolve_metric_choice("rouge", every_by_default=True)[1].shown("rouge", ROUGE) == ROUGE


def test_unknown_and_ambiguous_names_are_errors_listing_the_variants():
    with pytest.raises(MetaEvalError, match=r"unknown metric or variant 'rouge1-x'.*rouge's variants: rouge1-p, "
                                            r"rouge1-r, rouge1-f, rouge2-p"):
        selection.resolve_metric_choice("rouge1-x")
    with pytest.raises(MetaEvalError, match=r"-m \*-f: names variants of 2 metrics \(bertscore: bertscore-f; "
                                            r"rouge: rouge1-f, rouge2-f, rougeL-f, rougeLsum-f\)"):
        selection.resolve_metric_choice("*-f")
    _, choice = selection.resolve_metric_choice("rouge", "rouge9,rougeL")
    with pytest.raises(MetaEvalError, match=r"--variants: unknown variant\(s\) 'rouge9'; the chosen metrics' "
                                            r"variants: rouge: rouge1-p"):
        choice.check({"rouge": ROUGE})
    with pytest.raises(MetaEvalError, match="--variants is empty"):
        selection.resolve_metric_choice("rouge", ",")


# -- model tags (issue #37) -----------------------------------------------------------------------------------------
TAGGED = ["bertscore[minilm]-p", "bertscore[minilm]-r", "bertscore[minilm]-f"]


@pytest.mark.parametrize("token, expected", [
    ("bertscore-f", ["bertscore[minilm]-f"]),          # the plain name: whatever model scored it
    ("bertscore[minilm]-f", ["bertscore[minilm]-f"]),  # the full name: exactly that
    ("bertscore", TAGGED), ("bertscore[minilm]", TAGGED),  # the metric; the tagged family
    ("*-f", ["bertscore[minilm]-f"]), ("bertscore[minilm]*", TAGGED), ("bertscore*-p", ["bertscore[minilm]-p"]),
    ("bertscore[roberta-large]-f", []), ("bertscore[roberta-large]", []),  # another model's name: nothing
])
def test_a_tagged_variant_is_named_by_its_full_or_its_plain_name(token, expected):
    from meta_eval.metrics.registry import match_variants

    assert match_variants(token, "bertscore", TAGGED) == expected


def test_patterns_keep_the_shells_character_classes_and_tags_reach_the_parser():
    from meta_eval.metrics.registry import match_variants, plain_variant

    assert match_variants("rouge[12]-f", "rouge", ROUGE) == ["rouge1-f", "rouge2-f"]
    assert plain_variant("bertscore[all-MiniLM-L6-v2]-f") == "bertscore-f" and plain_variant("rouge1-f") == "rouge1-f"
    requested, choice = selection.resolve_metric_choice("bertscore[minilm]-f")  # -m with the full name
    assert requested == "bertscore" and choice.shown("bertscore", TAGGED) == ["bertscore[minilm]-f"]
    requested, choice = selection.resolve_metric_choice("bertscore-f")  # -m with the plain name
    assert requested == "bertscore" and choice.shown("bertscore", TAGGED) == ["bertscore[minilm]-f"]
    _, choice = selection.resolve_metric_choice("bertscore", "bertscore[minilm]-f")
    choice.check({"bertscore": ["bertscore-p", "bertscore-r", "bertscore-f"]})  # a skipped one offers its class names
    with pytest.raises(MetaEvalError, match="unknown variant"):
        choice.check({"rouge": ROUGE})


def test_the_names_of_a_configuration_without_building_it(tmp_path):
    from meta_eval.metrics import registry
    from meta_eval.metrics.model_names import model_label, tagged

    cls = registry.get_class("bertscore")
    assert registry.variants_for(cls) == cls.variants == ("bertscore-p", "bertscore-r", "bertscore-f")
    assert list(registry.variants_for(cls, {"model": "minilm", "idf": "true"})) == TAGGED
    assert registry.variants_for(cls, {"model": "roberta-large"}) == cls.variants  # the paper's model: plain
    assert registry.variants_for(registry.get_class("moverscore"), {"model": "minilm"}) == ("moverscore[minilm]",)
    assert registry.variants_for(registry.get_class("moverscore")) == ("moverscore",)
    assert registry.variants_for(registry.get_class("wms-ctx")) == ("wms-ctx[minilm]",)  # no ELMo: always tagged
    assert registry.variants_for(registry.get_class("qa-sup"), {"model": "org/squad-base"}) == \
        ("qa-sup[squad-base]-f1", "qa-sup[squad-base]-conf")
    assert registry.variants_for(registry.get_class("bert-lm-ppl"), {"model": "bert-large-cased"}) == \
        ("bert-lm-ppl[bert-large-cased]",)
    assert registry.variants_for(registry.get_class("rouge"), {"model": "minilm"}) == tuple(ROUGE)
    folder = tmp_path / "my model_v2"
    folder.mkdir()
    assert model_label(str(folder)) == "my-model-v2"  # a folder by its name, safe for a shell, CSV, LaTeX, HTML
    assert model_label("sentence-transformers/all-MiniLM-L6-v2") == "all-MiniLM-L6-v2"
    assert tagged("x", ("x-a", "y"), str(folder), "roberta-large") == ("x[my-model-v2]-a", "y[my-model-v2]")


# -- run -----------------------------------------------------------------------------------------------------------
def test_run_takes_a_variant_name_in_metrics_and_records_the_choice(small, tmp_path):
    out = tmp_path / "run.json"
    res = _cli("run", "-j", small, "-m", "rouge1,chrf", "--no-cache", "--output", out)  # main: did you mean rouge
    assert res.exit_code == 0, res.output
    doc = json.loads(out.read_text())
    assert sorted(r["metric"] for r in doc["results"]) == ["chrf", "rouge1-f", "rouge1-p", "rouge1-r"]
    assert doc["variants"]["named_with_metrics"] == {"rouge": ["rouge1"]} and doc["variants"]["given"] is None
    assert doc["variants"]["shown"] == ["rouge1-p", "rouge1-r", "rouge1-f", "chrf"]
    assert doc["variants"]["hidden"] == [v for v in ROUGE if not v.startswith("rouge1-")]
    assert doc["metrics_requested"] == ["rouge1", "chrf"]  # as given, so the run can be repeated


def test_run_shows_rouge_f_measures_by_default_and_every_variant_with_all(small, tmp_path):
    out = tmp_path / "run.json"
    res = _cli("run", "-j", small, "-m", "rouge", "--no-cache", "--output", out)
    assert res.exit_code == 0, res.output
    doc = json.loads(out.read_text())
    assert sorted(r["metric"] for r in doc["results"]) == sorted(ROUGE_F)
    assert doc["variants"]["hidden"] == [v for v in ROUGE if v not in ROUGE_F]
    assert "variants: 8 not shown (rouge1-p, rouge1-r," in res.output and "--variants all shows every" in res.output
    assert "rouge1-p" not in res.output.split("variants: 8 not shown", 1)[1].split("\n", 1)[1]  # not in the table
    res = _cli("run", "-j", small, "-m", "rouge", "--variants", "all", "--no-cache", "--output", out)
    assert res.exit_code == 0, res.output
    assert sorted(r["metric"] for r in json.loads(out.read_text())["results"]) == sorted(ROUGE)


def test_run_keeps_an_explicit_baseline_shown(small, tmp_path):
    out = tmp_path / "run.json"
    res = _cli("run", "-j", small, "-m", "rouge,chrf", "--variants", "chrf", "--baseline", "rouge1-r", "--no-cache",
               "--output", out)
    assert res.exit_code == 0, res.output
    doc = json.loads(out.read_text())
    assert doc["baseline"] == "rouge1-r" and sorted(r["metric"] for r in doc["results"]) == ["chrf", "rouge1-r"]


def test_run_errors_name_the_valid_variants(small):
    res = _cli("run", "-j", small, "-m", "rouge", "--variants", "rouge9", "--no-cache")
    assert res.exit_code == 2
    assert "--variants: unknown variant(s) 'rouge9'; the chosen metrics' variants: rouge: rouge1-p, rouge1-r" \
        in res.output
    res = _cli("run", "-j", small, "-m", "rouge1-x", "--no-cache")
    assert res.exit_code == 2 and "unknown metric or variant 'rouge1-x'" in res.output
    assert "rouge's variants: rouge1-p, rouge1-r, rouge1-f" in res.output
    res = _cli("run", "-j", small, "-m", "rouge,chrf", "--variants", "rouge1-f", "--no-cache")
    assert res.exit_code == 2 and "-m chrf: none of its variants (chrf) is chosen" in res.output


def test_the_python_api_takes_the_same_choice(small):
    from meta_eval import run

    res = run(str(small), ["rouge"], variants=["rougeL"], progress=False, no_cache=True)
    assert sorted(res.values) == ["rougeL-f", "rougeL-p", "rougeL-r"]
    assert res.to_dict()["variants"]["given"] == ["rougeL"]


# -- score ---------------------------------------------------------------------------------------------------------
def test_score_takes_variants(small, tmp_path):
    out = tmp_path / "s.csv"
    res = _cli("score", "-i", small, "-m", "rouge1-f,chrf", "--no-cache", "--output", out)
    assert res.exit_code == 0, res.output
    assert out.read_text().splitlines()[0] == "index,rouge1-f,chrf"
    res = _cli("score", "-i", small, "-m", "rouge", "--variants", "rougeL", "--no-cache", "--output", out,
               "--force")
    assert res.exit_code == 0, res.output
    assert out.read_text().splitlines()[0] == "index,rougeL-p,rougeL-r,rougeL-f"
    res = _cli("score", "-i", small, "-m", "rouge", "--variants", "rougeX", "--no-cache")
    assert res.exit_code == 2 and "unknown variant(s) 'rougeX'" in res.output


# -- probe ---------------------------------------------------------------------------------------------------------
def test_probe_takes_variants(small, tmp_path):
    out = tmp_path / "p.json"
    res = _cli("probe", "-j", small, "-m", "rouge", "--variants", "rouge1-f,rouge2", "-p", "sentence-reversal",
               "--resamples", "20", "--no-cache", "--output", out)
    assert res.exit_code == 0, res.output
    doc = json.loads(out.read_text())
    assert [m["variant"] for m in doc["metrics"]] == ["rouge1-f", "rouge2-p", "rouge2-r", "rouge2-f"]
    assert doc["variants"]["given"] == ["rouge1-f", "rouge2"]
    res = _cli("probe", "-j", small, "-m", "rougeL-r", "-p", "sentence-reversal", "--resamples", "20", "--no-cache",
               "--output", out, "--force")
    assert res.exit_code == 0, res.output
    assert [m["variant"] for m in json.loads(out.read_text())["metrics"]] == ["rougeL-r"]
    res = _cli("probe", "-j", small, "-m", "rouge", "--all-variants")  # one syntax: probe's own flag is gone
    assert res.exit_code == 2 and "No such option" in res.output and "--variants" in res.output


# -- learn ---------------------------------------------------------------------------------------------------------
def test_learn_chooses_its_features_with_the_same_syntax(small, tmp_path):
    base = ["learn", "-j", small, "--no-cache", "--protocol", "paper", "--splits", "20", "--no-search"]
    by_features, by_variants, by_name = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "c.json"
    res = _cli(*base, "-m", "rouge", "--features", "rouge1-f,rouge2-f,rougeL-f,rougeLsum-f", "--output",
               by_features)
    assert res.exit_code == 0, res.output
    res = _cli(*base, "-m", "rouge", "--variants", "rouge*-f", "--output", by_variants)
    assert res.exit_code == 0, res.output
    res = _cli(*base, "-m", "rouge1-f,rouge2-f,rougeL-f,rougeLsum-f", "--output", by_name)
    assert res.exit_code == 0, res.output
    docs = [json.loads(p.read_text()) for p in (by_features, by_variants, by_name)]
    assert docs[0]["best"] == docs[1]["best"] == docs[2]["best"] == ROUGE_F
    assert docs[0]["results"] == docs[1]["results"] == docs[2]["results"]
    assert docs[1]["variants"]["given"] == ["rouge*-f"]
    res = _cli(*base, "-m", "rouge", "--variants", "rouge1-f", "--features", "rouge1-f")
    assert res.exit_code == 2 and "give one" in res.output


# -- leaderboard publish ---------------------------------------------------------------------------------------------
def test_publish_takes_a_variant_in_metrics_and_refuses_an_unknown_variant(small, tmp_path):
    out = tmp_path / "board"
    res = _cli("leaderboard", "publish", "-j", small, "-m", "rouge1,chrf", "--out", out, "--resamples", "20",
               "--no-cache")
    assert res.exit_code == 0, res.output
    doc = json.loads((out / "results.json").read_text())
    assert [m["variant"] for m in doc["sets"][0]["metrics"]] == ["rouge1-p", "rouge1-r", "rouge1-f", "chrf"]
    from meta_eval.leaderboard.publish import publish

    api = publish(str(small), tmp_path / "api", "rouge", variants=["rougeL", "rouge1-f"], resamples=20,
                  no_cache=True, progress=False)
    assert [m["variant"] for m in api["sets"][0]["metrics"]] == ["rouge1-f", "rougeL-p", "rougeL-r", "rougeL-f"]
    assert "-m rouge --variants rougeL,rouge1-f" in api["command"]  # the board records the choice
    res = _cli("leaderboard", "publish", "-j", small, "-m", "rouge", "--variants", "rouge1-x", "--out",
               tmp_path / "other", "--resamples", "20", "--no-cache")
    assert res.exit_code == 2 and "unknown variant(s) 'rouge1-x'" in res.output
