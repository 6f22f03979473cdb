// A progress line for long writes (saving a multi-GB archive, ONNX external data):
//
//   [ingot] writing qwen3/decode.ingot   42%   512.0 / 1219.3 MB   310.5 MB/s
//
// redrawn in place on a terminal at most every 0.2 s and ended with a newline. It prints
// nothing when the stream is not a terminal (pipes, CI logs, tests) or the total is under
// `min_bytes` (100 MB), so short and scripted runs stay quiet.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace ingot {

class ProgressLine {
 public:
  static constexpr int64_t kMinBytes = int64_t(100) << 20;

  // `out_is_terminal` overrides the isatty() check (tests).
  ProgressLine(std::string what, int64_t total_bytes, std::FILE* out = stderr,
               int64_t min_bytes = kMinBytes, int out_is_terminal = -1);
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  void advance(int64_t bytes);
  bool active() const { return active_; }

  // One line of it: "[ingot] <what>  42%  512.0 / 1219.3 MB  310.5 MB/s".
  static std::string format(const std::string& what, int64_t done, int64_t total, double seconds);

 private:
  void draw(bool last);

  std::string what_;
  int64_t total_, done_ = 0;
  std::FILE* out_;
  bool active_;
  std::chrono::steady_clock::time_point start_, last_draw_;
};

// fwrite of `n` bytes in pieces of 16 MB, advancing `progress` after each (so the line
// moves inside one large tensor too). False when a write fails (errno says why).
bool write_with_progress(std::FILE* f, const void* data, size_t n, ProgressLine& progress);

}  // namespace ingot
