// MixtureImages: the weighted stream of sources and the per-source orders it interleaves.
#include "fastloop/data/sources/mixture_images.h"

#include "fastloop/core/errors.h"
#include "fastloop/data/loader/sampler.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

namespace fastloop {
namespace {

constexpr int64_t kCycleStride = int64_t{1} << 32;  // a source's cycle c of epoch e reads its epoch e + c * this

}  // namespace

MixtureImages::MixtureImages(std::vector<std::shared_ptr<const EncodedImages>> sources, std::vector<double> weights)
    : sources_(std::move(sources)) {
  if (sources_.empty()) throw InputError("a mixture needs one source at least");
  if (weights.size() != sources_.size())
    throw InputError("a mixture of " + std::to_string(sources_.size()) + " sources was given " +
                     std::to_string(weights.size()) + " weights; give one per source");
  for (const auto& source : sources_)
    if (source->parts() != sources_.front()->parts())
      throw InputError("a mixture's sources have " + std::to_string(sources_.front()->parts()) + " and " +
                       std::to_string(source->parts()) + " image fields per sample; give each the same");
  double total = 0;
  for (const double w : weights) {
    if (!(w > 0) || !std::isfinite(w))
      throw InputError("a mixture's weights must be positive numbers, got " + std::to_string(w));
    total += w;
  }
  double sum = 0;
  starts_.push_back(0);
  for (size_t k = 0; k < sources_.size(); ++k) {
    sum += weights[k] / total;
    cumulative_.push_back(sum);
    starts_.push_back(starts_.back() + sources_[k]->size());
  }
  cumulative_.back() = 1.0;
}

size_t MixtureImages::source_of(int64_t i) const {
  return static_cast<size_t>(std::upper_bound(starts_.begin(), starts_.end(), i) - starts_.begin() - 1);
}

std::string MixtureImages::name(int64_t i) const {
  const size_t k = source_of(i);
  return sources_[k]->name(i - starts_[k]);
}

std::string_view MixtureImages::bytes(int64_t i, std::string& scratch) const {
  const size_t k = source_of(i);
  return sources_[k]->bytes(i - starts_[k], scratch);
}

std::string_view MixtureImages::part_bytes(int64_t i, int64_t part, std::string& scratch) const {
  const size_t k = source_of(i);
  return sources_[k]->part_bytes(i - starts_[k], part, scratch);
}

// Source k's samples for `rank` in `cycle` of `epoch` (its own order, or the sampler's shuffle), as indices of
// the mixture.
std::vector<int64_t> MixtureImages::source_order(size_t k, uint64_t seed, int64_t epoch, int64_t cycle, int64_t rank,
                                                 int64_t world_size) const {
  const int64_t sub_epoch = epoch + cycle * kCycleStride;
  auto order = sources_[k]->epoch_order(seed, sub_epoch, rank, world_size);
  std::vector<int64_t> out = order ? std::move(*order)
                                   : sampler_epoch_indices(sources_[k]->size(), sub_epoch,
                                                           SamplerOptions{true, seed, rank, world_size});
  for (int64_t& i : out) i += starts_[k];
  return out;
}

std::optional<std::vector<int64_t>> MixtureImages::epoch_order(uint64_t seed, int64_t epoch, int64_t rank,
                                                               int64_t world_size) const {
  const int64_t share = (size() + world_size - 1) / world_size;
  std::mt19937_64 rng(hash_mix(seed, static_cast<uint64_t>(epoch), hash_mix(0x313, static_cast<uint64_t>(rank), 0)));
  std::vector<std::vector<int64_t>> orders(sources_.size());
  std::vector<size_t> next(sources_.size(), 0);
  std::vector<int64_t> cycles(sources_.size(), -1);
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(share));
  while (static_cast<int64_t>(out.size()) < share) {
    const double u = static_cast<double>(rng() >> 11) * 0x1.0p-53;  // uniform in [0, 1)
    const auto k = static_cast<size_t>(std::upper_bound(cumulative_.begin(), cumulative_.end(), u) -
                                       cumulative_.begin());
    if (next[k] == orders[k].size()) {  // its first draw of the epoch, or its order is used up: a fresh one
      orders[k] = source_order(k, seed, epoch, ++cycles[k], rank, world_size);
      next[k] = 0;
      if (orders[k].empty()) throw InputError("a mixture's source " + std::to_string(k) + " gives rank " +
                                              std::to_string(rank) + " no samples");
    }
    out.push_back(orders[k][next[k]++]);
  }
  return out;
}

void MixtureImages::reads_planned(const std::vector<int64_t>& indices, size_t from) const {
  std::vector<std::vector<int64_t>> planned(sources_.size());
  for (size_t p = from; p < indices.size(); ++p) {
    const size_t k = source_of(indices[p]);
    planned[k].push_back(indices[p] - starts_[k]);
  }
  for (size_t k = 0; k < sources_.size(); ++k) sources_[k]->reads_planned(planned[k], 0);
}

void MixtureImages::read_dropped(int64_t i, int64_t parts_read) const {
  const size_t k = source_of(i);
  sources_[k]->read_dropped(i - starts_[k], parts_read);
}

void MixtureImages::reads_cancelled(bool cancelled) const {
  for (const auto& source : sources_) source->reads_cancelled(cancelled);
}

}  // namespace fastloop
