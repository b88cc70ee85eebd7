#include "fastloop/data/sources/coco_targets.h"

#include <cstring>
#include <numeric>

namespace fastloop {

void CocoTargets::sample_targets(int64_t index, int64_t height, int64_t width, SampleTargets& targets) const {
  const int64_t count = annotations_->annotation_count(index);
  if (count == 0) return;  // torchvision's {"image_id": id}: nothing to move
  thread_local std::vector<float> boxes;
  annotations_->boxes_xyxy(index, boxes);
  targets.has_boxes = true;
  targets.boxes.assign(boxes.begin(), boxes.end());
  annotations_->labels(index, targets.labels);
  targets.kept.resize(static_cast<size_t>(count));
  std::iota(targets.kept.begin(), targets.kept.end(), int64_t{0});
  if (keypoints_) {
    const int64_t per = annotations_->keypoints(index, targets.keypoints, nullptr);
    targets.has_keypoints = true;
    targets.keypoints_shape = {count, per};
  }
  if (!masks_) return;
  thread_local std::vector<uint8_t> planes;
  const size_t plane = static_cast<size_t>(height * width);
  planes.resize(plane * static_cast<size_t>(count));
  annotations_->masks(index, height, width, planes.data());
  targets.instance_masks = true;
  targets.masks.resize(static_cast<size_t>(count));
  for (int64_t k = 0; k < count; ++k) {
    ImageU8& mask = targets.masks[static_cast<size_t>(k)];
    mask.reshape(height, width, 1);
    std::memcpy(mask.data(), planes.data() + plane * static_cast<size_t>(k), plane);
  }
}

} // namespace fastloop
