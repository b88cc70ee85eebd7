// The targets of a COCO split for the loader's workers (target_source.h): each image's boxes (XYXY, as
// torchvision's wrapper converts them) and category ids, and its instance masks when asked for (rasterized
// on the decoded canvas as pycocotools does: data/targets/coco_mask.h) and keypoints when asked for. An image
// without annotations has no boxes (nor keypoints), as torchvision's target {"image_id": id}.
#pragma once

#include "fastloop/data/sources/target_source.h"
#include "fastloop/data/targets/coco_annotations.h"

#include <memory>

namespace fastloop {

class CocoTargets final : public TargetSource {
 public:
  /// `keypoints`: each image's person keypoints as well ([N, K] points from the annotations' triplets).
  CocoTargets(std::shared_ptr<const CocoAnnotations> annotations, bool masks, bool keypoints = false)
      : annotations_(std::move(annotations)), masks_(masks), keypoints_(keypoints) {}
  void sample_targets(int64_t index, int64_t height, int64_t width, SampleTargets& targets) const override;

 private:
  std::shared_ptr<const CocoAnnotations> annotations_;
  bool masks_;
  bool keypoints_;
};

} // namespace fastloop
