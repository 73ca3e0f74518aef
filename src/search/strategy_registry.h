// Strategies chosen at run time by name (`--strategy NAME` in optimize and bench): the driver
// builds whichever one is asked for through this registry and sees only the Strategy interface
// (strategy.h). A new strategy is a new source file with its factory, and one row in
// strategy_registry.cpp's table; nothing in the driver, the session or the reports changes.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "search/builtin_strategy.h"
#include "search/interfaces.h"
#include "search/strategy.h"
#include "support/result.h"

namespace ucut::search {

// What a factory gets: the problem's search space and the built-in search's options (seed,
// top-k, the memory's seeds and precision floor), which every strategy may use or ignore.
struct StrategyContext {
  SearchSpace& space;
  const BuiltinOptions& builtin;
};

using StrategyFactory = std::function<Result<std::unique_ptr<Strategy>>(const StrategyContext&)>;

struct StrategyEntry {
  std::string name;
  std::string help;  // one line for --help and the error listing the choices
  StrategyFactory make;
};

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
