// An environment variable set for one scope (tests of behaviour an UCUTLASS_* switch selects).
#pragma once

#include <cstdlib>
#include <optional>
#include <string>

namespace ucut {

// Sets `name` to `value` and puts back, at the end of the scope, whatever it was before (unset
// when it was unset), so guards nest and a test does not depend on the caller's environment.
class ScopedEnv {
 public:
  ScopedEnv(std::string name, const char* value) : name_(std::move(name)) {
    if (const char* old = std::getenv(name_.c_str())) old_ = old;
    ::setenv(name_.c_str(), value, 1);
  }
  ~ScopedEnv() {
    if (old_) ::setenv(name_.c_str(), old_->c_str(), 1);
    else ::unsetenv(name_.c_str());
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

}  // namespace ucut
