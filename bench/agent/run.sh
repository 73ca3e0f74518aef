#!/usr/bin/env bash
# The LLM agent measured on the GPU machine (docs/agent.md "Measured"): `ucutlass optimize
# --strategy llm|hybrid` on real problems, evaluated under the contract on the GPU, against
# ucutlass-fake-llm serving scripted replies over HTTP (no model can run there: docs/agent.md says
# why). The scripted "model" is ours, so the figures measure the agent's machinery (requests,
# repairs, checks, compiles, evaluations, reports, tokens) on real kernels, not a model's skill.
#   UCUT_BIN       ucutlass (default .carry/ucutlass)      UCUT_FAKE_LLM  (default .carry/ucutlass-fake-llm)
#   OUT            where results go (packed into $OUT/agent.tgz)
#   AGENT_MINUTES  time budget per run (default 3)
#   AGENT_CASES    which runs (default "llm hybrid orch")
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
"$root/scripts/carry" --unpack  # the carried binary's libraries arrive packed
BIN="${UCUT_BIN:-$root/.carry/ucutlass}"
FAKE="${UCUT_FAKE_LLM:-$root/.carry/ucutlass-fake-llm}"
out="${AGENT_WORK:-/tmp/ucut-agent}"
minutes="${AGENT_MINUTES:-3}"
mkdir -p "$out"
export PYTHONPATH="$root/python${PYTHONPATH:+:$PYTHONPATH}" UCUTLASS_PYTHON="${UCUTLASS_PYTHON:-python3}"
export UCUTLASS_CUTLASS_DIR="${UCUTLASS_CUTLASS_DIR:-$root/third_party/cutlass-4.2.0}"
export UCUTLASS_CACHE="${UCUTLASS_CACHE:-$out/cache}" PATH="/usr/local/cuda/bin:$PATH"
[ -f "$(dirname "$BIN")/COMMIT" ] && export UCUTLASS_COMMIT="$(cat "$(dirname "$BIN")/COMMIT")"
# name problem script strategy extra-args...
run_case() {
  local name="$1" problem="$2" script="$3" strategy="$4"; shift 4
  rm -f "$out/$name.port"
  "$FAKE" --script "$script" --port-file "$out/$name.port" --log "$out/$name.requests.jsonl" 2> "$out/$name.fake.log" &
  local pid=$!
  for _ in $(seq 100); do [ -s "$out/$name.port" ] && break; sleep 0.1; done
  echo "== $name: $strategy on $problem ($(date -u +%FT%TZ))"
  timeout -s INT -k 30 $((minutes * 60 + 60)) "$BIN" optimize "$problem" --strategy "$strategy" \
    --llm "http://127.0.0.1:$(cat "$out/$name.port")/v1" --model scripted --time-budget "$minutes" \
    --out "$out/$name" --llm-price-in 1 --llm-price-out 4 "$@" > "$out/$name.log" 2>&1
  echo "rc=$?"
  kill $pid 2>/dev/null; wait $pid 2>/dev/null
  tail -n 25 "$out/$name.log"
  sed -n '1,16p' "$out/$name"/*/report.md 2>/dev/null
}
cases="${AGENT_CASES:-llm hybrid orch}"
[[ " $cases " == *" llm "* ]] && run_case llm_min_sub problems/kb2_linear_min_sub.py bench/agent/script_linear_min_sub.json llm \
  --profile kb-v01 --budget 8 --proposals 3 --no-memory
[[ " $cases " == *" hybrid "* ]] && run_case hybrid_min_sub problems/kb2_linear_min_sub.py bench/agent/script_linear_min_sub.json hybrid \
  --profile kb-v01 --budget 10 --proposals 2 --tune 3 --no-memory
# Orchestrated (analyze -> nominate -> triage -> implement -> summarize) with a memory store, so the
# summaries become the memory's lessons (`ucutlass memory list` below shows them).
if [[ " $cases " == *" orch "* ]]; then
  run_case orch_min_sub problems/kb2_linear_min_sub.py bench/agent/script_orchestrated.json llm \
    --profile kb-v01 --budget 6 --proposals 2 --agent-mode orchestrated --db "$out/orch.db"
  "$BIN" memory list --db "$out/orch.db" 2>&1 | head -n 20
fi
[ -n "${OUT:-}" ] && tar czf "$OUT/agent.tgz" -C "$out" --exclude='cache' --exclude='*.so' . 
exit 0
