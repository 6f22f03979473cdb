// CLIP-style position embeddings of tiled images, as torchtune's reference modules
// (torchtune.models.clip._position_embeddings): an image is cut into up to
// max_num_tiles tiles (n_tiles_h x n_tiles_w, its aspect ratio), images of a batch are
// padded to the same tile count, and embeddings are added to the non-padded tiles only.
//
//   x            [bsz * n_imgs, n_tiles, n_tokens, embed_dim]
//   aspect_ratio integer [bsz * n_imgs, 2]: (n_tiles_h, n_tiles_w) of each image; its
//                first h * w tiles are real, tile k sits at (k / w, k % w)
//
// TilePositionalEmbedding adds embedding[row, col] * tanh(gate), one vector per tile.
// TiledTokenPositionalEmbedding adds a local embedding (per token, same for every tile)
// scaled by 1 - tanh(gate) to every tile, and a global embedding (per tile and token)
// scaled by tanh(gate) to the real tiles. Token 0 of each tile is the CLS token.
//
// Loading a checkpoint whose max_num_tiles (or patch grid) differs from the module's
// resizes it (position_interpolation.h) in load_state_dict_pre_hook. Parameters start
// as placeholders (shape and dtype only) until loaded. The reference forward reads
// aspect_ratio's values (eager only); export_position_embeddings.h has the export-
// friendly variants, which override forward.
#pragma once

#include "ingot/nn/module.h"

namespace ingot::tune {

class TilePositionalEmbedding : public nn::Module {
 public:
  TilePositionalEmbedding(int64_t max_num_tiles, int64_t embed_dim, DType dtype = DType::F32);
  virtual Tensor forward(const Tensor& x, const Tensor& aspect_ratio) const;

  Tensor& embedding() const { return *embedding_; }  // [max_num_tiles, max_num_tiles, 1, embed_dim]
  Tensor& gate() const { return *gate_; }            // [1]
  int64_t max_num_tiles() const { return max_num_tiles_; }
  int64_t embed_dim() const { return embed_dim_; }

 protected:
  TilePositionalEmbedding(std::string type_name, int64_t max_num_tiles, int64_t embed_dim,
                          DType dtype);
  // Resizes a checkpoint "embedding" of another max_num_tiles; ValueError when its token
  // or embedding dims differ or its two tile dims are not equal.
  void load_state_dict_pre_hook(const std::string& prefix,
                                std::map<std::string, Tensor>& state) override;

 private:
  int64_t max_num_tiles_, embed_dim_;
  Tensor* embedding_;
  Tensor* gate_;
};

class TiledTokenPositionalEmbedding : public nn::Module {
 public:
  // n_tokens_per_tile = (tile_size / patch_size)^2 + 1 (the CLS token).
  TiledTokenPositionalEmbedding(int64_t max_num_tiles, int64_t embed_dim, int64_t tile_size,
                                int64_t patch_size, DType dtype = DType::F32);
  virtual Tensor forward(const Tensor& x, const Tensor& aspect_ratio) const;

  Tensor& local_token_positional_embedding() const { return *local_; }    // [n_tok, D]
  Tensor& global_token_positional_embedding() const { return *global_; }  // [M, M, n_tok, D]
  Tensor& gate() const { return *gate_; }                                 // [1]
  int64_t max_num_tiles() const { return max_num_tiles_; }
  int64_t embed_dim() const { return embed_dim_; }
  int64_t n_tokens_per_tile() const { return n_tokens_per_tile_; }

 protected:
  TiledTokenPositionalEmbedding(std::string type_name, int64_t max_num_tiles, int64_t embed_dim,
                                int64_t tile_size, int64_t patch_size, DType dtype);
  // Resizes checkpoint local / global embeddings of another patch grid or max_num_tiles
  // (CLS token kept out of the patch interpolation).
  void load_state_dict_pre_hook(const std::string& prefix,
                                std::map<std::string, Tensor>& state) override;

 private:
  int64_t max_num_tiles_, embed_dim_, n_tokens_per_tile_;
  Tensor* local_;
  Tensor* global_;
  Tensor* gate_;
};

// ShapeError / ValueError unless x is [B, n_tiles, n_tokens, D] with D = embed_dim and
// aspect_ratio an integer [B, 2].
void check_tiled_inputs(const Tensor& x, const Tensor& aspect_ratio, int64_t embed_dim,
                        const std::string& api);

}  // namespace ingot::tune
