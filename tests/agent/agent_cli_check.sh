#!/usr/bin/env bash
# The LLM agent end to end on the CPU (planning mode: the analytic model stands in for the GPU)
# against the loopback fake OpenAI server (ucutlass-fake-llm) scripted with what real endpoints
# do: a reply without a program, a good program, a 429, a program that does not check, its repair.
# Then the same session replayed from its cassette with the server gone (--replay --replay-strict):
# the same attempts, bit for bit. Then the failures a user meets: no endpoint configured (a clear
# error naming --llm), an endpoint that does not answer (the search keeps what it measured and the
# report says why the model was asked no more).
#   agent_cli_check.sh UCUTLASS FAKE_LLM WORK
set -euo pipefail
bin="$1"; fake="$2"; work="$3"
rm -rf "$work"; mkdir -p "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }
"$fake" --script tests/agent/script_addmm.json --port-file "$work/port" --log "$work/requests.jsonl" &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.1; done
[ -s "$work/port" ] || fail "the fake server did not start"
port=$(cat "$work/port")
export OPENAI_API_KEY=sk-test-secret-4321
unset OPENAI_BASE_URL UCUTLASS_LLM_MODEL OPENAI_MODEL
common=(--budget 4 --emit-only --no-memory --build-dir "$work/build")
UCUTLASS_NO_GPU=1 "$bin" optimize tests/golden/lower/addmm.json --strategy llm --llm "http://127.0.0.1:$port/v1" \
  --model fake-coder --llm-retries 2 --llm-price-in 1 --llm-price-out 2 "${common[@]}" --out "$work/live" \
  > "$work/live.out" 2> "$work/live.err" || { cat "$work/live.err"; fail "the live run failed"; }
d="$work/live/addmm"
for f in llm-cassette.jsonl agent.jsonl attempts.jsonl report.md report.json best.ucut; do
  test -s "$d/$f" || fail "$d/$f missing"
done
n_llm=$(grep -c '"origin":"llm"' "$d/attempts.jsonl" || true)
[ "$n_llm" -ge 2 ] || { cat "$d/attempts.jsonl"; fail "expected two programs from the model, got $n_llm"; }
grep -q '"origin":"rank"' "$d/attempts.jsonl" || fail "the lowered program was not measured first"
grep -q 'llm agent (flat)' "$d/report.md" || fail "the report does not describe the agent"
grep -q 'repair' "$d/report.md" || fail "the report does not count repairs"
grep -q '"outcome":"unusable"' "$d/agent.jsonl" || fail "the unusable replies were not logged"
grep -q 'nothing was measured' "$d/report.md" || fail "the report does not say nothing was measured"
grep -q '"tokens_in"' "$d/report.json" || fail "report.json has no token counts"
! grep -rq 'sk-test-secret-4321' "$work/live" || fail "the API key leaked into the output folder"
grep -q '"model": *"fake-coder"' "$work/requests.jsonl" || grep -q '"model":"fake-coder"' "$work/requests.jsonl" ||
  fail "the model name was not sent"
kill $pid; wait $pid 2>/dev/null || true
# Replay without any server: the same proposals in the same order.
UCUTLASS_NO_GPU=1 "$bin" optimize tests/golden/lower/addmm.json --strategy llm --replay "$d/llm-cassette.jsonl" \
  --replay-strict "${common[@]}" --out "$work/replay" > "$work/replay.out" 2> "$work/replay.err" ||
  { cat "$work/replay.err"; fail "the replay failed"; }
hashes() { grep -o '"hash":"[0-9a-f]*"' "$1" | tr '\n' ' '; }
[ "$(hashes "$d/attempts.jsonl")" = "$(hashes "$work/replay/addmm/attempts.jsonl")" ] ||
  fail "the replay proposed different programs"
# No endpoint at all: a clear error before anything runs.
if UCUTLASS_NO_GPU=1 "$bin" optimize tests/golden/lower/addmm.json --strategy llm "${common[@]}" --out "$work/none" \
   2> "$work/none.err"; then fail "a run without an endpoint succeeded"; fi
grep -q -- '--llm' "$work/none.err" || { cat "$work/none.err"; fail "the error does not name --llm"; }
# An endpoint that refuses connections: what was measured stays, the report says why it stopped.
UCUTLASS_NO_GPU=1 "$bin" optimize tests/golden/lower/addmm.json --strategy llm --llm http://127.0.0.1:9/v1 \
  --model m --llm-retries 0 "${common[@]}" --out "$work/down" > /dev/null 2> "$work/down.err" ||
  { cat "$work/down.err"; fail "a dead endpoint failed the run"; }
grep -q 'the LLM endpoint failed' "$work/down/addmm/report.md" || fail "the report does not say the endpoint failed"
test -s "$work/down/addmm/best.ucut" || fail "the measured seed was lost"
echo "agent CLI checks passed"
