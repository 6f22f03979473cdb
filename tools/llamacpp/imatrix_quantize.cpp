// llama.cpp's importance matrix, made by llama.cpp itself, and llama.cpp's quantiser using it:
// what `llama-imatrix` + `llama-quantize --imatrix` do, for the side-by-side benchmark
// (tools/bench/side_by_side.py), whose llama.cpp comes from llama-cpp-python, which ships
// neither tool. Built by tools/llamacpp/build-imatrix-quantize against that wheel's
// libllama / libggml.
//
//   imatrix_quantize imatrix  MODEL.gguf TEXT.txt OUT.imatrix.gguf [--chunks N] [--ctx L]
//                             [--threads T] [--batch B]
//   imatrix_quantize quantize MODEL.gguf IMATRIX.gguf OUT.gguf TYPE [--threads T]
//
// `imatrix` runs the model over TEXT and collects, for every weight matrix of the blocks
// (`blk.*`; llama-imatrix leaves output.weight out by default), the sum over tokens of the
// squared activations entering each mul_mat and the number of tokens, through the context's
// scheduler callback (cb_eval). The text is cut as llama-imatrix cuts it: tokenised whole
// (with BOS when the vocabulary adds one), N chunks of L consecutive tokens (N at most
// tokens / L), each chunk from an empty cache with its first token replaced by BOS when the
// vocabulary adds one, outputs for every position (so the last layer sees every token),
// max(1, B / L) chunks per llama_decode (B = 2048, its default batch). Products with fewer
// than 16 rows or non-f32 inputs are skipped, as there. The file is llama-imatrix's GGUF
// format (`<tensor>.in_sum2`, `<tensor>.in_sum`, `<tensor>.counts`, imatrix.* keys), so
// `llama-quantize --imatrix` reads it too.
//
// `quantize` reads such a file, turns it into llama-quantize's importance values (in_sum2 /
// counts per matrix), and calls llama_model_quantize with them (params.imatrix) and the
// quantize.imatrix.* metadata llama-quantize writes. TYPE: F32, Q8_0, Q4_0, Q4_1, Q5_0,
// Q5_K_M, Q4_K_S, Q4_K_M, Q3_K_M, Q6_K, IQ4_XS, IQ4_NL.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "ggml-backend.h"
#include "ggml.h"
#include "gguf.h"
#include "llama.h"

namespace {

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "imatrix_quantize: %s\n", what.c_str());
  std::exit(1);
}

// Per weight matrix: the sums over tokens of x and x^2 for each input column (one row of
// ne0 values per matrix of a 3-D weight), and the tokens counted.
struct Stats {
  std::vector<float> sum;
  std::vector<float> sum2;
  int64_t n_mat = 1;
  int64_t count = 0;
};

struct Collector {
  std::map<std::string, Stats> stats;
  std::vector<char> staging;  // src1 copied off a non-host buffer
  std::string unsupported;    // the first op this tool cannot collect (mul_mat_id)
};

// The weight's own name: the scheduler may name copies "<backend>#<name>#<n>".
std::string weight_name(const char* name) {
  const char* p = std::strchr(name, '#');
  if (p == nullptr) return name;
  const char* q = std::strchr(p + 1, '#');
  return q ? std::string(p + 1, q) : std::string(p + 1);
}

bool collect(ggml_tensor* t, bool ask, void* user_data) {
  auto& c = *static_cast<Collector*>(user_data);
  const ggml_tensor* w = t->src[0];
  const ggml_tensor* x = t->src[1];  // [ne0 = w's columns, rows, ne2, ne3]
  if (ask) {
    if (t->op == GGML_OP_MUL_MAT_ID) {
      if (c.unsupported.empty()) c.unsupported = weight_name(w->name) + " (mul_mat_id)";
      return false;
    }
    if (t->op != GGML_OP_MUL_MAT) return false;
    if (x->ne[1] < 16 || x->type != GGML_TYPE_F32) return false;
    return weight_name(w->name).rfind("blk.", 0) == 0;
  }
  const char* data = static_cast<const char*>(x->data);
  if (!ggml_backend_buffer_is_host(x->buffer)) {
    c.staging.resize(ggml_nbytes(x));
    ggml_backend_tensor_get(x, c.staging.data(), 0, c.staging.size());
    data = c.staging.data();
  }
  if (x->nb[0] != sizeof(float)) fail("non-contiguous rows entering " + weight_name(w->name));
  const int64_t ne0 = x->ne[0];
  const int64_t n_mat = w->ne[2] * w->ne[3];
  Stats& s = c.stats[weight_name(w->name)];
  if (s.sum2.empty()) {
    s.sum.assign(ne0 * n_mat, 0.0f);
    s.sum2.assign(ne0 * n_mat, 0.0f);
    s.n_mat = n_mat;
  } else if (s.sum2.size() != size_t(ne0 * n_mat)) {
    fail("inconsistent input width for " + weight_name(w->name));
  }
  for (int64_t i3 = 0; i3 < x->ne[3]; ++i3) {
    for (int64_t i2 = 0; i2 < x->ne[2]; ++i2) {
      // A 2-D weight broadcast over x's higher dims folds them into its one matrix.
      const int64_t mat = (i3 % w->ne[3]) * w->ne[2] + (i2 % w->ne[2]);
      float* sum = s.sum.data() + mat * ne0;
      float* sum2 = s.sum2.data() + mat * ne0;
      for (int64_t row = 0; row < x->ne[1]; ++row) {
        const auto* v =
            reinterpret_cast<const float*>(data + row * x->nb[1] + i2 * x->nb[2] + i3 * x->nb[3]);
        for (int64_t j = 0; j < ne0; ++j) {
          sum[j] += v[j];
          sum2[j] += v[j] * v[j];
        }
      }
    }
  }
  s.count += ggml_nrows(x) / n_mat;
  return true;
}

void quiet_log(ggml_log_level level, const char* text, void*) {
  if (level >= GGML_LOG_LEVEL_ERROR) std::fputs(text, stderr);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot read " + path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

llama_model* load_model(const std::string& path) {
  llama_model_params mp = llama_model_default_params();
  mp.n_gpu_layers = 0;
  mp.progress_callback = [](float, void*) { return true; };  // no progress dots
  llama_model* model = llama_model_load_from_file(path.c_str(), mp);
  if (model == nullptr) fail("cannot load model " + path);
  return model;
}

// llama-imatrix's GGUF: per tensor <name>.in_sum2 [ne0, n_mat], <name>.in_sum [ne0, n_mat],
// <name>.counts [1, n_mat]; imatrix.datasets / chunk_count / chunk_size.
void write_imatrix(const Collector& c, const std::string& dataset, int n_chunks, int chunk,
                   const std::string& out) {
  size_t bytes = 0;
  for (const auto& [name, s] : c.stats)
    bytes += 3 * ggml_tensor_overhead() + 2 * s.sum2.size() * sizeof(float) + 64 * 3;
  ggml_init_params ip = {bytes + 1024, nullptr, false};
  ggml_context* ctx = ggml_init(ip);
  gguf_context* g = gguf_init_empty();
  gguf_set_val_str(g, "general.type", "imatrix");
  const char* datasets[] = {dataset.c_str()};
  gguf_set_arr_str(g, "imatrix.datasets", datasets, 1);
  gguf_set_val_u32(g, "imatrix.chunk_count", uint32_t(n_chunks));
  gguf_set_val_u32(g, "imatrix.chunk_size", uint32_t(chunk));
  for (const auto& [name, s] : c.stats) {  // std::map: sorted, as llama-imatrix writes
    const int64_t n_mat = s.n_mat;
    const int64_t ne0 = int64_t(s.sum2.size()) / n_mat;
    ggml_tensor* sum2 = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, ne0, n_mat);
    ggml_tensor* sum = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, ne0, n_mat);
    ggml_tensor* counts = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 1, n_mat);
    ggml_format_name(sum2, "%s.in_sum2", name.c_str());
    ggml_format_name(sum, "%s.in_sum", name.c_str());
    ggml_format_name(counts, "%s.counts", name.c_str());
    std::memcpy(sum2->data, s.sum2.data(), s.sum2.size() * sizeof(float));
    std::memcpy(sum->data, s.sum.data(), s.sum.size() * sizeof(float));
    for (int64_t m = 0; m < n_mat; ++m) static_cast<float*>(counts->data)[m] = float(s.count);
    gguf_add_tensor(g, sum2);
    gguf_add_tensor(g, counts);
    gguf_add_tensor(g, sum);
  }
  const std::string tmp = out + ".tmp";
  if (!gguf_write_to_file(g, tmp.c_str(), false)) fail("cannot write " + tmp);
  if (std::rename(tmp.c_str(), out.c_str()) != 0) fail("cannot rename " + tmp + " to " + out);
  gguf_free(g);
  ggml_free(ctx);
}

int run_imatrix(const std::string& model_path, const std::string& text_path, const std::string& out,
                int n_chunks_max, int chunk, int threads, int n_batch) {
  llama_model* model = load_model(model_path);
  const llama_vocab* vocab = llama_model_get_vocab(model);
  const bool add_bos = llama_vocab_get_add_bos(vocab);
  const std::string text = read_file(text_path);
  std::vector<llama_token> tokens(text.size() + 2);
  const int n_tok = llama_tokenize(vocab, text.data(), int32_t(text.size()), tokens.data(),
                                   int32_t(tokens.size()), true, false);
  if (n_tok < 0) fail("tokenising " + text_path + " failed");
  tokens.resize(n_tok);
  if (n_tok < 2 * chunk)
    fail(text_path + " has " + std::to_string(n_tok) + " tokens; llama-imatrix needs at least " +
         std::to_string(2 * chunk) + " for chunks of " + std::to_string(chunk));
  const int n_chunks = std::min(n_chunks_max, n_tok / chunk);
  if (n_chunks < n_chunks_max)
    std::fprintf(stderr, "imatrix_quantize: %s: %d tokens hold %d chunks of %d, not %d\n",
                 text_path.c_str(), n_tok, n_chunks, chunk, n_chunks_max);
  const int n_seq = std::max(1, n_batch / chunk);

  Collector collector;
  llama_context_params cp = llama_context_default_params();
  cp.n_ctx = uint32_t(n_seq * chunk);
  cp.n_batch = uint32_t(n_seq * chunk);
  cp.n_seq_max = uint32_t(n_seq);
  cp.n_threads = cp.n_threads_batch = threads;
  cp.cb_eval = collect;
  cp.cb_eval_user_data = &collector;
  llama_context* ctx = llama_init_from_model(model, cp);
  if (ctx == nullptr) fail("cannot make a context for " + model_path);

  llama_batch batch = llama_batch_init(n_seq * chunk, 0, 1);
  for (int first = 0; first < n_chunks; first += n_seq) {
    const int seqs = std::min(n_seq, n_chunks - first);
    llama_memory_clear(llama_get_memory(ctx), true);
    batch.n_tokens = 0;
    for (int s = 0; s < seqs; ++s) {
      const llama_token* chunk_tokens = tokens.data() + size_t(first + s) * chunk;
      for (int k = 0; k < chunk; ++k) {
        const int i = batch.n_tokens++;
        batch.token[i] = (k == 0 && add_bos) ? llama_vocab_bos(vocab) : chunk_tokens[k];
        batch.pos[i] = k;
        batch.n_seq_id[i] = 1;
        batch.seq_id[i][0] = s;
        batch.logits[i] = true;
      }
    }
    if (llama_decode(ctx, batch) != 0) fail("llama_decode failed");
    if (!collector.unsupported.empty())
      fail("this model has products this tool does not collect: " + collector.unsupported);
    if (isatty(2))
      std::fprintf(stderr, "\rimatrix_quantize: %d / %d chunks", first + seqs, n_chunks);
  }
  std::fprintf(stderr, "%simatrix_quantize: %d chunks of %d tokens\n", isatty(2) ? "\r" : "",
               n_chunks, chunk);
  llama_batch_free(batch);
  write_imatrix(collector, text_path, n_chunks, chunk, out);
  std::printf(
      "{\"imatrix\": \"%s\", \"entries\": %zu, \"chunks\": %d, \"chunk\": %d, "
      "\"tokens\": %d, \"add_bos\": %s}\n",
      out.c_str(), collector.stats.size(), n_chunks, chunk, n_tok, add_bos ? "true" : "false");
  llama_free(ctx);
  llama_model_free(model);
  return 0;
}

struct Imatrix {
  std::vector<std::string> names;
  std::vector<std::vector<float>> values;  // llama-quantize's importance: in_sum2 / count
  std::string dataset;
  int64_t chunks = 0;
};

Imatrix read_imatrix(const std::string& path) {
  ggml_context* ctx = nullptr;
  gguf_init_params ip = {false, &ctx};
  gguf_context* g = gguf_init_from_file(path.c_str(), ip);
  if (g == nullptr) fail("cannot read imatrix " + path);
  Imatrix im;
  if (int64_t k = gguf_find_key(g, "imatrix.datasets"); k >= 0 && gguf_get_arr_n(g, k) > 0)
    im.dataset = gguf_get_arr_str(g, k, 0);
  if (int64_t k = gguf_find_key(g, "imatrix.chunk_count"); k >= 0)
    im.chunks = gguf_get_val_u32(g, k);
  const std::string suffix = ".in_sum2";
  for (int64_t i = 0; i < gguf_get_n_tensors(g); ++i) {
    const std::string name = gguf_get_tensor_name(g, i);
    if (name.size() <= suffix.size() ||
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    const std::string weight = name.substr(0, name.size() - suffix.size());
    const ggml_tensor* sum2 = ggml_get_tensor(ctx, name.c_str());
    const ggml_tensor* counts = ggml_get_tensor(ctx, (weight + ".counts").c_str());
    if (counts == nullptr || sum2->type != GGML_TYPE_F32 || counts->type != GGML_TYPE_F32)
      fail(path + ": " + weight + " needs f32 .in_sum2 and .counts");
    const int64_t ne0 = sum2->ne[0], n_mat = sum2->ne[1];
    if (ggml_nelements(counts) != n_mat) fail(path + ": " + weight + ": counts per matrix");
    std::vector<float> v(ne0 * n_mat);
    for (int64_t m = 0; m < n_mat; ++m) {
      const float n = static_cast<const float*>(counts->data)[m];
      for (int64_t j = 0; j < ne0; ++j)
        v[m * ne0 + j] = n > 0 ? static_cast<const float*>(sum2->data)[m * ne0 + j] / n : 1.0f;
    }
    im.names.push_back(weight);
    im.values.push_back(std::move(v));
  }
  gguf_free(g);
  ggml_free(ctx);
  if (im.names.empty()) fail(path + " holds no importance matrix entries");
  return im;
}

llama_ftype ftype_of(const std::string& name) {
  static const std::map<std::string, llama_ftype> types = {
      {"F32", LLAMA_FTYPE_ALL_F32},          {"Q8_0", LLAMA_FTYPE_MOSTLY_Q8_0},
      {"Q4_0", LLAMA_FTYPE_MOSTLY_Q4_0},     {"Q4_1", LLAMA_FTYPE_MOSTLY_Q4_1},
      {"Q5_0", LLAMA_FTYPE_MOSTLY_Q5_0},     {"Q5_K_M", LLAMA_FTYPE_MOSTLY_Q5_K_M},
      {"Q4_K_S", LLAMA_FTYPE_MOSTLY_Q4_K_S}, {"Q4_K_M", LLAMA_FTYPE_MOSTLY_Q4_K_M},
      {"Q3_K_M", LLAMA_FTYPE_MOSTLY_Q3_K_M}, {"Q6_K", LLAMA_FTYPE_MOSTLY_Q6_K},
      {"IQ4_XS", LLAMA_FTYPE_MOSTLY_IQ4_XS}, {"IQ4_NL", LLAMA_FTYPE_MOSTLY_IQ4_NL},
  };
  auto it = types.find(name);
  if (it == types.end())
    fail("unknown type '" + name + "' (see the header of imatrix_quantize.cpp)");
  return it->second;
}

llama_model_kv_override kv_str(const char* key, const std::string& value) {
  llama_model_kv_override o{};
  o.tag = LLAMA_KV_OVERRIDE_TYPE_STR;
  std::snprintf(o.key, sizeof(o.key), "%s", key);
  std::snprintf(o.val_str, sizeof(o.val_str), "%s", value.c_str());
  return o;
}

llama_model_kv_override kv_int(const char* key, int64_t value) {
  llama_model_kv_override o{};
  o.tag = LLAMA_KV_OVERRIDE_TYPE_INT;
  std::snprintf(o.key, sizeof(o.key), "%s", key);
  o.val_i64 = value;
  return o;
}

int run_quantize(const std::string& model_path, const std::string& imatrix_path,
                 const std::string& out, const std::string& type, int threads) {
  const Imatrix im = read_imatrix(imatrix_path);
  std::vector<llama_model_imatrix_data> entries;
  for (size_t i = 0; i < im.names.size(); ++i)
    entries.push_back({im.names[i].c_str(), im.values[i].data(), im.values[i].size()});
  entries.push_back({nullptr, nullptr, 0});  // the list's end
  std::vector<llama_model_kv_override> kv = {
      kv_str("quantize.imatrix.file", imatrix_path),
      kv_str("quantize.imatrix.dataset", im.dataset),
      kv_int("quantize.imatrix.entries_count", int64_t(im.names.size())),
      kv_int("quantize.imatrix.chunks_count", im.chunks),
  };
  kv.push_back(llama_model_kv_override{});  // an empty key ends the list

  llama_model_quantize_params qp = llama_model_quantize_default_params();
  qp.ftype = ftype_of(type);
  qp.nthread = threads;
  qp.allow_requantize = true;
  qp.imatrix = entries.data();
  qp.kv_overrides = kv.data();
  const std::string tmp = out + ".tmp";
  if (llama_model_quantize(model_path.c_str(), tmp.c_str(), &qp) != 0)
    fail("llama_model_quantize " + model_path + " -> " + type + " failed");
  if (std::rename(tmp.c_str(), out.c_str()) != 0) fail("cannot rename " + tmp + " to " + out);
  std::printf("{\"gguf\": \"%s\", \"type\": \"%s\", \"imatrix_entries\": %zu}\n", out.c_str(),
              type.c_str(), im.names.size());
  return 0;
}

int int_option(std::vector<std::string>& args, const std::string& flag, int fallback) {
  auto it = std::find(args.begin(), args.end(), flag);
  if (it == args.end()) return fallback;
  if (it + 1 == args.end()) fail(flag + " needs a value");
  const int v = std::atoi((it + 1)->c_str());
  if (v <= 0) fail(flag + " must be a positive integer, not '" + *(it + 1) + "'");
  args.erase(it, it + 2);
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  const bool verbose = std::find(args.begin(), args.end(), "--verbose") != args.end();
  std::erase(args, "--verbose");
  const int threads = int_option(args, "--threads", 2);
  const int chunks = int_option(args, "--chunks", 128);
  const int chunk = int_option(args, "--ctx", 256);
  const int batch = int_option(args, "--batch", 2048);
  if (!verbose) llama_log_set(quiet_log, nullptr);
  llama_backend_init();
  int rc = 2;
  if (args.size() == 4 && args[0] == "imatrix") {
    rc = run_imatrix(args[1], args[2], args[3], chunks, chunk, threads, batch);
  } else if (args.size() == 5 && args[0] == "quantize") {
    rc = run_quantize(args[1], args[2], args[3], args[4], threads);
  } else {
    std::fprintf(stderr,
                 "usage: imatrix_quantize imatrix MODEL.gguf TEXT.txt OUT.imatrix.gguf "
                 "[--chunks N] [--ctx L] [--threads T] [--batch B] [--verbose]\n"
                 "       imatrix_quantize quantize MODEL.gguf IMATRIX.gguf OUT.gguf TYPE "
                 "[--threads T] [--verbose]\n");
  }
  llama_backend_free();
  return rc;
}
