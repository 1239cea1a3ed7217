// Errors across the binding: octet's Status becomes the Python exception
// octet.Error carrying octet's message.
#pragma once

#include <pybind11/pybind11.h>

#include <stdexcept>
#include <string>
#include <utility>

#include "core/status.h"

namespace octet::python {

// A failed Status on its way to Python (translated to octet.Error by
// RegisterErrors).
class StatusError : public std::runtime_error {
public:
  explicit StatusError(Status status)
      : std::runtime_error(status.message()), status_(std::move(status)) {}
  const Status &status() const { return status_; }

private:
  Status status_;
};

// Defines octet.Error (a RuntimeError with `code`, octet's status code name)
// and the translator for StatusError.
void RegisterErrors(pybind11::module_ &m);

inline void ThrowIfError(const Status &status) {
  if (!status.ok())
    throw StatusError(status);
}

template <typename T> T Unwrap(Result<T> result) {
  if (!result.ok())
    throw StatusError(result.status());
  return std::move(*result);
}

} // namespace octet::python
