#include "ingot/exporters/gguf/gguf_tensors.h"

#include <fmt/ranges.h>

#include <cmath>
#include <map>

#include "ingot/core/error.h"
#include "ingot/core/half.h"
#include "ingot/exporters/gguf/gguf_file_types.h"
#include "ingot/formats/ggml_blocks.h"
#include "ingot/formats/ggml_quantize.h"
#include "ingot/models/gguf_model_metadata.h"
#include "ingot/models/gguf_tokenizer_metadata.h"
#include "ingot/models/gguf_weights.h"
#include "ingot/ops/functional.h"

namespace ingot::exporters {
namespace {

using formats::GgmlType;
using formats::kGgmlBlock;

// llama.cpp's general.file_type (llama_ftype) for the types written.
constexpr uint32_t kFileTypeF32 = 0, kFileTypeF16 = 1, kFileTypeQ4_0 = 2, kFileTypeQ4_1 = 3,
                   kFileTypeQ8_0 = 7, kFileTypeBF16 = 32;

Tensor as_f32(const Tensor& t) {
  return t.dtype() == DType::F32 ? contiguous(t) : to(t, DType::F32);
}

// One of ingot's packed weights (exporters/quantize.h, ops/cpu/quantize_pack.h).
struct Packed {
  Tensor qweight;  // uint8 [N, K] (8 bits) or [N, K / 2] (4 bits, column 2j low nibble)
  Tensor scales;   // f32 [N, K / group]
  Tensor zeros;    // uint8 [N, K / group]; undefined when symmetric
  int bits = 0;
  int64_t group = 0;
  int64_t rows() const { return qweight.size(0); }
  int64_t cols() const { return bits == 8 ? qweight.size(1) : qweight.size(1) * 2; }
  // Level (0 .. 2^bits - 1) of row r, column c.
  uint8_t level(int64_t r, int64_t c) const {
    const uint8_t* q = qweight.data<uint8_t>() + r * qweight.size(1);
    if (bits == 8) return q[c];
    const uint8_t b = q[c / 2];
    return c % 2 == 0 ? (b & 0x0f) : (b >> 4);
  }
  float scale(int64_t r, int64_t c) const { return scales.data<float>()[r * scales.size(1) + c / group]; }
  uint8_t zero(int64_t r, int64_t c) const {
    if (!zeros.defined()) return uint8_t(bits == 8 ? 128 : 8);
    return zeros.data<uint8_t>()[r * zeros.size(1) + c / group];
  }
  // ingot's value: (q - z) * s.
  float value(int64_t r, int64_t c) const {
    return float(int(level(r, c)) - int(zero(r, c))) * scale(r, c);
  }
};

// Checks that every scale survives the f16 the block formats store it in.
void check_f16_scales(const Packed& p, const std::string& name) {
  const float* s = p.scales.data<float>();
  for (int64_t i = 0; i < p.scales.numel(); ++i) {
    const float h = Half::to_float(Half::from_float(s[i]));
    INGOT_CHECK(std::isfinite(s[i]) && std::isfinite(h), NotSupportedError,
                "[gguf] weight '{}': scale {} does not fit the f16 of a ggml block", name, s[i]);
  }
}

std::vector<uint8_t> pack_blocks(const Packed& p, GgmlType type) {
  std::vector<uint8_t> out;
  int8_t q8[kGgmlBlock];
  uint8_t q4[kGgmlBlock];
  for (int64_t r = 0; r < p.rows(); ++r) {
    for (int64_t c0 = 0; c0 < p.cols(); c0 += kGgmlBlock) {
      // A 32-block never straddles two of ingot's groups (group % 32 == 0).
      const float s = p.scale(r, c0);
      const uint8_t z = p.zero(r, c0);
      for (int64_t i = 0; i < kGgmlBlock; ++i) {
        q8[i] = int8_t(int(p.level(r, c0 + i)) - 128);
        q4[i] = p.level(r, c0 + i);
      }
      if (type == GgmlType::Q8_0) formats::put_q8_0_block(s, q8, out);
      if (type == GgmlType::Q4_0) formats::put_q4_0_block(s, q4, out);
      if (type == GgmlType::Q4_1) formats::put_q4_1_block(s, -float(z) * s, q4, out);
    }
  }
  return out;
}

std::vector<uint8_t> float_bytes(const Tensor& t, GgmlType type) {
  const Tensor f = as_f32(t);
  std::vector<uint8_t> out;
  if (type == GgmlType::F32) formats::put_f32(f.data<float>(), f.numel(), out);
  if (type == GgmlType::F16) formats::put_f16(f.data<float>(), f.numel(), out);
  if (type == GgmlType::BF16) formats::put_bf16(f.data<float>(), f.numel(), out);
  return out;
}

GgmlType float_type(const std::string& outtype) {
  if (outtype == "f32") return GgmlType::F32;
  if (outtype == "f16") return GgmlType::F16;
  if (outtype == "bf16") return GgmlType::BF16;
  INGOT_THROW(ValueError, "[gguf] outtype '{}' is not f32, f16 or bf16", outtype);
}

// bits and group of every packed weight an `ingot::quantized_linear` or
// `ingot::quantized_embedding` node of the program reads, by its `.qweight` state name: how
// weights the quantize report does not name (a model loaded packed, e.g. from a GGUF's
// Q4_0 / Q8_0 blocks) are written.
std::map<std::string, std::pair<int, int64_t>> packed_layouts(const ExportedProgram& program) {
  const ir::Graph& g = *program.graph;
  std::map<ir::ValueId, std::string> targets;
  for (size_t i = 0; i < g.inputs.size(); ++i)
    targets[g.inputs[i]] = program.signature.inputs[i].target;
  std::map<std::string, std::pair<int, int64_t>> out;
  for (const ir::Node& n : g.nodes()) {
    const auto* q = n.args.empty() ? nullptr : std::get_if<ir::TensorRef>(&n.args[0]);
    const auto* s = n.args.size() < 2 ? nullptr : std::get_if<ir::TensorRef>(&n.args[1]);
    if (n.target == "ingot::quantized_embedding" && q && s && targets.contains(q->id)) {
      auto dim = g.value(q->id).sizes.at(1).maybe_value();
      auto groups = g.value(s->id).sizes.at(1).maybe_value();
      if (dim && groups) out[targets.at(q->id)] = {8, *dim / *groups};
      continue;
    }
    if (n.target != "ingot::quantized_linear" || n.args.size() != 7) continue;
    q = std::get_if<ir::TensorRef>(&n.args[1]);
    const auto* bits = std::get_if<sym::Expr>(&n.args[5]);
    const auto* group = std::get_if<sym::Expr>(&n.args[6]);
    if (!q || !bits || !group || !targets.contains(q->id)) continue;
    if (auto b = bits->maybe_value(), gs = group->maybe_value(); b && gs)
      out[targets.at(q->id)] = {int(*b), *gs};
  }
  return out;
}

}  // namespace

formats::GgufWriter gguf_from_program(const ExportedProgram& program,
                                      const std::vector<WeightReport>& quantization,
                                      const std::string& model_folder, const std::string& outtype,
                                      std::vector<std::string>& notes,
                                      const GgufFileTypeOptions& kquant) {
  const std::string& file_type = kquant.file_type;
  const std::shared_ptr<const CalibrationStats>& calibration = kquant.calibration;
  const formats::KQuantSearch search = kquant.search;
  const GgmlType matrix_type = float_type(outtype);
  const GgufFileType* ft = file_type.empty() ? nullptr : find_gguf_file_type(file_type);
  INGOT_CHECK(file_type.empty() || ft, ValueError, "[gguf] unknown file type '{}' (known: {})",
              file_type, fmt::join(gguf_file_type_names(), ", "));
  const models::GgufModelMetadata meta = models::gguf_model_metadata(model_folder);
  const std::string& arch = meta.arch.gguf_name;
  std::map<std::string, const WeightReport*> reports;
  for (const WeightReport& w : quantization) reports[w.name] = &w;
  const std::map<std::string, std::pair<int, int64_t>> loaded = packed_layouts(program);

  // The GGUF name of HF weight `hf`; NotSupportedError naming it when llama.cpp has none.
  auto gguf_name = [&](const std::string& hf) {
    std::string g = models::hf_to_gguf_name(hf, arch);
    INGOT_CHECK(!g.empty(), NotSupportedError,
                "[gguf] weight '{}' has no llama.cpp name in architecture '{}'", hf, arch);
    return g;
  };
  // llama.cpp's rope permutation of q / k rows (a float weight or bias, or packed rows).
  // Captures by value: the float tensors are permuted while the file is written.
  auto permuted = [qk = meta.arch.unpermute_qk, n_head = meta.n_head,
                   n_kv_head = meta.n_kv_head](const std::string& hf, const Tensor& t) {
    if (!qk) return t;
    if (hf.find(".self_attn.q_proj.") != std::string::npos)
      return models::permute_rope_rows(t, n_head);
    if (hf.find(".self_attn.k_proj.") != std::string::npos)
      return models::permute_rope_rows(t, n_kv_head);
    return t;
  };

  formats::GgufWriter w;
  int layers = 0;
  for (const auto& [k, v] : meta.metadata) {
    w.set(k, v);
    if (k == arch + ".block_count") layers = int(std::get<uint64_t>(v.value));
  }
  // llama.cpp's tied embedding: no output.weight, token_embd.weight is the output matrix.
  // A table the quantize stage packed as the lm_head is written as output.weight (beside
  // the float table); one loaded packed (a GGUF's Q8_0 token_embd) is token_embd itself.
  const bool head_packed_by_stage = reports.contains("model.embed_tokens.weight") &&
                                    reports.at("model.embed_tokens.weight")->bits != 0;
  const bool tied = !program.state.contains("lm_head.weight") &&
                    !program.state.contains("lm_head.qweight") && !head_packed_by_stage;
  std::map<std::string, int64_t> kquant_types;  // file type: matrices per ggml type
  std::vector<std::string> fallbacks;           // file type: rows the type's block does not divide
  int64_t calibrated = 0;
  std::map<GgmlType, int64_t> matrices;  // how many 2-D weights of each type
  int64_t vocab_rows = 0;
  for (const auto& [name, t] : program.state) {
    if (name.ends_with(".scales") || name.ends_with(".qzeros")) continue;  // with .qweight
    if (name.ends_with(".qweight")) {
      const std::string base = name.substr(0, name.size() - 8);
      const std::string hf = base + ".weight";
      auto it = reports.find(hf);
      WeightReport rep;
      if (it != reports.end() && it->second->bits != 0) {
        rep = *it->second;
      } else if (auto l = loaded.find(name); l != loaded.end()) {
        rep.bits = l->second.first;  // loaded packed: the layout its node reads it with
        rep.group = l->second.second;
      } else {
        INGOT_THROW(InternalError,
                    "[gguf] '{}' is packed but neither the quantize report nor a "
                    "quantized_linear node names its layout",
                    name);
      }
      Packed p;
      p.bits = rep.bits;
      p.qweight = contiguous(permuted(hf, t));
      p.scales = as_f32(permuted(hf, program.state.at(base + ".scales")));
      if (program.state.contains(base + ".qzeros"))
        p.zeros = contiguous(permuted(hf, program.state.at(base + ".qzeros")));
      p.group = rep.bits == 8 && rep.group == 0 ? p.cols() : rep.group;
      check_f16_scales(p, hf);
      // A tied lm_head packed by the quantize stage: its own output.weight.
      const bool tied_head = hf == "model.embed_tokens.weight" && head_packed_by_stage;
      const std::string g = tied_head ? "output.weight" : gguf_name(hf);
      if (g == "token_embd.weight") vocab_rows = p.rows();
      GgmlType type = p.bits == 8 ? GgmlType::Q8_0
                      : p.zeros.defined() ? GgmlType::Q4_1
                                          : GgmlType::Q4_0;
      // The bytes are made while the file is written, one weight at a time.
      formats::GgufWriter::MakeBytes make = [p, type] { return pack_blocks(p, type); };
      if (p.cols() % kGgmlBlock != 0 || p.group % kGgmlBlock != 0) {
        notes.push_back(fmt::format(
            "gguf: '{}' ({}-bit, rows of {}) is not whole 32-blocks: written as its "
            "dequantised values in F32",
            hf, p.bits, p.cols()));
        type = GgmlType::F32;
        make = [p] {
          Tensor values = Tensor::empty({p.rows(), p.cols()}, DType::F32);
          float* v = values.data<float>();
          for (int64_t r = 0; r < p.rows(); ++r)
            for (int64_t c = 0; c < p.cols(); ++c) v[r * p.cols() + c] = p.value(r, c);
          return float_bytes(values, GgmlType::F32);
        };
      }
      if (tied_head)
        notes.push_back(fmt::format("gguf: the tied lm_head, packed as {}, is output.weight "
                                    "(token_embd.weight stays float for the embedding)",
                                    formats::ggml_type_name(type)));
      ++matrices[type];
      w.add_tensor(g, {p.rows(), p.cols()}, type, std::move(make));
      continue;
    }
    // Rotary frequencies are recomputed by llama.cpp from rope.freq_base.
    if (name.ends_with("inv_freq")) continue;
    const std::string g = gguf_name(name);
    if (ft && t.dim() == 2) {
      // A llama.cpp file type: the matrix quantised into the type its rules choose.
      std::string why;
      const GgmlType type = gguf_matrix_type(*ft, g, t.size(1), layers, tied, &why);
      ++kquant_types[formats::ggml_type_name(type)];
      if (why.find("not whole") != std::string::npos) fallbacks.push_back(g + ": " + why);
      const ActivationStats* stats = calibration ? calibration->of(name) : nullptr;
      if (stats && stats->k == t.size(1) && type != GgmlType::Q8_0 && type != GgmlType::F16)
        ++calibrated;
      if (g == "token_embd.weight") vocab_rows = t.size(0);
      w.add_tensor(g, t.sizes(), type, [t, name, type, permuted, stats, calibration, search] {
        const Tensor f = as_f32(permuted(name, t));
        if (type == GgmlType::F16) return float_bytes(f, GgmlType::F16);
        const float* importance =
            stats && stats->k == f.size(1) ? stats->mean_square.data() : nullptr;
        return formats::quantize_rows(type, f.data<float>(), f.size(0), f.size(1), importance,
                                      search);
      });
      continue;
    }
    const GgmlType type = t.dim() == 1 ? GgmlType::F32 : matrix_type;
    if (t.dim() == 2) ++matrices[type];
    if (g == "token_embd.weight") vocab_rows = t.size(0);
    w.add_tensor(g, t.sizes(), type,
                 [t, name, type, permuted] { return float_bytes(permuted(name, t), type); });
  }
  INGOT_CHECK(vocab_rows > 0, NotSupportedError,
              "[gguf] the program has no model.embed_tokens.weight (token_embd.weight)");
  if (!meta.rope_freqs.empty()) {
    std::vector<uint8_t> bytes;
    formats::put_f32(meta.rope_freqs.data(), int64_t(meta.rope_freqs.size()), bytes);
    w.add_tensor("rope_freqs.weight", {int64_t(meta.rope_freqs.size())}, GgmlType::F32,
                 std::move(bytes));
  }
  // general.file_type: the quantised type most matrices have, else the float type.
  uint32_t file_type_number = matrix_type == GgmlType::F32   ? kFileTypeF32
                              : matrix_type == GgmlType::F16 ? kFileTypeF16
                                                             : kFileTypeBF16;
  int64_t most = 0;
  for (auto [type, n] : matrices) {
    const uint32_t number = type == GgmlType::Q4_0   ? kFileTypeQ4_0
                            : type == GgmlType::Q4_1 ? kFileTypeQ4_1
                            : type == GgmlType::Q8_0 ? kFileTypeQ8_0
                                                     : 0;
    if (number != 0 && n > most) most = n, file_type_number = number;
  }
  if (ft) {
    file_type_number = ft->ftype;
    most = 1;
    std::vector<std::string> counts;
    for (const auto& [type, n] : kquant_types) counts.push_back(fmt::format("{} {}", n, type));
    notes.push_back(fmt::format(
        "gguf {} (llama.cpp file type {}): matrices {}; {} search; {}", ft->name, ft->ftype,
        fmt::join(counts, ", "),
        search == formats::KQuantSearch::Refined ? "refined k-quant" : "llama.cpp's k-quant",
        calibration ? fmt::format("{} weighted by calibration importance", calibrated)
                    : std::string("no importance (no dataset)")));
    for (const std::string& f : fallbacks) notes.push_back("gguf: " + f);
  }
  w.set("general.file_type", formats::gguf_u32(file_type_number));
  if (most > 0) w.set("general.quantization_version", formats::gguf_u32(2));
  for (auto& [k, v] : models::gguf_tokenizer_metadata(model_folder, vocab_rows)) w.set(k, v);
  return w;
}

}  // namespace ingot::exporters
