// The C++ side of the worker protocol (python/ucutlass_torch/protocol.py): one persistent
// `python -m ucutlass_torch.worker` per GPU, spoken to in JSON lines with a deadline per request.
// A request past its deadline kills the worker's process group (a hung kernel cannot be stopped
// any other way); a worker that dies or reports a fatal CUDA error is replaced on the next request,
// and the problem it had loaded is loaded again, so one bad candidate never ends a run. A worker
// whose PyTorch sees no CUDA GPU (its ping says gpu "cpu") is refused: it would time the CPU.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "eval/child_process.h"
#include "support/result.h"

namespace ucut::eval {

struct WorkerOptions {
  std::vector<std::string> argv;               // empty: {python_interpreter(), "-m", "ucutlass_torch.worker"}
  std::map<std::string, std::string> env;      // added to python_env()
  std::optional<int> gpu;                      // sets CUDA_VISIBLE_DEVICES (worker_visible_device)
  std::chrono::milliseconds start_timeout{120000};  // the first ping (imports torch, inits CUDA)
};

// Outcome of a request that did not produce a response line.
struct WorkerFailure {
  bool timed_out = false;     // killed by us after the deadline
  std::string message;        // what happened, with the worker's stderr tail
};

// The CUDA_VISIBLE_DEVICES of a worker for GPU `index`, which counts the GPUs this process sees:
// the index itself, or the index-th entry of the parent's CUDA_VISIBLE_DEVICES when that is set
// (a run started under CUDA_VISIBLE_DEVICES=1 evaluates on physical GPU 1, not 0). An index past
// the parent's list is an error.
Result<std::string> worker_visible_device(int index, const std::string& parent);
// The entries of a CUDA_VISIBLE_DEVICES value ("2,3" -> {"2", "3"}; empty entries dropped).
std::vector<std::string> visible_devices(const std::string& parent);

class WorkerClient {
 public:
  explicit WorkerClient(WorkerOptions options);
  ~WorkerClient();

  // Sends `req` (an "id" is added) and returns the worker's response object, whatever its
  // "status". Error codes: timeout (the worker was killed), subprocess (it could not start or
  // died; the message carries its exit and stderr tail), io.
  Result<nlohmann::json> request(nlohmann::json req, std::chrono::milliseconds timeout);

  // load_problem, remembered so a restarted worker loads it again before the next request.
  Result<nlohmann::json> load_problem(const std::string& path, std::chrono::milliseconds timeout);
  // The worker's environment (ping's "env"); starts the worker if needed.
  Result<nlohmann::json> environment();

  int restarts() const { return restarts_; }
  pid_t pid() const { return child_.pid(); }
  // Graceful shutdown request, then kill after a grace period.
  void shutdown();

 private:
  Status ensure_started();
  Result<nlohmann::json> raw_request(nlohmann::json req, std::chrono::milliseconds timeout);
  void discard(const std::string& why);

  WorkerOptions options_;
  ChildProcess child_;
  bool started_ = false;
  int next_id_ = 1;
  int restarts_ = 0;
  int starts_ = 0;
  std::string problem_path_;
  nlohmann::json env_;
};

}  // namespace ucut::eval
