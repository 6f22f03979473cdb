// Protocol-buffers wire format (proto2), the small part that ONNX files need.
//
// A message is a sequence of fields, each a tag (field number << 3 | wire type) followed
// by a varint, an 8-byte or 4-byte little-endian value, or a varint length and that many
// bytes (strings, bytes, nested messages, packed repeated scalars).
//
// Encoder appends fields to a string, or only counts their bytes: a nested message is
// counted once to learn its length prefix, then written, so writing costs the message
// size times the nesting depth and never copies a submessage's bytes.
// Decoder reads fields from a bounded buffer and throws WireError on any malformed
// input (truncation, overlong varint, length past the end, group wire types); it never
// reads outside [data, data + size).
#pragma once

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace ingot::exporters::onnx::wire {

enum class WireType : uint8_t {
  Varint = 0,
  Fixed64 = 1,
  Len = 2,
  StartGroup = 3,
  EndGroup = 4,
  Fixed32 = 5,
};

std::string_view wire_type_name(WireType t);

// A malformed byte stream; the reader adds the file and field path.
class WireError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Bytes a varint takes.
inline size_t varint_size(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

class Encoder {
 public:
  // Appends to *out; with out == nullptr only counts (see size()).
  explicit Encoder(std::string* out) : out_(out) {}

  size_t size() const { return size_; }

  void varint(uint64_t v);
  void tag(uint32_t field, WireType type) { varint((uint64_t(field) << 3) | uint64_t(type)); }
  void raw(const void* data, size_t n);

  void field_uint64(uint32_t field, uint64_t v) {
    tag(field, WireType::Varint);
    varint(v);
  }
  // int64 and int32 are two's complement in 64 bits (a negative int32 takes 10 bytes).
  void field_int64(uint32_t field, int64_t v) { field_uint64(field, uint64_t(v)); }
  void field_int32(uint32_t field, int32_t v) { field_uint64(field, uint64_t(int64_t(v))); }
  void field_float(uint32_t field, float v);
  void field_bytes(uint32_t field, const void* data, size_t n);
  void field_string(uint32_t field, std::string_view s) { field_bytes(field, s.data(), s.size()); }

  // Packed repeated scalars: one length-delimited field holding all values.
  void packed_floats(uint32_t field, const std::vector<float>& v);
  void packed_doubles(uint32_t field, const std::vector<double>& v);
  void packed_int32s(uint32_t field, const std::vector<int32_t>& v);
  void packed_int64s(uint32_t field, const std::vector<int64_t>& v);
  void packed_uint64s(uint32_t field, const std::vector<uint64_t>& v);

  // A nested message whose fields `body(Encoder&)` writes.
  template <typename Body>
  void field_message(uint32_t field, const Body& body) {
    Encoder counter(nullptr);
    body(counter);
    tag(field, WireType::Len);
    varint(counter.size());
    if (out_ == nullptr) {
      size_ += counter.size();
    } else {
      body(*this);
    }
  }

 private:
  std::string* out_;
  size_t size_ = 0;
};

class Decoder {
 public:
  Decoder(const uint8_t* data, size_t size) : p_(data), end_(data + size) {}

  bool done() const { return p_ == end_; }
  size_t remaining() const { return size_t(end_ - p_); }

  struct Tag {
    uint32_t field;
    WireType type;
  };
  // Reads the next tag; field 0 and group wire types are errors.
  Tag tag();

  uint64_t varint();
  uint32_t fixed32();
  uint64_t fixed64();
  float float32() {
    uint32_t u = fixed32();
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
  double float64() {
    uint64_t u = fixed64();
    double d;
    std::memcpy(&d, &u, 8);
    return d;
  }
  // A length-delimited payload; the view points into the decoded buffer.
  std::string_view bytes();
  // Skips one field's payload of wire type `type`.
  void skip(WireType type);

 private:
  const uint8_t* p_;
  const uint8_t* end_;
};

// Reads a repeated scalar field that may be packed (one Len field) or not (one field
// per value), appending to `out`; `type` is the wire type of the tag just read.
void read_repeated_floats(Decoder& d, WireType type, std::vector<float>& out);
void read_repeated_doubles(Decoder& d, WireType type, std::vector<double>& out);
void read_repeated_int32s(Decoder& d, WireType type, std::vector<int32_t>& out);
void read_repeated_int64s(Decoder& d, WireType type, std::vector<int64_t>& out);
void read_repeated_uint64s(Decoder& d, WireType type, std::vector<uint64_t>& out);

}  // namespace ingot::exporters::onnx::wire
