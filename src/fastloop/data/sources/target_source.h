// The targets of a detection or segmentation split (boxes, labels, instance masks or a class map), handed to
// the loader's workers sample by sample beside the encoded images (Dataset::targets): COCO annotations
// (data/targets/coco_annotations.h), class-map files (VOC and paired files). The workers decode the image,
// ask for its targets at the decoded size, and run the pipeline on both (data/transforms/target_batch.h).
#pragma once

#include "fastloop/data/transforms/targets.h"

#include <cstdint>

namespace fastloop {

class TargetSource {
 public:
  virtual ~TargetSource() = default;
  /// The targets of sample `index`, whose decoded image is height x width pixels (masks are made at that size;
  /// boxes in its pixels). Safe to call from several loader threads at once; a bad annotation or mask file
  /// throws InputError naming it.
  virtual void sample_targets(int64_t index, int64_t height, int64_t width, SampleTargets& targets) const = 0;
};

} // namespace fastloop
