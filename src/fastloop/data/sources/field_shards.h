// WebDataset tar shards read as samples of named fields (fastloop.Loader(..., fields=("jpg;png", "txt", "json"))):
// a sample is every member sharing a key, as webdataset's group_by_keys makes it, and field f is its member of
// the first extension of f's list that it has (webdataset's to_tuple). The image fields are what the loader's
// workers decode (image field k is part k: parts(), part_bytes()); the others are checked there (present, UTF-8
// text, JSON that parses, whole numbers) so that a bad sample is skipped or named by the bad-image policy, and
// read by the consumer once per batch (field()).
// A sample's "label" is its own index: the batch's labels tell the consumer which samples it holds (after any
// bad one was replaced), so the fields need no slot of their own in the loader's batches.
#pragma once

#include "fastloop/data/sources/encoded_images.h"
#include "fastloop/data/sources/mapped_file.h"
#include "fastloop/data/sources/tar.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace fastloop {

/// What a field becomes: an image to decode, text (UTF-8), JSON, a whole number, or bytes as they are.
enum class FieldKind { kImage, kText, kJson, kInt, kBytes };

/// One field of fastloop.Loader's `fields`: "jpg;png;webp" is {jpg, png, webp} (the first present wins),
/// "json:caption" the JSON member's "caption" value.
struct FieldSpec {
  std::vector<std::string> extensions;  // lower-case, without the dot
  FieldKind kind = FieldKind::kBytes;
  std::string json_key;  // kJson: the key whose value the field is (empty: the whole document)
  std::string name;      // as given, for messages: "jpg;png", "json:caption"
};

struct FieldShardOptions {
  bool shuffled = true;           // webdataset's epoch order (shard_order.h); otherwise file order
  int64_t shuffle_buffer = 2048;  // samples
  bool resampled = false;         // shards drawn with replacement per rank (webdataset's resampled=True)
};

class FieldShards : public EncodedImages {
 public:
  /// Maps and indexes `paths` in order. `fields` must hold an image field (several: one part each). A malformed
  /// tar, or a shard with no
  /// sample, throws InputError naming it; samples that lack a field are named when read (bytes()).
  FieldShards(std::vector<std::string> paths, std::vector<FieldSpec> fields, FieldShardOptions options);
  ~FieldShards() override;

  int64_t size() const override { return static_cast<int64_t>(samples_.size()); }
  int64_t label(int64_t i) const override { return i; }
  /// "SHARD.tar:KEY"
  std::string name(int64_t i) const override;
  /// The first image field's bytes, once every field of sample i passed its check; InputError naming the shard,
  /// the key and the field otherwise.
  std::string_view bytes(int64_t i, std::string& scratch) const override;
  /// One per image field.
  int64_t parts() const override { return static_cast<int64_t>(image_fields_.size()); }
  /// Image field `part`'s member (part 0: bytes()).
  std::string_view part_bytes(int64_t i, int64_t part, std::string& scratch) const override;
  std::optional<std::vector<int64_t>> epoch_order(uint64_t seed, int64_t epoch, int64_t rank,
                                                  int64_t world_size) const override;

  const std::vector<FieldSpec>& fields() const { return fields_; }
  /// Field f's member of sample i, as bytes() checked it (a view into the mapping); nullopt when it has none.
  std::optional<std::string_view> field(int64_t i, size_t f) const;
  /// The sample's key (webdataset's __key__).
  std::string key(int64_t i) const;
  /// One more than the largest whole number among field f's members (a .cls field: its classes); 0 when none
  /// has one. Members that are missing or not whole numbers are left out (the workers name those samples).
  int64_t num_classes(size_t f) const;

 private:
  struct Sample {
    int32_t shard;
    uint32_t key_size;
    uint64_t key_at;  // in keys_
  };
  struct Member {
    int64_t offset = 0;
    int64_t size = -1;  // -1: the sample has no member for this field
  };

  void index_shard(size_t s);

  std::vector<std::string> paths_;
  std::vector<FieldSpec> fields_;
  FieldShardOptions options_;
  std::vector<size_t> image_fields_;  // the fields the workers decode, in order: part k is image_fields_[k]
  std::vector<std::unique_ptr<MappedFile>> maps_;
  std::vector<Sample> samples_;
  std::vector<Member> members_;       // sample i's field f: members_[i * fields_.size() + f]
  std::vector<int64_t> shard_sizes_;  // samples per shard
  std::string keys_;
};

/// One sample of an archive as webdataset's group_by_keys makes it: its key and, per field, its member.
struct FieldGroup {
  std::string key;
  std::vector<std::pair<int64_t, int64_t>> members;  // per field: (offset, size); size -1: the sample has none
};

/// The samples of an archive's `members` (tar_list), each field's member picked by its list of extensions: members
/// in a row with one key (a repeated extension starts another sample), `__*__` members and names without an
/// extension skipped. `last_open`: the members are a prefix of an archive still arriving, so the last key's sample
/// (whose next members may still come) is left out. With no `fields`, the samples' count and keys.
std::vector<FieldGroup> field_groups(const std::vector<TarMember>& members, const std::vector<FieldSpec>& fields,
                                     bool last_open = false);

/// The positions of the image fields among `fields`, in order (each a part of the sample's images); InputError
/// when there is none.
std::vector<size_t> field_images(const std::vector<FieldSpec>& fields);

/// Why `data`, a sample's member for `field`, is unusable (not UTF-8 text, JSON that does not parse or lacks the
/// picked key, not a whole number); empty when it is fine.
std::string field_problem(const FieldSpec& field, std::string_view data);

/// The fields of a spec: "jpg;png;webp", "txt", "json", "json:caption", "cls", any other extension (bytes).
/// InputError for an empty one, or a "json:" whose list names another extension.
FieldSpec field_spec_parse(const std::string& text);

}  // namespace fastloop
