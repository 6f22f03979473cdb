// The GGUF reader: the fixture the gguf package wrote (every metadata value type,
// alignment 64), and malformed files built byte by byte here, each a clear error.
#include "ingot/formats/gguf.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "error_of.h"
#include "ingot/core/error.h"

namespace ingot::formats {
namespace {

namespace fs = std::filesystem;
using ingot::testing::error_of;

const std::string kFixture = std::string(INGOT_FIXTURES_DIR) + "/gguf/tensors.gguf";

// Builds a GGUF image field by field (little-endian).
struct Builder {
  std::string bytes;
  void u32(uint32_t v) { bytes.append(reinterpret_cast<const char*>(&v), 4); }
  void u64(uint64_t v) { bytes.append(reinterpret_cast<const char*>(&v), 8); }
  void str(const std::string& s) {
    u64(s.size());
    bytes += s;
  }
  void header(uint64_t n_tensors, uint64_t n_kv, uint32_t version = 3) {
    bytes += "GGUF";
    u32(version);
    u64(n_tensors);
    u64(n_kv);
  }
  void kv_u32(const std::string& key, uint32_t v) {
    str(key);
    u32(4);
    u32(v);
  }
  // A tensor info of one dim of `n` elements of ggml `type` at data `offset`.
  void tensor(const std::string& name, uint64_t n, uint32_t type, uint64_t offset) {
    str(name);
    u32(1);
    u64(n);
    u32(type);
    u64(offset);
  }
  void pad_and_data(size_t data_bytes, size_t alignment = 32) {
    bytes.append((alignment - bytes.size() % alignment) % alignment, '\0');
    bytes.append(data_bytes, '\x01');
  }
};

std::string parse_error(const std::string& image) {
  return error_of<Error>([&] {
    parse_gguf(reinterpret_cast<const uint8_t*>(image.data()), image.size(), "bad.gguf");
  });
}

TEST(Gguf, ReadsEveryMetadataValueTypeOfTheFixture) {
  GgufFile f = GgufFile::open(kFixture);
  EXPECT_EQ(f.version(), 3u);
  EXPECT_EQ(f.alignment(), 64u);
  EXPECT_EQ(f.get_string("general.architecture"), "ingot-test");
  EXPECT_EQ(f.get_int("test.u8"), 200);
  EXPECT_EQ(f.get_int("test.i8"), -100);
  EXPECT_EQ(f.get_int("test.u16"), 60000);
  EXPECT_EQ(f.get_int("test.i16"), -30000);
  EXPECT_EQ(f.get_int("test.u32"), 4000000000);
  EXPECT_EQ(f.get_int("test.i32"), -2000000000);
  EXPECT_EQ(f.get_double("test.f32"), 0.125);
  EXPECT_EQ(f.get_int("test.u64"), int64_t(1) << 40);
  EXPECT_EQ(f.get_int("test.i64"), -(int64_t(1) << 40));
  EXPECT_EQ(f.get_double("test.f64"), -2.5);
  EXPECT_EQ(f.get_optional_bool("test.bool"), true);
  EXPECT_EQ(f.get_string("test.string"), "héllo ▁world");
  EXPECT_EQ(f.get_string_array("test.strings"),
            (std::vector<std::string>{"a", "", "ü€", "<|im_end|>"}));
  EXPECT_EQ(f.get_number_array("test.ints"), (std::vector<double>{1, -2, 3}));
  EXPECT_EQ(f.get_number_array("test.floats"), (std::vector<double>{0.5, -1.5}));
  const GgufValue* nested = f.find("test.nested");
  ASSERT_NE(nested, nullptr);
  ASSERT_EQ(nested->element_type, GgufType::Array);
  ASSERT_EQ(nested->array().size(), 2u);
  EXPECT_EQ(nested->array()[1].array().size(), 1u);
  EXPECT_FALSE(f.has("test.absent"));
  EXPECT_EQ(f.get_optional_int("test.absent"), std::nullopt);
}

TEST(Gguf, TensorInfosHaveShapesOffsetsAndSizes) {
  GgufFile f = GgufFile::open(kFixture);
  ASSERT_EQ(f.tensors().size(), 13u);
  const GgufTensorInfo& q4 = f.tensor_info("Q4_0");
  EXPECT_EQ(q4.type, GgmlType::Q4_0);
  EXPECT_EQ(q4.ne, (std::vector<int64_t>{256, 2}));
  EXPECT_EQ(q4.shape(), (std::vector<int64_t>{2, 256}));
  EXPECT_EQ(q4.nbytes, 16u * 18u);
  for (const GgufTensorInfo& t : f.tensors()) EXPECT_EQ(t.offset % 64, 0u) << t.name;
  EXPECT_EQ(f.header().data_start % 64, 0u);
  EXPECT_NE(error_of<IoError>([&] { f.tensor_info("nope"); }).find("no tensor named 'nope'"),
            std::string::npos);
}

TEST(Gguf, TypedReadsNameTheKeyAndTheType) {
  GgufFile f = GgufFile::open(kFixture);
  std::string e = error_of<IoError>([&] { f.get_int("test.string"); });
  EXPECT_NE(e.find("key 'test.string' is a string, expected an integer"), std::string::npos) << e;
  e = error_of<IoError>([&] { f.get_string("general.name"); });
  EXPECT_NE(e.find("'general.name' is missing"), std::string::npos) << e;
  e = error_of<IoError>([&] { f.get_string_array("test.ints"); });
  EXPECT_NE(e.find("an array of int32"), std::string::npos) << e;
}

TEST(Gguf, AMinimalHandBuiltFileParses) {
  Builder b;
  b.header(1, 1, 2);  // version 2 is read like 3
  b.kv_u32("general.alignment", 32);
  b.tensor("w", 32, /*Q8_0*/ 8, 0);
  b.pad_and_data(34);
  GgufHeader h = parse_gguf(reinterpret_cast<const uint8_t*>(b.bytes.data()), b.bytes.size(), "x");
  EXPECT_EQ(h.version, 2u);
  ASSERT_EQ(h.tensors.size(), 1u);
  EXPECT_EQ(h.tensors[0].nbytes, 34u);
}

TEST(Gguf, TruncatedFilesAreErrorsNamingWhereTheyEnd) {
  const std::string full = [] {
    std::ifstream in(kFixture, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }();
  // Every prefix that cuts the header, the metadata, the infos or the data is an error.
  for (size_t n : {size_t(0), size_t(3), size_t(10), size_t(30), size_t(200), size_t(700),
                   size_t(8512 + 100)}) {
    const std::string e = parse_error(full.substr(0, n));
    EXPECT_NE(e.find("bad.gguf"), std::string::npos) << n << ": " << e;
  }
  // The fixture's Q6_K tensor starts at data offset 8512 - data_start.
  EXPECT_NE(parse_error(full.substr(0, 8512 + 100)).find("tensor 'Q6_K'"), std::string::npos);
  const std::string e = parse_error(full.substr(0, 100));
  EXPECT_NE(e.find("truncated"), std::string::npos) << e;
}

TEST(Gguf, BadMagicAndVersion) {
  EXPECT_NE(parse_error("GGML0000000000000000000000").find("not a GGUF file"), std::string::npos);
  Builder v1;
  v1.header(0, 0, 1);
  EXPECT_NE(parse_error(v1.bytes).find("version 1"), std::string::npos);
  Builder v9;
  v9.header(0, 0, 9);
  EXPECT_NE(parse_error(v9.bytes).find("version 9"), std::string::npos);
}

TEST(Gguf, HugeCountsAreRejectedBeforeAllocating) {
  Builder kv;
  kv.header(0, uint64_t(1) << 60);
  EXPECT_NE(parse_error(kv.bytes).find("claims 1152921504606846976 metadata keys"),
            std::string::npos);
  Builder tensors;
  tensors.header(uint64_t(1) << 62, 0);
  EXPECT_NE(parse_error(tensors.bytes).find("tensors, more than"), std::string::npos);
  Builder array;  // an array of 2^61 strings in a 60-byte file
  array.header(0, 1);
  array.str("tokenizer.ggml.tokens");
  array.u32(9);
  array.u32(8);
  array.u64(uint64_t(1) << 61);
  const std::string e = parse_error(array.bytes);
  EXPECT_NE(e.find("key 'tokenizer.ggml.tokens' is an array of 2305843009213693952 string"),
            std::string::npos)
      << e;
  Builder string;  // a key of 2^50 bytes
  string.header(0, 1);
  string.u64(uint64_t(1) << 50);
  string.bytes.append(16, 'x');
  EXPECT_NE(parse_error(string.bytes).find("string of 1125899906842624 bytes"), std::string::npos);
}

TEST(Gguf, TensorsPastTheEndUnknownTypesAndBadLayoutsNameTheTensor) {
  auto one_tensor = [](uint64_t n, uint32_t type, uint64_t offset, size_t data) {
    Builder b;
    b.header(1, 0);
    b.tensor("blk.0.attn_q.weight", n, type, offset);
    b.pad_and_data(data);
    return b.bytes;
  };
  std::string e = parse_error(one_tensor(32, 8, 0, 33));
  EXPECT_NE(e.find("tensor 'blk.0.attn_q.weight' (Q8_0, 34 bytes at data offset 0) lies past the "
                   "end of the 33-byte data section"),
            std::string::npos)
      << e;
  e = parse_error(one_tensor(32, 8, ~uint64_t(31), 34));  // offset + size wraps around
  EXPECT_NE(e.find("lies past the end"), std::string::npos) << e;
  e = parse_error(one_tensor(32, 8, uint64_t(1) << 40, 34));
  EXPECT_NE(e.find("lies past the end"), std::string::npos) << e;
  e = parse_error(one_tensor(32, 8, 16, 64));
  EXPECT_NE(e.find("tensor 'blk.0.attn_q.weight' starts at data offset 16, not a multiple"),
            std::string::npos)
      << e;
  e = parse_error(one_tensor(32, 77, 0, 64));
  EXPECT_NE(e.find("tensor 'blk.0.attn_q.weight' has ggml type 77"), std::string::npos) << e;
  e = parse_error(one_tensor(33, 8, 0, 64));
  EXPECT_NE(e.find("33 elements per row, not a multiple of its block size 32"), std::string::npos)
      << e;

  Builder overlap;
  overlap.header(2, 0);
  overlap.tensor("a", 64, /*F32*/ 0, 0);
  overlap.tensor("b", 8, 0, 224);
  overlap.pad_and_data(256);
  EXPECT_NE(parse_error(overlap.bytes).find("tensors 'a' and 'b' overlap"), std::string::npos);

  Builder dims;
  dims.header(1, 0);
  dims.str("t");
  dims.u32(5);
  dims.bytes.append(64, '\0');
  EXPECT_NE(parse_error(dims.bytes).find("tensor 't' has 5 dims"), std::string::npos);

  Builder product;
  product.header(1, 0);
  product.str("t");
  product.u32(2);
  product.u64(uint64_t(1) << 40);
  product.u64(uint64_t(1) << 40);
  product.u32(0);
  product.u64(0);
  product.bytes.append(64, '\0');
  EXPECT_NE(parse_error(product.bytes).find("overflows"), std::string::npos);
}

TEST(Gguf, AZeroDimMakesAnEmptyTensorWhateverTheOtherDims) {
  // Found by the fuzzer: numel() multiplied 2^40 * 2^40 before reaching the zero.
  Builder b;
  b.header(1, 0);
  b.str("t");
  b.u32(3);
  b.u64(uint64_t(1) << 40);
  b.u64(uint64_t(1) << 40);
  b.u64(0);
  b.u32(0);
  b.u64(0);
  b.pad_and_data(0);
  GgufHeader h = parse_gguf(reinterpret_cast<const uint8_t*>(b.bytes.data()), b.bytes.size(), "x");
  EXPECT_EQ(h.tensors[0].numel(), 0);
  EXPECT_EQ(h.tensors[0].nbytes, 0u);
}

TEST(Gguf, BadAlignmentDuplicateKeysAndUnknownValueTypes) {
  Builder align;
  align.header(0, 1);
  align.kv_u32("general.alignment", 48);
  EXPECT_NE(parse_error(align.bytes).find("'general.alignment' is 48, not a power of two"),
            std::string::npos);
  Builder dup;
  dup.header(0, 2);
  dup.kv_u32("k", 1);
  dup.kv_u32("k", 2);
  EXPECT_NE(parse_error(dup.bytes).find("key 'k' appears twice"), std::string::npos);
  Builder type;
  type.header(0, 1);
  type.str("k");
  type.u32(13);
  EXPECT_NE(parse_error(type.bytes).find("key 'k' has value type 13"), std::string::npos);
  Builder deep;  // arrays nested past the limit
  deep.header(0, 1);
  deep.str("k");
  deep.u32(9);
  for (int i = 0; i < 12; ++i) {
    deep.u32(9);
    deep.u64(1);
  }
  deep.bytes.append(64, '\0');
  EXPECT_NE(parse_error(deep.bytes).find("nests arrays"), std::string::npos);
}

TEST(Gguf, OpenNamesTheFile) {
  const fs::path p = fs::temp_directory_path() / ("ingot_gguf_" + std::to_string(::getpid()));
  std::ofstream(p, std::ios::binary) << "GGUF\x03";
  const std::string e = error_of<IoError>([&] { GgufFile::open(p.string()); });
  EXPECT_NE(e.find(p.string()), std::string::npos) << e;
  fs::remove(p);
}

}  // namespace
}  // namespace ingot::formats
