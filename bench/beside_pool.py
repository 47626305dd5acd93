"""The pool beside a GPU run, emulated with a given worker count on any machine (issue #37, session 32).

A GPU run hands the CPU metrics' batches to the local engine's pool while the driver scores the neural metrics
(``meta_eval.scoring.runner.score_all``'s ``beside``). This runs that layout on the CPU with ``LocalEngine(N)``
built directly (so ``N`` may exceed this machine's cores, as on a 16-core GPU machine) and reports what the pool
cost: how many pool processes there were at most, the CPU time of the driver's children (the pool's, and
multiprocessing's resource tracker's), the pool's memory summed at most, and each metric's seconds::

    python bench/beside_pool.py --workers 16 [--metrics bleu,chrf,rouge,wms-ctx] [--model DIR] [--rows N] \
        [--beside-per-process K]

``--model``: the neural metrics' model, a folder or a name such as ``minilm`` (default: ``micro`` in ``--work``,
made by ``bench/gpu_proxy.py --micro --work W``; the padded GPU paths are forced as there). On a machine with fewer
cores than ``N`` the processes also take the driver's cores: the wall times then say nothing of a machine with ``N``
cores; the processes, CPU time and memory do. Needs ``$META_EVAL_DATA`` (chaganty).
"""
from __future__ import annotations

import argparse
import os
import resource
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _pool_processes(parent: int) -> tuple[int, int]:
    """The pool processes of ``parent`` (its children started by multiprocessing's ``spawn``; not its resource
    tracker, nor a passing helper such as ``ldconfig``) and their resident memory summed (kB), from /proc."""
    count = total = 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            status = Path(f"/proc/{pid}/status").read_text()
            command = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if f"PPid:\t{parent}\n" in status and "VmRSS:" in status and b"multiprocessing.spawn" in command:
            count += 1
            total += int(status.split("VmRSS:")[1].split()[0])
    return count, total


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=16, help="LocalEngine(N): the driver and N - 1 pool processes")
    parser.add_argument("--metrics", default="bleu,chrf,rouge,wms-ctx")
    parser.add_argument("--work", type=Path, default=Path("/tmp/gpu-proxy-work"), help="bench/gpu_proxy.py's --work")
    parser.add_argument("--model", help="the neural metrics' model, a folder or a name (default: WORK/micro)")
    parser.add_argument("--rows", type=int, default=0, help="the first N chaganty rows (0: all 2,085)")
    parser.add_argument("--beside-per-process", type=int, metavar="K",
                        help="one pool process per K batches (default meta-eval's, 8; 1: the pool before session 32)")
    args = parser.parse_args(argv)
    sys.path[:0] = [str(ROOT), str(ROOT / "bench")]
    os.environ.setdefault("META_EVAL_BESIDE", "on")  # the layout of a GPU run, on the CPU
    import meta_eval
    from meta_eval import judgments
    from meta_eval.scoring import engines
    from meta_eval.scoring.engines import LocalEngine

    import gpu_proxy

    if args.beside_per_process:
        engines.BESIDE_BATCHES_PER_PROCESS = args.beside_per_process
    model = args.model or args.work / "micro"
    rows = list(judgments.load("chaganty", os.environ.get("META_EVAL_DATA")).examples())
    rows = rows[:args.rows] if args.rows else rows
    gpu_proxy.force_padded()
    peak = {"processes": 0, "kb": 0}
    stop = threading.Event()

    def sample() -> None:
        while not stop.wait(0.05):
            count, kb = _pool_processes(os.getpid())
            peak["processes"], peak["kb"] = max(peak["processes"], count), max(peak["kb"], kb)

    watcher = threading.Thread(target=sample, daemon=True)
    watcher.start()
    start = time.perf_counter()
    with LocalEngine(args.workers) as engine:
        result = meta_eval.score(args.metrics, examples=rows, options=[f"model={model}"], no_cache=True,
                                 progress=False, batch_size=256, engine=engine)
    wall = time.perf_counter() - start
    stop.set()
    watcher.join()
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    report = {"workers": args.workers, "beside_per_process": engines.BESIDE_BATCHES_PER_PROCESS,
              "wall_s": round(wall, 2), "pool_processes_at_most": peak["processes"],
              "children_cpu_s": round(used.ru_utime + used.ru_stime, 1),
              "pool_memory_summed_at_most_mb": round(peak["kb"] / 1024),
              "metrics_s": {ms.metric: round(ms.seconds, 2) for ms in result.scores},
              "failed": dict(result.failed)}
    print(report)
    return report


if __name__ == "__main__":
    main()
