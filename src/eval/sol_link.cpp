#include "eval/sol_link.h"

#include <unistd.h>

#include <optional>

#include "problem/problem.h"
#include "sol/cost.h"
#include "sol/estimate.h"
#include "sol/hardware.h"
#include "sol/peaks.h"
#include "support/python.h"
#include "support/subprocess.h"

namespace ucut::eval {

Status run_extractor(const std::string& problem_py, const std::string& json_path, int timeout_s) {
  ProcessSpec ps;
  ps.argv = {python_interpreter(), "-m", "ucutlass_torch.extract", problem_py, "-o", json_path};
  ps.env_set = python_env();
  ps.timeout = std::chrono::seconds(timeout_s);
  auto r = subprocess_run(ps);
  if (!r)
    return make_error(ErrorCode::subprocess, "cannot start the Python extractor: " + r.error().message,
                      "set UCUTLASS_PYTHON to a Python with PyTorch installed, or run scripts/setup");
  if (r->timed_out)
    return make_error(ErrorCode::invalid_input,
                      problem_py + ": extraction did not finish within " + std::to_string(timeout_s) + " s",
                      "check that forward() and get_inputs() finish on the CPU");
  if (r->success()) return ok_status();
  std::string msg = r->err.empty() ? r->out : r->err;
  while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
  if (msg.size() > 2000) msg = "..." + msg.substr(msg.size() - 2000);
  if (msg.find("No module named") != std::string::npos || r->exit_code == 2)
    return make_error(ErrorCode::subprocess, "the Python extractor cannot run:\n" + msg,
                      "set UCUTLASS_PYTHON to a Python with PyTorch, or run scripts/setup");
  // The extractor's message names the line and the fix; add ours only when it did not.
  std::string hint = msg.find("hint:") == std::string::npos
                         ? "fix the problem file, or extract it yourself: " + subprocess_format(ps.argv)
                         : std::string();
  return make_error(ErrorCode::invalid_input, "extracting '" + problem_py + "' failed:\n" + msg, hint);
}

Result<TempProblemJson> extract_problem_json(const std::string& problem_py) {
  char buf[] = "/tmp/ucut-problem-XXXXXX";
  int fd = ::mkstemp(buf);
  if (fd < 0) return make_error(ErrorCode::io, "cannot create a temporary file for the problem IR");
  ::close(fd);
  TempProblemJson out(buf);
  if (auto st = run_extractor(problem_py, out.path()); !st) return st.error();
  return out;
}

TempProblemJson::~TempProblemJson() {
  if (!path_.empty()) ::unlink(path_.c_str());
}

Result<SolLink> sol_for_problem(const std::string& problem_py, const std::string& problem_json,
                                const std::string& gpu_name, const std::string& policy_name) {
  auto policy = sol::policy_parse(policy_name);
  if (!policy) return policy.error();
  std::string match = sol::hw_match_device(gpu_name);
  if (match.empty())
    return make_error(ErrorCode::unsupported, "no hardware table entry for GPU '" + gpu_name + "'",
                      "pass --sol-ms to give t_SOL yourself");
  auto hw = sol::hw_lookup(match);
  if (!hw) return hw.error();
  std::optional<TempProblemJson> tmp;
  std::string json_path = problem_json;
  if (json_path.empty()) {
    auto t = extract_problem_json(problem_py);
    if (!t) return t.error();
    tmp.emplace(std::move(*t));
    json_path = tmp->path();
  }
  auto prob = problem::problem_load(json_path);
  if (!prob) return prob.error();
  auto cost = sol::sol_problem_cost(*prob);
  if (!cost) return cost.error();
  auto calib = sol::calibration_find(hw->name);
  if (!calib) return calib.error();
  sol::SolReport rep = sol::sol_estimate(*hw, *cost, *policy, *calib);
  const sol::SolBound& b = rep.reference();
  return SolLink{b.t_sol * 1e3, b.origin, hw->name};
}

}  // namespace ucut::eval
