#!/bin/bash
# Compile time of libraries built in units against one translation unit (docs/kernel-abi.md,
# "Built in units"), each from an empty cache, and of the next candidate that changes one kind of
# stage (the search varies one stage at a time). Programs: the f32x3s form of
# examples/fp32_faithful.ucut (split stages + three TF32 GEMMs) with a split_k change, and
# examples/gemm_then_softmax.ucut with a softmax change.
#   bench/gemm/compile_units.sh [OUT=/tmp/ucut-units] [JOBS=2]
# Prints one line per build: wall and user seconds, and what was built. Needs build/ucutlass,
# nvcc and the CUTLASS headers (scripts/setup).
set -eu
out=${1:-/tmp/ucut-units}
jobs=${2:-2}
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${UCUTLASS_BIN:-$root/build/ucutlass}
[ -x "$bin" ] || { echo "no ucutlass binary at $bin (run scripts/build or set UCUTLASS_BIN)"; exit 2; }
rm -rf "$out"
mkdir -p "$out"/{f32x3s,f32x3s_k8,softmax,softmax_p2}
sed 's/precision f32x3$/precision f32x3s/' "$root/examples/fp32_faithful.ucut" > "$out/f32x3s/fp32_faithful.ucut"
sed 's/precision f32x3s/precision f32x3s\n  split_k 8/' "$out/f32x3s/fp32_faithful.ucut" > "$out/f32x3s_k8/fp32_faithful.ucut"
cp "$root/examples/gemm_then_softmax.ucut" "$out/softmax/"
sed 's/passes 1/passes 2/' "$root/examples/gemm_then_softmax.ucut" > "$out/softmax_p2/gemm_then_softmax.ucut"

# build LABEL CACHE SPLIT PROGRAM
build() {
  local t0 line
  t0=$(date +%s.%N)
  /usr/bin/time -f "%U" -o "$out/$1.user" env UCUTLASS_CACHE="$out/cache-$2" UCUTLASS_SPLIT_UNITS="$3" \
    "$bin" compile "$4" -o "$out/build-$1" -j "$jobs" > "$out/$1.log" 2>&1
  line=$(grep -E "^(miss|hit) " "$out/$1.log" | sed 's/.*\]  //')
  printf "%-28s %6.1f s wall %6.1f s user  %s\n" "$1" "$(echo "$(date +%s.%N) - $t0" | bc)" "$(tail -1 "$out/$1.user")" "$line"
}
for split in 0 1; do
  mode=$([ $split = 1 ] && echo units || echo one-unit)
  build "f32x3s.$mode" "f$split" $split "$out/f32x3s/fp32_faithful.ucut"
  build "f32x3s+split_k8.$mode" "f$split" $split "$out/f32x3s_k8/fp32_faithful.ucut"
  build "gemm+softmax.$mode" "s$split" $split "$out/softmax/gemm_then_softmax.ucut"
  build "gemm+softmax_p2.$mode" "s$split" $split "$out/softmax_p2/gemm_then_softmax.ucut"
done
