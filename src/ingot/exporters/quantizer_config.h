// QuantizerConfig: the `quantizer` field every export config carries (seed 003: "every
// export config takes a quantizer to quantise the model during export").
//
//   NativeExportConfig c;
//   c.quantizer.scheme = "int4";        // "" (none), "int8" or "int4"
//   c.quantizer.group_size = 32;        // int4: 32, 64 or 128 weights share one scale
//   c.quantizer.zero_point = true;      // int4: asymmetric groups (a zero point per group)
//   c.quantizer.exclude = {"mlp\\.down_proj"};   // weights whose name matches stay float
//
// Schemes (weight-only; activations stay float):
//  - int8: symmetric, one scale per output channel: w = (q - 128) * s, q in [1, 255].
//  - int4: group-wise along the input dim: w = (q - z) * s, q in [0, 15]; z = 8 without
//    zero points, else a per-group z in [0, 15].
// Which linears: every `linear` node whose weight is a parameter, except the tied or
// separate lm_head (unless `lm_head`) and those whose weight name matches an `exclude`
// regex (ECMAScript, searched anywhere in the name). Embeddings are never quantised.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace ingot::exporters {

struct QuantizerConfig {
  std::string scheme;       // "", "int8", "int4"
  int64_t group_size = 32;  // int4 only: 32, 64 or 128
  bool zero_point = false;  // int4 only
  bool lm_head = false;     // also quantise the output projection
  std::vector<std::string> exclude;

  bool enabled() const { return !scheme.empty(); }
  int bits() const { return scheme == "int4" ? 4 : 8; }
  // Throws ValueError naming `origin` for an unknown scheme, a group size other than
  // 32/64/128, or an exclude pattern that is not a valid regex.
  void validate(const std::string& origin) const;
  bool operator==(const QuantizerConfig&) const = default;
};

// JSON form: null (no quantisation), a scheme name ("int8", "int4"), or an object with
// the fields above ({"scheme": "int4", "group_size": 64, "exclude": ["lm_head"]}).
void quantizer_to_json(const QuantizerConfig& q, nlohmann::ordered_json& out);
QuantizerConfig quantizer_from_json(const nlohmann::ordered_json& j, const std::string& origin);

}  // namespace ingot::exporters
