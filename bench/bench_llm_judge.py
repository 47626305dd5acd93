"""Benchmark: llm-judge requests per second at concurrency 1, 8 and 32 (metric ``llm-judge``).

Run from the repository root (needs ``meta-eval[llm]``; no data: the rows are synthetic):

    python bench/bench_llm_judge.py [--rows 400] [--delay 0.05] [--concurrency 1,8,32]

By default it starts the test suite's chat-completions server (``tests/llm_server.py``) on 127.0.0.1, which waits
``--delay`` seconds per request (a stand-in for a model's latency) and answers from the prompt, and scores ``--rows``
distinct G-Eval coherence rows with no answer store (every row is asked). Against a real server pass its URL and
model instead (the rows are then really judged):

    vllm serve Qwen/Qwen2.5-7B-Instruct --port 8000
    python bench/bench_llm_judge.py --base-url http://127.0.0.1:8000/v1 --model Qwen/Qwen2.5-7B-Instruct

    ollama pull qwen2.5:7b && ollama serve            # OpenAI-compatible API at :11434/v1
    python bench/bench_llm_judge.py --base-url http://127.0.0.1:11434/v1 --model qwen2.5:7b --logprobs false

Prints, per concurrency: rows, requests, seconds, requests/s, tokens/s (prompt + completion, as the server counts).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=400)
    parser.add_argument("--delay", type=float, default=0.05, help="the local server's seconds per request")
    parser.add_argument("--concurrency", default="1,8,32")
    parser.add_argument("--base-url", default=None)
    parser.add_argument("--model", default="judge-7b")
    parser.add_argument("--logprobs", default="true")
    args = parser.parse_args()

    from meta_eval.metrics.base import Example
    from meta_eval.metrics.registry import create

    server = None
    if args.base_url is None:
        from llm_server import JudgeServer

        server = JudgeServer(model=args.model, delay=args.delay).__enter__()
        base_url = server.url
    else:
        base_url = args.base_url
    print(f"server {base_url}, model {args.model}, {args.rows} rows"
          + (f", local test server with {args.delay} s per request" if server else ""))
    print(f"{'concurrency':>11} {'rows':>6} {'requests':>8} {'seconds':>8} {'req/s':>8} {'tokens/s':>9}")
    try:
        for level in [int(c) for c in args.concurrency.split(",")]:
            rows = [Example(f"Summary {level}-{i}: the council voted to build a bridge.", ("ref",),
                            "The city council voted on Tuesday to build a new bridge.") for i in range(args.rows)]
            metric = create("llm-judge", base_url=base_url, model=args.model, template="geval",
                            dimension="coherence", concurrency=level, answers="none", logprobs=args.logprobs)
            metric.fit(rows)
            start = time.perf_counter()
            metric.score(rows)
            seconds = time.perf_counter() - start
            s = metric.stats
            tokens = s["prompt_tokens"] + s["completion_tokens"]
            print(f"{level:>11} {len(rows):>6} {s['requests']:>8} {seconds:>8.2f} {s['requests'] / seconds:>8.1f} "
                  f"{tokens / seconds:>9.0f}")
            metric.release()
    finally:
        if server is not None:
            server.__exit__(None, None, None)


if __name__ == "__main__":
    main()
