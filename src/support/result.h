// Result<T>: a value or a typed error, used instead of bool + out-parameter everywhere in the tool.
// An Error carries a machine-readable code, a message and an optional hint naming the fix.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace ucut {

enum class ErrorCode {
  invalid_input,    // the user's input is wrong (file, flag, program); the message says where
  not_found,        // a file, tensor, problem or record that was named does not exist
  unsupported,      // valid input the tool cannot handle yet
  io,               // reading or writing a file or pipe failed
  subprocess,       // a child process (nvcc, the worker) failed or could not start
  timeout,          // something ran past its limit
  internal,         // a bug in ucutlass
};

const char* error_code_name(ErrorCode code);

struct Error {
  ErrorCode code = ErrorCode::internal;
  std::string message;
  std::string hint;  // what to change; empty when there is nothing useful to say

  // "message" or "message\nhint: hint".
  std::string render() const;
};

inline Error make_error(ErrorCode code, std::string message, std::string hint = {}) {
  return Error{code, std::move(message), std::move(hint)};
}

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}        // NOLINT: implicit by design
  Result(Error error) : v_(std::move(error)) {}    // NOLINT: implicit by design

  bool ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Error& error() const { return std::get<Error>(v_); }

 private:
  std::variant<T, Error> v_;
};

// Result<void>: success or an Error.
struct Ok {};
using Status = Result<Ok>;
inline Status ok_status() { return Ok{}; }

}  // namespace ucut
