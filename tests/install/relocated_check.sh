#!/usr/bin/env bash
# The relocatable install (docs/cli.md, CTest install_relocated): `cmake --install` into a
# temporary prefix, the prefix moved elsewhere (nothing may lean on where it was installed), and
# the installed binary run from a folder outside the source tree:
#   --version            names the runtime headers and the Python package under the moved prefix,
#                        and the CUTLASS folder of $UCUTLASS_CUTLASS_DIR;
#   optimize --no-compile plans a problem .py through the installed Python package;
#   optimize (planning)  honours $UCUTLASS_CUTLASS_DIR: pointed at an empty folder, the candidates'
#                        builds say the headers are missing there (no nvcc runs);
#   compile              builds a SIMT elementwise program with nvcc against the installed
#                        runtime headers (skipped without nvcc).
# Usage: relocated_check.sh BUILD_DIR SOURCE_DIR
set -uo pipefail
build="$1"
src="$2"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
failed=0
fail() { echo "FAIL: $*"; failed=1; }

cmake --install "$build" --prefix "$work/installed" > "$work/install.log" 2>&1 || { cat "$work/install.log"; exit 1; }
mv "$work/installed" "$work/moved"
prefix="$work/moved"
bin="$prefix/bin/ucutlass"
share="$prefix/share/ucutlass"
for f in "$bin" "$share/runtime/simt_common.cuh" "$share/python/ucutlass_torch/extract.py"; do
  [ -e "$f" ] || fail "not installed: $f"
done
mkdir -p "$work/elsewhere" "$work/no-cutlass"
cd "$work/elsewhere" || exit 1
export UCUTLASS_HOME="$work/home" UCUTLASS_CACHE="$work/cache" UCUTLASS_STORE="$work/store.db" UCUTLASS_NO_GPU=1
export UCUTLASS_PYTHON="${UCUTLASS_PYTHON:-$src/.venv/bin/python}"

version="$(UCUTLASS_CUTLASS_DIR="$work/my-cutlass" "$bin" --version)" || fail "--version exits $?"
grep -qxF "runtime headers: $share/runtime" <<<"$version" || fail "--version does not use the installed runtime headers: $version"
grep -qxF "Python package: $share/python" <<<"$version" || fail "--version does not use the installed Python package: $version"
grep -qxF "CUTLASS headers: $work/my-cutlass" <<<"$version" || fail "--version ignores UCUTLASS_CUTLASS_DIR: $version"

out="$("$bin" optimize "$src/problems/gemm_square_4096.py" --budget 2 --no-compile --no-memory -o "$work/plan" 2>&1)" ||
  fail "optimize --no-compile exits $?: $out"
grep -q "no GPU: nothing was measured" "$work/plan/gemm_square_4096/report.md" 2>/dev/null || fail "no plan written: $out"

if command -v "${UCUTLASS_NVCC:-nvcc}" > /dev/null; then
  out="$(UCUTLASS_CUTLASS_DIR="$work/no-cutlass" "$bin" optimize "$src/tests/golden/lower/linear_bias_gelu.json" \
         --budget 1 --no-memory -o "$work/plan2" 2>&1)"
  msg="CUTLASS headers not found under $work/no-cutlass"
  grep -qF "$msg" <<<"$out" || grep -rqF "$msg" "$work/plan2" 2>/dev/null ||
    fail "optimize ignores UCUTLASS_CUTLASS_DIR: $out"

  cat > "$work/scale.ucut" <<'UCUT'
ucut 1
in  x : f32[1024, 1024]
out y : f32[1024, 1024]
stage y = elementwise { body { y = relu(x) * 2 } }
UCUT
  out="$("$bin" compile "$work/scale.ucut" -o "$work/built" --no-cache 2>&1)" || fail "compile exits $?: $out"
  [ -s "$work/built/scale.so" ] || fail "no kernel library built: $out"
else
  echo "nvcc not found: the two nvcc steps are skipped"
fi
[ $failed = 0 ] && echo "ok: installed into a moved prefix, run from $work/elsewhere"
exit $failed
