// Where ucutlass finds what it needs at run time, the same way in every command (docs/cli.md):
// the environment variable first, then the files installed beside the binary by `cmake --install`
// (<prefix>/bin/ucutlass reads <prefix>/share/ucutlass/), then the source tree it was built from
// (a binary run from build/). So an installed or copied binary never depends on the folder it was
// compiled in, and a variable the docs name is honoured by every command.
#pragma once

#include <string>

namespace ucut {

// The running executable's path (/proc/self/exe), "" when it cannot be read.
std::string paths_self_exe();
// <prefix>/share/ucutlass for a binary at <prefix>/bin/<name>, when that folder holds the runtime
// headers (an installed tree); "" otherwise.
std::string paths_share_dir_for(const std::string& exe);
// The CUTLASS headers (a folder with include/ and tools/util/include/): $UCUTLASS_CUTLASS_DIR,
// else the folder configured at build time (CMake's CUTLASS_DIR; scripts/setup fills it).
std::string paths_cutlass_dir();
// The kernel runtime headers (simt_common.cuh, ...): <share>/runtime, else src/codegen/runtime of
// the source tree.
std::string paths_runtime_dir();
// The folder holding the Python package ucutlass_torch: <share>/python, else python/ of the source
// tree. (The interpreter is support/python.h's python_interpreter.)
std::string paths_python_dir();

}  // namespace ucut
