// Memory-bandwidth probe: a multi-threaded streaming read of a 1 GiB buffer. The GEMV
// benchmarks report their weight-streaming rate as a fraction of this figure.
#include <benchmark/benchmark.h>
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
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
  struct Free {
    void operator()(uint64_t* p) const { std::free(p); }
  };
  std::unique_ptr<uint64_t, Free> data{static_cast<uint64_t*>(std::aligned_alloc(64, kProbeBytes))};
  ProbeBuffer() { std::memset(data.get(), 1, kProbeBytes); }  // fault every page in
};

ProbeBuffer& probe_buffer() {
  static ProbeBuffer buf;
  return buf;
}

constexpr int kStreams = 8;

// Sums words [b, e) of p with 256-bit loads, reading kStreams equal segments
// interleaved (one 64-byte line of each per step), as a GEMV does over several weight
// rows: one sequential stream per core does not keep enough misses in flight.
__attribute__((target("avx2"))) uint64_t sum_avx2(const uint64_t* p, int64_t b, int64_t e) {
  const int64_t seg = (e - b) / kStreams / 8 * 8;  // words per segment, whole lines
  __m256i acc[kStreams];
  for (int s = 0; s < kStreams; ++s) acc[s] = _mm256_setzero_si256();
  for (int64_t i = 0; i < seg; i += 8) {
    for (int s = 0; s < kStreams; ++s) {
      const __m256i* q = reinterpret_cast<const __m256i*>(p + b + s * seg + i);
      acc[s] = _mm256_add_epi64(acc[s],
                                _mm256_add_epi64(_mm256_load_si256(q), _mm256_load_si256(q + 1)));
    }
  }
  alignas(32) uint64_t lanes[4];
  __m256i t = acc[0];
  for (int s = 1; s < kStreams; ++s) t = _mm256_add_epi64(t, acc[s]);
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), t);
  uint64_t sum = lanes[0] + lanes[1] + lanes[2] + lanes[3];
  for (int64_t i = b + kStreams * seg; i < e; ++i) sum += p[i];
  return sum;
}

uint64_t sum_scalar(const uint64_t* p, int64_t b, int64_t e) {
  uint64_t s = 0;
  for (int64_t i = b; i < e; ++i) s += p[i];
  return s;
}

// Sums the buffer with every pool thread reading one contiguous part; returns seconds.
double read_pass(uint64_t* sink) {
  const uint64_t* p = probe_buffer().data.get();
  const int64_t words = int64_t(kProbeBytes / 8);
  const int threads = num_threads();
  const bool avx2 = __builtin_cpu_supports("avx2");
  std::vector<uint64_t> partial(size_t(threads) * 8, 0);
  const auto t0 = std::chrono::steady_clock::now();
  ThreadPool::global().run(threads, [&](int64_t t) {
    // Part boundaries on 64-byte lines.
    const int64_t b = words * t / threads / 8 * 8,
                  e = t + 1 == threads ? words : words * (t + 1) / threads / 8 * 8;
    partial[size_t(t) * 8] = avx2 ? sum_avx2(p, b, e) : sum_scalar(p, b, e);
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

double read_bandwidth_gbs(bool fresh) {
  static double cached = 0.0;
  if (cached == 0.0 || fresh) {
    uint64_t sink = 0;
    double best = 1e30;
    for (int i = 0; i < (cached == 0.0 ? 6 : 3); ++i) best = std::min(best, read_pass(&sink));
    benchmark::DoNotOptimize(sink);
    cached = double(kProbeBytes) / best / 1e9;
  }
  return cached;
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
