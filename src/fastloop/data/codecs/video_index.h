// A video file's frame index (frame_index.h), made once per file by reading its packets (no decoding) and
// kept for the process, and on disk (video_index_file.h): each frame's presentation time in presentation
// order (frame i is the i-th by pts, as torchcodec's exact seek mode numbers them) and the keyframe its
// decoding must start from. The reader (video_reader.h) seeks with it to exactly the frames a clip asks for.
#pragma once

#include "fastloop/data/codecs/frame_index.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace fastloop {

/// The index of the video at `path`: the process's while the file's size and modification time are those it
/// was made at, else its cache file's (video_index_file.h) when that is whole and of the file as it is now,
/// else made (video_index_make) and written to the cache file. A mutex guards the process's indices; two
/// threads asking for one new file may both scan it. A file that FFmpeg cannot open, that has no video
/// stream, no decoder in this FFmpeg, or no frames throws InputError naming it; FFmpeg absent, RunError.
std::shared_ptr<const VideoIndex> video_index(const std::string& path);

/// How the process's indices were come by (what video_frames.h's video_index_counts reports).
struct VideoIndexTally {
  int64_t scanned = 0, cache_read = 0, cache_written = 0;
};
VideoIndexTally video_index_tally();

/// Drops the process's indices (video_frames.h's video_index_forget).
void video_index_clear();

/// The index of the video at `path` made afresh, not cached (video_index's work; the fuzzer's entry).
VideoIndex video_index_make(const std::string& path);

} // namespace fastloop
