// FlaggedImages: a split's samples, the flagged ones thrown as bad when read (flagged_images.h).
#include "fastloop/data/sources/flagged_images.h"

#include "fastloop/core/errors.h"

#include <utility>

namespace fastloop {

FlaggedImages::FlaggedImages(std::shared_ptr<const EncodedImages> images, std::unordered_map<int64_t, std::string> bad)
    : images_(std::move(images)), bad_(std::move(bad)) {}

std::string_view FlaggedImages::bytes(int64_t i, std::string& scratch) const {
  if (const auto found = bad_.find(i); found != bad_.end()) throw InputError(found->second);
  return images_->bytes(i, scratch);
}

std::string_view FlaggedImages::part_bytes(int64_t i, int64_t part, std::string& scratch) const {
  if (part == 0) return bytes(i, scratch);
  return images_->part_bytes(i, part, scratch);
}

}  // namespace fastloop
