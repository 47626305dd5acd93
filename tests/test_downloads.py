"""Every built-in set's real download-and-convert path, end to end, from a local mirror of its pinned public files.

``shared/judgments/_sources`` holds byte-identical copies of the original files laid out as their URL paths; it is
served from 127.0.0.1 and ``META_EVAL_MIRROR`` points the loaders at it. The converted files must equal the files in
``shared/judgments`` (their SHA-256, listed in its SHA256SUMS). Bad downloads (changed, truncated, malicious) must be
errors that leave nothing behind. Also the safe unpickler. No test touches the internet.
"""
from __future__ import annotations

import base64
import dataclasses
import functools
import gzip
import hashlib
import http.server
import importlib
import io
import os
import pickle
import pickletools
import re
import threading
import time
from pathlib import Path

import pytest

from meta_eval import judgments
import meta_eval.judgments.files as files_module
from meta_eval.judgments import DataError, chaganty, essays, realsumm, summeval
from meta_eval.judgments.convert import ConversionError, GzipFormat, bartscore, write_gzip
from meta_eval.judgments.files import (
    GITHUB,
    MIRROR_ENV_VAR,
    DataFile,
    ensure_file,
    gunzipped_sha256_of,
    sha256_of,
)
from meta_eval.judgments.safe_pickle import (
    UnsafePickleError,
    check_plain,
    load_plain,
    loads_plain,
)

# set name -> (module, rows of the default subset, rows of subset "all"); counts from each set's PROVENANCE.md
DOWNLOADABLE = {"chaganty": (chaganty, 2085, 2599), "summeval": (summeval, 1600, 1600),
                "realsumm": (realsumm, 2400, 2400)}


# -- a local mirror -----------------------------------------------------------------------------------------------

class _Handler(http.server.SimpleHTTPRequestHandler):
    requests: list  # set per server

    def log_message(self, *args):
        pass

    def do_GET(self):
        self.requests.append(self.path)
        super().do_GET()


class _ShortHandler(http.server.BaseHTTPRequestHandler):
    """Announces the whole file's length, sends half of it, closes the connection."""

    directory: str

    def do_GET(self):
        data = (Path(self.directory) / self.path.lstrip("/")).read_bytes()
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data[: len(data) // 2])
        self.wfile.flush()
        self.close_connection = True

    def log_message(self, *args):
        pass


@pytest.fixture()
def serve():
    """``serve(folder, handler=_Handler)`` starts a server on 127.0.0.1 and returns (base URL, request log)."""
    servers = []

    def start(folder: Path, handler=_Handler):
        log: list = []
        cls = type("H", (handler,), {"requests": log, "directory": str(folder)})
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(cls, directory=str(folder))
                                                 if handler is _Handler else cls)
        thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
        thread.start()
        servers.append((server, thread))
        return f"http://127.0.0.1:{server.server_address[1]}", log

    yield start
    for server, thread in servers:
        server.shutdown()
        server.server_close()
        thread.join(5)


@pytest.fixture(scope="module")
def sources(shared_data) -> Path:
    folder = shared_data / "_sources"
    if not folder.is_dir():
        __import__("conftest").require(False, f"the original files under {folder}", "the project's shared/judgments/_sources")
    return folder


@pytest.fixture(scope="module")
def published(shared_data) -> dict[str, str]:
    """relpath -> SHA-256 from shared/judgments/SHA256SUMS."""
    lines = (shared_data / "SHA256SUMS").read_text().split("\n")
    return {rel: sha for sha, rel in (line.split() for line in lines if line.strip())}


@pytest.fixture()
def mirror(serve, sources, monkeypatch):
    url, log = serve(sources)
    monkeypatch.setenv(MIRROR_ENV_VAR, url)
    return url, log


def _files(root: Path) -> list[str]:
    """Everything under root, files and folders (a .part file or folder included)."""
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")) if root.exists() else []


def _copy_source(sources: Path, source, dest_root: Path, data: bytes | None = None) -> Path:
    """Lay out one source under dest_root as its URL path, with its real bytes or `data`."""
    rel = f"{source.repo}/raw/{source.commit}/{source.path}"
    target = dest_root / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes((sources / rel).read_bytes() if data is None else data)
    return target


# -- pinned sources -----------------------------------------------------------------------------------------------

def test_every_downloadable_set_pins_the_files_listed_in_sources_md(shared_data, sources, published):
    table = (shared_data / "SOURCES.md").read_text()
    rows = {(m[0], m[1], m[2]): (int(m[3]) if m[3].isdigit() else None, m[4])
            for m in re.findall(r"^\| (\S+) \| ([0-9a-f]{40}) \| (\S+) \| (\d+|[^|]*?) \| ([0-9a-f]{64}|[^|]*?) \|$",
                                table, flags=re.MULTILINE)}
    for name, (module, _, _) in DOWNLOADABLE.items():
        (source,) = module.FILE.sources
        assert (source.repo, source.commit, source.path) in rows, name
        size, sha = rows[(source.repo, source.commit, source.path)]
        if name != "chaganty":  # SOURCES.md refers chaganty's checksum to SHA256SUMS
            assert (size, sha) == (source.size, source.sha256), name
        local = sources / source.repo / "raw" / source.commit / source.path
        assert sha256_of(local) == source.sha256 and local.stat().st_size == source.size, name
        assert module.FILE.sha256 == published[module.FILE.relpath], name
    assert chaganty.FILE.sha256 == chaganty.SOURCE.sha256  # chaganty's data file is the source itself


def test_pinned_urls_and_the_mirror(monkeypatch):
    monkeypatch.delenv(MIRROR_ENV_VAR, raising=False)
    # the raw URL printed in shared/judgments/chaganty/PROVENANCE.md
    expected = ("https://github.com/arunchaganty/active-evaluation/raw/7a777a0c8697a8f55f951f394a048433377643af/"
                "data/lqual.jsonl.gz")
    assert chaganty.SOURCE.url == expected == chaganty.FILE.download_urls[0]
    assert summeval.SOURCE.url == (f"{GITHUB}/neulab/BARTScore/raw/248f511cb34ae3753fc81f7d7a945de5bfe33458/"
                                   "SUM/SummEval/data.pkl")
    monkeypatch.setenv(MIRROR_ENV_VAR, "http://mirror.example:8080/gh/")
    assert chaganty.SOURCE.url == expected.replace("https://github.com", "http://mirror.example:8080/gh")
    assert chaganty.SOURCE.github_url == expected
    assert realsumm.FILE.download_urls == (realsumm.SOURCE.url,)
    assert realsumm.SOURCE.url.startswith("http://mirror.example:8080/gh/neulab/BARTScore/raw/")


# -- the real path, end to end ------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", list(DOWNLOADABLE))
def test_download_and_convert_reproduces_the_shared_file(name, mirror, shared_data, published, tmp_path):
    module, n_default, n_all = DOWNLOADABLE[name]
    _, log = mirror
    jset = judgments.load(name, tmp_path)
    (source,) = module.FILE.sources
    assert log == [f"/{source.repo}/raw/{source.commit}/{source.path}"]  # fetched once, from the mirror
    made = tmp_path / module.FILE.relpath
    assert _files(tmp_path) == sorted([str(made.parent.relative_to(tmp_path)), module.FILE.relpath])
    # byte-identical: the same SHA-256 as the shared file and as SHA256SUMS
    assert sha256_of(made) == sha256_of(shared_data / module.FILE.relpath) == published[module.FILE.relpath]
    assert made.read_bytes() == (shared_data / module.FILE.relpath).read_bytes()
    assert len(jset) == n_default
    assert len(judgments.load(name, tmp_path, subset="all", download=False)) == n_all
    assert jset.rows == judgments.load(name, shared_data, download=False).rows
    # a second load uses the file: no request
    judgments.load(name, tmp_path)
    assert len(log) == 1


def test_a_download_says_what_it_does_when_stderr_is_not_a_terminal(mirror, tmp_path, capfd):
    """Without a terminal there is no bar, so a line before and one after (issue 26: it was silent)."""
    name = next(iter(DOWNLOADABLE))
    module = DOWNLOADABLE[name][0]
    judgments.load(name, tmp_path)
    err = capfd.readouterr().err
    assert f"downloading {module.FILE.relpath} from http://127.0.0.1:" in err
    assert f"{module.FILE.relpath}: SHA-256 verified" in err
    judgments.load(name, tmp_path)  # already there: nothing to say
    assert "downloading" not in capfd.readouterr().err


class _PasswordHandler(_Handler):
    """A mirror behind HTTP Basic authentication (user ``bob``, password ``Pass@word99``): 401 without it."""

    directory: str

    def __init__(self, *args, **kwargs):
        super().__init__(*args, directory=type(self).directory, **kwargs)

    def do_GET(self):
        self.requests.append((self.path, self.headers.get("Authorization")))
        if self.headers.get("Authorization") != "Basic " + base64.b64encode(b"bob:Pass@word99").decode():
            self.send_error(401)
            return
        http.server.SimpleHTTPRequestHandler.do_GET(self)


def test_a_mirror_behind_a_password_is_reached_and_its_password_never_shown(serve, sources, tmp_path, monkeypatch,
                                                                             capfd):
    """urllib sends a URL's ``user:password@`` as part of the host name (a DNS error for 127.0.0.1): it is sent as
    Basic authentication instead, to that host only, and the password (``%40`` is ``@``) appears in no line."""
    url, log = serve(sources, _PasswordHandler)
    monkeypatch.setenv(MIRROR_ENV_VAR, url.replace("http://", "http://bob:Pass%40word99@"))
    assert len(judgments.load("chaganty", tmp_path)) == 2085
    (source,) = chaganty.FILE.sources
    assert log == [(f"/{source.repo}/raw/{source.commit}/{source.path}",
                    "Basic " + base64.b64encode(b"bob:Pass@word99").decode())]
    err = capfd.readouterr().err
    assert "from http://bob:***@127.0.0.1:" in err and "Pass" not in err
    request = files_module._request(chaganty.SOURCE.url)
    assert request.full_url.startswith("http://127.0.0.1:") and "Authorization" not in request.headers
    assert request.unredirected_hdrs["Authorization"].startswith("Basic ")  # never forwarded to a redirect's host

    monkeypatch.setenv(MIRROR_ENV_VAR, url.replace("http://", "http://bob:WrongPass7@"))
    with pytest.raises(DataError) as info:
        judgments.load("chaganty", tmp_path / "again")
    assert "HTTP Error 401" in str(info.value) and "bob:***@" in str(info.value)
    assert "WrongPass7" not in str(info.value) + capfd.readouterr().err
    assert _files(tmp_path / "again") == []


def test_a_password_is_never_sent_in_clear_to_another_machine(tmp_path, monkeypatch):
    monkeypatch.setenv(MIRROR_ENV_VAR, "http://bob:Secret123@mirror.example:8080/gh")
    with pytest.raises(DataError) as info:
        judgments.load("chaganty", tmp_path)
    message = str(info.value)
    assert "plain http to mirror.example, which is not this machine" in message and "https://" in message
    assert "Secret123" not in message and "bob:***@mirror.example" in message
    assert _files(tmp_path) == []


def test_a_mirror_can_be_a_local_folder(sources, published, tmp_path, monkeypatch):
    """The documented manual path: files fetched by hand, laid out as URL paths, META_EVAL_MIRROR=file://..."""
    monkeypatch.setenv(MIRROR_ENV_VAR, sources.as_uri())
    assert len(judgments.load("realsumm", tmp_path)) == 2400
    assert sha256_of(tmp_path / realsumm.FILE.relpath) == published[realsumm.FILE.relpath]


def test_essays_cannot_be_downloaded_and_say_how_to_build_them(mirror, tmp_path):
    _, log = mirror
    assert not essays.ESSAYS.downloadable and not essays.REFERENCE.downloadable
    with pytest.raises(DataError) as info:
        judgments.load("essays", tmp_path)
    message = str(info.value)
    for needed in ("asap-aes-3/asap_aes_set3.tsv", str(tmp_path / "asap-aes-3" / "asap_aes_set3.tsv"),
                   "cannot be fetched automatically", "no public copy of these files is pinned",
                   "training_set_rel3.tsv", "Table 9, Sample #3", "META_EVAL_DATA"):
        assert needed in message, needed
    assert log == [] and _files(tmp_path) == []


# -- bad downloads leave nothing behind ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", list(DOWNLOADABLE))
def test_a_changed_source_is_a_checksum_error(name, serve, sources, tmp_path, monkeypatch):
    module = DOWNLOADABLE[name][0]
    (source,) = module.FILE.sources
    real = (sources / source.repo / "raw" / source.commit / source.path).read_bytes()
    changed = real[:1000] + bytes([real[1000] ^ 1]) + real[1001:]  # one bit flipped, same length
    _copy_source(sources, source, tmp_path / "www", changed)
    url, log = serve(tmp_path / "www")
    monkeypatch.setenv(MIRROR_ENV_VAR, url)
    data = tmp_path / "data"
    with pytest.raises(DataError) as info:
        judgments.load(name, data)
    message = str(info.value)
    for needed in (source.url, source.sha256, hashlib.sha256(changed).hexdigest(), "SHA-256 checksum mismatch",
                   "Fix:", MIRROR_ENV_VAR, str(data / module.FILE.relpath)):
        assert needed in message, needed
    assert _files(data) == []  # no .part, no target, not even the set folder
    assert len(log) == 1


@pytest.mark.parametrize("how", ["served short", "connection closed"])
def test_a_truncated_download_is_an_error(how, serve, sources, tmp_path, monkeypatch):
    source = summeval.SOURCE
    real = (sources / source.repo / "raw" / source.commit / source.path).read_bytes()
    if how == "served short":
        _copy_source(sources, source, tmp_path / "www", real[: len(real) // 2])
        url, _ = serve(tmp_path / "www")
        why = f"got {len(real) // 2:,} bytes where the pinned file has {len(real):,}"
    else:
        url, _ = serve(sources, _ShortHandler)
        why = f"connection closed after {len(real) // 2:,} of {len(real):,} bytes"
    monkeypatch.setenv(MIRROR_ENV_VAR, url)
    with pytest.raises(DataError) as info:
        judgments.load("summeval", tmp_path / "data")
    message = str(info.value)
    for needed in (why, source.url, source.sha256, hashlib.sha256(real[: len(real) // 2]).hexdigest(), "Fix:"):
        assert needed in message, needed
    assert _files(tmp_path / "data") == []


def test_a_converter_output_that_differs_is_an_error(mirror, tmp_path, monkeypatch):
    wrong = "1" * 64
    monkeypatch.setattr(summeval, "FILE", dataclasses.replace(summeval.FILE, sha256=wrong, content_sha256=None))
    with pytest.raises(DataError) as info:
        judgments.load("summeval", tmp_path)
    message = str(info.value)
    assert wrong in message and "78cae3d44617349e743480cb8ff89d17c4fb991784bafbead65ed0083292fd17" in message
    assert "bug" in message and _files(tmp_path) == []


def test_ctrl_c_during_conversion_leaves_nothing(mirror, tmp_path, monkeypatch):
    def interrupted(fetched, out):
        Path(out).write_bytes(b"half")
        raise KeyboardInterrupt

    monkeypatch.setattr(bartscore, "realsumm", interrupted)
    with pytest.raises(KeyboardInterrupt):
        judgments.load("realsumm", tmp_path)
    assert _files(tmp_path) == []


def test_existing_data_folder_is_kept_on_failure(serve, tmp_path, monkeypatch):
    (tmp_path / "www").mkdir()
    url, _ = serve(tmp_path / "www")  # serves nothing: 404
    monkeypatch.setenv(MIRROR_ENV_VAR, url)
    (tmp_path / "data" / "chaganty").mkdir(parents=True)
    (tmp_path / "data" / "chaganty" / "notes.txt").write_text("mine")
    with pytest.raises(DataError, match="404"):
        judgments.load("chaganty", tmp_path / "data")
    assert _files(tmp_path / "data") == ["chaganty", "chaganty/notes.txt"]


# -- converters for the newer sets (wmt21-mqm-ted, wmt23, frank, qags) ---------------------------------------------

# converter module -> (data file, rows: from each set's PROVENANCE.md, loader module)
NEWER = {"qags": ("qags/qags.jsonl.gz", 474, "meta_eval.judgments.qags"),
         "frank": ("frank/frank.jsonl.gz", 2246, "meta_eval.judgments.frank"),
         "wmt21_mqm": ("wmt21-mqm-ted/wmt21_mqm_ted.jsonl.gz", 15341, "meta_eval.judgments.wmt21_mqm"),
         "wmt23": ("wmt23/wmt23_da_sqm.jsonl.gz", 21281, "meta_eval.judgments.wmt23")}


def _newer_file(name: str, published: dict) -> DataFile:
    module = importlib.import_module(f"meta_eval.judgments.convert.{name}")
    relpath = NEWER[name][0]
    return DataFile(relpath, sha256=published[relpath], sources=module.SOURCES,
                    convert=f"meta_eval.judgments.convert.{name}:convert", content_sha256=module.CONTENT_SHA256)


@pytest.mark.parametrize("name", list(NEWER))
def test_newer_sets_are_reproduced_from_their_pinned_sources(name, mirror, shared_data, published, tmp_path):
    relpath, n_rows, loader = NEWER[name]
    f = _newer_file(name, published)
    _, log = mirror
    path = ensure_file(f, tmp_path, show_progress=False)
    assert len(log) == len(f.sources)
    assert sha256_of(path) == published[relpath] == sha256_of(shared_data / relpath)  # byte-identical
    assert gunzipped_sha256_of(path) == f.content_sha256
    assert len(gzip.decompress(path.read_bytes()).splitlines()) == n_rows
    assert _files(tmp_path) == sorted([str(Path(relpath).parent), relpath])
    declared = importlib.import_module(loader).FILE  # the loader is wired to this converter
    assert (declared.sources, declared.convert, declared.sha256) == (f.sources, f.convert, f.sha256)


@pytest.mark.parametrize("name, set_name", [("qags", "qags"), ("frank", "frank"), ("wmt21_mqm", "wmt21-mqm-ted"),
                                            ("wmt23", "wmt23")])
def test_newer_sets_load_end_to_end_through_the_mirror(name, set_name, mirror, shared_data, tmp_path):
    """meta_eval.judgments.load on an empty data folder downloads, verifies and converts, and gives the shared set's
    rows."""
    relpath = NEWER[name][0]
    subset = "en-de+human,zh-en+human" if name in ("wmt21_mqm", "wmt23") else "all"  # every row
    fresh = judgments.load(set_name, tmp_path / "data", subset=subset)
    shared = judgments.load(set_name, shared_data, subset=subset)
    assert sha256_of(tmp_path / "data" / relpath) == sha256_of(shared_data / relpath)
    assert fresh.rows == shared.rows and len(fresh) == NEWER[name][1]  # every row of the file


def test_newer_sources_match_sources_md(shared_data, sources):
    table = (shared_data / "SOURCES.md").read_text()
    for name in NEWER:
        module = importlib.import_module(f"meta_eval.judgments.convert.{name}")
        for source in module.SOURCES:
            local = sources / source.repo / "raw" / source.commit / source.path
            assert sha256_of(local) == source.sha256 and local.stat().st_size == source.size, source.path
            if "articles-wmetrics-reference-json" not in source.path:
                assert f"| {source.repo} | {source.commit} | {source.path} | {source.size} | {source.sha256} |" in table
    listed = dict(reversed(line.split()) for line in (shared_data / "frank" / "source-texts.sha256").read_text()
                  .splitlines() if line.strip())
    from meta_eval.judgments.convert import frank
    assert len(frank.TEXTS) == 499 and all(listed[t.path] == t.sha256 for t in frank.TEXTS)


def test_converter_input_checks():
    from meta_eval.judgments.convert import frank, wmt21_mqm

    assert wmt21_mqm.weight("Major", "Non-translation!") == 25.0
    assert wmt21_mqm.weight("Minor", "Fluency/Punctuation") == 0.1
    assert wmt21_mqm.weight("Major", "Fluency/Punctuation") == 5.0
    assert wmt21_mqm.weight("Neutral", "Style/Awkward") == 0.0
    with pytest.raises(ConversionError, match="x.tsv:3: unknown severity 'Critical'"):
        wmt21_mqm.weight("Critical", "Accuracy", "x.tsv:3")
    with pytest.raises(ConversionError, match="the source data/human_annotations.json is missing"):
        frank.convert([], Path("unused"))


# -- the documented equivalence for gzip files --------------------------------------------------------------------

def test_another_deflate_gives_an_equivalent_file(mirror, shared_data, tmp_path, monkeypatch):
    """Another zlib (simulated: another level) compresses differently; same decompressed bytes: accepted."""
    monkeypatch.setattr(bartscore, "SUMMEVAL_GZIP", GzipFormat(level=6))
    assert len(judgments.load("summeval", tmp_path)) == 1600
    made, shared = tmp_path / summeval.FILE.relpath, shared_data / summeval.FILE.relpath
    assert sha256_of(made) != sha256_of(shared)
    assert gzip.decompress(made.read_bytes()) == gzip.decompress(shared.read_bytes())
    assert gunzipped_sha256_of(made) == summeval.FILE.content_sha256
    monkeypatch.undo()
    assert judgments.load("summeval", tmp_path, download=False).rows == \
        judgments.load("summeval", shared_data, download=False).rows


def test_an_existing_file_with_other_content_is_refused(shared_data, tmp_path):
    content = gzip.decompress((shared_data / realsumm.FILE.relpath).read_bytes())
    path = tmp_path / realsumm.FILE.relpath
    path.parent.mkdir(parents=True)
    path.write_bytes(gzip.compress(content.replace(b'"litepyramid_recall": 0.3}', b'"litepyramid_recall": 0.4}', 1)))
    with pytest.raises(DataError, match="corrupt or truncated") as info:
        judgments.load("realsumm", tmp_path, download=False)
    assert realsumm.FILE.sha256 in str(info.value) and "delete it" in str(info.value)


def test_gzip_writer(shared_data, tmp_path):
    data = b"a line\n" * 500
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", compresslevel=9, mtime=0) as fh:
        fh.write(data)
    path = tmp_path / "out.gz"
    write_gzip(path, data)
    assert path.read_bytes() == buf.getvalue()  # the default: Python's GzipFile, level 9, mtime 0, no name
    write_gzip(path, data, bartscore.SUMMEVAL_GZIP)
    head = (shared_data / summeval.FILE.relpath).read_bytes()[:35]
    assert path.read_bytes()[:35] == head == b"\x1f\x8b\x08\x08r(\x02k\x02\x03bartscore_SummEval.jsonl\x00"
    assert gzip.decompress(path.read_bytes()) == data


# -- the safe unpickler -------------------------------------------------------------------------------------------

class _Evil:
    def __init__(self, call, *args):
        self.call, self.args = call, args

    def __reduce__(self):
        return self.call, self.args


@pytest.mark.parametrize("payload", ["open", "os.system"])
def test_a_pickle_with_a_global_is_refused_and_runs_nothing(payload, tmp_path):
    if payload == "os.system" and os.name != "posix":
        pytest.skip("touch is POSIX")

    def evil(marker):
        if payload == "open":
            return pickle.dumps({"docs": [_Evil(open, str(marker), "w")]}, protocol=3)
        return pickle.dumps({"docs": [_Evil(os.system, f"touch {marker}")]}, protocol=3)

    live = tmp_path / "live"
    ran = pickle.loads(evil(live))  # the payload is real: plain pickle runs it
    if payload == "open":
        ran["docs"][0].close()
    assert live.exists()
    marker = tmp_path / "marker"
    blob = evil(marker)
    with pytest.raises(UnsafePickleError, match=r"refused to load the global (io\.open|posix\.system)"):
        loads_plain(blob, source="evil.pkl")
    (tmp_path / "evil.pkl").write_bytes(blob)
    with pytest.raises(UnsafePickleError, match=re.escape(str(tmp_path / "evil.pkl"))):
        load_plain(tmp_path / "evil.pkl")
    assert not marker.exists()


def test_a_malicious_pickle_with_a_matching_checksum_is_refused_by_the_real_path(serve, sources, tmp_path,
                                                                                  monkeypatch):
    """Even a file whose checksum matches (say a compromised pin) cannot run code through the converter."""
    marker = tmp_path / "marker"
    blob = pickle.dumps({"doc": {"src": _Evil(os.system, f"touch {marker}")}}, protocol=3)
    source = dataclasses.replace(summeval.SOURCE, sha256=hashlib.sha256(blob).hexdigest(), size=len(blob))
    monkeypatch.setattr(summeval, "FILE", dataclasses.replace(summeval.FILE, sources=(source,)))
    _copy_source(sources, source, tmp_path / "www", blob)
    url, log = serve(tmp_path / "www")
    monkeypatch.setenv(MIRROR_ENV_VAR, url)
    with pytest.raises(DataError, match=r"refused to load the global posix\.system.*bug in meta-eval's converter"):
        judgments.load("summeval", tmp_path / "data")
    assert len(log) == 1 and not marker.exists() and _files(tmp_path / "data") == []


def test_the_checksum_is_checked_before_a_single_opcode(tmp_path):
    marker = tmp_path / "marker"
    blob = pickle.dumps(_Evil(os.system, f"touch {marker}"), protocol=3)
    with pytest.raises(UnsafePickleError, match="SHA-256 expected 0{64}, got"):
        loads_plain(blob, source="x.pkl", sha256="0" * 64)
    assert not marker.exists()


@pytest.mark.parametrize("value,what", [
    ({1, 2}, r"top-level object is a set"),
    ({"a": [b"bytes"]}, r"top-level object\['a'\]\[0\] is a bytes"),
    ({"a": frozenset()}, r"is a frozenset"),
    ({(1, 2): "tuple key"}, r"key of type tuple"),
    ([bytearray(b"x")], r"is a bytearray"),
])
def test_only_plain_data_is_accepted(value, what):
    """Each of these unpickles without any global (protocol 5), so only the check after loading can refuse it."""
    blob = pickle.dumps(value, protocol=5)
    assert not {op.name for op, _, _ in pickletools.genops(blob)} & {"GLOBAL", "STACK_GLOBAL", "REDUCE"}
    with pytest.raises(UnsafePickleError, match=what):
        loads_plain(blob)


def test_plain_data_cycles_shared_references_and_persistent_ids():
    loop: list = []
    loop.append(loop)
    with pytest.raises(UnsafePickleError, match="contains itself"):
        loads_plain(pickle.dumps({"x": loop}))
    shared = ["s"] * 3
    assert loads_plain(pickle.dumps({1: shared, 2.5: shared, None: (True, 0.5, "x")})) == \
        {1: ["s"] * 3, 2.5: ["s"] * 3, None: (True, 0.5, "x")}
    deep: list = []
    node = deep
    for _ in range(100_000):  # no recursion limit in the check
        node.append([])
        node = node[0]
    check_plain(deep)

    class WithPid(pickle.Pickler):
        def persistent_id(self, obj):
            return "ext-1" if obj == "external" else None

    buf = io.BytesIO()
    WithPid(buf).dump(["external"])
    with pytest.raises(UnsafePickleError, match="persistent id"):
        loads_plain(buf.getvalue())


def test_the_real_pickles_are_plain_data(sources):
    for module, docs, systems in ((summeval, 100, 16), (realsumm, 100, 24)):
        source = module.SOURCE
        data = load_plain(sources / source.repo / "raw" / source.commit / source.path, sha256=source.sha256)
        assert len(data) == docs
        assert {len(doc["sys_summs"]) for doc in data.values()} == {systems}


def test_a_pickle_of_the_wrong_shape_names_the_document():
    data = {"d1": {"src": "a", "ref_summ": "b", "ref_summs": ["b"], "sys_summs": {"M1": {"sys_summ": "c",
                                                                                      "scores": {"x": "high"}}}}}
    with pytest.raises(ConversionError, match=r"data.pkl: document 'd1', system 'M1': score 'x' = 'high'"):
        bartscore.bartscore_rows(data, "data.pkl", multi_ref=True)
    with pytest.raises(ConversionError, match=r"document 'd1': no field 'ref_summs'"):
        bartscore.bartscore_rows({"d1": {"src": "a", "ref_summ": "b", "sys_summs": {}}}, "data.pkl", multi_ref=True)
    rows = bartscore.bartscore_rows({7: {"src": "s", "ref_summ": "r", "sys_summs": {"A": {"sys_summ": "c",
                                                                                         "scores": {"p": 0.5}}}}},
                                    "data.pkl", multi_ref=False)
    assert rows == [{"doc_id": "7", "system": "A", "src": "s", "ref_summ": "r", "sys_summ": "c",
                     "scores": {"p": 0.5}}]


# -- permissions, partial files left by a killed download, the checksum message ---------------------------------------

def test_downloaded_files_get_the_permissions_of_a_file_made_by_open(mirror, tmp_path, monkeypatch):
    """With umask 002 a shared data folder stays group-writable: 0664 files, 0775 folders (never 0600), even when
    the converter wrote its output through a private temporary file."""
    real = bartscore.realsumm

    def private_then_real(fetched, out):
        os.close(os.open(out, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))  # as tempfile.mkstemp would
        real(fetched, out)  # the real converter writes into it (open("wb") keeps the mode)

    monkeypatch.setattr(bartscore, "realsumm", private_then_real)
    old = os.umask(0o002)
    try:
        judgments.load("chaganty", tmp_path)
        judgments.load("realsumm", tmp_path)
    finally:
        os.umask(old)
    for rel, mode in (("chaganty", 0o775), (chaganty.FILE.relpath, 0o664), ("realsumm", 0o775),
                      (realsumm.FILE.relpath, 0o664)):
        assert (tmp_path / rel).stat().st_mode & 0o777 == mode, rel
    assert _files(tmp_path) == sorted(["chaganty", chaganty.FILE.relpath, "realsumm", realsumm.FILE.relpath])


class _StallHandler(http.server.BaseHTTPRequestHandler):
    """Announces the whole file, sends half of it, sets `stalled`, then waits until `release` is set: a download in
    progress."""

    directory: str
    stalled: threading.Event
    release: threading.Event

    def do_GET(self):
        data = (Path(self.directory) / self.path.lstrip("/")).read_bytes()
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data[: len(data) // 2])
        self.wfile.flush()
        self.stalled.set()
        self.release.wait(60)
        self.close_connection = True

    def log_message(self, *args):
        pass


def _host_name() -> str:
    from meta_eval.judgments.files import _host

    return _host()


def test_a_download_killed_with_sigkill_leaves_a_part_that_the_next_download_removes(serve, sources, tmp_path,
                                                                                   monkeypatch):
    import signal
    import subprocess
    import sys
    import time

    stalled, release = threading.Event(), threading.Event()
    stall_url, _ = serve(sources, type("S", (_StallHandler,), {"stalled": stalled, "release": release}))
    data = tmp_path / "data"
    code = "import sys; from meta_eval import judgments; judgments.load('chaganty', sys.argv[1])"
    env = {**os.environ, MIRROR_ENV_VAR: stall_url}
    victim = subprocess.Popen([sys.executable, "-c", code, str(data)], env=env, stderr=subprocess.DEVNULL)
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        folder = data / "chaganty"
        prefix = f"{chaganty.FILE.relpath.split('/')[-1]}.part-{_host_name()}-{victim.pid}-"
        deadline = time.monotonic() + 60
        while not stalled.is_set():  # half the file sent: the victim is inside the download
            assert victim.poll() is None and time.monotonic() < deadline, "the download never started"
            time.sleep(0.05)
        victim.send_signal(signal.SIGKILL)
        victim.wait(10)
        (stale,) = [p for p in folder.iterdir() if p.name.startswith(prefix)]  # SIGKILL: it could not clean up
        # partial files that must survive: a running process's (another host's pid is not checkable here)
        name = chaganty.FILE.relpath.split("/")[-1]
        keep = [folder / f"{name}.part-{_host_name()}-{live.pid}-0123abcd",
                folder / f"{name}.part-{_host_name()}-{os.getpid()}-0123abcd",
                folder / f"{name}.part-another.host-{victim.pid}-0123abcd",
                folder / "notes.part-1-0123abcd"]
        for p in keep:
            p.write_bytes(b"in progress")
        # a converted file's stale partial folder (dead pid) goes too, with its content
        dir_name = f"{realsumm.FILE.relpath.split('/')[-1]}.part-{_host_name()}-{victim.pid}-00ff00ff"
        stale_dir = data / "realsumm" / dir_name
        stale_dir.mkdir(parents=True)
        (stale_dir / "0000-data.pkl").write_bytes(b"half")
        release.set()
        good_url, log = serve(sources)
        monkeypatch.setenv(MIRROR_ENV_VAR, good_url)
        assert len(judgments.load("chaganty", data)) == 2085
        assert not stale.exists() and all(p.exists() for p in keep)
        assert sorted(p.name for p in folder.iterdir()) == sorted([name, *(p.name for p in keep)])
        judgments.load("realsumm", data)
        assert not stale_dir.exists() and len(log) == 2
    finally:
        release.set()
        live.kill()
        live.wait(10)
        if victim.poll() is None:
            victim.kill()


def test_a_stale_part_is_removed_even_when_the_file_is_already_there(shared_data, tmp_path):
    """Another process finished the download after one was killed: the next load still cleans up."""
    import subprocess
    import sys

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait(30)
    target = tmp_path / chaganty.FILE.relpath
    target.parent.mkdir(parents=True)
    target.write_bytes((shared_data / chaganty.FILE.relpath).read_bytes())
    stale = target.with_name(f"{target.name}.part-{_host_name()}-{dead.pid}-89abcdef")
    stale.write_bytes(b"half")
    judgments.load("chaganty", tmp_path, download=False)
    assert not stale.exists() and [p.name for p in target.parent.iterdir()] == [target.name]


def test_the_checksum_message_names_the_cause_and_the_fix(serve, sources, tmp_path, monkeypatch):
    """A complete response with another SHA-256 is not a network problem: the message says so and names the mirror
    to check, the pinned GitHub file it must copy, both SHA-256 and the file."""
    from meta_eval.judgments.files import _mismatch_fix

    source = chaganty.SOURCE
    real = (sources / source.repo / "raw" / source.commit / source.path).read_bytes()
    other = b"<html>please log in</html>"
    _copy_source(sources, source, tmp_path / "www", other)
    url, _ = serve(tmp_path / "www")
    monkeypatch.setenv(MIRROR_ENV_VAR, url)
    with pytest.raises(DataError) as info:
        judgments.load("chaganty", tmp_path / "data")
    message = " ".join(str(info.value).split())
    for needed in (chaganty.FILE.relpath, source.sha256, hashlib.sha256(other).hexdigest(),
                   f"got {len(other):,} bytes where the pinned file has {len(real):,}", "not a network error",
                   f"the mirror {MIRROR_ENV_VAR}={url} serves a different file", source.github_url,
                   f"unset {MIRROR_ENV_VAR}", "delete its copy there",
                   f"Nothing was written to {tmp_path / 'data' / chaganty.FILE.relpath}"):
        assert needed in message, needed
    assert "check your network" not in message.lower()
    assert _files(tmp_path / "data") == []
    # from GitHub itself (no mirror): a proxy rewrote the bytes, or the upstream file changed: report it
    monkeypatch.delenv(MIRROR_ENV_VAR)
    text = _mismatch_fix(source.url, source.github_url, source.sha256, "f" * 64)
    assert source.url.startswith(GITHUB) and "proxy" in text and "report" in text and "f" * 64 in text


# -- bounded downloads: never past the pinned size, never past a deadline ------------------------------------------

class _EndlessHandler(http.server.BaseHTTPRequestHandler):
    """Streams zeros for ever (no Content-Length), until the client hangs up."""

    def do_GET(self):
        self.send_response(200)
        self.end_headers()
        try:
            while True:
                self.wfile.write(b"\0" * 65536)
        except OSError:
            pass

    def log_message(self, *args):
        pass


class _DripHandler(http.server.BaseHTTPRequestHandler):
    """Announces the file's length, then sends one byte every 0.2 s (never idle long enough for a socket timeout)."""

    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Length", "1000000")
        self.end_headers()
        try:
            for _ in range(1000):
                self.wfile.write(b"x")
                self.wfile.flush()
                time.sleep(0.2)
        except OSError:
            pass

    def log_message(self, *args):
        pass


def test_a_mirror_that_streams_for_ever_is_cut_at_the_pinned_size(serve, tmp_path, monkeypatch):
    source = summeval.SOURCE
    url, _ = serve(tmp_path, _EndlessHandler)
    monkeypatch.setenv(MIRROR_ENV_VAR, url)
    seen = [0]
    real_fetch = files_module._fetch

    class Watched:  # the real .part file, its size recorded after every write
        def __init__(self, fh):
            self.fh = fh

        def write(self, data):
            written = self.fh.write(data)
            seen.append(self.fh.tell())
            return written

        def flush(self):
            self.fh.flush()

    monkeypatch.setattr(files_module, "_fetch", lambda url, sha, size, out, **kw: real_fetch(url, sha, size,
                                                                                          Watched(out), **kw))
    started = time.monotonic()
    with pytest.raises(DataError) as info:
        judgments.load("summeval", tmp_path / "data")
    message = " ".join(str(info.value).split())
    assert f"the server sent more than the pinned size ({source.size:,} bytes" in message
    assert max(seen) <= source.size  # the .part never held a byte past the pinned size
    assert time.monotonic() - started < 60
    assert _files(tmp_path / "data") == []


def test_a_mirror_that_drips_is_given_up_at_the_deadline(serve, tmp_path, monkeypatch):
    url, _ = serve(tmp_path, _DripHandler)
    monkeypatch.setenv(MIRROR_ENV_VAR, url)
    monkeypatch.setenv("META_EVAL_DOWNLOAD_SECONDS", "2")
    started = time.monotonic()
    with pytest.raises(DataError) as info:
        judgments.load("summeval", tmp_path / "data")
    assert time.monotonic() - started < 20
    message = " ".join(str(info.value).split())
    assert "arrived in 2 s, the time allowed for this file" in message and "META_EVAL_DOWNLOAD_SECONDS" in message
    assert _files(tmp_path / "data") == []
    from meta_eval.judgments.files import download_seconds

    monkeypatch.delenv("META_EVAL_DOWNLOAD_SECONDS")
    assert download_seconds(930_000) == pytest.approx(60 + 930_000 / 20_000)
    monkeypatch.setenv("META_EVAL_DOWNLOAD_SECONDS", "soon")
    with pytest.raises(DataError, match="META_EVAL_DOWNLOAD_SECONDS='soon' is not a positive number"):
        download_seconds(1)
