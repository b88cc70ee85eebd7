// FFmpeg's demuxer and decoder on one video file (see video_input.h).
#include "fastloop/data/codecs/video_input.h"

#include "fastloop/core/errors.h"

namespace fastloop {

VideoInput::VideoInput(const std::string& file) : path(file) {
  const FfmpegLibrary& ff = ffmpeg_library();
  const int opened = ff.format_open_input(&format, path.c_str(), nullptr, nullptr);
  if (opened < 0) {
    format = nullptr;
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
