// Antialiased bilinear resize of 8-bit RGB images, equal bit for bit to ATen's uint8 kernel (what
// interpolate(mode="bilinear", antialias=True) and so torchvision v2's resized_crop run). Hand-written, not a
// call to at::_upsample_bilinear2d_aa, because around the same AVX2 arithmetic ATen spends per call on a copy
// of the strided crop, index and weight tensors, fresh buffers and dispatch (145 vs 91 us of CPU per 224 px
// training crop, image_resize.cpp), and because it cannot resize only a window (eval's centre crop).
#pragma once

#include "fastloop/data/codecs/image_decode.h"

#include <cstdint>
#include <vector>

namespace fastloop {

/// One axis of a resize from in_size to out_size pixels: output pixel i reads `count[i]` input pixels from
/// `first[i]` on, with int16 weights in fixed point of `precision` fraction bits. ATen's rule
/// (compute_index_ranges_int16_weights with PIL's triangle filter): support = max(1, in / out) pixels
/// each side of the centre, weights normalised per output pixel, one precision for the whole axis.
struct ResizeTaps {
  int64_t in_size = 0, out_size = 0;  // pixels
  int64_t taps = 0;              // weights stored per output pixel: ATen's max_interp_size + 1, zero-padded
  int precision = 0;             // bits
  std::vector<int32_t> first;    // [out_size]
  std::vector<int32_t> count;    // [out_size]
  std::vector<int16_t> weights;  // [out_size * taps]
};

/// Fills `taps` for a resize of in_size to out_size pixels (both >= 1); reuses its storage.
void resize_taps_compute(int64_t in_size, int64_t out_size, ResizeTaps& taps);

/// Which kernels ImageResizer runs: AVX2 where the CPU has it, else portable C++; or portable C++ always
/// (the tests compare both). All give the same bytes.
enum class ResizeKernels { kFastest, kPortable };

/// One per thread: the weights and the horizontal pass's rows, kept from image to image.
class ImageResizer {
 public:
  explicit ImageResizer(ResizeKernels kernels = ResizeKernels::kFastest);

  /// Resizes `box` (pixels of the whole image; `image` holds the part of it from (image.top, image.left))
  /// to out_height x out_width and writes only `window` of the result (output pixels) to `out`: RGB rows of
  /// window.width * 3 bytes, `out_stride` bytes apart. Equal to resizing all and cropping `window`. An
  /// unchanged side is copied, not resampled (as ATen and torchvision do). The pixels it reads must be in
  /// `image`: TORCH_CHECK otherwise.
  void resize(const RgbImage& image, const PixelRect& box, int64_t out_height, int64_t out_width,
              const PixelRect& window, uint8_t* out, int64_t out_stride);

  /// The rectangle of the whole image that resize() reads for these arguments: decode at least this.
  PixelRect source_rect(const PixelRect& box, int64_t out_height, int64_t out_width, const PixelRect& window);

 private:
  // The weights of one axis, recomputed only when its sizes change (an eval set of equal images: never).
  const ResizeTaps& taps_for(ResizeTaps& slot, int64_t in_size, int64_t out_size);
  // The horizontal pass of `rows` source rows from `first_row` (box column src.left - box.left) into rows_:
  // window.width pixels each; returns rows_.
  const uint8_t* horizontal_pass(const RgbImage& image, const uint8_t* first_row, const PixelRect& src,
                                 const PixelRect& box, const PixelRect& window, int64_t rows);

  bool avx2_ = false;
  ResizeTaps horizontal_, vertical_;
  std::vector<uint8_t> rows_;   // the horizontal pass: the rows the vertical pass reads, window.width * 3 each
  std::vector<uint8_t> padded_; // up to four source rows near the end of the image's memory, with room to read past them
};

} // namespace fastloop
