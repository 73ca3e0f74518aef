# Language front-end tests beyond the unit tests in src/dsl: golden canonical prints and
# diagnostics (one CTest per case, UCUTLASS_UPDATE_GOLDEN=1 regenerates), every example checks,
# the core of docs/language.md fits the token budget, and the randomized parser fuzz driver.
file(GLOB dsl_ok_cases CONFIGURE_DEPENDS "${CMAKE_SOURCE_DIR}/tests/golden/dsl/ok/*.ucut")
file(GLOB dsl_error_cases CONFIGURE_DEPENDS "${CMAKE_SOURCE_DIR}/tests/golden/dsl/errors/*.ucut")
foreach(mode ok errors)
  if(mode STREQUAL "ok")
    set(cases ${dsl_ok_cases})
  else()
    set(cases ${dsl_error_cases})
  endif()
  foreach(case IN LISTS cases)
    get_filename_component(stem "${case}" NAME_WE)
    file(RELATIVE_PATH rel "${CMAKE_SOURCE_DIR}" "${case}")
    add_test(NAME dsl_golden_${mode}_${stem}
             COMMAND ${CMAKE_COMMAND} -DUCUTLASS=$<TARGET_FILE:ucutlass> -DMODE=${mode} -DCASE=${rel}
                     -DSRC=${CMAKE_SOURCE_DIR} -P ${CMAKE_SOURCE_DIR}/tests/golden/dsl/run_case.cmake)
    set_tests_properties(dsl_golden_${mode}_${stem} PROPERTIES LABELS "golden;dsl")
  endforeach()
endforeach()

file(GLOB dsl_examples CONFIGURE_DEPENDS "${CMAKE_SOURCE_DIR}/examples/*.ucut")
foreach(ex IN LISTS dsl_examples)
  get_filename_component(stem "${ex}" NAME_WE)
  add_test(NAME dsl_example_${stem} COMMAND ucutlass check "${ex}")
  set_tests_properties(dsl_example_${stem} PROPERTIES LABELS "golden;dsl" PASS_REGULAR_EXPRESSION "^ok: ")
endforeach()

add_test(NAME dsl_language_core_tokens
         COMMAND "${CMAKE_SOURCE_DIR}/scripts/count-tokens" --core --max 2550 "${CMAKE_SOURCE_DIR}/docs/language.md")
set_tests_properties(dsl_language_core_tokens PROPERTIES LABELS "dsl")

# The randomized mutation driver (g++ or clang, no libFuzzer needed).
add_executable(dsl_fuzz_driver "${CMAKE_SOURCE_DIR}/src/dsl/parser_fuzz.cpp")
target_compile_definitions(dsl_fuzz_driver PRIVATE UCUT_FUZZ_DRIVER)
target_link_libraries(dsl_fuzz_driver PRIVATE ucut_dsl)
add_test(NAME dsl_fuzz_driver COMMAND dsl_fuzz_driver 20 1)
set_tests_properties(dsl_fuzz_driver PROPERTIES LABELS "fuzz;dsl" TIMEOUT 120)

# libFuzzer build: cmake -DUCUTLASS_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++; run ./dsl_parser_fuzz examples/
if(UCUTLASS_FUZZ)
  add_executable(dsl_parser_fuzz "${CMAKE_SOURCE_DIR}/src/dsl/parser_fuzz.cpp")
  target_compile_options(dsl_parser_fuzz PRIVATE -fsanitize=fuzzer,address,undefined)
  target_link_options(dsl_parser_fuzz PRIVATE -fsanitize=fuzzer,address,undefined)
  target_link_libraries(dsl_parser_fuzz PRIVATE ucut_dsl)
endif()

# Every proof program (bench/proof/*/*.ucut, measured on the GPU by bench/proof/run.sh) checks:
# a program the language no longer accepts would fail only there, after a device call.
file(GLOB proof_programs CONFIGURE_DEPENDS "${CMAKE_SOURCE_DIR}/bench/proof/*/*.ucut")
foreach(prog IN LISTS proof_programs)
  get_filename_component(dir "${prog}" DIRECTORY)
  get_filename_component(set "${dir}" NAME)
  get_filename_component(stem "${prog}" NAME_WLE)
  add_test(NAME proof_check_${set}_${stem} COMMAND ucutlass check "${prog}")
  set_tests_properties(proof_check_${set}_${stem} PROPERTIES LABELS "dsl" PASS_REGULAR_EXPRESSION "^ok: ")
endforeach()
