"""The numeric modes (metrics/numeric.py): what the portable mode costs against native, and a fingerprint of the bits.

Run from the repository root (needs ../shared/judgments or ``--data-dir``, the neural extra and the MiniLM package):

    python bench/bench_numeric.py [--texts 600] [--repeat 3]
    python bench/bench_numeric.py --fingerprint            # one line: this process's mode, CPU and bits

- Speed: MiniLM's states of the first ``--texts`` distinct chaganty summaries (``Encoder.embed``, every core as
  ``meta-eval run`` grants them), in a fresh process per mode and repeat (model loading outside the clock); the best
  time per mode and the ratio. Also the SHA-256 of all the states, which is the same in every repeat of a mode.
- Fingerprint: a MiniLM-shaped stack of three ``torch.nn.TransformerEncoderLayer`` (384 wide, 12 heads, GELU) with
  fixed random weights over four fixed batches of 1 to 130 tokens, plus a plain product: the SHA-256 of every
  output. It needs torch alone (no model, no data), so it can be run on any machine, or under an emulated CPU, and
  compared: in the portable mode it must print the same digest everywhere with the same torch. Measured: this
  machine (AVX-512) and ``qemu-x86_64 -cpu Haswell`` (an AVX2 CPU without AVX-512, emulated) printed the same digest
  in the portable mode; the native mode printed another one (README "Numeric mode").

Not a test: nothing is asserted.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def fingerprint() -> dict:
    """The mode, this CPU and the SHA-256 of the fixed transformer stack's outputs (see the module notes)."""
    from meta_eval import metrics  # noqa: F401  (applies the mode before torch computes)
    from meta_eval.metrics import numeric

    import torch

    numeric.apply_to_torch()
    torch.set_num_threads(1)
    g = torch.Generator().manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(384, 12, 1536, dropout=0.0, activation="gelu", batch_first=True)
    with torch.no_grad():
        for p in layer.parameters():
            p.copy_(torch.randn(p.shape, generator=g) * 0.05)
    layer.eval()
    h = hashlib.sha256()
    with torch.inference_mode():
        for n, length in ((1, 7), (3, 18), (2, 61), (1, 130)):
            x = torch.randn(n, length, 384, generator=g)
            for _ in range(3):
                x = layer(x)
            h.update(x.numpy().tobytes())
            h.update((x.reshape(-1, 384) @ x.reshape(-1, 384).T).numpy().tobytes())
    return {"ident": numeric.ident(), "cpu": numeric.cpu_vector_width(), "torch": torch.__version__,
            "effective": numeric.effective(), "sha256": h.hexdigest()}


def _encode(texts: int, data_dir: str) -> dict:
    """One timing in this process: MiniLM states of the first ``texts`` distinct chaganty summaries."""
    from meta_eval import judgments
    from meta_eval.metrics import numeric
    from meta_eval.scoring.engines import default_workers
    from meta_eval.metrics.encoder import load_encoder

    rows = judgments.load("chaganty", data_dir).examples()
    chosen = list(dict.fromkeys(ex.candidate for ex in rows))[:texts]
    encoder = load_encoder("minilm", threads=default_workers())
    encoder.embed(chosen[:4])  # the model is loaded and warm before the clock
    started = time.perf_counter()
    states = encoder.embed(chosen)
    seconds = time.perf_counter() - started
    h = hashlib.sha256()
    for st in states:
        h.update(st.hidden.tobytes())
    return {"ident": numeric.ident(), "seconds": seconds, "sha256": h.hexdigest()[:16], "texts": len(chosen)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=str(ROOT.parent / "shared" / "judgments"))
    parser.add_argument("--texts", type=int, default=600)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--fingerprint", action="store_true", help="print this process's fingerprint and stop")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.fingerprint:
        print(json.dumps(fingerprint()))
        return
    if args.one:
        print(json.dumps(_encode(args.one, args.data_dir)))
        return
    best: dict[str, dict] = {}
    for _ in range(args.repeat):
        for mode in ("portable", "native"):  # interleaved: both see the same load
            env = dict(os.environ, META_EVAL_NUMERIC=mode)
            done = subprocess.run([sys.executable, __file__, "--one", str(args.texts), "--data-dir", args.data_dir],
                                  env=env, capture_output=True, text=True, check=True)
            result = json.loads(done.stdout.strip().splitlines()[-1])
            if mode not in best or result["seconds"] < best[mode]["seconds"]:
                best[mode] = result
    from meta_eval.scoring.engines import default_workers

    print(f"MiniLM states of {best['portable']['texts']} chaganty summaries, {default_workers()} "
          f"forward passes at once, best of {args.repeat} fresh processes per mode:")
    for mode, result in best.items():
        print(f"  {mode:<9} {result['seconds']:6.2f} s  {result['ident']:<28} states sha256 {result['sha256']}")
    print(f"  portable / native: {best['portable']['seconds'] / best['native']['seconds']:.2f}x the time")


if __name__ == "__main__":
    main()
