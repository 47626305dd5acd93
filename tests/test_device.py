"""metrics.device: resolving device and dtype, the signature part, padded batches and the out-of-memory back-off.

Runs on the CPU (this machine has no CUDA): the CUDA answers are checked where torch sees no GPU.
"""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meta_eval.metrics import device as dev
from meta_eval.metrics.base import MetricError

torch = pytest.importorskip("torch")
NO_CUDA = not torch.cuda.is_available()


@pytest.fixture(autouse=True)
def _no_env(monkeypatch):
    monkeypatch.delenv("META_EVAL_DEVICE", raising=False)
    monkeypatch.delenv("META_EVAL_DTYPE", raising=False)


def test_cpu_is_cpu():
    assert dev.resolve_device("cpu") == "cpu"
    assert dev.resolve_device(" CPU ") == "cpu"


@pytest.mark.skipif(not NO_CUDA, reason="checks the answers where torch sees no CUDA GPU")
def test_auto_and_nothing_resolve_to_cpu_without_cuda():
    assert dev.resolve_device("auto") == "cpu"
    assert dev.resolve_device(None) == "cpu"
    assert dev.resolve_device("") == "cpu"


@pytest.mark.skipif(not NO_CUDA, reason="checks the answers where torch sees no CUDA GPU")
@pytest.mark.parametrize("spec", ["cuda", "cuda:0", "cuda:3"])
def test_cuda_refused_without_cuda(spec):
    with pytest.raises(MetricError, match=rf"device='{spec}' asks for a CUDA GPU, but torch sees none"):
        dev.resolve_device(spec)


@pytest.mark.parametrize("spec", ["gpu", "cuda:", "cuda:x", "cuda0", "mps", "cpu:0"])
def test_not_a_device(spec):
    with pytest.raises(MetricError, match=r"is not a device; choose one of auto, cpu, cuda, cuda:N"):
        dev.resolve_device(spec)


def test_env_var_read_when_nothing_given(monkeypatch):
    monkeypatch.setenv("META_EVAL_DEVICE", "cpu")
    assert dev.resolve_device(None) == "cpu"
    monkeypatch.setenv("META_EVAL_DEVICE", "tpu")
    with pytest.raises(MetricError, match=r"--device/\$META_EVAL_DEVICE='tpu' is not a device"):
        dev.resolve_device(None)
    assert dev.resolve_device("cpu") == "cpu"  # an explicit value wins over the variable


@pytest.mark.skipif(not NO_CUDA, reason="checks the answers where torch sees no CUDA GPU")
def test_env_var_cuda_refused_naming_the_variable(monkeypatch):
    monkeypatch.setenv("META_EVAL_DEVICE", "cuda")
    with pytest.raises(MetricError, match=r"--device/\$META_EVAL_DEVICE='cuda' asks for a CUDA GPU"):
        dev.resolve_device()


def test_dtype_rules(monkeypatch):
    assert dev.resolve_dtype(None, "cpu") == "fp32"
    assert dev.resolve_dtype("FP32", "cpu") == "fp32"
    for dtype in ("tf32", "bf16", "fp16"):
        assert dev.resolve_dtype(dtype, "cuda:0") == dtype  # checking the dtype needs no GPU
        with pytest.raises(MetricError, match=rf"dtype='{dtype}' needs a CUDA GPU; on the CPU .* only fp32"):
            dev.resolve_dtype(dtype, "cpu")
    with pytest.raises(MetricError, match=r"dtype='fp64' is not a precision; choose one of fp32, tf32, bf16, fp16"):
        dev.resolve_dtype("fp64", "cuda:0")
    monkeypatch.setenv("META_EVAL_DTYPE", "bf16")
    assert dev.resolve_dtype(None, "cuda:1") == "bf16"
    with pytest.raises(MetricError, match=r"--dtype/\$META_EVAL_DTYPE='bf16' needs a CUDA GPU"):
        dev.resolve_dtype(None, "cpu")
    assert dev.resolve_dtype("fp32", "cpu") == "fp32"


def test_device_config_empty_on_cpu():
    assert dev.device_config("cpu", "fp32") == {}


def test_precision_is_a_no_op_on_cpu():
    before = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
    with dev.precision("cpu", "fp32"):
        assert not torch.is_autocast_enabled()
        x = torch.ones(2, 2) @ torch.ones(2, 2)
    assert x.dtype == torch.float32
    assert (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32) == before


def test_padded_batches_by_hand():
    assert dev.padded_batches([3, 9, 4, 9, 1], max_tokens=20) == [[1, 3], [2, 0, 4]]
    assert dev.padded_batches([], max_tokens=10) == []
    assert dev.padded_batches([50, 2], max_tokens=10) == [[0], [1]]  # too long for the budget: alone
    assert dev.padded_batches([2] * 5, max_tokens=100, max_texts=2) == [[0, 1], [2, 3], [4]]
    with pytest.raises(ValueError):
        dev.padded_batches([1], max_tokens=0)


def _check_batches(lengths, max_tokens, max_texts, batches):
    flat = [i for b in batches for i in b]
    assert sorted(flat) == list(range(len(lengths)))  # every index exactly once
    assert [lengths[i] for i in flat] == sorted(lengths, reverse=True)  # longest first
    for a, b in zip(flat, flat[1:]):
        if lengths[a] == lengths[b]:
            assert a < b  # stable: ties in input order
    for batch in batches:
        assert batch
        if max_texts is not None:
            assert len(batch) <= max_texts
        if len(batch) > 1:
            assert len(batch) * max(lengths[i] for i in batch) <= max_tokens
    for before, after in zip(batches, batches[1:]):  # greedy: the next text did not fit
        width = max(lengths[before[0]], 1)
        assert (len(before) + 1) * width > max_tokens or (max_texts is not None and len(before) == max_texts)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 600), max_size=60), st.integers(1, 4096), st.one_of(st.none(), st.integers(1, 20)))
def test_padded_batches_invariants(lengths, max_tokens, max_texts):
    _check_batches(lengths, max_tokens, max_texts, dev.padded_batches(lengths, max_tokens, max_texts))


def test_is_oom():
    assert dev.is_oom(torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB"))
    assert dev.is_oom(RuntimeError("CUDA error: out of memory"))
    assert not dev.is_oom(RuntimeError("shape mismatch"))
    assert not dev.is_oom(ValueError("out of memory"))  # not a RuntimeError


def _fake_pass(limit: int, calls: list):
    """A forward pass that raises torch's real out-of-memory error above ``limit`` texts."""
    def fn(batch):
        calls.append(list(batch))
        if len(batch) > limit:
            raise torch.cuda.OutOfMemoryError(f"CUDA out of memory. Tried to allocate {len(batch)} GiB")
        return [i * i for i in batch]
    return fn


def test_backoff_gives_the_no_oom_results():
    batch = [7, 3, 11, 0, 5, 2, 9]
    calls: list = []
    expected = dev.run_with_backoff(_fake_pass(100, calls), batch)
    assert calls == [batch] and expected == [i * i for i in batch]
    for limit in (1, 2, 3, 6):
        calls, seen = [], []
        run = dev.run_with_backoff(_fake_pass(limit, calls), batch, on_oom=lambda b, m: seen.append(len(b)))
        assert run == expected
        assert all(n > limit for n in seen) and seen[0] == len(batch)
        assert sorted(i for c in calls if len(c) <= limit for i in c) == sorted(batch)  # each text scored once
    calls = []
    dev.run_with_backoff(_fake_pass(3, calls), batch)
    assert [len(c) for c in calls] == [7, 4, 2, 2, 3]  # halves: 7 -> 4 (-> 2 + 2) + 3


def test_backoff_other_errors_pass_through():
    def fn(batch):
        raise RuntimeError("shape mismatch")
    with pytest.raises(RuntimeError, match="shape mismatch"):
        dev.run_with_backoff(fn, [1, 2])


def test_single_text_oom_is_a_metric_error():
    with pytest.raises(MetricError, match=r"one text of 4097 pieces does not fit on cuda:0; even alone it ran out of "
                                          r"memory \(CUDA out of memory\. Tried to allocate 1 GiB\)"):
        dev.run_with_backoff(_fake_pass(0, []), [4, 1], device="cuda:0", size=lambda i: 4097)


def test_import_is_pure_python():
    """Its top-level imports are the standard library's (torch, numpy and base's MetricError inside functions)."""
    import ast
    import sys

    tree = ast.parse(open(dev.__file__, encoding="utf-8").read())
    top = {alias.name.split(".")[0] for node in tree.body if isinstance(node, ast.Import) for alias in node.names}
    top |= {node.module.split(".")[0] for node in tree.body if isinstance(node, ast.ImportFrom)}
    assert top <= set(sys.stdlib_module_names) | {"__future__"}, top


@pytest.mark.skipif(torch.version.cuda is not None, reason="a torch built without CUDA answers auto unimported")
def test_auto_on_a_cpu_only_torch_does_not_import_torch():
    """``auto`` on a torch built without CUDA is the CPU, read from torch's version.py: no torch import (a metric
    resolves its device when it is built, e.g. by ``meta-eval metrics``, which must stay fast)."""
    import subprocess
    import sys

    code = ("import sys; from meta_eval.metrics.device import resolve_device; "
            "print(resolve_device('auto'), 'torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["cpu", "False"]
