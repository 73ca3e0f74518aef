# Code generator tests beyond the unit tests beside the sources (src/codegen/library_test.cpp holds
# the golden comparison of generated .cu files; regenerate with UCUTLASS_UPDATE_GOLDEN=1).
# `codegen_nvcc` (label nvcc) compiles two golden kernel libraries with real nvcc for sm_90a and
# checks the binaries; it skips cleanly where nvcc or the CUTLASS headers are missing.
add_test(NAME codegen_nvcc
         COMMAND bash "${CMAKE_SOURCE_DIR}/tests/golden/codegen/nvcc_test.sh" "${CUTLASS_DIR}"
         WORKING_DIRECTORY "${CMAKE_SOURCE_DIR}")
set_tests_properties(codegen_nvcc PROPERTIES LABELS "nvcc" SKIP_RETURN_CODE 77 TIMEOUT 1800)
# `codegen_units_nvcc` (label nvcc): a GEMM + softmax program built in units through `ucutlass
# compile` (CUTLASS, SIMT and ABI objects, linked), and the object cache on a second program
# that changes only the softmax.
add_test(NAME codegen_units_nvcc
         COMMAND bash "${CMAKE_SOURCE_DIR}/tests/golden/codegen/units_test.sh" $<TARGET_FILE:ucutlass>
                 "${CUTLASS_DIR}"
         WORKING_DIRECTORY "${CMAKE_SOURCE_DIR}")
set_tests_properties(codegen_units_nvcc PROPERTIES LABELS "nvcc" SKIP_RETURN_CODE 77 TIMEOUT 900)
# `codegen_conv_nvcc` (label nvcc): the conv stage's golden libraries (a 2-D tf32 conv with bias
# and ReLU; a 3-D bf16 conv with a folded BatchNorm, a residual and a 2x1 cluster) through the
# same nvcc checks.
add_test(NAME codegen_conv_nvcc
         COMMAND bash "${CMAKE_SOURCE_DIR}/tests/golden/codegen/nvcc_test.sh" "${CUTLASS_DIR}"
         WORKING_DIRECTORY "${CMAKE_SOURCE_DIR}")
set_tests_properties(codegen_conv_nvcc PROPERTIES LABELS "nvcc" SKIP_RETURN_CODE 77 TIMEOUT 1800
                     ENVIRONMENT "UCUT_NVCC_TEST_KERNELS=conv2d_tf32_bias_relu conv3d_bf16_bn_residual")
# `codegen_window_nvcc` (label nvcc): the window stage's golden libraries (max, avg and adaptive
# avg pools in f32 and bf16; a depthwise conv with a channel multiplier, its bias and a ReLU6; a
# depthwise-separable block whose window stage writes a view of the pointwise GEMM's operand)
# through the same nvcc checks (the SIMT runtime headers from src/codegen/runtime).
add_test(NAME codegen_window_nvcc
         COMMAND bash "${CMAKE_SOURCE_DIR}/tests/golden/codegen/nvcc_test.sh" "${CUTLASS_DIR}"
         WORKING_DIRECTORY "${CMAKE_SOURCE_DIR}")
set_tests_properties(codegen_window_nvcc PROPERTIES LABELS "nvcc" SKIP_RETURN_CODE 77 TIMEOUT 1800
                     ENVIRONMENT "UCUT_NVCC_TEST_KERNELS=window_pools_f32 window_depthwise_relu6 window_depthwise_separable")
