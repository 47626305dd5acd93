"""Every shipped protocol, run on the real judgment data, against the numbers its paper printed.

Each protocol file (meta_eval/protocols/<name>.toml) cites the table (or the authors' repository file) its printed
numbers come from, states the tolerance and the verdict counts a run gives (``expected``). Every cell is a match at
the printed precision, within the tolerance, or beyond it with a named reason in the file (``[part.unmatched]``); an
unexplained ``MISMATCH`` fails (and the command exits 1), and so does a reason for a cell that matches (a stale
reason). The counts must be exactly the expected ones, so a cell that moves from one verdict to another (better or
worse) shows here. Resampling does not change the point correlations compared here, so the summary/system-level parts
run with few resamples to stay fast.
"""
from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from conftest import require_metrics
from meta_eval.cli import app
from meta_eval.protocol import load_protocol, protocol_names


@pytest.mark.parametrize("name", protocol_names())
def test_protocol_reproduces_the_printed_numbers(name, shared_data, tmp_path):
    proto = load_protocol(name)
    require_metrics(*dict.fromkeys(m for part in proto.parts for m in part.metrics))
    out = tmp_path / f"{name}.json"
    res = CliRunner().invoke(app, ["run", "--protocol", name, "--data-dir", str(shared_data), "--cache",
                                   str(tmp_path / "cache.sqlite"), "--resamples", "10", "--output", str(out)])
    assert out.exists(), res.output
    doc = json.loads(out.read_text())
    assert [p["name"] for p in doc["parts"]] == [p.name for p in proto.parts]
    for part, part_doc in zip(proto.parts, doc["parts"]):
        assert part_doc["level"] == part.level and part_doc["correlation"] == part.correlation
        assert part_doc["human"] == part.human
        for cell in part_doc["cells"]:
            where = (f"{name}/{part.name}/{cell['variant']}: meta-eval {cell['meta_eval']} vs printed "
                     f"{cell['printed_text']}")
            assert cell["meta_eval"] is not None, where
            assert cell["verdict"] != "MISMATCH", f"{where}: beyond the tolerance {part.tolerance} with no reason"
            assert not (cell["verdict"] == "match" and cell["reason"]), f"{where}: matches; stale reason"
            gap = abs(cell["meta_eval"] - cell["printed"])
            assert cell["verdict"] == ("match" if gap <= 0.5 * 10 ** -cell["decimals"] + 1e-12 else
                                       "within" if gap <= part.tolerance + 1e-12 else "known mismatch"), where
            if cell["verdict"] == "within":
                assert cell["status"] == f"within {part.tolerance:g}", where
    assert res.exit_code == 0, res.output
    expected = {"match": proto.expected["match"], "within": proto.expected["within"],
                "known mismatch": proto.expected["known"], "MISMATCH": 0, "not run": 0}
    assert doc["counts"] == expected, f"{name}: the file's expected counts are {proto.expected}"
