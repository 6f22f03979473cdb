// Typed exceptions for every ingot layer.
//
// Messages start with the API that raised them ("[mm] ...") and name the argument,
// shape, dtype, file or input at fault and what to do about it. Callers catch
// ingot::Error to handle any of them.
#pragma once

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <stdexcept>
#include <string>

namespace ingot {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Sizes or ranks that do not fit together.
class ShapeError : public Error {
 public:
  using Error::Error;
};

// A dtype that an op or function does not accept.
class DTypeError : public Error {
 public:
  using Error::Error;
};

// An argument value out of its allowed range (negative size, bad dim, bad index).
class ValueError : public Error {
 public:
  using Error::Error;
};

// A file that cannot be read or is malformed.
class IoError : public Error {
 public:
  using Error::Error;
};

// A feature or combination that ingot does not (yet) support.
class NotSupportedError : public Error {
 public:
  using Error::Error;
};

// Internal invariant broken: a bug in ingot, never caused by user input.
class InternalError : public Error {
 public:
  using Error::Error;
};

}  // namespace ingot

// INGOT_CHECK(cond, ErrorType, "fmt {}", args...) throws ErrorType with the formatted
// message when cond is false. The message is only formatted on failure.
#define INGOT_CHECK(cond, ErrorType, ...)                  \
  do {                                                     \
    if (!(cond)) [[unlikely]] {                            \
      throw ErrorType(fmt::format(__VA_ARGS__));           \
    }                                                      \
  } while (false)

#define INGOT_THROW(ErrorType, ...) throw ErrorType(fmt::format(__VA_ARGS__))

#define INGOT_INTERNAL_ASSERT(cond)                                                  \
  INGOT_CHECK(cond, ::ingot::InternalError, "[internal] assertion '{}' failed at {}:{}", \
              #cond, __FILE__, __LINE__)
