#!/usr/bin/env bash
# The LLM agent end to end on the CPU (planning mode: the analytic model stands in for the GPU)
# against the loopback fake OpenAI server (ucutlass-fake-llm) scripted with what real endpoints
# do: a reply without a program, a good program, a 429, a program that does not check, its repair.
# Then the same session replayed from its cassette with the server gone (--replay --replay-strict):
# the same attempts, bit for bit; `ucutlass prompt --show` prints exactly the run's first request.
# Then the failures a user meets: no endpoint configured (a clear error naming --llm, exit 2), a
# misspelt --llm-key-env or an unwritable --record (refused before any request reaches the
# server), a strict replay that diverges (exit 1, the divergence on stderr), an endpoint that does
# not answer (the search keeps what it measured, the report and stderr say why, exit 3).
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
grep -q 'waiting 0 s before retry 1 of 2' "$work/live.err" || { cat "$work/live.err"; fail "the 429's wait was not said"; }
grep -q 'llm: addmm: [0-9]* requests, [0-9]* replies, 2 programs from the model' "$work/live.err" ||
  { cat "$work/live.err"; fail "the agent's summary line is missing"; }
# `prompt --show` is the run's first request, word for word (times estimated, as the run's).
UCUTLASS_NO_GPU=1 "$bin" prompt tests/golden/lower/addmm.json --show --out "$work/prompt" > "$work/prompt.out"
python3 - "$d/llm-cassette.jsonl" "$work/prompt.out" <<'PY' || fail "prompt --show differs from the first request sent"
import json, sys
first = json.loads(open(sys.argv[1]).readline())
want = "".join("=== %s ===\n%s\n" % (m["role"], m["content"]) for m in first["messages"])
sys.exit(0 if open(sys.argv[2]).read().startswith(want) else 1)
PY
grep -q 'measured 0 ms' "$work/prompt.out" && fail "prompt --show says 'measured 0 ms'"
# Refused before any request: a misspelt key variable (OPENAI_API_KEY is set, and must not be
# sent instead) and a cassette path that cannot be written.
sent=$(wc -l < "$work/requests.jsonl")
rc=0; UCUTLASS_NO_GPU=1 "$bin" optimize tests/golden/lower/addmm.json --strategy llm --llm "http://127.0.0.1:$port/v1" \
  --model fake-coder --llm-key-env OPENAI_API_KEYY "${common[@]}" --out "$work/misspelt" 2> "$work/misspelt.err" || rc=$?
[ "$rc" = 2 ] || { cat "$work/misspelt.err"; fail "a misspelt --llm-key-env exited $rc, not 2"; }
grep -q 'the variable OPENAI_API_KEYY is not set' "$work/misspelt.err" || fail "the unset variable is not named"
touch "$work/a-file"
rc=0; UCUTLASS_NO_GPU=1 "$bin" optimize tests/golden/lower/addmm.json --strategy llm --llm "http://127.0.0.1:$port/v1" \
  --model fake-coder --record "$work/a-file/cassette.jsonl" "${common[@]}" --out "$work/unwritable" 2> "$work/unwritable.err" || rc=$?
[ "$rc" = 3 ] || { cat "$work/unwritable.err"; fail "an unwritable --record exited $rc, not 3"; }
[ "$(wc -l < "$work/requests.jsonl")" = "$sent" ] || fail "a refused run sent a request"
kill $pid; wait $pid 2>/dev/null || true
# Replay without any server: the same proposals in the same order.
UCUTLASS_NO_GPU=1 "$bin" optimize tests/golden/lower/addmm.json --strategy llm --replay "$d/llm-cassette.jsonl" \
  --replay-strict "${common[@]}" --out "$work/replay" > "$work/replay.out" 2> "$work/replay.err" ||
  { cat "$work/replay.err"; fail "the replay failed"; }
hashes() { grep -o '"hash":"[0-9a-f]*"' "$1" | tr '\n' ' '; }
[ "$(hashes "$d/attempts.jsonl")" = "$(hashes "$work/replay/addmm/attempts.jsonl")" ] ||
  fail "the replay proposed different programs"
# A strict replay whose requests differ from the recording's (another temperature): exit 1, the
# first divergence on stderr.
rc=0; UCUTLASS_NO_GPU=1 "$bin" optimize tests/golden/lower/addmm.json --strategy llm --replay "$d/llm-cassette.jsonl" \
  --replay-strict --llm-temperature 0.7 "${common[@]}" --out "$work/diverged" > /dev/null 2> "$work/diverged.err" || rc=$?
[ "$rc" = 1 ] || { cat "$work/diverged.err"; fail "a diverged strict replay exited $rc, not 1"; }
grep -q 'error: addmm: replay diverged at exchange 0 (purpose propose)' "$work/diverged.err" ||
  { cat "$work/diverged.err"; fail "the divergence is not on stderr"; }
# No endpoint at all: a usage error before anything runs.
rc=0; UCUTLASS_NO_GPU=1 "$bin" optimize tests/golden/lower/addmm.json --strategy llm "${common[@]}" --out "$work/none" \
   2> "$work/none.err" || rc=$?
[ "$rc" = 2 ] || { cat "$work/none.err"; fail "a run without an endpoint exited $rc, not 2"; }
grep -q -- '--llm' "$work/none.err" || { cat "$work/none.err"; fail "the error does not name --llm"; }
# An endpoint that refuses connections: what was measured stays and the report says why the model
# was asked no more; stderr says the model was never reached, and the exit code is 3.
rc=0; UCUTLASS_NO_GPU=1 "$bin" optimize tests/golden/lower/addmm.json --strategy llm --llm http://127.0.0.1:9/v1 \
  --model m --llm-retries 0 "${common[@]}" --out "$work/down" > /dev/null 2> "$work/down.err" || rc=$?
[ "$rc" = 3 ] || { cat "$work/down.err"; fail "a dead endpoint exited $rc, not 3"; }
grep -q 'error: addmm: the model was never reached, so it proposed nothing' "$work/down.err" ||
  { cat "$work/down.err"; fail "stderr does not say the model was never reached"; }
grep -q 'is the server running' "$work/down.err" || fail "stderr has no hint"
grep -q 'the LLM endpoint failed' "$work/down/addmm/report.md" || fail "the report does not say the endpoint failed"
test -s "$work/down/addmm/best.ucut" || fail "the measured seed was lost"
echo "agent CLI checks passed"
