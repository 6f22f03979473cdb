// ingot::quantized_embedding (functional/quantized.h): rows of an int8 table packed per
// row, dequantised as gathered, equal bit for bit to embedding over the dequantised table
// (the decomposition); bad scales and out-of-range ids are errors naming the op.
#include <gtest/gtest.h>

#include <random>

#include "ingot/ops/functional.h"
#include "ingot/ops/functional/quantized.h"
#include "ingot/ops/registry.h"
#include "op_test_util.h"

namespace ingot {
namespace {

using testing::random_tensor;
using testing::values;

TEST(QuantizedEmbedding, EqualsEmbeddingOfTheDequantisedTable) {
  std::mt19937 rng(5);
  const Tensor table = random_tensor({50, 24}, DType::F32, rng, -0.5, 0.5);
  const PackedLinearWeight p = quantize_linear_weight(table, 8, 24, false);  // per row
  const Tensor ids = Tensor::from_vector(std::vector<int64_t>{0, 49, 7, 7, 31, 2}, {2, 3});
  const Tensor got = quantized_embedding(p.qweight, p.scales, ids);
  ASSERT_EQ(got.sizes(), (IntShape{2, 3, 24}));
  ASSERT_EQ(got.dtype(), DType::F32);
  const Tensor want = embedding(dequantize_weight(p.qweight, p.scales, Tensor(), 8, 24), ids);
  testing::expect_close(got, values(want), 0, 0, "dequantised rows");
  const OpDef& op = OpRegistry::instance().get("ingot::quantized_embedding");
  const Tensor decomposed = op.decomposition_fn(normalize_args(op, {p.qweight, p.scales, ids}))[0];
  testing::expect_close(got, values(decomposed), 0, 0, "decomposition");
}

TEST(QuantizedEmbedding, BadInputsNameTheOp) {
  std::mt19937 rng(6);
  const PackedLinearWeight p =
      quantize_linear_weight(random_tensor({10, 8}, DType::F32, rng), 8, 8, false);
  const Tensor ids = Tensor::from_vector(std::vector<int64_t>{3, 10}, {2});
  try {
    quantized_embedding(p.qweight, p.scales, ids);
    FAIL() << "an id past the table must throw";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("quantized_embedding"), std::string::npos) << e.what();
  }
  // Per-group scales must divide the row (8 values): 3 groups do not.
  const Tensor uneven = Tensor::empty({10, 3}, DType::F32, /*zero_fill=*/true);
  EXPECT_THROW(
      quantized_embedding(p.qweight, uneven, Tensor::from_vector(std::vector<int64_t>{1}, {1})),
      ShapeError);
}

}  // namespace
}  // namespace ingot
