// ingot's Qwen2-VL image pre-processing == transformers' Qwen2VLImageProcessorPil (Pillow
// 12.3, bicubic) on the fixture's images (tools/reference/make_qwen2vl_fixtures.py):
// image.png 37x50 -> 40x48 (rounding), image_big.png 70x90 -> 56x72 (over max_pixels),
// image_small.png 12x10 -> 24x16 (under min_pixels), image.jpg (libjpeg). pixel_values
// within 1e-6 (the 8-bit resize is exact, the float steps the same float32 operations),
// image_grid_thw exactly. Also smart_resize's rounding, the placeholder expansion and
// errors.
#include "ingot/media/qwen2_vl_processor.h"

#include <gtest/gtest.h>

#include "../ops/op_test_util.h"
#include "ingot/formats/npy.h"
#include "models/fixture_path.h"

namespace ingot::media {
namespace {

using ingot::testing::fixture_path;
using ingot::testing::max_abs_diff;

using Hw = std::pair<int64_t, int64_t>;
std::string qwen(const std::string& f) {
  return fixture_path("vlm/qwen2_vl/" + f);
}

std::vector<int64_t> values(const Tensor& t) {
  Tensor c = contiguous(to(t, DType::I64));
  return {c.data<int64_t>(), c.data<int64_t>() + c.numel()};
}

TEST(Qwen2VLProcessor, MatchesTransformersOnEveryResizePath) {
  const Qwen2VLImageProcessor p = Qwen2VLImageProcessor::from_folder(qwen(""));
  EXPECT_EQ(p.min_pixels, 256);
  EXPECT_EQ(p.max_pixels, 4096);
  EXPECT_EQ(p.patch_size, 4);
  for (const auto& [file, suffix] :
       std::vector<std::pair<std::string, std::string>>{{"image.png", ""},
                                                        {"image_big.png", "_big"},
                                                        {"image_small.png", "_small"},
                                                        {"image.jpg", "_jpeg"}}) {
    SCOPED_TRACE(file);
    Qwen2VLImageProcessor::Output out = p.preprocess_file(qwen(file));
    Tensor expected = formats::load_npy(qwen("pixel_values" + suffix + ".npy"));
    ASSERT_EQ(out.pixel_values.shape_string(), expected.shape_string());
    EXPECT_LE(max_abs_diff(out.pixel_values, expected), 1e-6);
    EXPECT_EQ(values(out.image_grid_thw),
              values(formats::load_npy(qwen("image_grid_thw" + suffix + ".npy"))));
  }
}

TEST(Qwen2VLProcessor, SmartResizeRoundsLikePython) {
  // round(37 / 8) = 5, round(50 / 8) = 6; 2.5 rounds to 2 (ties to even), 3.5 to 4.
  EXPECT_EQ(smart_resize(37, 50, 8, 256, 4096), Hw(40, 48));
  EXPECT_EQ(smart_resize(20, 28, 8, 64, 4096), Hw(16, 32));
  EXPECT_EQ(smart_resize(70, 90, 8, 256, 4096), Hw(56, 72));
  EXPECT_EQ(smart_resize(12, 10, 8, 256, 4096), Hw(24, 16));
  EXPECT_THROW(smart_resize(1, 300, 8, 64, 4096), ValueError);  // aspect ratio 300
}

TEST(Qwen2VLProcessor, ExpandsEachPlaceholderByItsImage) {
  EXPECT_EQ(expand_image_tokens("a <p> b <p> c", "<p>", std::vector<int64_t>{2, 3}),
            "a <p><p> b <p><p><p> c");
  EXPECT_THROW(expand_image_tokens("no placeholder", "<p>", std::vector<int64_t>{2}), ValueError);
  EXPECT_THROW(expand_image_tokens("<p> <p>", "<p>", std::vector<int64_t>{2}), ValueError);
}

TEST(Qwen2VLProcessor, ErrorsNameTheFile) {
  const Qwen2VLImageProcessor p = Qwen2VLImageProcessor::from_folder(qwen(""));
  try {
    p.preprocess_file(qwen("no_such_image.png"));
    FAIL() << "expected an IoError";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("no_such_image.png"), std::string::npos) << e.what();
  }
  Qwen2VLImageProcessor keep_gray = p;
  keep_gray.do_convert_rgb = false;
  Image8 gray{12, 10, 1, std::vector<uint8_t>(120, 7)};
  EXPECT_THROW(keep_gray.preprocess(gray, "gray.png"), ValueError);
  EXPECT_THROW(Qwen2VLImageProcessor::from_folder(fixture_path("no_such_folder")), IoError);
}

}  // namespace
}  // namespace ingot::media
