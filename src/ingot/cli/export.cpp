// `ingot export FOLDER -o model.ingot [--dynamic | --dynamic-shapes spec.json]
//  [--dtype bfloat16]`: traces a Hugging Face model folder into an .ingot archive.
// `ingot export FOLDER --task generation [--multi-token-decode] [--max-cache-len N] -o DIR`:
// the decode components with a static KV cache, a manifest and the tokenizer files.
#include <cstdio>
#include <fstream>
#include <sstream>

#include "ingot/cli/commands.h"
#include "ingot/export/generation_export.h"
#include "ingot/export/pretrained.h"
#include "ingot/export/serialize.h"

namespace ingot::cli {

int run_export(int argc, char** argv) {
  std::string folder, output, spec_file, task = "default";
  GenerationExportOptions generation;
  generation.multi_token_decode = false;
  PretrainedExportOptions options;
  models::LoadOptions load;
  for (int i = 0; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      INGOT_CHECK(i + 1 < argc, ValueError, "[ingot export] {} needs a value", arg);
      return argv[++i];
    };
    if (arg == "-o" || arg == "--output") output = value();
    else if (arg == "--dynamic") options.dynamic = true;
    else if (arg == "--dynamic-shapes") spec_file = value();
    else if (arg == "--dtype") load.compute_dtype = parse_dtype(value());
    else if (arg == "--task") task = value();
    else if (arg == "--multi-token-decode") generation.multi_token_decode = true;
    else if (arg == "--max-cache-len") generation.max_cache_len = std::stoll(value());
    else if (!arg.empty() && arg[0] == '-') INGOT_THROW(ValueError, "[ingot export] unknown option '{}'", arg);
    else {
      INGOT_CHECK(folder.empty(), ValueError, "[ingot export] more than one model folder given");
      folder = arg;
    }
  }
  INGOT_CHECK(!folder.empty() && !output.empty(), ValueError,
              "usage: ingot export FOLDER -o model.ingot [--dynamic | --dynamic-shapes spec.json] "
              "[--dtype float32|bfloat16]");
  INGOT_CHECK(!(options.dynamic && !spec_file.empty()), ValueError,
              "[ingot export] give either --dynamic or --dynamic-shapes, not both");
  if (!spec_file.empty()) {
    std::ifstream f(spec_file);
    INGOT_CHECK(f.good(), IoError, "[ingot export] cannot read dynamic shapes spec '{}'", spec_file);
    std::stringstream text;
    text << f.rdbuf();
    options.dynamic_shapes = DynamicShapes::from_json(text.str(), spec_file);
  }
  INGOT_CHECK(task == "default" || task == "generation", ValueError,
              "[ingot export] unknown --task '{}'; known: default, generation", task);
  auto model = models::from_pretrained(folder, load);
  if (task == "generation") {
    auto components = export_for_generation(*model, generation);
    save_generation_components(components, output, folder, model->architecture(), generation);
    std::printf("exported %s (%s) for generation: %zu component(s), max_cache_len %lld -> %s\n",
                folder.c_str(), model->architecture().c_str(), components.size(),
                (long long)generation.max_cache_len, output.c_str());
    return 0;
  }
  ExportedProgram ep = export_pretrained(*model, options);
  save(ep, output);
  std::printf("exported %s (%s): %zu nodes, %zu inputs -> %s\n", folder.c_str(), model->architecture().c_str(),
              ep.graph->nodes().size(), ep.graph->inputs.size(), output.c_str());
  return 0;
}

}  // namespace ingot::cli
