// dataset_slice(): a contiguous range of a split of either form, without copying its samples.
#include "fastloop/data/sources/dataset.h"

#include <c10/util/Exception.h>

#include <algorithm>

namespace fastloop {
namespace {

// Samples [begin, begin + count) of another EncodedImages, renumbered from 0.
class EncodedSlice final : public EncodedImages {
 public:
  EncodedSlice(std::shared_ptr<const EncodedImages> all, int64_t begin, int64_t count)
      : all_(std::move(all)), begin_(begin), count_(count) {}
  int64_t size() const override { return count_; }
  int64_t label(int64_t i) const override { return all_->label(begin_ + i); }
  std::string name(int64_t i) const override { return all_->name(begin_ + i); }
  std::string_view bytes(int64_t i, std::string& scratch) const override { return all_->bytes(begin_ + i, scratch); }
  void reads_planned(const std::vector<int64_t>& indices, size_t from) const override {
    std::vector<int64_t> shifted(indices.begin() + static_cast<std::ptrdiff_t>(std::min(from, indices.size())), indices.end());
    for (int64_t& i : shifted) i += begin_;
    all_->reads_planned(shifted, 0);
  }
  void reads_cancelled(bool cancelled) const override { all_->reads_cancelled(cancelled); }

 private:
  std::shared_ptr<const EncodedImages> all_;
  int64_t begin_, count_;
};

// The targets of samples [begin, ...) of another TargetSource, renumbered from 0.
class TargetSlice final : public TargetSource {
 public:
  TargetSlice(std::shared_ptr<const TargetSource> all, int64_t begin) : all_(std::move(all)), begin_(begin) {}
  void sample_targets(int64_t index, int64_t height, int64_t width, SampleTargets& targets) const override {
    all_->sample_targets(begin_ + index, height, width, targets);
  }

 private:
  std::shared_ptr<const TargetSource> all_;
  int64_t begin_;
};

}  // namespace

Dataset dataset_slice(const Dataset& dataset, int64_t begin, int64_t count) {
  TORCH_CHECK(begin >= 0 && count >= 0 && begin + count <= dataset.size(), "dataset_slice: [", begin, ", ",
              begin + count, ") is outside a dataset of ", dataset.size(), " samples");
  Dataset slice = dataset;
  if (dataset.encoded) {
    slice.encoded = std::make_shared<EncodedSlice>(dataset.encoded, begin, count);
    if (dataset.targets) slice.targets = std::make_shared<TargetSlice>(dataset.targets, begin);
  } else {
    slice.images = dataset.images.narrow(0, begin, count);
    slice.labels = dataset.labels.narrow(0, begin, count);
  }
  return slice;
}

} // namespace fastloop
