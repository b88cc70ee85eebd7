// Videos inside local tar shards (WebDataset's layout: KEY.mp4 beside KEY.cls), named as a path through the
// shard, "DIR/train-000000.tar/KEY.mp4", as zipfile.Path names a zip's members: a path whose leading part is a
// regular file ending in .tar names the member of that archive. Everything that reads videos by path (the frame
// index and its cache, the readers) takes such a name; the video's bytes are read in place from a mapping of the
// shard (mapped and listed once, and again when the shard is replaced), through an AVIOContext
// (video_input.h). Shards that are not local files, remote shards (remote_video_clips.h), serve their members
// through a VideoMemberSource registered under the shard's URL: "s3://B/train-000000.tar/#3" is its fourth video.
#pragma once

#include "fastloop/data/codecs/video_index_file.h"

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace fastloop {

/// (shard, member name) of a path that names a member of a local .tar shard, or of a shard a VideoMemberSource
/// serves; nullopt for any other path (a file, a missing path). Only the file system is asked, not the archive.
std::optional<std::pair<std::string, std::string>> video_member_split(const std::string& path);

/// A member's bytes in the shard's mapping, which `keep` holds.
struct VideoMemberBytes {
  std::shared_ptr<const void> keep;
  std::string_view bytes;
};

/// Where the members of a shard that is not a local file come from (a remote split's fetched shards).
class VideoMemberSource {
 public:
  virtual ~VideoMemberSource() = default;
  /// The bytes of the member at `path` (its shard's URL, '/', its name), fetched if need be: InputError naming it.
  virtual VideoMemberBytes member_bytes(const std::string& path) const = 0;
  /// What the member's cached index is made from (video_index_file.h), its bytes fetched if need be.
  virtual VideoSourceStamp member_stamp(const std::string& path) const = 0;
};

/// Serves the members of `shard` (a URL, or any name that is not a local file) from `source` while it lives; a
/// later source of the same shard serves them while it lives (the same bytes).
void video_member_source_add(const std::string& shard, const std::shared_ptr<const VideoMemberSource>& source);

/// The bytes of the member `path` names (video_member_split's); InputError naming the shard when it is not a tar
/// archive fastloop reads, or the member when the shard has none of that name.
VideoMemberBytes video_member_bytes(const std::string& path);

/// The stamp of the video at `path`: the file's, or for a shard's member the shard's (video_index_file.h).
std::optional<VideoSourceStamp> video_stamp(const std::string& path);

} // namespace fastloop
