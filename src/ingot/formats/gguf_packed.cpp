#include "ingot/formats/gguf_packed.h"

#include <cstring>

#include "ingot/core/error.h"
#include "ingot/core/half.h"
#include "ingot/core/thread_pool.h"

namespace ingot::formats {
namespace {

constexpr int64_t kBlock = 32;  // QK4_0 = QK8_0

// The table: which ggml types stay packed, and as what.
struct PackedType {
  GgmlType type;
  PackedLayout layout;
};
constexpr PackedType kPackedTypes[] = {
    {GgmlType::Q4_0, {4, kBlock}},
    {GgmlType::Q8_0, {8, kBlock}},
};

float f16_at(const uint8_t* p) {
  uint16_t bits;
  std::memcpy(&bits, p, 2);
  return Half::to_float(bits);
}

// One Q4_0 block {f16 d; u8 qs[16]} -> 16 ingot bytes: byte b holds weight 2b (low
// nibble) and 2b + 1 (high); ggml's weight j is qs[j] & 15 (j < 16), qs[j - 16] >> 4.
void repack_q4_0(const uint8_t* block, uint8_t* q, float* scale) {
  *scale = f16_at(block);
  const uint8_t* qs = block + 2;
  auto level = [qs](int j) { return j < 16 ? qs[j] & 0x0F : qs[j - 16] >> 4; };
  for (int b = 0; b < 16; ++b) q[b] = uint8_t(level(2 * b) | (level(2 * b + 1) << 4));
}

// One Q8_0 block {f16 d; i8 qs[32]} -> 32 bytes q + 128.
void repack_q8_0(const uint8_t* block, uint8_t* q, float* scale) {
  *scale = f16_at(block);
  const auto* qs = reinterpret_cast<const int8_t*>(block + 2);
  for (int j = 0; j < kBlock; ++j) q[j] = uint8_t(int(qs[j]) + 128);
}

}  // namespace

std::optional<PackedLayout> gguf_packed_layout(GgmlType type) {
  for (const PackedType& p : kPackedTypes)
    if (p.type == type) return p.layout;
  return std::nullopt;
}

bool gguf_keeps_packed(const GgufTensorInfo& info) {
  return info.ne.size() == 2 && gguf_packed_layout(info.type).has_value();
}

GgufPackedTensor gguf_packed_tensor(const GgufFile& file, const GgufTensorInfo& info) {
  INGOT_CHECK(gguf_keeps_packed(info), ValueError,
              "[gguf] '{}': tensor '{}' ({}, {} dims) is not kept packed (2-D Q4_0 or Q8_0 "
              "only; the others are dequantised by gguf_tensor)",
              file.path(), info.name, ggml_type_name(info.type), info.ne.size());
  const PackedLayout layout = *gguf_packed_layout(info.type);
  const GgmlTypeTraits traits = *ggml_type_traits(uint32_t(info.type));
  const int64_t cols = info.ne[0], rows = info.ne[1];
  INGOT_CHECK(cols % kBlock == 0, IoError,
              "[gguf] '{}': tensor '{}' has rows of {}, not whole {} blocks", file.path(),
              info.name, cols, ggml_type_name(info.type));
  const int64_t blocks = cols / kBlock;
  const int64_t row_bytes = cols * layout.bits / 8, block_bytes = kBlock * layout.bits / 8;
  GgufPackedTensor out;
  out.layout = layout;
  out.qweight = Tensor::empty({rows, row_bytes}, DType::U8);
  out.scales = Tensor::empty({rows, blocks}, DType::F32);
  const uint8_t* src = file.tensor_data(info);
  uint8_t* q = out.qweight.data<uint8_t>();
  float* s = out.scales.data<float>();
  const auto repack = info.type == GgmlType::Q4_0 ? repack_q4_0 : repack_q8_0;
  parallel_for(0, rows, 64, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r)
      for (int64_t b = 0; b < blocks; ++b)
        repack(src + (r * blocks + b) * traits.type_size, q + r * row_bytes + b * block_bytes,
               s + r * blocks + b);
  });
  return out;
}

}  // namespace ingot::formats
