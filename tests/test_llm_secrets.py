"""Issue 36, items 3 and 4, against the real chat-completions server of tests/llm_server.py: secrets never leave
(an API key echoed by a server in a 401 or 5xx body, a password in ``base_url``, the recorded command of a published
board), the key is sent only over https or to this machine, and the LLM judge's answer store (beside ``--cache``,
keyed by server, never written into a foreign SQLite file, an answer's size capped, its counts kept with the cached
scores, ``on_unparsed=drop`` dropping the rows, a garbage ``usage`` field, rows named by file:line and id)."""
from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("httpx")

from typer.testing import CliRunner  # noqa: E402

from llm_server import JudgeServer  # noqa: E402
from meta_eval.cli import app  # noqa: E402
from test_llm_judge_run import judge_options, judged_set  # noqa: E402

KEY = "sk-issue36-do-not-leak-7f3a9c"
PASSWORD = "pw-issue36-hush"
TEMPLATE = "range: 1:5\nRate {candidate} against {references}.\n"


@pytest.fixture
def files(tmp_path, monkeypatch):
    monkeypatch.delenv("META_EVAL_LLM_ANSWERS", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))  # the default stores, never the real ones
    template = tmp_path / "judge.txt"
    template.write_text(TEMPLATE)
    return judged_set(tmp_path / "set.jsonl"), template


def invoke(args):
    return CliRunner().invoke(app, [str(a) for a in args])


# -- item 3: secrets --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("status", [401, 500])
def test_a_key_echoed_by_the_server_never_reaches_the_output_or_the_json(files, tmp_path, monkeypatch, status):
    data, template = files
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    out = tmp_path / "r.json"
    with JudgeServer(echo_auth=status) as server:
        done = invoke(["run", "-j", data, "-m", "llm-judge,rouge", *judge_options(server, template, "retries=1",
                                                                                   "backoff=0"),
                       "--no-cache", "--resamples", "20", "--output", out])
        assert server.counts["echoed"] >= 1  # the server did echo the key it was sent
    assert done.exit_code == 1, done.output  # rouge ran, llm-judge failed
    assert f"HTTP {status}" in done.output and "llm-judge failed" in done.output
    assert KEY not in done.output and "Bearer ***" in done.output
    doc = out.read_text()
    assert KEY not in doc and f"HTTP {status}" in doc


def test_a_password_in_base_url_is_never_shown_nor_recorded_by_a_board(files, tmp_path):
    data, template = files
    with JudgeServer(echo_auth=401) as server:  # an error line names the URL
        url = server.url.replace("http://", f"http://someone:{PASSWORD}@")
        done = invoke(["run", "-j", data, "-m", "llm-judge", "-o", f"base_url={url}", "-o", "model=judge-7b",
                       "-o", f"template={template}", "--no-cache", "--resamples", "20"])
    assert done.exit_code != 0 and "HTTP 401" in done.output
    assert PASSWORD not in done.output and "someone:***@127.0.0.1" in done.output
    board = tmp_path / "board"
    with JudgeServer() as server:  # a real process: the board records its own command line
        url = server.url.replace("http://", f"http://someone:{PASSWORD}@")
        proc = subprocess.run([sys.executable, "-m", "meta_eval.cli", "leaderboard", "publish", "-j", str(data),
                               "-m", "llm-judge,rouge", "-o", f"base_url={url}", "-o", "model=judge-7b",
                               "-o", f"template={template}", "-o", "on_unparsed=drop", "--resamples", "20",
                               "--no-cache", "--out", str(board)], capture_output=True, text=True, timeout=300,
                              env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((board / "results.json").read_text())
    assert doc["sets"][0]["n_rows"] == 27  # on_unparsed=drop: the three rows with no parsed answer left out
    command = doc["command"]
    assert f"base_url=http://someone:***@127.0.0.1:{url.rsplit(':', 1)[1]}" in command
    for text in (proc.stdout, proc.stderr, *(p.read_text() for p in board.iterdir() if p.is_file())):
        assert PASSWORD not in text
    assert {"results.json", "README.md", "index.html"} <= {p.name for p in board.iterdir()}
    probed = invoke(["leaderboard", "probe", board, "-m", "llm-judge", "--no-cache", "--resamples", "10"])
    assert probed.exit_code == 2 and "redacted credential in -o base_url" in " ".join(probed.output.split())
    # the set was published from a file: the advice asks for the file, not the set's name (which -j cannot load)
    name = doc["sets"][0]["judgments"]
    assert (f"`meta-eval probe -j FILE (the file of set {name}) -m llm-judge -o base_url=...`"
            in " ".join(probed.output.split()))
    assert not (board / "blindspots.json").exists()  # refused before probing: '***' is never sent as a password


def test_the_key_is_not_sent_over_plain_http_to_another_host(files, monkeypatch):
    from meta_eval.metrics.base import MetricError
    from meta_eval.metrics.llm_judge import LlmJudge

    data, template = files
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    done = invoke(["run", "-j", data, "-m", "llm-judge", "-o", "base_url=http://192.0.2.7:8000/v1", "-o",
                   "model=judge-7b", "-o", f"template={template}", "--no-cache", "--resamples", "20"])
    assert done.exit_code != 0
    line = " ".join(done.output.split())
    assert "plain http to 192.0.2.7" in line and "-o allow_insecure_http=true" in line and KEY not in line
    with pytest.raises(MetricError, match="user and password"):  # a URL's credentials too, without a key
        monkeypatch.delenv("OPENAI_API_KEY")
        LlmJudge(base_url="http://me:pw@example.org/v1", model="m", template=str(template))
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    for fine in ("https://example.org/v1", "http://localhost:8000/v1", "http://127.0.0.2:8000/v1", "http://[::1]/v1"):
        LlmJudge(base_url=fine, model="m", template=str(template))  # https, or this machine
    LlmJudge(base_url="http://192.0.2.7/v1", model="m", template=str(template), allow_insecure_http="true")


# -- item 4: the answer store -----------------------------------------------------------------------------------------
def answers_in(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT COUNT(*) FROM answers").fetchone()[0]


def test_the_answer_store_lives_beside_the_cache(files, tmp_path):
    data, template = files
    with JudgeServer() as server:
        done = invoke(["run", "-j", data, "-m", "llm-judge", *judge_options(server, template, "on_unparsed=drop"),
                       "--cache", tmp_path / "mine" / "scores.sqlite", "--resamples", "20"])
    assert done.exit_code == 0, done.output
    assert answers_in(tmp_path / "mine" / "llm-answers.sqlite") == 30
    assert not list((tmp_path / "user-cache").rglob("llm-answers.sqlite"))


def test_the_answer_store_is_keyed_by_server(files, tmp_path):
    data, template = files
    store = tmp_path / "a.sqlite"
    for run, server in enumerate((JudgeServer(), JudgeServer())):
        with server:
            done = invoke(["run", "-j", data, "-m", "llm-judge", *judge_options(
                server, template, "on_unparsed=drop", f"answers={store}"), "--cache", tmp_path / f"c{run}.sqlite",
                "--resamples", "20"])
            assert done.exit_code == 0, done.output
            assert server.counts["chat"] == 30  # the second server is asked, not served the first one's answers
    assert answers_in(store) == 60


def test_a_foreign_sqlite_file_is_refused_and_left_alone(files, tmp_path):
    data, template = files
    foreign = tmp_path / "people.sqlite"
    with sqlite3.connect(foreign) as conn:
        conn.execute("CREATE TABLE people (name TEXT)")
        conn.execute("INSERT INTO people VALUES ('ada')")
    before = hashlib.sha256(foreign.read_bytes()).hexdigest()
    with JudgeServer() as server:
        done = invoke(["run", "-j", data, "-m", "llm-judge", *judge_options(server, template, f"answers={foreign}"),
                       "--cache", tmp_path / "c.sqlite", "--resamples", "20"])
        assert server.counts["chat"] == 0
    assert done.exit_code != 0
    assert "not an llm-judge answer store" in done.output and "people.sqlite" in done.output
    assert hashlib.sha256(foreign.read_bytes()).hexdigest() == before


@pytest.mark.parametrize("where", ["data", "cache"])
def test_the_answer_store_is_never_put_in_the_data_folder_nor_on_the_score_cache(files, tmp_path, monkeypatch, where):
    """The store is checked by the one write path (``check_stores``) once the metrics are chosen, before any
    request: ``answers=`` inside the judgment data folder, or on the score cache itself, is refused."""
    data, template = files
    folder = tmp_path / "shared-data"
    folder.mkdir()
    monkeypatch.setenv("META_EVAL_DATA", str(folder))
    cache = tmp_path / "c.sqlite"
    store = folder / "llm-answers.sqlite" if where == "data" else cache
    with JudgeServer() as server:
        done = invoke(["run", "-j", data, "-m", "llm-judge", *judge_options(server, template, f"answers={store}"),
                       "--cache", cache, "--resamples", "20"])
        assert server.counts["chat"] == 0
    assert done.exit_code == 2, done.output
    assert "answers" in done.output and ("data folder" in done.output or "score cache" in done.output)
    assert not (folder / "llm-answers.sqlite").exists()


def test_an_answer_over_the_size_cap_is_an_error_naming_the_row_and_is_not_stored(tmp_path, files):
    data, template = files
    rows = [json.loads(line) for line in data.read_text().splitlines()]
    rows[4]["candidate"] += " HUGE"  # the fifth line: 1.5 MB of answer
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    store = tmp_path / "a.sqlite"
    with JudgeServer() as server:
        done = invoke(["run", "-j", data, "-m", "llm-judge", *judge_options(
            server, template, "on_unparsed=drop", f"answers={store}", "concurrency=1"),
            "--cache", tmp_path / "c.sqlite", "--resamples", "20"])
    assert done.exit_code != 0
    line = " ".join(done.output.split())
    assert "set.jsonl:5 (id 'r4')" in line and "max_answer_bytes=1,000,000" in line
    assert store.stat().st_size < 1_000_000


def test_a_rerun_from_the_score_cache_reports_the_counts_and_drop_drops(files, tmp_path):
    data, template = files
    cache = tmp_path / "c.sqlite"
    docs = []
    with JudgeServer() as server:
        for run in (1, 2):  # the second run: every score from the cache, a new (empty) answer store
            done = invoke(["run", "-j", data, "-m", "llm-judge", *judge_options(
                server, template, "on_unparsed=drop", f"answers={tmp_path / f'a{run}.sqlite'}"), "--cache", cache,
                "--resamples", "20", "--output", tmp_path / f"r{run}.json"])
            assert done.exit_code == 0, done.output
            docs.append(json.loads((tmp_path / f"r{run}.json").read_text()))
        assert server.counts["chat"] == 30
    assert answers_in(tmp_path / "a2.sqlite") == 0
    for doc in docs:
        assert doc["unparsed"] == {"llm-judge": {"unparsed": 3, "answers": 30}}
        assert doc["n"] == 27  # the three rows with no parsed answer are dropped, not scored the range's middle
        assert doc["degenerate"]["llm-judge"]["rows"] == 0


def test_a_garbage_usage_field_is_not_counted_and_fails_nothing(files, tmp_path):
    data, template = files
    rows = [json.loads(line) for line in data.read_text().splitlines()]
    rows[1]["candidate"] += " BADUSAGE"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with JudgeServer() as server:
        done = invoke(["run", "-j", data, "-m", "llm-judge", *judge_options(server, template, "on_unparsed=drop"),
                       "--cache", tmp_path / "c.sqlite", "--resamples", "20"])
    assert done.exit_code == 0, done.output
    assert "1 answers with a usage field that is not token counts" in " ".join(done.output.split())


def test_an_unparsed_answer_error_names_the_file_line_and_id(files, tmp_path):
    data, template = files
    with JudgeServer() as server:
        done = invoke(["run", "-j", data, "-m", "llm-judge", *judge_options(server, template),
                       "--cache", tmp_path / "c.sqlite", "--resamples", "20"])
    assert done.exit_code != 0
    line = " ".join(done.output.split())
    assert "unparsed answer" in line and "set.jsonl:1 (id 'r0')" in line and "of the batch" not in line


def test_redact_masks_every_kind_of_credential_and_keeps_the_rest():
    from meta_eval.metrics.redact import add_secret, command_line, redact, server_text

    add_secret("opaque-token-36")
    cases = {"GET http://ann:hunter2@example.org:8/v1 failed": "GET http://ann:***@example.org:8/v1 failed",
             '{"Authorization": "Bearer abc.def-ghi"}': '{"Authorization": "Bearer ***"}',
             "authorization: Basic YW5uOmh1bnRlcjI=": "authorization: Basic ***",
             "x-api-key: 12345678": "x-api-key: ***",
             "/v1?api_key=zz9&key=qq&b=1": "/v1?api_key=***&key=***&b=1",
             '{"api_key": "s3cr3t", "model": "m"}': '{"api_key": "***", "model": "m"}',
             "the server said opaque-token-36 twice: opaque-token-36": "the server said *** twice: ***",
             "hosted sk-proj-abcdefghijkl": "hosted ***",
             "-o api_key_env=MY_KEY -o tokenizer=13a -o model=m": "-o api_key_env=MY_KEY -o tokenizer=13a -o model=m",
             "-o must be KEY=VALUE (the placeholder of an error line)": "-o must be KEY=VALUE (the placeholder of an error line)",
             # a user alone is sent as credentials; Path("https://u:p@x/y") prints https:/u:p@x/y
             "http://ghp_TokenUser12345@127.0.0.1:8765/v1": "http://***@127.0.0.1:8765/v1",
             "error: https:/u:PassWord987@x.example/y.jsonl does not exist":
                 "error: https:/u:***@x.example/y.jsonl does not exist",
             "/v1?auth_token=Tok3n&client_secret=Cli7&x_api_key=k9&private_token=p1&max_tokens=5":
                 "/v1?auth_token=***&client_secret=***&x_api_key=***&private_token=***&max_tokens=5"}
    for text, shown in cases.items():
        assert redact(text) == shown
    assert command_line("meta-eval", ["-o", "base_url=http://u:p@h/v1", "a b"]) == \
        "meta-eval -o base_url=http://u:***@h/v1 'a b'"
    cut = server_text("Bearer " + "x" * 500 + "\x1b[2J")
    assert cut.startswith("'Bearer ***") and len(cut) < 220 and "\x1b" not in server_text("a\x1b[2Jb")
