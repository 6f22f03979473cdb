// Calibration (exporters/calibration.h): reading a calibration set (text, JSONL of texts,
// JSONL of chat messages), the statistics of each linear's input (checked against the
// eager forward), and the calibrated quantisers end to end on the trained demo LM
// (held-out perplexity against round to nearest).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

#include "../models/fixture_path.h"
#include "ingot/core/error.h"
#include "ingot/exporters/calibration.h"
#include "ingot/exporters/exporter.h"
#include "ingot/exporters/tool_versions.h"
#include "ingot/formats/npy.h"
#include "ingot/ops/functional.h"
#include "ingot/text/tokenizer.h"

namespace ingot::exporters {
namespace {

namespace fs = std::filesystem;

std::string demo_lm() {
  const char* root = std::getenv("INGOT_SOURCE_DIR");
  return (root ? std::string(root) : std::string(INGOT_FIXTURES_DIR) + "/../..") + "/assets/demo-lm";
}

// A folder with the demo LM's tokenizer and a chat template, and files written into it.
class Scratch {
 public:
  Scratch() : dir_(fs::temp_directory_path() / ("ingot_calibration_" + std::to_string(::getpid()))) {
    fs::create_directories(dir_);
    fs::copy_file(demo_lm() + "/tokenizer.json", dir_ / "tokenizer.json",
                  fs::copy_options::overwrite_existing);
    fs::copy_file(demo_lm() + "/tokenizer_config.json", dir_ / "tokenizer_config.json",
                  fs::copy_options::overwrite_existing);
    write("chat_template.jinja",
          "{% for m in messages %}<{{ m['role'] }}>{{ m['content'] }}\n{% endfor %}");
  }
  ~Scratch() { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  }
  std::string folder() const { return dir_.string(); }

 private:
  fs::path dir_;
};

const char* kText =
    "It is a truth universally acknowledged, that a single man in possession of a good "
    "fortune, must be in want of a wife. However little known the feelings or views of such a "
    "man may be on his first entering a neighbourhood, this truth is so well fixed in the minds "
    "of the surrounding families, that he is considered the rightful property of some one or "
    "other of their daughters.";

TEST(CalibrationSet, PlainTextIsCutIntoSamplesOfSeqLen) {
  Scratch s;
  const std::string path = s.write("book.txt", kText);
  const std::vector<int64_t> ids =
      text::Tokenizer::from_folder(s.folder()).encode(kText, /*add_special_tokens=*/false);
  ASSERT_GT(ids.size(), 40u);
  const CalibrationSet set = read_calibration_set(path, s.folder(), 1000, 16);
  ASSERT_EQ(set.samples.size(), (ids.size() + 15) / 16 - (ids.size() % 16 == 1));
  EXPECT_EQ(set.samples[0], std::vector<int64_t>(ids.begin(), ids.begin() + 16));
  EXPECT_EQ(set.samples[1], std::vector<int64_t>(ids.begin() + 16, ids.begin() + 32));
  EXPECT_EQ(read_calibration_set(path, s.folder(), 2, 16).samples.size(), 2u);  // num_samples
}

TEST(CalibrationSet, JsonlOfTextsAndOfChatMessages) {
  Scratch s;
  const text::Tokenizer tok = text::Tokenizer::from_folder(s.folder());
  const std::string texts =
      s.write("t.jsonl", "{\"text\": \"Emma Woodhouse, handsome, clever, and rich\"}\n\n"
                         "{\"text\": \"with a comfortable home and happy disposition\"}\n");
  const CalibrationSet a = read_calibration_set(texts, s.folder(), 10, 5);
  ASSERT_EQ(a.samples.size(), 2u);
  std::vector<int64_t> first = tok.encode("Emma Woodhouse, handsome, clever, and rich", true);
  first.resize(5);  // truncated to seq_len
  EXPECT_EQ(a.samples[0], first);
  const std::string chats = s.write(
      "c.jsonl",
      "{\"messages\": [{\"role\": \"user\", \"content\": \"Who is Mr. Knightley?\"}, "
      "{\"role\": \"assistant\", \"content\": \"A neighbour.\"}]}\n");
  const CalibrationSet b = read_calibration_set(chats, s.folder(), 10, 256);
  ASSERT_EQ(b.samples.size(), 1u);
  EXPECT_EQ(b.samples[0], tok.encode("<user>Who is Mr. Knightley?\n<assistant>A neighbour.\n", false));
}

TEST(CalibrationSet, BadInputIsAClearErrorNamingTheFile) {
  Scratch s;
  auto error_of = [&](const std::string& path, const std::string& folder) -> std::string {
    try {
      read_calibration_set(path, folder, 8, 16);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(error_of(s.folder() + "/missing.txt", s.folder()).find("missing.txt"), std::string::npos);
  EXPECT_NE(error_of(s.write("empty.txt", " \n"), s.folder()).find("is empty"), std::string::npos);
  const std::string bad = error_of(s.write("bad.jsonl", "{\"text\": \"ok\"}\n{\"prompt\": 1}\n"), s.folder());
  EXPECT_NE(bad.find("bad.jsonl:2"), std::string::npos) << bad;
  EXPECT_NE(error_of(s.write("one.txt", "a"), s.folder()).find("no sample"), std::string::npos);
  EXPECT_NE(error_of(s.write("x.txt", kText), "").find("tokenizer"), std::string::npos);
  // Too few samples: a warning, not an error.
  std::vector<std::string> warnings;
  WarningSink previous = set_warning_sink([&](const std::string& m) { warnings.push_back(m); });
  const CalibrationSet few = read_calibration_set(s.write("few.txt", kText), s.folder(), 128, 256);
  set_warning_sink(previous);
  EXPECT_EQ(few.samples.size(), 1u);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("1 samples of the 128"), std::string::npos) << warnings[0];
}

TEST(Calibrate, StatisticsAreThoseOfTheEagerForward) {
  Scratch s;
  auto model = models::from_pretrained(demo_lm());
  const CalibrationSet set = read_calibration_set(s.write("book.txt", kText), s.folder(), 3, 24);
  ASSERT_EQ(set.samples.size(), 3u);
  const auto stats = calibrate(*model, set, CalibrationNeed::Hessian);
  int64_t tokens = 0;
  for (const auto& sample : set.samples) tokens += int64_t(sample.size());
  EXPECT_EQ(stats->samples, 3);
  EXPECT_EQ(stats->tokens, tokens);
  // q, k and v read one activation: one set of statistics.
  const ActivationStats* q = stats->of("model.layers.1.self_attn.q_proj.weight");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q, stats->of("model.layers.1.self_attn.v_proj.weight"));
  EXPECT_NE(q, stats->of("model.layers.1.self_attn.o_proj.weight"));
  EXPECT_EQ(stats->of("model.layers.1.mlp.down_proj.weight")->k, 688);
  // The (tied) lm_head's input is the final-normed hidden state: its mean squares from
  // the eager forward.
  const ActivationStats* head = stats->of("model.embed_tokens.weight");
  ASSERT_NE(head, nullptr);
  EXPECT_EQ(head->tokens, tokens);
  std::vector<double> want(size_t(head->k), 0.0);
  for (const auto& sample : set.samples) {
    models::ModelInputs in;
    in.input_ids = Tensor::from_vector<int64_t>(sample, {1, int64_t(sample.size())});
    in.output_hidden_states = true;
    const Tensor h = contiguous(to(model->forward(in).hidden_states.back(), DType::F32));
    for (int64_t i = 0; i < h.numel(); ++i) want[size_t(i % head->k)] += double(h.data<float>()[i]) * h.data<float>()[i];
  }
  for (int64_t c = 0; c < head->k; ++c) {
    const double w = want[size_t(c)] / double(tokens);
    EXPECT_NEAR(head->mean_square[size_t(c)], w, 1e-4 * w + 1e-7) << c;
    // The Hessian's diagonal holds the same mean squares.
    EXPECT_NEAR(head->hessian[size_t(c * head->k + c)], head->mean_square[size_t(c)], 1e-4 * w + 1e-7);
  }
  // Without a Hessian need: mean squares only.
  EXPECT_TRUE(
      calibrate(*model, set, CalibrationNeed::Importance)->of("model.embed_tokens.weight")->hessian.empty());
}

// sum_r (W - Q)_r H (W - Q)_r^T: the layer's mean squared output error over the inputs
// behind H, for W [n, k] on the grid `q`.
double output_error(const Tensor& w, const QuantizedWeight& q, const ActivationStats& s, int64_t group) {
  const int64_t n = w.size(0), k = w.size(1);
  std::vector<double> d(static_cast<size_t>(k));
  double total = 0;
  for (int64_t r = 0; r < n; ++r) {
    for (int64_t c = 0; c < k; ++c) {
      const int64_t g = r * (k / group) + c / group;
      const int zero = q.zeros.empty() ? 8 : q.zeros[size_t(g)];
      d[size_t(c)] = w.data<float>()[r * k + c] - q.scales[size_t(g)] * (q.values[size_t(r * k + c)] - zero);
    }
    for (int64_t i = 0; i < k; ++i) {
      double hd = 0;
      for (int64_t j = 0; j < k; ++j) hd += s.hessian[size_t(i * k + j)] * d[size_t(j)];
      total += d[size_t(i)] * hd;
    }
  }
  return total;
}

// The trained demo LM's linears in int4 group 32, calibrated on the start of its held-out
// text: the output error each method leaves on the calibration inputs, summed over the
// layers. Importance-weighted scales and GPTQ lower it well below round to nearest.
TEST(Calibrate, CalibratedInt4LowersTheLayerOutputErrorOnTheDemoLm) {
  Scratch s;
  auto model = models::from_pretrained(demo_lm());
  const Tensor t = contiguous(to(formats::load_npy(testing::fixture_path("demo_lm/heldout_tokens.npy")), DType::I64));
  const std::vector<int64_t> ids(t.data<int64_t>(), t.data<int64_t>() + 32 * 64);
  const std::string text = text::Tokenizer::from_folder(demo_lm()).decode(ids);
  const CalibrationSet set = read_calibration_set(s.write("calibration.txt", text), s.folder(), 32, 64);
  const auto stats = calibrate(*model, set, CalibrationNeed::Hessian);
  QuantizerConfig c;
  c.scheme = "int4";
  std::map<std::string, double> error;
  for (const auto& [name, tensor] : model->state_dict()) {
    const ActivationStats* st = stats->of(name);
    if (!st || tensor.dim() != 2 || tensor.size(1) % 32 != 0) continue;
    const Tensor w = contiguous(to(tensor, DType::F32));
    WeightToQuantize job;
    job.name = name;
    job.data = w.data<float>();
    job.n = w.size(0);
    job.k = w.size(1);
    job.bits = 4;
    job.group = 32;
    for (const char* method : {"rtn", "scale-search", "gptq"}) {
      c.method = method;
      job.stats = st;
      error[method] += output_error(w, make_quantizer(c, "native")->quantize(job), *st, 32);
    }
    c.method = "scale-search";
    job.stats = nullptr;
    error["scale-search, no statistics"] += output_error(w, make_quantizer(c, "native")->quantize(job), *st, 32);
  }
  for (const auto& [method, e] : error) std::printf("  %-28s %.4g\n", method.c_str(), e);
  EXPECT_LT(error["scale-search"], 0.9 * error["rtn"]);
  EXPECT_LT(error["scale-search"], error["scale-search, no statistics"]);
  EXPECT_LT(error["gptq"], 0.8 * error["scale-search"]);
}

}  // namespace
}  // namespace ingot::exporters
