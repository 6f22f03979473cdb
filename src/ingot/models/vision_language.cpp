#include "ingot/models/vision_language.h"

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

}  // namespace ingot::models
