#include "ingot/formats/safetensors.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "../ops/op_test_util.h"

namespace ingot::formats {
namespace {

namespace fs = std::filesystem;

class SafetensorsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ingot_st_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // Writes a file from a header JSON text and a data section.
  std::string write_raw(const std::string& name, const std::string& header, const std::string& data,
                        int64_t claimed_len = -1) {
    std::string p = path(name);
    std::ofstream f(p, std::ios::binary);
    uint64_t n = claimed_len >= 0 ? uint64_t(claimed_len) : header.size();
    for (int i = 0; i < 8; ++i) f.put(char((n >> (8 * i)) & 0xff));
    f << header << data;
    return p;
  }

  // Error message of opening `p`, or "" if it opened.
  static std::string open_error(const std::string& p) {
    try {
      SafetensorsFile::open(p);
    } catch (const IoError& e) {
      return e.what();
    }
    return "";
  }

  fs::path dir_;
};

TEST_F(SafetensorsTest, RoundTripsEveryDTypeWithoutCopy) {
  std::mt19937 rng(3);
  std::map<std::string, Tensor> tensors;
  for (DType t : testing::kAllDTypes) {
    tensors[std::string(dtype_name(t))] = testing::random_tensor({3, 5}, t, rng, 0, 50);
  }
  tensors["strided"] = transpose(tensors["float32"], 0, 1);
  tensors["empty"] = Tensor::empty({0, 4}, DType::F32);
  tensors["scalar"] = Tensor::scalar<int64_t>(42);
  save_safetensors(path("a.safetensors"), tensors, {{"format", "pt"}});

  SafetensorsFile f = SafetensorsFile::open(path("a.safetensors"));
  EXPECT_EQ(f.metadata().at("format"), "pt");
  ASSERT_EQ(f.entries().size(), tensors.size());
  for (const auto& [name, t] : tensors) {
    Tensor r = f.tensor(name);
    EXPECT_EQ(r.dtype(), t.dtype()) << name;
    EXPECT_EQ(r.sizes(), t.sizes()) << name;
    EXPECT_EQ(testing::values(r), testing::values(t)) << name;
    if (r.numel() > 0) {
      EXPECT_TRUE(r.storage()->is_mapped()) << name << " should be a view of the mapping";
      EXPECT_FALSE(r.storage()->writable());
    }
  }
  EXPECT_THROW(f.tensor("missing"), IoError);
}

TEST_F(SafetensorsTest, CorruptFilesAreErrorsNamingFileAndTensor) {
  const std::string data(16, '\0');
  struct Case {
    std::string header;
    std::string expected;  // substring of the message
  };
  const Case cases[] = {
      {R"({"w": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 32]}})", "lie outside"},
      {R"({"w": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 16]}})", "needs 24 bytes"},
      {R"({"w": {"dtype": "F8_E4M3", "shape": [2], "data_offsets": [0, 2]}})", "'F8_E4M3'"},
      {R"({"w": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}})", "non-negative"},
      {R"({"w": {"dtype": "F32", "shape": [2], "data_offsets": [8, 0]}})", "lie outside"},
      {R"({"w": {"dtype": "F32", "shape": [2]}})", "data_offsets"},
      {R"({"w": {"dtype": "F32", "shape": [4611686018427387904, 4], "data_offsets": [0, 16]}})",
       "more than 2^64"},
      {R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
           "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}})",
       "overlap"},
      {R"({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]})", "not valid JSON"},
      {R"([1, 2])", "not a JSON object"},
  };
  for (size_t i = 0; i < std::size(cases); ++i) {
    std::string p = write_raw("bad" + std::to_string(i) + ".safetensors", cases[i].header, data);
    std::string msg = open_error(p);
    EXPECT_NE(msg.find(cases[i].expected), std::string::npos) << cases[i].header << "\n" << msg;
    EXPECT_NE(msg.find(p), std::string::npos) << msg;
  }
  // Header length lying about the file size, and a file too short for a header.
  std::string p = write_raw("lie.safetensors", "{}", "", 1 << 20);
  EXPECT_NE(open_error(p).find("exceeds the file size"), std::string::npos);
  std::ofstream(path("short.safetensors")) << "abc";
  EXPECT_NE(open_error(path("short.safetensors")).find("too short"), std::string::npos);
}

TEST_F(SafetensorsTest, TruncatedFileIsAnError) {
  std::map<std::string, Tensor> tensors{{"w", Tensor::empty({64}, DType::F32, true)}};
  save_safetensors(path("t.safetensors"), tensors);
  fs::resize_file(path("t.safetensors"), fs::file_size(path("t.safetensors")) - 10);
  std::string msg = open_error(path("t.safetensors"));
  EXPECT_NE(msg.find("tensor 'w'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("truncated"), std::string::npos) << msg;
}

}  // namespace
}  // namespace ingot::formats
