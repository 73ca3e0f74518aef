# Runs `${UCUTLASS} extract ${ARGS}` and checks its exit code and that stderr contains EXPECTED_TEXT.
# Used by tests/extract.cmake (cmake -P script; not included by tests/CMakeLists.txt).
execute_process(COMMAND "${UCUTLASS}" extract ${ARGS}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc STREQUAL "${EXPECTED_RC}")
  message(FATAL_ERROR "exit code ${rc}, expected ${EXPECTED_RC}\nstderr:\n${err}")
endif()
if(NOT EXPECTED_TEXT STREQUAL "")
  string(FIND "${err}" "${EXPECTED_TEXT}" pos)
  if(pos EQUAL -1)
    message(FATAL_ERROR "stderr lacks the expected text\nexpected: ${EXPECTED_TEXT}\nstderr:\n${err}")
  endif()
endif()
