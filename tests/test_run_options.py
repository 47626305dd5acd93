"""``run`` refuses an empty value and an option it would take and ignore, naming the option, before any scoring
(audit, session 36): ``--statistic ""``, ``--level ""``, ``--subset ""`` and ``--text ""`` were silently the
defaults; ``--control foo`` was told it needs the level and statistic it had; ``--scores-format`` and
``--scores-missing`` without ``--scores``, and ``--system-score`` off the system level, were taken and ignored."""
from __future__ import annotations

import pytest
from typer.testing import CliRunner

from conftest import small_set
from meta_eval.cli import app

runner = CliRunner()


@pytest.mark.parametrize("args, message", [
    (["--statistic", ""], "error: --statistic is empty: give a value or leave the option out"),
    (["--level", " "], "error: --level is empty"),
    (["--subset", ""], "error: --subset is empty"),
    (["--text", ""], "error: --text is empty"),
    (["--control", "foo"], "error: --control 'foo': the only control is system"),
    (["--scores-format", "csv"], "error: --scores-format reads the --scores files: give --scores NAME=FILE"),
    (["--scores-missing", "drop"], "error: --scores-missing reads the --scores files"),
    (["--system-score", "corpus"], "error: --system-score corpus forms the system-level scores: it needs --level "
                                   "system, not global"),
    (["--allow-in-sample"], "error: --allow-in-sample tests a learned:NAME metric on the rows its model was fitted "
                            "on: -m names no learned metric"),  # session 37: taken and ignored
])
def test_an_empty_or_ignored_option_is_refused_before_scoring(tmp_path, args, message):
    data, cache = small_set(tmp_path / "mine.jsonl"), tmp_path / "scores.sqlite"
    done = runner.invoke(app, ["run", "-j", str(data), "-m", "rouge", "--resamples", "10", "--cache", str(cache),
                               *args])
    said = " ".join(done.output.split())
    assert done.exit_code == 2 and said.startswith(message) and "Traceback" not in done.output, done.output
    assert not cache.exists()


def test_the_same_options_where_they_apply_still_run(tmp_path, shared_data):
    cache = tmp_path / "scores.sqlite"
    for args in (["--level", "system", "--system-score", "mean"], ["--control", "system", "--statistic", "pearson"]):
        done = runner.invoke(app, ["run", "-j", "chaganty", "--data-dir", str(shared_data), "--limit", "200", "-m",
                                   "rouge", "--resamples", "10", "--cache", str(cache), *args])
        assert done.exit_code == 0, done.output


@pytest.mark.parametrize("argv, message", [
    (["score", "-m", "rouge", "--seed", "7"], "error: --seed seeds --sample's draw: give --sample N"),
    (["judgments", "chaganty", "--force"], "error: --force replaces an --export file: give --export FILE"),
    (["judgments", "--subset", "all"], "error: --subset chooses a subset of a set: give the set"),
])
def test_score_and_judgments_refuse_an_option_they_would_ignore(tmp_path, argv, message):
    if argv[0] == "score":
        argv = [*argv, "-i", str(small_set(tmp_path / "in.jsonl")), "--no-cache"]
    done = runner.invoke(app, argv)
    assert done.exit_code == 2 and " ".join(done.output.split()).startswith(message), done.output


def test_permutations_belong_to_spa(tmp_path):
    """``--permutations`` counts SPA's permutations; with another statistic it was taken and ignored."""
    data, cache = small_set(tmp_path / "mine.jsonl"), tmp_path / "scores.sqlite"
    done = runner.invoke(app, ["run", "-j", str(data), "-m", "rouge", "--resamples", "10", "--cache", str(cache),
                               "--permutations", "50"])
    assert done.exit_code == 2 and " ".join(done.output.split()).startswith(
        "error: --permutations counts SPA's permutations; --statistic spearman does not draw them"), done.output
    assert not cache.exists()
