// Export-friendly tile / tiled-token position embeddings
// (torchtune.modules._export._position_embeddings): the reference modules of
// position_embeddings.h (same parameters, same load-time interpolation, same outputs)
// with a forward written for export, as in seed 000:
//  * each image's tile counts h, w are read as symbolic integers (item_int: torch's
//    .item(), unbacked under export) and guarded with check / check_is_size: n_tiles <=
//    max_num_tiles, 1 <= h, w <= max_num_tiles, h * w <= n_tiles. In eager mode a failed
//    guard is a ValueError naming the image, its aspect ratio and the bound;
//  * the sliced table is cloned before the reshape that merges its two tile dims;
//  * the image's h * w rows are completed with n_tiles - h * w zero rows and added to
//    the whole image, so no slice ends at a product of data values (torchtune pads the table
//    and x by one tile instead; ingot's range reasoning does not need that);
//  * the per-image loop runs over the (static) batch size, which export specialises.
#pragma once

#include "ingot/tune/position_embeddings.h"

namespace ingot::tune {

class ExportTilePositionalEmbedding : public TilePositionalEmbedding {
 public:
  ExportTilePositionalEmbedding(int64_t max_num_tiles, int64_t embed_dim, DType dtype = DType::F32);
  Tensor forward(const Tensor& x, const Tensor& aspect_ratio) const override;
};

class ExportTiledTokenPositionalEmbedding : public TiledTokenPositionalEmbedding {
 public:
  ExportTiledTokenPositionalEmbedding(int64_t max_num_tiles, int64_t embed_dim, int64_t tile_size,
                                      int64_t patch_size, DType dtype = DType::F32);
  Tensor forward(const Tensor& x, const Tensor& aspect_ratio) const override;
};

// Replace every reference TilePositionalEmbedding / TiledTokenPositionalEmbedding below
// `module` (recursively) by its export-friendly variant, loading the same state dict
// (the same tensors, no copy). Sizes are recovered from the parameters: max_num_tiles
// and embed_dim from the embedding's shape, and for the tiled-token one
// tile_size = sqrt(n_tokens_per_tile - 1) with patch_size = 1. Return how many were
// replaced.
int replace_tile_positional_embedding(nn::Module& module);
int replace_tiled_token_positional_embedding(nn::Module& module);

}  // namespace ingot::tune
