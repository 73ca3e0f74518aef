# ucut_module(NAME DEPS ...): one library per src/NAME folder plus one test binary per *_test.cpp.
# Globbing keeps the module list in CMakeLists.txt the only place a module is named. The glob
# recurses, so a module may group files in sub-folders (each layer's `kinds/`, one file per stage
# kind: docs/architecture.md).
function(ucut_module name)
  cmake_parse_arguments(M "" "" "DEPS" ${ARGN})
  set(dir "${CMAKE_SOURCE_DIR}/src/${name}")
  file(GLOB_RECURSE all_sources CONFIGURE_DEPENDS "${dir}/*.cpp")
  set(lib_sources "")
  set(test_sources "")
  foreach(src IN LISTS all_sources)
    if(src MATCHES "_test\\.cpp$")
      list(APPEND test_sources "${src}")
    elseif(src MATCHES "_fuzz\\.cpp$" OR src MATCHES "/main\\.cpp$")
      # fuzz targets and the executable's main are built elsewhere
    else()
      list(APPEND lib_sources "${src}")
    endif()
  endforeach()
  if(lib_sources)
    add_library(ucut_${name} STATIC ${lib_sources})
    set(scope PUBLIC)
  else()
    add_library(ucut_${name} INTERFACE)
    set(scope INTERFACE)
  endif()
  # A module sees only its own headers and its dependencies' (PUBLIC, so they pass on): each one
  # gets an include folder holding a single link, <name> -> src/<name>, so `#include "x/y.h"`
  # of a module x it does not depend on fails to compile instead of holding by convention.
  set(inc "${CMAKE_BINARY_DIR}/module-include/${name}")
  file(MAKE_DIRECTORY "${inc}")
  if(NOT EXISTS "${inc}/${name}")
    file(CREATE_LINK "${dir}" "${inc}/${name}" SYMBOLIC)
  endif()
  target_include_directories(ucut_${name} ${scope} "${inc}")
  target_link_libraries(ucut_${name} ${scope} ${M_DEPS})
  target_compile_definitions(ucut_${name} ${scope}
    UCUTLASS_SOURCE_DIR="${CMAKE_SOURCE_DIR}" UCUTLASS_CUTLASS_DIR="${CUTLASS_DIR}"
    UCUTLASS_VERSION="${PROJECT_VERSION}")
  foreach(src IN LISTS test_sources)
    get_filename_component(test_name "${src}" NAME_WE)
    add_executable(${test_name} "${src}")
    target_link_libraries(${test_name} PRIVATE ucut_${name} GTest::gtest GTest::gtest_main)
    add_test(NAME ${test_name} COMMAND ${test_name} WORKING_DIRECTORY "${CMAKE_SOURCE_DIR}")
    set_tests_properties(${test_name} PROPERTIES LABELS "unit;${name}")
  endforeach()
endfunction()
