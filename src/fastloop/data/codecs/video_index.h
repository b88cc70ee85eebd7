// A video file's frame index, made once per file by reading its packets (no decoding) and kept for the
// process, and on disk (video_index_file.h): each frame's presentation time in presentation order (frame i is the i-th by pts, as torchcodec's
// exact seek mode numbers them) and the keyframe its decoding must start from. The reader (video_reader.h)
// seeks with it to exactly the frames a clip asks for.
#pragma once

#include "fastloop/data/codecs/video_frames.h"  // video_index_counts, video_index_forget

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace fastloop {

struct VideoIndex {
  std::string path;
  int stream = -1;             // the video stream's index in the container (FFmpeg's "best" video stream)
  std::string codec;           // FFmpeg's codec name, e.g. "h264"
  int64_t height = 0, width = 0;  // pixels, as the stream's parameters give them
  int64_t time_base_num = 1, time_base_den = 1;  // seconds per pts unit
  std::vector<int64_t> pts;          // per frame, ascending: its presentation time in time-base units
  std::vector<int64_t> start_key;    // per frame: the timestamp to seek to (its keyframe's, at or before it)
  std::vector<int64_t> start_group;  // per frame: which keyframe group decoding must start from (ascending)
  int64_t end = 0;                   // the stream's end: max(pts + duration) over its frames, time-base units
  int64_t frames() const { return static_cast<int64_t>(pts.size()); }
  double seconds(int64_t ts) const { return static_cast<double>(ts) * time_base_num / time_base_den; }
};

/// The index of the video at `path`: the process's while the file's size and modification time are those it
/// was made at, else its cache file's (video_index_file.h) when that is whole and of the file as it is now,
/// else made (video_index_make) and written to the cache file. A mutex guards the process's indices; two
/// threads asking for one new file may both scan it. A file that FFmpeg cannot open, that has no video
/// stream, no decoder in this FFmpeg, or no frames throws InputError naming it; FFmpeg absent, RunError.
std::shared_ptr<const VideoIndex> video_index(const std::string& path);

/// The index of the video at `path` made afresh, not cached (video_index's work; the fuzzer's entry).
VideoIndex video_index_make(const std::string& path);

} // namespace fastloop
