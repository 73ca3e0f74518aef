// `ucutlass version`: the tool's version, the kernel ABI version and the CUTLASS headers in use.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli/commands.h"

namespace ucut {

CommandRun cmd_version(CLI::App& sub) {
  (void)sub;
  return [] {
    std::printf("ucutlass 0.1.0\nkernel ABI 1\nCUTLASS headers: %s\n", UCUTLASS_CUTLASS_DIR);
    return 0;
  };
}

}  // namespace ucut
