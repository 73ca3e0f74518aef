// Shared pieces of the GEMM emitters (gemm_sm90.cpp: CUTLASS 3.x wgmma kernels; gemm_sm80.cpp:
// CUTLASS 2.x fp32-faithful kernels; gemm_grouped.cpp): the resolved plan of one GEMM problem
// (tensors, sizes, knobs after gemm_resolve_auto, the batch folding) and CUTLASS type names.
#pragma once

#include <string>

#include "codegen/stage_emitter.h"
#include "dsl/gemm_rules.h"
#include "dsl/program.h"
#include "support/result.h"

namespace ucut::codegen {

struct GemmPlan {
  const dsl::GemmStage* stage = nullptr;
  const dsl::Tensor* a = nullptr;
  const dsl::Tensor* b = nullptr;
  const dsl::Tensor* out = nullptr;
  dsl::GemmKnobs knobs;       // resolved: no auto left
  bool stages_auto = false;   // the program said `stages auto`: sm90 uses StageCountAutoCarveout
  int64_t m = 0, n = 0, k = 0, l = 1;  // as launched (a 2-D B in a batched GEMM folds L into M)
  bool folded = false;
  std::string ns;             // namespace of the stage's code: "ucut_s<index>"
  std::string config_name;
};

// Resolves and re-checks the stage; a rule violation here means the checker let it through, so
// it is reported as an internal error naming the rule.
Result<GemmPlan> gemm_plan(const dsl::Program& program, int stage_index, const dsl::GemmStage& stage,
                           const std::string& out_name, const std::string& ns);

// "cutlass::half_t", "cutlass::bfloat16_t", "float".
const char* cutlass_element(dsl::DType t);

// Index of tensor `name` in program.tensors (UCUT_CHECKed to exist).
int tensor_index(const dsl::Program& program, const std::string& name);

Result<StageCode> gemm_emit_sm90(const dsl::Program& program, const GemmPlan& plan);
Result<StageCode> gemm_emit_sm80(const dsl::Program& program, const GemmPlan& plan);

}  // namespace ucut::codegen
