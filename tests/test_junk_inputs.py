"""No traceback for any input (issue 36, items 5 and 7): every reader of a user's file either reads it or raises
:class:`~meta_eval.errors.MetaEvalError` with one sentence, and the command line prints that sentence with exit 2.

- the cases of the fault trial, each through the real command line: a 401-digit integer score, JSON strings as
  scores, JSON nested 100,000 deep, score files under a memory limit (``ulimit -v``), ``--resamples 100000000``, an
  LLM server's garbage ``usage``, an LLM answer out of range named by its file:line and id, a probe of nothing;
- hypothesis feeds generated junk (random bytes, JSON values, deep nesting, huge integers, bad UTF-8, CSV with odd
  quoting) to every reader: judgments JSONL, ``--scores`` JSONL/CSV/TSV, protocol TOML, learned models and a
  board's results.json.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from conftest import small_set
from meta_eval.cli import app
from meta_eval.errors import MetaEvalError

REPO = Path(__file__).resolve().parents[1]
runner = CliRunner()


def _flat(text: str) -> str:
    return " ".join(text.split())


def _scores(path: Path, value_of=lambda i: i / 30, rows: int = 30, raw: dict | None = None) -> Path:
    """A JSONL score file for small_set's rows; ``raw`` maps a row to the literal JSON text of its score."""
    raw = raw or {}
    path.write_text("".join('{"id": "r%d", "score": %s}\n' % (i, raw.get(i, json.dumps(value_of(i))))
                            for i in range(rows)))
    return path


def _run(tmp_path, *extra: str):
    data = small_set(tmp_path / "s.jsonl")
    return runner.invoke(app, ["run", "-j", str(data), "-m", "rouge", "--no-cache", "--resamples", "20", *extra])


# ------------------------------------------------------------------------------------------ the trial's cases


def test_a_401_digit_integer_score_is_a_sentence_in_every_format(tmp_path):
    digits = "1" * 401
    jsonl = _scores(tmp_path / "big.jsonl", raw={2: digits})
    done = _run(tmp_path, "--scores", f"big={jsonl}")
    assert done.exit_code == 2, done.output
    assert f"{jsonl}:3: the score 'score' is 111111111111... (401 digits); scores must be finite" \
        in _flat(done.output)
    csv = tmp_path / "big.csv"
    csv.write_text("id,score\n" + "".join(f"r{i},{digits if i == 2 else i}\n" for i in range(30)))
    done = _run(tmp_path, "--scores", f"big={csv}")
    assert done.exit_code == 2 and f"{csv}:4: the score 'score'" in _flat(done.output), done.output


@pytest.mark.parametrize("text", ['"0.5"', '"1_000"', '"nan"'])
def test_a_json_string_is_not_a_score(tmp_path, text):
    scores = _scores(tmp_path / "str.jsonl", raw={3: text})
    done = _run(tmp_path, "--scores", f"mine={scores}")
    assert done.exit_code == 2, done.output
    assert (f"{scores}:4: the score 'score' is {text}, not a number: in a JSON-lines file a score is "
            "a JSON number, never a string") in _flat(done.output)


def test_a_text_score_must_be_a_decimal(tmp_path):
    for value in ("1_000", "٠.٥"):  # Python's float() takes both
        csv = tmp_path / "u.csv"
        csv.write_text("id,score\n" + "".join(f"r{i},{value if i == 1 else i}\n" for i in range(30)),
                       encoding="utf-8")
        done = _run(tmp_path, "--scores", f"mine={csv}")
        assert done.exit_code == 2 and f"{csv}:3: the score 'score' is {value!r}, not a number" \
            in _flat(done.output), done.output


def test_json_nested_100000_deep_is_refused_naming_the_line(tmp_path):
    deep = "[" * 100_000 + "]" * 100_000
    rows = [json.dumps({"id": f"r{i}", "candidate": "a b", "references": ["a"], "scores": {"o": i}})
            for i in range(5)]
    judgments = tmp_path / "deep.jsonl"
    judgments.write_text("\n".join(rows[:2] + ['{"id": "x", "candidate": "a", "scores": {"o": %s}}' % deep]
                                   + rows[2:]) + "\n")
    done = runner.invoke(app, ["run", "-j", str(judgments), "-m", "rouge", "--no-cache"])
    assert done.exit_code == 2, done.output
    assert f"{judgments}:3: JSON nested more than 64 levels deep" in _flat(done.output)
    scores = _scores(tmp_path / "deep-scores.jsonl", raw={4: deep})
    done = _run(tmp_path, "--scores", f"mine={scores}")
    assert done.exit_code == 2 and f"{scores}:5: JSON nested more than 64 levels deep" in _flat(done.output)
    # brackets inside strings are text, not nesting
    fine = tmp_path / "brackets.jsonl"
    fine.write_text("".join(json.dumps({"id": f"r{i}", "candidate": "[" * 500, "references": ["a"],
                                        "scores": {"o": i}}) + "\n" for i in range(5)))
    from meta_eval.judgments.jsonl import load

    assert len(load(fine)) == 5


_UNDER_LIMIT = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))
{code}
"""


def _limited(code: str, limit: int, *args: str, timeout: int = 300) -> subprocess.CompletedProcess:
    """``code`` in a fresh Python under an address-space limit of ``limit`` bytes (as ``ulimit -v``)."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-c", _UNDER_LIMIT.format(limit=limit, code=textwrap.dedent(code)), *args],
                          capture_output=True, text=True, timeout=timeout, env=env, cwd=REPO)


def test_score_files_and_texts_are_read_under_a_memory_limit_below_the_input_limit(tmp_path):
    """Reading once asked for an 8 GiB buffer (the input-size limit) before the first byte, so a two-line file failed
    with a MemoryError under ``ulimit -v 4000000``."""
    (tmp_path / "two.csv").write_text("id,score\nr0,0.5\n")
    (tmp_path / "two.tsv").write_text("id\tscore\nr0\t0.25\n")
    (tmp_path / "texts.txt").write_text("the cat\nsat down\n")
    res = _limited("""
        from meta_eval.scoring.imported import parse_spec, read_table
        from meta_eval.scoring.score_files import read_line_files
        print(read_table(parse_spec("a=" + sys.argv[1])).values, read_table(parse_spec("b=" + sys.argv[2])).values,
              [e.candidate for e in read_line_files(sys.argv[3])])
        """, 4_000_000 * 1024, str(tmp_path / "two.csv"), str(tmp_path / "two.tsv"), str(tmp_path / "texts.txt"))
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.split("\n")[0] == "[(0.5,)] [(0.25,)] ['the cat', 'sat down']"


def test_resamples_that_cannot_fit_in_memory_are_refused_before_scoring(tmp_path):
    data = small_set(tmp_path / "s.jsonl")
    cache = tmp_path / "c.sqlite"
    res = _limited("""
        from meta_eval.cli import main
        sys.argv = ["meta-eval", *sys.argv[1:]]
        main()
        """, 6 << 30, "run", "-j", str(data), "-m", "rouge", "--cache", str(cache), "--resamples", "100000000")
    assert res.returncode == 2, res.stderr[-3000:]
    text = _flat(res.stderr)
    assert "Traceback" not in res.stderr and "MemoryError" not in res.stderr
    assert "error: --resamples 100,000,000 needs about" in text and "the largest --resamples that fits is" in text
    assert not cache.exists()  # refused before anything was scored
    fits = int(text.split("the largest --resamples that fits is ")[1].split()[0].replace(",", ""))
    assert 1000 < fits < 100_000_000


def test_resampling_memory_is_checked_by_the_library_before_the_draws():
    import numpy as np

    from meta_eval.stats.resampling import available_memory, bootstrap_samples

    Z = np.arange(12.0).reshape(3, 4)
    free = available_memory()
    assert free is not None and free > 0
    with pytest.raises(MetaEvalError, match=r"--resamples 10,000,000,000,000 needs about .* the largest --resamples"):
        bootstrap_samples(Z, Z, "global", "pearson", n_resamples=10 ** 13)


def test_an_llm_servers_garbage_usage_and_an_answer_out_of_range(tmp_path):
    pytest.importorskip("httpx")
    from llm_server import JudgeServer

    template = tmp_path / "judge.txt"
    template.write_text("range: 1:5\nRate {candidate} against {references}.\n")

    def judged(path: Path, word: str, row: int) -> Path:
        path.write_text("".join(json.dumps({"id": f"r{i}", "doc_id": f"d{i // 3}", "system": f"s{i % 3}",
                                            "candidate": f"the cat sat {i}" + (f" {word}" if i == row else ""),
                                            "references": [f"a cat {i}"], "scores": {"o": float(i * 7 % 5)}}) + "\n"
                                for i in range(30)))
        return path

    with JudgeServer() as server:
        def run(data: Path, name: str):
            return runner.invoke(app, ["run", "-j", str(data), "-m", "llm-judge", "--no-cache", "--resamples", "20",
                                       "-o", f"base_url={server.url}", "-o", "model=judge-7b", "-o",
                                       f"template={template}", "-o", f"answers={tmp_path / name}"])

        done = run(judged(tmp_path / "usage.jsonl", "BADUSAGE", 4), "a.sqlite")
        assert done.exit_code == 0, done.output  # token counts are bookkeeping: garbage counts 0, never a ValueError
        data = judged(tmp_path / "range.jsonl", "OUTRANGE", 7)
        done = run(data, "b.sqlite")
        text = _flat(done.output)
        assert done.exit_code != 0 and "Traceback" not in done.output
        assert f"score 9.0 outside the declared range 1:5 for {data}:8 (id 'r7')" in text, done.output
        assert "of the batch" not in text


def test_a_probe_of_nothing_exits_2_with_a_sentence(tmp_path):
    data = tmp_path / "blank.jsonl"
    data.write_text("".join(json.dumps({"id": f"r{i}", "doc_id": f"d{i}", "system": "s", "candidate": " ",
                                        "scores": {"o": i}}) + "\n" for i in range(5)))
    done = runner.invoke(app, ["probe", "-j", str(data), "-m", "rouge", "--no-cache"])
    assert done.exit_code == 2, done.output
    assert "nothing to probe: blank (all) has no non-empty candidate to perturb" in _flat(done.output)


# ------------------------------------------------------------------------------------------ generated junk

JUNK = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                        HealthCheck.too_slow])

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-10 ** 500, max_value=10 ** 500) | st.floats()
    | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(
        ["id", "index", "doc_id", "system", "score", "scores", "candidate", "references", "reference", "source",
         "judges", "x", "signatures"]) | st.text(max_size=5), inner, max_size=5),
    max_leaves=12)


def _json_line(value) -> str:
    return json.dumps(value, allow_nan=True)


@st.composite
def junk_files(draw, kind: str) -> bytes:
    """Bytes of a file a user might pass: random bytes, bad UTF-8, JSON values and objects, deep nesting, huge
    integers, and (for tables) CSV with odd quoting."""
    choice = draw(st.sampled_from(["bytes", "json", "deep", "huge", "badutf8", "table"]))
    if choice == "bytes":
        return draw(st.binary(max_size=200))
    if choice == "json":
        return "\n".join(_json_line(v) for v in draw(st.lists(json_values, min_size=1, max_size=5))).encode()
    if choice == "deep":
        depth = draw(st.sampled_from([63, 64, 65, 1_000, 5_000, 100_000]))
        opener = draw(st.sampled_from(["[", '{"a":', '{"scores":', '{"id": "r0", "score": ']))
        closer = {"[": "]", '{"a":': "}", '{"scores":': "}", '{"id": "r0", "score": ': "}"}[opener]
        return (opener * depth + "1" + closer * depth).encode()
    if choice == "huge":
        digits = draw(st.sampled_from([309, 401, 4_300, 4_301, 10_000]))
        return ('{"id": "r0", "score": %s}\n{"id": "r1", "index": 1, "scores": {"o": %s}}'
                % ("9" * digits, "-" + "7" * digits)).encode()
    if choice == "badutf8":
        return b'{"id": "r0", "score": 1, "x": "\xff\xfe"}\n' + draw(st.binary(max_size=20))
    cells = st.text(alphabet=st.sampled_from(list('ab1.0"\',\t\r\n \\_-e')), max_size=8)
    rows = draw(st.lists(st.lists(cells, min_size=1, max_size=4), min_size=1, max_size=5))
    sep = "\t" if kind == "tsv" else ","
    return "\n".join(sep.join(r) for r in rows).encode()


def _must_read_or_refuse(read, path: Path, refused: tuple[type[Exception], ...] = (MetaEvalError,)) -> None:
    try:
        read(path)
    except refused as exc:
        assert str(exc).strip() and "\n" not in str(exc).strip().split("\n")[0]
    # anything else (RecursionError, OverflowError, KeyError, TypeError, MemoryError...) fails the test


DEEP = ('{"id": "r0", "score": ' + "[" * 100_000 + "]" * 100_000 + "}").encode()
HUGE = ('{"id": "r0", "score": %s}' % ("9" * 401)).encode()
HUGE_TEXT = ("id,score\nr0,%s\n" % ("9" * 401)).encode()
DEEP_ROW = ('{"candidate": "a", "scores": {"o": ' + "[" * 100_000 + "]" * 100_000 + "}}").encode()
HUGE_ROW = ('{"candidate": "a", "scores": {"o": %s}}' % ("9" * 401)).encode()


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "tsv"])
@JUNK
@given(data=st.data())
def test_score_file_readers_read_or_refuse_junk(tmp_path, fmt, data):
    _read_scores(tmp_path, fmt, data.draw(junk_files(fmt)))


@pytest.mark.parametrize("fmt, blob", [("jsonl", DEEP), ("jsonl", HUGE), ("csv", HUGE_TEXT),
                                       ("tsv", HUGE_TEXT.replace(b",", b"\t")), ("csv", b'id,score\nr0,"0.5\n'),
                                       ("csv", b"id,score\nr0,\xff\n")],
                         ids=["deep", "huge", "huge-csv", "huge-tsv", "open-quote", "bad-utf8"])
def test_score_file_readers_refuse_the_trials_junk(tmp_path, fmt, blob):
    from meta_eval.scoring.imported import parse_spec, read_table

    path = tmp_path / f"junk.{fmt}"
    path.write_bytes(blob)
    with pytest.raises(MetaEvalError, match=f"^{path}:[0-9]+: "):  # one sentence naming file and line
        read_table(parse_spec(f"mine={path}"))


def _read_scores(tmp_path: Path, fmt: str, blob: bytes) -> None:
    from meta_eval.scoring.imported import parse_spec, read_table

    path = tmp_path / f"junk.{fmt}"
    path.write_bytes(blob)
    _must_read_or_refuse(lambda p: read_table(parse_spec(f"mine={p}")), path)


@JUNK
@given(blob=junk_files("jsonl"))
@example(blob=DEEP_ROW)
@example(blob=HUGE_ROW)
def test_the_judgments_reader_reads_or_refuses_junk(tmp_path, blob):
    from meta_eval.judgments.jsonl import load

    path = tmp_path / "junk.jsonl"
    path.write_bytes(blob)
    _must_read_or_refuse(load, path)


toml_junk = st.one_of(
    st.binary(max_size=200),
    st.integers(min_value=100, max_value=50_000).map(lambda d: ("a = " + "[" * d + "]" * d).encode()),
    st.integers(min_value=100, max_value=50_000).map(lambda d: ("a = " + "{b = " * d + "1" + "}" * d).encode()),
    st.builds(lambda name, parts: (f'name = {json.dumps(name)}\ntitle = "t"\ncitation = "c"\nsource = "s"\n'
                                   + parts).encode(), st.text(max_size=5),
              st.sampled_from(["", "part = 1\n", "[[part]]\n", '[[part]]\nname = "x"\n', "[[part]]\nname = 3\n",
                               '[[part]]\nname = "x"\njudgments = "summeval"\nstatistic = "nope"\n',
                               '[[part]]\nname = "x"\njudgments = "summeval"\n[part.values]\na = "b"\n',
                               '[expected]\nmatch = "x"\n[[part]]\nname = "x"\n'])),
)


@JUNK
@given(data=toml_junk)
@example(data=("a = " + "[" * 100_000 + "]" * 100_000).encode())
def test_the_protocol_reader_reads_or_refuses_junk(tmp_path, data):
    from meta_eval.protocol import load_protocol

    path = tmp_path / "junk.toml"
    path.write_bytes(data)
    _must_read_or_refuse(load_protocol, path)


model_junk = st.one_of(
    junk_files("json"),
    st.fixed_dictionaries({"format": st.just("meta-eval-learned"), "schema": st.integers(0, 3)},
                          optional={"features": json_values, "scaler": json_values, "weights": json_values,
                                    "intercept": json_values, "alpha": json_values, "components": json_values,
                                    "heldout": json_values, "rows": json_values, "documents": json_values,
                                    "n": json_values}).map(lambda d: _json_line(d).encode()),
)


@JUNK
@given(data=model_junk)
@example(data=('{"format": "meta-eval-learned", "schema": ' + "[" * 100_000 + "]" * 100_000 + "}").encode())
@example(data=('{"format": "meta-eval-learned", "schema": %s}' % ("1" * 5000)).encode())
def test_the_learned_model_reader_reads_or_refuses_junk(tmp_path, data):
    from meta_eval.metrics.learned_format import MODEL_FORMAT, LearnedModel, LearnedModelError

    path = tmp_path / "junk.json"
    path.write_bytes(data.replace(b'"meta-eval-learned"', json.dumps(MODEL_FORMAT).encode()))
    # metrics/ imports nothing of meta_eval outside meta_eval.metrics (tests/test_learn.py), so its reader raises its
    # own LearnedModelError, which the run turns into a sentence (the test below)
    _must_read_or_refuse(LearnedModel.load, path, (LearnedModelError,))


def test_a_learned_model_nested_100000_deep_is_a_sentence(tmp_path):
    model = tmp_path / "deep.json"
    model.write_text('{"format": ' + "[" * 100_000 + "]" * 100_000 + "}")
    data = small_set(tmp_path / "s.jsonl")
    done = runner.invoke(app, ["run", "-j", str(data), "-m", f"learned:{model}", "--no-cache"])
    assert done.exit_code == 2 and "Traceback" not in done.output, done.output
    assert f"learned model {model} is not valid JSON" in _flat(done.output)


@JUNK
@given(data=junk_files("json"))
@example(data=("[" * 100_000 + "]" * 100_000).encode())
@example(data=b'[{"schema": 1}]')
def test_the_results_json_reader_reads_or_refuses_junk(tmp_path, data):
    from meta_eval.leaderboard.publish import read_results

    (tmp_path / "results.json").write_bytes(data)
    _must_read_or_refuse(read_results, tmp_path)
