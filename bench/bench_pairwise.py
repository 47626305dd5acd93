"""Benchmark of the WMT statistics (acc-t, pairwise accuracy, SPA) with 1,000 permutations for 10 metrics.

Run from the repository root (needs ../shared/judgments or --data-dir):

    python bench/bench_pairwise.py [--data-dir ../shared/judgments] [--n 1000] [--sets summeval,wmt21-zhen]

Ten synthetic metrics, human score + Gaussian noise of 10 sizes (0.1 to 3 human standard deviations), sit on the
real (item x system) grids of

- ``summeval``: SummEval relevance, 100 documents x 16 systems (the judgments loader);
- ``wmt21-zhen`` / ``wmt21-ende``: WMT21 TED MQM, 529 segments x 15 (zh-en) or 14 (en-de) systems, the largest set in
  ../shared/judgments (7,935 / 7,406 rows; read straight from ``wmt21-mqm-ted/wmt21_mqm_ted.jsonl.gz``: doc_id,
  system and ``scores.mqm`` only, since only the human grid matters for the timing).

For each it times, with ``--n`` permutations / resamples and seed 0:

- acc-t (tie calibration) of the 10 metrics at the system level, grouped by item (summary) and without grouping
  (global); its BOOT-BOTH interval; the 10 x 10 p-value matrix of the pair-swap test (PairwisePermutationSigDiff);
- pairwise accuracy at the system level and its cell-swap (PERM-BOTH) p-value matrix;
- SPA of the 10 metrics (K = n permutations per system pair), its document bootstrap interval and WMT24's test of
  the best metric against each of the other 9.

Pin to one core with ``taskset -c 0`` to measure single-core speed.
"""
from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def timed(fn):
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def summeval_grid(data_dir: Path) -> np.ndarray:
    from meta_eval import judgments
    from meta_eval.matrix import judgment_matrices

    jset = judgments.load("summeval", data_dir)
    Z, _ = judgment_matrices(jset, "relevance", [])
    return Z


def wmt21_grid(data_dir: Path, lp: str) -> np.ndarray:
    from meta_eval.matrix import to_matrix

    docs, systems, values = [], [], []
    with gzip.open(data_dir / "wmt21-mqm-ted" / "wmt21_mqm_ted.jsonl.gz", "rt", encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            if rec["lp"] == lp:
                docs.append(rec["doc_id"])
                systems.append(rec["system"])
                values.append(rec["scores"]["mqm"])
    Z, _, _ = to_matrix(np.array(values, dtype=float), docs, systems)
    return Z


def metrics_on(Z: np.ndarray, n_metrics: int = 10, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    sd = np.nanstd(Z)
    noise = np.linspace(0.1, 3.0, n_metrics)[:, None, None] * sd * rng.normal(size=(n_metrics, *Z.shape))
    return np.where(np.isnan(Z), np.nan, Z[None] + noise)


def bench(name: str, Z: np.ndarray, n: int) -> list[tuple[str, float, str]]:
    from meta_eval.stats import pairwise, spa

    X = metrics_on(Z)
    rows = []
    for level in ("system", "summary", "global"):
        t, est = timed(lambda: pairwise.tie_calibration(X, Z, level))
        rows.append((f"acc-t value, {level}", t, f"best {np.nanmax(est.value):.3f}"))
    for level in ("system", "summary"):
        t, ci = timed(lambda: pairwise.bootstrap_ci(X, Z, level, "acc-t", n_resamples=n, seed=0))
        rows.append((f"acc-t BOOT-BOTH interval, {level}", t, f"{n} resamples"))
        t, P = timed(lambda: pairwise.pairwise_permutation_pvalues(X, Z, level, "acc-t", n, 0, "pairs"))
        rows.append((f"acc-t p-value matrix (pair swap), {level}", t, "45 pairs"))
    t, P = timed(lambda: pairwise.pairwise_permutation_pvalues(X, Z, "system", "accuracy", n, 0, "both"))
    rows.append(("accuracy p-value matrix (PERM-BOTH), system", t, "45 pairs"))
    t, res = timed(lambda: spa.soft_pairwise_accuracy(X, Z, n, 0))
    rows.append(("SPA value", t, f"best {np.max(res.spa):.3f}, {res.n_pairs} system pairs, K={n}"))
    t, ci = timed(lambda: spa.spa_bootstrap_ci(X, Z, n, n, seed=0))
    rows.append(("SPA document-bootstrap interval", t, f"{n} resamples"))
    best = int(np.argmax(res.spa))
    t, _ = timed(lambda: [spa.spa_permutation_test(X[best], X[m], Z, n, n, 0) for m in range(10) if m != best])
    rows.append(("SPA test, best vs 9 others (WMT24)", t, f"{n} resamples each"))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=ROOT.parent / "shared" / "judgments")
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--sets", default="summeval,wmt21-zhen")
    args = parser.parse_args()
    grids = {"summeval": lambda: summeval_grid(args.data_dir), "wmt21-zhen": lambda: wmt21_grid(args.data_dir, "zh-en"),
             "wmt21-ende": lambda: wmt21_grid(args.data_dir, "en-de")}
    for name in [s.strip() for s in args.sets.split(",") if s.strip()]:
        if name not in grids:
            raise SystemExit(f"unknown set {name!r}; use {', '.join(grids)}")
        Z = grids[name]()
        print(f"\n{name}: {Z.shape[0]} items x {Z.shape[1]} systems, {int((~np.isnan(Z)).sum())} cells, "
              f"10 metrics, n = {args.n}")
        total = 0.0
        for what, seconds, note in bench(name, Z, args.n):
            total += seconds
            print(f"  {what:<45} {seconds:8.2f} s   {note}")
        print(f"  {'total':<45} {total:8.2f} s")


if __name__ == "__main__":
    main()
