"""Messages say true things, at the right time (issue: a hint naming an option the command lacks, a --baseline typo
reported only after all the scoring, an unknown metric without a suggestion).

- ``--baseline`` is checked against the chosen metrics' variants before anything is scored (the cache is never
  opened), with the closest names;
- an unknown metric name gets the closest known names;
- ``leaderboard publish`` has ``--duplicates`` (its error used to recommend it), and checks repeated pairs before
  scoring;
- ``--workers`` above this machine's cores is capped with a one-line warning (1000 once started 14 processes on 2
  cores), but not on a Ray cluster, whose CPUs are elsewhere.
"""
from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from meta_eval.cli import app
from conftest import require_module, small_set
from meta_eval.metrics import Metric, UnknownMetricError, create

# one pytest-xdist worker runs every test that starts Ray: a second local instance, or `ray stop --force`,
# on the same machine would meet the first
pytestmark = pytest.mark.xdist_group("ray")

runner = CliRunner()


def _flat(text: str) -> str:
    return " ".join(text.split())




def test_a_baseline_typo_is_reported_before_any_scoring_with_the_closest_variants(tmp_path):
    cache = tmp_path / "scores.sqlite"
    done = runner.invoke(app, ["run", "-j", str(small_set(tmp_path / "s.jsonl")), "-m", "rouge", "--baseline", "rougel-f",
                               "--cache", str(cache)])
    assert done.exit_code == 2
    assert "--baseline 'rougel-f' is not a variant of the chosen metrics (did you mean rougeL-f" in _flat(done.output)
    assert not cache.exists()  # nothing was scored


def test_a_baseline_of_a_metric_that_cannot_run_here_says_why(shared_data):
    """In a base install (no sacrebleu) ``-m ter,bleu --baseline ter`` said only "their variants: none"; the message
    now names the chosen metrics that cannot run and why (here: ROUGE on German candidates)."""
    done = runner.invoke(app, ["run", "-j", "wmt23", "--subset", "en-de", "-m", "rouge,chrf", "--baseline", "rougeL-f",
                               "--level", "system", "--data-dir", str(shared_data), "--no-cache"])
    assert done.exit_code == 2
    text = _flat(done.output)
    assert "--baseline 'rougeL-f' is not a variant of the chosen metrics; their variants: chrf" in text
    assert "; not run here: rouge: wmt23's candidates are de" in text


def test_an_unknown_metric_gets_the_closest_names():
    with pytest.raises(UnknownMetricError, match=r"unknown metric 'rogue' \(did you mean rouge"):
        create("rogue")
    with pytest.raises(UnknownMetricError) as info:
        create("zzzzzz")
    assert "did you mean" not in str(info.value)
    with pytest.raises(UnknownMetricError, match=r"unknown metric 'ROUGE' \(did you mean rouge\?\)"):
        create("ROUGE")


def test_an_unknown_name_in_metrics_says_each_thing_once(tmp_path):
    """``-m blue`` said "(did you mean bleu?); ; unknown metric 'blue' (did you mean bleu?); known metrics: ..."."""
    from typer.testing import CliRunner

    from conftest import small_set
    from meta_eval.cli import app

    data = small_set(tmp_path / "mine.jsonl")
    for name, close in (("blue", "bleu"), ("ROUGE", "rouge")):
        done = CliRunner().invoke(app, ["run", "-j", str(data), "-m", name, "--no-cache", "--resamples", "10"])
        text = _flat(done.output)
        assert done.exit_code == 2 and text.startswith(f"error: unknown metric or variant {name!r} (did you mean "
                                                       f"{close}?); known metrics: "), text
        assert "; ;" not in text and text.count("did you mean") == 1


def test_publish_has_the_duplicates_option_its_error_names_and_checks_before_scoring(tmp_path):
    data = small_set(tmp_path / "dup.jsonl", repeat=True)
    cache = tmp_path / "scores.sqlite"
    done = runner.invoke(app, ["leaderboard", "publish", "-j", str(data), "-m", "rouge", "--cache", str(cache),
                               "--out", str(tmp_path / "board")])
    assert done.exit_code == 2 and "--duplicates mean" in _flat(done.output)
    assert not cache.exists() and not (tmp_path / "board" / "results.json").exists()
    done = runner.invoke(app, ["leaderboard", "publish", "-j", str(data), "-m", "rouge", "--no-cache", "--resamples",
                               "20", "--duplicates", "first", "--out", str(tmp_path / "board")])
    assert done.exit_code == 0, done.output
    board = json.loads((tmp_path / "board" / "results.json").read_text())
    assert board["sets"][0]["n_rows"] == 15  # the first row of each of the 15 repeated pairs


def test_workers_above_the_cores_are_capped_with_a_warning_but_not_on_a_ray_cluster():
    from meta_eval.scoring.engines import LocalEngine, default_workers, make_engine

    cores = default_workers()
    with pytest.warns(UserWarning, match=f"--workers {cores + 998} is more than the {cores} core"):
        engine = make_engine("local", cores + 998)
    assert getattr(engine, "workers", 1) == cores
    if isinstance(engine, LocalEngine):
        engine.close()
    require_module("ray", "pip install 'meta-eval[ray]'")
    from meta_eval.scoring.engines import RayEngine

    assert RayEngine(workers=cores + 998, address="127.0.0.1:1").workers == cores + 998  # a cluster's CPUs
    assert make_engine("ray", cores + 998, "127.0.0.1:1").workers == cores + 998
    assert LocalEngine(cores + 1).workers == cores + 1  # asked for directly in Python: given


class NaNOnMarker(Metric):
    """NaN for a candidate holding ``MARK`` (module level: pool workers import it)."""

    name = "messages-nan"
    variants = ("x",)
    needs_references = False
    MARK = "marked"

    def _score(self, examples):
        return {"x": [float("nan") if self.MARK in ex.candidate else 1.0 for ex in examples]}


@pytest.mark.parametrize("batch_size", [1, 7, 256])
def test_a_non_finite_score_names_the_row_not_its_place_in_a_batch(tmp_path, batch_size):
    from meta_eval.scoring.runner import score_examples
    from meta_eval.metrics import MetricError

    from meta_eval import judgments

    path = small_set(tmp_path / "s.jsonl")
    lines = path.read_text(encoding="utf-8").splitlines()
    row = json.loads(lines[12])
    row["candidate"] = "a marked candidate"
    lines[12] = json.dumps(row)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    examples = judgments.load(str(path)).examples()
    with pytest.raises(MetricError, match=rf"messages-nan/x: non-finite score \(nan\) for {path}:13 \(id 'r12'\); a metric must"):
        score_examples(NaNOnMarker(), examples, None, batch_size)


def test_a_non_finite_score_from_a_worker_names_the_row(tmp_path):
    from meta_eval.scoring.engines import LocalEngine
    from meta_eval.scoring.runner import score_examples
    from meta_eval.metrics import MetricError

    from meta_eval import judgments

    path = small_set(tmp_path / "s.jsonl")
    text = path.read_text(encoding="utf-8").replace("the cat sat on the mat 3 ", "a marked cat ")
    path.write_text(text, encoding="utf-8")
    with LocalEngine(2, start_after=0) as engine:
        with pytest.raises(MetricError, match=rf"non-finite score \(nan\) for {path}:4 \(id 'r3'\);"):
            score_examples(NaNOnMarker(), judgments.load(str(path)).examples(), None, 2, engine=engine)


def test_a_builtin_set_takes_its_subset_after_a_colon_as_a_board_names_it(shared_data):
    """``run -j chaganty:all`` said "unknown judgment set" although ``leaderboard publish`` takes that name."""
    from meta_eval import judgments
    from meta_eval.judgments import JudgmentError

    colon = judgments.load("chaganty:all", shared_data)
    assert (colon.name, colon.subset, len(colon)) == ("chaganty", "all", len(judgments.load("chaganty", shared_data,
                                                                                          subset="all")))
    with pytest.raises(JudgmentError, match="chaganty:all names the subset 'all' and --subset another, 'sms'"):
        judgments.load("chaganty:all", shared_data, subset="sms")
    with pytest.raises(JudgmentError, match="chaganty has subsets sms, all, not 'nope'"):
        judgments.load("chaganty:nope", shared_data)
