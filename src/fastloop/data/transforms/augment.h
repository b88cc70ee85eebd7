// Batch assembly straight from uint8 storage with the augmentation fused into the same pass:
// pad + random crop, horizontal flip and per-channel normalization, one write per output value,
// into float32, fp16 or bf16 and NCHW or channels_last (NHWC in memory) batches.
#pragma once

#include "fastloop/data/sources/dataset.h"
#include "fastloop/data/transforms/augment_options.h"
#include "fastloop/data/transforms/views.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace fastloop {

/// The random choices for one sample: the crop origin in the padded image and the flip.
struct SampleDraw {
  int64_t oy = 0;         // pixels, in [0, 2 * pad]; `pad` is the centre (no shift)
  int64_t ox = 0;         // pixels, in [0, 2 * pad]
  bool flip = false;
};

/// The draw of sample `index` in `epoch`: a function of (seed, epoch, index) only, shared by the
/// threaded loader and the device-resident mode so both produce the same batches.
SampleDraw augment_draw(const AugmentOptions& options, uint64_t seed, int64_t epoch, int64_t index);

/// Whether sample `index` is flipped in `epoch`, given `coin(e)`, its random flip of epoch e: off without
/// options.flip; with options.alternate_flip the epoch-0 coin, inverted in every odd epoch (each image is
/// seen both ways in turn); else the epoch's own coin. The one rule of the array and the encoded paths.
template <typename Coin>
bool flip_decide(const AugmentOptions& options, int64_t epoch, Coin coin) {
  if (!options.flip) return false;
  return options.alternate_flip ? coin(0) != static_cast<bool>(epoch & 1) : coin(epoch);
}

/// Per channel, the normalized value of each uint8 pixel: lut[c * 256 + v] = (v / 255 - mean[c]) / std[c] in
/// float32, as ToTensor() + Normalize(mean, std) compute it (a division by std, not a product with 1 / std).
std::vector<float> normalize_lut(const Dataset& dataset);

/// Writes samples `indices[0..count)` of `dataset` into `images` ([count, C, H, W] of float32, fp16 or
/// bf16; contiguous or channels_last-contiguous) and `labels` (int64 [count]). Random choices come from
/// augment_draw(), then options.erase's boxes (random_erasing.h) are zeroed; a bad index or label throws std::out_of_range naming the sample. An encoded dataset
/// goes to encoded_batch_assemble() (image_augment.h): decode, RandomResizedCrop or Resize + CenterCrop.
/// Returns the number of undecodable images skipped (encoded datasets with skip_bad_images; else 0).
int64_t batch_assemble(const Dataset& dataset, const int64_t* indices, int64_t count, const AugmentOptions& options,
                    uint64_t seed, int64_t epoch, at::Tensor& images, at::Tensor& labels);

/// batch_assemble() of each view of `views` from one read and decode per sample: view v through its pipeline
/// with view_seed(seed, v)'s draws into views[v].images, the labels (shared by the views) into `labels`. One
/// view gives batch_assemble()'s batch. In-memory samples, which need no decode, are written view by view.
AssembleCounts batch_views_assemble(const Dataset& dataset, const int64_t* indices, int64_t count,
                                    const AugmentOptions& options, const std::vector<ViewTarget>& views,
                                    uint64_t seed, int64_t epoch, at::Tensor& labels);

} // namespace fastloop
