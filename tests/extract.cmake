# Integration tests of `ucutlass extract`: the binary runs python/ucutlass_torch (PyTorch on CPU) and
# relays its diagnostics. Each test runs tests/extract/expect.cmake, which checks the exit code and
# the expected text on stderr. Label "python": they need the venv with torch (scripts/setup).
set(_ucut_extract_out "${CMAKE_BINARY_DIR}/extract-tests")
function(ucut_extract_test name expected_rc expected_text)
  add_test(NAME extract.${name}
           COMMAND ${CMAKE_COMMAND} -DUCUTLASS=$<TARGET_FILE:ucutlass> -DEXPECTED_RC=${expected_rc}
                   "-DEXPECTED_TEXT=${expected_text}" "-DARGS=${ARGN}"
                   -P "${CMAKE_CURRENT_LIST_DIR}/extract/expect.cmake"
           WORKING_DIRECTORY "${CMAKE_SOURCE_DIR}")
  set_tests_properties(extract.${name} PROPERTIES LABELS "python" TIMEOUT 600)
endfunction()

ucut_extract_test(good_file 0 ""
  "problems/epi_linear_bias_gelu.py;-o;${_ucut_extract_out}/epi_linear_bias_gelu.json")
ucut_extract_test(missing_get_inputs 1
  "tests/extract/missing_get_inputs.py: error: missing `get_inputs` (a KernelBench problem defines Model, get_inputs and get_init_inputs)"
  "tests/extract/missing_get_inputs.py;-o;${_ucut_extract_out}/missing.json")
ucut_extract_test(untraceable 1
  "tests/extract/untraceable.py:11: error: cannot trace Model.forward: "
  "tests/extract/untraceable.py")
ucut_extract_test(no_such_file 2
  "ucutlass extract: error: tests/extract/nope.py: no such file or folder"
  "tests/extract/nope.py")
