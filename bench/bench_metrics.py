"""Per-metric throughput on the 2,085 chaganty pairs, cold and warm, and MoverScore against the reference algorithm.

Run from the repository root (needs ../shared/judgments, the neural extra and the MiniLM package):

    python bench/bench_metrics.py [--metrics rouge,sms,...] [--reference-pairs 256] [--numeric portable|native]

- cold: a fresh process per metric with an empty cache (model loading included, reported separately);
- warm: the same command again with the cache filled (only the lookups);
- Python API batch overhead: one loaded metric object scoring batches of 32 pairs (the RL-reward use case);
- MoverScore vs the reference algorithm: ``moverscore_v2`` (Zhao et al. 2019, PyPI moverscore 1.0.3) re-implemented
  below for timing only (same model, same thread count): one forward pass per batch of references and of hypotheses
  padded to the batch maximum, IDF-weighted, sub-words and punctuation zeroed, both texts' embeddings concatenated,
  a full (n1+n2) x (n1+n2) distance matrix and a transport *plan* (``ot.emd``) per pair. Scores agree with
  ``metrics.moverscore`` to ~1e-7 (tests/test_moverscore.py checks the definition on hand-made inputs).
"""
from __future__ import annotations

import argparse
import os
import string
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from math import log
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DEFAULT = "rouge,wms,sms,s+wms,wms-ctx,sms-ctx,s+wms-ctx,moverscore"


def _run(args: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run([str(Path(sys.executable).with_name("meta-eval")), *args], check=True, capture_output=True)
    return time.perf_counter() - start


def reference_moverscore(refs: list[str], hyps: list[str], batch_size: int = 256) -> tuple[list[float], float]:
    """The moverscore_v2 algorithm with the offline MiniLM (for timing); returns (scores, seconds)."""
    import numpy as np
    import ot
    import torch
    from transformers import AutoModel, AutoTokenizer

    from meta_eval.metrics import numeric
    from meta_eval.metrics.encoder import _minilm_path

    numeric.apply_to_torch()  # the same numeric mode as meta-eval's side (oneDNN off in the portable mode)
    torch.set_num_threads(int(os.environ.get("META_EVAL_TORCH_THREADS", 1)))
    path = str(_minilm_path())
    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModel.from_pretrained(path, output_hidden_states=True).eval()
    pieces = lambda text: ["[CLS]", *tok.tokenize(text)[:510], "[SEP]"]

    def idf(texts):
        counts = Counter()
        for text in texts:
            counts.update(set(tok.convert_tokens_to_ids(pieces(text))))
        table = defaultdict(lambda: log(len(texts) + 1))
        table.update({k: log((len(texts) + 1) / (v + 1)) for k, v in counts.items()})
        return table

    def embed(texts, weights):
        toks = [pieces(t) for t in texts]
        ids = [tok.convert_tokens_to_ids(t) for t in toks]
        width = max(map(len, ids))
        x = torch.zeros(len(ids), width, dtype=torch.long)
        mask, w = torch.zeros_like(x), torch.zeros(len(ids), width)
        for i, row in enumerate(ids):
            x[i, :len(row)], mask[i, :len(row)] = torch.tensor(row), 1
            w[i, :len(row)] = torch.tensor([weights[j] for j in row])
        with torch.no_grad():
            states = model(input_ids=x, attention_mask=mask).hidden_states[-1]
        return states, w, toks

    start = time.perf_counter()
    idf_r, idf_h, punct, out = idf(refs), idf(hyps), set(string.punctuation), []
    for s in range(0, len(refs), batch_size):
        (re_, rw, rt), (he, hw, ht) = embed(refs[s:s + batch_size], idf_r), embed(hyps[s:s + batch_size], idf_h)
        for i in range(len(rt)):
            for states, w, toks in ((re_, rw, rt), (he, hw, ht)):
                drop = [k for k, t in enumerate(toks[i]) if "##" in t or t in punct]
                states[i, drop], w[i, drop] = 0, 0
        raw = torch.cat([re_, he], 1)
        raw = raw / (raw.norm(dim=-1, keepdim=True) + 1e-30)
        dist = torch.cdist(raw, raw).double().numpy()
        for i in range(len(rt)):
            a, b = np.zeros(raw.shape[1]), np.zeros(raw.shape[1])
            a[:rw.shape[1]], b[rw.shape[1]:] = rw[i].numpy(), hw[i].numpy()
            if a.sum() == 0 or b.sum() == 0:
                out.append(1.0)
                continue
            plan = ot.emd(a / a.sum(), b / b.sum(), dist[i])
            out.append(1.0 - float((plan * dist[i]).sum()))
    return out, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=str(ROOT.parent / "shared" / "judgments"))
    parser.add_argument("--metrics", default=DEFAULT)
    parser.add_argument("--reference-pairs", type=int, default=256)
    parser.add_argument("--numeric", choices=("portable", "native"),
                        help="numeric mode of the neural metrics and the reference (metrics/numeric.py) [default: "
                             "$META_EVAL_NUMERIC, else portable]")
    args = parser.parse_args()
    from meta_eval.metrics import numeric

    numeric.set_mode(args.numeric or numeric.current_mode())  # before torch; the timed commands inherit it
    print(numeric.describe(), flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        print(f"{'metric':<12} {'cold s':>8} {'warm s':>8}  (meta-eval run --judgments chaganty --metrics M)")
        for metric in args.metrics.split(","):
            cmd = ["run", "--judgments", "chaganty", "--data-dir", args.data_dir, "--metrics", metric,
                   "--cache", os.path.join(tmp, f"{metric}.sqlite")]
            if metric == "moverscore":
                cmd += ["--option", "model=minilm"]  # the reference's distilbert is not available offline here
            cold, warm = _run(cmd), _run(cmd)
            print(f"{metric:<12} {cold:8.1f} {warm:8.1f}", flush=True)

    from meta_eval import judgments
    from meta_eval.metrics import create

    examples = judgments.load("chaganty", args.data_dir).examples()
    print("\nPython API: one loaded metric, batches of 32 pairs (after one warm-up batch)")
    for name, cfg in (("sms", {}), ("rouge", {}), ("sms-ctx", {}), ("moverscore", {"model": "minilm"})):
        metric = create(name, **cfg)
        metric.score(examples[:32])
        batch = examples[32:64]
        start = time.perf_counter()
        metric.score(batch)
        print(f"  {name:<12} {1000 * (time.perf_counter() - start) / len(batch):7.2f} ms/pair", flush=True)

    n = args.reference_pairs
    sub = examples[:n]
    ref, ref_seconds = reference_moverscore([e.references[0] for e in sub], [e.candidate for e in sub])
    ours = create("moverscore", model="minilm")  # idf=set: IDF over `sub`, as the reference
    ours.score(sub[:2])  # load the model outside the timing, as the reference loads it outside too
    start = time.perf_counter()
    mine = ours.score(sub)["moverscore[minilm]"]
    seconds = time.perf_counter() - start
    diff = max(abs(a - b) for a, b in zip(ref, mine))
    print(f"\nMoverScore on {n} pairs, MiniLM, idf=set: reference algorithm {1000 * ref_seconds / n:.1f} ms/pair, "
          f"meta-eval {1000 * seconds / n:.1f} ms/pair ({ref_seconds / seconds:.1f}x); max |diff| {diff:.1e}")


if __name__ == "__main__":
    main()
