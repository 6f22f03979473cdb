// CLIP's image pre-processing (transformers' CLIPImageProcessor, PIL backend) and
// LLaVA's prompt expansion (LlavaProcessor), from a model folder's
// preprocessor_config.json / processor_config.json:
//
//   image (PNG / JPEG) -> RGB (do_convert_rgb) -> resize so the shortest edge is
//   size.shortest_edge (or to size.height x size.width) with PIL's bicubic filter in
//   8-bit fixed point, rounded to uint8 after each pass as PIL does -> centre crop to
//   crop_size -> x * rescale_factor (in double, then float32) -> (x - mean) / std (in
//   float32) -> pixel_values [1, 3, H, W] float32.
#pragma once

#include <optional>
#include <string>

#include "ingot/core/tensor.h"
#include "ingot/media/image_io.h"

namespace ingot::media {

struct ClipImageProcessor {
  bool do_convert_rgb = true;
  bool do_resize = true;
  std::optional<int64_t> shortest_edge;                // size.shortest_edge, or
  std::optional<int64_t> resize_height, resize_width;  // size.height / size.width
  int64_t resample = 3;                                // PIL's BICUBIC, the only filter implemented
  bool do_center_crop = true;
  int64_t crop_height = 224, crop_width = 224;
  bool do_rescale = true;
  double rescale_factor = 1.0 / 255.0;
  bool do_normalize = true;
  std::vector<double> image_mean{0.48145466, 0.4578275, 0.40821073};
  std::vector<double> image_std{0.26862954, 0.26130258, 0.27577711};

  // From FOLDER/preprocessor_config.json, else processor_config.json's "image_processor".
  // IoError naming the folder when neither exists; NotSupportedError for an image
  // processor type or resample filter other than CLIP's bicubic one.
  static ClipImageProcessor from_folder(const std::string& folder);
  // An image file -> pixel_values [1, 3, H, W] float32. Errors name the file: missing or
  // malformed (IoError), a channel count that is not RGB without do_convert_rgb (ValueError).
  Tensor preprocess_file(const std::string& path) const;
  Tensor preprocess(const Image8& image, const std::string& origin) const;
};

// PIL's Image.resize(size, BICUBIC) of 8-bit pixels (no reducing_gap): horizontal pass,
// then vertical, each with PIL's antialiased kernel in 22-bit fixed point and clipped to
// uint8.
Image8 pil_resize_bicubic(const Image8& image, int64_t height, int64_t width);

// LlavaProcessor's expansion: each `image_token` in `prompt` becomes `tokens_per_image`
// copies of it. ValueError naming the token when the prompt has none.
std::string expand_image_tokens(const std::string& prompt, const std::string& image_token,
                                int64_t tokens_per_image);

// What LlavaProcessor reads from FOLDER/processor_config.json: the placeholder
// ("image_token", default "<image>") and the tokens one image of pixel size
// height x width takes: (height / patch_size) * (width / patch_size) +
// num_additional_image_tokens, minus one for vision_feature_select_strategy "default".
struct ImagePromptConfig {
  std::string image_token = "<image>";
  int64_t patch_size = 0, num_additional_image_tokens = 0;
  std::string vision_feature_select_strategy;
  static ImagePromptConfig from_folder(const std::string& folder);
  int64_t tokens_per_image(int64_t height, int64_t width) const;
};

}  // namespace ingot::media
