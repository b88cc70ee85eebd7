// The targets of a semantic segmentation split: one class-map file per image (VOC's SegmentationClass/*.png,
// or any paired list), decoded by the loader's workers at read time (data/codecs/class_map.h) into the one
// 1-channel mask of SampleTargets (instance_masks false), which the pipeline moves with the pixels.
#pragma once

#include "fastloop/data/sources/target_source.h"

#include <memory>
#include <string>
#include <vector>

namespace fastloop {

class ClassMapFiles final : public TargetSource {
 public:
  /// masks[i] is the class map of images[i] (named beside it when their sizes differ). Throws InputError when
  /// the lists' lengths differ or a mask file does not exist (naming it as "masks[3]: PATH").
  ClassMapFiles(std::vector<std::string> images, std::vector<std::string> masks);

  int64_t size() const { return static_cast<int64_t>(masks_.size()); }
  const std::string& mask(int64_t i) const { return masks_.at(static_cast<size_t>(i)); }
  /// The class map of sample `index`; InputError naming both files when it is not height x width.
  void sample_targets(int64_t index, int64_t height, int64_t width, SampleTargets& targets) const override;

 private:
  std::vector<std::string> images_;
  std::vector<std::string> masks_;
};

} // namespace fastloop
