"""``meta-eval leaderboard probe`` on boards built from a user's file and with imported scores.

- a board records a set's name, never a local path: a set published from a file is probed from the file given with
  ``-j``, and without it the error says so (with the path the board's command read) instead of "unknown judgment
  set";
- the board's imported metrics (``--scores``) cannot score perturbed texts: they are listed as not probed, with the
  reason, in blindspots.json and on both pages (they used to vanish: ``"skipped": []``);
- publishing again (``--force``) keeps blindspots.json while it matches the board, and removes it, saying so, when
  the board no longer has a set it probed.

Everything runs through the real command line on small files in ``tmp_path``.
"""
from __future__ import annotations

import json

from typer.testing import CliRunner

from conftest import small_set
from meta_eval.cli import app
from meta_eval.leaderboard.publish import publish
from meta_eval.probe.board import IMPORTED

runner = CliRunner()


def _flat(text: str) -> str:
    return " ".join(text.split())


def _board(tmp_path, metrics: str, scores=()):
    """A board of the user's file ``mine.jsonl``, published by the library (its recorded command is then the
    equivalent command line, ``-j`` as given)."""
    data, board = small_set(tmp_path / "mine.jsonl"), tmp_path / "board"
    publish(str(data), board, metrics, resamples=20, no_cache=True, progress=False, scores=scores)
    return data, board


def _probe(board, *extra: str):
    return runner.invoke(app, ["leaderboard", "probe", str(board), "--perturbations", "sentence-reversal",
                               "--resamples", "20", "--no-cache", *extra])


def test_a_board_from_a_file_is_probed_from_the_file_given_with_j(tmp_path):
    data, board = _board(tmp_path, "rouge")
    assert str(tmp_path) not in json.dumps(json.loads((board / "results.json").read_text())["sets"])
    done = _probe(board)
    assert done.exit_code == 2
    assert _flat(done.output) == (f"error: {board / 'results.json'}: its set 'mine' was published from a file, not a "
                                  "built-in set, and a board records the set's name only, never a local path: give "
                                  f"the file with `meta-eval leaderboard probe {board} -j FILE` (the board's command "
                                  f"read {data})")
    assert not (board / "blindspots.json").exists()
    other = small_set(tmp_path / "other.jsonl")
    done = _probe(board, "-j", str(other))
    assert done.exit_code == 2 and _flat(done.output) == (
        f"error: -j {other}: not one of the board's sets (mine); -j gives the files of the sets the board was "
        "published from")

    done = _probe(board, "-j", str(data))
    assert done.exit_code == 0, done.output
    blind = json.loads((board / "blindspots.json").read_text())
    (probed,) = blind["sets"]
    assert (probed["judgments"], probed["subset"], probed["n_items"]) == ("mine", "all", 10)
    assert {c["metric"] for c in probed["cells"]} == {"rouge"}
    assert "### mine (all): 10 items" in (board / "README.md").read_text()


def test_imported_metrics_are_listed_as_not_probed_with_the_reason(tmp_path):
    scores = tmp_path / "imp.jsonl"
    scores.write_text("".join(json.dumps({"id": f"r{i}", "score": i % 7}) + "\n" for i in range(30)))
    data, board = _board(tmp_path, "rouge,imp", [f"imp={scores}"])
    done = _probe(board, "-j", str(data))
    assert done.exit_code == 0, done.output
    (probed,) = json.loads((board / "blindspots.json").read_text())["sets"]
    assert probed["skipped"] == [{"metric": "imp", "reason": IMPORTED}]
    assert {c["metric"] for c in probed["cells"]} == {"rouge"}
    assert f"Metric not probed: imp ({IMPORTED})." in (board / "README.md").read_text()
    assert (f"Metric not probed: imp ({IMPORTED})".replace("'", "&#x27;")
            in (board / "index.html").read_text())

    only = tmp_path / "only"
    done = runner.invoke(app, ["leaderboard", "publish", "-j", str(data), "-m", "imp", "--scores", f"imp={scores}",
                               "--resamples", "20", "--no-cache", "--out", str(only)])
    assert done.exit_code == 0, done.output
    done = _probe(only, "-j", str(data))
    assert done.exit_code == 2 and _flat(done.output) == (
        f"error: {only / 'results.json'}: no metric of mine (all) can be probed: imp: {IMPORTED}; name metrics "
        "with -m")


def test_publishing_over_a_probed_board_knows_its_blindspots(tmp_path):
    """blindspots.json is a board file (``leaderboard probe`` wrote it): publishing again without --force says the
    folder holds a leaderboard, not that meta-eval did not write it; with --force the blind spots are kept."""
    data, board = _board(tmp_path, "rouge")
    assert _probe(board, "-j", str(data)).exit_code == 0
    again = runner.invoke(app, ["leaderboard", "publish", "-j", str(data), "-m", "rouge", "--resamples", "20",
                                "--no-cache", "--out", str(board)])
    assert again.exit_code == 2
    assert _flat(again.output) == (f"error: --out {board} already holds a leaderboard; pass --force to replace it "
                                   "(compare with `git diff` afterwards if it is committed)")
    kept = (board / "blindspots.json").read_text()
    forced = runner.invoke(app, ["leaderboard", "publish", "-j", str(data), "-m", "rouge", "--resamples", "20",
                                 "--no-cache", "--out", str(board), "--force"])
    assert forced.exit_code == 0, forced.output
    assert (board / "blindspots.json").read_text() == kept and "## Blind spots" in (board / "README.md").read_text()


def test_publishing_other_sets_over_a_probed_board_removes_its_stale_blindspots(tmp_path):
    """--force over a probed board with a set no longer on it: blindspots.json (meta-eval's own file) is removed
    with the write and not shown, and the command says so in one line (its README showed "Blind spots" of a set the
    board no longer had)."""
    data, board = _board(tmp_path, "rouge")
    assert _probe(board, "-j", str(data)).exit_code == 0
    other = small_set(tmp_path / "other.jsonl")
    forced = runner.invoke(app, ["leaderboard", "publish", "-j", str(other), "-m", "rouge", "--resamples", "20",
                                 "--no-cache", "--out", str(board), "--force"])
    assert forced.exit_code == 0, forced.output
    assert (f"note: {board / 'blindspots.json'} removed: it probed sets or metrics no longer on the board as "
            "published (mine (all): not a set of the board); run `meta-eval leaderboard probe "
            f"{board}` again for the board's blind spots") in _flat(forced.output)
    assert not (board / "blindspots.json").exists()
    assert "Blind spots" not in (board / "README.md").read_text()
    assert "Blind spots" not in (board / "index.html").read_text()
    assert _probe(board, "-j", str(other)).exit_code == 0  # as the note says
    assert "### other (all): 10 items" in (board / "README.md").read_text()


def test_the_credential_advice_names_how_probe_takes_a_built_in_set():
    from meta_eval.probe.board import _probe_source

    assert _probe_source({"judgments": "wmt21-mqm-ted", "subset": "en-de"}) == "-j wmt21-mqm-ted --subset en-de"
    assert _probe_source({"judgments": "mine", "subset": "all"}) == "-j FILE (the file of set mine)"


def test_a_board_probes_only_the_file_it_was_published_from(tmp_path):
    """A board records a set's name, never its path: ``-j`` gives the file. Any file of that stem was accepted (a
    board of 30 rows showed blind spots of another file's rows); the board now records the file's SHA-256."""
    import hashlib

    data, board = _board(tmp_path, "rouge")
    doc = json.loads((board / "results.json").read_text())
    assert doc["sets"][0]["file_sha256"] == hashlib.sha256(data.read_bytes()).hexdigest()
    (tmp_path / "elsewhere").mkdir()
    other = small_set(tmp_path / "elsewhere" / "mine.jsonl", rows=12)  # the same set name, other rows
    done = _probe(board, "-j", str(other))
    assert done.exit_code == 2
    assert _flat(done.output).startswith(f"error: -j {other}: not the file the board's set 'mine' was published from")
    assert not (board / "blindspots.json").exists()
    assert _probe(board, "-j", str(data)).exit_code == 0
