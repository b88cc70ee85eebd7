// Video decoding as the rest of fastloop sees it, without FFmpeg's headers: a file's frame count and times,
// and chosen frames as RGB images. video_frames.cpp implements it on FFmpeg (opened at run time,
// ffmpeg_library.h); a build without FFmpeg's headers compiles video_frames_none.cpp, whose calls say so.
#pragma once

#include "fastloop/data/transforms/image_u8.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace fastloop {

struct VideoInfo {
  int64_t frames = 0;              // in presentation order, as torchcodec's exact mode counts them
  int64_t height = 0, width = 0;   // pixels
  std::string codec;               // FFmpeg's name, e.g. "h264"
  std::vector<double> pts_seconds;  // per frame, ascending
};

/// The frame index of the video at `path` (made once per process and file): InputError naming the file when it
/// cannot be read as a video; RunError when FFmpeg is absent (the message says what to install).
VideoInfo video_info(const std::string& path);

/// The FFmpeg libraries fastloop would load, as "libavcodec 59.37.100, ..." (loading them first: RunError when
/// they are absent).
std::string video_libraries();

class VideoReader;

/// One thread's decoder (video_reader.h): keeps its file open between calls, so clips of a video that follow
/// each other continue one decode.
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
  int64_t seeks() const;
  int64_t frames_decoded() const;

 private:
  std::unique_ptr<VideoReader> reader_;
};

} // namespace fastloop
