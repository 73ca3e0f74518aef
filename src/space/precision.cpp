#include "space/precision.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "space/kinds/kinds.h"
#include "support/contract_profiles.h"

namespace ucut::space {

namespace {

// The fp32 GEMM stages whose result reaches a problem output element for element (some fp32
// output has as many elements): TF32's rounding there is the output's error, which no reduction
// averages out. 16-bit data has no TF32 rung.
std::vector<std::pair<const dsl::Stage*, const dsl::GemmStage*>> unreduced_f32_gemms(const dsl::Program& p) {
  int64_t largest_out = 0;
  for (const auto& t : p.tensors)
    if (t.role == dsl::TensorRole::out && t.dtype == dsl::DType::f32) largest_out = std::max(largest_out, t.numel());
  std::vector<std::pair<const dsl::Stage*, const dsl::GemmStage*>> out;
  for (const auto& st : p.stages) {
    const auto* g = std::get_if<dsl::GemmStage>(&st.body);
    if (!g) continue;
    const dsl::Tensor* a = p.find_tensor(g->a.tensor);
    if (!a || a->dtype != dsl::DType::f32) continue;
    const int64_t result = g->m * g->n * g->batch;
    if (result <= 0 || largest_out < result) continue;
    out.emplace_back(&st, g);
  }
  return out;
}

// Tensors a row or column reduction reads (rowwise softmax, norms, reduce stages): a GEMM result
// that feeds one is normalized or summed before it reaches an output, which shrinks the error it
// carries relative to the tolerance (measured: kb1_sdpa's q k^T over K = 1024 passed the default
// 1e-4 in 3xTF32, run BO), so the 3xTF32 bound leaves such GEMMs to the search.
std::set<std::string> read_by_reductions(const dsl::Program& p) {
  std::set<std::string> r;
  for (const auto& st : p.stages) space_stage_kind(dsl::dsl_stage_kind_of(st)).reduction_reads(st, r);
  return r;
}

// The standard deviation of the absolute error that rounding with `unit_roundoff` per operand adds
// to a GEMM of two problem inputs on the contract's rescaled trial (kRescaledProductRms), or 0
// where the GEMM does not multiply two f32 problem inputs (a parameter is not rescaled).
double rescaled_inputs_sigma(const dsl::Program& p, const dsl::GemmStage& g, double unit_roundoff) {
  const dsl::Tensor* a = p.find_tensor(g.a.tensor);
  const dsl::Tensor* w = p.find_tensor(g.b.tensor);
  if (!w || w->dtype != dsl::DType::f32 || a->role != dsl::TensorRole::in || w->role != dsl::TensorRole::in)
    return 0;
  return std::sqrt(static_cast<double>(g.k)) * kRescaledProductRms * unit_roundoff;
}

// Whether bf16x3 misses the tolerance on some GEMM: its relative error past rtol anywhere a GEMM
// reaches an output element for element, or, on a GEMM of two problem inputs, its absolute error
// on the rescaled trial (kBf16x3UnitRoundoff).
bool bf16x3_fails(const dsl::Program& p, double rtol_f32) {
  for (const auto& [st, g] : unreduced_f32_gemms(p))
    if (rtol_f32 < kBf16x3RelativeError || 4 * rescaled_inputs_sigma(p, *g, kBf16x3UnitRoundoff) > rtol_f32)
      return true;
  return false;
}

}  // namespace

double space_profile_rtol_f32(const std::string& profile) {
  const ContractProfile* p = contract_profile(profile);
  if (!p) p = &contract_profiles().front();  // names are checked where they are read
  return p->other.rtol;
}

Tf32Bound space_tf32_bound(const dsl::Program& p, sol::Policy policy, double rtol_f32) {
  Tf32Bound b;
  // First 3xTF32 (every policy: the exact one starts at it), then TF32 (its own rung).
  const std::set<std::string> reduced = read_by_reductions(p);
  for (const auto& [st, g] : unreduced_f32_gemms(p)) {
    if (std::any_of(st->outputs.begin(), st->outputs.end(), [&](const std::string& o) { return reduced.count(o); }))
      continue;
    const double sigma = rescaled_inputs_sigma(p, *g, k3xTf32UnitRoundoff);
    if (4 * sigma <= rtol_f32) continue;
    b.fails = policy != sol::Policy::exact;
    b.faithful_fails = true;
    b.reason = fmt::format(
        "stage {} multiplies two problem inputs over K = {}: on the contract's rescaled trial (inputs x4 - 2, "
        "sign-mixed) even 3xTF32's sums differ from the fp32 reference's by about {:.1e} (one standard "
        "deviation), beyond atol {:.0e} on outputs near zero; the precision ladder starts at FP32 SIMT, which "
        "adds in the reference's order",
        st->name, g->k, sigma, rtol_f32);
    return b;
  }
  if (policy == sol::Policy::exact) return b;
  b.bf16x3_fails = bf16x3_fails(p, rtol_f32);
  for (const auto& [st, g] : unreduced_f32_gemms(p)) {
    if (rtol_f32 < kTf32RelativeError) {
      b.fails = true;
      b.reason = fmt::format(
          "TF32 rounds each operand to 11 bits (relative error up to {:.1e} per product), beyond rtol {:.0e}: "
          "stage {} writes {} results and the problem has an output as large, so no reduction averages the "
          "rounding out; the precision ladder starts above tf32",
          kTf32RelativeError, rtol_f32, st->name, g->m * g->n * g->batch);
      return b;
    }
    // A loose tolerance: the absolute error of a GEMM of two rescaled inputs (precision.h,
    // kRescaledProductRms); atol is rtol_f32 in every profile.
    const double sigma = rescaled_inputs_sigma(p, *g, kTf32UnitRoundoff);
    if (4 * sigma <= rtol_f32) continue;
    b.fails = true;
    b.reason = fmt::format(
        "stage {} multiplies two problem inputs over K = {}: on the contract's rescaled trial (inputs x4 - 2, "
        "sign-mixed) TF32's rounding adds up to an absolute error of about {:.1e} (one standard deviation), "
        "beyond atol {:.0e} on outputs near zero; the precision ladder starts above tf32",
        st->name, g->k, sigma, rtol_f32);
    return b;
  }
  return b;
}

}  // namespace ucut::space
