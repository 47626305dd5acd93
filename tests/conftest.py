"""Shared fixtures: where the real judgment data lives (../shared/judgments, never copied into the repo)."""
from __future__ import annotations

from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[2] / "shared" / "judgments"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not (SHARED / "chaganty" / "lqual.jsonl.gz").exists():
        pytest.skip(f"real judgment data not found at {SHARED}")
    return SHARED
