// The weights of a Hugging Face model folder: `model.safetensors`, or shards listed in
// `model.safetensors.index.json`. Every tensor is a zero-copy view of a mapped file.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ingot/formats/safetensors.h"

namespace ingot::models {

class Checkpoint {
 public:
  // Throws IoError naming the folder or file when weights are absent or malformed.
  static Checkpoint open_folder(const std::string& folder);

  const std::string& folder() const { return folder_; }
  std::vector<std::string> names() const;
  bool contains(const std::string& name) const { return where_.contains(name); }
  // The tensor as stored (dtype and shape from the file). IoError naming the tensor and
  // the folder when absent.
  Tensor tensor(const std::string& name) const;
  // Total bytes of tensor data.
  size_t nbytes() const;

 private:
  std::string folder_;
  std::vector<formats::SafetensorsFile> files_;
  std::map<std::string, size_t> where_;  // tensor name -> index into files_
};

}  // namespace ingot::models
