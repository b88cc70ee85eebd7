// A folder of images with one subfolder per class, listed exactly as torchvision's ImageFolder lists it
// (class folders sorted by name, files sorted per folder with os.walk's order, torchvision's
// IMG_EXTENSIONS matched case-insensitively), so class indices equal Python's. Listing reads directory
// entries only: paths and labels at start, each file's bytes when the loader asks for them.
#pragma once

#include "fastloop/data/sources/encoded_images.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace fastloop {


class ImageFolder final : public EncodedImages {
 public:
  /// Lists `root`. With `expected_classes` (a val folder checked against train's), the class folders
  /// must be exactly those. Throws InputError naming the path for a missing or unreadable folder, no class
  /// folder, or a class folder without images.
  static std::shared_ptr<const ImageFolder> list(const std::string& root,
                                                 const std::vector<std::string>* expected_classes = nullptr);

  int64_t size() const override { return static_cast<int64_t>(labels_.size()); }
  int64_t label(int64_t i) const override { return labels_.at(static_cast<size_t>(i)); }
  std::string name(int64_t i) const override { return root_ + "/" + relative_path(i); }
  std::string_view bytes(int64_t i, std::string& scratch) const override;

  const std::vector<std::string>& classes() const { return classes_; }
  /// Path of sample `i` relative to the root ("CLASS/.../FILE").
  std::string relative_path(int64_t i) const;

 private:
  explicit ImageFolder(std::string root) : root_(std::move(root)) {}

  std::string root_;
  std::vector<std::string> classes_;
  std::string paths_;               // every relative path, back to back
  std::vector<uint64_t> path_end_;  // one past the end of path i in paths_
  std::vector<int32_t> labels_;
};

} // namespace fastloop
