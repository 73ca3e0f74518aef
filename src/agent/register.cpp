#include "agent/register.h"

#include <fmt/format.h>

#include <cstdio>
#include <mutex>

#include "agent/cassette.h"
#include "agent/http.h"
#include "agent/llm_strategy.h"
#include "app/adapters_space.h"
#include "dsl/dsl.h"
#include "sol/report_render.h"
#include "support/fs.h"

namespace ucut::agent {

namespace {

// The outcomes of the strategies made (agent_outcomes_take).
std::mutex g_outcomes_mu;
std::vector<std::shared_ptr<const AgentOutcomeSlot>> g_outcomes;

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
  ap.notice = [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
  auto strategy = std::make_unique<LlmStrategy>(ctx.space, std::move(ap), std::move(*settings), std::move(*client));
  {
    std::lock_guard<std::mutex> lock(g_outcomes_mu);
    g_outcomes.push_back(strategy->outcome_slot());
  }
  return std::unique_ptr<search::Strategy>(std::move(strategy));
}

}  // namespace

Result<OpenAiOptions> agent_openai_options(const AgentSettings& s) {
  OpenAiOptions o;
  o.base_url = s.url;
  o.model = s.model;
  o.key_env = s.key_env;
  o.allow_insecure = s.allow_insecure;
  o.max_retries = s.retries;
  o.retry_after_max_s = s.retry_after_max_s;
  o.timeout_s = s.timeout_s;
  o.stream = s.stream;
  o.seed = s.seed;
  return openai_options_resolve(o);
}

Status agent_check(const AgentSettings& s) {
  if (auto st = agent_settings_check(s); !st) return st.error();
  if (!s.replay.empty()) {
    if (!fs_exists(s.replay))
      return make_error(ErrorCode::not_found, "--replay " + s.replay + ": no such cassette",
                        "a cassette is OUT/<problem>/llm-cassette.jsonl of a run that recorded one (or --record FILE)");
    return ok_status();
  }
  auto o = agent_openai_options(s);
  if (!o) return o.error();
  return ok_status();
}

Result<std::unique_ptr<LlmClient>> agent_client(const AgentSettings& s, const std::string& record_default) {
  if (!s.replay.empty()) return replay_client(s.replay, s.replay_strict);
  auto resolved = agent_openai_options(s);
  if (!resolved) return resolved.error();
  const std::string key = resolved->api_key;
  const std::string record = s.record.empty() ? record_default : s.record;
  // Before any request: a cassette that cannot be written would fail the first (billed) one.
  if (!record.empty())
    if (auto st = cassette_check_writable(record); !st) return st.error();
  std::unique_ptr<LlmClient> client = openai_client(std::move(*resolved), http_client_curl());
  if (!record.empty()) {
    if (auto st = fs_set_aside(record); !st) return st.error();
    client = recording_client(std::move(client), record, key);
  }
  return client;
}

std::vector<AgentOutcome> agent_outcomes_take() {
  std::lock_guard<std::mutex> lock(g_outcomes_mu);
  std::vector<AgentOutcome> out;
  for (const auto& slot : g_outcomes) out.push_back(slot->get());
  g_outcomes.clear();
  return out;
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

Result<PromptInputs> agent_first_prompt(const app::PreparedProblem& p, const std::string& profile, const std::string& task) {
  const double t_contract = app::pipeline_sol_contract(p.sol, app::pipeline_tf32_bound(p, profile));
  space::SpaceOptions so;
  so.policy = p.policy;
  auto space = app::RealSpace::create(p.lowered.program, p.hw, so);
  if (!space) return space.error();
  const int rung = app::pipeline_start_rung(app::pipeline_tf32_bound(p, profile), **space);
  PromptInputs in;
  in.problem = agent_problem_brief(p, p.hw, profile, t_contract);
  in.measured = false;
  in.task = task;
  auto ranked = (*space)->ranked(1, rung);
  if (ranked.empty()) {
    const std::string text = dsl::dsl_print(p.lowered.program);
    in.current = ProgramBrief{"lowered", text, 0, agent_program_floor(p.hw, p.policy, p.t_sol(), text)};
    return in;
  }
  const search::Candidate& c = ranked.front();
  in.current = ProgramBrief{c.name, c.program, c.predicted_s, agent_program_floor(p.hw, p.policy, p.t_sol(), c.program)};
  AttemptBrief a;
  a.index = 1;
  a.name = c.name;
  a.origin = c.origin;
  a.status = c.predicted_s > 0 ? "ok" : "rejected";
  a.time_s = c.predicted_s;
  if (c.predicted_s <= 0) a.detail = "the analytic model has no estimate for this program; nothing was measured";
  in.recent.push_back(std::move(a));
  return in;
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
