# Robustness cases sourced by run.sh (core set): the LLM agent and its client (docs/agent.md).
# Its settings are checked before anything runs or is sent: a missing endpoint or model, an unset
# --llm-key-env variable, a key bound for plain http:// off loopback and every number out of its
# range are usage errors (exit 2, in the option's words); an unwritable --record is the
# environment's (3), as is an endpoint that is never reached; a strict replay that diverges is 1.
agent_run=(--strategy llm --no-compile --no-memory --out "$work/agent")
agent_dead=(--llm http://127.0.0.1:9/v1 --model m)
agent_problem="$D/gemm_square.json"
expect 2 "no LLM endpoint: pass --llm URL or set OPENAI_BASE_URL" -- env -u OPENAI_BASE_URL "$bin" optimize \
  "$agent_problem" "${agent_run[@]}"
expect 2 "no LLM endpoint" -- env -u OPENAI_BASE_URL "$bin" bench "$root/problems" --match act_relu "${agent_run[@]}"
expect 2 "no LLM model named: pass --model NAME" -- env -u UCUTLASS_LLM_MODEL -u OPENAI_MODEL "$bin" optimize \
  "$agent_problem" --llm http://127.0.0.1:9/v1 "${agent_run[@]}"
# A named key variable that is unset is an error, never a fallback to $OPENAI_API_KEY.
expect 2 "--llm-key-env UCUT_NO_SUCH_KEY: the variable UCUT_NO_SUCH_KEY is not set" -- env -u UCUT_NO_SUCH_KEY \
  OPENAI_API_KEY=sk-robust "$bin" optimize "$agent_problem" "${agent_dead[@]}" --llm-key-env UCUT_NO_SUCH_KEY "${agent_run[@]}"
expect 2 "refusing to send the API key (\$OPENAI_API_KEY) over plain http:// to '10.1.2.3'" -- env OPENAI_API_KEY=sk-robust \
  "$bin" optimize "$agent_problem" --llm http://10.1.2.3:8000/v1 --model m "${agent_run[@]}"
# Every numeric option in its own words (CLI11's range printed 300 digits for --proposals 0).
for bad in "--proposals 0:must be a whole number >= 1, not 0" "--beam 0:must be a whole number >= 1, not 0" \
           "--tune 0:must be a whole number >= 1, not 0" "--repairs -1:must be a whole number >= 0, not -1" \
           "--llm-timeout 0:must be more than 0 seconds (there is no 'no timeout'), not 0" \
           "--llm-timeout -5:must be more than 0 seconds (there is no 'no timeout'), not -5" \
           "--llm-price-in -1:must be a price >= 0 (USD per million tokens), not -1" \
           "--llm-price-out -0.5:must be a price >= 0 (USD per million tokens), not -0.5" \
           "--llm-temperature 3:must be between 0 and 2, not 3" "--llm-max-tokens 0:must be a whole number >= 1, not 0" \
           "--llm-retries -1:must be a whole number >= 0, not -1" \
           "--llm-tokens -5:must be a whole number >= 0 (0: no budget), not -5" \
           "--llm-suite-tokens -1:must be a whole number >= 0 (0: no budget), not -1" \
           "--llm-retry-after-max -1:must be 0 seconds or more, not -1" "--proposals two:must be a whole number >= 1, not 'two'"; do
  opt="${bad%%:*}"
  # shellcheck disable=SC2086
  expect 2 "${opt%% *}: ${bad#*:}" -- "$bin" optimize "$agent_problem" "${agent_dead[@]}" $opt "${agent_run[@]}"
done
expect 2 "--proposals: must be a whole number >= 1, not 0" -- "$bin" bench "$root/problems" --match act_relu \
  "${agent_dead[@]}" --proposals 0 "${agent_run[@]}"
expect 2 "--replay $work/no-such-cassette.jsonl: no such cassette" -- "$bin" optimize "$agent_problem" \
  --replay "$work/no-such-cassette.jsonl" "${agent_run[@]}"
touch "$work/agent-a-file"
expect 3 "cannot write the LLM cassette '$work/agent-a-file/c.jsonl'" -- "$bin" optimize "$agent_problem" "${agent_dead[@]}" \
  --record "$work/agent-a-file/c.jsonl" "${agent_run[@]}"
# A model never reached: what was measured stays, stderr says why, and the exit code is 3.
expect 3 "error: gemm_square: the model was never reached, so it proposed nothing" -- "$bin" optimize "$agent_problem" \
  "${agent_dead[@]}" --llm-retries 0 "${agent_run[@]}"
# A strict replay that diverges at once: 1, with the divergence; a loose one that runs out: 0, said.
printf '%s\n' '{"n": 0, "purpose": "propose", "request_hash": "0000", "messages": [], "reply": {"content": "no program"}}' \
  > "$work/agent-cassette.jsonl"
expect 1 "error: gemm_square: replay diverged at exchange 0 (purpose propose)" -- "$bin" optimize "$agent_problem" \
  --replay "$work/agent-cassette.jsonl" --replay-strict "${agent_run[@]}"
expect 0 "note: gemm_square: the replay ended after 1 reply" -- "$bin" optimize "$agent_problem" \
  --replay "$work/agent-cassette.jsonl" "${agent_run[@]}"
# A suite without a GPU is planned with the built-in ranking: said, not silent.
expect 0 "the model is never asked" -- "$bin" bench "$here/problems" --match syntax_error "${agent_dead[@]}" \
  --strategy llm --no-compile --no-memory --out "$work/agent-bench"
