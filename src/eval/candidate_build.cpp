#include "eval/candidate_build.h"

#include <filesystem>

#include "support/fs.h"
#include "support/hash.h"
#include "support/paths.h"
#include "support/subprocess.h"

namespace ucut::eval {

Candidate candidate_build(const std::string& program, const std::string& build_root) {
  Candidate c;
  c.name = std::filesystem::path(program).filename().string();
  auto text = fs_read(program);
  if (!text) {
    c.compile_error = text.error().render();
    return c;
  }
  std::string dir = build_root + "/" + sha256_hex(*text).substr(0, 16);
  ProcessSpec ps;
  const std::string self = paths_self_exe();
  ps.argv = {self.empty() ? "ucutlass" : self, "compile", program, "-o", dir};
  ps.timeout = std::chrono::milliseconds(900000);
  auto r = subprocess_run(ps);
  if (!r) {
    c.compile_error = r.error().render();
    return c;
  }
  if (!r->success()) {
    std::string msg = r->err.empty() ? r->out : r->err;
    while (!msg.empty() && msg.back() == '\n') msg.pop_back();
    c.compile_error = "ucutlass compile failed" + std::string(r->timed_out ? " (timeout)" : "") + ": " + msg;
    return c;
  }
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.path().extension() == ".so") c.so_path = std::filesystem::absolute(e.path()).string();
  if (c.so_path.empty()) c.compile_error = "ucutlass compile succeeded but left no .so in " + dir;
  return c;
}

}  // namespace ucut::eval
