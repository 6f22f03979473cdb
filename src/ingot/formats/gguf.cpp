#include "ingot/formats/gguf.h"

#include <algorithm>
#include <cstring>
#include <set>

#include "ingot/core/error.h"

namespace ingot::formats {
namespace {

constexpr uint32_t kMagic = 0x46554747;  // "GGUF" read as a little-endian u32
constexpr int kMaxDims = 4;              // GGML_MAX_DIMS
constexpr int kMaxArrayDepth = 8;        // arrays of arrays: far beyond any real file

// Bytes a value of scalar type `t` takes; 0 for strings and arrays (variable).
size_t scalar_size(GgufType t) {
  switch (t) {
    case GgufType::U8:
    case GgufType::I8:
    case GgufType::Bool:
      return 1;
    case GgufType::U16:
    case GgufType::I16:
      return 2;
    case GgufType::U32:
    case GgufType::I32:
    case GgufType::F32:
      return 4;
    case GgufType::U64:
    case GgufType::I64:
    case GgufType::F64:
      return 8;
    case GgufType::String:
    case GgufType::Array:
      return 0;
  }
  return 0;
}

// The fewest bytes one element of type `t` can take in a file: what bounds a count.
size_t min_encoded_size(GgufType t) {
  if (t == GgufType::String) return 8;     // u64 length
  if (t == GgufType::Array) return 4 + 8;  // u32 type + u64 count
  return scalar_size(t);
}

bool known_type(uint32_t t) {
  return t <= uint32_t(GgufType::F64);
}

// A bounds-checked little-endian reader over the file image. `what` names the thing
// being read (a key or a tensor) for errors.
class Cursor {
 public:
  Cursor(const uint8_t* bytes, size_t size, const std::string& origin)
      : bytes_(bytes), size_(size), origin_(origin) {}

  size_t pos() const { return pos_; }
  size_t remaining() const { return size_ - pos_; }

  template <typename T>
  T read(const std::string& what) {
    need(sizeof(T), what);
    T v;
    std::memcpy(&v, bytes_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }

  std::string read_string(const std::string& what) {
    const uint64_t n = read<uint64_t>(what);
    INGOT_CHECK(n <= remaining(), IoError,
                "[gguf] '{}': {} is a string of {} bytes but only {} bytes remain (truncated or "
                "corrupt file)",
                origin_, what, n, remaining());
    std::string s(reinterpret_cast<const char*>(bytes_ + pos_), size_t(n));
    pos_ += size_t(n);
    return s;
  }

  void need(size_t n, const std::string& what) const {
    INGOT_CHECK(n <= remaining(), IoError,
                "[gguf] '{}': the file ends inside {} (needs {} more bytes at offset {}, {} "
                "remain; truncated file?)",
                origin_, what, n, pos_, remaining());
  }

  const std::string& origin() const { return origin_; }

 private:
  const uint8_t* bytes_;
  size_t size_;
  size_t pos_ = 0;
  const std::string& origin_;
};

GgufType read_type(Cursor& c, const std::string& what) {
  const uint32_t t = c.read<uint32_t>(what);
  INGOT_CHECK(known_type(t), IoError,
              "[gguf] '{}': {} has value type {}, which GGUF does not define (0..12)", c.origin(),
              what, t);
  return GgufType(t);
}

GgufValue read_value(Cursor& c, GgufType type, const std::string& what, int depth) {
  GgufValue v;
  v.type = type;
  switch (type) {
    case GgufType::U8:
      v.value = uint64_t(c.read<uint8_t>(what));
      break;
    case GgufType::U16:
      v.value = uint64_t(c.read<uint16_t>(what));
      break;
    case GgufType::U32:
      v.value = uint64_t(c.read<uint32_t>(what));
      break;
    case GgufType::U64:
      v.value = c.read<uint64_t>(what);
      break;
    case GgufType::I8:
      v.value = int64_t(c.read<int8_t>(what));
      break;
    case GgufType::I16:
      v.value = int64_t(c.read<int16_t>(what));
      break;
    case GgufType::I32:
      v.value = int64_t(c.read<int32_t>(what));
      break;
    case GgufType::I64:
      v.value = c.read<int64_t>(what);
      break;
    case GgufType::F32:
      v.value = double(c.read<float>(what));
      break;
    case GgufType::F64:
      v.value = c.read<double>(what);
      break;
    case GgufType::Bool:
      v.value = c.read<uint8_t>(what) != 0;
      break;
    case GgufType::String:
      v.value = c.read_string(what);
      break;
    case GgufType::Array: {
      INGOT_CHECK(depth < kMaxArrayDepth, IoError, "[gguf] '{}': {} nests arrays more than {} deep",
                  c.origin(), what, kMaxArrayDepth);
      v.element_type = read_type(c, what);
      const uint64_t n = c.read<uint64_t>(what);
      // Check the count against the bytes left before allocating anything for it.
      const size_t min_size = min_encoded_size(v.element_type);
      INGOT_CHECK(min_size == 0 || n <= c.remaining() / min_size, IoError,
                  "[gguf] '{}': {} is an array of {} {} values, more than the {} bytes left in "
                  "the file can hold (truncated file or corrupt count?)",
                  c.origin(), what, n, gguf_type_name(v.element_type), c.remaining());
      std::vector<GgufValue> items;
      items.reserve(size_t(n));
      for (uint64_t i = 0; i < n; ++i)
        items.push_back(read_value(c, v.element_type, what, depth + 1));
      v.value = std::move(items);
      break;
    }
  }
  return v;
}

uint64_t align_up(uint64_t x, uint64_t a) {
  return (x + a - 1) / a * a;
}

// Reads `general.alignment` when present: a u32 power of two (llama.cpp's rule).
uint64_t read_alignment(const GgufHeader& h, const std::string& origin) {
  for (const auto& [key, v] : h.metadata) {
    if (key != "general.alignment") continue;
    INGOT_CHECK(v.type == GgufType::U32, IoError,
                "[gguf] '{}': key 'general.alignment' must be a uint32, got {}", origin,
                gguf_type_name(v.type));
    const uint64_t a = std::get<uint64_t>(v.value);
    INGOT_CHECK(a != 0 && (a & (a - 1)) == 0, IoError,
                "[gguf] '{}': key 'general.alignment' is {}, not a power of two", origin, a);
    return a;
  }
  return 32;
}

GgufTensorInfo read_tensor_info(Cursor& c, size_t index) {
  GgufTensorInfo t;
  const std::string where = fmt::format("tensor #{}'s name", index);
  t.name = c.read_string(where);
  const std::string what = fmt::format("tensor '{}'", t.name);
  const uint32_t n_dims = c.read<uint32_t>(what);
  INGOT_CHECK(n_dims <= kMaxDims, IoError, "[gguf] '{}': {} has {} dims (ggml allows at most {})",
              c.origin(), what, n_dims, kMaxDims);
  // numel in 128 bits, saturated so a product of huge dims cannot wrap.
  constexpr unsigned __int128 kSaturated = (unsigned __int128)1 << 63;
  unsigned __int128 numel = 1;
  for (uint32_t d = 0; d < n_dims; ++d) {
    const uint64_t ne = c.read<uint64_t>(what);
    INGOT_CHECK(ne < (uint64_t(1) << 62), IoError, "[gguf] '{}': {} has dim {} of size {}",
                c.origin(), what, d, ne);
    t.ne.push_back(int64_t(ne));
    numel = std::min(numel * ne, kSaturated);
  }
  INGOT_CHECK(numel < kSaturated, IoError, "[gguf] '{}': {} has dims [{}] whose product overflows",
              c.origin(), what, fmt::join(t.ne, ", "));
  const uint32_t type = c.read<uint32_t>(what);
  auto traits = ggml_type_traits(type);
  INGOT_CHECK(traits.has_value(), IoError,
              "[gguf] '{}': {} has ggml type {}, which ggml does not define (corrupt file, or "
              "a type newer than this reader)",
              c.origin(), what, type);
  t.type = GgmlType(type);
  const int64_t ne0 = t.ne.empty() ? 1 : t.ne[0];
  INGOT_CHECK(ne0 % traits->block_size == 0, IoError,
              "[gguf] '{}': {} of type {} has {} elements per row, not a multiple of its block "
              "size {}",
              c.origin(), what, traits->name, ne0, traits->block_size);
  t.nbytes = uint64_t(numel) / uint64_t(traits->block_size) * uint64_t(traits->type_size);
  t.offset = c.read<uint64_t>(what);
  return t;
}

}  // namespace

const char* gguf_type_name(GgufType t) {
  switch (t) {
    case GgufType::U8:
      return "uint8";
    case GgufType::I8:
      return "int8";
    case GgufType::U16:
      return "uint16";
    case GgufType::I16:
      return "int16";
    case GgufType::U32:
      return "uint32";
    case GgufType::I32:
      return "int32";
    case GgufType::F32:
      return "float32";
    case GgufType::Bool:
      return "bool";
    case GgufType::String:
      return "string";
    case GgufType::Array:
      return "array";
    case GgufType::U64:
      return "uint64";
    case GgufType::I64:
      return "int64";
    case GgufType::F64:
      return "float64";
  }
  return "unknown";
}

bool GgufValue::is_integer() const {
  return std::holds_alternative<uint64_t>(value) || std::holds_alternative<int64_t>(value);
}

int64_t GgufTensorInfo::numel() const {
  // parse_gguf checked that the product fits in int64; with a zero dim the partial product
  // of the others might not, so a zero dim answers first.
  if (std::find(ne.begin(), ne.end(), 0) != ne.end()) return 0;
  int64_t n = 1;
  for (int64_t d : ne) n *= d;
  return n;
}

std::vector<int64_t> GgufTensorInfo::shape() const {
  return {ne.rbegin(), ne.rend()};
}

GgufHeader parse_gguf(const uint8_t* bytes, size_t size, const std::string& origin) {
  Cursor c(bytes, size, origin);
  GgufHeader h;
  const uint32_t magic = c.read<uint32_t>("the magic");
  INGOT_CHECK(magic == kMagic, IoError,
              "[gguf] '{}' is not a GGUF file (its first 4 bytes are not 'GGUF')", origin);
  h.version = c.read<uint32_t>("the version");
  INGOT_CHECK(h.version != 1, NotSupportedError,
              "[gguf] '{}' is GGUF version 1 (32-bit counts), which llama.cpp dropped; convert "
              "it to version 3 with a current llama.cpp",
              origin);
  INGOT_CHECK(h.version == 2 || h.version == 3, IoError,
              "[gguf] '{}' has GGUF version {} (ingot reads versions 2 and 3; a big-endian file "
              "reads as a huge version)",
              origin, h.version);
  const uint64_t n_tensors = c.read<uint64_t>("the tensor count");
  const uint64_t n_kv = c.read<uint64_t>("the metadata count");
  // Bound both counts by the bytes left before reserving anything for them: a key/value
  // takes at least 8 + 4 + 1 bytes, a tensor info at least 8 + 4 + 4 + 8.
  INGOT_CHECK(n_kv <= c.remaining() / 13, IoError,
              "[gguf] '{}' claims {} metadata keys, more than its {} bytes can hold (truncated "
              "file or corrupt header)",
              origin, n_kv, size);
  INGOT_CHECK(n_tensors <= c.remaining() / 24, IoError,
              "[gguf] '{}' claims {} tensors, more than its {} bytes can hold (truncated file or "
              "corrupt header)",
              origin, n_tensors, size);
  h.metadata.reserve(size_t(n_kv));
  std::set<std::string> keys;
  for (uint64_t i = 0; i < n_kv; ++i) {
    std::string key = c.read_string(fmt::format("metadata key #{}", i));
    const std::string what = fmt::format("key '{}'", key);
    INGOT_CHECK(keys.insert(key).second, IoError, "[gguf] '{}': key '{}' appears twice", origin,
                key);
    const GgufType type = read_type(c, what);
    h.metadata.emplace_back(std::move(key), read_value(c, type, what, 0));
  }
  h.alignment = read_alignment(h, origin);
  h.tensors.reserve(size_t(n_tensors));
  for (uint64_t i = 0; i < n_tensors; ++i) h.tensors.push_back(read_tensor_info(c, size_t(i)));
  h.data_start = align_up(c.pos(), h.alignment);
  const uint64_t data_size = h.data_start <= size ? size - h.data_start : 0;

  // Each tensor aligned, inside the data section, and no two overlapping.
  std::vector<const GgufTensorInfo*> by_offset;
  for (const GgufTensorInfo& t : h.tensors) {
    INGOT_CHECK(t.offset % h.alignment == 0, IoError,
                "[gguf] '{}': tensor '{}' starts at data offset {}, not a multiple of the "
                "alignment {}",
                origin, t.name, t.offset, h.alignment);
    INGOT_CHECK(t.offset <= data_size && t.nbytes <= data_size - t.offset, IoError,
                "[gguf] '{}': tensor '{}' ({}, {} bytes at data offset {}) lies past the end of "
                "the {}-byte data section (truncated file?)",
                origin, t.name, ggml_type_name(t.type), t.nbytes, t.offset, data_size);
    if (t.nbytes > 0) by_offset.push_back(&t);
  }
  std::sort(by_offset.begin(), by_offset.end(),
            [](const auto* a, const auto* b) { return a->offset < b->offset; });
  for (size_t i = 1; i < by_offset.size(); ++i) {
    const GgufTensorInfo& a = *by_offset[i - 1];
    INGOT_CHECK(a.offset + a.nbytes <= by_offset[i]->offset, IoError,
                "[gguf] '{}': tensors '{}' and '{}' overlap in the data section", origin, a.name,
                by_offset[i]->name);
  }
  std::vector<const std::string*> names;
  for (const GgufTensorInfo& t : h.tensors) names.push_back(&t.name);
  std::sort(names.begin(), names.end(), [](auto* a, auto* b) { return *a < *b; });
  for (size_t i = 1; i < names.size(); ++i) {
    INGOT_CHECK(*names[i - 1] != *names[i], IoError, "[gguf] '{}': tensor '{}' appears twice",
                origin, *names[i]);
  }
  return h;
}

GgufFile GgufFile::open(const std::string& path) {
  GgufFile f;
  f.file_ = MappedFile::open(path);
  f.header_ = parse_gguf(f.file_->data(), f.file_->size(), path);
  for (size_t i = 0; i < f.header_.metadata.size(); ++i) f.by_key_[f.header_.metadata[i].first] = i;
  for (size_t i = 0; i < f.header_.tensors.size(); ++i) f.by_name_[f.header_.tensors[i].name] = i;
  return f;
}

const GgufValue* GgufFile::find(const std::string& key) const {
  auto it = by_key_.find(key);
  return it == by_key_.end() ? nullptr : &header_.metadata[it->second].second;
}

namespace {

[[noreturn]] void wrong_type(const std::string& path, const std::string& key, const GgufValue& v,
                             const char* expected) {
  INGOT_THROW(IoError, "[gguf] '{}': key '{}' is {} {}, expected {}", path, key,
              v.is_array() ? "an array of" : "a",
              gguf_type_name(v.is_array() ? v.element_type : v.type), expected);
}

std::optional<int64_t> as_int(const GgufValue& v) {
  if (auto* u = std::get_if<uint64_t>(&v.value)) {
    if (*u > uint64_t(INT64_MAX)) return std::nullopt;
    return int64_t(*u);
  }
  if (auto* i = std::get_if<int64_t>(&v.value)) return *i;
  return std::nullopt;
}

std::optional<double> as_number(const GgufValue& v) {
  if (auto* d = std::get_if<double>(&v.value)) return *d;
  if (auto* u = std::get_if<uint64_t>(&v.value)) return double(*u);
  if (auto* i = std::get_if<int64_t>(&v.value)) return double(*i);
  return std::nullopt;
}

}  // namespace

std::optional<std::string> GgufFile::get_optional_string(const std::string& key) const {
  const GgufValue* v = find(key);
  if (!v) return std::nullopt;
  if (!v->is_string()) wrong_type(path(), key, *v, "a string");
  return v->str();
}

std::string GgufFile::get_string(const std::string& key) const {
  auto s = get_optional_string(key);
  INGOT_CHECK(s.has_value(), IoError, "[gguf] '{}': key '{}' is missing (a string)", path(), key);
  return *s;
}

std::optional<int64_t> GgufFile::get_optional_int(const std::string& key) const {
  const GgufValue* v = find(key);
  if (!v) return std::nullopt;
  auto i = v->is_array() ? std::nullopt : as_int(*v);
  if (!i) wrong_type(path(), key, *v, "an integer");
  return i;
}

int64_t GgufFile::get_int(const std::string& key) const {
  auto i = get_optional_int(key);
  INGOT_CHECK(i.has_value(), IoError, "[gguf] '{}': key '{}' is missing (an integer)", path(), key);
  return *i;
}

std::optional<double> GgufFile::get_optional_double(const std::string& key) const {
  const GgufValue* v = find(key);
  if (!v) return std::nullopt;
  auto d = v->is_array() ? std::nullopt : as_number(*v);
  if (!d) wrong_type(path(), key, *v, "a number");
  return d;
}

double GgufFile::get_double(const std::string& key) const {
  auto d = get_optional_double(key);
  INGOT_CHECK(d.has_value(), IoError, "[gguf] '{}': key '{}' is missing (a number)", path(), key);
  return *d;
}

std::optional<bool> GgufFile::get_optional_bool(const std::string& key) const {
  const GgufValue* v = find(key);
  if (!v) return std::nullopt;
  if (v->type != GgufType::Bool) wrong_type(path(), key, *v, "a bool");
  return std::get<bool>(v->value);
}

std::vector<std::string> GgufFile::get_string_array(const std::string& key) const {
  const GgufValue* v = find(key);
  INGOT_CHECK(v != nullptr, IoError, "[gguf] '{}': key '{}' is missing (an array of strings)",
              path(), key);
  if (!v->is_array() || v->element_type != GgufType::String)
    wrong_type(path(), key, *v, "an array of strings");
  std::vector<std::string> out;
  out.reserve(v->array().size());
  for (const GgufValue& e : v->array()) out.push_back(e.str());
  return out;
}

std::vector<double> GgufFile::get_number_array(const std::string& key) const {
  const GgufValue* v = find(key);
  INGOT_CHECK(v != nullptr, IoError, "[gguf] '{}': key '{}' is missing (an array of numbers)",
              path(), key);
  if (!v->is_array() || v->element_type == GgufType::String || v->element_type == GgufType::Array ||
      v->element_type == GgufType::Bool)
    wrong_type(path(), key, *v, "an array of numbers");
  std::vector<double> out;
  out.reserve(v->array().size());
  for (const GgufValue& e : v->array()) out.push_back(*as_number(e));
  return out;
}

const GgufTensorInfo& GgufFile::tensor_info(const std::string& name) const {
  auto it = by_name_.find(name);
  INGOT_CHECK(it != by_name_.end(), IoError, "[gguf] '{}' has no tensor named '{}' ({} tensors)",
              path(), name, header_.tensors.size());
  return header_.tensors[it->second];
}

const uint8_t* GgufFile::tensor_data(const GgufTensorInfo& info) const {
  return file_->data() + header_.data_start + info.offset;
}

std::shared_ptr<Storage> GgufFile::tensor_storage(const GgufTensorInfo& info) const {
  return Storage::from_mapped_file(file_, size_t(header_.data_start + info.offset),
                                   size_t(info.nbytes));
}

}  // namespace ingot::formats
