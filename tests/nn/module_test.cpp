#include "ingot/nn/module.h"

#include <gtest/gtest.h>

namespace ingot::nn {
namespace {

struct Leaf : Module {
  Tensor* weight;
  Tensor* bias;
  Tensor* running;
  Tensor* scratch;
  explicit Leaf(int64_t n) : Module("Leaf") {
    weight = register_parameter("weight", Tensor::empty({n, n}, DType::F32, true));
    bias = register_parameter("bias", Tensor::empty({n}, DType::F32, true));
    running = register_buffer("running", Tensor::empty({n}, DType::F32, true));
    scratch = register_buffer("scratch", Tensor::empty({n}, DType::F32, true), false);
  }
};

struct Block : Module {
  std::shared_ptr<Leaf> proj;
  Block() : Module("Block") { proj = register_module("proj", std::make_shared<Leaf>(2)); }
};

struct Root : Module {
  Root() : Module("Root") {
    auto layers = register_module("layers", std::make_shared<ModuleList>());
    for (int i = 0; i < 2; ++i) {
      layers_.push_back(std::make_shared<Block>());
      layers->append(layers_.back());
    }
  }
  std::vector<std::shared_ptr<Block>> layers_;
};

TEST(Module, QualifiedNamesMatchStateDictLayout) {
  Root root;
  auto sd = root.state_dict();
  std::vector<std::string> names;
  for (auto& [k, v] : sd) names.push_back(k);
  EXPECT_EQ(names, (std::vector<std::string>{
                       "layers.0.proj.bias", "layers.0.proj.running", "layers.0.proj.weight",
                       "layers.1.proj.bias", "layers.1.proj.running", "layers.1.proj.weight"}));
  EXPECT_EQ(root.named_buffers().size(), 4u);  // non-persistent buffers are still buffers
  EXPECT_EQ(root.num_parameters(), 2 * (4 + 2));
}

TEST(Module, LoadStateDictSwapsSlotsSeenByMembers) {
  Root root;
  auto sd = root.state_dict();
  Tensor w = Tensor::from_vector<float>({1, 2, 3, 4}, {2, 2});
  sd["layers.1.proj.weight"] = w;
  root.load_state_dict(sd);
  EXPECT_TRUE(root.layers_[1]->proj->weight->is_same(w));  // member sees the new tensor
}

TEST(Module, StrictLoadListsEveryProblem) {
  Root root;
  auto sd = root.state_dict();
  sd.erase("layers.0.proj.bias");
  sd["layers.0.proj.extra"] = Tensor::empty({1}, DType::F32);
  sd["layers.1.proj.weight"] = Tensor::empty({3, 2}, DType::F32);
  try {
    root.load_state_dict(sd);
    FAIL();
  } catch (const ValueError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("missing: layers.0.proj.bias"), std::string::npos) << m;
    EXPECT_NE(m.find("unexpected: layers.0.proj.extra"), std::string::npos) << m;
    EXPECT_NE(m.find("layers.1.proj.weight: expected float32 [2, 2], got float32 [3, 2]"),
              std::string::npos) << m;
  }
  // Non-strict still rejects the shape mismatch but tolerates the rest.
  sd["layers.1.proj.weight"] = Tensor::empty({2, 2}, DType::F32);
  root.load_state_dict(sd, /*strict=*/false);
}

TEST(Module, ReplaceModulesByTypeAndTrainFlag) {
  Root root;
  int n = root.replace_modules("Leaf", [](const std::string& fqn, Module& old) {
    EXPECT_TRUE(fqn == "layers.0.proj" || fqn == "layers.1.proj");
    return std::make_shared<Leaf>(3);
  });
  EXPECT_EQ(n, 2);
  EXPECT_EQ(root.state_dict().at("layers.0.proj.weight").sizes(), (IntShape{3, 3}));
  root.train();
  bool all_training = true;
  root.visit([&](const std::string&, Module& m) { all_training &= m.is_training(); });
  EXPECT_TRUE(all_training);
  EXPECT_THROW(root.replace_child("nope", std::make_shared<Block>()), ValueError);
}

}  // namespace
}  // namespace ingot::nn
