// A seeded synthetic image classification dataset: no download, any shape, and learnable (each class
// has its own colour and stripe pattern, each image adds noise), so tests and benchmarks can train on it.
#pragma once

#include "fastloop/data/sources/dataset.h"

#include <cstdint>

namespace fastloop {

// n images uint8 [n, c, h, w] with labels in [0, num_classes). The same arguments give the same bytes on
// every run and platform (own generator, not LibTorch's); a different seed gives different templates,
// labels and noise. Splits that must share their classes' templates are cut from one call.
// mean/stddev are computed from the images.
Dataset synthetic_make(int64_t n, int64_t c, int64_t h, int64_t w, int64_t num_classes, uint64_t seed);

} // namespace fastloop
