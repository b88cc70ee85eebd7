// The images of a COCO annotation file (torchvision.datasets.CocoDetection's root + file_name) as an encoded
// split, in the annotations' order (image ids sorted): the loader decodes them while each sample's targets come
// from the shared CocoAnnotations (coco_annotations.h: boxes, labels, masks on the decoded canvas).
#pragma once

#include "fastloop/data/sources/encoded_images.h"
#include "fastloop/data/targets/coco_annotations.h"

#include <memory>
#include <string>

namespace fastloop {

class CocoImages final : public EncodedImages {
 public:
  /// Images under `root`; nothing is read until bytes() (a missing image is named then).
  CocoImages(std::string root, std::shared_ptr<const CocoAnnotations> annotations);

  int64_t size() const override { return annotations_->size(); }
  int64_t label(int64_t) const override { return 0; }  // detection: the targets come from annotations()
  /// root/file_name.
  std::string name(int64_t i) const override;
  std::string_view bytes(int64_t i, std::string& scratch) const override;

  const std::shared_ptr<const CocoAnnotations>& annotations() const { return annotations_; }
  const std::string& root() const { return root_; }

 private:
  std::string root_;
  std::shared_ptr<const CocoAnnotations> annotations_;
};

} // namespace fastloop
