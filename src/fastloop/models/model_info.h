// What a trained model needs beside its weights to be used: the names of its classes and the evaluation
// transform its inputs went through (input shape, resize + centre crop of image files, mean/std, memory
// format, the autocast dtype it ran in). Stored in checkpoints and in every export (safetensors metadata,
// TorchScript extra files, ONNX metadata_props) as one JSON object, and read back by eval and predict.
#pragma once

#include "fastloop/core/config.h"
#include "fastloop/data/sources/dataset.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fastloop {

struct ModelInfo {
  std::string model;                 // the architecture's name (--model)
  std::vector<std::string> classes;  // the name of each output index
  int64_t channels = 0, height = 0, width = 0;  // the input images the model was trained on
  bool image_files = false;          // decoded from files: Resize(resize) of the shorter side, CenterCrop(height)
  int64_t resize = 0;                // image files: the shorter side before the crop (256 for 224)
  std::vector<float> mean, std;      // per channel, in [0, 1] units: x = (pixel / 255 - mean) / std
  bool channels_last = false;        // the layout it ran in (results are the same in either)
  std::string autocast = "off";      // off | fp16 | bf16: the dtype it was trained and evaluated in
  std::string transform;             // --eval-transform's pipeline (data/transforms/spec.h); empty: the fields above
};

/// The extra file of a TorchScript export (`fastloop export --format torchscript`) that holds its ModelInfo
/// as model_info_to_json() text; the key of the same text in ONNX metadata_props and safetensors metadata.
inline constexpr const char* kModelInfoExtraFile = "fastloop/model_info.json";
inline constexpr const char* kModelInfoMetadataKey = "fastloop.model_info";

/// The info of a model trained by `config` on `split` (the train split: classes, shape, normalisation).
ModelInfo model_info_for(const TrainConfig& config, const Dataset& split);

/// One JSON object; keys as the struct's fields.
std::string model_info_to_json(const ModelInfo& info);

/// Parses model_info_to_json() text; `where` names its origin in the InputError a malformed text throws.
ModelInfo model_info_from_json(const std::string& json, const std::string& where);

} // namespace fastloop
