// The index of a folder of tar shards (DIR/shards.idx, written by `fastloop pack`): per shard its file
// name, bytes, samples and classes. A remote source reads this one small object instead of every shard,
// since the epoch order (shard_order.h) needs each shard's sample count before the first batch: with it,
// s3:// shards give the batches of the same shards on disk without a download of the data set at start.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace fastloop {

constexpr const char* kShardIndexName = "shards.idx";

struct ShardIndexEntry {
  std::string name;      // file name beside the index: train-000000.tar
  int64_t bytes = 0;     // size of the tar file
  int64_t samples = 0;   // samples as shard_index() groups them (without .cls members: as field_groups())
  int64_t classes = 0;   // one more than the shard's largest class index
};

/// The index's text: a header line, then "NAME BYTES SAMPLES CLASSES" per shard.
std::string shard_index_format(const std::vector<ShardIndexEntry>& entries);

/// Parses an index's text. Throws InputError naming `where` and the line for a missing header, a line
/// that is not four fields, a number out of range, a name with '/' or a name listed twice.
std::vector<ShardIndexEntry> shard_index_parse(std::string_view text, const std::string& where);

/// The entry of one shard `archive` (named `name`; `path` for messages): with .cls members, its samples as
/// shard_index() groups them and its classes; without (image-caption shards), its samples as webdataset's
/// group_by_keys groups them (field_groups) and 0 classes. A malformed shard throws InputError naming `path`.
ShardIndexEntry shard_entry(const std::string& name, std::string_view archive, const std::string& path);

/// Indexes every *.tar file in `dir` (sorted by name) and writes DIR/shards.idx (through a temporary
/// file and a rename); returns the entries. A malformed shard throws InputError naming it.
std::vector<ShardIndexEntry> shard_index_write(const std::string& dir);

} // namespace fastloop
