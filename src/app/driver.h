// What `ucutlass optimize` and `ucutlass bench` share: one problem's search assembled from its
// parts (space, compiler, evaluator, strategy, journal, memory seeds), the live progress line,
// and writing out/<problem>/ (best.ucut, report.json, report.md, and for real problems best.cu,
// best.so, model_new.py). Two sources of problems: the synthetic surface (fake_surface.h,
// problem names "synthetic" or "synthetic:<name>") and real problems prepared by the pipeline
// (pipeline.h) searched through the adapters over src/space, src/build and src/eval
// (adapters_*.h). Planning without a GPU does not search: see pipeline_plan.
#pragma once

#include <atomic>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "memory/experience_store.h"
#include "search/builtin_strategy.h"
#include "search/strategy.h"
#include "app/adapters_build.h"
#include "app/adapters_eval.h"
#include "app/adapters_space.h"
#include "search/fake_surface.h"
#include "search/memory_bridge.h"
#include "app/pipeline.h"
#include "app/run_report.h"
#include "search/session.h"
#include "space/precision.h"

namespace ucut::app {

struct DriverOptions {
  search::SessionOptions session;
  uint64_t seed = 1;
  int top_k = 8;
  int max_compiles = 0;                // fresh stored-unit compiles a search may start (0: no cap)
  sol::Policy policy = sol::Policy::tf32;
  std::string profile = "default";
  std::string out_dir = "out";
  bool resume = false;
  int lookahead = 0;                   // candidates compiling ahead per problem; 0: auto
  std::string strategy = "builtin";    // a name in strategy_registry.h
  nlohmann::json strategy_settings = nlohmann::json::object();  // StrategyContext::settings
  memory::MemoryDb* memory = nullptr;  // null: no seeding, no learning
  FILE* progress = nullptr;            // live progress line; null: quiet
};

// What a real (measured) search needs besides DriverOptions.
struct RealRunSetup {
  GpuWorkers* workers = nullptr;       // shared by the problems of a suite
  std::shared_ptr<build::Compiler> nvcc;
  std::string build_root;              // candidates' build folders
  bool use_cache = true;
  eval::EvalOptions eval;
  std::string compile_mode = "default";  // torch.compile baseline; "" = eager only
  std::string baseline_cache;
  int compile_baseline_after = 0;        // RealEvaluatorOptions::compile_baseline_after
};

// One problem's search with everything it owns.
class ProblemRun {
 public:
  // Recognised synthetic names: "synthetic", "synthetic:<name>" (name varies the surface).
  static bool is_synthetic(const std::string& problem);
  static Result<std::unique_ptr<ProblemRun>> synthetic(const std::string& problem, const DriverOptions& opt);
  // A prepared problem searched with real compiles and GPU evaluations. The GPU the workers
  // report decides the hardware row of the ranking and the SOL bound (calibrated if stored).
  static Result<std::unique_ptr<ProblemRun>> real(std::shared_ptr<const PreparedProblem> problem,
                                                  const RealRunSetup& setup, const DriverOptions& opt);

  // Planning with a strategy (no GPU, or --plan with a strategy other than the built-in one's plan):
  // the same search, but every candidate is only checked and emitted (compiled when `compile`),
  // and the analytic ranking's estimate stands in for its time. Nothing is measured: the report
  // says so (RunReport::measured false), no model_new.py is written, the memory learns nothing.
  static Result<std::unique_ptr<ProblemRun>> planned(std::shared_ptr<const PreparedProblem> problem,
                                                     const PlanOptions& plan, const DriverOptions& opt);

  search::SearchSession& session() { return *session_; }
  const std::string& name() const { return name_; }
  // The synthetic model surface: nothing compiles or runs (RunReport::simulated).
  bool simulated() const { return simulated_; }
  std::string out_dir() const { return opt_.out_dir + "/" + name_; }
  // The report after (or during) the search.
  RunReport report() const;
  // Writes best.ucut, report.json, report.md (real problems: also best.cu, best.so,
  // model_new.py, lowered.ucut) under out_dir(); learns into the memory.
  Status finish();
  // The RunRecords measured (real problems), for the result store.
  std::vector<eval::RunRecord> records() const;

 private:
  ProblemRun() = default;
  // The hardware row, memory key and search space of the prepared problem (real and planned runs).
  Status attach_space(const sol::HwSpec& hw);
  // Memory seeds, strategy, journal (old journals set aside unless resuming) and the session.
  Status assemble(search::SearchSpace& space, search::Compiler& compiler, search::Evaluator& evaluator,
                  search::Clock& clock, double t_sol, int lookahead);
  std::string name_;
  DriverOptions opt_;
  memory::MemoryKey key_;
  search::SeedTrace trace_;
  space::Tf32Bound tf32_bound_;  // real problems: plain TF32 cannot meet the tolerance (space/precision.h)
  // The lowest precision rung the problem's own analysis allows (pipeline_start_rung: 1 where the
  // TF32 bound fails, the summation-order rung where 3xTF32's does); set by assemble().
  int analytic_rung_ = 0;
  int analytic_rung() const { return analytic_rung_; }
  double t_sol_contract_ = 0;    // real problems: RunReport::t_sol_contract
  bool simulated_ = false;       // the synthetic surface: RunReport::simulated
  std::string note_;
  search::FakeClock fake_clock_;
  search::SteadyClock steady_;
  std::unique_ptr<search::SearchSpace> space_;
  std::unique_ptr<search::Compiler> compiler_;
  std::unique_ptr<search::Evaluator> evaluator_;
  std::shared_ptr<const PreparedProblem> prepared_;  // real problems only
  RealSpace* real_space_ = nullptr;
  RealEvaluator* real_evaluator_ = nullptr;
  std::unique_ptr<search::Strategy> strategy_;
  memory::MemorySeeds seeds_;    // what the memory retrieved (StrategyContext::memory)
  sol::HwSpec hw_;               // real problems: the hardware row the ranking uses
  // Real problems on a GPU whose hardware row differs from the prepared one: the SOL report on
  // that row (the report shows it, not the prepared problem's; empty: the prepared one holds).
  std::optional<sol::SolReport> sol_;
  bool measured_ = true;         // false: the analytic evaluator (planning with a strategy)
  std::unique_ptr<search::FileJournal> journal_;
  std::unique_ptr<search::SearchSession> session_;
};

// A problem that never reached a search (it did not extract or lower, or its program has no kernel
// stage): where the reference runs, the result is the PyTorch fallback at 1.00x (headline.h).
// Measures the baselines on a worker (setup.workers; none: nothing is measured), writes
// out/<problem>/model_new.py (the reference Model) and report.md / report.json, and returns the
// outcome: `failure` is `status` ("unsupported", "extract_error", ...) with eager_s set when the
// reference ran. `message` is why no kernel was searched; `t_sol` 0 when unknown.
ProblemOutcome fallback_problem(const std::string& problem_py, const std::string& status, const std::string& message,
                                double t_sol, const RealRunSetup* setup, const DriverOptions& opt);

// Planning one prepared problem (no GPU, or --plan): ranks its space, emits / compiles the top
// candidates (PlanOptions), writes out/<problem>/ (lowered.ucut, best.ucut = the best-ranked,
// best.cu / best.so when built, report.json / report.md with measured = false and `why` as the
// first line: "no GPU: nothing was measured").
struct PlanRun {
  std::string dir;
  Plan plan;
  double t_sol_contract = 0;  // RunReport::t_sol_contract of the plan's report
  std::vector<std::string> files;
  std::vector<std::string> notes;
};
Result<PlanRun> plan_problem(const PreparedProblem& p, const PlanOptions& plan, const DriverOptions& opt,
                             const std::string& why);

// "[  7/40] best 2.31x of 2.69x  71% SOL | gemm_tf32_t128x256x32_... (rank) 1.02 ms": the best's
// speedup over eager, the ceiling (eager over t_sol_contract, where both are known), % of SOL,
// then this attempt.
std::string progress_line(const search::Attempt& a, const search::SearchState& s, int budget,
                          double t_sol_contract = 0);

}  // namespace ucut::app
