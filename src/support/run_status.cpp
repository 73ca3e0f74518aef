#include "support/run_status.h"

#include <iterator>
#include <vector>

#include "support/diagnostics.h"

namespace ucut {

namespace {
constexpr const char* kStatusNames[] = {"ok",       "compile_error", "launch_error",
                                        "timeout",  "mismatch",      "rejected"};
constexpr int kStatusCount = static_cast<int>(std::size(kStatusNames));
}  // namespace

const char* run_status_name(RunStatus s) { return kStatusNames[static_cast<int>(s)]; }

std::optional<RunStatus> run_status_parse(const std::string& name) {
  for (int i = 0; i < kStatusCount; ++i)
    if (name == kStatusNames[i]) return static_cast<RunStatus>(i);
  return std::nullopt;
}

Result<RunStatus> run_status_from_name(const std::string& name) {
  if (auto s = run_status_parse(name)) return *s;
  std::vector<std::string> names(std::begin(kStatusNames), std::end(kStatusNames));
  std::string guess = diag_closest(name, names);
  return make_error(ErrorCode::invalid_input, "unknown status '" + name + "'",
                    guess.empty() ? "one of ok, compile_error, launch_error, timeout, mismatch, rejected"
                                  : "did you mean '" + guess + "'?");
}

}  // namespace ucut
