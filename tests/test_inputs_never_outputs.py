"""What a command reads is never what it writes, even with ``--force`` (audit, session 37): a protocol part's
judgment file under ``run --protocol --output``; a learned model under ``leaderboard publish --out``; a ``--scores``
file written with a space after ``=`` (read stripped, checked unstripped); and the Python API's ``plot()``, which
replaced any file, a user's too, without the checks the command line's ``--plot`` makes."""
from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from conftest import small_set
from meta_eval.cli import app
from meta_eval.report.outputs import OutputError

runner = CliRunner()
HAVE_MATPLOTLIB = __import__("importlib.util").util.find_spec("matplotlib") is not None


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_run_protocol_never_writes_over_a_parts_judgment_file(tmp_path):
    data = small_set(tmp_path / "mine.json")
    before = data.read_bytes()
    proto = tmp_path / "p.toml"
    proto.write_text(f'name = "p"\ntitle = "t"\ncitation = "c"\nsource = "s"\n\n[[part]]\nname = "a"\n'
                     f'judgments = {json.dumps(str(data))}\nhuman = "overall"\nlevel = "global"\n'
                     f'correlation = "spearman"\nmetrics = ["rouge"]\ntolerance = 0.01\n', encoding="utf-8")
    done = runner.invoke(app, ["run", "--protocol", str(proto), "--resamples", "10", "--no-cache", "--output",
                               str(data), "--force"])
    assert done.exit_code == 2 and "the judgment file" in _flat(done.output), done.output
    assert data.read_bytes() == before


def test_publish_never_writes_a_board_over_a_learned_model_it_scores_with(tmp_path):
    board = tmp_path / "board"
    board.mkdir()
    model = board / "results.json"
    model.write_text('{"a learned model": "stands in; the guard reads only its path"}', encoding="utf-8")
    before = model.read_bytes()
    done = runner.invoke(app, ["leaderboard", "publish", "-j", str(small_set(tmp_path / "mine.jsonl")), "-m",
                               f"rouge,learned:{model}", "--resamples", "10", "--no-cache", "--out", str(board),
                               "--force"])
    assert done.exit_code == 2 and f"the model of learned:{model}" in _flat(done.output), done.output
    assert model.read_bytes() == before


def test_a_scores_file_named_after_a_space_is_still_an_input(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    data = small_set(tmp_path / "mine.jsonl")
    scores = tmp_path / "mine.json"
    scores.write_text("{}", encoding="utf-8")
    done = runner.invoke(app, ["learn", "-j", str(data), "-m", "rouge", "--scores", "mine= mine.json",
                               "--scores-format", "jsonl", "--output", "mine.json", "--force", "--no-cache"])
    assert done.exit_code == 2 and "the --scores file of mine" in _flat(done.output), done.output
    assert scores.read_text(encoding="utf-8") == "{}"


@pytest.mark.skipif(not HAVE_MATPLOTLIB, reason="the plot extra: pip install 'meta-eval[plot]'")
def test_the_apis_plot_replaces_a_users_file_only_with_force(tmp_path):
    import meta_eval

    data = small_set(tmp_path / "mine.jsonl")
    result = meta_eval.run(str(data), "rouge", no_cache=True, workers=1, progress=False)
    notes = tmp_path / "notes.pdf"
    notes.write_text("my notes", encoding="utf-8")
    with pytest.raises(OutputError, match="meta-eval did not write it"):
        result.plot("intervals", notes)
    assert notes.read_text(encoding="utf-8") == "my notes"
    result.plot("intervals", notes, force=True)
    assert notes.read_bytes()[:4] == b"%PDF"
    result.plot("intervals", notes)  # now meta-eval's own figure: replaced without force
    from meta_eval.probe.run import probe

    probed = probe(str(data), "rouge", max_items=10, no_cache=True, progress=False)
    mine = tmp_path / "mine.png"
    mine.write_bytes(b"not a figure")
    with pytest.raises(OutputError, match="meta-eval did not write it"):
        probed.plot(mine)
    assert mine.read_bytes() == b"not a figure"
    probed.plot(mine, force=True)
    assert mine.read_bytes()[:4] == b"\x89PNG"
