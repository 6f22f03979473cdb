#include "ingot/models/vision/vision_language.h"

#include <algorithm>
#include <cstring>

#include "ingot/core/dtype.h"
#include "ingot/ops/functional.h"

namespace ingot::models {

Tensor merge_image_features(const Tensor& text_embeds, const Tensor& input_ids,
                            const Tensor& image_embeds, int64_t image_token_id) {
  INGOT_CHECK(text_embeds.dim() == 3 && text_embeds.size(0) == 1 && input_ids.dim() == 2 &&
                  input_ids.size(1) == text_embeds.size(1),
              ShapeError,
              "[merge_image_features] text embeddings {} and input_ids {} must be [1, s, hidden] "
              "and [1, s] (batch 1)",
              text_embeds.shape_string(), input_ids.shape_string());
  const int64_t hidden = text_embeds.size(2);
  INGOT_CHECK(image_embeds.dim() == 3 && image_embeds.size(2) == hidden, ShapeError,
              "[merge_image_features] image embeddings {} must be [images, patches, {}]",
              image_embeds.shape_string(), hidden);
  Tensor ids = contiguous(to(input_ids, DType::I64));
  const int64_t* id = ids.data<int64_t>();
  int64_t image_tokens = 0;
  for (int64_t i = 0; i < ids.numel(); ++i) image_tokens += id[i] == image_token_id;
  const int64_t features = image_embeds.size(0) * image_embeds.size(1);
  INGOT_CHECK(image_tokens == features, ValueError,
              "[merge_image_features] the prompt has {} image tokens (id {}) but the images give "
              "{} feature rows ({} images x {}); put one image placeholder per image in the "
              "prompt, expanded as the processor does",
              image_tokens, image_token_id, features, image_embeds.size(0), image_embeds.size(1));
  Tensor out = clone(contiguous(text_embeds));
  Tensor rows = contiguous(to(image_embeds, out.dtype()));
  const size_t row_bytes = size_t(hidden) * itemsize(out.dtype());
  auto* dst = static_cast<char*>(out.raw_data());
  const auto* src = static_cast<const char*>(rows.raw_data());
  int64_t next = 0;
  for (int64_t i = 0; i < ids.numel(); ++i) {
    if (id[i] != image_token_id) continue;
    std::memcpy(dst + size_t(i) * row_bytes, src + size_t(next++) * row_bytes, row_bytes);
  }
  return out;
}

Tensor VisionLanguageModel::encode_patches(const Tensor&, const Tensor&, const Tensor&) {
  INGOT_THROW(NotSupportedError,
              "[{}] takes images as pixel_values [images, C, H, W], not flattened patches",
              architecture());
}

MropePositions mrope_position_ids(const Tensor& input_ids, int64_t image_token_id,
                                  const Tensor& image_grid_thw, int64_t merge) {
  INGOT_CHECK(input_ids.dim() == 2 && input_ids.size(0) == 1, ShapeError,
              "[mrope_position_ids] input_ids must be [1, tokens] (batch 1), got {}",
              input_ids.shape_string());
  INGOT_CHECK(image_grid_thw.dim() == 2 && image_grid_thw.size(1) == 3, ShapeError,
              "[mrope_position_ids] image_grid_thw must be [images, 3], got {}",
              image_grid_thw.shape_string());
  Tensor ids = contiguous(to(input_ids, DType::I64));
  Tensor grid = contiguous(to(image_grid_thw, DType::I64));
  const int64_t* id = ids.data<int64_t>();
  const int64_t* g = grid.data<int64_t>();
  const int64_t n = ids.size(1), images = grid.size(0);
  std::vector<int64_t> rows[3];
  for (auto& r : rows) r.reserve(size_t(n));
  int64_t pos = 0, image = 0;
  for (int64_t i = 0; i < n;) {
    if (id[i] != image_token_id) {
      for (auto& r : rows) r.push_back(pos);
      ++pos;
      ++i;
      continue;
    }
    int64_t end = i;
    while (end < n && id[end] == image_token_id) ++end;
    INGOT_CHECK(image < images, ValueError,
                "[mrope_position_ids] the prompt has more runs of image tokens (id {}) than "
                "image_grid_thw has images ({}); put one expanded placeholder per image",
                image_token_id, images);
    const int64_t t = g[3 * image], h = g[3 * image + 1] / merge, w = g[3 * image + 2] / merge;
    INGOT_CHECK(end - i == t * h * w, ValueError,
                "[mrope_position_ids] image {} has {} image tokens in the prompt but its "
                "image_grid_thw ({}, {}, {}) gives {} (t * h * w / {}); expand its placeholder "
                "as the processor does",
                image, end - i, t, h * merge, w * merge, t * h * w, merge * merge);
    for (int64_t a = 0; a < t; ++a) {
      for (int64_t b = 0; b < h; ++b) {
        for (int64_t c = 0; c < w; ++c) {
          rows[0].push_back(pos + a);
          rows[1].push_back(pos + b);
          rows[2].push_back(pos + c);
        }
      }
    }
    pos += std::max(h, w);
    ++image;
    i = end;
  }
  INGOT_CHECK(image == images, ValueError,
              "[mrope_position_ids] image_grid_thw has {} images but the prompt has {} runs of "
              "image tokens (id {})",
              images, image, image_token_id);
  int64_t top = 0;
  std::vector<int64_t> flat;
  for (auto& r : rows) {
    for (int64_t v : r) top = std::max(top, v);
    flat.insert(flat.end(), r.begin(), r.end());
  }
  return {Tensor::from_vector(flat, {3, 1, n}), top + 1 - n};
}

}  // namespace ingot::models
