// Qwen2-VL's image pre-processing (transformers' Qwen2VLImageProcessor, PIL backend) and
// Qwen2VLProcessor's placeholder expansion, from a model folder's preprocessor_config.json:
//
//   image (PNG / JPEG) -> RGB (do_convert_rgb) -> smart_resize: height and width rounded to
//   multiples of factor = patch_size * merge_size with the pixel count kept within
//   [min_pixels, max_pixels] (size.shortest_edge / size.longest_edge) -> PIL's bicubic
//   resize (8-bit fixed point, as ClipImageProcessor) -> x * rescale_factor (double, then
//   float32) -> (x - mean) / std (float32) -> patches: for each merge block (row-major),
//   its merge x merge patches (row-major), each C x temporal_patch_size x P x P values
//   (the image repeated over the temporal axis) -> pixel_values [patches, C*T*P*P] and
//   image_grid_thw (1, H / P, W / P).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "ingot/core/tensor.h"
#include "ingot/media/image_io.h"

namespace ingot::media {

// transformers' smart_resize (Python's round-half-even): (height, width) multiples of
// `factor` with min_pixels <= height * width <= max_pixels. ValueError naming the image
// size when its aspect ratio is over 200.
std::pair<int64_t, int64_t> smart_resize(int64_t height, int64_t width, int64_t factor,
                                         int64_t min_pixels, int64_t max_pixels);

struct Qwen2VLImageProcessor {
  bool do_convert_rgb = true, do_resize = true, do_rescale = true, do_normalize = true;
  int64_t min_pixels = 56 * 56, max_pixels = 28 * 28 * 1280;
  int64_t patch_size = 14, temporal_patch_size = 2, merge_size = 2;
  int64_t resample = 3;  // PIL's BICUBIC, the only filter implemented
  double rescale_factor = 1.0 / 255.0;
  std::vector<double> image_mean{0.48145466, 0.4578275, 0.40821073};
  std::vector<double> image_std{0.26862954, 0.26130258, 0.27577711};

  struct Output {
    Tensor pixel_values;    // [patches, 3 * T * P * P] float32
    Tensor image_grid_thw;  // [1, 3] int64
  };
  // From FOLDER/preprocessor_config.json. IoError naming the file when absent or
  // malformed; NotSupportedError for another filter.
  static Qwen2VLImageProcessor from_folder(const std::string& folder);
  // Errors name the file (IoError) or its channel count (ValueError).
  Output preprocess_file(const std::string& path) const;
  Output preprocess(const Image8& image, const std::string& origin) const;
};

// Qwen2VLProcessor's expansion: the i-th `image_token` of `prompt` becomes
// tokens_per_image[i] copies of it. ValueError naming the token when the prompt's
// placeholders and the images differ in number.
std::string expand_image_tokens(const std::string& prompt, const std::string& image_token,
                                const std::vector<int64_t>& tokens_per_image);

}  // namespace ingot::media
