// The on-disk cache of video frame indices (video_index.h), so that a video is scanned once, not once per
// process: $FASTLOOP_CACHE/video-index/ (default ~/.cache/fastloop/video-index/), one file per video, named by a
// hash of its absolute path. The rules of fastloop's other written indices: the file records the video's size
// and modification time (a video rewritten since is indexed afresh), starts with a magic and a format version,
// ends with a CRC-32 of what precedes it, and is written to a temporary file of the writer's own and renamed
// into place (a reader sees a whole file or none; ranks sharing the folder may race, the last rename wins).
// Its bytes come from outside: a file that is truncated, damaged, of another version, of another video or of
// another state of it is ignored and rebuilt, never trusted and never an error. Failures to write (a
// read-only or full disk) are not errors either: the index then lives in process memory only, as before.
//
// Layout (little-endian): "FLVIDX\r\n", u32 version, i64 video bytes, i64 video mtime (ns), u32 + the absolute
// path, i32 stream, u32 + codec name, i64 height, width, time-base num, den, end, u64 frames, then per frame
// i64 pts, start key, start group; u32 CRC-32 of everything before it. Hand-written: a dozen fixed fields,
// which a serialization library would add a dependency for without removing the checks.
#pragma once

#include "fastloop/data/codecs/frame_index.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace fastloop {

/// What a cached index was made from: the video's size and modification time.
struct VideoSourceStamp {
  int64_t bytes = -1;
  int64_t mtime_ns = 0;
  bool operator==(const VideoSourceStamp& o) const { return bytes == o.bytes && mtime_ns == o.mtime_ns; }
  bool operator!=(const VideoSourceStamp& o) const { return !(*this == o); }
};

/// The stamp of the file at `path`; nullopt when it cannot be stat'd.
std::optional<VideoSourceStamp> video_source_stamp(const std::string& path);

/// A cache file's contents: the index (its `path` the key), the absolute path it was made from, the stamp.
struct VideoIndexFile {
  VideoIndex index;
  std::string key;
  VideoSourceStamp stamp;
};

/// The bytes of a cache file of `index`, made from the video at absolute path `key` with `stamp`.
std::string video_index_encode(const VideoIndex& index, const std::string& key, const VideoSourceStamp& stamp);

/// Parses a cache file's bytes: nullopt unless they are whole (magic, version, exact length, CRC-32) and every
/// field is in range (frames >= 1, times ascending, keyframe groups ascending and consistent, positive time
/// base); never throws. The fuzz target video_index's entry.
std::optional<VideoIndexFile> video_index_decode(std::string_view bytes);

/// The cache folder: $FASTLOOP_CACHE/video-index, else ~/.cache/fastloop/video-index; empty when neither is set.
std::string video_index_cache_dir();

/// The cache file of the video at `path` (any path naming it: keyed by its absolute path).
std::string video_index_cache_file(const std::string& path);

/// The cached index of the video at `path` when its cache file is whole and was made from this path with
/// `stamp`; nullopt otherwise (missing, stale, damaged).
std::optional<VideoIndex> video_index_cache_read(const std::string& path, const VideoSourceStamp& stamp);

/// Writes `index` (made from the video at `path` when it had `stamp`) to its cache file; false when it could
/// not be written (the run goes on without it).
bool video_index_cache_write(const VideoIndex& index, const std::string& path, const VideoSourceStamp& stamp);

} // namespace fastloop
