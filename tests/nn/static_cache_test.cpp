// StaticCache: fixed buffers written in place at the cache's own position, room checks
// before any write, rebuilding from named tensors (aliasing), and what it records when
// traced (data-less tensors with symbolic sizes).
#include "ingot/nn/static_cache.h"

#include <gtest/gtest.h>

#include "../ops/op_test_util.h"
#include "ingot/sym/shape_env.h"
#include "ingot/sym/sym_node.h"

namespace ingot::nn {
namespace {

using ingot::testing::values;

const CacheSpec kSpec{/*num_layers=*/2, /*num_kv_heads=*/2, /*head_dim=*/3, DType::F32};

// k or v [batch, 2 heads, n, 3] whose every element is `base` + its flat index.
Tensor step_tensor(int64_t batch, int64_t n, double base) {
  return ingot::testing::make_tensor({batch, 2, n, 3}, DType::F32,
                                     [&](int64_t i) { return base + double(i); });
}

// One forward's worth of writes: every layer stores (k, k + 1000).
void write_step(StaticCache& cache, const Tensor& k) {
  for (size_t layer = 0; layer < cache.num_layers(); ++layer)
    cache.update(layer, k, add(k, 1000.0));
}

// Element [b, h, slot, d] of a cache buffer.
double at(const Tensor& t, int64_t b, int64_t h, int64_t slot, int64_t d) {
  return values(select(select(select(select(t, 0, b), 0, h), 0, slot), 0, d))[0];
}

TEST(StaticCache, WritesInPlaceAtItsOwnPosition) {
  StaticCache cache(kSpec, /*max_batch_size=*/1, /*max_cache_len=*/6);
  const void* key_storage = cache.keys(1).raw_data();
  EXPECT_EQ(cache.seq_length(), 0);
  EXPECT_EQ(cache.max_cache_len(), 6);
  EXPECT_EQ(values(cache.new_positions(3)), (std::vector<double>{0, 1, 2}));

  Tensor prompt = step_tensor(1, 3, 1);  // [1, 2, 3, 3]
  auto [k, v] = cache.update(0, prompt, add(prompt, 1000.0));
  EXPECT_EQ(cache.seq_length(), 0) << "advances only after the last layer";
  EXPECT_EQ(k.sizes(), (IntShape{1, 2, 6, 3}));  // attention sees every slot
  EXPECT_TRUE(k.shares_storage_with(cache.keys(0)));
  cache.update(1, prompt, add(prompt, 1000.0));
  EXPECT_EQ(cache.seq_length(), 3);
  EXPECT_EQ(values(cache.new_positions(1)), (std::vector<double>{3}));

  Tensor next = step_tensor(1, 1, 500);
  write_step(cache, next);
  EXPECT_EQ(cache.seq_length(), 4);
  EXPECT_EQ(cache.keys(1).raw_data(), key_storage) << "buffers are never reallocated";
  for (int64_t h = 0; h < 2; ++h) {
    for (int64_t d = 0; d < 3; ++d) {
      for (int64_t s = 0; s < 3; ++s) {
        EXPECT_EQ(at(cache.keys(1), 0, h, s, d), 1 + h * 9 + s * 3 + d);
        EXPECT_EQ(at(cache.values(1), 0, h, s, d), 1001 + h * 9 + s * 3 + d);
      }
      EXPECT_EQ(at(cache.keys(1), 0, h, 3, d), 500 + h * 3 + d);
      EXPECT_EQ(at(cache.keys(1), 0, h, 4, d), 0) << "unwritten slots stay zero";
    }
  }
}

TEST(StaticCache, OverflowIsAnErrorBeforeAnyWrite) {
  StaticCache cache(kSpec, 1, 4);
  write_step(cache, step_tensor(1, 3, 1));
  const std::vector<double> before = values(cache.keys(0));
  try {
    cache.update(0, step_tensor(1, 2, 7), step_tensor(1, 2, 7));
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("[StaticCache] cache full: 3 tokens are cached and 2 more do not fit "
                       "max_cache_len 4"),
              std::string::npos)
        << msg;
  }
  EXPECT_EQ(values(cache.keys(0)), before);
  EXPECT_EQ(cache.seq_length(), 3);
  write_step(cache, step_tensor(1, 1, 9));  // exactly full is fine
  EXPECT_EQ(cache.seq_length(), 4);
  EXPECT_THROW(write_step(cache, step_tensor(1, 1, 9)), ValueError);
  EXPECT_THROW(StaticCache(kSpec, 1, 2).update(0, step_tensor(1, 3, 0), step_tensor(1, 3, 0)),
               ValueError);
  cache.reset();
  EXPECT_EQ(cache.seq_length(), 0);
  write_step(cache, step_tensor(1, 2, 40));
  EXPECT_EQ(at(cache.keys(0), 0, 0, 0, 0), 40);
}

TEST(StaticCache, BatchRowsFitOrFail) {
  StaticCache cache(kSpec, /*max_batch_size=*/2, 5);
  try {
    cache.update(0, step_tensor(3, 1, 0), step_tensor(3, 1, 0));
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("a batch of 3 sequences does not fit a cache allocated "
                                         "for 2"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(cache.seq_length(), 0);
  // A smaller batch uses rows [0, 1): row 1 stays untouched.
  auto [k, v] = cache.update(0, step_tensor(1, 2, 1), step_tensor(1, 2, 1));
  EXPECT_EQ(k.sizes(), (IntShape{1, 2, 5, 3}));
  EXPECT_EQ(at(cache.keys(0), 0, 0, 1, 0), 4);
  EXPECT_EQ(at(cache.keys(0), 1, 0, 1, 0), 0);
}

TEST(StaticCache, RebuiltFromNamedTensorsAliasesThem) {
  StaticCache cache(kSpec, 1, 4);
  NamedTensors named = cache.named_tensors();
  std::vector<std::string> names;
  for (auto& [name, t] : named) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"key_cache.0", "value_cache.0", "key_cache.1",
                                             "value_cache.1", "cache_position"}));
  std::reverse(named.begin(), named.end());  // any order
  StaticCache view = StaticCache::from_named_tensors(named);
  write_step(view, step_tensor(1, 2, 1));
  EXPECT_EQ(cache.seq_length(), 2) << "the rebuilt cache writes the original tensors";
  EXPECT_EQ(at(cache.values(1), 0, 1, 1, 2), 1001 + 6 + 3 + 2);

  NamedTensors missing(named.begin() + 1, named.end());
  EXPECT_THROW(StaticCache::from_named_tensors(missing), ValueError);
  NamedTensors unknown = named;
  unknown.emplace_back("key_cache.x", cache.keys(0));
  EXPECT_THROW(StaticCache::from_named_tensors(unknown), ValueError);
  EXPECT_THROW(StaticCache({cache.keys(0)}, {cache.values(0)}, Tensor::scalar<int32_t>(0)),
               ValueError);
  EXPECT_THROW(StaticCache({cache.keys(0)}, {Tensor::empty({1, 2, 5, 3}, DType::F32)},
                           Tensor::scalar<int64_t>(0)),
               ShapeError);
}

TEST(StaticCache, ChecksTheModelsSpec) {
  StaticCache cache(kSpec, 1, 4);
  EXPECT_NO_THROW(cache.check_compatible(kSpec));
  CacheSpec other = kSpec;
  other.num_layers = 3;
  EXPECT_THROW(cache.check_compatible(other), ValueError);
  other = kSpec;
  other.dtype = DType::BF16;
  EXPECT_THROW(cache.check_compatible(other), ValueError);
  other = kSpec;
  other.head_dim = 4;
  EXPECT_THROW(cache.check_compatible(other), ValueError);
}

// Traced: the buffers and the position are inputs without data and the number of new
// tokens is symbolic. The writes are index_copy_ with slot indices computed from the
// position tensor; the position advances with copy_. The room check goes to the
// installed hook (no guard); without one, fitting is a guard of the trace.
TEST(StaticCache, TracedUpdateIsOpsOverThePositionTensor) {
  for (bool hook : {true, false}) {
    sym::ShapeEnv env;
    const SymInt q = sym::create_symint(env, 3), max_len = sym::create_symint(env, 16);
    std::vector<Tensor> keys, vals;
    for (int i = 0; i < 2; ++i) {
      keys.push_back(Tensor::meta(DType::F32, {SymInt(1), SymInt(2), max_len, SymInt(3)}));
      vals.push_back(Tensor::meta(DType::F32, {SymInt(1), SymInt(2), max_len, SymInt(3)}));
    }
    StaticCache cache(keys, vals, Tensor::meta(DType::I64, {}));
    EXPECT_EQ(cache.max_cache_len(), std::nullopt);
    std::vector<std::string> checked;
    if (hook) {
      StaticCache::set_symbolic_room_check([&](const StaticCache& c, const SymInt& batch,
                                               const SymInt& n) {
        EXPECT_TRUE(c.position().is_same(cache.position()));
        checked.push_back(batch.str() + " rows, " + n.str() + " <= " + c.max_cache_len_sym().str());
      });
    }
    ingot::testing::ShapeOnlyInterceptor shape_only;
    {
      InterceptorScope scope(&shape_only);
      Tensor k = Tensor::meta(DType::F32, {SymInt(1), SymInt(2), q, SymInt(3)});
      for (size_t layer = 0; layer < 2; ++layer) {
        auto [ck, cv] = cache.update(layer, k, k);
        EXPECT_EQ(ck.sym_size(2).str(), "s1");
      }
    }
    StaticCache::set_symbolic_room_check(nullptr);
    const std::vector<std::string> layer_ops{"arange", "add.Tensor", "index_copy_", "index_copy_"};
    std::vector<std::string> expected = layer_ops;
    expected.insert(expected.end(), layer_ops.begin(), layer_ops.end());
    for (const char* op : {"select.int", "add.Scalar", "copy_"}) expected.push_back(op);
    EXPECT_EQ(shape_only.ops, expected);
    if (hook) {
      EXPECT_EQ(checked, (std::vector<std::string>{"1 rows, s0 <= s1"}));
      EXPECT_TRUE(env.guards().empty()) << env.guards()[0].str();
    } else {
      ASSERT_EQ(env.guards().size(), 1u);  // decided by hint
      EXPECT_EQ(env.guards()[0].condition().str(), "s0 <= s1");
    }
  }
}

TEST(KVCache, GrowsAndNamesItsTensors) {
  KVCache cache;
  EXPECT_EQ(cache.seq_length(), 0);
  EXPECT_EQ(cache.max_cache_len(), std::nullopt);
  EXPECT_EQ(values(cache.new_positions(2)), (std::vector<double>{0, 1}));
  for (size_t layer = 0; layer < 2; ++layer)
    cache.update(layer, step_tensor(1, 2, 0), step_tensor(1, 2, 0));
  EXPECT_EQ(values(cache.new_positions(1)), (std::vector<double>{2}));
  EXPECT_EQ(cache.key_length(1).expect_int(), 3);
  auto [k, v] = cache.update(0, step_tensor(1, 1, 0), step_tensor(1, 1, 0));
  EXPECT_EQ(k.sizes(), (IntShape{1, 2, 3, 3}));
  NamedTensors named = cache.named_tensors();
  ASSERT_EQ(named.size(), 4u);
  EXPECT_EQ(named[2].first, "key_cache.1");
  KVCache rebuilt({named[0].second, named[2].second}, {named[1].second, named[3].second});
  EXPECT_EQ(rebuilt.seq_length(), 3);
  EXPECT_NO_THROW(cache.check_compatible(kSpec));
  CacheSpec other = kSpec;
  other.num_kv_heads = 4;
  EXPECT_THROW(cache.check_compatible(other), ValueError);
}

}  // namespace
}  // namespace ingot::nn
