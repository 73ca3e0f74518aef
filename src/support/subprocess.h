// Running child processes (nvcc, python) with captured output and a wall-clock limit.
// The child runs in its own process group so a timeout kills it and everything it started.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "support/result.h"

namespace ucut {

struct ProcessSpec {
  std::vector<std::string> argv;                // argv[0] is looked up on PATH
  std::string cwd;                              // empty: inherit
  std::map<std::string, std::string> env_set;   // added to (or replacing in) the environment
  std::string stdin_text;                       // written to the child's stdin, then closed
  std::chrono::milliseconds timeout{0};         // 0: no limit
  // When it becomes true the child's process group is killed (a run stopping early: its
  // compiles in flight are no longer wanted). nullptr: never.
  const std::atomic<bool>* abort = nullptr;
  // Called with each piece of the child's stderr as it arrives (ProcessResult::err still gets all
  // of it): a command showing a child's progress while it runs. Empty: none.
  std::function<void(std::string_view)> on_err;
};

struct ProcessResult {
  int exit_code = -1;      // valid when !signaled && !timed_out
  bool signaled = false;   // killed by a signal (crash)
  int signal = 0;
  bool timed_out = false;  // killed by us after spec.timeout
  bool aborted = false;    // killed by us because *spec.abort became true
  std::string out;         // stdout
  std::string err;         // stderr
  double seconds = 0;      // wall time
  bool success() const { return !signaled && !timed_out && !aborted && exit_code == 0; }
};

// Runs the process to completion. Fails only when the process could not be started at all;
// a crash, timeout or non-zero exit is a ProcessResult, not an error.
Result<ProcessResult> subprocess_run(const ProcessSpec& spec);

// Shell-quotes argv for messages ("nvcc -O3 'a b.cu'").
std::string subprocess_format(const std::vector<std::string>& argv);

}  // namespace ucut
