#include "agent/settings.h"

namespace ucut::agent {

nlohmann::json agent_settings_to_json(const AgentSettings& s) {
  return {{"url", s.url},
          {"model", s.model},
          {"key_env", s.key_env},
          {"mode", s.mode},
          {"hybrid", s.hybrid},
          {"beam", s.beam},
          {"proposals", s.proposals},
          {"repairs", s.repairs},
          {"tune", s.tune},
          {"recent", s.recent},
          {"experiences", s.experiences},
          {"memory", s.memory},
          {"temperature", s.temperature},
          {"max_tokens", s.max_tokens},
          {"timeout_s", s.timeout_s},
          {"retries", s.retries},
          {"stream", s.stream},
          {"problem_tokens", s.problem_tokens},
          {"suite_tokens", s.suite_tokens},
          {"price_in", s.price_in},
          {"price_out", s.price_out},
          {"replay", s.replay},
          {"replay_strict", s.replay_strict},
          {"record", s.record},
          {"seed", s.seed}};
}

Result<AgentSettings> agent_settings_from_json(const nlohmann::json& j) {
  AgentSettings s;
  if (!j.is_object()) return s;
  try {
    s.url = j.value("url", s.url);
    s.model = j.value("model", s.model);
    s.key_env = j.value("key_env", s.key_env);
    s.mode = j.value("mode", s.mode);
    s.hybrid = j.value("hybrid", s.hybrid);
    s.beam = j.value("beam", s.beam);
    s.proposals = j.value("proposals", s.proposals);
    s.repairs = j.value("repairs", s.repairs);
    s.tune = j.value("tune", s.tune);
    s.recent = j.value("recent", s.recent);
    s.experiences = j.value("experiences", s.experiences);
    s.memory = j.value("memory", s.memory);
    s.temperature = j.value("temperature", s.temperature);
    s.max_tokens = j.value("max_tokens", s.max_tokens);
    s.timeout_s = j.value("timeout_s", s.timeout_s);
    s.retries = j.value("retries", s.retries);
    s.stream = j.value("stream", s.stream);
    s.problem_tokens = j.value("problem_tokens", s.problem_tokens);
    s.suite_tokens = j.value("suite_tokens", s.suite_tokens);
    s.price_in = j.value("price_in", s.price_in);
    s.price_out = j.value("price_out", s.price_out);
    s.replay = j.value("replay", s.replay);
    s.replay_strict = j.value("replay_strict", s.replay_strict);
    s.record = j.value("record", s.record);
    s.seed = j.value("seed", s.seed);
  } catch (const nlohmann::json::exception& e) {
    return make_error(ErrorCode::invalid_input, std::string("agent settings: ") + e.what());
  }
  if (s.mode != "flat" && s.mode != "orchestrated")
    return make_error(ErrorCode::invalid_input, "unknown agent mode '" + s.mode + "'", "use --agent-mode flat or orchestrated");
  if (s.beam < 1 || s.proposals < 1 || s.tune < 1)
    return make_error(ErrorCode::invalid_input, "--beam, --proposals and --tune must be at least 1");
  if (s.repairs < 0 || s.max_tokens < 1)
    return make_error(ErrorCode::invalid_input, "--repairs must be >= 0 and --llm-max-tokens >= 1");
  return s;
}

}  // namespace ucut::agent
