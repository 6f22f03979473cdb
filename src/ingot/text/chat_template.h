// A model's chat template: turns a conversation into the prompt text the model was
// trained on, exactly as transformers' tokenizer.apply_chat_template(messages,
// tokenize=False, add_generation_prompt=...) does.
//
// The template comes from a model folder: chat_template.jinja (what transformers 5
// writes), else chat_template.json ({"chat_template": ...}), else the "chat_template"
// entry of tokenizer_config.json (a string, or a list of {"name", "template"} of which
// "default" is used). The special tokens of tokenizer_config.json (bos_token, eos_token,
// unk_token, pad_token, sep_token, cls_token, mask_token; strings or {"content": ...}
// objects) are passed to the template, as transformers passes special_tokens_map.
//
// Rendering uses ingot's Jinja engine (models/chat/template.h); what it supports and how
// its errors read is in docs/chat_templates.md. A ChatTemplate is immutable and may be
// rendered concurrently.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ingot/text/chat/template.h"
#include "ingot/text/chat/value.h"

namespace ingot::text {

struct ChatMessage {
  std::string role;  // "system", "user", "assistant", "tool", ...
  std::string content;
};

class ChatTemplate {
 public:
  // IoError naming the folder (and what to do) when it has no chat template or a file
  // is unreadable; ValueError / NotSupportedError naming the template line when the
  // template does not parse.
  static ChatTemplate from_folder(const std::string& folder);
  // Whether from_folder would find a template (it may still fail to parse).
  static bool folder_has_template(const std::string& folder);
  // A template given as text; `special_tokens` maps names such as "bos_token" to strings.
  static ChatTemplate from_text(std::string_view source, std::string origin,
                                chat::DictData special_tokens = {});

  // The prompt for `messages`. With add_generation_prompt the text ends with the header
  // of the assistant's turn. `extra` adds template variables (e.g. enable_thinking=false
  // for Qwen 3, date_string for Llama 3.1, tools); they override the special tokens.
  // TemplateRaised (a ValueError) when the template calls raise_exception, carrying its
  // message; ValueError when a message is not valid UTF-8.
  std::string render(const std::vector<ChatMessage>& messages, bool add_generation_prompt,
                     const chat::DictData& extra = {}) const;
  // The same with messages as values: a list of dicts whose content may also be a list
  // of parts, with tool_calls etc., as a messages JSON file holds them.
  std::string render_values(const chat::Value& messages, bool add_generation_prompt,
                            const chat::DictData& extra = {}) const;

  // Parses a messages JSON file's text ([{"role": ..., "content": ...}, ...]); IoError
  // naming `origin` when it is not JSON or not a list of objects with a string "role".
  static chat::Value messages_from_json(std::string_view text, const std::string& origin);

  // A special token the template receives ("bos_token", "eos_token", ...), if set.
  std::optional<std::string> special_token(std::string_view name) const;
  const std::string& origin() const { return template_.origin(); }

 private:
  ChatTemplate(chat::Template t, chat::DictData special_tokens)
      : template_(std::move(t)), special_tokens_(std::move(special_tokens)) {}
  chat::Template template_;
  chat::DictData special_tokens_;
};

}  // namespace ingot::text
