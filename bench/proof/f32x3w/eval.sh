#!/usr/bin/env bash
# The f32x3w libraries as the tool generates them, under the evaluation contract, beside the best
# kernel run DQ found for the same problem (bench/proof/f32x3w/cands/<problem>.*.ucut), on the GPU
# machine with .carry/ prepared (scripts/carry):
#   bench/proof/f32x3w/eval.sh OUTDIR [PROFILE...]     (default: default kb-v01)
# PROBLEMS="kb2_linear_swish_scale ..." limits it to those problems.
set -uo pipefail
root="$(cd "$(dirname "$0")/../../.." && pwd)"
cd "$root"
out="${1:?usage: eval.sh OUTDIR [PROFILE...]}"
shift
profiles=("$@")
[ ${#profiles[@]} -eq 0 ] && profiles=(default kb-v01)
mkdir -p "$out"
scripts/carry --unpack || exit 1
export UCUTLASS_CUTLASS_DIR="$root/third_party/cutlass-4.2.0" UCUTLASS_HOME="$out/home"
export UCUTLASS_CACHE=/tmp/ucut-x3w-cache PYTHONPATH="$root/python" PATH="/usr/local/cuda/bin:$PATH"
for prob in ${PROBLEMS:-$(ls bench/proof/f32x3w/cands/*.ucut | xargs -n1 basename | cut -d. -f1 | sort -u)}; do
  for prof in "${profiles[@]}"; do
    echo "== $prob, profile $prof"
    UCUTLASS_JOBS=16 timeout 240 .carry/ucutlass eval "problems/$prob.py" bench/proof/f32x3w/cands/"$prob".*.ucut \
      --profile "$prof" --no-compile-baseline --no-store --build-dir /tmp/ucut-x3w-build 2>&1 | tail -n 12
  done
done
