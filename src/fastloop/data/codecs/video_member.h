// Videos inside local tar shards (WebDataset's layout: KEY.mp4 beside KEY.cls), named as a path through the
// shard, "DIR/train-000000.tar/KEY.mp4", as zipfile.Path names a zip's members: a path whose leading part is a
// regular file ending in .tar names the member of that archive. Everything that reads videos by path (the frame
// index and its cache, the readers) takes such a name; the video's bytes are read in place from a mapping of the
// shard (mapped and listed once, and again when the shard is replaced), through an AVIOContext
// (video_input.h).
#pragma once

#include "fastloop/data/codecs/video_index_file.h"

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace fastloop {

/// (shard, member name) of a path that names a member of a local .tar shard; nullopt for any other path (a
/// file, a missing path). Only the file system is asked, not the archive.
std::optional<std::pair<std::string, std::string>> video_member_split(const std::string& path);

/// A member's bytes in the shard's mapping, which `keep` holds.
struct VideoMemberBytes {
  std::shared_ptr<const void> keep;
  std::string_view bytes;
};

/// The bytes of the member `path` names (video_member_split's); InputError naming the shard when it is not a tar
/// archive fastloop reads, or the member when the shard has none of that name.
VideoMemberBytes video_member_bytes(const std::string& path);

/// The stamp of the video at `path`: the file's, or for a shard's member the shard's (video_index_file.h).
std::optional<VideoSourceStamp> video_stamp(const std::string& path);

} // namespace fastloop
