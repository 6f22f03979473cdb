// ingot's CLIP image pre-processing == transformers' CLIPImageProcessor (PIL backend,
// Pillow 12.3) on the LLaVA fixture's images (tools/reference/make_vlm_fixtures.py): a
// 40x48 RGB PNG resized to 32x38 with PIL's bicubic filter, centre-cropped to 32x32,
// rescaled and normalised. Tolerance 1e-6 (the 8-bit resize is reproduced exactly; the
// float steps are the same float32 operations). Also the JPEG and gray-PNG decoders, the
// prompt expansion, and the errors naming the file.
#include "ingot/media/image_processor.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "../ops/op_test_util.h"
#include "error_of.h"
#include "ingot/formats/npy.h"
#include "models/fixture_path.h"

namespace ingot::media {
namespace {

namespace fs = std::filesystem;
using ingot::testing::fixture_path;
using ingot::testing::max_abs_diff;

std::string llava(const std::string& f) {
  return fixture_path("vlm/llava/" + f);
}

// The first `bytes` bytes of `src` written to `dst`; returns dst.
std::string truncated_copy(const std::string& src, const fs::path& dst, size_t bytes) {
  std::ifstream in(src, std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(in)), {});
  std::ofstream(dst, std::ios::binary) << all.substr(0, bytes);
  return dst.string();
}

using ingot::testing::error_of;

TEST(ClipImageProcessor, PngEqualsTransformersProcessor) {
  const ClipImageProcessor p = ClipImageProcessor::from_folder(llava(""));
  EXPECT_EQ(p.shortest_edge, 32);
  Tensor pv = p.preprocess_file(llava("image.png"));
  EXPECT_EQ(pv.sizes(), (IntShape{1, 3, 32, 32}));
  EXPECT_LE(max_abs_diff(pv, formats::load_npy(llava("pixel_values.npy"))), 1e-6);
}

TEST(ClipImageProcessor, JpegAndGrayPngEqualTransformersProcessor) {
  const ClipImageProcessor p = ClipImageProcessor::from_folder(llava(""));
  EXPECT_LE(max_abs_diff(p.preprocess_file(llava("image.jpg")),
                         formats::load_npy(llava("pixel_values_jpeg.npy"))),
            1e-6);
  EXPECT_EQ(read_image(llava("image_gray.png")).channels, 1);
  EXPECT_LE(max_abs_diff(p.preprocess_file(llava("image_gray.png")),
                         formats::load_npy(llava("pixel_values_gray.npy"))),
            1e-6);
}

TEST(ClipImageProcessor, ResizeIsPilBicubicNotNearest) {
  // Downscaling 40x48 -> 32x38 mixes neighbours: some resized pixel differs from every
  // source pixel of its row (a nearest-neighbour resize would not).
  Image8 src = read_image(llava("image.png"));
  Image8 out = pil_resize_bicubic(src, 32, 38);
  EXPECT_EQ(out.height, 32);
  EXPECT_EQ(out.width, 38);
  EXPECT_NE(out.at(16, 19, 0), src.at(20, 24, 0));
}

TEST(ClipImageProcessor, ErrorsNameTheFile) {
  const ClipImageProcessor p = ClipImageProcessor::from_folder(llava(""));
  const fs::path tmp = fs::temp_directory_path() / ("ingot_img_" + std::to_string(::getpid()));
  fs::create_directories(tmp);
  const std::string missing = (tmp / "missing.png").string();
  EXPECT_NE(error_of<IoError>([&] { p.preprocess_file(missing); }).find(missing),
            std::string::npos);
  const std::string text = (tmp / "notes.png").string();
  std::ofstream(text) << "not an image";
  EXPECT_NE(error_of<IoError>([&] { p.preprocess_file(text); }).find("neither a PNG nor a JPEG"),
            std::string::npos);
  // A PNG and a JPEG cut short after their headers.
  const std::string cut = truncated_copy(llava("image.png"), tmp / "cut.png", 60);
  EXPECT_NE(error_of<IoError>([&] { p.preprocess_file(cut); }).find("malformed PNG"),
            std::string::npos);
  const std::string cut_jpeg = truncated_copy(llava("image.jpg"), tmp / "cut.jpg", 40);
  EXPECT_NE(error_of<IoError>([&] { p.preprocess_file(cut_jpeg); }).find(cut_jpeg),
            std::string::npos);
  // A gray image without do_convert_rgb: the channel count is named.
  ClipImageProcessor no_convert = p;
  no_convert.do_convert_rgb = false;
  const std::string gray = llava("image_gray.png");
  const std::string e = error_of<ValueError>([&] { no_convert.preprocess_file(gray); });
  EXPECT_NE(e.find("has 1 channels"), std::string::npos) << e;
  EXPECT_NE(e.find(gray), std::string::npos) << e;
  fs::remove_all(tmp);
}

TEST(ImagePrompt, ExpandsThePlaceholderAsLlavaProcessor) {
  const ImagePromptConfig c = ImagePromptConfig::from_folder(llava(""));
  EXPECT_EQ(c.image_token, "<image>");
  EXPECT_EQ(c.tokens_per_image(32, 32), 16);  // 4 x 4 patches + class token - 1 (default)
  EXPECT_EQ(expand_image_tokens("a <image> b", "<image>", 3), "a <image><image><image> b");
  EXPECT_NE(error_of<ValueError>([] {
              expand_image_tokens("no image here", "<image>", 3);
            }).find("no image placeholder '<image>'"),
            std::string::npos);
}

}  // namespace
}  // namespace ingot::media
