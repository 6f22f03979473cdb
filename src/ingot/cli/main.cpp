// The `ingot` command: dispatches to a subcommand (cli/commands.h). `ingot --help` lists
// them; `ingot <command> --help` gives each one's options.
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "ingot/cli/app.h"
#include "ingot/cli/commands.h"

namespace {

struct Command {
  const char* name;
  int (*run)(int, char**);
  const char* summary;
};

const Command kCommands[] = {
    {"export", ingot::cli::run_export,
     "export a model folder: .ingot archive, ONNX model or generation directory"},
    {"generate", ingot::cli::run_generate,
     "generate text from a model folder or generation directory"},
    {"run", ingot::cli::run_run, "forward of a model folder or .ingot program on .npy inputs"},
    {"inspect", ingot::cli::run_inspect,
     "graph, signature, ranges and guards of an .ingot program"},
    {"info", ingot::cli::run_info, "describe a Hugging Face model folder"},
    {"demo", ingot::cli::run_demo,
     "run the committed tiny checkpoints against transformers' outputs"},
};

void print_help() {
  std::printf(
      "usage: ingot <command> [options]   (ingot <command> --help lists its "
      "options)\n\ncommands:\n");
  for (const Command& c : kCommands) std::printf("  %-10s %s\n", c.name, c.summary);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0) {
    print_help();
    return argc < 2 ? 1 : 0;
  }
  std::vector<std::string> names;
  for (const Command& c : kCommands) {
    names.push_back(c.name);
    if (std::strcmp(argv[1], c.name) != 0) continue;
    try {
      return c.run(argc - 2, argv + 2);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "ingot: %s\n", e.what());
      return 1;
    }
  }
  const std::string close = ingot::cli::closest_word(argv[1], names);
  std::fprintf(stderr, "ingot: unknown command '%s'%s (see ingot --help)\n", argv[1],
               close.empty() ? "" : (" (did you mean '" + close + "'?)").c_str());
  return 2;
}
