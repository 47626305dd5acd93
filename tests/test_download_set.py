"""A built-in set downloads its file when missing: the real chaganty file served from 127.0.0.1."""
from __future__ import annotations

import dataclasses
import functools
import http.server
import threading

import pytest

from meta_eval import judgments
from meta_eval.judgments import chaganty


@pytest.fixture()
def served_chaganty(shared_data):
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(shared_data / "chaganty"))
    handler.log_message = lambda *a, **k: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/lqual.jsonl.gz"
    server.shutdown()
    server.server_close()


def test_missing_file_is_downloaded_checked_and_loaded(served_chaganty, tmp_path, monkeypatch):
    monkeypatch.setattr(chaganty, "FILE", dataclasses.replace(chaganty.FILE, url=served_chaganty))
    jset = judgments.load("chaganty", tmp_path)
    assert len(jset) == 2085
    assert (tmp_path / "chaganty" / "lqual.jsonl.gz").exists()
    assert [p.name for p in (tmp_path / "chaganty").iterdir()] == ["lqual.jsonl.gz"]  # no partial file left


def test_download_with_a_wrong_checksum_leaves_nothing(served_chaganty, tmp_path, monkeypatch):
    monkeypatch.setattr(chaganty, "FILE", dataclasses.replace(chaganty.FILE, url=served_chaganty, sha256="0" * 64))
    with pytest.raises(judgments.DataError, match=served_chaganty):
        judgments.load("chaganty", tmp_path)
    folder = tmp_path / "chaganty"
    assert not folder.exists() or list(folder.iterdir()) == []


def test_describing_a_missing_set_downloads_it_as_run_does(served_chaganty, shared_data, tmp_path, monkeypatch):
    """`meta-eval judgments chaganty` on a fresh data folder said "downloading is disabled", which no user chose."""
    from typer.testing import CliRunner

    from meta_eval.cli import app

    monkeypatch.setattr(chaganty, "FILE", dataclasses.replace(chaganty.FILE, url=served_chaganty))
    res = CliRunner().invoke(app, ["judgments", "chaganty", "--data-dir", str(tmp_path)])
    assert res.exit_code == 0, res.output
    assert "2085 rows" in " ".join(res.output.split()) and "disabled" not in res.output
    assert (tmp_path / "chaganty" / "lqual.jsonl.gz").read_bytes() == (shared_data / chaganty.FILE.relpath).read_bytes()
