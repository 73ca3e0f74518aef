// Registers the LLM agent's strategies with the search's registry (search/strategy_registry.h):
//   llm     the agent alone (AgentSettings::mode flat or orchestrated);
//   hybrid  the agent writes programs, the built-in ranking and neighbour moves tune their knobs.
// Called once at start-up by the CLI, before options are parsed (--strategy checks the names).
// The factory builds the LLM client from the settings: a cassette replay (--replay), or an
// OpenAI-compatible endpoint (--llm / OPENAI_BASE_URL, --model, the key from $OPENAI_API_KEY)
// recorded to <out>/<problem>/llm-cassette.jsonl.
#pragma once

#include <memory>

#include "agent/llm_client.h"
#include "agent/prompts.h"
#include "agent/settings.h"
#include "app/pipeline.h"
#include "search/strategy_registry.h"

namespace ucut::agent {

void agent_register_strategies();

// The client the settings describe (replay, or endpoint + recording into `record_default` unless
// settings.record names another file; "" records nothing). Errors name the missing setting.
Result<std::unique_ptr<LlmClient>> agent_client(const AgentSettings& settings, const std::string& record_default);

// The problem brief every prompt starts from (source, IR, SOL report, precision).
ProblemBrief agent_problem_brief(const app::PreparedProblem& p, const sol::HwSpec& hw, const std::string& profile,
                                 double t_sol_contract);

}  // namespace ucut::agent
