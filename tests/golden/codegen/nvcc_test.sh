#!/bin/bash
# CI test (CTest label `nvcc`): compiles golden generated kernel libraries with real nvcc for
# sm_90a exactly as src/build does, and checks each .so exports the C ABI and has no
# "Arch conditional MMA" abort path (the sign of a plain sm_90 build whose wgmma is compiled out).
# Skips (exit 77) when nvcc or the CUTLASS headers are absent. On shared build hosts set
# UCUTLASS_NVCC_LOCK=/tmp/ucut-nvcc.lock so nvcc runs one at a time.
set -u
here=$(cd "$(dirname "$0")" && pwd)
cutlass=${UCUTLASS_CUTLASS_DIR:-$1}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
command -v nvcc >/dev/null || { echo "SKIP: nvcc not found"; exit 77; }
[ -f "$cutlass/include/cutlass/version.h" ] || { echo "SKIP: no CUTLASS headers under $cutlass"; exit 77; }
lock=()
[ -n "${UCUTLASS_NVCC_LOCK:-}" ] && lock=(flock "$UCUTLASS_NVCC_LOCK")
status=0
for name in ${UCUT_NVCC_TEST_KERNELS:-bf16_bias_gelu f32_scaled_tf32 f32_scaled_f32x3w f32_scaled_f32x3w_mn f32x3w_swapped_epilogue bf16x3_kn_relu}; do
  start=$(date +%s)
  if ! "${lock[@]}" nvcc -std=c++17 -O3 --expt-relaxed-constexpr -DNDEBUG -gencode=arch=compute_90a,code=sm_90a \
      -Xcompiler -fPIC -Xcompiler -fvisibility=hidden -shared -cudart static \
      -I"$cutlass/include" -I"$cutlass/tools/util/include" -I"$here/../../../src/codegen/runtime" -o "$out/$name.so" "$here/$name.cu" > "$out/$name.log" 2>&1; then
    echo "FAIL $name: nvcc failed"; grep -E "error" "$out/$name.log" | head -20; status=1; continue
  fi
  if grep -qE "C7510|C7515" "$out/$name.log"; then echo "FAIL $name: ptxas serialized wgmma"; status=1; fi
  if [ "$(strings "$out/$name.so" | grep -c 'Arch conditional MMA')" != 0 ]; then
    echo "FAIL $name: the .so has the 'Arch conditional MMA' abort path (not built for sm_90a)"; status=1
  fi
  for sym in ucut_abi_version ucut_describe ucut_last_error ucut_workspace_size ucut_run; do
    nm -D --defined-only "$out/$name.so" | grep -qw "$sym" || { echo "FAIL $name: $sym not exported"; status=1; }
  done
  exported=$(nm -D --defined-only "$out/$name.so" | awk '$2 ~ /[TDB]/ {print $3}' | grep -vc '^ucut_')
  [ "$exported" -le 2 ] || { echo "FAIL $name: $exported symbols other than ucut_* are exported"; status=1; }
  echo "ok $name ($(( $(date +%s) - start )) s, $(stat -c %s "$out/$name.so") bytes)"
done
exit $status
