# Evaluation-harness tests beyond the unit tests beside src/eval and src/memory:
# - eval_gpu (label gpu): tests/gpu/run_eval_gpu_tests.sh; skipped (exit 77) without a GPU.
# - eval_cli (label eval): the ucutlass eval/baseline/export commands reject bad input clearly.
add_test(NAME eval_gpu COMMAND "${CMAKE_SOURCE_DIR}/tests/gpu/run_eval_gpu_tests.sh"
         WORKING_DIRECTORY "${CMAKE_SOURCE_DIR}")
set_tests_properties(eval_gpu PROPERTIES LABELS "gpu" SKIP_RETURN_CODE 77 TIMEOUT 3600
                     ENVIRONMENT "UCUT_GPU_BIN=$<TARGET_FILE:ucutlass>;UCUT_GPU_BUILD=${CMAKE_BINARY_DIR}")
add_test(NAME eval_cli COMMAND "${CMAKE_SOURCE_DIR}/tests/gpu/eval_cli_check.sh" $<TARGET_FILE:ucutlass>
         WORKING_DIRECTORY "${CMAKE_SOURCE_DIR}")
set_tests_properties(eval_cli PROPERTIES LABELS "eval" TIMEOUT 300)
