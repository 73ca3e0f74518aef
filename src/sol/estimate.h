// The roofline estimate (EVAL-CONTRACT §4):
//   t_SOL = max( Σ_class FLOPs_class / peak_class(policy),  min_bytes / bandwidth )
// with arithmetic intensity, ridge point, bottleneck, the ops that dominate, and the gap for a
// measured time. Pure functions over plain structs; every formula has a hand-computed test.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sol/cost.h"
#include "sol/hardware.h"
#include "sol/peaks.h"

namespace ucut::sol {

// One bound: one policy, one set of peaks.
struct SolBound {
  Policy policy = Policy::tf32;
  std::string origin;          // "datasheet" | "calibrated"
  double tensor_f32_rate = 0;  // FLOP/s used for tensor-class FLOPs on fp32 data
  double t_tensor_f32 = 0;     // seconds
  double t_tensor_16 = 0;
  double t_simt = 0;
  double t_compute = 0;        // Σ of the three above
  double t_mem = 0;            // min_bytes / bandwidth
  double t_sol = 0;            // max(t_compute, t_mem)
  double ridge = 0;            // FLOP/byte where compute and memory time meet for this FLOP mix
  bool compute_bound = false;  // t_compute > t_mem
};

// One op's share of the unfused sum of per-op rooflines (which op dominates the work).
struct OpShare {
  int id = 0;
  std::string op;
  int line = 0;
  double t = 0;      // max(op FLOPs / rate, op bytes / bandwidth), seconds
  double share = 0;  // t / Σ t over all ops
  bool compute_bound = false;
};

struct SolReport {
  std::string gpu;
  std::string problem;
  Policy policy = Policy::tf32;
  int64_t flops_tensor_f32 = 0, flops_tensor_16 = 0, flops_simt = 0, min_bytes = 0;
  double intensity = 0;                 // total FLOPs / min_bytes
  SolBound bound;                       // the chosen policy, datasheet peaks
  std::vector<SolBound> by_policy;      // every policy, datasheet peaks (chosen one included)
  std::optional<SolBound> calibrated;   // the chosen policy, calibrated peaks, when available
  // Every fp32 tensor-class FLOP at the FP32 SIMT rate, reference()'s peaks: the contract's SOL
  // where no tensor-core precision meets the tolerance (space/precision.h, Tf32Bound::faithful_fails)
  SolBound fp32_simt;
  std::vector<SolBound> calibrated_by_policy;
  std::vector<OpShare> top_ops;         // at most `top_n`, largest first
  std::vector<std::string> notes;
  int64_t tensor_bytes = 0;             // the problem's inputs, parameters, buffers and outputs
  double gpu_memory_bytes = 0;          // the GPU's DRAM capacity (hardware table)

  // Whether the problem's tensors fit in the GPU's memory; a problem that does not fit cannot run
  // there, and is neither searched nor planned.
  bool fits_memory() const { return gpu_memory_bytes <= 0 || double(tensor_bytes) <= gpu_memory_bytes; }
  // The bound the contract's comparisons use: calibrated when available (EVAL-CONTRACT §4).
  const SolBound& reference() const { return calibrated ? *calibrated : bound; }
  // Policy p's bound with reference()'s peaks (calibrated when available); nullptr if absent.
  const SolBound* reference_for(Policy p) const;
};

SolBound sol_bound(const Peaks& peaks, const ProblemCost& cost, Policy policy);

// `b` with its fp32 tensor-class time `factor` times longer (bf16x3: three bf16 products per fp32
// product, the bf16 policy's bound scaled by 3), its compute and t_sol recomputed.
SolBound sol_scale_tensor_f32(const SolBound& b, double factor);

// Every op's share of the unfused sum of per-op rooflines (datasheet peaks), in op order; ops of
// no cost are left out. SolReport::top_ops are the largest of these.
std::vector<OpShare> sol_op_shares(const HwSpec& hw, const ProblemCost& cost, Policy policy);

SolReport sol_estimate(const HwSpec& hw, const ProblemCost& cost, Policy policy,
                       const std::optional<Calibration>& calibration = std::nullopt, int top_n = 5);

// The one way a problem's SOL report is made, for every command (optimize and bench through the
// pipeline and the driver, eval's SOL link, `ucutlass sol`): the problem's cost, the peaks
// (`calibration` when given, else the GPU's stored calibration, else the datasheet's) and the
// estimate. A stored calibration that cannot be read never fails the report: the datasheet peaks
// stand and `notes` says why (a broken calibration file must not stop a search). Errors: the
// problem's cost cannot be computed (an op without a cost model).
struct SolReportOptions {
  std::optional<Calibration> calibration;  // given explicitly (`sol --calibration FILE`)
  bool stored_calibration = true;          // look up the GPU's stored calibration otherwise
  int top_n = 5;
};
Result<SolReport> sol_problem_report(const problem::Problem& problem, const HwSpec& hw, Policy policy,
                                     const SolReportOptions& options = {}, std::vector<std::string>* notes = nullptr);

// "" when the problem fits the GPU's memory, else the sentence that says it does not ("the
// problem's tensors (inputs, parameters and outputs) need 206.2 GB, more than the h200's 141.0 GB ...").
std::string sol_memory_overflow(const SolReport& r);

// A measured time against a bound.
struct SolGap {
  double t_measured = 0;
  double t_sol = 0;
  double gap = 0;       // t_measured / t_SOL (>= 1 for an honest kernel; steers the search)
  double fraction = 0;  // t_SOL / t_measured (fraction of SOL)
  bool faster_than_light = false;  // t_measured < kSolGuardFactor · t_SOL: the gaming guard
};

// EVAL-CONTRACT §4: a candidate faster than 0.9·t_SOL (calibrated ceilings) is rejected.
inline constexpr double kSolGuardFactor = 0.9;

SolGap sol_gap(const SolBound& bound, double t_measured_seconds);

}  // namespace ucut::sol
