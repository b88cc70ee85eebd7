// torchvision's encode_jpeg (torchvision/csrc/io/image/cpu/encode_jpeg.cpp) calls jpeg_set_defaults and
// jpeg_set_quality(quality, force_baseline=TRUE) and nothing else: 4:2:0 chroma for RGB (one component for
// grey), the accurate integer DCT (JDCT_ISLOW, libjpeg's default) and the standard Huffman tables; its
// decode_jpeg reads with libjpeg's defaults (accurate IDCT, fancy upsampling). TurboJPEG does the same given
// TJSAMP_420 / TJSAMP_GRAY and TJFLAG_ACCURATEDCT: without that flag tjCompress2 picks the fast DCT below
// quality 96, which is not libjpeg's default (other coefficients, other pixels). Huffman optimisation (off in
// both) changes only the file's size, never the decoded pixels.
#include "fastloop/data/transforms/functional/jpeg.h"

#include "fastloop/core/errors.h"

#include <turbojpeg.h>

#include <memory>
#include <string>

namespace fastloop {
namespace {

struct JpegHandleCloser {
  void operator()(void* handle) const { tjDestroy(handle); }
};
using JpegHandle = std::unique_ptr<void, JpegHandleCloser>;

[[noreturn]] void jpeg_roundtrip_fail(void* handle, const char* step, const ImageU8& image) {
  throw InputError(std::string("JPEG: libjpeg-turbo could not ") + step + " a " + std::to_string(image.height) + " x " +
                   std::to_string(image.width) + " image: " + tjGetErrorStr2(handle));
}

}  // namespace

void jpeg_roundtrip_u8(ImageU8& image, int64_t quality, TransformScratch& scratch) {
  if (image.channels != 1 && image.channels != 3) {
    throw InputError("The number of channels should be 1 or 3, got: " + std::to_string(image.channels) +
                     " (JPEG encodes grey and RGB images; convert the image first, e.g. RGB())");
  }
  if (image.height == 0 || image.width == 0) return;  // torchvision returns an empty image as it is
  const bool grey = image.channels == 1;
  const int subsampling = grey ? TJSAMP_GRAY : TJSAMP_420;
  const int format = grey ? TJPF_GRAY : TJPF_RGB;
  const auto width = static_cast<int>(image.width), height = static_cast<int>(image.height);
  // The encoded bytes go into the worker's spare buffer, grown to TurboJPEG's bound once (no realloc inside).
  const unsigned long bound = tjBufSize(width, height, subsampling);
  ImageU8& bytes = scratch.spare;
  bytes.reshape(1, static_cast<int64_t>(bound), 1);
  unsigned char* encoded = bytes.data();
  unsigned long size = bound;
  {
    // A handle per call: libjpeg allocates its own pools per image whatever one does, and a handle is small.
    const JpegHandle compressor(tjInitCompress());
    if (!compressor) throw std::runtime_error("JPEG: tjInitCompress failed (out of memory)");
    if (tjCompress2(compressor.get(), image.data(), width, static_cast<int>(image.row_bytes()), height, format,
                    &encoded, &size, subsampling, static_cast<int>(quality),
                    TJFLAG_ACCURATEDCT | TJFLAG_NOREALLOC) != 0) {
      jpeg_roundtrip_fail(compressor.get(), "encode", image);
    }
  }
  const JpegHandle decompressor(tjInitDecompress());
  if (!decompressor) throw std::runtime_error("JPEG: tjInitDecompress failed (out of memory)");
  if (tjDecompress2(decompressor.get(), encoded, size, image.data(), width, static_cast<int>(image.row_bytes()), height,
                    format, TJFLAG_ACCURATEDCT) != 0) {
    jpeg_roundtrip_fail(decompressor.get(), "decode", image);
  }
}

}  // namespace fastloop
