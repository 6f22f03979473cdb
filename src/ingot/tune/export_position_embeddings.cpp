#include "ingot/tune/export_position_embeddings.h"

#include "ingot/export/control_flow.h"
#include "ingot/ops/functional.h"
#include "ingot/tune/data_dependent.h"
#include "ingot/tune/position_interpolation.h"

namespace ingot::tune {
namespace {

// table [M, M, n_tok_t, D] -> x with table[:h, :w] (flattened to h * w tiles, times
// `scale`) added to the first h * w tiles of each image; the guards of the header.
Tensor add_global_exportable(const Tensor& x, const Tensor& aspect_ratio, const Tensor& table,
                             const Tensor& scale, int64_t max_num_tiles, const std::string& api) {
  const SymInt n_tiles = x.sym_size(1);
  require(n_tiles <= SymInt(max_num_tiles), [&] {
    return fmt::format("[{}] x has {} tiles per image, more than max_num_tiles = {}", api,
                       n_tiles.str(), max_num_tiles);
  });
  const SymInt tok_t = table.sym_size(2), dim = table.sym_size(3);
  Tensor out = x;
  const int64_t batch = x.sym_size(0).guard_int();  // a loop over images: static batch
  for (int64_t i = 0; i < batch; ++i) {
    Tensor ratio = select(aspect_ratio, 0, i);
    const SymInt h = item_int(select(ratio, 0, 0));
    const SymInt w = item_int(select(ratio, 0, 1));
    auto bad_ratio = [&] {
      return fmt::format(
          "[{}] image {} has aspect ratio {} x {} tiles; each side must be in "
          "[1, {}] (max_num_tiles) and h * w at most x's {} tiles",
          api, i, h.str(), w.str(), max_num_tiles, n_tiles.str());
    };
    require(h >= SymInt(1), bad_ratio);
    require(w >= SymInt(1), bad_ratio);
    require(h <= SymInt(max_num_tiles), bad_ratio);
    require(w <= SymInt(max_num_tiles), bad_ratio);
    check_is_size(h);
    check_is_size(w);
    const SymInt n = h * w;
    check_is_size(n);
    require(n <= n_tiles, bad_ratio);

    // h, w <= max_num_tiles (their ranges after the checks): the slices stay in bounds.
    Tensor pos = slice(slice(table, 0, 0, h), 1, 0, w);  // [h, w, n_tok_t, D]
    // The reshape merges dims 0 and 1 of a data-dependent slice: clone first (seed 000).
    pos = clone(pos);
    pos = reshape(pos, {n, tok_t, dim});  // [h * w, n_tok_t, D]
    // Zero rows for the padded tiles: [n_tiles, n_tok_t, D], a size that simplifies to
    // n_tiles, so no slice of x has a data-dependent end.
    pos = cat({pos, zeros_symint({n_tiles - n, tok_t, dim}, pos.dtype())}, 0);
    out = select_scatter(out, add(select(out, 0, i), mul(pos, scale)), 0, i);
  }
  return out;
}

}  // namespace

ExportTilePositionalEmbedding::ExportTilePositionalEmbedding(int64_t max_num_tiles,
                                                             int64_t embed_dim, DType dtype)
    : TilePositionalEmbedding("ExportTilePositionalEmbedding", max_num_tiles, embed_dim, dtype) {}

Tensor ExportTilePositionalEmbedding::forward(const Tensor& x, const Tensor& aspect_ratio) const {
  check_tiled_inputs(x, aspect_ratio, embed_dim(), type_name());
  return add_global_exportable(x, aspect_ratio, embedding(), tanh(gate()), max_num_tiles(),
                               type_name());
}

ExportTiledTokenPositionalEmbedding::ExportTiledTokenPositionalEmbedding(
    int64_t max_num_tiles, int64_t embed_dim, int64_t tile_size, int64_t patch_size, DType dtype)
    : TiledTokenPositionalEmbedding("ExportTiledTokenPositionalEmbedding", max_num_tiles, embed_dim,
                                    tile_size, patch_size, dtype) {}

Tensor ExportTiledTokenPositionalEmbedding::forward(const Tensor& x,
                                                    const Tensor& aspect_ratio) const {
  check_tiled_inputs(x, aspect_ratio, embed_dim(), type_name());
  require(x.sym_size(2) == SymInt(n_tokens_per_tile()), [&] {
    return fmt::format("[{}] x has {} tokens per tile; this embedding has n_tokens_per_tile = {}",
                       type_name(), x.sym_size(2).str(), n_tokens_per_tile());
  });
  const Tensor g = tanh(gate());
  Tensor out = add(x, mul(local_token_positional_embedding(), add(neg(g), 1)));
  return add_global_exportable(out, aspect_ratio, global_token_positional_embedding(), g,
                               max_num_tiles(), type_name());
}

int replace_tile_positional_embedding(nn::Module& module) {
  return module.replace_modules(
      "TilePositionalEmbedding",
      [](const std::string&, nn::Module& m) -> std::shared_ptr<nn::Module> {
        auto* ref = dynamic_cast<TilePositionalEmbedding*>(&m);
        if (ref == nullptr) return nullptr;
        const Tensor& e = ref->embedding();  // [M, M, 1, D]
        auto replacement =
            std::make_shared<ExportTilePositionalEmbedding>(e.size(0), e.size(3), e.dtype());
        replacement->load_state_dict(ref->state_dict());
        replacement->train(ref->is_training());
        return replacement;
      });
}

int replace_tiled_token_positional_embedding(nn::Module& module) {
  return module.replace_modules(
      "TiledTokenPositionalEmbedding",
      [](const std::string& fqn, nn::Module& m) -> std::shared_ptr<nn::Module> {
        auto* ref = dynamic_cast<TiledTokenPositionalEmbedding*>(&m);
        if (ref == nullptr) return nullptr;
        const Tensor& g = ref->global_token_positional_embedding();  // [M, M, n_tok, D]
        const int64_t tile_size = patch_grid_size(g.size(2), fqn);
        auto replacement = std::make_shared<ExportTiledTokenPositionalEmbedding>(
            g.size(0), g.size(3), tile_size, /*patch_size=*/1, g.dtype());
        replacement->load_state_dict(ref->state_dict());
        replacement->train(ref->is_training());
        return replacement;
      });
}

}  // namespace ingot::tune
