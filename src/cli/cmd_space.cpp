// `ucutlass space prog.ucut [--stage N] [--top 10] [--policy tf32] [--gpu h200] [--all]`: the
// ranked configurations of each stage of a program (docs/optimizer.md, "Search space"): how many
// were enumerated and valid, then the top ones with their estimate and its factors. `--all` also
// lists every invalid candidate's first violated rule, counted by rule.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <map>

#include "cli/commands.h"
#include "dsl/dsl.h"
#include "sol/hardware.h"
#include "space/space.h"
#include "support/fs.h"

namespace ucut {

namespace {

struct SpaceCliOptions {
  std::string program;
  int stage = -1;
  int top = 10;
  std::string policy = "tf32";
  std::string gpu = "h200";
  bool rules = false;
};

int run_space(const SpaceCliOptions& o) {
  auto fail = [](const Error& e, int code = -1) { return cli_fail("space", e, code); };
  const sol::Policy policy = cli_policy(o.policy);  // checked when the command line was read
  auto hw = sol::hw_lookup(o.gpu);
  if (!hw) return fail(hw.error(), kExitUsage);
  auto text = fs_read(o.program);
  if (!text) return fail(text.error());
  SourceFile src{o.program, *text};
  auto checked = dsl::dsl_compile(src);
  if (!checked.program) {
    std::fputs(diag_render_all(src, checked.diagnostics).c_str(), stderr);
    return kExitFailed;
  }
  const dsl::Program& p = *checked.program;
  int n = static_cast<int>(p.stages.size());
  if (o.stage >= n)
    return fail(make_error(ErrorCode::invalid_input, "--stage " + std::to_string(o.stage) + ": the program has " +
                                                         std::to_string(n) + " stage(s)",
                           "stages are numbered from 0"),
                kExitUsage);
  space::SpaceOptions so;
  so.policy = policy;
  if (hw->sms > 0) so.sms = hw->sms;  // the gemv schedules' chunk count, as the search does
  for (int si = 0; si < n; ++si) {
    if (o.stage >= 0 && si != o.stage) continue;
    auto all = space::space_enumerate(p, si, so);
    if (!all) {
      std::printf("stage %d (%s): %s\n\n", si, p.stages[si].name.c_str(), all.error().message.c_str());
      continue;
    }
    std::vector<space::StageConfig> valid;
    std::map<std::string, int> by_rule;
    for (const auto& c : *all) {
      auto v = space::space_validate(p, c, so);
      if (v.empty()) valid.push_back(c);
      else by_rule[v.front().rule]++;
    }
    auto ranked = space::space_rank(p, valid, *hw);
    std::printf("stage %d (%s): %zu configurations, %zu valid, policy %s, %s\n", si, p.stages[si].name.c_str(),
                all->size(), valid.size(), sol::policy_name(policy), hw->name.c_str());
    if (o.rules)
      for (const auto& [rule, count] : by_rule) std::printf("  rejected by %-32s %d\n", rule.c_str(), count);
    std::printf("  %4s  %-52s %4s %10s %10s %6s %6s %6s\n", "rank", "config", "rung", "t_est(us)", "t_sol(us)",
                "waves", "tiles", "loop");
    for (int i = 0; i < static_cast<int>(ranked.size()) && i < o.top; ++i) {
      const auto& r = ranked[static_cast<size_t>(i)];
      std::printf("  %4d  %-52s %4d %10.2f %10.2f %6.2f %6.2f %6.2f\n", i + 1, r.config.name.c_str(),
                  r.config.rung, r.t_est * 1e6, r.t_sol * 1e6, r.wave_eff, r.tile_eff, r.mainloop_eff);
    }
    std::printf("\n");
  }
  return 0;
}

}  // namespace

CommandRun cmd_space(CLI::App& sub) {
  auto o = std::make_shared<SpaceCliOptions>();
  sub.add_option("program", o->program, "a μCUTLASS program (.ucut)")->required();
  sub.add_option("--stage", o->stage, "only this stage (0-based); default: every stage");
  sub.add_option("--top", o->top, "how many ranked configurations to print per stage")->capture_default_str();
  cli_add_policy_option(sub, o->policy, "precision policy: exact, tf32 or bf16");
  sub.add_option("--gpu", o->gpu, "GPU of the hardware table the ranking assumes")
      ->capture_default_str()
      ->envname("UCUTLASS_GPU");
  sub.add_flag("--rules", o->rules, "also count the rejected configurations by the rule that rejected them");
  return [o] { return run_space(*o); };
}

}  // namespace ucut
