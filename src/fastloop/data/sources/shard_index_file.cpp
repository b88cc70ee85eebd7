// DIR/shards.idx: per-shard sample counts, written beside the shards and read by remote sources.
#include "fastloop/data/sources/shard_index_file.h"

#include "fastloop/core/errors.h"
#include "fastloop/data/sources/field_shards.h"
#include "fastloop/data/sources/shards.h"
#include "fastloop/data/sources/tar.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace fastloop {
namespace {

constexpr const char* kHeader = "# fastloop shard index 1: NAME BYTES SAMPLES CLASSES";
constexpr int64_t kMaxNumber = int64_t{1} << 50;

bool parse_number(const std::string& text, int64_t& value) {
  if (text.empty() || text.size() > 16) return false;
  value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + (c - '0');
  }
  return value < kMaxNumber;
}

} // namespace

std::string shard_index_format(const std::vector<ShardIndexEntry>& entries) {
  std::string out = std::string(kHeader) + "\n";
  for (const ShardIndexEntry& e : entries)
    out += e.name + " " + std::to_string(e.bytes) + " " + std::to_string(e.samples) + " " + std::to_string(e.classes) + "\n";
  return out;
}

std::vector<ShardIndexEntry> shard_index_parse(std::string_view text, const std::string& where) {
  const std::string rerun = "; rewrite it with `fastloop pack --index-only DIR`";
  std::vector<ShardIndexEntry> entries;
  std::set<std::string> seen;
  int64_t number = 0;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    std::string line(text.substr(0, end));
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::string at = where + ": line " + std::to_string(number) + ": ";
    if (number == 1) {
      if (line != kHeader) throw InputError(at + "not a fastloop shard index (expected '" + kHeader + "')" + rerun);
      continue;
    }
    if (line.empty()) continue;
    std::istringstream fields(line);
    ShardIndexEntry e;
    std::string bytes, samples, classes, extra;
    fields >> e.name >> bytes >> samples >> classes;
    const bool ok = !classes.empty() && !(fields >> extra) && parse_number(bytes, e.bytes) &&
                    parse_number(samples, e.samples) && parse_number(classes, e.classes) && e.samples > 0;
    if (!ok) throw InputError(at + "expected 'NAME BYTES SAMPLES CLASSES' (whole numbers, SAMPLES > 0)" + rerun);
    if (e.name.find('/') != std::string::npos) throw InputError(at + "a shard's name has no '/'" + rerun);
    if (!seen.insert(e.name).second) throw InputError(at + "'" + e.name + "' is listed twice" + rerun);
    entries.push_back(std::move(e));
  }
  if (number == 0) throw InputError(where + ": empty; not a fastloop shard index" + rerun);
  return entries;
}

ShardIndexEntry shard_entry(const std::string& name, std::string_view archive, const std::string& path) {
  ShardIndexEntry e{name, static_cast<int64_t>(archive.size()), 0, 0};
  std::vector<TarMember> members = tar_list(archive, path);  // a malformed tar throws here
  const bool classes = std::any_of(members.begin(), members.end(), [](const TarMember& m) {
    return m.name.size() > 4 && m.name.compare(m.name.size() - 4, 4, ".cls") == 0;
  });
  if (!classes) {  // image-caption (or other field) shards: their samples as webdataset groups them
    e.samples = static_cast<int64_t>(field_groups(members, {}).size());
    if (e.samples == 0) throw InputError(path + ": no samples (members named KEY.EXT); is it a WebDataset shard?");
    return e;
  }
  const bool videos = std::any_of(members.begin(), members.end(), [](const TarMember& m) {  // video shards
    std::string key, ext;
    return tar_member_key(m.name, key, ext) && shard_video_extension(ext);
  });
  const std::vector<ShardSample> samples = shard_index(archive, path, videos);
  e.samples = static_cast<int64_t>(samples.size());
  for (const ShardSample& s : samples) e.classes = std::max(e.classes, s.label + 1);
  return e;
}

std::vector<ShardIndexEntry> shard_index_write(const std::string& dir) {
  std::vector<std::filesystem::path> tars;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec))
    if (entry.is_regular_file() && entry.path().extension() == ".tar") tars.push_back(entry.path());
  if (ec) throw InputError("shard index: cannot list '" + dir + "' (" + ec.message() + ")");
  std::sort(tars.begin(), tars.end());
  std::vector<ShardIndexEntry> entries;
  for (const auto& path : tars) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream all;
    all << in.rdbuf();
    if (!in) throw InputError(path.string() + ": cannot be read");
    const std::string archive = all.str();
    entries.push_back(shard_entry(path.filename().string(), archive, path.string()));
  }
  const std::string target = (std::filesystem::path(dir) / kShardIndexName).string();
  const std::string temp = target + ".tmp";
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out << shard_index_format(entries);
    if (!out.good()) throw InputError("shard index: cannot write " + temp);
  }
  std::filesystem::rename(temp, target, ec);
  if (ec) throw InputError("shard index: cannot rename " + temp + " to " + target + " (" + ec.message() + ")");
  return entries;
}

} // namespace fastloop
