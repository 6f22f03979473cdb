#include "ingot/core/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>

namespace ingot {
namespace {

TEST(ThreadPool, ParallelForCoversRangeExactlyOnce) {
  std::vector<std::atomic<int>> hits(10007);
  parallel_for(0, 10007, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) hits[i]++;
  });
  for (auto& h : hits) EXPECT_EQ(h.load(), 1);
}

TEST(ThreadPool, NestedRegionsRunInline) {
  std::atomic<int64_t> total{0};
  parallel_for(0, 4, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      parallel_for(0, 100, 1, [&](int64_t b2, int64_t e2) { total += e2 - b2; });
    }
  });
  EXPECT_EQ(total.load(), 400);
}

TEST(ThreadPool, TaskExceptionReachesCaller) {
  ThreadPool pool(2);
  EXPECT_THROW(pool.run(8, [](int64_t i) {
    if (i == 5) throw std::runtime_error("boom");
  }), std::runtime_error);
  // The pool still works afterwards.
  std::atomic<int> n{0};
  pool.run(8, [&](int64_t) { n++; });
  EXPECT_EQ(n.load(), 8);
}

}  // namespace
}  // namespace ingot
