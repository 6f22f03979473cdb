// runtime::Generator from Python: a generation directory (or components exported in
// memory) decoded with the model's generation_config.json defaults, as `ingot generate`
// does. generate() releases the GIL; the streamer is called (with the GIL) with each new
// token id and the text it completes.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>

#include "bindings.h"
#include "ingot/app/generate.h"
#include "ingot/exporters/generation_export.h"
#include "ingot/runtime/generator/generator.h"
#include "ingot/text/decode_stream.h"
#include "ingot/text/tokenizer.h"

namespace ingot::python {

namespace {

struct PyGenerator {
  std::unique_ptr<runtime::Generator> generator;
  std::shared_ptr<text::Tokenizer> tokenizer;  // null when the folder has none
};

std::shared_ptr<text::Tokenizer> tokenizer_of(const std::string& folder) {
  if (!std::filesystem::exists(std::filesystem::path(folder) / "tokenizer.json")) return nullptr;
  return std::make_shared<text::Tokenizer>(text::Tokenizer::from_folder(folder));
}

// Sampling and stopping settings; unset ones keep the model's defaults.
struct GenerateArgs {
  std::optional<int64_t> max_new_tokens;
  app::SamplingFlags sampling;
  std::optional<std::vector<int64_t>> stop_tokens;
  bool ignore_eos = false;
};

py::dict generate(PyGenerator& g, const std::vector<int64_t>& prompt, const GenerateArgs& a,
                  const std::optional<py::function>& streamer) {
  INGOT_CHECK(!prompt.empty(), ValueError, "[ingot.Generator] the prompt has no tokens");
  const models::GenerationConfig& defaults = g.generator->generation_config();
  const int64_t n = int64_t(prompt.size());
  const int64_t new_tokens =
      a.max_new_tokens.value_or(defaults.new_token_limit(n).value_or(64));
  runtime::GenerateOptions o = g.generator->default_options(n, new_tokens);
  o.max_new_tokens = new_tokens;
  a.sampling.apply(o);
  // No eos id in generation_config.json: the usual end tokens, as `ingot generate`.
  if (!defaults.eos_token_ids && g.tokenizer)
    o.stop_tokens = models::conventional_stop_tokens(*g.tokenizer);
  if (a.stop_tokens) o.stop_tokens = *a.stop_tokens;
  if (a.ignore_eos) o.stop_tokens.clear();

  std::vector<int64_t> generated;
  std::optional<text::DecodeStream> stream;
  if (g.tokenizer) stream.emplace(*g.tokenizer, /*skip_special_tokens=*/true, prompt);
  o.on_token = [&](int64_t token) {
    generated.push_back(token);
    if (!streamer) return;
    std::string text = stream ? stream->step(token) : std::string();
    py::gil_scoped_acquire gil;
    (*streamer)(token, py::bytes(text).attr("decode")("utf-8", "replace"));
  };
  runtime::GenerationStats stats;
  {
    py::gil_scoped_release release;
    g.generator->generate(prompt, o, &stats);
  }
  py::dict out;
  out["prompt_ids"] = prompt;
  out["generated_ids"] = generated;
  if (g.tokenizer) {
    out["text"] = py::bytes(g.tokenizer->decode(generated, true)).attr("decode")("utf-8", "replace");
  } else {
    out["text"] = py::none();
  }
  out["stop_reason"] = stats.stop_reason;
  out["prompt_tokens"] = stats.prompt_tokens;
  out["new_tokens"] = stats.new_tokens;
  out["time_to_first_token_s"] = stats.prefill_seconds;
  out["prefill_tokens_per_s"] = stats.prefill_tokens_per_second();
  out["decode_tokens_per_s"] = stats.decode_tokens_per_second();
  return out;
}

}  // namespace

// app::generate from Python: the request `ingot generate` builds from its flags, given as
// keyword arguments (the CLI and Python share the request preparation: chat templates,
// images, audio, .npy inputs). Returns the --json object as a dict.
py::object generate_request(const std::string& source, app::GenerationRequest r,
                            const std::optional<py::function>& streamer) {
  r.runtime = runtime::RuntimeOptions::from_environment();
  app::GenerationCallbacks callbacks;
  if (streamer) {
    callbacks.on_text = [&](const std::string& text) {
      if (text.empty()) return;
      py::gil_scoped_acquire gil;
      (*streamer)(py::bytes(text).attr("decode")("utf-8", "replace"));
    };
  }
  app::GenerationResult result;
  {
    py::gil_scoped_release release;
    result = app::generate(source, r, callbacks);
  }
  const std::string json =
      result.to_json().dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return py::module_::import("json").attr("loads")(json);
}

void bind_generation(py::module_& m) {
  m.def(
      "_generate",
      [](const std::string& source, const std::string& prompt, const std::string& chat,
         const std::string& system, const std::string& messages_json,
         const std::vector<std::string>& images, const std::string& audio,
         const std::vector<std::pair<std::string, std::string>>& inputs,
         std::optional<int64_t> max_new_tokens, std::optional<int64_t> max_cache_len,
         std::optional<double> temperature, std::optional<int64_t> top_k,
         std::optional<double> top_p, std::optional<double> min_p,
         std::optional<double> repetition_penalty, std::optional<uint64_t> seed, bool greedy,
         bool ignore_eos, const std::string& dtype, std::optional<py::function> streamer) {
        app::GenerationRequest r;
        r.prompt = prompt;
        r.chat = chat;
        r.system = system;
        r.messages_json = messages_json;
        r.messages_source = "messages";
        r.images = images;
        r.audio = audio;
        r.inputs = inputs;
        r.max_new_tokens = max_new_tokens;
        r.max_cache_len = max_cache_len;
        r.sampling = {temperature, top_p, min_p, repetition_penalty, top_k, seed,
                      greedy ? std::optional<bool>(false) : std::nullopt};
        r.ignore_eos = ignore_eos;
        r.dtype = dtype;
        return generate_request(source, std::move(r), streamer);
      },
      py::arg("source"), py::arg("prompt"), py::arg("chat"), py::arg("system"),
      py::arg("messages_json"), py::arg("images"), py::arg("audio"), py::arg("inputs"),
      py::arg("max_new_tokens"), py::arg("max_cache_len"), py::arg("temperature"), py::arg("top_k"),
      py::arg("top_p"), py::arg("min_p"), py::arg("repetition_penalty"), py::arg("seed"),
      py::arg("greedy"), py::arg("ignore_eos"), py::arg("dtype"), py::arg("streamer"));

  py::class_<PyGenerator>(m, "_Generator")
      .def_static(
          "load",
          [](const std::string& dir, std::optional<int64_t> max_cache_len) {
            py::gil_scoped_release release;
            PyGenerator g;
            g.generator = std::make_unique<runtime::Generator>(runtime::Generator::load(
                dir, max_cache_len, runtime::RuntimeOptions::from_environment()));
            g.tokenizer = tokenizer_of(dir);
            return g;
          },
          py::arg("dir"), py::arg("max_cache_len") = py::none())
      .def_static(
          "from_components",
          [](const Components& c, std::optional<int64_t> max_cache_len) {
            py::gil_scoped_release release;
            PyGenerator g;
            g.generator = std::make_unique<runtime::Generator>(
                c.parts.package(), max_cache_len, runtime::RuntimeOptions::from_environment());
            g.generator->set_generation_config(models::GenerationConfig::from_folder(c.model_folder));
            g.tokenizer = tokenizer_of(c.model_folder);
            return g;
          },
          py::arg("components"), py::arg("max_cache_len") = py::none())
      .def_property_readonly("max_cache_len",
                             [](const PyGenerator& g) { return g.generator->max_cache_len(); })
      .def_property_readonly("decode_planned_runs",
                             [](const PyGenerator& g) { return g.generator->decode_planned_runs(); })
      .def_property_readonly("tokenizer", [](const PyGenerator& g) { return g.tokenizer; })
      .def(
          "generate",
          [](PyGenerator& g, const std::vector<int64_t>& prompt, std::optional<int64_t> max_new_tokens,
             std::optional<bool> do_sample, std::optional<double> temperature,
             std::optional<int64_t> top_k, std::optional<double> top_p, std::optional<double> min_p,
             std::optional<double> repetition_penalty, std::optional<uint64_t> seed,
             std::optional<std::vector<int64_t>> stop_tokens, bool ignore_eos,
             std::optional<py::function> streamer) {
            GenerateArgs a{max_new_tokens,
                           {temperature, top_p, min_p, repetition_penalty, top_k, seed, do_sample},
                           std::move(stop_tokens), ignore_eos};
            return generate(g, prompt, a, streamer);
          },
          py::arg("prompt_ids"), py::arg("max_new_tokens") = py::none(),
          py::arg("do_sample") = py::none(), py::arg("temperature") = py::none(),
          py::arg("top_k") = py::none(), py::arg("top_p") = py::none(),
          py::arg("min_p") = py::none(), py::arg("repetition_penalty") = py::none(),
          py::arg("seed") = py::none(), py::arg("stop_tokens") = py::none(),
          py::arg("ignore_eos") = false, py::arg("streamer") = py::none());
}

}  // namespace ingot::python
