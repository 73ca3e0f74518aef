#!/usr/bin/env bash
# Malformed input of every class through the ucutlass binary, without a GPU (CTest robustness and
# robustness_python): problem files, μCUTLASS programs, memory files and command-line misuse. For
# each case: the exit code of docs/cli.md's table, the message's key text, and the result store
# unchanged (its SHA-256 before and after; no case may write it). Cases that extract a problem
# need the venv with PyTorch (the `python` set).
# Usage: run.sh path/to/ucutlass core|python
set -uo pipefail
bin="$1"
set_name="$2"
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export UCUTLASS_HOME="$work/home" UCUTLASS_CACHE="$work/cache" UCUTLASS_NO_GPU=1
export UCUTLASS_STORE="$work/store.db"
unset UCUTLASS_GPU UCUTLASS_POLICY UCUTLASS_PROFILE
fail=0
n=0

# A store with records in it, so "unchanged" means something.
"$bin" memory import "$here/memory/good.json" > /dev/null || { echo "FAIL: cannot seed the store"; exit 1; }
store_hash() { sha256sum "$UCUTLASS_STORE" | cut -d' ' -f1; }
before="$(store_hash)"

# expect RC TEXT -- command...: the exit code, TEXT somewhere in stdout+stderr, the store unchanged.
expect() {
  local want="$1" text="$2"
  shift 3
  local out rc
  out="$("$@" 2>&1)"
  rc=$?
  n=$((n + 1))
  local why=""
  [ "$rc" = "$want" ] || why="exit $rc, want $want"
  grep -qF -- "$text" <<<"$out" || why="${why:+$why; }no '$text' in the output"
  [ "$(store_hash)" = "$before" ] || why="${why:+$why; }the store changed"
  if [ -n "$why" ]; then
    echo "FAIL: $* -> $why; output:"
    sed 's/^/    /' <<<"$out"
    fail=1
  else
    echo "ok: $*"
  fi
}

# expect_json RC -- command...: stdout is one JSON object whose error.exit_code is RC.
expect_json() {
  local want="$1"
  shift 2
  local out rc
  out="$("$@" 2> /dev/null)"
  rc=$?
  n=$((n + 1))
  if [ "$rc" = "$want" ] && python3 -c 'import json, sys
d = json.load(sys.stdin)
sys.exit(0 if d["ok"] is False and d["error"]["exit_code"] == int(sys.argv[1]) and d["error"]["message"] else 1)' "$want" <<<"$out"; then
    echo "ok: $* (JSON)"
  else
    echo "FAIL: $* -> exit $rc (want $want), stdout not a JSON error:"
    sed 's/^/    /' <<<"$out"
    fail=1
  fi
}

P="$here/programs"
M="$here/memory"
D="$root/tests/data/problems"
if [ "$set_name" = core ]; then
  # μCUTLASS programs: sizes that overflow 64 bits or wrap, bytes that are not UTF-8.
  expect 1 "tensor 'x' has 1.84e+19 elements, more than a tensor may have (2^40)" -- "$bin" check "$P/overflow.ucut"
  expect 1 "tensor 'x' has 1.84e+19 elements" -- "$bin" space "$P/overflow.ucut"
  expect 1 "tensor 'x' has 1.84e+19 elements" -- "$bin" check "$P/wrap.ucut"
  expect 1 "tensor 'x' has 1.84e+19 elements" -- "$bin" compile "$P/wrap.ucut" --emit-only -o "$work/wrap"
  [ ! -e "$work/wrap" ] || { echo "FAIL: compile emitted code for a program that does not check"; fail=1; }
  expect 1 "does not check" -- "$bin" sol "$D/softmax_rows.json" --program "$P/overflow.ucut"
  expect 1 "invalid_utf8.ucut:2:31: error: the file is not valid UTF-8 (byte 0xff)" -- "$bin" check "$P/invalid_utf8.ucut"
  expect 1 "not valid UTF-8 (byte 0xff)" -- "$bin" check --json "$P/invalid_byte_in_code.ucut"
  out="$("$bin" check --json "$P/invalid_byte_in_code.ucut" 2> /dev/null)"
  python3 -c 'import json, sys; d = json.load(sys.stdin); sys.exit(0 if d["ok"] is False and d["diagnostics"] else 1)' <<<"$out" ||
    { echo "FAIL: check --json on a non-UTF-8 file is not JSON: $out"; fail=1; }
  expect 1 "not valid UTF-8" -- "$bin" fmt "$P/invalid_utf8.ucut"

  # Memory files: every malformed one is refused whole, naming the element.
  expect 1 'wrong_type.json: $.experiences[1].seen: expected a whole number >= 0, found "many"' -- \
    "$bin" memory import "$M/wrong_type.json"
  expect 1 'empty_prior.json: $.priors[1].key: missing (an object)' -- "$bin" memory import "$M/empty_prior.json"
  expect 1 'string_for_array.json: $.experiences: expected an array, found "nope"' -- \
    "$bin" memory import "$M/string_for_array.json"
  expect 1 "truncated.json: not valid JSON: parse error at line" -- "$bin" memory import "$M/truncated.json"
  expect 1 "not a ucutlass memory export" -- "$bin" memory import "$M/not_an_export.json"
  expect 2 "cannot read" -- "$bin" memory import "$work/no-such.json"
  expect 1 "not a ucutlass memory export" -- "$bin" memory import "$M/not_an_export.json" --db "$work/new/x.db"
  [ ! -e "$work/new" ] || { echo "FAIL: a refused import created a store"; fail=1; }
  expect 2 "$work/none/x.db: no result store there" -- "$bin" memory stats --db "$work/none/x.db"
  expect 2 "no result store there" -- "$bin" memory export "$work/out.json" --db "$work/none/x.db"
  [ ! -e "$work/none" ] || { echo "FAIL: a read command created a store"; fail=1; }
  expect 2 "no experience e999" -- "$bin" memory show e999
  expect 0 "experiences: 2" -- "$bin" memory stats

  # Command-line misuse: did-you-mean, arguments in order, one exit code per kind.
  expect 2 "ucutlass: error: unknown command 'chek'; did you mean 'check'?" -- "$bin" chek "$P/wrap.ucut"
  expect 2 "unknown option '--plicy' (did you mean '--policy'?)" -- "$bin" sol "$D/gemm_square.json" --plicy tf32
  expect 2 "unknown option '--bogus'; unexpected argument 'extra'; unknown option '--jsn' (did you mean '--json'?)" -- \
    "$bin" check "$P/wrap.ucut" --bogus extra --jsn
  expect 2 "unknown GPU 'h20'; did you mean 'h200'?" -- "$bin" sol "$D/gemm_square.json" --gpu h20
  # --policy is checked when the command line is read, with the same words in every command.
  expect 2 "unknown precision policy 'tf-32'; did you mean 'tf32'?" -- "$bin" optimize synthetic --policy tf-32 --no-memory --out "$work/policy"
  expect 2 "unknown precision policy 'exakt'; did you mean 'exact'?" -- "$bin" bench synthetic --policy exakt --no-memory --out "$work/policy"
  expect 2 "--strategy: magic not in {builtin,llm,hybrid}" -- "$bin" optimize synthetic --strategy magic --no-memory --out "$work/strategy"
  # GPU workers as Ray actors (docs/scale-out.md): the address, a count for --gpus, a reachable cluster.
  expect 2 "--eval-executor ray needs the cluster's address" -- env -u RAY_ADDRESS "$bin" bench "$root/problems" \
    --match act_relu --eval-executor ray --no-memory --out "$work/ray"
  expect 2 "Ray picks the GPUs, so --gpus is a count" -- "$bin" bench "$root/problems" --match act_relu \
    --eval-executor ray --ray-address 127.0.0.1:1 --gpus 0,2 --no-memory --out "$work/ray"
  expect 2 "--eval-executor: rey not in {local,ray}" -- "$bin" optimize synthetic --eval-executor rey --no-memory --out "$work/ray"
  # The LLM agent: a problem it cannot show a model (its other cases: cases_agent.sh).
  expect 1 "the LLM agent needs a real problem" -- "$bin" optimize synthetic --strategy llm --no-memory --out "$work/strategy"
  expect 2 "is required" -- "$bin" compile "$P/wrap.ucut"
  expect 0 "ucutlass 0.1.0" -- "$bin" --version
  expect 0 "ucutlass 0.1.0" -- "$bin" -V
  for cmd in check fmt space; do
    expect 2 "cannot read '$work/nope.ucut'" -- "$bin" $cmd "$work/nope.ucut"
  done
  expect 2 "cannot read '$work/nope.ucut'" -- "$bin" compile "$work/nope.ucut" -o "$work/c"
  expect 2 "cannot read '$work/nope.json'" -- "$bin" lower "$work/nope.json"
  expect 2 "cannot read '$work/nope.json'" -- "$bin" sol "$work/nope.json"
  expect 2 "$work/nope.py: no such file" -- "$bin" optimize "$work/nope.py" --no-memory
  expect 2 "$work/nope.py: no such file" -- "$bin" optimize "$work/nope.py" --db "$UCUTLASS_STORE"
  expect 2 "no such file or folder" -- "$bin" extract "$work/nope.py"
  expect 2 "no problem .py files found" -- "$bin" bench "$work/nope" --no-memory
  expect 2 "no such problem file" -- "$bin" eval "$work/nope.py" --so x.so --store "$work/other.db"
  expect_json 2 -- "$bin" sol "$work/nope.json" --json
  expect_json 2 -- "$bin" check --json "$work/nope.ucut"
  expect_json 2 -- "$bin" check --json --bogus
  expect_json 2 -- "$bin" sol "$D/gemm_square.json" --json --gpu h20

  # A problem larger than the GPU: said by sol, refused by optimize before ranking anything.
  expect 0 "warning: the problem's tensors (inputs, parameters and outputs) need 206.2 GB" -- \
    "$bin" sol "$D/gemm_too_large.json"
  expect 1 "need 206.2 GB, more than the h200's 141.0 GB of memory" -- \
    "$bin" optimize "$D/gemm_too_large.json" --no-compile --db "$UCUTLASS_STORE" -o "$work/big"

  # Cases kept in files of their own, by area (each uses expect/expect_json above).
  for f in "$here"/cases_*.sh; do
    [ -e "$f" ] || continue
    # shellcheck source=/dev/null
    . "$f"
  done
else
  # Problem files that are not well-formed KernelBench problems: extract, sol and optimize refuse
  # each with the file, the line where there is one, and a hint.
  R="$here/problems"
  expect 1 "syntax_error.py:4: error: syntax error" -- "$bin" extract "$R/syntax_error.py"
  expect 1 "no_model.py: error: missing \`Model\`" -- "$bin" extract "$R/no_model.py"
  expect 1 "get_inputs() raised RuntimeError: no data today" -- "$bin" extract "$R/get_inputs_raises.py"
  expect 1 "get_inputs() returned a int, not a list" -- "$bin" extract "$R/inputs_not_list.py"
  expect 1 "forward returns a non-tensor value at output 0" -- "$bin" extract "$R/non_tensor_output.py"
  expect 1 "syntax error" -- "$bin" sol "$R/syntax_error.py"
  expect 1 "get_inputs() raised RuntimeError" -- "$bin" optimize "$R/get_inputs_raises.py" --no-compile -o "$work/o"
  # A suite's own zoo (ucutlass warmup --suite): the opening's stored units of each problem that
  # extracts; one that does not is left out, named.
  expect 0 "epi_linear_bias_gelu: 3 stored units" -- "$bin" warmup --suite "$root/problems" --match epi_linear_bias_gelu \
    --profile kb-v01 --dry-run
  expect 0 "syntax_error: left out: " -- "$bin" warmup --suite "$R" --match syntax_error --dry-run
  # A suite's report is its work: a problem that fails is a row of it (exit 0).
  expect 0 "no_model: extract_error" -- "$bin" bench "$R" --match no_model --no-compile -o "$work/b" --budget 1
fi
echo "$n cases, store $UCUTLASS_STORE unchanged by every one"
exit $fail
