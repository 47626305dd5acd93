"""Resampling spread over engines (meta_eval/scoring/chunks.py): the same seed gives bit-identical numbers in this
process,
over 2 and 3 local worker processes and over 2 Ray workers, for the bootstrap and permutation loops of
meta_eval/stats/resampling.py, meta_eval/stats/pairwise.py and meta_eval/stats/spa.py; progress is reported once per
chunk.

The data are shaped so that every resampling has several chunks (chunk sizes depend only on the data's shape), so
the chunks really are computed in different processes; ``start_after=0`` starts the pool at once.
"""
from __future__ import annotations

import json
import os

import numpy as np
import pytest
from typer.testing import CliRunner

from conftest import require_metrics, require_module
from meta_eval.stats import pairwise, resampling, spa
from meta_eval.scoring.chunks import run_chunks, spread
from meta_eval.scoring.engines import RAY_HINT, LocalEngine, make_engine

# one pytest-xdist worker runs every test that starts Ray: a second local instance, or `ray stop --force`,
# on the same machine would meet the first
pytestmark = pytest.mark.xdist_group("ray")

DOCS, SYSTEMS = 2000, 8


def _data():
    rng = np.random.default_rng(7)
    Z = rng.normal(size=(DOCS, SYSTEMS)) + np.linspace(0, 1, SYSTEMS)
    X = np.stack([Z + s * rng.normal(size=Z.shape) for s in (0.5, 1.0, 2.0)])
    return X, Z


CASES = {
    "correlation bootstrap (summary)": lambda X, Z: resampling.bootstrap_samples(X, Z, "summary", "spearman",
                                                                                 n_resamples=300, seed=3),
    "correlation permutation test": lambda X, Z: np.array(
        resampling.permutation_test(X[0], X[1], Z, "system", "pearson", n_resamples=300, seed=4)),
    "pairwise bootstrap (system accuracy)": lambda X, Z: pairwise.bootstrap_samples(X, Z, "system", "accuracy",
                                                                                    n_resamples=300, seed=5),
    "pairwise permutation test": lambda X, Z: np.array(
        pairwise.permutation_test(X[0], X[2], Z, "system", "accuracy", n_resamples=300, seed=6)),
    "spa bootstrap": lambda X, Z: spa.spa_bootstrap_samples(X, Z, n_resamples=200, n_permutations=100, seed=8),
}


def _bits(a) -> list[int]:
    return np.ascontiguousarray(a, dtype=np.float64).view(np.int64).ravel().tolist()


@pytest.fixture(scope="module")
def serial():
    X, Z = _data()
    out = {}
    for name, case in CASES.items():
        calls = []
        with spread(None, lambda label, done, total: calls.append((label, done, total))):
            out[name] = (_bits(case(X, Z)), calls)
    return out


@pytest.fixture(scope="module")
def engines():
    made = {"local-2": LocalEngine(2, start_after=0), "local-3": LocalEngine(3, start_after=0)}
    yield made
    for engine in made.values():
        engine.close()


@pytest.fixture(scope="module")
def ray_engine():
    require_module("ray", RAY_HINT)
    with make_engine("ray", workers=2) as engine:
        yield engine


def test_every_case_has_several_chunks_and_reports_each(serial):
    for name, (_, calls) in serial.items():
        totals = {total for _, _, total in calls}
        assert len(totals) >= 1 and min(totals) >= 3, (name, totals)  # several chunks per resampling
        by_label: dict[str, list[int]] = {}
        for label, done, total in calls:
            by_label.setdefault(label, []).append(done)
        for label, dones in by_label.items():
            assert dones[-1] == max(dones), (name, label)


@pytest.mark.parametrize("which", ["local-2", "local-3", "ray-2"])
@pytest.mark.parametrize("name", list(CASES))
def test_same_seed_same_numbers_whatever_the_engine_and_workers(name, which, serial, engines, request):
    engine = request.getfixturevalue("ray_engine") if which == "ray-2" else engines[which]
    X, Z = _data()
    calls = []
    with spread(engine, lambda label, done, total: calls.append((label, done, total))):
        got = _bits(CASES[name](X, Z))
    assert got == serial[name][0]
    # the same chunks, reported once each (in the order they finished)
    assert sorted(calls) == sorted(serial[name][1])


def test_chunks_really_run_in_worker_processes(engines):
    with spread(engines["local-2"]):
        pids = run_chunks("pids", _pid_after, (0.2,), [(i,) for i in range(12)])
    assert [i for i, _ in pids] == list(range(12))  # results in task order
    assert os.getpid() in {p for _, p in pids} and len({p for _, p in pids}) == 2


def _pid_after(pause: float, i: int) -> tuple[int, int]:
    import time

    time.sleep(pause)
    return i, os.getpid()


def test_a_chunk_error_reaches_the_caller_unchanged(engines):
    with spread(engines["local-2"]), pytest.raises(ValueError, match="chunk 5 is bad"):
        run_chunks("bad", _fails_at, (5,), [(i,) for i in range(8)])


def _fails_at(bad: int, i: int) -> int:
    if i == bad:
        raise ValueError(f"chunk {i} is bad")
    return i


def test_cli_summary_level_same_numbers_with_one_or_two_workers(shared_data, tmp_path):
    from meta_eval.cli import app

    docs = []
    for workers in (1, 2):
        out = tmp_path / f"w{workers}.json"
        result = CliRunner().invoke(app, ["run", "-j", "chaganty", "-m", "rouge", "--level", "summary",
                                          "--resamples", "200", "--workers", str(workers), "--data-dir",
                                          str(shared_data), "--no-cache", "--output", str(out)])
        assert result.exit_code == 0, result.output
        docs.append(json.loads(out.read_text()))
    assert docs[0]["results"] == docs[1]["results"] and docs[0]["ceiling"] == docs[1]["ceiling"]


def test_cli_publish_same_board_with_one_or_two_workers(shared_data, tmp_path):
    require_metrics("bleu", "chrf")
    from meta_eval.cli import app

    boards = []
    for workers in (1, 2):
        out = tmp_path / f"board{workers}"
        result = CliRunner().invoke(app, ["leaderboard", "publish", "-j", "qags:cnndm", "-m", "bleu,chrf", "-o",
                                          "ref=source", "--resamples", "50", "--workers", str(workers),
                                          "--data-dir", str(shared_data), "--no-cache", "--out", str(out)])
        assert result.exit_code == 0, result.output
        boards.append(json.loads((out / "results.json").read_text()))
    assert boards[0]["sets"] == boards[1]["sets"]
