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

Result<TempProblemJson> extract_problem_json(const std::string& problem_py) {
  char buf[] = "/tmp/ucut-problem-XXXXXX";
  int fd = ::mkstemp(buf);
  if (fd < 0) return make_error(ErrorCode::io, "cannot create a temporary file for the problem IR");
  ::close(fd);
  TempProblemJson out(buf);
  ProcessSpec ps;
  ps.argv = {python_interpreter(), "-m", "ucutlass_torch.extract", problem_py, "-o", out.path()};
  ps.env_set = python_env();
  ps.timeout = std::chrono::milliseconds(300000);
  auto r = subprocess_run(ps);
  if (!r || !r->success()) {
    std::string why = !r ? r.error().render() : r->err.substr(r->err.size() > 1500 ? r->err.size() - 1500 : 0);
    return make_error(ErrorCode::subprocess, "extracting the Problem IR of " + problem_py + " failed: " + why);
  }
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
