#include "ingot/formats/pt2/zip.h"

#include <array>
#include <cstring>

#include "ingot/core/error.h"

namespace ingot::pt2 {
namespace {

// Record signatures and fixed sizes (APPNOTE.TXT 4.3).
constexpr uint32_t kLocalSig = 0x04034b50, kCentralSig = 0x02014b50, kEndSig = 0x06054b50;
constexpr uint32_t kEnd64Sig = 0x06064b50, kEnd64LocatorSig = 0x07064b50;
constexpr size_t kLocalSize = 30, kCentralSize = 46, kEndSize = 22, kEnd64Size = 56,
                 kEnd64LocatorSize = 20;
constexpr uint16_t kZip64ExtraId = 0x0001;
constexpr uint64_t kAlign = 64;
// At most this many records (far above any archive; bounds the work on a corrupt count).
constexpr uint64_t kMaxRecords = uint64_t(1) << 24;

// Little-endian reads of a region already checked to be inside the file.
uint16_t u16(const uint8_t* p) {
  return uint16_t(p[0] | p[1] << 8);
}
uint32_t u32(const uint8_t* p) {
  return uint32_t(u16(p)) | uint32_t(u16(p + 2)) << 16;
}
uint64_t u64(const uint8_t* p) {
  return uint64_t(u32(p)) | uint64_t(u32(p + 4)) << 32;
}

}  // namespace

uint32_t crc32(const void* data, size_t n, uint32_t crc) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  crc = ~crc;
  const auto* p = static_cast<const uint8_t*>(data);
  for (size_t i = 0; i < n; ++i) crc = table[(crc ^ p[i]) & 0xFF] ^ (crc >> 8);
  return ~crc;
}

ZipReader::ZipReader(const uint8_t* data, size_t size, std::string origin)
    : data_(data), size_(size), origin_(std::move(origin)) {
  auto fail = [&](const std::string& what) -> void {
    throw IoError(fmt::format("[pt2] '{}': not a readable .pt2 (ZIP) archive: {}", origin_, what));
  };
  auto inside = [&](uint64_t offset, uint64_t n) { return offset <= size_ && n <= size_ - offset; };
  if (size_ < kEndSize) fail(fmt::format("{} bytes is too short for a ZIP file", size_));
  // The end record sits at the end, before a comment of at most 65535 bytes.
  uint64_t end = UINT64_MAX;
  const uint64_t lowest = size_ > kEndSize + 65535 ? size_ - kEndSize - 65535 : 0;
  for (uint64_t pos = size_ - kEndSize + 1; pos-- > lowest;) {
    if (u32(data_ + pos) == kEndSig && pos + kEndSize + u16(data_ + pos + 20) == size_) {
      end = pos;
      break;
    }
  }
  if (end == UINT64_MAX) fail("no end-of-central-directory record (truncated or not a ZIP)");
  const uint8_t* e = data_ + end;
  if (u16(e + 4) != 0 || u16(e + 6) != 0) fail("multi-disk archives are not supported");
  uint64_t count = u16(e + 10), cd_size = u32(e + 12), cd_offset = u32(e + 16);
  if (count == 0xFFFF || cd_size == 0xFFFFFFFF || cd_offset == 0xFFFFFFFF) {
    // ZIP64: a locator right before the end record points at the ZIP64 end record.
    if (end < kEnd64LocatorSize || u32(data_ + end - kEnd64LocatorSize) != kEnd64LocatorSig)
      fail("the ZIP64 end-of-central-directory locator is missing");
    const uint64_t at = u64(data_ + end - kEnd64LocatorSize + 8);
    if (!inside(at, kEnd64Size) || u32(data_ + at) != kEnd64Sig)
      fail("the ZIP64 end-of-central-directory record is missing or outside the file");
    count = u64(data_ + at + 32);
    cd_size = u64(data_ + at + 40);
    cd_offset = u64(data_ + at + 48);
  }
  if (!inside(cd_offset, cd_size)) fail("the central directory lies outside the file");
  if (count > kMaxRecords || count * kCentralSize > cd_size)
    fail(fmt::format("the central directory cannot hold {} records", count));
  uint64_t pos = cd_offset;
  const uint64_t cd_end = cd_offset + cd_size;
  for (uint64_t i = 0; i < count; ++i) {
    if (pos + kCentralSize > cd_end || u32(data_ + pos) != kCentralSig)
      fail(fmt::format("central directory entry {} is malformed", i));
    const uint8_t* c = data_ + pos;
    const uint16_t method = u16(c + 10), name_len = u16(c + 28), extra_len = u16(c + 30),
                   comment_len = u16(c + 32);
    if (pos + kCentralSize + name_len + extra_len + comment_len > cd_end)
      fail(fmt::format("central directory entry {} runs past the directory", i));
    ZipRecord r;
    r.name.assign(reinterpret_cast<const char*>(c + kCentralSize), name_len);
    r.crc32 = u32(c + 16);
    uint64_t csize = u32(c + 20), usize = u32(c + 24), local = u32(c + 42);
    // ZIP64 extra field: the 64-bit values of the fields saturated above, in order.
    const uint8_t* x = c + kCentralSize + name_len;
    for (size_t k = 0; k + 4 <= extra_len;) {
      const uint16_t id = u16(x + k), len = u16(x + k + 2);
      if (k + 4 + len > extra_len)
        fail(fmt::format("record '{}' has a malformed extra field", r.name));
      if (id == kZip64ExtraId) {
        size_t q = k + 4;
        auto take = [&](uint64_t& v) {
          if (v != 0xFFFFFFFF) return;
          if (q + 8 > k + 4 + len) fail(fmt::format("record '{}' has a short ZIP64 field", r.name));
          v = u64(x + q);
          q += 8;
        };
        take(usize);
        take(csize);
        take(local);
      }
      k += 4 + len;
    }
    if (method != 0)
      fail(fmt::format("record '{}' is compressed (method {}); .pt2 records are stored", r.name,
                       method));
    if (csize != usize) fail(fmt::format("record '{}' is stored but its sizes differ", r.name));
    if (!inside(local, kLocalSize) || u32(data_ + local) != kLocalSig)
      fail(fmt::format("record '{}': its local header is missing or outside the file", r.name));
    const uint8_t* l = data_ + local;
    if (u16(l + 8) != 0) fail(fmt::format("record '{}': local header says compressed", r.name));
    r.data_offset = local + kLocalSize + u16(l + 26) + u16(l + 28);
    r.size = usize;
    if (!inside(r.data_offset, r.size))
      fail(fmt::format("record '{}' ({} bytes) runs past the end of the file", r.name, r.size));
    if (!by_name_.emplace(r.name, records_.size()).second)
      fail(fmt::format("record '{}' appears twice", r.name));
    records_.push_back(std::move(r));
    pos += kCentralSize + name_len + extra_len + comment_len;
  }
}

const ZipRecord* ZipReader::find(std::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &records_[it->second];
}

std::string_view ZipReader::bytes(const ZipRecord& r) const {
  return {reinterpret_cast<const char*>(data_ + r.data_offset), size_t(r.size)};
}

std::string_view ZipReader::bytes(std::string_view name) const {
  const ZipRecord* r = find(name);
  INGOT_CHECK(r != nullptr, IoError, "[pt2] '{}': the archive has no record '{}'", origin_, name);
  return bytes(*r);
}

void ZipReader::verify_crc(const ZipRecord& r) const {
  const uint32_t got = crc32(data_ + r.data_offset, size_t(r.size));
  INGOT_CHECK(got == r.crc32, IoError,
              "[pt2] '{}': record '{}' is corrupt (CRC-32 {:08x}, the directory says {:08x})",
              origin_, r.name, got, r.crc32);
}

// --- writing ---------------------------------------------------------------------------

namespace {
void le(std::string& s, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) s.push_back(char((v >> (8 * i)) & 0xFF));
}
}  // namespace

void ZipWriter::put(const void* p, size_t n) {
  sink_(p, n);
  offset_ += n;
}

void ZipWriter::add(const std::string& name, std::string_view bytes) {
  const uint64_t header = offset_;
  const bool big = bytes.size() >= 0xFFFFFFFF || header >= 0xFFFFFFFF;
  // Extra fields: ZIP64 sizes when needed, then padding so the data is 64-aligned.
  std::string extra;
  if (big) {
    le(extra, kZip64ExtraId, 2);
    le(extra, 16, 2);
    le(extra, bytes.size(), 8);
    le(extra, bytes.size(), 8);
  }
  const uint64_t unpadded = header + kLocalSize + name.size() + extra.size();
  uint64_t pad = (kAlign - unpadded % kAlign) % kAlign;
  if (pad != 0 && pad < 4) pad += kAlign;  // a padding field needs its 4-byte header
  if (pad != 0) {
    le(extra, 0xCAFE, 2);  // an unregistered id: readers skip it
    le(extra, pad - 4, 2);
    extra.append(size_t(pad - 4), '\0');
  }
  const uint32_t crc = crc32(bytes.data(), bytes.size());
  std::string h;
  le(h, kLocalSig, 4);
  le(h, big ? 45 : 20, 2);  // version needed
  le(h, 0, 2);              // flags
  le(h, 0, 2);              // stored
  le(h, 0, 2);              // time
  le(h, 0x21, 2);           // date: 1980-01-01
  le(h, crc, 4);
  le(h, big ? 0xFFFFFFFF : bytes.size(), 4);
  le(h, big ? 0xFFFFFFFF : bytes.size(), 4);
  le(h, name.size(), 2);
  le(h, extra.size(), 2);
  h += name;
  h += extra;
  put(h.data(), h.size());
  put(bytes.data(), bytes.size());
  entries_.push_back({name, header, bytes.size(), crc});
}

void ZipWriter::finish() {
  const uint64_t cd_offset = offset_;
  for (const Entry& e : entries_) {
    const bool big = e.size >= 0xFFFFFFFF || e.header_offset >= 0xFFFFFFFF;
    std::string c;
    le(c, kCentralSig, 4);
    le(c, big ? 45 : 20, 2);  // made by
    le(c, big ? 45 : 20, 2);  // needed
    le(c, 0, 2);
    le(c, 0, 2);
    le(c, 0, 2);
    le(c, 0x21, 2);
    le(c, e.crc, 4);
    le(c, big ? 0xFFFFFFFF : e.size, 4);
    le(c, big ? 0xFFFFFFFF : e.size, 4);
    le(c, e.name.size(), 2);
    le(c, big ? 28 : 0, 2);  // extra
    le(c, 0, 2);             // comment
    le(c, 0, 2);             // disk
    le(c, 0, 2);             // internal attributes
    le(c, 0, 4);             // external attributes
    le(c, big ? 0xFFFFFFFF : e.header_offset, 4);
    c += e.name;
    if (big) {
      le(c, kZip64ExtraId, 2);
      le(c, 24, 2);
      le(c, e.size, 8);
      le(c, e.size, 8);
      le(c, e.header_offset, 8);
    }
    put(c.data(), c.size());
  }
  const uint64_t cd_size = offset_ - cd_offset;
  const bool big = entries_.size() >= 0xFFFF || cd_offset >= 0xFFFFFFFF || cd_size >= 0xFFFFFFFF;
  std::string t;
  if (big) {
    const uint64_t end64 = offset_;
    le(t, kEnd64Sig, 4);
    le(t, kEnd64Size - 12, 8);
    le(t, 45, 2);
    le(t, 45, 2);
    le(t, 0, 4);
    le(t, 0, 4);
    le(t, entries_.size(), 8);
    le(t, entries_.size(), 8);
    le(t, cd_size, 8);
    le(t, cd_offset, 8);
    le(t, kEnd64LocatorSig, 4);
    le(t, 0, 4);
    le(t, end64, 8);
    le(t, 1, 4);
  }
  le(t, kEndSig, 4);
  le(t, 0, 2);
  le(t, 0, 2);
  le(t, big ? 0xFFFF : entries_.size(), 2);
  le(t, big ? 0xFFFF : entries_.size(), 2);
  le(t, big ? 0xFFFFFFFF : cd_size, 4);
  le(t, big ? 0xFFFFFFFF : cd_offset, 4);
  le(t, 0, 2);
  put(t.data(), t.size());
}

}  // namespace ingot::pt2
