// Auto-lowering: a Problem IR (problem.h) to a μCUTLASS program (dsl/program.h) whose knobs are
// `auto` except the precision, which follows the policy. The program is printed and re-checked by
// dsl_compile, so every lowered program is a valid program text. The passes and their order are
// listed in lower.cpp; docs/optimizer.md ("Lowering") describes what lowers and what does not.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "dsl/program.h"
#include "problem/problem.h"
#include "sol/peaks.h"
#include "support/result.h"

namespace ucut::lower {

struct LowerOptions {
  sol::Policy policy = sol::Policy::tf32;  // what GEMM math may use on fp32 data
  std::string gpu = "h200";                // hardware table row for the bf16 conversion decision
  std::string name;                        // program name; empty: the problem's name
  std::string label;                       // what error messages start with; empty: the problem's name
  // An operation the language cannot express becomes a torch stage (PyTorch runs it, the rest
  // stays kernels) instead of failing the problem; false: fail with the op named (strict).
  bool torch_stages = true;
  std::set<int> torch_ops;                 // problem op ids run in torch stages from the start
};

struct LoweredProgram {
  dsl::Program program;            // as re-checked by dsl_compile from `text`
  std::string text;                // dsl_print of the program (what `ucutlass lower` writes)
  std::vector<std::string> notes;  // decisions worth telling the user (fallbacks, dead ops, ...)
  std::vector<int> torch_ops;      // problem op ids that run in torch stages (sorted)
};

// Lowers one problem. An operation outside the lowerable vocabulary runs in a torch stage (with
// LowerOptions::torch_stages; the note names it and why); a problem that keeps no kernel stage, or
// whose operation cannot run in one either, fails with ErrorCode::unsupported and a message naming
// the op ("op 3 (conv2d): ..."); a lowered program that the checker rejects is
// ErrorCode::internal (a bug in a pass), with the checker's diagnostics.
Result<LoweredProgram> lower_problem(const problem::Problem& problem, const LowerOptions& options);

}  // namespace ucut::lower
