#include "cli/commands.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>

#include "support/diagnostics.h"

namespace ucut {

// The one table of commands. Keep it sorted by the order a user meets them.
const std::vector<CommandSpec>& cli_commands() {
  static const std::vector<CommandSpec> table = {
      {"version", "print the tool, CUTLASS and ABI versions", cmd_version},
  };
  return table;
}

int cli_main(int argc, char** argv) {
  CLI::App app{"ucutlass: writes, checks and tunes CUTLASS kernels for PyTorch programs"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "help for every command");
  std::vector<std::pair<CLI::App*, CommandRun>> runners;
  std::vector<std::string> names;
  for (const auto& spec : cli_commands()) {
    CLI::App* sub = app.add_subcommand(spec.name, spec.summary);
    runners.emplace_back(sub, spec.setup(*sub));
    names.emplace_back(spec.name);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (argc > 1 && argv[1][0] != '-') {
      bool known = false;
      for (const auto& n : names) known = known || n == argv[1];
      if (!known) {
        std::string guess = diag_closest(argv[1], names);
        std::fprintf(stderr, "ucutlass: unknown command '%s'%s\n", argv[1],
                     guess.empty() ? "" : ("; did you mean '" + guess + "'?").c_str());
        std::fprintf(stderr, "hint: 'ucutlass --help' lists the commands\n");
        return 2;
      }
    }
    return app.exit(e) == 0 ? 0 : 2;
  }
  for (auto& [sub, run] : runners)
    if (sub->parsed()) return run();
  return 2;
}

}  // namespace ucut
