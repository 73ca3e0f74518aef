// `--executor ray`: kernel compiles on a Ray cluster (docs/scale-out.md). The build module's
// Compiler interface (build/compiler.h) is served by a bridge process,
// `python -m ucutlass_torch.ray_bridge --address ADDR`, which runs every nvcc job as a Ray task
// on whichever node Ray picks (CPU build nodes advertising the `ucutlass_compile` resource when
// there are any) and sends the outputs back; Ray is the engine (scheduling, retries, a node that
// dies mid-task re-runs its task elsewhere). Everything above the Compiler stays where it is:
// the content-addressed kernel cache on this machine (a job reaches Ray only on a miss, so
// nothing is built twice), the compile gate, the session, its journal. Evaluation stays on this
// host's GPUs (--gpus).
// Protocol: JSON lines over the bridge's stdin/stdout (ray_bridge.py's docstring); one reader
// thread routes replies to the compile threads waiting for them by id.
#pragma once

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "build/compiler.h"
#include "eval/child_process.h"
#include "support/result.h"

namespace ucut::app {

struct RayExecutorOptions {
  std::string address;                      // --ray-address: host:port of the head, ray://..., auto or local
  std::chrono::seconds start_timeout{180};  // connecting to the cluster
  std::chrono::seconds job_timeout{1800};   // one job, queueing on the cluster included
};

class RayCompiler final : public build::Compiler {
 public:
  // Starts the bridge and connects to the cluster. `local` gives the nvcc command lines and the
  // toolchain identity (the cache key); it never compiles here. Errors, all the environment's
  // (ErrorCode::subprocess or io, exit 3): Ray missing, the cluster unreachable or the address not
  // a Ray head (the message names the address and how to start a head).
  static Result<std::shared_ptr<RayCompiler>> start(const RayExecutorOptions& options,
                                                    std::shared_ptr<build::Compiler> local);
  ~RayCompiler() override;

  std::string version() override { return local_->version(); }
  std::vector<std::string> command(const build::CompileJob& job) override { return local_->command(job); }
  // Sends the job's inputs, runs it on the cluster, writes its output here. A compile error is
  // ok() with !ok (as nvcc's); a job Ray could not run (retries exhausted, the bridge gone) is an
  // error naming why.
  Result<build::CompileOutcome> compile(const build::CompileJob& job) override;

  int nodes() const { return nodes_; }
  // The Ray node the bridge's driver attached to (its local raylet); "" when Ray did not say.
  const std::string& driver_node() const { return driver_node_; }
  int compile_nodes() const { return compile_nodes_; }
  // Jobs each node ran (node id -> count), for the report.
  std::map<std::string, int> jobs_by_node() const;

 private:
  RayCompiler() = default;
  void read_replies();

  std::shared_ptr<build::Compiler> local_;
  RayExecutorOptions opt_;
  eval::ChildProcess child_;
  std::thread reader_;
  mutable std::mutex mu_;
  std::mutex write_mu_;
  std::condition_variable cv_;
  std::map<int, nlohmann::json> replies_;
  std::map<std::string, int> by_node_;
  std::atomic<int> next_id_{1};
  std::atomic<bool> stop_{false};
  bool dead_ = false;
  std::string dead_why_;
  int nodes_ = 0, compile_nodes_ = 0;
  std::string driver_node_;
};

}  // namespace ucut::app
