// WebDataset shards: indexing a mapped tar into samples, shard patterns, and the ShardImages split.
#include "fastloop/data/sources/shards.h"

#include "fastloop/core/errors.h"
#include "fastloop/data/sources/class_names.h"
#include "fastloop/data/sources/shard_order.h"
#include "fastloop/data/sources/tar.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace fastloop {
namespace {

constexpr int64_t kMaxClasses = int64_t{1} << 24;
// image_files.cpp's kImageExtensions without the dot (a test checks they agree); listed here so that the
// tar fuzz target links without the folder listing.
constexpr const char* kMemberImageExtensions[] = {"jpg", "jpeg", "png", "ppm", "bmp", "pgm", "tif", "tiff", "webp"};
// The containers of fastloop.VideoFolder's VIDEO_EXTENSIONS (video_sources.cpp's), the members of video shards.
constexpr const char* kMemberVideoExtensions[] = {"mp4", "mkv", "webm", "avi", "mov", "m4v"};

int64_t parse_class(std::string_view text, const std::string& where) {
  while (!text.empty() && std::strchr(" \t\r\n", text.front())) text.remove_prefix(1);
  while (!text.empty() && std::strchr(" \t\r\n", text.back())) text.remove_suffix(1);
  int64_t v = 0;
  bool ok = !text.empty() && text.size() <= 9;
  for (char c : text) {
    ok = ok && c >= '0' && c <= '9';
    v = v * 10 + (c - '0');
  }
  if (!ok || v >= kMaxClasses) {
    throw InputError(where + ": the class index must be a whole number in [0, " + std::to_string(kMaxClasses) +
                     "), found '" + std::string(text.substr(0, 40)) + "'");
  }
  return v;
}

// A group of members sharing a key, as it is being collected.
struct Group {
  std::string key;
  const TarMember* image = nullptr;
  const TarMember* cls = nullptr;
};

void flush(const Group& g, std::string_view archive, const std::string& path, bool videos,
           std::vector<ShardSample>& out) {
  if (!g.image && !g.cls) return;
  const std::string where = path + ": sample '" + g.key + "'";
  const std::string kind = videos ? "video" : "image";
  if (!g.cls) throw InputError(where + (videos ? " has a " : " has an ") + kind + " but no " + g.key + ".cls (its class index as text)");
  if (!g.image)
    throw InputError(where + " has a .cls but no " + kind + " (" + g.key + (videos ? ".mp4, .mkv, .webm, ...)" :
                     ".jpg, .png, .webp, ...)"));
  const auto text = archive.substr(static_cast<size_t>(g.cls->offset), static_cast<size_t>(g.cls->size));
  out.push_back({g.key, g.image->name, g.image->offset, g.image->size, parse_class(text, path + ":" + g.cls->name)});
}

[[noreturn]] void fail_pattern(const std::string& pattern, const std::string& why) {
  throw InputError("shard pattern '" + pattern + "': " + why +
                   " (expected e.g. train-{000000..000099}.tar or {train,val}-{0..9}.tar)");
}

bool all_digits(const std::string& s) {
  return !s.empty() && s.size() <= 9 && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The alternatives one brace group stands for: "a,b" or "A..B".
std::vector<std::string> group_items(const std::string& body, const std::string& pattern, int64_t max_files) {
  const size_t dots = body.find("..");
  if (dots != std::string::npos && body.find(',') == std::string::npos) {
    const std::string a = body.substr(0, dots), b = body.substr(dots + 2);
    if (!all_digits(a) || !all_digits(b)) fail_pattern(pattern, "'{" + body + "}' is not a range of whole numbers");
    const int64_t lo = std::stoll(a), hi = std::stoll(b);
    if (std::abs(hi - lo) + 1 > max_files)
      fail_pattern(pattern, "'{" + body + "}' names more than " + std::to_string(max_files) + " files");
    const bool padded = (a.size() > 1 && a[0] == '0') || (b.size() > 1 && b[0] == '0');
    const int width = padded ? static_cast<int>(std::max(a.size(), b.size())) : 0;
    std::vector<std::string> items;
    for (int64_t v = lo;; v += hi >= lo ? 1 : -1) {
      std::string s = std::to_string(v);
      items.push_back(std::string(static_cast<size_t>(std::max<int>(0, width - static_cast<int>(s.size()))), '0') + s);
      if (v == hi) break;
    }
    return items;
  }
  std::vector<std::string> items;
  size_t start = 0;
  for (size_t comma; (comma = body.find(',', start)) != std::string::npos; start = comma + 1)
    items.push_back(body.substr(start, comma - start));
  items.push_back(body.substr(start));
  return items;
}

} // namespace

bool shard_image_extension(const std::string& ext) {
  return std::any_of(std::begin(kMemberImageExtensions), std::end(kMemberImageExtensions),
                     [&](const char* e) { return ext == e; });
}

bool shard_video_extension(const std::string& ext) {
  return std::any_of(std::begin(kMemberVideoExtensions), std::end(kMemberVideoExtensions),
                     [&](const char* e) { return ext == e; });
}

namespace {

// The samples of `members` (of `archive`, named `path`), but the last key's when `last_open`.
std::vector<ShardSample> samples_of(const std::vector<TarMember>& members, std::string_view archive,
                                    const std::string& path, bool last_open, bool videos) {
  std::vector<ShardSample> samples;
  Group group;
  std::string key, ext;
  for (const TarMember& m : members) {
    if (!tar_member_key(m.name, key, ext)) continue;  // no extension: webdataset skips it too
    if (key != group.key) {
      flush(group, archive, path, videos, samples);
      group = Group{key};
    }
    const bool image = videos ? shard_video_extension(ext) : shard_image_extension(ext);
    if (!image && ext != "cls") continue;
    const TarMember*& slot = image ? group.image : group.cls;
    const char* what = !image ? ".cls files" : videos ? "videos" : "images";
    if (slot) throw InputError(path + ": sample '" + key + "' has two " + what +
                               " ('" + slot->name + "' and '" + m.name + "'); one of each per key");
    slot = &m;
  }
  if (!last_open) flush(group, archive, path, videos, samples);
  return samples;
}

} // namespace

std::vector<ShardSample> shard_index(std::string_view archive, const std::string& path, bool videos) {
  std::vector<ShardSample> samples = samples_of(tar_list(archive, path), archive, path, false, videos);
  if (samples.empty() && videos)
    throw InputError(path + ": no samples (KEY.mp4|mkv|webm|avi|mov|m4v with KEY.cls holding the class index); "
                     "is it a WebDataset shard of videos?");
  if (samples.empty())
    throw InputError(path + ": no samples (KEY.jpg|jpeg|png|webp|bmp|ppm|pgm|tif|tiff with KEY.cls holding the class index); "
                     "is it a WebDataset shard? `fastloop pack` writes them from an image folder");
  return samples;
}

std::vector<ShardSample> shard_index_prefix(std::string_view prefix, const std::string& path, bool videos) {
  bool ended = false;
  const std::vector<TarMember> members = tar_list(prefix, path, &ended);
  return samples_of(members, prefix, path, !ended, videos);
}

std::vector<std::string> shard_pattern_expand(const std::string& pattern, int64_t max_files) {
  const size_t open = pattern.find('{');
  if (open == std::string::npos) {
    if (pattern.find('}') != std::string::npos) fail_pattern(pattern, "'}' without '{'");
    return {pattern};
  }
  const size_t close = pattern.find('}', open);
  if (close == std::string::npos) fail_pattern(pattern, "'{' without '}'");
  if (pattern.find('{', open + 1) < close) fail_pattern(pattern, "nested braces");
  const std::string head = pattern.substr(0, open);
  const std::vector<std::string> tails = shard_pattern_expand(pattern.substr(close + 1), max_files);
  std::vector<std::string> out;
  for (const std::string& item : group_items(pattern.substr(open + 1, close - open - 1), pattern, max_files)) {
    for (const std::string& tail : tails) {
      out.push_back(head + item + tail);
      if (static_cast<int64_t>(out.size()) > max_files)
        fail_pattern(pattern, "names more than " + std::to_string(max_files) + " files");
    }
  }
  return out;
}

ShardImages::ShardImages(std::vector<std::string> paths, bool shuffled, int64_t shuffle_buffer)
    : paths_(std::move(paths)), shuffled_(shuffled), shuffle_buffer_(shuffle_buffer) {
  if (paths_.empty()) throw InputError("shards: no shard files given");
  for (size_t s = 0; s < paths_.size(); ++s) {
    maps_.push_back(std::make_unique<MappedFile>(paths_[s]));
    const std::vector<ShardSample> found = shard_index(maps_.back()->view(), paths_[s]);
    shard_sizes_.push_back(static_cast<int64_t>(found.size()));
    for (const ShardSample& x : found) {
      samples_.push_back({x.offset, x.size, static_cast<int32_t>(x.label), static_cast<int32_t>(s),
                          names_.size(), static_cast<uint32_t>(x.image.size())});
      names_ += x.image;
      num_classes_ = std::max(num_classes_, x.label + 1);
    }
  }
}

ShardImages::~ShardImages() = default;

std::string ShardImages::name(int64_t i) const {
  const Sample& s = samples_[static_cast<size_t>(i)];
  return paths_[static_cast<size_t>(s.shard)] + ":" + names_.substr(s.name_at, s.name_size);
}

std::string_view ShardImages::bytes(int64_t i, std::string& scratch) const {
  (void)scratch;  // always a view into the mapping
  const Sample& s = samples_[static_cast<size_t>(i)];
  return maps_[static_cast<size_t>(s.shard)]->view().substr(static_cast<size_t>(s.offset), static_cast<size_t>(s.size));
}

std::optional<std::vector<int64_t>> ShardImages::epoch_order(uint64_t seed, int64_t epoch, int64_t rank,
                                                             int64_t world_size) const {
  if (!shuffled_) return std::nullopt;
  return shard_epoch_order(shard_sizes_, {seed, epoch, rank, world_size, shuffle_buffer_});
}

namespace {

std::vector<std::string> existing_files(const std::string& pattern) {
  std::vector<std::string> paths = shard_pattern_expand(pattern);
  for (const std::string& p : paths) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(p, ec)) throw InputError("shards: '" + p + "' (from '" + pattern + "') is not a file");
  }
  return paths;
}

std::vector<std::string> dir_shards(const std::string& dir, const std::string& prefix) {
  std::vector<std::string> paths;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_regular_file() && name.rfind(prefix, 0) == 0 && name.size() > 4 && name.substr(name.size() - 4) == ".tar")
      paths.push_back(entry.path().string());
  }
  if (ec) throw InputError("shards: cannot list '" + dir + "' (" + ec.message() + ")");
  std::sort(paths.begin(), paths.end());
  return paths;
}

} // namespace

ShardSplits shards_load(const std::string& arg, int64_t shuffle_buffer) {
  std::vector<std::string> train, val;
  std::error_code ec;
  if (std::filesystem::is_directory(arg, ec)) {
    train = dir_shards(arg, "train-");
    val = dir_shards(arg, "val-");
    if (train.empty())
      throw InputError("shards: '" + arg + "' has no train-*.tar shards (write them with `fastloop pack IMAGEDIR " + arg + "`)");
  } else if (const size_t sep = arg.find("::"); sep != std::string::npos) {
    train = existing_files(arg.substr(0, sep));
    val = existing_files(arg.substr(sep + 2));
  } else {
    train = existing_files(arg);
  }
  ShardSplits splits;
  splits.train = std::make_shared<ShardImages>(std::move(train), /*shuffled=*/true, shuffle_buffer);
  splits.num_classes = splits.train->num_classes();
  if (!val.empty()) {
    splits.val = std::make_shared<ShardImages>(std::move(val), /*shuffled=*/false, shuffle_buffer);
    splits.num_classes = std::max(splits.num_classes, splits.val->num_classes());
  }
  const std::string names = std::filesystem::path(splits.train->paths().front()).parent_path() / "classes.txt";
  splits.classes = std::filesystem::exists(names, ec) ? class_names_read(names, splits.num_classes)
                                                     : class_names_numbered(splits.num_classes);
  return splits;
}

} // namespace fastloop
