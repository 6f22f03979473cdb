#include "ingot/exporters/pt2/pt2_exporter.h"

#include <algorithm>

#include "ingot/exporters/config_json.h"
#include "ingot/formats/pt2/writer.h"
#include "ingot/ops/functional.h"

namespace ingot::exporters {

namespace {
constexpr const char* kModelInputs[] = {"input_ids", "attention_mask", "position_ids",
                                        "token_type_ids"};
}  // namespace

std::string Pt2Config::to_json() const {
  nlohmann::ordered_json j = native_config_json(*this);
  j["inputs"] = inputs;
  return j.dump(2);
}

models::ModelInputs Pt2Exporter::example_inputs(const models::PretrainedModel& model,
                                                const NativeExportConfig& config) const {
  models::ModelInputs in = Exporter::example_inputs(model, config);
  const auto* c = dynamic_cast<const Pt2Config*>(&config);
  const std::vector<std::string> wanted =
      c ? c->inputs : std::vector<std::string>{"input_ids", "attention_mask"};
  auto takes = [&](const char* name) {
    return std::find(wanted.begin(), wanted.end(), name) != wanted.end();
  };
  INGOT_CHECK(takes("input_ids"), ValueError,
              "[pt2 export] 'inputs' must contain input_ids, got [{}]", fmt::join(wanted, ", "));
  const int64_t batch = in.input_ids.size(0), seq = in.input_ids.size(1);
  if (!takes("attention_mask")) in.attention_mask = Tensor();
  if (!takes("token_type_ids"))
    in.token_type_ids = Tensor();
  else if (!in.token_type_ids.defined())
    in.token_type_ids = zeros({batch, seq}, DType::I64);
  if (takes("position_ids"))
    in.position_ids = contiguous(expand(unsqueeze(arange(Scalar(seq), DType::I64), 0),
                                        SymIntList{SymInt(batch), SymInt(seq)}));
  return in;
}

void Pt2Artifact::save(const std::string& path) const {
  pt2::save_pt2(program, path);
}

std::unique_ptr<ExportArtifact> Pt2Exporter::finish(ExportedProgram program,
                                                    std::vector<std::string> notes,
                                                    const NativeExportConfig&) {
  // ── Stage 7 (pt2): verify the program; the artifact saves as a .pt2 archive ──
  program.verify();
  auto a = std::make_unique<Pt2Artifact>();
  a->program = std::move(program);
  a->notes = std::move(notes);
  return a;
}

namespace {
const bool kRegistered = [] {
  register_config_format(
      "pt2",
      {{"inputs"},
       [] { return std::make_unique<Pt2Config>(); },
       [](const nlohmann::ordered_json& j, NativeExportConfig& config, const std::string& origin) {
         auto& c = static_cast<Pt2Config&>(config);
         read_config_key(j, "inputs", c.inputs, origin);
         for (const std::string& name : c.inputs) {
           INGOT_CHECK(std::find(std::begin(kModelInputs), std::end(kModelInputs), name) !=
                           std::end(kModelInputs),
                       ValueError,
                       "[AutoExportConfig] {}: 'inputs' names '{}'; the model inputs are "
                       "input_ids, attention_mask, position_ids, token_type_ids",
                       origin, name);
         }
       }});
  register_exporter("pt2", [] { return std::make_unique<Pt2Exporter>(); });
  return true;
}();
}  // namespace

}  // namespace ingot::exporters
