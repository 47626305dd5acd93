"""llm-judge inside a run, against the real chat-completions server of tests/llm_server.py on a 30-row set:
``unparsed: N of M`` in ``meta-eval run``'s table and JSON, the requests/s and tokens of the progress lines, no
answer store with ``--no-cache``, the server recorded by ``leaderboard publish`` (never the key), and the Ray engine
asking every distinct row exactly once."""
from __future__ import annotations

import csv as _csv
import json
import re
import sqlite3
from pathlib import Path

import pytest

pytest.importorskip("httpx")

from typer.testing import CliRunner  # noqa: E402

from conftest import require_module  # noqa: E402
from llm_server import JudgeServer, expected_score  # noqa: E402
from meta_eval.cli import app  # noqa: E402

# one pytest-xdist worker runs every test that starts Ray: a second local instance, or `ray stop --force`,
# on the same machine would meet the first
pytestmark = pytest.mark.xdist_group("ray")

TEMPLATE = "range: 1:5\nRate {candidate} against {references}.\n"
UNPARSED_ROWS = (0, 10, 20)  # their candidates hold NONUMBER: the server answers with no number


def judged_set(path: Path, rows: int = 30) -> Path:
    """A 30-row set (three systems, ten documents) whose candidates differ, three of them answered with no number."""
    lines = [json.dumps({"id": f"r{i}", "doc_id": f"d{i // 3}", "system": f"s{i % 3}",
                         "candidate": f"the cat sat on the mat {i}" + (" NONUMBER" if i in UNPARSED_ROWS else ""),
                         "references": [f"a cat on a mat {i}"], "scores": {"overall": float(i * 7 % 5)}})
             for i in range(rows)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def files(tmp_path):
    template = tmp_path / "judge.txt"
    template.write_text(TEMPLATE)
    return judged_set(tmp_path / "set.jsonl"), template


def judge_options(server, template, *extra: str) -> list[str]:
    out = []
    for opt in (f"base_url={server.url}", "model=judge-7b", f"template={template}", *extra):
        out += ["-o", opt]
    return out


def tokens(server) -> int:
    """What the server's usage fields added up to (prompt words + one completion token per answer)."""
    return sum(len(p.split()) + 1 for p in server.prompts)


def test_run_reports_unparsed_in_table_and_json_and_progress_lines(files, tmp_path, monkeypatch):
    from meta_eval.report import progress

    monkeypatch.setattr(progress, "EVERY", 0.05)  # stderr is no terminal here: a progress line every 0.05 s
    data, template = files
    with JudgeServer(delay=0.02) as server:
        args = ["run", "-j", str(data), "-m", "llm-judge,rouge", *judge_options(
            server, template, "on_unparsed=drop", "concurrency=1", f"answers={tmp_path / 'a.sqlite'}"),
            "--cache", str(tmp_path / "scores.sqlite"), "--resamples", "20", "--format", "md",
            "--output", str(tmp_path / "r.json")]
        done = CliRunner().invoke(app, args)
        assert done.exit_code == 0, done.output
        assert server.counts["chat"] == 30
        # the table (Markdown): a column "unparsed", 3 of 30 for the judge and "-" for ROUGE
        table = {cells[0]: cells for cells in ([c.strip() for c in line.strip("|").split("|")]
                                               for line in done.output.splitlines() if line.startswith("| "))}
        column = table["metric"].index("unparsed")
        assert table["llm-judge"][column] == "3 of 30" and table["rougeL-f"][column] == "-"
        data_out = json.loads((tmp_path / "r.json").read_text())
        assert data_out["unparsed"] == {"llm-judge": {"unparsed": 3, "answers": 30}}
        # on_unparsed=drop drops the rows with no parsed answer from the statistic (issue 36), from every metric
        assert data_out["degenerate"]["llm-judge"]["rows"] == 0 and data_out["n"] == 27
        assert any("3 of 30 rows dropped" in note for note in data_out["notes"])
        # progress: periodic lines while the judge ran (concurrency 1, 20 ms a request: ~0.7 s), then the last one
        lines = [line for line in done.output.splitlines() if line.startswith("llm-judge: ") and "rows;" in line]
        assert len(lines) >= 3, done.output
        last = re.fullmatch(r"llm-judge: 30/30 rows; 30 requests, ([\d.]+) requests/s, ([\d,]+) tokens", lines[-1])
        assert last, lines[-1]
        assert int(last.group(2).replace(",", "")) == tokens(server)
        assert 5 < float(last.group(1)) < 60  # at most 50/s with 20 ms per request, one at a time
        counts = [int(re.search(r"rows; ([\d,]+) requests", line).group(1)) for line in lines]
        assert counts == sorted(counts) and counts[0] < 30
        # a rerun with a new score cache: every answer from the store, the same counts, nothing asked
        again = CliRunner().invoke(app, args[:-6] + ["--cache", str(tmp_path / "other.sqlite"), "--format", "csv",
                                                     "--output", str(tmp_path / "r2.json")])
        assert again.exit_code == 0, again.output
        assert server.counts["chat"] == 30
        assert json.loads((tmp_path / "r2.json").read_text())["unparsed"] == data_out["unparsed"]
        csv = [line for line in again.output.splitlines() if line.startswith(("metric,", "llm-judge,"))]
        header, judge = (next(_csv.reader([line])) for line in csv)  # the interval cell "[a, b]" is quoted
        assert judge[header.index("unparsed")] == "3 of 30"
        assert not [line for line in again.output.splitlines() if "rows;" in line]  # nothing asked: no line


def test_no_cache_reads_and_writes_no_answer_store(files, tmp_path, monkeypatch):
    data, template = files
    default = tmp_path / "default-answers.sqlite"
    monkeypatch.setenv("META_EVAL_LLM_ANSWERS", str(default))  # where the store would be without answers=
    given = tmp_path / "given.sqlite"
    with JudgeServer() as server:
        for run, extra in ((1, ()), (2, ()), (3, (f"answers={given}",))):
            done = CliRunner().invoke(app, ["run", "-j", str(data), "-m", "llm-judge", "--no-cache", "--resamples",
                                            "20", *judge_options(server, template, "on_unparsed=drop", *extra)])
            assert done.exit_code == 0, done.output
            assert server.counts["chat"] == 30 * run  # every run asks every row again
            assert "no answer store" in done.output and "3 of 30" in done.output
        assert max(server.seen.values()) == 3 and len(server.seen) == 30
    assert not default.exists() and not given.exists()  # --no-cache stores nothing, even with answers=FILE
    # without --no-cache the same options keep a store: the default one
    with JudgeServer() as server:
        done = CliRunner().invoke(app, ["run", "-j", str(data), "-m", "llm-judge", "--cache",
                                        str(tmp_path / "c.sqlite"), "--resamples", "20",
                                        *judge_options(server, template, "on_unparsed=drop")])
        assert done.exit_code == 0, done.output
    with sqlite3.connect(default) as conn:
        assert conn.execute("SELECT COUNT(*) FROM answers").fetchone()[0] == 30


def test_publish_records_the_server_never_the_key(files, tmp_path, monkeypatch):
    data, template = files
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-28")
    out = tmp_path / "board"
    with JudgeServer() as server:
        url = server.url.replace("http://", "http://someone:pw-secret@")  # basic auth in the URL
        done = CliRunner().invoke(app, ["leaderboard", "publish", "-j", str(data), "-m", "llm-judge,rouge",
                                        "-o", f"base_url={url}", "-o", "model=judge-7b", "-o", f"template={template}",
                                        "-o", "on_unparsed=drop",
                                        "--resamples", "20", "--no-cache", "--out", str(out)])
        assert done.exit_code == 0, done.output
        assert server.counts["chat"] == 30 and server.headers[-1].startswith("Basic ")  # httpx: the URL's user
    doc = json.loads((out / "results.json").read_text())
    entries = {m["variant"]: m for m in doc["sets"][0]["metrics"]}
    assert entries["llm-judge"]["server"] == server.url  # no user or password
    assert "server" not in entries["rougeL-f"]
    assert "model:judge-7b" in entries["llm-judge"]["signature"] and "template:judge.txt@" in \
        entries["llm-judge"]["signature"]
    readme, html = (out / "README.md").read_text(), (out / "index.html").read_text()
    assert f"server={server.url}" in readme and server.url in html
    for text in (json.dumps(doc), readme, html):
        assert "secret" not in text


@pytest.fixture(scope="module")
def ray_engine():
    from meta_eval.scoring.engines import RAY_HINT, make_engine

    require_module("ray", RAY_HINT)
    with make_engine("ray", workers=2, actors=2) as engine:
        yield engine


def test_ray_asks_each_row_once_two_actors_share_the_store_and_a_rerun_asks_nothing(files, tmp_path, ray_engine,
                                                                                      capsys):
    """Two Ray actors (--actors 2) ask the server and write the answer store at once (SQLite's locks; the driver only
    reads it after scoring): every distinct row asked exactly once, the store whole, the same scores as one process,
    and a rerun without the score cache, served by the store, asks nothing."""
    from meta_eval import run

    data, template = files
    answers = tmp_path / "a.sqlite"
    with JudgeServer(delay=0.01) as server:
        options = {"base_url": server.url, "model": "judge-7b", "template": str(template), "on_unparsed": "drop",
                   "answers": str(answers), "concurrency": 2}
        res = run(str(data), "llm-judge", options=options, engine=ray_engine, batch_size=8, resamples=20,
                  cache=tmp_path / "scores.sqlite", progress=False)
        assert server.counts["chat"] == 30 and set(server.seen.values()) == {1}  # 4 batches over 2 actors
        assert server.counts["models"] == 1  # the driver named the served model; the actors ask no /models
        assert "llm-judge: asked here: 0 requests" in capsys.readouterr().err  # the actors asked, not the driver
        with sqlite3.connect(answers) as conn:
            assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
            assert conn.execute("SELECT COUNT(*) FROM answers").fetchone()[0] == 30
        assert res.unparsed == {"llm-judge": {"unparsed": 3, "answers": 30}}
        row_scores = res.scores[0].scores["llm-judge"]
        expected = [3.0 if i in UNPARSED_ROWS else expected_score(f"Rate the cat sat on the mat {i} against a cat "
                                                                  f"on a mat {i}.\n") for i in range(30)]
        # the server's top log-probabilities weigh the score and its neighbour 0.6 : 0.3 (tests/llm_server.py)
        weighted = [e if i in UNPARSED_ROWS else (0.6 * e + 0.3 * (e + 1 if e < 5 else e - 1)) / 0.9
                    for i, e in enumerate(expected)]
        # on_unparsed=drop: the three rows with no parsed answer are dropped from the statistic (issue 36)
        assert row_scores.tolist() == pytest.approx([w for i, w in enumerate(weighted) if i not in UNPARSED_ROWS])
        again = run(str(data), "llm-judge", options=options, engine=ray_engine, batch_size=8, resamples=20,
                    cache=tmp_path / "other-scores.sqlite", progress=False)
        assert server.counts["chat"] == 30  # every answer from the store
        assert again.scores[0].computed == 30 and again.scores[0].scores["llm-judge"].tolist() == row_scores.tolist()
        assert again.unparsed == res.unparsed


def test_terminal_bar_shows_requests_rate_and_tokens(files):
    """On a terminal (``TTY_COMPATIBLE=1`` makes rich treat the captured stderr as one) the bar carries the judge's
    requests, requests/s and tokens after its counts."""
    data, template = files
    with JudgeServer() as server:
        done = CliRunner().invoke(app, ["run", "-j", str(data), "-m", "llm-judge", "--no-cache", "--resamples", "20",
                                        *judge_options(server, template, "on_unparsed=drop")],
                                  env={"TTY_COMPATIBLE": "1", "COLUMNS": "200"})
        assert done.exit_code == 0, done.output
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", done.output)
    bar = re.search(r"llm-judge .*30/30.*?(30 requests, [\d.]+ requests/s, ([\d,]+) tokens)", plain)
    assert bar, plain[:3000]
    assert int(bar.group(2).replace(",", "")) == tokens(server)
