"""One metric's bug never moves another metric's scores (meta_eval/scoring/runner.py gives each metric its own
examples).

A plugin metric that changes the examples it is given, in every way Python allows (replacing a frozen field with
``object.__setattr__``, writing the instance ``__dict__``, putting a list where a tuple was and appending to it,
emptying or reordering the batch list), changes only its own copies: ROUGE scored after it, in the same run, gives
exactly the scores it gives alone, and the caller's examples are what they were. Through the CLI too, where such a
plugin once turned ROUGE constant.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from meta_eval.cli import app
from meta_eval.scoring.runner import score_examples
from meta_eval.metrics import Example, Metric, create, register
from meta_eval.metrics.registry import unregister

EXAMPLES = [Example(f"the cat number {i} sat on the mat " + "again " * (i % 3), (f"a cat sat on mat {i}",),
                    f"source {i}") for i in range(40)]


class Vandal(Metric):
    """Scores each example's candidate length, after trying to change every example it was given."""

    name = "isolation-vandal"
    variants = ("len",)
    needs_references = False

    def _score(self, examples):
        out = [float(len(ex.candidate)) for ex in examples]
        for k, ex in enumerate(examples):
            object.__setattr__(ex, "candidate", "")  # through the frozen dataclass
            ex.__dict__["source"] = "vandalised"
            object.__setattr__(ex, "references", [])
            ex.references.append("x y z")  # a list where a tuple was, then changed in place
            examples[k] = Example("replaced", ("replaced",))
        examples.reverse()
        examples.clear()
        return {"len": out}


@pytest.fixture
def vandal():
    register(Vandal.name)(Vandal)
    yield Vandal
    unregister(Vandal.name)


def test_a_metric_that_changes_its_examples_changes_no_other_metrics_scores(vandal):
    alone = score_examples(create("rouge"), EXAMPLES, None, 16).scores
    originals = [(ex.candidate, ex.references, ex.source) for ex in EXAMPLES]
    vandalised = score_examples(vandal(), EXAMPLES, None, 16).scores
    assert vandalised["len"].tolist() == [float(len(ex[0])) for ex in originals]
    after = score_examples(create("rouge"), EXAMPLES, None, 16).scores
    assert [(ex.candidate, ex.references, ex.source) for ex in EXAMPLES] == originals
    for variant, values in alone.items():
        assert np.array_equal(values, after[variant]), variant
    assert len(set(after["rouge1-f"].tolist())) > 1  # not the constant of a set of empty candidates


def test_through_the_cli_rouge_is_the_same_with_and_without_the_vandal(vandal, tmp_path):
    path = tmp_path / "set.jsonl"
    rows = [{"id": f"r{i}", "doc_id": f"d{i // 4}", "system": f"s{i % 4}", "candidate": ex.candidate,
             "references": list(ex.references), "scores": {"overall": float(i * 7 % 5)}}
            for i, ex in enumerate(EXAMPLES)]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    docs = {}
    for label, metrics in (("alone", "rouge"), ("after", f"{Vandal.name},rouge")):
        out = tmp_path / f"{label}.json"
        done = CliRunner().invoke(app, ["run", "-j", str(path), "-m", metrics, "--no-cache", "--workers", "1",
                                        "--level", "global", "--output", str(out)])
        assert done.exit_code == 0, done.output
        docs[label] = {r["metric"]: (r["value"], r["ci"]) for r in json.loads(Path(out).read_text())["results"]}
    assert {v: r for v, r in docs["after"].items() if v.startswith("rouge")} == docs["alone"]
