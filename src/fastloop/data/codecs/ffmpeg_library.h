// FFmpeg's libraries (libavformat, libavcodec, libavutil, libswscale), opened when the first video is read
// (dlopen of the system's shared objects), not linked: the wheel bundles no FFmpeg (its licence options and
// ~80 MB), installs and serves images on a machine without it, and a video source then says what to install.
// Compiled against Debian 12's headers (FFmpeg 5.1: libavcodec 59, libavformat 59, libavutil 57, libswscale 6);
// the structs we read (AVFormatContext, AVStream, AVPacket, AVFrame, AVCodecContext) change layout with each
// major, so exactly these majors are loaded (their sonames) and checked. FFmpeg 5.0 and 5.1 share them; 5.1 is
// the one tested.
#pragma once

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/avutil.h>
#include <libswscale/swscale.h>
}

#include <string>

namespace fastloop {

// The entry points the video decoder calls, resolved from the loaded libraries.
struct FfmpegLibrary {
  // libavformat
  decltype(&::avformat_open_input) format_open_input;
  decltype(&::avformat_find_stream_info) format_find_stream_info;
  decltype(&::av_find_best_stream) find_best_stream;
  decltype(&::av_read_frame) read_frame;
  decltype(&::av_seek_frame) seek_frame;
  decltype(&::avformat_close_input) format_close_input;
  decltype(&::avformat_alloc_context) format_alloc_context;
  decltype(&::avio_alloc_context) io_alloc_context;
  decltype(&::avio_context_free) io_context_free;
  // libavcodec
  decltype(&::avcodec_find_decoder) codec_find_decoder;
  decltype(&::avcodec_alloc_context3) codec_alloc_context3;
  decltype(&::avcodec_parameters_to_context) codec_parameters_to_context;
  decltype(&::avcodec_open2) codec_open2;
  decltype(&::avcodec_send_packet) codec_send_packet;
  decltype(&::avcodec_receive_frame) codec_receive_frame;
  decltype(&::avcodec_flush_buffers) codec_flush_buffers;
  decltype(&::avcodec_free_context) codec_free_context;
  decltype(&::avcodec_get_name) codec_get_name;
  decltype(&::av_packet_alloc) packet_alloc;
  decltype(&::av_packet_free) packet_free;
  decltype(&::av_packet_unref) packet_unref;
  // libavutil
  decltype(&::av_frame_alloc) frame_alloc;
  decltype(&::av_frame_free) frame_free;
  decltype(&::av_frame_unref) frame_unref;
  decltype(&::av_strerror) strerror;
  decltype(&::av_malloc) malloc;
  decltype(&::av_free) free;
  // libswscale
  decltype(&::sws_getCachedContext) sws_get_cached_context;
  decltype(&::sws_scale) sws_scale;
  decltype(&::sws_freeContext) sws_free_context;
  decltype(&::sws_getCoefficients) sws_get_coefficients;
  decltype(&::sws_getColorspaceDetails) sws_get_colorspace_details;
  decltype(&::sws_setColorspaceDetails) sws_set_colorspace_details;
};

/// The loaded libraries, once per process. Throws RunError naming the libraries and how to install them when
/// one is missing, lacks an entry point, or is of another major than the headers fastloop was built with.
const FfmpegLibrary& ffmpeg_library();

/// "libavcodec 59.37.100, libavformat 59.27.100, ..." of the loaded libraries (ffmpeg_library() first).
std::string ffmpeg_versions();

/// av_strerror's text for `code`.
std::string ffmpeg_error(int code);

} // namespace fastloop
