// The headline figures of a suite (EVAL-CONTRACT §5), computed in one place so every printer
// (terminal, report.md, report.json, HTML) shows the same numbers:
//   - geomean speedup over PyTorch eager across ALL non-degenerate problems, a problem without
//     a correct candidate counting as 1.0x (the user keeps PyTorch);
//   - geomean speedup over torch.compile, same rule, over the problems where torch.compile was
//     timed;
//   - fast_p for p in {1, 1.5, 2}: the share of non-degenerate problems with a correct candidate
//     strictly more than p times faster than eager;
//   - geomean fraction of SOL: t_SOL / t_best, or t_SOL / t_eager for a problem without a correct
//     candidate (what the user runs then);
//   - failures counted by status (the status of a failed problem's last attempt, or the reason it
//     never ran: "unsupported", "extract_error", ...);
//   - the correct kernels that passed by the contract's reference-class pass (float64), counted
//     and named: they differ from the fp32 reference by more than the tolerance, and are closer
//     to the model evaluated in float64 than it is;
//   - median time to best over the correct problems: seconds from the start of a problem's search
//     (in a suite, the suite's start: problems share the GPU and the compile cores) until its
//     best candidate was measured;
//   - cost: wall time, candidates compiled, compile seconds, GPU seconds, LLM tokens;
//   - the ceiling: the same three geomeans as if every problem ran at t_sol_contract (the
//     speed of light at the cheapest precision its tolerance leaves), over the problems whose
//     t_sol_contract is known: what no search can exceed under the contract.
// Degenerate problems (EVAL-CONTRACT §1) are listed apart and enter no figure.
// A problem's result is one of three (docs/eval-contract.md §5): a correct kernel at least as fast
// as PyTorch eager ("ok"); the PyTorch fallback at 1.00x, where the reference ran (eager was
// measured) but no correct kernel beat it (none correct, slower than eager, or the problem did not
// lower: the exported ModelNew then runs the reference); or a failure (not even the reference
// could be measured: a broken problem file, planning without a GPU).
// A simulated suite (the synthetic model surface, fake_surface.h) says so in its first line, and
// its cost figures are labelled modelled beside the seconds the run really took.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ucut::app {

struct ProblemOutcome {
  std::string name;
  bool degenerate = false;
  std::string failure;         // empty when a correct candidate exists
  double best_s = 0;           // best correct time; 0 when none
  double eager_s = 0;
  double compile_s = 0;        // torch.compile; 0 when not timed
  double t_sol = 0;
  double t_sol_contract = 0;   // SOL at the precision the tolerance leaves (RunReport); 0 unknown
  double kernel_share = 1;     // the work its kernel stages do (RunReport::kernel_share)
  int attempts = 0;
  int attempts_to_best = 0;    // 1-based index of the attempt that found the best; 0 when none
  double time_to_best_s = 0;   // search seconds until the best was measured; 0 when none or unknown
  double first_s = 0;          // search seconds until the first measured attempt; 0 when none or unknown
  std::string stop_reason;
  std::string best_name;
  bool reference_limited = false;   // no correct candidate, and a mismatch was the reference's rounding
  bool passed_by_float64 = false;   // the best kernel passed only by the reference-class pass (float64)
  std::vector<double> best_so_far;  // speedup over eager after each attempt (1.0 before any)
  // Each evaluation's GPU time as [start, end] in search seconds (its attempt's at_s less its gpu_s,
  // and at_s): how busy the GPU was over the search (headline_gpu_busy_search).
  std::vector<std::pair<double, double>> gpu_spans;
  // The best kernel's stage with the most time above its program-level floor (its per-stage
  // profile, docs/eval-contract.md "Per-stage times"); stage empty where none was profiled or no
  // floor is known. share: of the stages' summed time.
  struct StageGap {
    std::string stage, kind, config;
    double ms = 0, floor_ms = 0, share = 0;
  } worst_stage;
  long long tokens_in = 0, tokens_out = 0;  // the strategy's LLM usage (zero without one)
  double llm_cost_usd = 0;

  // A correct kernel was found (it may still be slower than eager).
  bool kernel_found() const { return failure.empty() && best_s > 0; }
  // The result is that kernel: correct and not slower than eager (unknown eager: kept).
  bool correct() const { return kernel_found() && !(eager_s > 0 && best_s > eager_s); }
  // The result is PyTorch itself at 1.00x: no usable kernel, and the reference was measured.
  bool fallback() const { return !correct() && eager_s > 0; }
  // Why the result is the fallback: "slower than eager (0.83x)", or the failure's status.
  std::string fallback_reason() const;
  // "ok", "fallback (<reason>)", or the failure ("mismatch (reference-limited)" where that
  // applies), for reports.
  std::string status() const;
  double speedup_eager() const { return correct() && eager_s > 0 ? eager_s / best_s : 1.0; }
  double speedup_compile() const { return correct() && compile_s > 0 ? compile_s / best_s : 1.0; }
  // t_SOL over the time the user ends up with; 0 when unknown.
  double frac_sol() const;
  // The most any correct kernel can reach: eager, compile and t_SOL over t_sol_contract (the
  // last at most 1); 0 when a time they need is unknown.
  double ceiling_eager() const;
  double ceiling_compile() const;
  double ceiling_frac_sol() const;
};

struct CostFigures {
  double wall_s = 0;
  int compiled = 0;
  double compile_s = 0;
  double gpu_s = 0;
  std::map<std::string, double> gpu_phases;  // gpu_s by phase (the worker's; empty where not reported)
  long long tokens_in = 0, tokens_out = 0;
  // The compiler's side (build::BuildStats; 0 where not measured, e.g. a simulated run):
  int attempts = 0;                 // evaluated attempts
  long long nvcc_jobs = 0;
  double nvcc_s = 0;                // nvcc core-seconds of the whole run
  long long stored_built = 0, stored_reused = 0;  // stored kernel units compiled / taken from the store
  int compile_slots = 0;            // the compile gate's width
  // The compile gate's usage (CompileGate::Usage): the time a candidate waited for a compile slot,
  // and the slot-seconds held meanwhile (issue 37: every slot busy while any candidate waits).
  double compile_waiting_s = 0;
  double compile_slot_s_waiting = 0;
  // The GPU workers' side (GpuWorkers::usage; 0 where not measured): time a worker was held, of
  // which loading problems (each switch of problem on a worker loads it again).
  double worker_busy_s = 0;
  double worker_load_s = 0;
  int worker_loads = 0;
  double worker_kept_load_s = 0;    // of the loads, those the worker answered from a kept problem
  int worker_kept_loads = 0;
  double worker_baseline_s = 0;     // of which measuring baselines (eager, torch.compile)
  // The search itself (the suite scheduler's run, without preparing and finishing) and the GPUs it
  // evaluated on: the window of headline_gpu_busy_search. 0 where not measured.
  double search_s = 0;
  int gpus = 0;
};

struct Headline {
  int problems = 0;            // all problems, degenerate included
  int counted = 0;             // non-degenerate: the denominator of every figure
  int degenerate = 0;
  int correct = 0;             // counted problems whose result is a correct kernel (ProblemOutcome::correct)
  int fallback = 0;            // counted problems whose result is the PyTorch fallback at 1.00x
  std::map<std::string, int> fallbacks;   // why (slower than eager, mismatch, unsupported, ...) -> count
  double geomean_eager = 1.0;
  double geomean_compile = 1.0;
  int compile_counted = 0;     // counted problems with a torch.compile time
  std::map<std::string, double> fast_p;   // "fast_1", "fast_1.5", "fast_2" -> share in [0, 1]
  // Share of counted problems whose result is at least as fast as eager: a kernel, or the
  // fallback at 1.00x (fast_1 is KernelBench's strict "faster than").
  double at_least_eager = 0;
  double geomean_frac_sol = 0; // over counted problems with a known t_SOL
  std::map<std::string, int> failures;    // status -> count (counted problems neither correct nor fallback)
  int reference_limited = 0;   // failures whose mismatches were the fp32 reference's rounding
  // Counted problems whose result is a kernel that passed by the reference-class pass
  // (EVAL-CONTRACT §1: no further from float64 than the fp32 reference), and their names.
  int passed_by_float64 = 0;
  std::vector<std::string> float64_passes;
  // One line per counted problem without a kernel result (fallbacks and failures), in suite order:
  // "name: status after N attempts (stop reason)".
  std::vector<std::string> failed;
  // Median over correct problems whose journal has times (issue 6: under 10 minutes); 0: none.
  double median_time_to_best_s = 0;
  int time_to_best_counted = 0;
  // Search seconds to each problem's first measured attempt (issue 37: the first within 60 s):
  // the earliest (the suite's first measurement), median and largest over the problems that have
  // one, and the problems without any attempt.
  double min_first_s = 0, median_first_s = 0, max_first_s = 0;
  // Every counted problem's evaluation spans (ProblemOutcome::gpu_spans), for the GPU busy share.
  std::vector<std::pair<double, double>> gpu_spans;
  int without_attempt = 0;
  // Evaluated attempts a problem (all problems, those without one at 0): the median, and how many
  // problems had at least three (the search got past its opening).
  double median_attempts = 0;
  int three_attempts = 0;
  // The ceiling (ProblemOutcome::ceiling_*), geomeans over the counted problems where it is known.
  double ceiling_eager = 0, ceiling_compile = 0, ceiling_frac_sol = 0;
  int ceiling_counted = 0;
  CostFigures cost;
  // Every figure came from the synthetic model surface: nothing compiled or ran.
  bool simulated = false;
  double run_wall_s = 0;       // simulated: the seconds the run itself took (cost holds the model's)
};

// The first line of everything a simulated run prints or writes.
inline constexpr const char* kSimulatedBanner = "SIMULATED (model surface, nothing ran)";

Headline headline_compute(const std::vector<ProblemOutcome>& problems, const CostFigures& cost);
// nvcc core-seconds over the compile slots' seconds of the run, and GPU seconds over the run's
// wall time (0 when unknown).
double headline_compile_busy(const CostFigures& cost);
// The compile slots' busy share while a candidate waited for one (0 when none waited).
double headline_compile_busy_waiting(const CostFigures& cost);
double headline_gpu_busy(const CostFigures& cost);
// The GPUs' busy share of the search from its first measurement (issue 37: "busy at least 80% of
// the search once the first candidates are ready"): the evaluations' GPU seconds inside
// [the first evaluation's start, the search's end], over that window times the GPUs; 0 where the
// search length, the GPUs or any span is unknown. Sets `window_s` to the window's length.
double headline_gpu_busy_search(const Headline& h, double* window_s = nullptr);
// The evaluations' seconds by phase, largest first, as " (candidate 40, checks 22, ...)"; ""
// when the worker reported none.
std::string headline_phases(const CostFigures& cost);
nlohmann::json headline_to_json(const Headline& h);
// A kernel's stage most above its floor as report.json writes it (the optimize report's best, the
// bench report's problems): null where there is none.
nlohmann::json stage_gap_to_json(const ProblemOutcome::StageGap& w);
// A few lines for the terminal and report.md.
std::string headline_render(const Headline& h);

}  // namespace ucut::app
