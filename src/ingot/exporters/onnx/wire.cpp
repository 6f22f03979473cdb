#include "ingot/exporters/onnx/wire.h"

#include <fmt/format.h>

#include <bit>

namespace ingot::exporters::onnx::wire {

static_assert(std::endian::native == std::endian::little,
              "the wire format's fixed-width values are copied as little-endian memory");

std::string_view wire_type_name(WireType t) {
  switch (t) {
    case WireType::Varint: return "varint";
    case WireType::Fixed64: return "fixed64";
    case WireType::Len: return "length-delimited";
    case WireType::StartGroup: return "start-group";
    case WireType::EndGroup: return "end-group";
    case WireType::Fixed32: return "fixed32";
  }
  return "unknown";
}

// --- Encoder ----------------------------------------------------------------------

void Encoder::varint(uint64_t v) {
  if (out_ == nullptr) {
    size_ += varint_size(v);
    return;
  }
  char buf[10];
  size_t n = 0;
  while (v >= 0x80) {
    buf[n++] = char(uint8_t(v) | 0x80);
    v >>= 7;
  }
  buf[n++] = char(v);
  out_->append(buf, n);
  size_ += n;
}

void Encoder::raw(const void* data, size_t n) {
  if (out_ != nullptr && n > 0) out_->append(static_cast<const char*>(data), n);
  size_ += n;
}

void Encoder::field_float(uint32_t field, float v) {
  tag(field, WireType::Fixed32);
  raw(&v, 4);
}

void Encoder::field_bytes(uint32_t field, const void* data, size_t n) {
  tag(field, WireType::Len);
  varint(n);
  raw(data, n);
}

void Encoder::packed_floats(uint32_t field, const std::vector<float>& v) {
  if (!v.empty()) field_bytes(field, v.data(), v.size() * sizeof(float));
}

void Encoder::packed_doubles(uint32_t field, const std::vector<double>& v) {
  if (!v.empty()) field_bytes(field, v.data(), v.size() * sizeof(double));
}

namespace {

template <typename T, typename ToU64>
void packed_varints(Encoder& e, uint32_t field, const std::vector<T>& v, ToU64 to_u64) {
  if (v.empty()) return;
  size_t n = 0;
  for (T x : v) n += varint_size(to_u64(x));
  e.tag(field, WireType::Len);
  e.varint(n);
  for (T x : v) e.varint(to_u64(x));
}

}  // namespace

void Encoder::packed_int32s(uint32_t field, const std::vector<int32_t>& v) {
  packed_varints(*this, field, v, [](int32_t x) { return uint64_t(int64_t(x)); });
}

void Encoder::packed_int64s(uint32_t field, const std::vector<int64_t>& v) {
  packed_varints(*this, field, v, [](int64_t x) { return uint64_t(x); });
}

void Encoder::packed_uint64s(uint32_t field, const std::vector<uint64_t>& v) {
  packed_varints(*this, field, v, [](uint64_t x) { return x; });
}

// --- Decoder ----------------------------------------------------------------------

Decoder::Tag Decoder::tag() {
  uint64_t t = varint();
  if (t > 0xffffffffu) throw WireError(fmt::format("tag {} is larger than 32 bits", t));
  auto type = WireType(t & 7);
  auto field = uint32_t(t >> 3);
  if (field == 0) throw WireError("field number 0 is invalid");
  if (type == WireType::StartGroup || type == WireType::EndGroup) {
    throw WireError(fmt::format("field {} uses the {} wire type, which ONNX never writes", field,
                                wire_type_name(type)));
  }
  if (uint8_t(type) > 5) {
    throw WireError(fmt::format("field {} has invalid wire type {}", field, int(type)));
  }
  return {field, type};
}

uint64_t Decoder::varint() {
  uint64_t v = 0;
  for (int shift = 0; shift < 70; shift += 7) {
    if (p_ == end_) throw WireError("truncated varint");
    uint8_t b = *p_++;
    if (shift == 63 && (b & 0x7e) != 0) throw WireError("varint overflows 64 bits");
    v |= uint64_t(b & 0x7f) << shift;
    if ((b & 0x80) == 0) return v;
  }
  throw WireError("varint longer than 10 bytes");
}

uint32_t Decoder::fixed32() {
  if (remaining() < 4) throw WireError("truncated fixed32 value");
  uint32_t v;
  std::memcpy(&v, p_, 4);
  p_ += 4;
  return v;
}

uint64_t Decoder::fixed64() {
  if (remaining() < 8) throw WireError("truncated fixed64 value");
  uint64_t v;
  std::memcpy(&v, p_, 8);
  p_ += 8;
  return v;
}

std::string_view Decoder::bytes() {
  uint64_t n = varint();
  if (n > remaining()) {
    throw WireError(
        fmt::format("length {} runs past the end of its message ({} bytes left)", n, remaining()));
  }
  std::string_view s(reinterpret_cast<const char*>(p_), size_t(n));
  p_ += n;
  return s;
}

void Decoder::skip(WireType type) {
  switch (type) {
    case WireType::Varint: varint(); return;
    case WireType::Fixed64: fixed64(); return;
    case WireType::Len: bytes(); return;
    case WireType::Fixed32: fixed32(); return;
    default: break;
  }
  throw WireError(fmt::format("cannot skip a field of wire type {}", wire_type_name(type)));
}

// --- repeated scalars -------------------------------------------------------------

namespace {

void expect_type(WireType got, WireType want, const char* what) {
  if (got != want) {
    throw WireError(fmt::format("{} value has wire type {}, expected {} (or packed)", what,
                                wire_type_name(got), wire_type_name(want)));
  }
}

template <typename T, size_t N>
void read_fixed(Decoder& d, WireType type, std::vector<T>& out, WireType scalar, const char* what) {
  if (type == WireType::Len) {
    std::string_view s = d.bytes();
    if (s.size() % N != 0) {
      throw WireError(
          fmt::format("packed {} field of {} bytes is not a multiple of {}", what, s.size(), N));
    }
    size_t old = out.size();
    out.resize(old + s.size() / N);
    if (!s.empty()) std::memcpy(out.data() + old, s.data(), s.size());
    return;
  }
  expect_type(type, scalar, what);
  if constexpr (N == 4) {
    out.push_back(d.float32());
  } else {
    out.push_back(d.float64());
  }
}

template <typename T, typename FromU64>
void read_varints(Decoder& d, WireType type, std::vector<T>& out, const char* what,
                  FromU64 from_u64) {
  if (type == WireType::Len) {
    std::string_view s = d.bytes();
    Decoder inner(reinterpret_cast<const uint8_t*>(s.data()), s.size());
    while (!inner.done()) out.push_back(from_u64(inner.varint()));
    return;
  }
  expect_type(type, WireType::Varint, what);
  out.push_back(from_u64(d.varint()));
}

}  // namespace

void read_repeated_floats(Decoder& d, WireType type, std::vector<float>& out) {
  read_fixed<float, 4>(d, type, out, WireType::Fixed32, "float");
}

void read_repeated_doubles(Decoder& d, WireType type, std::vector<double>& out) {
  read_fixed<double, 8>(d, type, out, WireType::Fixed64, "double");
}

void read_repeated_int32s(Decoder& d, WireType type, std::vector<int32_t>& out) {
  // protobuf truncates an int32 read from a wider varint to its low 32 bits.
  read_varints(d, type, out, "int32", [](uint64_t v) { return int32_t(uint32_t(v)); });
}

void read_repeated_int64s(Decoder& d, WireType type, std::vector<int64_t>& out) {
  read_varints(d, type, out, "int64", [](uint64_t v) { return int64_t(v); });
}

void read_repeated_uint64s(Decoder& d, WireType type, std::vector<uint64_t>& out) {
  read_varints(d, type, out, "uint64", [](uint64_t v) { return v; });
}

}  // namespace ingot::exporters::onnx::wire
