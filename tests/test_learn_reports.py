"""What ``meta-eval learn`` prints, writes and saves says what it did: where ``--save`` writes (as its help says),
the units it counts (as every other command counts them), text printed as written, the inner folds it really used,
and a refused save that keeps the results."""
from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from conftest import small_set
from meta_eval.cli import app
from meta_eval.metrics.learned import ENV_HOME

runner = CliRunner()
QUICK = ["--no-cache", "--resamples", "20"]


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    monkeypatch.setenv(ENV_HOME, str(tmp_path / "home"))
    return tmp_path / "home"


def said(res) -> str:
    return " ".join(res.output.split())


def test_save_a_name_goes_to_the_models_dir_and_a_path_must_end_in_json(tmp_path, home, monkeypatch):
    """``--save NAME`` (stored in $META_EVAL_HOME/learned) or a path ending in .json, as the help says: ``../evil``
    and ``sub/x`` were written beside the working directory, without the suffix."""
    data = small_set(tmp_path / "mine.jsonl")
    work = tmp_path / "work" / "here"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    base = ["learn", "-j", str(data), "-m", "rouge", "--features", "rouge1-f,rouge2-f", *QUICK]
    before = sorted(tmp_path.rglob("*"))
    for spec in ("../evil", "sub/x", str(tmp_path / "abs")):
        res = runner.invoke(app, base + ["--save", spec])
        assert res.exit_code == 2 and "Traceback" not in res.output, res.output
        assert f"--save {spec}: a path must end in .json (--save {spec}.json)" in said(res)
    assert sorted(tmp_path.rglob("*")) == before  # nothing written anywhere
    res = runner.invoke(app, base + ["--save", "mine"])
    assert res.exit_code == 0, res.output
    assert json.loads((home / "learned" / "mine.json").read_text())["format"] == "meta-eval-learned-model"
    res = runner.invoke(app, base + ["--save", "sub/x.json"])
    assert res.exit_code == 0, res.output
    assert json.loads((work / "sub" / "x.json").read_text())["format"] == "meta-eval-learned-model"
    res = runner.invoke(app, base + ["--save", "sub/[b]x.json"])  # printed as written, not as markup
    assert res.exit_code == 0 and "saved learned:sub/[b]x.json (" in said(res), res.output
    assert "to sub/[b]x.json; score with --metrics learned:sub/[b]x.json" in said(res)


def test_learn_counts_systems_as_every_other_command(shared_data, tmp_path):
    """chaganty's row 'ml;ml+rl' fills the cells of ml and ml+rl: 4 systems in ``judgments``, ``run`` and the boards;
    ``learn`` said 5 (the rows with a target lost the set's multi-system separator, and its task and language)."""
    from meta_eval import judgments
    from meta_eval.learning import ridge
    from meta_eval.units import units_line

    jset = judgments.load("chaganty", shared_data)
    kept, _ = ridge.target_set(jset, "overall")
    assert kept.systems() == jset.systems() == ["ml", "ml+rl", "pointer", "seq2seq"]
    assert (kept.multi_system_separator, kept.task, kept.language, kept.duplicates) == \
        (jset.multi_system_separator, jset.task, jset.language, jset.duplicates)
    assert units_line(kept) == "units: global level: 2085 rows (583 documents, 4 systems)"
    res = runner.invoke(app, ["learn", "-j", "chaganty", "--data-dir", str(shared_data), "-m", "rouge", "--features",
                              "rouge1-f,rouge2-f", *QUICK])
    assert res.exit_code == 0, res.output
    assert "units: global level: 2085 rows (583 documents, 4 systems)" in said(res)


def bracketed(tmp_path):
    """A set, a human dimension and an imported metric whose names rich would read as markup ([red], [i], [b])."""
    rows = [{"id": f"r{i}", "doc_id": f"d{i // 3}", "system": f"s{i % 3}",
             "candidate": f"the cat sat on the mat {i} " + "again " * (i % 4), "references": [f"a cat on a mat {i}"],
             "scores": {"[i]q": float(i * 7 % 5)}} for i in range(30)]
    data = tmp_path / "br[red].jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    scores = tmp_path / "mine.jsonl"
    scores.write_text("".join(json.dumps({"id": f"r{i}", "score": float(i * 7 % 5 + i % 2)}) + "\n"
                              for i in range(30)))
    return ["learn", "-j", str(data), "-m", "rouge,[b]mine", "--features", "rouge1-f,[b]mine", "--scores",
            f"[b]mine={scores}", "--target", "[i]q", *QUICK]


@pytest.mark.parametrize("protocol", [["--protocol", "paper", "--splits", "20"], ["--resamples", "20"]])
def test_learn_prints_text_as_written(tmp_path, protocol):
    """The paper protocol's note printed '... alpha is fixed, and  is the spread ...': rich took its '[low, high]'
    for markup; the set's, the target's and the features' names are printed as written too."""
    res = runner.invoke(app, [a for a in bracketed(tmp_path) if a not in ("--resamples", "20")] + protocol)
    assert res.exit_code == 0, res.output
    text = said(res)
    assert "br[red] (all, n=30, 10 documents): ridge" in text and "to '[i]q'" in text
    assert "│ [b]mine " in text and "rouge1-f + [b]mine" in text
    if "paper" in protocol:
        assert "alpha is fixed, and [low, high] is the spread of the held-out correlation over splits" in text
        assert "rouge1-f + [b]mine: held-out spearman" in text


@pytest.mark.parametrize("command", ["learn", "publish", "run"])
def test_score_file_errors_advise_only_options_the_command_has(tmp_path, command):
    """A row without a score, or a NaN score: the error advised '--scores-missing drop' to learn and leaderboard
    publish, which have no such option ('No such option'); only run's error names it."""
    data = small_set(tmp_path / "mine.jsonl")
    rows = [{"id": f"r{i}", "score": float(i)} for i in range(30)]
    missing, nan = tmp_path / "missing.jsonl", tmp_path / "nan.jsonl"
    missing.write_text("".join(json.dumps(r) + "\n" for r in rows[:-3]))
    nan.write_text("".join(json.dumps(r) + "\n" for r in rows[:1] + [{"id": "r1", "score": float("nan")}] + rows[2:]))
    argv = {"learn": ["learn", "-j", str(data)], "run": ["run", "-j", str(data)],
            "publish": ["leaderboard", "publish", "-j", str(data), "--out", str(tmp_path / "board")]}[command]
    for path, expect in ((missing, "missing.jsonl: no score for 3 of the 30 judged rows of mine (all): 'r27', 'r28', "
                                   "'r29'; score them"),
                         (nan, "nan.jsonl:2: the score 'score' is NaN; scores must be finite numbers")):
        res = runner.invoke(app, argv + ["-m", "rouge,x", "--scores", f"x={path}", "--no-cache"])
        assert res.exit_code == 2 and "Traceback" not in res.output, res.output
        assert expect in said(res)
        if command == "run":
            assert "pass --scores-missing drop" in said(res)
            assert runner.invoke(app, argv + ["-m", "rouge,x", "--scores", f"x={missing}", "--no-cache",
                                              "--scores-missing", "drop"]).exit_code == 0
        else:
            assert "--scores-missing" not in said(res)
            assert "this command needs a score for every judged row" in said(res)
            assert "No such option" in said(runner.invoke(app, argv + ["--scores-missing", "drop"]))
    assert not (tmp_path / "board").exists()


def test_a_save_refused_for_imported_features_keeps_the_results(tmp_path, home):
    """The best feature set uses an imported metric: the model cannot be saved, but the results are printed and
    written, as the refusal says, and the command then exits 1 (before: only the error, exit 2, no --output).
    With every feature imported the refusal comes before anything is learned (exit 2)."""
    data = small_set(tmp_path / "mine.jsonl")
    oracle = tmp_path / "oracle.jsonl"  # the target itself, slightly perturbed: the best feature set uses it
    oracle.write_text("".join(json.dumps({"id": f"r{i}", "score": i * 7 % 5 + 0.01 * i}) + "\n" for i in range(30)))
    out = tmp_path / "orc.json"
    base = ["learn", "-j", str(data), "-m", "rouge,oracle", "--scores", f"oracle={oracle}", "--save", "orc",
            "--output", str(out), *QUICK]
    res = runner.invoke(app, base + ["--features", "rouge1-f,oracle"])
    assert res.exit_code == 1 and "Traceback" not in res.output, res.output
    text = said(res)
    assert "nested held-out" in text and f"wrote {out}" in text  # the results, then the refusal
    doc = json.loads(out.read_text())
    assert "oracle" in doc["best"] and doc["saved"] is None and doc["model"]["features"] == doc["best"]
    assert doc["not_saved"].startswith("--save orc: not saved: the best feature set uses imported scores (oracle)")
    assert f"error: {doc['not_saved']}" in text and f"written to {out}" in doc["not_saved"]
    assert not (home / "learned").exists()
    out.unlink()
    res = runner.invoke(app, base + ["--features", "oracle"])
    assert res.exit_code == 2, res.output
    assert "--save orc: every feature uses imported scores (oracle)" in said(res) and "nothing was learned" in said(res)
    assert "nested held-out" not in said(res) and not out.exists() and not (home / "learned").exists()


def test_inner_folds_said_as_used_and_folds_numbered_alike(tmp_path):
    """--inner-folds is capped at the documents of each outer training part: the header said '7-fold inner
    cross-validation' and the JSON inner_folds: 7 where a part had 6 documents; the table numbered the folds 1-3 and
    the JSON 0-2. 10 documents in 3 outer folds (4, 3, 3 held out): training parts of 6, 7 and 7 documents."""
    data = small_set(tmp_path / "mine.jsonl")
    out = tmp_path / "i7.json"
    base = ["learn", "-j", str(data), "-m", "rouge", "--features", "rouge1-f,rouge2-f", "--folds", "3",
            "--output", str(out), *QUICK]
    res = runner.invoke(app, base + ["--inner-folds", "7"])
    assert res.exit_code == 0, res.output
    doc, text = json.loads(out.read_text()), said(res)
    nd = doc["nested"]
    assert [f["fold"] for f in nd["per_fold"]] == [1, 2, 3]
    assert [f["inner_folds"] for f in nd["per_fold"]] == [min(7, 10 - f["test_documents"]) for f in nd["per_fold"]]
    assert sorted(f["inner_folds"] for f in nd["per_fold"]) == [6, 7, 7]
    assert nd["inner_folds"] is None and doc["inner_folds"] is None and nd["inner_folds_requested"] == 7
    assert nd["final"]["inner_folds"] == 7  # all 10 documents
    assert "chosen by 6- to 7-fold inner cross-validation by document" in nd["scheme"] == doc["model"]["heldout"][
        "scheme"]
    assert nd["scheme"] in text and "3 outer x 6 to 7 inner folds" in text
    assert nd["inner_folds_note"].startswith("--inner-folds 7 is more than the documents of 1 of the 3 outer training")
    assert f"note: {nd['inner_folds_note']}" in text and "6 to 7 inner folds, not 7" in text
    assert "┃ fold ┃ held-out rows ┃ inner folds ┃ features ┃" in text
    for f in nd["per_fold"]:  # the table's fold numbers and inner folds are the JSON's
        row = f"│ {f['fold']} │ {f['test_rows']} │ {f['inner_folds']} │ {' + '.join(f['features'])} │"
        assert row in text
    res = runner.invoke(app, base)  # 5 inner folds fit every training part: no note, no column
    assert res.exit_code == 0, res.output
    nd = json.loads(out.read_text())["nested"]
    assert nd["inner_folds"] == nd["inner_folds_requested"] == 5 and nd["inner_folds_note"] is None
    assert "5-fold inner cross-validation" in said(res) and "┃ inner folds ┃" not in said(res)
