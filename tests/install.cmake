# The relocatable install: `cmake --install` into a temporary prefix, moved, and the installed
# binary run from another folder (tests/install/relocated_check.sh says what it checks). Labels:
# python (it plans a .py problem) and nvcc (one SIMT compile; skipped without nvcc).
add_test(NAME install_relocated
         COMMAND bash "${CMAKE_SOURCE_DIR}/tests/install/relocated_check.sh" "${CMAKE_BINARY_DIR}" "${CMAKE_SOURCE_DIR}")
set_tests_properties(install_relocated PROPERTIES LABELS "python;nvcc" TIMEOUT 900)
