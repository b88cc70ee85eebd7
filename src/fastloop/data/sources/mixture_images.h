// A weighted mixture of encoded sources as one EncodedImages split (fastloop.Loader([a, b], weights=[...])): a
// source of sources. Sample indices run through the sources end to end (source k's sample j is offset(k) + j).
// An epoch has as many samples as all the sources together; each slot of a rank's share is drawn from source k
// with probability weights[k] (a seeded stream of (seed, epoch, rank)), and takes the next sample of source k's
// own order for that rank (its shuffle, its shard split across ranks), which starts over with a fresh order
// (its next cycle) when used up. The order is a pure function of (seed, epoch, rank, world size), so the
// loader's state resumes a mixture and splits it across ranks as any source with an order of its own.
#pragma once

#include "fastloop/data/sources/encoded_images.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace fastloop {

class MixtureImages : public EncodedImages {
 public:
  /// `weights[k]` > 0 for each source (normalised here); InputError for an empty list, a count that differs,
  /// a weight that is not a positive number, or sources with different numbers of images per sample (parts()).
  MixtureImages(std::vector<std::shared_ptr<const EncodedImages>> sources, std::vector<double> weights);

  int64_t size() const override { return starts_.back(); }
  /// The sample's own index, as FieldShards gives it: the consumer reads its fields by it.
  int64_t label(int64_t i) const override { return i; }
  std::string name(int64_t i) const override;
  std::string_view bytes(int64_t i, std::string& scratch) const override;
  /// The sources' own count (InputError at construction when they differ).
  int64_t parts() const override { return sources_.front()->parts(); }
  std::string_view part_bytes(int64_t i, int64_t part, std::string& scratch) const override;
  std::optional<std::vector<int64_t>> epoch_order(uint64_t seed, int64_t epoch, int64_t rank,
                                                  int64_t world_size) const override;
  void reads_planned(const std::vector<int64_t>& indices, size_t from) const override;
  void reads_cancelled(bool cancelled) const override;
  void read_dropped(int64_t i, int64_t parts_read) const override;

  /// The first sample index of each source, and the total.
  const std::vector<int64_t>& starts() const { return starts_; }

 private:
  size_t source_of(int64_t i) const;
  std::vector<int64_t> source_order(size_t k, uint64_t seed, int64_t epoch, int64_t cycle, int64_t rank,
                                    int64_t world_size) const;

  std::vector<std::shared_ptr<const EncodedImages>> sources_;
  std::vector<double> cumulative_;  // weights, normalised and summed
  std::vector<int64_t> starts_;
};

}  // namespace fastloop
