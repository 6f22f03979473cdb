// The `ingot` command.
#include <cstdio>
#include <cstring>
#include <exception>

#include "ingot/cli/commands.h"

int main(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0) {
    std::printf(
        "usage: ingot <command> [args]\n\ncommands:\n"
        "  demo                               run the built-in demo\n"
        "  info FOLDER                        describe a Hugging Face model folder\n"
        "  run (FOLDER | model.ingot) --input NAME=FILE.npy -o OUTDIR\n"
        "                                     forward (eager, or the exported program) on .npy "
        "inputs\n"
        "  export FOLDER -o OUT [--format native|onnx] [--dynamic | --dynamic-shapes spec.json]\n"
        "         [--config config.json] [--task forward|generation] [--max-cache-len N]\n"
        "         [--opset N] [--optimize] [--external-data auto|always|never]\n"
        "                                     export a model: an .ingot archive or an ONNX model\n"
        "  inspect model.ingot                graph, signature, ranges and guards of an archive\n"
        "  export FOLDER --task generation [--multi-token-decode] [--max-cache-len N] -o DIR\n"
        "                                     decode components with a static KV cache (native)\n"
        "  generate (FOLDER | DIR) --prompt TEXT [--max-new-tokens N] [--temperature T --top-k K --seed S]\n"
        "                                     generation, streamed, with tokens/s\n");
    return argc < 2 ? 1 : 0;
  }
  try {
    if (std::strcmp(argv[1], "demo") == 0) return ingot::cli::run_demo(argc - 2, argv + 2);
    if (std::strcmp(argv[1], "info") == 0) return ingot::cli::run_info(argc - 2, argv + 2);
    if (std::strcmp(argv[1], "run") == 0) return ingot::cli::run_run(argc - 2, argv + 2);
    if (std::strcmp(argv[1], "export") == 0) return ingot::cli::run_export(argc - 2, argv + 2);
    if (std::strcmp(argv[1], "inspect") == 0) return ingot::cli::run_inspect(argc - 2, argv + 2);
    if (std::strcmp(argv[1], "generate") == 0) return ingot::cli::run_generate(argc - 2, argv + 2);
    std::fprintf(stderr, "ingot: unknown command '%s' (see ingot --help)\n", argv[1]);
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ingot: %s\n", e.what());
    return 1;
  }
}
