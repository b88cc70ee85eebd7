// An EncodedImages split with some samples known to be bad before they are read: a Parquet or datasets.Dataset
// sample whose other fields (columns the consumer reads, python/fastloop/_fields.py) hold a null, text that is
// not UTF-8 or JSON that does not parse. bytes() of such a sample throws InputError with its message, so the
// loader's bad-sample policy names it (stop) or replaces and counts it (skip), as a shard sample's failed field
// check does; everything else is the wrapped split's.
#pragma once

#include "fastloop/data/sources/encoded_images.h"

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>

namespace fastloop {

class FlaggedImages : public EncodedImages {
 public:
  /// `bad`: sample -> why it is unusable (the whole message: where, which field, what to do).
  FlaggedImages(std::shared_ptr<const EncodedImages> images, std::unordered_map<int64_t, std::string> bad);

  int64_t size() const override { return images_->size(); }
  int64_t label(int64_t i) const override { return images_->label(i); }
  std::string name(int64_t i) const override { return images_->name(i); }
  /// The wrapped split's bytes; InputError with the sample's message when it is flagged (read_dropped then
  /// lets the wrapped split's kept bytes of it go).
  std::string_view bytes(int64_t i, std::string& scratch) const override;
  int64_t parts() const override { return images_->parts(); }
  std::string_view part_bytes(int64_t i, int64_t part, std::string& scratch) const override;
  std::optional<std::vector<int64_t>> epoch_order(uint64_t seed, int64_t epoch, int64_t rank,
                                                  int64_t world_size) const override {
    return images_->epoch_order(seed, epoch, rank, world_size);
  }
  void reads_planned(const std::vector<int64_t>& indices, size_t from) const override {
    images_->reads_planned(indices, from);
  }
  void reads_cancelled(bool cancelled) const override { images_->reads_cancelled(cancelled); }
  void read_dropped(int64_t i, int64_t parts_read) const override { images_->read_dropped(i, parts_read); }

 private:
  std::shared_ptr<const EncodedImages> images_;
  std::unordered_map<int64_t, std::string> bad_;
};

}  // namespace fastloop
