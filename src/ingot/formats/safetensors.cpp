#include "ingot/formats/safetensors.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "ingot/ops/functional/views.h"

namespace ingot::formats {
namespace {

using nlohmann::json;

// Headers above this size are rejected before parsing (real ones are a few MB at most).
constexpr uint64_t kMaxHeaderBytes = 100ull << 20;

DType parse_entry_dtype(const std::string& s, const std::string& origin, const std::string& name) {
  static const std::map<std::string, DType> kDTypes = {
      {"BOOL", DType::Bool}, {"U8", DType::U8},   {"I8", DType::I8},   {"I16", DType::I16},
      {"I32", DType::I32},   {"I64", DType::I64}, {"F16", DType::F16}, {"BF16", DType::BF16},
      {"F32", DType::F32},   {"F64", DType::F64}};
  auto it = kDTypes.find(s);
  INGOT_CHECK(it != kDTypes.end(), IoError,
              "[safetensors] '{}': tensor '{}' has dtype '{}', which ingot does not support "
              "(supported: BOOL, U8, I8, I16, I32, I64, F16, BF16, F32, F64)",
              origin, name, s);
  return it->second;
}

// Reads a non-negative integer that fits in int64 from a JSON value.
uint64_t json_uint(const json& v, const std::string& origin, const std::string& name,
                   const char* field) {
  INGOT_CHECK(v.is_number_unsigned() || (v.is_number_integer() && v.get<int64_t>() >= 0), IoError,
              "[safetensors] '{}': tensor '{}' has a {} entry that is not a "
              "non-negative integer: {}",
              origin, name, field, v.dump());
  uint64_t u = v.get<uint64_t>();
  INGOT_CHECK(u <= uint64_t(std::numeric_limits<int64_t>::max()), IoError,
              "[safetensors] '{}': tensor '{}' has an out-of-range {} entry {}", origin, name,
              field, u);
  return u;
}

SafetensorsEntry parse_entry(const std::string& name, const json& v, size_t data_size,
                             const std::string& origin) {
  INGOT_CHECK(
      v.is_object() && v.contains("dtype") && v.contains("shape") && v.contains("data_offsets"),
      IoError,
      "[safetensors] '{}': tensor '{}' needs 'dtype', 'shape' and "
      "'data_offsets' fields",
      origin, name);
  SafetensorsEntry e;
  INGOT_CHECK(v["dtype"].is_string(), IoError,
              "[safetensors] '{}': tensor '{}' dtype is not a string", origin, name);
  e.dtype = parse_entry_dtype(v["dtype"].get<std::string>(), origin, name);
  INGOT_CHECK(v["shape"].is_array(), IoError, "[safetensors] '{}': tensor '{}' shape is not a list",
              origin, name);
  // numel * itemsize in 128 bits, saturated at 2^64 so it cannot overflow.
  constexpr unsigned __int128 kSaturated = (unsigned __int128)1 << 64;
  unsigned __int128 nbytes = itemsize(e.dtype);
  for (const json& d : v["shape"]) {
    uint64_t s = json_uint(d, origin, name, "shape");
    e.shape.push_back(int64_t(s));
    nbytes = std::min(nbytes * s, kSaturated);
  }
  const json& off = v["data_offsets"];
  INGOT_CHECK(off.is_array() && off.size() == 2, IoError,
              "[safetensors] '{}': tensor '{}' data_offsets must be [begin, end]", origin, name);
  e.begin = size_t(json_uint(off[0], origin, name, "data_offsets"));
  e.end = size_t(json_uint(off[1], origin, name, "data_offsets"));
  INGOT_CHECK(e.begin <= e.end && e.end <= data_size, IoError,
              "[safetensors] '{}': tensor '{}' data_offsets [{}, {}] lie outside the {}-byte data "
              "section (truncated file?)",
              origin, name, e.begin, e.end, data_size);
  INGOT_CHECK(
      nbytes == e.end - e.begin, IoError,
      "[safetensors] '{}': tensor '{}' of dtype {} and shape {} needs {} bytes but "
      "data_offsets [{}, {}] hold {}",
      origin, name, e.dtype, shape_str(e.shape),
      nbytes == kSaturated ? std::string("more than 2^64") : std::to_string(uint64_t(nbytes)),
      e.begin, e.end, e.end - e.begin);
  return e;
}

}  // namespace

SafetensorsHeader parse_safetensors(const uint8_t* bytes, size_t size, const std::string& origin) {
  INGOT_CHECK(size >= 8, IoError, "[safetensors] '{}' is {} bytes: too short for a header", origin,
              size);
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | bytes[i];
  INGOT_CHECK(n <= kMaxHeaderBytes && n <= size - 8, IoError,
              "[safetensors] '{}': header length {} exceeds the file size {} (truncated or not a "
              "safetensors file)",
              origin, n, size);
  json header;
  try {
    header = json::parse(bytes + 8, bytes + 8 + n);
  } catch (const json::exception& e) {
    INGOT_THROW(IoError, "[safetensors] '{}': header is not valid JSON: {}", origin, e.what());
  }
  INGOT_CHECK(header.is_object(), IoError, "[safetensors] '{}': header is not a JSON object",
              origin);
  SafetensorsHeader out;
  out.data_start = size_t(8 + n);
  const size_t data_size = size - out.data_start;
  for (const auto& [key, value] : header.items()) {
    if (key == "__metadata__") {
      INGOT_CHECK(value.is_object(), IoError, "[safetensors] '{}': __metadata__ is not an object",
                  origin);
      for (const auto& [mk, mv] : value.items()) {
        INGOT_CHECK(mv.is_string(), IoError,
                    "[safetensors] '{}': metadata value for '{}' is not a string", origin, mk);
        out.metadata[mk] = mv.get<std::string>();
      }
      continue;
    }
    out.entries.emplace(key, parse_entry(key, value, data_size, origin));
  }
  // Tensors must not overlap (the format requires a dense, disjoint layout).
  std::vector<std::pair<size_t, const std::string*>> starts;
  for (const auto& [name, e] : out.entries) {
    if (e.end > e.begin) starts.emplace_back(e.begin, &name);
  }
  std::sort(starts.begin(), starts.end());
  for (size_t i = 1; i < starts.size(); ++i) {
    const auto& prev = out.entries.at(*starts[i - 1].second);
    INGOT_CHECK(prev.end <= starts[i].first, IoError,
                "[safetensors] '{}': tensors '{}' and '{}' overlap in the data section", origin,
                *starts[i - 1].second, *starts[i].second);
  }
  return out;
}

SafetensorsFile SafetensorsFile::open(const std::string& path) {
  SafetensorsFile f;
  f.file_ = MappedFile::open(path);
  f.header_ = parse_safetensors(f.file_->data(), f.file_->size(), path);
  return f;
}

Tensor SafetensorsFile::tensor(const std::string& name) const {
  auto it = header_.entries.find(name);
  INGOT_CHECK(it != header_.entries.end(), IoError,
              "[safetensors] '{}' has no tensor named '{}' ({} tensors)", path(), name,
              header_.entries.size());
  const SafetensorsEntry& e = it->second;
  const size_t offset = header_.data_start + e.begin;
  const size_t item = itemsize(e.dtype);
  auto storage = Storage::from_mapped_file(file_, offset, e.end - e.begin);
  Tensor t = Tensor::from_storage(storage, e.dtype, e.shape, contiguous_strides(e.shape), 0);
  if (reinterpret_cast<uintptr_t>(storage->data()) % item == 0) return t;
  // Misaligned for its dtype (the format does not promise alignment): copy once.
  Tensor aligned = Tensor::empty(e.shape, e.dtype);
  if (aligned.nbytes() > 0) std::memcpy(aligned.raw_data(), storage->data(), aligned.nbytes());
  return aligned;
}

void save_safetensors(const std::string& path, const std::map<std::string, Tensor>& tensors,
                      const std::map<std::string, std::string>& metadata) {
  json header = json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  // Widest dtypes first: with an 8-byte aligned data start every tensor is aligned for
  // its dtype, so readers can map it without copying.
  std::vector<std::pair<std::string, Tensor>> by_width(tensors.begin(), tensors.end());
  std::stable_sort(by_width.begin(), by_width.end(), [](const auto& a, const auto& b) {
    return itemsize(a.second.dtype()) > itemsize(b.second.dtype());
  });
  size_t offset = 0;
  std::vector<Tensor> ordered;
  for (const auto& [name, t] : by_width) {
    Tensor c = contiguous(t);
    static const std::map<DType, const char*> kNames = {
        {DType::Bool, "BOOL"}, {DType::U8, "U8"},   {DType::I8, "I8"},   {DType::I16, "I16"},
        {DType::I32, "I32"},   {DType::I64, "I64"}, {DType::F16, "F16"}, {DType::BF16, "BF16"},
        {DType::F32, "F32"},   {DType::F64, "F64"}};
    header[name] = {{"dtype", kNames.at(c.dtype())},
                    {"shape", c.sizes()},
                    {"data_offsets", {offset, offset + c.nbytes()}}};
    offset += c.nbytes();
    ordered.push_back(c);
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // keep the data 8-byte aligned
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  INGOT_CHECK(f.good(), IoError, "[safetensors] cannot write '{}'", path);
  uint64_t n = text.size();
  char len[8];
  for (int i = 0; i < 8; ++i) len[i] = char((n >> (8 * i)) & 0xff);
  f.write(len, 8);
  f.write(text.data(), std::streamsize(text.size()));
  for (const Tensor& t : ordered) {
    if (t.nbytes() > 0)
      f.write(static_cast<const char*>(t.raw_data()), std::streamsize(t.nbytes()));
  }
  INGOT_CHECK(f.good(), IoError, "[safetensors] error while writing '{}'", path);
}

}  // namespace ingot::formats
