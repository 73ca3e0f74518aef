#!/usr/bin/env bash
# CPU check of the eval/baseline/export commands' input handling (CTest eval_cli, label eval):
# every bad invocation exits with the documented code and a message naming the problem.
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
exit $fail
