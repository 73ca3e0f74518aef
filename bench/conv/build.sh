#!/usr/bin/env bash
# Builds the CUTLASS SM90 fprop kernels of bench/conv (conv_fprop.cu, one kernel per library) into
# OUTDIR, serially (each compile takes about a minute and 3.5 GB). Run it on the CPU machine: the
# GPU machine has no CUTLASS headers; carry OUTDIR there (.carry/conv is what run.sh looks in).
#
#   bench/conv/build.sh OUTDIR            # every variant of the table below; skips up-to-date ones
#   CONV_ONLY=conv2d bench/conv/build.sh OUTDIR     # only names matching a regex
#
# Environment: CUTLASS_DIR (default third_party/cutlass-4.2.0, as scripts/setup unpacks it),
# NVCC (default nvcc).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="${1:?usage: build.sh OUTDIR}"
mkdir -p "$out"
cutlass="${CUTLASS_DIR:-$root/third_party/cutlass-4.2.0}"
[ -d "$cutlass/include/cutlass" ] || { echo "build.sh: no CUTLASS headers in $cutlass (run scripts/setup)" >&2; exit 2; }
nvcc="${NVCC:-nvcc}"
src="$root/bench/conv/conv_fprop.cu"
stubs="$(dirname "$(command -v "$nvcc")")/../lib64/stubs"

# The flags ucutlass builds its own kernels with (src/build/compiler.cpp); libcuda for CUTLASS's
# TMA descriptor calls, through the toolkit's stub.
# shellcheck disable=SC2054  # the commas are -gencode's
flags=(-std=c++17 -O3 --expt-relaxed-constexpr -DNDEBUG -gencode=arch=compute_90a,code=sm_90a
       -Xcompiler -fPIC -Xcompiler -fvisibility=hidden -shared -cudart static
       -I "$cutlass/include" -I "$cutlass/tools/util/include" -L "$stubs" -lcuda)

# Tile K is the channels each filter tap loads per k-block: one 128-byte row (32 fp32, 64 bf16)
# suits C >= 32; the k8/k16 rows serve Cin 3 (padded to 4 or 8) and Cin 16, which a 128-byte row
# would mostly fill with zeros. measure.py times every library of a shape's rank and precision.
# name                        rank  input  output  tile M  N    K
variants=(
  "conv2d_tf32_128x128x32      2     float  float   128     128  32"
  "conv2d_tf32_128x64x32       2     float  float   128     64   32"
  "conv2d_tf32_128x128x16      2     float  float   128     128  16"
  "conv2d_tf32_128x64x8        2     float  float   128     64   8"
  "conv2d_bf16_128x128x64      2     bf16   bf16    128     128  64"
  "conv2d_bf16_128x64x64       2     bf16   bf16    128     64   64"
  "conv2d_bf16_128x128x16      2     bf16   bf16    128     128  16"
  "conv2d_bf16f32_128x128x64   2     bf16   float   128     128  64"
  "conv1d_tf32_128x128x32      1     float  float   128     128  32"
  "conv1d_bf16_128x128x64      1     bf16   bf16    128     128  64"
  "conv3d_tf32_128x64x32       3     float  float   128     64   32"
  "conv3d_tf32_128x64x8        3     float  float   128     64   8"
  "conv3d_bf16_128x64x64       3     bf16   bf16    128     64   64"
  "conv3d_bf16_128x64x16       3     bf16   bf16    128     64   16"
)

failed=0
for row in "${variants[@]}"; do
  read -r name rank in outt tm tn tk <<< "$row"
  [ -n "${CONV_ONLY:-}" ] && ! [[ "$name" =~ $CONV_ONLY ]] && continue
  so="$out/$name.so"
  if [ -f "$so" ] && [ "$so" -nt "$src" ] && [ "$so" -nt "$0" ]; then echo "have   $name"; continue; fi
  start=$(date +%s)
  if "$nvcc" "${flags[@]}" -DCONV_RANK="$rank" -DCONV_IN="$in" -DCONV_OUT="$outt" -DCONV_TILE_M="$tm" \
       -DCONV_TILE_N="$tn" -DCONV_TILE_K="$tk" "$src" -o "$so.tmp" > "$out/$name.log" 2>&1; then
    # The libraries travel to the GPU machine: strip them (the entry points are dynamic symbols).
    strip --strip-unneeded "$so.tmp" && mv "$so.tmp" "$so"
    # wgmma serialized (C7510/C7515) would make the timings meaningless: say so.
    if grep -q "C751[05]" "$out/$name.log"; then echo "WARN   $name: ptxas serialized wgmma (see $out/$name.log)"; fi
    echo "ok     $name ($(( $(date +%s) - start )) s, $(du -k "$so" | cut -f1) KiB)"
  else
    rm -f "$so.tmp"
    failed=1
    echo "FAILED $name (see $out/$name.log)"
    grep -m 5 "error" "$out/$name.log" || tail -5 "$out/$name.log"
  fi
done
exit "$failed"
