// QuantizerConfig: the `quantizer` field every export config carries (seed 003: "every
// export config takes a quantizer to quantise the model during export").
//
//   NativeExportConfig c;
//   c.quantizer.scheme = "int4";        // "" (none), "int8" or "int4"
//   c.quantizer.group_size = 32;        // int4: 32, 64 or 128 weights share one scale
//   c.quantizer.zero_point = true;      // int4: asymmetric groups (a zero point per group)
//   c.quantizer.exclude = {"mlp\\.down_proj"};   // weights whose name matches stay float
//   c.quantizer.method = "gptq";        // how each weight is rounded (exporters/quantizer.h)
//   c.quantizer.dataset = "calib.txt";  // calibration text for the methods that use it
//   c.quantizer.rules = {{"v_proj|down_proj", 8}};   // mixed precision by name
//
// Schemes (weight-only; activations stay float):
//  - int8: symmetric, one scale per output channel: w = (q - 128) * s, q in [1, 255].
//  - int4: group-wise along the input dim: w = (q - z) * s, q in [0, 15]; z = 8 without
//    zero points, else a per-group z in [0, 15].
//  - "q4_k_m", "q4_k_s", "q6_k", "q8_0": llama.cpp file types, for export format "gguf"
//    only (exporters/gguf/gguf_file_types.h). The quantize stage leaves the program's
//    weights float and the GGUF writer quantises them into llama.cpp's blocks (k-quants),
//    weighted by the calibration's importance when `dataset` is given; only dataset,
//    num_samples and seq_len apply (the other fields keep their defaults).
// Methods (registered quantisers, exporters/quantizer.h): "rtn" (round to nearest, the
// default), "scale-search" (per-group scales that minimise the reconstruction error,
// weighted by calibration importance when a dataset is given), "gptq" (column-by-column
// error compensation with the calibration inputs' Hessian; needs a dataset).
// Calibration (exporters/calibration.h): `dataset` is a text file, JSONL of {"text": ...}
// or JSONL of {"messages": [...]} rendered with the model's chat template; up to
// `num_samples` samples of at most `seq_len` tokens run through the model.
// Mixed precision: the first `rules` entry whose pattern matches a weight's name sets its
// bits (4 or 8); `preset` "q4_k_m" adds llama.cpp Q4_K_M's choice (v_proj and down_proj
// in 8 bits in the first and last eighth of the layers and every third layer between);
// `ratio` < 1 keeps that fraction of the int4 weights' parameters in int4 and puts the
// most sensitive rest in int8 (sensitivity: the int4 rounding error per weight, weighted
// by the calibration importance when a dataset is given).
// Which linears: every `linear` node whose weight is a parameter, except those whose
// weight name matches an `exclude` regex (ECMAScript, searched anywhere in the name).
// The tied or separate lm_head: with the scheme itself when `lm_head`; otherwise as int8
// per output channel (the default under both schemes, as llama.cpp's Q8_0 / Q4_0 files
// store it in 8 bits or more: half the bytes of a bf16 head, a quarter of f32, without
// int4's error on the logits) unless `keep_lm_head_float`. Embeddings are never quantised.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace ingot::exporters {

// A mixed-precision rule: weights whose name matches `pattern` (ECMAScript, searched
// anywhere in the name) are packed with `bits` (4 or 8).
struct BitsRule {
  std::string pattern;
  int bits = 8;
  bool operator==(const BitsRule&) const = default;
};

struct QuantizerConfig {
  std::string scheme;               // "", "int8", "int4"
  int64_t group_size = 32;          // int4 only: 32, 64 or 128
  bool zero_point = false;          // int4 only
  bool lm_head = false;             // quantise the output projection with the scheme itself
  bool keep_lm_head_float = false;  // keep the output projection float, not int8
  std::vector<std::string> exclude;
  std::string method = "rtn";   // a registered quantiser (registered_quantizers())
  std::string dataset;          // calibration set ("" = none)
  int64_t num_samples = 128;    // calibration samples
  int64_t seq_len = 256;        // tokens per calibration sample (at most)
  std::vector<BitsRule> rules;  // mixed precision by name; the first match wins
  std::string preset;           // "" or "q4_k_m"
  double ratio = 1.0;           // int4: the fraction of parameters kept in int4, in (0, 1]
  bool act_order = false;       // gptq: columns in decreasing Hessian diagonal order
  double damp = 0.01;           // gptq: diagonal damping, a fraction of the mean diagonal

  bool enabled() const { return !scheme.empty(); }
  // A llama.cpp file type (gguf only): the GGUF writer quantises, not the quantize stage.
  bool gguf_file_type() const;
  int bits() const { return scheme == "int4" ? 4 : 8; }
  // Bits of the output projection's weight: 0 (kept float), 8 or 4.
  int lm_head_bits() const {
    if (lm_head) return bits();
    return keep_lm_head_float ? 0 : 8;
  }
  // Throws ValueError naming `origin` for an unknown scheme or method, a GGUF file type
  // with a field other than dataset / num_samples / seq_len set, a group size other than
  // 32/64/128, an exclude pattern that is not a valid regex, both `lm_head` and
  // `keep_lm_head_float`, a rule with bits other than 4 / 8 or an invalid pattern, an
  // unknown preset, num_samples / seq_len < 1, damp or ratio outside (0, 1].
  void validate(const std::string& origin) const;
  bool operator==(const QuantizerConfig&) const = default;
};

// The schemes that are llama.cpp file types: q4_k_m, q4_k_s, q6_k, q8_0.
const std::vector<std::string>& gguf_file_type_schemes();

// JSON form: null (no quantisation), a scheme name ("int8", "int4"), or an object with
// the fields above ({"scheme": "int4", "group_size": 64, "exclude": ["lm_head"]}).
void quantizer_to_json(const QuantizerConfig& q, nlohmann::ordered_json& out);
QuantizerConfig quantizer_from_json(const nlohmann::ordered_json& j, const std::string& origin);

}  // namespace ingot::exporters
