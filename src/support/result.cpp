#include "support/result.h"

namespace ucut {

const char* error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::invalid_input: return "invalid_input";
    case ErrorCode::not_found: return "not_found";
    case ErrorCode::unsupported: return "unsupported";
    case ErrorCode::io: return "io";
    case ErrorCode::subprocess: return "subprocess";
    case ErrorCode::timeout: return "timeout";
    case ErrorCode::internal: return "internal";
  }
  return "internal";
}

std::string Error::render() const {
  if (hint.empty()) return message;
  return message + "\nhint: " + hint;
}

}  // namespace ucut
