// A planned suite's report (suite_report.h): a problem that did not extract shows why in its row.
#include "app/suite_report.h"

#include <gtest/gtest.h>

namespace ucut::app {
namespace {

// The extractor's message as bench gets it: a header line, the reason, the hint.
const char* kExtractFailure =
    "p/mamba.py: extracting '/abs/p/mamba.py' failed:\n"
    "/abs/p/mamba.py:3: error: the file imports `einops`, which /venv/bin/python cannot find\n"
    "hint: install the package that provides `einops` into that Python\n";

TEST(SuiteReport, AnErrorLineKeepsTheReasonAndLeavesTheHint) {
  EXPECT_EQ(suite_error_line(kExtractFailure),
            "p/mamba.py: extracting '/abs/p/mamba.py' failed: /abs/p/mamba.py:3: error: the file imports `einops`, "
            "which /venv/bin/python cannot find");
  EXPECT_EQ(suite_error_line("one line"), "one line");
  EXPECT_EQ(suite_error_line("  spaced  \n\n  out \n"), "spaced out");
  EXPECT_EQ(suite_error_line(std::string(500, 'x'), 10), "xxxxxxx...");
}

// The plan's table showed the first line alone: "extracting '...' failed:", the reason lost.
TEST(SuiteReport, APlannedSuiteShowsWhyAProblemDidNotExtract) {
  SuitePlan p;
  p.suite = "kb";
  p.why = "planning only";
  p.profile = "default";
  PlannedProblem row;
  row.name = "mamba";
  row.status = "extract_error";
  row.error = kExtractFailure;
  p.problems.push_back(row);
  PlannedProblem bad;
  bad.name = "pipes";
  bad.status = "plan_error";
  bad.error = "a | b\nsecond line";
  p.problems.push_back(bad);
  const std::string md = suite_plan_markdown(p);
  EXPECT_NE(md.find("| mamba | extract_error (PyTorch fallback) | - | - | - | p/mamba.py: extracting '/abs/p/mamba.py' "
                    "failed: /abs/p/mamba.py:3: error: the file imports `einops`, which /venv/bin/python cannot find "
                    "| - |\n"),
            std::string::npos)
      << md;
  // One row each, whatever the message holds: a '|' is escaped, a new line joined.
  EXPECT_NE(md.find("| pipes | plan_error | - | - | - | a \\| b second line | - |\n"), std::string::npos) << md;
}

}  // namespace
}  // namespace ucut::app
