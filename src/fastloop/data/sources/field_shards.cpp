// FieldShards: tar shards indexed into samples of fields (webdataset's group_by_keys + to_tuple), checked by the
// workers, read by the consumer. Each shard is mapped read-only (mapped_file.h), as shards.cpp maps its shards.
#include "fastloop/data/sources/field_shards.h"

#include "fastloop/core/errors.h"
#include "fastloop/core/text.h"
#include "fastloop/data/sources/field_values.h"
#include "fastloop/data/sources/shard_order.h"
#include "fastloop/data/sources/shards.h"
#include "fastloop/data/sources/tar.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <random>
#include <unordered_map>

namespace fastloop {
namespace {

bool one_of(const std::string& ext, std::initializer_list<const char*> names) {
  return std::any_of(names.begin(), names.end(), [&](const char* n) { return ext == n; });
}

// What webdataset's default decoders make of an extension (autodecode.py's lists), by its last part, as they
// look at it ("seg.png" is an image, "meta.json" JSON).
FieldKind kind_of(const std::string& extension) {
  const std::string ext = extension.substr(extension.rfind('.') + 1);
  if (shard_image_extension(ext)) return FieldKind::kImage;
  if (one_of(ext, {"txt", "text", "transcript"})) return FieldKind::kText;
  if (one_of(ext, {"json", "jsn"})) return FieldKind::kJson;
  if (one_of(ext, {"cls", "cls2", "class", "count", "index", "inx", "id"})) return FieldKind::kInt;
  return FieldKind::kBytes;
}

}  // namespace

FieldSpec field_spec_parse(const std::string& text) {
  FieldSpec spec;
  spec.name = text;
  std::string list = text;
  if (const size_t colon = text.find(':'); colon != std::string::npos) {
    list = text.substr(0, colon);
    spec.json_key = text.substr(colon + 1);
    if (spec.json_key.empty()) throw InputError("fields: '" + text + "' has nothing after ':' (json:KEY picks a key)");
  }
  size_t start = 0;
  for (size_t semi;; start = semi + 1) {
    semi = list.find(';', start);
    std::string ext = ascii_lower(list.substr(start, semi == std::string::npos ? std::string::npos : semi - start));
    if (!ext.empty() && ext.front() == '.') ext.erase(0, 1);
    if (ext.empty()) throw InputError("fields: '" + text + "' has an empty extension (e.g. \"jpg;png\", \"txt\")");
    spec.extensions.push_back(ext);
    if (semi == std::string::npos) break;
  }
  spec.kind = kind_of(spec.extensions.front());
  for (const std::string& ext : spec.extensions) {
    const FieldKind kind = kind_of(ext);
    if (kind != spec.kind && !(spec.kind != FieldKind::kImage && kind != FieldKind::kImage))
      throw InputError("fields: '" + text + "' mixes image and other extensions; give them as separate fields");
  }
  if (!spec.json_key.empty() && spec.kind != FieldKind::kJson)
    throw InputError("fields: '" + text + "': a key (':" + spec.json_key + "') is picked from a .json field only");
  return spec;
}

FieldShards::FieldShards(std::vector<std::string> paths, std::vector<FieldSpec> fields, FieldShardOptions options)
    : paths_(std::move(paths)), fields_(std::move(fields)), options_(options) {
  if (paths_.empty()) throw InputError("shards: no shard files given");
  image_fields_ = field_images(fields_);
  for (size_t s = 0; s < paths_.size(); ++s) index_shard(s);
}

FieldShards::~FieldShards() = default;

std::vector<FieldGroup> field_groups(const std::vector<TarMember>& members, const std::vector<FieldSpec>& fields,
                                     bool last_open) {
  std::vector<FieldGroup> out;
  std::string key, ext, current;
  std::unordered_map<std::string, const TarMember*> group;
  const auto flush = [&] {
    if (group.empty()) return;
    FieldGroup sample{current, {}};
    for (const FieldSpec& field : fields) {
      std::pair<int64_t, int64_t> picked{0, -1};
      for (const std::string& e : field.extensions) {
        const auto found = group.find(e);
        if (found == group.end()) continue;
        picked = {found->second->offset, found->second->size};
        break;
      }
      sample.members.push_back(picked);
    }
    out.push_back(std::move(sample));
    group.clear();
  };
  for (const TarMember& m : members) {
    if (!tar_member_key(m.name, key, ext)) continue;  // no extension: webdataset skips it too
    const size_t slash = m.name.rfind('/');
    if (m.name.compare(slash == std::string::npos ? 0 : slash + 1, 2, "__") == 0) continue;  // __meta__ files
    if (key != current || group.count(ext)) {
      flush();
      current = key;
    }
    group.emplace(ext, &m);
  }
  if (!last_open) flush();
  return out;
}

std::vector<size_t> field_images(const std::vector<FieldSpec>& fields) {
  std::vector<size_t> out;
  for (size_t f = 0; f < fields.size(); ++f)
    if (fields[f].kind == FieldKind::kImage) out.push_back(f);
  if (out.empty())
    throw InputError("fields: none of them is an image (\"jpg;png;webp\", ...); the loader decodes one per sample");
  return out;
}

std::string field_problem(const FieldSpec& field, std::string_view data) {
  switch (field.kind) {
    case FieldKind::kText:
      return field_utf8_valid(data) ? "" : "is not UTF-8 text";
    case FieldKind::kJson:
      return field_json_check(data, field.json_key);
    case FieldKind::kInt:
      return field_int_parse(data) ? "" : "is not a whole number";
    default:
      return "";
  }
}

// Shard s's samples (field_groups).
void FieldShards::index_shard(size_t s) {
  maps_.push_back(std::make_unique<MappedFile>(paths_[s]));
  const std::vector<FieldGroup> groups = field_groups(tar_list(maps_.back()->view(), paths_[s]), fields_);
  if (groups.empty())
    throw InputError(paths_[s] + ": no samples (members named KEY.EXT); is it a WebDataset shard?");
  for (const FieldGroup& g : groups) {
    samples_.push_back({static_cast<int32_t>(s), static_cast<uint32_t>(g.key.size()), keys_.size()});
    keys_ += g.key;
    for (const auto& [offset, size] : g.members) members_.push_back({offset, size});
  }
  shard_sizes_.push_back(static_cast<int64_t>(groups.size()));
}

std::string FieldShards::key(int64_t i) const {
  const Sample& sample = samples_[static_cast<size_t>(i)];
  return keys_.substr(sample.key_at, sample.key_size);
}

int64_t FieldShards::num_classes(size_t f) const {
  int64_t out = 0;
  for (int64_t i = 0; i < size(); ++i)
    if (const std::optional<std::string_view> data = field(i, f))
      out = std::max(out, field_int_parse(*data).value_or(-1) + 1);
  return out;
}

std::string FieldShards::name(int64_t i) const {
  return paths_[static_cast<size_t>(samples_[static_cast<size_t>(i)].shard)] + ":" + key(i);
}

std::optional<std::string_view> FieldShards::field(int64_t i, size_t f) const {
  const Member& m = members_[static_cast<size_t>(i) * fields_.size() + f];
  if (m.size < 0) return std::nullopt;
  const Sample& sample = samples_[static_cast<size_t>(i)];
  return maps_[static_cast<size_t>(sample.shard)]->view().substr(static_cast<size_t>(m.offset),
                                                                 static_cast<size_t>(m.size));
}

std::string_view FieldShards::bytes(int64_t i, std::string& scratch) const {
  (void)scratch;  // always a view into the mapping
  for (size_t f = 0; f < fields_.size(); ++f) {
    const std::optional<std::string_view> data = field(i, f);
    if (!data)
      throw InputError(name(i) + ": the sample has no ." + fields_[f].name + " member (fields asked for it; "
                       "bad_image_policy='skip' skips such samples)");
    const std::string why = field_problem(fields_[f], *data);
    if (!why.empty())
      throw InputError(name(i) + ": its field '" + fields_[f].name + "' " + why +
                       " (bad_image_policy='skip' skips such samples)");
  }
  return *field(i, image_fields_[0]);
}

std::string_view FieldShards::part_bytes(int64_t i, int64_t part, std::string& scratch) const {
  if (part == 0) return bytes(i, scratch);
  const size_t f = image_fields_.at(static_cast<size_t>(part));
  const std::optional<std::string_view> data = field(i, f);
  if (!data) throw InputError(name(i) + ": the sample has no ." + fields_[f].name + " member");  // bytes() did
  return *data;
}

std::optional<std::vector<int64_t>> FieldShards::epoch_order(uint64_t seed, int64_t epoch, int64_t rank,
                                                             int64_t world_size) const {
  if (!options_.shuffled) return std::nullopt;
  if (!options_.resampled)
    return shard_epoch_order(shard_sizes_, {seed, epoch, rank, world_size, options_.shuffle_buffer});
  // Resampled: this rank draws shards with replacement (its own stream, as webdataset's ResampledShards per
  // node) until it has its share of an epoch, reads them through the shuffle buffer, and keeps that share.
  const int64_t share = (size() + world_size - 1) / world_size;
  std::seed_seq seeds{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32), static_cast<uint32_t>(epoch),
                      static_cast<uint32_t>(static_cast<uint64_t>(epoch) >> 32), static_cast<uint32_t>(rank), 0x7e5au};
  std::mt19937_64 rng(seeds);  // seed_seq's mixing is specified: the same draws on every platform
  std::vector<int64_t> first(shard_sizes_.size() + 1, 0);
  for (size_t s = 0; s < shard_sizes_.size(); ++s) first[s + 1] = first[s] + shard_sizes_[s];
  std::vector<int64_t> drawn, drawn_sizes;
  for (int64_t have = 0; have < share;) {
    const auto s = static_cast<size_t>(rng() % shard_sizes_.size());
    drawn.push_back(static_cast<int64_t>(s));
    drawn_sizes.push_back(shard_sizes_[s]);
    have += shard_sizes_[s];
  }
  std::vector<int64_t> drawn_first(drawn.size() + 1, 0);
  for (size_t d = 0; d < drawn.size(); ++d) drawn_first[d + 1] = drawn_first[d] + drawn_sizes[d];
  const std::vector<int64_t> order =
      shard_epoch_order(drawn_sizes, {seed ^ 0x7e5a7e5aULL, epoch, 0, 1, options_.shuffle_buffer});
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(share));
  for (size_t k = 0; k < order.size() && static_cast<int64_t>(out.size()) < share; ++k) {
    const auto d = static_cast<size_t>(std::upper_bound(drawn_first.begin(), drawn_first.end(), order[k]) -
                                       drawn_first.begin() - 1);
    out.push_back(first[static_cast<size_t>(drawn[d])] + (order[k] - drawn_first[d]));
  }
  return out;
}

}  // namespace fastloop
