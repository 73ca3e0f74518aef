// `ucutlass warmup`: the kernel zoo. Each device kernel the search opens with most often is
// compiled once into the kernel store (docs/kernel-abi.md, "Stored kernel units"), so a problem
// whose first candidates are in the zoo measures its first attempt without compiling anything.
// The zoo is one-GEMM programs of the common forms (operand dtype and precision x B's layout x
// epilogue), each ranked at a few representative shapes by the search's own analytic ranking;
// the top configurations' stored units are the zoo. Shapes and runtime knobs are arguments of
// a stored unit, so the shapes only choose which configurations rank first.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "build/builder.h"
#include "sol/hardware.h"
#include "sol/peaks.h"
#include "support/result.h"

namespace ucut::app {

struct ZooOptions {
  std::string tier = "v1";  // v1: the top 4 configurations per form and shape; full: the top 12
  int top = 0;              // > 0: overrides the tier's count
};

// One GEMM form of the zoo: a program over placeholder sizes M, N, K (ucutlass language text).
struct ZooForm {
  std::string name;     // e.g. "bf16_nt_bias_gelu"
  std::string program;  // with the sizes as @M@, @N@, @K@
};

// The zoo's forms: {bf16, f16} x {B K-major (x @ W.T), B N-major (x @ W)}, tf32 (K-major) and
// f32x3s, each with the common epilogues (identity, bias, bias + relu/gelu/gelu_tanh/silu/
// sigmoid/tanh, a runtime scale, a residual).
std::vector<ZooForm> warmup_zoo_forms();

// The representative shapes (M, N, K) each form is ranked at.
std::vector<std::array<int64_t, 3>> warmup_zoo_shapes();

struct ZooUnit {
  build::BuildUnit unit;   // a stored kernel unit (stored = true)
  std::string form;        // the first form that ranked it
  std::string config;      // its configuration name
};

// The zoo's distinct stored units, in the order found (best-ranked of the first form first).
// Errors: the tier is unknown, or a form does not check (a ucutlass bug).
Result<std::vector<ZooUnit>> warmup_zoo_units(const ZooOptions& options, const sol::HwSpec& hw);

// The union of several lists of zoo units (one per GPU the zoo is ranked for), each unit once, in
// the order first found: a zoo meant for the H100 and the H200 holds both rankings' openings.
std::vector<ZooUnit> warmup_union(std::vector<std::vector<ZooUnit>> lists);

// A suite's own zoo: each problem file is extracted and lowered (pipeline_prepare) and ranked as
// the search opens it (pipeline_plan: the start rung the contract's tolerance leaves, the faster
// rung's shapes, the diverse top-k); the stored units of those candidates. Problems are prepared
// `parallel` at a time; one that does not prepare or plan is reported through on_problem (with
// its error) and left out.
struct SuiteZooOptions {
  std::vector<std::string> files;
  sol::Policy policy = sol::Policy::tf32;
  std::string profile = "default";
  std::string gpu = "h200";
  int top = 3;                  // opening candidates per problem
  std::string out_dir;          // where problem.json files go (<out_dir>/<problem>/), reused when current
  int parallel = 4;
};
Result<std::vector<ZooUnit>> warmup_suite_units(
    const SuiteZooOptions& options,
    const std::function<void(const std::string& problem, int units, const std::string& error)>& on_problem);

}  // namespace ucut::app
