// The hardware table (hardware.def) as plain structs: one HwSpec per GPU with its peak rates and
// the source of every number, looked up by name with "did you mean". SI units throughout
// (FLOP/s, B/s, bytes) so formulas never convert.
#pragma once

#include <string>
#include <vector>

#include "support/result.h"

namespace ucut::sol {

struct HwSpec {
  std::string name;                  // canonical: "h200", "h100-sxm", ...
  std::vector<std::string> aliases;  // also accepted by hw_lookup
  std::string arch;                  // "sm_90", ...
  int sms = 0;
  double boost_mhz = 0;
  double fp32_simt = 0;              // FLOP/s, FP32 FMA pipes (non-tensor)
  double tf32 = 0;                   // FLOP/s, TF32 tensor cores, dense
  double bf16 = 0;                   // FLOP/s, BF16/FP16 tensor cores with FP32 accumulation, dense
  double fp8 = 0;                    // FLOP/s, FP8 tensor cores, dense; 0 when the GPU has none
  double mem_bw = 0;                 // B/s, DRAM
  double mem_bytes = 0;              // DRAM capacity, bytes (the datasheet's GB as 1e9 B)
  double l2_bytes = 0;
  double smem_per_sm_bytes = 0;
  std::string source;                // datasheet / whitepaper the numbers come from
};

// Every GPU of the table, in table order.
const std::vector<HwSpec>& hw_table();

// Finds a GPU by canonical name or alias, case-insensitively, with spaces and underscores read
// as '-' ("H100 SXM" finds h100-sxm). Unknown names: ErrorCode::not_found with "did you mean".
Result<HwSpec> hw_lookup(const std::string& name);

// Maps a CUDA device name ("NVIDIA H100 80GB HBM3", "NVIDIA GeForce RTX 4090") to the table's
// canonical name, or "" when no row matches.
std::string hw_match_device(const std::string& device_name);

}  // namespace ucut::sol
