"""Tests for judgments.files: data directory, verification and download (no internet)."""

import functools
import hashlib
import http.server
import socket
import sys
import threading
from pathlib import Path

import platformdirs
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from meta_eval.judgments.files import (DataError, DataFile, data_dir, ensure_file,  # noqa: E402
                             sha256_of, verify_all)

PAYLOAD = b"line one\nline two\n" * 5000
SHA = hashlib.sha256(PAYLOAD).hexdigest()
BAD_SHA = "0" * 64


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


class _TruncatingHandler(http.server.BaseHTTPRequestHandler):
    """Announces more bytes than it sends, then closes the connection."""

    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Length", str(len(PAYLOAD) * 2))
        self.end_headers()
        self.wfile.write(PAYLOAD)
        self.wfile.flush()
        self.close_connection = True

    def log_message(self, *args):
        pass


def _serve(handler):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    return server, thread


def _stop(server, thread):
    server.shutdown()
    server.server_close()
    thread.join(5)


@pytest.fixture
def served(tmp_path):
    """Serve a folder holding ``payload.txt``; yield its base URL."""
    www = tmp_path / "www"
    www.mkdir()
    (www / "payload.txt").write_bytes(PAYLOAD)
    server, thread = _serve(functools.partial(_QuietHandler, directory=str(www)))
    yield f"http://127.0.0.1:{server.server_address[1]}"
    _stop(server, thread)


@pytest.fixture
def truncating():
    server, thread = _serve(_TruncatingHandler)
    yield f"http://127.0.0.1:{server.server_address[1]}"
    _stop(server, thread)


@pytest.fixture
def closed_url():
    """A URL on 127.0.0.1 where nothing listens."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/payload.txt"


@pytest.fixture
def root(tmp_path):
    return tmp_path / "data"


def _leftovers(root):
    """All files under root (temporary .part files included)."""
    return sorted(p.relative_to(root) for p in root.rglob("*") if p.is_file()) \
        if root.exists() else []


def _get(f, root, **kw):
    return ensure_file(f, root, show_progress=False, timeout=5, **kw)


def test_successful_download(served, root):
    f = DataFile("sub/dir/payload.txt", f"{served}/payload.txt", SHA)
    path = _get(f, root)
    assert path == root / "sub" / "dir" / "payload.txt"
    assert path.read_bytes() == PAYLOAD
    assert sha256_of(path) == SHA
    assert _leftovers(root) == [Path("sub/dir/payload.txt")]


def test_download_without_hash(served, root):
    path = _get(DataFile("p.txt", f"{served}/payload.txt", None), root)
    assert path.read_bytes() == PAYLOAD


def test_checksum_mismatch_on_download(served, root):
    url = f"{served}/payload.txt"
    with pytest.raises(DataError) as ei:
        _get(DataFile("a/payload.txt", url, BAD_SHA), root)
    msg = str(ei.value)
    assert "SHA-256" in msg and url in msg and BAD_SHA in msg
    assert _leftovers(root) == []


def test_http_404(served, root):
    url = f"{served}/nope.txt"
    with pytest.raises(DataError) as ei:
        _get(DataFile("a/nope.txt", url, SHA, "ask the authors"), root)
    msg = str(ei.value)
    assert url in msg and "404" in msg
    assert "META_EVAL_DATA" in msg and str(root / "a" / "nope.txt") in msg
    assert "ask the authors" in msg
    assert _leftovers(root) == []


def test_unreachable_server(closed_url, root):
    with pytest.raises(DataError) as ei:
        _get(DataFile("a/payload.txt", closed_url, SHA), root)
    assert closed_url in str(ei.value) and "network" in str(ei.value)
    assert _leftovers(root) == []


@pytest.mark.parametrize("sha", [SHA, None])
def test_truncated_transfer(truncating, root, sha):
    url = f"{truncating}/payload.txt"
    with pytest.raises(DataError) as ei:
        _get(DataFile("a/payload.txt", url, sha), root)
    assert url in str(ei.value)
    assert _leftovers(root) == []


def test_keyboard_interrupt_cleans_up(served, root, monkeypatch):
    import meta_eval.judgments.files as mod

    def boom(*a, **kw):
        raise KeyboardInterrupt

    monkeypatch.setattr(mod.urllib.request, "urlopen", boom)
    with pytest.raises(KeyboardInterrupt):
        _get(DataFile("a/payload.txt", f"{served}/payload.txt", SHA), root)
    assert _leftovers(root) == []


def test_existing_corrupt_file(root, closed_url):
    path = root / "x" / "payload.txt"
    path.parent.mkdir(parents=True)
    path.write_bytes(PAYLOAD[:100])
    with pytest.raises(DataError) as ei:
        _get(DataFile("x/payload.txt", closed_url, SHA), root)
    msg = str(ei.value)
    assert "corrupt or truncated" in msg and str(path) in msg
    assert SHA in msg and f"delete it to re-download from {closed_url}" in msg


def test_existing_corrupt_file_manual(root):
    path = root / "payload.txt"
    root.mkdir()
    path.write_bytes(b"junk")
    with pytest.raises(DataError, match="email the authors"):
        _get(DataFile("payload.txt", None, SHA, "email the authors"), root)


def test_existing_good_file_needs_no_network(root, closed_url):
    path = root / "x" / "payload.txt"
    path.parent.mkdir(parents=True)
    path.write_bytes(PAYLOAD)
    assert _get(DataFile("x/payload.txt", closed_url, SHA), root) == path


@pytest.mark.parametrize("url,download", [(None, True), ("http://example.invalid/p", False)])
def test_missing_not_downloadable(root, url, download):
    f = DataFile("x/p.txt", url, SHA, "Request it from the LDC and unpack it.")
    with pytest.raises(DataError) as ei:
        _get(f, root, download=download)
    msg = str(ei.value)
    assert "Request it from the LDC" in msg and str(root / "x" / "p.txt") in msg
    assert "--data-dir" in msg and "META_EVAL_DATA" in msg
    if url:
        assert url in msg
    assert not root.exists()


def test_data_dir_precedence(monkeypatch, tmp_path):
    monkeypatch.delenv("META_EVAL_DATA", raising=False)
    assert data_dir() == platformdirs.user_cache_path("meta-eval") / "judgments"
    monkeypatch.setenv("META_EVAL_DATA", str(tmp_path / "env"))
    assert data_dir() == tmp_path / "env"
    assert data_dir(tmp_path / "explicit") == tmp_path / "explicit"
    assert data_dir(str(tmp_path / "s")) == tmp_path / "s"
    monkeypatch.setenv("HOME", str(tmp_path))
    assert data_dir("~/d") == tmp_path / "d"
    assert not (tmp_path / "env").exists()


def test_ensure_file_uses_env_when_root_none(monkeypatch, tmp_path):
    (tmp_path / "p.txt").write_bytes(PAYLOAD)
    monkeypatch.setenv("META_EVAL_DATA", str(tmp_path))
    assert ensure_file(DataFile("p.txt", None, SHA)) == tmp_path / "p.txt"


def test_sha256_of(tmp_path):
    p = tmp_path / "big.bin"
    data = b"x" * (3 * (1 << 20) + 7)
    p.write_bytes(data)
    assert sha256_of(p) == hashlib.sha256(data).hexdigest()


def test_verify_all(root):
    root.mkdir()
    (root / "good.txt").write_bytes(PAYLOAD)
    (root / "bad.txt").write_bytes(b"nope")
    (root / "nohash.txt").write_bytes(b"anything")
    good = DataFile("good.txt", None, SHA)
    bad = DataFile("bad.txt", "http://example.invalid/bad", SHA)
    missing = DataFile("missing.txt", None, SHA)
    nohash = DataFile("nohash.txt", None, None)
    problems = dict(verify_all([good, bad, missing, nohash], root))
    assert set(problems) == {bad, missing}
    assert "corrupt or truncated" in problems[bad]
    assert "missing" in problems[missing]
