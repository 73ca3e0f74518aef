#!/bin/bash
# CI test (CTest label `nvcc`): a program with a GEMM and a SIMT stage built in units with real
# nvcc through `ucutlass compile` (the GEMM's stored kernel unit, a SIMT object and the C ABI's,
# linked into one .so). Checks the .so exports the C ABI and nothing else and holds device code
# from both stage units, that its C ABI answers on the host (loaded through the driver stub: the
# description and the workspace plan, which calls into every stage unit), that a second program
# changing only the SIMT stage takes the GEMM's object from the kernel store, and that a program
# whose GEMM stages are two stored units (one of them the first program's, at other shapes, used
# by two stages) links both stored objects into one library. Then the sm80-API fp32-faithful GEMM
# (examples/fp32_faithful.ucut): its CUTLASS 2.x kernel is a stored unit, so the same program at
# other shapes compiles only its binding (the epilogue pass, in the SIMT unit); and a grouped GEMM
# links each group's stored unit. Skips (exit 77) without nvcc or CUTLASS.
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
for f in simt.cu abi.cu; do [ -f "$out/a/gemm_then_softmax.units/$f" ] || fail "no unit $f"; done
stored=$(cd "$out/a/gemm_then_softmax.units" && ls ucut_k*.cu 2>/dev/null)
[ "$(echo "$stored" | grep -c .)" = 1 ] || fail "expected one stored kernel unit, found: $stored"
unit=${stored%.cu}
[ "$(ls "$UCUTLASS_CACHE"/kernels/stage/*.o 2>/dev/null | wc -l)" = 1 ] || fail "the stored unit's object is not in the kernel store"
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

# The linked units work together on the host: loaded through the toolkit's driver stub (no GPU
# here), the C ABI answers, its description is the one in the whole .cu, and the workspace plan
# (the ABI unit calling each stage unit's ucut_stage_workspace_<i>) counts the 64 MiB scores.
stub=""
for d in "${CUDA_HOME:-/usr/local/cuda}/lib64/stubs" /usr/local/cuda/lib64/stubs; do
  [ -f "$d/libcuda.so" ] && { stub=$d; break; }
done
if [ -n "$stub" ] && command -v python3 >/dev/null; then
  mkdir -p "$out/stub" && ln -sf "$stub/libcuda.so" "$out/stub/libcuda.so.1"
  LD_LIBRARY_PATH="$out/stub" python3 - "$so" "$out/a/gemm_then_softmax.cu" <<'PY' || fail "the library's C ABI does not answer on the host"
import ctypes, re, sys
lib = ctypes.CDLL(sys.argv[1])
assert lib.ucut_abi_version() == 1
lib.ucut_describe.restype = ctypes.c_char_p
src = open(sys.argv[2]).read()
m = re.search(r'ucut_describe\(void\) \{\n  return "((?:[^"\\]|\\.)*)";', src)
assert m, "no description literal in the .cu"
want = re.sub(r"\\(.)", lambda e: "\n" if e.group(1) == "n" else e.group(1), m.group(1))
got = lib.ucut_describe().decode()
assert got == want, (got[:200], want[:200])
n = ctypes.c_size_t(0)
rc = lib.ucut_workspace_size(ctypes.byref(n))
assert rc == 0 and n.value >= 4096 * 4096 * 4, (rc, n.value)
print("host ABI ok: workspace", n.value, "bytes")
PY
else
  echo "note: no driver stub or python3: the host-side ABI check is skipped"
fi

# The same GEMM, another softmax: the GEMM's object from the cache.
mkdir -p "$out/b"
sed 's/passes 1/passes 2/' "$root/examples/gemm_then_softmax.ucut" > "$out/b/changed.ucut"
cmp -s "$root/examples/gemm_then_softmax.ucut" "$out/b/changed.ucut" && fail "the edit changed nothing"
"$ucutlass" compile "$out/b/changed.ucut" -o "$out/b" -j 2 > "$out/b.log" 2>&1 || {
  cat "$out/b.log"; echo "FAIL: the second compile failed"; exit 1; }
cat "$out/b.log"
grep -q "from 3 units (1 from cache)" "$out/b.log" || fail "the unchanged GEMM was not taken from the cache"

# Two stored objects in one library: the first program's GEMM (at other shapes, in two stages)
# and a GEMM of another tile. The first comes from the store; the library calls both.
mkdir -p "$out/c"
"$ucutlass" compile "$root/tests/golden/codegen/two_stored_units.ucut" -o "$out/c" -j 2 > "$out/c.log" 2>&1 || {
  cat "$out/c.log"; echo "FAIL: the two-unit compile failed"; exit 1; }
cat "$out/c.log"
units_c=$(cd "$out/c/two_stored_units.units" && ls ucut_k*.cu | sed 's/\.cu$//')
[ "$(echo "$units_c" | grep -c .)" = 2 ] || fail "expected two stored units, found: $units_c"
echo "$units_c" | grep -qx "$unit" || fail "the first program's stored unit $unit is not reused"
grep -q "from 3 units (1 from cache)" "$out/c.log" || fail "the reused stored unit was compiled again"
soc="$out/c/two_stored_units.so"
for u in $units_c; do nm "$soc" | grep -q " ${u}_run$" || fail "${u}_run is not linked into the library"; done
nm -D "$soc" | grep -q "ucut_k" && fail "stored units' functions are exported"
if [ -n "$stub" ] && command -v python3 >/dev/null; then
  LD_LIBRARY_PATH="$out/stub" python3 - "$soc" <<'PY' || fail "the two-unit library's C ABI does not answer on the host"
import ctypes, json, sys
lib = ctypes.CDLL(sys.argv[1])
lib.ucut_describe.restype = ctypes.c_char_p
d = json.loads(lib.ucut_describe())
assert [s["kind"] for s in d["stages"]] == ["gemm", "gemm", "gemm"], d["stages"]
n = ctypes.c_size_t(0)
assert lib.ucut_workspace_size(ctypes.byref(n)) == 0
print("host ABI ok: two stored units, workspace", n.value, "bytes")
PY
fi
# The sm80-API GEMM (3xTF32 on mma.sync): a stored unit over GemmArgs, its epilogue pass in the
# binding (simt.cu). At other shapes only the binding and the ABI compile.
mkdir -p "$out/d" "$out/e"
"$ucutlass" compile "$root/examples/fp32_faithful.ucut" -o "$out/d" -j 2 > "$out/d.log" 2>&1 || {
  cat "$out/d.log"; echo "FAIL: the sm80 compile failed"; exit 1; }
cat "$out/d.log"
units_d=$(cd "$out/d/fp32_faithful.units" && ls ucut_k*.cu 2>/dev/null | sed 's/\.cu$//')
[ "$(echo "$units_d" | grep -c .)" = 1 ] || fail "expected one stored sm80 unit, found: $units_d"
grep -q "CUTLASS 2.x sm80-API GEMM" "$out/d/fp32_faithful.units/$units_d.cu" || fail "the stored unit is not the sm80 GEMM"
grep -q "epilogue<<<" "$out/d/fp32_faithful.units/simt.cu" || fail "the epilogue pass is not in the SIMT unit"
grep -q "constexpr long long M = 1024" "$out/d/fp32_faithful.units/$units_d.cu" && fail "the stored unit holds the shapes"
sed 's/1024, 8192/2048, 4096/g; s/8192, 8192/4096, 4096/; s/f32\[8192\] /f32[4096] /' \
  "$root/examples/fp32_faithful.ucut" > "$out/e/other_shape.ucut"
grep -q "2048, 4096" "$out/e/other_shape.ucut" || fail "the shape edit changed nothing"
"$ucutlass" compile "$out/e/other_shape.ucut" -o "$out/e" -j 2 > "$out/e.log" 2>&1 || {
  cat "$out/e.log"; echo "FAIL: the sm80 compile at other shapes failed"; exit 1; }
cat "$out/e.log"
grep -q "from 3 units (1 from cache)" "$out/e.log" || fail "the sm80 unit was compiled again at other shapes"
nm "$out/e/other_shape.so" | grep -q " ${units_d}_run$" || fail "${units_d}_run is not linked into the library"

# A grouped GEMM: each group's stored unit is in the library (before, the binding called units the
# library did not hold, and the link failed).
mkdir -p "$out/f"
"$ucutlass" compile "$root/examples/grouped_gemm.ucut" -o "$out/f" -j 2 > "$out/f.log" 2>&1 || {
  cat "$out/f.log"; echo "FAIL: the grouped GEMM compile failed"; exit 1; }
units_f=$(cd "$out/f/grouped_gemm.units" && ls ucut_k*.cu | sed 's/\.cu$//')
[ "$(echo "$units_f" | grep -c .)" -ge 1 ] || fail "the grouped GEMM has no stored unit"
for u in $units_f; do nm "$out/f/grouped_gemm.so" | grep -q " ${u}_run$" || fail "${u}_run is not linked into the grouped library"; done
exit $status
