# The HTML report in a browser:
# - report.render (label unit): headless Chromium renders a simulated suite's page; the screenshot
#   (build/test-artifacts/report/bench.png) must show the banner, the bars and the ceiling ticks.
#   Skipped (exit 77) where Chromium is absent; CI installs it (.ci/run, UCUTLASS_CHROMIUM=1).
add_test(NAME report.render
         COMMAND bash "${CMAKE_SOURCE_DIR}/tests/report/render_check.sh" $<TARGET_FILE:ucutlass>
                 "${CMAKE_BINARY_DIR}/test-artifacts/report"
         WORKING_DIRECTORY "${CMAKE_SOURCE_DIR}")
set_tests_properties(report.render PROPERTIES LABELS "unit;report" TIMEOUT 180 SKIP_RETURN_CODE 77)
