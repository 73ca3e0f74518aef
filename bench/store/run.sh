#!/usr/bin/env bash
# One stored kernel unit at three shapes against the shape-specialised libraries the code generator
# wrote before the kernel store (docs/benchmarks.md, "The kernel store").
#   bench/store/run.sh compile   (here: nvcc + CUTLASS) builds both sets into .carry/store/:
#       new_<shape>.so  bench/store/bf16_bias_gelu.ucut.in at the shape, through `ucutlass compile`
#                       (one stored unit, shared by the three, plus each shape's ABI unit)
#       old_<shape>.so  the golden tests/golden/codegen/bf16_bias_gelu.cu as of 4a5704e (the last
#                       commit before the store), its literal M, N, K set to the shape
#   bench/store/run.sh gpu       (on the GPU machine) checks each against PyTorch and times both
#                       (bench/store/compare.py), writing $OUT/store_parity.json when OUT is set.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
dest="$root/.carry/store"
shapes="4096x4096x4096 1024x8192x2048 8192x1024x4096"
case "${1:-}" in
  compile)
    mkdir -p "$dest" && rm -f "$dest"/*.so
    bin="${UCUT_BIN:-$root/build/ucutlass}"
    export UCUTLASS_CACHE="${UCUTLASS_CACHE:-$root/.devwork/store-bench-cache}"
    C="${UCUTLASS_CUTLASS_DIR:-$root/third_party/cutlass-4.2.0}"
    git show 4a5704e:tests/golden/codegen/bf16_bias_gelu.cu > "$dest/old.cu"
    pids=()
    for s in $shapes; do
      IFS=x read -r m n k <<<"$s"
      sed "s/const int M = 4096, N = 4096, K = 4096, L = 1;/const int M = $m, N = $n, K = $k, L = 1;/" "$dest/old.cu" > "$dest/old_$s.cu"
      grep -q "const int M = $m, N = $n, K = $k" "$dest/old_$s.cu" || { echo "no shape line in the old golden"; exit 1; }
      nvcc -std=c++17 -O3 --expt-relaxed-constexpr -DNDEBUG -gencode=arch=compute_90a,code=sm_90a -Xcompiler -fPIC \
        -Xcompiler -fvisibility=hidden -shared -cudart static -I"$C/include" -I"$C/tools/util/include" \
        -o "$dest/old_$s.so" "$dest/old_$s.cu" > "$dest/old_$s.log" 2>&1 &
      pids+=($!)
    done
    for s in $shapes; do
      IFS=x read -r m n k <<<"$s"
      sed "s/@M@/$m/g; s/@N@/$n/g; s/@K@/$k/g" bench/store/bf16_bias_gelu.ucut.in > "$dest/new_$s.ucut"
      /usr/bin/time -f "%e s wall %U s user" "$bin" compile "$dest/new_$s.ucut" -o "$dest/new_$s" -j 1 2>&1 | tail -3
      cp "$dest/new_$s/bf16_bias_gelu_${m}x${n}x${k}.so" "$dest/new_$s.so"
    done
    for p in "${pids[@]}"; do wait "$p"; done
    rm -rf "$dest"/new_*/ "$dest"/*.cu "$dest"/*.log
    ls -la "$dest"
    ;;
  gpu)
    python3 bench/store/compare.py "$dest" $shapes
    ;;
  *) echo "usage: bench/store/run.sh compile|gpu" >&2; exit 2 ;;
esac
