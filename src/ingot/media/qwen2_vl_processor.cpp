#include "ingot/media/qwen2_vl_processor.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "ingot/core/error.h"
#include "ingot/media/auto_processor.h"
#include "ingot/media/image_processor.h"
#include "ingot/ops/functional.h"

namespace ingot::media {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// Python's round(): to nearest, ties to even (the default floating-point rounding mode).
int64_t round_half_even(double x) {
  return int64_t(std::nearbyint(x));
}

json read_config(const fs::path& p) {
  std::ifstream f(p);
  INGOT_CHECK(f.good(), IoError,
              "[image processor] '{}' is missing; pass preprocessed inputs with --input "
              "pixel_values=FILE.npy --input image_grid_thw=FILE.npy",
              p.string());
  try {
    return json::parse(f);
  } catch (const json::exception& e) {
    INGOT_THROW(IoError, "[image processor] '{}' is not valid JSON: {}", p.string(), e.what());
  }
}

}  // namespace

std::pair<int64_t, int64_t> smart_resize(int64_t height, int64_t width, int64_t factor,
                                         int64_t min_pixels, int64_t max_pixels) {
  INGOT_CHECK(height > 0 && width > 0, ValueError, "[image processor] the image is {}x{}", height,
              width);
  const double ratio = double(std::max(height, width)) / double(std::min(height, width));
  INGOT_CHECK(ratio <= 200.0, ValueError,
              "[image processor] the image is {}x{}: its aspect ratio {} must be at most 200",
              height, width, ratio);
  const double f = double(factor);
  int64_t h = round_half_even(double(height) / f) * factor;
  int64_t w = round_half_even(double(width) / f) * factor;
  if (h * w > max_pixels) {
    const double beta = std::sqrt(double(height * width) / double(max_pixels));
    h = std::max(factor, int64_t(std::floor(double(height) / beta / f)) * factor);
    w = std::max(factor, int64_t(std::floor(double(width) / beta / f)) * factor);
  } else if (h * w < min_pixels) {
    const double beta = std::sqrt(double(min_pixels) / double(height * width));
    h = int64_t(std::ceil(double(height) * beta / f)) * factor;
    w = int64_t(std::ceil(double(width) * beta / f)) * factor;
  }
  return {h, w};
}

Qwen2VLImageProcessor Qwen2VLImageProcessor::from_folder(const std::string& folder) {
  const fs::path p = fs::path(folder) / "preprocessor_config.json";
  const json c = read_config(p);
  Qwen2VLImageProcessor q;
  try {
    auto flag = [&](const char* k, bool fallback) {
      return c.contains(k) && c[k].is_boolean() ? c[k].get<bool>() : fallback;
    };
    q.do_convert_rgb = flag("do_convert_rgb", true);
    q.do_resize = flag("do_resize", true);
    q.do_rescale = flag("do_rescale", true);
    q.do_normalize = flag("do_normalize", true);
    // transformers 5: size {shortest_edge: min_pixels, longest_edge: max_pixels}; older
    // files: min_pixels / max_pixels.
    if (c.contains("size") && c["size"].is_object()) {
      q.min_pixels = c["size"].value("shortest_edge", q.min_pixels);
      q.max_pixels = c["size"].value("longest_edge", q.max_pixels);
    }
    if (c.contains("min_pixels") && c["min_pixels"].is_number())
      q.min_pixels = c["min_pixels"].get<int64_t>();
    if (c.contains("max_pixels") && c["max_pixels"].is_number())
      q.max_pixels = c["max_pixels"].get<int64_t>();
    q.patch_size = c.value("patch_size", q.patch_size);
    q.temporal_patch_size = c.value("temporal_patch_size", q.temporal_patch_size);
    q.merge_size = c.value("merge_size", q.merge_size);
    q.resample = c.value("resample", q.resample);
    q.rescale_factor = c.value("rescale_factor", q.rescale_factor);
    if (c.contains("image_mean")) q.image_mean = c["image_mean"].get<std::vector<double>>();
    if (c.contains("image_std")) q.image_std = c["image_std"].get<std::vector<double>>();
  } catch (const json::exception& e) {
    INGOT_THROW(IoError, "[image processor] '{}': {}", p.string(), e.what());
  }
  INGOT_CHECK(q.resample == 3, NotSupportedError,
              "[image processor] '{}': resample {} is not supported (only 3, PIL's BICUBIC)",
              p.string(), q.resample);
  INGOT_CHECK(q.patch_size > 0 && q.temporal_patch_size > 0 && q.merge_size > 0 &&
                  q.min_pixels > 0 && q.max_pixels >= q.min_pixels,
              IoError,
              "[image processor] '{}': patch_size, temporal_patch_size, merge_size must be > 0 "
              "and 0 < size.shortest_edge <= size.longest_edge",
              p.string());
  INGOT_CHECK(q.image_mean.size() == 3 && q.image_std.size() == 3, IoError,
              "[image processor] '{}': image_mean and image_std need 3 values (RGB)", p.string());
  return q;
}

Qwen2VLImageProcessor::Output Qwen2VLImageProcessor::preprocess_file(
    const std::string& path) const {
  return preprocess(read_image(path), path);
}

Qwen2VLImageProcessor::Output Qwen2VLImageProcessor::preprocess(const Image8& decoded,
                                                                const std::string& origin) const {
  Image8 image = do_convert_rgb ? to_rgb(decoded) : decoded;
  INGOT_CHECK(image.channels == 3, ValueError,
              "[image processor] image '{}' has {} channels; the model takes 3 (RGB): convert it "
              "to RGB (or set do_convert_rgb in preprocessor_config.json)",
              origin, image.channels);
  const int64_t factor = patch_size * merge_size;
  if (do_resize) {
    auto [h, w] = smart_resize(image.height, image.width, factor, min_pixels, max_pixels);
    image = pil_resize_bicubic(image, h, w);
  }
  INGOT_CHECK(image.height % factor == 0 && image.width % factor == 0, ValueError,
              "[image processor] image '{}' is {}x{}, not a multiple of patch_size * merge_size "
              "{} (set do_resize)",
              origin, image.height, image.width, factor);
  // Rescale and normalise as ClipImageProcessor does: [3, H, W] float32.
  const int64_t H = image.height, W = image.width, P = patch_size, T = temporal_patch_size,
                m = merge_size;
  std::vector<float> chw(size_t(3 * H * W));
  for (int64_t c = 0; c < 3; ++c) {
    const float mean = float(image_mean[size_t(c)]), sd = float(image_std[size_t(c)]);
    for (int64_t y = 0; y < H; ++y) {
      for (int64_t x = 0; x < W; ++x) {
        const uint8_t px = image.at(y, x, c);
        float v = do_rescale ? float(double(px) * rescale_factor) : float(px);
        if (do_normalize) v = (v - mean) / sd;
        chw[size_t((c * H + y) * W + x)] = v;
      }
    }
  }
  // Patches in (block row, block column, row in block, column in block) order, each
  // (C, T, P, P).
  const int64_t gh = H / P, gw = W / P, dim = 3 * T * P * P;
  std::vector<float> out(size_t(gh * gw * dim));
  size_t at = 0;
  for (int64_t bh = 0; bh < gh / m; ++bh)
    for (int64_t bw = 0; bw < gw / m; ++bw)
      for (int64_t mh = 0; mh < m; ++mh)
        for (int64_t mw = 0; mw < m; ++mw) {
          const int64_t top = (bh * m + mh) * P, left = (bw * m + mw) * P;
          for (int64_t c = 0; c < 3; ++c)
            for (int64_t t = 0; t < T; ++t)
              for (int64_t y = 0; y < P; ++y)
                for (int64_t x = 0; x < P; ++x)
                  out[at++] = chw[size_t((c * H + top + y) * W + left + x)];
        }
  return {Tensor::from_vector(out, {gh * gw, dim}),
          Tensor::from_vector(std::vector<int64_t>{1, gh, gw}, {1, 3})};
}

std::string expand_image_tokens(const std::string& prompt, const std::string& image_token,
                                const std::vector<int64_t>& tokens_per_image) {
  size_t placeholders = 0;
  for (size_t at = prompt.find(image_token); at != std::string::npos;
       at = prompt.find(image_token, at + image_token.size()))
    ++placeholders;
  INGOT_CHECK(placeholders == tokens_per_image.size(), ValueError,
              "[ingot generate] the prompt has {} image placeholders '{}' for {} images; put one "
              "where each image goes, as the chat template does",
              placeholders, image_token, tokens_per_image.size());
  std::string out;
  size_t at = 0;
  for (int64_t count : tokens_per_image) {
    const size_t next = prompt.find(image_token, at);
    out += prompt.substr(at, next - at);
    for (int64_t i = 0; i < count; ++i) out += image_token;
    at = next + image_token.size();
  }
  return out + prompt.substr(at);
}

namespace {

// Qwen2VLProcessor: each image smart-resized and flattened into patches, each placeholder
// expanded to its image's t * h * w / merge^2 tokens.
class Qwen2VLProcessor final : public Processor {
 public:
  explicit Qwen2VLProcessor(const std::string& folder)
      : image_(Qwen2VLImageProcessor::from_folder(folder)) {
    // processor_config.json's image_token, else Qwen2VLProcessor's default.
    std::ifstream f(fs::path(folder) / "processor_config.json");
    const json j = json::parse(f, nullptr, /*allow_exceptions=*/false);
    if (j.is_object() && j.contains("image_token") && j["image_token"].is_string())
      image_token_ = j["image_token"].get<std::string>();
  }
  std::string type() const override { return "Qwen2VLProcessor"; }
  bool patch_input() const override { return true; }
  ProcessedImages images(const std::vector<std::string>& files,
                         const std::string& prompt) const override {
    std::vector<Tensor> patches, grids;
    std::vector<int64_t> tokens;
    for (const std::string& file : files) {
      Qwen2VLImageProcessor::Output out = image_.preprocess_file(file);
      const int64_t* g = out.image_grid_thw.data<int64_t>();
      tokens.push_back(g[0] * g[1] * g[2] / (image_.merge_size * image_.merge_size));
      patches.push_back(out.pixel_values);
      grids.push_back(out.image_grid_thw);
    }
    return {cat(patches, 0), cat(grids, 0), expand_image_tokens(prompt, image_token_, tokens)};
  }

 private:
  Qwen2VLImageProcessor image_;
  std::string image_token_ = "<|image_pad|>";
};

std::unique_ptr<Processor> make_qwen2_vl(const std::string& folder) {
  return std::make_unique<Qwen2VLProcessor>(folder);
}
INGOT_REGISTER_PROCESSOR(qwen2_vl, make_qwen2_vl, "Qwen2VLProcessor", "Qwen2VLImageProcessor",
                         "Qwen2VLImageProcessorFast", "Qwen2VLImageProcessorPil");

}  // namespace

}  // namespace ingot::media
