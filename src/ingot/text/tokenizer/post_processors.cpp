// Post-processors: the special tokens around a single encoded sequence.
#include "ingot/core/error.h"
#include "ingot/text/tokenizer/components.h"
#include "ingot/text/tokenizer/json_node.h"

namespace ingot::text::tokenizer {
namespace {

// TemplateProcessing's "single" template: special-token pieces and the sequence "$A".
class TemplateProcessing final : public PostProcessor {
 public:
  explicit TemplateProcessing(const JsonNode& node) {
    // special_tokens: {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}, ...}
    std::unordered_map<std::string, std::vector<int64_t>> specials;
    if (auto st = node.find("special_tokens")) {
      if (!st->value().is_object()) st->fail("should be an object");
      for (const auto& [name, value] : st->value().items()) {
        JsonNode entry(value, fmt::format("{}[\"{}\"]", st->path(), name), node.origin());
        JsonNode ids = entry.at("ids");
        std::vector<int64_t>& out = specials[name];
        for (size_t i = 0; i < ids.array_size(); ++i) {
          if (!ids.at(i).value().is_number_integer()) ids.at(i).fail("should be an integer id");
          out.push_back(ids.at(i).value().get<int64_t>());
        }
      }
    }
    JsonNode single = node.at("single");
    for (size_t i = 0; i < single.array_size(); ++i) {
      JsonNode piece = single.at(i);
      std::string special;
      if (piece.value().is_string()) {  // "$A", "$A:0", "[CLS]", "[CLS]:1"
        std::string s = piece.get_string();
        s = s.substr(0, s.find(':'));
        // "$", "$A", "$a" or "$<type id>" is sequence A.
        if (s.starts_with("$") && (s == "$" || s == "$A" || s == "$a" ||
                                   s.find_first_not_of("0123456789", 1) == std::string::npos)) {
          items_.push_back({true, {}});
          continue;
        }
        if (s.starts_with("$")) piece.fail("names a second sequence, which encode() never has");
        special = s;
      } else if (piece.find("Sequence")) {
        std::string id = piece.at("Sequence").string("id");
        if (id != "A") piece.fail("names sequence B, which encode() never has");
        items_.push_back({true, {}});
        continue;
      } else if (auto sp = piece.find("SpecialToken")) {
        special = sp->string("id");
      } else {
        piece.fail("should be {\"SpecialToken\": ...} or {\"Sequence\": ...}");
      }
      auto it = specials.find(special);
      if (it == specials.end()) {
        piece.fail(fmt::format("uses special token '{}' missing from special_tokens", special));
      }
      items_.push_back({false, it->second});
    }
  }

  void process(std::vector<int64_t>& ids, bool add_special_tokens) const override {
    if (!add_special_tokens) return;
    std::vector<int64_t> out;
    out.reserve(ids.size() + 4);
    for (const Item& item : items_) {
      if (item.is_sequence) {
        out.insert(out.end(), ids.begin(), ids.end());
      } else {
        out.insert(out.end(), item.ids.begin(), item.ids.end());
      }
    }
    ids.swap(out);
  }

 private:
  struct Item {
    bool is_sequence;
    std::vector<int64_t> ids;
  };
  std::vector<Item> items_;
};

// BertProcessing / RobertaProcessing: [cls] ids [sep].
class ClsSepProcessing final : public PostProcessor {
 public:
  explicit ClsSepProcessing(const JsonNode& node)
      : cls_(read_pair(node.at("cls"))), sep_(read_pair(node.at("sep"))) {}
  void process(std::vector<int64_t>& ids, bool add_special_tokens) const override {
    if (!add_special_tokens) return;
    ids.insert(ids.begin(), cls_);
    ids.push_back(sep_);
  }

 private:
  static int64_t read_pair(const JsonNode& node) {  // ["[CLS]", 101]
    if (node.array_size() != 2 || !node.value()[1].is_number_integer()) {
      node.fail("should be [token, id]");
    }
    return node.value()[1].get<int64_t>();
  }
  int64_t cls_, sep_;
};

// ByteLevel as a post-processor only trims offsets, which encode() does not return.
class NoOpProcessing final : public PostProcessor {
 public:
  void process(std::vector<int64_t>&, bool) const override {}
};

class SequenceProcessing final : public PostProcessor {
 public:
  explicit SequenceProcessing(const JsonNode& node) {
    JsonNode list = node.at("processors");
    for (size_t i = 0; i < list.array_size(); ++i) {
      parts_.push_back(make_post_processor(list.at(i)));
    }
  }
  void process(std::vector<int64_t>& ids, bool add_special_tokens) const override {
    for (const auto& p : parts_) p->process(ids, add_special_tokens);
  }

 private:
  std::vector<std::unique_ptr<PostProcessor>> parts_;
};

}  // namespace

std::unique_ptr<PostProcessor> make_post_processor(const JsonNode& node) {
  std::string type = node.type();
  if (type == "TemplateProcessing") return std::make_unique<TemplateProcessing>(node);
  if (type == "BertProcessing" || type == "RobertaProcessing") {
    return std::make_unique<ClsSepProcessing>(node);
  }
  if (type == "ByteLevel") return std::make_unique<NoOpProcessing>();
  if (type == "Sequence") return std::make_unique<SequenceProcessing>(node);
  node.unsupported("post-processor", type,
                   "TemplateProcessing, BertProcessing, RobertaProcessing, ByteLevel, Sequence");
}

}  // namespace ingot::text::tokenizer
