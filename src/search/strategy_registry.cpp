#include "search/strategy_registry.h"

namespace ucut::search {

const std::vector<StrategyEntry>& strategy_entries() {
  static const std::vector<StrategyEntry> entries = {
      {"builtin",
       "the built-in search: SOL-ranked configurations, refinement around the best, the precision ladder "
       "(no LLM)",
       [](const StrategyContext& ctx) -> Result<std::unique_ptr<Strategy>> {
         return std::unique_ptr<Strategy>(std::make_unique<BuiltinStrategy>(ctx.space, ctx.builtin));
       }},
  };
  return entries;
}

Result<std::unique_ptr<Strategy>> strategy_make(const std::string& name, const StrategyContext& ctx) {
  std::string names;
  for (const auto& e : strategy_entries()) {
    if (e.name == name) return e.make(ctx);
    names += (names.empty() ? "" : ", ") + e.name;
  }
  return make_error(ErrorCode::invalid_input, "unknown strategy '" + name + "'", "choose one of: " + names);
}

std::string strategy_help() {
  std::string out;
  for (const auto& e : strategy_entries()) out += (out.empty() ? "" : "; ") + e.name + ": " + e.help;
  return out;
}

}  // namespace ucut::search
