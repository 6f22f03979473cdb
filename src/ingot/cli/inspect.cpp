// `ingot inspect (model.ingot | model.pt2)`: the program's graph, signature, symbol ranges and the
// guards its export took.
#include <cstdio>

#include "ingot/cli/app.h"
#include "ingot/cli/commands.h"
#include "ingot/cli/program_file.h"

namespace ingot::cli {

int run_inspect(int argc, char** argv) {
  std::string path;
  CLI::App app{
      "Prints an .ingot program or a torch.export .pt2 archive (as the ingot program it reads as): signature, graph with shapes and source lines, symbol ranges and "
      "the guards its export took.",
      "ingot inspect"};
  app.add_option("program", path, "model.ingot or model.pt2")->required();
  if (!parse(app, argc, argv)) return 0;
  std::string header;
  ExportedProgram ep = load_program_file(path, &header);
  std::printf("%s: %s\n", path.c_str(), header.c_str());
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
