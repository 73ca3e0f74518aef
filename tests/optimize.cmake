# `ucutlass optimize` and `ucutlass bench` end to end in planning mode (UCUTLASS_NO_GPU=1: even on a
# GPU machine nothing is measured): extract -> SOL -> lower -> rank -> out/<problem>/. Kernels are
# emitted (.cu) or not at all, never compiled with nvcc, so each test takes seconds.
#   optimize.plan_json  a Problem IR file (no Python), the top 3 candidates emitted, the console's
#                       TF32-bound note and the report's; label "unit"
#   optimize.plan_py    a problems/ file through the Python extractor; label "python"
#   bench.plan_py       the same file as a one-problem suite; label "python"
#   bench.match         --match keeps only the named files of a folder (patterns or bare names); label "python"
#   bench.synthetic     a suite on the synthetic surface: SIMULATED in its headline, file names and HTML,
#                       modelled costs, its own memory store (tests/cli/bench_synthetic_check.sh); label "unit"
set(_ucut_opt_out "${CMAKE_BINARY_DIR}/optimize-tests")
add_test(NAME optimize.plan_json
         COMMAND bash -c "rm -rf '${_ucut_opt_out}/json' && mkdir -p '${_ucut_opt_out}' && UCUTLASS_NO_GPU=1 $<TARGET_FILE:ucutlass> optimize tests/golden/lower/linear_bias_gelu.json --budget 3 --emit-only --no-memory --out '${_ucut_opt_out}/json' --build-dir '${_ucut_opt_out}/json-build' > '${_ucut_opt_out}/json.out' && grep -q '^  note: TF32 rounds each operand' '${_ucut_opt_out}/json.out' && d='${_ucut_opt_out}/json/linear_bias_gelu' && test -s $d/best.ucut && test -s $d/best.cu && test ! -e $d/best.so && grep -q 'no GPU: nothing was measured' $d/report.md && grep -q 'which the TF32 bound skips' $d/report.md && grep -q '\"measured\": false' $d/report.json"
         WORKING_DIRECTORY "${CMAKE_SOURCE_DIR}")
set_tests_properties(optimize.plan_json PROPERTIES LABELS "unit;optimize" TIMEOUT 120)
add_test(NAME optimize.plan_py
         COMMAND bash -c "rm -rf '${_ucut_opt_out}/py' && UCUTLASS_NO_GPU=1 $<TARGET_FILE:ucutlass> optimize problems/gemm_square_4096.py --budget 4 --no-compile --no-memory --out '${_ucut_opt_out}/py' && d='${_ucut_opt_out}/py/gemm_square_4096' && test -s $d/problem.json && test -s $d/best.ucut && test ! -e $d/best.cu && grep -q 'no GPU: nothing was measured' $d/report.md"
         WORKING_DIRECTORY "${CMAKE_SOURCE_DIR}")
set_tests_properties(optimize.plan_py PROPERTIES LABELS "python;optimize" TIMEOUT 300)
add_test(NAME optimize.unsupported
         COMMAND bash -c "out=$(UCUTLASS_NO_GPU=1 $<TARGET_FILE:ucutlass> optimize tests/golden/lower/unsupported_conv_only.json --no-memory --no-compile --out '${_ucut_opt_out}/unsup' 2>&1); rc=$?; echo \"$out\"; test $rc -eq 1 && echo \"$out\" | grep -q 'unsupported_conv_only.json: no kernel stage: every operation runs in PyTorch (.*op 0 (conv2d)'"
         WORKING_DIRECTORY "${CMAKE_SOURCE_DIR}")
set_tests_properties(optimize.unsupported PROPERTIES LABELS "unit;optimize" TIMEOUT 120)
add_test(NAME bench.plan_py
         COMMAND bash -c "rm -rf '${_ucut_opt_out}/bench' && UCUTLASS_NO_GPU=1 $<TARGET_FILE:ucutlass> bench problems/gemm_square_4096.py --budget 2 --no-compile --no-memory --out '${_ucut_opt_out}/bench' && grep -q 'gemm_square_4096 | planned' '${_ucut_opt_out}/bench/report.md'"
         WORKING_DIRECTORY "${CMAKE_SOURCE_DIR}")
set_tests_properties(bench.plan_py PROPERTIES LABELS "python;optimize" TIMEOUT 300)
add_test(NAME bench.match
         COMMAND bash -c "rm -rf '${_ucut_opt_out}/match' && UCUTLASS_NO_GPU=1 $<TARGET_FILE:ucutlass> bench problems --match 'gemm_square_4*,no_such_*,epi_linear_clamp' --budget 2 --no-compile --no-memory --out '${_ucut_opt_out}/match' && grep -q '2 of 2 problems planned' '${_ucut_opt_out}/match/report.md' && grep -q 'gemm_square_4096 | planned' '${_ucut_opt_out}/match/report.md' && grep -q 'epi_linear_clamp | planned' '${_ucut_opt_out}/match/report.md'"
         WORKING_DIRECTORY "${CMAKE_SOURCE_DIR}")
set_tests_properties(bench.match PROPERTIES LABELS "python;optimize" TIMEOUT 300)
add_test(NAME bench.synthetic
         COMMAND bash "${CMAKE_SOURCE_DIR}/tests/cli/bench_synthetic_check.sh" $<TARGET_FILE:ucutlass> "${_ucut_opt_out}/synth"
         WORKING_DIRECTORY "${CMAKE_SOURCE_DIR}")
set_tests_properties(bench.synthetic PROPERTIES LABELS "unit;optimize" TIMEOUT 120)

# The contract profile reaches the plan: under the default 1e-4 the TF32 rounding bound starts a
# Linear + GELU above tf32 (bf16x3 first where offered, else 3xTF32; the SOL at its tolerance above t_SOL); kb-v01's 1e-2 keeps
# tf32 (the two SOLs equal); an unknown profile is refused.
add_test(NAME bench.profile
         COMMAND bash -c "o='${_ucut_opt_out}/profile' && rm -rf $o && UCUTLASS_NO_GPU=1 $<TARGET_FILE:ucutlass> bench problems/epi_linear_bias_gelu.py --budget 1 --no-compile --no-memory --out $o/d && grep -q 'profile `default`' $o/d/report.md && grep -qE 'epi_linear_bias_gelu \\| planned \\| 1 \\| [^|]* \\| [^|]* \\| `gemm_(bf16x3|f32x3s)_' $o/d/report.md && ! grep -qE 'planned \\| 1 \\| ([^|]+) \\| \\1 \\|' $o/d/report.md && UCUTLASS_NO_GPU=1 $<TARGET_FILE:ucutlass> bench problems/epi_linear_bias_gelu.py --budget 1 --no-compile --no-memory --profile kb-v01 --out $o/k && grep -q 'profile `kb-v01`' $o/k/report.md && grep -qE 'planned \\| 1 \\| ([^|]+) \\| \\1 \\| .gemm_tf32_' $o/k/report.md && ! $<TARGET_FILE:ucutlass> bench problems --profile kb-v2 --out $o/x 2> $o/err && grep -q 'kb-v2 not in' $o/err"
         WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
set_tests_properties(bench.profile PROPERTIES LABELS "python;optimize" TIMEOUT 300)

# Never slower than PyTorch: a problem outside the language is not an error of `optimize` but a
# PyTorch fallback, written as such (model_new.py is the reference Model; planning without a GPU
# writes it too, and says nothing was measured); a suite plans it as the fallback as well.
add_test(NAME optimize.fallback
         COMMAND bash -c "o='${_ucut_opt_out}/fallback' && rm -rf $o && UCUTLASS_NO_GPU=1 $<TARGET_FILE:ucutlass> optimize tests/data/problems/convt2d_only.py --no-memory --no-compile --out $o > $o.out 2> $o.err; rc=$?; cat $o.err; test $rc -eq 0 && grep -q 'the result is the PyTorch fallback' $o.err && d=$o/convt2d_only && grep -q 'class ModelNew(_reference_namespace()\\[\"Model\"\\])' $d/model_new.py && grep -q 'unsupported' $d/model_new.py && grep -q 'no kernel was searched: unsupported' $d/report.md && UCUTLASS_NO_GPU=1 $<TARGET_FILE:ucutlass> bench tests/data/problems --match convt2d_only --no-compile --no-memory --out $o/b && grep -q 'convt2d_only | unsupported (PyTorch fallback)' $o/b/report.md && test -s $o/b/convt2d_only/model_new.py"
         WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
set_tests_properties(optimize.fallback PROPERTIES LABELS "python;optimize" TIMEOUT 300)
