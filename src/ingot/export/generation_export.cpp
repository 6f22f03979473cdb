#include "ingot/export/generation_export.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "ingot/export/pretrained.h"
#include "ingot/export/serialize.h"
#include "ingot/ops/functional.h"

namespace ingot {

namespace {

ExportedProgram export_component(models::PretrainedModel& model, const nn::CacheSpec& spec,
                                 const GenerationExportOptions& o, int64_t example_tokens,
                                 bool dynamic_tokens) {
  auto forward = [&model](const Tensor& input_ids, nn::StaticCache cache) {
    models::ModelInputs in;
    in.input_ids = input_ids;
    in.cache = &cache;
    return model.forward(in).logits;
  };
  // An example cache one slot longer than the prompt when its length is dynamic, so the
  // example length is a real size (not the specialised 0 or 1).
  nn::StaticCache cache(spec, o.batch, o.max_cache_len);
  std::map<int, Dim> ids_dims;
  if (dynamic_tokens) ids_dims.emplace(1, Dim("tokens", 1, o.max_cache_len));
  DynamicShapes cache_shapes;
  if (o.dynamic_cache_len) {
    std::map<std::string, DynamicShapes> per_tensor;
    const Dim len("cache_len", 2, std::numeric_limits<int32_t>::max());
    for (const auto& [name, t] : cache.named_tensors()) {
      if (t.dim() == 4) per_tensor.emplace(name, DynamicShapes::tensor({{2, len}}));
    }
    cache_shapes = DynamicShapes::dict(per_tensor);
  }
  ExportOptions options;
  options.input_names = {"input_ids", "cache"};
  options.dynamic_shapes = DynamicShapes::tuple({DynamicShapes::tensor(ids_dims), cache_shapes});
  // Tokens may reach max_cache_len only when the cache length is fixed: a dynamic one
  // must still hold the prompt, which the room check asserts at run time.
  options.prefer_deferred_runtime_asserts_over_guards = o.dynamic_cache_len;
  Tensor ids = zeros({o.batch, example_tokens}, DType::I64);
  return export_(nullptr, forward, std::tuple{ids, cache}, options);
}

}  // namespace

std::map<std::string, ExportedProgram> export_for_generation(models::PretrainedModel& model,
                                                             const GenerationExportOptions& o) {
  std::optional<nn::CacheSpec> spec = model.cache_spec();
  INGOT_CHECK(spec.has_value(), NotSupportedError,
              "[export_for_generation] {} is not a decoder with a KV cache; generation export "
              "needs a causal LM", model.architecture());
  INGOT_CHECK(o.max_cache_len >= 4, ValueError,
              "[export_for_generation] max_cache_len must be at least 4, got {}", o.max_cache_len);
  std::map<std::string, ExportedProgram> out;
  if (o.multi_token_decode) {
    out.emplace("decode", export_component(model, *spec, o, 3, true));
  } else {
    out.emplace("prefill", export_component(model, *spec, o, 3, true));
    out.emplace("decode", export_component(model, *spec, o, 1, false));
  }
  return out;
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
