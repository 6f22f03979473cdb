// Load-time resizing of CLIP tile / token position embeddings to a module whose
// max_num_tiles or patch grid differs from the checkpoint's (torchtune's
// _resize_position_embedding and friends in models/clip/_position_embeddings.py).
// Bilinear with align_corners = true; the CLS token's embedding never mixes with the
// image tokens' (it is resized separately, over the tile grid only).
//
// These run eagerly on checkpoint tensors (possibly read-only mapped ones, never written)
// and return new tensors of the checkpoint's dtype.
#pragma once

#include <string>

#include "ingot/core/tensor.h"

namespace ingot::tune {

// [M, M, n_tok, D] -> [T, T, n_tok, D], interpolating over the two tile dims.
Tensor resize_tile_position_embedding(const Tensor& embedding, int64_t tgt_max_num_tiles);

// [1 + g*g, D] -> [1 + t*t, D]: row 0 (CLS) kept, the g x g patch grid resized to t x t.
Tensor resize_local_token_position_embedding(const Tensor& local, int64_t tgt_patch_grid_size);

// [M, M, 1 + g*g, D] -> [T, T, 1 + t*t, D]: the patch grids of all tiles form one
// (M*g) x (M*g) image resized to (T*t) x (T*t); the CLS slice [M, M, 1, D] is resized
// over the tile grid to [T, T, 1, D].
Tensor resize_global_token_position_embedding(const Tensor& global, int64_t tgt_max_num_tiles,
                                              int64_t tgt_patch_grid_size);

// g for a token count 1 + g*g; ValueError (naming `what`) when n - 1 is not a square.
int64_t patch_grid_size(int64_t n_tokens_per_tile, const std::string& what);

}  // namespace ingot::tune
