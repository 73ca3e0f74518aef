// `ucutlass prompt problem.py|problem.json [--profile P] [--task propose|analyze] [--json] [--show]`:
// what the LLM agent would send a model first for this problem (docs/agent.md "What it sends"):
// each prompt part with its size in tokens (ceil(characters / 4)), and with --show the messages
// themselves. Nothing is sent anywhere. The request is the first one of a planning run without
// memory (agent_first_prompt): the lowered program's best-ranked configuration with the analytic
// model's estimate, said to be one; a measured run sends its measured time there.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <string>

#include "agent/prompts.h"
#include "agent/register.h"
#include "cli/commands.h"
#include "dsl/dsl.h"
#include "app/pipeline.h"

namespace ucut {

namespace {

struct PromptArgs {
  std::string problem, profile = "default", policy = "tf32", gpu = "h200", task = "propose", out = "out";
  bool json = false, show = false;
};

int run_prompt(const PromptArgs& a) {
  app::PrepareOptions po;
  po.policy = cli_policy(a.policy);
  po.gpu = a.gpu;
  po.out_dir = a.out;
  auto p = app::pipeline_prepare(a.problem, po);
  if (!p) return cli_fail("prompt", p.error());
  auto in = agent::agent_first_prompt(*p, a.profile, a.task == "analyze" ? agent::task_analyze(4) : agent::task_propose());
  if (!in) return cli_fail("prompt", in.error());
  const auto parts = agent::prompt_parts(*in);
  long long total = 0;
  nlohmann::json j = {{"problem", p->name}, {"parts", nlohmann::json::array()}};
  for (const auto& part : parts) {
    const long long t = agent::token_estimate(part.text);
    total += t;
    j["parts"].push_back({{"name", part.name}, {"tokens", t}, {"chars", part.text.size()}});
  }
  j["total_tokens"] = total;
  if (a.json) {
    std::printf("%s\n", j.dump(2).c_str());
    return kExitOk;
  }
  if (a.show) {
    for (const auto& m : agent::prompt_messages(parts)) std::printf("=== %s ===\n%s\n", m.role.c_str(), m.content.c_str());
    std::printf("\n");
  }
  std::printf("%s: the agent's first prompt (%s) as a planning run sends it (times estimated; a measured run "
              "shows measured ones), tokens = ceil(chars / 4)\n",
              p->name.c_str(), a.task.c_str());
  for (const auto& part : j["parts"])
    std::printf("  %-9s %6lld tokens\n", part["name"].get<std::string>().c_str(), part["tokens"].get<long long>());
  std::printf("  %-9s %6lld tokens\n", "total", total);
  return kExitOk;
}

}  // namespace

CommandRun cmd_prompt(CLI::App& sub) {
  auto a = std::make_shared<PromptArgs>();
  sub.add_option("problem", a->problem, "problem.py (KernelBench format) or a problem.json")->required();
  cli_add_profile_option(sub, a->profile);
  cli_add_policy_option(sub, a->policy, "precision policy: exact | tf32 | bf16");
  sub.add_option("--gpu", a->gpu, "hardware table row")->capture_default_str();
  sub.add_option("--task", a->task, "which request: propose (flat mode) or analyze (orchestrated mode)")
      ->check(CLI::IsMember({"propose", "analyze"}))->capture_default_str();
  cli_add_output_dir_option(sub, a->out, "where the extracted problem.json goes (OUT/<problem>/)")->capture_default_str();
  sub.add_flag("--json", a->json, "the part sizes as JSON");
  sub.add_flag("--show", a->show, "print the messages too");
  return [a] { return run_prompt(*a); };
}

}  // namespace ucut
