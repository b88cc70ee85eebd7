// Video clips from tar shards in object storage or on a web server (fastloop.video_shards("s3://B/train-{0..9}.tar"),
// http(s):// alike): the shards are fetched by remote image shards' machinery (RemoteShardImages with `videos`:
// shards.idx for the video counts, read-ahead in the epoch's order, the cache folder and its eviction, Range
// requests for a dropped shard's stragglers), and each video is decoded from its member's bytes as a local
// shard's member is (video_member.h), through a VideoMemberSource registered under each shard's URL. Before its
// shard arrives a video is named by its place, "URL/#K" (the shard's K-th video); errors name the URL.
//
// The train split (shuffle on) reads in webdataset's order, as remote image shards do: shards shuffled per epoch
// and split across ranks, videos through the shuffle buffer, each video's clips one after the other (one fetch
// and one decoder serve them all). Shuffle off: the videos in shard order.
#pragma once

#include "fastloop/data/sources/remote_shards.h"
#include "fastloop/data/sources/video_clips.h"

#include <memory>
#include <string>
#include <vector>

namespace fastloop {

class RemoteVideoMembers;  // the VideoMemberSource of the shards (remote_video_members.h)

class RemoteVideoClips : public VideoClips {
 public:
  /// The clips of the videos of `shards` (made with RemoteShardOptions::videos); InputError for
  /// clips_at_regular_timestamps, whose clip counts need every video's duration before the first batch.
  RemoteVideoClips(std::shared_ptr<RemoteShardImages> shards, VideoClipOptions options);

  /// From the video's .cls member: waits for its shard when it has not arrived.
  int64_t label(int64_t i) const override;
  std::optional<std::vector<int64_t>> epoch_order(uint64_t seed, int64_t epoch, int64_t rank,
                                                  int64_t world_size) const override;
  void reads_planned(const std::vector<int64_t>& indices, size_t from) const override;
  void reads_cancelled(bool cancelled) const override;

  const RemoteShardImages& shards() const { return *shards_; }

 private:
  RemoteVideoClips(std::shared_ptr<RemoteShardImages> shards, std::shared_ptr<const RemoteVideoMembers> members,
                   VideoClipOptions options);

  std::shared_ptr<RemoteShardImages> shards_;
  std::shared_ptr<const RemoteVideoMembers> members_;  // registered under each shard's URL while this lives
};

/// One split of remote video shards and its classes (classes.txt beside the first shard, else numbered).
struct RemoteVideoSplit {
  std::shared_ptr<RemoteVideoClips> clips;
  int64_t num_classes = 0;
  std::vector<std::string> classes;
};

/// `spec`: a brace pattern of shard URLs (s3://B/train-{000000..000009}.tar), or a URL folder whose shards.idx
/// lists train-*.tar shards (those are the split). `options.videos` and `shuffled` are set here. InputError (as
/// remote_shards_load) for a missing shards.idx, a shard it does not list, a bad URL or credentials.
RemoteVideoSplit remote_video_clips_load(const std::string& spec, const VideoClipOptions& clip,
                                         RemoteShardOptions options);

/// The names of the videos of `shards` by their place, "URL/#K", in sample order (what the clips' paths are).
std::vector<std::string> remote_video_names(const RemoteShardImages& shards);

} // namespace fastloop
