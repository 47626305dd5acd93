"""Metrics built for English are skipped, with the reason, on a set whose candidates are in another language."""
from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from conftest import require_metrics
from meta_eval import judgments
from meta_eval.cli import app
from meta_eval.metrics import create


@pytest.mark.parametrize("name", ["rouge", "wms", "sms", "s+wms", "textrank"])
def test_english_resources_declare_english(name):
    assert create(name).supported_languages() == ("en",)


def test_encoder_metrics_are_english_only_with_their_default_models(tmp_path):
    require_metrics("bertscore", model="minilm")
    assert create("bertscore", model="minilm").supported_languages() == ("en",)
    pytest.importorskip("torch")
    from conftest import make_tiny_bert

    folder = str(make_tiny_bert(tmp_path / "tiny"))
    assert create("bertscore", model=folder).supported_languages() is None  # a model the user chose
    assert create("moverscore", model="minilm").supported_languages() == ("en",)
    assert create("moverscore", model="xlm-roberta-base").supported_languages() is None


@pytest.mark.parametrize("name", ["bleu", "chrf", "ter", "rouge-coco"])
def test_language_agnostic_metrics_declare_nothing(name):
    require_metrics(name)
    assert create(name).supported_languages() is None


def test_sets_declare_their_candidates_language(shared_data):
    assert judgments.load("wmt21-mqm-ted", shared_data, subset="en-de").language == "de"
    assert judgments.load("wmt21-mqm-ted", shared_data, subset="zh-en").language == "en"
    assert judgments.load("wmt21-mqm-ted", shared_data, subset="en-de,zh-en").language is None  # pooled targets
    assert judgments.load("wmt23", shared_data, subset="en-de").language == "de"
    assert judgments.load("wmt23", shared_data, subset="zh-en").language == "en"
    assert judgments.load("qags", shared_data).language == "en"


def test_run_skips_an_english_metric_on_german_with_the_reason(shared_data, tmp_path):
    require_metrics("chrf")
    out = tmp_path / "r.json"
    res = CliRunner().invoke(app, ["run", "-j", "wmt21-mqm-ted", "-m", "chrf,rouge", "--data-dir", str(shared_data),
                                   "--cache", str(tmp_path / "c.sqlite"), "--output", str(out)])
    assert res.exit_code == 1, res.output  # a metric asked for by name did not run
    assert "candidates are de" in res.output and "a-z" in res.output
    doc = json.loads(out.read_text())
    assert {m["metric"] for m in doc["skipped"]} == {"rouge"}
    assert "chrf" in json.dumps(doc["results"])


def test_a_jsonl_set_declares_no_language(tmp_path):
    path = tmp_path / "mine.jsonl"
    path.write_text(json.dumps({"id": "a", "candidate": "Der Hund.", "references": ["Ein Hund."],
                                "scores": {"q": 1}}) + "\n", encoding="utf-8")
    assert judgments.load(str(path)).language is None
