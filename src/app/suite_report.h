// A suite's reports (`ucutlass bench`): the plan of a suite without a GPU (one row per problem:
// planned, or why not), and the measured suite's report.json and report.md from its problems'
// outcomes and headline (headline.h). The CLI runs the suite and writes the files; what they say
// is decided here, beside the single problem's report (run_report.h). The HTML page is the report
// module's (report/html_report.h).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/driver.h"
#include "app/headline.h"
#include "app/pipeline.h"

namespace ucut::app {

// One problem of a planned suite.
struct PlannedProblem {
  std::string name;
  std::string status;          // planned | unsupported | extract_error | plan_error
  std::string error;           // the whole message when not planned
  int stages = 0;
  double t_sol_s = 0;
  double t_sol_contract_s = 0;  // the SOL of the cheapest precision the tolerance leaves
  std::string best_ranked;     // the best-ranked candidate ("" when none)
  double predicted_s = 0;
  std::string report;          // out/<problem>/report.json
};

struct SuitePlan {
  std::string suite, why;
  sol::Policy policy = sol::Policy::tf32;
  std::string profile;
  std::vector<PlannedProblem> problems;
  int planned = 0;
  std::map<std::string, int> failures;  // status -> count, for problems not planned
  std::string executor;                 // the compile executor's summary ("" for the local pool)
};

// "unsupported" for an op the IR cannot express, else "extract_error".
std::string suite_failure_name(const Error& e);

// A failure's message on one line, for a table row or a progress line: its lines joined by spaces,
// the "hint:" lines left out (report.json keeps the whole message), at most `max_chars` (cut with
// "..."). The first line alone said only "extracting 'p.py' failed:", the reason on the next.
std::string suite_error_line(const std::string& message, size_t max_chars = 400);

// Plans every problem file: extraction and lowering (prepare), then plan_problem; a problem that
// does not prepare has its PyTorch fallback written (fallback_problem without a GPU). `on_problem`
// (may be empty) sees each row as it is decided, for progress lines.
SuitePlan suite_plan(const std::string& suite, const std::vector<std::string>& files, const PrepareOptions& prepare,
                     const PlanOptions& plan, const DriverOptions& opt, const std::string& why,
                     const std::function<void(const PlannedProblem&)>& on_problem = {});

std::string suite_plan_markdown(const SuitePlan& p);
nlohmann::json suite_plan_json(const SuitePlan& p);

// The measured (or simulated) suite: "ucutlass.bench-report/1".
nlohmann::json suite_report_json(const std::string& suite, bool simulated, const Headline& h,
                                 const std::vector<ProblemOutcome>& outcomes);
// `headline_text` is headline_render(h); the per-problem table follows it, then (when any LLM
// tokens were spent) the LLM cost per problem.
std::string suite_report_markdown(bool simulated, const std::string& headline_text, const Headline& h,
                                  const std::vector<ProblemOutcome>& outcomes);

// Adds one problem's costs to the suite's (wall time is the longest problem's: they overlap).
void cost_add(CostFigures& total, const search::SessionCost& problem);

}  // namespace ucut::app
