// Export of the torchtune-style export-friendly modules (tune/, seed 000): the
// exported program, run by the runtime, equals the eager modules within 1e-5 with a
// dynamic sequence length (Dim("seq", 1, 100)) at several lengths; the attention graph
// holds the cond with both branches and writes the cache buffers as buffer mutations
// (in place in the runtime), also after a save / load round trip;
// the position embeddings' guards become runtime asserts with the user's line.
// Weights: the attention fixture of tools/reference/make_tune_fixtures.py (GQA 8 / 2
// heads, llama3-scaled rotary); the eager results are checked against PyTorch in
// tests/tune/attention_test.cpp.
#include "ingot/export/export.h"

#include <limits>

#include "export/export_test_util.h"
#include "ingot/export/serialize.h"
#include "ingot/formats/safetensors.h"
#include "ingot/runtime/program_module.h"
#include "ingot/tune/export_attention.h"
#include "ingot/tune/export_position_embeddings.h"

namespace ingot::tune {
namespace {

using ingot::testing::contains;
using ingot::testing::expect_near_tensors;
using ingot::testing::rand_tensor;

constexpr double kTol = 1e-5;
constexpr int64_t kEmbed = 64, kCacheLen = 128;

formats::SafetensorsFile fixture(const std::string& name) {
  return formats::SafetensorsFile::open(std::string(INGOT_FIXTURES_DIR) + "/tune/" + name);
}

MultiHeadAttentionArgs fixture_args() {
  auto file = fixture("attention.safetensors");
  auto linear = [&](const std::string& name, int64_t in, int64_t out) {
    auto l = std::make_shared<nn::Linear>(in, out, false);
    l->load_state_dict({{"weight", file.tensor(name + ".weight")}});
    return l;
  };
  MultiHeadAttentionArgs a;
  a.embed_dim = kEmbed;
  a.num_heads = 8;
  a.num_kv_heads = 2;
  a.head_dim = 8;
  a.q_proj = linear("q_proj", kEmbed, 64);
  a.k_proj = linear("k_proj", kEmbed, 16);
  a.v_proj = linear("v_proj", kEmbed, 16);
  a.output_proj = linear("output_proj", 64, kEmbed);
  a.pos_embeddings =
      std::make_shared<Llama3ScaledRoPE>(8, 256, 500000, Llama3Scaling{32, 1, 4, 8192});
  a.max_seq_len = 256;
  return a;
}

Tensor positions(int64_t start, int64_t n) {  // [1, n]
  return unsqueeze(arange(start, start + n, 1, DType::I64), 0);
}
Tensor causal_rows(const Tensor& pos) {  // [1, n, kCacheLen]
  Tensor causal = tril(ones({kCacheLen, kCacheLen}, DType::Bool));
  return unsqueeze(index_select(causal, 0, reshape(pos, {-1})), 0);
}

TEST(TuneExport, AttentionWithoutCacheHasADynamicSequence) {
  ExportMultiHeadAttention exp(fixture_args());
  MultiHeadAttention ref(fixture_args());
  Tensor x = rand_tensor({1, 10, kEmbed}, 1);
  Dim seq("seq", 1, 100);
  ExportOptions o;
  o.dynamic_shapes =
      DynamicShapes::tuple({DynamicShapes::tensor({{1, seq}}), DynamicShapes::tensor({{1, seq}})});
  ExportedProgram ep = export_(
      &exp, [&](const Tensor& a, const Tensor& b) { return exp.forward(a, b); }, std::tuple{x, x},
      o);
  ep.verify();
  EXPECT_TRUE(contains(ep.print(), "seq: [1, 100]")) << ep.print();
  auto program = ingot::runtime::ProgramModule(ep);
  for (int64_t s : {1, 7, 33, 100}) {
    Tensor xs = rand_tensor({1, s, kEmbed}, uint32_t(s));
    std::vector<Tensor> out = program(xs, xs);
    expect_near_tensors(out.at(0), exp.forward(xs, xs), kTol);
    expect_near_tensors(out.at(0), ref.forward(xs, xs), kTol);
  }
}

TEST(TuneExport, AttentionCacheIsACondAndInPlaceBufferWrites) {
  ExportMultiHeadAttention exp(fixture_args());
  exp.setup_cache(1, DType::F32, kCacheLen);
  Tensor x = rand_tensor({1, 10, kEmbed}, 2);
  Dim seq("seq", 1, 100);
  auto with_seq = DynamicShapes::tensor({{1, seq}});
  ExportOptions o;
  o.dynamic_shapes = DynamicShapes::tuple({with_seq, with_seq, with_seq, with_seq});
  ExportedProgram ep = export_(
      &exp,
      [&](const Tensor& a, const Tensor& b, const Tensor& mask, const Tensor& pos) {
        return exp.forward(a, b, mask, pos);
      },
      std::tuple{x, x, causal_rows(positions(0, 10)), positions(0, 10)}, o);
  ep.verify();
  const std::string listing = ep.print();
  EXPECT_TRUE(contains(listing, "= cond(all")) << listing;
  EXPECT_TRUE(contains(listing, "subgraph 0(")) << listing;
  EXPECT_TRUE(contains(listing, "subgraph 1(")) << listing;
  EXPECT_TRUE(contains(listing, "BUFFER_MUTATION target='kv_cache.k_cache'")) << listing;
  EXPECT_TRUE(contains(listing, "BUFFER_MUTATION target='kv_cache.cache_pos'")) << listing;
  EXPECT_TRUE(contains(listing, "export_kv_cache.cpp")) << listing;  // the bounds assert
  EXPECT_EQ(exp.kv_cache()->size(), 0);  // tracing left the eager cache alone

  // The program and the program after a save / load round trip, each against a fresh
  // reference: prefill 10, steps of 1 and 5 tokens, then a read-only step (all-NaN y).
  const std::string bytes = save_to_bytes(ep);
  auto owner = std::make_shared<std::string>(bytes);
  ExportedProgram loaded = load_from_bytes(reinterpret_cast<const uint8_t*>(owner->data()),
                                           owner->size(), owner, "tune attention");
  for (const ExportedProgram* p : {&ep, &loaded}) {
    MultiHeadAttention ref(fixture_args());
    ref.setup_cache(1, DType::F32, kCacheLen);
    ingot::runtime::ProgramModule program(*p);
    int64_t start = 0;
    for (int64_t s : {10, 1, 5}) {
      Tensor xs = rand_tensor({1, s, kEmbed}, uint32_t(10 + s));
      Tensor pos = positions(start, s), mask = causal_rows(pos);
      std::vector<Tensor> out = program(xs, xs, mask, pos);
      expect_near_tensors(out.at(0), ref.forward(xs, xs, mask, pos), kTol);
      start += s;
    }
    expect_near_tensors(program.buffer("kv_cache.k_cache"),
                        contiguous(transpose(ref.kv_cache()->k_cache(), 1, 2)), kTol);
    EXPECT_EQ(select(program.buffer("kv_cache.cache_pos"), 0, 0).item<int64_t>(), start);
    Tensor xs = rand_tensor({1, 3, kEmbed}, 99);
    Tensor nan_y = full({1, 3, kEmbed}, std::numeric_limits<float>::quiet_NaN());
    Tensor pos = positions(start, 3), mask = causal_rows(pos);
    std::vector<Tensor> out = program(xs, nan_y, mask, pos);
    expect_near_tensors(out.at(0), ref.forward(xs, Tensor(), mask, pos), kTol);
    EXPECT_EQ(select(program.buffer("kv_cache.cache_pos"), 0, 0).item<int64_t>(), start);
    EXPECT_GT(program.num_inplace_writes(), 0u);  // the cache is written in place
  }
}

TEST(TuneExport, TileEmbeddingGuardsAreRuntimeAsserts) {
  auto file = fixture("position_embeddings.safetensors");
  ExportTilePositionalEmbedding m(4, 8);
  m.load_state_dict(
      {{"embedding", file.tensor("tile.embedding")}, {"gate", file.tensor("tile.gate")}});
  Tensor x = file.tensor("x_tile"), ar = file.tensor("aspect_ratio");  // 5 images
  ExportedProgram ep = export_(m, std::tuple{x, ar});
  ep.verify();
  auto program = ingot::runtime::ProgramModule(ep);
  expect_near_tensors(program(x, ar).at(0), file.tensor("tile_out"), 1e-6);
  Tensor other = Tensor::from_vector<int64_t>({2, 2, 1, 1, 4, 1, 1, 2, 3, 1}, {5, 2});
  expect_near_tensors(program(x, other).at(0), m.forward(x, other), 1e-6);
  Tensor bad = Tensor::from_vector<int64_t>({2, 2, 1, 1, 5, 1, 1, 2, 3, 1}, {5, 2});
  try {
    program(x, bad);
    ADD_FAILURE() << "expected the tile-count assert to fire";
  } catch (const Error& e) {
    EXPECT_TRUE(contains(e.what(), "export_position_embeddings.cpp")) << e.what();
  }
}

TEST(TuneExport, TiledTokenEmbeddingExportsAndMatchesPyTorch) {
  auto file = fixture("position_embeddings.safetensors");
  ExportTiledTokenPositionalEmbedding m(4, 8, 4, 2);
  m.load_state_dict(
      {{"local_token_positional_embedding", file.tensor("token.local_token_positional_embedding")},
       {"global_token_positional_embedding",
        file.tensor("token.global_token_positional_embedding")},
       {"gate", file.tensor("token.gate")}});
  Tensor x = file.tensor("x_token"), ar = file.tensor("aspect_ratio");
  ExportedProgram ep = export_(m, std::tuple{x, ar});
  auto program = ingot::runtime::ProgramModule(ep);
  expect_near_tensors(program(x, ar).at(0), file.tensor("token_out"), 1e-6);
}

}  // namespace
}  // namespace ingot::tune
