// ingot::cpu::gemm against a double-precision reference over many shapes, layouts, dtypes
// and every instruction-set level the CPU has.
//
// Tolerance: inputs are generated, stored in their dtype, and the reference reads the
// stored (already rounded) values, so only f32 accumulation error remains (plus the final
// rounding of a 16-bit C). For |a|, |b| <= 1 we allow
//   |err| <= 1e-5 * sqrt(k) * |alpha| + 1e-6 * |beta * c0| + ulp(C dtype) * |ref|,
// about ten times the typical f32 error of a length-k sum with random signs.
#include "ingot/ops/cpu/gemm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "ingot/core/half.h"

namespace ingot::cpu {
namespace {

// A matrix stored in `dtype` inside a larger buffer (to test arbitrary strides).
struct Stored {
  DType dtype;
  std::vector<uint8_t> bytes;
  int64_t size_of() const { return dtype == DType::F32 ? 4 : 2; }
  void resize(int64_t elems) { bytes.assign(size_t(elems * size_of()), 0); }
  void set(int64_t i, float v) {
    if (dtype == DType::F32) {
      reinterpret_cast<float*>(bytes.data())[i] = v;
    } else if (dtype == DType::BF16) {
      reinterpret_cast<uint16_t*>(bytes.data())[i] = BFloat16::round_from_float(v);
    } else {
      reinterpret_cast<uint16_t*>(bytes.data())[i] = Half::from_float(v);
    }
  }
  double get(int64_t i) const {
    if (dtype == DType::F32) return reinterpret_cast<const float*>(bytes.data())[i];
    const uint16_t b = reinterpret_cast<const uint16_t*>(bytes.data())[i];
    if (dtype == DType::BF16) return float(BFloat16::from_bits(b));
    return Half::to_float(b);
  }
};

// How an operand [rows, cols] is laid out in memory.
enum class Layout {
  RowMajor,    // stride (cols, 1)
  ColMajor,    // stride (1, rows): a transposed view; for B this is the `linear` layout
  Strided,     // stride (3 * cols + 1, 2): a non-contiguous slice
  Broadcast0,  // stride (0, 1): every row the same
};

struct Operand {
  Stored s;
  int64_t stride_row = 0, stride_col = 0;
  MatrixView view() const { return {s.bytes.data(), s.dtype, stride_row, stride_col}; }
  double at(int64_t r, int64_t c) const { return s.get(r * stride_row + c * stride_col); }
};

Operand make_operand(int64_t rows, int64_t cols, DType dt, Layout layout, std::mt19937& rng) {
  Operand o;
  o.s.dtype = dt;
  int64_t extent = 0;
  switch (layout) {
    case Layout::RowMajor:
      o.stride_row = cols, o.stride_col = 1, extent = rows * cols;
      break;
    case Layout::ColMajor:
      o.stride_row = 1, o.stride_col = rows, extent = rows * cols;
      break;
    case Layout::Strided:
      o.stride_row = 3 * cols + 1, o.stride_col = 2, extent = rows * (3 * cols + 1);
      break;
    case Layout::Broadcast0:
      o.stride_row = 0, o.stride_col = 1, extent = cols;
      break;
  }
  o.s.resize(std::max<int64_t>(extent, 1));
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (int64_t i = 0; i < extent; ++i) o.s.set(i, dist(rng));
  return o;
}

double ulp_of(DType t) {
  return t == DType::F32 ? 1.2e-7 : t == DType::BF16 ? 1.0 / 128 : 1.0 / 1024;
}

struct Case {
  int64_t m, n, k;
  DType a_dt, b_dt, c_dt;
  Layout a_layout, b_layout;
  float alpha, beta;
};

std::string describe(const Case& c) {
  return fmt::format("m={} n={} k={} A={}/{} B={}/{} C={} alpha={} beta={} isa={}", c.m, c.n, c.k,
                     c.a_dt, int(c.a_layout), c.b_dt, int(c.b_layout), c.c_dt, c.alpha, c.beta,
                     gemm_isa_name(gemm_isa()));
}

void run_case(const Case& tc, std::mt19937& rng) {
  Operand a = make_operand(tc.m, tc.k, tc.a_dt, tc.a_layout, rng);
  Operand b = make_operand(tc.k, tc.n, tc.b_dt, tc.b_layout, rng);
  const int64_t ldc = tc.n + 3;  // padded rows: the padding must stay untouched
  Stored c;
  c.dtype = tc.c_dt;
  c.resize(std::max<int64_t>(tc.m * ldc, 1));
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  const float sentinel = 12345.0f;
  for (int64_t i = 0; i < tc.m; ++i)
    for (int64_t j = 0; j < ldc; ++j)
      c.set(i * ldc + j, j >= tc.n         ? sentinel
                         : tc.beta == 0.0f ? std::numeric_limits<float>::quiet_NaN()
                                           : dist(rng));
  const Stored c0 = c;

  GemmArgs g;
  g.m = tc.m, g.n = tc.n, g.k = tc.k;
  g.a = a.view(), g.b = b.view();
  g.c = c.bytes.data(), g.c_dtype = tc.c_dt, g.ldc = ldc;
  g.alpha = tc.alpha, g.beta = tc.beta;
  gemm(g);

  for (int64_t i = 0; i < tc.m; ++i) {
    for (int64_t j = 0; j < ldc; ++j) {
      const double got = c.get(i * ldc + j);
      if (j >= tc.n) {
        ASSERT_EQ(got, c0.get(i * ldc + j)) << "padding overwritten at " << i << "," << j;
        continue;
      }
      double ref = 0.0;
      for (int64_t p = 0; p < tc.k; ++p) ref += a.at(i, p) * b.at(p, j);
      const double old = tc.beta == 0.0f ? 0.0 : c0.get(i * ldc + j);
      ref = tc.alpha * ref + tc.beta * old;
      const double tol = 1e-5 * std::sqrt(double(tc.k)) * std::abs(tc.alpha) +
                         1e-6 * std::abs(tc.beta * old) + ulp_of(tc.c_dt) * std::abs(ref);
      ASSERT_LE(std::abs(got - ref), tol)
          << describe(tc) << " at [" << i << "," << j << "] got " << got << " want " << ref;
    }
  }
}

std::vector<GemmIsa> isas() {
  std::vector<GemmIsa> out;
  for (GemmIsa i : {GemmIsa::Scalar, GemmIsa::Avx2, GemmIsa::Avx512})
    if (i <= best_supported_gemm_isa()) out.push_back(i);
  return out;
}

// Restores the default ISA after each test.
class GemmTest : public ::testing::Test {
 protected:
  void TearDown() override { set_gemm_isa(best_supported_gemm_isa()); }
  std::mt19937 rng{1234};
};

const DType kFloatTypes[] = {DType::F32, DType::BF16, DType::F16};

TEST_F(GemmTest, ShapesAndLayoutsF32) {
  const int64_t sizes[][3] = {{0, 5, 7},    {5, 0, 7},     {5, 7, 0},    {1, 1, 1},
                              {1, 33, 17},  {2, 40, 16},   {3, 17, 31},  {4, 64, 64},
                              {5, 31, 33},  {13, 1, 9},    {14, 32, 16}, {15, 33, 17},
                              {29, 65, 47}, {64, 96, 300}, {7, 200, 257}};
  const Layout layouts[] = {Layout::RowMajor, Layout::ColMajor, Layout::Strided};
  for (GemmIsa isa : isas()) {
    set_gemm_isa(isa);
    for (auto& s : sizes)
      for (Layout la : layouts)
        for (Layout lb : layouts)
          run_case({s[0], s[1], s[2], DType::F32, DType::F32, DType::F32, la, lb, 1.0f, 0.0f}, rng);
  }
}

TEST_F(GemmTest, EveryDTypeCombination) {
  const int64_t sizes[][3] = {{1, 37, 70}, {3, 20, 33}, {17, 45, 40}, {30, 70, 129}};
  for (GemmIsa isa : isas()) {
    set_gemm_isa(isa);
    for (DType at : kFloatTypes)
      for (DType bt : kFloatTypes)
        for (DType ct : kFloatTypes)
          for (auto& s : sizes)
            for (Layout lb : {Layout::RowMajor, Layout::ColMajor, Layout::Strided})
              run_case({s[0], s[1], s[2], at, bt, ct, Layout::RowMajor, lb, 1.0f, 0.0f}, rng);
  }
}

// The small-m route (m <= 16, B in the linear layout: W streamed, GEMV kernels over groups
// of 4 rows of A) and its edges (m = 4 / 5, 16 / 17 switch routes), every dtype of A and B:
// bf16 A with bf16 B takes the single-dot-product kernel (no low half of x).
TEST_F(GemmTest, SmallMStreamsTheWeights) {
  for (GemmIsa isa : isas()) {
    set_gemm_isa(isa);
    for (int64_t m : {4, 5, 8, 13, 16, 17})
      for (DType at : kFloatTypes)
        for (DType bt : kFloatTypes)
          run_case(
              {m, 150, 200, at, bt, DType::F32, Layout::RowMajor, Layout::ColMajor, 1.0f, 0.0f},
              rng);
  }
}

// m = 1 in the linear layout (decode): the one-row-at-a-time GEMV kernels. k covers
// their 64-element steps, the 16- / 32-element remainder steps and the masked tail; n
// several threads' rows; A f32 (bf16 B: x split in two bf16 halves) and bf16 (one half).
TEST_F(GemmTest, DecodeRowKernels) {
  for (GemmIsa isa : isas()) {
    set_gemm_isa(isa);
    for (int64_t k : {1, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 129, 1030})
      for (int64_t n : {1, 3, 300})
        for (DType at : {DType::F32, DType::BF16})
          for (DType bt : kFloatTypes)
            run_case({1, n, k, at, bt, DType::F32, Layout::RowMajor, Layout::ColMajor, 1.0f, 0.0f},
                     rng);
  }
}

TEST_F(GemmTest, AlphaBeta) {
  for (GemmIsa isa : isas()) {
    set_gemm_isa(isa);
    for (auto [alpha, beta] : {std::pair{2.0f, 0.5f}, {-1.0f, 1.0f}, {0.0f, 3.0f}, {0.5f, 0.0f}})
      for (auto [m, n, k] : {std::tuple{1, 50, 40}, {2, 33, 20}, {20, 45, 300}, {9, 17, 0}})
        for (Layout lb : {Layout::RowMajor, Layout::ColMajor})
          for (DType ct : kFloatTypes)
            run_case({m, n, k, DType::F32, DType::BF16, ct, Layout::RowMajor, lb, alpha, beta},
                     rng);
  }
}

TEST_F(GemmTest, BroadcastRowsAndBlockBoundaries) {
  for (GemmIsa isa : isas()) {
    set_gemm_isa(isa);
    run_case({6, 20, 30, DType::F32, DType::F32, DType::F32, Layout::Broadcast0, Layout::RowMajor,
              1.0f, 0.0f},
             rng);
    // Crosses mc (rows), nc (columns) and kc (depth) blocks of every table.
    run_case({350, 40, 20, DType::F32, DType::F32, DType::F32, Layout::RowMajor, Layout::ColMajor,
              1.0f, 0.0f},
             rng);
    run_case({20, 4200, 30, DType::F32, DType::BF16, DType::F32, Layout::RowMajor, Layout::ColMajor,
              1.0f, 1.0f},
             rng);
    run_case({40, 50, 600, DType::BF16, DType::F16, DType::BF16, Layout::ColMajor, Layout::ColMajor,
              1.0f, 0.0f},
             rng);
  }
}

// bf16 activations x bf16 weights in the linear layout with m > 4 (a bf16 prefill): the
// vdpbf16ps tile kernel where the CPU has AVX512_BF16. Edges of its 4 x 6 register tile
// (m, n not multiples), its k block (1024: k = 1100 and 2100 accumulate over blocks, k
// tails not a multiple of 32), the driver's 96-column blocks and thread split (n = 200),
// row-padded activations (Strided layout: stride_col 2 is not this route, so RowMajor
// inside a wider buffer via lda through Broadcast0 = one shared row), alpha / beta and a
// bf16 / f32 C; every ISA level checked against the double reference.
TEST_F(GemmTest, Bf16PrefillTiles) {
  for (GemmIsa isa : isas()) {
    set_gemm_isa(isa);
    for (auto [m, n, k] : {std::tuple{5, 7, 33},
                           {6, 13, 64},
                           {16, 200, 1100},
                           {23, 97, 31},
                           {130, 50, 2100},
                           {9, 6, 1024}})
      for (DType ct : {DType::F32, DType::BF16})
        run_case(
            {m, n, k, DType::BF16, DType::BF16, ct, Layout::RowMajor, Layout::ColMajor, 1.0f, 0.0f},
            rng);
    run_case({12, 30, 70, DType::BF16, DType::BF16, DType::F32, Layout::RowMajor, Layout::ColMajor,
              -0.5f, 2.0f},
             rng);
    run_case({7, 40, 50, DType::BF16, DType::BF16, DType::F32, Layout::Broadcast0, Layout::ColMajor,
              1.0f, 0.0f},
             rng);
  }
}

// gemm_siblings: each product's C equals gemm's for it alone, bit for bit, on the
// streamed route (one pool pass over the products' rows: m up to 16, B in the linear
// layout; rows spanning several of the pool's chunks) and on the routes it hands back to
// gemm (bf16 x bf16 beyond 4 rows; B not in the linear layout; different A).
TEST_F(GemmTest, SiblingsEqualEachProductAlone) {
  const int64_t k = 200, rows[] = {130, 40, 40};
  for (GemmIsa isa : isas()) {
    set_gemm_isa(isa);
    for (int64_t m : {1, 3, 5, 16})
      for (DType at : kFloatTypes)
        for (DType bt : kFloatTypes)
          for (Layout lb : {Layout::ColMajor, Layout::RowMajor}) {
            const Operand a = make_operand(m, k, at, Layout::RowMajor, rng);
            std::vector<Operand> b;
            std::vector<Stored> together(3), alone(3);
            std::vector<GemmArgs> g(3);
            for (int j = 0; j < 3; ++j) {
              b.push_back(make_operand(k, rows[j], bt, lb, rng));
              together[size_t(j)].dtype = alone[size_t(j)].dtype = DType::F32;
              together[size_t(j)].resize(m * rows[j]);
              alone[size_t(j)].resize(m * rows[j]);
            }
            for (int j = 0; j < 3; ++j) {
              g[size_t(j)].m = m, g[size_t(j)].n = rows[j], g[size_t(j)].k = k;
              g[size_t(j)].a = a.view(), g[size_t(j)].b = b[size_t(j)].view();
              g[size_t(j)].c = alone[size_t(j)].bytes.data(), g[size_t(j)].ldc = rows[j];
              gemm(g[size_t(j)]);
              g[size_t(j)].c = together[size_t(j)].bytes.data();
            }
            gemm_siblings(g);
            for (int j = 0; j < 3; ++j)
              ASSERT_EQ(together[size_t(j)].bytes, alone[size_t(j)].bytes)
                  << "product " << j << " m=" << m << " A=" << dtype_name(at)
                  << " B=" << dtype_name(bt) << " layout " << int(lb) << " isa "
                  << gemm_isa_name(isa);
          }
  }
  EXPECT_THROW(gemm_siblings({}), ValueError);
}

TEST_F(GemmTest, RejectsBadArguments) {
  float buf[4] = {};
  GemmArgs g;
  g.m = 2, g.n = 2, g.k = 1;
  g.a = {buf, DType::I32, 1, 1};
  g.b = {buf, DType::F32, 2, 1};
  g.c = buf, g.ldc = 2;
  EXPECT_THROW(gemm(g), DTypeError);
  g.a.dtype = DType::F32;
  g.ldc = 1;
  EXPECT_THROW(gemm(g), ValueError);
  g.ldc = 2;
  g.m = -1;
  EXPECT_THROW(gemm(g), ValueError);
}

}  // namespace
}  // namespace ingot::cpu
