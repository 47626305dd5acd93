"""Where BERTScore's GPU time goes (issue #37): loading, tokenizing, encoding, IDF weights, greedy matching, and the
padding of the token-budget passes, in one process, on the 21,281 wmt23 pairs ``bench/bench_gpu.py`` scores.

Usage (from the repository root, on a GPU machine; ``MODEL``: a model folder such as ``bench_gpu.py --work W``'s
``W/roberta-large-shape``)::

    python bench/gpu_phases.py DATA_DIR MODEL fp32,bf16 [MAX_TOKENS]

Environment: ``DEV`` (default ``cuda:0``; ``cpu`` for a smoke run), ``LAYER`` (default 17), ``ROWS`` (the first N
rows only). Prints one JSON line per dtype. Not a test: nothing is asserted. Measured numbers: docs/engines.md.
"""
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main(data: str, model_dir: str, dtypes: list[str], budget: int | None) -> None:
    import torch

    import meta_eval.metrics.bertscore as B
    from meta_eval import judgments
    from meta_eval.metrics import create
    from meta_eval.metrics.device import padded_batches

    device = os.environ.get("DEV", "cuda:0")
    rows = list(judgments.load("wmt23", data, subset="en-de+human,zh-en+human").examples())
    if os.environ.get("ROWS"):
        rows = rows[:int(os.environ["ROWS"])]
    pairs = [(r, ex.candidate) for ex in rows for r in ex.references if ex.candidate.strip() and r.strip()]
    texts = list(dict.fromkeys(t for p in pairs for t in p))
    sync = torch.cuda.synchronize if device != "cpu" else (lambda: None)
    for dtype in dtypes:
        out = {"dtype": dtype, "rows": len(rows), "pairs": len(pairs), "texts": len(texts)}
        start = time.perf_counter()
        metric = create("bertscore", model=model_dir, layer=int(os.environ.get("LAYER", 17)), device=device,
                        dtype=dtype, **({"max_tokens": budget} if budget else {}))
        metric._padded = True  # the GPU path (also on the CPU, for a smoke run)
        tokenizer, model = B._load(str(metric._folder), metric.layer, metric.fast, False, metric.device)
        sync()
        out["load_s"] = time.perf_counter() - start
        start = time.perf_counter()
        ids = B._sent_ids(tokenizer, texts)
        out["tokenize_s"] = time.perf_counter() - start
        lengths = [len(i) for i in ids]
        batches = padded_batches(lengths, metric.max_tokens)
        out.update(pieces=sum(lengths), passes=len(batches), max_len=max(lengths),
                   padded_pieces=sum(max(lengths[i] for i in b) * len(b) for b in batches))
        start = time.perf_counter()
        states = metric._gpu_embeddings(texts, tokenizer, model, 1)  # tokenizes again: subtract tokenize_s
        sync()
        out["encode_s_incl_tokenize"] = time.perf_counter() - start
        start = time.perf_counter()
        weights = metric._weights(tokenizer, rows)
        idf = {t: torch.tensor([weights[i] for i in states[t][0]], dtype=torch.float) for t in texts}
        out["idf_s"] = time.perf_counter() - start
        start = time.perf_counter()
        B._gpu_pair_scores(pairs, states, idf, metric.device)
        sync()
        out["match_s"] = time.perf_counter() - start
        print(json.dumps({k: round(v, 3) if isinstance(v, float) else v for k, v in out.items()}), flush=True)
        B._states.clear()
        del states


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3].split(","), int(sys.argv[4]) if len(sys.argv) > 4 else None)
