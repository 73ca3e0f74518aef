# Malformed input of every class through the binary, no GPU needed (tests/robustness/run.sh): each
# case's exit code (docs/cli.md), message and an unchanged result store. `robustness`: programs,
# memory files, command-line misuse (label unit); `robustness_python`: problem files, through the
# Python extractor (label python).
add_test(NAME robustness COMMAND bash "${CMAKE_SOURCE_DIR}/tests/robustness/run.sh" $<TARGET_FILE:ucutlass> core
         WORKING_DIRECTORY "${CMAKE_SOURCE_DIR}")
set_tests_properties(robustness PROPERTIES LABELS "unit;robustness" TIMEOUT 300)
add_test(NAME robustness_python COMMAND bash "${CMAKE_SOURCE_DIR}/tests/robustness/run.sh" $<TARGET_FILE:ucutlass> python
         WORKING_DIRECTORY "${CMAKE_SOURCE_DIR}")
set_tests_properties(robustness_python PROPERTIES LABELS "python;robustness" TIMEOUT 600)
