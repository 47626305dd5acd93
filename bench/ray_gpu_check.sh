#!/usr/bin/env bash
# Ray actors on a real GPU (issue #37, `--gpus-per-actor`), on a lent GPU machine, in two calls on the same warm
# machine: Ray's wheel (ray 2.60.0, cp312, 79 MB) is over the lending tool's 64 MiB carry, so it travels in two
# halves, the ignored folders .ray-a/ and .ray-b/ (in .git/info/exclude; the second also holds the wheels of Ray's
# dependencies the machine may lack and the whole wheel's SHA-256):
#
#   here, once:  bash bench/ray_gpu_check.sh --prepare        (downloads the wheels from the package index)
#   call 1:      run(command="mkdir -p /tmp/ray-parts && cp .ray-a/* /tmp/ray-parts/ && ls -l /tmp/ray-parts",
#                    carry=[".ray-a"], timeout_s=120)
#   call 2:      run(command="OUT=$OUT timeout 420 bash bench/ray_gpu_check.sh", carry=[".ray-b", ".whl", ".gpu"],
#                    timeout_s=450)
#
# Call 2 joins the halves, checks the SHA-256, installs Ray (and only the dependencies the machine lacks) with the
# other wheels into /tmp/site, then runs the tests marked cuda of tests/test_ray_gpus.py (a Ray actor granted the
# real GPU encodes there and signs with its name; the same scores as the driver's GPU within 1e-5) and
# `meta-eval run -j chaganty -m wms-ctx --engine ray --gpus-per-actor 1` with a MiniLM-shaped random model. Writes
# summary.txt, pytest-ray-cuda.log and run-ray.log under $OUT.
set -u
RAY_WHEEL=ray-2.60.0-cp312-cp312-manylinux2014_x86_64.whl
DEPS="jsonschema attrs jsonschema-specifications referencing rpds-py msgpack protobuf"
if [ "${1:-}" = "--prepare" ]; then
  set -e
  tmp=$(mktemp -d)
  pick="--no-deps --only-binary=:all: --python-version 3.12 --implementation cp --platform manylinux2014_x86_64"
  pick="$pick --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64"
  python3 -m pip download $pick -d "$tmp" ray==2.60.0
  mkdir -p .ray-a .ray-b
  split -b 40000000 -d -a 2 "$tmp/$RAY_WHEEL" "$tmp/ray.whl.part-"
  mv "$tmp/ray.whl.part-00" .ray-a/ && mv "$tmp/ray.whl.part-01" .ray-b/
  (cd "$tmp" && sha256sum "$RAY_WHEEL") >.ray-b/SHA256
  python3 -m pip download $pick -d .ray-b $DEPS
  rm -rf "$tmp"
  du -sh .ray-a .ray-b
  exit 0
fi
REPO=$PWD
OUT=${OUT:-$REPO/ray-gpu-check-out}
mkdir -p "$OUT"
START=$(date +%s)
say() { echo "[$(( $(date +%s) - START ))s] $*" | tee -a "$OUT/summary.txt"; }
for d in "${META_EVAL_DATA:-}" "$PWD/.gpu/judgments"; do
  if [ -n "$d" ] && [ -e "$d/chaganty" ]; then export META_EVAL_DATA="$d"; break; fi
done

# 1. the wheel from its halves, checked
mkdir -p /tmp/ray-parts && cp .ray-b/ray.whl.part-* /tmp/ray-parts/
cat /tmp/ray-parts/ray.whl.part-* >"/tmp/ray-parts/$RAY_WHEEL"
(cd /tmp/ray-parts && sha256sum -c "$REPO/.ray-b/SHA256" 2>&1) | tee -a "$OUT/summary.txt" | grep -q ": OK$" || {
  say "the joined Ray wheel does not match its SHA-256 (was call 1 run on this machine?)"; exit 1; }

# 2. Ray, the dependencies this machine lacks, and the wheels of bench/gpu_check.sh, into /tmp/site
missing=$(python3 - <<'PY'
import importlib.util
wheels = {"jsonschema": "jsonschema", "attrs": "attrs", "jsonschema_specifications": "jsonschema_specifications",
          "referencing": "referencing", "rpds": "rpds_py", "msgpack": "msgpack", "google.protobuf": "protobuf"}
def found(module):
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False
print(" ".join(w for m, w in wheels.items() if not found(m)))
PY
)
files="/tmp/ray-parts/$RAY_WHEEL"
for w in $missing; do files="$files $(ls .ray-b/${w}-*.whl)"; done
timeout 180 python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
  $files .whl/*.whl >/tmp/ray-pip.log 2>&1
rc=$?  # before any command substitution below resets $?
say "pip install of Ray, [$missing] and $(ls .whl/*.whl 2>/dev/null | wc -l) wheels: exit $rc" \
  "($(tail -1 /tmp/ray-pip.log))"
export PYTHONPATH=/tmp/site:$PWD
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
say "$(python3 -c 'import ray, torch; print("ray", ray.__version__, "| torch", torch.__version__,
                                           "| GPUs", torch.cuda.device_count())' 2>&1 | tail -1)"

# 3. the CUDA tests of the Ray GPU actors
timeout 180 python3 -m pytest -q -p no:cacheprovider -m cuda -rs tests/test_ray_gpus.py >"$OUT/pytest-ray-cuda.log" 2>&1
say "pytest -m cuda tests/test_ray_gpus.py: exit $? -- $(tail -1 "$OUT/pytest-ray-cuda.log")"

# 4. the command line: a contextual mover in a Ray actor granted the GPU
WORK=/tmp/bench-gpu-work
[ -e "$WORK/minilm-shape/config.json" ] || timeout 90 python3 bench/bench_gpu.py --work "$WORK" --skip bertscore all \
  >/tmp/ray-models.log 2>&1
T0=$(date +%s)
timeout 150 python3 -m meta_eval.cli run -j chaganty -m wms-ctx -o model="$WORK/minilm-shape" --engine ray \
  --gpus-per-actor 1 --no-cache >"$OUT/run-ray.log" 2>&1
say "meta-eval run -j chaganty -m wms-ctx --engine ray --gpus-per-actor 1: exit $? in $(( $(date +%s) - T0 )) s"
grep -m1 -o "device:cuda([^)]*)" "$OUT/run-ray.log" | sed 's/^/signature names /' | tee -a "$OUT/summary.txt"
say "done"
