#include "ingot/generation/step_layout.h"

#include <array>
#include <utility>

namespace ingot::generation {

namespace {

constexpr std::array<std::pair<InputRole, std::string_view>, 20> kRoleNames{{
    {InputRole::kInputIds, "input_ids"},
    {InputRole::kInputsEmbeds, "inputs_embeds"},
    {InputRole::kAttentionMask, "attention_mask"},
    {InputRole::kPositionIds, "position_ids"},
    {InputRole::kRopeDeltas, "rope_deltas"},
    {InputRole::kKeyCache, "key_cache"},
    {InputRole::kValueCache, "value_cache"},
    {InputRole::kCachePosition, "cache_position"},
    {InputRole::kCrossKey, "cross_key"},
    {InputRole::kCrossValue, "cross_value"},
    {InputRole::kEncoderInput, "encoder_input"},
    {InputRole::kEncoderHiddenStates, "encoder_hidden_states"},
    {InputRole::kPixelValues, "pixel_values"},
    {InputRole::kVisionPositionIds, "vision_position_ids"},
    {InputRole::kVisionSegmentIds, "vision_segment_ids"},
    {InputRole::kImageFeatures, "image_features"},
    {InputRole::kHiddenStates, "hidden_states"},
    {InputRole::kPaddingMask, "padding_mask"},
    {InputRole::kPastKey, "past_key"},
    {InputRole::kPastValue, "past_value"},
}};

}  // namespace

std::string_view role_name(InputRole role) {
  for (const auto& [r, name] : kRoleNames)
    if (r == role) return name;
  return "unknown";
}

std::optional<InputRole> role_from_name(std::string_view name) {
  for (const auto& [r, n] : kRoleNames)
    if (n == name) return r;
  return std::nullopt;
}

bool is_cache_role(InputRole role) {
  return role == InputRole::kKeyCache || role == InputRole::kValueCache ||
         role == InputRole::kCachePosition;
}

std::optional<size_t> StepLayout::find(InputRole role) const {
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].role == role) return i;
  return std::nullopt;
}

size_t StepLayout::count(InputRole role) const {
  size_t n = 0;
  for (const StepInput& in : inputs) n += in.role == role;
  return n;
}

}  // namespace ingot::generation
