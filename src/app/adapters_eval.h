// RealEvaluator: the search's Evaluator (interfaces.h) over src/eval. GpuWorkers holds one
// persistent `python -m ucutlass_torch.worker` per GPU (eval::WorkerPool makes them, one
// CUDA_VISIBLE_DEVICES each) and lends them out one at a time; a worker is (re)loaded with the
// problem it is asked for, so the problems of a suite share the workers.
// Baselines are measured once per problem (measure_baselines, cached by the worker) and the
// evaluation contract, tolerance profile and the speed-of-light guard are eval's
// (evaluate_candidate with ProblemContext::t_sol_ms). With more than one GPU it measures ahead
// (search/interfaces.h: the session measures each candidate as soon as it is built, on whichever
// GPU is free; evaluate() then hands back the stored outcome, so the session's order, and so the
// run for a seed, is unchanged).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "eval/evaluate.h"
#include "eval/worker_pool.h"
#include "search/interfaces.h"

namespace ucut::app {

// Who goes first when several callers wait for a worker: a problem's first evaluation (its
// problem was usually just loaded for its baseline) before everything else, which waits in arrival
// order; among equals, a caller whose problem is already loaded on the free worker (no reload).
enum class GpuTurn { normal = 0, first_attempt = 1 };

class GpuWorkers {
 public:
  explicit GpuWorkers(std::vector<int> gpus, eval::WorkerOptions worker = {});
  ~GpuWorkers();
  size_t size() const { return pool_.size(); }
  // Runs fn on a free worker with `problem` loaded (waits for one to be free, in GpuTurn order).
  // The error is the problem's load failure (a bad file, or no worker could start).
  Result<nlohmann::json> with_worker(const std::string& problem, std::chrono::milliseconds load_timeout,
                                     const std::function<void(eval::WorkerClient&)>& fn,
                                     GpuTurn turn = GpuTurn::normal);
  // Time the workers were held (all of them together), and the problem loads within it.
  struct Usage {
    double busy_s = 0;
    double load_s = 0;
    int loads = 0;
    // of which the worker had the problem still loaded from before (its answer says "kept": the
    // worker keeps small problems when it moves to another)
    double kept_load_s = 0;
    int kept_loads = 0;
    double baseline_s = 0;  // measuring baselines (eager, torch.compile) inside a held worker
  };
  Usage usage();
  // A caller's baseline measurement took this long while it held a worker (usage().baseline_s).
  void note_baseline_seconds(double s);
  // The problem a worker has loaded ("" for none) and the callers waiting for a worker: tests.
  std::string loaded(size_t worker);
  size_t waiting();
  // The GPU name the first worker reports ("NVIDIA H200"); starts it if needed.
  Result<std::string> gpu_name();

 private:
  eval::WorkerPool pool_;
  std::mutex mu_;
  std::condition_variable cv_;
  struct Waiter {
    GpuTurn turn;
    uint64_t seq;
    const std::string* problem;
    std::optional<size_t> worker;  // set when handed a worker
  };
  void dispatch_locked();  // hands free workers to waiters (mu_ held)
  std::vector<Waiter*> waiting_;
  uint64_t next_seq_ = 0;
  Usage usage_;
  std::vector<bool> busy_;
  std::vector<std::string> loaded_;
  std::vector<nlohmann::json> info_;
};

// Whether this machine has an NVIDIA GPU the workers could use (nvidia-smi lists one), unless
// UCUTLASS_NO_GPU is set to a non-empty value other than 0.
bool gpu_present();

// --gpus: "N" (a count: GPUs 0..N-1), "0,2" (those indices) or "all" (every GPU nvidia-smi lists).
Result<std::vector<int>> gpus_parse(const std::string& spec);
// The count a --gpus value names ("2" -> 2, 1 to 999), or nullopt for anything else ("all", "0,2").
std::optional<int> gpus_count(const std::string& spec);

// RunRecord status -> RunStatus (unknown statuses are launch errors).
search::EvalOutcome eval_outcome_from_record(const eval::RunRecord& r);

struct RealEvaluatorOptions {
  std::string problem_py;                  // absolute path of the KernelBench problem file
  eval::EvalOptions eval;
  std::string compile_mode = "default";    // torch.compile baseline; "" = eager only
  std::string baseline_cache;              // folder the worker caches baselines in
  double t_sol_s = 0;                      // the SOL bound of the guard (0: no guard)
  std::string sol_source = "datasheet";
  std::chrono::milliseconds load_timeout{300000};
  std::chrono::milliseconds baseline_timeout{1800000};
  // 0: torch.compile's baseline is measured with eager's, before any candidate. N > 0: after the
  // problem's first N evaluations, just before the next (a suite on one GPU: each problem's first
  // attempt comes after its eager baseline only; torch.compile's own compile no longer holds the
  // GPU worker ahead of every problem's first attempt). A search that ends before then reports no
  // torch.compile figure for the problem.
  int compile_baseline_after = 0;
};

class RealEvaluator final : public search::Evaluator {
 public:
  RealEvaluator(GpuWorkers& workers, RealEvaluatorOptions options);
  search::Baselines baselines() override;
  search::EvalOutcome evaluate(const search::Candidate& c, const search::CompileOutcome& built) override;
  // More than one GPU: measure each candidate as soon as it is built (interfaces.h).
  bool measures_ahead() const override { return workers_.size() > 1; }
  // Thread-safe: measures now and keeps the outcome for evaluate().
  void measure_ahead(const search::Candidate& c, const search::CompileOutcome& built) override;
  std::optional<double> late_compile_baseline_s() override;

  const std::string& notes() const { return notes_; }
  const eval::ProblemContext& context() const { return ctx_; }
  // Every RunRecord measured so far (for the result store), in measuring order.
  std::vector<eval::RunRecord> records();

 private:
  search::EvalOutcome measure(const search::Candidate& c, const search::CompileOutcome& built);
  GpuWorkers& workers_;
  RealEvaluatorOptions opt_;
  eval::ProblemContext ctx_;
  std::string notes_;
  std::mutex mu_;
  std::map<std::string, search::EvalOutcome> ahead_;   // candidate hash -> outcome measured ahead
  bool compile_pending_ = false;  // torch.compile's baseline is put off (compile_baseline_after)
  int measured_ = 0;              // evaluations so far
  // Set once baselines() has filled ctx_: a candidate built before that (a suite compiles the
  // opening while the baselines are measured) is measured when the session asks, not ahead.
  std::atomic<bool> baselines_done_{false};
  std::vector<eval::RunRecord> records_;
};

}  // namespace ucut::app
