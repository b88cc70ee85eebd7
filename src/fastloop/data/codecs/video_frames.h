// Video decoding as the rest of fastloop sees it, without FFmpeg's headers: a file's frame count and times,
// and chosen frames as RGB images. video_frames.cpp implements it on FFmpeg (opened at run time,
// ffmpeg_library.h); a build without FFmpeg's headers compiles video_frames_none.cpp, whose calls say so.
#pragma once

#include "fastloop/data/transforms/image_u8.h"

#include <cstdint>
#include <memory>
#include <utility>
#include <string>
#include <vector>

namespace fastloop {

struct VideoInfo {
  int64_t frames = 0;              // in presentation order, as torchcodec's exact mode counts them
  int64_t height = 0, width = 0;   // pixels
  std::string codec;               // FFmpeg's name, e.g. "h264"
  std::vector<double> pts_seconds;  // per frame, ascending
  double begin_seconds = 0, end_seconds = 0;  // the first frame's pts; max(pts + duration), as torchcodec's scan
};

/// The frame index of the video at `path` (made once per process and file): InputError naming the file when it
/// cannot be read as a video; RunError when FFmpeg is absent (the message says what to install).
VideoInfo video_info(const std::string& path);

/// The FFmpeg libraries fastloop would load, as "libavcodec 59.37.100, ..." (loading them first: RunError when
/// they are absent).
std::string video_libraries();

/// How the process's video indices (video_index.h) were come by: scanned from a video, read from a cache file,
/// cache files written.
struct VideoIndexCounts {
  int64_t scanned = 0, cache_read = 0, cache_written = 0;
};
VideoIndexCounts video_index_counts();

/// Drops the process's indices (the cache files stay): the next video_index of each file reads its cache
/// file, as a new process would (for tests).
void video_index_forget();

class VideoReader;
struct VideoIndex;  // video_index.h, internal: the installed API names it only

/// A video's frame times as the clip samplers read them (video_clips.h).
struct VideoTimeline {
  int64_t frames = 0;
  const double* pts_seconds = nullptr;  // frames of them, ascending, held by `info`
  double begin_seconds = 0, end_seconds = 0;
  std::shared_ptr<const VideoInfo> info;
};

/// One thread's decoders (video_reader.h): the videos it read last stay open (an LRU of up to kOpenVideos, and
/// of kOpenPixels frame pixels together), so a clip of one of them skips the file's opening, and continues the
/// decode where its keyframe was already read.
class VideoFrameReader {
 public:
  VideoFrameReader();
  ~VideoFrameReader();
  VideoFrameReader(const VideoFrameReader&) = delete;
  VideoFrameReader& operator=(const VideoFrameReader&) = delete;

  /// Frames `frames` of the video at `path` (indices in presentation order; any order, repeats allowed) as RGB
  /// (HWC) images, out[k] for frames[k]; `frame_count` its number of frames. InputError naming the file and
  /// the frame for a frame it does not yield.
  void read(const std::string& path, const std::vector<int64_t>& frames, std::vector<ImageU8>& out);
  /// The number of frames of the video at `path` (video_info without the times).
  int64_t frame_count(const std::string& path);
  /// The frame times of the video at `path` (video_info's, made once per index of it).
  VideoTimeline timeline(const std::string& path);
  int64_t seeks() const;
  int64_t frames_decoded() const;

  /// Videos kept open per thread, and their frame sizes together: an H.264 decoder holds up to 16 reference
  /// frames, about 6 MB at 640x360 and 50 MB at 1080p (so 16 videos of 360p, or 4 of 1080p, per thread).
  static constexpr size_t kOpenVideos = 16;
  static constexpr int64_t kOpenPixels = 16 * 640 * 360;

 private:
  // The open reader of `path`, whose index is `index` (a reader of an older index of the file is reopened).
  VideoReader& reader_of(const std::string& path, const std::shared_ptr<const VideoIndex>& index);

  struct Open {
    std::string path;
    std::shared_ptr<const VideoIndex> index;
    int64_t pixels = 0;
    std::unique_ptr<VideoReader> reader;
  };
  std::vector<Open> readers_;  // most recently used first
  int64_t seeks_closed_ = 0, decoded_closed_ = 0;  // the counts of readers closed
};

} // namespace fastloop
