#include "ingot/core/progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>

namespace ingot {

ProgressLine::ProgressLine(std::string what, int64_t total_bytes, std::FILE* out, int64_t min_bytes,
                           int out_is_terminal)
    : what_(std::move(what)), total_(total_bytes), out_(out) {
  const bool terminal =
      out_is_terminal >= 0 ? out_is_terminal != 0 : (out && ::isatty(::fileno(out)) == 1);
  active_ = terminal && total_bytes >= min_bytes;
  start_ = last_draw_ = std::chrono::steady_clock::now();
}

ProgressLine::~ProgressLine() {
  if (active_) draw(true);
}

void ProgressLine::advance(int64_t bytes) {
  done_ = std::min(total_, done_ + bytes);
  if (!active_) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_draw_ < std::chrono::milliseconds(200)) return;
  last_draw_ = now;
  draw(false);
}

std::string ProgressLine::format(const std::string& what, int64_t done, int64_t total,
                                 double seconds) {
  const double mb = 1024.0 * 1024.0;
  const int percent = total > 0 ? int(100 * done / total) : 100;
  return fmt::format("[ingot] {}  {:3d}%  {:.1f} / {:.1f} MB  {:.1f} MB/s", what, percent,
                     double(done) / mb, double(total) / mb,
                     seconds > 0 ? double(done) / mb / seconds : 0.0);
}

void ProgressLine::draw(bool last) {
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  // \r returns to the line start; the trailing spaces clear a longer previous line.
  std::fprintf(out_, "\r%s   %s", format(what_, done_, total_, seconds).c_str(), last ? "\n" : "");
  std::fflush(out_);
}

bool write_with_progress(std::FILE* f, const void* data, size_t n, ProgressLine& progress) {
  constexpr size_t kPiece = size_t(16) << 20;
  for (size_t at = 0; at < n; at += kPiece) {
    const size_t len = std::min(kPiece, n - at);
    if (std::fwrite(static_cast<const char*>(data) + at, 1, len, f) != len) return false;
    progress.advance(int64_t(len));
  }
  return true;
}

}  // namespace ingot
