#include "ingot/exporters/quantizer.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>

#include "ingot/core/error.h"

namespace ingot::exporters {

namespace {
std::map<std::string, QuantizerFactory>& factories() {
  static std::map<std::string, QuantizerFactory> f;
  return f;
}
}  // namespace

bool register_quantizer(const std::string& name, QuantizerFactory factory) {
  auto [it, inserted] = factories().emplace(name, std::move(factory));
  INGOT_CHECK(inserted, InternalError, "[quantizer] '{}' is registered twice", name);
  return true;
}

std::vector<std::string> registered_quantizers() {
  std::vector<std::string> out;
  for (const auto& [name, f] : factories()) out.push_back(name);
  return out;
}

std::unique_ptr<Quantizer> make_quantizer(const QuantizerConfig& config,
                                          const std::string& format) {
  auto it = factories().find(config.method);
  INGOT_CHECK(it != factories().end(), ValueError,
              "[quantizer] unknown method '{}' (registered: {})", config.method,
              fmt::join(registered_quantizers(), ", "));
  std::unique_ptr<Quantizer> q = it->second(config);
  const std::vector<std::string> formats = q->formats();
  INGOT_CHECK(formats.empty() || std::find(formats.begin(), formats.end(), format) != formats.end(),
              NotSupportedError,
              "[quantizer] method '{}' does not quantise for format '{}' (it supports: {})",
              config.method, format, fmt::join(formats, ", "));
  return q;
}

}  // namespace ingot::exporters
