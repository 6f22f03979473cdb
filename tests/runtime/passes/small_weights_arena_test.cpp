// SmallWeightsArena (runtime/passes/small_weights_arena.h): weights under a huge page move
// into one huge-page mapping with values and geometry kept; views of one storage share a
// copy, across programs too; large weights, weights already on huge pages and mutated
// buffers stay where they are.
#include "ingot/runtime/passes/small_weights_arena.h"

#include <gtest/gtest.h>

#include "ingot/core/huge_pages.h"

namespace ingot {
namespace {

Tensor counting(int64_t n) {
  Tensor t = Tensor::empty({n}, DType::F32);
  for (int64_t i = 0; i < n; ++i) t.data<float>()[i] = float(i);
  return t;
}

TEST(SmallWeightsArena, SmallWeightsShareOneHugePageMapping) {
  if (!huge_pages_enabled()) GTEST_SKIP() << "INGOT_HUGE_PAGES=0 in the environment";
  const Tensor q = counting(576 * 64), norm = counting(576);
  const Tensor big = counting(int64_t(kHugePageBytes / 4) + 16);  // on huge pages already
  ExportedProgram decode;
  decode.state["q"] = Tensor::from_storage(q.storage(), DType::F32, {64, 576}, {576, 1}, 0);
  decode.state["q_t"] = Tensor::from_storage(q.storage(), DType::F32, {8, 64}, {1, 576}, 5);
  decode.state["norm"] = norm;
  decode.state["big"] = big;
  decode.state["counter"] = counting(4);  // a buffer the program writes
  decode.signature.outputs.push_back({OutputKind::BufferMutation, "counter_out", "counter"});
  decode.constants["scale"] = counting(3);
  ExportedProgram prefill;
  prefill.state["q"] = decode.state["q"];

  runtime::SmallWeightsArena arena;
  const ExportedProgram d = arena.apply(decode);
  const ExportedProgram p = arena.apply(prefill);
  EXPECT_EQ(arena.moved(), 3) << "q's storage, norm, scale";
  EXPECT_EQ(arena.moved_bytes(), (576 * 64 + 576 + 3) * 4);

  const Tensor& mq = d.state.at("q");
  EXPECT_TRUE(mq.storage()->on_huge_pages());
  EXPECT_NE(mq.storage(), q.storage());
  EXPECT_EQ(mq.sizes(), (IntShape{64, 576}));
  for (int64_t i = 0; i < 576 * 64; i += 37) ASSERT_EQ(mq.data<float>()[i], float(i));
  const Tensor& mqt = d.state.at("q_t");
  EXPECT_EQ(mqt.storage(), mq.storage()) << "views of one storage share its copy";
  EXPECT_EQ(mqt.strides(), (IntShape{1, 576}));
  EXPECT_EQ(mqt.storage_offset(), 5);
  EXPECT_EQ(p.state.at("q").storage(), mq.storage()) << "shared across programs";
  EXPECT_EQ(d.state.at("norm").data<float>()[575], 575.0f);
  EXPECT_EQ(d.constants.at("scale").data<float>()[2], 2.0f);
  // One mapping: the moved storages lie side by side (in the state's name order).
  const auto* norm_at = static_cast<const uint8_t*>(d.state.at("norm").storage()->data());
  EXPECT_EQ(static_cast<const uint8_t*>(mq.storage()->data()), norm_at + 576 * 4);

  EXPECT_EQ(d.state.at("big").storage(), big.storage()) << "large weights stay";
  EXPECT_EQ(d.state.at("counter").storage(), decode.state.at("counter").storage())
      << "mutated buffers stay";
  EXPECT_EQ(decode.state.at("q").storage(), q.storage()) << "the source program is untouched";
}

}  // namespace
}  // namespace ingot
