// Image files given one by one or as folders (walked recursively, torchvision's IMG_EXTENSIONS), as an
// encoded split without labels: what `fastloop predict` labels. Files keep the order given; a folder's
// files are sorted by path.
#pragma once

#include "fastloop/data/sources/encoded_images.h"

#include <memory>
#include <string>
#include <vector>

namespace fastloop {

class ImageFiles final : public EncodedImages {
 public:
  /// Expands `inputs` (files and folders); throws InputError naming an input that does not exist, a
  /// file without an image extension, or inputs that hold no image at all.
  static std::shared_ptr<const ImageFiles> list(const std::vector<std::string>& inputs);

  int64_t size() const override { return static_cast<int64_t>(paths_.size()); }
  int64_t label(int64_t) const override { return 0; }  // unknown: predict's inputs have no labels
  std::string name(int64_t i) const override { return paths_.at(static_cast<size_t>(i)); }
  std::string_view bytes(int64_t i, std::string& scratch) const override;

 private:
  std::vector<std::string> paths_;
};

/// torchvision.datasets.folder.IMG_EXTENSIONS.
extern const char* const kImageExtensions[9];

/// True when `file_name` ends with one of kImageExtensions, ignoring ASCII case.
bool image_file_name(const std::string& file_name);

/// Reads the file `path` into `scratch`; an unreadable file throws InputError naming it (image folders too).
std::string_view image_file_read(const std::string& path, std::string& scratch);

} // namespace fastloop
