// The built-in augmentation of image files as a transform spec (train: RandomResizedCrop + flip, eval: Resize
// + CenterCrop, then ToTensor + Normalize), and its torchvision draws and geometry restated for the tests that
// compare them with torchvision.
#pragma once

#include "fastloop/data/codecs/image_types.h"
#include "fastloop/data/sources/dataset.h"
#include "fastloop/data/transforms/augment_options.h"

#include <cstdint>
#include <memory>
#include <string>

namespace fastloop {

/// A crop in pixels of the full-scale image (torchvision's top, left, height, width).
using CropBox = PixelRect;

/// torchvision.transforms.v2.RandomResizedCrop's parameters for an image of height x width, with the
/// uniform draws taken from (seed, epoch, index) instead of torch's generator.
CropBox random_resized_crop_box(int64_t height, int64_t width, uint64_t seed, int64_t epoch, int64_t index);

/// Whether sample `index` of `epoch` is flipped (probability 1/2), from the same (seed, epoch, index): what
/// RandomHorizontalFlip() draws second in a pipeline (pipeline_draws position 1).
bool random_flip(uint64_t seed, int64_t epoch, int64_t index);

/// The transform spec the built-in flags stand for on an encoded dataset (the opening lines; options.erase adds
/// RandomErasing(p=erase) after Normalize, the dataset's mean and std are Normalize's).
std::string transform_spec_default(const Dataset& dataset, const AugmentOptions& options);

class Pipeline;

/// The pipeline a worker runs for `options`: theirs, or the one transform_spec_default() spells for the dataset,
/// compiled once per holder (a worker thread's own) and again only when that spec changes.
class DefaultPipeline {
 public:
  const Pipeline& of(const Dataset& dataset, const AugmentOptions& options);

 private:
  std::string spec_;
  std::shared_ptr<const Pipeline> pipeline_;
};

/// Resize(size * 256 / 224) then CenterCrop(size): the resized image's size and the crop within it.
struct EvalGeometry {
  int64_t resized_height = 0, resized_width = 0;
  CropBox crop;  // in the resized image
};
EvalGeometry eval_geometry(int64_t height, int64_t width, int64_t size);

} // namespace fastloop
