// WebDataset tar shards as an EncodedImages split (`--data shards:...`): each shard is mapped (mmap)
// and indexed once at start; a sample is the files sharing a key (KEY.jpg|png|webp|... + KEY.cls holding
// the class index as text), and a sample's bytes are a view into the mapping. The training split imposes
// webdataset's epoch order (shard_order.h); the evaluation split is read in file order.
#pragma once

#include "fastloop/data/sources/encoded_images.h"
#include "fastloop/data/sources/mapped_file.h"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace fastloop {

/// One sample of a shard: where its image lies in the archive, and its class.
struct ShardSample {
  std::string key;       // the member names' common part (webdataset's __key__)
  std::string image;     // the image member's name, KEY.jpg / .png / .webp / ... (shard_image_extension)
  int64_t offset = 0;    // bytes from the archive's start to the image
  int64_t size = 0;      // bytes of the image
  int64_t label = 0;     // from KEY.cls
};

/// Whether a member's extension (after the key's '.', lower-cased) is an image: torchvision's
/// IMG_EXTENSIONS (image_files.h's kImageExtensions) without the dot, which `fastloop pack` writes.
bool shard_image_extension(const std::string& ext);
/// Whether a member's extension is a video container fastloop.VideoFolder lists (mp4, mkv, webm, avi, mov, m4v).
bool shard_video_extension(const std::string& ext);

/// The samples of one tar archive held in memory, grouped as webdataset's group_by_keys does (members
/// in a row whose names share the part before the first '.' of their last path component); members of
/// other extensions (.json, .txt, ...) are ignored. Throws InputError naming `path` (and the key) for a
/// malformed tar, a sample with an image but no .cls or the reverse, two images or two .cls under one
/// key, a class index that is not a whole number in [0, 2^24), or an archive with no sample at all. With
/// `videos`, a sample's member is a video (shard_video_extension) instead of an image (`image` names it).
std::vector<ShardSample> shard_index(std::string_view archive, const std::string& path, bool videos = false);

/// As shard_index, over the first bytes of a shard still arriving: the samples complete in `prefix` (the
/// last key's next members may still come, so its sample waits for them or for the archive's end), no
/// error for the cut, and none for no sample yet. Every sample it gives is the one shard_index gives there.
std::vector<ShardSample> shard_index_prefix(std::string_view prefix, const std::string& path, bool videos = false);

/// Every file a shard pattern names, in order: brace lists ("{a,b}") and zero-padded numeric ranges
/// ("{000000..000099}") expand as webdataset's braceexpand does, several groups as a product.
/// A malformed group, or a pattern naming more than `max_files` files, throws InputError naming the pattern.
constexpr int64_t kShardPatternMaxFiles = 1'000'000;
std::vector<std::string> shard_pattern_expand(const std::string& pattern, int64_t max_files = kShardPatternMaxFiles);

class ShardImages : public EncodedImages {
 public:
  /// Maps and indexes `paths` in order. `shuffled`: the training split (epoch_order imposes
  /// webdataset's order with a `shuffle_buffer`-sample buffer); otherwise samples go in file order.
  ShardImages(std::vector<std::string> paths, bool shuffled, int64_t shuffle_buffer);
  ~ShardImages() override;

  int64_t size() const override { return static_cast<int64_t>(samples_.size()); }
  int64_t label(int64_t i) const override { return samples_[static_cast<size_t>(i)].label; }
  std::string name(int64_t i) const override;
  std::string_view bytes(int64_t i, std::string& scratch) const override;
  std::optional<std::vector<int64_t>> epoch_order(uint64_t seed, int64_t epoch, int64_t rank,
                                                  int64_t world_size) const override;

  /// One more than the largest class index.
  int64_t num_classes() const { return num_classes_; }
  const std::vector<std::string>& paths() const { return paths_; }

 private:
  struct Sample {
    int64_t offset, size;
    int32_t label, shard;
    uint64_t name_at;             // the image member's name in names_
    uint32_t name_size;
  };

  std::vector<std::string> paths_;
  std::vector<std::unique_ptr<MappedFile>> maps_;
  std::vector<Sample> samples_;
  std::vector<int64_t> shard_sizes_;  // samples per shard
  std::string names_;                 // all image member names, back to back
  bool shuffled_;
  int64_t shuffle_buffer_;
  int64_t num_classes_ = 0;
};

/// The splits of a `shards:` spec argument, `arg`:
///   DIR                         DIR/train-*.tar and DIR/val-*.tar, sorted (what `fastloop pack` writes);
///   TRAIN_PATTERN::VAL_PATTERN  e.g. /d/train-{000000..001281}.tar::/d/val-{000000..000049}.tar;
///   TRAIN_PATTERN               the train split only (no evaluation split).
/// Patterns expand as shard_pattern_expand; every file named must exist. `val` is null when there is
/// no evaluation split.
struct ShardSplits {
  std::shared_ptr<ShardImages> train;
  std::shared_ptr<ShardImages> val;
  int64_t num_classes = 0;  // over both splits
  std::vector<std::string> classes;  // classes.txt beside the first train shard, else "0", "1", ...
};
ShardSplits shards_load(const std::string& arg, int64_t shuffle_buffer);

} // namespace fastloop
