"""The llm-judge metric against a real chat-completions server on 127.0.0.1 (tests/llm_server.py)."""
from __future__ import annotations

import json
import math
import os

import numpy as np
import pytest

pytest.importorskip("httpx")

from llm_server import JudgeServer, expected_score, expected_weighted  # noqa: E402

from meta_eval.metrics.base import Example, MetricError  # noqa: E402
from meta_eval.metrics.llm_judge import LlmJudge, parse_score, weighted_score  # noqa: E402
from meta_eval.metrics.registry import create, get_class  # noqa: E402

DOC = "The city council voted on Tuesday to build a new bridge over the river, at a cost of 4 million euros."


def examples(*candidates: str) -> list[Example]:
    return [Example(c, ("A reference.",), DOC) for c in candidates]


@pytest.fixture
def server():
    with JudgeServer(stall=1.0) as s:
        yield s


def judge(server, tmp_path, **options) -> LlmJudge:
    opts = {"base_url": server.url, "model": "judge-7b", "template": "geval", "dimension": "coherence",
            "answers": str(tmp_path / "answers.sqlite"), "backoff": 0.01, "retries": 2}
    opts.update(options)
    return create("llm-judge", **opts)


# -- parsing --------------------------------------------------------------------------------------------------------
def test_parse_rules():
    assert parse_score("4", "start") == 4.0
    assert parse_score(" 3.5 because", "start") == 3.5
    assert parse_score("Score: 4", "start") is None  # G-Eval's rule: a number at the start only
    assert parse_score("1.2.3", "start") is None  # the authors' float() fails (they scored it 0)
    assert parse_score("Score: 87/100", "first") == 87.0
    assert parse_score("no idea", "first") is None
    # GEMBA's parse_numerical_answer: exactly one integer, ['N'] or N/100
    assert parse_score("85", "gemba") == 85.0 and parse_score("Score: 70", "gemba") == 70.0
    assert parse_score("['90']", "gemba") == 90.0 and parse_score("80 or 90", "gemba") is None


def test_weighted_score_by_hand():
    lp = {"content": [{"token": " ", "top_logprobs": []},
                      {"token": "3", "top_logprobs": [{"token": "3", "logprob": math.log(0.5)},
                                                      {"token": "4", "logprob": math.log(0.3)},
                                                      {"token": "2", "logprob": math.log(0.1)},
                                                      {"token": "9", "logprob": math.log(0.05)},
                                                      {"token": "A", "logprob": math.log(0.05)}]}]}
    # 9 is out of 1:5 and "A" no score: (3*.5 + 4*.3 + 2*.1) / .9
    assert weighted_score(lp, 1, 5) == pytest.approx((1.5 + 1.2 + 0.2) / 0.9)
    assert weighted_score(None, 1, 5) is None


# -- registration ---------------------------------------------------------------------------------------------------
def test_named_only_and_options_required():
    cls = get_class("llm-judge")
    assert cls.in_default_run is False and cls.not_default_reason and "meta-eval[llm]" in cls.install_hint
    with pytest.raises(MetricError, match="base_url"):
        create("llm-judge")
    with pytest.raises(MetricError, match="dimension"):
        create("llm-judge", base_url="http://x/v1", model="m", template="geval", dimension="beauty")
    with pytest.raises(MetricError, match="on_unparsed"):
        create("llm-judge", base_url="http://x/v1", model="m", dimension="coherence", on_unparsed="zero")
    # the request paths are appended to base_url: a query would have come before them (/v1?key=k/chat/completions)
    for url in ("http://127.0.0.1:8000/v1?auth_token=Tok3nValue999", "http://127.0.0.1:8000/v1#x"):
        with pytest.raises(MetricError, match=r"has a query or fragment") as caught:
            create("llm-judge", base_url=url, model="m")
        assert "Tok3nValue999" not in str(caught.value)


# -- scoring --------------------------------------------------------------------------------------------------------
def test_weighted_scores_and_signature(server, tmp_path):
    metric = judge(server, tmp_path)
    exs = examples("The council will build a bridge.", "A bridge. Council. Tuesday.", "Euros were spent.")
    out = metric.score(exs)["llm-judge"]
    expected = [expected_weighted(metric.prompt(ex)) for ex in exs]
    assert np.allclose(out, expected)
    assert server.counts["chat"] == 3 and server.counts["models"] == 1
    sig = metric.signature()
    assert sig.startswith(f"llm-judge|model:judge-7b|server:{server.url}|template:geval@")
    assert "range:1:5" in sig and "temperature:0.0" in sig and "n:1" in sig
    # the prompt is the authors' form with the texts filled in, sent as a system message
    assert server.prompts[0].startswith("You will be given one summary written for a news article.")
    assert DOC in server.prompts[0] and server.prompts[0].endswith("- Coherence:")


def test_samples_without_logprobs_mean_of_answers_and_server_ignoring_n(tmp_path):
    with JudgeServer(ignore_n=True) as server:
        metric = judge(server, tmp_path, logprobs="false", samples=3, temperature=2)
        ex = examples("Some summary.")[0]
        assert metric.score([ex])["llm-judge"][0] == expected_score(metric.prompt(ex))
        assert server.counts["chat"] == 3  # one choice per answer: asked until 3 were collected
    assert "n:3" in metric.signature() and "logprobs:no" in metric.signature()


def test_concurrency_is_the_number_of_requests_in_flight(tmp_path):
    with JudgeServer(delay=0.1) as server:
        metric = judge(server, tmp_path, concurrency=4, answers="none")
        metric.score(examples(*[f"row {i}" for i in range(16)]))
        assert server.counts["chat"] == 16 and 2 <= server.peak <= 4
        server.peak = 0
        serial = judge(server, tmp_path, concurrency=1, answers="none")
        serial.score(examples(*[f"other row {i}" for i in range(4)]))
    assert server.peak == 1 and server.in_flight == 0


def test_retries_429_stall_malformed(server, tmp_path):
    metric = judge(server, tmp_path, timeout=0.3)
    exs = examples("RATE429 one", "STALL two", "MALFORMED three")
    out = metric.score(exs)["llm-judge"]
    assert np.allclose(out, [expected_weighted(metric.prompt(ex)) for ex in exs])
    assert server.counts["chat"] == 6 and metric.stats["retries"] == 3


def test_pickled_metric_scores_the_same(server, tmp_path):
    """What a worker process (a Ray actor) receives: the fitted metric, without its client, store or lock."""
    import pickle

    metric = judge(server, tmp_path, answers="none")
    exs = examples("one summary", "another summary")
    first = metric.score(exs)["llm-judge"]
    copy = pickle.loads(pickle.dumps(metric))
    assert copy.signature() == metric.signature() and copy.served == "judge-7b"
    assert np.array_equal(copy.score(exs)["llm-judge"], first)
    assert server.counts["models"] == 1 and server.counts["chat"] == 4  # no store: asked again, same answers


def test_500_fails_after_retries(server, tmp_path):
    metric = judge(server, tmp_path, retries=2)
    with pytest.raises(MetricError, match=r"for the row with candidate 'ERR500': POST \S+ failed 3 time\(s\); "
                                          r"last: HTTP 500"):
        metric.score(examples("ERR500"))
    assert server.counts["chat"] == 3


def test_errors_name_the_row_error_objects_are_retried_and_timeout_bounds_the_whole_request(server, tmp_path):
    """Audit, session 38: an HTTP error did not name the row; an ``error`` object sent with status 200 was taken
    for an answer from another model; a body trickled a byte at a time outlived ``timeout`` (httpx's is per read)."""
    import time

    with pytest.raises(MetricError, match=r"llm-judge: for the row with candidate 'BAD400 x': POST \S+ answered "
                                          r"HTTP 400: .*context length exceeded"):
        judge(server, tmp_path).score(examples("BAD400 x"))
    assert server.counts["chat"] == 1  # a 4xx other than 429 is not retried
    metric = judge(server, tmp_path, timeout=0.5)
    exs = examples("ERROBJ one", "TRICKLE two")
    started = time.monotonic()
    out = metric.score(exs)["llm-judge"]
    assert np.allclose(out, [expected_weighted(metric.prompt(ex)) for ex in exs])
    assert metric.stats["retries"] == 2 and server.counts["chat"] == 5
    assert time.monotonic() - started < 5  # the trickled body (~250 bytes x 0.05 s) was cut off at 0.5 s
    no_retry = judge(server, tmp_path, timeout=0.5, retries=0, answers="none")
    with pytest.raises(MetricError, match=r"for the row with candidate 'TRICKLE three': .*no complete answer within "
                                          r"0\.5 s"):
        no_retry.score(examples("TRICKLE three"))


def test_braces_in_texts_are_sent_as_written(server, tmp_path):
    """A candidate that contains ``{source}`` was filled in again with the source (audit, session 38)."""
    metric = judge(server, tmp_path)
    ex = Example("The code uses {source} and {dimension} as format fields.", ("A reference.",), "SECRET ARTICLE")
    metric.score([ex])
    assert "The code uses {source} and {dimension} as format fields." in server.prompts[-1]
    assert server.prompts[-1].count("SECRET ARTICLE") == 1  # the source's own place only


def test_another_server_under_the_same_model_id_is_another_signature(server, tmp_path):
    """Two servers may serve different weights under one id: a score cached from one is never served for the other
    (the signature keys the score cache; audit, session 38). Credentials are not part of it."""
    with JudgeServer() as other:
        first, second = judge(server, tmp_path), judge(other, tmp_path)
        first.fit([]), second.fit([])
        assert first.signature() != second.signature()
    port = server.url.split(":")[2].split("/")[0]
    with_user = judge(server, tmp_path, base_url=f"http://me:pw@127.0.0.1:{port}/v1")
    with_user.fit([])
    assert with_user.signature() == first.signature() and "pw" not in with_user.signature()


def test_unparsed_error_and_drop(server, tmp_path, capsys):
    with pytest.raises(MetricError, match="unparsed answer 'I cannot rate this summary.'"):
        judge(server, tmp_path).score(examples("NONUMBER"))
    metric = judge(server, tmp_path, on_unparsed="drop")
    exs = examples("NONUMBER", "fine")
    out = metric.score(exs)
    assert out["llm-judge"][0] == 3.0  # the middle of 1:5, reported as not measured
    assert metric.stats["unparsed"] == 1 and metric.stats["answers"] == 2
    assert metric.degenerate(exs, out) == ["unparsed answer (scored the range's middle, 3)", None]
    assert "unparsed: 1 of 2 answers" in capsys.readouterr().err
    # read back from the answer store by a new object (a rerun served from the score cache)
    fresh = judge(server, tmp_path, on_unparsed="drop")
    fresh.fit(exs)  # the runner fits (names the served model) before anything else
    # NONUMBER was asked once (by the on_unparsed=error run: the answer is stored, whatever the policy), "fine" once
    assert fresh.degenerate(exs, out)[0].startswith("unparsed answer") and server.counts["chat"] == 2
    assert "unparsed:drop-midpoint" in metric.signature()


def test_out_of_range_is_an_error(server, tmp_path):
    with pytest.raises(MetricError, match="outside the declared range 1:5"):
        judge(server, tmp_path, logprobs="false").score(examples("OUTRANGE"))


def test_changed_served_model_is_an_error(server, tmp_path):
    metric = judge(server, tmp_path)
    metric.fit([])
    server.answer_model = "judge-13b"
    with pytest.raises(MetricError, match="answered as model 'judge-13b'"):
        metric.score(examples("x"))
    with pytest.raises(MetricError, match="does not list model 'other'"):
        judge(server, tmp_path, model="other").score(examples("x"))


def test_answers_store_resumes_and_keeps_no_key(server, tmp_path, monkeypatch):
    monkeypatch.setenv("MY_JUDGE_KEY", "sk-secret-123")
    exs = examples(*[f"summary number {i}" for i in range(6)])
    first = judge(server, tmp_path, api_key_env="MY_JUDGE_KEY")
    a = first.score(exs[:4])["llm-judge"]  # a run killed after 4 answers
    assert server.headers[-1] == "Bearer sk-secret-123"
    again = judge(server, tmp_path, api_key_env="MY_JUDGE_KEY")
    b = again.score(exs)["llm-judge"]
    assert server.counts["chat"] == 6 and again.stats["stored"] == 4  # only the 2 new rows were asked
    assert np.array_equal(a, b[:4])
    blob = (tmp_path / "answers.sqlite").read_bytes()
    assert b"sk-secret" not in blob and "sk-secret" not in again.signature() and "sk-secret" not in repr(again)


def _open_stores_at_once(paths, barrier, results) -> None:
    from meta_eval.metrics.llm_judge import _Store

    for path in paths:
        barrier.wait(timeout=60)
        try:
            store = _Store(path)
            store.put(f"key-{os.getpid()}", "judge-7b", {"answer": "4"})
            store.close()
            results.put("ok")
        except MetricError as exc:
            results.put(str(exc))


def test_processes_opening_one_new_store_at_once_all_open_it(tmp_path):
    """Ray actors open one new answer store at once. SQLite's WAL switch on a new file fails at once with "database is
    locked" while another process switches it (no busy wait): before the set-up retried, about one open in fifteen
    failed here (four processes, 20 new stores: 80 opens), and CI failed on it once. Every open succeeds, and every
    store holds all four rows, marked as an answer store, in WAL mode."""
    import multiprocessing
    import sqlite3

    from meta_eval.metrics.llm_judge import STORE_ID

    ctx = multiprocessing.get_context("fork")  # the children only import the store: nothing to pickle
    paths = [tmp_path / f"store-{i}.sqlite" for i in range(20)]
    barrier, results = ctx.Barrier(4), ctx.Queue()
    workers = [ctx.Process(target=_open_stores_at_once, args=(paths, barrier, results)) for _ in range(4)]
    for w in workers:
        w.start()
    outcomes = [results.get(timeout=120) for _ in range(4 * len(paths))]
    for w in workers:
        w.join(timeout=60)
    assert outcomes == ["ok"] * len(outcomes), [o for o in outcomes if o != "ok"][:3]
    for path in paths:
        with sqlite3.connect(path) as conn:
            assert conn.execute("SELECT COUNT(*) FROM answers").fetchone()[0] == 4
            assert conn.execute("PRAGMA application_id").fetchone()[0] == STORE_ID
            assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_user_template_file(server, tmp_path):
    path = tmp_path / "mine.txt"
    path.write_text("range: 1:5\nRate {dimension} of {candidate} given {references}. Answer with a number.\n")
    metric = judge(server, tmp_path, template=str(path), dimension="clarity")
    ex = Example("my text", ("ref one", "ref two"))
    out = metric.score([ex])["llm-judge"]
    assert server.prompts[-1] == "Rate clarity of my text given ref one\nref two. Answer with a number.\n"
    assert out[0] == pytest.approx(expected_weighted(server.prompts[-1]))
    assert metric.needs_references and not metric.needs_source
    sig = metric.signature()
    path.write_text("range: 1:5\nRate {dimension} of {candidate}, please. Answer with a number.\n")
    assert judge(server, tmp_path, template=str(path), dimension="clarity").config()["template"] != \
        metric.config()["template"]
    assert "template:mine.txt@" in sig
    path.write_text("Rate {candidate}.\n")
    with pytest.raises(MetricError, match="declares no score range"):
        judge(server, tmp_path, template=str(path))
    assert judge(server, tmp_path, template=str(path), range="0:10").range == (0, 10)
    path.write_bytes(b"range: 1:5\nRate \xff{candidate}.\n")  # Latin-1: a sentence naming the file and line
    with pytest.raises(MetricError, match=r"template file \S+mine\.txt:2: not valid UTF-8 \(byte 0xff at column 6"):
        judge(server, tmp_path, template=str(path))


def test_gemba_da_prompt(server, tmp_path):
    metric = judge(server, tmp_path, template="gemba-da", dimension=None, source_lang="German",
                   target_lang="English", logprobs="false")
    ex = Example("The house is small.", ("The house is little.",), "Das Haus ist klein.")
    out = metric.score([ex])["llm-judge"]
    assert server.prompts[-1] == (
        'Score the following translation from German to English with respect to human reference on a continuous '
        'scale 0 to 100 where score of zero means "no meaning preserved" and score of one hundred means "perfect '
        'meaning and grammar".\n\nGerman source: "Das Haus ist klein."\nEnglish human reference: "The house is '
        'little."\nEnglish machine translation: "The house is small."\nScore: ')
    assert out[0] == expected_score(server.prompts[-1]) and metric.range == (0, 100)


# -- the command line -----------------------------------------------------------------------------------------------
def test_cli_summeval_all_rows_then_nothing_asked(server, tmp_path, shared_data, monkeypatch):
    monkeypatch.setenv("META_EVAL_DATA", str(shared_data))  # the command line (and load below) read it
    from typer.testing import CliRunner

    from meta_eval.cli import app

    args = ["run", "-j", "summeval", "-m", "llm-judge,rouge", "-o", f"base_url={server.url}", "-o", "model=judge-7b",
            "-o", "template=geval", "-o", "dimension=coherence", "--human", "coherence", "-o", f"answers={tmp_path / 'a.sqlite'}",
            "--cache", str(tmp_path / "scores.sqlite"), "--resamples", "20", "--output", str(tmp_path / "r.json")]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "llm-judge" in result.output and "rouge" in result.output and "Williams" in result.output
    from meta_eval.judgments import load
    from meta_eval.scoring.cache import example_key

    rows = load("summeval").examples()
    distinct = len({example_key(ex) for ex in rows})
    assert len(rows) == 1600 and 1500 < distinct <= 1600  # some systems wrote the same summary of a document
    asked = server.counts["chat"]
    assert asked == distinct  # one request per distinct row
    assert f"{distinct} requests" in result.output
    assert f"the store holds {distinct} of {distinct} distinct rows: unparsed: 0 of {distinct} answers" in result.output
    again = CliRunner().invoke(app, args[:-2] + ["--output", str(tmp_path / "r2.json")])
    assert again.exit_code == 0, again.output
    assert server.counts["chat"] == asked  # nothing asked twice (one GET /models to name the served model)
    assert "asked here: 0 requests" in again.output and f"unparsed: 0 of {distinct} answers" in again.output
    data = json.loads((tmp_path / "r2.json").read_text())
    assert "llm-judge" in json.dumps(data)


def test_killed_run_resumes_without_asking_answered_rows(tmp_path, shared_data, monkeypatch):
    """A `meta-eval run` process killed (SIGKILL) mid-run: the rerun asks exactly the rows whose answers were not
    stored, none twice."""
    import signal
    import sqlite3
    import subprocess
    import sys
    import time

    monkeypatch.setenv("META_EVAL_DATA", str(shared_data))  # the two processes (and load below) read it
    with JudgeServer(delay=0.01) as server:
        args = [sys.executable, "-m", "meta_eval.cli", "run", "-j", "summeval", "-m", "llm-judge", "-o",
                f"base_url={server.url}", "-o", "model=judge-7b", "-o", "dimension=coherence", "-o", "concurrency=4",
                "-o", f"answers={tmp_path / 'a.sqlite'}", "--human", "coherence", "--cache",
                str(tmp_path / "scores.sqlite"), "--resamples", "20"]
        proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 120
        while server.counts["chat"] < 300 and proc.poll() is None and time.time() < deadline:
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
        first = server.counts["chat"]
        assert 300 <= first < 1500
        with sqlite3.connect(tmp_path / "a.sqlite") as conn:
            stored = conn.execute("SELECT COUNT(*) FROM answers").fetchone()[0]
        assert first - 4 <= stored <= first  # at most the requests in flight were lost
        done = subprocess.run(args, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        from meta_eval.judgments import load
        from meta_eval.scoring.cache import example_key

        distinct = len({example_key(ex) for ex in load("summeval").examples()})
        assert server.counts["chat"] - first == distinct - stored
        import re

        from_store = int(re.search(r"(\d+) answers from the store", done.stderr).group(1))
        from_cache = int(re.search(r"llm-judge: \d+ computed, (\d+) from cache", done.stderr).group(1))
        assert from_store + from_cache == stored  # whole batches from the score cache, the rest from the store
