// transformers' AutoProcessor over the processors ingot implements: a model folder's
// processor type picks a registered Processor, which turns a request's images or audio
// into the model's inputs.
//
// The type is the first of preprocessor_config.json's image_processor_type,
// feature_extractor_type and processor_class, then processor_config.json's
// processor_class and image_processor.image_processor_type. Each processor's own file
// registers the types it serves (INGOT_REGISTER_PROCESSOR): image_processor.cpp
// (CLIP / LLaVA), qwen2_vl_processor.cpp (Qwen2-VL), whisper_features.cpp (Whisper).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ingot/core/tensor.h"

namespace ingot::media {

// A prompt's images as the model takes them.
struct ProcessedImages {
  Tensor pixel_values;    // [images, 3, H, W], or a patch-input model's [patches, C*T*P*P]
  Tensor image_grid_thw;  // [images, 3] int64 for a patch-input model, else undefined
  std::string prompt;     // each image placeholder expanded to its image's tokens
};

// A model's processor (LlavaProcessor, Qwen2VLProcessor, WhisperFeatureExtractor).
class Processor {
 public:
  virtual ~Processor() = default;
  // The registered type it was built for (for errors).
  virtual std::string type() const = 0;
  // Whether the model takes flattened patches with image_grid_thw (Qwen2-VL).
  virtual bool patch_input() const { return false; }
  // Image files -> pixel_values (and image_grid_thw), the prompt's placeholders expanded.
  // NotSupportedError naming the type for a processor without images.
  virtual ProcessedImages images(const std::vector<std::string>& files,
                                 const std::string& prompt) const;
  // An audio file -> input_features [1, mels, frames] float32. NotSupportedError naming
  // the type for a processor without audio.
  virtual Tensor audio(const std::string& file) const;
};

struct AutoProcessor {
  using Factory = std::unique_ptr<Processor> (*)(const std::string& folder);
  // The processor FOLDER's files name. IoError naming the folder when it has neither
  // preprocessor_config.json nor processor_config.json (or a file is not JSON);
  // NotSupportedError naming the file, the type found and the registered types when the
  // type is not registered (or the files name none).
  static std::unique_ptr<Processor> from_folder(const std::string& folder);
  // Whether FOLDER has preprocessor_config.json or processor_config.json.
  static bool has_config(const std::string& folder);
  // The registered types, sorted.
  static std::vector<std::string> registered();
  // Registers `factory` for each of `types`; InternalError on a type registered twice.
  static bool add(const std::vector<std::string>& types, Factory factory);
};

}  // namespace ingot::media

// Registers a processor factory for its types, at namespace scope of the processor's file:
//   INGOT_REGISTER_PROCESSOR(llava, make_llava, "LlavaProcessor", "CLIPImageProcessor");
#define INGOT_REGISTER_PROCESSOR(id, factory, ...)                     \
  [[maybe_unused]] static const bool ingot_processor_registered_##id = \
      ::ingot::media::AutoProcessor::add({__VA_ARGS__}, factory)
