// Registers the LLM agent's strategies with the search's registry (search/strategy_registry.h):
//   llm     the agent alone (AgentSettings::mode flat or orchestrated);
//   hybrid  the agent writes programs, the built-in ranking and neighbour moves tune their knobs.
// Called once at start-up by the CLI, before options are parsed (--strategy checks the names).
// The factory builds the LLM client from the settings: a cassette replay (--replay), or an
// OpenAI-compatible endpoint (--llm / OPENAI_BASE_URL, --model, the key from $OPENAI_API_KEY or
// the variable --llm-key-env names) recorded to <out>/<problem>/llm-cassette.jsonl. Commands call
// agent_check before anything runs, so a wrong setting is a usage error, not a failed request;
// after the run, agent_outcomes_take says how each problem's conversation went.
#pragma once

#include <memory>
#include <vector>

#include "agent/llm_client.h"
#include "agent/llm_strategy.h"
#include "agent/prompts.h"
#include "agent/settings.h"
#include "app/pipeline.h"
#include "search/strategy_registry.h"

namespace ucut::agent {

void agent_register_strategies();

// The client the settings describe (replay, or endpoint + recording into `record_default` unless
// settings.record names another file; "" records nothing). Errors name the missing setting; a
// cassette that cannot be written is an io error before any request.
Result<std::unique_ptr<LlmClient>> agent_client(const AgentSettings& settings, const std::string& record_default);

// What the agent's settings need before any request, checked without sending anything: every
// number in range, a replay's cassette exists, or else an endpoint and a model, the key from the
// named variable (which must be set) and no key over plain http:// to a host that is not
// loopback without allow_insecure. Every error here is the command line's (exit 2).
Status agent_check(const AgentSettings& settings);
// The OpenAI client's options the settings give (resolved: agent_check's errors but the numbers').
Result<OpenAiOptions> agent_openai_options(const AgentSettings& settings);

// The outcomes of every agent strategy made since the last call (one per problem), in the order
// they were made; they are forgotten here.
std::vector<AgentOutcome> agent_outcomes_take();

// The problem brief every prompt starts from (source, IR, SOL report, precision).
ProblemBrief agent_problem_brief(const app::PreparedProblem& p, const sol::HwSpec& hw, const std::string& profile,
                                 double t_sol_contract);

// The first request's inputs as a planning run without memory sends them (`ucutlass optimize
// --plan --strategy llm --no-memory`): the lowered program's best-ranked configuration at the
// start rung as the current program and the one attempt, with the analytic model's estimate
// (said as such). A measured run's first request has the measured time in their place.
Result<PromptInputs> agent_first_prompt(const app::PreparedProblem& p, const std::string& profile, const std::string& task);

}  // namespace ucut::agent
