// Calling `ingot` subcommands in-process from tests: their arguments as strings, and
// what they print on stdout.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace ingot::cli::cli_testing {

using Command = int (*)(int, char**);

// `command(args)`: its exit code (errors propagate as exceptions).
inline int call(Command command, std::vector<std::string> args) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  return command(int(argv.size()), argv.data());
}

// The exit code of `command(args)` and what it printed on stdout.
inline std::pair<int, std::string> captured(Command command, std::vector<std::string> args) {
  ::testing::internal::CaptureStdout();
  try {
    int rc = call(command, std::move(args));
    return {rc, ::testing::internal::GetCapturedStdout()};
  } catch (...) {
    ::testing::internal::GetCapturedStdout();
    throw;
  }
}

}  // namespace ingot::cli::cli_testing
