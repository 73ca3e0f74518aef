#include "support/paths.h"

#include <cstdlib>
#include <filesystem>

namespace ucut {

namespace {
std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// The installed tree of this binary, looked up once.
const std::string& share_dir() {
  static const std::string dir = paths_share_dir_for(paths_self_exe());
  return dir;
}
}  // namespace

std::string paths_self_exe() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? "" : p.string();
}

std::string paths_share_dir_for(const std::string& exe) {
  if (exe.empty()) return "";
  const std::filesystem::path share = std::filesystem::path(exe).parent_path().parent_path() / "share" / "ucutlass";
  std::error_code ec;
  return std::filesystem::exists(share / "runtime" / "simt_common.cuh", ec) ? share.string() : "";
}

std::string paths_cutlass_dir() {
  if (auto v = env("UCUTLASS_CUTLASS_DIR"); !v.empty()) return v;
  return UCUTLASS_CUTLASS_DIR;
}

std::string paths_runtime_dir() {
  return share_dir().empty() ? std::string(UCUTLASS_SOURCE_DIR) + "/src/codegen/runtime" : share_dir() + "/runtime";
}

std::string paths_python_dir() {
  return share_dir().empty() ? std::string(UCUTLASS_SOURCE_DIR) + "/python" : share_dir() + "/python";
}

}  // namespace ucut
