// One candidate's evaluation, end to end: ask the worker to run the correctness and timing
// protocols, turn its answer (or its death, or a timeout) into a RunRecord, add baselines and
// speedups, and apply the speed-of-light guard. The record-building steps are pure functions so
// they are tested without a worker.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "eval/run_record.h"
#include "sol/peaks.h"
#include "support/clock.h"
#include "eval/worker_client.h"

namespace ucut::eval {

// EVAL-CONTRACT §4: a candidate measured faster than 0.9·t_SOL is rejected.
inline constexpr double kSolGuard = 0.9;

struct EvalOptions {
  std::string profile = "default";             // tolerance profile: default | kb-v01
  sol::Policy policy = sol::Policy::tf32;      // precision policy named in the record
  int trials = 5;
  bool rescaled = true;
  int min_reps = 30;
  double target_s = 0.1;                       // measured time the timing loop aims for (timing.TARGET_S)
  std::chrono::milliseconds timeout{120000};   // per evaluation (correctness + timing)
  std::string tool_commit;
};

// What is known about the problem before any candidate runs.
struct ProblemContext {
  std::string path;
  nlohmann::json info = nlohmann::json::object();       // load_problem's "problem"
  nlohmann::json env = nlohmann::json::object();        // the worker's environment
  double eager_ms = std::nan("");
  double compile_ms = std::nan("");
  std::string compile_mode = "default";
  double t_sol_ms = std::nan("");                       // NaN: no SOL bound known
  std::string sol_source = "none";                      // datasheet | calibrated | given | none
};

// What the evaluator runs: a candidate's built library (the search's candidate after build/;
// `ucutlass eval` builds its .ucut files or takes .so files as they are).
struct BuiltLibrary {
  std::string name;            // the candidate's name, shown in tables
  std::string so_path;         // the built library ("" when the build failed)
  std::string compile_error;   // non-empty: record compile_error without running anything
};

// Fills problem and provenance fields common to every record of a problem.
RunRecord record_start(const BuiltLibrary& cand, const ProblemContext& ctx, const EvalOptions& opt);
// Maps the worker's evaluate "result" object onto the record (status from verdict, correctness,
// timing). Unknown verdicts become launch_error with the verdict in the message.
void record_apply_result(RunRecord& r, const nlohmann::json& result);
// Speedups, fraction of SOL, the SOL guard and `counted`. Call last.
void record_finish(RunRecord& r, const ProblemContext& ctx);

// Runs one candidate on a worker whose problem is loaded. Never fails: every failure is a record.
RunRecord evaluate_candidate(WorkerClient& worker, const BuiltLibrary& cand, const ProblemContext& ctx,
                             const EvalOptions& opt);

// Measures baselines ("eager" unless with_eager is false, and "compile" or "max-autotune" when
// compile_mode is not empty) into ctx (cached by the worker under cache_dir). `cached_only_mode`
// (e.g. "default", a baseline put off) is taken too when the worker's cache holds it, never
// measured. Failures leave NaN and return the message.
std::string measure_baselines(WorkerClient& worker, ProblemContext& ctx, const std::string& compile_mode,
                              const std::string& cache_dir, std::chrono::milliseconds timeout,
                              bool with_eager = true, const std::string& cached_only_mode = "");

// The ucutlass source commit (git rev-parse HEAD of the source tree, "+dirty" when modified), or
// "unknown".
std::string tool_commit();


}  // namespace ucut::eval
