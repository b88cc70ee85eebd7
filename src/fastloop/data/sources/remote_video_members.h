// The members of remote video shards as video_member.h serves them (remote_video_clips.h): "URL/#K" is video K of
// the shard at URL, its bytes those RemoteShardImages gives (fetched with its read-ahead, or waited for), copied
// once per video and held for the next clips of it (a few hundred MiB at most, least recently used first). A
// video asked for by two threads at once is fetched once. Its stamp, which keys its cached frame index
// (video_index_file.h), is its size and a 64-bit checksum of its bytes (CRC-32 and Adler-32): a shard rewritten on
// the server, even to the same size, never reuses a stale index, and no other request (HEAD, ETag) is needed.
#pragma once

#include "fastloop/data/codecs/video_member.h"
#include "fastloop/data/sources/remote_shards.h"

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>

namespace fastloop {

class RemoteVideoMembers : public VideoMemberSource {
 public:
  explicit RemoteVideoMembers(std::shared_ptr<RemoteShardImages> shards);

  VideoMemberBytes member_bytes(const std::string& path) const override;
  VideoSourceStamp member_stamp(const std::string& path) const override;

  /// The video (sample of the shards) `path` names; InputError for a name that is not "URL/#K" of these shards.
  int64_t video_of(const std::string& path) const;

  static constexpr int64_t kHeldBytes = int64_t{256} << 20;  // videos' bytes held for their next clips

 private:
  struct Held {
    std::shared_ptr<const std::string> bytes;
    VideoSourceStamp stamp;
  };
  Held held(int64_t video) const;

  std::shared_ptr<RemoteShardImages> shards_;
  std::unordered_map<std::string, int64_t> shard_of_url_;
  mutable std::mutex mutex_;
  mutable std::condition_variable arrived_;
  mutable std::unordered_map<int64_t, Held> held_;
  mutable std::deque<int64_t> held_order_;  // least recently fetched first
  mutable int64_t held_bytes_ = 0;
  mutable std::set<int64_t> loading_;        // videos a thread is fetching
  mutable std::unordered_map<int64_t, VideoSourceStamp> stamps_;  // of every video fetched
};

} // namespace fastloop
