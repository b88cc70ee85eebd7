// Frame-exact decoding of chosen frames of a video (frame i as video_index.h numbers them), into RGB images.
// One reader per loader thread keeps its file, decoder and converter open between calls: frames asked for
// after the last ones decoded continue the same decode when their keyframe was already read (one seek serves
// every clip of a video that follows it), otherwise it seeks to their keyframe. Packets of frames not asked
// for are given to the decoder with skip_frame = AVDISCARD_NONREF, so a codec that can (H.264, HEVC) skips
// the non-reference ones instead of decoding them. RGB as torchcodec's CPU decoder makes it: libswscale,
// SWS_BILINEAR at the frame's own size, the frame's colour matrix (sws_getCoefficients(colorspace)) on both
// sides and its range.
#pragma once

#include "fastloop/data/codecs/video_index.h"
#include "fastloop/data/codecs/video_input.h"
#include "fastloop/data/transforms/image_u8.h"

#include <cstdint>
#include <memory>
#include <vector>

struct SwsContext;

namespace fastloop {

class VideoReader {
 public:
  VideoReader() = default;
  ~VideoReader();
  VideoReader(const VideoReader&) = delete;
  VideoReader& operator=(const VideoReader&) = delete;

  /// Frames `frames` (indices into index.pts, any order, repeats allowed) of index.path, out[k] the RGB
  /// (HWC, 3 channels) of frames[k]. An index outside the video, or a frame the file does not yield (damaged,
  /// truncated), throws InputError naming the file, the frame and its time.
  void read(const VideoIndex& index, const std::vector<int64_t>& frames, std::vector<ImageU8>& out);

  /// Seeks made and frames decoded by this reader (for tests and the bench's account of where time goes).
  int64_t seeks() const { return seeks_; }
  int64_t frames_decoded() const { return decoded_; }

 private:
  void open(const VideoIndex& index);
  void seek(const VideoIndex& index, int64_t frame, bool from_start);
  // Decodes until the frame of presentation time `pts` comes out (into frame_); false when the stream ended or
  // passed it without it. `wanted`: the pts still to come in this call, whose packets must not be skipped.
  bool decode_until(int64_t pts, const std::vector<int64_t>& wanted);
  bool packet_next(const std::vector<int64_t>& wanted);
  void rgb_convert(ImageU8& out);

  std::unique_ptr<VideoInput> input_;
  AVFrame* frame_ = nullptr;
  SwsContext* sws_ = nullptr;
  std::vector<uint8_t> rgb_;  // libswscale's output rows, aligned (rgb_convert)
  int sws_format_ = -1, sws_height_ = 0, sws_width_ = 0, sws_colorspace_ = -1, sws_range_ = -1;
  int64_t last_read_ts_ = INT64_MIN;  // the decode timestamp of the last packet given to the decoder
  int64_t last_pts_ = INT64_MIN;      // the presentation time of the last frame the decoder gave
  bool pending_ = false;              // frame_ holds a decoded frame not yet looked at
  bool ended_ = true;                 // the decoder was drained: the next read seeks
  int64_t seeks_ = 0, decoded_ = 0;
};

} // namespace fastloop
