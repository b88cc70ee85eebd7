// Where each codec's code lives: dladdr() on one function of each library names the file the dynamic linker
// loaded, whichever RPATH, bundled copy or system package it came from.
#include "fastloop/data/codecs/codec_libraries.h"

#include <dlfcn.h>

#include <filesystem>

#include <cstdio>  // jpeglib.h needs FILE and size_t declared first
#include <jpeglib.h>
#include <spng.h>
#include <tiffio.h>
#include <turbojpeg.h>
#include <webp/decode.h>
#include <webp/demux.h>

namespace fastloop {

namespace {
/// libwebp's 0xMMmmpp version word as "M.m.p".
std::string webp_version(int word) {
  return std::to_string((word >> 16) & 0xff) + "." + std::to_string((word >> 8) & 0xff) + "." +
         std::to_string(word & 0xff);
}

/// TIFFGetVersion()'s first line, "LIBTIFF, Version 4.5.0", as "4.5.0".
std::string tiff_version() {
  std::string text = TIFFGetVersion();
  text = text.substr(0, text.find('\n'));
  const auto at = text.rfind(' ');
  return at == std::string::npos ? text : text.substr(at + 1);
}
}  // namespace

std::string library_path_of(const void* address) {
  Dl_info info{};
  if (dladdr(address, &info) == 0 || info.dli_fname == nullptr) return "";
  // as the dynamic linker found it: fastloop/bin/../libfastloop.so -> fastloop/libfastloop.so
  return std::filesystem::path(info.dli_fname).lexically_normal().string();
}

std::vector<CodecLibrary> codec_libraries() {
  return {
      {"libjpeg-turbo (TurboJPEG)", "JPEG", "", library_path_of(reinterpret_cast<const void*>(&tjInitDecompress))},
      {"libjpeg-turbo (libjpeg API)", "JPEG crops", "",
       library_path_of(reinterpret_cast<const void*>(&jpeg_CreateDecompress))},
      {"libspng", "PNG", spng_version_string(), library_path_of(reinterpret_cast<const void*>(&spng_ctx_new))},
      {"libwebp", "WebP", webp_version(WebPGetDecoderVersion()),
       library_path_of(reinterpret_cast<const void*>(&WebPGetDecoderVersion))},
      {"libwebpdemux", "animated WebP", webp_version(WebPGetDemuxVersion()),
       library_path_of(reinterpret_cast<const void*>(&WebPGetDemuxVersion))},
      {"libtiff", "TIFF", tiff_version(), library_path_of(reinterpret_cast<const void*>(&TIFFGetVersion))},
  };
}

} // namespace fastloop
