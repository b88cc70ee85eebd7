// Splits of the same samples, one per image of a sample, as one split of several images per sample
// (EncodedImages::parts): a Parquet file or datasets.Dataset read for fastloop.Loader(fields=("photo", "depth",
// "caption")) with two image columns is two Arrow splits of the same rows, one per column. Part k is split k's
// bytes; the order, names, labels and checks are split 0's, and the plan goes to every split (each reads its
// column ahead of the workers).
#pragma once

#include "fastloop/data/sources/encoded_images.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace fastloop {

class ImageParts : public EncodedImages {
 public:
  /// `splits`: one per part, each of the same samples in the same order; InputError when they count otherwise.
  explicit ImageParts(std::vector<std::shared_ptr<const EncodedImages>> splits);

  int64_t size() const override { return splits_.front()->size(); }
  int64_t label(int64_t i) const override { return splits_.front()->label(i); }
  std::string name(int64_t i) const override { return splits_.front()->name(i); }
  std::string_view bytes(int64_t i, std::string& scratch) const override { return splits_.front()->bytes(i, scratch); }
  int64_t parts() const override { return static_cast<int64_t>(splits_.size()); }
  std::string_view part_bytes(int64_t i, int64_t part, std::string& scratch) const override;
  std::optional<std::vector<int64_t>> epoch_order(uint64_t seed, int64_t epoch, int64_t rank,
                                                  int64_t world_size) const override {
    return splits_.front()->epoch_order(seed, epoch, rank, world_size);
  }
  void reads_planned(const std::vector<int64_t>& indices, size_t from) const override;
  void reads_cancelled(bool cancelled) const override;
  void read_dropped(int64_t i, int64_t parts_read) const override;

 private:
  std::vector<std::shared_ptr<const EncodedImages>> splits_;
};

}  // namespace fastloop
