#include "agent/settings.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

namespace ucut::agent {

namespace {

constexpr double kNone = std::numeric_limits<double>::infinity();

// Every numeric agent option with its range. A value out of range is refused where it is read
// (the command line, the settings JSON), never clamped or read as "no limit".
constexpr AgentSettingRule kRules[] = {
    {"--beam", 1, true, kNone, true, "a whole number >= 1"},
    {"--proposals", 1, true, kNone, true, "a whole number >= 1"},
    {"--repairs", 0, true, kNone, true, "a whole number >= 0"},
    {"--tune", 1, true, kNone, true, "a whole number >= 1"},
    {"--llm-tokens", 0, true, kNone, true, "a whole number >= 0 (0: no budget)"},
    {"--llm-suite-tokens", 0, true, kNone, true, "a whole number >= 0 (0: no budget)"},
    {"--llm-price-in", 0, true, kNone, false, "a price >= 0 (USD per million tokens)"},
    {"--llm-price-out", 0, true, kNone, false, "a price >= 0 (USD per million tokens)"},
    // OpenAI's range; other servers accept the same or less.
    {"--llm-temperature", 0, true, 2, false, "between 0 and 2"},
    {"--llm-max-tokens", 1, true, kNone, true, "a whole number >= 1"},
    {"--llm-timeout", 0, false, kNone, false, "more than 0 seconds (there is no 'no timeout')"},
    {"--llm-retries", 0, true, kNone, true, "a whole number >= 0"},
    {"--llm-retry-after-max", 0, true, kNone, false, "0 seconds or more"},
};

std::string number_text(double v) {
  if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 1e15) return fmt::format("{:.0f}", v);
  return fmt::format("{}", v);
}

}  // namespace

const AgentSettingRule* agent_setting_rule(const std::string& option) {
  for (const auto& r : kRules)
    if (option == r.option) return &r;
  return nullptr;
}

std::string agent_setting_violation(const AgentSettingRule& rule, double value) {
  const bool ok = std::isfinite(value) && (rule.min_allowed ? value >= rule.min : value > rule.min) &&
                  value <= rule.max && (!rule.whole || value == std::floor(value));
  return ok ? std::string() : fmt::format("must be {}, not {}", rule.says, number_text(value));
}

Status agent_settings_check(const AgentSettings& s) {
  const std::pair<const char*, double> values[] = {
      {"--beam", s.beam},
      {"--proposals", s.proposals},
      {"--repairs", s.repairs},
      {"--tune", s.tune},
      {"--llm-tokens", static_cast<double>(s.problem_tokens)},
      {"--llm-suite-tokens", static_cast<double>(s.suite_tokens)},
      {"--llm-price-in", s.price_in},
      {"--llm-price-out", s.price_out},
      {"--llm-temperature", s.temperature},
      {"--llm-max-tokens", s.max_tokens},
      {"--llm-timeout", s.timeout_s},
      {"--llm-retries", s.retries},
      {"--llm-retry-after-max", s.retry_after_max_s},
  };
  for (const auto& [option, value] : values) {
    const AgentSettingRule* rule = agent_setting_rule(option);
    if (!rule) continue;
    if (std::string why = agent_setting_violation(*rule, value); !why.empty())
      return make_error(ErrorCode::invalid_input, std::string(option) + " " + why,
                        "'ucutlass optimize --help' lists the LLM agent's options (docs/agent.md)");
  }
  if (s.mode != "flat" && s.mode != "orchestrated")
    return make_error(ErrorCode::invalid_input, "unknown agent mode '" + s.mode + "'", "use --agent-mode flat or orchestrated");
  if (s.recent < 0 || s.experiences < 0)
    return make_error(ErrorCode::invalid_input, "the agent's recent and experiences counts must be >= 0");
  return ok_status();
}

nlohmann::json agent_settings_to_json(const AgentSettings& s) {
  return {{"url", s.url},
          {"model", s.model},
          {"key_env", s.key_env},
          {"allow_insecure", s.allow_insecure},
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
          {"retry_after_max_s", s.retry_after_max_s},
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
    s.allow_insecure = j.value("allow_insecure", s.allow_insecure);
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
    s.retry_after_max_s = j.value("retry_after_max_s", s.retry_after_max_s);
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
  if (auto st = agent_settings_check(s); !st) return st.error();
  return s;
}

}  // namespace ucut::agent
