"""How big each install of meta-eval is: the core, each extra, the test extra and everything (issue #39).

For each install (a pip requirement list, e.g. ``.`` or ``torch==2.13.0 .[neural]``) pip resolves what a fresh
environment would get (``pip install --dry-run --ignore-installed --report``, run from the repository root), the
wheels are fetched once into a folder (``pip download --no-deps``, with pip's own configuration: index, find-links,
constraints), and the table gives, per install, the number of distributions, the download size (the wheels' bytes)
and the installed size (the sum of the files' uncompressed sizes in the wheels, before byte-compilation: what
``site-packages`` holds, within a few percent). meta-eval itself is counted as 0.

    python bench/extras_sizes.py --wheels /tmp/wheels               # the table in docs/install.md
    python bench/extras_sizes.py --wheels /tmp/wheels core "test=.[test]"   # some installs only

A source distribution (no wheel) is counted by its download size in both columns and marked with ``*``.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from urllib.parse import unquote, urlparse

REPO = Path(__file__).resolve().parents[1]
CPU_TORCH = "torch==2.13.0"  # the CPU build .ci/run installs first (pip's find-links hold its wheel here)

#: name -> requirements, in the table's order; the torch-backed extras get the CPU torch first, as the docs say
INSTALLS = {
    "core": ["."],
    "test": [".[test]"],
    "sacrebleu": [".[sacrebleu]"],
    "llm": [".[llm]"],
    "plot": [".[plot]"],
    "coco": [".[coco]"],
    "rouge155": [".[rouge155]"],
    "spacy": [".[spacy]"],
    "ray": [".[ray]"],
    "docs": [".[docs]"],
    "neural (CPU torch)": [CPU_TORCH, ".[neural]"],
    "qa (CPU torch)": [CPU_TORCH, ".[neural,qa]"],
    "bertscore (CPU torch)": [CPU_TORCH, ".[bertscore]"],
    "all (CPU torch: .ci/run)": [CPU_TORCH, ".[all]"],
}


def resolve(requirements: list[str]) -> list[dict]:
    """pip's installation report for ``requirements`` in a fresh environment: one dict per distribution."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet",
                        "--report", str(report), *requirements], cwd=REPO, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return json.loads(report.read_text(encoding="utf-8"))["install"]


def local_file(item: dict, wheels: Path) -> Path | None:
    """The file of a distribution: a file:// URL as it is, else the one ``pip download`` put in ``wheels``."""
    url = item["download_info"]["url"]
    parsed = urlparse(url)
    if parsed.scheme == "file":
        path = Path(unquote(parsed.path))
        return path if path.is_file() else None  # a folder: the checkout itself
    name = Path(unquote(parsed.path)).name
    path = wheels / name
    if not path.is_file():
        meta = item["metadata"]
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", str(wheels),
                        f"{meta['name']}=={meta['version']}"], check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    return path if path.is_file() else None


def sizes(path: Path) -> tuple[int, int, bool]:
    """(download bytes, installed bytes, is a wheel)."""
    size = path.stat().st_size
    if path.suffix != ".whl":
        return size, size, False
    with zipfile.ZipFile(path) as whl:
        return size, sum(info.file_size for info in whl.infolist()), True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wheels", type=Path, required=True, help="folder for the fetched wheels (reused)")
    parser.add_argument("installs", nargs="*", help="NAME (from the built-in list) or NAME=REQ[,REQ...]")
    parser.add_argument("--json", type=Path, help="also write the table as JSON here")
    args = parser.parse_args()
    args.wheels.mkdir(parents=True, exist_ok=True)
    chosen = {}
    for item in args.installs or INSTALLS:
        name, _, reqs = item.partition("=")
        chosen[name] = reqs.split(",") if reqs else INSTALLS[name]
    rows = []
    print("| install | pip install | distributions | download | installed |\n|---|---|---:|---:|---:|")
    for name, reqs in chosen.items():
        down = inst = 0
        sdists = []
        items = resolve(reqs)
        for item in items:
            if item["metadata"]["name"] == "meta-eval":
                continue
            path = local_file(item, args.wheels)
            if path is None:
                raise SystemExit(f"{item['metadata']['name']}: no file at {item['download_info']['url']}")
            d, i, wheel = sizes(path)
            down, inst = down + d, inst + i
            if not wheel:
                sdists.append(item["metadata"]["name"])
        mark = "*" if sdists else ""
        rows.append({"install": name, "requirements": reqs, "distributions": len(items) - 1, "download": down,
                     "installed": inst, "sdists": sdists})
        print(f"| {name} | `{' '.join(reqs)}` | {len(items) - 1} | {down / 1e6:,.0f} MB{mark} | "
              f"{inst / 1e6:,.0f} MB{mark} |", flush=True)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    os.environ.setdefault("PIP_DISABLE_PIP_VERSION_CHECK", "1")
    main()
