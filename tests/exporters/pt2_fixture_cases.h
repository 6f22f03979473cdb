// The torch.export archive fixtures (tests/fixtures/pt2, made by
// tools/reference/make_pt2_fixtures.py) as the backends' .pt2 tests read them: every
// fixture folder holds model.pt2 and model_aten.pt2 (the two dialects) and a manifest.json
// whose "inputs" are torch's flattened user-input names and whose "cases" each give the
// .npy files of the inputs present in that case, the flattened user outputs in order and,
// for a program that mutates buffers, each buffer's value after the call.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ingot/core/tensor.h"
#include "ingot/formats/npy.h"

namespace ingot::testing::pt2_fixtures {

inline const std::filesystem::path kDir = std::filesystem::path(INGOT_FIXTURES_DIR) / "pt2";

// Every fixture folder, in the order the tests list them.
inline const std::vector<std::string> kNames = {
    "buffer_mutation", "cond",      "nonzero_check", "static_int_dict",
    "llama",           "gpt2",      "qwen3",         "loops_item",
    "mixtral_moe",     "qwen3_moe_small", "symint_input", "expr_sized"};

// Test names of a suite over kNames: the fixture's folder name.
inline std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
  return info.param;
}

inline nlohmann::json manifest(const std::string& name) {
  std::ifstream in(kDir / name / "manifest.json");
  return nlohmann::json::parse(in);
}

// Loads the .npy file a manifest entry names, relative to the fixture's folder.
inline Tensor load(const std::string& name, const nlohmann::json& file) {
  return formats::load_npy((kDir / name / file.get<std::string>()).string());
}

// The user inputs present in case `c`, in the manifest's order (torch's flattened
// inputs; an optional input a case leaves out is skipped, so the list is as long as the
// program's user inputs).
inline std::vector<Tensor> case_inputs(const std::string& name, const nlohmann::json& m,
                                       const nlohmann::json& c) {
  std::vector<Tensor> inputs;
  for (const auto& n : m["inputs"]) {
    const std::string s = n.get<std::string>();
    if (c["inputs"].contains(s)) inputs.push_back(load(name, c["inputs"][s]));
  }
  return inputs;
}

}  // namespace ingot::testing::pt2_fixtures
