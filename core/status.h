// Status and Result<T>: how every octet API reports failure, plus the check macros for internal invariants.
#pragma once

#include <cstdlib>
#include <string>
#include <utility>
#include <variant>

#include <fmt/format.h>

namespace octet {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,    // the caller passed something malformed (a shape, a scale, an option)
  kOutOfRange,         // a value does not fit where it must go (an index, an int32 accumulator)
  kNotFound,           // a file, tensor or node that was named does not exist
  kIoError,            // reading or writing a file failed
  kDataLoss,           // a file is truncated or corrupt
  kUnimplemented,      // a valid request octet does not support (yet)
  kFailedPrecondition, // the system is not in a state to do this (e.g. an ISA that is not enabled)
  kInternal,           // a bug in octet
};

const char* StatusCodeName(StatusCode code);

// A success or an error code with a message. Messages follow
// "failed to <verb> <thing> '<name>': <constraint>, got <value>".
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "invalid argument: <message>", or "ok".
  std::string ToString() const;

  // Returns a copy whose message is "<context>: <message>".
  Status WithContext(const std::string& context) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status OkStatus() { return Status(); }

template <typename... Args>
Status InvalidArgument(fmt::format_string<Args...> f, Args&&... args) {
  return Status(StatusCode::kInvalidArgument, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
Status OutOfRange(fmt::format_string<Args...> f, Args&&... args) {
  return Status(StatusCode::kOutOfRange, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
Status NotFound(fmt::format_string<Args...> f, Args&&... args) {
  return Status(StatusCode::kNotFound, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
Status IoError(fmt::format_string<Args...> f, Args&&... args) {
  return Status(StatusCode::kIoError, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
Status DataLoss(fmt::format_string<Args...> f, Args&&... args) {
  return Status(StatusCode::kDataLoss, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
Status Unimplemented(fmt::format_string<Args...> f, Args&&... args) {
  return Status(StatusCode::kUnimplemented, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
Status FailedPrecondition(fmt::format_string<Args...> f, Args&&... args) {
  return Status(StatusCode::kFailedPrecondition, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
Status Internal(fmt::format_string<Args...> f, Args&&... args) {
  return Status(StatusCode::kInternal, fmt::format(f, std::forward<Args>(args)...));
}

// A value or the Status that explains why there is none.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : data_(std::move(value)) {}  // NOLINT: implicit by design, like absl::StatusOr
  Result(Status status) : data_(std::move(status)) {  // NOLINT
    if (std::get<Status>(data_).ok()) data_ = Status(StatusCode::kInternal, "Result built from an ok Status");
  }

  bool ok() const { return std::holds_alternative<T>(data_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(data_);
  }
  // Precondition: ok(). Aborts with the error otherwise.
  T& value() & { CheckOk(); return std::get<T>(data_); }
  const T& value() const& { CheckOk(); return std::get<T>(data_); }
  T&& value() && { CheckOk(); return std::get<T>(std::move(data_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  void CheckOk() const;
  std::variant<T, Status> data_;
};

[[noreturn]] void CheckFailed(const char* file, int line, const std::string& message);

template <typename T>
void Result<T>::CheckOk() const {
  if (!ok()) CheckFailed(__FILE__, __LINE__, "Result::value() on an error: " + std::get<Status>(data_).ToString());
}

}  // namespace octet

#define OCTET_CONCAT_INNER(a, b) a##b
#define OCTET_CONCAT(a, b) OCTET_CONCAT_INNER(a, b)

// Returns the Status from the enclosing function if `expr` is not ok.
#define OCTET_RETURN_IF_ERROR(expr)                   \
  do {                                                \
    ::octet::Status octet_status_ = (expr);           \
    if (!octet_status_.ok()) return octet_status_;    \
  } while (0)

// `lhs = value of expr`, or return its Status. `lhs` may declare a variable: OCTET_ASSIGN_OR_RETURN(auto t, F()).
#define OCTET_ASSIGN_OR_RETURN(lhs, expr) \
  OCTET_ASSIGN_OR_RETURN_IMPL(OCTET_CONCAT(octet_result_, __LINE__), lhs, expr)
#define OCTET_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                \
  if (!tmp.ok()) return tmp.status();               \
  lhs = std::move(tmp).value()

// Invariants that only a bug in octet can break: abort with the failed condition and its operands.
#define OCTET_CHECK(cond)                                                               \
  do {                                                                                  \
    if (!(cond)) ::octet::CheckFailed(__FILE__, __LINE__, "check failed: " #cond);      \
  } while (0)
#define OCTET_CHECK_OP(a, op, b)                                                               \
  do {                                                                                         \
    const auto& octet_a_ = (a);                                                                \
    const auto& octet_b_ = (b);                                                                \
    if (!(octet_a_ op octet_b_))                                                               \
      ::octet::CheckFailed(__FILE__, __LINE__,                                                 \
                           fmt::format("check failed: {} {} {} ({} vs {})", #a, #op, #b,       \
                                       octet_a_, octet_b_));                                   \
  } while (0)
#define OCTET_CHECK_EQ(a, b) OCTET_CHECK_OP(a, ==, b)
#define OCTET_CHECK_NE(a, b) OCTET_CHECK_OP(a, !=, b)
#define OCTET_CHECK_LT(a, b) OCTET_CHECK_OP(a, <, b)
#define OCTET_CHECK_LE(a, b) OCTET_CHECK_OP(a, <=, b)
#define OCTET_CHECK_GE(a, b) OCTET_CHECK_OP(a, >=, b)

#ifdef NDEBUG
#define OCTET_DCHECK(cond) \
  do {                     \
  } while (0)
#define OCTET_DCHECK_OP(a, op, b) \
  do {                            \
  } while (0)
#else
#define OCTET_DCHECK(cond) OCTET_CHECK(cond)
#define OCTET_DCHECK_OP(a, op, b) OCTET_CHECK_OP(a, op, b)
#endif
