#include "ingot/runtime/generator.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <utility>

#include "ingot/export/serialize.h"
#include "ingot/generation/model_defaults.h"
#include "ingot/models/qwen2_vl_vision.h"
#include "ingot/models/vision_language.h"
#include "ingot/ops/functional.h"
#include "ingot/runtime/bf16_embedding_tables.h"
#include "ingot/runtime/fuse_sibling_linears.h"
#include "ingot/runtime/fuse_silu_mul.h"
#include "ingot/runtime/huge_page_weights.h"
#include "ingot/runtime/last_position_logits.h"
#include "ingot/runtime/packed_linear_weights.h"

namespace ingot::runtime {

namespace {
double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// `p` without its example inputs (what the Generator keeps; see the constructor).
ExportedProgram without_example_inputs(ExportedProgram p) {
  p.example_inputs.clear();
  return p;
}

}  // namespace

int64_t argmax_last(const Tensor& logits) {
  INGOT_CHECK(logits.dim() == 3 && logits.size(0) == 1, ShapeError,
              "[Generator] logits must be [1, tokens, vocab], got {}", logits.shape_string());
  Tensor row = select(select(logits, 0, 0), 0, logits.size(1) - 1);  // [vocab]
  if (row.dtype() != DType::F32 || !row.is_contiguous()) row = contiguous(to(row, DType::F32));
  const float* p = row.data<float>();
  const int64_t vocab = row.numel();
  int64_t best = 0;
  for (int64_t i = 1; i < vocab; ++i) {
    if (p[i] > p[best]) best = i;
  }
  return best;
}

void last_row(const Tensor& logits, std::vector<float>& row) {
  INGOT_CHECK(logits.dim() == 3 && logits.size(0) == 1, ShapeError,
              "[Generator] logits must be [1, tokens, vocab], got {}", logits.shape_string());
  Tensor r = select(select(logits, 0, 0), 0, logits.size(1) - 1);  // [vocab]
  if (r.dtype() != DType::F32 || !r.is_contiguous()) r = contiguous(to(r, DType::F32));
  row.assign(r.data<float>(), r.data<float>() + r.numel());
}

Generator::Generator(std::map<std::string, ExportedProgram> components,
                     std::optional<int64_t> max_cache_len) {
  // Every component runs on huge-page copies of its large mapped weights, shared between
  // components (runtime/huge_page_weights.h).
  HugePageWeights weights;
  for (auto& [name, program] : components) program = weights.apply(program);
  auto decode = components.find("decode");
  INGOT_CHECK(decode != components.end(), ValueError,
              "[Generator] the components have no 'decode' program (got {} components)",
              components.size());
  const ExportedProgram& ep = decode->second;
  // Allocate the cache from the program's cache inputs (every user input after
  // input_ids: key_cache.N, value_cache.N, cache_position); a symbolic length takes
  // max_cache_len.
  const ir::Graph& g = *ep.graph;
  bool first_user_input = true;
  for (size_t i = 0; i < ep.signature.inputs.size(); ++i) {
    const InputSpec& in = ep.signature.inputs[i];
    if (in.kind != InputKind::UserInput) continue;
    if (std::exchange(first_user_input, false)) continue;  // input_ids
    if (in.target.starts_with("cross_")) {
      // An encoder-decoder's cross-attention K/V: given by cross_kv, not allocated here.
      INGOT_CHECK(cache_.empty(), ValueError,
                  "[Generator] the decode program's cross-attention input '{}' follows its cache "
                  "inputs; expected input_ids, cross_*_cache.N, then the StaticCache",
                  in.target);
      cross_names_.push_back(in.target);
      continue;
    }
    const ir::ValueInfo& v = g.value(g.inputs[i]);
    if (in.target == "rope_deltas") {  // M-RoPE decode (Qwen2-VL): before the cache
      INGOT_CHECK(cache_.empty() && v.sizes.size() == 2, ValueError,
                  "[Generator] the decode program's rope_deltas input must be [1, 1] and come "
                  "before the cache");
      rope_deltas_ = zeros({1, 1}, DType::I64);
      continue;
    }
    IntShape sizes;
    for (const sym::Expr& e : v.sizes) {
      if (e.is_integer()) {
        sizes.push_back(e.value());
        continue;
      }
      INGOT_CHECK(max_cache_len.has_value(), ValueError,
                  "[Generator] the program's cache length is dynamic ({}); pass max_cache_len",
                  e.str());
      auto range = ep.range_constraints.find(e.name());
      INGOT_CHECK(
          range == ep.range_constraints.end() || range->second.range.contains(*max_cache_len),
          ValueError, "[Generator] max_cache_len {} is outside the exported range {}",
          *max_cache_len, range->second.range.str());
      sizes.push_back(*max_cache_len);
    }
    cache_.push_back(zeros(sizes, v.dtype));
    if (in.target == "cache_position")
      position_ = cache_.back();
    else
      max_cache_len_ = sizes.at(2);
  }
  INGOT_CHECK(!cache_.empty() && position_.defined() && max_cache_len_ > 0, ValueError,
              "[Generator] the decode program takes no StaticCache input (expected inputs "
              "input_ids, key_cache.N, value_cache.N, cache_position; export it with "
              "exporters::Exporter::export_for_generation)");
  // Decode and prefill run copies with the gated MLP's silu * up fused
  // (runtime/fuse_silu_mul.h), quantised linears on one input computed in one pass
  // (runtime/fuse_sibling_linears.h), f32 embedding tables held in bf16 where that is
  // exact (runtime/bf16_embedding_tables.h; one table for both) and f32 linear weights
  // held as the GEMM's panels (runtime/packed_linear_weights.h; one copy for both). Every
  // program kept drops its example inputs: the runtime never reads them (the rewrites'
  // checks still use their shapes), and a generation export's are a whole KV cache (235
  // MB for the Qwen3-0.6B shape at 1024 f32 slots), freed here when no caller holds the
  // programs.
  Bf16EmbeddingTables tables;
  PackedLinearWeights panels;
  const auto fused = [&tables, &panels](const ExportedProgram& p) {
    return without_example_inputs(
        panels.apply(tables.apply(fuse_silu_mul(fuse_sibling_linears(p)))));
  };
  decode_ = std::make_unique<ProgramModule>(fused(ep));
  // The prefill needs the last position's logits only: it runs a copy of its program with
  // the LM head applied to that position (runtime/last_position_logits.h), when the
  // program has that shape; decode steps (one token) keep their LM head.
  auto prefill = components.find("prefill");
  const ExportedProgram& prefill_program = prefill != components.end() ? prefill->second : ep;
  if (std::optional<ExportedProgram> last = last_position_logits(prefill_program)) {
    prefill_ = std::make_unique<ProgramModule>(fused(*last));
  } else if (prefill != components.end()) {
    prefill_ = std::make_unique<ProgramModule>(fused(prefill->second));
  }
  step_ids_ = zeros({1, 1}, DType::I64);
  // The multimodal components wait for set_vision_language (which needs the table).
  for (const char* name : {"image_encoder", "multi_modal_projector", "language_model", "lm_head"}) {
    if (auto it = components.find(name); it != components.end())
      vlm_programs_.emplace(name, without_example_inputs(it->second));
  }
  if (!vlm_programs_.empty()) vlm_programs_.emplace("decode", without_example_inputs(ep));
  // The encoder-decoder components wait for set_encoder_decoder.
  for (const char* name : {"encoder", "cross_kv"}) {
    if (auto it = components.find(name); it != components.end())
      encdec_programs_.emplace(name, without_example_inputs(it->second));
  }
}

void Generator::set_encoder_decoder(const std::string& encoder_input,
                                    std::vector<int64_t> decoder_prompt) {
  for (const char* name : {"encoder", "cross_kv"}) {
    INGOT_CHECK(encdec_programs_.contains(name), ValueError,
                "[Generator] an encoder-decoder generator needs a '{}' component (export with "
                "exporters::Exporter::export_for_generation)",
                name);
  }
  INGOT_CHECK(!cross_names_.empty(), ValueError,
              "[Generator] the decode component takes no cross-attention inputs "
              "(cross_key_cache.N, cross_value_cache.N): it is not an encoder-decoder's decode");
  INGOT_CHECK(!decoder_prompt.empty(), ValueError,
              "[Generator] the decoder prompt is empty; it starts with decoder_start_token_id");
  encoder_ = std::make_unique<ProgramModule>(encdec_programs_.at("encoder"));
  cross_kv_ = std::make_unique<ProgramModule>(encdec_programs_.at("cross_kv"));
  cross_kv_outputs_ = encdec_programs_.at("cross_kv").out_spec.leaf_paths("");
  encoder_input_ = encoder_input;
  decoder_prompt_ = std::move(decoder_prompt);
}

std::vector<int64_t> Generator::generate_from_encoder_input(const Tensor& encoder_input,
                                                            const GenerateOptions& o,
                                                            GenerationStats* stats) {
  INGOT_CHECK(is_encoder_decoder(), ValueError,
              "[Generator] an encoder input was given but these components are not an "
              "encoder-decoder model's (no encoder / cross_kv, or set_encoder_decoder was not "
              "called)");
  INGOT_CHECK(encoder_input.defined(), ValueError, "[Generator] the encoder input '{}' is missing",
              encoder_input_);
  // The encoder and the cross-attention projections run once per input; every decode
  // step reuses the cross K/V.
  Tensor states = encoder_->run({encoder_input}).at(0);  // [1, source, d_model]
  std::vector<Tensor> kv = cross_kv_->run({states});
  std::map<std::string, Tensor> by_name;
  for (size_t i = 0; i < kv.size() && i < cross_kv_outputs_.size(); ++i)
    by_name.emplace(cross_kv_outputs_[i], kv[i]);
  cross_.clear();
  for (const std::string& name : cross_names_) {
    auto it = by_name.find(name);
    INGOT_CHECK(it != by_name.end(), ValueError,
                "[Generator] the cross_kv component does not output '{}', which decode takes",
                name);
    cross_.push_back(it->second);
  }
  last_prompt_ = decoder_prompt_;
  if (prompt_builder_) {
    auto first_logits = [&] {
      reset_cache();
      step_ids_.data<int64_t>()[0] = decoder_prompt_.at(0);
      Tensor logits = run(*decode_, step_ids_);  // [1, 1, vocab]
      return contiguous(select(select(logits, 0, 0), 0, -1));
    };
    last_prompt_ = prompt_builder_(first_logits);
  }
  return generate(last_prompt_, o, stats);
}

void Generator::set_vision_language(int64_t image_token_id, const std::string& embed_tokens,
                                    int64_t spatial_merge_size, bool mrope) {
  INGOT_CHECK(!mrope || rope_deltas_.defined(), ValueError,
              "[Generator] an M-RoPE model's decode component takes rope_deltas; this one does not "
              "(export with exporters::Exporter::export_for_generation)");
  set_vision_language(image_token_id, embed_tokens);
  INGOT_CHECK(spatial_merge_size == 0 || !projector_, ValueError,
              "[Generator] a patch-input model has no multi_modal_projector component");
  spatial_merge_size_ = spatial_merge_size;
  mrope_ = mrope;
}

void Generator::set_vision_language(int64_t image_token_id, const std::string& embed_tokens) {
  for (const char* name : {"image_encoder", "language_model", "lm_head"}) {
    INGOT_CHECK(vlm_programs_.contains(name), ValueError,
                "[Generator] a vision-language generator needs a '{}' component (export with "
                "exporters::Exporter::export_for_generation)",
                name);
  }
  const ExportedProgram& decode = vlm_programs_.at("decode");
  auto table = decode.state.find(embed_tokens);
  INGOT_CHECK(table != decode.state.end() && table->second.dim() == 2, ValueError,
              "[Generator] the decode component has no embedding table '{}'", embed_tokens);
  auto module = [&](const char* name) {
    auto it = vlm_programs_.find(name);
    return it == vlm_programs_.end() ? nullptr : std::make_unique<ProgramModule>(it->second);
  };
  image_encoder_ = module("image_encoder");
  projector_ = module("multi_modal_projector");
  language_model_ = module("language_model");
  lm_head_ = module("lm_head");
  embed_tokens_ = table->second;
  image_token_id_ = image_token_id;
}

Generator Generator::load(const std::string& dir, std::optional<int64_t> max_cache_len) {
  namespace fs = std::filesystem;
  const fs::path manifest_path = fs::path(dir) / "manifest.json";
  std::ifstream f(manifest_path);
  INGOT_CHECK(f.good(), IoError,
              "[Generator] no manifest.json in '{}' (export with --task generation)", dir);
  nlohmann::json manifest;
  try {
    manifest = nlohmann::json::parse(f);
  } catch (const nlohmann::json::exception& e) {
    INGOT_THROW(IoError, "[Generator] '{}' is not valid JSON: {}", manifest_path.string(),
                e.what());
  }
  // A string field of the manifest, `fallback` when absent.
  auto text = [&](const char* key, const char* fallback) -> std::string {
    if (!manifest.is_object() || !manifest.contains(key)) return fallback;
    INGOT_CHECK(manifest[key].is_string(), IoError, "[Generator] '{}': \"{}\" must be a string",
                manifest_path.string(), key);
    return manifest[key].get<std::string>();
  };
  INGOT_CHECK(text("format", "") == "ingot-generation" && manifest.contains("components") &&
                  manifest["components"].is_object(),
              IoError, "[Generator] '{}' is not an ingot generation manifest",
              manifest_path.string());
  const std::string format = text("export_format", "native");
  INGOT_CHECK(format == "native", NotSupportedError,
              "[Generator] '{}' holds {} components, which ingot's runtime does not run; export "
              "with --format native (or run them with their own runtime)",
              dir, format);
  std::map<std::string, ExportedProgram> components;
  for (const auto& [name, file] : manifest["components"].items()) {
    INGOT_CHECK(
        file.is_string() && fs::path(file.get<std::string>()).filename() == file.get<std::string>(),
        IoError, "[Generator] '{}': components.{} must be a file name in the directory",
        manifest_path.string(), name);
    components.emplace(name, ingot::load((fs::path(dir) / file.get<std::string>()).string()));
  }
  Generator gen(std::move(components), max_cache_len);
  gen.generation_config_ = models::GenerationConfig::from_folder(dir);
  if (manifest.contains("pipeline") && manifest["pipeline"].is_object() &&
      manifest["pipeline"].value("kind", "") == "encoder-decoder") {
    const nlohmann::json& p = manifest["pipeline"];
    INGOT_CHECK(p.contains("encoder_input") && p["encoder_input"].is_string() &&
                    p.contains("decoder_prompt") && p["decoder_prompt"].is_array() &&
                    !p["decoder_prompt"].empty() &&
                    std::all_of(p["decoder_prompt"].begin(), p["decoder_prompt"].end(),
                                [](const nlohmann::json& v) { return v.is_number_integer(); }),
                IoError,
                "[Generator] '{}': an encoder-decoder \"pipeline\" must have \"encoder_input\": "
                "NAME and \"decoder_prompt\": [ids...]",
                manifest_path.string());
    gen.set_encoder_decoder(p["encoder_input"].get<std::string>(),
                            p["decoder_prompt"].get<std::vector<int64_t>>());
  } else if (manifest.contains("pipeline")) {
    const nlohmann::json& p = manifest["pipeline"];
    INGOT_CHECK(p.is_object() && p.value("kind", "") == "vision-language" &&
                    p.contains("image_token_id") && p["image_token_id"].is_number_integer() &&
                    p.contains("embed_tokens") && p["embed_tokens"].is_object() &&
                    p["embed_tokens"].value("component", "") == "decode" &&
                    p["embed_tokens"].contains("tensor") && p["embed_tokens"]["tensor"].is_string(),
                IoError,
                "[Generator] '{}': \"pipeline\" must be {{\"kind\": \"vision-language\", "
                "\"image_token_id\": N, \"embed_tokens\": {{\"component\": \"decode\", "
                "\"tensor\": NAME}}, ...}}",
                manifest_path.string());
    // Patch-input models (Qwen2-VL) say so in "image_input" and "rope".
    int64_t merge = 0;
    if (p.contains("image_input") && p["image_input"].is_object() &&
        p["image_input"].value("kind", "") == "patches") {
      INGOT_CHECK(p["image_input"].contains("spatial_merge_size") &&
                      p["image_input"]["spatial_merge_size"].is_number_integer() &&
                      p["image_input"]["spatial_merge_size"].get<int64_t>() > 0,
                  IoError, "[Generator] '{}': pipeline.image_input needs a spatial_merge_size > 0",
                  manifest_path.string());
      merge = p["image_input"]["spatial_merge_size"].get<int64_t>();
    }
    gen.set_vision_language(p["image_token_id"].get<int64_t>(),
                            p["embed_tokens"]["tensor"].get<std::string>(), merge,
                            p.value("rope", "") == "mrope");
  }
  return gen;
}

GenerateOptions Generator::default_options(int64_t prompt_tokens,
                                           int64_t fallback_max_new_tokens) const {
  GenerateOptions o;
  const models::GenerationConfig& c = generation_config_;
  if (c.eos_token_ids) o.stop_tokens = *c.eos_token_ids;
  o.do_sample = c.do_sample.value_or(false);
  o.sampling = generation::sampling_with_model_defaults(c);
  o.max_new_tokens = c.new_token_limit(prompt_tokens).value_or(fallback_max_new_tokens);
  return o;
}

Tensor Generator::run(ProgramModule& module, const Tensor& ids) {
  INGOT_CHECK(cross_.size() == cross_names_.size(), ValueError,
              "[Generator] the decode component takes cross-attention K/V: generate with the "
              "encoder input (generate_from_encoder_input), not decoder ids alone");
  std::vector<Tensor> inputs{ids};
  inputs.insert(inputs.end(), cross_.begin(), cross_.end());
  if (rope_deltas_.defined()) inputs.push_back(rope_deltas_);
  inputs.insert(inputs.end(), cache_.begin(), cache_.end());
  return module.run(inputs).at(0);
}

void Generator::reset_cache() {
  position_.data<int64_t>()[0] = 0;
}

std::vector<int64_t> Generator::generate(const std::vector<int64_t>& prompt,
                                         const GenerateOptions& o, GenerationStats* stats) {
  if (rope_deltas_.defined()) rope_deltas_.data<int64_t>()[0] = 0;  // text only: no shift
  return generate_after(
      prompt, [&](const Tensor& ids) { return run(prefill_ ? *prefill_ : *decode_, ids); }, o,
      stats);
}

std::vector<int64_t> Generator::generate(const std::vector<int64_t>& prompt,
                                         const Tensor& pixel_values, const Tensor& image_grid_thw,
                                         const GenerateOptions& o, GenerationStats* stats) {
  INGOT_CHECK(is_vision_language() && spatial_merge_size_ > 0, ValueError,
              "[Generator] pixel_values with image_grid_thw given but these components are not a "
              "patch-input vision-language model's (Qwen2-VL)");
  return generate_after(
      prompt,
      [&](const Tensor& ids) { return prefill_with_images(ids, pixel_values, image_grid_thw); }, o,
      stats);
}

std::vector<int64_t> Generator::generate(const std::vector<int64_t>& prompt,
                                         const Tensor& pixel_values, const GenerateOptions& o,
                                         GenerationStats* stats) {
  INGOT_CHECK(is_vision_language(), ValueError,
              "[Generator] pixel_values given but these components are not a vision-language "
              "model's (no image_encoder / language_model / lm_head, or set_vision_language was "
              "not called)");
  INGOT_CHECK(spatial_merge_size_ == 0, ValueError,
              "[Generator] this model takes flattened patches with image_grid_thw (Qwen2-VL): "
              "pass both");
  return generate_after(
      prompt, [&](const Tensor& ids) { return prefill_with_images(ids, pixel_values, Tensor()); },
      o, stats);
}

Tensor Generator::encode_patches(const Tensor& pixel_values, const Tensor& image_grid_thw) {
  const int64_t m2 = spatial_merge_size_ * spatial_merge_size_;
  const models::Qwen2VisionInputs side =
      models::qwen2_vl_vision_inputs(image_grid_thw, spatial_merge_size_);
  const int64_t tokens = side.vision_segment_ids.size(0);
  INGOT_CHECK(
      pixel_values.defined() && pixel_values.dim() == 2 && pixel_values.size(0) == tokens * m2,
      ShapeError,
      "[Generator] pixel_values must be [patches, C*T*P*P] with the {} patches "
      "image_grid_thw gives (sum of t * h * w), got {}",
      tokens * m2, pixel_values.defined() ? pixel_values.shape_string() : "nothing");
  Tensor grouped = reshape(contiguous(to(pixel_values, DType::F32)),
                           {SymInt(tokens), SymInt(m2), SymInt(pixel_values.size(1))});
  Tensor embeds =
      image_encoder_->run({contiguous(grouped), side.vision_position_ids, side.vision_segment_ids})
          .at(0);               // [tokens, hidden]
  return unsqueeze(embeds, 0);  // [1, tokens, hidden]
}

Tensor Generator::prefill_with_images(const Tensor& ids, const Tensor& pixel_values,
                                      const Tensor& image_grid_thw) {
  Tensor image_embeds;
  if (spatial_merge_size_ > 0) {
    image_embeds = encode_patches(pixel_values, image_grid_thw);
  } else {
    INGOT_CHECK(pixel_values.defined() && pixel_values.dim() == 4, ShapeError,
                "[Generator] pixel_values must be [images, channels, height, width], got {}",
                pixel_values.defined() ? pixel_values.shape_string() : "nothing");
    Tensor features = image_encoder_->run({pixel_values}).at(0);  // [images, patches, F]
    image_embeds = projector_ ? projector_->run({features}).at(0) : features;
  }
  Tensor embeds = models::merge_image_features(embedding(embed_tokens_, ids), ids, image_embeds,
                                               image_token_id_);
  std::vector<Tensor> inputs{embeds};  // [1, n, hidden], [positions], then the cache
  if (mrope_) {
    models::MropePositions p =
        models::mrope_position_ids(ids, image_token_id_, image_grid_thw, spatial_merge_size_);
    inputs.push_back(p.position_ids);  // [3, 1, n]
    rope_deltas_.data<int64_t>()[0] = p.rope_delta;
  }
  inputs.insert(inputs.end(), cache_.begin(), cache_.end());
  Tensor hidden = language_model_->run(inputs).at(0);  // [1, n, hidden]
  const int64_t n = hidden.size(1);
  return lm_head_->run({contiguous(slice(hidden, 1, n - 1, n))}).at(0);  // [1, 1, vocab]
}

std::vector<int64_t> Generator::generate_after(const std::vector<int64_t>& prompt,
                                               const std::function<Tensor(const Tensor&)>& prefill,
                                               const GenerateOptions& o, GenerationStats* stats) {
  INGOT_CHECK(!prompt.empty(), ValueError,
              "[Generator] the prompt is empty; give at least one token");
  INGOT_CHECK(int64_t(prompt.size()) < max_cache_len_, ValueError,
              "[Generator] the prompt has {} tokens but the cache holds {}; export with a larger "
              "--max-cache-len or shorten the prompt",
              prompt.size(), max_cache_len_);
  GenerationStats st;
  st.prompt_tokens = int64_t(prompt.size());
  generation::Rng rng(o.seed);
  std::vector<float> row;
  std::vector<int64_t> seen;  // prompt + generated: what the repetition penalty looks at
  const bool suppressing = !o.suppress_tokens.empty() || !o.begin_suppress_tokens.empty();
  const bool plain_greedy = !o.do_sample && o.sampling.repetition_penalty == 1.0 && !suppressing;
  if (!plain_greedy) seen.assign(prompt.begin(), prompt.end());
  int64_t generated = 0;  // tokens chosen so far (begin_suppress_tokens applies at 0)
  auto next_token = [&](const Tensor& logits) {
    if (plain_greedy) return argmax_last(logits);
    last_row(logits, row);
    auto suppress = [&](const std::vector<int64_t>& ids) {
      for (int64_t id : ids)
        if (id >= 0 && id < int64_t(row.size()))
          row[size_t(id)] = -std::numeric_limits<float>::infinity();
    };
    suppress(o.suppress_tokens);
    if (generated++ == 0) suppress(o.begin_suppress_tokens);
    const int64_t token = generation::next_token(row, seen, o.sampling, o.do_sample, rng);
    seen.push_back(token);
    return token;
  };
  reset_cache();
  std::vector<int64_t> out;
  auto emit = [&](int64_t token) {
    out.push_back(token);
    if (o.on_token) o.on_token(token);
    return std::find(o.stop_tokens.begin(), o.stop_tokens.end(), token) != o.stop_tokens.end();
  };
  if (o.max_new_tokens <= 0) {
    st.stop_reason = "max_new_tokens";
    if (stats) *stats = st;
    return out;
  }
  auto t0 = std::chrono::steady_clock::now();
  Tensor ids = Tensor::from_vector(prompt, {1, int64_t(prompt.size())});
  Tensor logits = prefill(ids);
  bool stopped = emit(next_token(logits));
  st.prefill_seconds = seconds_since(t0);
  int64_t cached = int64_t(prompt.size());
  auto t1 = std::chrono::steady_clock::now();
  st.stop_reason = stopped ? "stop_token" : "max_new_tokens";
  while (!stopped && int64_t(out.size()) < o.max_new_tokens) {
    if (cached + 1 > max_cache_len_) {
      st.stop_reason = "cache_full";
      break;
    }
    step_ids_.data<int64_t>()[0] = out.back();
    logits = Tensor();  // drop the last logits so a planned step may reuse their memory
    logits = run(*decode_, step_ids_);
    ++cached;
    stopped = emit(next_token(logits));
    if (stopped) st.stop_reason = "stop_token";
  }
  st.decode_seconds = seconds_since(t1);
  st.new_tokens = int64_t(out.size());
  if (stats) *stats = st;
  return out;
}

}  // namespace ingot::runtime
