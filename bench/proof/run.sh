#!/usr/bin/env bash
# Proof tables (docs/benchmarks.md): each SET folder under bench/proof holds KernelBench-format
# problems (NAME.py, else problems/NAME.py from the suite), μCUTLASS programs for them (NAME.ucut or NAME.VARIANT.ucut) and, where the
# same-precision PyTorch equivalent differs from the problem's own eager code, a twin problem
# (NAME.twin.py) whose eager time is that equivalent (e.g. torch's fused cuBLASLt epilogue).
#
#   bench/proof/run.sh compile SET        # CPU machine: build every program's .so (cached)
#   bench/proof/run.sh measure SET        # GPU machine: eval every .so, time every twin, print the table
#
# Environment: UCUT_BIN (default build/ucutlass, else .carry/ucutlass), PROOF_LIBS (where the .so
# files go, default .carry/proof), OUT (results folder, default /tmp/ucut-proof), PROOF_ONLY (a
# regex of program stems to compile or measure), PROOF_POLICY (default tf32; rows named f32x3_*/f32_* use exact).
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
mode="${1:?usage: run.sh compile|measure SET}"
set_name="${2:?usage: run.sh compile|measure SET}"
dir="bench/proof/$set_name"
[ -d "$dir" ] || { echo "run.sh: no proof set '$dir'" >&2; exit 2; }
BIN="${UCUT_BIN:-}"
if [ -z "$BIN" ]; then
  if [ -x build/ucutlass ]; then BIN=build/ucutlass; else BIN=.carry/ucutlass; fi
fi
libs="${PROOF_LIBS:-.carry/proof}/$set_name"
out="${OUT:-/tmp/ucut-proof}/$set_name"
mkdir -p "$libs" "$out"

case "$mode" in
compile)
  ls "$dir"/*.ucut | while read -r f; do
    stem=$(basename "$f" .ucut)
    [ -n "${PROOF_ONLY:-}" ] && ! [[ "$stem" =~ $PROOF_ONLY ]] && continue
    echo "$f"
  done | xargs -P "${PROOF_JOBS:-2}" -I{} sh -c '
    stem=$(basename "$1" .ucut)
    if ls "$2/$stem"/*.so > /dev/null 2>&1 && [ "$2/$stem" -nt "$1" ]; then echo "have   $stem"; exit 0; fi
    # strip: the libraries travel to the GPU machine (its carried tree is capped); the C ABI is dynamic symbols
    if "$0" compile "$1" -o "$2/$stem" -j 1 > "$2/$stem.log" 2>&1 && strip --strip-unneeded "$2/$stem"/*.so; then echo "ok     $stem"; else echo "FAILED $stem (see $2/$stem.log)"; tail -5 "$2/$stem.log"; fi
  ' "$BIN" {} "$libs"
  ;;
measure)
  export PYTHONPATH="$root/python${PYTHONPATH:+:$PYTHONPATH}"
  export UCUTLASS_PYTHON="${UCUTLASS_PYTHON:-python3}"
  # One `ucutlass eval` per problem (one worker start), all of its programs' libraries at once.
  declare -A libs_of=()
  order=()
  for prog in "$dir"/*.ucut; do
    stem=$(basename "$prog" .ucut)
    [ -n "${PROOF_ONLY:-}" ] && ! [[ "$stem" =~ $PROOF_ONLY ]] && continue
    so=$(ls "$libs/$stem"/*.so 2>/dev/null | head -1)
    if [ -z "$so" ]; then echo "$stem: no library in $libs/$stem (run 'run.sh compile $set_name' first)"; continue; fi
    name=${stem%%.*}
    [ -z "${libs_of[$name]:-}" ] && order+=("$name")
    libs_of[$name]="${libs_of[$name]:-} --so $so"
  done
  for name in "${order[@]}"; do
    problem="$dir/$name.py"
    [ -f "$problem" ] || problem="problems/$name.py"   # a set may measure suite problems
    policy="${PROOF_POLICY:-tf32}"
    case "$name" in f32x3_*|f32_*) policy=exact ;; esac
    # NAME.profile names a tolerance profile other than the default (the table says which).
    profile=default
    [ -f "$dir/$name.profile" ] && profile=$(cat "$dir/$name.profile")
    start=$(date +%s%N)
    # shellcheck disable=SC2086
    "$BIN" eval "$problem" ${libs_of[$name]} --policy "$policy" --profile "$profile" --no-compile-baseline --json --no-store \
      --timeout "${PROOF_TIMEOUT:-60}" \
      > "$out/$name.records.json" 2> "$out/$name.eval.err"
    rc=$?
    end=$(date +%s%N)
    echo "$name: eval rc=$rc, wall $(( (end - start) / 1000000 )) ms for$(echo "${libs_of[$name]}" | grep -o -- '--so' | wc -l) libraries"
  done
  for twin in "$dir"/*.twin.py; do
    [ -f "$twin" ] || continue
    stem=$(basename "$twin" .twin.py)
    [ -n "${PROOF_ONLY:-}" ] && ! [[ "$stem" =~ $PROOF_ONLY ]] && continue
    "$BIN" baseline "$twin" --no-compile --json > "$out/$stem.twin.json" 2> "$out/$stem.twin.err"
    echo "$stem: twin baseline rc=$?"
  done
  python3 -m ucutlass_torch.proof_table "$dir" "$out" | tee "$out/table.md"
  ;;
*) echo "run.sh: unknown mode '$mode' (compile or measure)" >&2; exit 2 ;;
esac
