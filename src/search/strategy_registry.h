// Strategies chosen at run time by name (`--strategy NAME` in optimize and bench): the driver
// builds whichever one is asked for through this registry and sees only the Strategy interface
// (strategy.h). A new strategy is a new source file with its factory, and one row in
// strategy_registry.cpp's table, or (for a module above search/, such as the LLM agent in
// src/agent/) one strategy_register() call at start-up; nothing in the driver, the session or the
// reports changes.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "memory/priors.h"
#include "search/builtin_strategy.h"
#include "search/interfaces.h"
#include "search/strategy.h"
#include "support/result.h"

// The prepared problem and the hardware row are the application layer's and sol's: a strategy
// that reads them (the LLM agent) includes their headers; the search itself passes them through.
namespace ucut::app {
struct PreparedProblem;
}
namespace ucut::sol {
struct HwSpec;
}

namespace ucut::search {

// What a factory gets: the problem's search space and the built-in search's options (seed,
// top-k, the memory's seeds and precision floor), which every strategy may use or ignore.
struct StrategyContext {
  SearchSpace& space;
  const BuiltinOptions& builtin;
  // Real problems: the prepared problem (source, IR, SOL report, lowered program) and the hardware
  // row the ranking uses; null on the synthetic surface.
  const app::PreparedProblem* problem = nullptr;  // app/pipeline.h
  const sol::HwSpec* hw = nullptr;                // sol/hardware.h
  // What the memory retrieved for this problem (priors and experiences); null: memory off.
  const memory::MemorySeeds* memory = nullptr;
  // The strategy's own settings (DriverOptions::strategy_settings; the CLI fills them).
  const nlohmann::json* settings = nullptr;
  std::string out_dir;         // out/<problem>/: where a strategy may keep its own logs
  std::string profile = "default";
  double t_sol_contract = 0;   // RunReport::t_sol_contract (0: unknown)
  // False when the evaluator is the analytic model (planning without a GPU): times are estimates.
  bool measured = true;
};

using StrategyFactory = std::function<Result<std::unique_ptr<Strategy>>(const StrategyContext&)>;

struct StrategyEntry {
  std::string name;
  std::string help;  // one line for --help and the error listing the choices
  StrategyFactory make;
};

// Adds (or replaces, by name) a strategy: modules above search/ register theirs at start-up.
void strategy_register(StrategyEntry entry);

// Every registered strategy, the default ("builtin") first.
const std::vector<StrategyEntry>& strategy_entries();

// The strategy named `name`, built for `ctx`; an unknown name is an invalid_input error that
// lists the registered ones.
Result<std::unique_ptr<Strategy>> strategy_make(const std::string& name, const StrategyContext& ctx);

// The registered names, in order, for option checks and messages.
std::vector<std::string> strategy_names();

// "builtin: ...; other: ..." for help texts.
std::string strategy_help();

}  // namespace ucut::search
