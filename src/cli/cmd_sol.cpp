// `ucutlass sol problem.py|problem.json [--gpu h200] [--policy tf32] [--json] [--calibration FILE]
// [--program prog.ucut]`: the speed-of-light report of a problem (docs/sol.md), and with --program
// the floor of that μCUTLASS program beside it (each stage's own roofline, intermediates
// included). A .py problem is first extracted (eval::extract_problem_json); a problem.json is read
// directly (fast path, no Python).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "codegen/library.h"
#include "dsl/dsl.h"
#include "eval/sol_link.h"
#include "problem/problem.h"
#include "sol/cost.h"
#include "sol/estimate.h"
#include "sol/hardware.h"
#include "sol/peaks.h"
#include "sol/program_estimate.h"
#include "sol/report_render.h"
#include "support/fs.h"

namespace ucut {

namespace {

struct SolOptions {
  std::string problem;
  std::string gpu = "h200";
  std::string policy = "tf32";
  bool json = false;
  std::string calibration;
  int top = 5;
  std::string program;
};

int fail(const Error& e, int code = -1) { return cli_fail("sol", e, code); }

// Runs the extractor on a .py problem and loads what it wrote.
Result<problem::Problem> extract_and_load(const std::string& py_path) {
  auto json = eval::extract_problem_json(py_path);
  if (!json) return json.error();
  return problem::problem_load(json->path());
}

std::string shapes_text(const std::vector<std::vector<int64_t>>& shapes) {
  std::string out;
  for (const auto& s : shapes) {
    out += out.empty() ? "[" : ", [";
    for (size_t i = 0; i < s.size(); ++i) out += (i ? "x" : "") + std::to_string(s[i]);
    out += "]";
  }
  return out.empty() ? "(none)" : out;
}

int run_sol(const SolOptions& o) {
  auto hw = sol::hw_lookup(o.gpu);
  if (!hw) return fail(hw.error(), kExitUsage);
  const sol::Policy policy = cli_policy(o.policy);  // checked when the command line was read

  sol::SolReportOptions so;
  so.top_n = o.top;
  if (!o.calibration.empty()) {
    auto text = fs_read(o.calibration);
    if (!text) return fail(text.error());
    auto c = sol::calibration_parse(*text, o.calibration);
    if (!c) return fail(c.error());
    so.calibration = *c;
  } else {
    // A stored calibration that cannot be read is an error here (the user asked for this report),
    // not the note the pipeline writes.
    auto c = sol::calibration_find(hw->name);
    if (!c) return fail(c.error());
    so.calibration = *c;
    so.stored_calibration = false;
  }

  Result<problem::Problem> prob = o.problem.ends_with(".py") ? extract_and_load(o.problem)
                                                              : problem::problem_load(o.problem);
  if (!prob) return fail(prob.error());

  auto made = sol::sol_problem_report(*prob, *hw, policy, so);
  if (!made) return fail(made.error());
  const sol::SolReport& report = *made;
  const std::optional<sol::Calibration>& calibration = so.calibration;

  // The program floor is computed with the same peaks (datasheet or calibrated) as the report.
  std::optional<sol::ProgramEstimate> floor;
  if (!o.program.empty()) {
    auto text = fs_read(o.program);
    if (!text) return fail(text.error());
    SourceFile src{o.program, *text};
    dsl::CheckResult checked = dsl::dsl_compile(src);
    if (!checked.program) {
      std::fputs(diag_render_all(src, checked.diagnostics).c_str(), stderr);
      return fail(make_error(ErrorCode::invalid_input, "--program " + o.program + " does not check",
                             "fix the diagnostics above ('ucutlass check " + o.program + "')"));
    }
    // A floor is only comparable with the problem's SOL when the program computes the same outputs.
    std::vector<std::vector<int64_t>> program_outs, problem_outs;
    for (const auto& t : checked.program->tensors)
      if (t.role == dsl::TensorRole::out) program_outs.push_back(t.shape);
    for (const auto& name : prob->outputs)
      if (const auto* t = prob->find_tensor(name)) problem_outs.push_back(t->shape);
    if (program_outs != problem_outs)
      return fail(make_error(ErrorCode::invalid_input,
                             "--program " + o.program + " has outputs " + shapes_text(program_outs) +
                                 " but the problem's outputs are " + shapes_text(problem_outs),
                             "pass a program written for this problem (e.g. 'ucutlass lower problem.json')"));
    // The floor of what runs: an f32x3s stage is five (splits, three TF32 GEMMs, partials).
    auto runs = codegen::codegen_expand_split_gemms(*checked.program);
    if (!runs) return fail(runs.error());
    floor = sol::sol_program_estimate(*hw, *runs, policy, calibration);
  }

  if (o.json) {
    auto j = sol::sol_report_json(report, *hw);
    if (floor) j["program_floor"] = sol::sol_program_json(*floor, report.reference().t_sol);
    std::printf("%s\n", j.dump(2).c_str());
  } else {
    std::fputs(sol::sol_report_text(report, *hw).c_str(), stdout);
    if (floor) std::fputs(("\n" + sol::sol_program_render(*floor, report.reference().t_sol)).c_str(), stdout);
  }
  return 0;
}

}  // namespace

CommandRun cmd_sol(CLI::App& sub) {
  auto o = std::make_shared<SolOptions>();
  sub.add_option("problem", o->problem, "problem.py (KernelBench format) or problem.json (Problem IR)")->required();
  sub.add_option("--gpu", o->gpu, "GPU of the hardware table (h100-sxm, h100-pcie, h200, b200, a100-sxm-80gb, "
                                  "l40s, rtx-4090)")
      ->capture_default_str()
      ->envname("UCUTLASS_GPU");
  cli_add_policy_option(sub, o->policy, "precision policy: exact, tf32 or bf16 (EVAL-CONTRACT section 3)");
  sub.add_flag("--json", o->json, "print the report as JSON (schema ucutlass.sol/1)");
  sub.add_option("--calibration", o->calibration,
                 "calibration file to use (default: the one 'ucutlass calibrate' stored for --gpu, if any)");
  sub.add_option("--program", o->program,
                 "a μCUTLASS program for this problem: also print its floor (its own bytes, intermediates "
                 "included, and FLOPs at its precision)");
  sub.add_option("--top", o->top, "how many dominating operations to list")->capture_default_str()->check(CLI::NonNegativeNumber);
  return [o] { return run_sol(*o); };
}

}  // namespace ucut
