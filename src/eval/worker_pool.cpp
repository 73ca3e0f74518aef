#include "eval/worker_pool.h"

#include <cstdlib>
#include <mutex>
#include <sstream>
#include <thread>

#include "support/parallel.h"
#include "support/subprocess.h"

namespace ucut::eval {

Result<std::vector<int>> pool_parse_gpus(const std::string& spec) {
  std::vector<int> gpus;
  if (spec.empty() || spec == "all") {
    // the GPUs this process sees: CUDA_VISIBLE_DEVICES's entries when it is set (workers map
    // index i to its i-th entry, worker_visible_device), else every GPU nvidia-smi lists
    if (const char* vis = std::getenv("CUDA_VISIBLE_DEVICES"); vis && *vis) {
      const size_t n = visible_devices(vis).size();
      for (size_t i = 0; i < n; ++i) gpus.push_back(static_cast<int>(i));
      if (gpus.empty()) gpus.push_back(0);
      return gpus;
    }
    ProcessSpec ps;
    ps.argv = {"nvidia-smi", "--query-gpu=index", "--format=csv,noheader"};
    ps.timeout = std::chrono::milliseconds(10000);
    auto r = subprocess_run(ps);
    if (r && r->success()) {
      std::istringstream in(r->out);
      std::string line;
      while (std::getline(in, line))
        if (!line.empty() && std::isdigit(static_cast<unsigned char>(line[0]))) gpus.push_back(std::stoi(line));
    }
    if (gpus.empty()) gpus.push_back(0);
    return gpus;
  }
  std::istringstream in(spec);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (item.empty() || item.find_first_not_of("0123456789") != std::string::npos)
      return make_error(ErrorCode::invalid_input, "--gpus: '" + item + "' is not a GPU index",
                        "give a comma-separated list of indices such as 0,1 or 'all'");
    gpus.push_back(std::stoi(item));
  }
  return gpus;
}

WorkerPool::WorkerPool(PoolOptions options) : options_(std::move(options)) {
  for (int g : options_.gpus) {
    WorkerOptions w = options_.worker;
    if (g >= 0) w.gpu = g;  // -1: the worker gets its GPU elsewhere (a Ray actor's)
    workers_.push_back(std::make_unique<WorkerClient>(w));
  }
}

WorkerPool::~WorkerPool() {
  for (auto& w : workers_) w->shutdown();
}

Status WorkerPool::prepare(const std::string& problem_path, ProblemContext& ctx, std::string& notes) {
  problem_path_ = problem_path;
  ctx.path = problem_path;
  // Start and load in parallel: worker start-up (torch import, CUDA init) dominates.
  std::vector<Result<nlohmann::json>> loaded(workers_.size(), make_error(ErrorCode::internal, "not run"));
  std::vector<std::thread> threads;
  for (size_t i = 0; i < workers_.size(); ++i)
    threads.emplace_back([&, i] { loaded[i] = workers_[i]->load_problem(problem_path, options_.load_timeout); });
  for (auto& t : threads) t.join();
  for (auto& l : loaded)
    if (!l) return l.error();
  ctx.info = *loaded[0];
  auto env = workers_[0]->environment();
  if (env) ctx.env = *env;
  notes = measure_baselines(*workers_[0], ctx, options_.compile_mode, options_.baseline_cache,
                            options_.baseline_timeout);
  return ok_status();
}

std::vector<RunRecord> WorkerPool::evaluate_all(const std::vector<BuiltLibrary>& candidates, const ProblemContext& ctx,
                                                const EvalOptions& opt,
                                                const std::function<void(const RunRecord&)>& on_record) {
  std::vector<RunRecord> records(candidates.size());
  std::mutex report;
  // Thread w drives worker w (one GPU each).
  parallel_for(candidates.size(), workers_.size(), [&](size_t i, size_t w) {
    ProblemContext local = ctx;
    if (auto env = workers_[w]->environment(); env) local.env = *env;
    records[i] = evaluate_candidate(*workers_[w], candidates[i], local, opt);
    if (on_record) {
      std::lock_guard<std::mutex> lock(report);
      on_record(records[i]);
    }
  });
  return records;
}

}  // namespace ucut::eval
