// Frame-exact decoding with one seek per keyframe group (see video_reader.h).
#include "fastloop/data/codecs/video_reader.h"

#include "fastloop/core/errors.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace fastloop {
namespace {

std::string frame_name(const VideoIndex& index, int64_t frame) {
  return index.path + ": frame " + std::to_string(frame) + (frame >= 0 && frame < index.frames()
             ? " (" + std::to_string(index.seconds(index.pts[static_cast<size_t>(frame)])) + " s)" : std::string());
}

}  // namespace

VideoReader::~VideoReader() {
  if (!frame_ && !sws_) return;
  const FfmpegLibrary& ff = ffmpeg_library();
  if (frame_) ff.frame_free(&frame_);
  if (sws_) ff.sws_free_context(sws_);
}

void VideoReader::open(const VideoIndex& index) {
  input_.reset();
  input_ = std::make_unique<VideoInput>(index.path);
  if (input_->stream != index.stream)
    throw InputError(index.path + ": its video stream changed since it was indexed; the file was replaced while read");
  input_->decoder_open();
  if (!frame_) frame_ = ffmpeg_library().frame_alloc();
  last_read_ts_ = INT64_MIN, last_pts_ = INT64_MIN, pending_ = false, ended_ = false;
}

// To the keyframe group `frame` needs (from_start: the file's start, when a seek landed past it).
void VideoReader::seek(const VideoIndex& index, int64_t frame, bool from_start) {
  const FfmpegLibrary& ff = ffmpeg_library();
  ++seeks_;
  if (from_start || ff.seek_frame(input_->format, input_->stream, index.start_key[static_cast<size_t>(frame)],
                                  AVSEEK_FLAG_BACKWARD) < 0) {
    open(index);  // a container that cannot seek: from the start
    return;
  }
  ff.codec_flush_buffers(input_->codec);
  last_read_ts_ = INT64_MIN, last_pts_ = INT64_MIN, pending_ = false, ended_ = false;
}

bool VideoReader::packet_next(const std::vector<int64_t>& wanted) {
  const FfmpegLibrary& ff = ffmpeg_library();
  for (;;) {
    const int read = ff.read_frame(input_->format, input_->packet);
    if (read < 0) {  // the end, or a damaged tail: drain what the decoder holds
      if (!ended_) ff.codec_send_packet(input_->codec, nullptr);
      ended_ = true;
      return false;
    }
    AVPacket* p = input_->packet;
    if (p->stream_index != input_->stream) {
      ff.packet_unref(p);
      continue;
    }
    const int64_t pts = p->pts != AV_NOPTS_VALUE ? p->pts : p->dts;
    last_read_ts_ = p->dts != AV_NOPTS_VALUE ? p->dts : pts;
    const bool needed = std::binary_search(wanted.begin(), wanted.end(), pts);
    input_->codec->skip_frame = needed ? AVDISCARD_DEFAULT : AVDISCARD_NONREF;
    const int sent = ff.codec_send_packet(input_->codec, p);
    ff.packet_unref(p);
    if (sent >= 0 || sent == AVERROR_INVALIDDATA) return true;  // a damaged packet: a frame it held is named below
    if (sent != AVERROR(EAGAIN)) throw InputError(input_->path + ": the decoder failed (" + ffmpeg_error(sent) + ")");
    return true;
  }
}

bool VideoReader::decode_until(int64_t pts, const std::vector<int64_t>& wanted) {
  const FfmpegLibrary& ff = ffmpeg_library();
  for (;;) {
    if (!pending_) {
      const int got = ff.codec_receive_frame(input_->codec, frame_);
      if (got == AVERROR(EAGAIN)) {
        if (ended_) return false;
        packet_next(wanted);  // at the end it sends the drain
        continue;
      }
      if (got < 0) {  // drained (AVERROR_EOF), or the decoder gave up
        ended_ = true;
        return false;
      }
      pending_ = true;
      ++decoded_;
    }
    const int64_t at = frame_time(*frame_);
    if (at > pts) return false;  // passed it: kept pending for a later frame of this call
    pending_ = false;
    last_pts_ = at;
    if (at == pts) return true;
  }
}

void VideoReader::rgb_convert(ImageU8& out) {
  const FfmpegLibrary& ff = ffmpeg_library();
  const int height = frame_->height, width = frame_->width;
  if (!sws_ || frame_->format != sws_format_ || height != sws_height_ || width != sws_width_ ||
      frame_->colorspace != sws_colorspace_ || frame_->color_range != sws_range_) {
    sws_ = ff.sws_get_cached_context(sws_, width, height, static_cast<AVPixelFormat>(frame_->format), width, height,
                                     AV_PIX_FMT_RGB24, SWS_BILINEAR, nullptr, nullptr, nullptr);
    if (!sws_) throw InputError(input_->path + ": libswscale cannot convert its frames to RGB");
    int *inverse = nullptr, *table = nullptr, src_range = 0, dst_range = 0, brightness = 0, contrast = 0, saturation = 0;
    ff.sws_get_colorspace_details(sws_, &inverse, &src_range, &table, &dst_range, &brightness, &contrast, &saturation);
    const int* coefficients = ff.sws_get_coefficients(frame_->colorspace);
    ff.sws_set_colorspace_details(sws_, coefficients, src_range, coefficients, dst_range, brightness, contrast,
                                  saturation);
    sws_format_ = frame_->format, sws_height_ = height, sws_width_ = width;
    sws_colorspace_ = frame_->colorspace, sws_range_ = frame_->color_range;
  }
  // libswscale's SIMD writes whole vectors past a row's last pixel: rows 64-byte aligned, then copied tight
  const int stride = (width * 3 + 63) / 64 * 64;
  rgb_.resize(static_cast<size_t>(stride) * static_cast<size_t>(height + 1));
  uint8_t* planes[4] = {rgb_.data(), nullptr, nullptr, nullptr};
  int strides[4] = {stride, 0, 0, 0};
  ff.sws_scale(sws_, frame_->data, frame_->linesize, 0, height, planes, strides);
  out.reshape(height, width, 3);
  for (int y = 0; y < height; ++y)
    std::memcpy(out.row(y), rgb_.data() + static_cast<size_t>(y) * stride, static_cast<size_t>(width) * 3);
}

void VideoReader::read(const VideoIndex& index, const std::vector<int64_t>& frames, std::vector<ImageU8>& out) {
  out.resize(frames.size());
  for (int64_t f : frames)
    if (f < 0 || f >= index.frames())
      throw InputError(frame_name(index, f) + " is outside the video's " + std::to_string(index.frames()) + " frames");
  std::vector<size_t> order(frames.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return frames[a] < frames[b]; });
  std::vector<int64_t> wanted;
  for (int64_t f : frames) wanted.push_back(index.pts[static_cast<size_t>(f)]);
  std::sort(wanted.begin(), wanted.end());
  if (!input_ || input_->path != index.path) open(index), ended_ = true;
  for (size_t k = 0; k < order.size();) {
    const int64_t f = frames[order[k]];
    const int64_t pts = index.pts[static_cast<size_t>(f)];
    // Continue the running decode when its keyframe was read and the frame is still ahead; else seek.
    const bool ahead = !ended_ && pts > last_pts_ && last_read_ts_ >= index.start_key[static_cast<size_t>(f)];
    if (!ahead) seek(index, f, false);
    bool found = decode_until(pts, wanted);
    if (!found) {  // the seek landed past it (a container whose index misleads): decode from the start
      seek(index, f, true);
      found = decode_until(pts, wanted);
    }
    if (!found)
      throw InputError(frame_name(index, f) + " could not be decoded: the file is damaged or truncated before it "
                       "(FFmpeg gave no frame at that time)");
    ImageU8& first = out[order[k]];
    rgb_convert(first);
    for (++k; k < order.size() && frames[order[k]] == f; ++k) out[order[k]] = first;  // a clip's repeated frame
  }
}

} // namespace fastloop
