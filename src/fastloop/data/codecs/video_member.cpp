// Videos inside local tar shards (see video_member.h).
#include "fastloop/data/codecs/video_member.h"

#include "fastloop/core/errors.h"
#include "fastloop/data/sources/mapped_file.h"
#include "fastloop/data/sources/tar.h"

#include <sys/stat.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <mutex>
#include <vector>

namespace fastloop {
namespace {

struct Shard {
  ino_t inode;
  VideoSourceStamp stamp;
  MappedFile file;
  std::map<std::string, TarMember, std::less<>> members;
  Shard(const std::string& path, ino_t ino, VideoSourceStamp at) : inode(ino), stamp(at), file(path) {
    for (TarMember& member : tar_list(file.view(), path)) members.emplace(member.name, std::move(member));
  }
};

bool regular_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// The process's shards, each mapped and listed on first use and again when the file was replaced or rewritten
// (another inode, size or mtime); a mapping stays while a member's bytes are in use.
std::shared_ptr<const Shard> shard_of(const std::string& path) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const Shard>> shards;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw InputError(path + ": the shard cannot be read; check the path");
  const VideoSourceStamp stamp{static_cast<int64_t>(st.st_size),
                               static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec};
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto found = shards.find(path);
    if (found != shards.end() && found->second->inode == st.st_ino && found->second->stamp == stamp)
      return found->second;
  }
  auto made = std::make_shared<const Shard>(path, st.st_ino, stamp);
  std::lock_guard<std::mutex> lock(mutex);
  return shards[path] = std::move(made);
}

// The process's sources of shards that are not files, by shard name: those alive, the latest last (two Loaders
// of the same shards: the later one serves both while it lives, the same bytes).
struct Sources {
  std::mutex mutex;
  std::map<std::string, std::vector<std::weak_ptr<const VideoMemberSource>>, std::less<>> by_shard;
};

Sources& sources() {
  static Sources made;
  return made;
}

std::shared_ptr<const VideoMemberSource> source_of(std::string_view shard) {
  Sources& all = sources();
  std::lock_guard<std::mutex> lock(all.mutex);
  auto found = all.by_shard.find(shard);
  if (found == all.by_shard.end()) return nullptr;
  for (auto it = found->second.rbegin(); it != found->second.rend(); ++it)
    if (auto source = it->lock()) return source;
  return nullptr;
}

}  // namespace

void video_member_source_add(const std::string& shard, const std::shared_ptr<const VideoMemberSource>& source) {
  Sources& all = sources();
  std::lock_guard<std::mutex> lock(all.mutex);
  for (auto it = all.by_shard.begin(); it != all.by_shard.end();) {  // forget the sources gone
    auto& live = it->second;
    live.erase(std::remove_if(live.begin(), live.end(), [](const auto& s) { return s.expired(); }), live.end());
    it = live.empty() ? all.by_shard.erase(it) : std::next(it);
  }
  all.by_shard[shard].push_back(source);
}

std::optional<std::pair<std::string, std::string>> video_member_split(const std::string& path) {
  for (size_t slash = path.find(".tar/"); slash != std::string::npos; slash = path.find(".tar/", slash + 1)) {
    const std::string shard = path.substr(0, slash + 4);
    if (regular_file(shard) || source_of(shard)) return std::make_pair(shard, path.substr(slash + 5));
  }
  return std::nullopt;
}

VideoMemberBytes video_member_bytes(const std::string& path) {
  const auto split = video_member_split(path);
  if (!split) throw InputError(path + ": not a member of a .tar shard");
  if (auto source = source_of(split->first)) return source->member_bytes(path);
  std::shared_ptr<const Shard> shard = shard_of(split->first);
  auto found = shard->members.find(split->second);
  if (found == shard->members.end())
    throw InputError(path + ": the shard " + split->first + " has no member " + split->second);
  const std::string_view bytes =
      shard->file.view().substr(static_cast<size_t>(found->second.offset), static_cast<size_t>(found->second.size));
  return {std::move(shard), bytes};
}

std::optional<VideoSourceStamp> video_stamp(const std::string& path) {
  if (std::optional<VideoSourceStamp> stamp = video_source_stamp(path)) return stamp;
  const auto split = video_member_split(path);
  if (!split) return std::nullopt;
  if (auto source = source_of(split->first)) return source->member_stamp(path);
  return video_source_stamp(split->first);
}

} // namespace fastloop
