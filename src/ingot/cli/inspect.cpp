// `ingot inspect model.ingot`: the program's graph, signature, symbol ranges and the
// guards its export took.
#include <cstdio>

#include "ingot/cli/commands.h"
#include "ingot/export/serialize.h"

namespace ingot::cli {

int run_inspect(int argc, char** argv) {
  INGOT_CHECK(argc == 1, ValueError, "usage: ingot inspect model.ingot");
  ExportedProgram ep = load(argv[0]);
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
