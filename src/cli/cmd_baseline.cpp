// `ucutlass baseline problem.py`: PyTorch eager and torch.compile times for a problem, measured by
// the evaluation worker with the contract's timing protocol and cached per (problem, GPU, torch).
#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>

#include "cli/commands.h"
#include "eval/worker_client.h"
#include "support/fs.h"

namespace ucut {
namespace {

struct BaselineArgs {
  std::string problem;
  std::string compile_mode = "default";
  bool no_compile = false;
  int gpu = 0;
  bool json = false;
  bool refresh = false;
  double timeout_s = 1800;
};

std::string ms_text(const nlohmann::json& t, const char* key) {
  if (!t.is_object() || !t.contains(key) || !t[key].is_number()) return "–";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", t[key].get<double>());
  return buf;
}

int run_baseline(const BaselineArgs& a) {
  if (!fs_exists(a.problem))
    return cli_fail("baseline", make_error(ErrorCode::not_found, a.problem + ": no such problem file"));
  if (a.compile_mode != "default" && a.compile_mode != "max-autotune")
    return cli_usage("baseline", "--compile-mode '" + a.compile_mode + "'", "default or max-autotune");
  if (int rc = cli_require_gpu("baseline"); rc != kExitOk) return rc;
  eval::WorkerOptions wo;
  wo.gpu = a.gpu;
  eval::WorkerClient w(wo);
  auto timeout = std::chrono::milliseconds(static_cast<int64_t>(a.timeout_s * 1000));
  auto info = w.load_problem(std::filesystem::absolute(a.problem).string(), timeout);
  if (!info) return cli_fail("baseline", info.error());
  nlohmann::json modes = {"eager"};
  if (!a.no_compile) modes.push_back(a.compile_mode == "default" ? "compile" : "max-autotune");
  nlohmann::json req = {{"cmd", "baseline"}, {"modes", modes}};
  if (!a.refresh) req["cache_dir"] = fs_cache_dir() + "/baselines";
  auto resp = w.request(req, timeout);
  if (!resp) return cli_fail("baseline", resp.error());
  if (resp->value("status", "") != "ok")
    return cli_fail("baseline", make_error(ErrorCode::invalid_input, resp->value("error", resp->dump())));
  auto env = w.environment();
  nlohmann::json out = {{"problem", *info}, {"env", env ? *env : nlohmann::json()}, {"baselines", (*resp)["baselines"]}};
  if (a.json) {
    std::printf("%s\n", out.dump(2).c_str());
    return 0;
  }
  std::printf("problem %s on %s (torch %s)\n\n", info->value("name", "").c_str(), out["env"].value("gpu", "?").c_str(),
              out["env"].value("torch", "?").c_str());
  std::printf("| baseline | median ms | p20 ms | p80 ms | reps | cached | note |\n|---|---|---|---|---|---|---|\n");
  int rc = 0;
  for (const auto& [mode, b] : out["baselines"].items()) {
    const auto& t = b.value("timing", nlohmann::json());
    std::string note = b.value("error", "");
    if (!note.empty()) rc = 1;
    if (t.is_object() && t.value("timing_suspect", false)) note = "timing_suspect";
    std::printf("| %s | %s | %s | %s | %s | %s | %s |\n", mode.c_str(), ms_text(t, "median_ms").c_str(),
                ms_text(t, "p20_ms").c_str(), ms_text(t, "p80_ms").c_str(),
                t.is_object() ? std::to_string(t.value("reps", 0)).c_str() : "–", b.value("cached", false) ? "yes" : "no",
                note.empty() ? "" : note.c_str());
  }
  return rc;
}

}  // namespace

CommandRun cmd_baseline(CLI::App& sub) {
  auto a = std::make_shared<BaselineArgs>();
  sub.add_option("problem", a->problem, "KernelBench-format problem file")->required();
  sub.add_option("--compile-mode", a->compile_mode, "torch.compile mode: default or max-autotune")->capture_default_str();
  sub.add_flag("--no-compile", a->no_compile, "eager only");
  sub.add_option("--gpu", a->gpu, "GPU index")->capture_default_str();
  sub.add_flag("--json", a->json, "print JSON");
  sub.add_flag("--refresh", a->refresh, "measure again, ignoring (and not writing) the cache");
  sub.add_option("--timeout", a->timeout_s, "seconds before the worker is killed")->capture_default_str();
  return [a] { return run_baseline(*a); };
}

}  // namespace ucut
