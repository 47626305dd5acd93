"""WMT23 general-MT human scores for en-de and zh-en, from JUDGE-BENCH's copy, into ``wmt23/wmt23_da_sqm.jsonl.gz``.

Sources: GitHub ``dmg-illc/JUDGE-BENCH`` (Bavaresco et al., ACL 2025) at commit ``5a0bf500``, folder
``data/wmt-23/original_data/`` (from google-research/mt-metrics-eval's WMT23 data; Apache-2.0, the folder's
``LICENSE``). Per language pair ``<lp>``: ``<lp>_source.txt`` and ``<lp>_ref.txt`` (one segment per line, the
reference is ``refA``, mt-metrics-eval's standard reference), ``<lp>/<system>.txt`` (one translation per line, same
order) and ``<lp>_score.txt`` (``system<TAB>score`` lines, each system's segments in order, so the i-th line of a
system is segment i; ``None`` where the segment was not rated). Systems: the MT systems and ``refA`` (the human
reference, rated like a system). ``<lp>/refA.txt`` must equal ``<lp>_ref.txt``. ``<lp>/synthetic_ref.txt`` has no
score and an undocumented origin: it is pinned (so the folder is complete) but not converted, and ``LICENSE`` is
pinned for the record.

Output (``shared/judgments/wmt23/PROVENANCE.md``), one row per (language pair, segment, system) with a score, en-de
first, then by segment and by system name (Python string order): ``doc_id`` ``<lp>:<seg_id>`` (``seg_id`` the 1-based
line number), ``lp``, ``seg_id``, ``system``, ``is_human`` (``refA`` only), ``ref_system`` (``refA``), ``src``,
``ref_summ`` and ``ref_summs`` (``[ref_summ]``), ``sys_summ``, ``scores.da_sqm`` (the score as a float). Text files
are read as UTF-8 with lines split at ``\\n`` only (a byte-order mark at the start of a file is dropped) and must end
with a newline; texts are kept as they are (zh-en has 4 references that are a lone ``"``).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from meta_eval.judgments.convert import ConversionError, GzipFormat, jsonl_bytes, write_gzip
from meta_eval.judgments.files import Source

_REPO, _COMMIT = "dmg-illc/JUDGE-BENCH", "5a0bf500325029efb5dc8adff2c1e991996f0e78"
FOLDER = "data/wmt-23/original_data"
# (path below FOLDER, size, SHA-256), as listed in shared/judgments/SOURCES.md
_PINS = (
    ("LICENSE", 11357, "58d1e17ffe5109a7ae296caafcadfdbe6a7d176f0bc4ab01e12a689b0499d8bd"),
    ("en-de/AIRC.txt", 186081, "f3edbb9117e25e94edfcfff9f61070871bacfa3d8feed31026f872cd49abe7af"),
    ("en-de/GPT4-5shot.txt", 233250, "426a5e294296848671af529801264a5730dc2fc942b43d930ee019a7a816524e"),
    ("en-de/Lan-BridgeMT.txt", 227285, "0420a9c4462f52ae99723d4282ba4c0f360e4da806b6ea12aade6d8c04ec23b8"),
    ("en-de/NLLB_Greedy.txt", 192151, "c57f9452f5b7e081fd5d235cad470c4d27360d392da4ce2fdce18d70deba986a"),
    ("en-de/NLLB_MBR_BLEU.txt", 188351, "c21f961f6f08c2117e345cb16c571ecc4d5aa9e7c2f314f8cffdd9f05dbdf0a1"),
    ("en-de/ONLINE-A.txt", 234668, "0ccda29c7e09e092ecfcd205f499f894e009d4952060d1abc1d2e01cd1cb69c5"),
    ("en-de/ONLINE-B.txt", 236636, "6b1e0a36a54f22c5ea97b1fcf86e6a5cb0a61789483858ca01c78e8d4fcd5164"),
    ("en-de/ONLINE-G.txt", 231497, "34f82b2954aa613dc5c70826cf835569bf6361af103a71381c5447256c1996c9"),
    ("en-de/ONLINE-M.txt", 226676, "0c9982a6c921d2662d6b7d9a2b9d7b9af3035366a977ffd64b395f64c282f1c4"),
    ("en-de/ONLINE-W.txt", 234086, "1c47c7cf1528f6a0a144413350fc20988dac3de7e3f50ae016ea9ba16705c966"),
    ("en-de/ONLINE-Y.txt", 235075, "1017ad82da4bdc6409050ec3225fb3a9d2567f016d7aa164abfc80119c5b5d4f"),
    ("en-de/ZengHuiMT.txt", 249192, "0ac378c36ecb9e50bb0659b6694ef104dd0e43e0a94680af2a8efe11725ce41b"),
    ("en-de/refA.txt", 234302, "b02877fdc8050e73d18bdcb5a31779ccb51028b30bd33e5c59e813130c5508b2"),
    ("en-de/synthetic_ref.txt", 232137, "d0f9060503d6bd6f5a37fb82ee385b7ba31d4ef54728081d1d36234908eb2301"),
    ("en-de_ref.txt", 234302, "b02877fdc8050e73d18bdcb5a31779ccb51028b30bd33e5c59e813130c5508b2"),
    ("en-de_score.txt", 109253, "55008f5efc288d17a45e2d7437e7dafb5a7bf6d0d202380190cd159f3556065e"),
    ("en-de_source.txt", 197749, "097b5ccf5552f62c052bad7878caeeec2d3db431c02076fbfe1fd057fb272eef"),
    ("zh-en/ANVITA.txt", 267369, "8221bdd4fca7204243fc72e3bbbf5c04224ce84692697a6a323932af6767eb11"),
    ("zh-en/GPT4-5shot.txt", 297830, "8313f171140ffd4d270e24d8a5b389490f36bd660c5f941c29c7cad9f4ff2834"),
    ("zh-en/HW-TSC.txt", 292668, "297af610d67ad79ff8045cfc9aa57d31f3e02463137c800cdbcdb591ea5b75fa"),
    ("zh-en/IOL_Research.txt", 281790, "92197997326d23d20cda6779519da13098c2c2e6f82f9b8a0340b86b213c5e5e"),
    ("zh-en/Lan-BridgeMT.txt", 294150, "901af2c89e2981858cb835257bb0ca4078cb41ed0f6a339d5d29ad571ffbd989"),
    ("zh-en/NLLB_Greedy.txt", 279569, "8777cb97d09c4697a4e1f4fab47d89e57d2f27f1cd479ae91ad136d3c7063d69"),
    ("zh-en/NLLB_MBR_BLEU.txt", 273308, "552436f5fdce893f17014864b496ea06f8f2245e214198a016e44db1e123910d"),
    ("zh-en/ONLINE-A.txt", 289157, "a26506c4577362a4b7114b92a9333899ea7f55e8d9efecefa9d00f0fc572e368"),
    ("zh-en/ONLINE-B.txt", 292223, "162668a620897b51c1cd1b16512d146d1851a54edee6c0eec2a92ef341e0baab"),
    ("zh-en/ONLINE-G.txt", 304480, "0bc7ea3377d0494d4294b5d0af001a91eff50530673bd1cdc23b85992c48889b"),
    ("zh-en/ONLINE-M.txt", 276991, "cd235bdbe84a2eb5ba429c62f8236c40513f6a7922f04ca61b44c5c648b382b8"),
    ("zh-en/ONLINE-W.txt", 297982, "2d2a043258918b0c1243b53c8937e04b78ceebec719e0b97ae3908537f623f96"),
    ("zh-en/ONLINE-Y.txt", 298136, "2dd499d503c79160e954224e5e8295786eb6cc22fd7b4d9d33d794b773ef23cd"),
    ("zh-en/Yishu.txt", 292033, "e6d279171846ab24ad7dcceb95078119e4ab5e00c0736a319c72eb5bfab53290"),
    ("zh-en/ZengHuiMT.txt", 309176, "577416479fa291fa33db0cf3fb6a5c22b2f5e13e38bd4757774f20ea10160291"),
    ("zh-en/refA.txt", 296746, "5dd09a10f2775a1d76fe51a28ec62309a0b8a26809f08a14c9d456821e3a1a4d"),
    ("zh-en/synthetic_ref.txt", 294921, "2ec0e54d562ba02d75da2d25c2f9a55c2572405d942a8c359fdc65ed343d734f"),
    ("zh-en_ref.txt", 296746, "5dd09a10f2775a1d76fe51a28ec62309a0b8a26809f08a14c9d456821e3a1a4d"),
    ("zh-en_score.txt", 460117, "081db29e4c474fa86c5d314e94fc4d85ffdb693e4327a1661e416fea397b2493"),
    ("zh-en_source.txt", 219348, "d91ce2717cdfbf63041289f9d31f07545a8d80c4a6fd4d0bf9a1126b0d6b063a"),
)
SOURCES = tuple(Source(_REPO, _COMMIT, f"{FOLDER}/{path}", sha, size) for path, size, sha in _PINS)
LANGUAGE_PAIRS = ("en-de", "zh-en")
REF_SYSTEM = "refA"  # mt-metrics-eval meta_info.WMT23: std_ref 'refA' for en-de and zh-en
DIMENSION = "da_sqm"
CONTENT_SHA256 = "9bfa2815f8f52ecdaab01a0b56e59b0039f893c2510a24af92a0219e8265cec5"  # of the decompressed file
GZIP = GzipFormat()  # Python's GzipFile: level 9, mtime 0, no name


def _lines(path: Path, name: str) -> list[str]:
    """The lines of a text file (UTF-8, split at ``\\n`` only, a leading byte-order mark dropped)."""
    data = Path(path).read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConversionError(f"{name}: not valid UTF-8 (byte {exc.start})") from None
    text = text.removeprefix("\ufeff")
    if not text.endswith("\n"):
        raise ConversionError(f"{name}: the last line has no newline (a truncated file?)")
    return text[:-1].split("\n")


def _scores(path: Path, name: str, n_segments: int) -> dict[str, list[float | None]]:
    """``system -> [score or None per segment]`` from a ``system<TAB>score`` file."""
    scores: dict[str, list[float | None]] = {}
    for lineno, line in enumerate(_lines(path, name), 1):
        system, tab, value = line.partition("\t")
        if not tab or not system or "\t" in value:
            raise ConversionError(f"{name}:{lineno}: expected 'system<TAB>score', got {line!r}")
        if value == "None":
            score = None
        else:
            try:
                score = float(value)
            except ValueError:
                raise ConversionError(f"{name}:{lineno}: score {value!r} is not a number or None") from None
            if not math.isfinite(score) or not 0.0 <= score <= 100.0:
                raise ConversionError(f"{name}:{lineno}: score {value!r} is outside 0..100")
        scores.setdefault(system, []).append(score)
    for system, values in scores.items():
        if len(values) != n_segments:
            raise ConversionError(f"{name}: system {system!r} has {len(values)} scores for {n_segments} segments")
    return scores


def _pair(lp: str, files: dict[str, Path]) -> list[dict]:
    def texts(rel: str) -> list[str]:
        if rel not in files:
            raise ConversionError(f"the source {FOLDER}/{rel} is missing")
        return _lines(files[rel], f"{FOLDER}/{rel}")

    sources, refs = texts(f"{lp}_source.txt"), texts(f"{lp}_ref.txt")
    if len(refs) != len(sources):
        raise ConversionError(f"{FOLDER}/{lp}_ref.txt has {len(refs)} lines, {lp}_source.txt {len(sources)}")
    scores = _scores(files[f"{lp}_score.txt"], f"{FOLDER}/{lp}_score.txt", len(sources))
    if REF_SYSTEM not in scores:
        raise ConversionError(f"{FOLDER}/{lp}_score.txt has no scores of the reference {REF_SYSTEM!r}")
    outputs = {}
    for system in sorted(scores):
        outputs[system] = texts(f"{lp}/{system}.txt")
        if len(outputs[system]) != len(sources):
            raise ConversionError(f"{FOLDER}/{lp}/{system}.txt has {len(outputs[system])} lines for "
                                  f"{len(sources)} segments")
    if outputs[REF_SYSTEM] != refs:
        raise ConversionError(f"{FOLDER}/{lp}/{REF_SYSTEM}.txt differs from {lp}_ref.txt")
    rows = []
    for i, (src, ref) in enumerate(zip(sources, refs)):
        for system in sorted(scores):
            if scores[system][i] is None:
                continue
            rows.append({"doc_id": f"{lp}:{i + 1}", "lp": lp, "seg_id": i + 1, "system": system,
                         "is_human": system == REF_SYSTEM, "ref_system": REF_SYSTEM, "src": src, "ref_summ": ref,
                         "ref_summs": [ref], "sys_summ": outputs[system][i], "scores": {DIMENSION: scores[system][i]}})
    return rows


def convert(fetched: Sequence, out: Path) -> None:
    """Write ``wmt23_da_sqm.jsonl.gz`` (21,281 rows) from the verified files of JUDGE-BENCH's WMT23 folder."""
    prefix = f"{FOLDER}/"
    files = {str(PurePosixPath(f.source.path).relative_to(FOLDER)): f.path for f in fetched
             if f.source.path.startswith(prefix)}
    expected = {path for path, _, _ in _PINS}
    if set(files) != expected:
        missing, extra = sorted(expected - set(files)), sorted(set(files) - expected)
        raise ConversionError(f"expected the {len(expected)} files of {FOLDER}: missing {missing}, unexpected {extra}")
    rows = [row for lp in LANGUAGE_PAIRS for row in _pair(lp, files)]
    write_gzip(out, jsonl_bytes(rows), GZIP)
