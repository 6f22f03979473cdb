#include "ingot/formats/gguf_writer.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <set>

#include "ingot/core/error.h"

namespace ingot::formats {
namespace {

constexpr uint32_t kMagic = 0x46554747;  // "GGUF" as a little-endian u32
constexpr uint32_t kVersion = 3;

// Appends little-endian encodings to a byte buffer (the header is built in memory, the
// tensor data streamed after it).
class Bytes {
 public:
  template <typename T>
  void put(T v) {
    const auto* p = reinterpret_cast<const uint8_t*>(&v);
    out.insert(out.end(), p, p + sizeof(T));
  }
  void put_string(const std::string& s) {
    put<uint64_t>(s.size());
    out.insert(out.end(), s.begin(), s.end());
  }
  void put_value(const GgufValue& v, const std::string& key) {
    switch (v.type) {
      case GgufType::U8: put<uint8_t>(uint8_t(std::get<uint64_t>(v.value))); return;
      case GgufType::U16: put<uint16_t>(uint16_t(std::get<uint64_t>(v.value))); return;
      case GgufType::U32: put<uint32_t>(uint32_t(std::get<uint64_t>(v.value))); return;
      case GgufType::U64: put<uint64_t>(std::get<uint64_t>(v.value)); return;
      case GgufType::I8: put<int8_t>(int8_t(std::get<int64_t>(v.value))); return;
      case GgufType::I16: put<int16_t>(int16_t(std::get<int64_t>(v.value))); return;
      case GgufType::I32: put<int32_t>(int32_t(std::get<int64_t>(v.value))); return;
      case GgufType::I64: put<int64_t>(std::get<int64_t>(v.value)); return;
      case GgufType::F32: put<float>(float(std::get<double>(v.value))); return;
      case GgufType::F64: put<double>(std::get<double>(v.value)); return;
      case GgufType::Bool: put<uint8_t>(std::get<bool>(v.value) ? 1 : 0); return;
      case GgufType::String: put_string(v.str()); return;
      case GgufType::Array: {
        put<uint32_t>(uint32_t(v.element_type));
        put<uint64_t>(v.array().size());
        for (const GgufValue& e : v.array()) {
          INGOT_CHECK(e.type == v.element_type, ValueError,
                      "[gguf] key '{}': an array of {} holds a {}", key,
                      gguf_type_name(v.element_type), gguf_type_name(e.type));
          put_value(e, key);
        }
        return;
      }
    }
    INGOT_THROW(ValueError, "[gguf] key '{}': unknown value type {}", key, uint32_t(v.type));
  }
  void pad_to(uint64_t alignment) {
    while (out.size() % alignment != 0) out.push_back(0);
  }
  std::vector<uint8_t> out;
};

uint64_t aligned(uint64_t n, uint64_t alignment) {
  return (n + alignment - 1) / alignment * alignment;
}

GgufValue scalar(GgufType t, decltype(GgufValue::value) v) {
  GgufValue g;
  g.type = t;
  g.value = std::move(v);
  return g;
}

template <typename T>
GgufValue array_of(GgufType element, const std::vector<T>& values) {
  std::vector<GgufValue> items;
  items.reserve(values.size());
  for (const T& v : values) {
    if constexpr (std::is_same_v<T, std::string>) {
      items.push_back(gguf_string(v));
    } else if constexpr (std::is_floating_point_v<T>) {
      items.push_back(scalar(element, double(v)));
    } else {
      items.push_back(scalar(element, int64_t(v)));
    }
  }
  GgufValue g = scalar(GgufType::Array, std::move(items));
  g.element_type = element;
  return g;
}

}  // namespace

GgufValue gguf_string(std::string s) { return scalar(GgufType::String, std::move(s)); }
GgufValue gguf_u32(uint32_t v) { return scalar(GgufType::U32, uint64_t(v)); }
GgufValue gguf_i32(int32_t v) { return scalar(GgufType::I32, int64_t(v)); }
GgufValue gguf_f32(float v) { return scalar(GgufType::F32, double(v)); }
GgufValue gguf_bool(bool v) { return scalar(GgufType::Bool, v); }
GgufValue gguf_string_array(std::vector<std::string> v) {
  return array_of(GgufType::String, v);
}
GgufValue gguf_f32_array(const std::vector<float>& v) { return array_of(GgufType::F32, v); }
GgufValue gguf_i32_array(const std::vector<int32_t>& v) { return array_of(GgufType::I32, v); }

uint64_t ggml_nbytes(GgmlType type, int64_t numel) {
  const auto traits = ggml_type_traits(uint32_t(type));
  INGOT_CHECK(traits.has_value(), ValueError, "[gguf] unknown ggml type {}", uint32_t(type));
  return uint64_t(numel / traits->block_size) * uint64_t(traits->type_size);
}

GgufWriter::GgufWriter(uint64_t alignment) : alignment_(alignment) {
  INGOT_CHECK(alignment > 0 && (alignment & (alignment - 1)) == 0, ValueError,
              "[gguf] alignment {} is not a power of two", alignment);
}

bool GgufWriter::has(const std::string& key) const {
  for (const auto& [k, v] : metadata_) {
    if (k == key) return true;
  }
  return false;
}

void GgufWriter::set(const std::string& key, GgufValue value) {
  INGOT_CHECK(!has(key), ValueError, "[gguf] metadata key '{}' is set twice", key);
  metadata_.emplace_back(key, std::move(value));
}

uint64_t GgufWriter::check_tensor(const std::string& name, const std::vector<int64_t>& shape,
                                  GgmlType type) const {
  for (const Tensor& t : tensors_) {
    INGOT_CHECK(t.name != name, ValueError, "[gguf] tensor '{}' is added twice", name);
  }
  const auto traits = ggml_type_traits(uint32_t(type));
  INGOT_CHECK(traits.has_value(), ValueError, "[gguf] tensor '{}': unknown ggml type {}", name,
              uint32_t(type));
  INGOT_CHECK(!shape.empty() && shape.size() <= 4, ValueError,
              "[gguf] tensor '{}' has {} dims (GGUF holds 1 to 4)", name, shape.size());
  int64_t numel = 1;
  for (int64_t d : shape) {
    INGOT_CHECK(d > 0, ValueError, "[gguf] tensor '{}' has an empty dim", name);
    numel *= d;
  }
  INGOT_CHECK(shape.back() % traits->block_size == 0, ValueError,
              "[gguf] tensor '{}': its rows of {} elements are not a whole number of {} blocks "
              "({} elements)",
              name, shape.back(), traits->name, traits->block_size);
  return ggml_nbytes(type, numel);
}

void GgufWriter::add_tensor(const std::string& name, std::vector<int64_t> shape, GgmlType type,
                            std::vector<uint8_t> data) {
  const uint64_t want = check_tensor(name, shape, type);
  INGOT_CHECK(data.size() == want, ValueError,
              "[gguf] tensor '{}': {} bytes given, a {} tensor takes {}", name, data.size(),
              ggml_type_name(type), want);
  tensors_.push_back({name, std::move(shape), type, want, std::move(data), nullptr});
}

void GgufWriter::add_tensor(const std::string& name, std::vector<int64_t> shape, GgmlType type,
                            MakeBytes make) {
  const uint64_t want = check_tensor(name, shape, type);
  tensors_.push_back({name, std::move(shape), type, want, {}, std::move(make)});
}

void GgufWriter::write(const std::string& path) const {
  for (const auto& [k, v] : metadata_) {
    if (k == "general.alignment")
      INGOT_CHECK(std::holds_alternative<uint64_t>(v.value) &&
                      std::get<uint64_t>(v.value) == alignment_,
                  ValueError,
                  "[gguf] general.alignment disagrees with the writer's alignment {}", alignment_);
  }
  Bytes h;
  h.put<uint32_t>(kMagic);
  h.put<uint32_t>(kVersion);
  h.put<uint64_t>(tensors_.size());
  h.put<uint64_t>(metadata_.size());
  for (const auto& [key, value] : metadata_) {
    h.put_string(key);
    h.put<uint32_t>(uint32_t(value.type));
    h.put_value(value, key);
  }
  uint64_t offset = 0;
  for (const Tensor& t : tensors_) {
    h.put_string(t.name);
    h.put<uint32_t>(uint32_t(t.shape.size()));
    for (auto it = t.shape.rbegin(); it != t.shape.rend(); ++it) h.put<uint64_t>(uint64_t(*it));
    h.put<uint32_t>(uint32_t(t.type));
    h.put<uint64_t>(offset);
    offset = aligned(offset + t.nbytes, alignment_);
  }
  h.pad_to(alignment_);

  const std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  INGOT_CHECK(f != nullptr, IoError, "[gguf] cannot create '{}': {}", tmp, std::strerror(errno));
  bool ok = std::fwrite(h.out.data(), 1, h.out.size(), f) == h.out.size();
  static const uint8_t zeros[64] = {};
  try {
    for (const Tensor& t : tensors_) {
      if (!ok) break;
      std::vector<uint8_t> made;
      if (t.make) {
        made = t.make();
        INGOT_CHECK(made.size() == t.nbytes, ValueError,
                    "[gguf] tensor '{}': {} bytes made, a {} tensor takes {}", t.name,
                    made.size(), ggml_type_name(t.type), t.nbytes);
      }
      const std::vector<uint8_t>& bytes = t.make ? made : t.data;
      ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
      const uint64_t pad = aligned(bytes.size(), alignment_) - bytes.size();
      for (uint64_t left = pad; ok && left > 0;) {
        const size_t n = size_t(std::min<uint64_t>(left, sizeof(zeros)));
        ok = std::fwrite(zeros, 1, n, f) == n;
        left -= n;
      }
    }
  } catch (...) {
    std::fclose(f);
    std::remove(tmp.c_str());
    throw;
  }
  ok = (std::fclose(f) == 0) && ok;
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(tmp.c_str());
    INGOT_THROW(IoError, "[gguf] cannot write '{}': {}", path, why);
  }
}

}  // namespace ingot::formats
