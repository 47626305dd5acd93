"""The committed leaderboards (leaderboard/<set>/results.json) match a fresh run's numbers.

A fresh run recomputes every metric that is cheap to score here (ROUGE, COCO ROUGE-L, GloVe WMS/SMS/S+WMS, BLEU, chrF,
TextRank, Novelty):
their scores, their correlations at every level and their bootstrap intervals (the resampled indices do not depend
on which metrics are scored, so the intervals of a subset are the same numbers) must equal the committed ones. The
neural metrics are recomputed on two small blocks (qags cnndm: BERTScore against sources; frank xsum-test: BERTScore
and the contextual movers), not everywhere (minutes of CPU), and TER nowhere; for every metric the committed
significance ranks must follow from the committed p-values by the cluster rule.
"""
from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import numpy as np
import pytest

import conftest
from meta_eval import judgments
from meta_eval.leaderboard.publish import SCHEMA, set_results
from meta_eval.stats import zero_resolution
from meta_eval.stats.clusters import significance_clusters
from meta_eval.scoring.runner import score_examples
from meta_eval.scoring.selection import build as _build, metric_config as _metric_config
from meta_eval.scoring.system_scores import add_system_scores
from meta_eval.metrics.registry import get_class

BOARDS = sorted((Path(__file__).resolve().parents[1] / "leaderboard").glob("*/results.json"))
# TER is left out with the neural metrics: sacrebleu's TER takes minutes on these sets (0.1 s per summary row)
CHEAP = ("rouge", "rouge-coco", "wms", "sms", "s+wms", "bleu", "chrf", "textrank", "novelty", "length")
WITH_ANNOTATORS = ("chaganty", "essays", "qags")  # sets whose rows keep every annotator's score


def _options(command: str) -> dict[str, str]:
    """The ``-o KEY=VALUE`` options of the board's command (e.g. qags: ``ref=source``)."""
    words = shlex.split(command)
    return dict(words[i + 1].split("=", 1) for i, w in enumerate(words[:-1]) if w in ("-o", "--option"))


def _without_mode(signature: str) -> str:
    """A signature without its numeric mode (``num:...``, metrics/numeric.py)."""
    return "|".join(p for p in signature.split("|") if not p.startswith("num:"))


def _config_part(signature: str) -> str:
    return "|".join(p for p in signature.split("|") if not re.search(r"==", p))


def _compare(block: dict, fresh_levels: dict, tol: float = 1e-6) -> int:
    """Assert that every variant of a fresh run has the committed correlation, interval (and acc-t epsilon) at every
    level and statistic of ``block`` that the fresh run computed (within ``tol``: another machine's last bits), and
    the same ceiling; return how many matched."""
    checked = 0
    for b in block["levels"]:
        fresh_block = fresh_levels.get((b["level"], b["statistic"]))
        if fresh_block is None:
            continue
        fresh_ceiling, ceiling = fresh_block["ceiling"], b["ceiling"]  # numbers within tol: boards published
        assert {k: v for k, v in fresh_ceiling.items() if k not in ("value", "ci")} == \
            {k: v for k, v in ceiling.items() if k not in ("value", "ci")}, (b["level"], b["statistic"])
        assert fresh_ceiling.get("value") == pytest.approx(ceiling.get("value"), abs=tol)  # before session 35 kept
        assert fresh_ceiling.get("ci") == pytest.approx(ceiling.get("ci"), abs=tol)  # 6 decimals
        mine = {r["variant"]: r for r in fresh_block["results"]}
        for r in b["results"]:
            if r["variant"] in mine:
                where = (b["level"], b["statistic"], r["variant"])
                assert mine[r["variant"]]["r"] == pytest.approx(r["r"], abs=tol), where
                assert mine[r["variant"]]["ci"] == pytest.approx(r["ci"], abs=tol), where
                assert mine[r["variant"]].get("epsilon") == pytest.approx(r.get("epsilon"), abs=tol), where
                checked += 1
    return checked


# built-in sets whose board is not published yet; remove a name when its board is committed
NO_BOARD_YET: tuple[str, ...] = ()


def test_every_set_has_a_committed_leaderboard():
    boards = {b.parent.name for b in BOARDS}
    assert boards >= set(judgments.BUILTIN) - set(NO_BOARD_YET)
    assert not boards & set(NO_BOARD_YET), "a board is committed now: take its set out of NO_BOARD_YET"
    assert set(NO_BOARD_YET) <= set(judgments.BUILTIN)


@pytest.mark.parametrize("board", BOARDS, ids=[b.parent.name for b in BOARDS])
def test_committed_boards_carry_the_wmt_statistics_and_the_ceiling(board):
    doc = json.loads(board.read_text())
    for block in doc["sets"]:
        have = {(b["level"], b["statistic"]) for b in block["levels"]}
        if block["n_systems"] == 0:  # JUDGE-BENCH's files: no systems, the global level only, the raters' alpha
            assert {level for level, _ in have} <= {"global"} and "human_agreement" in block
            continue
        if block["judgments"] not in ("essays", "qags"):  # one prompt / one system per subset: only global levels
            assert {("system", "accuracy"), ("system", "spa"), ("summary", "acc-t")} <= have
        assert all("ceiling" in b for b in block["levels"])
        ceilings = [b["ceiling"]["value"] for b in block["levels"]]
        if block["judgments"] in WITH_ANNOTATORS:  # per-annotator scores: a ceiling everywhere
            assert all(c is not None for c in ceilings)
        else:
            assert all(c is None for c in ceilings) and "annotator" in block["levels"][0]["ceiling"]["note"]
        if (block["judgments"], block["subset"]) == ("wmt21-mqm-ted", "en-de"):  # English-only metrics: not run
            skipped = {k["metric"]: k["reason"] for k in block["skipped"]}
            assert {"rouge", "wms", "bertscore", "moverscore"} <= set(skipped)
            assert all("candidates are de" in r for r in skipped.values())


@pytest.mark.parametrize("board", BOARDS, ids=[b.parent.name for b in BOARDS])
def test_committed_numbers_match_a_fresh_run(board, shared_data):
    doc = json.loads(board.read_text())
    assert doc["schema"] == SCHEMA
    meta = doc["meta_evaluation"]
    unchecked: list[str] = []  # blocks whose recomputable metrics all need an extra that is not installed
    for block in doc["sets"]:
        if "kind" in block:  # a label property: compared with `meta-eval run` itself in tests/test_judge_bench_board.py
            continue
        name = block["judgments"].split(":", 1)[0]  # judge-bench:newsroom -> judge-bench, subset newsroom
        jset = judgments.load(name, shared_data, subset=block["subset"]).scored(block["human"])
        assert len(jset) == block["n_rows"] and block["task"] == jset.task
        committed_sigs = {m["metric"]: m["signature"] for m in block["metrics"]}
        wanted = [name for name in CHEAP if name in committed_sigs]
        assert wanted, "a leaderboard without any recomputable metric"
        if conftest.on_ci():  # everything is installed there; elsewhere check what the installed extras can score
            conftest.require_metrics(*wanted)
        cheap = [name for name in wanted if get_class(name).unavailable_reason() is None]
        if not cheap:  # e.g. wmt en-de without sacrebleu: only BLEU and chrF are cheap and language-agnostic
            unchecked.append(f"{block['judgments']}:{block['subset']}")
            continue
        options = _options(doc["command"])
        metrics = [_build(get_class(name), _metric_config(get_class(name), options)) for name in cheap]
        scored = [score_examples(metric, jset.examples()) for metric in metrics]  # with the options the CLI gave
        add_system_scores(scored, metrics, jset)  # as publish does: BLEU, chrF, TER's corpus system scores
        for ms in scored:
            assert _config_part(ms.signature) == _config_part(committed_sigs[ms.metric])
        common = dict(n_resamples=meta["n_resamples"], seed=meta["seed"], confidence=meta["confidence"],
                      primary=meta["primary"], pairwise=False)
        # the correlations of every cheap variant; the WMT statistics (SPA's 1000 permutations, acc-t's calibration
        # in every resample: minutes per variant on a WMT set) of one variant, the first cheap one of the board
        fresh = set_results(jset, block["human"], scored, extra=False, **common)
        committed_variants = {m["variant"] for m in block["metrics"]}
        one = next(v for ms in scored for v in ms.scores if v in committed_variants)
        fresh_extra = set_results(jset, block["human"], scored, variant_filter=lambda v: v == one, **common)
        fresh_levels = {(b["level"], b["statistic"]): b for b in fresh["levels"]}
        fresh_levels.update({(b["level"], b["statistic"]): b for b in fresh_extra["levels"] if not b.get("correlation")})
        checked = _compare(block, fresh_levels)
        for b in block["levels"]:
            if b["pairwise"]:
                pw = b["pairwise"]
                corr = {r["variant"]: r["r"] for r in b["results"]}
                P = np.array([[np.nan if x is None else x for x in row] for row in pw["p"]], dtype=float)
                ranks, _ = significance_clusters(pw["variants"], [corr[v] for v in pw["variants"]], P,
                                                 alpha=pw["alpha"], correction=pw["correction"],
                                                 n_resamples=zero_resolution(pw["test"], b["n_resamples"]))
                assert dict(ranks) == {r["variant"]: r["rank"] for r in b["results"]}
        assert checked > 0
    conftest.require(not unchecked, f"the extras of the cheap metrics of {', '.join(unchecked)}",
                     "pip install 'meta-eval[sacrebleu,coco]'")



# the smallest blocks with each kind of neural input: whole source documents (qags, ref=source, up to MiniLM's 512
# pieces) and short references (frank xsum-test: one-sentence summaries)
NEURAL_BLOCKS = [("qags", "cnndm", ("bertscore",)), ("frank", "xsum-test", ("bertscore", "wms-ctx", "sms-ctx"))]


@pytest.mark.parametrize("name, subset, names", NEURAL_BLOCKS, ids=[f"{n}:{s}" for n, s, _ in NEURAL_BLOCKS])
def test_committed_neural_numbers_match_a_fresh_run(name, subset, names, shared_data):
    """The neural metrics too, on small blocks: BERTScore and the contextual movers on MiniLM states must give the
    committed correlations and intervals. Boards are built in runner batches from whatever the cache holds, so this
    holds only because those scores do not depend on the batch (the encoder and BERTScore never pad; see
    tests/test_encoder_invariance.py); before that, a board built from a warm cache differed from a cold one in the
    sixth decimal. Skipped, naming both, where the installed transformers or torch differ from the versions in the
    board's signatures (another version may round differently).

    The boards were computed in the portable numeric mode (``num:portable``: the same bits on every x86-64 CPU with
    AVX2, metrics/numeric.py), so they reproduce to the printed digit on AVX2 and AVX-512 machines alike. Where that
    mode is not in force (``META_EVAL_NUMERIC=native``, another architecture) the signatures are compared without
    their numeric part and the correlations within ``conftest.CORRELATION_TOL``: a few last-bit changes can swap
    near-tied ranks."""
    for module, fix in (("torch", "pip install torch==2.13.0"), ("bert_score", "pip install 'meta-eval[bertscore]'")):
        conftest.require_module(module, fix)
    conftest.require_minilm()
    board = next(b for b in BOARDS if b.parent.name == name)
    doc = json.loads(board.read_text())
    block = next(b for b in doc["sets"] if b["subset"] == subset)
    committed_sigs = {m["metric"]: m["signature"] for m in block["metrics"]}
    options = _options(doc["command"])
    metrics = [_build(get_class(m), _metric_config(get_class(m), options)) for m in names]
    libraries = ("transformers==", "tokenizers==", "torch==")
    for metric in metrics:
        mine = {p for p in metric.signature().split("|") if p.startswith(libraries)}
        theirs = {p for p in committed_sigs[metric.name].split("|") if p.startswith(libraries)}
        if mine != theirs:
            pytest.skip(f"the board was built with {sorted(theirs)}; this machine has {sorted(mine)}")
    meta = doc["meta_evaluation"]
    jset = judgments.load(name, shared_data, subset=subset).scored(block["human"])
    scored = [score_examples(metric, jset.examples()) for metric in metrics]
    exact, why = conftest.same_bits()
    for ms in scored:
        if exact:
            assert ms.signature == committed_sigs[ms.metric]
        else:
            assert _without_mode(ms.signature) == _without_mode(committed_sigs[ms.metric]), why
    fresh = set_results(jset, block["human"], scored, extra=False, n_resamples=meta["n_resamples"],
                        seed=meta["seed"], confidence=meta["confidence"], primary=meta["primary"], pairwise=False)
    tol = 1e-6 if exact else conftest.CORRELATION_TOL
    assert _compare(block, {(b["level"], b["statistic"]): b for b in fresh["levels"]}, tol) >= len(names)


@pytest.mark.parametrize("board", BOARDS, ids=[b.parent.name for b in BOARDS])
def test_committed_pages_are_rendered_from_their_results(board):
    """README.md and index.html are exactly what the renderer makes of results.json (`meta-eval leaderboard render`
    refreshes them without scoring), and every figure the README shows is committed."""
    from meta_eval.leaderboard.render import render_html, render_readme
    from meta_eval.probe.board import read_blindspots

    doc = json.loads(board.read_text())
    folder = board.parent
    blind = read_blindspots(folder)  # the Blind spots section, where the board has a blindspots.json
    readme = (folder / "README.md").read_text(encoding="utf-8")
    shown = re.findall(r"\]\((figures/[^)]+\.svg)\)", readme)
    assert readme == render_readme(doc, figures=bool(shown), blindspots=blind)
    assert (folder / "index.html").read_text(encoding="utf-8") == render_html(doc, set(shown), blindspots=blind)
    conftest.require(bool(shown) or not conftest.on_ci(), "the boards' figures", "meta-eval leaderboard render")
    for name in shown:
        svg = (folder / name).read_text(encoding="utf-8")
        assert svg.startswith("<?xml") and "human '" in svg


@pytest.mark.parametrize("board", BOARDS, ids=[b.parent.name for b in BOARDS])
def test_committed_blindspots_are_consistent(board):
    """A committed blindspots.json (``meta-eval leaderboard probe``) probes the board's own sets, with metrics whose
    signatures (library versions aside) the current code still gives under the board's options, perturbations at
    their current versions, counts that add up and its heatmaps committed (:func:`meta_eval.probe.board
    .check_blindspots`); a board without one passes."""
    from meta_eval.probe.board import check_blindspots

    assert check_blindspots(board.parent) == []