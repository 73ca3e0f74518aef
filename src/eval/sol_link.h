// The speed-of-light bound for an evaluation: extract the problem's IR with the Python extractor
// (python -m ucutlass_torch.extract), then ask src/sol for t_SOL on the GPU the worker reports,
// preferring calibrated ceilings (EVAL-CONTRACT §4). The guard itself is in evaluate.cpp.
#pragma once

#include <string>
#include <utility>

#include "sol/peaks.h"

#include "support/result.h"

namespace ucut::eval {

struct SolLink {
  double t_sol_ms = 0;
  std::string source;   // "calibrated" | "datasheet"
  std::string hw;       // canonical hardware name used
};

// A problem.json in /tmp that is deleted with this object (move-only).
class TempProblemJson {
 public:
  explicit TempProblemJson(std::string path) : path_(std::move(path)) {}
  TempProblemJson(TempProblemJson&& o) noexcept : path_(std::move(o.path_)) { o.path_.clear(); }
  TempProblemJson& operator=(TempProblemJson&&) = delete;
  TempProblemJson(const TempProblemJson&) = delete;
  ~TempProblemJson();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The extractor's time limit per problem file, in seconds (docs/problem-ir.md): the value of
// $UCUTLASS_EXTRACT_TIMEOUT when it is a positive number, else 120 (python/ucutlass_torch/deadline.py
// has the same default).
int extract_timeout_s();

// Runs `python -m ucutlass_torch.extract problem_py -o json_path --timeout T` with the project's
// Python (the one way every command but `extract` runs the extractor); T = timeout_s, or
// extract_timeout_s() when 0. Its progress notes ("still extracting after 5 s, in get_inputs() at
// line 14") are shown on stderr as they come. Errors name the problem and the fix: the extractor's
// own message (it names the line, a missing import, the time limit) when it failed on the problem,
// invalid_input; a Python that cannot run it, subprocess.
Status run_extractor(const std::string& problem_py, const std::string& json_path, int timeout_s = 0);

// Runs the Python extractor on problem_py into a temporary problem.json. `eval` starts it
// beside the worker start-up (both import torch: done one after the other they cost twice).
Result<TempProblemJson> extract_problem_json(const std::string& problem_py);

// `problem_json`: an existing problem.json to use instead of extracting (may be empty).
Result<SolLink> sol_for_problem(const std::string& problem_py, const std::string& problem_json,
                                const std::string& gpu_name, sol::Policy policy);

}  // namespace ucut::eval
