"""Nothing of the user's is ever overwritten (meta_eval/report/outputs.py, through the real CLI).

Every output path (``--output`` of run/score/learn, ``learn --save``) is checked before any work: it must not be an
input of the run (the judgment file, the score cache, the texts scored, a file given with ``-o``; also through a
symbolic or a hard link), nor lie in the judgment data folder of a built-in set, even with ``--force``; an existing
file that meta-eval did not write is replaced only with ``--force``; a file meta-eval wrote (marked JSON, a learned
model, a score file) is replaced by the next run. Each refusal is one line naming both paths, exit code 2, and the
input is byte for byte what it was.
"""
from __future__ import annotations

import json
import os

from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from meta_eval.cli import app
from conftest import small_set
from meta_eval.report.outputs import MARKER, check_output, OutputError, with_marker, write_json, written_by_meta_eval

runner = CliRunner()




def _refused(argv: list[str], *must: str) -> None:
    done = runner.invoke(app, argv)
    message = " ".join(done.output.split())
    assert done.exit_code == 2, done.output
    assert "Traceback" not in done.output
    for part in must:
        assert part in message, (part, message)


def test_the_judgment_file_is_never_an_output_even_through_links_or_with_force(tmp_path):
    data = small_set(tmp_path / "mine.jsonl")
    before = data.read_bytes()
    (tmp_path / "soft.jsonl").symlink_to(data)
    os.link(data, tmp_path / "hard.jsonl")
    for out in ("mine.jsonl", "soft.jsonl", "hard.jsonl"):
        _refused(["run", "-j", str(data), "-m", "rouge", "--no-cache", "--force", "--output", str(tmp_path / out)],
                 f"{tmp_path / out} is the judgment file of this run", str(data))
    assert data.read_bytes() == before


def test_the_cache_and_the_data_folder_are_never_outputs(tmp_path):
    data = small_set(tmp_path / "mine.jsonl")
    cache = tmp_path / "scores.sqlite"
    _refused(["run", "-j", str(data), "-m", "rouge", "--cache", str(cache), "--output", str(cache)],
             "is the score cache of this run")
    folder = tmp_path / "judgments"
    _refused(["run", "-j", "chaganty", "--data-dir", str(folder), "-m", "rouge", "--no-cache", "--output",
              str(folder / "chaganty" / "lqual.jsonl.gz")], "is inside the judgment data folder", str(folder))
    assert not cache.exists() and not folder.exists()  # refused before anything was opened or downloaded


def test_a_file_meta_eval_did_not_write_needs_force_and_its_own_results_do_not(tmp_path):
    data = small_set(tmp_path / "mine.jsonl")
    mine = tmp_path / "myconfig.json"
    mine.write_text('{"learning_rate": 0.1}\n', encoding="utf-8")
    argv = ["run", "-j", str(data), "-m", "rouge", "--no-cache", "--workers", "1", "--output"]
    _refused([*argv, str(mine)], f"{mine} exists and meta-eval did not write it", "--force")
    assert mine.read_text(encoding="utf-8") == '{"learning_rate": 0.1}\n'
    assert runner.invoke(app, [*argv, str(mine), "--force"]).exit_code == 0
    doc = json.loads(mine.read_text(encoding="utf-8"))
    assert next(iter(doc)) == MARKER and doc[MARKER].startswith("meta-eval ") and doc["judgments"] == "mine"
    assert runner.invoke(app, [*argv, str(mine)]).exit_code == 0  # meta-eval's own file: replaced without --force


def test_score_never_writes_over_its_texts_and_replaces_its_own_score_files(tmp_path):
    data = small_set(tmp_path / "in.jsonl")
    before = data.read_bytes()
    _refused(["score", "-i", str(data), "-m", "rouge", "--no-cache", "--force", "--output", str(data)],
             "is the input file of this run")
    cands = tmp_path / "c.csv"
    cands.write_text("the cat sat\n", encoding="utf-8")
    _refused(["score", "-c", str(cands), "-r", str(cands), "-m", "rouge", "--no-cache", "--output", str(cands)],
             "is the candidates file of this run")
    assert data.read_bytes() == before and cands.read_text(encoding="utf-8") == "the cat sat\n"
    for suffix in (".jsonl", ".csv", ".tsv"):
        out = tmp_path / f"scores{suffix}"
        for _ in range(2):  # the second run replaces the first one's file
            done = runner.invoke(app, ["score", "-i", str(data), "-m", "rouge", "--no-cache", "--output", str(out)])
            assert done.exit_code == 0, done.output
        assert written_by_meta_eval(out)


def test_a_users_scores_in_meta_evals_own_format_and_an_edited_score_file_need_force(tmp_path):
    """A user's CSV keyed by ``index`` (the documented import format) and a score file meta-eval wrote that the
    user then edited look just like meta-eval's own: --output replaced them without --force. Only a file the ledger
    holds with its present content (written by meta-eval, unchanged since) is replaced without it."""
    data = small_set(tmp_path / "in.jsonl")
    theirs = tmp_path / "comet.csv"
    theirs.write_text("index,score\n0,0.91\n1,0.42\n", encoding="utf-8")
    argv = ["score", "-i", str(data), "-m", "rouge", "--no-cache", "--output"]
    _refused([*argv, str(theirs)], f"{theirs} exists and meta-eval did not write it", "--force")
    assert theirs.read_text(encoding="utf-8") == "index,score\n0,0.91\n1,0.42\n"
    ours = tmp_path / "rows.jsonl"
    assert runner.invoke(app, [*argv, str(ours)]).exit_code == 0
    assert runner.invoke(app, [*argv, str(ours)]).exit_code == 0  # unchanged since meta-eval wrote it
    edited = ours.read_text(encoding="utf-8").replace("}\n", ', "mine": 1}\n')
    ours.write_text(edited, encoding="utf-8")
    _refused([*argv, str(ours)], f"{ours} exists and meta-eval did not write it",
             "nor a file meta-eval wrote that is unchanged since")
    assert ours.read_text(encoding="utf-8") == edited
    assert runner.invoke(app, [*argv, str(ours), "--force"]).exit_code == 0


def test_learn_save_never_replaces_a_users_file(tmp_path):
    data = small_set(tmp_path / "mine.jsonl")
    victim = tmp_path / "victim.json"
    victim.write_text("precious\n", encoding="utf-8")
    _refused(["learn", "-j", str(data), "-m", "rouge", "--no-cache", "--save", str(victim)],
             f"--save {victim} exists and meta-eval did not write it")
    (tmp_path / "alias.json").symlink_to(data)  # a --save path ends in .json: the judgment file through a link
    _refused(["learn", "-j", str(data), "-m", "rouge", "--no-cache", "--force", "--save", str(tmp_path / "alias.json")],
             "is the judgment file of this run")
    assert victim.read_text(encoding="utf-8") == "precious\n"


def test_check_output_names_both_paths_for_an_option_file(tmp_path):
    model = tmp_path / "model.json"
    model.write_text("{}", encoding="utf-8")
    try:
        check_output(model, inputs=[("an input given by -o model", model)], force=True)
    except OutputError as exc:
        assert str(exc) == (f"--output {model} is an input given by -o model of this run ({model}): writing there "
                            "would replace it; choose another path")
    else:
        raise AssertionError("an input was accepted as an output")


json_values = st.recursive(st.none() | st.booleans() | st.floats(allow_nan=False) | st.text(max_size=20),
                           lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                                       max_size=4), max_leaves=20)


@settings(max_examples=60, deadline=None)
@given(doc=st.dictionaries(st.text(max_size=12), json_values, max_size=6))
def test_every_json_meta_eval_writes_is_recognised_as_its_own(tmp_path_factory, doc):
    path = tmp_path_factory.mktemp("json") / "out.json"
    write_json(path, doc)
    assert written_by_meta_eval(path)
    assert next(iter(json.loads(path.read_text(encoding="utf-8")))) == MARKER
    assert with_marker(with_marker(doc)) == with_marker(doc)


@settings(max_examples=80, deadline=None)
@given(text=st.text(min_size=1, max_size=300).filter(lambda t: t.strip() and "meta-eval" not in t)
       | st.sampled_from(['{"signatures": [], "x": 1}\n', "index,score\n0,0.91\n1,0.42\n", "index\tscore\n0\t1\n"]),
       suffix=st.sampled_from([".json", ".jsonl", ".csv", ".tsv", ".txt", ""]))
def test_a_users_file_is_never_taken_for_meta_evals(tmp_path_factory, text, suffix):
    path = tmp_path_factory.mktemp("user") / f"notes{suffix}"
    path.write_text(text, encoding="utf-8")
    assert not written_by_meta_eval(path)


def test_a_ledger_that_cannot_be_written_costs_only_the_recognition(tmp_path, monkeypatch):
    """With the ledger's folder unwritable (here: its parent is a file) the output is still written; meta-eval then
    does not know the score file as its own, so the next write over it asks for --force."""
    from meta_eval.report.outputs import atomic_write, ledger_path

    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x", encoding="utf-8")
    monkeypatch.setenv("META_EVAL_LEDGER", str(blocker / "written.sqlite"))
    assert ledger_path() == blocker / "written.sqlite"
    out = tmp_path / "s.csv"
    atomic_write(out, lambda tmp: tmp.write_text("index,rouge1-f\n0,0.5\n", encoding="utf-8"))
    assert out.read_text(encoding="utf-8") == "index,rouge1-f\n0,0.5\n" and not written_by_meta_eval(out)
    monkeypatch.setenv("META_EVAL_LEDGER", str(tmp_path / "ledger.sqlite"))
    atomic_write(out, lambda tmp: tmp.write_text("index,rouge1-f\n0,0.25\n", encoding="utf-8"))
    assert written_by_meta_eval(out)
    out.write_text("index,rouge1-f\n0,0.75\n", encoding="utf-8")  # changed since: the user's now
    assert not written_by_meta_eval(out)
