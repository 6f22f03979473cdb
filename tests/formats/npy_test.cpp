#include "ingot/formats/npy.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "../ops/op_test_util.h"

namespace ingot::formats {
namespace {

namespace fs = std::filesystem;

std::string temp_path(const std::string& name) {
  return (fs::temp_directory_path() / ("ingot_npy_" + std::to_string(::getpid()) + name)).string();
}

// A .npy v1.0 image with the given header dict text and data bytes.
std::string npy_image(const std::string& dict, const std::string& data) {
  std::string header = dict;
  header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += char(1);
  out += char(0);
  out += char(header.size() & 0xff);
  out += char(header.size() >> 8);
  return out + header + data;
}

Tensor parse(const std::string& image) {
  return parse_npy(reinterpret_cast<const uint8_t*>(image.data()), image.size(), "test.npy");
}

std::string error_of(const std::string& image) {
  try {
    parse(image);
  } catch (const IoError& e) {
    return e.what();
  }
  return "";
}

TEST(Npy, RoundTripsEveryNumpyDType) {
  std::mt19937 rng(5);
  for (DType t : testing::kAllDTypes) {
    if (t == DType::BF16) continue;
    for (IntShape shape : {IntShape{2, 3}, IntShape{}, IntShape{4}, IntShape{0, 2}}) {
      Tensor x = testing::random_tensor(shape, t, rng, 0, 20);
      std::string p = temp_path("rt.npy");
      save_npy(p, t == DType::F32 && shape.size() == 2 ? transpose(x, 0, 1) : x);
      Tensor y = load_npy(p);
      Tensor expected = t == DType::F32 && shape.size() == 2 ? transpose(x, 0, 1) : x;
      EXPECT_EQ(y.dtype(), t);
      EXPECT_EQ(y.sizes(), expected.sizes());
      EXPECT_EQ(testing::values(y), testing::values(expected));
      fs::remove(p);
    }
  }
  EXPECT_THROW(save_npy(temp_path("bf.npy"), Tensor::empty({2}, DType::BF16)), IoError);
}

TEST(Npy, FortranOrderIsReturnedContiguous) {
  // A 2x3 float32 array [[0,1,2],[3,4,5]] stored column-major: 0 3 1 4 2 5.
  std::vector<float> col_major{0, 3, 1, 4, 2, 5};
  std::string data(reinterpret_cast<const char*>(col_major.data()), 24);
  Tensor t = parse(npy_image("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", data));
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_EQ(testing::values(t), (std::vector<double>{0, 1, 2, 3, 4, 5}));
}

TEST(Npy, MalformedFilesAreErrorsNamingTheProblem) {
  const std::string f4x2(8, '\0');
  EXPECT_NE(error_of("NUMPY").find("not a .npy file"), std::string::npos);
  EXPECT_NE(error_of(npy_image("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", f4x2))
                .find("'>f4' is not supported"),
            std::string::npos);
  EXPECT_NE(error_of(npy_image("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", f4x2))
                .find("truncated"),
            std::string::npos);
  EXPECT_NE(error_of(npy_image("{'descr': '<f4', 'shape': (2,), }", f4x2)).find("fortran_order"),
            std::string::npos);
  EXPECT_NE(error_of(npy_image("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }", f4x2))
                .find("non-negative"),
            std::string::npos);
  EXPECT_NE(error_of(npy_image("{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }",
                               std::string("\x01\x07", 2)))
                .find("byte value 7"),
            std::string::npos);
  std::string image = npy_image("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", f4x2);
  image[8] = char(0xff);  // header length beyond the file
  image[9] = char(0xff);
  EXPECT_NE(error_of(image).find("exceeds the file size"), std::string::npos);
  EXPECT_NE(
      error_of(
          npy_image("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }",
                    f4x2))
          .find("too large"),
      std::string::npos);
}

}  // namespace
}  // namespace ingot::formats
