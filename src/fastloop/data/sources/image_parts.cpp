// ImageParts: splits of the same samples zipped into one of several images per sample (image_parts.h).
#include "fastloop/data/sources/image_parts.h"

#include "fastloop/core/errors.h"

#include <utility>

namespace fastloop {

ImageParts::ImageParts(std::vector<std::shared_ptr<const EncodedImages>> splits) : splits_(std::move(splits)) {
  if (splits_.empty()) throw InputError("image parts: no splits given");
  for (const auto& split : splits_)
    if (split->size() != splits_.front()->size() || split->parts() != 1)
      throw InputError("image parts: splits of " + std::to_string(splits_.front()->size()) + " and " +
                       std::to_string(split->size()) + " samples (or of several images each); give one split per "
                       "image column, of the same rows");
}

std::string_view ImageParts::part_bytes(int64_t i, int64_t part, std::string& scratch) const {
  return splits_.at(static_cast<size_t>(part))->bytes(i, scratch);
}

void ImageParts::reads_planned(const std::vector<int64_t>& indices, size_t from) const {
  for (const auto& split : splits_) split->reads_planned(indices, from);
}

void ImageParts::read_dropped(int64_t i, int64_t parts_read) const {
  for (size_t k = 0; k < splits_.size(); ++k) splits_[k]->read_dropped(i, static_cast<int64_t>(k) < parts_read ? 1 : 0);
}

void ImageParts::reads_cancelled(bool cancelled) const {
  for (const auto& split : splits_) split->reads_cancelled(cancelled);
}

}  // namespace fastloop
