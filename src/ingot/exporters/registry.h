#pragma once
// The two shapes of registry the exporters fill while static objects initialise:
//   - KeyedRegistry: one function per op name (ONNX / OpenVINO translations, ExecuTorch
//     kernel mappings), looked up while lowering a graph;
//   - append_named: an ordered list of named entries (node / program / IR fixes, patches),
//     applied in registration order.
// Every entry remembers the source line that registered it ("lowering_math.cpp:42"), so a
// second registration under the same key or name is an InternalError naming both places.

#include <fmt/format.h>

#include <filesystem>
#include <map>
#include <source_location>
#include <string>
#include <string_view>
#include <vector>

#include "ingot/core/error.h"

namespace ingot::exporters {

// "file.cpp:123": where a registration came from, for messages.
inline std::string source_site(const std::source_location& where) {
  return fmt::format("{}:{}", std::filesystem::path(where.file_name()).filename().string(),
                     where.line());
}

// One `Fn` per key. `owner` prefixes messages ("[onnx]"); `entries` names what the
// registry holds, in the plural ("translations").
template <class Fn>
class KeyedRegistry {
 public:
  KeyedRegistry(std::string owner, std::string entries)
      : owner_(std::move(owner)), entries_name_(std::move(entries)) {}

  void add(const std::string& key, Fn fn, const std::source_location& where) {
    const std::string at = source_site(where);
    auto [it, inserted] = entries_.emplace(key, Entry{std::move(fn), at});
    INGOT_CHECK(inserted, InternalError, "{} op '{}' has two {} ({} and {})", owner_, key,
                entries_name_, it->second.where, at);
  }

  // The function registered for `key`, or nullptr.
  const Fn* find(std::string_view key) const {
    auto it = entries_.find(key);
    return it == entries_.end() ? nullptr : &it->second.fn;
  }

  // Every key, sorted.
  std::vector<std::string> keys() const {
    std::vector<std::string> out;
    out.reserve(entries_.size());
    for (const auto& [key, entry] : entries_) out.push_back(key);
    return out;
  }

 private:
  struct Entry {
    Fn fn;
    std::string where;
  };
  std::string owner_;
  std::string entries_name_;
  std::map<std::string, Entry, std::less<>> entries_;
};

// Appends `entry` (a struct with string members `name` and `where`) to `list`, stamping
// `where`; a second entry with the same name is an InternalError. `label` names the kind
// in messages ("[exporters] node fix").
template <class List, class Entry>
void append_named(List& list, Entry entry, std::string_view label,
                  const std::source_location& where) {
  for (const Entry& e : list) {
    INGOT_CHECK(e.name != entry.name, InternalError, "{} '{}' is registered twice ({} and {})",
                label, entry.name, e.where, source_site(where));
  }
  entry.where = source_site(where);
  list.push_back(std::move(entry));
}

}  // namespace ingot::exporters
