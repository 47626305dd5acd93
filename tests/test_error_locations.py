"""Errors that point at data name the file and line (or the row id) the user can open, never a traceback.

Every case goes through the real CLI (typer's test runner; one case in a separate process) on files written here.
Messages are compared with all whitespace removed, since the console wraps long lines. Line numbers and columns are
counted by hand from the files written in each test (a blank line is put before the faulty row where it matters,
so that a line number can never be confused with a row's position).
"""
from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from meta_eval.cli import app

runner = CliRunner()


WORDS = "the cat sat on the mat with a big red hat".split()


def row(i: int, **fields) -> dict:
    """Row ``r<i>``; its candidate holds the first i + 2 words of the reference, so ROUGE varies over the rows."""
    obj = {"id": f"r{i}", "doc_id": f"d{i % 2}", "system": f"s{i // 2}", "candidate": " ".join(WORDS[:i + 2]),
           "references": [" ".join(WORDS)], "scores": {"overall": float(i % 4)}}
    obj.update(fields)
    return {k: v for k, v in obj.items() if v is not ...}


def write(path: Path, lines: list) -> Path:
    """One line per item: a dict as JSON, a str as it is (``""``: a blank line)."""
    path.write_text("".join((json.dumps(x) if isinstance(x, dict) else x) + "\n" for x in lines), encoding="utf-8")
    return path


def invoke(*args) -> tuple[object, str]:
    res = runner.invoke(app, list(args))
    return res, "".join(res.output.split())


def squash(text: str) -> str:
    return "".join(text.split())


def assert_clean_failure(res) -> None:
    """Non-zero exit through the CLI's own error path: no exception escaped, no traceback printed."""
    assert res.exit_code != 0, res.output
    assert isinstance(res.exception, SystemExit), repr(res.exception)
    assert "Traceback" not in res.output


# -- 1. a row without a reference: its file and line, whatever the batch size and the cache ----------------------

def test_missing_reference_names_file_line_and_id_for_every_batch_size_and_a_warm_cache(tmp_path):
    good = [row(i) for i in range(6) if i != 4]
    bad = write(tmp_path / "noref.jsonl", [good[0], good[1], good[2], good[3], "", row(4, references=...), good[4]])
    # line 1-4: r0-r3, line 5 blank, line 6: r4 without references (position 4 among the rows), line 7: r5
    cache = tmp_path / "cache.sqlite"
    warm = write(tmp_path / "good.jsonl", good)
    for _ in range(2):  # the second run is all from the cache: the cache holds every other row's scores
        res, text = invoke("run", "-j", str(warm), "-m", "rouge", "--cache", str(cache))
        assert res.exit_code == 0, res.output
    assert "rouge:0computed,5fromcache" in text
    messages = []
    for extra in (["--batch-size", "1", "--no-cache"], ["--batch-size", "256", "--no-cache"],
                  ["--batch-size", "1", "--cache", str(cache)], ["--batch-size", "256", "--cache", str(cache)]):
        res, text = invoke("run", "-j", str(bad), "-m", "rouge", *extra)
        assert_clean_failure(res)
        assert squash(f"{bad}:6 (id 'r4')") in text and squash("rouge needs a reference for every row") in text
        assert "example4" not in text and "example0" not in text
        messages.append(text[text.index("rougeneeds"):])
    assert len(set(messages)) == 1, messages


def test_missing_references_name_the_first_three_rows_and_the_count(tmp_path):
    rows = [row(i, references=[] if i in (1, 2, 4, 5) else row(i)["references"]) for i in range(8)]
    path = write(tmp_path / "many.jsonl", rows)
    res, text = invoke("run", "-j", str(path), "-m", "rouge", "--no-cache")
    assert_clean_failure(res)
    assert squash(f"4 of 8 rows have none: {path}:2 (id 'r1'), {path}:3 (id 'r2') and {path}:5 (id 'r4') "
                  "(and 1 more)") in text


def test_a_row_without_an_id_is_named_by_its_line(tmp_path):
    path = write(tmp_path / "noid.jsonl", [row(0), row(1), row(2, id=..., references=...), row(3), row(4), row(5)])
    res, text = invoke("run", "-j", str(path), "-m", "rouge", "--no-cache")
    assert_clean_failure(res)
    assert squash(f"1 row has none: {path}:3.") in text  # the id is the line number: not repeated


def test_built_in_rows_are_named_by_set_id_document_and_system():
    from meta_eval.judgments.base import Judgment, JudgmentSet
    from meta_eval.scoring.runner import score_examples
    from meta_eval.metrics.base import MetricError
    from meta_eval.metrics.registry import create

    rows = [Judgment(f"x{i}", f"doc{i}", f"sys{i}", "a cat", () if i == 2 else ("a dog",), scores={"q": 1.0})
            for i in range(4)]
    jset = JudgmentSet("builtin", rows, ("q",), "q")
    for size in (1, 256):
        with pytest.raises(MetricError) as info:
            score_examples(create("rouge"), jset.examples(), batch_size=size)
        assert "1 row has none: builtin row 'x2' (document 'doc2', system 'sys2')" in str(info.value)
    with pytest.raises(MetricError, match=r"example 2 of the input \(from 0\)"):  # no labels: input position
        score_examples(create("rouge"), list(jset.examples()))


def test_score_names_the_line_of_its_input_files(tmp_path):
    cands = tmp_path / "c.txt"
    cands.write_text("a cat\nthe dog\nbirds\n", encoding="utf-8")
    sources = tmp_path / "s.txt"
    sources.write_text("src one\n\nsrc three\n", encoding="utf-8")
    res, text = invoke("score", "-m", "textrank", "-c", str(cands), "-s", str(sources), "--no-cache")
    assert_clean_failure(res)
    assert squash(f"textrank needs a source for every row, but 1 row has none (or an empty one): line 2 of "
                  f"{cands}, {sources}") in text
    inp = write(tmp_path / "in.jsonl", [{"candidate": "a", "references": ["b"]}, "", {"candidate": "c"}])
    res, text = invoke("score", "-m", "rouge", "-i", str(inp), "--no-cache")
    assert_clean_failure(res)
    assert squash(f"1 row has none: {inp}:3.") in text
    inp = write(tmp_path / "in2.jsonl", [{"candidate": "a", "references": ["b"]}, {"candidate": "c", "references": 5}])
    res, text = invoke("score", "-m", "rouge", "-i", str(inp), "--no-cache")
    assert_clean_failure(res)
    assert squash(f"{inp}:2: 'references' must be a list of strings") in text


# -- 2. invalid UTF-8: line and column, not a byte offset ----------------------------------------------------------

BAD_LINE = b'{"candidate": "\xc3\xa9t\xe9", "references": ["r"], "scores": {"overall": 1}}'
# 15 characters before the candidate's text, then "é" (2 bytes, 1 character) and "t": the Latin-1 byte 0xe9 is
# character 18 of the line.


@pytest.mark.parametrize("gz", [False, True])
def test_invalid_utf8_names_line_and_column(tmp_path, gz):
    good = [json.dumps(row(i)).encode() for i in range(5)]
    data = b"\n".join(good[:3] + [BAD_LINE] + good[3:]) + b"\n"
    path = tmp_path / ("latin.jsonl.gz" if gz else "latin.jsonl")
    path.write_bytes(gzip.compress(data) if gz else data)
    for command in (["judgments", str(path)], ["run", "-j", str(path), "-m", "rouge", "--no-cache"],
                    ["score", "-m", "rouge", "-i", str(path), "--no-cache"]):
        res, text = invoke(*command)
        assert_clean_failure(res)
        assert squash(f"{path}:4: not valid UTF-8 (byte 0xe9 at column 18)") in text, command
        assert "position" not in text


def test_invalid_utf8_in_line_files_names_line_and_column(tmp_path):
    cands = tmp_path / "cands.txt"
    cands.write_bytes(b"one\r\ntwo\r\nd\xc3\xa9j\xe0 vu\r\n")  # CRLF lines; "déj" then the Latin-1 byte of "à"
    refs = tmp_path / "refs.txt"
    refs.write_text("a\nb\nc\n", encoding="utf-8")
    res, text = invoke("score", "-m", "rouge", "-c", str(cands), "-r", str(refs), "--no-cache")
    assert_clean_failure(res)
    assert squash(f"{cands}:3: not valid UTF-8 (byte 0xe0 at column 4)") in text


def test_a_byte_order_mark_is_skipped(tmp_path):
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + "".join(json.dumps(row(i)) + "\n" for i in range(6)).encode())
    res, _ = invoke("judgments", str(path))
    assert res.exit_code == 0, res.output


def test_an_integer_too_long_for_python_is_a_sentence_not_python_advice(tmp_path):
    huge = json.dumps(row(1, scores={"overall": "N"})).replace('"N"', "9" * 5000)
    assert "9" * 5000 in huge
    path = write(tmp_path / "huge.jsonl", [row(0), huge])
    res, text = invoke("judgments", str(path))
    assert_clean_failure(res)
    assert squash(f"{path}:2: cannot read this line's JSON: it holds an integer of more than 4,300 digits, which no "
                  "score, id or label needs") in text
    assert "set_int_max_str_digits" not in text


def test_invalid_json_names_line_and_column(tmp_path):
    path = write(tmp_path / "broken.jsonl", [row(0), row(1), "", '{"candidate": "x", "scores": {"overall": 1}'])
    res, text = invoke("judgments", str(path))
    assert_clean_failure(res)
    # the line has 43 characters; the closing brace is missing at the column after them
    assert squash(f"{path}:4: invalid JSON (Expecting ',' delimiter at column 44)") in text


# -- 3. repeated ids: both lines ------------------------------------------------------------------------------------

def test_repeated_id_names_both_lines(tmp_path):
    rows = [row(0), row(1), row(2, id="x"), row(3), "", row(4), row(5, id="x")]
    path = write(tmp_path / "dupid.jsonl", rows)
    for command in (["judgments", str(path)], ["run", "-j", str(path), "-m", "rouge", "--no-cache"]):
        res, text = invoke(*command)
        assert_clean_failure(res)
        assert squash(f"{path}:7: id 'x' on line 7 was already used on line 3") in text


def test_a_default_id_colliding_with_a_given_one_says_why(tmp_path):
    path = write(tmp_path / "clash.jsonl", [row(0), row(1, id=...), row(2), row(3), row(4, id="2"), row(5)])
    res, text = invoke("judgments", str(path))
    assert_clean_failure(res)
    assert squash(f"{path}:5: id '2' on line 5 was already used on line 2 (a row without an 'id' takes its line "
                  "number as its id: line 2)") in text


# -- 4. a judges value that is not a list ----------------------------------------------------------------------------

@pytest.mark.parametrize("judges, message", [
    ({"overall": 3}, "judges['overall'] must be a list of numbers (one per judge), got 3"),
    ({"overall": [1, "two"]}, 'a judges[\'overall\'] value "two" is not a finite number or null'),
    ([1, 2], "'judges' must be an object of dimension -> list of numbers, got a list"),
])
def test_judges_of_the_wrong_type_name_the_line(tmp_path, judges, message):
    path = write(tmp_path / "judges.jsonl", [row(0), row(1), row(2, judges=judges), row(3), row(4), row(5)])
    res, text = invoke("judgments", str(path))
    assert_clean_failure(res)
    assert squash(f"{path}:3: {message}") in text


def test_judges_not_a_list_in_a_real_process_prints_no_traceback(tmp_path):
    path = write(tmp_path / "judges.jsonl", [row(0), row(1), row(2, judges={"overall": 3}), row(3)])
    code = ("import sys; from meta_eval.cli import app; "
            "sys.argv = ['meta-eval', 'run', '-j', sys.argv[1], '--no-cache']; app()")
    res = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=120,
                         cwd=Path(__file__).resolve().parents[1])
    assert res.returncode == 2, res.stderr
    assert "Traceback" not in res.stderr + res.stdout
    assert squash(f"{path}:3: judges['overall']") in squash(res.stderr)


# -- 5. a system named "a;b" is one system in a JSONL file ------------------------------------------------------------

def test_semicolon_in_a_jsonl_system_is_one_system(tmp_path):
    rows = [row(i, system=s, doc_id=d) for i, (d, s) in enumerate([("d1", "a;b"), ("d1", "c"), ("d1", "d"),
                                                                     ("d2", "a;b"), ("d2", "c"), ("d2", "d")])]
    path = write(tmp_path / "semi.jsonl", rows)
    res, text = invoke("judgments", str(path))
    assert res.exit_code == 0, res.output
    assert squash("system level (overall): yes: 3 systems") in text


# -- 6. a null doc_id: the row is its own document (documented), never a document "None" -------------------------

def test_null_doc_id_is_its_own_document_and_noted_with_its_line(tmp_path):
    from meta_eval.judgments import load

    rows = [row(0), row(1), "", row(2, doc_id=None), row(3, doc_id=None), row(4), row(5)]
    path = write(tmp_path / "nulldoc.jsonl", rows)
    jset = load(str(path))
    assert [r.doc_id for r in jset.rows] == ["d0", "d1", "r2", "r3", "d0", "d1"]
    assert jset.documents() == 4
    res, text = invoke("judgments", str(path))
    assert res.exit_code == 0, res.output
    assert squash(f"2 of 6 rows have no 'doc_id' (the first: {path}:4)") in text and "None" not in text


def test_null_doc_id_whose_id_is_another_rows_document_is_an_error(tmp_path):
    rows = [row(0), row(1), row(2, id="d1", doc_id=None), row(3), row(4), row(5)]
    path = write(tmp_path / "docclash.jsonl", rows)
    res, text = invoke("judgments", str(path))
    assert_clean_failure(res)
    assert squash(f"{path}:3: the row has no 'doc_id', so its id 'd1' stands for its own document, but {path}:2 "
                  "names a document 'd1' too") in text


# -- texts: mojibake repaired, empty and whitespace-only allowed, lone surrogates named -----------------------------

def test_mojibake_is_repaired_and_empty_texts_are_allowed(tmp_path):
    from meta_eval.judgments import load

    mojibake = "\u00e2\u0080\u009cquoted\u00e2\u0080\u009d"  # the UTF-8 bytes of curly quotes read as Latin-1
    rows = [row(0, candidate=mojibake), row(1, candidate=""), row(2, candidate="  \t "), row(3), row(4), row(5)]
    path = write(tmp_path / "texts.jsonl", rows)
    assert load(str(path)).rows[0].candidate == "\u201cquoted\u201d"
    res, _ = invoke("run", "-j", str(path), "-m", "rouge", "--no-cache")
    assert res.exit_code == 0, res.output


def test_a_lone_surrogate_names_line_and_field(tmp_path):
    path = tmp_path / "surrogate.jsonl"
    lines = [json.dumps(row(i)) for i in range(4)]
    lines[1] = lines[1].replace('"references": ["the', '"references": ["a cat \\ud83d sat", "the')
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    for command in (["judgments", str(path)], ["score", "-m", "rouge", "-i", str(path), "--no-cache"]):
        res, text = invoke(*command)
        assert_clean_failure(res)
        assert squash(f"{path}:2: a reference holds the lone surrogate \\ud83d at character 7") in text


# -- 7. the text utilities live in judgments/text.py ------------------------------------------------------------------

def test_text_utilities_have_one_home():
    from meta_eval import judgments
    import meta_eval.judgments.essays
    import meta_eval.judgments.jsonl
    import meta_eval.judgments.text
    import meta_eval.scoring.score_files

    assert judgments.jsonl.repair_text is judgments.text.repair_text
    assert meta_eval.scoring.score_files.repair_text is judgments.text.repair_text
    assert judgments.essays.text_fixer is judgments.text.text_fixer
    assert "def repair_text" not in Path(judgments.essays.__file__).read_text(encoding="utf-8")
    assert judgments.text.text_fixer("as-released")("\u00e2\u0080\u009c") == "\u00e2\u0080\u009c"
