// A video's frame index as data (what video_index.h makes and video_index_file.h stores): each frame's
// presentation time in presentation order and the keyframe its decoding must start from. Its own header so
// that the cache file's reader and writer need none of the indexing.
#pragma once

#include <cstdint>
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

} // namespace fastloop
