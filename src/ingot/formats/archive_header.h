// The fixed 64-byte header of a .ingot archive (docs/ingot_format.md) and the checks
// that make every later read of the file safe.
//
//   offset  size  field
//        0     6  magic "INGOT\0"
//        6     2  reserved, zero
//        8     4  format version (u32)
//       12     4  reserved, zero
//       16     8  JSON section offset (u64)
//       24     8  JSON section length (u64)
//       32     8  data section offset (u64, a multiple of 64)
//       40     8  data section length (u64)
//       48    16  reserved, zero
//
// Every integer is little-endian. Invariant after decode_archive_header() returns: the
// JSON section lies inside the file after the header, the data section lies inside the
// file after the JSON section, is 64-byte aligned and ends exactly at the end of the file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace ingot::archive {

inline constexpr char kMagic[6] = {'I', 'N', 'G', 'O', 'T', '\0'};
inline constexpr uint32_t kFormatVersion = 1;
inline constexpr size_t kHeaderSize = 64;
inline constexpr size_t kAlignment = 64;

struct Header {
  uint32_t format_version = kFormatVersion;
  uint64_t json_offset = 0;
  uint64_t json_length = 0;
  uint64_t data_offset = 0;
  uint64_t data_length = 0;
};

// The 64 header bytes for `h`.
std::string encode_archive_header(const Header& h);

// Reads and checks the header of a file of `size` bytes. Throws IoError naming `origin`
// and the field at fault: wrong magic, a version this build does not read, a file cut
// inside a header field, reserved bytes set, or sections outside the file.
Header decode_archive_header(const uint8_t* data, size_t size, const std::string& origin);

// n rounded up to a multiple of kAlignment.
inline uint64_t align_up(uint64_t n) {
  return (n + kAlignment - 1) / kAlignment * kAlignment;
}

}  // namespace ingot::archive
