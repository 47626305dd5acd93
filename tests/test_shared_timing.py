"""Honest per-metric timing: the shared encoder's loading and encoding is its own line, not charged to whichever
contextual metric happens to run first (meta_eval/scoring/runner.py, metrics/encoder.py ``shared_seconds``)."""
from __future__ import annotations

import time

from conftest import NEURAL_FIX, require_metrics, require_minilm, require_module
from meta_eval.scoring.runner import score_examples
from meta_eval.metrics import Example, create


def _examples():
    # sentences no other test encodes (the contextual movers' sentence memo is process-wide)
    stamp = time.time_ns()
    return [Example(candidate=f"The cat {stamp} sat on mat number {i}.",
                    references=(f"A dog {stamp} lay on rug number {i}.",)) for i in range(12)]


def test_the_first_contextual_metric_pays_the_encoder_and_reports_it_apart():
    require_module("torch", NEURAL_FIX)
    require_minilm()
    examples = _examples()
    started = time.perf_counter()
    first = score_examples(create("wms-ctx", model="minilm"), examples)
    wall = time.perf_counter() - started
    second = score_examples(create("sms-ctx", model="minilm"), examples)
    assert list(first.shared) == ["encoder minilm"] and first.shared["encoder minilm"] > 0
    assert second.shared == {}  # every sentence came from the memo the first metric filled
    # the metric's own seconds leave the shared part out, and the two add up to the call's wall time
    assert first.seconds + first.shared["encoder minilm"] <= wall + 1e-6
    assert first.seconds + first.shared["encoder minilm"] >= 0.5 * wall


def test_metrics_without_an_encoder_report_nothing_shared():
    require_metrics("chrf")
    out = score_examples(create("chrf"), _examples())
    assert out.shared == {} and out.seconds >= 0
