#pragma once
// Errors on the request path are values, not exceptions (see docs/ARCHITECTURE.md).
// Result<T> holds either a T or an Error; Error carries a machine-readable code, a message a
// user can act on, and where the failure came from.

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace tandem {

// Every failure Tandem reports. The server maps each code to one HTTP status in one place.
enum class ErrorCode {
  // The caller's input is wrong (bad flag, bad field, empty prompt). Not retryable.
  kInvalidArgument,
  // A file the caller named does not exist or cannot be opened.
  kNotFound,
  // A model file is not GGUF, is truncated or is internally inconsistent.
  kInvalidModel,
  // The model (plus its context) needs more memory than the machine has available.
  kInsufficientMemory,
  // The prompt does not fit in the context window of one sequence.
  kContextOverflow,
  // The engine's queue is full; the caller may retry later.
  kBusy,
  // The request was cancelled by its caller.
  kCancelled,
  // The engine is shutting down and takes no more work.
  kShuttingDown,
  // llama.cpp or the operating system failed in a way the caller cannot fix.
  kInternal,
};

// Stable lower-case name of a code, used in JSON errors and logs.
const char* error_code_name(ErrorCode code);

struct Error {
  ErrorCode code = ErrorCode::kInternal;
  std::string message;
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}      // NOLINT(google-explicit-constructor)
  Result(Error error) : state_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return std::holds_alternative<T>(state_); }
  explicit operator bool() const { return ok(); }

  T& value() & {
    assert(ok());
    return std::get<T>(state_);
  }
  const T& value() const& {
    assert(ok());
    return std::get<T>(state_);
  }
  T&& value() && {
    assert(ok());
    return std::get<T>(std::move(state_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }

  const Error& error() const {
    assert(!ok());
    return std::get<Error>(state_);
  }

 private:
  std::variant<T, Error> state_;
};

// Result<void>: success or an Error.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error error)
      : error_(std::move(error)), ok_(false) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const {
    assert(!ok_);
    return error_;
  }

 private:
  Error error_;
  bool ok_ = true;
};

inline Error make_error(ErrorCode code, std::string message) {
  return Error{code, std::move(message)};
}

// The text of an errno value; thread-safe, unlike std::strerror.
std::string errno_message(int error_number);

}  // namespace tandem
