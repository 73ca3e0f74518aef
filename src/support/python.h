// Locating the Python interpreter that runs python/ucutlass_torch (the only part of ucutlass that
// touches PyTorch), and the environment it needs.
#pragma once

#include <map>
#include <string>

namespace ucut {

// $UCUTLASS_PYTHON, else <source>/.venv/bin/python when it exists, else "python3".
std::string python_interpreter();
// Environment additions so `python -m ucutlass_torch.<module>` imports our package (installed
// beside the binary, else the source tree's: support/paths.h): PYTHONPATH=<that folder> (prepended
// to any existing value), PYTHONUNBUFFERED=1.
std::map<std::string, std::string> python_env();
// Whether a Python's stderr says it cannot import python/ucutlass_torch itself (not a module a
// problem file imports: the extractor reports those with the file's name and line).
bool python_lacks_package(const std::string& err);
// Seconds a command waits past an extractor's own time limit before it kills the process (the
// extractor stops a problem at its limit and says where; this catches a hung interpreter).
inline constexpr int kExtractBackstopS = 60;

}  // namespace ucut
