// sol_estimate: the roofline bound per policy, the dominating ops, and the gap.
#include "sol/estimate.h"

#include <algorithm>

#include "sol/format.h"

namespace ucut::sol {

namespace {

double rate_for(const Peaks& peaks, CostClass cls, Policy policy) {
  switch (cls) {
    case CostClass::tensor_f32: return peaks_tensor_f32_rate(peaks, policy);
    case CostClass::tensor_16: return peaks.bf16;
    case CostClass::simt: return peaks.fp32_simt;
  }
  return peaks.fp32_simt;
}

double div_or_zero(double a, double b) { return b > 0 ? a / b : 0; }

}  // namespace

SolBound sol_scale_tensor_f32(const SolBound& b, double factor) {
  SolBound s = b;
  s.t_tensor_f32 = b.t_tensor_f32 * factor;
  s.tensor_f32_rate = factor > 0 ? b.tensor_f32_rate / factor : b.tensor_f32_rate;
  s.t_compute = s.t_tensor_f32 + s.t_tensor_16 + s.t_simt;
  s.t_sol = std::max(s.t_compute, s.t_mem);
  s.compute_bound = s.t_compute > s.t_mem;
  return s;
}

SolBound sol_bound(const Peaks& peaks, const ProblemCost& cost, Policy policy) {
  SolBound b;
  b.policy = policy;
  b.origin = peaks.origin;
  b.tensor_f32_rate = peaks_tensor_f32_rate(peaks, policy);
  b.t_tensor_f32 = div_or_zero(double(cost.flops_tensor_f32), b.tensor_f32_rate);
  b.t_tensor_16 = div_or_zero(double(cost.flops_tensor_16), peaks.bf16);
  b.t_simt = div_or_zero(double(cost.flops_simt), peaks.fp32_simt);
  b.t_compute = b.t_tensor_f32 + b.t_tensor_16 + b.t_simt;
  b.t_mem = div_or_zero(double(cost.min_bytes), peaks.mem_bw);
  b.t_sol = std::max(b.t_compute, b.t_mem);
  b.compute_bound = b.t_compute > b.t_mem;
  // The effective compute rate of this FLOP mix over the bandwidth: intensity above it means
  // compute-bound. With no FLOPs the mix has no rate; use the SIMT rate (elementwise work).
  double eff_rate = b.t_compute > 0 ? double(cost.flops_total()) / b.t_compute : peaks.fp32_simt;
  b.ridge = div_or_zero(eff_rate, peaks.mem_bw);
  return b;
}

const SolBound* SolReport::reference_for(Policy p) const {
  for (const SolBound& b : calibrated ? calibrated_by_policy : by_policy)
    if (b.policy == p) return &b;
  return nullptr;
}

std::vector<OpShare> sol_op_shares(const HwSpec& hw, const ProblemCost& cost, Policy policy) {
  const Peaks ds = peaks_datasheet(hw);
  double total = 0;
  std::vector<OpShare> shares;
  for (const OpCost& oc : cost.ops) {
    OpShare s;
    s.id = oc.id;
    s.op = oc.op;
    s.line = oc.line;
    double tc = div_or_zero(double(oc.flops), rate_for(ds, oc.cls, policy));
    double tm = div_or_zero(double(oc.bytes), ds.mem_bw);
    s.t = std::max(tc, tm);
    s.compute_bound = tc > tm;
    total += s.t;
    if (s.t > 0) shares.push_back(s);
  }
  for (auto& s : shares) s.share = div_or_zero(s.t, total);
  return shares;
}

Result<SolReport> sol_problem_report(const problem::Problem& problem, const HwSpec& hw, Policy policy,
                                     const SolReportOptions& options, std::vector<std::string>* notes) {
  auto cost = sol_problem_cost(problem);
  if (!cost) return cost.error();
  std::optional<Calibration> calibration = options.calibration;
  if (!calibration && options.stored_calibration) {
    auto found = calibration_find(hw.name);
    if (found) calibration = *found;
    else if (notes) notes->push_back("calibration ignored: " + found.error().message);
  }
  return sol_estimate(hw, *cost, policy, calibration, options.top_n);
}

SolReport sol_estimate(const HwSpec& hw, const ProblemCost& cost, Policy policy,
                       const std::optional<Calibration>& calibration, int top_n) {
  SolReport r;
  r.gpu = hw.name;
  r.problem = cost.name;
  r.policy = policy;
  r.flops_tensor_f32 = cost.flops_tensor_f32;
  r.flops_tensor_16 = cost.flops_tensor_16;
  r.flops_simt = cost.flops_simt;
  r.min_bytes = cost.min_bytes;
  r.tensor_bytes = cost.tensor_bytes;
  r.gpu_memory_bytes = hw.mem_bytes;
  r.intensity = div_or_zero(double(cost.flops_total()), double(cost.min_bytes));
  r.notes = cost.notes;

  Peaks ds = peaks_datasheet(hw);
  r.bound = sol_bound(ds, cost, policy);
  for (Policy p : kAllPolicies) r.by_policy.push_back(sol_bound(ds, cost, p));
  if (calibration) {
    Peaks cal = peaks_calibrated(hw, *calibration);
    r.calibrated = sol_bound(cal, cost, policy);
    for (Policy p : kAllPolicies) r.calibrated_by_policy.push_back(sol_bound(cal, cost, p));
  }

  Peaks simt = calibration ? peaks_calibrated(hw, *calibration) : ds;
  simt.tf32 = 0;  // the exact policy's fp32 tensor rate is max(tf32 / 3, fp32_simt)
  r.fp32_simt = sol_bound(simt, cost, Policy::exact);
  std::vector<OpShare> shares = sol_op_shares(hw, cost, policy);
  std::stable_sort(shares.begin(), shares.end(), [](const OpShare& a, const OpShare& b) { return a.t > b.t; });
  if (int(shares.size()) > top_n) shares.resize(size_t(std::max(0, top_n)));
  r.top_ops = std::move(shares);
  return r;
}

std::string sol_memory_overflow(const SolReport& r) {
  if (r.fits_memory()) return "";
  return "the problem's tensors (inputs, parameters and outputs) need " + fmt_bytes(double(r.tensor_bytes)) +
         ", more than the " + r.gpu + "'s " + fmt_bytes(r.gpu_memory_bytes) + " of memory: it cannot run there";
}

SolGap sol_gap(const SolBound& bound, double t_measured) {
  SolGap g;
  g.t_measured = t_measured;
  g.t_sol = bound.t_sol;
  g.gap = div_or_zero(t_measured, bound.t_sol);
  g.fraction = div_or_zero(bound.t_sol, t_measured);
  g.faster_than_light = t_measured < kSolGuardFactor * bound.t_sol;
  return g;
}

}  // namespace ucut::sol
