#include "ingot/formats/archive_header.h"

#include <cstring>

#include "ingot/core/error.h"

namespace ingot::archive {

namespace {

// Header fields in file order, for "truncated inside field X" messages.
struct Field {
  const char* name;
  size_t offset;
  size_t size;
};
constexpr Field kFields[] = {
    {"magic", 0, 6},
    {"reserved bytes 6..7", 6, 2},
    {"format version", 8, 4},
    {"reserved bytes 12..15", 12, 4},
    {"JSON offset", 16, 8},
    {"JSON length", 24, 8},
    {"data offset", 32, 8},
    {"data length", 40, 8},
    {"reserved bytes 48..63", 48, 16},
};

void put_le(std::string& out, size_t offset, uint64_t v, size_t bytes) {
  for (size_t i = 0; i < bytes; ++i) out[offset + i] = char((v >> (8 * i)) & 0xff);
}

uint64_t get_le(const uint8_t* p, size_t bytes) {
  uint64_t v = 0;
  for (size_t i = 0; i < bytes; ++i) v |= uint64_t(p[i]) << (8 * i);
  return v;
}

// Throws when the file ends before field `f` does.
void require(const Field& f, size_t size, const std::string& origin) {
  INGOT_CHECK(size >= f.offset + f.size, IoError,
              "[load] '{}' is truncated: it has {} bytes, the header field '{}' needs bytes "
              "{}..{} (the header is {} bytes); the file was not completely written or copied",
              origin, size, f.name, f.offset, f.offset + f.size - 1, kHeaderSize);
}

bool all_zero(const uint8_t* p, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (p[i] != 0) return false;
  }
  return true;
}

}  // namespace

std::string encode_archive_header(const Header& h) {
  std::string out(kHeaderSize, '\0');
  std::memcpy(out.data(), kMagic, sizeof(kMagic));
  put_le(out, 8, h.format_version, 4);
  put_le(out, 16, h.json_offset, 8);
  put_le(out, 24, h.json_length, 8);
  put_le(out, 32, h.data_offset, 8);
  put_le(out, 40, h.data_length, 8);
  return out;
}

Header decode_archive_header(const uint8_t* data, size_t size, const std::string& origin) {
  require(kFields[0], size, origin);
  INGOT_CHECK(std::memcmp(data, kMagic, sizeof(kMagic)) == 0, IoError,
              "[load] '{}' is not an ingot archive: it does not start with the magic "
              "\"INGOT\\0\" (save one with ingot::save or `ingot export`)",
              origin);
  require(kFields[1], size, origin);
  require(kFields[2], size, origin);
  Header h;
  h.format_version = uint32_t(get_le(data + 8, 4));
  INGOT_CHECK(h.format_version <= kFormatVersion && h.format_version != 0, IoError,
              "[load] '{}' has archive format version {}, this build of ingot reads version {}{}",
              origin, h.format_version, kFormatVersion,
              h.format_version > kFormatVersion
                  ? "; it was written by a newer ingot: upgrade ingot to load it"
                  : "; version 0 does not exist, the header is corrupt");
  for (const Field& f : kFields) require(f, size, origin);
  INGOT_CHECK(all_zero(data + 6, 2) && all_zero(data + 12, 4) && all_zero(data + 48, 16), IoError,
              "[load] '{}': reserved header bytes are not zero; the header is corrupt", origin);
  h.json_offset = get_le(data + 16, 8);
  h.json_length = get_le(data + 24, 8);
  h.data_offset = get_le(data + 32, 8);
  h.data_length = get_le(data + 40, 8);

  // Sections, compared without overflow: each offset is checked against the size first.
  INGOT_CHECK(h.json_offset >= kHeaderSize && h.json_offset <= size &&
                  h.json_length <= size - h.json_offset,
              IoError,
              "[load] '{}': the JSON section [{}, +{}) lies outside the file ({} bytes, header {} "
              "bytes); the file is truncated or corrupt",
              origin, h.json_offset, h.json_length, size, kHeaderSize);
  const uint64_t json_end = h.json_offset + h.json_length;
  INGOT_CHECK(
      h.data_offset % kAlignment == 0, IoError,
      "[load] '{}': the data section offset {} is not a multiple of {}; the header is corrupt",
      origin, h.data_offset, kAlignment);
  INGOT_CHECK(
      h.data_offset >= json_end && h.data_offset <= size && h.data_length <= size - h.data_offset,
      IoError,
      "[load] '{}': the data section [{}, +{}) lies outside the file ({} bytes) or overlaps "
      "the JSON section (ending at {}); the file is truncated or corrupt",
      origin, h.data_offset, h.data_length, size, json_end);
  INGOT_CHECK(h.data_offset + h.data_length == size, IoError,
              "[load] '{}' has {} bytes after the data section (which ends at {}); the file is "
              "corrupt or was appended to",
              origin, size - (h.data_offset + h.data_length), h.data_offset + h.data_length);
  return h;
}

}  // namespace ingot::archive
