// Model folders for the GGUF export tests: the tiny fixture models given the tokenizer a
// GGUF must carry.
#pragma once

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "../models/fixture_path.h"

namespace ingot::cli::cli_testing {

// A copy of fixture model folder `name` with a small byte-level tokenizer of exactly its 96
// ids (<|endoftext|>, the printable ASCII characters '!'..'}', "ĠĠ" and "Ġ" for spaces,
// one merge "Ġ Ġ"): the fixtures have no tokenizer, and a GGUF must carry one.
inline std::string with_tokenizer(const std::string& name, const std::filesystem::path& into) {
  namespace fs = std::filesystem;
  using nlohmann::json;
  const fs::path src = ingot::testing::fixture_path("models/" + name), dst = into / name;
  fs::create_directories(dst);
  for (const auto& e : fs::directory_iterator(src)) {
    const std::string f = e.path().filename().string();
    if (f == "config.json" || f.ends_with(".safetensors") || f.ends_with(".index.json"))
      fs::create_symlink(e.path(), dst / f);
  }
  json vocab = json::object();
  vocab["<|endoftext|>"] = 0;
  for (int c = '!'; c <= '}'; ++c) vocab[std::string(1, char(c))] = c - '!' + 1;
  vocab["\xc4\xa0\xc4\xa0"] = 94;
  vocab["\xc4\xa0"] = 95;
  const json byte_level = {{"type", "ByteLevel"},
                           {"add_prefix_space", false},
                           {"trim_offsets", true},
                           {"use_regex", true}};
  const json tok = {{"version", "1.0"},
                    {"added_tokens",
                     {{{"id", 0},
                       {"content", "<|endoftext|>"},
                       {"single_word", false},
                       {"lstrip", false},
                       {"rstrip", false},
                       {"normalized", false},
                       {"special", true}}}},
                    {"normalizer", nullptr},
                    {"pre_tokenizer", byte_level},
                    {"post_processor", byte_level},
                    {"decoder", byte_level},
                    {"model",
                     {{"type", "BPE"},
                      {"dropout", nullptr},
                      {"unk_token", nullptr},
                      {"continuing_subword_prefix", ""},
                      {"end_of_word_suffix", ""},
                      {"fuse_unk", false},
                      {"byte_fallback", false},
                      {"ignore_merges", false},
                      {"vocab", vocab},
                      {"merges", {"\xc4\xa0 \xc4\xa0"}}}}};
  std::ofstream(dst / "tokenizer.json") << tok.dump();
  std::ofstream(dst / "tokenizer_config.json")
      << json{{"eos_token", "<|endoftext|>"}, {"bos_token", "<|endoftext|>"}}.dump();
  return dst.string();
}

}  // namespace ingot::cli::cli_testing
