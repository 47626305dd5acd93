"""``device``/``dtype`` of MoverScore, BERT-LM and the QA metrics (issue #37; :mod:`metrics.device`).

On the CPU (every machine): ``device=cpu`` and ``auto`` without CUDA give the signature of a metric built without the
option, byte for byte, and the same scores; ``cuda`` and a non-fp32 dtype are refused here with a clear message; the
padded-batch path that a GPU takes runs on the CPU through the device string ``cpu:0`` (a CPU device torch accepts,
which the metrics treat as "not the plain CPU path") and agrees with the CPU path within float32 rounding, with a
token budget small enough to give many batches.

Marked ``cuda`` (skipped with the reason where torch sees no GPU; run by ``bench/gpu_check.sh``): the GPU's scores
against the CPU's within a stated tolerance, and GPU run-to-run identity. Models: tiny random BERTs of
:func:`conftest.make_tiny_bert` (no weights package needed).
"""
from __future__ import annotations

import numpy as np
import pytest

from conftest import NEURAL_FIX, make_tiny_bert, require_module

torch = require_module("torch", NEURAL_FIX)
require_module("transformers", NEURAL_FIX)

from meta_eval.metrics import Example, MetricError  # noqa: E402
from meta_eval.metrics import bertlm, qa  # noqa: E402
from meta_eval.metrics.moverscore import MoverScore  # noqa: E402

NO_CUDA = not torch.cuda.is_available()
TEXTS = ["the cat sat on the mat.", "a dog won the big game!", "barack obama visited paris yesterday.",
         "the quick brown fox jumps over the lazy dog in london", "john smith won.", "cat."]
PAIRS = [("MASKED won the game in London.", "john smith won the big game in london yesterday."),
         ("john smith won the game in MASKED.", "the team won in london."),
         ("MASKED visited paris.", "barack obama visited paris yesterday and the city was big."),
         ("the cat sat on the MASKED.", "a cat.")]


@pytest.fixture(scope="module")
def mlm(tmp_path_factory) -> str:
    return str(make_tiny_bert(tmp_path_factory.mktemp("gpu") / "tiny-mlm", head="mlm"))


@pytest.fixture(scope="module")
def qa_model(tmp_path_factory) -> str:
    return str(make_tiny_bert(tmp_path_factory.mktemp("gpu") / "tiny-qa", head="qa", seed=3))


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> str:
    return str(make_tiny_bert(tmp_path_factory.mktemp("gpu") / "tiny-base", seed=1))


def metrics_for(mlm: str, qa_model: str, base: str, **options):
    return [bertlm.BertLM(mlm, **options), bertlm.BertLMPerplexity(mlm, **options),
            qa.QASupervised(model=qa_model, **options), qa.QAUnsupervised(model=qa_model, **options),
            MoverScore(model=base, idf="none", **options)]


# -- the CPU ---------------------------------------------------------------------------------------------------------
@pytest.mark.skipif(not NO_CUDA, reason="checks auto where torch sees no CUDA GPU")
def test_cpu_and_auto_keep_the_signatures(mlm, qa_model, base, monkeypatch):
    monkeypatch.delenv("META_EVAL_DEVICE", raising=False)
    monkeypatch.delenv("META_EVAL_DTYPE", raising=False)
    plain = [m.signature() for m in metrics_for(mlm, qa_model, base)]
    assert all("device" not in s and "cuda" not in s for s in plain)
    for options in ({"device": "cpu"}, {"device": "auto"}, {"device": "cpu", "dtype": "fp32"}, {"device": None}):
        assert [m.signature() for m in metrics_for(mlm, qa_model, base, **options)] == plain, options
    monkeypatch.setenv("META_EVAL_DEVICE", "cpu")
    assert [m.signature() for m in metrics_for(mlm, qa_model, base)] == plain


@pytest.mark.skipif(not NO_CUDA, reason="checks the refusal where torch sees no CUDA GPU")
@pytest.mark.parametrize("make", [lambda o: bertlm.BertLM("bert-base-uncased", **o),
                                  lambda o: qa.QASupervised(**o), lambda o: MoverScore(model="minilm", **o)],
                         ids=["bert-lm", "qa-sup", "moverscore"])
def test_cuda_and_low_precision_refused_here(make, monkeypatch):
    with pytest.raises(MetricError, match=r"device='cuda' asks for a CUDA GPU, but torch sees none here"):
        make({"device": "cuda"})
    with pytest.raises(MetricError, match=r"dtype='bf16' needs a CUDA GPU; on the CPU \(device=cpu\) only fp32"):
        make({"device": "cpu", "dtype": "bf16"})
    with pytest.raises(MetricError, match=r"device='gpu' is not a device"):
        make({"device": "gpu"})
    monkeypatch.setenv("META_EVAL_DEVICE", "cuda:1")
    with pytest.raises(MetricError, match=r"META_EVAL_DEVICE='cuda:1' asks for a CUDA GPU"):
        make({})


def test_cpu_option_gives_the_same_scores(mlm, qa_model):
    examples = [Example(t) for t in TEXTS]
    bertlm.load_masked_lm(mlm).memo.clear()
    (plain,) = bertlm.BertLM(mlm).score(examples).values()
    bertlm.load_masked_lm(mlm).memo.clear()
    (cpu,) = bertlm.BertLM(mlm, device="cpu").score(examples).values()
    assert np.array_equal(cpu, plain)
    a = qa.load_qa_model(qa_model).answer(PAIRS)
    b = qa.load_qa_model(qa_model, None, "cpu", "fp32").answer(PAIRS)
    assert all(np.array_equal(x.p_start, y.p_start) and np.array_equal(x.p_end, y.p_end) for x, y in zip(a, b))


@pytest.mark.parametrize("max_tokens", [8, 40, 1 << 17])
def test_padded_path_agrees_with_the_cpu_path(mlm, max_tokens):
    """The GPU's packing (padded, longest first, token budget) run on the CPU: same PLL within float32 rounding;
    8 pieces per pass forces one copy per batch (a text's copies are longer than the budget)."""
    cpu = bertlm.MaskedLM(mlm, device="cpu").pseudo_log_likelihoods(TEXTS, batch_size=7)
    padded = bertlm.MaskedLM(mlm, device="cpu:0").pseudo_log_likelihoods(TEXTS, max_tokens=max_tokens)
    assert [n for _, n in padded] == [n for _, n in cpu]
    assert np.allclose([p for p, _ in padded], [p for p, _ in cpu], rtol=0, atol=2e-5)


@pytest.mark.parametrize("max_tokens", [16, 1 << 17])
def test_qa_padded_path_agrees_with_the_cpu_path(qa_model, max_tokens):
    cpu = qa.QAModel(qa_model, device="cpu").answer(PAIRS, batch_size=3)
    padded = qa.QAModel(qa_model, device="cpu:0").answer(PAIRS, max_tokens=max_tokens)
    for x, y in zip(cpu, padded):
        assert np.array_equal(x.context, y.context) and np.array_equal(x.offsets, y.offsets)
        assert np.allclose(x.p_start, y.p_start, rtol=0, atol=1e-6)
        assert np.allclose(x.p_end, y.p_end, rtol=0, atol=1e-6)


# -- a GPU (bench/gpu_check.sh runs these) --------------------------------------------------------------------------
@pytest.mark.cuda
@pytest.mark.skipif(NO_CUDA, reason="needs a CUDA GPU (torch sees none here); bench/gpu_check.sh runs it on one")
def test_gpu_against_cpu_and_run_to_run(mlm, qa_model, base):
    """fp32 on the GPU (TF32 off) against the CPU: PLL per piece within 1e-4 (absolute, log-probabilities of a
    30-piece vocabulary model), QA probabilities within 1e-5, MoverScore within 1e-5; the same GPU run twice: the
    same bits; the signature names the GPU, the dtype and CUDA."""
    examples = [Example(t, (TEXTS[(i + 1) % len(TEXTS)],), source=TEXTS[i - 1]) for i, t in enumerate(TEXTS)]
    cpu_lm = bertlm.MaskedLM(mlm, device="cpu").pseudo_log_likelihoods(TEXTS)
    gpu_lm = [bertlm.MaskedLM(mlm, device="cuda:0").pseudo_log_likelihoods(TEXTS) for _ in range(2)]
    assert gpu_lm[0] == gpu_lm[1]
    assert np.allclose([p / n for p, n in gpu_lm[0]], [p / n for p, n in cpu_lm], rtol=0, atol=1e-4)
    cpu_qa = qa.QAModel(qa_model, device="cpu").answer(PAIRS)
    gpu_qa = [qa.QAModel(qa_model, device="cuda:0").answer(PAIRS) for _ in range(2)]
    for x, y, z in zip(cpu_qa, *gpu_qa):
        assert np.array_equal(y.p_start, z.p_start) and np.array_equal(y.p_end, z.p_end)
        assert np.allclose(x.p_start, y.p_start, rtol=0, atol=1e-5)
    (cpu_ms,) = MoverScore(model=base, idf="none", device="cpu").score(examples).values()
    gpu_ms = [next(iter(MoverScore(model=base, idf="none", device="cuda").score(examples).values()))
              for _ in range(2)]
    assert np.array_equal(gpu_ms[0], gpu_ms[1])
    assert np.allclose(cpu_ms, gpu_ms[0], rtol=0, atol=1e-5)
    for metric in metrics_for(mlm, qa_model, base, device="cuda", dtype="bf16"):
        sig = metric.signature()
        assert f"device:cuda({torch.cuda.get_device_name(0)})" in sig and "dtype:bf16" in sig and "cuda:" in sig


@pytest.mark.cuda
@pytest.mark.skipif(NO_CUDA, reason="needs a CUDA GPU (torch sees none here); bench/gpu_check.sh runs it on one")
def test_gpu_low_precision_within_tolerance(mlm):
    """bf16 autocast and TF32 against GPU fp32: PLL per piece within 0.05 (bf16: 8 bits of mantissa) and 1e-3."""
    fp32 = bertlm.MaskedLM(mlm, device="cuda:0", dtype="fp32").pseudo_log_likelihoods(TEXTS)
    for dtype, tol in (("tf32", 1e-3), ("bf16", 5e-2)):
        low = bertlm.MaskedLM(mlm, device="cuda:0", dtype=dtype).pseudo_log_likelihoods(TEXTS)
        assert np.allclose([p / n for p, n in low], [p / n for p, n in fp32], rtol=0, atol=tol), dtype


@pytest.mark.cuda
@pytest.mark.skipif(NO_CUDA, reason="needs a CUDA GPU (torch sees none here); bench/gpu_check.sh runs it on one")
def test_gpu_bertscore_and_contextual_movers_with_a_random_folder(base):
    """The device branch's metrics with a model folder built from a config (the GPU machine has no MiniLM package):
    BERTScore F and the contextual movers on the GPU in fp32 against the CPU within 1e-5, and run to run the same
    bits (the memos emptied before each run, so every run encodes)."""
    from meta_eval.metrics import bertscore, contextual_mover, create

    examples = [Example(t, (TEXTS[(i + 2) % len(TEXTS)],)) for i, t in enumerate(TEXTS)]
    for name, suffix in (("bertscore", "-f"), ("wms-ctx", "]"), ("sms-ctx", "]")):  # names tagged [<folder>]
        runs = {}
        for device in ("cpu", "cuda", "cuda"):
            bertscore._states.clear()
            contextual_mover._cache.clear()
            scores = create(name, model=base, device=device).score(examples)
            (variant,) = [k for k in scores if k.endswith(suffix)]
            runs.setdefault(device, []).append(scores[variant])
        assert np.array_equal(runs["cuda"][0], runs["cuda"][1]), name
        assert np.allclose(runs["cpu"][0], runs["cuda"][0], rtol=0, atol=1e-5), name
