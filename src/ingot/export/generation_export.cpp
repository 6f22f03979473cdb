#include "ingot/export/generation_export.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "ingot/export/pretrained.h"
#include "ingot/generation/generate.h"
#include "ingot/export/serialize.h"
#include "ingot/ops/functional.h"

namespace ingot {

namespace {

ExportedProgram export_component(models::PretrainedModel& model, const GenerationExportOptions& o,
                                 const CapturedCall& call, bool dynamic_tokens) {
  auto forward = [&model](const Tensor& input_ids, nn::StaticCache cache) {
    models::ModelInputs in;
    in.input_ids = input_ids;
    in.cache = &cache;
    return model.forward(in).logits;
  };
  nn::StaticCache cache = nn::StaticCache::from_named_tensors(call.cache);
  std::map<int, Dim> ids_dims;
  if (dynamic_tokens) ids_dims.emplace(1, Dim("tokens", 1, o.max_cache_len));
  DynamicShapes cache_shapes;
  if (o.dynamic_cache_len) {
    std::map<std::string, DynamicShapes> per_tensor;
    const Dim len("cache_len", 2, std::numeric_limits<int32_t>::max());
    for (const auto& [name, t] : call.cache) {
      if (t.dim() == 4) per_tensor.emplace(name, DynamicShapes::tensor({{2, len}}));
    }
    cache_shapes = DynamicShapes::dict(per_tensor);
  }
  ExportOptions options;
  options.input_names = {"input_ids", "cache"};
  options.dynamic_shapes = DynamicShapes::tuple({DynamicShapes::tensor(ids_dims), cache_shapes});
  // With a dynamic cache length, tokens <= cache_len cannot follow from the declared
  // ranges; it is asserted when the program runs.
  options.prefer_deferred_runtime_asserts_over_guards = o.dynamic_cache_len;
  return export_(nullptr, forward, std::tuple{call.input_ids, cache}, options);
}

// The positions and mask a StaticCache derives for `call`: slots [0, pos + q) visible,
// positions pos .. pos + q - 1.
void check_derivable(const CapturedCall& call, const std::string& phase) {
  const int64_t pos = nn::StaticCache::from_named_tensors(call.cache).seq_length();
  const int64_t q = call.input_ids.size(1);
  Tensor mask = contiguous(to(call.attention_mask, DType::I64));
  Tensor positions = contiguous(to(call.position_ids, DType::I64));
  bool derivable = mask.size(0) == 1 && positions.size(0) == 1;
  for (int64_t j = 0; derivable && j < mask.size(1); ++j) derivable = mask.data<int64_t>()[j] == (j < pos + q);
  for (int64_t j = 0; derivable && j < q; ++j) derivable = positions.data<int64_t>()[j] == pos + j;
  INGOT_CHECK(derivable, NotSupportedError,
              "[export_for_generation] the {} call of generate passed an attention mask or "
              "positions the cache cannot derive (a padded or batched prompt); exporting them as "
              "inputs is not supported yet",
              phase);
}

}  // namespace

std::map<std::string, CapturedCall> decompose_for_generation(models::PretrainedModel& model,
                                                             const Tensor& prompt_ids,
                                                             const GenerationExportOptions& o,
                                                             int64_t new_tokens) {
  std::optional<nn::CacheSpec> spec = model.cache_spec();
  INGOT_CHECK(spec.has_value(), NotSupportedError,
              "[export_for_generation] {} is not a decoder with a KV cache; generation export "
              "needs a causal LM", model.architecture());
  INGOT_CHECK(new_tokens >= 2, ValueError,
              "[decompose_for_generation] needs at least 2 new tokens (a prefill and a decode call)");
  nn::StaticCache cache(*spec, o.batch, o.max_cache_len);
  std::vector<CapturedCall> calls;
  generation::GenerationConfig config;
  config.max_new_tokens = new_tokens;
  config.cache = generation::CacheKind::Static;
  config.max_cache_len = o.max_cache_len;
  generation::GenerateOptions go;
  go.cache = &cache;
  go.forward = [&](const models::ModelInputs& in) {
    CapturedCall c;
    c.input_ids = clone(in.input_ids);
    c.attention_mask = in.attention_mask.defined() ? clone(in.attention_mask) : Tensor();
    c.position_ids = in.position_ids.defined() ? clone(in.position_ids) : Tensor();
    for (const auto& [name, t] : cache.named_tensors()) c.cache.emplace_back(name, clone(t));
    calls.push_back(std::move(c));
    return model.forward(in);
  };
  generation::generate(model, prompt_ids, config, go);
  INGOT_CHECK(calls.size() >= 2, InternalError, "[decompose_for_generation] generate made {} forward calls",
              calls.size());
  return {{"prefill", calls[0]}, {"decode", calls[1]}};
}

std::map<std::string, ExportedProgram> export_captured(models::PretrainedModel& model,
                                                       const std::map<std::string, CapturedCall>& calls,
                                                       const GenerationExportOptions& o) {
  for (const char* phase : {"prefill", "decode"}) {
    INGOT_CHECK(calls.contains(phase), ValueError, "[export_captured] no captured '{}' call", phase);
    check_derivable(calls.at(phase), phase);
  }
  std::map<std::string, ExportedProgram> out;
  if (o.multi_token_decode) {
    // Two decode steps merged: traced on the prompt call with the token count symbolic.
    out.emplace("decode", export_component(model, o, calls.at("prefill"), true));
  } else {
    out.emplace("prefill", export_component(model, o, calls.at("prefill"), true));
    out.emplace("decode", export_component(model, o, calls.at("decode"), false));
  }
  return out;
}

std::map<std::string, ExportedProgram> export_for_generation(models::PretrainedModel& model,
                                                             const GenerationExportOptions& o) {
  INGOT_CHECK(o.max_cache_len >= 8, ValueError,
              "[export_for_generation] max_cache_len must be at least 8, got {}", o.max_cache_len);
  return export_captured(model, decompose_for_generation(model, example_generation_prompt(o.batch), o), o);
}

Tensor example_generation_prompt(int64_t batch) {
  std::vector<int64_t> ids;
  for (int64_t b = 0; b < batch; ++b) ids.insert(ids.end(), {1, 2, 3, 4});
  return Tensor::from_vector(ids, {batch, 4});
}

void save_generation_components(const std::map<std::string, ExportedProgram>& components,
                                const std::string& dir, const std::string& model_folder,
                                const std::string& architecture, const GenerationExportOptions& o) {
  namespace fs = std::filesystem;
  fs::create_directories(dir);
  nlohmann::json manifest = {{"format", "ingot-generation"},
                             {"version", 1},
                             {"architecture", architecture},
                             {"max_cache_len", o.max_cache_len},
                             {"multi_token_decode", o.multi_token_decode},
                             {"dynamic_cache_len", o.dynamic_cache_len},
                             {"batch", o.batch}};
  for (const auto& [name, ep] : components) {
    save(ep, (fs::path(dir) / (name + ".ingot")).string());
    manifest["components"][name] = name + ".ingot";
  }
  for (const char* f : {"tokenizer.json", "tokenizer_config.json", "generation_config.json", "config.json"}) {
    fs::path src = fs::path(model_folder) / f;
    if (fs::exists(src)) fs::copy_file(src, fs::path(dir) / f, fs::copy_options::overwrite_existing);
  }
  std::ofstream(fs::path(dir) / "manifest.json") << manifest.dump(2);
}

}  // namespace ingot
