#include "space/precision.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <variant>

#include "support/contract_profiles.h"

namespace ucut::space {

namespace {

int64_t largest_f32_output(const dsl::Program& p) {
  int64_t largest = 0;
  for (const auto& t : p.tensors)
    if (t.role == dsl::TensorRole::out && t.dtype == dsl::DType::f32) largest = std::max(largest, t.numel());
  return largest;
}

// The absolute error of a GEMM of two rescaled inputs (precision.h, kRescaledProductRms).
Tf32Bound rescaled_bound(const dsl::Program& p, double atol) {
  Tf32Bound b;
  const int64_t largest_out = largest_f32_output(p);
  for (const auto& st : p.stages) {
    const auto* g = std::get_if<dsl::GemmStage>(&st.body);
    if (!g) continue;
    const dsl::Tensor* a = p.find_tensor(g->a.tensor);
    const dsl::Tensor* w = p.find_tensor(g->b.tensor);
    if (!a || !w || a->dtype != dsl::DType::f32 || w->dtype != dsl::DType::f32) continue;
    if (a->role != dsl::TensorRole::in || w->role != dsl::TensorRole::in) continue;
    const int64_t result = g->m * g->n * g->batch;
    if (result <= 0 || largest_out < result) continue;
    const double sigma = std::sqrt(static_cast<double>(g->k)) * kRescaledProductRms * kTf32UnitRoundoff;
    if (4 * sigma <= atol) continue;
    b.fails = true;
    b.reason = fmt::format(
        "stage {} multiplies two problem inputs over K = {}: on the contract's rescaled trial (inputs x4 - 2, "
        "sign-mixed) TF32's rounding adds up to an absolute error of about {:.1e} (one standard deviation), "
        "beyond atol {:.0e} on outputs near zero; the precision ladder starts above tf32",
        st.name, g->k, sigma, atol);
    return b;
  }
  return b;
}

}  // namespace

double space_profile_rtol_f32(const std::string& profile) {
  const ContractProfile* p = contract_profile(profile);
  if (!p) p = &contract_profiles().front();  // names are checked where they are read
  return p->other.rtol;
}

Tf32Bound space_tf32_bound(const dsl::Program& p, sol::Policy policy, double rtol_f32) {
  Tf32Bound b;
  if (policy == sol::Policy::exact) return b;
  if (rtol_f32 >= kTf32RelativeError) return rescaled_bound(p, rtol_f32);
  const int64_t largest_out = largest_f32_output(p);  // the largest fp32 problem output, in elements
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
