#!/usr/bin/env bash
# One device call of the suite measurements (bench/suite/README.md): run on the GPU machine from
# the repository root, with .carry/ prepared by `bench/suite/call.sh prepare` on the CPU machine.
#   bench/suite/call.sh prepare              CPU: scripts/carry, and the kb zoo into .carry/zoo-kb.tar.xz
#   bench/suite/call.sh kb PROFILE MINUTES   GPU: the evaluation's phases on a 6 GiB problem, then the
#                                            kb* suite under PROFILE (kb-v01 or default) with the zoo
#   bench/suite/call.sh window MINUTES       GPU: the window problems (pools, depthwise) under kb-v01
#   bench/suite/call.sh bf16x3 [KB [DEF]]    GPU: bf16x3's GPU tests, then the matmuls (kb-v01) and
#                                            Linears (default) with it where its tests passed
#   bench/suite/call.sh focus MINUTES [MATCH] GPU: a few problems under both profiles (default first;
#                                            PROFILES="kb-v01" for one)
# TESTS="node ids" (kb, focus): those GPU tests (tests/gpu/run_eval_gpu_tests.sh) run first, in the
# same call, so a change is checked and measured on one machine start.
# A baselines archive from an earlier call (its results.tgz's suite-state.tgz, unpacked to
# .carry/baselines-<gpu>.tgz) is reused when present: eager and torch.compile times do not depend
# on the profile, and a call then spends its minutes on the search. They are keyed by GPU name,
# so an H100's do not serve an H200.
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
what="${1:-}"
case "$what" in
  prepare)
    scripts/carry || exit 1
    # The openings of the kb suite under both profiles, ranked for both GPUs: the top 5 of each
    # problem under kb-v01 (ZOO_TOP), since the breadth tier's second and third attempts are often
    # ranks 4 and 5 (run DN built 50 units outside a top-3 zoo, 50-65 s of nvcc each), and the top 7
    # under the default profile (ZOO_TOP_DEFAULT), whose kb2 Linears try ranks 6 and 7 as attempts
    # 5-7 (run DQ built 28 units outside a top-5 zoo: 4.3 nvcc core-s an attempt). 273 units: on 2
    # cores about 90 minutes from nothing; the store keeps what an earlier run built.
    # The openings with bf16x3 offered (ZOO_BF16X3=1, the default while the search offers it only
    # with UCUTLASS_OFFER_BF16X3=1), and, under the default profile, the GEMM problems' openings
    # without it (top 3): the rung the search climbs to if bf16x3 misses. 319 units at 5 and 5
    # (2026-12-07: about 2 hours on 2 cores from nothing).
    for prof in kb-v01 default; do
      top="${ZOO_TOP:-5}"
      [ "$prof" = default ] && top="${ZOO_TOP_DEFAULT:-7}"
      UCUTLASS_OFFER_BF16X3="${ZOO_BF16X3:-1}" build/ucutlass warmup --suite problems --match 'kb*' \
        --profile "$prof" --gpu h100,h200 --top-k "$top" || exit 1
    done
    if [ "${ZOO_BF16X3:-1}" = 1 ]; then
      UCUTLASS_OFFER_BF16X3=0 build/ucutlass warmup --suite problems --profile default --gpu h100,h200 --top-k 3 \
        --match 'kb2_linear*,kb3_mlp*,kb3_mingpt*,kb1_matmul*,kb1_bmm,kb1_einsum_4d,kb1_sdpa' || exit 1
    fi
    build/ucutlass warmup --export .carry/zoo-kb.tar.xz
    ;;
  kb)
    prof="${2:-kb-v01}" minutes="${3:-8}"
    gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1 | tr ' ' '_')
    echo "== $(date -u +%FT%TZ) $gpu, binary $(cat .carry/COMMIT 2>/dev/null)"
    # What one evaluation of a 6 GiB problem costs, by phase (the checks were 58% of run CS's),
    # with the fused checks off and on (docs/eval-contract.md, "Fused checks"); PHASES=0 skips it
    # (the suite itemizes its own evaluations the same way).
    if [ "${PHASES:-1}" != 0 ]; then
      for fused in 0 1; do
        echo "== eval phases, UCUTLASS_FUSED_CHECKS=$fused"
        UCUTLASS_FUSED_CHECKS=$fused PYTHONPATH=python timeout 120 \
          python3 bench/harness/eval_phases.py problems/kb1_relu.py --profile "$prof" --repeat 2
      done
    fi
    base=".carry/baselines-$gpu.tgz"
    # A warm machine keeps an earlier call's suite folder: its baselines serve this call (they do
    # not depend on the profile), its kernel cache and memory must not (each call starts from the
    # zoo and an empty memory).
    work=".devwork/suite-kb_"
    if [ ! -f "$base" ] && [ -d "$work/cache/baselines" ]; then
      tar czf "/tmp/baselines-$gpu.tgz" -C "$work" ./cache/baselines && base="/tmp/baselines-$gpu.tgz"
    fi
    rm -rf "$work" "${GPU_WORK:-/tmp/ucut-gpu-work}"
    GPU_STEPS="${TESTS:+eval-tests }suite" GPU_TESTS_ONLY="${TESTS:-}" GPU_SUITE_MATCH='kb*' GPU_SUITE_MINUTES="$minutes" GPU_SUITE_ARGS="--profile $prof" \
      GPU_SUITE_ZOO=.carry/zoo-kb.tar.xz UCUTLASS_JOBS=16 \
      GPU_SUITE_BASELINES="$([ -f "$base" ] && echo "$base")" scripts/gpu-check
    rc=$?
    # The kernels' worst stages (the suite report's "Where the time goes", per-stage profiles) in
    # the call's own output too: the archive has them, but a lost archive lost run CT's table.
    sed -n '/^## Where the time goes/,/^## /p' "$work/out/report.md" 2>/dev/null | head -n 40
    exit "$rc"
    ;;
  focus)
    # A short call that checks what changed on a few problems under both profiles, each from the
    # zoo and an empty memory (the default profile first, baselines shared):
    #   bench/suite/call.sh focus MINUTES [MATCH]
    minutes="${2:-3}"
    match="${3:-kb1_matmul_*,kb1_bmm,kb1_einsum_4d,kb1_sdpa,kb1_l1_norm,kb1_hinge_loss,kb1_mse_loss,kb1_layernorm,kb3_relu_self_attention}"
    gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1 | tr ' ' '_')
    echo "== $(date -u +%FT%TZ) $gpu, binary $(cat .carry/COMMIT 2>/dev/null), focus: $match"
    base=".carry/baselines-$gpu.tgz"
    work=".devwork/suite-$(printf '%s' "$match" | tr -c 'A-Za-z0-9' '_')"
    steps="${TESTS:+eval-tests }suite"
    for prof in ${PROFILES:-default kb-v01}; do
      if [ ! -f "$base" ] && [ -d "$work/cache/baselines" ]; then
        tar czf "/tmp/baselines-$gpu.tgz" -C "$work" ./cache/baselines && base="/tmp/baselines-$gpu.tgz"
      fi
      rm -rf "$work"
      GPU_WORK="/tmp/ucut-gpu-work-$prof" GPU_PACK="results-$prof" GPU_STEPS="$steps" GPU_TESTS_ONLY="${TESTS:-}" \
        GPU_SUITE_MATCH="$match" \
        GPU_SUITE_MINUTES="$minutes" GPU_SUITE_ARGS="--profile $prof" GPU_SUITE_ZOO=.carry/zoo-kb.tar.xz \
        UCUTLASS_JOBS=16 GPU_SUITE_BASELINES="$([ -f "$base" ] && echo "$base")" scripts/gpu-check
      steps=suite  # the tests once, before the first profile
    done
    ;;
  bf16x3)
    # bf16x3's first GPU call: its two GPU tests (kb-v01 on a two-input matmul, the default profile
    # on a Linear) and f32x3w's, then kb-v01 on the two-input matmuls with bf16x3 offered when its
    # kb-v01 test passed, then the default profile on three Linears and an MLP when its
    # default-profile test passed (docs/benchmarks.md, "Third CPU-only session"):
    #   bench/suite/call.sh bf16x3 [KB_MINUTES [DEFAULT_MINUTES]]
    t=python/tests/test_worker_gpu.py
    UCUTLASS_OFFER_BF16X3=1 GPU_WORK=/tmp/ucut-gpu-tests GPU_PACK=results-tests GPU_STEPS="env eval-tests" \
      TAIL_LINES=30 GPU_TESTS_ARGS="-n 3" GPU_TESTS_TIMEOUT=200 \
      GPU_TESTS_ONLY="$t::test_bf16x3_passes_kb_v01_on_a_two_input_matmul $t::test_bf16x3_passes_the_default_profile_on_a_linear $t::test_f32x3w_splits_inside_the_main_loop" \
      scripts/gpu-check
    passed() { grep -qE "PASSED.*$1|$1[^ ]* PASSED" /tmp/ucut-gpu-tests/eval-tests.log && echo 1 || echo 0; }
    k=$(passed test_bf16x3_passes_kb_v01) d=$(passed test_bf16x3_passes_the_default)
    echo "== $(date -u +%T) kb-v01 on the two-input matmuls, UCUTLASS_OFFER_BF16X3=$k"
    UCUTLASS_OFFER_BF16X3=$k PROFILES=kb-v01 bash "$root/bench/suite/call.sh" focus "${2:-3}" 'kb1_matmul_*,kb1_bmm,kb1_einsum_4d'
    echo "== $(date -u +%T) the default profile on Linears, UCUTLASS_OFFER_BF16X3=$d"
    UCUTLASS_OFFER_BF16X3=$d PROFILES=default bash "$root/bench/suite/call.sh" focus "${3:-2}" \
      'kb2_linear_bias_relu,kb2_linear_div_gelu,kb2_linear_mish_mish,kb3_mlp_deep_narrow'
    ;;
  window)
    minutes="${2:-2}"
    GPU_STEPS=suite GPU_SUITE_MATCH='cv1_*pool*,cv1_depthwise*' GPU_SUITE_MINUTES="$minutes" \
      GPU_SUITE_ARGS='--profile kb-v01' UCUTLASS_JOBS=16 scripts/gpu-check
    ;;
  *)
    echo "usage: bench/suite/call.sh prepare | kb PROFILE MINUTES | focus MINUTES [MATCH] | window MINUTES | bf16x3 [KB_MIN [DEF_MIN]]" >&2
    exit 2
    ;;
esac
