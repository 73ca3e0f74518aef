#!/usr/bin/env bash
# Build the f32x3w benchmark (main.cu) into bench/proof/f32x3w/build/f32x3w_bench.
#
#   bench/proof/f32x3w/build.sh            # with f32x3w.cuh when it exists, else the stub
#   F32X3W=stub bench/proof/f32x3w/build.sh   # the stub (f32x3w_stub.cuh) even when f32x3w.cuh exists
#
# Environment: NVCC (default nvcc), CUTLASS_DIR (default third_party/cutlass-4.2.0), EXTRA_NVCC_FLAGS
# (appended, e.g. "-lineinfo" for Nsight Compute or "-Xptxas=-v" for register and spill counts).
# Only the CUDA runtime is linked (statically, nvcc's default); no cuBLAS.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
cutlass="${CUTLASS_DIR:-$root/third_party/cutlass-4.2.0}"
nvcc="${NVCC:-nvcc}"
[ -d "$cutlass/include/cutlass" ] || { echo "build.sh: no CUTLASS headers under $cutlass" >&2; exit 2; }

defs=()
if [ "${F32X3W:-}" != stub ] && [ -f "$here/f32x3w.cuh" ]; then
  defs+=(-DUCUT_F32X3W_REAL)
  echo "build.sh: with f32x3w.cuh" >&2
else
  echo "build.sh: with the stub (f32x3w_stub.cuh)" >&2
fi

mkdir -p "$here/build"
# CUTLASS's two include folders come in as system headers (-isystem, an -I whose warnings are
# silenced): -Wall -Wextra then speak about this folder's code only, not about hundreds of
# unused-parameter warnings inside CUTLASS.
set -x
# shellcheck disable=SC2086
"$nvcc" -std=c++17 -O3 --expt-relaxed-constexpr -DNDEBUG \
  -gencode=arch=compute_90a,code=sm_90a \
  -isystem "$cutlass/include" -isystem "$cutlass/tools/util/include" -I "$root/src/codegen/runtime" \
  -Xcompiler=-Wall,-Wextra \
  "${defs[@]}" ${EXTRA_NVCC_FLAGS:-} \
  "$here/main.cu" -o "$here/build/f32x3w_bench"
