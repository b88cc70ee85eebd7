// A split held as encoded image files (JPEG, PNG, WebP, ...) and labels, never as decoded pixels: image folders
// (data/imagefolder) and WebDataset tar shards (data/shards) implement it; the loader's workers read a
// sample's bytes on demand (page cache / mmap), decode and augment it straight into the batch buffer.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fastloop {

class EncodedImages {
 public:
  virtual ~EncodedImages() = default;

  /// Samples in the split.
  virtual int64_t size() const = 0;
  /// Class index of sample `i`, in [0, num_classes).
  virtual int64_t label(int64_t i) const = 0;
  /// Where sample `i` comes from, for error messages: a path, or "SHARD.tar:KEY.jpg".
  virtual std::string name(int64_t i) const = 0;
  /// The encoded file of sample `i`. The view points into storage owned by this object (a mapping) or,
  /// when the bytes must be read, into `scratch`; it stays valid until `scratch` changes. Safe to call
  /// from several loader threads at once. An unreadable file throws InputError naming it.
  virtual std::string_view bytes(int64_t i, std::string& scratch) const = 0;

  /// The encoded images of each sample: 1, or one per image field of a sample of several (fastloop.Loader's
  /// fields=("jpg", "depth.png", "txt")); the loader decodes part v into view v's batch.
  virtual int64_t parts() const { return 1; }
  /// Part `part` of sample i's images, as bytes() gives part 0. bytes() checks the sample as a whole: the loader
  /// reads part 0 first. An image field the sample lacks throws InputError naming it.
  virtual std::string_view part_bytes(int64_t i, int64_t part, std::string& scratch) const {
    (void)part;
    return bytes(i, scratch);
  }

  /// The order an epoch visits the samples of this rank when the source imposes one (shards: shard
  /// shuffle, then a bounded shuffle buffer over a sequential read); nullopt: the sampler's own shuffle.
  virtual std::optional<std::vector<int64_t>> epoch_order(uint64_t seed, int64_t epoch, int64_t rank,
                                                          int64_t world_size) const {
    (void)seed, (void)epoch, (void)rank, (void)world_size;
    return std::nullopt;
  }

  /// The loader's plan for an epoch: it will read samples indices[from], indices[from + 1], ... (`from` > 0
  /// when resuming mid-epoch), its workers a few batches apart. A source that fetches (remote shards) plans
  /// its fetches from it; the others ignore it.
  virtual void reads_planned(const std::vector<int64_t>& indices, size_t from) const { (void)indices, (void)from; }

  /// The loader gave up one read of sample i (a bad sample, skipped or marked) after taking its first
  /// `parts_read` parts (0: bytes() threw). A source that keeps the rest of a sample until it is taken (its other
  /// image parts, its other fields) lets that read's share go; the others ignore it.
  virtual void read_dropped(int64_t i, int64_t parts_read) const { (void)i, (void)parts_read; }

  /// While `cancelled`, bytes() calls waiting on a fetch, and new ones, throw instead: the loader sets it
  /// while it stops its workers (Ctrl-C, the end of a run) and clears it once they are joined.
  virtual void reads_cancelled(bool cancelled) const { (void)cancelled; }
};

} // namespace fastloop
