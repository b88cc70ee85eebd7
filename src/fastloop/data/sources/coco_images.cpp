// CocoImages: image paths joined as torchvision's os.path.join(root, file_name), each file read whole.
#include "fastloop/data/sources/coco_images.h"

#include "fastloop/data/sources/image_files.h"

#include <stdexcept>
#include <utility>

namespace fastloop {

CocoImages::CocoImages(std::string root, std::shared_ptr<const CocoAnnotations> annotations)
    : root_(std::move(root)), annotations_(std::move(annotations)) {
  if (!annotations_) throw std::invalid_argument("CocoImages: no annotations");
}

std::string CocoImages::name(int64_t i) const {
  const std::string_view file_name = annotations_->file_name(i);
  if (!file_name.empty() && file_name[0] == '/') return std::string(file_name);  // os.path.join keeps an absolute part
  if (root_.empty() || root_.back() == '/') return root_ + std::string(file_name);
  return root_ + "/" + std::string(file_name);
}

std::string_view CocoImages::bytes(int64_t i, std::string& scratch) const { return image_file_read(name(i), scratch); }

} // namespace fastloop
