"""Benchmark: importing and joining a 1,000,000-row score file (``meta-eval run --scores NAME=FILE``).

Run from the repository root (no data needed: the set and the file are synthetic):

    python bench/bench_import_scores.py [--rows 1000000] [--format jsonl|csv|tsv]

Builds an in-memory judgment set of ``--rows`` rows (1,000 documents x 1,000 systems, one-word texts) and writes a
score file keyed by row id, in random order; then, in a fresh process, reads and checks the file
(:func:`meta_eval.scoring.imported.read_table`: parsing, numbers, repeated keys, SHA-256) and joins it to the set
(:func:`~meta_eval.scoring.imported.join_scores` and :func:`~meta_eval.scoring.imported.metric_scores`). Prints the
wall time of each step and the peak resident memory of the process before and after the import (the set itself
costs memory too, reported apart).
"""
from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _make_set(rows: int):
    from meta_eval.judgments.base import Judgment, JudgmentSet

    n_sys = 1000
    data = [Judgment(id=f"r{i}", doc_id=f"d{i // n_sys}", system=f"s{i % n_sys}", candidate="x", references=("y",),
                     scores={"human": float(i % 7)}) for i in range(rows)]
    return JudgmentSet("bench", data, ("human",), "human")


def write_file(path: Path, rows: int, fmt: str) -> None:
    import numpy as np

    rng = np.random.default_rng(0)
    order, values = rng.permutation(rows), rng.random(rows)
    with open(path, "w", encoding="utf-8") as fh:
        if fmt == "jsonl":
            for i in order:
                fh.write(json.dumps({"id": f"r{i}", "score": float(values[i])}) + "\n")
        else:
            sep = "," if fmt == "csv" else "\t"
            fh.write(f"id{sep}score\n")
            for i in order:
                fh.write(f"r{i}{sep}{float(values[i])!r}\n")


def measure(path: str, rows: int) -> None:
    """In this process: build the set, then read and join the file, timing each step."""
    from meta_eval.scoring.imported import join_scores, metric_scores, parse_spec, read_table

    start = time.perf_counter()
    jset = _make_set(rows)
    built, peak_set = time.perf_counter() - start, _peak_mib()
    start = time.perf_counter()
    table = read_table(parse_spec(f"mine={path}"))
    read = time.perf_counter() - start
    start = time.perf_counter()
    imported, keep = join_scores([table], jset, list(range(len(jset))))
    ms = metric_scores(imported[0], keep, jset)
    joined = time.perf_counter() - start
    assert len(ms.scores["mine"]) == rows
    print(json.dumps({"rows": rows, "set_build_s": round(built, 2), "read_check_s": round(read, 2),
                      "join_s": round(joined, 2), "peak_rss_after_set_mib": round(peak_set),
                      "peak_rss_after_import_mib": round(_peak_mib())}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--format", choices=("jsonl", "csv", "tsv"), default="jsonl")
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        measure(args.measure, args.rows)
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"scores.{args.format}"
        start = time.perf_counter()
        write_file(path, args.rows, args.format)
        size = path.stat().st_size / 2 ** 20
        print(f"wrote {args.rows:,} rows ({size:.1f} MiB) in {time.perf_counter() - start:.1f} s", flush=True)
        out = subprocess.run([sys.executable, __file__, "--rows", str(args.rows), "--measure", str(path)],
                             capture_output=True, text=True, check=True)
        result = json.loads(out.stdout.strip().splitlines()[-1])
        result["file_mib"] = round(size, 1)
        result["format"] = args.format
        print(json.dumps(result))


if __name__ == "__main__":
    main()
