// The program-level floor: what a particular μCUTLASS program (dsl::Program) can at best achieve,
// as opposed to the problem's SOL. Each stage reads its inputs and writes its outputs once (so
// an unfused intermediate costs a write and a read), computes its FLOPs at its own precision, and
// stages run one after another: floor = Σ_stage max(t_compute, t_mem). A report can then say
// "problem SOL 0.21 ms, this program's floor 0.34 ms because stage s1 re-reads the 64 MB
// intermediate t0".
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "dsl/program.h"
#include "sol/hardware.h"
#include "sol/peaks.h"

namespace ucut::sol {

struct StageLine {
  std::string name;            // "s0"
  std::string kind;            // gemm, grouped_gemm, rowwise, reduce, scan, elementwise
  std::string precision;       // "tf32", "f32x3", "auto→tf32", "simt", ...
  int64_t flops = 0;
  double rate = 0;             // FLOP/s the stage's FLOPs run at
  int64_t bytes_read = 0;
  int64_t bytes_written = 0;
  int64_t tmp_bytes = 0;       // of which traffic to/from intermediates (role tmp)
  std::vector<std::string> reads_tmp, writes_tmp;
  double t_compute = 0, t_mem = 0, t_floor = 0;
};

struct ProgramEstimate {
  std::string program;
  std::string gpu;
  Policy policy = Policy::tf32;
  std::string origin;          // datasheet | calibrated
  double mem_bw = 0;
  double policy_f32_rate = 0;  // the rate the policy allows for fp32 tensor FLOPs
  std::vector<StageLine> stages;
  int64_t bytes_total = 0;
  int64_t tmp_bytes = 0;       // Σ intermediate traffic (each tmp written once, read by each reader)
  std::vector<std::pair<std::string, int64_t>> tmp_sizes;  // each intermediate's size, declaration order
  double t_floor = 0;          // Σ stage floors, seconds
};

ProgramEstimate sol_program_estimate(const HwSpec& hw, const dsl::Program& prog, Policy policy,
                                     const std::optional<Calibration>& calibration = std::nullopt);

// One sentence comparing the floor with the problem's t_SOL (same policy and origin), naming the
// main reason for any difference.
std::string sol_program_explain(const ProgramEstimate& est, double problem_t_sol);

// Per-stage lines followed by the sentence, for reports (see docs/sol.md "Program-level floor").
std::string sol_program_render(const ProgramEstimate& est, double problem_t_sol);

// The same as JSON (the `program_floor` object of `ucutlass sol --program --json`, docs/sol.md).
nlohmann::ordered_json sol_program_json(const ProgramEstimate& est, double problem_t_sol);

}  // namespace ucut::sol
