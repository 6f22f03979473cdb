#include "index_test_util.h"
#include "op_test_util.h"

#include "ingot/sym/shape_env.h"
#include "ingot/sym/sym_node.h"

namespace ingot {
namespace {

using testing::values;

TEST(Arange, InfersDTypeAndLength) {
  Tensor a = arange(5);
  EXPECT_EQ(a.dtype(), DType::I64);
  EXPECT_EQ(values(a), (std::vector<double>{0, 1, 2, 3, 4}));
  Tensor f = arange(0, 1, 0.25);
  EXPECT_EQ(f.dtype(), DType::F32);
  EXPECT_EQ(values(f), (std::vector<double>{0, 0.25, 0.5, 0.75}));
  EXPECT_EQ(values(arange(10, 0, -3)), (std::vector<double>{10, 7, 4, 1}));
  EXPECT_EQ(arange(0, 5.5).numel(), 6);
  EXPECT_EQ(arange(0, 5.5).dtype(), DType::F32);
  EXPECT_EQ(arange(1, 2, 0.3).numel(), 4);  // ceil(1 / 0.3)
  EXPECT_EQ(arange(3, 3).numel(), 0);
}

TEST(Arange, ExplicitDTypes) {
  for (DType dtype : {DType::U8, DType::I8, DType::I16, DType::I32, DType::I64, DType::F16,
                      DType::BF16, DType::F32, DType::F64}) {
    Tensor t = arange(2, 20, 3, dtype);
    EXPECT_EQ(t.dtype(), dtype);
    testing::expect_close(t, {2, 5, 8, 11, 14, 17}, 0, 0, fmt::format("{}", dtype));
  }
  Tensor h = arange(0, 1, 0.1, DType::F64);
  ASSERT_EQ(h.numel(), 10);
  EXPECT_NEAR(values(h)[7], 0.7, 1e-15);
  // int64 computes the length from the truncated bounds, as torch does.
  EXPECT_EQ(arange(0, 5.5, 1, DType::I64).numel(), 5);
}

TEST(Arange, RejectsBadSteps) {
  testing::expect_throw_with<ValueError>([] { arange(0, 5, 0); }, "step must be nonzero");
  EXPECT_THROW(arange(0, 5, -1), ValueError);
  EXPECT_THROW(arange(5, 0, 0.5), ValueError);
  EXPECT_THROW(arange(-2.5), ValueError);
  EXPECT_THROW(arange(0, 1, 0.5, DType::Bool), DTypeError);
}

TEST(Arange, SymIntBoundsEagerAreArange) {
  EXPECT_EQ(values(arange_symint(4)), (std::vector<double>{0, 1, 2, 3}));
  Tensor r = arange_symint(3, 6, DType::F32);
  EXPECT_EQ(r.dtype(), DType::F32);
  EXPECT_EQ(values(r), (std::vector<double>{3, 4, 5}));
  EXPECT_EQ(arange_symint(2, 2).numel(), 0);
  EXPECT_THROW(arange_symint(3, 1), ValueError);
}

// The export path: a symbolic end (sequence length) or start (past length) gives a
// symbolic length, with no guard when the range direction is provable.
TEST(Arange, SymbolicBoundsGiveSymbolicLength) {
  sym::ShapeEnv env;
  SymInt s0 = sym::create_symint(env, 5), s1 = sym::create_symint(env, 3);
  testing::ShapeOnlyInterceptor shape_only;
  InterceptorScope scope(&shape_only);
  Tensor a = arange_symint(s0);
  EXPECT_FALSE(a.has_storage());
  EXPECT_EQ(a.dtype(), DType::I64);
  EXPECT_EQ(a.sym_size(0).str(), "s0");
  Tensor b = arange_symint(s1, s1 + s0);  // positions of s0 new tokens after s1 cached
  EXPECT_EQ(b.sym_size(0).str(), "s0");
  const OpHandle arange_step("arange.start_step");
  Tensor c = arange_step({0, s0 * 2, 2})[0];  // ATen's Scalar bounds accept SymInts too
  EXPECT_EQ(c.sym_size(0).str(), "s0");
  EXPECT_TRUE(env.guards().empty()) << env.guards()[0].str();
  EXPECT_EQ(shape_only.ops, (std::vector<std::string>{"arange", "arange.start", "arange.start_step"}));
  EXPECT_THROW(arange_step({0, s0, 0.5}), ValueError);  // symbolic bounds need an integer step
  // An unprovable direction is decided by hint and recorded as a guard.
  Tensor d = arange_symint(s1, s0);
  EXPECT_EQ(env.simplify(sym::expr_of(d.sym_size(0))).str(), "s0 - s1");
  ASSERT_EQ(env.guards().size(), 1u);
  EXPECT_EQ(env.guards()[0].condition().str(), "s1 <= s0");
}

TEST(Full, InfersDTypeFromFillValue) {
  EXPECT_EQ(full({2}, true).dtype(), DType::Bool);
  EXPECT_EQ(full({2}, 3).dtype(), DType::I64);
  EXPECT_EQ(full({2}, 3.5).dtype(), DType::F32);
  Tensor t = full({2, 3}, 1.5, DType::F16);
  EXPECT_EQ(t.dtype(), DType::F16);
  EXPECT_EQ(values(t), std::vector<double>(6, 1.5));
  for (DType dtype : testing::kAllDTypes) {
    Tensor z = full({3, 0, 2}, 7, dtype);
    EXPECT_EQ(z.sizes(), (IntShape{3, 0, 2}));
    testing::expect_close(full({4, 1}, 7, dtype),
                          std::vector<double>(4, dtype == DType::Bool ? 1 : 7), 0, 0,
                          fmt::format("{}", dtype));
  }
  Tensor big = full({300000}, -2, DType::I32);  // threaded fill
  EXPECT_EQ(values(big)[299999], -2);
  EXPECT_THROW(full({2, -1}, 1), ValueError);
}

TEST(Full, ZerosOnesEmpty) {
  Tensor z = zeros({2, 3});
  EXPECT_EQ(z.dtype(), DType::F32);
  EXPECT_EQ(values(z), std::vector<double>(6, 0));
  EXPECT_EQ(values(ones({2, 2}, DType::BF16)), std::vector<double>(4, 1));
  EXPECT_EQ(ones({3}, DType::Bool).dtype(), DType::Bool);
  EXPECT_EQ(values(ones({}, DType::I8)), std::vector<double>{1});
  Tensor e = empty({4, 5}, DType::I16);
  EXPECT_EQ(e.sizes(), (IntShape{4, 5}));
  EXPECT_EQ(e.dtype(), DType::I16);
  EXPECT_EQ(zeros_symint({SymInt(2), SymInt(1)}).sizes(), (IntShape{2, 1}));
  EXPECT_EQ(full_symint({SymInt(2)}, 4).dtype(), DType::I64);
  EXPECT_THROW(zeros({-3}), ValueError);
}

std::vector<double> ref_triangle(const Tensor& t, int64_t diagonal, bool upper) {
  std::vector<double> v = values(t);
  const IntShape s = t.sizes();
  const int64_t rows = s[s.size() - 2], cols = s.back();
  for (int64_t f = 0; f < int64_t(v.size()); ++f) {
    const int64_t j = f % cols, i = (f / cols) % rows;
    const bool keep = upper ? j - i >= diagonal : j - i <= diagonal;
    if (!keep) v[size_t(f)] = 0;
  }
  return v;
}

TEST(Triangle, TriuTrilMatchReference) {
  std::mt19937 rng(5);
  for (DType dtype : testing::kAllDTypes) {
    for (IntShape shape : {IntShape{4, 4}, IntShape{3, 5}, IntShape{2, 5, 3}, IntShape{2, 1, 1, 4},
                           IntShape{0, 3}, IntShape{2, 3, 0}}) {
      Tensor t = testing::random_values(shape, dtype, rng);
      Tensor nc = testing::noncontiguous_like(t);
      for (int64_t diag : {-5, -1, 0, 1, 2, 6}) {
        const std::string what = fmt::format("{} {} diag {}", dtype, shape_str(shape), diag);
        testing::expect_close(triu(nc, diag), ref_triangle(t, diag, true), 0, 0, "triu " + what);
        testing::expect_close(tril(t, diag), ref_triangle(t, diag, false), 0, 0, "tril " + what);
      }
    }
  }
  EXPECT_THROW(triu(Tensor::empty({3}, DType::F32)), ShapeError);
}

TEST(Triangle, CausalMaskFromFull) {
  // The usual causal mask: -inf above the diagonal.
  Tensor mask = triu(full({3, 3}, -std::numeric_limits<double>::infinity()), 1);
  std::vector<double> v = values(mask);
  EXPECT_EQ(v[0], 0);
  EXPECT_TRUE(std::isinf(v[1]) && v[1] < 0);
  EXPECT_EQ(v[3], 0);
  EXPECT_EQ(v[4], 0);
  EXPECT_TRUE(std::isinf(v[5]));
}

}  // namespace
}  // namespace ingot
