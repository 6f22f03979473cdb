// `ingot info FOLDER`: what a Hugging Face model folder (or a GGUF file) holds, without
// running it.
#include <cstdio>
#include <filesystem>
#include <map>

#include "ingot/cli/app.h"
#include "ingot/cli/commands.h"
#include "ingot/formats/gguf.h"
#include "ingot/models/checkpoint.h"
#include "ingot/models/gguf_folder.h"
#include "ingot/models/model.h"

namespace ingot::cli {
namespace {

// A GGUF's tensors by ggml type; returns the parameter count.
int64_t print_gguf_tensors(const std::string& path) {
  formats::GgufFile f = formats::GgufFile::open(path);
  std::map<std::string, std::pair<int64_t, int64_t>> by_type;  // type -> (tensors, elements)
  int64_t elements = 0;
  uint64_t bytes = 0;
  for (const auto& t : f.tensors()) {
    by_type[formats::ggml_type_name(t.type)].first += 1;
    by_type[formats::ggml_type_name(t.type)].second += t.numel();
    elements += t.numel();
    bytes += t.nbytes;
  }
  std::printf("gguf          %s (version %u, %zu metadata keys)\n", path.c_str(), f.version(),
              f.header().metadata.size());
  std::printf("parameters    %lld (%.3f M) in %zu tensors\n", (long long)elements,
              double(elements) / 1e6, f.tensors().size());
  std::printf("weights       %.3f MB\n", double(bytes) / 1e6);
  for (const auto& [type, counts] : by_type) {
    std::printf("  %-10s  %lld tensors, %lld elements\n", type.c_str(), (long long)counts.first,
                (long long)counts.second);
  }
  return elements;
}

// A folder's safetensors by dtype.
void print_checkpoint_tensors(const std::string& folder) {
  models::Checkpoint checkpoint = models::Checkpoint::open_folder(folder);
  std::map<DType, std::pair<int64_t, int64_t>> by_dtype;  // dtype -> (tensors, elements)
  int64_t elements = 0;
  for (const auto& name : checkpoint.names()) {
    Tensor t = checkpoint.tensor(name);
    by_dtype[t.dtype()].first += 1;
    by_dtype[t.dtype()].second += t.numel();
    if (is_floating(t.dtype())) elements += t.numel();  // integer buffers are not parameters
  }
  std::printf("folder        %s\n", folder.c_str());
  std::printf("parameters    %lld (%.3f M) in %zu tensors\n", (long long)elements,
              double(elements) / 1e6, checkpoint.names().size());
  std::printf("weights       %.3f MB\n", double(checkpoint.nbytes()) / 1e6);
  for (const auto& [dtype, counts] : by_dtype) {
    std::printf("  %-10s  %lld tensors, %lld elements\n", std::string(dtype_name(dtype)).c_str(),
                (long long)counts.first, (long long)counts.second);
  }
}

}  // namespace

int run_info(int argc, char** argv) {
  std::string folder;
  CLI::App app{
      "Describes a Hugging Face model folder or a GGUF file (architecture, parameters, dtypes, "
      "sizes) without running it.",
      "ingot info"};
  app.add_option("folder", folder, "Hugging Face model folder, or a .gguf file")->required();
  if (!parse(app, argc, argv)) return 0;
  const std::optional<std::string> gguf = models::gguf_source(folder);
  if (gguf) {
    print_gguf_tensors(*gguf);
    folder = models::gguf_model_folder(*gguf);
  } else {
    print_checkpoint_tensors(folder);
  }
  auto config =
      models::ConfigReader::from_file((std::filesystem::path(folder) / "config.json").string());
  std::printf("architecture  %s (%s)\n", config.architecture().c_str(),
              config.get_string("model_type", "?").c_str());
  for (const char* key :
       {"num_hidden_layers", "n_layer", "hidden_size", "n_embd", "num_attention_heads", "n_head",
        "num_key_value_heads", "head_dim", "intermediate_size", "vocab_size",
        "max_position_embeddings", "n_positions"}) {
    if (config.has(key)) std::printf("%-24s %lld\n", key, (long long)config.get_int(key));
  }
  std::printf("supported     %s\n", [&] {
    for (const auto& a : models::supported_architectures()) {
      if (a == config.architecture()) return "yes";
    }
    return "no";
  }());
  return 0;
}

}  // namespace ingot::cli
