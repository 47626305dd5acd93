"""The runner's calls for a metric that computes on a GPU (issue #37): examples sorted by length, at least
``GPU_BATCH_ROWS`` per call, the scores those of the CPU's calls; nothing changes for a CPU signature."""
from __future__ import annotations

import numpy as np
import pytest

from meta_eval.metrics.base import Example, Metric
from meta_eval.scoring import runner
from meta_eval.scoring.cache import ScoreCache
from meta_eval.scoring.runner import on_gpu, score_examples


class Recording(Metric):
    """Scores the candidate's length; records each call's candidates. ``device`` is what its signature says."""

    name = "test-recording"
    variants = ("len",)

    def __init__(self, device: str = "cpu"):
        self.device = device
        self.calls: list[list[str]] = []

    def config(self):
        return {} if self.device == "cpu" else {"device": f"cuda({self.device})", "dtype": "fp32", "cuda": "13.0"}

    def _score(self, examples):
        self.calls.append([ex.candidate for ex in examples])
        return {"len": np.array([float(len(ex.candidate)) for ex in examples])}


def _examples(n: int, seed: int = 0) -> list[Example]:
    rng = np.random.default_rng(seed)
    return [Example(candidate="x" * int(k) + f" {i}", references=("ref",)) for i, k in
            enumerate(rng.integers(1, 300, size=n))]


def test_on_gpu_reads_the_device_part_of_a_signature():
    assert on_gpu(Recording("NVIDIA H200").signature())
    assert not on_gpu(Recording().signature())
    assert not on_gpu("my-metric|note:device:cuda(x) is not a part|code:1")  # only a part named device


def test_cpu_signature_keeps_the_callers_batches_in_order():
    rows = _examples(700)
    metric = Recording()
    score_examples(metric, rows, None, batch_size=256)
    assert [len(c) for c in metric.calls] == [256, 256, 188]
    assert [c for call in metric.calls for c in call] == [ex.candidate for ex in rows]


def test_gpu_signature_sorted_by_length_in_few_large_calls(monkeypatch):
    monkeypatch.setattr(runner, "GPU_BATCH_ROWS", 300)
    rows = _examples(700)
    gpu, cpu = Recording("Fake GPU"), Recording()
    got = score_examples(gpu, rows, None, batch_size=16)
    want = score_examples(cpu, rows, None, batch_size=16)
    assert [len(c) for c in gpu.calls] == [300, 300, 100]  # at least GPU_BATCH_ROWS, whatever batch_size says
    lengths = [len(c) for call in gpu.calls for c in call]
    assert lengths == sorted(lengths)  # by length: one call's padded batches waste little
    assert np.array_equal(got.scores["len"], want.scores["len"])  # scores back in the rows' order


def test_gpu_batches_above_the_floor_are_kept(monkeypatch):
    monkeypatch.setattr(runner, "GPU_BATCH_ROWS", 100)
    metric = Recording("Fake GPU")
    score_examples(metric, _examples(500), None, batch_size=400)
    assert [len(c) for c in metric.calls] == [400, 100]


def test_gpu_cache_commits_each_call_and_resumes(tmp_path, monkeypatch):
    monkeypatch.setattr(runner, "GPU_BATCH_ROWS", 200)
    rows = _examples(450)
    cache = ScoreCache(tmp_path / "c.sqlite")

    class Dies(Recording):
        def _score(self, examples):
            if self.calls:
                raise RuntimeError("killed")
            return super()._score(examples)

    with pytest.raises(RuntimeError):
        score_examples(Dies("Fake GPU"), rows, cache, batch_size=1)
    again = Recording("Fake GPU")
    again.name = Dies.name = "test-recording"
    out = score_examples(again, rows, cache, batch_size=1)
    assert (out.cached, out.computed) == (200, 250)  # the first call's 200 rows were committed before the crash
    assert out.scores["len"].tolist() == [float(len(ex.candidate)) for ex in rows]
