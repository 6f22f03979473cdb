// `ingot info FOLDER`: what a Hugging Face model folder holds, without running it.
#include <cstdio>
#include <filesystem>
#include <map>

#include "ingot/cli/app.h"
#include "ingot/cli/commands.h"
#include "ingot/models/checkpoint.h"
#include "ingot/models/model.h"

namespace ingot::cli {

int run_info(int argc, char** argv) {
  std::string folder;
  CLI::App app{
      "Describes a Hugging Face model folder (architecture, parameters, dtypes, sizes) without "
      "running it.",
      "ingot info"};
  app.add_option("folder", folder, "Hugging Face model folder")->required();
  if (!parse(app, argc, argv)) return 0;
  auto config =
      models::ConfigReader::from_file((std::filesystem::path(folder) / "config.json").string());
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
  std::printf("architecture  %s (%s)\n", config.architecture().c_str(),
              config.get_string("model_type", "?").c_str());
  std::printf("parameters    %lld (%.3f M) in %zu tensors\n", (long long)elements,
              double(elements) / 1e6, checkpoint.names().size());
  std::printf("weights       %.3f MB\n", double(checkpoint.nbytes()) / 1e6);
  for (const auto& [dtype, counts] : by_dtype) {
    std::printf("  %-10s  %lld tensors, %lld elements\n", std::string(dtype_name(dtype)).c_str(),
                (long long)counts.first, (long long)counts.second);
  }
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
