# Non-GEMM stage code generation: a real nvcc compile of one generated stage per kind (label
# nvcc; skips cleanly without nvcc). GPU proof of these stages: bench/proof/simt.
if(TARGET simt_stages_test)
  add_test(NAME codegen_simt_nvcc COMMAND simt_stages_test --gtest_filter=SimtNvcc.*
           WORKING_DIRECTORY "${CMAKE_SOURCE_DIR}")
  set_tests_properties(codegen_simt_nvcc PROPERTIES LABELS "nvcc" ENVIRONMENT "UCUT_TEST_NVCC=1"
                       TIMEOUT 900)
endif()
