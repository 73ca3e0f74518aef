#include "support/python.h"

#include <cstdlib>
#include <filesystem>

#include "support/paths.h"

namespace ucut {

std::string python_interpreter() {
  if (const char* v = std::getenv("UCUTLASS_PYTHON"); v && *v) return v;
  std::string venv = std::string(UCUTLASS_SOURCE_DIR) + "/.venv/bin/python";
  if (std::filesystem::exists(venv)) return venv;
  return "python3";
}

std::map<std::string, std::string> python_env() {
  std::string path = paths_python_dir();
  if (const char* old = std::getenv("PYTHONPATH"); old && *old) path += std::string(":") + old;
  return {{"PYTHONPATH", path}, {"PYTHONUNBUFFERED", "1"}};
}

bool python_lacks_package(const std::string& err) {
  return err.find("No module named 'ucutlass_torch'") != std::string::npos ||
         err.find("No module named ucutlass_torch") != std::string::npos;
}

}  // namespace ucut
