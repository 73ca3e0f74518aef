# The result store and the optimization memory on PostgreSQL (src/memory/store_pg_test.cpp)
# against a throwaway server that tests/pg/with_postgres.sh starts from Debian's postgresql package
# and removes afterwards; skipped (77) where the server binaries are not installed. Label "unit":
# no GPU, no network beyond the loopback.
add_test(NAME memory.postgres
         COMMAND bash "${CMAKE_SOURCE_DIR}/tests/pg/with_postgres.sh" $<TARGET_FILE:store_pg_test>
         WORKING_DIRECTORY "${CMAKE_SOURCE_DIR}")
set_tests_properties(memory.postgres PROPERTIES LABELS "unit;memory;postgres" TIMEOUT 300 SKIP_RETURN_CODE 77)
