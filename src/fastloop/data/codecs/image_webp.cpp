// WebP decoding with libwebp the way PIL's WebPImagePlugin does it: every file, still or animated, through
// libwebpdemux's WebPAnimDecoder with its default options (RGBA, not premultiplied), whose first frame is
// what Image.open(f) shows; convert("RGB") then drops alpha. PIL links libwebp too, so pixels match exactly.
#include "fastloop/data/codecs/image_formats.h"

#include <webp/decode.h>
#include <webp/demux.h>

#include <cstring>
#include <memory>
#include <stdexcept>

namespace fastloop {
namespace image_format {
namespace {

[[noreturn]] void webp_fail(const std::string& name, const std::string& why) { fail(name, "WebP: " + why); }

struct AnimDecoderDelete {
  void operator()(WebPAnimDecoder* d) const { WebPAnimDecoderDelete(d); }
};

}  // namespace

bool is_webp(std::string_view b) {
  return b.size() >= 12 && std::memcmp(b.data(), "RIFF", 4) == 0 && std::memcmp(b.data() + 8, "WEBP", 4) == 0;
}

ImageInfo webp_info(std::string_view bytes, const std::string& name) {
  WebPBitstreamFeatures features;
  const VP8StatusCode status = WebPGetFeatures(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), &features);
  if (status == VP8_STATUS_NOT_ENOUGH_DATA) webp_fail(name, "the file ends inside its header (truncated)");
  if (status != VP8_STATUS_OK) webp_fail(name, "malformed header (libwebp status " + std::to_string(status) + ")");
  ImageInfo info;
  info.format = ImageFormat::kWebp, info.width = features.width, info.height = features.height;
  return info;
}

ImageInfo webp_decode(std::string_view bytes, const std::string& name, int64_t max_pixels, std::vector<uint8_t>& rgb) {
  const ImageInfo info = webp_info(bytes, name);
  check_size(info, max_pixels, name);  // before the decoder allocates its canvas
  WebPAnimDecoderOptions options;
  if (!WebPAnimDecoderOptionsInit(&options)) throw std::runtime_error("libwebp: WebPAnimDecoderOptionsInit failed (ABI mismatch)");
  options.color_mode = MODE_RGBA;  // PIL's: the defaults
  options.use_threads = 0;
  WebPData data{reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()};
  std::unique_ptr<WebPAnimDecoder, AnimDecoderDelete> decoder(WebPAnimDecoderNew(&data, &options));
  if (!decoder) webp_fail(name, "libwebp could not parse the file's chunks (corrupt or truncated)");
  WebPAnimInfo anim{};
  if (!WebPAnimDecoderGetInfo(decoder.get(), &anim)) webp_fail(name, "libwebp could not read the canvas size");
  if (anim.canvas_width != info.width || anim.canvas_height != info.height || anim.frame_count < 1)
    webp_fail(name, "the canvas size disagrees with the header");
  uint8_t* frame = nullptr;
  int timestamp = 0;
  if (!WebPAnimDecoderGetNext(decoder.get(), &frame, &timestamp) || !frame)
    webp_fail(name, "libwebp could not decode the first frame (corrupt or truncated)");
  const int64_t n = info.width * info.height;
  rgb.resize(static_cast<size_t>(n * 3));
  for (int64_t p = 0; p < n; ++p) std::memcpy(&rgb[static_cast<size_t>(3 * p)], frame + 4 * p, 3);
  return info;
}

}  // namespace image_format
}  // namespace fastloop
