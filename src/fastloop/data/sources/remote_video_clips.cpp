// Video clips from remote tar shards (see remote_video_clips.h).
#include "fastloop/data/sources/remote_video_clips.h"

#include "fastloop/core/errors.h"
#include "fastloop/data/sources/remote_video_members.h"

#include <utility>

namespace fastloop {
namespace {

// The members' source, registered under each shard's URL before the clips are made (they check their videos).
std::shared_ptr<const RemoteVideoMembers> members_registered(const std::shared_ptr<RemoteShardImages>& shards) {
  auto members = std::make_shared<const RemoteVideoMembers>(shards);
  for (const RemoteUrl& url : shards->urls()) video_member_source_add(url.text, members);
  return members;
}

const VideoClipOptions& remote_checked(const VideoClipOptions& options) {
  if (options.timestamps && !options.random)
    throw InputError("video shards from s3:// or http(s)://: sampler='regular_timestamps' needs every video's "
                     "duration when the data set is made, which would fetch every shard first; use 'regular', "
                     "'random' or 'random_timestamps', or read local copies of the shards");
  return options;
}

}  // namespace

std::vector<std::string> remote_video_names(const RemoteShardImages& shards) {
  std::vector<std::string> names;
  const std::vector<int64_t>& starts = shards.shard_starts();
  for (size_t s = 0; s < shards.urls().size(); ++s)
    for (int64_t k = 0; k < starts[s + 1] - starts[s]; ++k) names.push_back(shards.urls()[s].text + "/#" + std::to_string(k));
  return names;
}

RemoteVideoClips::RemoteVideoClips(std::shared_ptr<RemoteShardImages> shards, VideoClipOptions options)
    : RemoteVideoClips(shards, members_registered(shards), remote_checked(options)) {}

RemoteVideoClips::RemoteVideoClips(std::shared_ptr<RemoteShardImages> shards,
                                   std::shared_ptr<const RemoteVideoMembers> members, VideoClipOptions options)
    : VideoClips(remote_video_names(*shards), std::vector<int64_t>(static_cast<size_t>(shards->size()), 0),
                 std::move(options)),
      shards_(std::move(shards)),
      members_(std::move(members)) {}

int64_t RemoteVideoClips::label(int64_t i) const { return shards_->label(video_of(i)); }

std::optional<std::vector<int64_t>> RemoteVideoClips::epoch_order(uint64_t seed, int64_t epoch, int64_t rank,
                                                                  int64_t world_size) const {
  std::optional<std::vector<int64_t>> videos = shards_->epoch_order(seed, epoch, rank, world_size);
  if (!videos) return std::nullopt;
  std::vector<int64_t> order;
  for (const int64_t v : *videos)
    for (int64_t i = clips_before(v); i < clips_before(v + 1); ++i) order.push_back(i);
  // Each rank gets ceil(videos / ranks) videos; with several clips a video, the loader's share of clips,
  // ceil(clips / ranks), may be fewer (the last clips go) or more (the rank's first clips again).
  const auto share = static_cast<size_t>((size() + world_size - 1) / world_size);
  for (size_t k = 0; !order.empty() && order.size() < share; ++k) order.push_back(order[k]);
  order.resize(share);
  return order;
}

void RemoteVideoClips::reads_planned(const std::vector<int64_t>& indices, size_t from) const {
  std::vector<int64_t> videos;  // one read a video: its next clips are served from the bytes held
  for (size_t k = from; k < indices.size(); ++k) {
    const int64_t v = video_of(indices[k]);
    if (videos.empty() || videos.back() != v) videos.push_back(v);
  }
  shards_->reads_planned(videos, 0);
}

void RemoteVideoClips::reads_cancelled(bool cancelled) const { shards_->reads_cancelled(cancelled); }

RemoteVideoSplit remote_video_clips_load(const std::string& spec, const VideoClipOptions& clip,
                                         RemoteShardOptions options) {
  options.videos = true;
  options.shuffled = true;  // the Loader's shuffle decides whether the epoch takes this order
  RemoteShardSplits splits = remote_shards_load(spec, options);
  RemoteVideoSplit split;
  split.clips = std::make_shared<RemoteVideoClips>(std::move(splits.train), clip);
  split.num_classes = splits.num_classes;
  split.classes = std::move(splits.classes);
  return split;
}

} // namespace fastloop
