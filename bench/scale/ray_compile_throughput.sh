#!/usr/bin/env bash
# Compile throughput per added build node (docs/scale-out.md): the same planning suite's kernel
# libraries compiled with real nvcc through `--executor ray` on a local cluster of 1, then 2 build
# nodes (one CPU each: one nvcc at a time per node), with an empty kernel cache each time.
#   bench/scale/ray_compile_throughput.sh [MATCH] [BUDGET]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
match="${1:-act_relu,act_gelu,act_silu,act_tanh}"
budget="${2:-2}"
py="${UCUTLASS_PYTHON:-$root/.venv/bin/python}"
bin="${UCUT_BIN:-$root/build/ucutlass}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
for nodes in 1 2; do
  coproc CLUSTER { PYTHONPATH="$root/python" "$py" -m ucutlass_torch.ray_bridge --local-cluster "$nodes" 2>/dev/null; }
  read -r address <&"${CLUSTER[0]}"
  t0=$(date +%s.%N)
  UCUTLASS_NO_GPU=1 UCUTLASS_CACHE="$work/cache-$nodes" PYTHONPATH="$root/python" UCUTLASS_PYTHON="$py" \
    "$bin" bench problems --match "$match" --plan --budget "$budget" --no-memory --executor ray \
    --ray-address "$address" --out "$work/out-$nodes" --build-dir "$work/build-$nodes" > "$work/log-$nodes" 2>&1
  t1=$(date +%s.%N)
  libs=$(find "$work/build-$nodes" -name '*.so' | wc -l)
  jobs=$(grep -o 'Ray compile jobs: [0-9]*' "$work/log-$nodes" | grep -o '[0-9]*$' || echo 0)
  printf '%d build node(s): %d libraries, %s nvcc jobs in %.1f s\n' "$nodes" "$libs" "$jobs" "$(echo "$t1 - $t0" | bc)"
  eval "exec ${CLUSTER[1]}>&-"
  wait "$CLUSTER_PID" 2>/dev/null || true
done
