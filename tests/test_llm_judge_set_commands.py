"""``-m llm-judge -o template=set`` beyond ``run`` (issue #38 item 4): ``meta-eval learn`` binds the set's prompt for
its target property and sends it to the real chat-completions server of tests/llm_server.py; ``score`` and ``probe``
refuse it with one sentence naming where it runs, before any request."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("httpx")
pytest.importorskip("jinja2")

from typer.testing import CliRunner  # noqa: E402

from llm_server import JudgeServer, expected_score  # noqa: E402
from meta_eval.cli import app  # noqa: E402

PROMPT = "On a scale of 1 (low) to 5 (high), how coherent is this summary?\n\n{{ instance }}"


def graded_file(tmp_path: Path, n: int = 12) -> Path:
    """A NewsRoom-like file in JUDGE-BENCH's schema: a string instance graded 1-5 by two raters."""
    insts = [{"id": i, "instance": f"summary number {i}",
              "annotations": {"Coherence": {"mean_human": float(1 + i % 5),
                                            "individual_human_scores": [1 + i % 5, 1 + i * 3 % 5]}}}
             for i in range(n)]
    path = tmp_path / "graded.json"
    path.write_text(json.dumps({"dataset": "tiny", "annotations": [{"metric": "Coherence", "category": "graded",
                                                                   "worst": 1, "best": 5, "prompt": PROMPT}],
                                "instances": insts}))
    return path


@pytest.fixture
def server():
    with JudgeServer() as s:
        yield s


def _options(server) -> list[str]:
    return ["-m", "llm-judge", "-o", "template=set", "-o", f"base_url={server.url}", "-o", "model=judge-7b"]


def test_learn_fills_the_sets_prompt_for_its_target(server, tmp_path):
    data = graded_file(tmp_path)
    out = tmp_path / "learn.json"
    done = CliRunner().invoke(app, ["learn", "-j", str(data), "--target", "Coherence", *_options(server),
                                    "--no-cache", "--output", str(out)], env={"COLUMNS": "200"})
    assert done.exit_code == 0, done.output
    # every row's prompt is the set's template filled with its instance, and the judge's answers are the features
    assert sorted(server.prompts) == sorted(PROMPT.replace("{{ instance }}", f"summary number {i}")
                                            for i in range(12))
    doc = json.loads(out.read_text())
    assert "template:set@" in json.dumps(doc) and "dimension:Coherence" in json.dumps(doc)
    assert all(expected_score(p) in range(1, 6) for p in server.prompts)


@pytest.mark.parametrize("command, words", [
    ("score", "it scores texts, not the rows of a judgment set"),
    ("probe", "a perturbation changes the candidate, but the set's prompt is filled from the instance's own fields"),
])
def test_score_and_probe_refuse_it_with_one_sentence_naming_where_it_runs(server, tmp_path, command, words):
    data = graded_file(tmp_path)
    texts = tmp_path / "in.jsonl"
    texts.write_text("".join(json.dumps({"candidate": f"text {i}"}) + "\n" for i in range(3)))
    source = ["--input", str(texts)] if command == "score" else ["-j", str(data)]
    done = CliRunner().invoke(app, [command, *source, *_options(server), "--no-cache"], env={"COLUMNS": "250"})
    assert done.exit_code == 2, done.output
    lines = [line for line in done.output.splitlines() if line.strip()]
    assert lines == [f"error: -m llm-judge -o template=set does not run in meta-eval {command}: {words}"
                     + lines[0].split(words, 1)[1]], done.output
    assert lines[0].endswith("; it runs in meta-eval run, learn (a property as --target), leaderboard publish and "
                             "protocols")
    assert server.counts["chat"] == 0
