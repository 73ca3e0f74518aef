#!/usr/bin/env bash
# CPU check of the eval/baseline/export commands' input handling (CTest eval_cli, label eval):
# every bad invocation exits with the documented code and a message naming the problem, and
# without a GPU eval and baseline refuse at once and store nothing.
# Usage: eval_cli_check.sh path/to/ucutlass
set -uo pipefail
bin="$1"
root="$(cd "$(dirname "$0")/../.." && pwd)"
prob="$root/tests/gpu/problems/affine_small.py"
fail=0
expect() {  # expected-rc expected-text -- command...
  local want="$1" text="$2"
  shift 3
  local out rc
  out="$("$@" 2>&1)"
  rc=$?
  if [ "$rc" != "$want" ] || ! grep -qF -- "$text" <<<"$out"; then
    echo "FAIL: $* -> rc $rc (want $want), output:"
    echo "$out" | sed 's/^/    /'
    fail=1
  else
    echo "ok: $*"
  fi
}
expect 2 "no such problem file" -- "$bin" eval /nonexistent/p.py --so x.so --no-store
expect 2 "nothing to evaluate" -- "$bin" eval "$prob" --no-store
expect 2 "no such file" -- "$bin" eval "$prob" --so /nonexistent/k.so --no-store
expect 2 "unknown --profile 'loose'" -- "$bin" eval "$prob" --so "$prob" --profile loose --no-store
expect 2 "at least 5" -- "$bin" eval "$prob" --so "$prob" --trials 3 --no-store
expect 2 "not a GPU index" -- "$bin" eval "$prob" --so "$prob" --gpus 0,x --no-store
expect 2 "exclude each other" -- "$bin" eval "$prob" --so "$prob" --json --csv --no-store
expect 2 "no such problem file" -- "$bin" baseline /nonexistent/p.py
expect 2 "max-autotune" -- "$bin" baseline "$prob" --compile-mode fastest
expect 2 "--kernelbench" -- "$bin" export --so x.so --problem "$prob" -o /tmp/x.py
expect 2 "no such file" -- "$bin" export --so x.so --kernelbench --problem /nonexistent/p.py -o /tmp/x.py
expect 2 "either a .ucut program or --so" -- "$bin" export --kernelbench --problem "$prob" -o /tmp/x.py
# Without a GPU, eval and baseline refuse at once (before compiling or starting a worker: the
# bogus UCUTLASS_PYTHON would fail otherwise) with exit 3 (the environment, docs/cli.md), and store nothing. UCUTLASS_NO_GPU=1
# stands in for a missing GPU everywhere; where nvidia-smi lists none, the plain command is checked too.
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/home" "$tmp/cache"
printf 'not touched\n' > "$tmp/kept.db"
cp "$tmp/kept.db" "$tmp/kept.before"
no_gpu_env=(env UCUTLASS_HOME="$tmp/home" UCUTLASS_CACHE="$tmp/cache" UCUTLASS_PYTHON=/nonexistent/python)
for forced in 1 0; do
  if [ "$forced" = 0 ] && nvidia-smi -L >/dev/null 2>&1; then continue; fi
  run=("${no_gpu_env[@]}" UCUTLASS_NO_GPU="$forced" "$bin")
  expect 3 "ucutlass eval: error: no CUDA GPU" -- "${run[@]}" eval "$prob" --so "$prob"
  expect 3 "nothing was measured or stored" -- "${run[@]}" eval "$prob" --so "$prob" --store "$tmp/kept.db"
  expect 3 "ucutlass baseline: error: no CUDA GPU" -- "${run[@]}" baseline "$prob"
  expect 3 "optimize --plan" -- "${run[@]}" baseline "$prob" --no-compile
done
if [ -n "$(find "$tmp/home" "$tmp/cache" -mindepth 1)" ] || ! cmp -s "$tmp/kept.db" "$tmp/kept.before"; then
  echo "FAIL: a refused eval or baseline wrote a store or a cache entry:"
  ls -laR "$tmp/home" "$tmp/cache"
  fail=1
fi
exit $fail
