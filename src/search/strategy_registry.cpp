#include "search/strategy_registry.h"

namespace ucut::search {

namespace {

std::vector<StrategyEntry>& registry() {
  static std::vector<StrategyEntry> entries = {
      {"builtin",
       "the built-in search: SOL-ranked configurations, refinement around the best, the precision ladder "
       "(no LLM)",
       [](const StrategyContext& ctx) -> Result<std::unique_ptr<Strategy>> {
         return std::unique_ptr<Strategy>(std::make_unique<BuiltinStrategy>(ctx.space, ctx.builtin));
       }},
  };
  return entries;
}

}  // namespace

void strategy_register(StrategyEntry entry) {
  for (auto& e : registry())
    if (e.name == entry.name) {
      e = std::move(entry);
      return;
    }
  registry().push_back(std::move(entry));
}

const std::vector<StrategyEntry>& strategy_entries() { return registry(); }

std::vector<std::string> strategy_names() {
  std::vector<std::string> names;
  for (const auto& e : strategy_entries()) names.push_back(e.name);
  return names;
}

Result<std::unique_ptr<Strategy>> strategy_make(const std::string& name, const StrategyContext& ctx) {
  for (const auto& e : strategy_entries())
    if (e.name == name) return e.make(ctx);
  std::string names;
  for (const auto& n : strategy_names()) names += (names.empty() ? "" : ", ") + n;
  return make_error(ErrorCode::invalid_input, "unknown strategy '" + name + "'", "choose one of: " + names);
}

std::string strategy_help() {
  std::string out;
  for (const auto& e : strategy_entries()) out += (out.empty() ? "" : "; ") + e.name + ": " + e.help;
  return out;
}

}  // namespace ucut::search
