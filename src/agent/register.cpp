#include "agent/register.h"

#include <fmt/format.h>

#include <cstdlib>

#include "agent/cassette.h"
#include "agent/http.h"
#include "agent/llm_strategy.h"
#include "sol/report_render.h"
#include "support/fs.h"

namespace ucut::agent {

namespace {

Result<std::unique_ptr<search::Strategy>> make_agent(const search::StrategyContext& ctx, bool hybrid) {
  if (!ctx.problem || !ctx.hw)
    return make_error(ErrorCode::unsupported,
                      "the LLM agent needs a real problem: the synthetic surface has no program to show a model",
                      "run it on a problem file (e.g. problems/epi_linear_bias_gelu.py)");
  auto settings = agent_settings_from_json(ctx.settings ? *ctx.settings : nlohmann::json::object());
  if (!settings) return settings.error();
  settings->hybrid = hybrid;
  auto client = agent_client(*settings, ctx.out_dir.empty() ? "" : ctx.out_dir + "/llm-cassette.jsonl");
  if (!client) return client.error();
  AgentProblem ap;
  ap.base = ctx.problem->lowered.program;
  ap.brief = agent_problem_brief(*ctx.problem, *ctx.hw, ctx.profile, ctx.t_sol_contract);
  ap.hw = *ctx.hw;
  ap.policy = ctx.problem->policy;
  ap.measured = ctx.measured;
  ap.start_rung = ctx.builtin.start_rung;
  ap.seeds = ctx.builtin.seeds;
  if (ctx.memory)
    for (const auto& e : ctx.memory->experiences)
      ap.lessons.push_back(fmt::format("{} [{} {}]", e.lesson, e.key.cls, e.key.bucket));
  if (!ctx.out_dir.empty()) {
    ap.log_path = ctx.out_dir + "/agent.jsonl";
    // A new session's log never appends to an old one; the old one is kept beside, numbered.
    if (auto st = fs_set_aside(ap.log_path); !st) return st.error();
  }
  return std::unique_ptr<search::Strategy>(
      std::make_unique<LlmStrategy>(ctx.space, std::move(ap), std::move(*settings), std::move(*client)));
}

}  // namespace

Result<std::unique_ptr<LlmClient>> agent_client(const AgentSettings& s, const std::string& record_default) {
  if (!s.replay.empty()) return replay_client(s.replay, s.replay_strict);
  OpenAiOptions o;
  o.base_url = s.url;
  o.model = s.model;
  if (const char* key = std::getenv(s.key_env.c_str())) o.api_key = key;
  o.max_retries = s.retries;
  o.timeout_s = s.timeout_s;
  o.stream = s.stream;
  o.seed = s.seed;
  auto resolved = openai_options_resolve(o);
  if (!resolved) return resolved.error();
  const std::string key = resolved->api_key;
  std::unique_ptr<LlmClient> client = openai_client(std::move(*resolved), http_client_curl());
  const std::string record = s.record.empty() ? record_default : s.record;
  if (!record.empty()) {
    if (auto st = fs_set_aside(record); !st) return st.error();
    client = recording_client(std::move(client), record, key);
  }
  return client;
}

ProblemBrief agent_problem_brief(const app::PreparedProblem& p, const sol::HwSpec& hw, const std::string& profile,
                                 double t_sol_contract) {
  ProblemBrief b;
  b.name = p.name;
  b.gpu = hw.name;
  b.profile = profile;
  if (!p.problem_py.empty())
    if (auto src = fs_read(p.problem_py)) b.source = *src;
  if (!p.problem_json.empty())
    if (auto ir = fs_read(p.problem_json)) {
      auto j = nlohmann::json::parse(*ir, nullptr, false);
      b.ir = j.is_discarded() ? *ir : j.dump();
    }
  b.sol = sol::sol_report_text(p.sol, hw);
  auto bound = app::pipeline_tf32_bound(p, profile);
  if (bound.fails || bound.faithful_fails) b.precision = bound.reason;
  b.t_sol = p.t_sol();
  b.t_sol_contract = t_sol_contract;
  return b;
}

void agent_register_strategies() {
  search::strategy_register(
      {"llm",
       "the LLM agent: a model behind an OpenAI-compatible endpoint (--llm, --model) writes programs, steered by "
       "the SOL report and the memory's lessons (docs/agent.md)",
       [](const search::StrategyContext& ctx) { return make_agent(ctx, false); }});
  search::strategy_register(
      {"hybrid",
       "the LLM agent writes program structure, the built-in ranking and neighbour moves tune each program's knobs",
       [](const search::StrategyContext& ctx) { return make_agent(ctx, true); }});
}

}  // namespace ucut::agent
