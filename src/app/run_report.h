// One problem's optimize report: report.json (machine-readable, every attempt) and report.md
// (for people), from one field list. Holds the problem, SOL, policy, contract profile, baseline
// times, every attempt with status / time / speedup / % of SOL, the best, the stop reason and the
// cost figures. Also converts to the suite's ProblemOutcome (headline.h).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "search/budget.h"
#include "sol/peaks.h"
#include "app/headline.h"
#include "search/session.h"

namespace ucut::app {

struct RunReport {
  std::string problem;
  sol::Policy policy = sol::Policy::tf32;
  std::string profile = "default";
  std::string gpu;
  std::string strategy = "builtin";
  uint64_t seed = 1;
  double t_sol = 0;
  // The speed of light at the cheapest precision the contract's tolerance leaves: t_sol, or the
  // fp32-faithful bound where plain TF32 provably misses the tolerance (space/precision.h). No
  // kernel that passes can beat it, so eager / t_sol_contract is the most any search can gain.
  // 0: unknown.
  double t_sol_contract = 0;
  // The share of the problem's work its kernel stages do (the rest runs in torch stages;
  // PreparedProblem::kernel_share); 1 without torch stages.
  double kernel_share = 1;
  search::SearchState state;
  search::StopReason stop = search::StopReason::none;
  search::SessionCost cost;
  bool measured = true;        // false: planning only (no GPU), nothing was timed
  bool simulated = false;      // the synthetic model surface: times and costs are the model's, nothing ran
  std::string note;
};

nlohmann::json run_report_json(const RunReport& r);
std::string run_report_markdown(const RunReport& r);
// report.md's "Where the time goes": the best attempt's per-stage profile (Attempt::stage_ms) with
// each stage's program-level floor where the GPU and the program are known; "" without a profile.
std::string run_report_stage_times(const RunReport& r);
// The best kernel's stage with the most time above its floor (ProblemOutcome::worst_stage); empty
// stage where there is no profile or no floor.
ProblemOutcome::StageGap run_report_worst_stage(const RunReport& r);
ProblemOutcome run_report_outcome(const RunReport& r);
// report.md's speed-of-light line: t_SOL, the contract's SOL where it is higher, and (eager known) the most
// any correct kernel can gain over eager.
std::string run_report_sol_line(const RunReport& r);
// What the user ends up with (headline.h): "kernel", "fallback" (PyTorch at 1.00x: no correct
// kernel at least as fast as eager), "none" (eager not measured) or "plan" (nothing measured),
// and a sentence saying so with the reason.
std::string run_report_result_kind(const RunReport& r);
std::string run_report_result_text(const RunReport& r);
// Best speedup over eager after each attempt (1.0 until something correct beats nothing).
std::vector<double> run_report_best_so_far(const search::SearchState& s);

}  // namespace ucut::app
