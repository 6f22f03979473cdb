// causal_mask over cache slots: causal and sliding-window terms from the queries'
// absolute positions, 2-D padding masks over the key slots, 4-D masks used as given, and
// symbolic sizes when traced.
#include <gtest/gtest.h>

#include "../ops/op_test_util.h"
#include "ingot/nn/attention.h"
#include "ingot/sym/shape_env.h"
#include "ingot/sym/sym_node.h"

namespace ingot::nn {
namespace {

using ingot::testing::values;

Tensor positions(std::vector<int64_t> p) {
  const int64_t n = int64_t(p.size());
  return Tensor::from_vector<int64_t>(p, {n});
}

TEST(CausalMask, StaticCacheSlotsBeyondTheQueryAreHidden) {
  // Two new tokens at positions 3, 4 of a 6-slot cache: slot 5 is not written yet.
  Tensor m = causal_mask(positions({3, 4}), 6, Tensor(), std::nullopt);
  EXPECT_EQ(m.sizes(), (IntShape{1, 1, 2, 6}));
  EXPECT_EQ(values(m), (std::vector<double>{1, 1, 1, 1, 0, 0,  //
                                            1, 1, 1, 1, 1, 0}));
  Tensor w = causal_mask(positions({3, 4}), 6, Tensor(), 2);   // window: position - j < 2
  EXPECT_EQ(values(w), (std::vector<double>{0, 0, 1, 1, 0, 0,  //
                                            0, 0, 0, 1, 1, 0}));
}

TEST(CausalMask, PaddingOverKeySlots) {
  Tensor pad = Tensor::from_vector<int64_t>({0, 1, 1, 1, 1, 1, 1, 1}, {2, 4});  // row 0 left-padded
  Tensor m = causal_mask(positions({2, 3}), 4, pad, std::nullopt);
  EXPECT_EQ(m.sizes(), (IntShape{2, 1, 2, 4}));
  EXPECT_EQ(values(m), (std::vector<double>{0, 1, 1, 0, 0, 1, 1, 1,  //
                                            1, 1, 1, 0, 1, 1, 1, 1}));
  try {
    causal_mask(positions({2, 3}), 6, pad, std::nullopt);
    FAIL() << "expected ShapeError";
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("expected [batch, 6] over the key slots"),
              std::string::npos)
        << e.what();
  }
}

TEST(CausalMask, FourDimensionalMasksAreUsedAsGiven) {
  Tensor given = Tensor::from_vector<int64_t>({1, 0, 1, 0, 1, 1}, {1, 1, 2, 3});
  Tensor m = causal_mask(positions({0, 1}), 3, given, 1);
  EXPECT_EQ(m.dtype(), DType::Bool);
  EXPECT_EQ(values(m), (std::vector<double>{1, 0, 1, 0, 1, 1}));
  EXPECT_THROW(causal_mask(positions({0, 1}), 4, given, std::nullopt), ShapeError);
}

TEST(CausalMask, TracesWithSymbolicSizes) {
  sym::ShapeEnv env;
  const SymInt b = sym::create_symint(env, 2), q = sym::create_symint(env, 3),
               past = sym::create_symint(env, 5);
  ingot::testing::ShapeOnlyInterceptor shape_only;
  InterceptorScope scope(&shape_only);
  Tensor pos = arange_symint(past, past + q);
  Tensor pad = Tensor::meta(DType::I64, {b, past + q});
  Tensor m = causal_mask(pos, past + q, pad, 4);
  ASSERT_EQ(m.dim(), 4);
  EXPECT_EQ(m.sym_size(0).str(), "s0");
  EXPECT_EQ(m.sym_size(2).str(), "s1");
  EXPECT_EQ(env.simplify(sym::expr_of(m.sym_size(3))).str(), "s1 + s2");
  EXPECT_TRUE(env.guards().empty()) << env.guards()[0].str();
}

}  // namespace
}  // namespace ingot::nn
