# The `lower` and `space` commands end to end (the lowering itself is tested by
# src/lower/lower_test.cpp over tests/golden/lower; the space by src/space/space_test.cpp).
set(_lower_dir "${CMAKE_SOURCE_DIR}/tests/golden/lower")
add_test(NAME lower_cli_golden
         COMMAND bash -c "$<TARGET_FILE:ucutlass> lower ${_lower_dir}/gemm_softmax.json 2>/dev/null | diff - ${_lower_dir}/gemm_softmax.ucut"
         WORKING_DIRECTORY "${CMAKE_SOURCE_DIR}")
add_test(NAME lower_cli_unsupported
         COMMAND bash -c "$<TARGET_FILE:ucutlass> lower ${_lower_dir}/unsupported_conv.json; test $? -eq 1"
         WORKING_DIRECTORY "${CMAKE_SOURCE_DIR}")
set_tests_properties(lower_cli_unsupported PROPERTIES PASS_REGULAR_EXPRESSION "op 0 \\(conv2d\\): the conv stage.s rule conv_align_c")
add_test(NAME space_cli_ranks
         COMMAND bash -c "$<TARGET_FILE:ucutlass> space ${_lower_dir}/gemm_softmax.ucut --top 3 --rules"
         WORKING_DIRECTORY "${CMAKE_SOURCE_DIR}")
set_tests_properties(space_cli_ranks PROPERTIES PASS_REGULAR_EXPRESSION "stage 1 \\(s1\\): [0-9]+ configurations, [0-9]+ valid")
set_tests_properties(lower_cli_golden lower_cli_unsupported space_cli_ranks PROPERTIES LABELS "golden;lower")
