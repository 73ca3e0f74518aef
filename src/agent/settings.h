// The LLM agent's settings (docs/agent.md): which endpoint and model, how the agent searches
// (flat loop or orchestrated steps, beam width, proposals per iteration, repairs), what it may
// spend (tokens per problem and per suite, prices for the cost column) and where its session is
// recorded or replayed from. The CLI fills them from options and the environment and passes them
// to the strategy as JSON (StrategyContext::settings); the API key itself is never stored here,
// only the name of the variable that holds it. agent_settings_check holds every number to its
// range, so the CLI, the JSON and programmatic callers refuse the same values with the same words.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "support/result.h"

namespace ucut::agent {

struct AgentSettings {
  std::string url;                 // --llm; "" -> $OPENAI_BASE_URL
  std::string model;               // --model; "" -> $UCUTLASS_LLM_MODEL or $OPENAI_MODEL
  // The variable holding the API key (never the key). "": $OPENAI_API_KEY when it is set (a local
  // server needs none); a variable named here must be set, and nothing falls back to another.
  std::string key_env;
  bool allow_insecure = false;     // the key may go over plain http:// to a host that is not loopback
  std::string mode = "flat";       // flat: propose -> check -> compile -> evaluate -> feedback;
                                   // orchestrated: analyze -> nominate -> triage -> implement -> summarize
  bool hybrid = false;             // the built-in search tunes the knobs of every program the model writes
  int beam = 2;                    // B: programs kept as parents between iterations
  int proposals = 4;               // N: programs asked for per iteration
  int repairs = 2;                 // check diagnostics sent back per proposal before giving up on it
  int tune = 3;                    // hybrid: configurations measured per program the model writes
  int recent = 6;                  // recent attempts shown in a prompt
  int experiences = 5;             // memory lessons shown in a prompt (0 or memory off: none)
  bool memory = true;              // retrieved experiences go into prompts (--llm-memory on|off)
  double temperature = 0.2;
  int max_tokens = 4096;           // per reply
  double timeout_s = 300;          // per request (> 0)
  int retries = 4;                 // on 429, 5xx and transport errors, with backoff
  double retry_after_max_s = 60;   // the longest a server's Retry-After is obeyed, per retry
  bool stream = false;
  long long problem_tokens = 0;    // tokens in + out per problem; 0: no limit
  long long suite_tokens = 0;      // tokens in + out over a whole bench run; 0: no limit
  double price_in = 0;             // USD per million prompt tokens (cost column)
  double price_out = 0;            // USD per million completion tokens
  std::string replay;              // a cassette to replay instead of calling a model
  bool replay_strict = false;      // replay: a request that differs from the recording is an error
  std::string record;              // where to record the session; "" -> <out>/<problem>/llm-cassette.jsonl
  uint64_t seed = 0;               // sent to the endpoint when nonzero (best effort determinism)
};

nlohmann::json agent_settings_to_json(const AgentSettings& s);
// Lenient about missing keys (defaults); a wrongly typed key, an unknown mode or a number out of
// its range (agent_settings_check) is invalid_input.
Result<AgentSettings> agent_settings_from_json(const nlohmann::json& j);

// Every number in its range, named by its option: "--proposals must be a whole number >= 1, not 0".
// (The CLI checks each option as it reads it, with the same rule: agent_setting_rule.)
Status agent_settings_check(const AgentSettings& s);

// The rule of one numeric agent option ("--llm-timeout"): its lower bound, whether the bound
// itself is allowed, its upper bound (infinity: none) and the words that say so ("more than 0
// seconds"). Null for a name that is not a numeric agent option.
struct AgentSettingRule {
  const char* option;
  double min;
  bool min_allowed;
  double max;
  bool whole;        // a whole number
  const char* says;  // "a whole number >= 1"
};
const AgentSettingRule* agent_setting_rule(const std::string& option);
// "" when `value` keeps the rule, else why not ("must be a whole number >= 1, not 0").
std::string agent_setting_violation(const AgentSettingRule& rule, double value);

}  // namespace ucut::agent
