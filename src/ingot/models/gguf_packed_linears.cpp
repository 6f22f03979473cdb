#include "ingot/models/gguf_packed_linears.h"

#include <set>

#include "ingot/models/decoder/decoder_lm.h"
#include "ingot/nn/layers.h"

namespace ingot::models {

GgufWeights gguf_model_weights(PretrainedModel& model, const formats::GgufFile& file,
                               const GgufArchitecture& arch, bool keep_packed) {
  if (!keep_packed) return {gguf_state_dict(file, arch), {}};
  std::set<std::string> tied;
  for (const auto& [name, source] : model.tied_weights()) tied.insert({name, source});
  std::map<std::string, nn::Linear*> linears;  // by weight name
  model.visit([&](const std::string& fqn, nn::Module& m) {
    if (auto* l = dynamic_cast<nn::Linear*>(&m); l && !l->is_packed()) {
      const std::string weight = fqn + ".weight";
      if (!tied.contains(weight)) linears.emplace(weight, l);
    }
  });
  // A DecoderLM's table: every use of it knows the packed form.
  nn::Embedding* table = nullptr;
  if (dynamic_cast<DecoderLM*>(&model)) {
    model.visit([&](const std::string& fqn, nn::Module& m) {
      if (fqn + ".weight" == DecoderLM::kEmbedTokensWeight)
        table = dynamic_cast<nn::Embedding*>(&m);
    });
  }
  GgufWeights w =
      gguf_weights(file, arch, [&](const std::string& hf, const formats::PackedLayout& layout) {
        if (hf == DecoderLM::kEmbedTokensWeight) return table && layout.bits == 8;
        auto it = linears.find(hf);
        return it != linears.end() && it->second->in_features() % layout.group == 0;
      });
  for (const auto& [base, layout] : w.packed) {
    if (base + ".weight" == DecoderLM::kEmbedTokensWeight)
      table->use_packed_weight(layout.group);
    else
      linears.at(base + ".weight")->use_packed_weight(layout.bits, layout.group);
  }
  return w;
}

}  // namespace ingot::models
