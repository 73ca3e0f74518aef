// Text and JSON printers of a SolReport.
#include "sol/report_render.h"

#include <fmt/format.h>

#include "sol/format.h"

namespace ucut::sol {

namespace {

nlohmann::ordered_json bound_json(const SolBound& b) {
  return {{"policy", policy_name(b.policy)},
          {"origin", b.origin},
          {"tensor_f32_rate", b.tensor_f32_rate},
          {"t_tensor_f32_s", b.t_tensor_f32},
          {"t_tensor_16_s", b.t_tensor_16},
          {"t_simt_s", b.t_simt},
          {"t_compute_s", b.t_compute},
          {"t_mem_s", b.t_mem},
          {"t_sol_s", b.t_sol},
          {"ridge_flop_per_byte", b.ridge},
          {"bottleneck", b.compute_bound ? "compute" : "memory"}};
}

void policy_table(std::string& out, const std::vector<SolBound>& bounds, Policy chosen) {
  out += fmt::format("  {:<8}{:>13}{:>13}{:>13}{:>13}  {}\n", "policy", "matmul rate", "compute", "memory", "t_SOL",
                     "bottleneck");
  for (const auto& b : bounds)
    out += fmt::format("{} {:<8}{:>13}{:>13}{:>13}{:>13}  {}{}\n", b.policy == chosen ? "*" : " ",
                       policy_name(b.policy), fmt_rate(b.tensor_f32_rate), fmt_time(b.t_compute), fmt_time(b.t_mem),
                       fmt_time(b.t_sol), b.compute_bound ? "compute" : "memory",
                       b.policy == chosen ? "   <- chosen" : "");
}

}  // namespace

std::string sol_report_text(const SolReport& r, const HwSpec& hw) {
  std::string out;
  out += fmt::format("SOL of {} on {} (policy {})\n", r.problem, hw.name, policy_name(r.policy));
  int64_t total = r.flops_tensor_f32 + r.flops_tensor_16 + r.flops_simt;
  out += fmt::format("  FLOPs      {}: tensor on fp32 data {}, tensor on f16/bf16 data {}, SIMT {}\n",
                     fmt_flops(double(total)), fmt_flops(double(r.flops_tensor_f32)),
                     fmt_flops(double(r.flops_tensor_16)), fmt_flops(double(r.flops_simt)));
  out += fmt::format("  bytes      {} (every input, parameter and output moved once)\n", fmt_bytes(double(r.min_bytes)));
  out += fmt::format("  intensity  {:.2f} FLOP/B vs ridge {:.2f} FLOP/B ({}, datasheet): {}-bound\n", r.intensity,
                     r.bound.ridge, policy_name(r.policy), r.bound.compute_bound ? "compute" : "memory");
  out += fmt::format("bounds, datasheet peaks ({}: FP32 {}, TF32 {}, BF16 {}, DRAM {}):\n", hw.name,
                     fmt_rate(hw.fp32_simt), fmt_rate(hw.tf32), fmt_rate(hw.bf16), fmt_bw(hw.mem_bw));
  policy_table(out, r.by_policy, r.policy);
  if (r.calibrated) {
    out += "bounds, calibrated peaks (measured by 'ucutlass calibrate'; the gaming guard uses these):\n";
    policy_table(out, r.calibrated_by_policy, r.policy);
  } else {
    out += "calibrated peaks: none for this GPU (run 'ucutlass calibrate' on it)\n";
  }
  const SolBound& ref = r.reference();
  out += fmt::format("t_SOL = {} ({}, {} peaks, {}-bound)\n", fmt_time(ref.t_sol), policy_name(r.policy), ref.origin,
                     ref.compute_bound ? "compute" : "memory");
  if (!r.top_ops.empty()) {
    out += "dominating operations (share of the unfused per-op rooflines):\n";
    for (const auto& s : r.top_ops)
      out += fmt::format("  {:5.1f}%  ops[{}] {}{}  {} ({}-bound)\n", s.share * 100, s.id, s.op,
                         s.line ? fmt::format(" (line {})", s.line) : "", fmt_time(s.t),
                         s.compute_bound ? "compute" : "memory");
  }
  for (const auto& n : r.notes) out += "note: " + n + "\n";
  if (const std::string over = sol_memory_overflow(r); !over.empty()) out += "warning: " + over + "\n";
  out += fmt::format("source: {}\n", hw.source);
  return out;
}

nlohmann::ordered_json sol_report_json(const SolReport& r, const HwSpec& hw) {
  nlohmann::ordered_json j;
  j["schema"] = kSolReportSchema;
  j["problem"] = r.problem;
  j["gpu"] = {{"name", hw.name},           {"arch", hw.arch},           {"sms", hw.sms},
              {"boost_mhz", hw.boost_mhz}, {"fp32_simt", hw.fp32_simt}, {"tf32", hw.tf32},
              {"bf16", hw.bf16},           {"fp8", hw.fp8},             {"mem_bw", hw.mem_bw},
              {"l2_bytes", hw.l2_bytes},   {"smem_per_sm_bytes", hw.smem_per_sm_bytes},
              {"memory_bytes", hw.mem_bytes},
              {"source", hw.source}};
  j["policy"] = policy_name(r.policy);
  j["flops"] = {{"tensor_f32", r.flops_tensor_f32},
                {"tensor_16", r.flops_tensor_16},
                {"simt", r.flops_simt},
                {"total", r.flops_tensor_f32 + r.flops_tensor_16 + r.flops_simt}};
  j["min_bytes"] = r.min_bytes;
  j["tensor_bytes"] = r.tensor_bytes;
  j["fits_memory"] = r.fits_memory();
  j["intensity_flop_per_byte"] = r.intensity;
  j["bound"] = bound_json(r.bound);
  j["by_policy"] = nlohmann::ordered_json::array();
  for (const auto& b : r.by_policy) j["by_policy"].push_back(bound_json(b));
  j["calibrated"] = r.calibrated ? bound_json(*r.calibrated) : nlohmann::ordered_json();
  j["calibrated_by_policy"] = nlohmann::ordered_json::array();
  for (const auto& b : r.calibrated_by_policy) j["calibrated_by_policy"].push_back(bound_json(b));
  j["t_sol_s"] = r.reference().t_sol;
  j["t_sol_origin"] = r.reference().origin;
  j["top_ops"] = nlohmann::ordered_json::array();
  for (const auto& s : r.top_ops)
    j["top_ops"].push_back({{"id", s.id},
                            {"op", s.op},
                            {"line", s.line},
                            {"t_s", s.t},
                            {"share", s.share},
                            {"bottleneck", s.compute_bound ? "compute" : "memory"}});
  j["notes"] = r.notes;
  return j;
}

}  // namespace ucut::sol
