// Finding the GGUF a model path means (a `.gguf` file itself, or a folder that holds one)
// and presenting it as a Hugging Face folder for the code that reads folders (tokenizer,
// chat template, generation config, the CLI's commands).
#pragma once

#include <optional>
#include <string>

namespace ingot::models {

// The GGUF file `path` names when it is read as a GGUF model: a file ending in .gguf, or
// a folder with exactly one .gguf file and no config.json. nullopt otherwise; IoError
// naming the folder when it has no config.json and several .gguf files.
std::optional<std::string> gguf_source(const std::string& path);

// The one .gguf file in `folder` (whatever else it holds); nullopt when it has none or
// several.
std::optional<std::string> gguf_in_folder(const std::string& folder);

// A Hugging Face-style folder for the GGUF `path` names: config.json, tokenizer.json and
// tokenizer_config.json (with the chat template) made from its metadata, and model.gguf,
// a symbolic link to the file (from_pretrained reads the weights through it). Made once
// under $XDG_CACHE_HOME/ingot/gguf (or ~/.cache/ingot/gguf), keyed by the file's path, size
// and modification time, ingot's version and the conversion's revision, and reused. `path` itself
// when it names no GGUF.
std::string gguf_model_folder(const std::string& path);

}  // namespace ingot::models
