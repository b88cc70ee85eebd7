// An open video file: FFmpeg's demuxer on it, its video stream found, a packet to read into; and, when asked
// for, a decoder of that stream. Owned by one thread at a time; closes everything it opened. A member of a local
// tar shard (video_member.h) is demuxed from the shard's mapping through an AVIOContext over its bytes.
#pragma once

#include "fastloop/data/codecs/ffmpeg_library.h"

#include <memory>
#include <string>

namespace fastloop {

struct VideoInput {
  /// Opens `path` (a file, or a shard's member) and finds its video stream: InputError naming it when FFmpeg
  /// cannot read it or it has no video stream; RunError when FFmpeg's libraries are absent.
  explicit VideoInput(const std::string& path);
  ~VideoInput();
  VideoInput(const VideoInput&) = delete;
  VideoInput& operator=(const VideoInput&) = delete;

  /// Opens a single-threaded decoder of the stream (the loader's workers are the parallelism): InputError
  /// when this FFmpeg has no decoder for the codec.
  void decoder_open();
  std::string codec_name() const;
  /// Frees what was opened (the destructor's work; a failed constructor's too).
  void close();

  std::string path;
  AVFormatContext* format = nullptr;
  AVCodecContext* codec = nullptr;
  AVPacket* packet = nullptr;
  int stream = -1;

 private:
  void memory_open();  // format on an AVIOContext over the shard member's bytes
  std::shared_ptr<void> memory_;  // the member's bytes and read position (the AVIOContext's opaque)
  AVIOContext* io_ = nullptr;
};

/// A decoded frame's presentation time: its pts, or FFmpeg's best guess where the container gave none (AVI).
inline int64_t frame_time(const AVFrame& frame) {
  return frame.pts != AV_NOPTS_VALUE ? frame.pts : frame.best_effort_timestamp;
}

} // namespace fastloop
