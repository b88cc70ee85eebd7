// The built-in augmentation's spec, draws and geometry (builtin_transforms.h).
#include "fastloop/data/transforms/builtin_transforms.h"

#include "fastloop/data/transforms/draws.h"
#include "fastloop/data/transforms/pipeline.h"

#include <algorithm>
#include <charconv>
#include <string>
#include <vector>

namespace fastloop {
CropBox random_resized_crop_box(int64_t height, int64_t width, uint64_t seed, int64_t epoch, int64_t index) {
  constexpr double kScaleMin = 0.08, kScaleMax = 1.0;           // of the image's area
  constexpr double kRatioMin = 3.0 / 4.0, kRatioMax = 4.0 / 3.0;  // width / height
  constexpr int kCropTries = 10;
  Draws draws = pipeline_draws(seed, epoch, index, 0);
  const double area = static_cast<double>(height * width);
  for (int t = 0; t < kCropTries; ++t) {
    const auto [w, h] = box_sides_draw(draws, area, kScaleMin, kScaleMax, kRatioMin, kRatioMax);
    if (0 < w && w <= width && 0 < h && h <= height) {
      const int64_t top = draws.below(height - h + 1);
      return {top, draws.below(width - w + 1), h, w};
    }
  }
  const double in_ratio = static_cast<double>(width) / static_cast<double>(height);  // fallback: central crop
  int64_t w = width, h = height;
  if (in_ratio < kRatioMin) {
    h = py_round(static_cast<double>(w) / kRatioMin);
  } else if (in_ratio > kRatioMax) {
    w = py_round(static_cast<double>(h) * kRatioMax);
  }
  return {(height - h) / 2, (width - w) / 2, h, w};
}

bool random_flip(uint64_t seed, int64_t epoch, int64_t index) {
  return pipeline_draws(seed, epoch, index, 1).uniform(0.0, 1.0) < 0.5;  // RandomHorizontalFlip at position 1
}

std::string transform_spec_default(const Dataset& dataset, const AugmentOptions& options) {
  const int64_t S = dataset.image_height;  // the built-in transforms make squares
  std::string spec = options.crop ? "RandomResizedCrop(" + std::to_string(S) + ")"
                                  : "Resize(" + std::to_string(S * 256 / 224) + "), CenterCrop(" + std::to_string(S) + ")";
  if (options.flip) spec += ", RandomHorizontalFlip()";
  auto floats = [](const std::vector<float>& values) {  // float32's shortest digits: 0.485, not 0.48500001...
    std::string out = "(";
    for (size_t i = 0; i < values.size(); ++i) {
      char digits[32];
      const auto end = std::to_chars(digits, digits + sizeof(digits), values[i]).ptr;
      std::string text(digits, end);
      if (text.find_first_of(".en") == std::string::npos) text += ".0";
      out += (i ? ", " : "") + text;
    }
    return out + (values.size() == 1 ? ",)" : ")");
  };
  spec += ", ToTensor()";
  if (!dataset.mean.empty()) spec += ", Normalize(mean=" + floats(dataset.mean) + ", std=" + floats(dataset.stddev) + ")";
  if (options.erase > 0.0) spec += ", RandomErasing(p=" + float_repr(options.erase) + ")";
  return spec;
}

EvalGeometry eval_geometry(int64_t height, int64_t width, int64_t size) {
  const int64_t resize = size * 256 / 224;  // shorter side; 256 for 224
  const int64_t shorter = std::min(height, width), longer = std::max(height, width);
  const auto new_long = static_cast<int64_t>(static_cast<double>(resize) * static_cast<double>(longer) / static_cast<double>(shorter));
  EvalGeometry g;
  g.resized_height = width <= height ? new_long : resize;
  g.resized_width = width <= height ? resize : new_long;
  g.crop = {py_round((g.resized_height - size) / 2.0), py_round((g.resized_width - size) / 2.0), size, size};
  return g;
}

const Pipeline& DefaultPipeline::of(const Dataset& dataset, const AugmentOptions& options) {
  if (options.pipeline) return *options.pipeline;
  const std::string spec = transform_spec_default(dataset, options);
  if (!pipeline_ || spec_ != spec) {
    pipeline_ = std::make_shared<const Pipeline>(spec);
    spec_ = spec;
  }
  return *pipeline_;
}

} // namespace fastloop
