#include "ingot/tune/position_interpolation.h"

#include <cmath>

#include "ingot/ops/functional.h"

namespace ingot::tune {

int64_t patch_grid_size(int64_t n_tokens_per_tile, const std::string& what) {
  const int64_t g =
      n_tokens_per_tile >= 1 ? int64_t(std::llround(std::sqrt(double(n_tokens_per_tile - 1)))) : -1;
  INGOT_CHECK(g >= 0 && g * g == n_tokens_per_tile - 1, ValueError,
              "[{}] has n_tokens_per_tile = {}, which indicates a grid_size that is not squared "
              "(expected 1 + grid_size^2). This is currently not supported.",
              what, n_tokens_per_tile);
  return g;
}

Tensor resize_tile_position_embedding(const Tensor& embedding, int64_t tgt) {
  Tensor grid = permute(embedding, {2, 3, 0, 1});                        // [n_tok, D, M, M]
  grid = upsample_bilinear2d(grid, {tgt, tgt}, /*align_corners=*/true);  // [n_tok, D, T, T]
  return contiguous(permute(grid, {2, 3, 0, 1}));                        // [T, T, n_tok, D]
}

Tensor resize_local_token_position_embedding(const Tensor& local, int64_t tgt_grid) {
  const int64_t g = patch_grid_size(local.size(0), "resize_local_token_position_embedding");
  const int64_t d = local.size(1);
  Tensor cls = slice(local, 0, 0, 1);                                              // [1, D]
  Tensor grid = reshape(slice(local, 0, 1, std::nullopt), {g, g, d});              // [g, g, D]
  grid = unsqueeze(permute(grid, {2, 0, 1}), 0);                                   // [1, D, g, g]
  grid = upsample_bilinear2d(grid, {tgt_grid, tgt_grid}, true);                    // [1, D, t, t]
  grid = reshape(permute(squeeze(grid, 0), {1, 2, 0}), {tgt_grid * tgt_grid, d});  // [t*t, D]
  return cat({cls, grid}, 0);                                                      // [1 + t*t, D]
}

Tensor resize_global_token_position_embedding(const Tensor& global, int64_t tgt_tiles,
                                              int64_t tgt_grid) {
  INGOT_CHECK(global.dim() == 4, ShapeError,
              "[resize_global_token_position_embedding] expected [M, M, 1 + g*g, D], got {}",
              global.shape_string());
  const int64_t mx = global.size(0), my = global.size(1), d = global.size(3);
  const int64_t g = patch_grid_size(global.size(2), "resize_global_token_position_embedding");
  Tensor cls = slice(global, 2, 0, 1);             // [Mx, My, 1, D]
  Tensor pos = slice(global, 2, 1, std::nullopt);  // [Mx, My, g*g, D]
  // Tiles and patches as one image: [Mx * g, My * g, D].
  pos = reshape(pos, {mx, my, g, g, d});
  pos = reshape(contiguous(permute(pos, {0, 2, 1, 3, 4})), {mx * g, my * g, d});
  pos = permute(unsqueeze(pos, 0), {0, 3, 1, 2});  // [1, D, Mx*g, My*g]
  pos = upsample_bilinear2d(pos, {tgt_tiles * tgt_grid, tgt_tiles * tgt_grid}, true);
  pos = squeeze(permute(pos, {0, 2, 3, 1}), 0);  // [T*t, T*t, D]
  pos = reshape(pos, {tgt_tiles, tgt_grid, tgt_tiles, tgt_grid, d});
  pos = reshape(contiguous(permute(pos, {0, 2, 1, 3, 4})),
                {tgt_tiles, tgt_tiles, tgt_grid * tgt_grid, d});
  // CLS over the tile grid only.
  Tensor cls_grid = upsample_bilinear2d(permute(cls, {2, 3, 0, 1}), {tgt_tiles, tgt_tiles}, true);
  cls = permute(cls_grid, {2, 3, 0, 1});  // [T, T, 1, D]
  return cat({cls, pos}, 2);              // [T, T, 1 + t*t, D]
}

}  // namespace ingot::tune
