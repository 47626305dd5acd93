"""``text="as-released"``: judgment texts exactly as the data files hold them, without the ftfy mojibake repair.

The SMS paper scored the ASAP essays as released (its 1,088 essays average 7.5 sentences, as the unrepaired text does);
the default repairs them. Both keep the same rows: the 5-15 sentence filter always counts the released text.
"""
from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from meta_eval import judgments
from meta_eval.cli import app

MOJIBAKE = "\u00e2\u20ac\u009d"  # a right double quote (U+201D) decoded as cp1252


def test_essays_as_released_keep_rows_and_mojibake(shared_data):
    repaired = judgments.load("essays", shared_data)
    raw = judgments.load("essays", shared_data, text="as-released")
    assert [r.id for r in raw.rows] == [r.id for r in repaired.rows] and len(raw) == 1086
    changed = [(a, b) for a, b in zip(raw.rows, repaired.rows) if a.candidate != b.candidate]
    assert changed and any("\u00e2\u0080" in a.candidate for a, _ in changed)
    assert not any("\u00e2\u0080" in b.candidate for _, b in changed)
    assert raw.notes and "as released" in raw.notes[0] and not repaired.notes


def test_jsonl_text_modes(tmp_path):
    path = tmp_path / "j.jsonl"
    path.write_text(json.dumps({"id": "1", "doc_id": "d", "system": "s", "candidate": f"he said{MOJIBAKE} ok",
                                "references": ["r"], "scores": {"overall": 1}}) + "\n", encoding="utf-8")
    assert judgments.load(str(path)).rows[0].candidate == "he said\u201d ok"
    assert judgments.load(str(path), text="as-released").rows[0].candidate == f"he said{MOJIBAKE} ok"
    with pytest.raises(judgments.JudgmentError, match="text must be one of repaired, as-released"):
        judgments.load(str(path), text="raw")


def test_cli_rejects_unknown_text_mode(tmp_path):
    res = CliRunner().invoke(app, ["run", "-j", "chaganty", "--text", "raw", "--no-cache"])
    assert res.exit_code == 2 and "text must be one of repaired, as-released" in res.output
