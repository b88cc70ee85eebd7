// Several views per sample (views.h): encoded samples go to image_augment.h's one-decode assembly; samples
// held in memory, which have nothing to decode, through batch_assemble() once per view.
#include "fastloop/data/transforms/views.h"

#include "fastloop/data/loader/sampler.h"
#include "fastloop/data/transforms/augment.h"
#include "fastloop/data/transforms/image_augment.h"

#include <ATen/ATen.h>

namespace fastloop {
namespace {

constexpr uint64_t kViewSalt = 0x76696577735eedULL;  // "views" + "eed": keeps view seeds off other streams

}  // namespace

uint64_t view_seed(uint64_t seed, int64_t view) {
  TORCH_CHECK(view >= 0, "view_seed: view must be >= 0, got ", view);
  if (view == 0) return seed;
  return hash_mix(seed, kViewSalt, static_cast<uint64_t>(view)) >> 1;  // >> 1: a non-negative int64
}

AssembleCounts batch_views_assemble(const Dataset& dataset, const int64_t* indices, int64_t count,
                                    const AugmentOptions& options, const std::vector<ViewTarget>& views,
                                    uint64_t seed, int64_t epoch, at::Tensor& labels) {
  TORCH_CHECK(!views.empty(), "batch_views_assemble: no views to fill");
  if (dataset.encoded) return encoded_views_assemble(dataset, indices, count, options, views, seed, epoch, labels);
  for (size_t v = 0; v < views.size(); ++v) {
    AugmentOptions view_options = options;
    if (views[v].pipeline) view_options.pipeline = views[v].pipeline;
    at::Tensor images = views[v].images;
    batch_assemble(dataset, indices, count, view_options, view_seed(seed, static_cast<int64_t>(v)), epoch, images,
                   labels);
  }
  return {};
}

} // namespace fastloop
