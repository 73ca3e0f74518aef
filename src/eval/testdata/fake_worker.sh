#!/bin/sh
# A stand-in for `python -m ucutlass_torch.worker` in the C++ tests: speaks the JSON-lines protocol
# and misbehaves on request, chosen by the library path in an evaluate request:
#   *ok.so: a passing evaluation; *mismatch.so: a wrong result; *hang.so: never answers;
#   *crash.so: dies by SIGSEGV; *fatal.so: answers launch_error with fatal=true and exits;
#   *noise.so: answers with a line that is not JSON.
# A problem path containing "huge" loads with a memory plan that does not fit: every evaluate is
# then refused (launch_error, phase memory) and baseline answers an error, as the real worker does.
# $FAKE_WORKER_GPU, when set, is the GPU name ping reports ("cpu": a worker without a GPU).
# Every start appends a line to $FAKE_WORKER_LOG so tests can count restarts.
[ -n "$FAKE_WORKER_LOG" ] && echo "start $$ gpu=${CUDA_VISIBLE_DEVICES:-}" >> "$FAKE_WORKER_LOG"
echo "fake worker starting" >&2
huge=""
refusal="does not fit in GPU memory: an evaluation under the contract needs about 160.5 GiB of GPU memory (inputs 2 x 40.0 GiB, candidate outputs 40.0 GiB, reference outputs or eager forward 40.0 GiB, parameter copies 0 MiB, L2 flush 128 MiB, compare chunks 384 MiB) beyond the model, and 139.0 GiB of 140.0 GiB is free; free the GPU of other processes, use one with more memory, or make get_inputs() smaller"
while IFS= read -r line; do
  id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9]*\).*/\1/p')
  cmd=$(printf '%s' "$line" | sed -n 's/.*"cmd":"\([a-z_]*\)".*/\1/p')
  so=$(printf '%s' "$line" | sed -n 's/.*"so":"\([^"]*\)".*/\1/p')
  case "$cmd" in
    ping) echo "{\"id\":$id,\"status\":\"ok\",\"env\":{\"gpu\":\"${FAKE_WORKER_GPU:-Fake H200}\",\"torch\":\"2.11.0\",\"cuda\":\"13.0\",\"driver\":\"580.1\",\"sm_clock_mhz\":\"1980\",\"pid\":$$}}" ;;
    load_problem)
      case "$line" in
        *missing*) echo "{\"id\":$id,\"status\":\"error\",\"error\":\"missing.py: error: no such file\"}" ;;
        *huge*) huge=1; echo "{\"id\":$id,\"status\":\"ok\",\"problem\":{\"name\":\"huge\",\"source_sha256\":\"def456\",\"memory\":{\"fits\":false,\"message\":\"$refusal\"}}}" ;;
        *kept_*) echo "{\"id\":$id,\"status\":\"ok\",\"problem\":{\"name\":\"fake\",\"source_sha256\":\"abc123\",\"kept\":true,\"outputs\":[{\"shape\":[4],\"dtype\":\"f32\"}]}}" ;;
        *) echo "{\"id\":$id,\"status\":\"ok\",\"problem\":{\"name\":\"fake\",\"source_sha256\":\"abc123\",\"outputs\":[{\"shape\":[4],\"dtype\":\"f32\"}]}}" ;;
      esac ;;
    baseline) [ -n "$huge" ] && { echo "{\"id\":$id,\"status\":\"error\",\"error\":\"$refusal\"}"; continue; }
      # only the modes asked for (eager 2 ms, torch.compile 1 ms); each is logged
      eager="\"eager\":{\"mode\":\"eager\",\"timing\":{\"median_ms\":2.0}}"
      comp="\"compile\":{\"mode\":\"compile\",\"timing\":{\"median_ms\":1.0}}"
      case "$line" in
        *'"modes":["eager"]'*) b="$eager"; m="eager" ;;
        *'"modes":["compile"]'*) b="$comp"; m="compile" ;;
        *) b="$eager,$comp"; m="eager compile" ;;
      esac
      # cached_only: torch.compile's answered from the "cache" when $FAKE_WORKER_CACHED_COMPILE is set
      case "$line" in
        *'"cached_only":["compile"]'*) [ -n "${FAKE_WORKER_CACHED_COMPILE:-}" ] && b="$b,$comp" ;;
      esac
      [ -n "$FAKE_WORKER_LOG" ] && echo "baseline $m" >> "$FAKE_WORKER_LOG"
      echo "{\"id\":$id,\"status\":\"ok\",\"baselines\":{$b}}" ;;
    evaluate)
      [ -n "$huge" ] && { echo "{\"id\":$id,\"status\":\"ok\",\"fatal\":false,\"result\":{\"verdict\":\"launch_error\",\"phase\":\"memory\",\"error\":\"$refusal\",\"correctness\":null,\"timing\":null,\"seconds\":{\"total\":0.001}}}"; continue; }
      case "$so" in
        *ok.so) echo "{\"id\":$id,\"status\":\"ok\",\"fatal\":false,\"result\":{\"verdict\":\"ok\",\"phase\":\"done\",\"error\":\"\",\"kernel\":{\"program_hash\":\"ph\",\"cutlass\":\"4.2.0\",\"stages\":[{\"name\":\"s0\",\"config\":\"cfg_a\"}]},\"correctness\":{\"passed\":true,\"trials\":[{},{},{},{},{},{}],\"max_abs\":1e-6,\"max_rel\":2e-6,\"worst_output\":0,\"worst_index\":[1],\"deterministic\":true,\"degenerate\":false,\"degenerate_reason\":\"\",\"rescaled_trial\":\"kept\",\"recheck\":{\"passed\":true}},\"timing\":{\"median_ms\":0.5,\"mean_ms\":0.51,\"p20_ms\":0.49,\"p80_ms\":0.52,\"min_ms\":0.48,\"max_ms\":0.6,\"reps\":30,\"samples_ms\":[0.5,0.5],\"host_ms_per_rep\":0.55,\"timing_suspect\":false,\"l2_flush_bytes\":125829120},\"seconds\":{\"total\":0.7}}}" ;;
        *mismatch.so) echo "{\"id\":$id,\"status\":\"ok\",\"fatal\":false,\"result\":{\"verdict\":\"mismatch\",\"phase\":\"correctness\",\"error\":\"trial 0: 12 of 4096 elements outside\",\"correctness\":{\"passed\":false,\"max_abs\":0.001},\"timing\":null,\"seconds\":{\"total\":0.2}}}" ;;
        *hang.so) sleep 600 ;;
        *crash.so) echo "Segmentation fault in fake kernel" >&2; kill -SEGV $$ ;;
        *fatal.so) echo "{\"id\":$id,\"status\":\"ok\",\"fatal\":true,\"result\":{\"verdict\":\"launch_error\",\"phase\":\"correctness\",\"error\":\"CUDA error: an illegal memory access was encountered\"}}"; exit 4 ;;
        *noise.so) echo "this is not json" ;;
        *) echo "{\"id\":$id,\"status\":\"error\",\"error\":\"no such kernel\"}" ;;
      esac ;;
    shutdown) echo "{\"id\":$id,\"status\":\"ok\"}"; exit 0 ;;
    *) echo "{\"id\":$id,\"status\":\"error\",\"error\":\"unknown cmd\"}" ;;
  esac
done
