// Several views of each sample (SimCLR's two, DINO's 2 global + N local crops): every sample is read and
// decoded once, then each view's pipeline runs on the decoded image and writes into that view's batch. View
// v draws from its own seed, view_seed(seed, v), so its batch is the one a single-view loader of its
// pipeline with that seed would make from the same samples (view 0: the loader's own seed). The assembly
// itself is augment.h's batch_views_assemble() (samples in memory) and image_augment.h's (encoded ones).
#pragma once

#include "fastloop/data/transforms/augment_options.h"

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace fastloop {

/// The seed of view `view`'s random draws in a run with `seed`: `seed` itself for view 0, for the others
/// a hash of (seed, view), so the views of one sample are independent of each other and of other seeds'.
/// A non-negative int64, so a single-view loader (and Python) can take it as its seed.
uint64_t view_seed(uint64_t seed, int64_t view);

/// One view's batch to fill: its transform pipeline (null: AugmentOptions' own, or the built-in one of its
/// flags) and its images buffer, [count, C, H_v, W_v] as batch_assemble takes images.
struct ViewTarget {
  std::shared_ptr<const Pipeline> pipeline;
  at::Tensor images;
  int64_t seed_view = -1;  // the view whose seed it draws with (-1: its own); the crops of a FiveCrop share one
};

/// The seed `target`, view `view` of a run with `seed`, draws with: view_seed of its seed_view, or of its own.
inline uint64_t view_target_seed(const ViewTarget& target, uint64_t seed, int64_t view) {
  return view_seed(seed, target.seed_view >= 0 ? target.seed_view : view);
}

/// What assembling a batch did besides writing it.
struct AssembleCounts {
  int64_t skipped = 0;   // undecodable images replaced (skip_bad_images)
  int64_t decoded = 0;   // images decoded: once per sample and image part (and per bad image tried), whatever the views
};

} // namespace fastloop
