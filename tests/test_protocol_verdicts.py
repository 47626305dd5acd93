"""Protocol verdicts: ``match`` at the printed precision, ``within`` the tolerance (the bound named), ``known mismatch``
with its reason, ``MISMATCH`` (``meta-eval run --protocol`` exits 1), the float edge at the tolerance, the expected
counts of a protocol file and ``meta-eval protocols`` showing them.

The end-to-end tests run a hand-made protocol on the chaganty set (the SMS paper's subset) with ROUGE at the global
level, a few seconds; its printed numbers are made from Spearman correlations computed here with scipy.
"""
from __future__ import annotations

import json
from decimal import Decimal

import pytest
from typer.testing import CliRunner

from meta_eval.cli import app
from meta_eval.protocol import VERDICTS, Cell, Part, ProtocolError, compare, load_protocol, protocol_names

HEAD = """
name = "hand"
title = "A hand-made table"
citation = "A. Author (2024). A paper."
source = "Table 1"
{expected}
"""

PART = """
[[part]]
name = "{name}"
judgments = "chaganty"
subset = "sms"
human = "overall"
level = "global"
correlation = "spearman"
metrics = ["rouge"]
tolerance = {tolerance}

[part.printed]
{printed}

[part.unmatched]
{unmatched}
"""


def _protocol(path, printed: dict[str, str], unmatched: dict[str, str] | None = None, tolerance: str = "0.01",
              expected: str = "", name: str = "global"):
    """A protocol file whose printed numbers are written exactly as the given texts."""
    path.write_text(HEAD.format(expected=expected) + PART.format(
        name=name, tolerance=tolerance, printed="\n".join(f'"{k}" = {v}' for k, v in printed.items()),
        unmatched="\n".join(f'"{k}" = "{v}"' for k, v in (unmatched or {}).items())), encoding="utf-8")
    return path


def _cell(written: str, value: float | None, tolerance: float, reason: str | None = None) -> Cell:
    """A cell whose printed number is ``written`` (its text: ``"0.250"`` is printed to 3 decimals)."""
    return Cell("p", "v", "v", float(written), value, tolerance, reason, written)


# --- the printed precision is the text of the file ------------------------------------------------------------------

def test_printed_precision_is_read_from_the_file_text(tmp_path):
    path = _protocol(tmp_path / "p.toml", {"rouge1-f": "0.250", "rouge2-f": "0.25", "rougeL-f": "2.5e-1",
                                           "rougeLsum-f": "1", "rouge1-r": "0.2500"})
    part = load_protocol(path).parts[0]
    assert part.printed == {"rouge1-f": 0.25, "rouge2-f": 0.25, "rougeL-f": 0.25, "rougeLsum-f": 1.0,
                            "rouge1-r": 0.25}
    cells = {c.variant: c for c in compare(part, dict.fromkeys(part.printed, 0.2504))}
    assert {v: c.precision for v, c in cells.items()} == {"rouge1-f": 3, "rouge2-f": 2, "rougeL-f": 2,
                                                          "rougeLsum-f": 0, "rouge1-r": 4}
    # 0.2504 rounds to 0.250 and 0.25, not to 0.2500; to 3 decimals it is not 1
    assert {v: c.verdict for v, c in cells.items()} == {"rouge1-f": "match", "rouge2-f": "match",
                                                        "rougeL-f": "match", "rougeLsum-f": "MISMATCH",
                                                        "rouge1-r": "within"}
    assert cells["rouge1-r"].status == "within 0.01"
    assert cells["rouge1-r"].as_dict()["decimals"] == 4 and cells["rouge1-r"].as_dict()["printed_text"] == "0.2500"


def test_the_printed_text_is_compared_not_its_float(tmp_path):
    """A number written with more digits than a float keeps: the comparison is on the text."""
    path = _protocol(tmp_path / "p.toml", {"rouge1-f": "0.11309647013831079"})
    part = load_protocol(path).parts[0]
    assert repr(part.printed["rouge1-f"]) == "0.11309647013831078"      # the float has lost the last digit
    cell = compare(part, {"rouge1-f": 0.12309647013831079})[0]
    assert cell.text == "0.11309647013831079" and cell.status == "within 0.01"


def test_a_part_built_in_code_takes_the_decimals_of_the_shortest_text():
    part = Part("p", "chaganty", "overall", "global", "spearman", ("x",), {"a": 0.25, "b": 0.25}, 0.01,
                written={"b": "0.250"})
    assert part.printed_text("a") == "0.25" and part.printed_text("b") == "0.250"
    cells = {c.variant: c for c in compare(part, {"a": 0.2546, "b": 0.2546})}
    assert cells["a"].verdict == "match" and cells["b"].verdict == "within"


@pytest.mark.parametrize("value, verdict", [
    (0.2504, "match"), (0.2496, "match"),
    (0.2505, "match"), (0.2495, "match"),          # half a unit in the last place: a match (ties round either way)
    (0.25051, "within"), (0.24949, "within"),
    (0.2600, "within"), (0.2400, "within"),        # exactly the tolerance: within
    (0.26001, "MISMATCH"), (0.23999, "MISMATCH"),
    (None, "not run"), (float("nan"), "MISMATCH"),
])
def test_verdict_by_hand(value, verdict):
    assert _cell("0.250", value, 0.01).verdict == verdict


def test_verdict_order_and_status_texts():
    assert VERDICTS == ("match", "within", "known mismatch", "MISMATCH", "not run")
    assert _cell("0.30", 0.31, 0.05).status == "within 0.05"
    assert _cell("0.30", 0.45, 0.05, reason="why").status == "known mismatch"
    assert _cell("0.30", 0.45, 0.05).status == "MISMATCH"
    # a named reason does not hide a match: the cell is a match (and the reason stale)
    stale = _cell("0.30", 0.3, 0.05, reason="why")
    assert stale.verdict == "match" and stale.as_dict()["reason"] == "why"
    # within the tolerance a reason is kept but the verdict is what was shown
    assert _cell("0.30", 0.33, 0.05, reason="why").verdict == "within"


# --- the float edge at the tolerance ---------------------------------------------------------------------------------

def test_a_difference_of_exactly_the_tolerance_is_within_it_whatever_binary_floats_say():
    assert 0.4 - 0.3 > 0.1 and 0.35 - 0.25 < 0.1         # the binary differences straddle the bound
    assert _cell("0.3", 0.4, 0.1).status == "within 0.1"
    assert _cell("0.250", 0.350, 0.1).status == "within 0.1"
    assert _cell("0.4", 0.3, 0.1).status == "within 0.1"
    assert _cell("0.3", 0.4000000001, 0.1).verdict == "MISMATCH"
    assert _cell("0.250", 0.35 + 2 ** -50, 0.1).verdict == "MISMATCH"   # a float just above 0.35: beyond


def test_issue_cell_is_no_longer_a_match():
    """The issue: a Kendall tau of 0.350 against a printed 0.250 (tolerance 0.1) was labelled ``match``."""
    cell = _cell("0.250", 0.35, 0.1)
    assert cell.verdict != "match" and cell.status == "within 0.1"
    assert _cell("0.250", 0.35, 0.005).verdict == "MISMATCH"


# --- expected counts -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("expected, message", [
    ("expected = {match = 1, within = 0}", "'expected' must be a table {match = N, within = N, known = N}"),
    ("expected = {match = 1, within = 0, known = 0, extra = 0}", "'expected' must be a table"),
    ("expected = {match = 1, within = -1, known = 1}", "'expected' 'within' must be a count"),
    ("expected = {match = 1, within = 0.5, known = 0}", "'expected' 'within' must be a count"),
    ("expected = {match = 2, within = 0, known = 0}", "'expected' counts add up to 2, the parts print 1 cells"),
])
def test_malformed_expected_counts(tmp_path, expected, message):
    path = _protocol(tmp_path / "p.toml", {"rouge1-f": "0.171"}, expected=expected)
    with pytest.raises(ProtocolError) as exc:
        load_protocol(path)
    assert message in str(exc.value) and str(path) in str(exc.value)


def test_expected_counts_are_read():
    for name in protocol_names():
        proto = load_protocol(name)
        assert proto.expected is not None, f"{name}: give expected = {{match = N, within = N, known = N}}"
        assert sum(proto.expected.values()) == proto.cells


# --- end to end: meta-eval run --protocol FILE.toml -----------------------------------------------------------------

VARIANTS = ("rouge1-f", "rouge2-f", "rougeL-f", "rougeLsum-f", "rouge1-r")


def _run(path, shared_data, tmp_path, cache):
    out = tmp_path / f"{path.stem}.json"
    res = CliRunner().invoke(app, ["run", "--protocol", str(path), "--data-dir", str(shared_data), "--cache",
                                   str(cache), "--output", str(out)], env={"COLUMNS": "200"})
    return res, (json.loads(out.read_text()) if out.exists() else None)


@pytest.fixture(scope="module")
def chaganty_rouge(shared_data, tmp_path_factory):
    """meta-eval's Spearman between ROUGE variants and the mean overall judgment on the SMS subset's summaries (a
    protocol run whose printed numbers are placeholders), checked against scipy; and the score cache it filled."""
    from scipy.stats import spearmanr

    from meta_eval import judgments
    from meta_eval.metrics import create

    tmp = tmp_path_factory.mktemp("chaganty")
    jset = judgments.load("chaganty", shared_data, subset="sms").scored("overall")
    scores, human = create("rouge").score(jset.examples()), jset.human("overall")
    res, doc = _run(_protocol(tmp / "probe.toml", dict.fromkeys(VARIANTS, "0.5"), tolerance="0.9"), shared_data,
                    tmp, tmp / "cache.sqlite")
    assert res.exit_code == 0, res.output
    values = {c["variant"]: c["meta_eval"] for c in doc["parts"][0]["cells"]}
    for variant in VARIANTS:
        assert values[variant] == pytest.approx(spearmanr(scores[variant], human)[0], abs=1e-12), variant
    return values, tmp / "cache.sqlite"


def _text(value: Decimal | float, decimals: int | None = None) -> str:
    return f"{value:.{decimals}f}" if decimals is not None else str(value)


def test_every_verdict_end_to_end(chaganty_rouge, shared_data, tmp_path):
    values, cache = chaganty_rouge
    v = {k: Decimal(repr(x)) for k, x in values.items()}
    printed = {
        "rouge1-f": _text(v["rouge1-f"], 3),                          # rounds to it: match
        "rouge2-f": _text(v["rouge2-f"] + Decimal("0.006"), 3),       # 0.0055..0.0065 off: within 0.01
        "rougeL-f": _text(v["rougeL-f"] - Decimal("0.01")),           # exactly 0.01 off in decimal: within 0.01
        "rougeLsum-f": _text(v["rougeLsum-f"] + Decimal("0.2"), 3),   # beyond, with a reason: known mismatch
        "rouge1-r": _text(v["rouge1-r"], 4),                          # a match with a (stale) reason: match
    }
    path = _protocol(tmp_path / "hand.toml", printed, {"rougeLsum-f": "the paper scored other summaries",
                                                       "rouge1-r": "a stale reason"},
                     expected="expected = {match = 2, within = 2, known = 1}")
    res, doc = _run(path, shared_data, tmp_path, cache)
    assert res.exit_code == 0, res.output
    cells = {c["variant"]: c for c in doc["parts"][0]["cells"]}
    assert {k: c["meta_eval"] for k, c in cells.items()} == values
    assert float(v["rougeL-f"]) - float(printed["rougeL-f"]) > 0.01    # beyond in binary floats, within in decimal
    assert {k: c["status"] for k, c in cells.items()} == {
        "rouge1-f": "match", "rouge2-f": "within 0.01", "rougeL-f": "within 0.01", "rougeLsum-f": "known mismatch",
        "rouge1-r": "match"}
    assert {k: c["verdict"] for k, c in cells.items()}["rouge2-f"] == "within"
    assert cells["rouge1-f"]["decimals"] == 3 and cells["rouge1-r"]["decimals"] == 4
    assert doc["counts"] == {"match": 2, "within": 2, "known mismatch": 1, "MISMATCH": 0, "not run": 0}
    assert doc["expected"] == {"match": 2, "within": 2, "known": 1}
    assert ("hand: of 5 printed cells 2 match at the printed precision, 2 within tolerance, 1 known mismatches "
            "(reasons named), 0 unexplained, 0 not run") in res.stdout
    assert "the paper scored other summaries" in res.stdout and "within 0.01" in res.stdout
    assert "error" not in res.stderr


def test_an_unexplained_mismatch_exits_1_naming_the_cell(chaganty_rouge, shared_data, tmp_path):
    v, cache = chaganty_rouge
    printed = {"rouge1-f": f"{v['rouge1-f']:.3f}", "rouge2-f": f"{v['rouge2-f'] - 0.3:.3f}",
               "rougeL-f": f"{v['rougeL-f'] + 0.25:.3f}"}
    path = _protocol(tmp_path / "bad.toml", printed, {"rougeL-f": "named"})
    res, doc = _run(path, shared_data, tmp_path, cache)
    assert res.exit_code == 1, res.output
    assert doc["counts"] == {"match": 1, "within": 0, "known mismatch": 1, "MISMATCH": 1, "not run": 0}
    lines = [line for line in res.stderr.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, res.stderr
    assert "hand: of 3 printed cells 1 match" in lines[0] and "1 known mismatches" in lines[0]
    assert (f"unexplained: global/rouge2-f (meta-eval {v['rouge2-f']:.4f}, printed {printed['rouge2-f']}, "
            f"tolerance 0.01)") in lines[0]
    assert "rougeL-f" not in lines[0].split("unexplained:")[1]


def test_protocols_command_shows_tolerances_and_expected_counts():
    res = CliRunner().invoke(app, ["protocols"], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    for name in protocol_names():
        proto = load_protocol(name)
        block = res.output.split(f"\n{name}: ", 1)[1].split("\n\n", 1)[0]
        for part in proto.parts:
            assert f"  {part.name}: {part.judgments}, human {part.human}, {part.level} level, {part.correlation}, " \
                   f"tolerance {part.tolerance:g}\n" in block + "\n", (name, part.name)
        e = proto.expected
        assert f"expected: match {e['match']}, within tolerance {e['within']}, known mismatch {e['known']}" in block
    assert "tolerance 0.005" in res.output and "expected: match 0, within tolerance 1, known mismatch 11" in res.output


def test_the_documented_protocol_file_loads(tmp_path):
    """The example of docs/reproducing.md is a valid protocol file with the precision it describes."""
    import re
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[1] / "docs" / "reproducing.md").read_text(encoding="utf-8")
    path = tmp_path / "my-table.toml"
    path.write_text(re.search(r"```toml\n(.*?)```", doc, re.S).group(1), encoding="utf-8")
    proto = load_protocol(path)
    assert proto.expected == {"match": 1, "within": 1, "known": 1} and proto.cells == 3
    cells = {c.variant: c for c in compare(proto.parts[0], {"rouge1-f": 0.2504, "rouge2-f": 0.188, "rougeL-f": 0.3})}
    assert {v: c.status for v, c in cells.items()} == {"rouge1-f": "match", "rouge2-f": "within 0.005",
                                                       "rougeL-f": "known mismatch"}
    assert compare(proto.parts[0], {"rouge1-f": 0.2506})[0].status == "within 0.005"
