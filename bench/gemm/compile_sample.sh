#!/bin/bash
# Compiles N random VALID GEMM configurations (generated through src/dsl/gemm_rules, covering
# f16/bf16/tf32/f32x3, all layouts tf32 allows, cooperative/pingpong, persistent/stream-K/split-K,
# clusters, explicit stage counts, raster/swizzle, bias/activation/row-scale/row-sum epilogues) in
# parallel with nvcc. Every one must compile: a failure is a gemm_rules bug.
#   bench/gemm/compile_sample.sh [N=40] [SEED=1] [OUT=/tmp/ucut-sample]
# Needs the ucutlass binary (scripts/build) and CUTLASS headers (scripts/setup, or
# UCUTLASS_CUTLASS_DIR). Jobs default to min(cores, free memory / 3.5 GB); set UCUTLASS_JOBS.
set -eu
n=${1:-40}
seed=${2:-1}
out=${3:-/tmp/ucut-sample}
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${UCUTLASS_BIN:-$root/build/ucutlass}
[ -x "$bin" ] || { echo "no ucutlass binary at $bin (run scripts/build or set UCUTLASS_BIN)"; exit 2; }
mkdir -p "$out"
start=$(date +%s)
set +e
"$bin" compile --sample "$n" --seed "$seed" -o "$out" --no-cache 2>&1 | tee "$out/compile_sample.log"
rc=${PIPESTATUS[0]}
set -e
echo "compile_sample: $n configurations, seed $seed, $(( $(date +%s) - start )) s wall, exit $rc (log: $out/compile_sample.log)"
# No binary may carry the sm_90 (non-'a') abort path.
bad=0
for so in "$out"/*.so; do
  [ -e "$so" ] || continue
  if strings "$so" | grep -q 'Arch conditional MMA'; then echo "BAD: $so has the Arch conditional MMA path"; bad=1; fi
done
[ "$rc" = 0 ] && [ "$bad" = 0 ]
