"""Benchmark of the main job: the mover metrics and ROUGE on the 2,085 chaganty pairs, and the CLI cold and warm.

Run from the repository root (needs ../shared/judgments or --data-dir):

    python bench/bench_main.py [--data-dir ../shared/judgments] [--skip-cli] [--all]

Reports the wall times of `meta-eval run --judgments chaganty` with an empty cache (cold) and again (warm), each with
its peak resident memory (``--all``: also ``-m all``, cold), then one-process timings, split into one-off costs
(imports, loading GloVe) and per-set work (tokenizing each distinct text once, then one exact EMD per pair and metric).
Pin to one core with `taskset -c 0` to measure single-core speed.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def timed(label: str, fn):
    start = time.perf_counter()
    value = fn()
    print(f"{label:<48} {time.perf_counter() - start:8.3f} s", flush=True)
    return value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=str(ROOT.parent / "shared" / "judgments"))
    parser.add_argument("--skip-cli", action="store_true")
    parser.add_argument("--all", action="store_true", help="also time `-m all` (the neural metrics too), cold")
    args = parser.parse_args()

    if not args.skip_cli:
        _time_cli(args.data_dir, args.all)
    from meta_eval import judgments
    jset = timed("load chaganty (2,085 rows)", lambda: judgments.load("chaganty", args.data_dir))
    examples = jset.examples()
    texts = {t for ex in examples for t in (ex.candidate, *ex.references)}
    timed("import nltk tokenizers + POT + scipy", lambda: __import__("meta_eval.metrics.text") and __import__("ot")
          and __import__("scipy.spatial.distance"))
    from meta_eval.metrics import create
    from meta_eval.metrics.text import content_sentences
    from meta_eval.metrics.vectors import load_vectors
    timed("load GloVe 6B 50d (once per process)", load_vectors)
    content_sentences("Warm up the sentence splitter. Twice.")
    start = time.perf_counter()
    timed(f"tokenize {len(texts)} distinct texts", lambda: [content_sentences(t) for t in texts])
    for name in ("wms", "sms", "s+wms"):
        metric = create(name)
        timed(f"{name}: {len(examples)} pairs (EMD + bags)", lambda: metric.score(examples))
    total = time.perf_counter() - start
    print(f"{'WMS+SMS+S+WMS incl. tokenization':<48} {total:8.3f} s   (target < 3 s)")
    rouge = create("rouge")
    timed(f"rouge (rouge-score): {len(examples)} pairs", lambda: rouge.score(examples))


def _time_cli(data_dir: str, with_all: bool) -> None:
    """Wall time and peak resident memory of `meta-eval run --judgments chaganty` in a child process.

    Called before this process loads anything: a child's peak counts the pages it had when forked."""
    exe = Path(sys.executable).with_name("meta-eval")
    runs = [("", "cold (empty cache)", "target <= 30 s, < 1 GB"), ("", "warm (cached)", "")]
    if with_all:
        runs.append(("all", "-m all, cold", ""))
    with tempfile.TemporaryDirectory() as tmp:
        for choice, label, target in runs:
            cmd = [str(exe), "run", "--judgments", "chaganty", "--data-dir", data_dir,
                   "--cache", os.path.join(tmp, f"c{choice}.sqlite"), *(["-m", choice] if choice else [])]
            start = time.perf_counter()
            proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            _, status, usage = os.wait4(proc.pid, 0)  # the child's own peak resident memory
            proc.returncode = os.waitstatus_to_exitcode(status)
            if proc.returncode != 0:
                raise SystemExit(f"{' '.join(cmd)} exited with status {proc.returncode}")
            print(f"{'meta-eval run --judgments chaganty, ' + label:<48} {time.perf_counter() - start:8.3f} s"
                  f"   peak {usage.ru_maxrss / 1024 ** 2:.2f} GB{f'   ({target})' if target else ''}")


if __name__ == "__main__":
    main()
