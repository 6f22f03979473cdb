// The in-place decode judge: seed 003's C++ ExecuTorch decode loop, against the C++
// runtime the `executorch` wheel ships (include/ + lib/libexecutorch.so and its kernel
// library). The Python runtime cannot bind outputs (no set_output_data_ptr), so this is
// the only way to show that a program exported with alloc_graph_input=false,
// alloc_graph_output=false and alloc_mutable_buffers=false has its cache written in place.
//
//   decode_inplace MODEL.pte IO.json STEPS LOGITS_OUT.f32 [BENCH_STEPS]
//
// IO.json: {"inputs": [names], "outputs": [names], "prompt_ids": [ids], "initial": {cache name:
// raw-bytes file}, optional "sliding_window": W}; inputs are [input_ids, attention_mask, position_ids, cache...] and the
// outputs hold "logits" and "output.<cache name>" for each cache input. Each step the
// caller's cache buffers are set as inputs (shared, not copied: the inputs are unplanned)
// and every mutated-cache output is bound onto its input's buffer with
// set_output_data_ptr; after execute, each output must point at that buffer. The mask is
// the causal one over the cache slots, position_ids the absolute positions. Prints one
// JSON line {"tokens", "cache_position" (read from the caller's buffer), "in_place",
// "tokens_per_s"}; LOGITS_OUT gets the last position's logits of each step (float32,
// [STEPS, vocab]). BENCH_STEPS: then K more single-token steps timed on their own
// ("decode_tokens_per_s"; program load and the prompt excluded).
//
// Built by the tests with the wheel's headers (C++17, C10_USING_CUSTOM_GENERATED_MACROS)
// and linked against libexecutorch + libexecutorch_kernels_optimized (+ the XNNPACK backend
// library, which registers itself when loaded).
#include <executorch/extension/data_loader/file_data_loader.h>
#include <executorch/extension/tensor/tensor_ptr.h>
#include <executorch/runtime/executor/method.h>
#include <executorch/runtime/executor/program.h>
#include <executorch/runtime/platform/runtime.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

using executorch::aten::ScalarType;
using executorch::extension::FileDataLoader;
using executorch::extension::make_tensor_ptr;
using executorch::extension::TensorPtr;
using namespace executorch::runtime;

namespace {

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "decode_inplace: %s\n", what.c_str());
  std::exit(2);
}

void check(Error e, const std::string& what) {
  if (e != Error::Ok) fail(what + " failed (error " + std::to_string(int(e)) + ")");
}

// A minimal reader for the flat JSON IO.json (strings, int lists, one string map).
struct Io {
  std::vector<std::string> inputs, outputs;
  std::vector<int64_t> prompt;
  std::map<std::string, std::string> initial;
  int64_t sliding_window = 0;  // 0: none
};

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) fail("cannot read " + path);
  return {std::istreambuf_iterator<char>(f), {}};
}

size_t skip_ws(const std::string& s, size_t i) {
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  return i;
}

std::string parse_string(const std::string& s, size_t& i) {
  i = skip_ws(s, i);
  if (s[i] != '"') fail("IO.json: expected a string at " + std::to_string(i));
  size_t end = s.find('"', i + 1);
  std::string out = s.substr(i + 1, end - i - 1);
  i = end + 1;
  return out;
}

size_t after(const std::string& s, const std::string& key) {
  size_t k = s.find("\"" + key + "\"");
  if (k == std::string::npos) fail("IO.json has no \"" + key + "\"");
  k = s.find(':', k);
  return skip_ws(s, k + 1);
}

Io parse_io(const std::string& s) {
  Io io;
  for (auto [key, list] : {std::pair{"inputs", &io.inputs}, std::pair{"outputs", &io.outputs}}) {
    size_t i = after(s, key) + 1;  // past '['
    while (skip_ws(s, i) < s.size() && s[skip_ws(s, i)] != ']') {
      list->push_back(parse_string(s, i));
      i = skip_ws(s, i);
      if (s[i] == ',') ++i;
    }
  }
  size_t i = after(s, "prompt_ids") + 1;
  while (s[skip_ws(s, i)] != ']') {
    i = skip_ws(s, i);
    size_t used = 0;
    io.prompt.push_back(std::stoll(s.substr(i), &used));
    i = skip_ws(s, i + used);
    if (s[i] == ',') ++i;
  }
  if (s.find("\"sliding_window\"") != std::string::npos)
    io.sliding_window = std::stoll(s.substr(after(s, "sliding_window")));
  i = after(s, "initial") + 1;  // past '{'
  while (s[skip_ws(s, i)] != '}') {
    std::string k = parse_string(s, i);
    i = skip_ws(s, i) + 1;  // ':'
    io.initial[k] = parse_string(s, i);
    i = skip_ws(s, i);
    if (s[i] == ',') ++i;
  }
  return io;
}

size_t index_of(const std::vector<std::string>& v, const std::string& name) {
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i] == name) return i;
  fail("no \"" + name + "\" among the program's names");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5 && argc != 6)
    fail("usage: decode_inplace MODEL.pte IO.json STEPS LOGITS_OUT.f32 [BENCH_STEPS]");
  const int bench_steps = argc == 6 ? std::atoi(argv[5]) : 0;
  executorch::runtime::runtime_init();
  const std::string io_path = argv[2];
  const std::string base = io_path.substr(0, io_path.find_last_of('/') + 1);
  const Io io = parse_io(read_file(io_path));
  const int steps = std::atoi(argv[3]);
  if (io.inputs.size() < 4 || io.inputs[0] != "input_ids" || io.inputs[1] != "attention_mask" ||
      io.inputs[2] != "position_ids")
    fail("the inputs are not [input_ids, attention_mask, position_ids, cache...]");

  auto loader = FileDataLoader::from(argv[1]);
  if (!loader.ok()) fail(std::string("cannot open ") + argv[1]);
  auto program = Program::load(&loader.get());
  if (!program.ok()) fail("Program::load rejected the .pte");
  auto meta = program->method_meta("forward");
  if (!meta.ok()) fail("no method forward");

  // Method memory: a bookkeeping arena plus one buffer per planned memory id.
  std::vector<uint8_t> arena(64 << 20);
  MemoryAllocator method_allocator(arena.size(), arena.data());
  std::vector<std::vector<uint8_t>> planned(meta->num_memory_planned_buffers());
  std::vector<Span<uint8_t>> spans;
  for (size_t i = 0; i < planned.size(); ++i) {
    planned[i].resize(meta->memory_planned_buffer_size(i).get());
    spans.push_back({planned[i].data(), planned[i].size()});
  }
  HierarchicalAllocator planned_allocator({spans.data(), spans.size()});
  MemoryManager memory_manager(&method_allocator, &planned_allocator);
  auto method = program->load_method("forward", &memory_manager);
  if (!method.ok()) fail("load_method(forward) failed (error " +
                         std::to_string(int(method.error())) + ")");

  // The caller's cache: one buffer per cache input, initialised from the files.
  const size_t n_cache = io.inputs.size() - 3;
  std::vector<std::vector<uint8_t>> cache(n_cache);
  std::vector<TensorPtr> cache_t;
  std::vector<size_t> cache_out(n_cache);
  int64_t* cache_position = nullptr;
  for (size_t c = 0; c < n_cache; ++c) {
    const std::string& name = io.inputs[3 + c];
    auto info = meta->input_tensor_meta(3 + c);
    cache[c].resize(info->nbytes());
    const std::string bytes = read_file(base + io.initial.at(name));
    if (bytes.size() != cache[c].size()) fail("initial value of " + name + " has the wrong size");
    std::memcpy(cache[c].data(), bytes.data(), bytes.size());
    std::vector<executorch::aten::SizesType> sizes(info->sizes().begin(), info->sizes().end());
    cache_t.push_back(make_tensor_ptr(sizes, cache[c].data(), info->scalar_type()));
    cache_out[c] = index_of(io.outputs, "output." + name);
    if (name == "cache_position") cache_position = reinterpret_cast<int64_t*>(cache[c].data());
  }
  const size_t logits_out = index_of(io.outputs, "logits");
  auto logits_info = meta->output_tensor_meta(logits_out);
  const int64_t max_len = meta->input_tensor_meta(1)->sizes()[3];  // the mask's cache slots
  const int64_t vocab = logits_info->sizes()[logits_info->sizes().size() - 1];
  std::vector<float> logits(logits_info->nbytes() / sizeof(float));

  bool in_place = true;
  std::vector<float> last_logits;
  int64_t position = 0;  // the absolute position of the next token
  auto forward = [&](std::vector<int64_t> ids) {
    const auto q = int32_t(ids.size());
    std::vector<int64_t> pos(ids.size());
    std::vector<uint8_t> mask(size_t(q * max_len));  // [1, 1, q, max_len] bool
    for (int32_t i = 0; i < q; ++i) {
      pos[size_t(i)] = position + i;
      for (int64_t j = 0; j < max_len; ++j)
        mask[size_t(i * max_len + j)] =
            j <= position + i && (io.sliding_window == 0 || position + i - j < io.sliding_window);
    }
    auto ids_t = make_tensor_ptr({1, q}, ids.data(), ScalarType::Long);
    auto mask_t = make_tensor_ptr({1, 1, q, int32_t(max_len)}, mask.data(), ScalarType::Bool);
    auto pos_t = make_tensor_ptr({1, q}, pos.data(), ScalarType::Long);
    check(method->set_input(EValue(*ids_t), 0), "set_input(input_ids)");
    check(method->set_input(EValue(*mask_t), 1), "set_input(attention_mask)");
    check(method->set_input(EValue(*pos_t), 2), "set_input(position_ids)");
    for (size_t c = 0; c < n_cache; ++c) {
      check(method->set_input(EValue(*cache_t[c]), 3 + c), "set_input(" + io.inputs[3 + c] + ")");
      // The mutated cache lands in the caller's buffer: no copy.
      check(method->set_output_data_ptr(cache[c].data(), cache[c].size(), cache_out[c]),
            "set_output_data_ptr(output." + io.inputs[3 + c] + ")");
    }
    check(method->set_output_data_ptr(logits.data(), logits.size() * sizeof(float), logits_out),
          "set_output_data_ptr(logits)");
    check(method->execute(), "execute");
    for (size_t c = 0; c < n_cache; ++c)
      in_place = in_place && method->get_output(cache_out[c]).toTensor().const_data_ptr() ==
                                 static_cast<const void*>(cache[c].data());
    position += q;
    const float* last = logits.data() + (q - 1) * vocab;
    last_logits.insert(last_logits.end(), last, last + vocab);
    int64_t best = 0;
    for (int64_t v = 1; v < vocab; ++v)
      if (last[v] > last[best]) best = v;
    return best;
  };

  std::vector<int64_t> tokens;
  const auto t0 = std::chrono::steady_clock::now();
  tokens.push_back(forward(io.prompt));
  for (int s = 1; s < steps; ++s) tokens.push_back(forward({tokens.back()}));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  double decode_tokens_per_s = 0;
  if (bench_steps > 0) {
    std::vector<float> keep = last_logits;
    const auto b0 = std::chrono::steady_clock::now();
    for (int s = 0; s < bench_steps; ++s) tokens.push_back(forward({tokens.back()}));
    decode_tokens_per_s =
        bench_steps /
        std::chrono::duration<double>(std::chrono::steady_clock::now() - b0).count();
    tokens.resize(size_t(steps));
    last_logits = std::move(keep);
  }
  std::ofstream(argv[4], std::ios::binary)
      .write(reinterpret_cast<const char*>(last_logits.data()),
             std::streamsize(last_logits.size() * sizeof(float)));
  std::ostringstream out;
  out << "{\"tokens\": [";
  for (size_t i = 0; i < tokens.size(); ++i) out << (i ? ", " : "") << tokens[i];
  out << "], \"cache_position\": " << (cache_position ? *cache_position : -1)
      << ", \"in_place\": " << (in_place ? "true" : "false")
      << ", \"tokens_per_s\": " << double(steps) / seconds
      << ", \"decode_tokens_per_s\": " << decode_tokens_per_s << "}";
  std::printf("%s\n", out.str().c_str());
  return 0;
}
