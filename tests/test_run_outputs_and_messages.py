"""What ``run`` and ``score`` write and say (exploratory testing, batch D): every output asked for is checked before
any scoring and written in the format its name says, the JSON carries every number the table prints, the csv and
Markdown tables keep their title, data cannot reach the terminal raw, and the messages say true things in the
user's words.

Every run here is on a small generated set (``_set``): four systems of clearly different quality over eight
documents, so that every level has units and ROUGE ranks the systems as the humans do.
"""
from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

import conftest
from meta_eval.cli import app

runner = CliRunner()


def _flat(text: str) -> str:
    return " ".join(text.split())


def _set(path: Path, *, system=lambda s: f"s{s}", dimension: str = "overall") -> Path:
    """Eight documents x four systems; system s keeps 3 + s of the reference's 8 words, and its human score is s plus
    a document-dependent offset (so documents disagree a little, but the system means are 0.5, 1.5, 2.5, 3.5)."""
    words = "the quick brown fox jumps over the dog".split()
    lines = []
    for d in range(8):
        reference = " ".join(words) + f" {d}"
        for s in range(4):
            candidate = " ".join(words[:3 + s]) + f" {d}" + " filler" * (d % 3)
            lines.append(json.dumps({"id": f"d{d}-s{s}", "doc_id": f"d{d}", "system": system(s),
                                     "candidate": candidate, "references": [reference],
                                     "scores": {dimension: s + (d * (s + 1)) % 3 * 0.5}}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _run(tmp_path: Path, *args: str):
    return runner.invoke(app, ["run", "-j", str(_set(tmp_path / "set.jsonl")), "--resamples", "50",
                               "--cache", str(tmp_path / "c.sqlite"), *args])


# -- --plot is checked before any scoring ---------------------------------------------------------------------
def test_a_scatter_of_a_variant_hidden_by_default_is_drawn_and_shown(tmp_path):
    conftest.require_module("matplotlib", "pip install 'meta-eval[plot]'")
    figure = tmp_path / "sc.svg"
    done = _run(tmp_path, "-m", "rouge", "--plot", f"scatter=rouge1-p:{figure}")
    assert done.exit_code == 0, done.output
    assert figure.is_file() and "rouge1-p (rows)" in figure.read_text(encoding="utf-8")  # its axis label
    table = [line for line in done.stdout.splitlines() if line.startswith("│ rouge")]
    assert any(line.startswith("│ rouge1-p ") for line in table)  # shown, as an explicit --baseline is
    assert not any(line.startswith("│ rouge2-p ") for line in table)  # the others stay hidden


def test_a_scatter_of_a_variant_no_chosen_metric_has_is_refused_before_scoring(tmp_path):
    for variant in ("chrf", "rouge1p"):
        done = _run(tmp_path, "-m", "rouge", "--plot", f"scatter={variant}:{tmp_path / 'sc.png'}")
        assert done.exit_code == 2, done.output
        assert "Traceback" not in done.output and len(done.output.strip().splitlines()) == 1
        assert f"--plot scatter={variant}:{tmp_path / 'sc.png'}: '{variant}' is not a variant of the chosen " \
               "metrics" in _flat(done.output)
        assert not (tmp_path / "c.sqlite").exists() and not (tmp_path / "sc.png").exists()  # nothing scored
    assert "(did you mean rouge1-p" in _flat(done.output)


def test_an_unknown_plot_kind_is_refused_not_taken_for_a_file_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for item, words in (("foo:x.png", "unknown figure kind 'foo'"),
                        ("pvalues=rouge1-f:x.png", "only scatter takes a variant"),
                        ("scatter=:x.png", "name the variant after 'scatter='")):
        done = _run(tmp_path, "-m", "rouge", "--plot", item)
        assert done.exit_code == 2, done.output
        message = _flat(done.output)
        assert f"--plot {item}: {words}" in message and "pvalues:FILE, scatter:FILE or scatter=VARIANT:FILE" in message
    assert sorted(p.name for p in tmp_path.iterdir()) == ["set.jsonl"]  # no 'foo:x.png', nothing scored


def test_a_scatter_variant_with_a_slash_or_backslash_is_a_variant_not_a_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for variant in ("rouge\\1", "a/b"):  # not variants here: refused by name, never written as a file
        item = f"scatter={variant}:x.png"
        done = _run(tmp_path, "-m", "rouge", "--plot", item)
        assert done.exit_code == 2, done.output
        assert f"--plot {item}: {variant!r} is not a variant of the chosen metrics" in _flat(done.output)
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["set.jsonl"]  # no 'scatter=rouge\\1:x.png', no folder


# -- an output's suffix says its format, checked before any scoring --------------------------------------------------
def test_run_output_is_json_and_another_suffix_is_refused_before_scoring(tmp_path):
    for name in ("res.csv", "res.md", "res"):
        done = _run(tmp_path, "-m", "rouge", "--output", str(tmp_path / name))
        assert done.exit_code == 2, done.output
        message = _flat(done.output)
        assert f"--output {tmp_path / name}: write .json (the suffix chooses the format)" in message
        assert "--format" in message and "Traceback" not in message
        assert not (tmp_path / name).exists() and not (tmp_path / "c.sqlite").exists()  # nothing scored
    done = _run(tmp_path, "-m", "rouge", "--output", str(tmp_path / "res.JSON"))
    assert done.exit_code == 0, done.output
    assert json.loads((tmp_path / "res.JSON").read_text())["judgments"] == "set"


def test_score_output_that_is_a_folder_is_named_a_folder(tmp_path):
    texts = tmp_path / "in.jsonl"
    texts.write_text('{"candidate": "a b", "references": ["a b c"]}\n', encoding="utf-8")
    done = runner.invoke(app, ["score", "-m", "chrf", "-i", str(texts), "--no-cache", "--output", str(tmp_path)])
    assert done.exit_code == 2 and f"--output {tmp_path} is a folder" in _flat(done.output), done.output
    done = runner.invoke(app, ["score", "-m", "chrf", "-i", str(texts), "--no-cache", "--output",
                               str(tmp_path / "x.xlsx")])
    assert done.exit_code == 2 and "write .jsonl, .csv or .tsv (the suffix chooses the format), not '.xlsx'" in \
        _flat(done.output), done.output


# -- score -i reads the file `judgments --export` writes ------------------------------------------------------------
def test_score_reads_the_rows_judgments_export_writes(tmp_path):
    exported, plain = tmp_path / "rows.jsonl", tmp_path / "plain.jsonl"
    done = runner.invoke(app, ["judgments", str(_set(tmp_path / "set.jsonl")), "--export", str(exported)])
    assert done.exit_code == 0, done.output
    lines = exported.read_text(encoding="utf-8").splitlines()
    assert "signatures" in json.loads(lines[0]) and len(lines) == 33  # meta-eval's header, then the 32 rows
    plain.write_text("\n".join(lines[1:]) + "\n", encoding="utf-8")  # the same rows without the header
    scores = []
    for source in (exported, plain):
        out = tmp_path / f"{source.stem}-scores.jsonl"
        done = runner.invoke(app, ["score", "-m", "chrf", "-i", str(source), "--no-cache", "--output", str(out)])
        assert done.exit_code == 0, done.output
        scores.append([json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()[1:]])
    assert len(scores[0]) == 32 and scores[0] == scores[1]  # every row an example, index 0 the first row
    late = tmp_path / "late.jsonl"  # only a first line can be the header
    late.write_text(lines[1] + "\n" + lines[0] + "\n", encoding="utf-8")
    done = runner.invoke(app, ["score", "-m", "chrf", "-i", str(late), "--no-cache"])
    assert done.exit_code == 2 and f"{late}:2: expected an object with a string 'candidate'" in _flat(done.output)


# -- csv and Markdown: data escaped, the title kept -----------------------------------------------------------------
def test_csv_on_stdout_shows_control_characters_as_escapes_and_stays_valid_csv(tmp_path):
    import csv
    import io

    data = _set(tmp_path / "set.jsonl")
    imported = tmp_path / "mine.jsonl"  # a score field named with ESC, a comma and a quote
    imported.write_text("".join(json.dumps({"id": f"d{d}-s{s}", 'x\x1b[2J,"y': float(s * 8 + d)}) + "\n"
                                for d in range(8) for s in range(4)), encoding="utf-8")
    done = runner.invoke(app, ["run", "-j", str(data), "-m", "rouge", "--scores", f"mine={imported}", "--no-cache",
                               "--resamples", "50", "--format", "csv"])
    assert done.exit_code == 0, done.output
    assert "\x1b" not in done.stdout  # the byte never reaches the terminal
    rows = list(csv.reader(io.StringIO(done.stdout)))
    assert rows[0][0] == "metric" and len({len(row) for row in rows}) == 1  # every record whole
    assert 'mine/x\\x1b[2J,"y' in [row[0] for row in rows]  # the escape the table and md show, quoted by csv


def test_md_keeps_the_title_and_csv_prints_it_on_stderr(tmp_path):
    title = "set (all, n=32): system-level spearman correlation with human 'overall'"
    md = _run(tmp_path, "-m", "rouge", "--level", "system", "--format", "md")
    assert md.exit_code == 0, md.output
    lines = md.stdout.splitlines()
    assert lines[0].startswith(title) and lines[1] == "" and lines[2].startswith("| metric |")
    done = _run(tmp_path, "-m", "rouge", "--level", "system", "--format", "csv")
    assert done.exit_code == 0, done.output
    assert done.stdout.startswith("metric,") and title not in done.stdout  # a plain csv table
    assert any(line.startswith(title) for line in done.stderr.splitlines())


# -- the JSON holds what --pairwise and --differences print ----------------------------------------------------------
def test_the_json_carries_the_printed_ranks_differences_and_pairwise_tests(tmp_path):
    import csv
    import io

    from meta_eval.report.tables import fmt

    out = tmp_path / "r.json"
    done = _run(tmp_path, "-m", "rouge,chrf,bleu", "--pairwise", "--differences", "--format", "csv", "--output",
                str(out))
    assert done.exit_code == 0, done.output
    rows = list(csv.reader(io.StringIO(done.stdout)))
    header, table = rows[0], {row[1]: row for row in rows[1:]}
    delta = header.index("Δ vs rougeL-f [95% CI]")
    doc = json.loads(out.read_text(encoding="utf-8"))
    results = {r["metric"]: r for r in doc["results"]}
    assert len({r["rank"] for r in results.values()}) > 1  # the set tells some variants apart
    for metric, r in results.items():
        assert table[metric][0] == str(r["rank"])  # the rank column is the JSON's rank
        d = r["difference_vs_baseline"]
        if metric == "rougeL-f":
            assert d is None and table[metric][delta] == "(baseline)"
        else:  # the same difference (to the baseline's value) and interval as printed
            assert d["value"] == r["value"] - results["rougeL-f"]["value"]
            assert table[metric][delta] == f"{d['value']:+.3f} [{fmt(d['ci'][0])}, {fmt(d['ci'][1])}]"
    pairwise = doc["pairwise"]
    assert pairwise["test"] == "williams" and pairwise["correction"] == "holm" and doc["differences"]["baseline"] == \
        "rougeL-f"
    names = pairwise["variants"]
    assert sorted(names) == sorted(results) and all(len(row) == len(names) for row in pairwise["p"])
    base = names.index("rougeL-f")
    for i, metric in enumerate(names):  # the matrix's entry against the baseline is the table's p, exactly
        assert pairwise["p"][i][i] is None
        if metric != "rougeL-f" and results[metric]["williams_p_vs_baseline"] is not None:
            assert pairwise["p"][i][base] == results[metric]["williams_p_vs_baseline"]
    plain = tmp_path / "plain.json"  # not asked for: no new key
    assert _run(tmp_path, "-m", "rouge,chrf,bleu", "--output", str(plain)).exit_code == 0
    again = json.loads(plain.read_text(encoding="utf-8"))
    assert "pairwise" not in again and "differences" not in again
    assert not {"rank", "difference_vs_baseline"} & set(again["results"][0])


# -- the missing-baseline advice names only what works ---------------------------------------------------------------
def test_a_default_baseline_hidden_by_m_family_is_said_so_and_the_advice_works(tmp_path):
    done = _run(tmp_path, "-m", "rouge1")
    assert done.exit_code == 0, done.output
    message = _flat(done.output)
    assert ("the set set's default baseline rougeL-f was scored but is not shown: -m rouge1 shows only the rouge "
            "variants it names; pass --baseline rougeL-f") in message and "add it to -m (rouge1,rougeL-f)" in message
    assert "is not among the chosen metrics" not in message and "add -m rouge " not in message
    for advice in (["-m", "rouge1", "--baseline", "rougeL-f"], ["-m", "rouge1,rougeL-f"]):  # each does what it says
        done = _run(tmp_path, *advice)
        assert done.exit_code == 0 and "no test against a baseline" not in done.output, done.output
        assert "Williams p vs rougeL-f" in _flat(done.stdout)


def test_a_default_baseline_that_cannot_run_on_the_set_is_not_advised(tmp_path):
    data = _set(tmp_path / "set.jsonl")
    rows = [json.loads(line) for line in data.read_text(encoding="utf-8").splitlines()]
    sourced = tmp_path / "sourced.jsonl"  # no references, a source: ROUGE (the default baseline) cannot run
    sourced.write_text("".join(json.dumps({**{k: v for k, v in r.items() if k != "references"},
                                           "source": r["references"][0]}) + "\n" for r in rows), encoding="utf-8")
    done = runner.invoke(app, ["run", "-j", str(sourced), "-m", "chrf", "-o", "ref=source", "--no-cache",
                               "--resamples", "50"])
    assert done.exit_code == 0, done.output
    message = _flat(done.output)
    assert ("the sourced set's default baseline rougeL-f (rouge) cannot run here: needs references, which sourced "
            "does not have; to test against another variant, pass --baseline VARIANT (the chosen: chrf)") in message
    assert "add -m rouge" not in message
    done = runner.invoke(app, ["run", "-j", str(sourced), "-m", "chrf,rouge", "-o", "ref=source", "--no-cache",
                               "--resamples", "50"])  # what the old advice led to
    assert done.exit_code == 1 and "rouge not run: needs references" in _flat(done.output), done.output


# -- smaller messages: true, in the user's words -------------------------------------------------------------------
def _rows(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_judgment_rows_are_refused_in_json_words(tmp_path):
    good = [json.loads(line) for line in _set(tmp_path / "set.jsonl").read_text().splitlines()]
    for change, expected in ((lambda r: r.update(scores={}), ":4: 'scores' is empty; give at least one dimension's"),
                             (lambda r: r.pop("scores"), ":4: missing 'scores'"),
                             (lambda r: r.update(scores={"overall": True}), ":4: human score true is not a finite "
                                                                            "number or null"),
                             (lambda r: r.update(judges={"overall": 3}), ":4: judges['overall'] must be a list of "
                                                                         "numbers (one per judge), got 3")):
        rows = [dict(r) for r in good]
        change(rows[3])
        data = _rows(tmp_path / "bad.jsonl", rows)
        done = runner.invoke(app, ["run", "-j", str(data), "-m", "rouge", "--no-cache"])
        assert done.exit_code == 2 and f"{data}{expected}" in _flat(done.output), done.output
        assert "True" not in done.output
    scores = _rows(tmp_path / "mine.jsonl", [{"id": r["id"], "score": None if i == 2 else 0.5} for i, r in
                                              enumerate(good)])
    done = runner.invoke(app, ["run", "-j", str(tmp_path / "set.jsonl"), "--scores", f"mine={scores}", "--no-cache"])
    assert done.exit_code == 2 and f"{scores}:3: the score 'score' is null, not a number" in _flat(done.output)


def test_a_negative_seed_and_an_empty_human_dimension_are_refused_before_scoring(tmp_path):
    for args, expected in ((["--seed", "-1"], "--seed must be a whole number from 0, not -1"),
                           (["--spa-seed", "-1"], "--spa-seed must be a whole number from 0, not -1"),
                           (["--human", ""], "--human must name a human dimension of the set, not ''")):
        done = _run(tmp_path, "-m", "rouge", "--level", "summary", *args)
        assert done.exit_code == 2 and expected in _flat(done.output), done.output
        assert not (tmp_path / "c.sqlite").exists()  # nothing scored
    done = runner.invoke(app, ["score", "-m", "chrf", "-c", str(tmp_path / "set.jsonl"), "--seed", "-1",
                               "--sample", "2", "--no-cache"])
    assert done.exit_code == 2 and "--seed must be a whole number from 0, not -1" in _flat(done.output)


def test_counts_agree_with_their_nouns_and_a_dimension_is_written_one_way(tmp_path):
    dim = "ov|er_all\\"  # a backslash: Python's repr would double it
    rows = [{"id": f"r{s}", "doc_id": "d0", "system": f"s{s}", "candidate": "the cat " * (s + 1),
             "references": ["the cat sat"], "scores": {dim: None if s == 6 else float(s % 4)}} for s in range(7)]
    done = runner.invoke(app, ["run", "-j", str(_rows(tmp_path / "one.jsonl", rows)), "-m", "rouge", "--no-cache",
                               "--resamples", "50"])
    assert done.exit_code == 0, done.output
    message = _flat(done.output)
    assert f"one (all): 6 rows, 1 document, human: {dim} (1 row without a {dim} score left out)" in message
    assert f"with human '{dim}'" in message and f"for dimension '{dim}'" in message  # title and ceiling line
    assert "ov|er_all\\\\" not in done.output


def test_a_run_of_imported_scores_only_does_not_count_distinct_texts(tmp_path):
    data = _set(tmp_path / "set.jsonl")
    scores = _rows(tmp_path / "mine.jsonl", [{"id": f"d{d}-s{s}", "score": float(s + d % 2)} for d in range(8)
                                             for s in range(4)])
    done = runner.invoke(app, ["run", "-j", str(data), "-m", "mine", "--scores", f"mine={scores}", "--no-cache",
                               "--resamples", "50"])
    assert done.exit_code == 0, done.output
    assert "distinct (candidate, references, source) texts" not in done.output
    assert "mine: read from its file" in done.output


# -- the other commands: the same refusals, before any work ----------------------------------------------------
def test_learn_and_probe_take_a_json_output_and_every_command_a_seed_from_0(tmp_path):
    """learn --output l.csv wrote JSON into it, as run did; learn and publish's --seed -1 failed after the scoring
    with numpy's words ("expected non-negative integer", "a non-negative int or a numpy.random.Generator")."""
    data = str(_set(tmp_path / "set.jsonl"))
    cache = ["--cache", str(tmp_path / "c.sqlite")]
    for argv in (["learn", "-j", data, "-m", "rouge", "--output", str(tmp_path / "l.csv")],
                 ["probe", "-j", data, "-m", "rouge", "--output", str(tmp_path / "p.md")]):
        done = runner.invoke(app, argv + cache)
        assert done.exit_code == 2, done.output
        assert f"--output {argv[-1]}: write .json (the suffix chooses the format)" in _flat(done.output)
        assert not Path(argv[-1]).exists()
    for argv in (["learn", "-j", data, "-m", "rouge"],
                 ["leaderboard", "publish", "-j", data, "-m", "rouge", "--out", str(tmp_path / "board")]):
        done = runner.invoke(app, argv + cache + ["--seed", "-1"])
        assert done.exit_code == 2 and _flat(done.output) == "error: --seed must be a whole number from 0, not -1"
    assert not (tmp_path / "c.sqlite").exists() and not (tmp_path / "board").exists()  # nothing scored or made
