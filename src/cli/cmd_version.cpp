// `ucutlass version` (and `ucutlass --version`): the tool's version, the kernel ABI version and the
// folders in use (CUTLASS headers, runtime headers, Python package).
#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli/commands.h"

namespace ucut {

CommandRun cmd_version(CLI::App& sub) {
  (void)sub;
  return [] {
    std::fputs(cli_version_text().c_str(), stdout);
    return 0;
  };
}

}  // namespace ucut
