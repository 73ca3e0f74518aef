# `ucutlass sol` and `ucutlass calibrate` end to end on the hand-written Problem IR fixtures in
# tests/data/problems/ (their FLOP/byte/t_SOL values are hand-computed in src/sol/*_test.cpp).
# UCUTLASS_HOME points at an empty folder so no stored calibration changes the output.
set(sol_fixtures "${CMAKE_SOURCE_DIR}/tests/data/problems")
set(sol_env "UCUTLASS_HOME=${CMAKE_BINARY_DIR}/sol-test-home;UCUTLASS_GPU=;UCUTLASS_POLICY=")

function(ucut_sol_test name regex)
  add_test(NAME ${name} COMMAND $<TARGET_FILE:ucutlass> ${ARGN})
  set_tests_properties(${name} PROPERTIES LABELS "sol" ENVIRONMENT "${sol_env}"
                       PASS_REGULAR_EXPRESSION "${regex}")
endfunction()

# The readable report: hand-computed t_SOL (277.82 us = 2·4096³ / 494.7e12), all three policies.
ucut_sol_test(sol_report_gemm_square
  "exact   164.9 TFLOP/s    833.47 us.*\\* tf32    494.7 TFLOP/s    277.82 us.*<- chosen.*t_SOL = 277.82 us \\(tf32, datasheet peaks, compute-bound\\)"
  sol ${sol_fixtures}/gemm_square.json --gpu h200)
# Memory-bound: 536870912 B / 4.8e12 B/s = 111.85 us; the policy does not matter.
ucut_sol_test(sol_report_softmax "t_SOL = 111.85 us \\(exact, datasheet peaks, memory-bound\\)"
  sol ${sol_fixtures}/softmax_rows.json --policy exact)
# The policy flips the bottleneck of a tall-skinny GEMM: memory-bound at 28.02 us under tf32.
ucut_sol_test(sol_report_tall_skinny "t_SOL = 28.02 us \\(tf32, datasheet peaks, memory-bound\\)"
  sol ${sol_fixtures}/gemm_tall_skinny.json)
# Dominating operations are listed with their share and source line.
ucut_sol_test(sol_report_top_ops "55.4%  ops\\[0\\] linear \\(line 13\\)"
  sol ${sol_fixtures}/linear_relu_softmax.json)
# JSON output: the same numbers under schema ucutlass.sol/1.
ucut_sol_test(sol_json "\"schema\": \"ucutlass.sol/1\".*\"t_sol_s\": 0.00027782282893066"
  sol ${sol_fixtures}/gemm_square.json --json)
# Other GPUs of the table: H100 SXM at 3.35 TB/s, memory-bound softmax = 536870912 / 3.35e12.
ucut_sol_test(sol_gpu_h100 "t_SOL = 160.26 us" sol ${sol_fixtures}/softmax_rows.json --gpu "H100 SXM")

# Bad input: clear messages with "did you mean".
ucut_sol_test(sol_unknown_gpu "unknown GPU 'h20'; did you mean 'h200'\\?"
  sol ${sol_fixtures}/gemm_square.json --gpu h20)
ucut_sol_test(sol_unknown_policy "unknown precision policy 'tf-32'; did you mean 'tf32'\\?"
  sol ${sol_fixtures}/gemm_square.json --policy tf-32)
ucut_sol_test(sol_missing_file "cannot read '.*no-such-problem.json'" sol no-such-problem.json)
ucut_sol_test(sol_bad_calibration "field 'copy_bw' must be a positive number"
  sol ${sol_fixtures}/gemm_square.json --calibration ${sol_fixtures}/gemm_square.json)

# The exit codes: 0 for a report, 2 for an unknown GPU (usage error).
add_test(NAME sol_exit_ok COMMAND $<TARGET_FILE:ucutlass> sol ${sol_fixtures}/sdpa.json)
set_tests_properties(sol_exit_ok PROPERTIES LABELS "sol" ENVIRONMENT "${sol_env}")
add_test(NAME sol_exit_usage COMMAND $<TARGET_FILE:ucutlass> sol ${sol_fixtures}/sdpa.json --gpu nope)
set_tests_properties(sol_exit_usage PROPERTIES LABELS "sol" ENVIRONMENT "${sol_env}" WILL_FAIL TRUE)

# calibrate on a machine without a GPU (CI): says so and fails (exit 3). GPU machines run the
# real measurement through scripts/gpu-check instead (label gpu).
add_test(NAME calibrate_without_gpu COMMAND $<TARGET_FILE:ucutlass> calibrate --quick)
set_tests_properties(calibrate_without_gpu PROPERTIES LABELS "sol" ENVIRONMENT "${sol_env}"
                     PASS_REGULAR_EXPRESSION "no CUDA GPU" SKIP_REGULAR_EXPRESSION "calibrated ")

# The program floor beside the problem's SOL (--program): an unfused two-stage program pays the
# 33.55 MB intermediate twice (13.98 us at 4.8 TB/s), and the report says so.
set(sol_programs "${CMAKE_SOURCE_DIR}/tests/data/programs")
ucut_sol_test(sol_program_floor
  "s1     elementwise.*reads h.*problem SOL 278.84 us, this program's floor 291.82 us because stage s1 re-reads the 33.55 MB intermediate h"
  sol ${sol_fixtures}/linear_bias_gelu.json --program ${sol_programs}/linear_bias_gelu_unfused.ucut)
ucut_sol_test(sol_program_floor_json "\"program_floor\": \\{.*\"t_floor_s\": 0.000291.*\"tmp_bytes\": 67108864"
  sol ${sol_fixtures}/linear_bias_gelu.json --program ${sol_programs}/linear_bias_gelu_unfused.ucut --json)
# An f32x3s stage is charged as what runs: two split stages and three TF32 GEMMs.
ucut_sol_test(sol_program_floor_f32x3s
  "s0_b   elementwise.*s0_p1  gemm         tf32.*s0_p2.*this program's floor 1.022 ms because its 3 GEMM stages need 833.66 us of tensor-core time"
  sol ${sol_fixtures}/linear_bias_gelu.json --program ${sol_programs}/linear_bias_gelu_f32x3s.ucut)
# A program written for another problem is refused (its floor would compare unlike things).
ucut_sol_test(sol_program_wrong_problem "has outputs \\[1024x8192\\] but the problem's outputs are \\[4096x4096\\]"
  sol ${sol_fixtures}/gemm_square.json --program ${sol_programs}/linear_bias_gelu_unfused.ucut)

# A matmul of f16 values widened to fp32 (x.float() @ W.float().T) is bounded at the 16-bit tensor
# rate: 137.44 GFLOP / 989.4 TFLOP/s + the SIMT epilogue = 139.66 us (at the TF32 rate: 277.8 us).
ucut_sol_test(sol_widened_16bit_matmul
  "t_SOL = 139.66 us \\(tf32, datasheet peaks, compute-bound\\).*ops\\[3\\] \\(matmul\\): its operands are f16/bf16 values widened to fp32"
  sol ${sol_fixtures}/widened_f16_matmul.json --gpu h200)
