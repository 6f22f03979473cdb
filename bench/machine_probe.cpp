#include "machine_probe.h"

#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "ingot/core/thread_pool.h"

namespace ingot::bench {
namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kBytes = size_t(1) << 30;

struct Buffer {
  struct Free {
    void operator()(uint8_t* p) const { std::free(p); }
  };
  std::unique_ptr<uint8_t, Free> data{static_cast<uint8_t*>(std::aligned_alloc(4096, kBytes))};
  Buffer() { std::memset(data.get(), 1, kBytes); }  // fault every page in
};


// Sums bytes [0, n) of p as `streams` equal segments read in lock step, one 64-byte line
// of each per step (a GEMV over `streams` rows at once). 512-bit loads.
__attribute__((target("avx512f"))) uint64_t sum512(const uint8_t* p, size_t n, int streams) {
  const size_t seg = n / size_t(streams) / 64 * 64;
  __m512i acc[16];
  for (int s = 0; s < 16; ++s) acc[s] = _mm512_setzero_si512();
  for (size_t i = 0; i < seg; i += 64) {
    for (int s = 0; s < streams; ++s) {
      acc[s & 15] = _mm512_add_epi64(acc[s & 15], _mm512_load_si512(p + size_t(s) * seg + i));
    }
  }
  __m512i t = acc[0];
  for (int s = 1; s < 16; ++s) t = _mm512_add_epi64(t, acc[s]);
  return uint64_t(_mm512_reduce_add_epi64(t));
}

__attribute__((target("avx2"))) uint64_t sum256(const uint8_t* p, size_t n, int streams) {
  const size_t seg = n / size_t(streams) / 64 * 64;
  __m256i acc[16];
  for (int s = 0; s < 16; ++s) acc[s] = _mm256_setzero_si256();
  for (size_t i = 0; i < seg; i += 64) {
    for (int s = 0; s < streams; ++s) {
      const __m256i* q = reinterpret_cast<const __m256i*>(p + size_t(s) * seg + i);
      acc[s & 15] = _mm256_add_epi64(
          acc[s & 15], _mm256_add_epi64(_mm256_load_si256(q), _mm256_load_si256(q + 1)));
    }
  }
  alignas(32) uint64_t lanes[4];
  __m256i t = acc[0];
  for (int s = 1; s < 16; ++s) t = _mm256_add_epi64(t, acc[s]);
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), t);
  return lanes[0] + lanes[1] + lanes[2] + lanes[3];
}

// One pass over the buffer, each pool thread its own contiguous block; seconds.
double read_pass(const Buffer& buffer, int streams, uint64_t* sink) {
  const uint8_t* p = buffer.data.get();
  const int threads = num_threads();
  const bool avx512 = __builtin_cpu_supports("avx512f");
  std::vector<uint64_t> partial(size_t(threads) * 8, 0);
  const auto t0 = Clock::now();
  ThreadPool::global().run(threads, [&](int64_t t) {
    const size_t block = kBytes / size_t(threads) / 4096 * 4096;
    const uint8_t* b = p + size_t(t) * block;
    partial[size_t(t) * 8] = avx512 ? sum512(b, block, streams) : sum256(b, block, streams);
  });
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  for (int t = 0; t < threads; ++t) *sink += partial[size_t(t) * 8];
  return s;
}

// `reps` x 10 x 16 independent FMAs / dot products per thread; GFLOP/s.
template <typename Body>
double flops(Body body, double flop_per_call) {
  const int threads = num_threads();
  double best = 0;
  for (int pass = 0; pass < 3; ++pass) {
    const auto t0 = Clock::now();
    ThreadPool::global().run(threads, [&](int64_t) { body(); });
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    best = std::max(best, flop_per_call * threads / s / 1e9);
  }
  return best;
}

constexpr int64_t kIters = 20'000'000;

__attribute__((target("avx512f"))) float fma512() {
  __m512 a[12], x = _mm512_set1_ps(1.0000001f), y = _mm512_set1_ps(1e-7f);
  for (int i = 0; i < 12; ++i) a[i] = _mm512_set1_ps(float(i));
  for (int64_t it = 0; it < kIters; ++it) {
    for (int i = 0; i < 12; ++i) a[i] = _mm512_fmadd_ps(a[i], x, y);
  }
  __m512 t = a[0];
  for (int i = 1; i < 12; ++i) t = _mm512_add_ps(t, a[i]);
  return _mm512_reduce_add_ps(t);
}

__attribute__((target("avx2,fma"))) float fma256() {
  __m256 a[12], x = _mm256_set1_ps(1.0000001f), y = _mm256_set1_ps(1e-7f);
  for (int i = 0; i < 12; ++i) a[i] = _mm256_set1_ps(float(i));
  for (int64_t it = 0; it < kIters; ++it) {
    for (int i = 0; i < 12; ++i) a[i] = _mm256_fmadd_ps(a[i], x, y);
  }
  __m256 t = a[0];
  for (int i = 1; i < 12; ++i) t = _mm256_add_ps(t, a[i]);
  alignas(32) float l[8];
  _mm256_store_ps(l, t);
  return l[0] + l[7];
}

__attribute__((target("avx512f,avx512bf16"))) float dot_bf16() {
  __m512 a[12];
  const __m512bh x = (__m512bh)_mm512_set1_epi16(0x3f80), y = (__m512bh)_mm512_set1_epi16(0x3380);
  for (int i = 0; i < 12; ++i) a[i] = _mm512_set1_ps(float(i));
  for (int64_t it = 0; it < kIters; ++it) {
    for (int i = 0; i < 12; ++i) a[i] = _mm512_dpbf16_ps(a[i], x, y);
  }
  __m512 t = a[0];
  for (int i = 1; i < 12; ++i) t = _mm512_add_ps(t, a[i]);
  return _mm512_reduce_add_ps(t);
}

volatile float g_sink;

}  // namespace

ReadProbe read_probe(int passes) {
  ReadProbe r;
  uint64_t sink = 0;
  // Freed on return: a process that probes and then measures its peak RSS (the
  // side-by-side driver) does not carry the 1 GiB along.
  const Buffer buffer;
  read_pass(buffer, 8, &sink);  // warm-up
  for (int streams : {1, 4, 8, 16}) {
    double best = 1e30;
    for (int i = 0; i < passes; ++i) best = std::min(best, read_pass(buffer, streams, &sink));
    const double gbs = double(kBytes) / best / 1e9;
    r.gbs_by_streams[streams] = gbs;
    if (gbs > r.best_gbs) {
      r.best_gbs = gbs;
      r.best_streams = streams;
    }
  }
  g_sink = float(sink);
  return r;
}

FlopProbe flop_probe() {
  FlopProbe f;
  if (__builtin_cpu_supports("avx512f")) {
    f.f32_gflops = flops([] { g_sink = fma512(); }, double(kIters) * 12 * 16 * 2);
  } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    f.f32_gflops = flops([] { g_sink = fma256(); }, double(kIters) * 12 * 8 * 2);
  }
  if (__builtin_cpu_supports("avx512bf16")) {
    f.bf16_gflops = flops([] { g_sink = dot_bf16(); }, double(kIters) * 12 * 32 * 2);
  }
  return f;
}

}  // namespace ingot::bench
