"""docs/reading-output.md names every key of `meta-eval run --output` (top level and each result), so that a
reader finds what each number is: a key a run writes and the page does not name fails here."""
from __future__ import annotations

import json
import re
from pathlib import Path

from typer.testing import CliRunner

from meta_eval.cli import app

DOC = Path(__file__).resolve().parents[1] / "docs" / "reading-output.md"


def test_the_page_names_every_key_a_run_writes(shared_data, tmp_path):
    out = tmp_path / "r.json"
    res = CliRunner().invoke(app, ["run", "-j", "chaganty", "--data-dir", str(shared_data), "-m", "rouge1-f,chrf",
                                   "--sample", "600", "--resamples", "10", "--no-cache", "--level", "summary",
                                   "--baseline", "chrf", "--output", str(out)])
    assert res.exit_code == 0, res.output
    doc = json.loads(out.read_text())
    section = DOC.read_text(encoding="utf-8").split("## The JSON (`--output`)", 1)[1].split("\n## ", 1)[0]
    named = set(re.findall(r"`([a-z_]+)`", section)) | set(re.findall(r'"([a-z_]+)"', section))
    keys = set(doc) | {k for r in doc["results"] for k in r} | set(doc["ceiling"]) | set(doc["resampling"])
    assert sorted(keys - named) == []
