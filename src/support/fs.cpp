#include "support/fs.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace ucut {

Result<std::string> fs_read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return make_error(std::filesystem::exists(path) ? ErrorCode::io : ErrorCode::not_found,
                      "cannot read '" + path + "': " + std::strerror(errno),
                      std::filesystem::exists(path) ? "" : "check the path");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Status fs_write_atomic(const std::string& path, const std::string& content) {
  std::filesystem::path p(path);
  if (p.has_parent_path()) {
    auto st = fs_mkdirs(p.parent_path().string());
    if (!st) return st.error();
  }
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return make_error(ErrorCode::io, "cannot write '" + tmp + "': " + std::strerror(errno));
    out << content;
    out.flush();
    if (!out) return make_error(ErrorCode::io, "write to '" + tmp + "' failed (disk full?)");
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) return make_error(ErrorCode::io, "cannot rename '" + tmp + "' to '" + path + "': " + ec.message());
  return ok_status();
}

Status fs_mkdirs(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) return make_error(ErrorCode::io, "cannot create folder '" + path + "': " + ec.message());
  return ok_status();
}

bool fs_exists(const std::string& path) { return std::filesystem::exists(path); }

Status fs_set_aside(const std::string& path) {
  if (!fs_exists(path)) return ok_status();
  const std::filesystem::path p(path);
  const std::string stem = (p.parent_path() / p.stem()).string();
  const std::string ext = p.extension().string();
  for (int i = 1;; ++i) {
    const std::string old = stem + "." + std::to_string(i) + ext;
    if (fs_exists(old)) continue;
    std::error_code ec;
    std::filesystem::rename(path, old, ec);
    if (ec) return make_error(ErrorCode::io, path + ": cannot set the old file aside as " + old + ": " + ec.message());
    return ok_status();
  }
}

static std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

std::string fs_data_dir() {
  if (auto v = env_or_empty("UCUTLASS_HOME"); !v.empty()) return v;
  if (auto v = env_or_empty("XDG_DATA_HOME"); !v.empty()) return v + "/ucutlass";
  return env_or_empty("HOME") + "/.local/share/ucutlass";
}

std::string fs_cache_dir() {
  if (auto v = env_or_empty("UCUTLASS_CACHE"); !v.empty()) return v;
  if (auto v = env_or_empty("XDG_CACHE_HOME"); !v.empty()) return v + "/ucutlass";
  return env_or_empty("HOME") + "/.cache/ucutlass";
}

}  // namespace ucut
