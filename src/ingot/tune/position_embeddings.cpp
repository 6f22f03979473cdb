#include "ingot/tune/position_embeddings.h"

#include "ingot/nn/layers.h"
#include "ingot/ops/functional.h"
#include "ingot/tune/position_interpolation.h"

namespace ingot::tune {

void check_tiled_inputs(const Tensor& x, const Tensor& aspect_ratio, int64_t embed_dim,
                        const std::string& api) {
  INGOT_CHECK(x.dim() == 4 && x.sym_size(3).maybe_int() == embed_dim, ShapeError,
              "[{}] x must be [bsz * n_imgs, n_tiles, n_tokens, {}], got {}", api, embed_dim,
              x.shape_string());
  INGOT_CHECK(aspect_ratio.defined() && is_integral(aspect_ratio.dtype()), DTypeError,
              "[{}] aspect_ratio must be an integer tensor [bsz * n_imgs, 2]", api);
  INGOT_CHECK(aspect_ratio.dim() == 2 && aspect_ratio.sym_size(1).maybe_int() == 2 &&
                  bool(aspect_ratio.sym_size(0) == x.sym_size(0)),
              ShapeError, "[{}] aspect_ratio must be [{}, 2] (one (h, w) per image of x), got {}",
              api, x.sym_size(0).str(), aspect_ratio.shape_string());
}

namespace {

// x with `pos` added to x[image, :n] (pos [n, n_tokens or 1, D]): the functional form of
// torchtune's in-place `x[image, :n] += pos`.
Tensor add_to_leading_tiles(const Tensor& x, const SymInt& image, const SymInt& n,
                            const Tensor& pos) {
  Tensor tiles = select(x, 0, image);                                      // [n_tiles, n_tok, D]
  tiles = slice_scatter(tiles, add(slice(tiles, 0, 0, n), pos), 0, 0, n);  // tiles[:n] += pos
  return select_scatter(x, tiles, 0, image);
}

// Reference: reads (h, w) of image i and checks they fit.
std::pair<int64_t, int64_t> tiles_of(const Tensor& aspect_ratio, int64_t i, int64_t max_num_tiles,
                                     int64_t n_tiles, const std::string& api) {
  const int64_t h = select(select(aspect_ratio, 0, i), 0, 0).item<int64_t>();
  const int64_t w = select(select(aspect_ratio, 0, i), 0, 1).item<int64_t>();
  INGOT_CHECK(h >= 1 && w >= 1 && h <= max_num_tiles && w <= max_num_tiles && h * w <= n_tiles,
              ValueError,
              "[{}] image {} has aspect ratio {} x {} tiles; each side must be in [1, {}] "
              "(max_num_tiles) and h * w at most x's {} tiles",
              api, i, h, w, max_num_tiles, n_tiles);
  return {h, w};
}

// table [M, M, n_tok_t, D] -> x with table[:h, :w] (flattened, scaled) added per image.
Tensor add_global(const Tensor& x, const Tensor& aspect_ratio, const Tensor& table,
                  const Tensor& scale, int64_t max_num_tiles, const std::string& api) {
  const int64_t n_tiles = x.size(1);
  Tensor out = x;
  for (int64_t i = 0; i < x.size(0); ++i) {
    auto [h, w] = tiles_of(aspect_ratio, i, max_num_tiles, n_tiles, api);
    Tensor pos = slice(slice(table, 0, 0, h), 1, 0, w);  // [h, w, n_tok_t, D]
    pos = reshape(pos, {h * w, table.sym_size(2), table.sym_size(3)});
    out = add_to_leading_tiles(out, i, h * w, mul(pos, scale));
  }
  return out;
}

}  // namespace

TilePositionalEmbedding::TilePositionalEmbedding(int64_t max_num_tiles, int64_t embed_dim,
                                                 DType dtype)
    : TilePositionalEmbedding("TilePositionalEmbedding", max_num_tiles, embed_dim, dtype) {}

TilePositionalEmbedding::TilePositionalEmbedding(std::string type_name, int64_t max_num_tiles,
                                                 int64_t embed_dim, DType dtype)
    : nn::Module(std::move(type_name)), max_num_tiles_(max_num_tiles), embed_dim_(embed_dim) {
  INGOT_CHECK(max_num_tiles > 0 && embed_dim > 0, ValueError,
              "[{}] max_num_tiles ({}) and embed_dim ({}) must be positive", this->type_name(),
              max_num_tiles, embed_dim);
  embedding_ = register_parameter(
      "embedding", nn::placeholder({max_num_tiles, max_num_tiles, 1, embed_dim}, dtype));
  gate_ = register_parameter("gate", nn::placeholder({1}, dtype));
}

Tensor TilePositionalEmbedding::forward(const Tensor& x, const Tensor& aspect_ratio) const {
  check_tiled_inputs(x, aspect_ratio, embed_dim_, type_name());
  return add_global(x, aspect_ratio, *embedding_, tanh(*gate_), max_num_tiles_, type_name());
}

void TilePositionalEmbedding::load_state_dict_pre_hook(const std::string& prefix,
                                                       std::map<std::string, Tensor>& state) {
  auto it = state.find(nn::join_name(prefix, "embedding"));
  if (it == state.end()) return;
  const Tensor& ckpt = it->second;
  INGOT_CHECK(ckpt.dim() == 4 && ckpt.size(2) == 1 && ckpt.size(3) == embed_dim_, ValueError,
              "[{}] Expected embedding shape to be (..., 1, {}) to match but found shape {} in "
              "the checkpoint ('{}')",
              type_name(), embed_dim_, ckpt.shape_string(), it->first);
  INGOT_CHECK(ckpt.size(0) == ckpt.size(1), ValueError,
              "[{}] Expected max_num_tiles_x, max_num_tiles_y to be equal but found {} in the "
              "checkpoint ('{}')",
              type_name(), ckpt.shape_string(), it->first);
  if (ckpt.size(0) != max_num_tiles_)
    it->second = resize_tile_position_embedding(ckpt, max_num_tiles_);
}

TiledTokenPositionalEmbedding::TiledTokenPositionalEmbedding(int64_t max_num_tiles,
                                                             int64_t embed_dim, int64_t tile_size,
                                                             int64_t patch_size, DType dtype)
    : TiledTokenPositionalEmbedding("TiledTokenPositionalEmbedding", max_num_tiles, embed_dim,
                                    tile_size, patch_size, dtype) {}

TiledTokenPositionalEmbedding::TiledTokenPositionalEmbedding(std::string type_name,
                                                             int64_t max_num_tiles,
                                                             int64_t embed_dim, int64_t tile_size,
                                                             int64_t patch_size, DType dtype)
    : nn::Module(std::move(type_name)), max_num_tiles_(max_num_tiles), embed_dim_(embed_dim) {
  INGOT_CHECK(max_num_tiles > 0 && embed_dim > 0 && tile_size > 0 && patch_size > 0, ValueError,
              "[{}] max_num_tiles ({}), embed_dim ({}), tile_size ({}) and patch_size ({}) must "
              "be positive",
              this->type_name(), max_num_tiles, embed_dim, tile_size, patch_size);
  const int64_t grid = tile_size / patch_size;
  n_tokens_per_tile_ = grid * grid + 1;
  local_ = register_parameter("local_token_positional_embedding",
                              nn::placeholder({n_tokens_per_tile_, embed_dim}, dtype));
  global_ = register_parameter(
      "global_token_positional_embedding",
      nn::placeholder({max_num_tiles, max_num_tiles, n_tokens_per_tile_, embed_dim}, dtype));
  gate_ = register_parameter("gate", nn::placeholder({1}, dtype));
}

Tensor TiledTokenPositionalEmbedding::forward(const Tensor& x, const Tensor& aspect_ratio) const {
  check_tiled_inputs(x, aspect_ratio, embed_dim_, type_name());
  INGOT_CHECK(x.size(2) == n_tokens_per_tile_, ShapeError,
              "[{}] x has {} tokens per tile; this embedding has n_tokens_per_tile = {}",
              type_name(), x.size(2), n_tokens_per_tile_);
  const Tensor g = tanh(*gate_);
  Tensor out = add(x, mul(*local_, add(neg(g), 1)));  // local part: (1 - tanh(gate))
  return add_global(out, aspect_ratio, *global_, g, max_num_tiles_, type_name());
}

void TiledTokenPositionalEmbedding::load_state_dict_pre_hook(const std::string& prefix,
                                                             std::map<std::string, Tensor>& state) {
  const int64_t tgt_grid = patch_grid_size(n_tokens_per_tile_, type_name());
  auto local = state.find(nn::join_name(prefix, "local_token_positional_embedding"));
  if (local != state.end()) {
    const Tensor& ckpt = local->second;
    INGOT_CHECK(ckpt.dim() == 2, ValueError,
                "[{}] '{}' must be [n_tokens_per_tile, embed_dim], got {}", type_name(),
                local->first, ckpt.shape_string());
    patch_grid_size(ckpt.size(0), fmt::format("{} checkpoint '{}'", type_name(), local->first));
    if (ckpt.size(0) != n_tokens_per_tile_) {
      local->second = resize_local_token_position_embedding(ckpt, tgt_grid);
    }
  }
  auto global = state.find(nn::join_name(prefix, "global_token_positional_embedding"));
  if (global != state.end()) {
    const Tensor& ckpt = global->second;
    INGOT_CHECK(ckpt.dim() == 4, ValueError,
                "[{}] '{}' must be [max_num_tiles, max_num_tiles, n_tokens_per_tile, embed_dim], "
                "got {}",
                type_name(), global->first, ckpt.shape_string());
    patch_grid_size(ckpt.size(2), fmt::format("{} checkpoint '{}'", type_name(), global->first));
    if (ckpt.size(0) != max_num_tiles_ || ckpt.size(1) != max_num_tiles_ ||
        ckpt.size(2) != n_tokens_per_tile_) {
      global->second = resize_global_token_position_embedding(ckpt, max_num_tiles_, tgt_grid);
    }
  }
}

}  // namespace ingot::tune
