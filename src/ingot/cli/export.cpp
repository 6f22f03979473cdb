// `ingot export FOLDER -o OUT [--format native|onnx] [--dynamic | --dynamic-shapes spec.json]
//  [--config config.json] [--task forward|generation] [--max-cache-len N] [--opset N]
//  [--optimize] [--external-data auto|always|never] [--dtype bfloat16]`: traces a Hugging
// Face model folder through an exporter (exporters/exporter.h) and saves the artifact: an
// .ingot archive (native) or an .onnx model (onnx). --config reads the auto-config JSON
// ({"export_format": "onnx", "dynamic": true, ...}); the other flags override it.
// --task generation writes a generation directory OUT (exporters/generation_directory.h):
// "prefill" + "decode" components, or one multi-token "decode" with --multi-token-decode.
#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>

#include "ingot/cli/commands.h"
#include "ingot/exporters/generation_directory.h"
#include "ingot/exporters/onnx/onnx_exporter.h"

namespace ingot::cli {

namespace {

std::string read_file(const std::string& path, const char* what) {
  std::ifstream f(path);
  INGOT_CHECK(f.good(), IoError, "[ingot export] cannot read {} '{}'", what, path);
  std::stringstream text;
  text << f.rdbuf();
  return text.str();
}

constexpr const char* kUsage =
    "usage: ingot export FOLDER -o OUT [--format native|onnx] [--dynamic | --dynamic-shapes "
    "spec.json] "
    "[--config config.json] [--task forward|generation] [--max-cache-len N] [--multi-token-decode] "
    "[--opset N] "
    "[--optimize] "
    "[--external-data auto|always|never] [--dtype float32|bfloat16]";

}  // namespace

int run_export(int argc, char** argv) {
  std::string folder, output, spec_file, config_file, task = "forward";
  std::optional<std::string> format, external_data;
  std::optional<int64_t> opset, max_cache_len;
  bool dynamic = false, optimize = false, multi_token_decode = false;
  models::LoadOptions load;
  for (int i = 0; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      INGOT_CHECK(i + 1 < argc, ValueError, "[ingot export] {} needs a value", arg);
      return argv[++i];
    };
    auto integer = [&]() -> int64_t {
      std::string v = value();
      try {
        size_t used = 0;
        int64_t n = std::stoll(v, &used);
        if (used == v.size()) return n;
      } catch (const std::exception&) {
      }
      INGOT_THROW(ValueError, "[ingot export] {} needs an integer, got '{}'", arg, v);
    };
    if (arg == "-o" || arg == "--output")
      output = value();
    else if (arg == "--format")
      format = value();
    else if (arg == "--dynamic")
      dynamic = true;
    else if (arg == "--dynamic-shapes")
      spec_file = value();
    else if (arg == "--config")
      config_file = value();
    else if (arg == "--task")
      task = value();
    else if (arg == "--max-cache-len")
      max_cache_len = integer();
    else if (arg == "--multi-token-decode")
      multi_token_decode = true;
    else if (arg == "--opset")
      opset = integer();
    else if (arg == "--optimize")
      optimize = true;
    else if (arg == "--external-data")
      external_data = value();
    else if (arg == "--dtype")
      load.compute_dtype = parse_dtype(value());
    else if (!arg.empty() && arg[0] == '-')
      INGOT_THROW(ValueError, "[ingot export] unknown option '{}'\n{}", arg, kUsage);
    else {
      INGOT_CHECK(folder.empty(), ValueError, "[ingot export] more than one model folder given");
      folder = arg;
    }
  }
  INGOT_CHECK(!folder.empty(), ValueError, "{}", kUsage);
  INGOT_CHECK(task == "forward" || task == "generation", ValueError,
              "[ingot export] --task is 'forward' or 'generation', got '{}'", task);
  INGOT_CHECK(!(dynamic && !spec_file.empty()), ValueError,
              "[ingot export] give either --dynamic or --dynamic-shapes, not both");

  // The config: from --config, else the --format's defaults; flags override its fields.
  std::unique_ptr<exporters::NativeExportConfig> config;
  if (!config_file.empty()) {
    config = exporters::AutoExportConfig::from_json(read_file(config_file, "config"), config_file);
    INGOT_CHECK(!format || *format == config->export_format(), ValueError,
                "[ingot export] --format {} contradicts export_format '{}' of {}", *format,
                config->export_format(), config_file);
  } else {
    config = exporters::AutoExportConfig::from_json(
        "{\"export_format\": \"" + format.value_or("native") + "\"}", "--format");
  }
  if (dynamic) config->dynamic = true;
  if (!spec_file.empty()) {
    config->dynamic = false;
    config->dynamic_shapes_json = read_file(spec_file, "dynamic shapes spec");
    (void)config->dynamic_shapes();  // validates it, naming the file
  }
  auto* onnx_config = dynamic_cast<exporters::OnnxConfig*>(config.get());
  INGOT_CHECK(onnx_config || (!opset && !optimize && !external_data), ValueError,
              "[ingot export] --opset, --optimize and --external-data apply to --format onnx");
  if (onnx_config) {
    if (opset) onnx_config->opset = *opset;
    if (optimize) onnx_config->optimize = true;
    if (external_data) onnx_config->external_data = *external_data;
    if (output.empty()) output = onnx_config->output_path;
  }
  // Re-reading the JSON checks the overridden fields like a config file.
  config = exporters::AutoExportConfig::from_json(config->to_json(), "the export options");
  INGOT_CHECK(!output.empty(), ValueError, "[ingot export] no output: give -o OUT\n{}", kUsage);

  auto model = models::from_pretrained(folder, load);
  auto exporter = exporters::AutoExporter::from_config(*config);
  if (task == "generation") {
    // A generation directory: the components, a manifest and the tokenizer files (what
    // `ingot generate DIR` loads for native components).
    exporters::GenerationExportOptions g;
    if (max_cache_len) g.max_cache_len = *max_cache_len;
    g.multi_token_decode = multi_token_decode;
    auto components = exporter->export_for_generation(*model, *config, g);
    exporters::save_generation_directory(components, output, folder, model->architecture(), g);
    std::printf("exported %s (%s, %s) for generation: max_cache_len %lld -> %s\n", folder.c_str(),
                model->architecture().c_str(), config->export_format().c_str(),
                (long long)g.max_cache_len, output.c_str());
    for (const auto& [name, artifact] : components) {
      std::printf("  %s%s: %zu nodes\n", name.c_str(), artifact->file_extension().c_str(),
                  artifact->program.graph->nodes().size());
      for (const std::string& note : artifact->notes) std::printf("    %s\n", note.c_str());
    }
    return 0;
  }
  INGOT_CHECK(!max_cache_len && !multi_token_decode, ValueError,
              "[ingot export] --max-cache-len and --multi-token-decode apply to --task generation");
  std::unique_ptr<exporters::ExportArtifact> artifact = exporter->export_(*model, *config);
  artifact->save(output);
  const ExportedProgram& ep = artifact->program;
  std::printf("exported %s (%s, %s, %s): %zu nodes, %zu inputs -> %s\n", folder.c_str(),
              model->architecture().c_str(), artifact->format().c_str(), task.c_str(),
              ep.graph->nodes().size(), ep.graph->inputs.size(), output.c_str());
  for (const std::string& note : artifact->notes) std::printf("  %s\n", note.c_str());
  return 0;
}

}  // namespace ingot::cli
