#include "ingot/media/image_processor.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "ingot/core/error.h"
#include "ingot/media/auto_processor.h"
#include "ingot/ops/functional.h"

namespace ingot::media {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// PIL's bicubic filter (a = -0.5), support 2.
double bicubic(double x) {
  constexpr double a = -0.5;
  x = std::abs(x);
  if (x < 1.0) return ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0;
  if (x < 2.0) return (((x - 5.0) * x + 8.0) * x - 4.0) * a;
  return 0.0;
}

constexpr int kPrecisionBits = 32 - 8 - 2;  // PIL's fixed-point precision for 8-bit images

// One output sample's taps: the first input index and the fixed-point weights.
struct Taps {
  int64_t first = 0;
  std::vector<int32_t> weights;
};

// PIL's precompute_coeffs + normalize_coeffs_8bpc for resizing `in` samples to `out`.
std::vector<Taps> resample_taps(int64_t in, int64_t out) {
  const double scale = double(in) / double(out);
  const double filterscale = std::max(scale, 1.0);
  const double support = 2.0 * filterscale;
  std::vector<Taps> taps(static_cast<size_t>(out));
  for (int64_t xx = 0; xx < out; ++xx) {
    const double center = (double(xx) + 0.5) * scale;
    const double ss = 1.0 / filterscale;
    int64_t xmin = int64_t(center - support + 0.5);
    if (xmin < 0) xmin = 0;
    int64_t xmax = int64_t(center + support + 0.5);
    if (xmax > in) xmax = in;
    xmax -= xmin;
    std::vector<double> k(static_cast<size_t>(xmax));
    double ww = 0.0;
    for (int64_t x = 0; x < xmax; ++x) {
      k[size_t(x)] = bicubic((double(x + xmin) - center + 0.5) * ss);
      ww += k[size_t(x)];
    }
    Taps& t = taps[size_t(xx)];
    t.first = xmin;
    for (double w : k) {
      const double v = ww != 0.0 ? w / ww : w;
      t.weights.push_back(v < 0 ? int32_t(-0.5 + v * (1 << kPrecisionBits))
                                : int32_t(0.5 + v * (1 << kPrecisionBits)));
    }
  }
  return taps;
}

uint8_t clip8(int64_t v) {
  v >>= kPrecisionBits;
  return uint8_t(v < 0 ? 0 : v > 255 ? 255 : v);
}

// Resamples along one axis: `horizontal` (width) or vertical (height).
Image8 resample_axis(const Image8& in, int64_t out_size, bool horizontal) {
  const std::vector<Taps> taps = resample_taps(horizontal ? in.width : in.height, out_size);
  Image8 out{horizontal ? in.height : out_size, horizontal ? out_size : in.width, in.channels, {}};
  out.pixels.resize(size_t(out.height * out.width * out.channels));
  for (int64_t y = 0; y < out.height; ++y) {
    for (int64_t x = 0; x < out.width; ++x) {
      const Taps& t = taps[size_t(horizontal ? x : y)];
      for (int64_t c = 0; c < in.channels; ++c) {
        int64_t ss = int64_t(1) << (kPrecisionBits - 1);
        for (size_t i = 0; i < t.weights.size(); ++i) {
          const int64_t src = t.first + int64_t(i);
          ss += int64_t(horizontal ? in.at(y, src, c) : in.at(src, x, c)) * t.weights[i];
        }
        out.pixels[size_t((y * out.width + x) * out.channels + c)] = clip8(ss);
      }
    }
  }
  return out;
}

bool get_bool(const json& j, const char* key, bool fallback) {
  return j.contains(key) && j[key].is_boolean() ? j[key].get<bool>() : fallback;
}

}  // namespace

Image8 pil_resize_bicubic(const Image8& image, int64_t height, int64_t width) {
  Image8 out = image;
  if (width != image.width) out = resample_axis(out, width, /*horizontal=*/true);
  if (height != image.height) out = resample_axis(out, height, /*horizontal=*/false);
  return out;
}

ClipImageProcessor ClipImageProcessor::from_folder(const std::string& folder) {
  json config;
  std::string origin;
  for (const char* name : {"preprocessor_config.json", "processor_config.json"}) {
    const fs::path p = fs::path(folder) / name;
    if (!fs::exists(p)) continue;
    std::ifstream f(p);
    try {
      config = json::parse(f);
    } catch (const json::exception& e) {
      INGOT_THROW(IoError, "[image processor] '{}' is not valid JSON: {}", p.string(), e.what());
    }
    if (std::string(name) == "processor_config.json") {
      INGOT_CHECK(config.contains("image_processor") && config["image_processor"].is_object(),
                  IoError, "[image processor] '{}' has no \"image_processor\" object", p.string());
      config = config["image_processor"];
    }
    origin = p.string();
    break;
  }
  INGOT_CHECK(!origin.empty(), IoError,
              "[image processor] '{}' has no preprocessor_config.json or processor_config.json; "
              "pass preprocessed pixel_values with --input pixel_values=FILE.npy",
              folder);
  ClipImageProcessor p;
  const std::string type = config.value("image_processor_type", "CLIPImageProcessor");
  INGOT_CHECK(type == "CLIPImageProcessor" || type == "CLIPImageProcessorPil", NotSupportedError,
              "[image processor] '{}': image_processor_type '{}' is not supported (supported: "
              "CLIPImageProcessor)",
              origin, type);
  try {
    p.do_convert_rgb = get_bool(config, "do_convert_rgb", true);
    p.do_resize = get_bool(config, "do_resize", true);
    if (config.contains("size")) {
      const json& s = config["size"];
      if (s.contains("shortest_edge")) p.shortest_edge = s["shortest_edge"].get<int64_t>();
      if (s.contains("height")) p.resize_height = s["height"].get<int64_t>();
      if (s.contains("width")) p.resize_width = s["width"].get<int64_t>();
    } else {
      p.shortest_edge = 224;
    }
    p.resample = config.value("resample", int64_t(3));
    p.do_center_crop = get_bool(config, "do_center_crop", true);
    if (config.contains("crop_size")) {
      p.crop_height = config["crop_size"].at("height").get<int64_t>();
      p.crop_width = config["crop_size"].at("width").get<int64_t>();
    }
    p.do_rescale = get_bool(config, "do_rescale", true);
    p.rescale_factor = config.value("rescale_factor", 1.0 / 255.0);
    p.do_normalize = get_bool(config, "do_normalize", true);
    if (config.contains("image_mean"))
      p.image_mean = config["image_mean"].get<std::vector<double>>();
    if (config.contains("image_std")) p.image_std = config["image_std"].get<std::vector<double>>();
  } catch (const json::exception& e) {
    INGOT_THROW(IoError, "[image processor] '{}': {}", origin, e.what());
  }
  INGOT_CHECK(p.resample == 3, NotSupportedError,
              "[image processor] '{}': resample {} is not supported (only 3, PIL's BICUBIC)",
              origin, p.resample);
  INGOT_CHECK(!p.do_resize || p.shortest_edge || (p.resize_height && p.resize_width), IoError,
              "[image processor] '{}': size needs shortest_edge or height and width", origin);
  INGOT_CHECK(p.image_mean.size() == 3 && p.image_std.size() == 3, IoError,
              "[image processor] '{}': image_mean and image_std need 3 values (RGB)", origin);
  return p;
}

Tensor ClipImageProcessor::preprocess_file(const std::string& path) const {
  return preprocess(read_image(path), path);
}

Tensor ClipImageProcessor::preprocess(const Image8& decoded, const std::string& origin) const {
  Image8 image = decoded;
  if (do_convert_rgb) image = to_rgb(image);
  INGOT_CHECK(image.channels == 3, ValueError,
              "[image processor] image '{}' has {} channels; the model takes 3 (RGB): convert it "
              "to RGB (or set do_convert_rgb in preprocessor_config.json)",
              origin, image.channels);
  if (do_resize) {
    int64_t h = resize_height.value_or(0), w = resize_width.value_or(0);
    if (shortest_edge) {  // transformers' get_resize_output_image_size(default_to_square=False)
      const bool wide = image.width > image.height;
      const int64_t shorter = wide ? image.height : image.width;
      const int64_t longer = wide ? image.width : image.height;
      const int64_t new_long = int64_t(double(*shortest_edge) * double(longer) / double(shorter));
      h = wide ? *shortest_edge : new_long;
      w = wide ? new_long : *shortest_edge;
    }
    image = pil_resize_bicubic(image, h, w);
  }
  int64_t top = 0, left = 0, out_h = image.height, out_w = image.width;
  if (do_center_crop) {
    INGOT_CHECK(crop_height <= image.height && crop_width <= image.width, NotSupportedError,
                "[image processor] image '{}' is {}x{} after resizing, smaller than the crop "
                "{}x{} (padding is not implemented)",
                origin, image.height, image.width, crop_height, crop_width);
    top = (image.height - crop_height) / 2;
    left = (image.width - crop_width) / 2;
    out_h = crop_height;
    out_w = crop_width;
  }
  std::vector<float> values(size_t(3 * out_h * out_w));
  for (int64_t c = 0; c < 3; ++c) {
    const float mean = float(image_mean[size_t(c)]), std = float(image_std[size_t(c)]);
    for (int64_t y = 0; y < out_h; ++y) {
      for (int64_t x = 0; x < out_w; ++x) {
        float v = float(image.at(top + y, left + x, c));
        if (do_rescale) v = float(double(image.at(top + y, left + x, c)) * rescale_factor);
        if (do_normalize) v = (v - mean) / std;
        values[size_t((c * out_h + y) * out_w + x)] = v;
      }
    }
  }
  return Tensor::from_vector(values, {1, 3, out_h, out_w});
}

std::string expand_image_tokens(const std::string& prompt, const std::string& image_token,
                                int64_t tokens_per_image) {
  INGOT_CHECK(prompt.find(image_token) != std::string::npos, ValueError,
              "[ingot generate] --image was given but the prompt has no image placeholder '{}'; "
              "put it where the image goes (once per image), as the chat template does",
              image_token);
  std::string repeated;
  for (int64_t i = 0; i < tokens_per_image; ++i) repeated += image_token;
  std::string out;
  for (size_t at = 0;;) {
    const size_t next = prompt.find(image_token, at);
    if (next == std::string::npos) {
      out += prompt.substr(at);
      break;
    }
    out += prompt.substr(at, next - at) + repeated;
    at = next + image_token.size();
  }
  return out;
}

ImagePromptConfig ImagePromptConfig::from_folder(const std::string& folder) {
  const fs::path p = fs::path(folder) / "processor_config.json";
  INGOT_CHECK(fs::exists(p), IoError,
              "[image processor] '{}' has no processor_config.json (the image placeholder and "
              "patch size); pass preprocessed inputs with --input",
              folder);
  std::ifstream f(p);
  ImagePromptConfig c;
  try {
    const json j = json::parse(f);
    c.image_token = j.value("image_token", "<image>");
    c.patch_size = j.at("patch_size").get<int64_t>();
    c.num_additional_image_tokens = j.value("num_additional_image_tokens", int64_t(0));
    if (j.contains("vision_feature_select_strategy") &&
        j["vision_feature_select_strategy"].is_string())
      c.vision_feature_select_strategy = j["vision_feature_select_strategy"].get<std::string>();
  } catch (const json::exception& e) {
    INGOT_THROW(IoError, "[image processor] '{}': {}", p.string(), e.what());
  }
  INGOT_CHECK(c.patch_size > 0, IoError, "[image processor] '{}': patch_size must be > 0",
              p.string());
  return c;
}

int64_t ImagePromptConfig::tokens_per_image(int64_t height, int64_t width) const {
  int64_t n = (height / patch_size) * (width / patch_size) + num_additional_image_tokens;
  if (vision_feature_select_strategy == "default") n -= 1;
  return n;
}

namespace {

// LlavaProcessor: each image resized, cropped and normalised, each placeholder expanded to
// the image's tokens.
class LlavaProcessor final : public Processor {
 public:
  explicit LlavaProcessor(const std::string& folder)
      : image_(ClipImageProcessor::from_folder(folder)),
        prompt_(ImagePromptConfig::from_folder(folder)) {}
  std::string type() const override { return "LlavaProcessor"; }
  ProcessedImages images(const std::vector<std::string>& files,
                         const std::string& prompt) const override {
    std::vector<Tensor> each;
    for (const std::string& file : files) each.push_back(image_.preprocess_file(file));
    ProcessedImages out;
    out.pixel_values = cat(each, 0);
    size_t placeholders = 0;
    for (size_t at = prompt.find(prompt_.image_token); at != std::string::npos;
         at = prompt.find(prompt_.image_token, at + prompt_.image_token.size()))
      ++placeholders;
    INGOT_CHECK(placeholders == 0 || placeholders == files.size(), ValueError,
                "[LlavaProcessor] the prompt has {} image placeholders '{}' for {} images; give "
                "one per image",
                placeholders, prompt_.image_token, files.size());
    out.prompt = expand_image_tokens(
        prompt, prompt_.image_token,
        prompt_.tokens_per_image(out.pixel_values.size(2), out.pixel_values.size(3)));
    return out;
  }

 private:
  ClipImageProcessor image_;
  ImagePromptConfig prompt_;
};

std::unique_ptr<Processor> make_llava(const std::string& folder) {
  return std::make_unique<LlavaProcessor>(folder);
}
INGOT_REGISTER_PROCESSOR(llava, make_llava, "LlavaProcessor", "CLIPImageProcessor",
                         "CLIPImageProcessorPil");

}  // namespace

}  // namespace ingot::media
