#!/usr/bin/env bash
# Run the f32x3w benchmark on the GPU machine and collect its table.
#
#   bench/proof/f32x3w/run.sh OUTDIR [f32x3w_bench options...]
#   e.g. bench/proof/f32x3w/run.sh "$OUT" --shapes 4096x4096x4096 --kinds linear --reps 10
#
# Writes OUTDIR/table.md (every row, grouped by shape and kind), OUTDIR/rows.jsonl (the same rows
# as JSON lines) and OUTDIR/log.txt (the programs' diagnostics). Three files only: the device tool
# brings back at most 8 from $OUT.
#
# Each variant runs in its own process (ISOLATE=0: all in one), so a kernel that breaks the CUDA
# context (an illegal address, say) costs only its own rows. Then, where python3 has torch with
# CUDA, torch_rows.py adds PyTorch's fp32 default (torch.mm and F.linear, TF32 off) on the same
# shapes, inputs and timing method (TORCH=0 skips it).
#
# The binary is bench/proof/f32x3w/build/f32x3w_bench (F32X3W_BIN overrides). The build folder is
# ignored by git, so name it in the device tool's carry list; without it, and with nvcc at hand,
# this script builds it first.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:?usage: run.sh OUTDIR [f32x3w_bench options...]}"
shift
mkdir -p "$out"
out="$(cd "$out" && pwd)"
bin="${F32X3W_BIN:-$here/build/f32x3w_bench}"
if [ ! -x "$bin" ]; then
  if command -v "${NVCC:-nvcc}" > /dev/null; then
    "$here/build.sh" || exit 1
  else
    echo "run.sh: no $bin and no nvcc; build it with build.sh and carry bench/proof/f32x3w/build" >&2
    exit 2
  fi
fi

# Each process writes its rows to a scratch folder; after each one they are appended to
# OUTDIR/rows.jsonl and table.md is rebuilt, so a run cut short (the device tool's time limit)
# still leaves every finished process's rows in OUTDIR.
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
log="$out/log.txt"
: > "$log"
: > "$out/rows.jsonl"
: > "$out/table.md"
command -v nvidia-smi > /dev/null &&
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader >> "$log" 2>&1

# Sorted table from the JSON rows so far; without python3, the markdown pieces one after another.
rebuild_table() {
  if command -v python3 > /dev/null; then
    python3 "$here/table.py" "$out/rows.jsonl" > "$out/table.md"
  else
    local first=1 f
    for f in "$work"/*.md; do
      if [ "$first" = 1 ]; then cat "$f"; first=0; else tail -n +3 "$f"; fi
    done > "$out/table.md"
  fi
}

# Run one process: its rows shown live, its diagnostics on stderr and in the log. PROC_TIMEOUT
# (seconds, 0 = none) is a backstop for a process stuck outside the benchmark's own --timeout.
run_piece() {  # NAME COMMAND...
  local name="$1" rc
  shift
  echo "== ${*##*/}" | tee -a "$log" >&2
  timeout -k 10 "$proc_timeout" "$@" --json "$work/$name.jsonl" 2> >(tee -a "$log" >&2) | tee "$work/$name.md"
  rc=${PIPESTATUS[0]}
  [ "$rc" -ne 0 ] && echo "run.sh: exit status $rc" | tee -a "$log" >&2
  [ -f "$work/$name.jsonl" ] && cat "$work/$name.jsonl" >> "$out/rows.jsonl"
  rebuild_table
}

# --list honours a --variants in the options, so the caller can still choose variants.
mapfile -t variants < <("$bin" "$@" --list)
[ "${#variants[@]}" -gt 0 ] || { echo "run.sh: the benchmark lists no variants" >&2; exit 2; }
if [ "${ISOLATE:-1}" = 0 ]; then
  groups=("$(IFS=,; echo "${variants[*]}")")
  proc_timeout="${PROC_TIMEOUT:-0}"
else
  groups=("${variants[@]}")
  proc_timeout="${PROC_TIMEOUT:-300}"
fi

shopt -s nullglob
i=0
for g in "${groups[@]}"; do
  i=$((i + 1))
  # The later --variants wins over one in "$@"; piece names sort in run order.
  run_piece "$(printf %03d "$i")" "$bin" "$@" --variants "$g"
done

has_cuda_torch='import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)'
if [ "${TORCH:-1}" != 0 ] && python3 -c "$has_cuda_torch" 2> /dev/null; then
  run_piece torch python3 "$here/torch_rows.py" "$@"
else
  echo "== no python3 with CUDA torch (or TORCH=0): no PyTorch rows" | tee -a "$log" >&2
fi

echo >&2
cat "$out/table.md"
