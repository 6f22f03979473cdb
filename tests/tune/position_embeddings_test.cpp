// CLIP tile / tiled-token position embeddings (tune/): reference and export-friendly
// variants against PyTorch (tools/reference/make_tune_fixtures.py) on one batch of five
// images with different aspect ratios padded to 4 tiles, the export guards, load-time
// interpolation of checkpoints (vs F.interpolate(bilinear, align_corners=True)) and the
// replace functions. Tolerance 1e-6 (additions and bilinear weights in float32).
#include "ingot/ops/functional.h"
#include "ingot/tune/export_position_embeddings.h"
#include "ingot/tune/position_interpolation.h"
#include "test_util.h"

namespace ingot::tune {
namespace {

using ingot::testing::values;
using testing::expect_error;
using testing::max_abs_diff;

constexpr double kTol = 1e-6;

class TunePositionEmbeddings : public ::testing::Test {
 protected:
  TunePositionEmbeddings() : file_(testing::tune_fixture("position_embeddings.safetensors")) {}
  Tensor t(const std::string& name) { return file_.tensor(name); }
  std::map<std::string, Tensor> tile_state() {
    return {{"embedding", t("tile.embedding")}, {"gate", t("tile.gate")}};
  }
  std::map<std::string, Tensor> token_state() {
    return {{"local_token_positional_embedding", t("token.local_token_positional_embedding")},
            {"global_token_positional_embedding", t("token.global_token_positional_embedding")},
            {"gate", t("token.gate")}};
  }
  static Tensor ratios(std::vector<int64_t> hw) {
    const int64_t n = int64_t(hw.size()) / 2;
    return Tensor::from_vector<int64_t>(hw, {n, 2});
  }
  formats::SafetensorsFile file_;
};

TEST_F(TunePositionEmbeddings, TileEmbeddingMatchesPyTorchOnMixedAspectRatios) {
  TilePositionalEmbedding ref(4, 8);
  ExportTilePositionalEmbedding exp(4, 8);
  ref.load_state_dict(tile_state());
  exp.load_state_dict(tile_state());
  Tensor x = t("x_tile"), ar = t("aspect_ratio");  // [5, 4, 3, 8], ratios 1x1 2x2 1x3 4x1 2x1
  Tensor r = ref.forward(x, ar), e = exp.forward(x, ar);
  EXPECT_LE(max_abs_diff(r, t("tile_out")), kTol);
  EXPECT_LE(max_abs_diff(e, t("tile_out")), kTol);
  EXPECT_EQ(max_abs_diff(e, r), 0.0);
  // Padded tiles are untouched: image 0 (1 x 1) keeps tiles 1..3, image 2 (1 x 3) tile 3.
  EXPECT_EQ(max_abs_diff(slice(select(e, 0, 0), 0, 1, 4), slice(select(x, 0, 0), 0, 1, 4)), 0.0);
  EXPECT_EQ(max_abs_diff(slice(select(e, 0, 2), 0, 3, 4), slice(select(x, 0, 2), 0, 3, 4)), 0.0);
  EXPECT_GT(max_abs_diff(slice(select(e, 0, 2), 0, 0, 3), slice(select(x, 0, 2), 0, 0, 3)), 1e-3);
}

TEST_F(TunePositionEmbeddings, TiledTokenEmbeddingMatchesPyTorchOnMixedAspectRatios) {
  TiledTokenPositionalEmbedding ref(4, 8, 4, 2);  // patch grid 2: 5 tokens per tile
  ExportTiledTokenPositionalEmbedding exp(4, 8, 4, 2);
  EXPECT_EQ(ref.n_tokens_per_tile(), 5);
  ref.load_state_dict(token_state());
  exp.load_state_dict(token_state());
  Tensor x = t("x_token"), ar = t("aspect_ratio");
  Tensor r = ref.forward(x, ar), e = exp.forward(x, ar);
  EXPECT_LE(max_abs_diff(r, t("token_out")), kTol);
  EXPECT_LE(max_abs_diff(e, t("token_out")), kTol);
  EXPECT_EQ(max_abs_diff(e, r), 0.0);
  // Fewer tiles than max_num_tiles is fine: the first 2 tiles of a 2 x 1 image.
  Tensor two = contiguous(slice(slice(x, 0, 4, 5), 1, 0, 2));
  EXPECT_LE(max_abs_diff(exp.forward(two, ratios({2, 1})),
                         slice(slice(t("token_out"), 0, 4, 5), 1, 0, 2)),
            kTol);
}

TEST_F(TunePositionEmbeddings, ExportGuardsRejectOutOfRangeTileCounts) {
  ExportTilePositionalEmbedding exp(4, 8);
  TilePositionalEmbedding ref(4, 8);
  exp.load_state_dict(tile_state());
  ref.load_state_dict(tile_state());
  Tensor x = contiguous(slice(t("x_tile"), 0, 0, 2));  // 2 images, 4 tiles
  const std::string api = "[ExportTilePositionalEmbedding]";
  expect_error<ValueError>(
      [&] {
        exp.forward(x, ratios({1, 1, 5, 1}));
      },
      {api, "image 1 has aspect ratio 5 x 1", "[1, 4]"});
  expect_error<ValueError>(
      [&] {
        exp.forward(x, ratios({0, 2, 1, 1}));
      },
      {api, "image 0 has aspect ratio 0 x 2"});
  expect_error<ValueError>(
      [&] {
        exp.forward(x, ratios({2, 1, 3, 2}));
      },
      {"image 1 has aspect ratio 3 x 2", "at most x's 4 tiles"});
  expect_error<ValueError>(
      [&] {
        ref.forward(x, ratios({2, 1, 3, 2}));
      },
      {"[TilePositionalEmbedding]", "image 1 has aspect ratio 3 x 2"});
  Tensor five_tiles = zeros({1, 5, 3, 8});
  expect_error<ValueError>(
      [&] {
        exp.forward(five_tiles, ratios({1, 1}));
      },
      {api, "5 tiles per image, more than max_num_tiles = 4"});
  expect_error<ShapeError>(
      [&] {
        exp.forward(x, ratios({1, 1}));
      },
      {"aspect_ratio must be [2, 2]"});
  ExportTiledTokenPositionalEmbedding token(4, 8, 4, 2);
  token.load_state_dict(token_state());
  expect_error<ValueError>(
      [&] {
        token.forward(zeros({1, 4, 6, 8}), ratios({1, 1}));
      },
      {"6 tokens per tile", "n_tokens_per_tile = 5"});
}

TEST_F(TunePositionEmbeddings, LoadingAnotherMaxNumTilesInterpolatesLikePyTorch) {
  for (bool exportable : {false, true}) {
    std::shared_ptr<TilePositionalEmbedding> m =
        exportable ? std::make_shared<ExportTilePositionalEmbedding>(4, 8)
                   : std::make_shared<TilePositionalEmbedding>(4, 8);
    m->load_state_dict({{"embedding", t("ckpt_tile_2")}, {"gate", t("tile.gate")}});  // 2 -> 4
    EXPECT_EQ(m->embedding().sizes(), (IntShape{4, 4, 1, 8}));
    EXPECT_LE(max_abs_diff(m->embedding(), t("ckpt_tile_2_resized")), kTol);
    // The resized table is what forward uses.
    Tensor x = zeros({1, 4, 1, 8});
    Tensor out = m->forward(x, ratios({2, 2}));
    Tensor table = slice(slice(t("ckpt_tile_2_resized"), 0, 0, 2), 1, 0, 2);  // [2, 2, 1, 8]
    Tensor want = mul(reshape(table, {4, 1, 8}), tanh(t("tile.gate")));
    EXPECT_LE(max_abs_diff(select(out, 0, 0), want), kTol);
  }
  TilePositionalEmbedding smaller(3, 8);  // 4 -> 3
  smaller.load_state_dict(tile_state());
  EXPECT_LE(max_abs_diff(smaller.embedding(), t("ckpt_tile_4_to_3")), kTol);
  // Same size: the checkpoint tensor itself is kept (no copy).
  TilePositionalEmbedding same(4, 8);
  auto state = tile_state();
  same.load_state_dict(state);
  EXPECT_TRUE(same.embedding().is_same(state.at("embedding")));
}

TEST_F(TunePositionEmbeddings, LoadingAnotherPatchGridInterpolatesWithoutTheClsToken) {
  ExportTiledTokenPositionalEmbedding m(4, 8, 4, 2);  // 4 tiles, grid 2
  m.load_state_dict(
      {{"local_token_positional_embedding", t("ckpt_local_g3")},       // grid 3
       {"global_token_positional_embedding", t("ckpt_global_t2_g3")},  // 2 tiles, grid 3
       {"gate", t("token.gate")}});
  EXPECT_LE(max_abs_diff(m.local_token_positional_embedding(), t("ckpt_local_g3_resized")), kTol);
  EXPECT_LE(max_abs_diff(m.global_token_positional_embedding(), t("ckpt_global_t2_g3_resized")),
            kTol);
  // CLS row of the local embedding is carried over unchanged.
  EXPECT_EQ(max_abs_diff(slice(m.local_token_positional_embedding(), 0, 0, 1),
                         slice(t("ckpt_local_g3"), 0, 0, 1)),
            0.0);
  // Upsizing both the tiles and the grid: 3 tiles, grid 2 -> 4 tiles, grid 3.
  EXPECT_LE(max_abs_diff(resize_global_token_position_embedding(t("ckpt_global_t3_g2"), 4, 3),
                         t("ckpt_global_t3_g2_to_t4_g3")),
            kTol);
}

TEST_F(TunePositionEmbeddings, BadCheckpointShapesAreErrors) {
  TiledTokenPositionalEmbedding token(4, 8, 4, 2);
  auto state = token_state();
  state["local_token_positional_embedding"] = zeros({7, 8});  // 6 patches: not a square
  expect_error<ValueError>(
      [&] { token.load_state_dict(state); },
      {"local_token_positional_embedding", "n_tokens_per_tile = 7", "not squared"});
  TilePositionalEmbedding tile(4, 8);
  expect_error<ValueError>(
      [&] {
        tile.load_state_dict({{"embedding", zeros({2, 3, 1, 8})}, {"gate", zeros({1})}});
      },
      {"max_num_tiles_x, max_num_tiles_y to be equal"});
  expect_error<ValueError>(
      [&] {
        tile.load_state_dict({{"embedding", zeros({2, 2, 1, 6})}, {"gate", zeros({1})}});
      },
      {"(..., 1, 8)"});
}

TEST_F(TunePositionEmbeddings, ReplaceFunctionsSwapReferenceModulesKeepingTheirTensors) {
  auto root = std::make_shared<nn::Container>("VisionEncoder");
  auto tile = root->add("pre_tile_pos_embed", std::make_shared<TilePositionalEmbedding>(4, 8));
  auto inner = root->add("encoder", std::make_shared<nn::Container>("Block"));
  auto token = inner->add("token_pos_embedding",
                          std::make_shared<TiledTokenPositionalEmbedding>(4, 8, 4, 2));
  tile->load_state_dict(tile_state());
  token->load_state_dict(token_state());
  const auto before = root->state_dict();

  EXPECT_EQ(replace_tile_positional_embedding(*root), 1);
  EXPECT_EQ(replace_tiled_token_positional_embedding(*root), 1);
  auto new_tile =
      std::dynamic_pointer_cast<ExportTilePositionalEmbedding>(root->child("pre_tile_pos_embed"));
  auto new_token = std::dynamic_pointer_cast<ExportTiledTokenPositionalEmbedding>(
      inner->child("token_pos_embedding"));
  ASSERT_TRUE(new_tile && new_token);
  EXPECT_EQ(new_token->n_tokens_per_tile(), 5);  // tile size 2, patch 1: same token count
  const auto after = root->state_dict();
  ASSERT_EQ(after.size(), before.size());
  for (const auto& [name, tensor] : before) EXPECT_TRUE(after.at(name).is_same(tensor)) << name;
  EXPECT_LE(max_abs_diff(new_tile->forward(t("x_tile"), t("aspect_ratio")), t("tile_out")), kTol);
  EXPECT_LE(max_abs_diff(new_token->forward(t("x_token"), t("aspect_ratio")), t("token_out")),
            kTol);
  EXPECT_EQ(replace_tile_positional_embedding(*root), 0);
}

}  // namespace
}  // namespace ingot::tune
