// Three-way equivalence of the torchtune-style attention (seed 000): the reference
// MultiHeadAttention, the export-friendly ExportMultiHeadAttention (eager), and PyTorch
// (tools/reference/make_tune_fixtures.py re-implements torchtune's module in plain torch).
// GQA with 8 query heads over 2 kv heads, llama3-scaled rotary (base 500000, scale 32).
// Tolerance: 1e-5 absolute on float32 outputs of magnitude ~1.
#include <algorithm>
#include <limits>

#include "ingot/ops/functional.h"
#include "ingot/tune/export_attention.h"
#include "ingot/tune/multi_head_attention.h"
#include "test_util.h"

namespace ingot::tune {
namespace {

using ingot::testing::values;
using testing::expect_error;
using testing::max_abs_diff;

constexpr double kTol = 1e-5;
constexpr int64_t kEmbed = 64, kHeads = 8, kKvHeads = 2, kHeadDim = 8, kBatch = 2, kSeq = 10,
                  kCacheLen = 32;

class TuneAttention : public ::testing::Test {
 protected:
  TuneAttention() : file_(testing::tune_fixture("attention.safetensors")) {}

  std::shared_ptr<nn::Linear> linear(const std::string& name, int64_t in, int64_t out) {
    auto l = std::make_shared<nn::Linear>(in, out, false);
    l->load_state_dict({{"weight", file_.tensor(name + ".weight")}});
    return l;
  }
  std::shared_ptr<nn::RMSNorm> norm(const std::string& name) {
    auto n = std::make_shared<nn::RMSNorm>(kHeadDim, 1e-6);
    n->load_state_dict({{"weight", file_.tensor(name + ".weight")}});
    return n;
  }
  // One set of projection / rotary modules, shared by every module built from it.
  MultiHeadAttentionArgs args(bool is_causal = true, bool qk_norm = false) {
    MultiHeadAttentionArgs a;
    a.embed_dim = kEmbed;
    a.num_heads = kHeads;
    a.num_kv_heads = kKvHeads;
    a.head_dim = kHeadDim;
    a.q_proj = q_proj_;
    a.k_proj = k_proj_;
    a.v_proj = v_proj_;
    a.output_proj = output_proj_;
    a.pos_embeddings = rope_;
    if (qk_norm) {
      a.q_norm = norm("q_norm");
      a.k_norm = norm("k_norm");
    }
    a.max_seq_len = 64;
    a.is_causal = is_causal;
    return a;
  }
  Tensor t(const std::string& name) { return file_.tensor(name); }
  // [b, s] positions start..start+s-1 and the causal mask rows of those positions,
  // [b, s, max_seq_len] (tril(ones(max_seq_len, max_seq_len))[input_pos]).
  static Tensor positions(int64_t start) {
    return contiguous(
        expand(unsqueeze(arange(start, start + kSeq, 1, DType::I64), 0), {kBatch, kSeq}));
  }
  static Tensor causal_rows(int64_t start) {
    Tensor causal = tril(ones({kCacheLen, kCacheLen}, DType::Bool));         // [max, max]
    Tensor rows = index_select(causal, 0, reshape(positions(start), {-1}));  // [b * s, max]
    return reshape(rows, {kBatch, kSeq, kCacheLen});
  }
  static Tensor all_nan_like(const Tensor& x) {
    return full(x.sizes(), std::numeric_limits<float>::quiet_NaN(), DType::F32);
  }

  formats::SafetensorsFile file_;
  std::shared_ptr<nn::Linear> q_proj_ = linear("q_proj", kEmbed, kHeads* kHeadDim);
  std::shared_ptr<nn::Linear> k_proj_ = linear("k_proj", kEmbed, kKvHeads* kHeadDim);
  std::shared_ptr<nn::Linear> v_proj_ = linear("v_proj", kEmbed, kKvHeads* kHeadDim);
  std::shared_ptr<nn::Linear> output_proj_ = linear("output_proj", kHeads* kHeadDim, kEmbed);
  std::shared_ptr<Llama3ScaledRoPE> rope_ =
      std::make_shared<Llama3ScaledRoPE>(kHeadDim, 64, 500000, Llama3Scaling{32, 1, 4, 8192});
};

TEST_F(TuneAttention, NoCacheMatchesPyTorch) {
  MultiHeadAttention ref(args());
  ExportMultiHeadAttention exp(args());
  Tensor x = t("x");
  Tensor r = ref.forward(x, x), e = exp.forward(x, x);
  EXPECT_EQ(r.sizes(), (IntShape{kBatch, kSeq, kEmbed}));
  EXPECT_LE(max_abs_diff(r, t("out_nocache")), kTol);
  EXPECT_LE(max_abs_diff(e, t("out_nocache")), kTol);
  EXPECT_LE(max_abs_diff(e, r), kTol);
}

TEST_F(TuneAttention, QkNormAndCrossAttentionMatchPyTorch) {
  MultiHeadAttention ref(args(true, true));
  ExportMultiHeadAttention exp(args(true, true));
  Tensor x = t("x");
  EXPECT_LE(max_abs_diff(ref.forward(x, x), t("out_nocache_qknorm")), kTol);
  EXPECT_LE(max_abs_diff(exp.forward(x, x), t("out_nocache_qknorm")), kTol);
  // Cross attention: 6 queries over 10 keys from another sequence, is_causal = false.
  MultiHeadAttention ref_cross(args(false));
  ExportMultiHeadAttention exp_cross(args(false));
  Tensor q_in = contiguous(slice(x, 1, 0, 6));
  EXPECT_LE(max_abs_diff(ref_cross.forward(q_in, t("x2")), t("out_cross")), kTol);
  EXPECT_LE(max_abs_diff(exp_cross.forward(q_in, t("x2")), t("out_cross")), kTol);
}

TEST_F(TuneAttention, FirstCacheWriteThenDecodeAtPositions10To19) {
  MultiHeadAttention ref(args());
  ExportMultiHeadAttention exp(args());
  EXPECT_TRUE(ref.setup_cache(kBatch, DType::F32, kCacheLen));
  EXPECT_TRUE(exp.setup_cache(kBatch, DType::F32, kCacheLen));
  EXPECT_TRUE(exp.cache_enabled());
  EXPECT_EQ(exp.kv_cache()->k_cache().sizes(), (IntShape{kBatch, kCacheLen, kKvHeads, kHeadDim}));
  EXPECT_TRUE(exp.sdpa()->has_kv_cache());
  Tensor x = t("x"), x2 = t("x2");
  Tensor r = ref.forward(x, x, causal_rows(0), positions(0));
  Tensor e = exp.forward(x, x, causal_rows(0), positions(0));
  EXPECT_LE(max_abs_diff(r, t("out_first")), kTol);
  EXPECT_LE(max_abs_diff(e, t("out_first")), kTol);
  EXPECT_EQ(ref.kv_cache()->size(), kSeq);
  EXPECT_EQ(exp.kv_cache()->size(), kSeq);

  r = ref.forward(x2, x2, causal_rows(kSeq), positions(kSeq));
  e = exp.forward(x2, x2, causal_rows(kSeq), positions(kSeq));
  EXPECT_LE(max_abs_diff(r, t("out_decode")), kTol);
  EXPECT_LE(max_abs_diff(e, t("out_decode")), kTol);
  EXPECT_LE(max_abs_diff(e, r), kTol);
  // The caches hold the same keys and values, in their two layouts.
  EXPECT_LE(max_abs_diff(ref.kv_cache()->k_cache(), t("k_cache_after_decode")), kTol);
  EXPECT_LE(max_abs_diff(ref.kv_cache()->v_cache(), t("v_cache_after_decode")), kTol);
  EXPECT_LE(max_abs_diff(transpose(exp.kv_cache()->k_cache(), 1, 2), t("k_cache_after_decode")),
            kTol);
  EXPECT_LE(max_abs_diff(transpose(exp.kv_cache()->v_cache(), 1, 2), t("v_cache_after_decode")),
            kTol);
  EXPECT_EQ(exp.kv_cache()->size(), 2 * kSeq);
}

TEST_F(TuneAttention, AllNaNYReadsTheCacheLikeAbsentY) {
  MultiHeadAttention ref(args());
  ExportMultiHeadAttention exp(args());
  ref.setup_cache(kBatch, DType::F32, kCacheLen);
  exp.setup_cache(kBatch, DType::F32, kCacheLen);
  Tensor x = t("x"), x2 = t("x2");
  ref.forward(x, x, causal_rows(0), positions(0));
  exp.forward(x, x, causal_rows(0), positions(0));
  const std::vector<double> k_before = values(exp.kv_cache()->k_cache());
  const Tensor k_buffer = exp.kv_cache()->k_cache();

  Tensor r = ref.forward(x2, Tensor(), causal_rows(kSeq), positions(kSeq));  // y = None
  Tensor e = exp.forward(x2, all_nan_like(x2), causal_rows(kSeq), positions(kSeq));
  EXPECT_LE(max_abs_diff(r, t("out_read")), kTol);
  EXPECT_LE(max_abs_diff(e, t("out_read")), kTol);
  EXPECT_LE(max_abs_diff(e, r), kTol);
  // Reading wrote nothing: same positions, same cache contents, same buffer objects.
  EXPECT_EQ(exp.kv_cache()->size(), kSeq);
  EXPECT_EQ(values(exp.kv_cache()->k_cache()), k_before);
  EXPECT_TRUE(exp.kv_cache()->k_cache().is_same(k_buffer));
  // An absent y reads the cache too (no cond needed in eager).
  EXPECT_LE(max_abs_diff(exp.forward(x2, Tensor(), causal_rows(kSeq), positions(kSeq)), r), kTol);
  // A y that is only partly NaN is data: it is projected and written.
  Tensor partly = clone(x2);
  copy_(select(select(partly, 0, 0), 0, 0), all_nan_like(select(select(x2, 0, 0), 0, 0)));
  exp.forward(x2, partly, causal_rows(kSeq), positions(kSeq));
  EXPECT_EQ(exp.kv_cache()->size(), 2 * kSeq);
}

TEST_F(TuneAttention, CausalMaskOnlyWithoutCacheAndMask) {
  MultiHeadAttention ref(args());
  ExportMultiHeadAttention exp(args());
  ref.setup_cache(kBatch, DType::F32, kCacheLen);
  exp.setup_cache(kBatch, DType::F32, kCacheLen);
  Tensor x = t("x");
  // With a cache and no mask every query sees all max_seq_len keys (zeros included).
  Tensor r = ref.forward(x, x, Tensor(), positions(0));
  Tensor e = exp.forward(x, x, Tensor(), positions(0));
  EXPECT_LE(max_abs_diff(r, t("out_first_nomask")), kTol);
  EXPECT_LE(max_abs_diff(e, t("out_first_nomask")), kTol);
  EXPECT_GT(max_abs_diff(e, t("out_first")), 1e-3);  // differs from the masked result
}

TEST_F(TuneAttention, ResetCacheRewindsAndRepeatsTheFirstWrite) {
  ExportMultiHeadAttention exp(args());
  MultiHeadAttention ref(args());
  expect_error<ValueError>([&] { exp.reset_cache(); }, {"[ExportMultiHeadAttention.reset_cache]",
                                                        "not setup", "setup_cache()"});
  expect_error<ValueError>([&] { ref.reset_cache(); },
                           {"[MultiHeadAttention.reset_cache]", "not setup", "setup_cache()"});
  exp.setup_cache(kBatch, DType::F32, kCacheLen);
  Tensor x = t("x");
  exp.forward(x, x, causal_rows(0), positions(0));
  exp.forward(x, x, causal_rows(kSeq), positions(kSeq));
  exp.reset_cache();
  EXPECT_EQ(exp.kv_cache()->size(), 0);
  EXPECT_EQ(values(exp.kv_cache()->v_cache()),
            std::vector<double>(kBatch * kCacheLen * kKvHeads * kHeadDim, 0.0));
  EXPECT_LE(max_abs_diff(exp.forward(x, x, causal_rows(0), positions(0)), t("out_first")), kTol);
}

TEST_F(TuneAttention, SetupCacheTwiceWarnsAndKeepsTheCache) {
  ExportMultiHeadAttention exp(args());
  exp.setup_cache(kBatch, DType::F32, kCacheLen);
  auto cache = exp.kv_cache();
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(exp.setup_cache(1, DType::F32, 8));
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("already setup"), std::string::npos) << err;
  EXPECT_EQ(exp.kv_cache(), cache);
  // An injected cache is kept too, and cache updates start disabled (as torchtune).
  MultiHeadAttentionArgs a = args();
  a.kv_cache =
      std::make_shared<ExportKVCache>(kBatch, kCacheLen, kKvHeads, kHeadDim, DType::F32, false);
  ExportMultiHeadAttention injected(a);
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(injected.setup_cache(kBatch, DType::F32, kCacheLen));
  ::testing::internal::GetCapturedStderr();
  EXPECT_FALSE(injected.cache_enabled());
  EXPECT_EQ(injected.kv_cache(), a.kv_cache);
}

TEST_F(TuneAttention, DisabledCacheUpdatesComputeFromYAndLeaveTheCache) {
  MultiHeadAttention ref(args());
  ExportMultiHeadAttention exp(args());
  ref.setup_cache(kBatch, DType::F32, kCacheLen);
  exp.setup_cache(kBatch, DType::F32, kCacheLen);
  ref.set_cache_enabled(false);
  exp.set_cache_enabled(false);
  Tensor x = t("x");
  Tensor r = ref.forward(x, x);  // no causal mask: a cache exists
  Tensor e = exp.forward(x, x);
  EXPECT_LE(max_abs_diff(e, r), kTol);
  EXPECT_EQ(exp.kv_cache()->size(), 0);
  EXPECT_EQ(ref.kv_cache()->size(), 0);
}

TEST_F(TuneAttention, RejectsMissingYWithoutCacheAndTransposedCaches) {
  ExportMultiHeadAttention exp(args());
  MultiHeadAttention ref(args());
  expect_error<ValueError>([&] { exp.forward(t("x")); }, {"Must provide y input"});
  expect_error<ValueError>([&] { ref.forward(t("x")); }, {"Must provide y input"});
  MultiHeadAttentionArgs a = args();
  a.kv_cache =
      std::make_shared<ExportKVCache>(kBatch, kCacheLen, kKvHeads, kHeadDim, DType::F32, true);
  expect_error<ValueError>([&] { ExportMultiHeadAttention bad(a); }, {"transpose_cache = false"});
  a.kv_cache = std::make_shared<KVCache>(kBatch, kCacheLen, kKvHeads, kHeadDim, DType::F32);
  expect_error<ValueError>([&] { ExportMultiHeadAttention bad(a); },
                           {"ExportKVCache", "got KVCache"});
  MultiHeadAttention training(args());
  MultiHeadAttentionArgs dropout = args();
  dropout.attn_dropout = 0.1;
  MultiHeadAttention with_dropout(dropout);
  with_dropout.train();
  expect_error<NotSupportedError>([&] { with_dropout.forward(t("x"), t("x")); },
                                  {"dropout", "eval()"});
  with_dropout.eval();
  EXPECT_LE(max_abs_diff(with_dropout.forward(t("x"), t("x")), t("out_nocache")), kTol);
}

TEST_F(TuneAttention, ConstructorMisuseGivesTorchtunesErrors) {
  for (bool exportable : {false, true}) {
    auto build = [&](MultiHeadAttentionArgs a) {
      if (exportable)
        ExportMultiHeadAttention m(std::move(a));
      else
        MultiHeadAttention m(std::move(a));
    };
    const std::string api = exportable ? "[ExportMultiHeadAttention]" : "[MultiHeadAttention]";
    MultiHeadAttentionArgs only_q = args(true, true);
    only_q.k_norm = nullptr;
    expect_error<ValueError>([&] { build(only_q); }, {api, "q and k norm must be set together"});
    MultiHeadAttentionArgs only_k = args(true, true);
    only_k.q_norm = nullptr;
    expect_error<ValueError>([&] { build(only_k); }, {"q and k norm must be set together"});
    MultiHeadAttentionArgs heads = args();
    heads.num_kv_heads = 3;
    expect_error<ValueError>([&] { build(heads); },
                             {api, "num_heads (8) must be divisible by num_kv_heads (3)"});
    MultiHeadAttentionArgs embed = args();
    embed.embed_dim = 60;
    expect_error<ValueError>([&] { build(embed); },
                             {"embed_dim (60) must be divisible by num_heads (8)"});
    for (double p : {-0.1, 1.5}) {
      MultiHeadAttentionArgs drop = args();
      drop.attn_dropout = p;
      expect_error<ValueError>([&] { build(drop); },
                               {"attn_dropout (", "must be between 0.0 and 1.0"});
    }
    MultiHeadAttentionArgs no_proj = args();
    no_proj.v_proj = nullptr;
    expect_error<ValueError>([&] { build(no_proj); }, {"v_proj is required"});
    MultiHeadAttentionArgs edge = args();
    edge.attn_dropout = 1.0;  // the bounds themselves are allowed
    build(edge);
  }
}

TEST_F(TuneAttention, NoCachePathRunsOnDataLessTensors) {
  // What the export tracer will do: every op runs its shape function only. Any read of
  // tensor data (or a C++ size taken from data) would throw on these data-less tensors.
  ExportMultiHeadAttention exp(args(true, true));
  ingot::testing::ShapeOnlyInterceptor shapes;
  InterceptorScope scope(&shapes);
  Tensor x = Tensor::meta(DType::F32, {kBatch, kSeq, kEmbed});
  Tensor pos = Tensor::meta(DType::I64, {kBatch, kSeq});
  Tensor out = exp.forward(x, x, Tensor(), pos);
  EXPECT_FALSE(out.has_storage());
  EXPECT_EQ(shape_str(out.sym_sizes()), "[2, 10, 64]");
  EXPECT_NE(std::find(shapes.ops.begin(), shapes.ops.end(), "scaled_dot_product_attention"),
            shapes.ops.end());
}

// A replacement attention: the fused op's own GQA instead of expanding kv heads.
class FusedGqaSDPA : public SDPA {
 public:
  FusedGqaSDPA()
      : SDPA("FusedGqaSDPA", kKvHeads, kHeads, kHeadDim, kHeads / kKvHeads, 0.0, true, false) {}
  Tensor forward(const Tensor& q, const Tensor& k, const Tensor& v, const SymInt& bsz,
                 const SymInt& seq_len, const Tensor& mask) const override {
    ++calls;
    std::optional<Tensor> m;
    if (mask.defined()) m = unsqueeze(mask, 1);
    Tensor out =
        scaled_dot_product_attention(transpose(q, 1, 2), transpose(k, 1, 2), transpose(v, 1, 2), m,
                                     use_causal(mask), std::nullopt, /*enable_gqa=*/true);
    return reshape(transpose(out, 1, 2), {bsz, seq_len, -1});
  }
  mutable int calls = 0;
};

TEST_F(TuneAttention, SdpaIsAReplaceableSubmodule) {
  ExportMultiHeadAttention exp(args());
  EXPECT_EQ(exp.child("_sdpa")->type_name(), "SDPA");
  auto fused = std::make_shared<FusedGqaSDPA>();
  exp.set_sdpa(fused);
  EXPECT_EQ(exp.sdpa(), fused);
  Tensor x = t("x");
  EXPECT_LE(max_abs_diff(exp.forward(x, x), t("out_nocache")), kTol);
  EXPECT_EQ(fused->calls, 1);
  // setup_cache reaches the replacement: no causal mask once a cache exists.
  exp.setup_cache(kBatch, DType::F32, kCacheLen);
  EXPECT_TRUE(fused->has_kv_cache());
  EXPECT_LE(max_abs_diff(exp.forward(x, x, Tensor(), positions(0)), t("out_first_nomask")), kTol);
}

TEST_F(TuneAttention, ReplaceMhaSwapsEveryReferenceModuleReusingItsWeights) {
  auto root = std::make_shared<nn::Container>("Model");
  auto layers = root->add("layers", std::make_shared<nn::ModuleList>());
  layers->append(std::make_shared<MultiHeadAttention>(args()));
  auto block = std::make_shared<nn::Container>("Block");
  block->add("attn", std::make_shared<MultiHeadAttention>(args(false)));
  layers->append(block);
  const auto before = root->state_dict();

  EXPECT_EQ(replace_mha_with_inference_mha(*root), 2);
  auto& first = layers->at<ExportMultiHeadAttention>(0);
  EXPECT_EQ(first.type_name(), "ExportMultiHeadAttention");
  EXPECT_EQ(block->child("attn")->type_name(), "ExportMultiHeadAttention");
  EXPECT_EQ(first.child("q_proj"), q_proj_);  // the same module object, no copy
  EXPECT_EQ(first.child("pos_embeddings"), rope_);
  const auto after = root->state_dict();
  ASSERT_EQ(after.size(), before.size());
  for (const auto& [name, tensor] : before) EXPECT_TRUE(after.at(name).is_same(tensor)) << name;
  Tensor x = t("x");
  EXPECT_LE(max_abs_diff(first.forward(x, x), t("out_nocache")), kTol);
  EXPECT_EQ(replace_mha_with_inference_mha(*root), 0);  // nothing left to replace

  auto with_cache = std::make_shared<nn::Container>("Model");
  auto cached = with_cache->add("attn", std::make_shared<MultiHeadAttention>(args()));
  cached->setup_cache(1, DType::F32, 8);
  expect_error<ValueError>([&] { replace_mha_with_inference_mha(*with_cache); },
                           {"[replace_mha_with_inference_mha]", "'attn'", "before setup_cache()"});
}

}  // namespace
}  // namespace ingot::tune
