// `ucutlass lower problem.json [-o prog.ucut] [--policy tf32] [--gpu h200]`: the μCUTLASS
// program the auto-lowering writes for a problem (docs/optimizer.md, "Lowering"), with `auto`
// knobs and the policy's precision; the notes (fallbacks, splits, fused reductions) go to stderr.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli/commands.h"
#include "lower/lower.h"
#include "problem/problem.h"
#include "sol/peaks.h"
#include "support/fs.h"

namespace ucut {

namespace {

struct LowerCliOptions {
  std::string problem;
  std::string out;
  std::string policy = "tf32";
  std::string gpu = "h200";
};

int run_lower(const LowerCliOptions& o) {
  auto fail = [](const Error& e, int code = -1) { return cli_fail("lower", e, code); };
  const sol::Policy policy = cli_policy(o.policy);  // checked when the command line was read
  if (o.problem.size() >= 3 && o.problem.compare(o.problem.size() - 3, 3, ".py") == 0)
    return fail(make_error(ErrorCode::invalid_input, "'" + o.problem + "' is a Python problem file",
                           "extract it first: ucutlass extract " + o.problem + " -o problem.json"),
                kExitUsage);
  auto p = problem::problem_load(o.problem);
  if (!p) return fail(p.error());
  lower::LowerOptions lo;
  lo.policy = policy;
  lo.gpu = o.gpu;
  auto r = lower::lower_problem(*p, lo);
  if (!r) return fail(r.error());
  for (const auto& n : r->notes) std::fprintf(stderr, "note: %s\n", n.c_str());
  if (o.out.empty()) {
    std::fputs(r->text.c_str(), stdout);
    return 0;
  }
  if (auto st = fs_write_atomic(o.out, r->text); !st) return fail(st.error());
  std::fprintf(stderr, "wrote %s (%zu stage%s)\n", o.out.c_str(), r->program.stages.size(),
               r->program.stages.size() == 1 ? "" : "s");
  return 0;
}

}  // namespace

CommandRun cmd_lower(CLI::App& sub) {
  auto o = std::make_shared<LowerCliOptions>();
  sub.add_option("problem", o->problem, "problem.json (from 'ucutlass extract')")->required();
  cli_add_output_file_option(sub, o->out, "write the program here instead of stdout");
  cli_add_policy_option(sub, o->policy, "precision policy: exact, tf32 or bf16");
  sub.add_option("--gpu", o->gpu, "GPU of the hardware table (for the bf16 conversion decision)")
      ->capture_default_str()
      ->envname("UCUTLASS_GPU");
  return [o] { return run_lower(*o); };
}

}  // namespace ucut
