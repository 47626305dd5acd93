"""Every shipped protocol, run on the real judgment data, against the numbers its paper printed.

Each protocol file (meta_eval/protocols/<name>.toml) cites the table (or the authors' repository file) its printed
numbers
come from and states the tolerance. A cell passes when |meta-eval - printed| <= tolerance; a cell that cannot match
must carry a named reason in the file (``[part.unmatched]``), which this test requires. Resampling does not change the
point correlations compared here, so the summary/system-level parts run with few resamples to stay fast.
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
    assert res.exit_code == 0, res.output
    doc = json.loads(out.read_text())
    assert [p["name"] for p in doc["parts"]] == [p.name for p in proto.parts]
    for part, part_doc in zip(proto.parts, doc["parts"]):
        assert part_doc["level"] == part.level and part_doc["correlation"] == part.correlation
        assert part_doc["human"] == part.human
        for cell in part_doc["cells"]:
            where = f"{name}/{part.name}/{cell['variant']}: meta-eval {cell['meta_eval']} vs printed {cell['printed']}"
            assert cell["meta_eval"] is not None, where
            if abs(cell["meta_eval"] - cell["printed"]) > part.tolerance + 1e-9:
                assert cell["reason"], f"{where}: outside the tolerance {part.tolerance} with no named reason"
                assert cell["status"] == "known mismatch"
            else:
                assert cell["status"] == "match", where
