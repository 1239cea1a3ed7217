// Status formatting and the fatal path of the check macros.
#include "core/status.h"

#include <cstdio>

namespace octet {

const char* StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "ok";
    case StatusCode::kInvalidArgument: return "invalid argument";
    case StatusCode::kOutOfRange: return "out of range";
    case StatusCode::kNotFound: return "not found";
    case StatusCode::kIoError: return "i/o error";
    case StatusCode::kDataLoss: return "data loss";
    case StatusCode::kUnimplemented: return "unimplemented";
    case StatusCode::kFailedPrecondition: return "failed precondition";
    case StatusCode::kInternal: return "internal error";
  }
  return "unknown";
}

std::string Status::ToString() const {
  if (ok()) return "ok";
  return fmt::format("{}: {}", StatusCodeName(code_), message_);
}

Status Status::WithContext(const std::string& context) const {
  if (ok()) return *this;
  return Status(code_, context + ": " + message_);
}

void CheckFailed(const char* file, int line, const std::string& message) {
  std::fprintf(stderr, "octet: %s:%d: %s\n", file, line, message.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace octet
