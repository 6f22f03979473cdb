// Matches a dynamic_shapes tree against the input tree: for each leaf (in flatten
// order) its path and the Dims given for its tensor dims.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ingot/export/export.h"

namespace ingot {

class ShapeSpecMatcher {
 public:
  // `names`: the top-level argument names (paths start there).
  explicit ShapeSpecMatcher(std::vector<std::string> names) : names(std::move(names)) {}
  // Throws ValueError naming the input path when the trees disagree.
  void match(const TreeSpec& spec, const DynamicShapes& shapes, const std::string& path = "");

  std::vector<std::string> names;
  std::vector<std::map<int, Dim>> dims_per_leaf;
  std::vector<std::string> leaf_paths;
};

}  // namespace ingot
