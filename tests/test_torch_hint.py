"""The torch install hint a user reads gives the CPU and the CUDA choice (issue #39, item 2 leftovers).

The neural metrics' files (metrics/encoder.py, qa.py, bertscore.py) give it themselves
(:func:`meta_eval.metrics.device.install_hint`) since 2026-11-28; before, they said ``pip install torch==2.13.0 &&
pip install 'meta-eval[...]'``, which without an index installs PyPI's build (the multi-GB CUDA one on Linux), and
a hint in that old form (a plugin may have copied it) is still rewritten where it is shown
(:func:`meta_eval.torch_build.install_choice`): ``meta-eval metrics``, the skipped metrics of a command, a metric
failing while scoring. The command-line tests load a real plugin file whose metric uses the old hint, as a
third-party neural metric written against it would.
"""
from __future__ import annotations

import textwrap

import pytest
from typer.testing import CliRunner

from conftest import small_set
from meta_eval.cli import app
from meta_eval.metrics import plugin_files
from meta_eval.metrics.bertscore import BERTSCORE_HINT
from meta_eval.metrics.encoder import NEURAL_HINT
from meta_eval.metrics.qa import QA_HINT
from meta_eval.torch_build import CPU_INSTALL, CUDA_INSTALL, install_choice

runner = CliRunner()

PLUGIN = '''
from meta_eval.metrics import Metric, MetricError, register

NEURAL_HINT = "pip install torch==2.13.0 && pip install 'meta-eval[neural]' (install the CPU torch first)"  # the old


@register("needs-torch")
class NeedsTorch(Metric):
    """A metric whose module is missing here."""
    variants = ("needs-torch",)
    needs_references = True
    requires = ("meta_eval_no_such_module",)
    install_hint = NEURAL_HINT

    def _score(self, examples):
        return {"needs-torch": [0.0 for _ in examples]}


@register("fails-torch")
class FailsTorch(Metric):
    """A metric that finds torch missing only when it scores (as the encoder's prepare_torch does)."""
    variants = ("fails-torch",)
    needs_references = True

    def _score(self, examples):
        raise MetricError(f"missing torch, transformers: {NEURAL_HINT}")
'''


@pytest.fixture(autouse=True)
def _forget_plugin_files():
    yield
    plugin_files.unload_all()


def _choice_shown(text: str, extra: str) -> None:
    assert "torch==2.13.0" not in text
    assert f"install torch first, the CPU build ({CPU_INSTALL}) or the CUDA build on Linux ({CUDA_INSTALL}); then " \
           f"pip install 'meta-eval[{extra}]'" in text


@pytest.mark.parametrize("hint,extra", [(NEURAL_HINT, "neural"), (QA_HINT, "neural,qa"),
                                        (BERTSCORE_HINT, "bertscore")])
def test_each_metric_hint_is_the_cpu_and_cuda_choice_and_an_old_one_becomes_it(hint, extra):
    _choice_shown(hint, extra)  # the metrics' own hints
    assert install_choice(f"missing torch: {hint}") == f"missing torch: {hint}"  # nothing left to rewrite
    old = (f"pip install torch==2.13.0 && pip install 'meta-eval[{extra}]' (install the CPU torch first: an "
           "unpinned torch pulls a multi-GB CUDA build)")  # the form the hints had before 2026-11-28
    shown = install_choice(f"missing torch, transformers: {old}")
    assert shown == f"missing torch, transformers: {hint}"  # the same words as the metric's own hint
    assert shown.count("(") == shown.count(")")  # the old parenthesis went with the stale command
    assert install_choice(None) is None and install_choice("needs source documents") == "needs source documents"


def test_metrics_and_run_show_the_choice(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.py").write_text(textwrap.dedent(PLUGIN), encoding="utf-8")
    res = runner.invoke(app, ["metrics", "--plugin", "p.py"])
    assert res.exit_code == 0, res.output
    said = " ".join(res.output.split())
    note = said[said.index("needs-torch: missing meta_eval_no_such_module:"):]
    _choice_shown(note[:note.index("]'") + 2], "neural")
    small_set(tmp_path / "essays.jsonl")
    res = runner.invoke(app, ["run", "-j", "essays.jsonl", "-m", "rouge,needs-torch,fails-torch", "--plugin", "p.py",
                              "--no-cache", "--output", "out.json"])
    assert res.exit_code == 1, res.output  # a metric failed while scoring
    said = " ".join(res.output.split())
    skipped = said[said.index("needs-torch: missing meta_eval_no_such_module"):]
    _choice_shown(skipped[:skipped.index("]'") + 2], "neural")
    failed = said[said.index("fails-torch"):]
    _choice_shown(failed[failed.index("MetricError"):], "neural")
