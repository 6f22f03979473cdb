// `ingot inspect model.ingot`: the program's graph, signature, symbol ranges and the
// guards its export took.
#include <cstdio>

#include "ingot/cli/app.h"
#include "ingot/cli/commands.h"
#include "ingot/export/serialize.h"

namespace ingot::cli {

int run_inspect(int argc, char** argv) {
  std::string path;
  CLI::App app{
      "Prints an .ingot program: signature, graph with shapes and source lines, symbol ranges and "
      "the guards its export took.",
      "ingot inspect"};
  app.add_option("program", path, "model.ingot")->required();
  if (!parse(app, argc, argv)) return 0;
  ExportedProgram ep = load(path);
  std::printf("%s", ep.print().c_str());
  std::printf("Guards taken during export:%s\n", ep.guards.empty() ? " none" : "");
  for (const std::string& g : ep.guards) std::printf("  %s\n", g.c_str());
  size_t bytes = 0;
  for (const auto& [name, t] : ep.state) bytes += t.nbytes();
  std::printf("State: %zu tensors, %.2f MB; ingot %s\n", ep.state.size(), double(bytes) / 1e6,
              ep.ingot_version.c_str());
  return 0;
}

}  // namespace ingot::cli
