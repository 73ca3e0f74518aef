#!/usr/bin/env bash
# GPU machine: runs bench/conv/measure.py into OUT within a time limit, resuming after a shape
# whose CUDA error or crash ended the process (measure.py then skips that shape and never loads
# the library that caused it again). Needs the libraries build.sh made, in .carry/conv.
#
#   bash bench/conv/run.sh OUT [measure.py options...]
#
# Environment: CONV_LIBS (default .carry/conv), CONV_TIME_LIMIT (seconds for the whole run,
# default 230), PYTHON (default python3).
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root" || exit 2
out="${1:?usage: run.sh OUT [measure.py options]}"
shift
libs="${CONV_LIBS:-.carry/conv}"
py="${PYTHON:-python3}"
limit="${CONV_TIME_LIMIT:-230}"
mkdir -p "$out"
ls "$libs"/*.so > /dev/null 2>&1 || echo "run.sh: no libraries in $libs: the CUTLASS columns will be n/a (bench/conv/build.sh $libs)"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader 2>/dev/null | tee "$out/gpu.txt"

deadline=$((SECONDS + limit))
resume=()
rc=1
for attempt in 1 2 3 4 5; do
  left=$((deadline - SECONDS))
  if [ "$left" -le 30 ]; then echo "run.sh: out of time before attempt $attempt"; break; fi
  # measure.py starts no new shape after --budget-s; the margin lets the shape in hand finish.
  timeout -k 10 "$left" "$py" bench/conv/measure.py "$out" --libs "$libs" --budget-s $((left - 45)) "${resume[@]}" "$@" \
    2>&1 | tee -a "$out/log.txt"
  rc=${PIPESTATUS[0]}
  [ "$rc" -eq 0 ] && break
  [ "$rc" -eq 2 ] && exit 2  # usage, or no GPU
  [ -f "$out/results.json" ] || { echo "run.sh: measure.py exited $rc before writing anything"; exit "$rc"; }
  echo "run.sh: measure.py exited $rc (attempt $attempt); resuming after the shape it was measuring" | tee -a "$out/log.txt"
  resume=(--resume)
done
# The table from whatever results.json holds (complete or not).
[ -f "$out/results.json" ] && "$py" bench/conv/measure.py "$out" --table-only > /dev/null
echo "run.sh: results in $out/results.json and $out/table.md (measure.py rc=$rc)"
exit "$rc"
