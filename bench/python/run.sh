#!/usr/bin/env bash
# GPU machine: issue 39's numbers (bench/python/run.py) with the carried binary, the CUTLASS
# headers and a kernel zoo imported into the kernel store the searches use.
#
#   bash bench/python/run.sh OUT [run.py options...]
#
# Environment: UCUT_BIN (default .carry/ucutlass), PY_ZOO (a `ucutlass warmup --export` archive;
# default .carry/zoo-kbcv.tar.xz when it exists), PYTHON (default python3).
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root" || exit 2
out="${1:?usage: run.sh OUT [run.py options]}"
shift
mkdir -p "$out"
"$root/scripts/carry" --unpack  # the carried binary's libraries arrive packed
bin="${UCUT_BIN:-$root/.carry/ucutlass}"
if [ ! -d third_party/cutlass-4.2.0/include ] && [ -f .carry/cutlass.tar.xz ]; then
  mkdir -p third_party && tar xJf .carry/cutlass.tar.xz -C third_party
fi
export UCUTLASS_CUTLASS_DIR="${UCUTLASS_CUTLASS_DIR:-$root/third_party/cutlass-4.2.0}"
export UCUTLASS_CACHE="${UCUTLASS_CACHE:-/tmp/ucut-pybench-cache}"
export UCUTLASS_HOME="${UCUTLASS_HOME:-/tmp/ucut-pybench-home}"
export UCUTLASS_PYTHON="${UCUTLASS_PYTHON:-python3}"
export PYTHONPATH="$root/python${PYTHONPATH:+:$PYTHONPATH}"
export PATH="/usr/local/cuda/bin:$PATH"
[ -f "$(dirname "$bin")/COMMIT" ] && export UCUTLASS_COMMIT="${UCUTLASS_COMMIT:-$(cat "$(dirname "$bin")/COMMIT")}"
zoo="${PY_ZOO:-.carry/zoo-kbcv.tar.xz}"
[ -f "$zoo" ] && "$bin" warmup --import "$zoo" 2>&1 | tail -n 1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader 2>/dev/null | tee "$out/gpu.txt"
echo "commit ${UCUTLASS_COMMIT:-unknown}" | tee -a "$out/gpu.txt"
"${PYTHON:-python3}" bench/python/run.py --out "$out" --binary "$bin" "$@" 2>&1 | tee "$out/log.txt"
rc=${PIPESTATUS[0]}
# The backend's searches (each subgraph's journal, report and problem file, not its libraries or
# weights) as one archive: the device tool does not return files that deep, and a mismatch or a
# slow part is diagnosed from them (run CY's two bf16 mismatches could not be).
[ -d "$out/backend-cache" ] && tar czf "$out/backend-journals.tgz" -C "$out" \
  --exclude='*.so' --exclude='*.pt' --exclude='*.o' --exclude='*.cu' backend-cache 2>/dev/null
exit "$rc"
