#include "ingot/runtime/generator/generator.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <limits>
#include <utility>

#include "ingot/formats/serialize.h"
#include "ingot/generation/model_defaults.h"
#include "ingot/ops/functional.h"
#include "ingot/runtime/passes/pipeline.h"

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

Generator::Generator(GenerationPackage package, std::optional<int64_t> max_cache_len,
                     const RuntimeOptions& options)
    : manifest_(std::move(package.manifest)) {
  std::map<std::string, ExportedProgram>& components = package.programs;
  for (const auto& [name, c] : manifest_.components) {
    INGOT_CHECK(components.contains(name), ValueError,
                "[Generator] the manifest lists component '{}' but no program was given for it",
                name);
  }
  auto decode = components.find("decode");
  INGOT_CHECK(decode != components.end() && manifest_.has_component("decode"), ValueError,
              "[Generator] the components have no 'decode' program (got {} components)",
              components.size());
  const ExportedProgram& ep = decode->second;
  decode_layout_ = manifest_.layout("decode");
  allocate_cache(ep, max_cache_len);
  // Every component runs a copy rewritten by the load-time passes (runtime/passes/
  // pipeline.h: huge-page weights, fusions, bf16 tables, packed panels; weights shared
  // between components). Every copy drops its example inputs: the runtime never reads
  // them, and a generation export's are a whole KV cache (235 MB for the Qwen3-0.6B shape
  // at 1024 f32 slots), freed here when no caller holds the programs.
  PassPipeline passes(options);
  auto prepared = [&](const ExportedProgram& p, const std::string& name, bool prefill = false) {
    return std::make_unique<ProgramModule>(without_example_inputs(passes.run(p, {name, prefill})));
  };
  decode_ = prepared(ep, "decode");
  // The prefill needs the last position's logits only: its copy has the LM head applied
  // to that position (last_position_logits) when the program has that shape. Without a
  // prefill component the decode program serves the prompt, through such a copy or, when
  // the pass does not apply, itself.
  auto prefill = components.find("prefill");
  const bool separate_prefill = prefill != components.end();
  prefill_layout_ = separate_prefill ? manifest_.layout("prefill") : decode_layout_;
  if (separate_prefill) {
    prefill_ = prepared(prefill->second, "prefill", /*prefill=*/true);
  } else {
    std::unique_ptr<ProgramModule> copy = prepared(ep, "decode (prompt)", /*prefill=*/true);
    if (passes.report().changes("decode (prompt)", "last_position_logits") > 0)
      prefill_ = std::move(copy);
  }
  step_ids_ = zeros({1, 1}, DType::I64);
  auto module = [&](const char* name) {
    auto it = components.find(name);
    return it == components.end() ? nullptr : prepared(it->second, name);
  };
  if (manifest_.vision_language) {
    image_encoder_ = module("image_encoder");
    projector_ = module("multi_modal_projector");
    language_model_ = module("language_model");
    lm_head_ = module("lm_head");
    set_vision_language(*manifest_.vision_language, ep);
  }
  if (manifest_.encoder_decoder) {
    encoder_ = module("encoder");
    cross_kv_ = module("cross_kv");
    if (auto it = components.find("cross_kv"); it != components.end())
      cross_kv_outputs_ = it->second.out_spec.leaf_paths("");
    set_encoder_decoder(*manifest_.encoder_decoder);
  }
  pass_report_ = passes.report();
}

void Generator::allocate_cache(const ExportedProgram& ep, std::optional<int64_t> max_cache_len) {
  using generation::InputRole;
  std::vector<size_t> user_inputs;  // graph input index of each user input, in order
  for (size_t i = 0; i < ep.signature.inputs.size(); ++i)
    if (ep.signature.inputs[i].kind == InputKind::UserInput) user_inputs.push_back(i);
  INGOT_CHECK(user_inputs.size() == decode_layout_.inputs.size(), ValueError,
              "[Generator] the decode program takes {} user inputs but its manifest layout lists "
              "{}; the manifest does not describe this program",
              user_inputs.size(), decode_layout_.inputs.size());
  const ir::Graph& g = *ep.graph;
  for (size_t k = 0; k < user_inputs.size(); ++k) {
    const generation::StepInput& in = decode_layout_.inputs[k];
    INGOT_CHECK(ep.signature.inputs[user_inputs[k]].target == in.name, ValueError,
                "[Generator] decode input {} is '{}' but the manifest layout names '{}'", k,
                ep.signature.inputs[user_inputs[k]].target, in.name);
    switch (in.role) {
      case InputRole::kInputIds:
        break;
      case InputRole::kCrossKey:
      case InputRole::kCrossValue:
        ++cross_inputs_;  // given by cross_kv per input
        break;
      case InputRole::kRopeDeltas:
        rope_deltas_ = zeros({1, 1}, DType::I64);
        break;
      case InputRole::kKeyCache:
      case InputRole::kValueCache:
      case InputRole::kCachePosition: {
        // A symbolic length takes max_cache_len.
        const ir::ValueInfo& v = g.value(g.inputs[user_inputs[k]]);
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
        cache_by_name_.emplace(in.name, cache_.back());
        if (in.role == InputRole::kCachePosition)
          position_ = cache_.back();
        else
          max_cache_len_ = sizes.at(2);
        break;
      }
      default:
        INGOT_THROW(NotSupportedError,
                    "[Generator] the decode program's input '{}' is {}; ingot's decode loop binds "
                    "input_ids, rope_deltas, cross-attention K/V and the StaticCache (export "
                    "without mask_and_position_inputs for the native runtime)",
                    in.name, generation::role_name(in.role));
    }
  }
  INGOT_CHECK(decode_layout_.has(InputRole::kInputIds) && position_.defined() && max_cache_len_ > 0,
              ValueError,
              "[Generator] the decode program takes no input_ids and StaticCache (expected "
              "inputs input_ids, key_cache.N, value_cache.N, cache_position; export it with "
              "exporters::Exporter::export_for_generation)");
}

std::vector<Tensor> Generator::step_inputs(const generation::StepLayout& layout,
                                           const Tensor& first, const Tensor& positions) const {
  using generation::InputRole;
  std::vector<Tensor> inputs;
  inputs.reserve(layout.inputs.size());
  for (const generation::StepInput& in : layout.inputs) {
    switch (in.role) {
      case InputRole::kInputIds:
      case InputRole::kInputsEmbeds:
        inputs.push_back(first);
        break;
      case InputRole::kPositionIds:
        INGOT_CHECK(positions.defined(), ValueError, "[Generator] input '{}' needs positions",
                    in.name);
        inputs.push_back(positions);
        break;
      case InputRole::kRopeDeltas:
        inputs.push_back(rope_deltas_);
        break;
      case InputRole::kCrossKey:
      case InputRole::kCrossValue: {
        auto it = cross_.find(in.name);
        INGOT_CHECK(it != cross_.end(), ValueError,
                    "[Generator] the decode component takes cross-attention K/V ('{}'): generate "
                    "with the encoder input (generate_from_encoder_input), not decoder ids alone",
                    in.name);
        inputs.push_back(it->second);
        break;
      }
      default: {
        auto it = cache_by_name_.find(in.name);
        INGOT_CHECK(it != cache_by_name_.end(), ValueError,
                    "[Generator] input '{}' ({}) is not one of the decode component's cache "
                    "tensors",
                    in.name, generation::role_name(in.role));
        inputs.push_back(it->second);
      }
    }
  }
  return inputs;
}

Generator Generator::load(const std::string& dir, std::optional<int64_t> max_cache_len,
                          const RuntimeOptions& options) {
  namespace fs = std::filesystem;
  generation::GenerationManifest manifest = generation::GenerationManifest::read(dir);
  INGOT_CHECK(manifest.export_format == "native", NotSupportedError,
              "[Generator] '{}' holds {} components, which ingot's runtime does not run; export "
              "with --format native (or run them with their own runtime)",
              dir, manifest.export_format);
  GenerationPackage package{std::move(manifest), {}};
  for (const auto& [name, c] : package.manifest.components)
    package.programs.emplace(name, ingot::load((fs::path(dir) / c.file).string()));
  Generator gen(std::move(package), max_cache_len, options);
  gen.generation_config_ = models::GenerationConfig::from_folder(dir);
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
  return module.run(step_inputs(&module == decode_.get() ? decode_layout_ : prefill_layout_, ids))
      .at(0);
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
