// The GGUF writer: what it writes, the reader reads back unchanged (every metadata type
// the writer has, plain and block tensors, alignment and offsets), block formats decode
// to the levels and f16-rounded scales given, and bad input is a clear error that leaves
// no file behind.
#include "ingot/formats/gguf_writer.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "error_of.h"
#include "ingot/core/error.h"
#include "ingot/core/half.h"
#include "ingot/formats/ggml_blocks.h"
#include "ingot/formats/gguf_dequant.h"

namespace ingot::formats {
namespace {

namespace fs = std::filesystem;
using ingot::testing::error_of;

fs::path temp_file(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("ingot_gguf_writer_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir / name;
}

float f16(float x) { return Half::to_float(Half::from_float(x)); }

TEST(GgufWriter, MetadataAndTensorsReadBackUnchanged) {
  GgufWriter w;
  w.set("general.architecture", gguf_string("llama"));
  w.set("general.alignment", gguf_u32(32));
  w.set("a.u32", gguf_u32(4000000000u));
  w.set("a.i32", gguf_i32(-7));
  w.set("a.f32", gguf_f32(0.125f));
  w.set("a.bool", gguf_bool(true));
  w.set("a.strings", gguf_string_array({"x", "", "\xe2\x96\x81y"}));
  w.set("a.floats", gguf_f32_array({1.5f, -2.0f}));
  w.set("a.ints", gguf_i32_array({3, -4, 5}));
  // F32 [2, 3] (rows of 3: 12 bytes, so the next tensor's offset needs padding).
  const std::vector<float> plain = {1, 2, 3, 4, 5, 6};
  std::vector<uint8_t> bytes;
  put_f32(plain.data(), 6, bytes);
  w.add_tensor("plain", {2, 3}, GgmlType::F32, bytes);
  bytes.clear();
  put_f16(plain.data(), 6, bytes);
  w.add_tensor("half", {3, 2}, GgmlType::F16, bytes);
  bytes.clear();
  put_bf16(plain.data(), 6, bytes);
  w.add_tensor("bhalf", {6}, GgmlType::BF16, bytes);
  // Block types: one row of 64 (two blocks) each, levels chosen per element.
  std::vector<uint8_t> q8, q40, q41;
  int8_t l8[32];
  uint8_t l4[32];
  for (int b = 0; b < 2; ++b) {
    for (int i = 0; i < 32; ++i) {
      l8[i] = int8_t((i * 7 + b) % 255 - 127);
      l4[i] = uint8_t((i * 5 + b) % 16);
    }
    put_q8_0_block(0.01f * float(b + 1), l8, q8);
    put_q4_0_block(0.3f + float(b), l4, q40);
    put_q4_1_block(0.07f, -0.5f * float(b + 1), l4, q41);
  }
  w.add_tensor("q8", {1, 64}, GgmlType::Q8_0, q8);
  w.add_tensor("q40", {1, 64}, GgmlType::Q4_0, q40);
  w.add_tensor("q41", {1, 64}, GgmlType::Q4_1, q41);
  const fs::path path = temp_file("all.gguf");
  w.write(path.string());
  EXPECT_FALSE(fs::exists(path.string() + ".tmp"));

  GgufFile f = GgufFile::open(path.string());
  EXPECT_EQ(f.version(), 3u);
  EXPECT_EQ(f.get_string("general.architecture"), "llama");
  EXPECT_EQ(f.get_int("a.u32"), 4000000000LL);
  EXPECT_EQ(f.find("a.u32")->type, GgufType::U32);
  EXPECT_EQ(f.get_int("a.i32"), -7);
  EXPECT_EQ(f.get_double("a.f32"), 0.125);
  EXPECT_EQ(f.get_optional_bool("a.bool"), true);
  EXPECT_EQ(f.get_string_array("a.strings"),
            (std::vector<std::string>{"x", "", "\xe2\x96\x81y"}));
  EXPECT_EQ(f.get_number_array("a.floats"), (std::vector<double>{1.5, -2.0}));
  EXPECT_EQ(f.get_number_array("a.ints"), (std::vector<double>{3, -4, 5}));
  ASSERT_EQ(f.tensors().size(), 6u);
  for (const GgufTensorInfo& t : f.tensors()) EXPECT_EQ(t.offset % 32, 0u) << t.name;

  const GgufTensorInfo& p = f.tensor_info("plain");
  EXPECT_EQ(p.ne, (std::vector<int64_t>{3, 2}));  // ne: the shape reversed
  EXPECT_EQ(p.shape(), (std::vector<int64_t>{2, 3}));
  auto decode = [&](const std::string& name) {
    const GgufTensorInfo& t = f.tensor_info(name);
    std::vector<float> out(size_t(t.numel()));
    dequantize_row(t.type, f.tensor_data(t), out.data(), t.numel());
    return out;
  };
  EXPECT_EQ(decode("plain"), plain);
  EXPECT_EQ(decode("half"), plain);   // small integers are exact in f16 / bf16
  EXPECT_EQ(decode("bhalf"), plain);
  const std::vector<float> d8 = decode("q8"), d40 = decode("q40"), d41 = decode("q41");
  for (int b = 0; b < 2; ++b) {
    for (int i = 0; i < 32; ++i) {
      const float level8 = float((i * 7 + b) % 255 - 127), level4 = float((i * 5 + b) % 16);
      EXPECT_EQ(d8[size_t(b * 32 + i)], level8 * f16(0.01f * float(b + 1)));
      EXPECT_EQ(d40[size_t(b * 32 + i)], (level4 - 8.0f) * f16(0.3f + float(b)));
      EXPECT_EQ(d41[size_t(b * 32 + i)], level4 * f16(0.07f) + f16(-0.5f * float(b + 1)));
    }
  }
}

TEST(GgufWriter, BadInputIsAClearErrorAndLeavesNoFile) {
  GgufWriter w;
  w.set("k", gguf_u32(1));
  EXPECT_NE(error_of<ValueError>([&] { w.set("k", gguf_u32(2)); }).find("'k' is set twice"),
            std::string::npos);
  EXPECT_NE(error_of<ValueError>([&] {
              w.add_tensor("t", {2, 3}, GgmlType::F32, std::vector<uint8_t>(20));
            }).find("tensor 't': 20 bytes given"),
            std::string::npos);
  EXPECT_NE(error_of<ValueError>([&] {
              w.add_tensor("q", {2, 48}, GgmlType::Q8_0, std::vector<uint8_t>(102));
            }).find("not a whole number of Q8_0 blocks"),
            std::string::npos);
  w.add_tensor("t", {1}, GgmlType::F32, std::vector<uint8_t>(4));
  EXPECT_NE(error_of<ValueError>([&] {
              w.add_tensor("t", {1}, GgmlType::F32, std::vector<uint8_t>(4));
            }).find("'t' is added twice"),
            std::string::npos);
  const fs::path missing = temp_file("x") / "no_such_dir" / "m.gguf";
  EXPECT_NE(error_of<IoError>([&] { w.write(missing.string()); }).find("cannot create"),
            std::string::npos);
  EXPECT_FALSE(fs::exists(missing.string() + ".tmp"));
  // A tensor made while writing: a wrong size or an error while making it leaves no file.
  GgufWriter lazy;
  lazy.add_tensor("m", {4}, GgmlType::F32, [] { return std::vector<uint8_t>(12); });
  const fs::path lazy_path = temp_file("lazy.gguf");
  EXPECT_NE(error_of<ValueError>([&] { lazy.write(lazy_path.string()); })
                .find("tensor 'm': 12 bytes made, a F32 tensor takes 16"),
            std::string::npos);
  EXPECT_FALSE(fs::exists(lazy_path));
  EXPECT_FALSE(fs::exists(lazy_path.string() + ".tmp"));
  GgufWriter throws;
  throws.add_tensor("m", {4}, GgmlType::F32, []() -> std::vector<uint8_t> {
    throw NotSupportedError("cannot make it");
  });
  EXPECT_NE(error_of<NotSupportedError>([&] { throws.write(lazy_path.string()); }).find("cannot make it"),
            std::string::npos);
  EXPECT_FALSE(fs::exists(lazy_path.string() + ".tmp"));
  GgufWriter good;
  good.add_tensor("m", {4}, GgmlType::F32, [] { return std::vector<uint8_t>(16, 0); });
  good.write(lazy_path.string());
  EXPECT_EQ(GgufFile::open(lazy_path.string()).tensor_info("m").nbytes, 16u);

  GgufWriter a;
  a.set("general.alignment", gguf_u32(64));
  EXPECT_NE(error_of<ValueError>([&] { a.write(temp_file("a.gguf").string()); })
                .find("general.alignment disagrees"),
            std::string::npos);
}

}  // namespace
}  // namespace ingot::formats
