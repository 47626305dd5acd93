"""Seconds of summary-level resampling on a 50,000-row set, in one process and over the engines (issue 12).

Run from the repository root:

    python bench/bench_resampling.py [--docs 5000] [--systems 10] [--metrics 5] [--resamples 1000]
                                     [--engines none,local,ray] [--workers 2]

The data are generated (``numpy.random.default_rng(0)``): human scores for ``--docs`` documents x ``--systems``
systems and ``--metrics`` noisy copies of them. Timed, as ``meta-eval run --level summary`` computes them: the
bootstrap samples of the summary-level Spearman correlation (:func:`meta_eval.stats.samples`) and the
permutation p-value matrix of every pair of metrics (:func:`meta_eval.stats.pvalue_matrix`), each once per
engine, in this process (``none``) or spread with :func:`meta_eval.scoring.chunks.spread` over a local pool or a local
Ray
instance of ``--workers`` processes. Engine start-up is inside the clock. Every engine's numbers are checked to be
bit-identical to the in-process ones (printed as ``same bits``).

Not a test: the bit-identity is tested in ``tests/test_resampling_engines.py``.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    import numpy as np

    from meta_eval import stats as statistics
    from meta_eval.scoring.chunks import spread
    from meta_eval.scoring.engines import make_engine

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=5000)
    parser.add_argument("--systems", type=int, default=10)
    parser.add_argument("--metrics", type=int, default=5)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--engines", default="none,local,ray")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(args.docs, args.systems)) + np.linspace(0, 1, args.systems)
    X = np.stack([Z + (1 + k) * rng.normal(size=Z.shape) for k in range(args.metrics)])
    print(f"{args.docs * args.systems} rows ({args.docs} documents x {args.systems} systems), {args.metrics} metrics, "
          f"{args.resamples} resamples; load average {os.getloadavg()}", flush=True)
    reference = None
    for name in args.engines.split(","):
        engine = None if name == "none" else make_engine(name, args.workers)
        try:
            with spread(engine):
                started = time.perf_counter()
                samples = statistics.samples(X, Z, "spearman", "summary", n_resamples=args.resamples, seed=0)
                boot = time.perf_counter() - started
                started = time.perf_counter()
                P = statistics.pvalue_matrix(X, Z, "spearman", "summary", n_resamples=args.resamples, seed=0)
                perm = time.perf_counter() - started
        finally:
            if engine is not None:
                engine.close()
        bits = (samples.tobytes(), np.nan_to_num(P, nan=-1.0).tobytes())
        reference = reference or bits
        label = "one process" if name == "none" else f"{name} x{args.workers}"
        print(f"{label:>14}: bootstrap {boot:6.1f} s, permutation matrix {perm:6.1f} s, total {boot + perm:6.1f} s, "
              f"same bits: {bits == reference}", flush=True)


if __name__ == "__main__":
    main()
