"""Benchmark of the resampling statistics (meta_eval.stats.resampling) on the real SummEval grid: 100 documents x 16
systems.

Run from the repository root (needs ../shared/judgments or --data-dir):

    python bench/bench_stats.py [--data-dir ../shared/judgments] [--n-resamples 1000] [--kinds pearson,spearman,kendall]
                                [--all-pairs]

Ten synthetic metrics, human relevance + Gaussian noise of 10 sizes (0.1 to 3 human standard deviations), sit on the
real SummEval (document x system) grid. For each coefficient and level it times:

- bootstrap: BOOT-BOTH confidence intervals of all 10 metrics from one shared set of n resamples;
- permutation: PERM-BOTH tests of the best metric against each of the 9 others, n permutations each
  (``--all-pairs``: the full 10 x 10 p-value matrix, 45 pairs, as significance clusters need).

Pin to one core with `taskset -c 0` to measure single-core speed.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def timed(fn):
    """(value, wall seconds, CPU seconds of this process): on a shared machine the CPU time is the steadier one."""
    wall, cpu = time.perf_counter(), time.process_time()
    value = fn()
    return value, time.perf_counter() - wall, time.process_time() - cpu


def fmt(wall: float, cpu: float) -> str:
    return f"{wall:6.2f} s ({cpu:5.2f} cpu)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=str(ROOT.parent / "shared" / "judgments"))
    parser.add_argument("--n-resamples", type=int, default=1000)
    parser.add_argument("--kinds", default="pearson,spearman,kendall")
    parser.add_argument("--all-pairs", action="store_true", help="also time the 45-pair permutation p-value matrix")
    args = parser.parse_args()

    from meta_eval import judgments
    from meta_eval.stats.clusters import significance_clusters
    from meta_eval.matrix import to_matrix
    from meta_eval.stats.resampling import LEVELS, bootstrap_ci, level_correlation, pairwise_permutation_pvalues, \
        permutation_test

    jset = judgments.load("summeval", args.data_dir)
    docs, systems = [r.doc_id for r in jset.rows], [r.system for r in jset.rows]
    Z, _, _ = to_matrix(jset.human("relevance"), docs, systems)
    rng = np.random.default_rng(0)
    noise = np.linspace(0.1, 3.0, 10) * np.nanstd(Z)
    X = np.stack([Z + s * rng.normal(size=Z.shape) for s in noise])
    n = args.n_resamples
    print(f"SummEval relevance: {Z.shape[0]} documents x {Z.shape[1]} systems; 10 metrics; {n} resamples; "
          f"{'all 45 pairs' if args.all_pairs else '9 pairs (best vs each other)'} for the permutation tests")
    header = f"{'kind':<9} {'level':<8} {'bootstrap 10 metrics':>22} {'permutation 9 pairs':>22}"
    print(header + (f" {'permutation 45 pairs':>22}" if args.all_pairs else ""))
    total = np.zeros(2)
    for kind in args.kinds.split(","):
        for level in LEVELS:
            ci, *t_boot = timed(lambda: bootstrap_ci(X, Z, level, kind, "both", n, seed=0))
            corrs = ci.point
            best = int(np.argmax(corrs))
            _, *t_perm = timed(lambda: [permutation_test(X[best], X[m], Z, level, kind, n, seed=m)
                                        for m in range(10) if m != best])
            line = f"{kind:<9} {level:<8} {fmt(*t_boot):>22} {fmt(*t_perm):>22}"
            total += np.add(t_boot, t_perm)
            if args.all_pairs:
                P, *t_all = timed(lambda: pairwise_permutation_pvalues(X, Z, level, kind, n, seed=0))
                ranks, _ = significance_clusters([f"m{i}" for i in range(10)], corrs, P)
                line += f" {fmt(*t_all):>22}  ranks {[r for _, r in ranks]}"
                total += t_all
            print(line, flush=True)
    print(f"{'total':<18} {fmt(*total):>22}")
    r = level_correlation(X, Z, "summary", "spearman")
    print("summary-level Spearman of the 10 metrics:", np.round(r, 3).tolist())


if __name__ == "__main__":
    main()
