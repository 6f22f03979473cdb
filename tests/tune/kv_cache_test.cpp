// The reference KVCache and the export-friendly ExportKVCache (tune/): writes at
// cache_pos, in-place advance, both layouts, bounds and batch errors, clone, reset.
#include "ingot/ops/functional.h"
#include "ingot/tune/export_kv_cache.h"
#include "test_util.h"

namespace ingot::tune {
namespace {

using ingot::testing::values;
using testing::expect_error;
using testing::max_abs_diff;

int64_t first_pos(const KVCache& c) {
  return select(c.cache_pos(), 0, 0).item<int64_t>();
}

TEST(TuneKVCache, ReferenceWritesAtCachePosAndAdvancesInPlace) {
  KVCache cache(2, 8, 2, 3, DType::F32);
  EXPECT_EQ(cache.k_cache().sizes(), (IntShape{2, 2, 8, 3}));
  EXPECT_TRUE(cache.state_dict().empty());  // non-persistent buffers
  EXPECT_EQ(cache.named_buffers().size(), 3u);
  std::mt19937 rng(1);
  Tensor k1 = ingot::testing::random_tensor({2, 2, 3, 3}, DType::F32, rng);  // 3 tokens
  Tensor v1 = ingot::testing::random_tensor({2, 2, 3, 3}, DType::F32, rng);
  const Tensor pos_buffer = cache.cache_pos();
  auto [k, v] = cache.update(k1, v1);
  EXPECT_TRUE(k.is_same(cache.k_cache()));
  EXPECT_TRUE(cache.cache_pos().is_same(pos_buffer));  // advanced in place
  EXPECT_EQ(cache.size(), 3);
  EXPECT_EQ(max_abs_diff(slice(k, 2, 0, 3), k1), 0.0);
  EXPECT_EQ(max_abs_diff(slice(v, 2, 0, 3), v1), 0.0);
  Tensor k2 = ingot::testing::random_tensor({2, 2, 1, 3}, DType::F32, rng);
  cache.update(k2, k2);
  EXPECT_EQ(max_abs_diff(slice(cache.k_cache(), 2, 3, 4), k2), 0.0);
  EXPECT_EQ(values(slice(cache.k_cache(), 2, 4, 8)), std::vector<double>(2 * 2 * 4 * 3, 0.0));
  cache.reset();
  EXPECT_EQ(cache.size(), 0);
  EXPECT_EQ(values(cache.k_cache()), std::vector<double>(2 * 2 * 8 * 3, 0.0));
  EXPECT_EQ(values(cache.cache_pos()), values(arange(8, DType::I64)));
}

TEST(TuneKVCache, ExportLayoutsWriteTheSameTokens) {
  std::mt19937 rng(2);
  Tensor k = ingot::testing::random_tensor({1, 4, 2, 3}, DType::F32, rng);  // [b, s, n_kv, h_d]
  ExportKVCache flat(1, 6, 2, 3, DType::F32, /*transpose_cache=*/false);
  ExportKVCache transposed(1, 6, 2, 3, DType::F32, /*transpose_cache=*/true);
  EXPECT_EQ(flat.k_cache().sizes(), (IntShape{1, 6, 2, 3}));
  EXPECT_EQ(transposed.k_cache().sizes(), (IntShape{1, 2, 6, 3}));
  flat.update(k, k);
  transposed.update(transpose(k, 1, 2), transpose(k, 1, 2));
  EXPECT_EQ(max_abs_diff(transpose(flat.k_cache(), 1, 2), transposed.k_cache()), 0.0);
  EXPECT_EQ(max_abs_diff(slice(flat.v_cache(), 1, 0, 4), k), 0.0);
  EXPECT_EQ(first_pos(flat), 4);
  EXPECT_EQ(first_pos(transposed), 4);
  // The export cache is a KVCache (a drop-in for the reference).
  KVCache& base = flat;
  base.update(slice(k, 1, 0, 1), slice(k, 1, 0, 1));
  EXPECT_EQ(first_pos(flat), 5);
}

TEST(TuneKVCache, WritesPastMaxSeqLenAndLargerBatchesAreErrors) {
  for (bool exportable : {false, true}) {
    std::shared_ptr<KVCache> cache =
        exportable ? std::make_shared<ExportKVCache>(2, 4, 1, 2, DType::F32, true)
                   : std::make_shared<KVCache>(2, 4, 1, 2, DType::F32);
    const std::string api = exportable ? "[ExportKVCache.update]" : "[KVCache.update]";
    cache->update(zeros({2, 1, 3, 2}), zeros({2, 1, 3, 2}));
    expect_error<ValueError>(
        [&] {
          cache->update(zeros({2, 1, 2, 2}), zeros({2, 1, 2, 2}));
        },
        {api, "writing 2 tokens at position 3", "max_seq_len 4", "reset()"});
    EXPECT_EQ(first_pos(*cache), 3);  // nothing written
    expect_error<ValueError>(
        [&] {
          cache->update(zeros({3, 1, 1, 2}), zeros({3, 1, 1, 2}));
        },
        {"batch size of 2", "batch size 3"});
    cache->update(zeros({1, 1, 1, 2}), zeros({1, 1, 1, 2}));  // a smaller batch is fine
    EXPECT_EQ(first_pos(*cache), 4);
  }
}

TEST(TuneKVCache, CloneIsIndependentWithTheSameConfiguration) {
  ExportKVCache cache(1, 5, 2, 2, DType::F32, false);
  std::mt19937 rng(3);
  Tensor k = ingot::testing::random_tensor({1, 2, 2, 2}, DType::F32, rng);
  cache.update(k, k);
  std::shared_ptr<ExportKVCache> c = cache.clone();
  EXPECT_FALSE(c->transpose_cache());
  EXPECT_EQ(c->max_seq_len(), 5);
  EXPECT_FALSE(c->k_cache().shares_storage_with(cache.k_cache()));
  EXPECT_EQ(max_abs_diff(c->k_cache(), cache.k_cache()), 0.0);
  EXPECT_EQ(values(c->cache_pos()), values(cache.cache_pos()));
  c->update(k, k);  // writing the clone leaves the original alone
  EXPECT_EQ(first_pos(*c), 4);
  EXPECT_EQ(first_pos(cache), 2);
  EXPECT_EQ(values(slice(cache.k_cache(), 1, 2, 5)), std::vector<double>(3 * 2 * 2, 0.0));
  cache.reset();
  EXPECT_EQ(first_pos(cache), 0);
  EXPECT_EQ(first_pos(*c), 4);
}

}  // namespace
}  // namespace ingot::tune
