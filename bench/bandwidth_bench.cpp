// Memory-bandwidth probe: a multi-threaded streaming read of a 1 GiB buffer. The GEMV
// benchmarks report their weight-streaming rate as a fraction of this figure.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <tuple>

#include "bench_common.h"
#include "ingot/core/half.h"
#include "ingot/core/thread_pool.h"

namespace ingot::bench {
namespace {

constexpr size_t kProbeBytes = size_t(1) << 30;

struct ProbeBuffer {
  std::unique_ptr<uint64_t[]> data{new uint64_t[kProbeBytes / 8]};
  ProbeBuffer() { std::memset(data.get(), 1, kProbeBytes); }  // fault every page in
};

ProbeBuffer& probe_buffer() {
  static ProbeBuffer buf;
  return buf;
}

// Sums the buffer with every pool thread reading one contiguous part; returns seconds.
double read_pass(uint64_t* sink) {
  const uint64_t* p = probe_buffer().data.get();
  const int64_t words = int64_t(kProbeBytes / 8);
  const int threads = num_threads();
  std::vector<uint64_t> partial(size_t(threads) * 8, 0);
  const auto t0 = std::chrono::steady_clock::now();
  ThreadPool::global().run(threads, [&](int64_t t) {
    const int64_t b = words * t / threads, e = words * (t + 1) / threads;
    uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (int64_t i = b; i + 4 <= e; i += 4) {
      s0 += p[i];
      s1 += p[i + 1];
      s2 += p[i + 2];
      s3 += p[i + 3];
    }
    partial[size_t(t) * 8] = s0 + s1 + s2 + s3;
  });
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (int t = 0; t < threads; ++t) *sink += partial[size_t(t) * 8];
  return s;
}

void BM_ReadBandwidth(benchmark::State& state) {
  uint64_t sink = 0;
  read_pass(&sink);  // warm-up
  double bytes = 0;
  for (auto _ : state) {
    read_pass(&sink);
    bytes += double(kProbeBytes);
  }
  benchmark::DoNotOptimize(sink);
  state.counters["GB/s"] = benchmark::Counter(bytes / 1e9, benchmark::Counter::kIsRate);
  state.counters["threads"] = num_threads();
  state.counters["probe_best_GB/s"] = read_bandwidth_gbs();
}
BENCHMARK(BM_ReadBandwidth)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(1.0);

}  // namespace

double read_bandwidth_gbs() {
  static const double gbs = [] {
    uint64_t sink = 0;
    double best = 1e30;
    for (int i = 0; i < 6; ++i) best = std::min(best, read_pass(&sink));
    benchmark::DoNotOptimize(sink);
    return double(kProbeBytes) / best / 1e9;
  }();
  return gbs;
}

const void* random_matrix(int64_t rows, int64_t cols, DType dtype) {
  static std::map<std::tuple<int64_t, int64_t, DType>, std::vector<uint8_t>> cache;
  auto& bytes = cache[{rows, cols, dtype}];
  if (bytes.empty()) {
    const size_t n = size_t(rows * cols);
    bytes.resize(n * itemsize(dtype));
    std::mt19937 rng(uint32_t(rows * 31 + cols));
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (size_t i = 0; i < n; ++i) {
      const float v = dist(rng);
      if (dtype == DType::F32) {
        reinterpret_cast<float*>(bytes.data())[i] = v;
      } else if (dtype == DType::BF16) {
        reinterpret_cast<uint16_t*>(bytes.data())[i] = BFloat16::round_from_float(v);
      } else {
        reinterpret_cast<uint16_t*>(bytes.data())[i] = Half::from_float(v);
      }
    }
  }
  return bytes.data();
}

}  // namespace ingot::bench
