#include "ingot/formats/npy.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <optional>

#include "ingot/ops/functional/views.h"

namespace ingot::formats {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;

// Minimal reader for the Python dict literal in the header:
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& origin) : s_(text), origin_(origin) {}

  void parse(std::string& descr, bool& fortran, IntShape& shape) {
    bool have_descr = false, have_fortran = false, have_shape = false;
    expect('{');
    while (!accept('}')) {
      std::string key = quoted();
      expect(':');
      if (key == "descr") {
        descr = quoted();
        have_descr = true;
      } else if (key == "fortran_order") {
        fortran = boolean();
        have_fortran = true;
      } else if (key == "shape") {
        shape = tuple();
        have_shape = true;
      } else {
        fail(fmt::format("unexpected key '{}'", key));
      }
      if (!accept(',')) {
        expect('}');
        break;
      }
    }
    if (!have_descr || !have_fortran || !have_shape) {
      fail("header must have 'descr', 'fortran_order' and 'shape'");
    }
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    INGOT_THROW(IoError, "[npy] '{}': malformed header ({}) at byte {} of '{}'", origin_, what,
                pos_, std::string(s_.substr(0, 200)));
  }
  void skip() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\n' || s_[pos_] == '\t')) ++pos_;
  }
  bool accept(char c) {
    skip();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!accept(c)) fail(fmt::format("expected '{}'", c));
  }
  std::string quoted() {
    skip();
    if (pos_ >= s_.size() || (s_[pos_] != '\'' && s_[pos_] != '"')) fail("expected a string");
    char q = s_[pos_++];
    size_t end = s_.find(q, pos_);
    if (end == std::string_view::npos) fail("unterminated string");
    std::string out(s_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return out;
  }
  bool boolean() {
    skip();
    if (s_.substr(pos_, 4) == "True") {
      pos_ += 4;
      return true;
    }
    if (s_.substr(pos_, 5) == "False") {
      pos_ += 5;
      return false;
    }
    fail("expected True or False");
  }
  IntShape tuple() {
    IntShape out;
    expect('(');
    while (!accept(')')) {
      skip();
      int64_t v = 0;
      size_t digits = 0;
      while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') {
        if (v > (int64_t(1) << 50)) fail("dimension too large");
        v = v * 10 + (s_[pos_++] - '0');
        ++digits;
      }
      if (accept('L')) {
      }  // Python 2 long suffix
      if (digits == 0) fail("expected a non-negative dimension");
      out.push_back(v);
      if (!accept(',')) {
        expect(')');
        break;
      }
    }
    return out;
  }

  std::string_view s_;
  const std::string& origin_;
  size_t pos_ = 0;
};

std::optional<DType> dtype_from_descr(const std::string& d) {
  if (d.size() < 2) return std::nullopt;
  char order = d[0];
  std::string code = d.substr(1);
  // '|' = no byte order (1-byte types), '<' = little-endian, '=' = native (little here).
  if (order != '<' && order != '|' && order != '=') return std::nullopt;
  if (code == "b1") return DType::Bool;
  if (code == "u1") return DType::U8;
  if (code == "i1") return DType::I8;
  if (code == "i2") return DType::I16;
  if (code == "i4") return DType::I32;
  if (code == "i8") return DType::I64;
  if (code == "f2") return DType::F16;
  if (code == "f4") return DType::F32;
  if (code == "f8") return DType::F64;
  return std::nullopt;
}

const char* descr_of(DType t) {
  switch (t) {
    case DType::Bool:
      return "|b1";
    case DType::U8:
      return "|u1";
    case DType::I8:
      return "|i1";
    case DType::I16:
      return "<i2";
    case DType::I32:
      return "<i4";
    case DType::I64:
      return "<i8";
    case DType::F16:
      return "<f2";
    case DType::F32:
      return "<f4";
    case DType::F64:
      return "<f8";
    default:
      return nullptr;
  }
}

}  // namespace

Tensor parse_npy(const uint8_t* bytes, size_t size, const std::string& origin) {
  INGOT_CHECK(size >= 10 && std::memcmp(bytes, kMagic, kMagicLen) == 0, IoError,
              "[npy] '{}' is not a .npy file (missing the \\x93NUMPY magic)", origin);
  const int major = bytes[6];
  INGOT_CHECK(major >= 1 && major <= 3, IoError, "[npy] '{}': unsupported format version {}.{}",
              origin, major, int(bytes[7]));
  size_t header_len, prefix;
  if (major == 1) {
    header_len = size_t(bytes[8]) | size_t(bytes[9]) << 8;
    prefix = 10;
  } else {
    INGOT_CHECK(size >= 12, IoError, "[npy] '{}' is truncated inside its preamble", origin);
    header_len = size_t(bytes[8]) | size_t(bytes[9]) << 8 | size_t(bytes[10]) << 16 |
                 size_t(bytes[11]) << 24;
    prefix = 12;
  }
  INGOT_CHECK(header_len <= size - prefix, IoError,
              "[npy] '{}': header length {} exceeds the file size {}", origin, header_len, size);
  std::string descr;
  bool fortran = false;
  IntShape shape;
  HeaderParser(std::string_view(reinterpret_cast<const char*>(bytes + prefix), header_len), origin)
      .parse(descr, fortran, shape);
  std::optional<DType> dtype = dtype_from_descr(descr);
  INGOT_CHECK(
      dtype.has_value(), IoError,
      "[npy] '{}': dtype '{}' is not supported (use little-endian bool, uint8, int8..int64, "
      "float16, float32 or float64)",
      origin, descr);
  const size_t data_size = size - prefix - header_len;
  // numel * itemsize in 128 bits, saturated at 2^64 so it cannot overflow.
  constexpr unsigned __int128 kSaturated = (unsigned __int128)1 << 64;
  unsigned __int128 need = itemsize(*dtype);
  for (int64_t s : shape) need = std::min(need * uint64_t(s), kSaturated);
  INGOT_CHECK(need == data_size, IoError,
              "[npy] '{}': shape {} of {} needs {} data bytes but the file holds {}{}", origin,
              shape_str(shape), *dtype,
              need == kSaturated ? std::string("more than 2^64") : std::to_string(uint64_t(need)),
              data_size, need > data_size ? " (truncated?)" : "");
  // Fortran order: the bytes are the transposed array in C order.
  IntShape stored = shape;
  if (fortran) std::reverse(stored.begin(), stored.end());
  Tensor t = Tensor::empty(stored, *dtype);
  if (data_size > 0) std::memcpy(t.raw_data(), bytes + prefix + header_len, data_size);
  if (*dtype == DType::Bool) {
    auto* p = static_cast<uint8_t*>(t.raw_data());
    for (size_t i = 0; i < data_size; ++i) {
      INGOT_CHECK(p[i] <= 1, IoError, "[npy] '{}': bool element {} has byte value {}", origin, i,
                  int(p[i]));
    }
  }
  if (!fortran || shape.size() < 2) return t;
  IntShape perm(shape.size());
  for (size_t i = 0; i < perm.size(); ++i) perm[i] = int64_t(perm.size() - 1 - i);
  return contiguous(permute(t, perm));
}

Tensor load_npy(const std::string& path) {
  auto file = MappedFile::open(path);
  return parse_npy(file->data(), file->size(), path);
}

void save_npy(const std::string& path, const Tensor& t) {
  const char* descr = descr_of(t.dtype());
  INGOT_CHECK(descr != nullptr, IoError,
              "[npy] cannot save '{}': NumPy has no {} dtype; convert the tensor first", path,
              t.dtype());
  IntShape shape = t.sizes();
  std::string dims;
  for (int64_t s : shape) dims += std::to_string(s) + ", ";
  if (shape.size() > 1) dims.resize(dims.size() - 2);
  std::string header =
      fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}), }}", descr, dims);
  // Pad with spaces so the data starts 64-byte aligned, ending with '\n'.
  const size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  INGOT_CHECK(header.size() <= 65535, IoError, "[npy] cannot save '{}': header too long", path);
  Tensor c = contiguous(t);
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  INGOT_CHECK(f.good(), IoError, "[npy] cannot write '{}'", path);
  f.write(kMagic, kMagicLen);
  const char version_and_len[4] = {1, 0, char(header.size() & 0xff), char(header.size() >> 8)};
  f.write(version_and_len, 4);
  f.write(header.data(), std::streamsize(header.size()));
  if (c.nbytes() > 0) f.write(static_cast<const char*>(c.raw_data()), std::streamsize(c.nbytes()));
  INGOT_CHECK(f.good(), IoError, "[npy] error while writing '{}'", path);
}

}  // namespace ingot::formats
