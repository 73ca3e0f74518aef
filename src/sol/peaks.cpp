// Policies, calibration files and the peak rates an estimate divides by.
#include "sol/peaks.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "support/diagnostics.h"
#include "support/fs.h"

namespace ucut::sol {

const char* policy_name(Policy p) {
  switch (p) {
    case Policy::exact: return "exact";
    case Policy::tf32: return "tf32";
    case Policy::bf16: return "bf16";
  }
  return "?";
}

Result<Policy> policy_parse(const std::string& name) {
  for (Policy p : kAllPolicies)
    if (name == policy_name(p)) return p;
  std::string guess = diag_closest(name, {"exact", "tf32", "bf16"});
  return make_error(ErrorCode::invalid_input,
                    fmt::format("unknown precision policy '{}'{}", name,
                                guess.empty() ? "" : fmt::format("; did you mean '{}'?", guess)),
                    "policies are exact, tf32 (default) and bf16 (EVAL-CONTRACT section 3)");
}

Result<Calibration> calibration_parse(const std::string& json_text, const std::string& path) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::parse_error& e) {
    return make_error(ErrorCode::invalid_input, fmt::format("{}: invalid JSON: {}", path, e.what()),
                      "re-run 'ucutlass calibrate' on the GPU");
  }
  if (!j.is_object()) return make_error(ErrorCode::invalid_input, path + ": expected a JSON object");
  Calibration c;
  auto str = [&](const char* key) {
    auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  c.gpu = str("gpu");
  c.device_name = str("device_name");
  c.measured_at = str("measured_at");
  c.torch_version = str("torch_version");
  struct Field {
    const char* key;
    double* dst;
  };
  const Field fields[] = {{"copy_bw", &c.copy_bw},     {"gemm_bf16", &c.gemm_bf16}, {"gemm_fp16", &c.gemm_fp16},
                          {"gemm_tf32", &c.gemm_tf32}, {"gemm_fp32", &c.gemm_fp32}};
  for (const auto& f : fields) {
    auto it = j.find(f.key);
    if (it == j.end() || !it->is_number() || it->get<double>() <= 0)
      return make_error(ErrorCode::invalid_input,
                        fmt::format("{}: field '{}' must be a positive number (SI units: B/s or FLOP/s)",
                                    path, f.key),
                        "re-run 'ucutlass calibrate' on the GPU");
    *f.dst = it->get<double>();
  }
  if (auto it = j.find("read_bw"); it != j.end()) {  // optional: files from before it was measured
    if (!it->is_number() || it->get<double>() <= 0)
      return make_error(ErrorCode::invalid_input, fmt::format("{}: field 'read_bw' must be a positive number (B/s)", path),
                        "re-run 'ucutlass calibrate' on the GPU");
    c.read_bw = it->get<double>();
  }
  return c;
}

std::string calibration_to_json(const Calibration& c) {
  nlohmann::json j = {{"gpu", c.gpu},
                      {"device_name", c.device_name},
                      {"copy_bw", c.copy_bw},
                      {"gemm_bf16", c.gemm_bf16},
                      {"gemm_fp16", c.gemm_fp16},
                      {"gemm_tf32", c.gemm_tf32},
                      {"gemm_fp32", c.gemm_fp32},
                      {"measured_at", c.measured_at},
                      {"torch_version", c.torch_version}};
  if (c.read_bw > 0) j["read_bw"] = c.read_bw;
  return j.dump(2) + "\n";
}

std::string calibration_path(const std::string& gpu) { return fs_data_dir() + "/calibration/" + gpu + ".json"; }

Result<std::optional<Calibration>> calibration_find(const std::string& gpu) {
  std::string path = calibration_path(gpu);
  if (!fs_exists(path)) return std::optional<Calibration>();
  auto text = fs_read(path);
  if (!text) return text.error();
  auto c = calibration_parse(*text, path);
  if (!c) return c.error();
  return std::optional<Calibration>(std::move(*c));
}

Peaks peaks_datasheet(const HwSpec& hw) { return Peaks{"datasheet", hw.fp32_simt, hw.tf32, hw.bf16, hw.mem_bw}; }

Peaks peaks_calibrated(const HwSpec& hw, const Calibration& c) {
  (void)hw;
  // BF16 and FP16 tensor cores run at the same rate; take the better measurement. Memory: a
  // read-only stream beats a copy (an fp32 GEMV read A at 4.39 TB/s on the H200, the copy 4.23),
  // and a speed of light must not be beaten: the larger of the two.
  return Peaks{"calibrated", c.gemm_fp32, c.gemm_tf32, std::max(c.gemm_bf16, c.gemm_fp16),
               std::max(c.copy_bw, c.read_bw)};
}

double peaks_tensor_f32_rate(const Peaks& p, Policy policy) {
  switch (policy) {
    case Policy::exact: return std::max(p.tf32 / 3.0, p.fp32_simt);
    case Policy::tf32: return p.tf32;
    case Policy::bf16: return p.bf16;
  }
  return p.tf32;
}

}  // namespace ucut::sol
