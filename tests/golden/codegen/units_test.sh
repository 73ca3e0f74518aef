#!/bin/bash
# CI test (CTest label `nvcc`): a program with a GEMM and a SIMT stage built in units with real
# nvcc through `ucutlass compile` (a CUTLASS object, a SIMT object and the C ABI's, linked into
# one .so). Checks the .so exports the C ABI and nothing else and holds device code from both
# stage units, and that a second program changing only the SIMT stage takes the GEMM's object
# from the cache. Skips (exit 77) without nvcc or CUTLASS.
# Usage: units_test.sh UCUTLASS_BINARY CUTLASS_DIR
set -u
ucutlass=$1
export UCUTLASS_CUTLASS_DIR=${UCUTLASS_CUTLASS_DIR:-$2}
command -v nvcc >/dev/null || { echo "SKIP: nvcc not found"; exit 77; }
[ -f "$UCUTLASS_CUTLASS_DIR/include/cutlass/version.h" ] || { echo "SKIP: no CUTLASS headers"; exit 77; }
root=$(cd "$(dirname "$0")/../../.." && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
export UCUTLASS_CACHE="$out/cache"
status=0
fail() { echo "FAIL: $*"; status=1; }

"$ucutlass" compile "$root/examples/gemm_then_softmax.ucut" -o "$out/a" -j 2 > "$out/a.log" 2>&1 || {
  cat "$out/a.log"; echo "FAIL: ucutlass compile failed"; exit 1; }
cat "$out/a.log"
grep -q "from 3 units (0 from cache)" "$out/a.log" || fail "the first build did not compile 3 units"
so="$out/a/gemm_then_softmax.so"
for f in cutlass.cu simt.cu abi.cu; do [ -f "$out/a/gemm_then_softmax.units/$f" ] || fail "no unit $f"; done
for sym in ucut_abi_version ucut_describe ucut_last_error ucut_workspace_size ucut_run; do
  nm -D --defined-only "$so" | grep -qw "$sym" || fail "$sym not exported"
done
exported=$(nm -D --defined-only "$so" | awk '$2 ~ /[TDB]/ {print $3}' | grep -vc '^ucut_')
[ "$exported" -le 2 ] || fail "$exported symbols other than ucut_* are exported"
# the stage functions are linked in but hidden
nm -C "$so" | grep -q "ucut_stage_run_1" || fail "ucut_stage_run_1 is not in the library"
nm -D -C "$so" | grep -q "ucut_stage_run_" && fail "stage functions are exported"
# one fatbinary per unit with device code, and one of the static CUDA runtime's (a one-unit build
# has 2)
fatbins=$(nm "$so" | grep -c " fatbinData$")
[ "$fatbins" -ge 3 ] || fail "expected device code from both stage units, the library has $fatbins fatbinaries"

# The same GEMM, another softmax: the GEMM's object from the cache.
mkdir -p "$out/b"
sed 's/passes 1/passes 2/' "$root/examples/gemm_then_softmax.ucut" > "$out/b/changed.ucut"
cmp -s "$root/examples/gemm_then_softmax.ucut" "$out/b/changed.ucut" && fail "the edit changed nothing"
"$ucutlass" compile "$out/b/changed.ucut" -o "$out/b" -j 2 > "$out/b.log" 2>&1 || {
  cat "$out/b.log"; echo "FAIL: the second compile failed"; exit 1; }
cat "$out/b.log"
grep -q "from 3 units (1 from cache)" "$out/b.log" || fail "the unchanged GEMM was not taken from the cache"
exit $status
