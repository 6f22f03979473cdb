// The ZIP container of a .pt2 archive (torch.export.save / PyTorchStreamWriter).
//
// torch writes every record *stored* (no compression), each record's bytes aligned to 64
// in the file, and ZIP64 records when the archive needs them. ZipReader reads the
// central directory of such a file held in memory and hands out each record as a
// byte range of that memory (so weights can be mapped, never copied); ZipWriter writes
// the same layout (stored, 64-aligned, CRC-32 per record, ZIP64 when needed).
//
// Reading checks everything it relies on: the end-of-central-directory record (and the
// ZIP64 one), every central entry and local header inside the file, stored records
// only, sizes that agree between the central directory and the local header, no
// duplicate names. Every problem is an IoError naming `origin` and the record.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace ingot::pt2 {

struct ZipRecord {
  std::string name;
  uint64_t data_offset = 0;  // from the start of the file
  uint64_t size = 0;
  uint32_t crc32 = 0;
};

class ZipReader {
 public:
  ZipReader(const uint8_t* data, size_t size, std::string origin);

  const std::vector<ZipRecord>& records() const { return records_; }
  const ZipRecord* find(std::string_view name) const;
  // The record's bytes; throws IoError naming it when absent.
  std::string_view bytes(std::string_view name) const;
  std::string_view bytes(const ZipRecord& r) const;
  // Checks the record's bytes against its CRC-32 (IoError naming it on mismatch).
  void verify_crc(const ZipRecord& r) const;
  const std::string& origin() const { return origin_; }

 private:
  const uint8_t* data_;
  size_t size_;
  std::string origin_;
  std::vector<ZipRecord> records_;
  std::map<std::string, size_t, std::less<>> by_name_;
};

uint32_t crc32(const void* data, size_t n, uint32_t crc = 0);

// Builds a stored ZIP in memory or on a stream: add() records in order, then finish().
class ZipWriter {
 public:
  using Sink = std::function<void(const void*, size_t)>;
  explicit ZipWriter(Sink sink) : sink_(std::move(sink)) {}
  // Writes one record whose data starts at a multiple of 64 in the file.
  void add(const std::string& name, std::string_view bytes);
  void finish();

 private:
  struct Entry {
    std::string name;
    uint64_t header_offset, size;
    uint32_t crc;
  };
  void put(const void* p, size_t n);
  Sink sink_;
  uint64_t offset_ = 0;
  std::vector<Entry> entries_;
};

}  // namespace ingot::pt2
