"""The driver's own work in a GPU run of the neural metrics, measured on a CPU (issue #37), for sessions without a GPU.

On an H200 the forward passes of ``-m all`` on chaganty take about 0.3 s of MiniLM; the rest of the neural metrics'
time is the driver's: importing transformers, tokenizing, copying states, pooling, IDF weights and the transports on
the CPU. This runs the same code paths on a CPU: a **tiny random BERT** (4 layers of 64, :data:`bench_gpu.TINY`, with
MiniLM's tokenizer) whose forward passes cost little, and the **padded batches of the GPU path forced**
(``Encoder._padded`` and ``BertScore._padded``, the switches the tests use), so what is timed is mostly what a GPU
run spends around the GPU. It is a proxy, not a GPU measurement: on 2 cores the transports' threads and the padded
passes (widths up to 512 pieces) cost more than on a GPU machine's 16 cores and GPU, and CUDA's start-up and
transfers are not there. Compare two versions of the code with it, on the same machine, one after the other::

    python bench/gpu_proxy.py [--metrics bertscore,moverscore,wms-ctx,sms-ctx,s+wms-ctx] [--rows N] [--profile 30]

Prints the seconds of :func:`meta_eval.score` (model loading included, imports of torch and the data before the
clock), each metric's clock, the run's steps on the driver's clock (:mod:`timeline`), and with ``--profile N`` the
driver's N costliest functions by own and cumulative time. ``--micro``: a one-layer BERT of 16 (:data:`MICRO`).
``--cold``: transformers' model code is first imported inside the clock, as in a fresh ``meta-eval run`` and in
bench_gpu's ``-m all`` jobs (the model then comes from an earlier call's ``--work``); without it, making the model
imports it before the clock.
Needs ``$META_EVAL_DATA`` (chaganty) and MiniLM's tokenizer files (``.gpu/minilm-tok``, :mod:`bench_gpu`).
"""
from __future__ import annotations

import argparse
import io
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import meta_eval.metrics  # noqa: E402,F401  (the numeric mode, before torch computes)
import bench_gpu  # noqa: E402
import timeline  # noqa: E402

NEURAL = "bertscore,moverscore,wms-ctx,sms-ctx,s+wms-ctx"
#: ``--micro``: one layer of 16 (one head): on 2 cores the TINY model's padded passes (widths up to 512 pieces) are
#: most of the proxy's time, where an H200 spends 0.3 s on MiniLM's
MICRO = dict(hidden_size=16, num_hidden_layers=1, num_attention_heads=1, intermediate_size=32,
             max_position_embeddings=512, layer=1)


def force_padded() -> None:
    """Make every encoder and BERTScore take the GPU's padded path on the CPU."""
    import functools

    from meta_eval.metrics import bertscore, encoder

    for cls in (encoder.Encoder, bertscore.BertScore):
        init = cls.__init__

        @functools.wraps(init)  # the signature too: the registry reads the options a metric takes from it
        def padded_init(self, *args, _init=init, **kwargs):
            _init(self, *args, **kwargs)
            self._padded = True

        cls.__init__ = padded_init


def main(argv: list[str] | None = None) -> float:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--metrics", default=NEURAL)
    parser.add_argument("--rows", type=int, default=0, help="the first N chaganty rows (0: all 2,085)")
    parser.add_argument("--profile", type=int, default=0, metavar="N")
    parser.add_argument("--tokenizer", help="MiniLM's tokenizer files (default .gpu/minilm-tok)")
    parser.add_argument("--work", type=Path, help="folder for the tiny model (default: a temporary one)")
    parser.add_argument("--micro", action="store_true",
                        help="a still smaller BERT (1 layer of 16, :data:`MICRO`): the forward passes, an H200's "
                             "0.3 s of -m all, then cost little on the CPU too")
    parser.add_argument("--cold", action="store_true",
                        help="transformers' model code imported inside the clock, as in a fresh `meta-eval run` "
                             "(needs --work with the model of an earlier call, which made it)")
    args = parser.parse_args(argv)
    import torch  # noqa: F401  (before the clock, as in bench_gpu)

    import meta_eval
    from meta_eval import judgments

    work = args.work or Path(tempfile.mkdtemp(prefix="gpu-proxy-"))
    name, shape = ("micro", MICRO) if args.micro else ("tiny", bench_gpu.TINY)
    model = work / name
    if args.cold and not (model / "model.safetensors").is_file():
        parser.error(f"--cold needs the model an earlier call made in --work ({model}): run once without --cold")
    if not args.cold:
        bench_gpu.random_model(model, bench_gpu.tokenizer_folder(args.tokenizer), shape)
    rows = list(judgments.load("chaganty", os.environ.get("META_EVAL_DATA")).examples())
    rows = rows[:args.rows] if args.rows else rows
    force_padded()
    profiler = None
    if args.profile:
        import cProfile

        profiler = cProfile.Profile()
    start = time.perf_counter()
    if profiler is not None:
        profiler.enable()
    with timeline.traced() as steps:
        result = meta_eval.score(args.metrics, examples=rows, options=[f"model={model}"], no_cache=True,
                                 progress=False, batch_size=256)
    if profiler is not None:
        profiler.disable()
    seconds = time.perf_counter() - start
    print(f"{len(rows)} rows, {args.metrics}: {seconds:.2f} s ({name} random BERT, padded paths forced, on the CPU)")
    print({ms.metric: round(ms.seconds + sum(ms.shared.values()), 3) for ms in result.scores})
    if result.skipped or result.failed:
        print("skipped:", dict(result.skipped), "failed:", {n: r[:200] for n, r in result.failed})
    print("timeline (start, end, seconds from the call):", *timeline.lines(steps, seconds), sep="\n")
    if profiler is not None:
        import pstats

        for key in ("tottime", "cumulative"):
            out = io.StringIO()
            pstats.Stats(profiler, stream=out).sort_stats(key).print_stats(args.profile)
            print(out.getvalue())
    return seconds


if __name__ == "__main__":
    main()
