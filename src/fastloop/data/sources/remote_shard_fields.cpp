// Remote tar shards read as samples of fields (fastloop.Loader("shards:s3://...", fields=...)): a shard's samples
// grouped as FieldShards groups them, each sample's fields checked when a worker reads it, and its other fields
// kept until the consumer reads them by the batch's indices (see remote_shards.h).
#include "fastloop/data/sources/remote_shards.h"

#include "fastloop/core/errors.h"
#include "fastloop/data/sources/shards.h"

#include <algorithm>

namespace fastloop {

void RemoteShardImages::fields_setup() {
  const std::vector<FieldSpec>& fields = options_.fields;
  if (fields.empty()) return;
  image_fields_ = field_images(fields);
  for (size_t f = 0; f < fields.size(); ++f)
    if (fields[f].kind != FieldKind::kImage) last_other_field_ = f;
}

// The samples of a shard's bytes (`arriving`: the part arrived so far, its last sample left out while it may grow).
std::vector<RemoteShardImages::Meta> RemoteShardImages::listed(std::string_view data, const std::string& where,
                                                               bool arriving) const {
  std::vector<Meta> meta;
  if (options_.fields.empty()) {
    for (const ShardSample& x : arriving ? shard_index_prefix(data, where, options_.videos)
                                              : shard_index(data, where, options_.videos))
      meta.push_back({x.offset, x.size, x.label, x.image, {}});
    return meta;
  }
  bool ended = false;
  const std::vector<TarMember> members = tar_list(data, where, arriving ? &ended : nullptr);
  for (FieldGroup& g : field_groups(members, options_.fields, arriving && !ended)) {
    const auto [offset, size] = g.members[image_fields_[0]];
    meta.push_back({offset, size, -1, std::move(g.key), std::move(g.members)});
  }
  if (!arriving && meta.empty())
    throw InputError(where + ": no samples (members named KEY.EXT); is it a WebDataset shard?");
  return meta;
}

// Sample i (in shard s, listed as `m`, its bytes at `base`; null: the shard was dropped, so the sample's span is
// fetched alone): its fields checked, the others (and the other image fields) kept for field() and part_bytes(),
// the first image's bytes in `scratch`.
std::string_view RemoteShardImages::sample_fields(int64_t i, int64_t s, const Meta& m, const char* base,
                                                  std::string& scratch) const {
  const std::vector<FieldSpec>& fields = options_.fields;
  const std::string where = urls_[static_cast<size_t>(s)].text + ":" + m.image;
  for (size_t f = 0; f < fields.size(); ++f)
    if (m.fields[f].second < 0)
      throw InputError(where + ": the sample has no ." + fields[f].name + " member (fields asked for it; "
                       "bad_image_policy='skip' skips such samples)");
  std::string span;
  if (!base) {  // one Range request over the sample's members
    int64_t begin = m.fields[0].first, end = 0;
    for (const auto& [offset, size] : m.fields) begin = std::min(begin, offset), end = std::max(end, offset + size);
    sample_alone(s, {begin, end - begin, -1, m.image, {}}, span);
    base = span.data() - begin;
  }
  Kept kept;
  kept.values.resize(fields.size());
  for (size_t f = 0; f < fields.size(); ++f) {
    const std::string_view data(base + m.fields[f].first, static_cast<size_t>(m.fields[f].second));
    const std::string why = field_problem(fields[f], data);
    if (!why.empty())
      throw InputError(where + ": its field '" + fields[f].name + "' " + why +
                       " (bad_image_policy='skip' skips such samples)");
    if (f != image_fields_[0]) kept.values[f] = data;
  }
  const auto& [offset, size] = m.fields[image_fields_[0]];
  scratch.assign(base + offset, static_cast<size_t>(size));
  if (fields.size() > 1) {
    std::lock_guard<std::mutex> lock(kept_mutex_);
    Kept& slot = kept_[i];
    if (slot.reads++ == 0) slot.values = std::move(kept.values);
  }
  return scratch;
}

std::string RemoteShardImages::field(int64_t i, size_t f) const {
  std::lock_guard<std::mutex> lock(kept_mutex_);
  const auto it = kept_.find(i);
  if (it == kept_.end() || f >= it->second.values.size() || options_.fields[f].kind == FieldKind::kImage)
    throw InputError("remote shards: sample " + std::to_string(i) + "'s field " + std::to_string(f) +
                     " was not read by the loader's workers (or was already taken)");
  std::string value = it->second.values[f];
  if (f == last_other_field_ && --it->second.reads == 0) kept_.erase(it);
  return value;
}

std::string_view RemoteShardImages::part_bytes(int64_t i, int64_t part, std::string& scratch) const {
  if (part == 0) return bytes(i, scratch);
  const size_t f = image_fields_.at(static_cast<size_t>(part));
  std::lock_guard<std::mutex> lock(kept_mutex_);
  const auto it = kept_.find(i);
  if (it == kept_.end())
    throw InputError("remote shards: sample " + std::to_string(i) + "'s image field " + std::to_string(f) +
                     " was not read by the loader's workers (part 0 first)");
  scratch = it->second.values[f];
  if (!last_other_field_ && part + 1 == parts() && --it->second.reads == 0) kept_.erase(it);
  return scratch;
}

void RemoteShardImages::read_dropped(int64_t i, int64_t parts_read) const {
  // bytes() kept nothing when it threw (parts_read 0); reading the last image part released a sample whose
  // fields are all images
  if (options_.fields.size() < 2 || parts_read == 0 || (!last_other_field_ && parts_read == parts())) return;
  std::lock_guard<std::mutex> lock(kept_mutex_);
  const auto it = kept_.find(i);
  if (it != kept_.end() && --it->second.reads == 0) kept_.erase(it);
}

int64_t RemoteShardImages::kept() const {
  std::lock_guard<std::mutex> lock(kept_mutex_);
  return static_cast<int64_t>(kept_.size());
}

}  // namespace fastloop
