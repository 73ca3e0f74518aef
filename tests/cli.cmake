# Command-line checks of commands that need no GPU and no nvcc:
# - cache_cli (label unit): `ucutlass cache` stats and clean on a fake cache folder.
add_test(NAME cache_cli COMMAND bash "${CMAKE_SOURCE_DIR}/tests/cli/cache_cli_check.sh" $<TARGET_FILE:ucutlass>
         WORKING_DIRECTORY "${CMAKE_SOURCE_DIR}")
set_tests_properties(cache_cli PROPERTIES LABELS "unit" TIMEOUT 120)
