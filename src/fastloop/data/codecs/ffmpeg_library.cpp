// dlopen of the system's FFmpeg libraries (see ffmpeg_library.h).
#include "fastloop/data/codecs/ffmpeg_library.h"

#include "fastloop/core/errors.h"

#include <dlfcn.h>

#include <string>

namespace fastloop {
namespace {

#define FASTLOOP_STR2(x) #x
#define FASTLOOP_STR(x) FASTLOOP_STR2(x)

const char* kInstall = "video needs FFmpeg 5 (libavcodec 59): Debian 12: apt-get install libavformat59 libavcodec59 "
                       "libswscale6 (or ffmpeg); Ubuntu 22.04 / 24.04 ship FFmpeg 4.4 / 6.1, which this build "
                       "does not load; images need no FFmpeg";

struct Handles {
  void* util = nullptr;
  void* codec = nullptr;
  void* format = nullptr;
  void* scale = nullptr;
};

void* library_open(const std::string& name) {
  void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    throw RunError(name + " did not load (" + (why ? why : "not found") + "): " + kInstall);
  }
  return handle;
}

template <typename Function>
void resolve(void* handle, const char* library, const char* name, Function& out) {
  out = reinterpret_cast<Function>(dlsym(handle, name));
  if (!out) throw RunError(std::string(library) + " has no " + name + ": " + kInstall);
}

// The library's version word (its *_version()) must have the major our headers were written for.
void major_check(void* handle, const char* library, const char* function, unsigned expected_major) {
  unsigned (*version)() = nullptr;
  resolve(handle, library, function, version);
  if (AV_VERSION_MAJOR(version()) != expected_major)
    throw RunError(std::string(library) + " is of major " + std::to_string(AV_VERSION_MAJOR(version())) + ", not " +
                   std::to_string(expected_major) + ": " + kInstall);
}

Handles handles_open() {
  Handles h;
  h.util = library_open("libavutil.so." FASTLOOP_STR(LIBAVUTIL_VERSION_MAJOR));
  h.codec = library_open("libavcodec.so." FASTLOOP_STR(LIBAVCODEC_VERSION_MAJOR));
  h.format = library_open("libavformat.so." FASTLOOP_STR(LIBAVFORMAT_VERSION_MAJOR));
  h.scale = library_open("libswscale.so." FASTLOOP_STR(LIBSWSCALE_VERSION_MAJOR));
  major_check(h.util, "libavutil", "avutil_version", LIBAVUTIL_VERSION_MAJOR);
  major_check(h.codec, "libavcodec", "avcodec_version", LIBAVCODEC_VERSION_MAJOR);
  major_check(h.format, "libavformat", "avformat_version", LIBAVFORMAT_VERSION_MAJOR);
  major_check(h.scale, "libswscale", "swscale_version", LIBSWSCALE_VERSION_MAJOR);
  return h;
}

FfmpegLibrary load() {
  const Handles h = handles_open();  // the handles stay open for the process's life
  FfmpegLibrary f{};
  resolve(h.format, "libavformat", "avformat_open_input", f.format_open_input);
  resolve(h.format, "libavformat", "avformat_find_stream_info", f.format_find_stream_info);
  resolve(h.format, "libavformat", "av_find_best_stream", f.find_best_stream);
  resolve(h.format, "libavformat", "av_read_frame", f.read_frame);
  resolve(h.format, "libavformat", "av_seek_frame", f.seek_frame);
  resolve(h.format, "libavformat", "avformat_close_input", f.format_close_input);
  resolve(h.format, "libavformat", "avformat_alloc_context", f.format_alloc_context);
  resolve(h.format, "libavformat", "avio_alloc_context", f.io_alloc_context);
  resolve(h.format, "libavformat", "avio_context_free", f.io_context_free);
  resolve(h.codec, "libavcodec", "avcodec_find_decoder", f.codec_find_decoder);
  resolve(h.codec, "libavcodec", "avcodec_alloc_context3", f.codec_alloc_context3);
  resolve(h.codec, "libavcodec", "avcodec_parameters_to_context", f.codec_parameters_to_context);
  resolve(h.codec, "libavcodec", "avcodec_open2", f.codec_open2);
  resolve(h.codec, "libavcodec", "avcodec_send_packet", f.codec_send_packet);
  resolve(h.codec, "libavcodec", "avcodec_receive_frame", f.codec_receive_frame);
  resolve(h.codec, "libavcodec", "avcodec_flush_buffers", f.codec_flush_buffers);
  resolve(h.codec, "libavcodec", "avcodec_free_context", f.codec_free_context);
  resolve(h.codec, "libavcodec", "avcodec_get_name", f.codec_get_name);
  resolve(h.codec, "libavcodec", "av_packet_alloc", f.packet_alloc);
  resolve(h.codec, "libavcodec", "av_packet_free", f.packet_free);
  resolve(h.codec, "libavcodec", "av_packet_unref", f.packet_unref);
  resolve(h.util, "libavutil", "av_frame_alloc", f.frame_alloc);
  resolve(h.util, "libavutil", "av_frame_free", f.frame_free);
  resolve(h.util, "libavutil", "av_frame_unref", f.frame_unref);
  resolve(h.util, "libavutil", "av_strerror", f.strerror);
  resolve(h.util, "libavutil", "av_malloc", f.malloc);
  resolve(h.util, "libavutil", "av_free", f.free);
  resolve(h.scale, "libswscale", "sws_getCachedContext", f.sws_get_cached_context);
  resolve(h.scale, "libswscale", "sws_scale", f.sws_scale);
  resolve(h.scale, "libswscale", "sws_freeContext", f.sws_free_context);
  resolve(h.scale, "libswscale", "sws_getCoefficients", f.sws_get_coefficients);
  resolve(h.scale, "libswscale", "sws_getColorspaceDetails", f.sws_get_colorspace_details);
  resolve(h.scale, "libswscale", "sws_setColorspaceDetails", f.sws_set_colorspace_details);
  void (*log_set_level)(int) = nullptr;  // our errors name the file and frame; FFmpeg's own lines would interleave
  resolve(h.util, "libavutil", "av_log_set_level", log_set_level);
  log_set_level(AV_LOG_QUIET);
  return f;
}

std::string version_text(const char* library, const char* function) {
  void* handle = dlopen(library, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (!handle) return "";
  auto version = reinterpret_cast<unsigned (*)()>(dlsym(handle, function));
  dlclose(handle);
  if (!version) return "";
  const unsigned v = version();
  return std::to_string(AV_VERSION_MAJOR(v)) + "." + std::to_string(AV_VERSION_MINOR(v)) + "." +
         std::to_string(AV_VERSION_MICRO(v));
}

}  // namespace

const FfmpegLibrary& ffmpeg_library() {
  static const FfmpegLibrary library = load();  // a throw leaves it unset: the next call tries again
  return library;
}

std::string ffmpeg_versions() {
  return "libavcodec " + version_text("libavcodec.so." FASTLOOP_STR(LIBAVCODEC_VERSION_MAJOR), "avcodec_version") +
         ", libavformat " + version_text("libavformat.so." FASTLOOP_STR(LIBAVFORMAT_VERSION_MAJOR), "avformat_version") +
         ", libavutil " + version_text("libavutil.so." FASTLOOP_STR(LIBAVUTIL_VERSION_MAJOR), "avutil_version") +
         ", libswscale " + version_text("libswscale.so." FASTLOOP_STR(LIBSWSCALE_VERSION_MAJOR), "swscale_version");
}

std::string ffmpeg_error(int code) {
  char text[AV_ERROR_MAX_STRING_SIZE] = {0};
  ffmpeg_library().strerror(code, text, sizeof(text));
  return text;
}

} // namespace fastloop
