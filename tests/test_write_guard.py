"""One write path: every file meta-eval writes goes through meta_eval.report.outputs.OutputPlan (issue #36, item 1).

Each command builds one plan from all its inputs and all its outputs before any loading or scoring; the plan refuses an
output that is an input of the run or lies in the judgment data folder (the given one and the default one, whatever
``-j`` names; even with ``--force``), a file meta-eval did not write (unless ``--force``; its own figures are
recognised by their metadata), two outputs on one path, and a place where nothing can be written; the files are then
written atomically. :func:`test_every_path_option_of_every_command_goes_through_the_guard` enumerates every
path-typed option of the typer app, so an option added later without the guard (or not classified as an input)
fails it. Everything runs through the real CLI (CliRunner) or the real library calls, on files in ``tmp_path``.
"""
from __future__ import annotations

import contextlib
import json
import os
import typing
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from conftest import small_set
from meta_eval.cli import app
from meta_eval.errors import MetaEvalError
from meta_eval.report.outputs import OutputError, written_by_meta_eval

runner = CliRunner()
HAVE_MATPLOTLIB = __import__("importlib.util").util.find_spec("matplotlib") is not None
needs_matplotlib = pytest.mark.skipif(not HAVE_MATPLOTLIB, reason="the plot extra: pip install 'meta-eval[plot]'")

#: Options that name files or folders meta-eval only reads (never written; outputs are checked against them).
INPUTS = {("run", "--judgments"), ("run", "--protocol"), ("run", "--scores"), ("run", "--data-dir"),
          ("run", "--cache"), ("run", "--plugin"),
          ("score", "--candidates"), ("score", "--references"), ("score", "--sources"), ("score", "--input"),
          ("score", "--cache"), ("score", "--plugin"),
          ("probe", "--judgments"), ("probe", "--data-dir"), ("probe", "--cache"), ("probe", "--plugin"),
          ("metrics", "--plugin"), ("judgments", "path"), ("judgments", "--judgments"), ("judgments", "--data-dir"),
          ("learn", "--judgments"), ("learn", "--scores"), ("learn", "--data-dir"), ("learn", "--cache"),
          ("learn", "--plugin"),
          ("leaderboard publish", "--judgments"), ("leaderboard publish", "--scores"),
          ("leaderboard publish", "--data-dir"), ("leaderboard publish", "--cache"),
          ("leaderboard publish", "--plugin"),
          ("leaderboard probe", "--judgments"), ("leaderboard probe", "--data-dir"), ("leaderboard probe", "--cache")}
#: str options whose names sound like paths but are not (a format, a policy, a protocol's name).
NOT_PATHS = {("run", "--scores-format"), ("run", "--scores-missing"), ("learn", "--protocol"),
             ("learn", "--scores-format"), ("leaderboard publish", "--scores-format")}
_PATH_WORDS = ("judgments", "path", "protocol", "scores", "save", "out", "plot", "file", "dir", "root", "cache",
               "store", "answers")

#: Every output option: (the file or folder name it is given in the data folder, the rest of its command line).
#: ``{data}`` is the user's judgment file, ``{cache}`` the cache of the run (never created when refused).
OUTPUTS = {
    ("run", "--output"): ("essays.jsonl", ["run", "-j", "{data}", "-m", "rouge", "--cache", "{cache}", "--force"]),
    ("run", "--scores-out"): ("essays.jsonl", ["run", "-j", "{data}", "-m", "rouge", "--cache", "{cache}",
                                               "--force"]),
    ("run", "--plot"): ("figure.png", ["run", "-j", "{data}", "-m", "rouge", "--cache", "{cache}", "--force"]),
    ("score", "--output"): ("essays.jsonl", ["score", "-i", "{data}", "-m", "rouge", "--cache", "{cache}",
                                             "--force"]),
    ("probe", "--output"): ("essays.jsonl", ["probe", "-j", "{data}", "-m", "rouge", "--cache", "{cache}",
                                             "--force"]),
    ("probe", "--plot"): ("figure.png", ["probe", "-j", "{data}", "-m", "rouge", "--cache", "{cache}", "--force"]),
    ("learn", "--output"): ("essays.jsonl", ["learn", "-j", "{data}", "-m", "rouge", "--cache", "{cache}",
                                             "--force"]),
    ("learn", "--save"): ("model.json", ["learn", "-j", "{data}", "-m", "rouge", "--cache", "{cache}", "--force"]),
    ("leaderboard publish", "--out"): ("board", ["leaderboard", "publish", "-j", "{data}", "-m", "rouge",
                                                 "--cache", "{cache}", "--force"]),
    ("judgments", "--export"): ("essays.jsonl", ["judgments", "{data}", "--force"]),
    ("leaderboard probe", "out_dir"): (".", ["leaderboard", "probe", "--cache", "{cache}"]),
    ("leaderboard render", "out_dir"): (".", ["leaderboard", "render"]),
    ("leaderboard index", "--root"): (".", ["leaderboard", "index", "--force"]),
}
FOLDERS = {("leaderboard publish", "--out"), ("leaderboard probe", "out_dir"), ("leaderboard render", "out_dir"),
           ("leaderboard index", "--root")}


def _commands():
    def walk(cmd, prefix=()):
        if hasattr(cmd, "commands"):
            for name, sub in cmd.commands.items():
                yield from walk(sub, (*prefix, name))
        else:
            yield " ".join(prefix), cmd
    yield from walk(typer.main.get_command(app))


def _is_path(hint) -> bool:
    return hint is Path or any(_is_path(a) for a in typing.get_args(hint))


def path_options() -> list[tuple[str, str, bool]]:
    """(command, option, typed as a path) of every option and argument that is a path or is named like one."""
    found = []
    for command, cmd in _commands():
        hints = typing.get_type_hints(cmd.callback)
        for param in cmd.params:
            flag = next((o for o in param.opts if o.startswith("--")), param.name)
            typed = _is_path(hints.get(param.name))
            if typed or (hints.get(param.name) in (str, typing.Optional[str], list[str])
                         and any(w in param.name for w in _PATH_WORDS)):
                found.append((command, flag, typed))
    return found


def _line(command: str, option: str, target: Path, data: Path, cache: Path) -> list[str]:
    _, argv = OUTPUTS[(command, option)]
    argv = [a.replace("{data}", str(data)).replace("{cache}", str(cache)) for a in argv]
    if option.startswith("--"):
        return [*argv, option, str(target)]
    return [*argv, str(target)]  # an argument: the folder


def _flat(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture
def world(tmp_path, monkeypatch):
    """A user's judgment file, and a judgment data folder ($META_EVAL_DATA) holding a built-in set's file."""
    data = small_set(tmp_path / "mine.jsonl")
    folder = tmp_path / "judgments"
    (folder / "essays").mkdir(parents=True)
    (folder / "essays.jsonl").write_text('{"id": "e1"}\n', encoding="utf-8")
    monkeypatch.setenv("META_EVAL_DATA", str(folder))
    return data, folder, tmp_path / "cache.sqlite"


def _contents(folder: Path) -> dict:
    return {p: p.read_bytes() if p.is_file() else None for p in sorted(folder.rglob("*"))}


def test_every_path_option_of_every_command_goes_through_the_guard(world):
    data, folder, cache = world
    options = path_options()
    unknown = [(c, o) for c, o, _ in options if (c, o) not in INPUTS | NOT_PATHS | set(OUTPUTS)]
    assert not unknown, (f"path options neither guarded outputs nor known inputs: {unknown}; an output must go "
                         "through meta_eval.report.outputs.OutputPlan (add it to OUTPUTS here), an input to INPUTS")
    assert {(c, o) for c, o, typed in options if typed} >= {k for k in OUTPUTS if k[1] != "--save"}
    before = _contents(folder)
    for (command, option), (name, _) in OUTPUTS.items():
        target = folder / name if name != "." else folder
        done = runner.invoke(app, _line(command, option, target, data, cache))
        message = _flat(done.output)
        assert done.exit_code == 2, (command, option, done.output)
        assert "Traceback" not in done.output and "is inside the judgment data folder" in message, (command, option,
                                                                                                 message)
        assert not cache.exists(), (command, option)  # refused before anything was scored or cached
        assert _contents(folder) == before, (command, option)


def test_every_output_file_refuses_a_users_file_without_force_and_an_input_even_with_it(world, tmp_path):
    data, folder, cache = world
    for (command, option), (name, argv) in OUTPUTS.items():
        if (command, option) in FOLDERS:
            continue
        suffix = Path(name).suffix
        mine = tmp_path / f"mine-{option.strip('-')}{suffix}"
        mine.write_bytes(b"\x89PNG mine" if suffix == ".png" else b"the user's own file\n")
        line = [a for a in _line(command, option, mine, data, cache) if a != "--force"]
        done = runner.invoke(app, line)
        assert done.exit_code == 2 and "meta-eval did not write it" in _flat(done.output), (command, option,
                                                                                           done.output)
        assert mine.read_bytes().endswith(b"mine") or mine.read_bytes() == b"the user's own file\n"
        if "{cache}" not in argv:  # scores nothing (judgments --export): its input is the judgment file
            done = runner.invoke(app, _line(command, option, data, data, cache))
            assert done.exit_code == 2 and "is the judgment file of this run" in _flat(done.output), done.output
            continue
        as_cache = tmp_path / f"cache{suffix}"  # the run's cache under the output's name: an input, even forced
        line = [as_cache if a == str(cache) else a for a in _line(command, option, as_cache, data, cache)]
        done = runner.invoke(app, [str(a) for a in line])
        assert done.exit_code == 2 and "is the score cache of this run" in _flat(done.output), (command, option,
                                                                                                done.output)
        assert not as_cache.exists() and not cache.exists()


def test_run_output_over_a_builtin_sets_file_is_refused_even_with_force(world):
    # data loss: `run -j mine.jsonl --output <a built-in set's file in the data folder> --force` overwrote it
    data, folder, cache = world
    essays = folder / "essays.jsonl"
    for extra in (["--output", str(essays)], ["--scores-out", str(essays)]):
        done = runner.invoke(app, ["run", "-j", str(data), "-m", "rouge", "--no-cache", "--force", *extra])
        assert done.exit_code == 2, done.output
        assert f"{essays} is inside the judgment data folder ({folder})" in _flat(done.output)
    assert essays.read_text(encoding="utf-8") == '{"id": "e1"}\n'
    other = folder.parent / "elsewhere"  # --data-dir elsewhere: the default data folder is still protected
    done = runner.invoke(app, ["run", "-j", str(data), "-m", "rouge", "--no-cache", "--force", "--data-dir",
                               str(other), "--output", str(essays)])
    assert done.exit_code == 2 and "is inside the judgment data folder" in _flat(done.output), done.output


def test_probe_output_into_the_data_folder_is_refused_even_with_force(world):
    data, folder, cache = world
    essays = folder / "essays.jsonl"
    done = runner.invoke(app, ["probe", "-j", str(data), "-m", "rouge", "--cache", str(cache), "--force",
                               "--output", str(essays)])
    assert done.exit_code == 2 and "is inside the judgment data folder" in _flat(done.output), done.output
    assert essays.read_text(encoding="utf-8") == '{"id": "e1"}\n' and not cache.exists()


@needs_matplotlib
def test_plot_never_replaces_a_users_figure_without_force_but_replaces_its_own(world, tmp_path):
    data, folder, cache = world
    mine = tmp_path / "holiday.png"
    mine.write_bytes(b"\x89PNG\r\n\x1a\n a user's picture")
    base = ["run", "-j", str(data), "-m", "rouge", "--no-cache", "--workers", "1"]
    done = runner.invoke(app, [*base, "--plot", str(mine)])
    assert done.exit_code == 2 and f"--plot {mine} exists and meta-eval did not write it" in _flat(done.output)
    assert mine.read_bytes() == b"\x89PNG\r\n\x1a\n a user's picture"
    done = runner.invoke(app, ["probe", "-j", str(data), "-m", "rouge", "--no-cache", "--plot", str(mine)])
    assert done.exit_code == 2 and "meta-eval did not write it" in _flat(done.output), done.output
    assert mine.read_bytes() == b"\x89PNG\r\n\x1a\n a user's picture"
    for name in ("own.png", "own.svg", "own.pdf"):  # meta-eval's own figures: replaced without --force
        own = tmp_path / name
        for _ in range(2):
            done = runner.invoke(app, [*base, "--plot", str(own)])
            assert done.exit_code == 0, done.output
        assert written_by_meta_eval(own)
    done = runner.invoke(app, [*base, "--plot", str(mine), "--force"])
    assert done.exit_code == 0 and written_by_meta_eval(mine), done.output


@needs_matplotlib
def test_plot_never_writes_over_the_cache_or_into_the_data_folder(world, tmp_path):
    data, folder, cache = world
    png_cache = tmp_path / "scores.png"
    png_cache.write_bytes(b"SQLite format 3\x00")
    done = runner.invoke(app, ["run", "-j", str(data), "-m", "rouge", "--cache", str(png_cache), "--force",
                               "--plot", str(png_cache)])
    assert done.exit_code == 2 and "is the score cache of this run" in _flat(done.output), done.output
    assert png_cache.read_bytes() == b"SQLite format 3\x00"
    done = runner.invoke(app, ["run", "-j", str(data), "-m", "rouge", "--cache", str(cache), "--force",
                               "--plot", f"pvalues:{folder / 'essays' / 'p.svg'}"])
    assert done.exit_code == 2 and "is inside the judgment data folder" in _flat(done.output), done.output
    assert not (folder / "essays" / "p.svg").exists() and not cache.exists()


def test_plot_where_nothing_can_be_written_fails_before_scoring(world, tmp_path):
    # a traceback after all the scoring, before: under a file, in a read-only folder
    data, folder, cache = world
    blocker = tmp_path / "a-file"
    blocker.write_text("x", encoding="utf-8")
    for argv in (["run", "-j", str(data), "-m", "rouge", "--cache", str(cache), "--plot", str(blocker / "f.png")],
                 ["probe", "-j", str(data), "-m", "rouge", "--cache", str(cache), "--plot",
                  str(blocker / "f.png")]):
        done = runner.invoke(app, argv)
        assert done.exit_code == 2 and "Traceback" not in done.output, done.output
        assert f"{blocker} is a file, not a folder" in _flat(done.output)
        assert not cache.exists()


@contextlib.contextmanager
def read_only_folder(tmp_path):
    """A folder where no file can be created: a 0555 folder, or for root (who writes into one) ``/sys``, where the
    kernel lets no one create a regular file."""
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        yield Path("/sys")
        return
    locked = tmp_path / "read-only"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        yield locked
    finally:
        locked.chmod(0o755)


def test_plot_into_a_read_only_folder_fails_before_scoring(world, tmp_path):
    data, folder, cache = world
    with read_only_folder(tmp_path) as locked:
        done = runner.invoke(app, ["run", "-j", str(data), "-m", "rouge", "--cache", str(cache), "--plot",
                                   str(locked / "f.png")])
        assert done.exit_code == 2 and "cannot write there" in _flat(done.output), done.output
        assert not cache.exists()


@pytest.mark.parametrize("argv", [
    ["--output", "{t}/x.jsonl", "--scores-out", "{t}/x.jsonl"],
    ["--output", "{t}/x.svg", "--plot", "{t}/x.svg"],
    ["--plot", "{t}/a.png", "--plot", "pvalues:{t}/a.png"],
    ["--scores-out", "{t}/s.csv", "--output", "{t}/link.csv"],  # link.csv: a symbolic link to s.csv
    ["--output", "{t}/sub/../fig.png", "--plot", "scatter:{t}/fig.png"],
])
def test_two_outputs_of_one_run_on_one_path_are_refused(world, tmp_path, argv):
    data, folder, cache = world
    (tmp_path / "link.csv").symlink_to(tmp_path / "s.csv")
    argv = [a.replace("{t}", str(tmp_path)) for a in argv]
    done = runner.invoke(app, ["run", "-j", str(data), "-m", "rouge", "--cache", str(cache), "--force", *argv])
    assert done.exit_code == 2 and "Traceback" not in done.output, done.output
    assert "one output would replace the other" in _flat(done.output), done.output
    assert not cache.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["judgments", "link.csv", "mine.jsonl"]


@pytest.mark.parametrize("command, first, second, name", [("probe", "--output", "--plot", "x.svg"),
                                                          ("learn", "--save", "--output", "m.json")])
def test_two_outputs_of_probe_or_learn_on_one_path_are_refused(world, tmp_path, command, first, second, name):
    data, folder, cache = world
    same = tmp_path / name
    done = runner.invoke(app, [command, "-j", str(data), "-m", "rouge", "--cache", str(cache), first, str(same),
                               second, str(same)])
    assert done.exit_code == 2 and "one output would replace the other" in _flat(done.output), done.output
    assert not same.exists() and not cache.exists()


def test_bad_api_arguments_are_meta_eval_errors_with_the_cli_sentence(tmp_path):
    import meta_eval

    with pytest.raises(MetaEvalError, match="give --judgments SET"):
        meta_eval.run(None)
    with pytest.raises(MetaEvalError, match="--judgments must be a built-in set's name or a .jsonl file's path, "
                                            "not 42"):
        meta_eval.run(42)
    data = small_set(tmp_path / "mine.jsonl")
    with pytest.raises(MetaEvalError, match="--out must name a folder, not None"):
        meta_eval.publish(str(data), None, "rouge", no_cache=True)
    with pytest.raises(MetaEvalError, match="--output must be a path"):
        meta_eval.run(str(data), "rouge", no_cache=True, output=3.5)
    with pytest.raises(MetaEvalError, match="--judgments must be"):
        meta_eval.learn(7, "rouge", no_cache=True)
    assert not (tmp_path / "None").exists()


@needs_matplotlib
def test_run_result_plot_where_it_cannot_write_raises_output_error(tmp_path):
    import meta_eval

    data = small_set(tmp_path / "mine.jsonl")
    result = meta_eval.run(str(data), "rouge", no_cache=True, workers=1, progress=False)
    blocker = tmp_path / "a-file"
    blocker.write_text("x", encoding="utf-8")
    with pytest.raises(OutputError, match=f"{blocker / 'f.png'}: cannot create the folder {blocker}, {blocker} is a "
                                          "file, not a folder"):  # the --plot check (session 37), before drawing
        result.plot("intervals", blocker / "f.png")
    with pytest.raises(MetaEvalError, match="plot\\(\\)'s path must be a path"):
        result.plot("intervals", 42)
    result.plot("intervals", tmp_path / "ok.pdf")
    assert written_by_meta_eval(tmp_path / "ok.pdf")
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary file left


@needs_matplotlib
def test_run_result_plot_to_a_read_only_folder_raises_output_error(tmp_path):
    import meta_eval

    data = small_set(tmp_path / "mine.jsonl")
    result = meta_eval.run(str(data), "rouge", no_cache=True, workers=1, progress=False)
    with read_only_folder(tmp_path) as locked:
        with pytest.raises(OutputError, match="cannot write"):
            result.plot("intervals", locked / "f.png")


def _board(folder: Path, doc) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "results.json").write_text(json.dumps(doc), encoding="utf-8")
    return folder


SCHEMA = "meta-eval-leaderboard/2"


@pytest.mark.parametrize("doc, says", [
    ({"schema": SCHEMA}, '"sets" must be a list of set blocks, not missing'),
    ([1, 2], "not a leaderboard: a JSON list, not an object"),
    ({"schema": SCHEMA, "sets": {"a": 1}}, '"sets" must be a list of set blocks, not dict'),
    ({"schema": SCHEMA, "sets": [3]}, "set block 1 is a int, not an object"),
    ({"schema": SCHEMA, "sets": [{"judgments": "x"}]}, "set block 1 lacks subset, levels"),
    ({"schema": SCHEMA, "sets": [{"judgments": "x", "subset": "all", "levels": [{"level": "global"}]}]},
     "a malformed leaderboard"),
])
def test_render_and_index_name_a_malformed_results_json(tmp_path, doc, says):
    root = tmp_path / "boards"
    board = _board(root / "b", doc)
    for argv in (["leaderboard", "render", str(board)], ["leaderboard", "index", "--root", str(root)]):
        done = runner.invoke(app, argv)
        assert done.exit_code == 2 and "Traceback" not in done.output, (argv, done.output)
        message = _flat(done.output)
        assert f"{board / 'results.json'}" in message and says in message, (argv, message)
    assert sorted(p.name for p in board.iterdir()) == ["results.json"]


@needs_matplotlib
def test_meta_evals_figures_are_recognised_and_a_users_are_not(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from meta_eval.report.figures import save_figure

    for suffix in (".png", ".svg", ".pdf"):
        ours, theirs = tmp_path / f"ours{suffix}", tmp_path / f"theirs{suffix}"
        save_figure(plt.figure(), ours)
        plt.figure().savefig(theirs)
        assert written_by_meta_eval(ours) and not written_by_meta_eval(theirs), suffix


def test_a_store_meta_eval_creates_is_never_in_the_data_folder_nor_the_cache(world, tmp_path):
    from meta_eval.report.outputs import check_store

    data, folder, cache = world
    with pytest.raises(OutputError, match="is inside the judgment data folder"):
        check_store(folder / "answers.sqlite")
    with pytest.raises(OutputError, match="is the score cache of this run"):
        check_store(cache, cache=cache)
    store = tmp_path / "answers.sqlite"
    store.write_bytes(b"SQLite format 3\x00")  # its owner's file: accepted, left as it is
    assert check_store(store) == store and store.read_bytes() == b"SQLite format 3\x00"
