// Writing k-quant and Q5_0 blocks: the block writers are the exact inverse of the reader's
// dequantisation (levels and codes given -> the values they mean, bit for bit), and the
// quantiser (formats/ggml_quantize.h) makes the bytes of the reference implementation
// tools/reference/make_kquant_fixtures.py (float32 in the same order: tolerance zero), and
// of the gguf package's Q8_0 / Q5_0 / Q5_1 quantisers (llama.cpp's reference ones).
#include "ingot/formats/ggml_quantize.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>

#include "error_of.h"
#include "ingot/core/error.h"
#include "ingot/core/half.h"
#include "ingot/formats/ggml_blocks.h"
#include "ingot/formats/ggml_fit.h"
#include "ingot/formats/gguf_dequant.h"
#include "ingot/formats/npy.h"

namespace ingot::formats {
namespace {

using ingot::testing::error_of;

const std::string kDir = std::string(INGOT_FIXTURES_DIR) + "/quant/";

float f16(float x) {
  return Half::to_float(Half::from_float(x));
}

std::vector<float> decode(GgmlType type, const std::vector<uint8_t>& bytes, int64_t n) {
  std::vector<float> out(static_cast<size_t>(n));
  dequantize_row(type, bytes.data(), out.data(), n);
  return out;
}

// Levels and codes over their whole ranges, per super-block.
TEST(GgmlBlocks, KQuantBlocksDecodeToTheLevelsAndCodesGiven) {
  std::mt19937 rng(7);
  for (int bits : {4, 5}) {
    uint8_t q[256], sc[8], mn[8];
    for (int i = 0; i < 256; ++i) q[i] = uint8_t(rng() % (1u << bits));
    for (int j = 0; j < 8; ++j) sc[j] = uint8_t(rng() % 64), mn[j] = uint8_t(rng() % 64);
    sc[0] = 63, mn[7] = 63, sc[5] = 0;
    const float d = 0.0123f, dmin = 0.0456f;
    std::vector<uint8_t> b;
    if (bits == 4)
      put_q4_k_block(d, dmin, sc, mn, q, b);
    else
      put_q5_k_block(d, dmin, sc, mn, q, b);
    const GgmlType type = bits == 4 ? GgmlType::Q4_K : GgmlType::Q5_K;
    ASSERT_EQ(int64_t(b.size()), ggml_type_traits(uint32_t(type))->type_size);
    const std::vector<float> y = decode(type, b, 256);
    for (int i = 0; i < 256; ++i) {
      const float want = f16(d) * float(sc[i / 32]) * float(q[i]) - f16(dmin) * float(mn[i / 32]);
      ASSERT_EQ(y[size_t(i)], want) << "Q" << bits << "_K weight " << i;
    }
  }
  uint8_t q[256];
  int8_t sc[16];
  for (int i = 0; i < 256; ++i) q[i] = uint8_t(rng() % 64);
  for (int j = 0; j < 16; ++j) sc[j] = int8_t(int(rng() % 256) - 128);
  sc[3] = 127, sc[4] = -128;
  std::vector<uint8_t> b;
  put_q6_k_block(0.00321f, sc, q, b);
  ASSERT_EQ(b.size(), 210u);
  const std::vector<float> y = decode(GgmlType::Q6_K, b, 256);
  for (int i = 0; i < 256; ++i)
    ASSERT_EQ(y[size_t(i)], f16(0.00321f) * float(sc[i / 16]) * float(int(q[i]) - 32)) << i;
  uint8_t q5[32];
  for (int i = 0; i < 32; ++i) q5[i] = uint8_t((i * 11 + 3) % 32);
  b.clear();
  put_q5_0_block(-0.25f, q5, b);
  ASSERT_EQ(b.size(), 22u);
  const std::vector<float> y5 = decode(GgmlType::Q5_0, b, 32);
  for (int i = 0; i < 32; ++i) ASSERT_EQ(y5[size_t(i)], float(int(q5[i]) - 16) * -0.25f) << i;
}

struct FixtureCase {
  GgmlType type;
  std::string file;  // tests/fixtures/quant/kquant_<file>.npy
  bool importance;
};

class GgmlQuantize : public ::testing::TestWithParam<FixtureCase> {};

TEST_P(GgmlQuantize, BytesEqualTheReference) {
  const FixtureCase& p = GetParam();
  const Tensor x = load_npy(kDir + "kquant_x.npy");
  const Tensor imp = load_npy(kDir + "kquant_importance.npy");
  const Tensor want = load_npy(kDir + "kquant_" + p.file + ".npy");
  const int64_t rows = x.size(0), cols = x.size(1);
  const std::vector<uint8_t> got = quantize_rows(p.type, x.data<float>(), rows, cols,
                                                 p.importance ? imp.data<float>() : nullptr);
  ASSERT_EQ(int64_t(got.size()), want.numel());
  const int64_t row_bytes = want.numel() / rows;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t i = 0; i < row_bytes; ++i) {
      ASSERT_EQ(int(got[size_t(r * row_bytes + i)]), int(want.data<uint8_t>()[r * row_bytes + i]))
          << p.file << ": row " << r << " byte " << i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Types, GgmlQuantize,
                         ::testing::Values(FixtureCase{GgmlType::Q8_0, "q8_0", false},
                                           FixtureCase{GgmlType::Q5_0, "q5_0", false},
                                           FixtureCase{GgmlType::Q5_0, "q5_0_imatrix", true},
                                           FixtureCase{GgmlType::Q5_1, "q5_1", false},
                                           FixtureCase{GgmlType::Q5_1, "q5_1_imatrix", true},
                                           FixtureCase{GgmlType::Q4_K, "q4_k", false},
                                           FixtureCase{GgmlType::Q4_K, "q4_k_imatrix", true},
                                           FixtureCase{GgmlType::Q5_K, "q5_k", false},
                                           FixtureCase{GgmlType::Q5_K, "q5_k_imatrix", true},
                                           FixtureCase{GgmlType::Q6_K, "q6_k", false},
                                           FixtureCase{GgmlType::Q6_K, "q6_k_imatrix", true}),
                         [](const auto& info) { return info.param.file; });

// The importance steers the error: with a channel weighted 1000x, its error drops below the
// unweighted search's, for every type with an importance-weighted search.
TEST(GgmlQuantize, ImportanceLowersTheErrorOfImportantChannels) {
  std::mt19937 rng(3);
  std::normal_distribution<float> g(0.f, 0.02f);
  const int64_t rows = 64, cols = 256;
  std::vector<float> x(size_t(rows * cols));
  for (float& v : x) v = g(rng);
  std::vector<float> imp(size_t(cols), 1.f);
  for (int64_t c = 0; c < cols; c += 5) imp[size_t(c)] = 1000.f;
  for (GgmlType t :
       {GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K, GgmlType::Q5_0, GgmlType::Q5_1}) {
    auto weighted_error = [&](const float* importance) {
      const std::vector<uint8_t> b = quantize_rows(t, x.data(), rows, cols, importance);
      const std::vector<float> y = decode(t, b, rows * cols);
      double e = 0;
      for (int64_t i = 0; i < rows * cols; ++i) {
        const double d = y[size_t(i)] - x[size_t(i)];
        e += imp[size_t(i % cols)] * d * d;
      }
      return e;
    };
    EXPECT_LT(weighted_error(imp.data()), weighted_error(nullptr)) << ggml_type_name(t);
  }
}

// ingot's refinement after llama.cpp's search never raises a super-block's weighted error
// (the search's own weights: the importance, else llama.cpp's) and lowers the total; the
// refined Q5_0 (importance-weighted, f16 scale searched) and Q8_0 blocks neither.
TEST(GgmlQuantize, RefinementNeverRaisesTheWeightedError) {
  const Tensor x = load_npy(kDir + "kquant_x.npy");
  const Tensor imp = load_npy(kDir + "kquant_importance.npy");
  const int64_t rows = x.size(0), cols = x.size(1);
  const float* xv = x.data<float>();
  for (GgmlType t : {GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K}) {
    for (const float* importance : std::vector<const float*>{nullptr, imp.data<float>()}) {
      // The weight the search gives x[r, c].
      auto weight = [&](int64_t r, int64_t c) -> double {
        const float* row = xv + r * cols;
        const float v = row[c];
        if (t == GgmlType::Q6_K) return importance ? importance[c] : v * v;
        const int64_t b = c / 256 * 256, s = c / 32 * 32;
        if (importance) {
          float sum = 0;
          for (int64_t i = b; i < b + 256; ++i) sum += row[i] * row[i];
          return importance[c] * std::sqrt(2 * sum / 256 + v * v);
        }
        float sum = 0;
        for (int64_t i = s; i < s + 32; ++i) sum += row[i] * row[i];
        return std::sqrt(sum / 32) + std::fabs(v);
      };
      const std::vector<float> a = decode(
          t, quantize_rows(t, xv, rows, cols, importance, KQuantSearch::LlamaCpp), rows * cols);
      const std::vector<float> b = decode(
          t, quantize_rows(t, xv, rows, cols, importance, KQuantSearch::Refined), rows * cols);
      double total_a = 0, total_b = 0;
      for (int64_t sb = 0; sb < rows * cols / 256; ++sb) {
        double ea = 0, eb = 0;
        for (int64_t i = sb * 256; i < sb * 256 + 256; ++i) {
          const double w = weight(i / cols, i % cols);
          ea += w * (a[size_t(i)] - xv[i]) * (a[size_t(i)] - xv[i]);
          eb += w * (b[size_t(i)] - xv[i]) * (b[size_t(i)] - xv[i]);
        }
        EXPECT_LE(eb, ea * (1 + 1e-6)) << ggml_type_name(t) << " super-block " << sb;
        total_a += ea, total_b += eb;
      }
      EXPECT_LT(total_b, total_a) << ggml_type_name(t) << (importance ? " with" : " without")
                                  << " importance";
      std::printf("[refine] %s %s importance: weighted error %.4g -> %.4g (%.1f%% lower)\n",
                  ggml_type_name(t), importance ? "with" : "without", total_a, total_b,
                  100 * (1 - total_b / total_a));
    }
  }
}

TEST(GgmlQuantize, RefinedQ5_0AndQ8_0NeverRaiseTheWeightedError) {
  const Tensor x = load_npy(kDir + "kquant_x.npy");
  const Tensor imp = load_npy(kDir + "kquant_importance.npy");
  const int64_t rows = x.size(0), cols = x.size(1);
  const float* xv = x.data<float>();
  for (GgmlType t : {GgmlType::Q5_0, GgmlType::Q8_0}) {
    const float* importance = imp.data<float>();
    const std::vector<float> a = decode(
        t, quantize_rows(t, xv, rows, cols, importance, KQuantSearch::LlamaCpp), rows * cols);
    const std::vector<float> b =
        decode(t, quantize_rows(t, xv, rows, cols, importance, KQuantSearch::Refined), rows * cols);
    double total_a = 0, total_b = 0;
    for (int64_t r = 0; r < rows; ++r) {
      const float* row = xv + r * cols;
      float sum = 0;
      for (int64_t c = 0; c < cols; ++c) sum += row[c] * row[c];
      for (int64_t blk = 0; blk < cols / 32; ++blk) {
        double ea = 0, eb = 0;
        for (int64_t c = blk * 32; c < blk * 32 + 32; ++c) {
          const double w = importance[c] * std::sqrt(sum / float(cols) + row[c] * row[c]);
          const size_t i = size_t(r * cols + c);
          ea += w * (a[i] - row[c]) * (a[i] - row[c]);
          eb += w * (b[i] - row[c]) * (b[i] - row[c]);
        }
        EXPECT_LE(eb, ea * (1 + 1e-6)) << ggml_type_name(t) << " row " << r << " block " << blk;
        total_a += ea, total_b += eb;
      }
    }
    EXPECT_LT(total_b, total_a) << ggml_type_name(t);
    std::printf("[refine] %s with importance: weighted error %.4g -> %.4g (%.1f%% lower)\n",
                ggml_type_name(t), total_a, total_b, 100 * (1 - total_b / total_a));
  }
}

TEST(GgmlQuantize, BadInputIsANamedError) {
  std::vector<float> x(300, 0.5f);
  EXPECT_NE(error_of<ValueError>([&] {
              quantize_rows(GgmlType::Q4_K, x.data(), 1, 288, nullptr);
            }).find("rows of 288 values are not whole Q4_K blocks of 256"),
            std::string::npos);
  EXPECT_NE(error_of<ValueError>([&] {
              quantize_rows(GgmlType::Q3_K, x.data(), 1, 256, nullptr);
            }).find("cannot quantise to Q3_K"),
            std::string::npos);
}

}  // namespace
}  // namespace ingot::formats
