"""The metric registry, the Metric base class contract, and ROUGE against the rouge-score reference."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest
from rouge_score import rouge_scorer

from meta_eval.metrics import Example, Metric, create, names, register
from meta_eval.metrics.base import MetricError
from meta_eval.metrics.registry import RegistryError, UnknownMetricError, unregister


def test_builtins_are_registered():
    assert {"rouge", "wms", "sms", "s+wms"} <= set(names())


def test_duplicate_name_is_an_error():
    with pytest.raises(RegistryError, match="already registered"):
        @register("rouge")
        class Other(Metric):
            def _score(self, examples):
                return {"rouge": [0.0] * len(examples)}


def test_a_built_in_name_taken_before_the_registry_was_read_is_refused_at_the_decorator():
    """In a fresh process nothing had read the registry, so the built-ins were not registered: ``@register("rouge")``
    used to succeed there, the built-in ROUGE then clashed with it (any metric's lookup, even chrf's, failed), and
    ``create("rouge")`` returned the impostor. The built-ins' names are now taken first."""
    code = textwrap.dedent("""
        from meta_eval.metrics import Example, Metric, create, register
        from meta_eval.metrics.registry import RegistryError
        try:
            @register("rouge")
            class Impostor(Metric):
                def _score(self, examples):
                    return {"rouge": [0.123] * len(examples)}
        except RegistryError as exc:
            print(exc)
        print(type(create("rouge")).__module__, create("chrf").name)
    """)
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines() == [
        "metric name 'rouge' is already registered by meta_eval.metrics.rouge.Rouge; cannot register "
        "__main__.Impostor under the same name", "meta_eval.metrics.rouge chrf"]


def test_unknown_name_lists_the_known_ones():
    with pytest.raises(UnknownMetricError) as info:
        create("rogue")
    assert "rouge" in str(info.value) and "sms" in str(info.value)


def test_a_registered_metric_is_validated():
    @register("test-broken")
    class Broken(Metric):
        def _score(self, examples):
            return {"test-broken": [float("nan")] * len(examples)}

    try:
        with pytest.raises(RuntimeError, match="non-finite"):
            create("test-broken").score([Example("a", ("b",))])
        with pytest.raises(MetricError, match="no reference"):
            create("test-broken").score([Example("a")])
        assert create("test-broken").score([])["test-broken"].shape == (0,)
    finally:
        unregister("test-broken")


def test_rouge_hand_values():
    out = create("rouge").score([Example("the cat sat", ("the cat sat down",))])
    assert out["rouge1-p"][0] == pytest.approx(1.0)
    assert out["rouge1-r"][0] == pytest.approx(0.75)
    assert out["rouge1-f"][0] == pytest.approx(6 / 7)
    assert out["rouge2-r"][0] == pytest.approx(2 / 3)


def test_rouge_matches_rouge_score_and_takes_the_best_reference():
    ref = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=True)
    pairs = [("Police arrested three men on Sunday.", ("Three men were arrested by police.",)),
             ("Stocks fell sharply.", ("Shares dropped.", "Stocks fell sharply on Monday."))]
    out = create("rouge").score([Example(c, r) for c, r in pairs])
    for i, (cand, refs) in enumerate(pairs):
        best = max((ref.score(r, cand) for r in refs), key=lambda s: s["rougeL"].fmeasure)
        assert out["rougeL-f"][i] == pytest.approx(best["rougeL"].fmeasure)
        assert out["rougeL-r"][i] == pytest.approx(best["rougeL"].recall)
    assert out["rouge1-f"][1] == pytest.approx(0.75)  # the second reference wins: P = 1, R = 3/5


def test_rouge_empty_text_scores_zero():
    out = create("rouge").score([Example("", ("a reference",)), Example("   ", ("a reference",))])
    assert all(np.all(v == 0.0) for v in out.values())


def test_entry_point_plugin_is_discovered(tmp_path):
    """A third-party distribution adds a metric through the `meta_eval.metrics` entry-point group."""
    (tmp_path / "tiny_plugin.py").write_text(textwrap.dedent("""
        from meta_eval.metrics import Metric, register

        @register("char-ratio")
        class CharRatio(Metric):
            '''Length of the candidate over the length of the first reference.'''
            def _score(self, examples):
                return {"char-ratio": [len(e.candidate) / max(1, len(e.references[0])) for e in examples]}
    """))
    dist = tmp_path / "tiny_plugin-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: tiny-plugin\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[meta_eval.metrics]\nchar-ratio = tiny_plugin\n")
    code = ("import sys; sys.path.insert(0, %r)\n"
            "from meta_eval.metrics import create, names, Example\n"
            "assert 'char-ratio' in names(), names()\n"
            "print(create('char-ratio').score([Example('abcd', ('ab',))])['char-ratio'][0])") % str(tmp_path)
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "2.0"
