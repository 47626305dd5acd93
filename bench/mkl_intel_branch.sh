#!/usr/bin/env bash
# Run a command with MKL held on its Intel AVX2 branch on a CPU that is not Intel's, for maintainers who rebuild the
# committed leaderboards on such a machine (docs/engines.md, "Numeric mode").
#
#   bash bench/mkl_intel_branch.sh meta-eval leaderboard publish ...
#
# MKL honours MKL_CBWR=AVX2,STRICT only where its CPU check (mkl_serv_intel_cpu_true) says Intel; on an AMD EPYC it
# stays on AUTO,STRICT, and meta-eval signs such scores num:portable(MKL_CBWR=AUTO,STRICT) (metrics/mkl_vendor.py).
# This script compiles a two-function library that answers that check with "Intel" (cc, into a temporary folder),
# preloads it and sets MKL_CBWR=AVX2,STRICT, so that MKL takes the AVX2 code path it takes on an Intel CPU. Before the
# command runs it checks the claim: bench/bench_numeric.py --fingerprint must print num:portable and the digest pinned
# in tests/test_numeric_mode.py (measured on Intel-branch MKL); else it stops and runs nothing.
# Not part of meta-eval: a user on an AMD CPU gets meta-eval's own, honestly signed, mode.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: bash bench/mkl_intel_branch.sh COMMAND [ARGS...]" >&2; exit 2; }
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
printf 'int mkl_serv_intel_cpu_true(void) { return 1; }\nint mkl_serv_intel_cpu(void) { return 1; }\n' > "$dir/intel.c"
cc -shared -fPIC -O2 -o "$dir/libintel_branch.so" "$dir/intel.c"
export MKL_CBWR=AVX2,STRICT LD_PRELOAD="$dir/libintel_branch.so${LD_PRELOAD:+:$LD_PRELOAD}"
want="$(python - "$root" <<'PY'
import re, sys
text = open(f"{sys.argv[1]}/tests/test_numeric_mode.py").read()
import torch
print(dict(re.findall(r'"([0-9.]+\+cpu)": "([0-9a-f]{64})"', text)).get(torch.__version__, ""))
PY
)"
got="$(cd "$root" && python bench/bench_numeric.py --fingerprint | tail -1)"
case "$got" in
  *'"ident": "num:portable"'*"\"sha256\": \"$want\""*) [ -n "$want" ] || { echo "no pinned digest for this torch" >&2; exit 1; } ;;
  *) echo "MKL is not on its Intel AVX2 branch here, nothing run: $got" >&2; exit 1 ;;
esac
echo "MKL on its Intel AVX2 branch (fingerprint ${want:0:12}, num:portable)" >&2
"$@"
