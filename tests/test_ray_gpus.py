"""``--gpus-per-actor`` (issue #37): Ray actors that hold a neural metric's model on a GPU (meta_eval/scoring/engines.py).

What a machine without a GPU can check, with a real local Ray instance and no mocks: the actors' resources
(:func:`actor_options`, a unit test of the function that builds them); ``gpus_per_actor=0`` leaves everything as it
was (same scores, the driver's signature); above 0 without a GPU, a clear :class:`EngineError` when the engine is
made, before any work (Ray would otherwise wait for the resource for ever), and from the command line exit code 2;
and, on a Ray instance told it has one GPU (Ray schedules by declared resources, so ``num_gpus=1`` stands in for a
card), that a GPU metric's actor is granted the GPU and signs the scores itself (the driver files them under the
actor's signature), while a CPU metric's actor asks for none.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import require_module, small_set
from meta_eval.metrics import Example, Metric, create
from meta_eval.scoring.engines import RAY_HINT, EngineError, RayEngine, actor_options, gpu_metric, make_engine
from meta_eval.scoring.runner import score_examples

pytestmark = pytest.mark.xdist_group("ray")  # one local Ray instance at a time (tests/test_engines.py)
REPO = Path(__file__).resolve().parents[1]
EXAMPLES = [Example(f"the cat sat on mat {i}", (f"a cat on a mat {i % 3}",)) for i in range(12)]


class GpuSeen(Metric):
    """A stand-in for a torch metric (it takes ``device``): scores, and signs with, the GPUs Ray granted the process
    that runs it (module level: Ray workers import it)."""

    name = "ray-gpu-seen"
    variants = ("gpus",)
    needs_references = False
    parallel = "single"

    def __init__(self, device: str | None = None) -> None:
        self.device = device

    @staticmethod
    def _granted() -> float:
        import ray

        return float(len(ray.get_gpu_ids())) if ray.is_initialized() else -1.0

    def config(self) -> dict[str, object]:
        return {"granted": self._granted(), "pid": os.getpid()}

    def _score(self, examples):
        return {"gpus": [self._granted()] * len(examples)}


class CpuSingle(GpuSeen):
    """The same without the ``device`` option: not a GPU metric."""

    name = "ray-cpu-single"

    def __init__(self) -> None:
        super().__init__(None)


class Declared(CpuSingle):
    """A metric that declares a GPU share itself (``Metric.num_gpus``), as before ``--gpus-per-actor``."""

    num_gpus = 1.0


def test_actor_options():
    gpu, cpu, declared = GpuSeen(), CpuSingle(), Declared()
    assert gpu_metric(gpu) and not gpu_metric(cpu) and not gpu_metric(create("rouge"))
    assert gpu_metric(create("bert-lm")) and gpu_metric(create("qa-sup")) and gpu_metric(create("moverscore"))
    # 0: the behaviour before the option (the metric's own num_gpus where the cluster has GPUs)
    assert actor_options(gpu, 0.0, 4.0, 3) == {"num_cpus": 3, "num_gpus": 0.0}
    assert actor_options(declared, 0.0, 4.0) == {"num_cpus": 1, "num_gpus": 1.0}
    assert actor_options(declared, 0.0, 0.0) == {"num_cpus": 1, "num_gpus": 0.0}
    # above 0: every metric that takes device asks for that share; the others are unchanged
    assert actor_options(gpu, 0.5, 1.0, 2) == {"num_cpus": 2, "num_gpus": 0.5}
    assert actor_options(gpu, 2.0, 0.0) == {"num_cpus": 1, "num_gpus": 2.0}
    assert actor_options(cpu, 1.0, 8.0) == {"num_cpus": 1, "num_gpus": 0.0}
    assert actor_options(create("rouge"), 1.0, 8.0)["num_gpus"] == 0.0


@pytest.mark.parametrize("bad", [-1, "x", float("nan"), float("inf"), True])
def test_bad_gpu_counts_are_refused(bad):
    require_module("ray", RAY_HINT)
    with pytest.raises(EngineError, match="--gpus-per-actor must be a number >= 0"):
        RayEngine(workers=1, gpus_per_actor=bad)


def test_gpus_per_actor_needs_ray():
    with pytest.raises(EngineError, match="--gpus-per-actor gives Ray actors GPUs: it needs --engine ray"):
        make_engine("local", 1, gpus_per_actor=1.0)


def test_zero_is_today_and_more_without_a_gpu_is_refused_before_any_work(tmp_path):
    ray = require_module("ray", RAY_HINT)
    if ray.is_initialized():
        pytest.skip("another test left Ray running in this process")
    plain = score_examples(create("rouge"), EXAMPLES, None, 4)
    with make_engine("ray", workers=1, gpus_per_actor=0) as engine:
        assert engine.gpus_per_actor == 0.0 and not engine._started  # nothing started until a metric needs it
        got = score_examples(create("rouge"), EXAMPLES, None, 4, engine=engine)
        assert np.array_equal(got.scores["rouge1-f"], plain.scores["rouge1-f"]) and got.signature == plain.signature
        seen = score_examples(GpuSeen(), EXAMPLES, None, 4, engine=engine)
        assert set(seen.scores["gpus"]) == {0.0}  # no GPU asked for
        assert f"pid:{os.getpid()}" in seen.signature  # signed here, in the driver, as before
        has_gpu = float(ray.cluster_resources().get("GPU", 0) or 0) > 0
    assert not ray.is_initialized()
    if has_gpu:
        pytest.skip("this machine has a GPU Ray sees: the refusal needs one without")
    with pytest.raises(EngineError, match=r"--gpus-per-actor 1 asks for 1 GPU\(s\) per actor, but the local Ray "
                                          r"instance \(this machine\) has 0: Ray would wait for a GPU for ever"):
        make_engine("ray", workers=1, gpus_per_actor=1)
    assert not ray.is_initialized()  # the instance it started to look is stopped
    import subprocess

    data = small_set(tmp_path / "s.jsonl", 12)
    done = subprocess.run([sys.executable, "-m", "meta_eval.cli", "run", "-j", str(data), "-m", "rouge", "--no-cache",
                           "--engine", "ray", "--workers", "1", "--gpus-per-actor", "0.5"], cwd=REPO,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "--gpus-per-actor 0.5 asks for 0.5 GPU(s) per actor" in " ".join(done.stderr.split())
    assert "rouge" not in done.stdout  # no table: nothing was scored


def test_a_gpu_actor_is_granted_the_gpu_and_signs_the_scores():
    """A Ray instance that declares one GPU: the GPU metric's actor gets it (Ray's ``num_gpus``) and computes the
    signature the driver files the scores under; a CPU metric's actor gets none; 0.5 per actor puts two on it."""
    ray = require_module("ray", RAY_HINT)
    if ray.is_initialized():
        pytest.skip("another test left Ray running in this process")
    paths = [p for p in sys.path if p]
    ray.init(address="local", num_cpus=2, num_gpus=1, include_dashboard=False, log_to_driver=False,
             job_config=ray.job_config.JobConfig(code_search_path=paths))
    try:
        engine = RayEngine(workers=2, gpus_per_actor=1)  # uses the instance above and leaves it open
        result = score_examples(GpuSeen(), EXAMPLES, None, 4, engine=engine)
        assert set(result.scores["gpus"]) == {1.0}
        assert "granted:1.0" in result.signature and f"pid:{os.getpid()}" not in result.signature
        cpu = score_examples(CpuSingle(), EXAMPLES, None, 4, engine=engine)
        assert set(cpu.scores["gpus"]) == {0.0} and f"pid:{os.getpid()}" in cpu.signature
        halves = RayEngine(workers=2, gpus_per_actor=0.5)
        shared = score_examples(GpuSeen(), EXAMPLES, None, 2, engine=halves)  # two actors on the one GPU
        assert set(shared.scores["gpus"]) == {1.0}
    finally:
        ray.shutdown()


@pytest.mark.cuda
def test_on_a_real_gpu_the_actor_encodes_there_and_agrees_with_the_driver(tmp_path):
    """The GPU check of ``--gpus-per-actor`` (bench/ray_gpu_check.sh runs it where a GPU is lent): a contextual mover
    on a tiny random BERT, scored by a Ray actor granted the real GPU, is signed with the GPU's name (the actor's
    signature, not the driver's) and agrees with the same metric on the GPU in the driver within the GPU's batch
    tolerance (1e-5, docs/engines.md)."""
    ray = require_module("ray", RAY_HINT)
    from conftest import make_tiny_bert
    from meta_eval.metrics import contextual_mover

    import torch

    base = str(make_tiny_bert(tmp_path / "tiny-base", seed=1))
    here = score_examples(create("wms-ctx", model=base, device="cuda"), EXAMPLES, None, 4)
    contextual_mover._cache.clear()
    with make_engine("ray", workers=2, gpus_per_actor=1) as engine:
        there = score_examples(create("wms-ctx", model=base), EXAMPLES, None, 4, engine=engine)
    assert not ray.is_initialized()
    assert f"device:cuda({torch.cuda.get_device_name(0)})" in there.signature
    (variant,) = there.scores
    assert np.allclose(there.scores[variant], here.scores[variant], rtol=0, atol=1e-5)
