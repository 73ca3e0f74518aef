// The worker pool: one worker per visible GPU (or per `--gpus` entry), each a WorkerClient with
// CUDA_VISIBLE_DEVICES set to its GPU. evaluate_all loads the problem on every worker, measures
// the baselines once, then hands candidates to whichever worker is free; records come back in
// candidate order. A candidate that kills its worker costs that worker a restart, nothing more.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "eval/evaluate.h"
#include "eval/worker_client.h"

namespace ucut::eval {

// "0,1,3" -> {0,1,3}; "all" or "" -> the GPUs nvidia-smi lists (at least {0}).
Result<std::vector<int>> pool_parse_gpus(const std::string& spec);

struct PoolOptions {
  std::vector<int> gpus{0};                  // one worker each; -1: no CUDA_VISIBLE_DEVICES (a Ray actor's GPU)
  WorkerOptions worker;                      // argv/env for each worker (gpu is set per worker)
  std::string compile_mode = "default";      // "" = eager only
  std::string baseline_cache;                // folder for cached baselines
  std::chrono::milliseconds load_timeout{300000};
  std::chrono::milliseconds baseline_timeout{1800000};
};

class WorkerPool {
 public:
  explicit WorkerPool(PoolOptions options);
  ~WorkerPool();

  // Loads the problem on every worker and measures baselines on the first; fills ctx. Fails when
  // the problem cannot be loaded (bad file) or no worker starts.
  Status prepare(const std::string& problem_path, ProblemContext& ctx, std::string& notes);
  // Evaluates every candidate; never fails (failures are records).
  std::vector<RunRecord> evaluate_all(const std::vector<BuiltLibrary>& candidates, const ProblemContext& ctx,
                                      const EvalOptions& opt,
                                      const std::function<void(const RunRecord&)>& on_record = nullptr);
  size_t size() const { return workers_.size(); }
  WorkerClient& worker(size_t i) { return *workers_[i]; }

 private:
  PoolOptions options_;
  std::vector<std::unique_ptr<WorkerClient>> workers_;
  std::string problem_path_;
};

}  // namespace ucut::eval
