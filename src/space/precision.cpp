#include "space/precision.h"

#include <fmt/format.h>

#include <variant>

namespace ucut::space {

double space_profile_rtol_f32(const std::string& profile) { return profile == "kb-v01" ? 1e-2 : 1e-4; }

Tf32Bound space_tf32_bound(const dsl::Program& p, sol::Policy policy, double rtol_f32) {
  Tf32Bound b;
  if (policy == sol::Policy::exact || rtol_f32 >= kTf32RelativeError) return b;
  int64_t largest_out = 0;  // the largest fp32 problem output, in elements
  for (const auto& t : p.tensors)
    if (t.role == dsl::TensorRole::out && t.dtype == dsl::DType::f32) largest_out = std::max(largest_out, t.numel());
  for (const auto& st : p.stages) {
    const auto* g = std::get_if<dsl::GemmStage>(&st.body);
    if (!g) continue;
    const dsl::Tensor* a = p.find_tensor(g->a.tensor);
    if (!a || a->dtype != dsl::DType::f32) continue;  // 16-bit data: no TF32 rung
    const int64_t result = g->m * g->n * g->batch;
    if (result <= 0 || largest_out < result) continue;  // outputs fewer than the result: errors may average
    b.fails = true;
    b.reason = fmt::format(
        "TF32 rounds each operand to 11 bits (relative error up to {:.1e} per product), beyond rtol {:.0e}: "
        "stage {} writes {} results and the problem has an output as large, so no reduction averages the "
        "rounding out; the precision ladder starts above tf32",
        kTf32RelativeError, rtol_f32, st.name, result);
    return b;
  }
  return b;
}

}  // namespace ucut::space
