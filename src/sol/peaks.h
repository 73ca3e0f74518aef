// Precision policies (EVAL-CONTRACT §3) and the peak rates an estimate divides by: from the
// datasheet (hardware table) or from calibrated ceilings measured on the actual GPU by
// `ucutlass calibrate` (EVAL-CONTRACT §4: the gaming guard uses the calibrated ones).
#pragma once

#include <optional>
#include <string>

#include "sol/hardware.h"
#include "support/result.h"

namespace ucut::sol {

// What matmul/conv math may use on fp32 data.
enum class Policy {
  exact,  // fp32-faithful: FP32 SIMT or 3xTF32
  tf32,   // TF32 tensor cores (the default, as in the μCUTLASS paper)
  bf16,   // bf16/fp16 operands with fp32 accumulation
};

inline constexpr Policy kAllPolicies[] = {Policy::exact, Policy::tf32, Policy::bf16};

const char* policy_name(Policy p);
// "exact" | "tf32" | "bf16"; otherwise ErrorCode::invalid_input with "did you mean".
Result<Policy> policy_parse(const std::string& name);

// Ceilings measured on one GPU by python/ucutlass_torch/calibrate.py (all SI units).
struct Calibration {
  std::string gpu;            // table name it was stored under ("h200")
  std::string device_name;    // CUDA's name ("NVIDIA H200")
  double copy_bw = 0;         // B/s, device-to-device copy (bytes read + bytes written per second)
  double read_bw = 0;         // B/s, a read-only stream (a sum); 0: not measured (older files).
                              // The memory ceiling is the larger of the two (peaks_calibrated)
  double gemm_bf16 = 0;       // FLOP/s achieved by large square matmuls
  double gemm_fp16 = 0;
  double gemm_tf32 = 0;       // fp32 data, TF32 allowed
  double gemm_fp32 = 0;       // fp32 data, TF32 off
  std::string measured_at;    // ISO time
  std::string torch_version;
};

// Parses the JSON calibrate.py prints (and `ucutlass calibrate` stores). `path` names the file in
// messages. Every rate must be a positive number.
Result<Calibration> calibration_parse(const std::string& json_text, const std::string& path);
std::string calibration_to_json(const Calibration& c);
// fs_data_dir()/calibration/<gpu>.json
std::string calibration_path(const std::string& gpu);
// Loads calibration_path(gpu) if it exists; nullopt when there is none; an error when it is broken.
Result<std::optional<Calibration>> calibration_find(const std::string& gpu);

// The rates an estimate uses.
struct Peaks {
  std::string origin;   // "datasheet" or "calibrated"
  double fp32_simt = 0; // FLOP/s for SIMT-class FLOPs
  double tf32 = 0;      // FLOP/s
  double bf16 = 0;      // FLOP/s, also the rate for tensor ops on f16/bf16 data
  double mem_bw = 0;    // B/s
};

Peaks peaks_datasheet(const HwSpec& hw);
// Measured ceilings: copy bandwidth, TF32 and BF16 GEMM rates. SIMT-class FLOPs use the TF32-off
// fp32 GEMM rate (cuBLAS on the FMA pipes: the best achieved SIMT rate we measure).
Peaks peaks_calibrated(const HwSpec& hw, const Calibration& c);

// The rate for tensor-core-eligible FLOPs on fp32 data under a policy:
//   exact: max(TF32 / 3, FP32 SIMT) — the faster of the two fp32-faithful methods the contract
//          allows (3xTF32 or SIMT); on Hopper/Blackwell/A100 this is TF32 / 3, the contract's
//          table value; on Ada (L40S, RTX 4090) plain FP32 SIMT is faster than 3xTF32.
//   tf32:  TF32.   bf16: BF16.
double peaks_tensor_f32_rate(const Peaks& p, Policy policy);

}  // namespace ucut::sol
