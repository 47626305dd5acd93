"""The device options in the neural metrics (issue #37): BERTScore, the contextual movers and their shared encoder.

On the CPU: ``device=cpu`` and ``auto`` without CUDA give today's signatures byte for byte and the same scores (and
so the same cache entries); CUDA asked here is one clear error; the GPU's code path (padded batches, batched greedy
matching, the out-of-memory back-off) runs on the CPU through the private switch ``_padded`` and agrees with the
exact-length path within 1e-5. Tests marked ``cuda`` need a CUDA GPU and are skipped with the reason elsewhere.
"""
from __future__ import annotations

import os
import re

import numpy as np
import pytest

from conftest import NEURAL_FIX, require_metrics, require_minilm, require_module, small_set  # noqa: E402

torch = require_module("torch", NEURAL_FIX)
require_module("transformers", NEURAL_FIX)

from typer.testing import CliRunner  # noqa: E402

from meta_eval.cli import app  # noqa: E402
from meta_eval.metrics import Example, MetricError  # noqa: E402
from meta_eval.metrics import create as _create_metric  # noqa: E402
from meta_eval.metrics import bertscore as bs  # noqa: E402


def create(name: str, **options):
    """The metric, BERTScore on the offline MiniLM unless a model is given (its default, roberta-large, is not
    installable offline)."""
    if name == "bertscore":
        options.setdefault("model", "minilm")
    return _create_metric(name, **options)


def _f(scores: dict) -> np.ndarray:
    """The F1 variant of a BERTScore result, whatever model tags its name (``bertscore[minilm]-f``)."""
    (name,) = [k for k in scores if k.endswith("-f")]
    return scores[name]


def _one(scores: dict) -> np.ndarray:
    """The one variant of a contextual mover's result (``wms-ctx[minilm]``, ``wms-ctx[<folder>]``)."""
    (values,) = scores.values()
    return values
from meta_eval.metrics.encoder import Encoder  # noqa: E402

HAVE_CUDA = torch.cuda.is_available()
runner = CliRunner()
CONTEXTUAL = ("wms-ctx", "sms-ctx", "s+wms-ctx")
TEXTS = ["The cat sat on the mat.", "A cat was sitting on the mat yesterday, said John Smith.", "Hello world",
         "Goodbye, world!", "hi", "The president of France visited London and met the team who won the big game."]
EXAMPLES = [Example(TEXTS[0], (TEXTS[1],)), Example(TEXTS[2], (TEXTS[3], TEXTS[4])),
            Example(TEXTS[5], (TEXTS[0], TEXTS[1])), Example(TEXTS[4], (TEXTS[2],)),
            Example("", (TEXTS[0],))]


@pytest.fixture(autouse=True)
def _no_env(monkeypatch):
    monkeypatch.delenv("META_EVAL_DEVICE", raising=False)
    monkeypatch.delenv("META_EVAL_DTYPE", raising=False)


@pytest.fixture(scope="module")
def minilm():
    require_minilm()


def _tight(model, limit: int, sizes: list):
    """``model`` behind a forward pass that raises torch's real CUDA out-of-memory error for batches of more than
    ``limit`` texts (a CPU cannot run out of GPU memory; everything else is the real model)."""
    class Tight(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = model
            self.config = model.config

        def forward(self, input_ids, **kwargs):
            sizes.append(int(input_ids.shape[0]))
            if input_ids.shape[0] > limit:
                raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB (test)")
            return self.inner(input_ids, **kwargs)
    return Tight()


# -- signatures and scores on the CPU --------------------------------------------------------------------------------
@pytest.mark.skipif(HAVE_CUDA, reason="auto means the CPU only where torch sees no CUDA GPU")
@pytest.mark.parametrize("name", ["bertscore", *CONTEXTUAL])
def test_cpu_and_auto_give_todays_signature(minilm, name, monkeypatch):
    require_metrics(name, model="minilm")
    today = create(name).signature()
    assert "device" not in today and "dtype" not in today and "cuda" not in today
    for options in ({"device": "cpu"}, {"device": "auto"}, {"device": "cpu", "dtype": "fp32"}, {"device": "CPU"}):
        assert create(name, **options).signature() == today, options
    monkeypatch.setenv("META_EVAL_DEVICE", "cpu")
    monkeypatch.setenv("META_EVAL_DTYPE", "fp32")
    assert create(name).signature() == today


@pytest.mark.skipif(HAVE_CUDA, reason="checks the refusal where torch sees no CUDA GPU")
@pytest.mark.parametrize("name", ["bertscore", *CONTEXTUAL])
def test_cuda_and_half_precision_refused_here(minilm, name):
    require_metrics(name, model="minilm")
    with pytest.raises(MetricError, match=r"device='cuda:1' asks for a CUDA GPU, but torch sees none"):
        create(name, device="cuda:1")
    with pytest.raises(MetricError, match=r"dtype='bf16' needs a CUDA GPU; on the CPU \(device=cpu\) only fp32"):
        create(name, device="cpu", dtype="bf16")


def test_bertscore_cpu_scores_are_todays_bit_for_bit(minilm):
    require_metrics("bertscore", model="minilm")
    today = create("bertscore").score(EXAMPLES)
    for options in ({"device": "cpu"}, {"device": "auto"} if not HAVE_CUDA else {"device": "cpu", "dtype": "fp32"}):
        got = create("bertscore", **options).score(EXAMPLES)
        for variant in today:
            assert np.array_equal(today[variant], got[variant]), (options, variant)


def test_contextual_mover_cpu_scores_are_todays_bit_for_bit(minilm):
    require_metrics("wms-ctx")
    examples = EXAMPLES[:3]
    assert np.array_equal(create("wms-ctx").score(examples)["wms-ctx[minilm]"],
                          create("wms-ctx", device="cpu").score(examples)["wms-ctx[minilm]"])


# -- the GPU's code path, run on the CPU -----------------------------------------------------------------------------
@pytest.mark.parametrize("options", [{}, {"idf": "true"}, {"max_tokens": "16"}])
def test_bertscore_padded_path_agrees_with_the_exact_path(minilm, options):
    """Padded encoding and batched greedy matching (the GPU path) on the CPU: within 1e-5 of the exact-length path;
    the empty candidate keeps its 0 and a single-word text is matched as bert-score does."""
    require_metrics("bertscore", model="minilm")
    exact = create("bertscore", **options)
    padded = create("bertscore", **options)
    padded._padded = True
    bs._states.clear()
    a, b = exact.score(EXAMPLES), padded.score(EXAMPLES)
    for variant in a:
        np.testing.assert_allclose(b[variant], a[variant], rtol=0, atol=1e-5, err_msg=variant)
        assert b[variant][-1] == 0.0  # the empty candidate
    assert not np.array_equal(_f(a), np.zeros(len(EXAMPLES)))


def test_bertscore_matching_by_hand_on_the_padded_path():
    """_gpu_pair_scores on hand-made embeddings in one padded batch: P = the candidate pieces' best cosines weighted
    by their IDF, R the reference's; a padded position never matches, even where every real similarity is negative
    (a masked 0, as in bert-score's own padded batches, would win there); a two-piece text gets P = R = 0; each
    pair as bert_score.utils.greedy_cos_idf gives it alone, unpadded."""
    e = torch.eye(3)
    states = {"r": ([0, 1, 2], torch.stack([e[0], e[1], -e[2]])), "h": ([0, 1, 2], torch.stack([e[0], e[1], e[0]])),
              "r2": ([0, 1, 2], torch.stack([e[0], e[1], e[0]])), "n": ([0, 1, 2], -torch.ones(3, 3) + e[2]),
              "r4": ([0, 1, 2, 3], torch.stack([e[0], e[1], e[2], e[0]])),
              "h4": ([0, 1, 2, 3], torch.stack([e[2], e[1], e[0], e[1]])), "two": ([0, 1], torch.stack([e[0], e[2]]))}
    idf = {t: torch.ones(len(ids)) for t, (ids, _) in states.items()}
    idf["r"] = torch.tensor([1.0, 1.0, 2.0])
    pairs = [("r", "h"), ("r2", "n"), ("r4", "h4"), ("r", "two")]
    got = bs._gpu_pair_scores(pairs, states, idf, "cpu").numpy()
    # (r, h): P = 1 (every candidate piece found), R = (1 + 1 + 2 * 0) / 4 = 0.5, F = 2/3
    np.testing.assert_allclose(got[0], [1.0, 0.5, 2 / 3], atol=1e-6)
    # (r2, n): every cosine is -1/sqrt(2) (n's pieces are -e0-e1); both are padded to 4 pieces in this batch
    np.testing.assert_allclose(got[1], [-0.5 ** 0.5] * 3, atol=1e-6)
    assert got[3].tolist()[:2] == [0.0, 0.0]
    from bert_score.utils import greedy_cos_idf  # the package, on each pair alone

    for row, (ref, hyp) in enumerate(pairs):
        p, r, f = greedy_cos_idf(states[ref][1][None].clone(), torch.ones(1, len(states[ref][0])),
                                 idf[ref][None].clone(), states[hyp][1][None].clone(),
                                 torch.ones(1, len(states[hyp][0])), idf[hyp][None].clone())
        np.testing.assert_allclose(got[row], [p.item(), r.item(), f.item()], atol=1e-6, err_msg=str(pairs[row]))


def test_bertscore_out_of_memory_halves_the_batch(minilm, monkeypatch):
    require_metrics("bertscore", model="minilm")
    exact = create("bertscore").score(EXAMPLES)
    metric = create("bertscore")
    tokenizer, model = bs._load(str(metric._folder), metric.layer, metric.fast, True)
    sizes: list = []
    monkeypatch.setattr(bs, "_load", lambda *args: (tokenizer, _tight(model, 2, sizes)))
    bs._states.clear()
    metric._padded = True
    got = metric.score(EXAMPLES)
    for variant in exact:
        np.testing.assert_allclose(got[variant], exact[variant], rtol=0, atol=1e-5)
    assert sizes[0] > 2 and max(s for s in sizes[1:]) <= sizes[0] // 2 + 1 and 2 in sizes  # halved until it fit
    sizes.clear()
    monkeypatch.setattr(bs, "_load", lambda *args: (tokenizer, _tight(model, 0, sizes)))
    bs._states.clear()
    with pytest.raises(MetricError, match=r"one text of \d+ pieces does not fit on cpu; even alone it ran out of "
                                          r"memory \(CUDA out of memory"):
        metric.score(EXAMPLES[:1])
    bs._states.clear()


@pytest.fixture(scope="module")
def padded_encoder(minilm):
    encoder = Encoder("minilm", long="window")
    encoder._padded = True
    return encoder


@pytest.mark.parametrize("max_tokens", [None, 40])
def test_encoder_padded_path_agrees_with_the_exact_path(padded_encoder, max_tokens, monkeypatch):
    from meta_eval.metrics.encoder import load_encoder

    exact = load_encoder("minilm", long="window")
    texts = TEXTS + [" ".join(["cat"] * 700)]  # two windows
    if max_tokens:
        monkeypatch.setattr(padded_encoder, "max_tokens", max_tokens)
    a, b = exact.embed(texts), padded_encoder.embed(texts)
    for x, y in zip(a, b):
        assert x.tokens == y.tokens and x.word_ids == y.word_ids and x.special.tolist() == y.special.tolist()
        assert x.hidden.shape == y.hidden.shape and y.hidden.dtype == np.float32
        np.testing.assert_allclose(y.hidden, x.hidden, rtol=0, atol=1e-5)
    kept = padded_encoder.embed(texts, each=lambda states: states.layer(-1).copy())  # each: as on the CPU path
    for x, y in zip(a, kept):
        np.testing.assert_allclose(y, x.layer(-1), rtol=0, atol=1e-5)


@pytest.mark.parametrize("layer", [-1, 2, "mean", "all"])
def test_encoder_padded_path_brings_back_one_layer_when_asked(padded_encoder, layer):
    """The GPU's path with layer=: the layer taken (or the layers averaged) on the device, one layer brought back;
    within float32 rounding of the CPU path's, a two-window text included."""
    from meta_eval.metrics.encoder import load_encoder

    texts = TEXTS + [" ".join(["cat"] * 700)]
    exact = load_encoder("minilm", long="window").embed(texts)
    got = padded_encoder.embed(texts, layer=layer)
    for x, y in zip(exact, got):
        assert y.hidden.shape == (1, *x.hidden.shape[1:]) and y.hidden.dtype == np.float32 and y.held == layer
        np.testing.assert_allclose(y.layer(layer), x.layer(layer), rtol=0, atol=1e-5)


def test_encoder_out_of_memory_halves_the_batch(padded_encoder, monkeypatch):
    from meta_eval.metrics.encoder import load_encoder

    exact = load_encoder("minilm", long="window").embed(TEXTS)
    sizes: list = []
    monkeypatch.setattr(padded_encoder, "model", _tight(padded_encoder.model, 1, sizes))
    got = padded_encoder.embed(TEXTS)
    assert sizes[:3] == [len(TEXTS), len(TEXTS) // 2, 2] and set(sizes[-2:]) == {1}
    for x, y in zip(exact, got):
        np.testing.assert_allclose(y.hidden, x.hidden, rtol=0, atol=1e-5)
    monkeypatch.setattr(padded_encoder, "model", _tight(padded_encoder.model.inner, 0, sizes))
    with pytest.raises(MetricError, match=r"one text of \d+ pieces does not fit on cpu"):
        padded_encoder.embed(TEXTS[:1])


# -- the command line --------------------------------------------------------------------------------------------
def test_run_with_device_cpu_is_todays_run_and_cache(minilm, tmp_path):
    """``--device cpu`` is accepted with ROUGE beside BERTScore, prints today's signatures, and is served today's
    cache entries; the variable it set is gone after the command."""
    require_metrics("bertscore", model="minilm")
    data = small_set(tmp_path / "s.jsonl", 9)
    common = ["run", "-j", str(data), "-m", "rouge,bertscore", "-o", "model=minilm", "--cache", str(tmp_path / "c")]
    first = runner.invoke(app, common)
    assert first.exit_code == 0, first.output
    second = runner.invoke(app, [*common, "--device", "cpu", "--dtype", "fp32"])
    assert second.exit_code == 0, second.output
    assert "bertscore: 0 computed, 9 from cache" in second.output
    signatures = [re.findall(r"^\s*bertscore\|.*$", r.output, re.MULTILINE) for r in (first, second)]
    assert signatures[0] and signatures[0] == signatures[1]
    assert "META_EVAL_DEVICE" not in os.environ and "META_EVAL_DTYPE" not in os.environ


@pytest.mark.skipif(HAVE_CUDA, reason="checks the refusal where torch sees no CUDA GPU")
@pytest.mark.parametrize("args, message", [
    (["--device", "cuda"], "--device/$META_EVAL_DEVICE='cuda' asks for a CUDA GPU, but torch sees none here"),
    (["-o", "device=cuda"], "device='cuda' asks for a CUDA GPU, but torch sees none here"),
    (["--device", "tpu"], "--device/$META_EVAL_DEVICE='tpu' is not a device; choose one of auto, cpu, cuda, cuda:N"),
    (["--dtype", "bf16"], "--dtype/$META_EVAL_DTYPE='bf16' needs a CUDA GPU; on the CPU (device=cpu) only fp32"),
])
def test_a_device_that_is_not_here_is_one_clear_error(tmp_path, args, message):
    data = small_set(tmp_path / "s.jsonl", 6)
    res = runner.invoke(app, ["run", "-j", str(data), "-m", "rouge,bertscore", "-o", "model=minilm", "--no-cache", *args])
    assert res.exit_code == 2, res.output
    assert message in " ".join(res.output.split()) and "Traceback" not in res.output
    assert "META_EVAL_DEVICE" not in os.environ and "META_EVAL_DTYPE" not in os.environ


def test_device_never_concerns_rouge(tmp_path):
    """The setting applies to metrics that take ``device``: ROUGE alone runs whatever it says; ``-o device=`` is an
    option, refused when no chosen metric takes it."""
    data = small_set(tmp_path / "s.jsonl", 6)
    res = runner.invoke(app, ["run", "-j", str(data), "-m", "rouge", "--no-cache", "--device", "cuda:7"])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["run", "-j", str(data), "-m", "rouge", "--no-cache", "-o", "device=cpu"])
    assert res.exit_code == 2 and "no chosen metric takes the option(s) device" in res.output


@pytest.mark.parametrize("args, env, message", [
    (["--device", "gpu"], {},
     "--device/$META_EVAL_DEVICE='gpu' is not a device; choose one of auto, cpu, cuda, cuda:N"),
    (["--dtype", "bf17"], {},
     "--dtype/$META_EVAL_DTYPE='bf17' is not a precision; choose one of fp32, tf32, bf16, fp16"),
    ([], {"META_EVAL_DEVICE": "cuda:x"}, "--device/$META_EVAL_DEVICE='cuda:x' is not a device"),
])
def test_a_misspelt_device_is_an_error_even_where_no_metric_takes_one(tmp_path, monkeypatch, args, env, message):
    """A setting no chosen metric reads is not checked for a GPU (ROUGE with cuda:7 above), but a value that is no
    device at all is a typo, refused before anything is scored rather than ignored."""
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    data = small_set(tmp_path / "s.jsonl", 6)
    res = runner.invoke(app, ["run", "-j", str(data), "-m", "rouge", "--no-cache", *args])
    assert res.exit_code == 2, res.output
    assert message in " ".join(res.output.split()) and "Traceback" not in res.output
    assert "rouge1-f" not in res.output


@pytest.mark.parametrize("command", [["run"], ["score"], ["probe"], ["learn"], ["leaderboard", "publish"]])
def test_every_scoring_command_takes_device_and_dtype(command):
    res = runner.invoke(app, [*command, "--help"], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    assert "--device" in res.output and "--dtype" in res.output


# -- on a CUDA GPU (the lead runs these on a lent GPU) -----------------------------------------------------------------
GPU_EXAMPLES = [Example(f"the cat number {i} sat on the mat " + "and looked at the dog " * (i % 7),
                        (f"a cat {i} was sitting on a mat " + "near a dog " * (i % 5), "the dog ran away"))
                for i in range(60)] + EXAMPLES


@pytest.fixture(scope="module")
def gpu_model(tmp_path_factory):
    """The offline MiniLM where it is installed, else a tiny random BERT saved to a folder (a GPU machine may lack
    MiniLM's package: its weights are 90 MB): the comparisons below hold for any weights."""
    from meta_eval.metrics.encoder import model_unavailable_reason

    if model_unavailable_reason("minilm") is None:
        return "minilm"
    from conftest import make_tiny_bert

    return str(make_tiny_bert(tmp_path_factory.mktemp("tinybert") / "bert"))


@pytest.mark.cuda
@pytest.mark.parametrize("idf", ["false", "true"])
def test_gpu_fp32_agrees_with_the_cpu(gpu_model, idf):
    """GPU fp32 (TF32 off) vs the CPU: P, R and F within 1e-5 (the issue measured 1.5e-7 for F1)."""
    cpu = create("bertscore", model=gpu_model, device="cpu", idf=idf).score(GPU_EXAMPLES)
    gpu = create("bertscore", model=gpu_model, device="cuda", idf=idf).score(GPU_EXAMPLES)
    for variant in cpu:
        np.testing.assert_allclose(gpu[variant], cpu[variant], rtol=0, atol=1e-5, err_msg=variant)


@pytest.mark.cuda
def test_gpu_run_to_run_bit_identity(gpu_model):
    first = create("bertscore", model=gpu_model, device="cuda").score(GPU_EXAMPLES)
    bs._states.clear()
    second = create("bertscore", model=gpu_model, device="cuda").score(GPU_EXAMPLES)
    for variant in first:
        assert np.array_equal(first[variant], second[variant]), variant


@pytest.mark.cuda
def test_gpu_batch_composition_within_tolerance(gpu_model):
    """Other texts in a padded batch move a score in the last bits only: within 2e-5 whatever the budget and the
    rows scored together."""
    whole = create("bertscore", model=gpu_model, device="cuda").score(GPU_EXAMPLES)
    bs._states.clear()
    small = create("bertscore", model=gpu_model, device="cuda", max_tokens=64).score(GPU_EXAMPLES)
    bs._states.clear()
    parts = create("bertscore", model=gpu_model, device="cuda")
    pieces = [parts.score(GPU_EXAMPLES[k:k + 7]) for k in range(0, len(GPU_EXAMPLES), 7)]
    for variant in whole:
        joined = np.concatenate([p[variant] for p in pieces])
        np.testing.assert_allclose(small[variant], whole[variant], rtol=0, atol=2e-5, err_msg=variant)
        np.testing.assert_allclose(joined, whole[variant], rtol=0, atol=2e-5, err_msg=variant)


@pytest.mark.cuda
@pytest.mark.parametrize("dtype, tol", [("tf32", 3e-4), ("bf16", 3e-3), ("fp16", 1e-3)])
def test_gpu_reduced_precision_within_tolerance(gpu_model, dtype, tol):
    """Measured on an H200 (MiniLM's weights, a random roberta-large shape): F1 within 5.8e-5 (TF32), 6.7e-4 (bf16)
    and 9.7e-5 (fp16) of fp32; the tolerances here are 3 to 10 times wider."""
    fp32 = create("bertscore", model=gpu_model, device="cuda").score(GPU_EXAMPLES)
    low = create("bertscore", model=gpu_model, device="cuda", dtype=dtype).score(GPU_EXAMPLES)
    np.testing.assert_allclose(_f(low), _f(fp32), rtol=0, atol=tol)


@pytest.mark.cuda
def test_gpu_signature_names_device_dtype_and_cuda(gpu_model):
    cpu = create("bertscore", model=gpu_model, device="cpu").signature()
    gpu = create("bertscore", model=gpu_model, device="cuda", dtype="bf16").signature()
    name = torch.cuda.get_device_name(0)
    assert f"|device:cuda({name})|dtype:bf16|cuda:{torch.version.cuda}|" in gpu
    assert gpu != cpu and "|torch==" in gpu
    auto = create("bertscore", model=gpu_model).signature()
    assert "|dtype:fp32|" in auto and f"cuda({name})" in auto  # auto: the first GPU


@pytest.mark.cuda
def test_gpu_precision_sets_and_restores_tf32():
    from meta_eval.metrics.device import precision

    before = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
    with precision("cuda:0", "tf32"):
        assert torch.backends.cuda.matmul.allow_tf32 and torch.backends.cudnn.allow_tf32
    with precision("cuda:0", "fp32"):
        assert not torch.backends.cuda.matmul.allow_tf32 and not torch.backends.cudnn.allow_tf32
    with precision("cuda:0", "bf16"):
        assert torch.is_autocast_enabled("cuda") and not torch.backends.cuda.matmul.allow_tf32
    assert (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32) == before


@pytest.mark.cuda
def test_gpu_encoder_and_contextual_mover_agree_with_the_cpu(gpu_model):
    from meta_eval.metrics.encoder import load_encoder

    cpu, gpu = load_encoder(gpu_model).embed(TEXTS), load_encoder(gpu_model, device="cuda:0").embed(TEXTS)
    for x, y in zip(cpu, gpu):
        np.testing.assert_allclose(y.hidden, x.hidden, rtol=0, atol=1e-5 * float(np.abs(x.hidden).max()))
    for layer in (-1, "mean"):  # one layer brought back (the mean taken on the GPU)
        for x, y in zip(cpu, load_encoder(gpu_model, device="cuda:0").embed(TEXTS, layer=layer)):
            assert y.hidden.shape[0] == 1 and y.held == layer
            np.testing.assert_allclose(y.layer(layer), x.layer(layer), rtol=0,
                                       atol=1e-5 * float(np.abs(x.hidden).max()))
    examples = GPU_EXAMPLES[:20]
    for name in CONTEXTUAL:
        a = _one(create(name, model=gpu_model, device="cpu").score(examples))
        b = _one(create(name, model=gpu_model, device="cuda").score(examples))
        np.testing.assert_allclose(b, a, rtol=1e-4, atol=0, err_msg=name)


@pytest.mark.cuda
def test_gpu_cli_run(gpu_model, tmp_path):
    data = small_set(tmp_path / "s.jsonl", 12)
    res = runner.invoke(app, ["run", "-j", str(data), "-m", "bertscore", "-o", f"model={gpu_model}", "--device", "cuda",
                              "--no-cache"])
    assert res.exit_code == 0, res.output
    assert f"device:cuda({torch.cuda.get_device_name(0)})" in res.output


def test_batch_tokenization_is_sent_encode(minilm):
    """The GPU path tokenizes in one batch call: the same ids as bert-score's sent_encode, text by text (long texts
    cut at model_max_length, accents, punctuation, padding spaces); empty texts never reach it (scored 0 before)."""
    require_metrics("bertscore", model="minilm")
    from bert_score.utils import sent_encode

    metric = create("bertscore")
    tokenizer, _ = bs._load(str(metric._folder), metric.layer, metric.fast, True)
    texts = [*TEXTS, "  Café déjà vu, naïve résumé!  ", " ".join(["word"] * 900), "x" * 3000, "a\tb\nc"]
    assert bs._sent_ids(tokenizer, texts) == [sent_encode(tokenizer, t) for t in texts]
    assert max(len(i) for i in bs._sent_ids(tokenizer, texts)) == tokenizer.model_max_length
    assert bs._sent_ids(tokenizer, []) == []


def test_one_encoder_per_model_and_device(minilm):
    """The movers (device=cpu by name) and MoverScore (by position) share one loaded encoder on the CPU."""
    from meta_eval.metrics.encoder import load_encoder

    assert load_encoder("minilm") is load_encoder("minilm", device="cpu", dtype="fp32") is load_encoder("minilm",
                                                                                                      None)
    with pytest.raises(MetricError, match="needs a CUDA GPU"):
        load_encoder("minilm", dtype="bf16")
