// `ingot demo`: shows the engine working on a built-in example.
#include <cstdio>

#include "ingot/cli/commands.h"
#include "ingot/core/tensor.h"

namespace ingot::cli {

int run_demo(int, char**) {
  Tensor t = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  std::printf("%s\n", t.to_string().c_str());
  return 0;
}

}  // namespace ingot::cli
