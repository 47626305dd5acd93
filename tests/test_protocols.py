"""Named protocols: the file format, the comparison with printed numbers, and `meta-eval run --protocol` / `protocols`.

The real-data reproduction of each shipped protocol is in tests/test_protocol_reproduction.py.
"""
from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from meta_eval.cli import app
from meta_eval.protocol import Part, ProtocolError, compare, load_protocol, protocol_names

GOOD = """
name = "toy"
title = "A toy table"
citation = "A. Author (2020). A paper."
source = "Table 9"

[[part]]
name = "only"
judgments = "{path}"
human = "overall"
level = "global"
correlation = "pearson"
metrics = ["rouge"]
options = {{ use_stemmer = true }}
tolerance = 0.001

[part.printed]
"rouge1-f" = {printed}
"rouge2-f" = 0.5

[part.unmatched]
"rouge2-f" = "the paper used a different reference"
"""


def _jsonl(tmp_path):
    rows = [("the cat sat on the mat", "the cat sat on the mat", 1.0),
            ("a cat sat on a mat", "the cat sat on the mat", 0.8),
            ("the dog ran", "the cat sat on the mat", 0.1),
            ("cats sit on mats", "the cat sat on the mat", 0.5),
            ("nothing at all here", "the cat sat on the mat", 0.0)]
    path = tmp_path / "toy.jsonl"
    path.write_text("".join(json.dumps({"id": str(i), "doc_id": str(i), "system": "s", "candidate": c,
                                        "references": [r], "scores": {"overall": y}}) + "\n"
                            for i, (c, r, y) in enumerate(rows)), encoding="utf-8")
    return path


def test_every_shipped_protocol_loads_and_names_its_paper():
    names = protocol_names()
    assert {"sms-2019", "summeval-2021", "realsumm-2020"} <= set(names)
    for name in names:
        proto = load_protocol(name)
        assert proto.name == name
        assert proto.citation and proto.source and proto.parts
        for part in proto.parts:  # a part without printed numbers is a recipe (wmt24-spa), with nothing to count
            assert (part.printed or not sum((proto.expected or {}).values())) and 0 <= part.tolerance < 1


@pytest.mark.parametrize("keys,message", [
    ('statistic = "spa"\nlevel = "summary"', "spa is computed at level"),
    ('statistic = "acc-t"\nlevel = "summary"\nspa_seed = 4', "belong to statistic"),
    ('statistic = "accuracy"\ncorrelation = "kendall"\nlevel = "system"', "disagree"),
    ('statistic = "acc-eq"\nlevel = "system"', "must be one of"),
])
def test_pairwise_statistics_in_a_protocol_part(tmp_path, keys, message):
    from meta_eval.protocol import ProtocolError

    path = tmp_path / "p.toml"
    path.write_text(f'''name = "p"
title = "t"
citation = "c"
source = "s"
[[part]]
name = "a"
judgments = "wmt23"
human = "da_sqm"
{keys}
metrics = ["chrf"]
tolerance = 0.0
''')
    with pytest.raises(ProtocolError, match=message):
        load_protocol(path)
    ok = path.read_text().replace(keys, 'statistic = "spa"\nlevel = "system"\nspa_seed = 4\npermutations = 200')
    path.write_text(ok)
    part = load_protocol(path).parts[0]
    assert (part.correlation, part.spa_seed, part.permutations, part.printed) == ("spa", 4, 200, {})


def test_compare_statuses_by_hand():
    part = Part("p", "chaganty", "overall", "global", "spearman", ("x",), {"a": 0.30, "b": 0.30, "c": 0.30,
                                                                           "d": 0.30}, 0.01,
                unmatched={"b": "named reason"}, written=dict.fromkeys("abcd", "0.30"))
    cells = {c.variant: c for c in compare(part, {"a": 0.31, "b": 0.25, "c": 0.2})}
    assert cells["a"].status == "within 0.01" and cells["a"].difference == pytest.approx(0.01)
    assert cells["b"].status == "known mismatch" and cells["b"].reason == "named reason"
    assert cells["c"].status == "MISMATCH" and cells["c"].difference == pytest.approx(-0.1)
    assert cells["d"].status == "not run" and cells["d"].difference is None


@pytest.mark.parametrize("edit, message", [
    (lambda t: t.replace('level = "global"', 'level = "document"'), "'level' must be one of"),
    (lambda t: t.replace('metrics = ["rouge"]', 'metrics = []'), "'metrics' must be a non-empty list"),
    (lambda t: t.replace('"rouge2-f" = "the paper', '"rouge3-f" = "the paper'), "rouge3-f not in [part.printed]"),
    (lambda t: t.replace("tolerance = 0.001", 'tolerance = "small"'), "'tolerance' must be float"),
    (lambda t: t.replace('citation = "A. Author (2020). A paper."\n', ""), "missing 'citation'"),
    (lambda t: t.replace("[[part]]", "[[parts]]"), "needs at least one [[part]]"),
    (lambda t: t + "\n[oops", "cannot be read as TOML"),
])
def test_malformed_protocol_names_file_and_key(tmp_path, edit, message):
    path = tmp_path / "bad.toml"
    path.write_text(edit(GOOD.format(path="toy.jsonl", printed=0.5)), encoding="utf-8")
    with pytest.raises(ProtocolError) as exc:
        load_protocol(path)
    assert message in str(exc.value) and str(path) in str(exc.value)


def test_unknown_protocol_lists_the_known_ones():
    with pytest.raises(ProtocolError, match="unknown protocol 'nope'; known: .*sms-2019"):
        load_protocol("nope")


def test_run_protocol_end_to_end_on_a_file(tmp_path):
    """A protocol file by path runs, prints printed vs meta-eval, and writes every cell to the JSON output."""
    from scipy.stats import pearsonr

    from meta_eval.metrics import Example, create

    data = _jsonl(tmp_path)
    rows = [json.loads(line) for line in data.read_text().splitlines()]
    r1 = create("rouge").score([Example(r["candidate"], tuple(r["references"])) for r in rows])["rouge1-f"]
    expected = pearsonr(r1, [r["scores"]["overall"] for r in rows])[0]
    proto = tmp_path / "toy.toml"
    proto.write_text(GOOD.format(path=data, printed=round(expected, 4)), encoding="utf-8")
    out = tmp_path / "out.json"
    res = CliRunner().invoke(app, ["run", "--protocol", str(proto), "--no-cache", "--output", str(out)])
    assert res.exit_code == 0, res.output
    doc = json.loads(out.read_text())
    cells = {c["variant"]: c for c in doc["parts"][0]["cells"]}
    assert cells["rouge1-f"]["meta_eval"] == pytest.approx(expected, abs=1e-12)
    assert cells["rouge1-f"]["status"] == "match"
    assert cells["rouge2-f"]["status"] in ("match", "known mismatch")
    assert doc["counts"]["MISMATCH"] == 0 and doc["citation"] == "A. Author (2020). A paper."
    assert "Table 9" in res.output and "rouge1-f" in res.output


INTERVALS = """
name = "intervals"
title = "Intervals at every level"
citation = "A. Author (2020). A paper."
source = "Table 1"

[[part]]
name = "global"
judgments = "chaganty"
subset = "sms"
human = "overall"
level = "global"
correlation = "spearman"
metrics = ["rouge"]
baseline = "rougeL-f"
tolerance = 0.005

[part.printed]
"rouge1-f" = 0.171

[[part]]
name = "significant"
judgments = "chaganty"
subset = "sms"
human = "overall"
level = "summary"
correlation = "spearman"
metrics = ["rouge"]
max_p = 0.5
tolerance = 0.005

[part.printed]
"rouge1-f" = 0.2
"""


def test_run_protocol_prints_run_s_labelled_intervals_at_the_global_level(tmp_path, shared_data):
    """Issue 35 item 3: ``run --protocol`` gives a global-level part the interval plain ``run`` prints (the same
    numbers, over the rows, and the same label) in the table and the JSON; a ``max_p`` part, whose value averages a
    selection of documents the bootstrap does not redo, says in both that it has none, and why."""
    import conftest

    conftest.require_metrics("rouge")
    proto, out, plain = tmp_path / "intervals.toml", tmp_path / "protocol.json", tmp_path / "run.json"
    proto.write_text(INTERVALS, encoding="utf-8")
    common = ["--no-cache", "--resamples", "40", "--seed", "3", "--data-dir", str(shared_data)]
    res = CliRunner().invoke(app, ["run", "--protocol", str(proto), "--output", str(out), *common])
    assert res.exit_code in (0, 1), res.output  # exit 1: the made-up printed numbers do not match
    ran = CliRunner().invoke(app, ["run", "-j", "chaganty", "--subset", "sms", "-m", "rouge", "--variants", "all",
                                   "--level", "global", "--output", str(plain), *common])
    assert ran.exit_code == 0, ran.output
    doc, run_doc = json.loads(out.read_text()), json.loads(plain.read_text())
    whole, significant = doc["parts"]
    label = run_doc["resampling"]["label"]
    assert "each row counted once per draw of its document and of its system; 40 resamples, seed 3" in label
    assert whole["interval"] == label and whole["no_interval"] is None and f"CI: {label}" in res.output
    run_ci = {r["metric"]: r["ci"] for r in run_doc["results"]}
    assert whole["cells"][0]["variant"] == "rouge1-f" and whole["cells"][0]["ci"] == run_ci["rouge1-f"]
    assert {r["metric"]: r["ci"] for r in whole["results"]} == run_ci  # every variant: run's interval
    assert all(ci is not None and ci[0] < ci[1] for ci in run_ci.values())
    assert significant["interval"] is None and "p <= 0.5" in significant["no_interval"]
    assert significant["cells"][0]["ci"] is None and all(r["ci"] is None for r in significant["results"])
    assert f"CI: none ({significant['no_interval']})" in " ".join(res.output.split())


def test_protocol_refuses_flags_it_fixes():
    res = CliRunner().invoke(app, ["run", "--protocol", "sms-2019", "--level", "system"])
    assert res.exit_code == 2
    assert "fixes the set" in res.output and "--level" in res.output


@pytest.mark.parametrize("given", [["--format", "md", "--limit", "5", "--plot", "f.png", "--scores-out", "so.jsonl"],
                                   ["--sample", "3", "--scores", "x=n.jsonl", "--pairwise", "--differences"],
                                   ["--two-sided", "--correction", "bh", "--control", "system", "--delta-band", "0:1"],
                                   ["--epsilon", "0.1", "--system-score", "mean", "--spa-seed", "4", "-o", "k=v"]])
def test_protocol_refuses_every_option_it_does_not_take(tmp_path, given):
    """Every option ``run --protocol`` would ignore is refused, naming it, before anything runs or is written."""
    res = CliRunner().invoke(app, ["run", "--protocol", "sms-2019", "--data-dir", str(tmp_path / "no-data"),
                                   "--output", str(tmp_path / "o.json"), "--resamples", "10", *given])
    assert res.exit_code == 2, res.output
    said = " ".join(res.output.split())
    dropped = said.split("; drop ", 1)[1].split(" (or run without --protocol)")[0].split(", ")
    assert sorted(dropped) == sorted("--option" if g == "-o" else g for g in given if g.startswith("-"))
    assert not any(tmp_path.iterdir())


def test_protocol_takes_options_at_their_defaults(tmp_path):
    """An option given at its default changes nothing, so ``--protocol`` takes it (the run goes on to the set)."""
    res = CliRunner().invoke(app, ["run", "--protocol", "sms-2019", "--data-dir", str(tmp_path / "no-data"),
                                   "--format", "table", "--correction", "holm", "--epsilon", "0", "-v"])
    assert "drop" not in res.output and "fixes the set" not in res.output


def test_run_needs_judgments_or_protocol():
    res = CliRunner().invoke(app, ["run"])
    assert res.exit_code == 2 and "--judgments SET" in res.output


def test_protocols_command_lists_them():
    res = CliRunner().invoke(app, ["protocols"], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    for name in protocol_names():
        assert name in res.output
    assert "Clark" in res.output


def test_errors_keep_bracketed_text(monkeypatch):
    """An install hint such as pip install 'meta-eval[coco]' reaches the user whole (rich markup is escaped)."""
    from meta_eval import cli

    printed = []
    monkeypatch.setattr(cli.err, "print", lambda text, **kw: printed.append(  # soft_wrap etc.: print-only options
        cli.err.render_str(text, highlight=kw.get("highlight")).plain))
    with pytest.raises(cli.typer.Exit):
        cli._fail("missing pycocoevalcap: pip install 'meta-eval[coco]'")
    assert printed == ["error: missing pycocoevalcap: pip install 'meta-eval[coco]'"]


def test_a_protocols_output_that_is_not_json_is_refused_without_advising_format(tmp_path):
    """The refusal advised --format, which run --protocol itself refuses."""
    res = CliRunner().invoke(app, ["run", "--protocol", "sms-2019", "--data-dir", str(tmp_path / "no-data"),
                                   "--output", str(tmp_path / "o.txt")])
    said = " ".join(res.output.split())
    assert res.exit_code == 2 and "write .json (the suffix chooses the format), not '.txt'" in said, res.output
    assert "--format" not in said and "a protocol's results are JSON" in said
