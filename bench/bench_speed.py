"""Rows per second of meta-eval's ROUGE and MoverScore against their reference implementations (issue 12, speed).

Run from the repository root (needs ../shared/judgments or ``--data-dir``; MoverScore needs the neural extra and the
MiniLM package):

    python bench/bench_speed.py [--repeat 3] [--mover-pairs 2085] [--released] [--skip-rouge] [--skip-mover]
                                [--rouge-sets summeval chaganty] [--numeric portable|native]

Every timing runs in a fresh Python process (cold memo tables; imports, model loading and a full garbage collection
are done before the clock starts, for both sides), is repeated ``--repeat`` times (MoverScore: ``--mover-repeat``),
and the best wall-clock time and the best process CPU time are kept. Rows/s are from wall-clock time; the speed-up is
given by both: on a shared machine wall-clock times move with the other processes' load, CPU times much less
(everything here runs on one thread). The machine's load average (``os.getloadavg``) is printed before and after.

- ROUGE, reference: ``rouge_score.rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL", "rougeLsum"],
  use_stemmer=True).score_multi(references, candidate)``, each pair with the same input and the same scores on both
  sides, twice: on each row's raw texts against meta-eval's ``create("rouge", split="newline")`` (what a user of
  ``rouge-score`` runs: a one-line text is one sentence), and on the texts split into sentences by meta-eval
  (joined by newlines; the splitting is outside the reference's clock) against ``create("rouge")`` (the default,
  which splits one-line texts with untrained Punkt inside its clock; see :mod:`metrics.rouge`). Sets: SummEval
  (1,600 rows x 11 references) and chaganty (2,085 rows x 1). ``split`` is meta-eval's sentence splitting alone
  (every distinct text), which with NLTK's Porter stemming of each distinct word bounds the speed-up on
  single-reference sets.
- MoverScore, reference: ``bench_metrics.reference_moverscore``, the ``moverscore_v2`` algorithm (moverscore 1.0.3)
  with the same MiniLM encoder and thread count (``META_EVAL_TORCH_THREADS``, default 1): padded batches of 256
  references and 256 candidates, IDF over the lists, full joint-space transport plan per pair with POT; meta-eval:
  ``meta_eval.scoring.runner.score_examples(MoverScore(model="minilm"), rows)`` as ``meta-eval run`` calls it (IDF
  fitted on
  the rows, batches of 256, no score cache). The first ``--mover-pairs`` chaganty rows. ``--released`` also times
  :func:`released_moverscore`, closer to the released ``moverscore_v2.py`` (eager attention with attention maps, as
  its config asks; pyemd's transport when pyemd is importable).

After the MoverScore timings, :func:`_forward_work` prints the forward passes' arithmetic on both sides and this
machine's float32 matrix-product rate: the floor under which no float32 implementation with the same scores can go.

Not a test: nothing is asserted; ``tests/test_speed_parity.py`` checks that the scores are the reference's.
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
TYPES = ["rouge1", "rouge2", "rougeL", "rougeLsum"]


def _rows(name: str, data_dir: str, limit: int | None = None):
    from meta_eval import judgments

    rows = judgments.load(name, data_dir).examples()
    return rows[:limit] if limit else rows


def released_moverscore(refs: list[str], hyps: list[str], batch_size: int = 256) -> tuple[list[float], float, str]:
    """``moverscore_v2.word_mover_score`` as released in moverscore 1.0.3, with the offline MiniLM (for timing).

    As ``bench_metrics.reference_moverscore`` but closer to the released file: the model is loaded as its
    ``config(output_hidden_states=True, output_attentions=True)`` asks, which in 2020 meant (and with today's
    transformers still means) the eager attention that returns its attention maps; every layer's states are stacked;
    the cost is its float32 ``batched_cdist_l2``; the transport plan comes from pyemd's ``emd_with_flow`` (POT's
    ``ot.emd`` when pyemd is not installed; the third value returned names the solver) on the joint padded space;
    the score is ``1 - sum(float32 flow * cost)``. ``get_idf_dict`` runs without its process pool (favouring the
    reference). Returns (scores, seconds after the model is loaded, solver).
    """
    import string
    from collections import Counter, defaultdict
    from math import log

    import numpy as np
    import torch
    from transformers import AutoModel, AutoTokenizer

    from meta_eval.metrics import numeric
    from meta_eval.metrics.encoder import _minilm_path

    numeric.apply_to_torch()  # the same numeric mode as meta-eval's side (oneDNN off in the portable mode)
    try:
        from pyemd import emd_with_flow

        solver = "pyemd"

        def flow_of(c1, c2, dist):
            return np.array(emd_with_flow(c1, c2, dist)[1], dtype=np.float32)
    except ImportError:
        import ot

        solver = "pot"

        def flow_of(c1, c2, dist):
            return np.asarray(ot.emd(c1, c2, dist), dtype=np.float32)

    torch.set_num_threads(int(os.environ.get("META_EVAL_TORCH_THREADS", 1)))
    path = str(_minilm_path())
    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModel.from_pretrained(path, output_hidden_states=True, output_attentions=True,
                                      attn_implementation="eager").eval()
    room = tok.model_max_length - 2
    pieces = lambda text: ["[CLS]", *tok.tokenize(text)[:room], "[SEP]"]

    def idf(texts):
        counts = Counter()
        for text in texts:
            counts.update(set(tok.convert_tokens_to_ids(pieces(text))))
        table = defaultdict(lambda: log((len(texts) + 1) / 1))
        table.update({k: log((len(texts) + 1) / (c + 1)) for k, c in counts.items()})
        return table

    def embed(texts, table):
        toks = [pieces(t) for t in texts]
        ids = [tok.convert_tokens_to_ids(t) for t in toks]
        width = max(map(len, ids))
        x = torch.zeros(len(ids), width, dtype=torch.long)
        mask, w = torch.zeros_like(x), torch.zeros(len(ids), width)
        for i, row in enumerate(ids):
            x[i, :len(row)], mask[i, :len(row)] = torch.tensor(row), 1
            w[i, :len(row)] = torch.tensor([table[j] for j in row])
        with torch.no_grad():
            layers = torch.stack(model(input_ids=x, attention_mask=mask).hidden_states)
        return layers, w, toks

    def cdist_l2(x1, x2):  # moverscore_v2.batched_cdist_l2
        x1_norm = x1.pow(2).sum(dim=-1, keepdim=True)
        x2_norm = x2.pow(2).sum(dim=-1, keepdim=True)
        return torch.baddbmm(x2_norm.transpose(-2, -1), x1, x2.transpose(-2, -1), alpha=-2).add_(x1_norm) \
            .clamp_min_(1e-30).sqrt_()

    start = time.perf_counter()
    idf_r, idf_h, punct, out = idf(refs), idf(hyps), set(string.punctuation), []
    for s in range(0, len(refs), batch_size):
        (re_, rw, rt), (he, hw, ht) = embed(refs[s:s + batch_size], idf_r), embed(hyps[s:s + batch_size], idf_h)
        re_, he = re_[-1], he[-1]
        for i in range(len(rt)):
            for states, w, toks in ((re_, rw, rt), (he, hw, ht)):
                drop = [k for k, t in enumerate(toks[i]) if "##" in t or t in punct]
                states[i, drop, :], w[i, drop] = 0, 0
        raw = torch.cat([re_, he], 1)
        raw.div_(torch.norm(raw, dim=-1).unsqueeze(-1) + 1e-30)
        dist = cdist_l2(raw, raw).double().numpy()
        for i in range(len(rt)):
            c1, c2 = np.zeros(raw.shape[1]), np.zeros(raw.shape[1])
            c1[:rw.shape[1]], c2[rw.shape[1]:] = rw[i].numpy(), hw[i].numpy()
            c1, c2 = c1 / (c1.sum() + 1e-30), c2 / (c2.sum() + 1e-30)
            out.append(float(1 - np.sum(flow_of(c1, c2, dist[i]) * dist[i])))
    return out, time.perf_counter() - start, solver


def _import_neural() -> None:
    """Import what the MoverScore references import inside, so that their CPU clocks do not count the imports."""
    import ot  # noqa: F401
    import torch  # noqa: F401
    from transformers import AutoModel, AutoTokenizer  # noqa: F401

    try:
        import pyemd  # noqa: F401
    except ImportError:
        pass


def _clock() -> tuple[float, float]:
    """Wall-clock and process CPU time, after a full garbage collection: the cyclic collector's pending pass over the
    rows just loaded (0.08-0.1 s on chaganty's, triggered by whichever allocation comes next) is the loading's cost,
    and would otherwise land in whichever side's clock starts first after it."""
    gc.collect()
    return time.perf_counter(), time.process_time()


def _one(kind: str, name: str, data_dir: str, pairs: int | None) -> dict:
    """One timing in this (fresh) process; returns seconds and rows."""
    if kind == "rouge-ref":
        from rouge_score import rouge_scorer

        rows = _rows(name, data_dir)
        scorer = rouge_scorer.RougeScorer(TYPES, use_stemmer=True)
        scorer.score_multi(["warm up the stemmer"], "warm up")
        start, cpu = _clock()
        for ex in rows:
            scorer.score_multi(list(ex.references), ex.candidate)
        return {"seconds": time.perf_counter() - start, "cpu": time.process_time() - cpu, "rows": len(rows)}
    if kind == "rouge-ref-split":  # rouge-score on the sentences meta-eval splits (the splitting is not timed)
        from rouge_score import rouge_scorer

        from meta_eval.metrics.rouge import prepare

        rows = _rows(name, data_dir)
        split = {t: prepare(t) for ex in rows for t in (ex.candidate, *ex.references)}
        scorer = rouge_scorer.RougeScorer(TYPES, use_stemmer=True)
        scorer.score_multi(["warm up the stemmer"], "warm up")
        start, cpu = _clock()
        for ex in rows:
            scorer.score_multi([split[r] for r in ex.references], split[ex.candidate])
        return {"seconds": time.perf_counter() - start, "cpu": time.process_time() - cpu, "rows": len(rows)}
    if kind in ("rouge-meta", "rouge-meta-newline"):
        from meta_eval.metrics import Example, create

        rows = _rows(name, data_dir)
        create("rouge").score([Example("Warm up. The imports.", ("Warm up the stemmer.",))])  # imports only
        metric = create("rouge", **({"split": "newline"} if kind == "rouge-meta-newline" else {}))
        start, cpu = _clock()
        metric.score(rows)
        return {"seconds": time.perf_counter() - start, "cpu": time.process_time() - cpu, "rows": len(rows)}
    if kind == "rouge-split":
        from meta_eval.metrics.rouge import prepare

        rows = _rows(name, data_dir)
        texts = list(dict.fromkeys([ex.candidate for ex in rows] + [r for ex in rows for r in ex.references]))
        prepare("Warm up. The splitter.")
        start, cpu = _clock()
        for text in texts:
            prepare(text)
        return {"seconds": time.perf_counter() - start, "cpu": time.process_time() - cpu, "rows": len(rows)}
    if kind == "mover-ref":
        from bench_metrics import reference_moverscore

        rows = _rows(name, data_dir, pairs)
        _import_neural()
        cpu = time.process_time()  # includes loading the model (about 1 s of CPU), which its wall clock excludes
        scores, seconds = reference_moverscore([ex.references[0] for ex in rows], [ex.candidate for ex in rows])
        return {"seconds": seconds, "cpu": time.process_time() - cpu, "rows": len(rows), "scores": scores}
    if kind == "mover-released":
        rows = _rows(name, data_dir, pairs)
        _import_neural()
        cpu = time.process_time()  # includes loading the model, as above
        scores, seconds, solver = released_moverscore([ex.references[0] for ex in rows], [ex.candidate for ex in rows])
        return {"seconds": seconds, "cpu": time.process_time() - cpu, "rows": len(rows), "scores": scores,
                "solver": solver}
    if kind == "mover-meta":
        from meta_eval.scoring.runner import score_examples
        from meta_eval.metrics.encoder import load_encoder
        from meta_eval.metrics.moverscore import MoverScore

        rows = _rows(name, data_dir, pairs)
        load_encoder("minilm")  # the model loads outside the clock, as the reference's does
        start, cpu = _clock()
        out = score_examples(MoverScore(model="minilm"), rows, batch_size=256)
        return {"seconds": time.perf_counter() - start, "cpu": time.process_time() - cpu, "rows": len(rows),
                "scores": [float(x) for x in out.scores["moverscore[minilm]"]]}
    raise ValueError(f"unknown timing {kind!r}")


def _forward_work(pairs: int, data_dir: str) -> dict:
    """MiniLM's forward-pass arithmetic on the first ``pairs`` chaganty rows, for meta-eval and for the reference.

    Floating-point operations of a BERT layer stack on a batch of ``b`` texts padded to ``n`` pieces: per layer,
    ``2 b n (4 h^2 + 2 h f)`` for the four projections and the two feed-forward products (``h`` hidden size, ``f``
    intermediate size) and ``4 b n^2 h`` for the attention products (scores and weighted sum); embeddings, softmax,
    layer norms and activations are left out (a few per cent of the operations, though more of the time: they are
    bound by memory, not arithmetic). meta-eval encodes each distinct text once without padding
    (:func:`metrics.encoder.length_groups`); the reference encodes every row's reference and candidate in padded
    batches of 256 (``moverscore_v2``). Also measures this machine's float32 matrix-product rate on one thread, on
    the feed-forward product of a 512-piece pass, which bounds any float32 implementation that gives the same
    scores: ``floor = meta-eval's operations / (threads * rate)``.
    """
    import torch
    from transformers import AutoConfig, AutoTokenizer

    from meta_eval.metrics.encoder import _minilm_path

    path = str(_minilm_path())
    config, tok = AutoConfig.from_pretrained(path), AutoTokenizer.from_pretrained(path)
    h, f, layers = config.hidden_size, config.intermediate_size, config.num_hidden_layers
    room = tok.model_max_length - 2

    def flops(batch: int, width: int) -> float:
        return layers * (2 * batch * width * (4 * h * h + 2 * h * f) + 4 * batch * width * width * h)

    rows = _rows("chaganty", data_dir, pairs)
    refs, hyps = [ex.references[0] for ex in rows], [ex.candidate for ex in rows]
    length = {t: min(len(tok.tokenize(t)), room) + 2 for t in dict.fromkeys(refs + hyps)}
    ours = sum(flops(1, n) for n in length.values())
    reference = sum(flops(len(part), max(length[t] for t in part))
                    for s in range(0, len(refs), 256) for part in (refs[s:s + 256], hyps[s:s + 256]))
    torch.set_num_threads(1)
    a, b = torch.randn(512, h), torch.randn(h, f)
    for _ in range(5):
        a @ b
    start = time.perf_counter()
    for _ in range(100):
        a @ b
    rate = 100 * 2 * 512 * h * f / (time.perf_counter() - start)
    return {"ours": ours, "reference": reference, "texts": len(length), "rate": rate}


def _timed(kind: str, name: str, args) -> dict:
    """Best of ``repeat`` fresh processes."""
    repeat = args.mover_repeat if kind.startswith("mover") else args.repeat
    best = None
    for _ in range(repeat):
        cmd = [sys.executable, __file__, "--one", kind, name, "--data-dir", args.data_dir,
               "--mover-pairs", str(args.mover_pairs)]
        done = subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=ROOT)
        result = json.loads(done.stdout.strip().splitlines()[-1])
        if best is None:
            best = result
        best["cpu"] = min(best["cpu"], result["cpu"])  # the best wall time and the best CPU time, each
        if result["seconds"] < best["seconds"]:
            best.update({k: v for k, v in result.items() if k != "cpu"})
    return best


def _load() -> str:
    return "load average %.2f %.2f %.2f" % os.getloadavg()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=str(ROOT.parent / "shared" / "judgments"))
    parser.add_argument("--repeat", type=int, default=3, help="fresh processes per ROUGE timing (best kept)")
    parser.add_argument("--mover-repeat", type=int, default=1, help="fresh processes per MoverScore timing")
    parser.add_argument("--mover-pairs", type=int, default=2085, help="first chaganty rows for MoverScore")
    parser.add_argument("--released", action="store_true",
                        help="also time moverscore_v2 as released (eager attention; pyemd when installed)")
    parser.add_argument("--skip-rouge", action="store_true")
    parser.add_argument("--skip-mover", action="store_true")
    parser.add_argument("--rouge-sets", nargs="+", default=["summeval", "chaganty"], choices=["summeval", "chaganty"],
                        help="the sets ROUGE is timed on")
    parser.add_argument("--numeric", choices=("portable", "native"),
                        help="numeric mode of both sides' neural code (metrics/numeric.py) [default: "
                             "$META_EVAL_NUMERIC, else portable]")
    parser.add_argument("--one", nargs=2, metavar=("KIND", "SET"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    from meta_eval.metrics import numeric

    numeric.set_mode(args.numeric or numeric.current_mode())  # before torch; the timed processes inherit it
    if args.one:
        print(json.dumps(_one(args.one[0], args.one[1], args.data_dir, args.mover_pairs)))
        return
    print(f"{os.cpu_count()} CPUs, {_load()}, torch threads {os.environ.get('META_EVAL_TORCH_THREADS', '1')}",
          flush=True)
    print(numeric.describe(), flush=True)
    print(f"{'metric / set':<30} {'rows':>6} {'reference rows/s':>17} {'meta-eval rows/s':>17} {'wall':>9} "
          f"{'CPU':>9}   (speed-up by wall-clock time and by process CPU time)")
    if not args.skip_rouge:
        labels = {"summeval": "ROUGE / SummEval (11 refs)", "chaganty": "ROUGE / chaganty (1 ref)"}
        for name, label in ((n, labels[n]) for n in dict.fromkeys(args.rouge_sets)):
            split = _timed("rouge-split", name, args)
            # the same input to both (identical scores): one-line texts as they are (rougeLsum = rougeL), and the
            # default, whose sentence splitting (timed on meta-eval's side only) rouge-score's call does not do
            for ref_kind, kind, how in (("rouge-ref", "rouge-meta-newline", "split=newline, raw texts"),
                                        ("rouge-ref-split", "rouge-meta", "default, split sentences")):
                ref, ours = _timed(ref_kind, name, args), _timed(kind, name, args)
                extra = f", split {split['cpu']:.2f} s of it" if kind == "rouge-meta" else ""
                print(f"{label:<30} {ours['rows']:>6} {ref['rows'] / ref['seconds']:>17.1f} "
                      f"{ours['rows'] / ours['seconds']:>17.1f} {ref['seconds'] / ours['seconds']:>8.1f}x "
                      f"{ref['cpu'] / ours['cpu']:>8.1f}x   ({how}: {ref['seconds']:.2f} s vs "
                      f"{ours['seconds']:.2f} s; CPU {ref['cpu']:.2f} s vs {ours['cpu']:.2f} s{extra})", flush=True)
    if not args.skip_mover:
        ours = _timed("mover-meta", "chaganty", args)
        kinds = [("mover-ref", "MoverScore / chaganty (MiniLM)", "bench_metrics re-implementation")]
        if args.released:
            kinds.append(("mover-released", "  vs moverscore_v2 as released", "eager attention, "))
        for kind, label, what in kinds:
            ref = _timed(kind, "chaganty", args)
            diff = max(abs(a - b) for a, b in zip(ref["scores"], ours["scores"]))
            what += f"{ref['solver']} transport" if "solver" in ref else ""
            print(f"{label:<30} {ours['rows']:>6} {ref['rows'] / ref['seconds']:>17.2f} "
                  f"{ours['rows'] / ours['seconds']:>17.2f} {ref['seconds'] / ours['seconds']:>8.1f}x "
                  f"{ref['cpu'] / ours['cpu']:>8.1f}x   ({ref['seconds']:.1f} s vs {ours['seconds']:.1f} s; "
                  f"CPU {ref['cpu']:.1f} s vs {ours['cpu']:.1f} s; reference: {what}; "
                  f"max |score diff| {diff:.1e})", flush=True)
    if not args.skip_mover:
        work = _forward_work(args.mover_pairs, args.data_dir)
        threads = int(os.environ.get("META_EVAL_TORCH_THREADS", 1))
        floor = work["ours"] / (threads * work["rate"])
        print(f"MiniLM forward passes: meta-eval {work['ours'] / 1e12:.2f} TFLOP ({work['texts']} distinct texts, "
              f"unpadded), reference {work['reference'] / 1e12:.2f} TFLOP (padded batches, "
              f"{work['reference'] / work['ours']:.2f}x); float32 products here {work['rate'] / 1e9:.0f} GFLOP/s per "
              f"thread, so no float32 implementation with these scores takes under {floor:.1f} s on {threads} "
              f"thread(s) (ceiling {ref['seconds'] / floor:.1f}x the last reference above)", flush=True)
    print(_load())


if __name__ == "__main__":
    main()
