// FFmpeg's demuxer and decoder on one video file (see video_input.h).
#include "fastloop/data/codecs/video_input.h"

#include "fastloop/core/errors.h"
#include "fastloop/data/codecs/video_member.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace fastloop {
namespace {

constexpr int kIoBuffer = 1 << 16;  // the AVIOContext's buffer: FFmpeg's own default for files is 32 KB

struct MemoryIo {
  VideoMemberBytes member;
  int64_t at = 0;
};

int memory_read(void* opaque, uint8_t* buffer, int size) {
  auto& io = *static_cast<MemoryIo*>(opaque);
  const int64_t left = static_cast<int64_t>(io.member.bytes.size()) - io.at;
  if (left <= 0) return AVERROR_EOF;
  const int n = static_cast<int>(std::min<int64_t>(size, left));
  std::memcpy(buffer, io.member.bytes.data() + io.at, static_cast<size_t>(n));
  io.at += n;
  return n;
}

int64_t memory_seek(void* opaque, int64_t offset, int whence) {
  auto& io = *static_cast<MemoryIo*>(opaque);
  const auto size = static_cast<int64_t>(io.member.bytes.size());
  whence &= ~AVSEEK_FORCE;
  if (whence == AVSEEK_SIZE) return size;
  const int64_t base = whence == SEEK_SET ? 0 : whence == SEEK_CUR ? io.at : whence == SEEK_END ? size : -1;
  if (base < 0 || offset < -base || offset > size - base) return AVERROR(EINVAL);
  io.at = base + offset;
  return io.at;
}

}  // namespace

void VideoInput::memory_open() {
  const FfmpegLibrary& ff = ffmpeg_library();
  auto memory = std::make_shared<MemoryIo>(MemoryIo{video_member_bytes(path), 0});
  format = ff.format_alloc_context();
  auto* buffer = static_cast<unsigned char*>(ff.malloc(kIoBuffer));
  if (buffer) io_ = ff.io_alloc_context(buffer, kIoBuffer, 0, memory.get(), memory_read, nullptr, memory_seek);
  if (!io_ && buffer) ff.free(buffer);
  if (!format || !io_) {
    close();
    throw RunError(path + ": FFmpeg could not allocate its reader (out of memory)");
  }
  format->pb = io_;
  format->flags |= AVFMT_FLAG_CUSTOM_IO;  // closing the format leaves io_ to us
  memory_ = std::move(memory);
}

VideoInput::VideoInput(const std::string& file) : path(file) {
  const FfmpegLibrary& ff = ffmpeg_library();
  if (video_member_split(path)) memory_open();
  const int opened = ff.format_open_input(&format, path.c_str(), nullptr, nullptr);
  if (opened < 0) {
    format = nullptr;  // freed by FFmpeg
    close();
    throw InputError(path + ": FFmpeg cannot open it as a video (" + ffmpeg_error(opened) +
                     "); check the path and that it is a video file (mp4, mkv, webm, avi)");
  }
  packet = ff.packet_alloc();
  // A container whose header describes its video stream whole (mp4, mkv, webm) needs no probing, which decodes
  // frames (a third of a short clip's cost when each clip opened its file); the others are probed.
  stream = ff.find_best_stream(format, AVMEDIA_TYPE_VIDEO, -1, -1, nullptr, 0);
  const AVCodecParameters* header = stream >= 0 ? format->streams[stream]->codecpar : nullptr;
  if (!header || header->width <= 0 || header->height <= 0 || header->codec_id == AV_CODEC_ID_NONE) {
    const int info = ff.format_find_stream_info(format, nullptr);
    if (info < 0) {
      close();
      throw InputError(path + ": FFmpeg cannot read the streams of this file (" + ffmpeg_error(info) + ")");
    }
    stream = ff.find_best_stream(format, AVMEDIA_TYPE_VIDEO, -1, -1, nullptr, 0);
  }
  if (stream < 0) {
    close();
    throw InputError(path + ": the file has no video stream (" + ffmpeg_error(stream) + ")");
  }
}

VideoInput::~VideoInput() { close(); }

void VideoInput::close() {
  const FfmpegLibrary& ff = ffmpeg_library();
  if (codec) ff.codec_free_context(&codec);
  if (packet) ff.packet_free(&packet);
  if (format) ff.format_close_input(&format);
  if (io_) {
    ff.free(io_->buffer);  // FFmpeg may have replaced the buffer it was given
    ff.io_context_free(&io_);
  }
  memory_.reset();
}

std::string VideoInput::codec_name() const {
  return ffmpeg_library().codec_get_name(format->streams[stream]->codecpar->codec_id);
}

void VideoInput::decoder_open() {
  const FfmpegLibrary& ff = ffmpeg_library();
  const AVCodecParameters* parameters = format->streams[stream]->codecpar;
  const AVCodec* decoder = ff.codec_find_decoder(parameters->codec_id);
  if (!decoder)
    throw InputError(path + ": this FFmpeg has no decoder for its " + codec_name() + " video; transcode it "
                     "(e.g. ffmpeg -i IN -c:v libx264 OUT.mp4)");
  codec = ff.codec_alloc_context3(decoder);
  int status = ff.codec_parameters_to_context(codec, parameters);
  codec->thread_count = 1;
  codec->pkt_timebase = format->streams[stream]->time_base;
  if (status >= 0) status = ff.codec_open2(codec, decoder, nullptr);
  if (status < 0)
    throw InputError(path + ": FFmpeg cannot open the " + codec_name() + " decoder (" + ffmpeg_error(status) + ")");
}

} // namespace fastloop
