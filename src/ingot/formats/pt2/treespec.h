// torch's serialized pytree specs (treespec_dumps, TREESPEC_VERSION 1) as ingot TreeSpecs.
//
//   [1, {"type": "builtins.dict", "context": "[\"input_ids\", \"use_cache\"]",
//        "children_spec": [{"type": null, "context": null, "children_spec": []}, ...]}]
//
// builtins.tuple / list / dict (and OrderedDict, torch.fx's immutable containers) map to
// ingot's tuple / list / dict; a leaf (type null) becomes the next entry of `leaves`
// (tensor or static, in order); any other registered type (a transformers ModelOutput)
// keeps its type name with the field names its context lists; a namedtuple takes its
// field names from the program's treespec_namedtuple_fields.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ingot/ir/pytree.h"

namespace ingot::pt2 {

// `leaves` are consumed in order; throws IoError naming `where` when the spec is
// malformed or its leaf count differs from leaves.size().
TreeSpec treespec_from_torch(const std::string& text, const std::vector<TreeSpec>& leaves,
                             const std::map<std::string, std::vector<std::string>>& namedtuples,
                             const std::string& where);

}  // namespace ingot::pt2
