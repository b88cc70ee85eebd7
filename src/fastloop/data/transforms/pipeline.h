// A Loader's compiled transform pipeline: the specs (spec.h) made into transforms once, then run by every
// worker on its own uint8 image with the draws of (seed, epoch, index), so a sample's result never depends
// on which thread ran it.
#pragma once

#include "fastloop/data/transforms/draws.h"
#include "fastloop/data/transforms/spec.h"
#include "fastloop/data/transforms/transform.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fastloop {

/// The draws of top-level transform `position` for sample `index` in `epoch` of a run with `seed`. Each
/// top-level transform has its own stream, so adding a transform leaves the draws of the others as they
/// were; positions 0 and 1 are the streams of the built-in crop and flip (image_augment.h), so the default
/// pipeline RandomResizedCrop + RandomHorizontalFlip makes the same batches as they did.
Draws pipeline_draws(uint64_t seed, int64_t epoch, int64_t index, int64_t position);

/// The transforms of `specs` made through transform_registry(), in order.
std::vector<TransformPtr> pipeline_make(const std::vector<TransformSpec>& specs);

/// The canonical spelling of a made pipeline: each transform's repr() joined by ", " (parses back).
std::string pipeline_repr(const std::vector<TransformPtr>& transforms);

} // namespace fastloop
