// The speed-of-light bound for an evaluation: extract the problem's IR with the Python extractor
// (python -m ucutlass_torch.extract), then ask src/sol for t_SOL on the GPU the worker reports,
// preferring calibrated ceilings (EVAL-CONTRACT §4). The guard itself is in evaluate.cpp.
#pragma once

#include <string>

#include "support/result.h"

namespace ucut::eval {

struct SolLink {
  double t_sol_ms = 0;
  std::string source;   // "calibrated" | "datasheet"
  std::string hw;       // canonical hardware name used
};

// `problem_json`: an existing problem.json to use instead of extracting (may be empty).
Result<SolLink> sol_for_problem(const std::string& problem_py, const std::string& problem_json,
                                const std::string& gpu_name, const std::string& policy);

}  // namespace ucut::eval
