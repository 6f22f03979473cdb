// The progress line of long writes: its text, and that it stays silent off a terminal
// and for small totals.
#include "ingot/core/progress.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

namespace ingot {
namespace {

// Everything `fn` printed to a temporary file.
template <typename Fn>
std::string printed(Fn fn) {
  std::FILE* f = std::tmpfile();
  fn(f);
  std::fflush(f);
  std::rewind(f);
  std::string out;
  char buf[256];
  while (size_t n = std::fread(buf, 1, sizeof(buf), f)) out.append(buf, n);
  std::fclose(f);
  return out;
}

TEST(ProgressLine, FormatsPercentSizesAndRate) {
  const int64_t mb = 1 << 20;
  EXPECT_EQ(ProgressLine::format("writing m.ingot", 512 * mb, 1024 * mb, 2.0),
            "[ingot] writing m.ingot   50%  512.0 / 1024.0 MB  256.0 MB/s");
  EXPECT_EQ(ProgressLine::format("x", 0, 0, 0.0), "[ingot] x  100%  0.0 / 0.0 MB  0.0 MB/s");
}

TEST(ProgressLine, SilentOffATerminalOrForSmallWrites) {
  const int64_t big = ProgressLine::kMinBytes * 2;
  // A file is not a terminal: nothing.
  EXPECT_EQ(printed([&](std::FILE* f) {
              ProgressLine p("writing", big, f);
              EXPECT_FALSE(p.active());
              p.advance(big);
            }),
            "");
  // On a terminal but under the threshold: nothing.
  EXPECT_EQ(printed([&](std::FILE* f) {
              ProgressLine p("writing", ProgressLine::kMinBytes - 1, f, ProgressLine::kMinBytes, 1);
              p.advance(10);
            }),
            "");
  // On a terminal and large: a line redrawn with \r and ended by a newline at 100%.
  const std::string out = printed([&](std::FILE* f) {
    ProgressLine p("writing", big, f, ProgressLine::kMinBytes, 1);
    EXPECT_TRUE(p.active());
    p.advance(big);
  });
  EXPECT_EQ(out.front(), '\r');
  EXPECT_EQ(out.back(), '\n');
  EXPECT_NE(out.find("100%"), std::string::npos) << out;
}

}  // namespace
}  // namespace ingot
