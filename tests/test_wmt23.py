"""The wmt23 set (WMT23 DA+SQM, en-de and zh-en) on the real files, its conversion and download, bad rows, pooled
language-pair subsets (wmt23 and wmt21-mqm-ted), and a CLI run.

Expected numbers come from ``shared/judgments/wmt23/PROVENANCE.md`` (rows, segments, per-system means) and from the
original score files in ``shared/judgments/_sources`` (JUDGE-BENCH's ``<lp>_score.txt``), read here directly.
"""
from __future__ import annotations

import functools
import gzip
import hashlib
import http.server
import json
import threading
from collections import defaultdict
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import require_metrics
from meta_eval import judgments
from meta_eval.cli import app
from meta_eval.judgments import DataError, JudgmentError, wmt23
from meta_eval.judgments.base import Judgment, JudgmentSet
from meta_eval.judgments.convert import wmt23 as convert_wmt23
from meta_eval.judgments.files import MIRROR_ENV_VAR, Fetched, gunzipped_sha256_of, sha256_of
from meta_eval.judgments.pooling import pool, subset_parts

runner = CliRunner()
RAW = "_sources/dmg-illc/JUDGE-BENCH/raw/5a0bf500325029efb5dc8adff2c1e991996f0e78/data/wmt-23/original_data"
# PROVENANCE.md: rated segments x MT systems (refA besides), and per-system means of da_sqm (2 decimals)
SHAPE = {"en-de": (549, 12), "zh-en": (884, 15)}
MEANS = {"en-de": {"GPT4-5shot": 88.96, "ONLINE-B": 88.83, "AIRC": 73.59, "refA": 87.66},
         "zh-en": {"Lan-BridgeMT": 82.89, "GPT4-5shot": 80.95, "ANVITA": 72.60, "refA": 76.05}}


@pytest.fixture(scope="module")
def sets(shared_data):
    return {s: judgments.load("wmt23", shared_data, subset=s, download=False) for s in wmt23.SUBSETS}


def _means(jset) -> dict[str, float]:
    by_system = defaultdict(list)
    for row in jset.rows:
        by_system[row.system].append(row.scores["da_sqm"])
    return {system: sum(v) / len(v) for system, v in by_system.items()}


# -- the set ----------------------------------------------------------------------------------------------------------

def test_subsets_rows_segments_and_systems(sets, shared_data):
    assert judgments.load("wmt23", shared_data, download=False).subset == "en-de"  # the default
    assert {s: len(j) for s, j in sets.items()} == {"en-de": 6588, "zh-en": 13260, "en-de+human": 7137,
                                                    "zh-en+human": 14144}
    for subset, jset in sets.items():
        lp = subset.split("+")[0]
        segments, n_mt = SHAPE[lp]
        human = subset.endswith("+human")
        assert jset.documents() == segments and all(r.doc_id.startswith(lp + ":") for r in jset.rows)
        assert len(jset.systems()) == n_mt + human and ("refA" in jset.systems()) == human
        assert len(jset) == segments * (n_mt + human)  # every rated segment has every system
        assert jset.dimensions == ("da_sqm",) and jset.default_dimension == "da_sqm" and "DA+SQM" in jset.default_reason
        assert jset.max_references == 1 and jset.has_sources and jset.task == "MT" and jset.licence == "Apache-2.0"
        assert jset.language == lp.split("-")[1] and jset.pooled_groups == () and jset.system_group("AIRC") is None
        assert jset.annotators and "JUDGE-BENCH" in jset.data_source
        assert all(r.id == f"{r.doc_id}:{r.system}" and 0 <= r.scores["da_sqm"] <= 100 for r in jset.rows)
        assert any("MQM" in n for n in jset.notes) and any("no human ceiling" in n for n in jset.notes)
    assert any("left out" in n for n in sets["zh-en"].notes)
    assert any("maximum" in n for n in sets["en-de+human"].notes)


@pytest.mark.parametrize("lp", ["en-de", "zh-en"])
def test_system_means_match_provenance_and_the_original_score_file(sets, shared_data, lp):
    means = _means(sets[f"{lp}+human"])
    for system, expected in MEANS[lp].items():
        assert round(means[system], 2) == expected, system
    mt = {s: m for s, m in means.items() if s != "refA"}
    ranked = sorted(mt, key=mt.get, reverse=True)
    assert ranked[0] == next(iter(MEANS[lp])) and ranked[-1] == list(MEANS[lp])[2]  # top and bottom MT system
    assert _means(sets[lp]) == mt  # the plain subset is the +human one without refA
    # the original file, read here: system<TAB>score, each system's segments in order, "None" where not rated
    raw = defaultdict(list)
    for line in (shared_data / RAW / f"{lp}_score.txt").read_text(encoding="utf-8").splitlines():
        system, value = line.split("\t")
        if value != "None":
            raw[system].append(float(value))
    assert {s: sum(v) / len(v) for s, v in raw.items()} == pytest.approx(means, abs=1e-12)


def test_rows_hand_checked(sets, shared_data):
    rows = {r.id: r for r in sets["en-de+human"].rows}
    airc = rows["en-de:1:AIRC"]
    assert airc.scores == {"da_sqm": 67.5} and airc.judges == {} and airc.where.endswith("wmt23_da_sqm.jsonl.gz:1")
    assert airc.source == "Police arrest 15 after violent protest outside UK refugee hotel"
    assert airc.references == ("Polizei verhaftet 15 Menschen nach gewalttätigen Protesten vor einer "
                               "Flüchtlingsunterkunft in Großbritannien",)
    assert airc.candidate == ("Polizeiverhaftung 15 nach gewaltsamen Protesten außerhalb des britischen "
                              "Flüchtlingshotels")
    assert rows["en-de:1:GPT4-5shot"].scores["da_sqm"] == 99.5
    src_line = (shared_data / RAW / "en-de_source.txt").read_text(encoding="utf-8").split("\n")[0]
    assert airc.source == src_line
    ref_rows = [r for r in sets["en-de+human"].rows if r.system == "refA"]
    assert len(ref_rows) == 549 and all(r.candidate == r.references[0] for r in ref_rows)
    # zh-en segment 1099's reference is a lone '"' in the source: kept as is
    assert {r.references for r in sets["zh-en"].rows if r.doc_id == "zh-en:1099"} == {('"',)}


def test_no_human_ceiling(sets):
    from meta_eval.stats.ceiling import no_annotator_reason

    assert "no per-annotator values" in no_annotator_reason(sets["en-de"], "da_sqm")


# -- conversion and download ------------------------------------------------------------------------------------------

def test_the_conversion_reproduces_the_shared_file_byte_for_byte(shared_data, tmp_path):
    sources = shared_data / "_sources"
    fetched = [Fetched(s, sources / s.repo / "raw" / s.commit / s.path) for s in convert_wmt23.SOURCES]
    assert len(fetched) == 38 and all(sha256_of(f.path) == f.source.sha256 for f in fetched)
    listed = (shared_data / "SOURCES.md").read_text()
    assert all(f"| {s.repo} | {s.commit} | {s.path} | {s.size} | {s.sha256} |" in listed for s in convert_wmt23.SOURCES)
    out = tmp_path / "wmt23_da_sqm.jsonl.gz"
    convert_wmt23.convert(fetched, out)
    shared = shared_data / wmt23.FILE.relpath
    assert hashlib.sha256(gzip.decompress(shared.read_bytes())).hexdigest() == wmt23.FILE.content_sha256
    assert gunzipped_sha256_of(out) == wmt23.FILE.content_sha256  # the decompressed bytes
    assert out.read_bytes() == shared.read_bytes() and sha256_of(out) == wmt23.FILE.sha256  # and the gzip file too
    sums = dict(line.split()[::-1] for line in (shared_data / "SHA256SUMS").read_text().splitlines() if line.strip())
    assert sums[wmt23.FILE.relpath] == wmt23.FILE.sha256


def test_the_converter_refuses_an_incomplete_folder(shared_data, tmp_path):
    from meta_eval.judgments.convert import ConversionError

    sources = shared_data / "_sources"
    fetched = [Fetched(s, sources / s.repo / "raw" / s.commit / s.path) for s in convert_wmt23.SOURCES
               if not s.path.endswith("en-de_score.txt")]
    with pytest.raises(ConversionError, match=r"missing \['en-de_score\.txt'\]"):
        convert_wmt23.convert(fetched, tmp_path / "out.jsonl.gz")
    assert not (tmp_path / "out.jsonl.gz").exists()


@pytest.fixture()
def served_sources(shared_data, monkeypatch):
    """``shared/judgments/_sources`` served from 127.0.0.1 as the mirror of github.com; yields the request log."""
    log: list[str] = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            log.append(self.path)
            super().do_GET()

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                             functools.partial(Handler, directory=str(shared_data / "_sources")))
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    monkeypatch.setenv(MIRROR_ENV_VAR, f"http://127.0.0.1:{server.server_address[1]}")
    yield log
    server.shutdown()
    server.server_close()
    thread.join(5)


def test_a_missing_file_is_downloaded_verified_and_converted(served_sources, shared_data, tmp_path):
    jset = judgments.load("wmt23", tmp_path, subset="zh-en")
    assert sorted(served_sources) == sorted(f"/{s.repo}/raw/{s.commit}/{s.path}" for s in wmt23.FILE.sources)
    made = tmp_path / wmt23.FILE.relpath
    assert made.read_bytes() == (shared_data / wmt23.FILE.relpath).read_bytes()
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*")) == ["wmt23", wmt23.FILE.relpath]
    assert jset.rows == judgments.load("wmt23", shared_data, subset="zh-en", download=False).rows
    judgments.load("wmt23", tmp_path, subset="en-de,zh-en")  # the file is there now: no request
    assert len(served_sources) == 38


def test_missing_file_without_download_and_unknown_subset(shared_data, tmp_path):
    with pytest.raises(DataError, match=r"wmt23/wmt23_da_sqm\.jsonl\.gz"):
        judgments.load("wmt23", tmp_path, download=False)
    with pytest.raises(JudgmentError, match=r"wmt23 has subsets en-de, zh-en, en-de\+human, zh-en\+human, not 'de-en'"):
        judgments.load("wmt23", tmp_path, subset="de-en", download=False)  # before looking for the file


# -- bad rows name the file and line ----------------------------------------------------------------------------------

def _objects(shared_data, n=None) -> list[dict]:
    with gzip.open(shared_data / wmt23.FILE.relpath, "rt", encoding="utf-8") as fh:
        return [json.loads(line) for i, line in enumerate(fh) if n is None or i < n]


def _write(tmp_path, objs, name="bad.jsonl") -> Path:
    path = tmp_path / name
    data = "".join(json.dumps(o, ensure_ascii=False) + "\n" for o in objs).encode("utf-8")
    path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    return path


def test_a_corrupted_row_of_the_real_file_names_file_and_line(shared_data, tmp_path):
    objs = _objects(shared_data)
    assert len(objs) == 21281
    objs[15000]["scores"] = {"da_sqm": 100.5}
    path = _write(tmp_path, objs, "wmt23_da_sqm.jsonl.gz")
    with pytest.raises(JudgmentError, match=r"wmt23_da_sqm\.jsonl\.gz:15001: scores\.da_sqm is 100\.5, outside "
                                            r"0\.\.100"):
        wmt23.read(path, "zh-en")


@pytest.mark.parametrize("change, message", [
    (lambda o: o.pop("sys_summ"), r"bad\.jsonl:2: missing field 'sys_summ'"),
    (lambda o: o.update(scores={"da_sqm": float("nan")}), r"bad\.jsonl:2: scores\.da_sqm must be a finite number"),
    (lambda o: o.update(scores={"da_sqm": "67.5"}), r"bad\.jsonl:2: scores\.da_sqm must be a finite number"),
    (lambda o: o.update(scores={"da_sqm": -1}), r"bad\.jsonl:2: scores\.da_sqm is -1, outside 0\.\.100"),
    (lambda o: o.update(scores={"mqm": 1.0}), r"bad\.jsonl:2: 'scores' must hold 'da_sqm' only"),
    (lambda o: o.update(doc_id="zh-en:1"), r"bad\.jsonl:2: doc_id 'zh-en:1' is not '<lp>:<seg_id>'"),
    (lambda o: o.update(lp="de-en"), r"bad\.jsonl:2: language pair 'de-en' is not one of en-de, zh-en"),
    (lambda o: o.update(seg_id=True), r"bad\.jsonl:2: field 'seg_id' must be an integer, got true"),
    (lambda o: o.update(ref_summs=[o["ref_summ"], "another"]), r"bad\.jsonl:2: 'ref_summs' must be \[ref_summ\]"),
    (lambda o: o.update(is_human=True), r"bad\.jsonl:2: is_human is true for system 'GPT4-5shot'"),
    (lambda o: o.update(ref_system="refB"), r"bad\.jsonl:2: ref_system is 'refB'"),
    (lambda o: o.update(src="Another source."), r"bad\.jsonl:2: the source or reference of segment 'en-de:1' "
                                                r"differs from the one at .*bad\.jsonl:1"),
])
def test_bad_rows_name_file_and_line(shared_data, tmp_path, change, message):
    objs = _objects(shared_data, 13)  # segment en-de:1: the 12 MT systems, then refA (line 13)
    assert objs[1]["system"] == "GPT4-5shot" and objs[12]["system"] == "refA"
    assert len(wmt23.read(_write(tmp_path, objs), "en-de")) == 12
    change(objs[1])
    with pytest.raises(JudgmentError, match=message):
        wmt23.read(_write(tmp_path, objs), "en-de")


def test_the_reference_row_and_repeats_name_file_and_line(shared_data, tmp_path):
    objs = _objects(shared_data, 13)
    objs[12]["sys_summ"] = "Etwas anderes."
    with pytest.raises(JudgmentError, match=r"bad\.jsonl:13: system 'refA' is the reference, so its sys_summ"):
        wmt23.read(_write(tmp_path, objs))
    objs = _objects(shared_data, 13)
    with pytest.raises(JudgmentError, match=r"bad\.jsonl:2 and .*bad\.jsonl:14 both hold \(segment, system\) "
                                            r"'en-de:1:GPT4-5shot'"):
        wmt23.read(_write(tmp_path, objs + objs[1:2]))


# -- pooled language pairs --------------------------------------------------------------------------------------------

def test_pooled_wmt23_holds_both_pairs_with_prefixed_systems(sets, shared_data):
    pooled = judgments.load("wmt23", shared_data, subset=" en-de , zh-en", download=False)
    assert pooled.subset == "en-de,zh-en" and pooled.pooled_groups == ("en-de", "zh-en")
    assert len(pooled) == len(sets["en-de"]) + len(sets["zh-en"]) == 6588 + 13260
    assert pooled.documents() == 549 + 884 and len(pooled.systems()) == 12 + 15
    assert pooled.language is None and pooled.task == "MT" and pooled.default_dimension == "da_sqm"
    for lp in ("en-de", "zh-en"):
        part = sets[lp]
        mine = [r for r in pooled.rows if r.doc_id.startswith(lp + ":")]
        assert [r.id for r in mine] == [r.id for r in part.rows]  # ids and documents unchanged, in order
        assert [r.system for r in mine] == [f"{lp}:{r.system}" for r in part.rows]
        assert [(r.candidate, r.references, r.source, r.scores) for r in mine] == \
            [(r.candidate, r.references, r.source, r.scores) for r in part.rows]
    assert {pooled.system_group(s) for s in pooled.systems()} == {"en-de", "zh-en"}
    assert pooled.system_group("zh-en:GPT4-5shot") == "zh-en"
    with pytest.raises(JudgmentError, match="not named '<pair>:<system>'"):
        pooled.system_group("GPT4-5shot")
    assert "pairwise accuracy" in pooled.notes[0] and "en-de, zh-en" in pooled.notes[0]
    assert sum("left out" in n for n in pooled.notes) == 2  # each pair's note, once, prefixed with its pair
    assert any(n.startswith("zh-en: the human reference refA is left out") for n in pooled.notes)
    assert pooled.describe()["pooled_groups"] == ["en-de", "zh-en"]
    # the order given is kept; a +human part may be pooled with the other pair
    other = judgments.load("wmt23", shared_data, subset="zh-en+human,en-de", download=False)
    assert other.pooled_groups == ("zh-en", "en-de") and other.rows[0].system.startswith("zh-en:")
    assert len(other) == 14144 + 6588 and "zh-en:refA" in other.systems()


def test_pooled_wmt21_keeps_the_two_facebook_systems_apart(shared_data):
    pooled = judgments.load("wmt21-mqm-ted", shared_data, subset="en-de,zh-en", download=False)
    assert len(pooled) == 6877 + 6877 and len(pooled.systems()) == 26 and pooled.language is None
    assert {"en-de:Facebook-AI", "zh-en:Facebook-AI"} <= set(pooled.systems()) and "Facebook-AI" not in pooled.systems()
    assert pooled.pooled_groups == ("en-de", "zh-en") and pooled.system_group("en-de:Facebook-AI") == "en-de"
    assert pooled.documents() == 529 * 2
    assert any(n == "one rater per segment: judges['mqm'] holds that one value, so there is no human ceiling"
               for n in pooled.notes)  # a note both pairs share appears once, unprefixed


@pytest.mark.parametrize("name", ["wmt23", "wmt21-mqm-ted"])
@pytest.mark.parametrize("subset, message", [
    ("en-de,en-de", r"names the language pair 'en-de' more than once"),
    ("en-de,zh-en+human,zh-en", r"names the language pair 'zh-en' more than once"),
    ("en-de,de-en", r"names 'de-en', which is not a subset of .*; its subsets are en-de, zh-en"),
    ("en-de,fr-de,de-en", r"names 'fr-de', 'de-en', which are not subsets"),
    ("en-de,", r"has an empty item"),
])
def test_unknown_or_repeated_pairs_are_errors(name, subset, message, tmp_path):
    with pytest.raises(JudgmentError, match=message):
        judgments.load(name, tmp_path, subset=subset, download=False)  # before looking for the file


def _tiny(lp: str, language: str, doc: str = "1") -> JudgmentSet:
    rows = [Judgment(id=f"{lp}:{doc}:{s}", doc_id=f"{lp}:{doc}", system=s, candidate=s, references=("r",),
                     scores={"q": float(i)}) for i, s in enumerate(("A", "B"))]
    return JudgmentSet("tiny", rows, ("q",), "q", language=language, notes=(f"{lp} note", "shared note"))


def test_pool_helper_language_notes_and_shared_documents():
    same = pool("tiny", ["en-de", "fr-de"], [_tiny("en-de", "de"), _tiny("fr-de", "de")])
    assert same.language == "de" and same.subset == "en-de,fr-de" and same.systems() == [
        "en-de:A", "en-de:B", "fr-de:A", "fr-de:B"]
    assert same.notes[1:] == ("en-de: en-de note", "shared note", "fr-de: fr-de note")
    assert subset_parts("tiny", "en-de", ["en-de"]) == ("en-de",)
    clash = _tiny("fr-de", "de")
    clash.rows[:] = [Judgment(id=f"x{i}", doc_id="en-de:1", system=r.system, candidate="c", references=("r",),
                              scores=r.scores) for i, r in enumerate(clash.rows)]
    with pytest.raises(JudgmentError, match="document 'en-de:1' is in language pairs en-de and fr-de"):
        pool("tiny", ["en-de", "fr-de"], [_tiny("en-de", "de"), clash])


# -- the command line -------------------------------------------------------------------------------------------------

def test_run_chrf_and_bleu_system_accuracy_on_zh_en(shared_data, tmp_path):
    require_metrics("chrf", "bleu")
    out = tmp_path / "out.json"
    res = runner.invoke(app, ["run", "-j", "wmt23", "--subset", "zh-en", "-m", "chrf,bleu", "--level", "system",
                              "--statistic", "accuracy", "--data-dir", str(shared_data), "--no-cache",
                              "--output", str(out)])
    assert res.exit_code == 0, res.output
    doc = json.loads(out.read_text())
    assert doc["judgments"] == "wmt23" and doc["subset"] == "zh-en" and doc["human"] == "da_sqm"
    assert doc["n"] == 13260 and not doc["skipped"]
    assert {r["metric"] for r in doc["results"]} == {"chrf", "bleu"} and {r["n"] for r in doc["results"]} == {15}
    assert all(0.0 <= r["value"] <= 1.0 for r in doc["results"])
    assert doc["ceiling"]["value"] is None
