#include "ingot/models/model.h"

#include <algorithm>
#include <filesystem>
#include <functional>
#include <set>

#include "ingot/models/checkpoint.h"
#include "ingot/models/gguf_folder.h"
#include "ingot/models/gguf_packed_linears.h"
#include "ingot/models/gguf_weights.h"
#include "ingot/ops/functional.h"

namespace ingot::models {
namespace {

std::map<std::string, ModelFactory>& factories() {
  static std::map<std::string, ModelFactory> f;
  return f;
}

// Checkpoint tensors that transformers may save but no module owns.
bool ignorable(const std::string& name) {
  auto ends_with = [&](const std::string& suffix) {
    return name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  return ends_with("rotary_emb.inv_freq") || ends_with(".attn.masked_bias") ||
         ends_with(".attn.bias") || name == "lm_head.weight" ||
         ends_with(".attention.masked_bias") || ends_with(".attention.bias") ||
         ends_with("embeddings.position_ids");
}

}  // namespace

std::map<std::string, Tensor> ModelOutputs::named() const {
  std::map<std::string, Tensor> out;
  if (logits.defined()) out["logits"] = logits;
  if (last_hidden_state.defined()) out["last_hidden_state"] = last_hidden_state;
  if (pooler_output.defined()) out["pooler_output"] = pooler_output;
  if (!hidden_states.empty()) out["hidden_states"] = stack(hidden_states, 0);
  return out;
}

void check_input_ids(const ModelInputs& in, const std::string& architecture) {
  INGOT_CHECK(in.input_ids.defined() && in.input_ids.dim() == 2, ShapeError,
              "[{}] input_ids must be [batch, seq], got {}", architecture,
              in.input_ids.defined() ? in.input_ids.shape_string() : "nothing");
}

Tensor default_position_ids(const SymInt& batch, const SymInt& seq, const SymInt& past) {
  return default_position_ids(arange_symint(past, past + seq), batch);
}

Tensor default_position_ids(const Tensor& positions, const SymInt& batch) {
  return expand(unsqueeze(positions, 0), {batch, positions.sym_size(0)});  // [batch, seq]
}

ArchitectureRegistrar::ArchitectureRegistrar(const std::string& architecture, ModelFactory factory) {
  factories()[architecture] = std::move(factory);
}

std::vector<std::string> supported_architectures() {
  std::vector<std::string> out;
  for (const auto& [name, f] : factories()) out.push_back(name);
  return out;
}

std::shared_ptr<PretrainedModel> create_model(const std::string& architecture,
                                              const ConfigReader& config,
                                              const LoadOptions& options) {
  auto it = factories().find(architecture);
  INGOT_CHECK(it != factories().end(), NotSupportedError,
              "[create_model] '{}': architecture '{}' is not supported (supported: {})",
              config.origin(), architecture, fmt::join(supported_architectures(), ", "));
  std::shared_ptr<PretrainedModel> model = it->second(config, options);
  model->architecture_ = architecture;
  model->compute_dtype_ = options.compute_dtype;
  return model;
}

namespace {

// Where a model's weights come from: a safetensors checkpoint or a GGUF's tensors under
// Hugging Face names.
struct WeightSource {
  std::function<bool(const std::string&)> contains;
  std::function<Tensor(const std::string&)> tensor;
  std::vector<std::string> names;
};

WeightSource checkpoint_source(std::shared_ptr<Checkpoint> c) {
  return {[c](const std::string& n) { return c->contains(n); },
          [c](const std::string& n) { return c->tensor(n); }, c->names()};
}

WeightSource state_source(std::shared_ptr<std::map<std::string, Tensor>> s) {
  std::vector<std::string> names;
  for (const auto& [name, t] : *s) names.push_back(name);
  return {[s](const std::string& n) { return s->contains(n); },
          [s](const std::string& n) { return s->at(n); }, names};
}

std::shared_ptr<PretrainedModel> build(const ConfigReader& config, const LoadOptions& options,
                                       const std::string& where) {
  INGOT_CHECK(options.compute_dtype == DType::F32 || options.compute_dtype == DType::BF16,
              ValueError, "[from_pretrained] compute dtype must be float32 or bfloat16, got {}",
              options.compute_dtype);
  const std::string arch = config.architecture();
  auto it = factories().find(arch);
  INGOT_CHECK(it != factories().end(), NotSupportedError,
              "[from_pretrained] '{}': architecture '{}' is not supported (supported: {})", where,
              arch, fmt::join(supported_architectures(), ", "));
  return create_model(arch, config, options);
}

void load_weights(PretrainedModel& model, const WeightSource& source, const std::string& where) {
  const std::string& arch = model.architecture();
  std::map<std::string, Tensor> state;
  std::vector<std::string> missing;
  const std::map<std::string, std::string> tied = model.tied_weights();
  for (auto& [name, expected] : model.state_dict()) {
    std::string stored = name;
    if (!source.contains(name)) {
      auto tied_source = tied.find(name);
      if (tied_source == tied.end() || !source.contains(tied_source->second)) {
        missing.push_back(name);
        continue;
      }
      stored = tied_source->second;  // tied: the source's tensor (no copy)
    }
    Tensor t = source.tensor(stored);
    // Weights stay mapped when stored in the compute dtype; otherwise converted once.
    state[name] = t.dtype() == expected.dtype() ? t : to(t, expected.dtype());
  }
  INGOT_CHECK(missing.empty(), IoError,
              "[from_pretrained] '{}' lacks tensors the {} model needs: {}", where, arch,
              fmt::join(missing, ", "));
  std::vector<std::string> unexpected;
  const std::vector<std::string> ignored = model.ignored_checkpoint_names();
  for (const auto& name : source.names) {
    if (!state.contains(name) && !ignorable(name) && !tied.contains(name) &&
        std::find(ignored.begin(), ignored.end(), name) == ignored.end())
      unexpected.push_back(name);
  }
  INGOT_CHECK(unexpected.empty(), IoError,
              "[from_pretrained] '{}' has tensors the {} model does not use: {} (wrong "
              "architecture in config.json?)",
              where, arch, fmt::join(unexpected, ", "));
  try {
    model.load_state_dict(state);
  } catch (const ValueError& e) {
    INGOT_THROW(IoError, "[from_pretrained] '{}': {}", where, e.what());
  }
  model.eval();
}

// Whether `folder` keeps its weights in safetensors (else a GGUF may hold them).
bool has_safetensors(const std::string& folder) {
  namespace fs = std::filesystem;
  return fs::exists(fs::path(folder) / "model.safetensors") ||
         fs::exists(fs::path(folder) / "model.safetensors.index.json");
}

}  // namespace

std::shared_ptr<PretrainedModel> from_pretrained(const std::string& path,
                                                 const LoadOptions& options) {
  // A GGUF file, or a folder holding one and no config.json: config and weights from it.
  if (std::optional<std::string> gguf = gguf_source(path)) {
    formats::GgufFile file = formats::GgufFile::open(*gguf);
    const GgufArchitecture arch = gguf_architecture(file);
    ConfigReader config = ConfigReader::from_json_text(gguf_config_json(file), *gguf);
    std::shared_ptr<PretrainedModel> model = build(config, options, *gguf);
    model->name_or_path_ = path;
    auto state = std::make_shared<std::map<std::string, Tensor>>(
        gguf_model_weights(*model, file, arch, options.gguf_packed).state);
    load_weights(*model, state_source(state), *gguf);
    return model;
  }
  const std::string& folder = path;
  const std::string config_path = (std::filesystem::path(folder) / "config.json").string();
  ConfigReader config = ConfigReader::from_file(config_path);
  std::shared_ptr<PretrainedModel> model = build(config, options, config_path);
  model->name_or_path_ = folder;
  // A folder ingot made for a GGUF (gguf_folder.h): config.json with the GGUF's weights.
  if (!has_safetensors(folder)) {
    if (std::optional<std::string> gguf = gguf_in_folder(folder)) {
      formats::GgufFile file = formats::GgufFile::open(*gguf);
      auto state = std::make_shared<std::map<std::string, Tensor>>(
          gguf_model_weights(*model, file, gguf_architecture(file), options.gguf_packed).state);
      load_weights(*model, state_source(state), *gguf);
      return model;
    }
  }
  load_weights(*model,
               checkpoint_source(std::make_shared<Checkpoint>(Checkpoint::open_folder(folder))),
               folder);
  return model;
}

}  // namespace ingot::models
