// `ucutlass calibrate [--gpu-name NAME]`: measures this machine's GPU ceilings (copy bandwidth,
// GEMM throughput per precision) with python/ucutlass_torch/calibrate.py and stores them under
// fs_data_dir()/calibration/<gpu-name>.json, where `ucutlass sol` finds them (docs/sol.md).
#include <CLI/CLI.hpp>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "cli/commands.h"
#include "sol/format.h"
#include "sol/hardware.h"
#include "sol/peaks.h"
#include "support/fs.h"
#include "support/python.h"
#include "support/subprocess.h"

namespace ucut {

namespace {

struct CalibrateOptions {
  std::string gpu_name;
  bool quick = false;
};

// A file-name-safe version of a device name: "NVIDIA H100 NVL" -> "nvidia-h100-nvl".
std::string slug(const std::string& s) {
  std::string out;
  for (char c : s) {
    char l = char(std::tolower(static_cast<unsigned char>(c)));
    if (std::isalnum(static_cast<unsigned char>(l)) || l == '.' || l == '_') {
      out += l;
    } else if (!out.empty() && out.back() != '-') {
      out += '-';
    }
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out;
}

int run_calibrate(const CalibrateOptions& o) {
  ProcessSpec spec;
  spec.argv = {python_interpreter(), "-m", "ucutlass_torch.calibrate"};
  if (o.quick) spec.argv.push_back("--quick");
  spec.env_set = python_env();
  spec.timeout = std::chrono::minutes(15);
  std::fprintf(stderr, "ucutlass calibrate: measuring copy bandwidth and GEMM throughput (about a minute)...\n");
  auto run = subprocess_run(spec);
  if (!run)
    return cli_fail("calibrate", make_error(ErrorCode::subprocess, "cannot start " + spec.argv[0] + ": " + run.error().message,
                                            "set UCUTLASS_PYTHON to a Python with CUDA-enabled torch"));
  if (!run->success()) {
    std::string msg = run->err;
    while (!msg.empty() && msg.back() == '\n') msg.pop_back();
    if (run->timed_out) msg = "the measurement ran past 15 minutes";
    if (!run->timed_out && !run->signaled && run->exit_code == 2) {
      // calibrate.py's "no GPU" exit: an environment problem, said plainly.
      if (msg.rfind("calibrate: ", 0) == 0) msg = msg.substr(11);
      return cli_fail("calibrate", make_error(ErrorCode::subprocess, "no CUDA GPU to calibrate: " + msg));
    }
    return cli_fail("calibrate", make_error(ErrorCode::subprocess, "the measurement failed (" +
                                                                       subprocess_format(spec.argv) + "):\n" + msg));
  }
  auto cal = sol::calibration_parse(run->out, "calibrate.py output");
  if (!cal) return cli_fail("calibrate", cal.error(), kExitEnvironment);
  std::string name = o.gpu_name;
  if (name.empty()) name = sol::hw_match_device(cal->device_name);
  if (name.empty()) name = slug(cal->device_name);
  if (name.empty()) name = "gpu";
  if (auto hw = sol::hw_lookup(name); hw) name = hw->name;  // aliases store under the canonical name
  cal->gpu = name;

  std::string path = sol::calibration_path(name);
  if (auto st = fs_write_atomic(path, sol::calibration_to_json(*cal)); !st) return cli_fail("calibrate", st.error());
  auto hw = sol::hw_lookup(name);
  auto pct = [&](double measured, double sheet, bool bandwidth) {
    if (!hw || sheet <= 0) return std::string();
    return fmt::format(" ({:.0f}% of the datasheet's {})", 100 * measured / sheet,
                       bandwidth ? sol::fmt_bw(sheet) : sol::fmt_rate(sheet));
  };
  std::printf("calibrated %s (%s)\n", name.c_str(), cal->device_name.c_str());
  std::printf("  copy bandwidth  %s%s\n", sol::fmt_bw(cal->copy_bw).c_str(), pct(cal->copy_bw, hw ? hw->mem_bw : 0, true).c_str());
  if (cal->read_bw > 0)
    std::printf("  read bandwidth  %s%s\n", sol::fmt_bw(cal->read_bw).c_str(), pct(cal->read_bw, hw ? hw->mem_bw : 0, true).c_str());
  std::printf("  GEMM bf16       %s%s\n", sol::fmt_rate(cal->gemm_bf16).c_str(), pct(cal->gemm_bf16, hw ? hw->bf16 : 0, false).c_str());
  std::printf("  GEMM fp16       %s%s\n", sol::fmt_rate(cal->gemm_fp16).c_str(), pct(cal->gemm_fp16, hw ? hw->bf16 : 0, false).c_str());
  std::printf("  GEMM tf32       %s%s\n", sol::fmt_rate(cal->gemm_tf32).c_str(), pct(cal->gemm_tf32, hw ? hw->tf32 : 0, false).c_str());
  std::printf("  GEMM fp32       %s%s\n", sol::fmt_rate(cal->gemm_fp32).c_str(), pct(cal->gemm_fp32, hw ? hw->fp32_simt : 0, false).c_str());
  std::printf("stored in %s\n", path.c_str());
  if (!hw) std::printf("note: '%s' is not in the hardware table; 'ucutlass sol --gpu' cannot use it yet\n", name.c_str());
  return 0;
}

}  // namespace

CommandRun cmd_calibrate(CLI::App& sub) {
  auto o = std::make_shared<CalibrateOptions>();
  sub.add_option("--gpu-name", o->gpu_name,
                 "name to store the ceilings under (default: the hardware-table GPU matching the device)")
      ->envname("UCUTLASS_GPU");
  sub.add_flag("--quick", o->quick, "smaller sizes and fewer repetitions (a smoke test, not for real ceilings)");
  return [o] { return run_calibrate(*o); };
}

}  // namespace ucut
