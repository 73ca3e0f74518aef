// The command table of the ucutlass CLI. Every command is one row here and one file
// (cmd_<name>.cpp) that declares its options and returns the function that runs it.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace CLI {
class App;
class Option;
}

namespace ucut {

// Called once with the command's CLI11 subcommand: adds the options (with defaults shown and a
// UCUTLASS_* environment mirror where it helps) and returns the function that runs the command
// and gives the process exit code (0 ok, 1 the input was rejected, 2 usage or environment error).
using CommandRun = std::function<int()>;
using CommandSetup = CommandRun (*)(CLI::App& sub);

struct CommandSpec {
  const char* name;
  const char* summary;
  CommandSetup setup;
};

const std::vector<CommandSpec>& cli_commands();

// Entry point used by main(): parses argv, runs the chosen command, returns the exit code.
int cli_main(int argc, char** argv);

// After building kernels: keeps the cache folder under UCUTLASS_CACHE_MAX, saying on stderr
// what it removed (build/cache_gc.h).
void cli_apply_cache_cap();

// The --profile option of optimize and bench: the contract's tolerance profile, default or
// kb-v01 (docs/eval-contract.md); any other value is refused at parse time. (eval checks its own
// value, with a message and hint of its own.)
CLI::Option* cli_add_profile_option(CLI::App& sub, std::string& profile);

// The --db option of optimize and bench, and the memory store they open: --db when given; else,
// for a simulated run (the synthetic model surface), its own OUT/simulated-memory.db, so that
// model-surface experiences never reach the user's memory; else the default store
// ($UCUTLASS_STORE or the data folder, memory/store.h).
CLI::Option* cli_add_db_option(CLI::App& sub, std::string& db);
std::string cli_memory_path(const std::string& db, bool simulated, const std::string& out);

// Declarations of every command's setup function (defined in cmd_<name>.cpp).
CommandRun cmd_version(CLI::App& sub);
CommandRun cmd_optimize(CLI::App& sub);
CommandRun cmd_bench(CLI::App& sub);
CommandRun cmd_memory(CLI::App& sub);
CommandRun cmd_cache(CLI::App& sub);
CommandRun cmd_extract(CLI::App& sub);
CommandRun cmd_check(CLI::App& sub);
CommandRun cmd_fmt(CLI::App& sub);
CommandRun cmd_compile(CLI::App& sub);
CommandRun cmd_sol(CLI::App& sub);
CommandRun cmd_lower(CLI::App& sub);
CommandRun cmd_space(CLI::App& sub);
CommandRun cmd_calibrate(CLI::App& sub);
CommandRun cmd_eval(CLI::App& sub);
CommandRun cmd_baseline(CLI::App& sub);
CommandRun cmd_export(CLI::App& sub);

}  // namespace ucut
