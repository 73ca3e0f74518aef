#include "eval/sol_link.h"

#include <unistd.h>

#include "problem/problem.h"
#include "sol/cost.h"
#include "sol/estimate.h"
#include "sol/hardware.h"
#include "sol/peaks.h"
#include "support/python.h"
#include "support/subprocess.h"

namespace ucut::eval {

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
  std::string json_path = problem_json;
  std::string tmp;
  if (json_path.empty()) {
    char buf[] = "/tmp/ucut-problem-XXXXXX";
    int fd = ::mkstemp(buf);
    if (fd < 0) return make_error(ErrorCode::io, "cannot create a temporary file for the problem IR");
    ::close(fd);
    tmp = json_path = buf;
    ProcessSpec ps;
    ps.argv = {python_interpreter(), "-m", "ucutlass_torch.extract", problem_py, "-o", json_path};
    ps.env_set = python_env();
    ps.timeout = std::chrono::milliseconds(300000);
    auto r = subprocess_run(ps);
    if (!r || !r->success()) {
      ::unlink(tmp.c_str());
      std::string why = !r ? r.error().render() : r->err.substr(r->err.size() > 1500 ? r->err.size() - 1500 : 0);
      return make_error(ErrorCode::subprocess, "extracting the Problem IR of " + problem_py + " failed: " + why);
    }
  }
  auto prob = problem::problem_load(json_path);
  if (!tmp.empty()) ::unlink(tmp.c_str());
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
