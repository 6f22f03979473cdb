// upsample_bilinear2d against a double-precision reference written from the definition
// (source coordinate, two taps per dim), plus hand-checked values and PyTorch's own
// F.interpolate outputs (tests/fixtures/tune/upsample.safetensors, made by
// tools/reference/make_tune_fixtures.py).
#include <cmath>

#include "ingot/formats/safetensors.h"
#include "op_test_util.h"

namespace ingot {
namespace {

using testing::values;

// Reference bilinear resampling in double.
std::vector<double> reference(const Tensor& x, int64_t oh, int64_t ow, bool align) {
  const IntShape s = x.sizes();
  const std::vector<double> v = values(x);
  auto src = [&](int64_t d, int64_t in, int64_t out) {
    if (align) return out > 1 ? double(d) * double(in - 1) / double(out - 1) : 0.0;
    return std::max(0.0, (double(d) + 0.5) * double(in) / double(out) - 0.5);
  };
  std::vector<double> r;
  for (int64_t p = 0; p < s[0] * s[1]; ++p) {
    for (int64_t i = 0; i < oh; ++i) {
      const double y = src(i, s[2], oh);
      const int64_t y0 = std::min(int64_t(std::floor(y)), s[2] - 1),
                    y1 = std::min(y0 + 1, s[2] - 1);
      for (int64_t j = 0; j < ow; ++j) {
        const double xx = src(j, s[3], ow);
        const int64_t x0 = std::min(int64_t(std::floor(xx)), s[3] - 1),
                      x1 = std::min(x0 + 1, s[3] - 1);
        const double wy = y - double(y0), wx = xx - double(x0);
        auto at = [&](int64_t a, int64_t b) { return v[size_t((p * s[2] + a) * s[3] + b)]; };
        r.push_back((1 - wy) * ((1 - wx) * at(y0, x0) + wx * at(y0, x1)) +
                    wy * ((1 - wx) * at(y1, x0) + wx * at(y1, x1)));
      }
    }
  }
  return r;
}

TEST(UpsampleBilinear2d, MatchesReferenceUpAndDownBothAlignModes) {
  std::mt19937 rng(21);
  struct Case {
    IntShape in;
    int64_t oh, ow;
  };
  const Case cases[] = {{{1, 2, 3, 4}, 5, 7},
                        {{2, 3, 6, 5}, 4, 2},
                        {{1, 1, 1, 3}, 3, 6},
                        {{1, 4, 4, 4}, 1, 1},
                        {{1, 2, 2, 2}, 2, 2}};
  for (const Case& c : cases) {
    for (bool align : {true, false}) {
      for (DType t : testing::kFloatDTypes) {
        Tensor x = testing::random_tensor(c.in, t, rng);
        Tensor r = upsample_bilinear2d(testing::noncontiguous_like(x), {c.oh, c.ow}, align);
        EXPECT_EQ(r.sizes(), (IntShape{c.in[0], c.in[1], c.oh, c.ow}));
        EXPECT_EQ(r.dtype(), t);
        testing::expect_close(r, reference(x, c.oh, c.ow, align), testing::default_atol(t),
                              testing::default_rtol(t),
                              fmt::format("{} -> [{}, {}] align {} {}", shape_str(c.in), c.oh, c.ow,
                                          align, dtype_name(t)));
      }
    }
  }
}

TEST(UpsampleBilinear2d, AlignCornersKeepsCornersAndInterpolatesLinearly) {
  Tensor x = Tensor::from_vector<float>({0, 1, 2, 3}, {1, 1, 2, 2});
  Tensor r = upsample_bilinear2d(x, {3, 3}, true);
  EXPECT_EQ(values(r), (std::vector<double>{0, 0.5, 1, 1, 1.5, 2, 2, 2.5, 3}));
  Tensor same = upsample_bilinear2d(x, {2, 2}, false);
  EXPECT_EQ(values(same), values(x));
}

TEST(UpsampleBilinear2d, MatchesPyTorchInterpolate) {
  auto file = formats::SafetensorsFile::open(std::string(INGOT_FIXTURES_DIR) +
                                             "/tune/upsample.safetensors");
  Tensor x = file.tensor("input");  // [2, 3, 4, 5]
  for (bool align : {true, false}) {
    for (auto [oh, ow] : {std::pair<int64_t, int64_t>{7, 9}, {3, 2}}) {
      const std::string name = fmt::format("out_{}x{}_{}", oh, ow, align ? "align" : "noalign");
      Tensor want = file.tensor(name);
      Tensor got = upsample_bilinear2d(x, {oh, ow}, align);
      testing::expect_close(got, values(want), 1e-6, 1e-6, name);
    }
  }
}

TEST(UpsampleBilinear2d, RejectsBadInputs) {
  EXPECT_THROW(upsample_bilinear2d(zeros({2, 3, 4}), {2, 2}, true), ShapeError);
  EXPECT_THROW(upsample_bilinear2d(zeros({1, 1, 2, 2}, DType::I64), {2, 2}, true), DTypeError);
  EXPECT_THROW(upsample_bilinear2d(zeros({1, 1, 2, 2}), {0, 2}, true), ValueError);
}

}  // namespace
}  // namespace ingot
