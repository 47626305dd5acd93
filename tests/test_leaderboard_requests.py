"""Leaderboards refuse what they cannot publish honestly, before anything is scored, and write only their own files.

- a learned metric fitted on a board's rows (in-sample) is refused with ``run``'s in-sample message: a board ranks
  held-out correlations and tests them; held-out rows publish it;
- an imported metric named in ``-m`` with a score file for some sets only is an error naming the set without one
  (it used to be an "unknown metric" after the other sets were scored);
- two sets of one name and subset (``s.jsonl`` and ``o/s.jsonl``) are refused, naming both files: their figures
  overwrote each other;
- the board's figures go through the guarded write path as its other files: an input in its ``figures/`` folder is
  refused even with ``--force`` (a ``--scores`` file there was replaced by an SVG), and a figure meta-eval did not
  write is named by the message that asks for ``--force`` and replaced only then (``render`` refuses it);

Everything runs through the real command line on small files in ``tmp_path``; "before any scoring" is checked by
the score cache, which is never created.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import small_set
from meta_eval.cli import app
from meta_eval.metrics.learned import ENV_HOME
from meta_eval.report.outputs import written_by_meta_eval

runner = CliRunner()


def _flat(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    """Learned models go to a temporary META_EVAL_HOME, never the user's data dir."""
    monkeypatch.setenv(ENV_HOME, str(tmp_path / "home"))
    return tmp_path / "home"


def _publish(*args: str):
    return runner.invoke(app, ["leaderboard", "publish", "--resamples", "20", *args])


def test_an_in_sample_learned_metric_is_refused_before_scoring_and_a_held_out_one_published(tmp_path):
    data = small_set(tmp_path / "mine.jsonl")
    fitted = runner.invoke(app, ["learn", "-j", str(data), "-m", "rouge", "--features", "rougeL-f,rouge1-f",
                                 "--save", "fit", "--no-cache"])
    assert fitted.exit_code == 0, fitted.output
    cache, out = tmp_path / "scores.sqlite", tmp_path / "board"
    done = _publish("-j", str(data), "-m", "rouge,learned:fit", "--cache", str(cache), "--out", str(out))
    said = _flat(done.output)
    assert done.exit_code == 2, said
    assert ("error: learned:fit: in-sample: fitted on mine/all (target overall); 30 of the 30 rows scored here were "
            "among its 30 training rows; these correlations are not held-out; a leaderboard publishes held-out "
            "correlations only, so learned:fit is not published on") in said
    assert not cache.exists() and not out.exists()  # refused before any scoring; the folder made for it removed

    other = tmp_path / "other.jsonl"  # the same documents and systems, other texts: no row of the model's
    other.write_text("".join(json.dumps({**json.loads(line), "candidate": f"a dog ran in the park {i}"}) + "\n"
                             for i, line in enumerate(data.read_text().splitlines())), encoding="utf-8")
    done = _publish("-j", str(other), "-m", "rouge,learned:fit", "--cache", str(cache), "--out", str(out))
    assert done.exit_code == 0, done.output
    board = json.loads((out / "results.json").read_text())
    assert "learned:fit" in {m["variant"] for m in board["sets"][0]["metrics"]}


def test_an_imported_metric_without_a_file_for_every_set_is_refused_before_scoring(tmp_path):
    first, second = small_set(tmp_path / "first.jsonl"), small_set(tmp_path / "second.jsonl", rows=24)
    scores = tmp_path / "mine.jsonl"
    scores.write_text("".join(json.dumps({"id": f"r{i}", "score": i % 7}) + "\n" for i in range(30)))
    cache = tmp_path / "scores.sqlite"
    done = _publish("-j", f"{first},{second}", "-m", "rouge,mine", "--scores", f"{first}/mine={scores}",
                    "--cache", str(cache), "--out", str(tmp_path / "board"))
    assert done.exit_code == 2
    assert _flat(done.output) == (
        f"error: --scores: no score file was given for 'mine' on {second} (only on {first}), and every set of a "
        f"board scores every metric of -m: give one with --scores {second}/mine=FILE, or publish {second} on a "
        "board of its own")
    assert not cache.exists()  # nothing was scored
    scoped = tmp_path / "second-mine.jsonl"
    scoped.write_text("".join(json.dumps({"id": f"r{i}", "score": i % 5}) + "\n" for i in range(24)))
    done = _publish("-j", f"{first},{second}", "-m", "rouge,mine", "--scores", f"{first}/mine={scores}",
                    "--scores", f"{second}/mine={scoped}", "--cache", str(cache), "--out", str(tmp_path / "board"))
    assert done.exit_code == 0, done.output  # the fix the message gives works
    board = json.loads((tmp_path / "board" / "results.json").read_text())
    assert [("mine" in {m["metric"] for m in s["metrics"]}) for s in board["sets"]] == [True, True]


def test_two_sets_of_one_name_and_subset_are_refused_before_scoring(tmp_path):
    # s.jsonl and o/s.jsonl are both set "s" (all): the second's figures overwrote the first's, probe mixed them
    first = small_set(tmp_path / "s.jsonl")
    (tmp_path / "o").mkdir()
    second = small_set(tmp_path / "o" / "s.jsonl", rows=24)
    cache, out = tmp_path / "scores.sqlite", tmp_path / "board"
    done = _publish("-j", f"{first},{second}", "-m", "rouge", "--cache", str(cache), "--out", str(out))
    assert done.exit_code == 2
    assert _flat(done.output) == (
        f"error: -j {first} and {second} are both the set 's' (subset 'all'); a board names a set by its name (a "
        "file's stem) and subset, so two sets of one board must differ in one of them (e.g. rename one file); "
        "nothing was scored")
    assert not cache.exists() and not out.exists()
    renamed = second.rename(tmp_path / "o" / "s2.jsonl")  # the fix the message gives works
    done = _publish("-j", f"{first},{renamed}", "-m", "rouge", "--cache", str(cache), "--out", str(out))
    assert done.exit_code == 0, done.output
    assert [s["judgments"] for s in json.loads((out / "results.json").read_text())["sets"]] == ["s", "s2"]


def test_an_input_in_the_boards_figures_folder_is_never_replaced_even_with_force(tmp_path):
    data, out, cache = small_set(tmp_path / "mine.jsonl"), tmp_path / "board", tmp_path / "scores.sqlite"
    (out / "figures").mkdir(parents=True)
    scores = out / "figures" / "mine-all-global-spearman.svg"  # named like the figure the board would write
    text = "".join(json.dumps({"id": f"r{i}", "score": i % 7}) + "\n" for i in range(30))
    scores.write_text(text, encoding="utf-8")
    done = _publish("-j", str(data), "-m", "rouge,imp", "--scores", f"imp={scores}", "--scores-format", "jsonl",
                    "--cache", str(cache), "--out", str(out), "--force")
    assert done.exit_code == 2
    assert _flat(done.output) == (f"error: --out {out}: its folder figures, whose files meta-eval writes, holds a "
                                  f"--scores file of this run ({scores}): writing there could replace it; move the "
                                  "file out of it, or choose another folder")
    assert scores.read_text(encoding="utf-8") == text and not cache.exists()
    assert sorted(p.name for p in out.rglob("*")) == ["figures", scores.name]


def test_a_figure_meta_eval_did_not_write_is_named_before_force_replaces_it_and_render_keeps_it(tmp_path):
    pytest.importorskip("matplotlib")  # the board's figures (the plot extra)
    data, out = small_set(tmp_path / "mine.jsonl"), tmp_path / "board"
    (out / "figures").mkdir(parents=True)
    users = out / "figures" / "mine-all-global-spearman.svg"
    users.write_text("<svg>my own figure</svg>", encoding="utf-8")
    done = _publish("-j", str(data), "-m", "rouge", "--no-cache", "--out", str(out))
    assert done.exit_code == 2
    assert ("pass --force to write results.json, README.md, index.html and the figures (figures/*.svg) into it "
            "anyway (files of those names are replaced, among them figures/mine-all-global-spearman.svg, which "
            "meta-eval did not write)") in _flat(done.output)
    assert users.read_text(encoding="utf-8") == "<svg>my own figure</svg>"
    done = _publish("-j", str(data), "-m", "rouge", "--no-cache", "--out", str(out), "--force")
    assert done.exit_code == 0, done.output
    assert written_by_meta_eval(users)  # replaced, as the message said --force would

    users.write_text("<svg>my own figure</svg>", encoding="utf-8")
    again = _publish("-j", str(data), "-m", "rouge", "--no-cache", "--out", str(out))
    assert again.exit_code == 2 and ("--force also replaces figures/mine-all-global-spearman.svg, which meta-eval "
                                     "did not write, where the board has a figure of that name") in _flat(again.output)
    readme = (out / "README.md").read_bytes()
    done = runner.invoke(app, ["leaderboard", "render", str(out)])  # render has no --force: it never replaces it
    assert done.exit_code == 2
    assert _flat(done.output) == (f"error: leaderboard render {out}: figures/mine-all-global-spearman.svg exists and "
                                  "meta-eval did not write it, and the board has a figure of that name: move that "
                                  "file out of the board's figures/ folder; nothing of the board was written")
    assert users.read_text(encoding="utf-8") == "<svg>my own figure</svg>"
    assert (out / "README.md").read_bytes() == readme


def test_a_board_of_imported_metrics_only_is_published(tmp_path):
    # -m naming only imported metrics scores nothing (as `run`); publishing then ended in a traceback
    data, scores = small_set(tmp_path / "mine.jsonl"), tmp_path / "imp.jsonl"
    scores.write_text("".join(json.dumps({"id": f"r{i}", "score": i % 7}) + "\n" for i in range(30)))
    done = _publish("-j", str(data), "-m", "imp", "--scores", f"imp={scores}", "--no-cache", "--out",
                    str(tmp_path / "board"))
    assert done.exit_code == 0, done.output
    (section,) = json.loads((tmp_path / "board" / "results.json").read_text())["sets"]
    assert [m["variant"] for m in section["metrics"]] == ["imp"] and section["not_measured"] == {}


def test_publish_help_says_what_resamples_governs_and_what_it_does_not():
    # SPA's own permutations per system pair are fixed (the signature's perm:1000), whatever --resamples says
    import typer

    from meta_eval.leaderboard.publish import N_PERMUTATIONS, publication_signature

    publish_command = typer.main.get_command(app).commands["leaderboard"].commands["publish"]
    (resamples,) = [p for p in publish_command.params if p.name == "resamples"]
    assert resamples.help.startswith("Resamples of every bootstrap interval (the human ceilings' too) and of every "
                                     "permutation test; not the 1,000 permutations behind each system pair's p-value "
                                     "inside SPA, which are fixed")
    assert f"{N_PERMUTATIONS:,}" in resamples.help and f"perm:{N_PERMUTATIONS}" in resamples.help
    assert f"spa(system,perm:{N_PERMUTATIONS})" in publication_signature(200, 0, 0.95, 0.05, "holm", "spearman")


@pytest.mark.parametrize("args, message", [
    (["-j", ","], "error: --judgments ',' names no set: give one or more, comma-separated"),
    (["--alpha", "0"], "error: --alpha must be a number in (0, 1) (the significance clusters' level), not 0.0"),
    (["--alpha", "nan"], "error: --alpha must be a number in (0, 1)"),
])
def test_no_set_or_an_alpha_outside_0_1_is_refused_before_scoring(tmp_path, args, message):
    """``-j ,`` wrote an empty board with exit 0 (which probe and index then refused); ``--alpha 0`` was refused
    by the cluster step after every set had been scored."""
    data, cache, out = small_set(tmp_path / "mine.jsonl"), tmp_path / "scores.sqlite", tmp_path / "board"
    given = args if args[0] == "-j" else ["-j", str(data), *args]
    done = _publish(*given, "-m", "rouge", "--cache", str(cache), "--out", str(out))
    assert done.exit_code == 2 and _flat(done.output).startswith(message), done.output
    assert not cache.exists() and not out.exists()
